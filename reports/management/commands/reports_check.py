"""Check the signed reports after a restore (or any time): every signed version still has its PDF, the PDF's SHA-256
is the one recorded when it was signed, and its signature verifies against the organisation's certificates (the
current one and REPORTS_SIGNING_PREVIOUS_CERTIFICATES). Exit code 1 when any version fails, with one line each.

    python manage.py reports_check [--no-signature] [--json]
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.services.reports import signed_versions_check


class Command(BaseCommand):
    help = "Check every signed report version: its PDF is there, its SHA-256 matches the record, its signature holds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-signature",
            action="store_true",
            help="check presence and SHA-256 only (faster; no signature validation)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        summary = signed_versions_check(signatures=not options["no_signature"])
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            for problem in summary["problems"]:
                self.stdout.write(f"{problem['label']}: {problem['problem']}")
            self.stdout.write(f"{summary['checked']} signed versions checked, {len(summary['problems'])} with problems")
        if summary["problems"]:
            raise CommandError(f"{len(summary['problems'])} signed report versions failed the check")

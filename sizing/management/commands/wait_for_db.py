"""Wait until the default database accepts connections (the container entrypoint runs this before starting)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from django.db.utils import OperationalError


class Command(BaseCommand):
    help = "Wait until the database accepts connections; exit 1 when it does not within --timeout seconds."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds to keep trying (default 60)")
        parser.add_argument("--interval", type=float, default=1.0, help="seconds between attempts (default 1)")
        parser.add_argument("--database", default="default", help="the database alias (default: default)")

    def handle(self, *args: object, **options: object) -> None:
        timeout = max(0.0, float(options["timeout"]))
        interval = max(0.1, float(options["interval"]))
        alias = str(options["database"])
        connection = connections[alias]
        if connection.vendor == "postgresql":
            # a host that drops packets would hold one attempt past the deadline: bound each connect (libpq: >= 2 s)
            connection.settings_dict.setdefault("OPTIONS", {}).setdefault(
                "connect_timeout", max(2, min(10, int(timeout) or 2))
            )
        target = _describe(connection.settings_dict)
        deadline = time.monotonic() + timeout
        attempts = 0
        while True:
            attempts += 1
            try:
                connection.ensure_connection()
            except OperationalError as exc:
                last_error = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
                connection.close()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CommandError(
                        f"database {target} not reachable after {timeout:g} s ({attempts} attempts): {last_error}",
                        returncode=1,
                    ) from exc
                if attempts == 1 and options.get("verbosity", 1):
                    self.stderr.write(f"waiting for database {target}: {last_error}")
                time.sleep(min(interval, remaining))
                continue
            break
        if options.get("verbosity", 1):
            self.stdout.write(f"database {target} is ready")


def _describe(settings_dict: dict) -> str:
    """Engine, host, port and name: never the password."""
    engine = str(settings_dict.get("ENGINE", "")).rsplit(".", 1)[-1]
    host, port, name = settings_dict.get("HOST") or "", settings_dict.get("PORT") or "", settings_dict.get("NAME")
    where = f"{host}:{port}" if host and port else host
    return f"{engine} {where}/{name}" if where else f"{engine} {name}"

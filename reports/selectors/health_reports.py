"""Reads of memory health reports: the newest signed one of a deployment, a deployment's list, one by id within an
organisation. The evidence, the checklist, the API and the pages read them here (reports.services.health_reports
writes them)."""

from __future__ import annotations

from typing import Any

from benchmarks_app.models import MemoryHealthReport
from sizing.models import Deployment


def latest_health_report(deployment: Deployment) -> MemoryHealthReport | None:
    """The deployment's newest finished (signed) memory health report, or None."""
    return (
        MemoryHealthReport.objects.filter(deployment=deployment, status=MemoryHealthReport.Status.DONE)
        .defer("file_gz", "pdf")
        .order_by("-created_at", "-pk")
        .first()
    )


def health_report_list(*, deployment: Deployment) -> Any:
    return MemoryHealthReport.objects.filter(deployment=deployment).defer("file_gz", "pdf", "series")


def health_report_get(*, organisation: Any, report_id: int) -> MemoryHealthReport | None:
    return (
        MemoryHealthReport.objects.select_related("deployment")
        .defer("file_gz")
        .filter(organisation=organisation, pk=report_id)
        .first()
    )

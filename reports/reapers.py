"""This app's part of the job reaper (sizing.kernel.jobs.jobs_reap, on Celery beat every minute): signings and drafts of
report versions no worker ended, and memory health reports no worker judged. Registered in ReportsConfig.ready."""

from __future__ import annotations

from datetime import datetime, timedelta

from benchmarks_app.models.memory_health import MemoryHealthReport
from reports.models import ReportVersion
from sizing.kernel.jobs import job_lost_error, job_run_budget_s


def report_jobs_reap(now: datetime, queued_before: datetime, queue_s: float) -> dict[str, int]:
    """A signing stays approved with the reason (sign it again); a draft stays a draft without content (draft it
    again); a health report ends failed (import the file again)."""
    ended: dict[str, int] = {}
    sign_s = job_run_budget_s("reports.tasks.report_sign_task")
    ended["report_signing"] = (
        ReportVersion.objects.filter(
            status=ReportVersion.Status.APPROVED,
            sign_requested_at__lt=queued_before - timedelta(seconds=sign_s),
            error__isnull=True,
        )
        .exclude(progress_message="")
        .update(
            progress=0.0,
            progress_message="",
            error=job_lost_error(
                f"signing did not end within {queue_s + sign_s:.0f} s (no worker on the reports queue, "
                "or it was lost); the version is still approved: sign it again"
            ),
        )
    )

    draft_s = job_run_budget_s("reports.tasks.report_draft_task")
    ended["report_drafting"] = ReportVersion.objects.filter(
        status=ReportVersion.Status.DRAFT,
        drafted_at__isnull=True,
        error__isnull=True,
        draft_requested_at__lt=queued_before - timedelta(seconds=draft_s),
    ).update(
        progress=0.0,
        progress_message="",
        error=job_lost_error(
            f"gathering the evidence did not end within {queue_s + draft_s:.0f} s (no worker on "
            "the reports queue, or it was lost): draft the version again"
        ),
    )

    health_s = job_run_budget_s("reports.tasks.sentinel_health_report_task")
    ended["health_reports"] = MemoryHealthReport.objects.filter(
        status=MemoryHealthReport.Status.QUEUED, created_at__lt=queued_before
    ).update(
        status=MemoryHealthReport.Status.FAILED,
        finished_at=now,
        error=job_lost_error(
            f"no worker took this health report within {queue_s:.0f} s: start a worker on the "
            "reports queue, then import the file again",
            queue_timeout_s=queue_s,
        ),
    )
    ended["health_reports"] += MemoryHealthReport.objects.filter(
        status=MemoryHealthReport.Status.RUNNING, created_at__lt=queued_before - timedelta(seconds=health_s)
    ).update(
        status=MemoryHealthReport.Status.FAILED,
        finished_at=now,
        error=job_lost_error(
            f"stopped: no result within {health_s:.0f} s of its start (its worker was lost or it "
            "ran over its time budget): import the file again",
            budget_s=health_s,
        ),
    )
    return ended

"""This app's part of the job reaper (sizing.kernel.jobs.jobs_reap, on Celery beat every minute): benchmark uploads whose
per-request records no worker stored, and load tests whose workers stopped beating. Registered in
BenchmarksAppConfig.ready."""

from __future__ import annotations

from datetime import datetime, timedelta

from benchmarks_app.models import BenchmarkRun
from benchmarks_app.services.loadtests import loadtest_reap
from sizing.kernel.jobs import job_lost_error, job_run_budget_s


def benchmark_jobs_reap(now: datetime, queued_before: datetime, queue_s: float) -> dict[str, int]:
    """End the uploads storing records past their budget (keeping the run's summary) and the lost load tests."""
    ended = {"benchmark_imports": 0}
    import_s = job_run_budget_s("benchmarks_app.tasks.benchmark_requests_store_task")
    importing = BenchmarkRun.objects.filter(
        status=BenchmarkRun.Status.IMPORTING, created_at__lt=queued_before - timedelta(seconds=import_s)
    )
    for run in importing.only("pk", "progress_message"):
        ended["benchmark_imports"] += BenchmarkRun.objects.filter(
            pk=run.pk, status=BenchmarkRun.Status.IMPORTING
        ).update(
            status=BenchmarkRun.Status.FAILED,
            finished_at=now,
            error=job_lost_error(
                f"storing the per-request records did not end within {queue_s + import_s:.0f} s "
                "(no worker on the imports queue, or it was lost); the run's summary is kept",
                stored=run.progress_message or "none stored",
            ),
        )
    ended["load_tests"] = loadtest_reap(now=now)
    return ended

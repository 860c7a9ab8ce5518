"""Jobs and the broker: publishing a saved job once its transaction commits, answering 503 when the broker cannot take
it, and ending the jobs that no worker will finish (the periodic reaper, `jobs_reap_task` on Celery beat).

Every job-creating service (estimates, simulations and searches, quotes, load tests, benchmark uploads, report
signing) saves its row and calls `job_publish_on_commit`. After the commit the message is published; when that fails
(the broker is unreachable: kombu's OperationalError, or an OSError from the filesystem transport's folder) the row is
marked failed with the reason, `JobQueueUnavailable` is raised, and `JobQueueUnavailableMiddleware` turns it into a
503 `{"code": "job_queue_unavailable", ...}` with Retry-After. So no row waits for a message that was never sent
(docs/decisions.md, "A job the broker refused").

Under ATOMIC_REQUESTS the commit, and so the publishing, happens after the view returned: the exception leaves the
view's transaction wrapper, not DRF's handler, which is why a middleware answers it. In tests on `db` (one
transaction per test) the callbacks run only under `django_capture_on_commit_callbacks(execute=True)` or
`django_db(transaction=True)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.html import escape

logger = logging.getLogger(__name__)

JOB_QUEUE_UNAVAILABLE = "job_queue_unavailable"
JOB_LOST = "job_lost"
RETRY_AFTER_S = 30


def _publish_errors() -> tuple[type[BaseException], ...]:
    from kombu.exceptions import OperationalError

    # OperationalError: a broker that refuses or drops the connection (kombu wraps redis' errors in it);
    # OSError: the filesystem transport's folder gone or unwritable
    return (OperationalError, OSError)


def job_queue_unavailable_error(*, kind: str, job_id: int | None) -> dict[str, Any]:
    """The error stored on a job the broker refused, and the 503's body."""
    return {
        "code": JOB_QUEUE_UNAVAILABLE,
        "message": "the job queue is unavailable, so the job was not started (it is marked failed); "
        f"try again in {RETRY_AFTER_S} s",
        "extra": {"retry_after_s": RETRY_AFTER_S, "job": {"kind": kind, "id": job_id}},
    }


class JobQueueUnavailable(Exception):
    """The broker did not take a job's message; the job is already marked failed."""

    def __init__(self, *, kind: str, job_id: int | None) -> None:
        super().__init__(f"the job queue is unavailable ({kind} {job_id})")
        self.kind, self.job_id = kind, job_id

    def as_dict(self) -> dict[str, Any]:
        return job_queue_unavailable_error(kind=self.kind, job_id=self.job_id)


def job_publish(
    *, kind: str, job_id: int | None, publish: Callable[[], object], fail: Callable[[dict[str, Any]], object]
) -> None:
    """Publish a job now; when the broker refuses, `fail(error)` marks the job failed and JobQueueUnavailable is
    raised."""
    try:
        publish()
    except _publish_errors() as error:
        # the error's class only: its text may name the broker's host (issue 19)
        logger.warning("the broker refused %s %s (%s): marked failed", kind, job_id, type(error).__name__)
        fail(job_queue_unavailable_error(kind=kind, job_id=job_id))
        raise JobQueueUnavailable(kind=kind, job_id=job_id) from error


def job_publish_on_commit(
    *, kind: str, job_id: int | None, publish: Callable[[], object], fail: Callable[[dict[str, Any]], object]
) -> None:
    """`job_publish` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: job_publish(kind=kind, job_id=job_id, publish=publish, fail=fail))


class JobQueueUnavailableMiddleware:
    """Answers JobQueueUnavailable with a 503 (JSON under /api/, a short page elsewhere) and Retry-After. Listed
    innermost in MIDDLEWARE but for axes (which has none) so that its process_exception is asked first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, JobQueueUnavailable):
            return None
        body = exception.as_dict()
        if request.path.startswith("/api/") or "json" in request.headers.get("Accept", ""):
            response: HttpResponse = JsonResponse(body, status=503)
        else:
            response = HttpResponse(f"<!doctype html><title>503</title><p>{escape(body['message'])}</p>", status=503)
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response


# ---------------------------------------------------------------------------------------------------------------
# The reaper: jobs nobody will finish


def job_run_budget_s(*task_names: str) -> float:
    """How long a job of these tasks may run: the longest of their Celery hard time limits (sizing/kernel/job_budgets.py)
    plus a minute's grace, else JOB_RUN_TIMEOUT_S. The tasks are read from the current Celery app (deploy.celery
    makes its app the default one, so every thread sees it)."""
    from celery import current_app as app

    limits = [
        getattr(app.tasks.get(name), "time_limit", None) or app.conf.task_time_limit
        for name in task_names
        if name in app.tasks
    ]
    known = [float(limit) for limit in limits if limit]
    return max(known) + 60.0 if known and len(known) == len(limits) else float(settings.JOB_RUN_TIMEOUT_S)


def job_lost_error(message: str, **extra: Any) -> dict[str, Any]:
    """The error stored on a job no worker will finish."""
    return {"code": JOB_LOST, "message": message, "extra": extra}


# Each app's reaper of its own jobs: (now, queued_before, queue_s) → {kind: how many ended}; an app registers its own
# in its AppConfig.ready (benchmarks_app: benchmark imports, load tests; reports: drafts, signings, health reports), so
# this module imports no app above it
Reaper = Callable[[datetime, datetime, float], dict[str, int]]
_REAPERS: list[Reaper] = []


def reaper_register(reaper: Reaper) -> None:
    """Add an app's reaper to `jobs_reap` (once)."""
    if reaper not in _REAPERS:
        _REAPERS.append(reaper)


def jobs_reap(*, now: datetime | None = None) -> dict[str, int]:
    """End every job that no worker will finish, as failed with the reason and what it had done: a job no worker
    took within JOB_QUEUE_TIMEOUT_S of being queued, one running past its budget (`job_run_budget_s`): this app's
    estimates and simulations here, the other apps' jobs by their registered reapers (`reaper_register`). Returns
    the number ended per kind."""
    from sizing.models import Estimate, SimulationJob

    now = now or timezone.now()
    queue_s = float(settings.JOB_QUEUE_TIMEOUT_S)
    queued_before = now - timedelta(seconds=queue_s)
    ended: dict[str, int] = {}

    estimate_s = job_run_budget_s("sizing.tasks.estimate_compute_task")
    ended["estimates"] = Estimate.objects.filter(status=Estimate.Status.PENDING, created_at__lt=queued_before).update(
        status=Estimate.Status.FAILED,
        finished_at=now,
        error=job_lost_error(
            f"no worker took this estimate within {queue_s:.0f} s: start a worker on the estimates queue",
            queue_timeout_s=queue_s,
        ),
    )
    ended["estimates"] += Estimate.objects.filter(
        status=Estimate.Status.RUNNING, created_at__lt=queued_before - timedelta(seconds=estimate_s)
    ).update(
        status=Estimate.Status.FAILED,
        finished_at=now,
        error=job_lost_error(
            f"stopped: no result within {estimate_s:.0f} s of its start (its worker was lost or it "
            "ran over its time budget)",
            budget_s=estimate_s,
        ),
    )

    simulation_s = job_run_budget_s("sizing.tasks.simulation_job_run_task", "sizing.tasks.quote_run_task")
    ended["simulations"] = SimulationJob.objects.filter(
        status=SimulationJob.Status.QUEUED, created_at__lt=queued_before
    ).update(
        status=SimulationJob.Status.FAILED,
        finished_at=now,
        error=job_lost_error(
            f"no worker took this job within {queue_s:.0f} s: start a worker on the simulations queue",
            queue_timeout_s=queue_s,
        ),
    )
    ended["simulations"] += _reap_running_simulations(now=now, budget_s=simulation_s)

    for reaper in _REAPERS:
        ended.update(reaper(now, queued_before, queue_s))
    if any(ended.values()):
        logger.warning("reaped jobs nobody would finish: %s", ended)
    return ended


def _reap_running_simulations(*, now: datetime, budget_s: float) -> int:
    from sizing.models import SimulationJob

    started_before = now - timedelta(seconds=budget_s)
    ended = 0
    running = SimulationJob.objects.filter(status=SimulationJob.Status.RUNNING, started_at__lt=started_before)
    for job in running.only("pk", "progress", "progress_message"):
        ended += SimulationJob.objects.filter(pk=job.pk, status=SimulationJob.Status.RUNNING).update(
            status=SimulationJob.Status.FAILED,
            finished_at=now,
            error=job_lost_error(
                f"stopped: no result within {budget_s:.0f} s of its start (its worker was lost or "
                "it ran over its time budget)",
                budget_s=budget_s,
                progress=job.progress,
                progress_message=job.progress_message,
            ),
        )
    return ended

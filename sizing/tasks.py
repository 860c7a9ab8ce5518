"""Thin Celery tasks: load by id, call a service. Each runs within its kind's time budget (sizing.kernel.job_budgets): past
the soft limit the task stops and its row ends failed with "stopped: over its time budget of N s"."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from sizing.kernel.job_budgets import TIME_BUDGETS, JobKind, over_budget_error, time_budget
from sizing.kernel.jobs import jobs_reap
from sizing.models import Estimate, SimulationJob


def _estimate_over_budget(estimate_id: int) -> None:
    Estimate.objects.filter(pk=estimate_id).exclude(status=Estimate.Status.DONE).update(
        status=Estimate.Status.FAILED,
        result=None,
        error=over_budget_error(JobKind.ESTIMATE),
        finished_at=timezone.now(),
    )


def _simulation_over_budget(job_id: int, kind: JobKind) -> None:
    SimulationJob.objects.filter(
        pk=job_id, status__in=(SimulationJob.Status.QUEUED, SimulationJob.Status.RUNNING)
    ).update(
        status=SimulationJob.Status.FAILED,
        error=over_budget_error(kind),
        progress_message="",
        finished_at=timezone.now(),
    )


@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="estimates", **TIME_BUDGETS[JobKind.ESTIMATE].task_options()
)
def estimate_compute_task(estimate_id: int) -> None:
    from sizing.services.estimates import estimate_compute  # in the body: services import the tasks

    try:
        with time_budget(JobKind.ESTIMATE):
            estimate_compute(estimate_id=estimate_id)
    except SoftTimeLimitExceeded:
        _estimate_over_budget(estimate_id)


@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="simulations", **TIME_BUDGETS[JobKind.SIMULATION].task_options()
)
def simulation_job_run_task(job_id: int) -> None:
    from sizing.services.simulations import simulation_job_run  # in the body: services import the tasks

    try:
        with time_budget(JobKind.SIMULATION):
            simulation_job_run(job_id=job_id)
    except SoftTimeLimitExceeded:
        _simulation_over_budget(job_id, JobKind.SIMULATION)


# quotes have their own queue and worker (deploy/run-dev.sh), so a burst of quotes never holds the workers that
# estimates, imports and report signing wait for
@shared_task(acks_late=True, reject_on_worker_lost=True, queue="quotes", **TIME_BUDGETS[JobKind.QUOTE].task_options())
def quote_run_task(job_id: int) -> None:
    from sizing.services.simulations import simulation_job_run  # in the body: services import the tasks

    try:
        with time_budget(JobKind.QUOTE):
            simulation_job_run(job_id=job_id)
    except SoftTimeLimitExceeded:
        _simulation_over_budget(job_id, JobKind.QUOTE)


@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="simulations", **TIME_BUDGETS[JobKind.SEARCH_PART].task_options()
)
def simulation_search_part_task(job_id: int, index: int) -> None:
    from sizing.services.simulations import simulation_search_part  # in the body: services import the tasks

    try:
        with time_budget(JobKind.SEARCH_PART):
            simulation_search_part(job_id=job_id, index=index)
    except SoftTimeLimitExceeded:
        _simulation_over_budget(job_id, JobKind.SEARCH_PART)


# on the default queue, beside the estimates: beat sends it every minute (deploy/settings/base.py)
@shared_task(queue="celery")
def jobs_reap_task() -> dict[str, int]:
    return jobs_reap()

"""Thin Celery tasks of benchmark runs."""

from celery import shared_task

from sizing.kernel.job_budgets import TIME_BUDGETS, JobKind, time_budget

# Each task runs within its kind's time budget (sizing.kernel.job_budgets); the services catch SoftTimeLimitExceeded and end
# their rows failed with "stopped: over its time budget of N s"


@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="imports", **TIME_BUDGETS[JobKind.BENCHMARK_IMPORT].task_options()
)
def benchmark_requests_store_task(file_id: int) -> None:
    from benchmarks_app.services.runs import benchmark_requests_store  # in the body: services import the tasks

    with time_budget(JobKind.BENCHMARK_IMPORT):
        benchmark_requests_store(file_id=file_id)


# acks_late: a shard's message is acknowledged when it ends; a worker killed mid-run leaves it unacknowledged, and a
# redelivered copy finds the shard taken and stops (the reaper ends the job as failed with what was measured)
@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="loadtests", **TIME_BUDGETS[JobKind.LOADTEST_SHARD].task_options()
)
def loadtest_shard_task(job_id: int, index: int) -> None:
    from benchmarks_app.services.loadtests import loadtest_shard_run  # in the body: services import the tasks

    with time_budget(JobKind.LOADTEST_SHARD):
        loadtest_shard_run(job_id=job_id, index=index)


@shared_task(queue="loadtests", **TIME_BUDGETS[JobKind.LOADTEST_REAP].task_options())
def loadtest_reap_task() -> int:
    from benchmarks_app.services.loadtests import loadtest_reap  # in the body: services import the tasks

    with time_budget(JobKind.LOADTEST_REAP):  # stopped past it: the next beat tick reaps again
        return loadtest_reap()

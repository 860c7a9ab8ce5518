"""Thin Celery tasks of benchmark runs."""

from celery import shared_task

from benchmarks_app.loadtest_services import loadtest_reap, loadtest_shard_run
from benchmarks_app.services import benchmark_requests_store


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="imports")
def benchmark_requests_store_task(file_id: int) -> None:
    benchmark_requests_store(file_id=file_id)


# acks_late: a shard's message is acknowledged when it ends; a worker killed mid-run leaves it unacknowledged, and a
# redelivered copy finds the shard taken and stops (the reaper ends the job as failed with what was measured)
@shared_task(acks_late=True, reject_on_worker_lost=True, queue="loadtests")
def loadtest_shard_task(job_id: int, index: int) -> None:
    loadtest_shard_run(job_id=job_id, index=index)


@shared_task(queue="loadtests")
def loadtest_reap_task() -> int:
    return loadtest_reap()

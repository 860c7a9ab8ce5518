"""Thin Celery tasks of benchmark runs."""

from celery import shared_task

from benchmarks_app.services import benchmark_requests_store


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="imports")
def benchmark_requests_store_task(file_id: int) -> None:
    benchmark_requests_store(file_id=file_id)

"""Thin Celery tasks: load by id, call a service."""

from celery import shared_task

from sizing.services import estimate_compute


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="estimates")
def estimate_compute_task(estimate_id: int) -> None:
    estimate_compute(estimate_id=estimate_id)

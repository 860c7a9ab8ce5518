"""Thin Celery tasks: load by id, call a service."""

from celery import shared_task

from sizing.services import estimate_compute
from sizing.simulation_services import simulation_job_run, simulation_search_part


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="estimates")
def estimate_compute_task(estimate_id: int) -> None:
    estimate_compute(estimate_id=estimate_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="simulations")
def simulation_job_run_task(job_id: int) -> None:
    simulation_job_run(job_id=job_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="simulations")
def simulation_search_part_task(job_id: int, index: int) -> None:
    simulation_search_part(job_id=job_id, index=index)

"""Thin Celery tasks of reports."""

from celery import shared_task

from reports.services import version_sign


@shared_task(acks_late=True, reject_on_worker_lost=True, queue="reports")
def report_sign_task(version_id: int, user_id: int) -> None:
    version_sign(version_id=version_id, user_id=user_id)

"""Thin Celery tasks of reports."""

from celery import shared_task

from sizing.kernel.job_budgets import TIME_BUDGETS, JobKind, time_budget


# within its time budget (sizing.kernel.job_budgets): past it the version stays approved with "stopped: over its time budget"
@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="reports", **TIME_BUDGETS[JobKind.REPORT_SIGN].task_options()
)
def report_sign_task(version_id: int, user_id: int) -> None:
    from reports.services.reports import version_sign  # in the body: services import the tasks

    with time_budget(JobKind.REPORT_SIGN):
        version_sign(version_id=version_id, user_id=user_id)


# gathering a version's evidence (the estimate, the KV overflow simulation, the checklist): never in a web request
@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="reports", **TIME_BUDGETS[JobKind.REPORT_DRAFT].task_options()
)
def report_draft_task(version_id: int, user_id: int | None) -> None:
    from reports.services.reports import version_draft  # in the body: services import the tasks

    with time_budget(JobKind.REPORT_DRAFT):
        version_draft(version_id=version_id, user_id=user_id)


# the 72-hour sentinel's memory health report: judge, render and sign (never in the web request); redelivered, a report
# already done is left alone
@shared_task(
    acks_late=True, reject_on_worker_lost=True, queue="reports", **TIME_BUDGETS[JobKind.SENTINEL_HEALTH].task_options()
)
def sentinel_health_report_task(report_id: int) -> None:
    from reports.services.health_reports import sentinel_evaluate  # in the body: services import the tasks

    with time_budget(JobKind.SENTINEL_HEALTH):
        sentinel_evaluate(report_id=report_id)

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    """The signed memory-commitment report: versions with their workflow, the PDF, its signature and verification."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "reports"
    verbose_name = "Reports"

    def ready(self) -> None:
        from reports.reapers import report_jobs_reap
        from sizing.kernel.jobs import reaper_register

        reaper_register(report_jobs_reap)  # beat's job reaper ends lost drafts, signings and health reports too

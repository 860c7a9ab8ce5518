from django.apps import AppConfig


class ReportsConfig(AppConfig):
    """The signed memory-commitment report: versions with their workflow, the PDF, its signature and verification."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "reports"
    verbose_name = "Reports"

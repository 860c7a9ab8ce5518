from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SizingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "sizing"
    verbose_name = _("Sizing")

    def ready(self) -> None:
        from django.urls import register_converter

        from sizing.kernel.url_converters import DatabaseIdConverter

        register_converter(DatabaseIdConverter, "id")  # before any URLconf is read: every <id:...> in the URLs

        import sizing.services.quotes  # noqa: F401 - registers what a quote's search adds to its result

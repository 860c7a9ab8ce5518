from django.apps import AppConfig


class BenchmarksAppConfig(AppConfig):
    """Benchmark runs, importers of other tools' result files and load tests (later issues)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks_app"
    verbose_name = "Benchmarks"

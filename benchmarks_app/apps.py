from django.apps import AppConfig


class BenchmarksAppConfig(AppConfig):
    """Benchmark runs, importers of other tools' result files and load tests (later issues)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks_app"
    verbose_name = "Benchmarks"

    def ready(self) -> None:
        from benchmarks_app.reapers import benchmark_jobs_reap
        from benchmarks_app.selectors.loadtest_metrics import LoadTestsCollector
        from sizing.kernel.jobs import reaper_register
        from sizing.kernel.observability import scrape_collector_add

        reaper_register(benchmark_jobs_reap)  # beat's job reaper ends this app's lost jobs too
        scrape_collector_add(LoadTestsCollector)  # /metrics: sizing_loadtests_active, after the queue lengths

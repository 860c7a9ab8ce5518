from django.urls import path

from benchmarks_app.apis.endpoints import EndpointDetailApi, EndpointListApi
from benchmarks_app.apis.loadtests import (
    LoadTestCancelApi,
    LoadTestDefaultsApi,
    LoadTestDetailApi,
    LoadTestListApi,
    LoadTestPlanApi,
)
from benchmarks_app.apis.memory_logs import MemoryLogDetailApi, MemoryLogListApi
from benchmarks_app.apis.runs import (
    BenchmarkCalibrateApi,
    BenchmarkRunAnalysisApi,
    BenchmarkRunDetailApi,
    BenchmarkRunExportApi,
    BenchmarkRunLinksApi,
    BenchmarkRunListApi,
    BenchmarkSeriesDetailApi,
)

app_name = "benchmarks"

urlpatterns = [
    path("benchmark-runs/", BenchmarkRunListApi.as_view(), name="benchmark-run-list"),
    path("benchmark-runs/calibrate", BenchmarkCalibrateApi.as_view(), name="benchmark-run-calibrate"),
    path("benchmark-runs/<id:run_id>/", BenchmarkRunDetailApi.as_view(), name="benchmark-run-detail"),
    path("benchmark-runs/<id:run_id>/export", BenchmarkRunExportApi.as_view(), name="benchmark-run-export"),
    path("benchmark-runs/<id:run_id>/links", BenchmarkRunLinksApi.as_view(), name="benchmark-run-links"),
    path("benchmark-runs/<id:run_id>/analysis", BenchmarkRunAnalysisApi.as_view(), name="benchmark-run-analysis"),
    path("memory-logs/", MemoryLogListApi.as_view(), name="memory-log-list"),
    path("memory-logs/<id:log_id>/", MemoryLogDetailApi.as_view(), name="memory-log-detail"),
    path("endpoints/", EndpointListApi.as_view(), name="endpoint-list"),
    path("endpoints/<id:endpoint_id>/", EndpointDetailApi.as_view(), name="endpoint-detail"),
    path("load-tests/", LoadTestListApi.as_view(), name="load-test-list"),
    path("load-tests/defaults", LoadTestDefaultsApi.as_view(), name="load-test-defaults"),
    path("load-tests/<id:job_id>/", LoadTestDetailApi.as_view(), name="load-test-detail"),
    path("load-tests/<id:job_id>/cancel", LoadTestCancelApi.as_view(), name="load-test-cancel"),
    path("load-tests/<id:job_id>/plan", LoadTestPlanApi.as_view(), name="load-test-plan"),
    path("benchmark-series/<id:series_id>/", BenchmarkSeriesDetailApi.as_view(), name="benchmark-series-detail"),
]

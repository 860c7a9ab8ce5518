from django.urls import path

from benchmarks_app.apis import BenchmarkRunDetailApi, BenchmarkRunListApi

app_name = "benchmarks"

urlpatterns = [
    path("benchmark-runs/", BenchmarkRunListApi.as_view(), name="benchmark-run-list"),
    path("benchmark-runs/<int:run_id>/", BenchmarkRunDetailApi.as_view(), name="benchmark-run-detail"),
]

"""Reads of benchmark runs: an organisation sees its own, nobody else's."""

from __future__ import annotations

from django.db.models import QuerySet

from benchmarks_app.models import BenchmarkRequest, BenchmarkRun, BenchmarkSeries
from sizing.models import Organisation


def benchmark_run_list_for_organisation(
    *,
    organisation: Organisation,
    deployment: int | None = None,
    model: str | None = None,
    gpu: str | None = None,
    engine: str | None = None,
    tool: str | None = None,
) -> QuerySet[BenchmarkRun]:
    rows = (
        BenchmarkRun.objects.filter(organisation=organisation)
        .select_related("deployment", "model", "gpu", "series", "file")
        .defer("file__content")
    )
    if deployment is not None:
        rows = rows.filter(deployment_id=deployment)
    if model:
        rows = rows.filter(model__slug=model)
    if gpu:
        rows = rows.filter(gpu__slug=gpu)
    if engine:
        rows = rows.filter(engine=engine)
    if tool:
        rows = rows.filter(tool=tool)
    return rows.order_by("-created_at", "series_index", "-pk")


def benchmark_run_get_for_organisation(*, organisation: Organisation, run_id: int) -> BenchmarkRun | None:
    return benchmark_run_list_for_organisation(organisation=organisation).filter(pk=run_id).first()


def benchmark_requests(*, run: BenchmarkRun) -> QuerySet[BenchmarkRequest]:
    return BenchmarkRequest.objects.filter(run=run).order_by("index")


def benchmark_series_get_for_organisation(*, organisation: Organisation, series_id: int) -> BenchmarkSeries | None:
    return BenchmarkSeries.objects.filter(organisation=organisation, pk=series_id).first()

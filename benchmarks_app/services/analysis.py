"""Analysis of stored runs: goodput under SLOs counted in the database (fast on 100,000 records), a sweep's
curves with the knee, and the links of a run (deployment, model, GPU, TP, engine) changed after the import."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce

from benchmarks_app.models import BenchmarkRequest, BenchmarkRun, BenchmarkSeries
from benchmarks_app.results.analysis import series_points
from benchmarks_app.results.run import RequestStatus
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import invalid_argument
from sizing.kernel.jsonsafe import nonfinite_as_text

SLO_KEYS = ("ttft_ms", "tpot_ms", "e2e_ms")


def run_slo(run: BenchmarkRun, given: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The SLOs to count goodput against: those given, else the run's deployment's."""
    source = {k: v for k, v in (given or {}).items() if v is not None}
    if not source and run.deployment is not None:
        source = dict(run.deployment.slo or {})
    return {key: float(source[key]) for key in SLO_KEYS if source.get(key) is not None}


def benchmark_run_goodput(*, run: BenchmarkRun, slo: Mapping[str, float]) -> dict[str, Any] | None:
    """Requests that succeeded within every SLO, per second of the run and as a share (errors are misses,
    incomplete requests are left out); None without per-request records or SLOs."""
    if not run.request_count or not slo:
        return None
    counted = (
        BenchmarkRequest.objects.filter(run=run)
        .exclude(status=RequestStatus.INCOMPLETE.value)
        .annotate(ttft_slo_ms=Coalesce("ttft_sched_ms", "ttft_ms"))
    )
    good = counted.filter(status=RequestStatus.OK.value)
    for key in SLO_KEYS:
        if key in slo:
            # METRICS.md: the TTFT SLO of an open loop is held against TTFT from the scheduled send time
            column = "ttft_slo_ms" if key == "ttft_ms" else key
            good = good.filter(**{f"{column}__isnull": False, f"{column}__lte": slo[key]})
    total = counted.count()
    good_count = good.count()
    return {
        "slo": dict(slo),
        "requests": total,
        "good": good_count,
        "errors": counted.filter(~Q(status=RequestStatus.OK.value)).count(),
        "attainment": good_count / total if total else None,
        "goodput_requests_per_s": good_count / run.duration_s if run.duration_s else None,
    }


def benchmark_series_report(*, series: BenchmarkSeries) -> dict[str, Any]:
    runs = list(series.runs.order_by("series_index"))
    report = series_points(
        [
            {
                "load": run.load,
                "metrics": run.metrics,
                "output_tokens_per_s": run.output_tokens_per_s,
                "requests_per_s": run.requests_per_s,
                "failed": run.failed,
            }
            for run in runs
        ]
    )
    for point, run in zip(report["points"], sorted(runs, key=lambda r: _x(r, report["axis"])), strict=True):
        point.update(run=run.pk, name=run.name)
    return nonfinite_as_text({"id": series.pk, "name": series.name, **report})


def _x(run: BenchmarkRun, axis: str) -> float:
    if axis in ("concurrency", "rate"):
        return float((run.load or {}).get(axis) or 0)
    if axis == "achieved_rate":
        return float(run.requests_per_s or 0)
    return float(run.series_index)


LINK_FIELDS = ("deployment", "model", "gpu", "gpu_count", "tp", "engine", "engine_version", "name")


@transaction.atomic
def benchmark_run_update(*, run: BenchmarkRun, data: Mapping[str, Any]) -> BenchmarkRun:
    """Change what the run is linked to (the file often does not say which GPU or deployment)."""
    tp = data.get("tp", run.tp)
    count = data.get("gpu_count", run.gpu_count)
    if tp and count and count % tp:
        raise invalid_argument("tp", f"TP {tp} does not divide the run's {count} GPU(s)")
    for key in LINK_FIELDS:
        if key not in data:
            continue
        value = data[key]
        if key == "engine" and value and value not in ENGINE_CHOICES:
            raise invalid_argument("engine", f"engine must be one of {', '.join(ENGINE_CHOICES)}")
        if key == "name" and not str(value or "").strip():
            raise invalid_argument("name", "give the run a name")
        setattr(run, key, value if value is not None or key not in ("engine", "engine_version") else "")
    run.save()
    return run

"""Analysis of imported runs: latency distributions as CDFs, a sweep's throughput and latency against its load with
the knee, and goodput under SLOs (METRICS.md: errors count as SLO misses; incomplete requests are left out).

>>> cdf([3.0, 1.0, 2.0])
{'x': [1.0, 2.0, 3.0], 'y': [0.3333333333333333, 0.6666666666666666, 1.0], 'n': 3}
>>> knee([(1, 10.0), (2, 19.0), (4, 30.0), (8, 31.0)])
4
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks_app.results.run import RequestRecord, RequestStatus, as_array, finite, request_tpot_ms

CDF_POINTS = 200  # a CDF is drawn from at most this many points (quantiles of the data)
KNEE_THROUGHPUT_SHARE = 0.9  # the knee: the first load reaching 90 % of the series' best throughput


def cdf(values: Sequence[float | None], *, points: int = CDF_POINTS) -> dict[str, Any]:
    """The empirical CDF of `values` (None and non-finite left out): x ascending, y = share ≤ x; long data is
    reduced to `points` quantiles."""
    data = as_array(values)
    data = np.sort(data[np.isfinite(data)])
    n = len(data)
    if not n:
        return {"x": [], "y": [], "n": 0}
    if n <= points:
        return {"x": data.tolist(), "y": (np.arange(1, n + 1) / n).tolist(), "n": n}
    shares = np.linspace(1 / points, 1.0, points)
    return {"x": np.quantile(data, shares).tolist(), "y": shares.tolist(), "n": n}


def knee(points: Sequence[tuple[float, float | None]], *, share: float = KNEE_THROUGHPUT_SHARE) -> float | None:
    """The first load (x) whose throughput reaches `share` of the best in the series: beyond it more load buys
    little throughput and costs latency. None for fewer than three points (no shape to read)."""
    usable = sorted((x, y) for x, y in points if y is not None)
    if len(usable) < 3:
        return None
    best = max(y for _, y in usable)
    return next(x for x, y in usable if y >= share * best)


@dataclass(frozen=True, kw_only=True)
class Slo:
    """Limits in milliseconds; None: not limited."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None

    def met_by(self, record: RequestRecord) -> bool:
        if record.status != RequestStatus.OK.value:
            return False
        ttft = record.ttft_sched_ms if record.ttft_sched_ms is not None else record.ttft_ms  # METRICS.md
        checks = ((self.ttft_ms, ttft), (self.tpot_ms, request_tpot_ms(record)), (self.e2e_ms, record.e2e_ms))
        return all(limit is None or (value is not None and value <= limit) for limit, value in checks)


def goodput(records: Sequence[RequestRecord], slo: Slo, *, duration_s: float | None) -> dict[str, Any]:
    """Requests that succeeded and met every SLO, per second of the run and as a share of the requests counted
    (errors are misses; incomplete requests are neither)."""
    counted = [r for r in records if r.status != RequestStatus.INCOMPLETE.value]
    good = sum(1 for r in counted if slo.met_by(r))
    return {
        "requests": len(counted),
        "good": good,
        "attainment": good / len(counted) if counted else None,
        "goodput_requests_per_s": good / duration_s if duration_s else None,
        "errors": sum(1 for r in counted if r.status == RequestStatus.ERROR.value),
    }


def series_points(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A sweep's runs (dicts with `load`, `metrics`, `output_tokens_per_s`, `requests_per_s`) as curves against
    their load: the x axis is the concurrency when every run has one, else the request rate; the knee marked."""
    loads = [run.get("load") or {} for run in runs]
    kinds = {load.get("kind") for load in loads}
    concurrency = [load.get("concurrency") for load in loads]
    rate = [load.get("rate") for load in loads]
    achieved = [finite(run.get("requests_per_s")) for run in runs]
    if kinds == {"concurrency"} and all(c is not None for c in concurrency):
        axis, xs = "concurrency", concurrency
    elif kinds == {"rate"} and all(r is not None for r in rate):
        axis, xs = "rate", rate
    elif all(a is not None for a in achieved):
        # a sweep of mixed loads (GuideLLM's: synchronous, throughput, then constant rates): against the rate
        # each run achieved, as GuideLLM plots it
        axis, xs = "achieved_rate", achieved
    else:
        axis, xs = "index", list(range(1, len(runs) + 1))

    def metric(run: Mapping[str, Any], key: str, field: str) -> float | None:
        return finite(((run.get("metrics") or {}).get(key) or {}).get(field))

    points = [
        {
            "x": x,
            "output_tokens_per_s": finite(run.get("output_tokens_per_s")),
            "requests_per_s": finite(run.get("requests_per_s")),
            "ttft_p50_ms": metric(run, "ttft_ms", "p50"),
            "ttft_p99_ms": metric(run, "ttft_ms", "p99"),
            "tpot_p50_ms": metric(run, "tpot_ms", "p50"),
            "tpot_p99_ms": metric(run, "tpot_ms", "p99"),
            "e2e_p50_ms": metric(run, "e2e_ms", "p50"),
            "failed": run.get("failed"),
        }
        for x, run in zip(xs, runs, strict=True)
    ]
    points.sort(key=lambda p: p["x"])
    return {
        "axis": axis,
        "points": points,
        "knee": knee([(p["x"], p["output_tokens_per_s"]) for p in points]) if axis != "index" else None,
    }


def run_distributions(records: Sequence[RequestRecord]) -> dict[str, Any]:
    """CDFs of the successful requests' TTFT, TPOT, E2E and the pooled inter-chunk gaps (empty without per-request
    data), and the failures and truncations counted so a page can show them."""
    if not records:
        return {}
    ok = [r for r in records if r.status == RequestStatus.OK.value]
    return {
        "ttft_ms": cdf([r.ttft_ms for r in ok]),
        "tpot_ms": cdf([request_tpot_ms(r) for r in ok]),
        "itl_ms": cdf([gap for r in ok for gap in r.itl_ms]),
        "e2e_ms": cdf([r.e2e_ms for r in ok]),
        "max_gap_ms": cdf([max(r.itl_ms) for r in ok if r.itl_ms]),
        "status_counts": {
            status.value: sum(1 for r in records if r.status == status.value) for status in RequestStatus
        },
    }

"""Analysis of runs: CDFs, the knee of a sweep, goodput under SLOs and a sweep's axis."""

from __future__ import annotations

import pytest

from benchmarks_app.results.analysis import Slo, cdf, goodput, knee, run_distributions, series_points
from benchmarks_app.results.run import RequestRecord


def test_a_cdf_is_the_share_of_values_at_or_below_each_point_and_long_data_is_thinned_to_quantiles():
    assert cdf([3.0, None, 1.0, float("nan"), 2.0]) == {"x": [1.0, 2.0, 3.0], "y": [1 / 3, 2 / 3, 1.0], "n": 3}
    long = cdf([float(i) for i in range(1, 10_001)], points=100)
    assert long["n"] == 10_000
    assert len(long["x"]) == 100
    assert long["y"][-1] == 1.0
    assert long["x"][-1] == 10_000.0
    assert cdf([]) == {"x": [], "y": [], "n": 0}


def test_the_knee_is_the_first_load_reaching_90_percent_of_the_best_throughput():
    assert knee([(8, 31.0), (1, 10.0), (4, 28.0), (2, 19.0)]) == 4  # 28 ≥ 0.9 × 31 = 27.9
    assert knee([(1, 10.0), (2, 19.0)]) is None  # too few points
    assert knee([(1, 10.0), (2, None), (4, 11.0), (8, 30.0)]) == 8


def test_goodput_counts_errors_as_misses_and_leaves_incomplete_requests_out():
    records = [
        RequestRecord(ttft_ms=100, e2e_ms=1000, output_tokens=11),  # TPOT 90 ms
        RequestRecord(ttft_ms=300, e2e_ms=1200, output_tokens=11),  # TTFT over
        RequestRecord(ttft_ms=100, e2e_ms=2100, output_tokens=11),  # TPOT 200 ms: over
        RequestRecord(status="error", error="HTTP 500"),
        RequestRecord(status="incomplete", ttft_ms=50),
    ]
    result = goodput(records, Slo(ttft_ms=200, tpot_ms=100), duration_s=2.0)
    assert result == {"requests": 4, "good": 1, "attainment": 0.25, "goodput_requests_per_s": 0.5, "errors": 1}


def test_a_sweep_of_one_load_kind_is_drawn_against_it_and_a_mixed_sweep_against_the_achieved_rate():
    def run(kind: str, achieved: float, tokens: float, **load: float) -> dict:
        return {
            "load": {"kind": kind, **load},
            "requests_per_s": achieved,
            "output_tokens_per_s": tokens,
            "metrics": {"ttft_ms": {"p50": 30.0, "p99": 40.0}},
        }

    closed = series_points(
        [
            run("concurrency", 1.0, 100, concurrency=8),
            run("concurrency", 0.5, 60, concurrency=1),
            run("concurrency", 1.2, 110, concurrency=32),
        ]
    )
    assert (closed["axis"], [p["x"] for p in closed["points"]], closed["knee"]) == ("concurrency", [1, 8, 32], 8)

    # GuideLLM's sweep: synchronous (concurrency 1), throughput (offline), then constant rates
    mixed = series_points(
        [
            run("concurrency", 0.75, 96, concurrency=1),
            run("offline", 5.0, 560),
            run("rate", 3.9, 499, rate=4.0, concurrency=64),
        ]
    )
    assert mixed["axis"] == "achieved_rate"
    assert [p["x"] for p in mixed["points"]] == [0.75, 3.9, 5.0]
    assert mixed["knee"] == 5.0  # 499 < 0.9 × 560 = 504: only the offline run reaches 90 % of the best


def test_run_distributions_count_every_status_and_draw_the_successes():
    records = [
        RequestRecord(ttft_ms=10, e2e_ms=100, itl_ms=(5.0, 7.0), output_tokens=3),
        RequestRecord(ttft_ms=20, e2e_ms=120, itl_ms=(9.0,), output_tokens=2),
        RequestRecord(status="error", error="x"),
    ]
    found = run_distributions(records)
    assert found["status_counts"] == {"ok": 2, "error": 1, "incomplete": 0}
    assert found["ttft_ms"]["x"] == [10.0, 20.0]
    assert found["itl_ms"]["n"] == 3
    assert found["max_gap_ms"]["x"] == [7.0, 9.0]
    assert found["tpot_ms"]["x"] == pytest.approx([45.0, 100.0])  # (100 − 10) / 2, (120 − 20) / 1
    assert run_distributions([]) == {}


def test_an_open_loops_ttft_slo_is_held_against_the_ttft_from_the_scheduled_send():
    # given: a request queued 150 ms in the client before it was sent (METRICS.md: TTFT_sched for SLOs)
    queued = RequestRecord(ttft_ms=100, ttft_sched_ms=250, e2e_ms=500, output_tokens=5)
    sent_at_once = RequestRecord(ttft_ms=100, e2e_ms=500, output_tokens=5)

    # then
    assert goodput([queued, sent_at_once], Slo(ttft_ms=200), duration_s=1.0)["good"] == 1

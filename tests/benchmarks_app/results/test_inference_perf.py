"""The inference-perf importer (`summary_lifecycle_metrics.json`, `stage_N_lifecycle_metrics.json`) on the project's
fixtures: the ground-truth run in the 2026 layout (seconds, p0.1…p99.9 and median), a 2025 stage report, a run
with multi-token chunks, an all-failed run, and broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import inference_perf
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
OWN = FIXTURES / "inference_perf"
VALID = sorted(path for path in OWN.iterdir() if path.is_file())
BROKEN = sorted((OWN / "broken").iterdir())
OTHERS = sorted(path for path in FIXTURES.rglob("*") if path.is_file() and OWN not in path.parents)


def read(name: str) -> ImportedRun:
    (run,) = inference_perf.read((OWN / name).read_text())
    return run


def refusal(path: Path) -> str:
    with pytest.raises(FormatRefusal) as caught:
        inference_perf.read(path.read_text())
    return caught.value.reason


def test_seconds_become_milliseconds() -> None:
    run = read("summary_lifecycle_metrics.json")
    assert (run.tool, run.completed, run.failed) == ("inference_perf", 6, 1)
    ttft = run.metrics["ttft_ms"]
    assert ttft.source == "reported"
    assert ttft.mean == pytest.approx((31.2 + 46.8 + 59.7 + 35.4 + 40.1 + 42.3) / 6)
    assert ttft.p50 == pytest.approx(41.2)  # the 'median' key
    assert ttft.p99 == pytest.approx(59.055)
    assert (ttft.min, ttft.max) == (pytest.approx(31.2), pytest.approx(59.7))
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.metrics["itl_ms"].mean == pytest.approx(7.8019, abs=1e-4)  # one token per chunk: mapped
    assert run.metrics["itl_ms"].p99 == pytest.approx(23.403, abs=1e-3)
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117 + 0.4, abs=1e-4)  # to the stream's end
    assert run.metrics["ntpot_ms"].mean == pytest.approx((159.6117 + 0.4) / 16, abs=1e-4)
    assert run.metrics["input_tokens"].mean == 510.5
    assert run.metrics["output_tokens"].mean == 16.0  # the server's output_tokens
    assert run.duration_s == pytest.approx(run.reported["benchmark_time_seconds"])
    assert run.requests_per_s == pytest.approx(6 / run.reported["benchmark_time_seconds"])
    assert run.output_tokens_per_s == pytest.approx(96 / run.reported["benchmark_time_seconds"])
    assert run.reported["successes"]["goodput_metrics"]["good_requests"] == 6
    assert any("400 - Context Window × 1" in note for note in run.notes)
    assert any("only successful requests" in note for note in run.notes)
    assert run.load.kind == "unknown"  # a summary names no rate


def test_2025_stage_report_leaves_out_tpot_and_itl() -> None:
    run = read("stage_0_lifecycle_metrics.json")
    assert "tpot_ms" not in run.metrics  # timed over every SSE event
    assert "itl_ms" not in run.metrics
    assert "time_per_output_token" in run.reported["successes"]["latency"]
    assert run.load.as_dict() == {"kind": "rate", "rate": 4.0, "concurrency": None}
    assert run.settings == {"requested_rate": 4.0}
    assert run.duration_s == pytest.approx(40 / 4.0)  # no benchmark_time_seconds: count / requests_per_sec
    assert run.metrics["output_tokens"].mean == 64.0
    assert run.metrics["ttft_ms"].mean == pytest.approx(
        run.reported["successes"]["latency"]["time_to_first_token"]["mean"] * 1000
    )
    assert any("predates" in note for note in run.notes)
    assert any("client tokenizer's count" in note for note in run.notes)


def test_multi_token_chunks_and_zero_ntpot_are_left_out() -> None:
    run = read("multi_token_chunks.json")
    assert "itl_ms" not in run.metrics  # zero gaps inside chunks
    assert "ntpot_ms" not in run.metrics  # 0.0 for a request without output
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.load.as_dict() == {"kind": "concurrency", "rate": 5.0, "concurrency": 3}
    assert any("schedule lag" in note and "20.9 ms" in note for note in run.notes)  # p99 of the delays, in ms
    assert any("4.00/s is under 95% of the requested 5.00/s" in note for note in run.notes)


def test_all_failed_report() -> None:
    run = read("all_failed.json")
    assert (run.completed, run.failed) == (0, 3)
    assert run.metrics == {}
    assert run.duration_s == pytest.approx(0.0412)
    assert any("503 - Service Unavailable × 2; Connection Error × 1" in note for note in run.notes)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("prometheus_report.json", "an inference-perf Prometheus report"),
        ("cut_short.json", "not valid JSON"),
        ("wrong_types.json", "'successes.count' is not a count of requests ('six')"),
        ("wrong_distribution.json", "'successes.latency.time_to_first_token' is not a distribution (list)"),
    ],
)
def test_broken_files_are_refused_with_their_reason(name: str, reason: str) -> None:
    assert reason in refusal(OWN / "broken" / name)


def test_refusals_of_other_shapes() -> None:
    assert "without inference-perf's 'successes' and 'failures'" in refusal(
        FIXTURES / "vllm" / "bench_serve_detailed.json"
    )
    with pytest.raises(FormatRefusal, match="'successes' is not an object"):
        inference_perf.read('{"successes": [], "failures": {}}')
    with pytest.raises(FormatRefusal, match="no request count"):
        inference_perf.read('{"successes": {}, "failures": {"count": 0}}')
    with pytest.raises(FormatRefusal, match="not a JSON object"):
        inference_perf.read("[]")


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.name)
def test_import_text_detects_inference_perf(path: Path) -> None:
    fmt, runs = import_text(path.read_text())
    assert fmt == "inference_perf"
    json.dumps([run.as_dict(with_requests=True) for run in runs], allow_nan=False)


@pytest.mark.parametrize("path", BROKEN, ids=lambda path: path.name)
def test_import_text_refuses_broken_inference_perf_files(path: Path) -> None:
    with pytest.raises(BenchmarkFormatError):
        import_text(path.read_text())


@pytest.mark.parametrize("path", OTHERS, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_fixtures_are_not_inference_perf(path: Path) -> None:
    refusal(path)

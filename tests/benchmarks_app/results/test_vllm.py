"""The vLLM importer (`vllm bench serve --save-result`, legacy `benchmark_serving.py`) on the project's own fixtures.

The fixtures hold one synthetic ground-truth run (7 requests at concurrency 3; 6 succeed with 16 tokens, one token
per chunk; request 7 fails with HTTP 400, its prompt of 9200 tokens over an 8192 context), written the way vLLM
writes it, plus summary-only, appended, legacy, sweep and broken variants.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import vllm
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
OWN = FIXTURES / "vllm"
VALID = sorted(path for path in OWN.iterdir() if path.is_file())
BROKEN = sorted((OWN / "broken").iterdir())
OTHERS = sorted(path for path in FIXTURES.rglob("*") if path.is_file() and OWN not in path.parents)

# the ground truth, per successful request (ms)
TTFT = [31.2, 46.8, 59.7, 35.4, 40.1, 42.3]
INPUT_OK = [498, 523, 507, 531, 489, 515]


def read(name: str) -> list[ImportedRun]:
    return vllm.read((OWN / name).read_text())


def refusal(path: Path) -> str:
    with pytest.raises(FormatRefusal) as caught:
        vllm.read(path.read_text())
    return caught.value.reason


def test_detailed_run_is_recomputed_from_its_requests() -> None:
    (run,) = read("bench_serve_detailed.json")
    assert (run.format, run.tool, run.model) == ("vllm_bench_serve", "vllm", "meta-llama/Llama-3.1-8B-Instruct")
    assert (run.completed, run.failed, len(run.requests)) == (6, 1, 7)
    ttft = run.metrics["ttft_ms"]
    assert ttft.source == "recomputed"
    assert ttft.mean == pytest.approx(sum(TTFT) / 6)  # 42.58
    assert ttft.p99 == pytest.approx(46.8 + 0.95 * (59.7 - 46.8))  # numpy linear: rank 0.99 × 5 = 4.95
    assert ttft.n == 6
    assert "p99" in ttft.insufficient  # 6 samples: METRICS.md forbids p99 under 100
    itl = run.metrics["itl_ms"]
    assert itl.n == 90  # 6 requests × 15 gaps
    assert itl.mean == pytest.approx(7.8019, abs=1e-4)
    assert itl.p99 == pytest.approx(23.403, abs=1e-3)  # the 21.5 ms and 38.8 ms stalls
    assert itl.max == pytest.approx(38.8)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117, abs=1e-4)
    assert run.metrics["ntpot_ms"].mean == pytest.approx(159.6117 / 16, abs=1e-3)
    assert run.metrics["input_tokens"].mean == pytest.approx(sum(INPUT_OK) / 6)  # 510.5: the 9200 is left out
    assert run.metrics["output_tokens"].mean == 16


def test_detailed_run_agrees_with_vllm_summary() -> None:
    (run,) = read("bench_serve_detailed.json")
    for prefix, key in (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2el", "e2e_ms")):
        stat = run.metrics[key]
        assert stat.mean == pytest.approx(run.reported[f"mean_{prefix}_ms"], rel=1e-9)
        assert stat.p50 == pytest.approx(run.reported[f"median_{prefix}_ms"], rel=1e-9)
        assert stat.p90 == pytest.approx(run.reported[f"p90_{prefix}_ms"], rel=1e-9)
        assert stat.p99 == pytest.approx(run.reported[f"p99_{prefix}_ms"], rel=1e-9)
        assert stat.std == pytest.approx(run.reported[f"std_{prefix}_ms"], rel=1e-9)
    assert run.output_tokens_per_s == pytest.approx(96 / 0.3549)
    assert run.requests_per_s == pytest.approx(6 / 0.3549)
    assert run.total_tokens_per_s == pytest.approx((3063 + 96) / 0.3549)
    assert "ttfts" not in run.reported  # per-request arrays are records, not summary fields


def test_failed_request_keeps_its_prompt_but_not_the_zero_placeholders() -> None:
    (run,) = read("bench_serve_detailed.json")
    failed = run.requests[6]
    assert (failed.status, failed.error, failed.input_tokens) == ("error", "Bad Request", 9200)
    assert failed.ttft_ms is None
    assert failed.e2e_ms is None
    assert failed.itl_ms == ()
    assert any("failed request" in note for note in run.notes)


def test_perf_counter_start_times_become_offsets() -> None:
    (run,) = read("bench_serve_detailed.json")
    assert [round(r.start_s or 0, 6) for r in run.requests] == [0.0, 0.0002, 0.0004, 0.13906, 0.16983, 0.17176, 0.28591]
    assert any("perf_counter" in note for note in run.notes)


def test_load_settings_and_start() -> None:
    (run,) = read("bench_serve_detailed.json")
    assert run.load.as_dict() == {"kind": "concurrency", "rate": None, "concurrency": 3}  # "inf" with 3 at a time
    assert run.settings["request_rate"] == "inf"
    assert run.settings["num_prompts"] == 7
    assert "mean_ttft_ms" not in run.settings
    assert run.backend == "openai-chat"
    assert run.started_at == "2026-01-02T09:30:14+00:00"  # saved 09:30:15, minus 0.3549 s
    assert run.duration_s == pytest.approx(0.3549)


def test_summary_only_file_maps_vllm_figures_and_recomputes_e2e_from_latencies() -> None:
    (run,) = read("bench_serve_summary.json")
    assert run.requests == ()
    ttft = run.metrics["ttft_ms"]
    assert ttft.source == "reported"
    assert ttft.mean == pytest.approx(42.5833, abs=1e-4)
    assert ttft.p95 == pytest.approx(46.8 + 0.75 * (59.7 - 46.8))  # 56.475: rank 0.95 × 5 = 4.75
    assert ttft.p99 == pytest.approx(59.055)
    assert run.metrics["itl_ms"].p99 == pytest.approx(23.403, abs=1e-3)
    e2e = run.metrics["e2e_ms"]  # --percentile-metrics had no e2el, but the latencies stayed
    assert (e2e.source, e2e.n) == ("recomputed", 6)
    assert e2e.mean == pytest.approx(159.6117, abs=1e-4)
    assert run.metrics["input_tokens"].mean == pytest.approx(3063 / 6)
    assert (run.completed, run.failed) == (6, 1)
    assert any("without --save-detailed" in note for note in run.notes)


def test_legacy_benchmark_serving_file() -> None:
    (run,) = read("legacy_benchmark_serving.json")
    assert "request_goodput:" in run.reported
    assert (run.completed, run.failed) == (6, 1)  # no 'failed' key: counted from the errors
    assert str(run.requests[6].error).startswith("Traceback")
    # no latencies: E2E rebuilt as TTFT + the sum of the gaps, which is where vLLM's latency ends here
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117, abs=1e-4)
    assert run.metrics["ttft_ms"].mean == pytest.approx(42.5833, abs=1e-4)
    assert run.requests[0].start_s is None
    assert any("Legacy" in note for note in run.notes)
    assert any("rebuilt as TTFT + the sum" in note for note in run.notes)


def test_llm_d_results_lines_are_three_runs_with_metadata() -> None:
    runs = read("llmd_results.jsonl")
    assert [run.load.kind for run in runs] == ["rate", "rate", "offline"]
    assert [run.load.rate for run in runs] == [10.0, 30.0, None]
    assert [run.label for run in runs] == [
        "num_prompts=300, request_rate=10.0",
        "num_prompts=900, request_rate=30.0",
        "num_prompts=900, request_rate=inf",
    ]
    first = runs[0]
    assert first.settings["gpu"] == "4xNVIDIA_L40S"
    assert first.settings["deployment"] == "base"
    assert any("--metadata" in note and "gpu" in note for note in first.notes)
    assert first.failed == 300 - 300  # legacy, no details: num_prompts − completed
    assert first.completed == 300
    assert first.metrics["output_tokens"].mean == pytest.approx(81000 / 300)
    assert first.metrics["ttft_ms"].mean == 54.5
    assert "e2e_ms" not in first.metrics
    assert first.requests_per_s == pytest.approx(300 / 36.0)


def test_legacy_summary_failures_are_the_prompts_that_did_not_complete() -> None:
    line = json.loads((OWN / "llmd_results.jsonl").read_text().splitlines()[0])
    line["completed"] = 290
    (run,) = vllm.read(json.dumps(line))
    assert (run.completed, run.failed) == (290, 300 - 290)
    assert any("num_prompts − completed" in note for note in run.notes)


def test_appended_results_are_separate_runs() -> None:
    runs = read("append_result.json")
    assert [run.label for run in runs] == [
        "request_rate=2.0, max_concurrency=None",
        "request_rate=inf, max_concurrency=4",
    ]
    assert [run.load.kind for run in runs] == ["rate", "concurrency"]
    assert runs[1].load.concurrency == 4
    assert runs[1].metrics["ttft_ms"].mean == 120.25


def test_pretty_printed_sweep_run_keeps_sweep_parameters() -> None:
    (run,) = read("sweep_run0.json")
    assert (run.settings["run_number"], run.settings["max_num_seqs"]) == (0, 4)
    assert run.metrics["e2e_ms"].mean == 334.25
    assert run.metrics["e2e_ms"].p99 == 870.0


def test_all_failed_run_has_no_latencies() -> None:
    (run,) = read("all_failed.json")
    assert (run.completed, run.failed) == (0, 4)
    assert run.metrics == {}  # vLLM's 0.0 summaries are not latencies
    assert [record.input_tokens for record in run.requests] == [9200, 9300, 9400, 9500]
    assert any("Every request failed" in note for note in run.notes)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("cut_short.json", "the file is cut short"),
        ("wrong_types.json", "ttfts[2] is not a number ('fast')"),
        ("mismatched_arrays.json", "the per-request arrays have different lengths"),
        ("append_cut_short.json", "line 3 is not JSON"),
    ],
)
def test_broken_files_are_refused_with_their_reason(name: str, reason: str) -> None:
    assert reason in refusal(OWN / "broken" / name)


def test_refusals_of_other_shapes() -> None:
    sglang_file = FIXTURES / "sglang" / "bench_serving_details.jsonl"
    assert "an SGLang bench_serving result" in refusal(sglang_file)
    with pytest.raises(FormatRefusal, match="a JSON array"):
        vllm.read("[1, 2, 3]")
    with pytest.raises(FormatRefusal, match="without vLLM's 'completed' count"):
        vllm.read('{"benchmarks": []}')
    with pytest.raises(FormatRefusal, match="none of vLLM's result fields"):
        vllm.read('{"completed": 3}')
    with pytest.raises(FormatRefusal, match="'completed' is not a count"):
        vllm.read('{"completed": 2.5, "model_id": "m"}')


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.name)
def test_import_text_detects_vllm(path: Path) -> None:
    fmt, runs = import_text(path.read_text())
    assert fmt == "vllm_bench_serve"
    # stored as JSON: no NaN or Infinity anywhere
    json.dumps([run.as_dict(with_requests=True) for run in runs], allow_nan=False)


@pytest.mark.parametrize("path", BROKEN, ids=lambda path: path.name)
def test_import_text_refuses_broken_vllm_files(path: Path) -> None:
    with pytest.raises(BenchmarkFormatError) as caught:
        import_text(path.read_text())
    assert any(fmt == "vllm_bench_serve" for fmt, _ in caught.value.tried)


@pytest.mark.parametrize("path", OTHERS, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_fixtures_are_not_vllm(path: Path) -> None:
    refusal(path)

"""AIPerf / GenAI-Perf importers against this project's own fixtures (fixtures/aiperf, fixtures/genai_perf).

The fixtures hold one synthetic run (concurrency 3, 7 requests: 6 succeed with 16 output tokens in 16 one-token
chunks, #6 fails with HTTP 400), each tool's definitions applied to it. Hand-checked figures:

- TTFT of the successes 33.9, 48.2, 57.6, 36.1, 38.4, 41.3 ms: mean 255.5 / 6 = 42.583; median (38.4 + 41.3) / 2 =
  39.85.
- 90 inter-chunk gaps summing to 702.17 ms (mean 7.8019), two stalls 22.3 and 18.9 ms; the next-largest is 7.9, so
  the pooled p99 (linear) = 18.9 + 0.11 × (22.3 − 18.9) = 19.274.
- AIPerf's request_latency = TTFT + Σ gaps + 0.4 ms (the trailing usage chunk): mean (255.5 + 702.17 + 2.4) / 6 =
  160.012; its inter_token_latency = (latency − TTFT) / 15: mean (702.17 + 2.4) / 90 = 7.8286. METRICS.md's TPOT
  ends at the last content chunk: 702.17 / 90 = 7.8019. GenAI-Perf drops chunks without content: its latency mean
  159.612, its inter_token_latency 7.8019.
- The run spans 0.33253 s (first start → last response): 6 / 0.33253 = 18.0435 req/s, 96 / 0.33253 = 288.696 tok/s,
  (3063 + 96) / 0.33253 = 9499.89 tok/s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import aiperf
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
AIPERF_DIR = FIXTURES / "aiperf"
GENAI_DIR = FIXTURES / "genai_perf"
READERS = {"aiperf_json": aiperf.read_json, "aiperf_csv": aiperf.read_csv, "aiperf_records": aiperf.read_records}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _one(reader: Callable[[str], list[ImportedRun]], path: Path) -> ImportedRun:
    runs = reader(_text(path))
    assert len(runs) == 1
    return runs[0]


def _has(notes: tuple[str, ...], *words: str) -> bool:
    return any(all(word in note for word in words) for note in notes)


# ---------------------------------------------------------------------------------------------------------------
# AIPerf summary JSON


def test_aiperf_json_maps_each_field_onto_the_canonical_metrics() -> None:
    run = _one(aiperf.read_json, AIPERF_DIR / "profile_export_aiperf.json")
    assert (run.format, run.tool, run.tool_version) == ("aiperf_json", "aiperf", "0.13.0")
    assert (run.completed, run.failed) == (6, 1)  # request_count = successes; completed_request_count 7 = 6 + 1
    ttft, tpot, itl, e2e = (run.metrics[key] for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"))
    assert ttft.mean == pytest.approx(42.5833, abs=1e-4)
    assert ttft.p50 == pytest.approx(39.85)
    assert ttft.n == 6
    assert ttft.insufficient == ("p90", "p95", "p99")
    assert tpot.mean == pytest.approx(7.8286, abs=1e-4)  # AIPerf's ITL, to the stream end
    assert itl.mean == pytest.approx(7.8019, abs=1e-4)
    assert itl.p99 == pytest.approx(19.274)
    assert itl.n == 90
    assert e2e.mean == pytest.approx(160.0117, abs=1e-4)
    assert {stat.source for stat in run.metrics.values()} == {"reported"}
    assert "ntpot_ms" not in run.metrics  # not derivable from the summary
    assert run.metrics["input_tokens"].mean == pytest.approx(510.5)
    assert run.metrics["output_tokens"].mean == pytest.approx(16.0)
    assert run.requests_per_s == pytest.approx(18.0435, abs=1e-3)
    assert run.output_tokens_per_s == pytest.approx(288.696, abs=1e-2)
    assert run.total_tokens_per_s == pytest.approx(9499.89, abs=1e-1)
    assert run.duration_s == pytest.approx(0.33253)
    assert (run.load.kind, run.load.concurrency, run.load.rate) == ("concurrency", 3, None)
    assert (run.model, run.backend) == ("meta-llama/Llama-3.1-8B-Instruct", "chat")
    assert run.started_at == "2026-06-10T00:00:00.000100"
    assert run.reported["inter_token_latency"]["avg"] == pytest.approx(7.8286, abs=1e-4)
    assert run.reported["error_summary"][0]["error_details"]["code"] == 400
    assert "phases" in run.settings
    assert _has(run.notes, "inter_token_latency", "trailing usage chunk")
    assert _has(run.notes, "request_count counts successful requests only")
    assert _has(run.notes, "usage_prompt_tokens", "client tokenizer")
    assert _has(run.notes, "errors: 1 × 400 Bad Request")
    assert _has(run.notes, "local clock")
    json.dumps(run.as_dict(), allow_nan=False)


def test_aiperf_json_of_a_rate_run_with_server_token_counts_and_multi_token_chunks() -> None:
    run = _one(aiperf.read_json, AIPERF_DIR / "rate_profile_export_aiperf.json")
    assert (run.tool_version, run.completed, run.failed) == ("0.8.0", 40, 0)  # empty error_summary: none failed
    assert (run.load.kind, run.load.rate, run.load.concurrency) == ("rate", 4.0, 8)
    assert (run.model, run.backend) == ("Qwen/Qwen3-8B", "chat")
    assert run.started_at == "2026-06-10T01:00:00+00:00"  # from min_request_timestamp (epoch ns), not start_time
    assert run.metrics["itl_ms"].mean == pytest.approx(110.1)
    assert run.metrics["ttft_ms"].insufficient == ("p99",)  # n = 40
    assert _has(run.notes, "2,560 output tokens", "≈5.8 tokens", "per-chunk gaps")
    assert _has(run.notes, "--use-server-token-count")


def test_aiperf_json_of_an_all_failed_run() -> None:
    run = _one(aiperf.read_json, AIPERF_DIR / "all_failed_profile_export_aiperf.json")
    assert (run.completed, run.failed) == (0, 3)
    assert run.metrics == {}
    assert run.requests_per_s is None
    assert _has(run.notes, "3 × 503 Service Unavailable")


def test_aiperf_json_nested_records_layout_and_nan_figures() -> None:
    """One early AIPerf build nested the metrics under `records`; NaN (json.loads lets it through) reads as unknown
    and is not stored."""
    text = (
        '{"records": {"time_to_first_token": {"tag": "time_to_first_token", "unit": "ms", "avg": 42.5, '
        '"p50": 41.0, "std": NaN, "count": 6}, "request_count": {"unit": "requests", "avg": 6}}, '
        '"was_cancelled": false, "error_summary": [], "input_config": {"endpoint": {"model_names": ["m"]}}}'
    )
    run = aiperf.read_json(text)[0]
    assert (run.tool, run.completed, run.failed, run.model) == ("aiperf", 6, 0, "m")
    assert (run.metrics["ttft_ms"].mean, run.metrics["ttft_ms"].std) == (42.5, None)
    assert run.reported["records"]["time_to_first_token"]["std"] is None
    json.dumps(run.as_dict(), allow_nan=False)


def test_aiperf_json_times_in_other_units_are_converted() -> None:
    text = json.dumps(
        {
            "aiperf_version": "0.9.0",
            "error_summary": [],
            "time_to_first_token": {"unit": "ns", "avg": 42_500_000, "p99": 60_000_000, "count": 6},
            "request_latency": {"unit": "sec", "avg": 0.16, "count": 6},
            "inter_token_latency": {"unit": "tokens", "avg": 7.8, "count": 6},
            "request_count": {"unit": "requests", "avg": 6},
        }
    )
    run = aiperf.read_json(text)[0]
    assert run.metrics["ttft_ms"].mean == pytest.approx(42.5)
    assert run.metrics["ttft_ms"].p99 == pytest.approx(60.0)
    assert run.metrics["e2e_ms"].mean == pytest.approx(160.0)
    assert "tpot_ms" not in run.metrics
    assert _has(run.notes, "inter_token_latency has the unit 'tokens', not a time unit: left out")


# ---------------------------------------------------------------------------------------------------------------
# AIPerf summary CSV


def test_aiperf_csv_reads_both_tables_by_display_name() -> None:
    run = _one(aiperf.read_csv, AIPERF_DIR / "profile_export_aiperf.csv")
    assert (run.format, run.tool, run.completed, run.failed) == ("aiperf_csv", "aiperf", 6, 1)
    assert run.metrics["ttft_ms"].mean == pytest.approx(42.58)
    assert run.metrics["ttft_ms"].p50 == pytest.approx(39.85)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.83)
    assert run.metrics["itl_ms"].mean == pytest.approx(7.80)
    assert run.metrics["itl_ms"].p99 == pytest.approx(19.27)
    assert run.metrics["itl_ms"].n is None  # the CSV has no count; pooled gaps are not one per request
    assert run.metrics["e2e_ms"].mean == pytest.approx(160.01)
    assert run.metrics["input_tokens"].mean == pytest.approx(510.5)
    assert (run.requests_per_s, run.output_tokens_per_s, run.duration_s) == (18.04, 288.70, 0.33)
    assert run.reported["telemetry"][0]["GPU_UUID"].startswith("GPU-")
    assert run.reported["telemetry"][0]["avg"] == pytest.approx(71.38)
    assert _has(run.notes, "rounded to 2 decimals")
    assert _has(run.notes, "no input_config")


def test_aiperf_csv_without_an_error_row_had_no_failure() -> None:
    text = (
        "Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
        "Time to First Token (ms),24.62,23.59,26.31,23.6,23.7,23.8,24.2,24.53,24.96,25.36,25.56,26.27,0.5\n"
        "\nMetric,Value\nRequest Count,57.00\nRequest Throughput (requests/sec),1.49\n"
    )
    run = aiperf.read_csv(text)[0]
    assert (run.tool, run.completed, run.failed, run.requests_per_s) == ("aiperf", 57, 0, 1.49)
    assert run.metrics["ttft_ms"].n == 57
    assert _has(run.notes, "AIPerf writes one only when a request failed")


def test_aiperf_csv_of_an_all_failed_run_has_only_the_value_table() -> None:
    run = aiperf.read_csv("Metric,Value\nError Request Count,3.00\n")[0]
    assert (run.tool, run.completed, run.failed, run.metrics) == ("aiperf", 0, 3, {})


# ---------------------------------------------------------------------------------------------------------------
# AIPerf per-record JSON lines


def test_aiperf_records_are_recomputed_by_metrics_md() -> None:
    run = _one(aiperf.read_records, AIPERF_DIR / "profile_export.jsonl")
    assert (run.format, run.tool, run.completed, run.failed) == ("aiperf_records", "aiperf", 6, 1)
    assert len(run.requests) == 7  # the warm-up record is left out
    assert all(record.ttft_ms != pytest.approx(95.5) for record in run.requests)
    assert {stat.source for stat in run.metrics.values()} == {"recomputed"}
    assert run.metrics["ttft_ms"].mean == pytest.approx(42.5833, abs=1e-4)
    assert run.metrics["ttft_ms"].p50 == pytest.approx(39.85)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)  # to the last content chunk, not 7.8286
    itl = run.metrics["itl_ms"]
    assert (itl.n, itl.max) == (90, 22.3)
    assert itl.mean == pytest.approx(7.8019, abs=1e-4)
    assert itl.p99 == pytest.approx(19.274)
    assert itl.insufficient == ("p99",)
    assert run.metrics["e2e_ms"].mean == pytest.approx(160.0117, abs=1e-4)
    assert run.metrics["ntpot_ms"].mean == pytest.approx(160.0117 / 16, abs=1e-4)
    failed = [record for record in run.requests if record.status == "error"]
    assert len(failed) == 1
    assert failed[0].error.startswith("400 Bad Request: HTTP 400")
    assert failed[0].input_tokens == 9200
    assert run.requests[0].start_s == 0.0
    assert run.requests[3].start_s == pytest.approx(0.14808, abs=1e-6)
    assert run.duration_s == pytest.approx(0.33253, abs=1e-6)
    assert run.requests_per_s == pytest.approx(18.0435, abs=1e-3)
    assert run.output_tokens_per_s == pytest.approx(288.696, abs=1e-2)
    assert run.started_at == "2026-06-10T00:00:00.000100+00:00"
    assert run.load.kind == "unknown"
    assert run.reported["inter_token_latency_mean_ms"] == pytest.approx(7.8286, abs=1e-4)
    assert _has(run.notes, "1 warm-up record left out")
    assert _has(run.notes, "7.829 ms against 7.802 ms")
    assert not _has(run.notes, "chunking_unknown")
    json.dumps(run.as_dict(with_requests=True), allow_nan=False)


def test_aiperf_records_of_an_all_failed_run() -> None:
    run = _one(aiperf.read_records, AIPERF_DIR / "all_failed_profile_export.jsonl")
    assert (run.completed, run.failed, run.metrics) == (0, 3, {})
    assert run.requests_per_s == 0.0
    assert {record.status for record in run.requests} == {"error"}


def test_aiperf_records_with_several_tokens_per_chunk_flag_chunking_unknown() -> None:
    record = {
        "metadata": {"request_start_ns": 10**18, "request_end_ns": 10**18 + 60_000_000, "benchmark_phase": "profiling"},
        "metrics": {
            "time_to_first_token": {"value": 20.0, "unit": "ms"},
            "request_latency": {"value": 0.06, "unit": "sec"},
            "inter_chunk_latency": {"value": [16_000_000, 24_000_000], "unit": "ns"},
            "output_sequence_length": {"value": 9, "unit": "tokens"},
        },
    }
    run = aiperf.read_records(json.dumps(record) + "\n")[0]
    assert run.requests[0].e2e_ms == pytest.approx(60.0)
    assert run.requests[0].itl_ms == pytest.approx((16.0, 24.0))
    assert run.requests[0].tpot_ms == pytest.approx(40.0 / 8)  # (t_cC − t_c1) / (N_out − 1), n_1 = 1
    assert _has(run.notes, "chunking_unknown")
    assert _has(run.notes, "client-tokenizer count")


# ---------------------------------------------------------------------------------------------------------------
# GenAI-Perf


def test_genai_perf_json_keeps_its_own_definitions() -> None:
    run = _one(aiperf.read_json, GENAI_DIR / "profile_export_genai_perf.json")
    assert (run.format, run.tool, run.tool_version) == ("aiperf_json", "genai_perf", None)
    assert (run.completed, run.failed) == (6, None)
    assert run.metrics["ttft_ms"].mean == pytest.approx(42.5833, abs=1e-4)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)  # ends at the last content chunk
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117, abs=1e-4)
    assert "itl_ms" not in run.metrics
    assert (run.load.kind, run.load.concurrency) == ("concurrency", 3)
    assert (run.model, run.backend) == ("meta-llama/Llama-3.1-8B-Instruct", "chat")  # not the default tensorrtllm
    assert run.reported["telemetry_stats"]["gpu_memory_used"]["gpu0"]["max"] == pytest.approx(71.41)
    assert _has(run.notes, "does not count failed requests")
    assert _has(run.notes, "no pooled inter-chunk gap")
    assert _has(run.notes, "last content chunk", "e2e_ms")


def test_genai_perf_legacy_json_with_a_flat_input_config() -> None:
    run = _one(aiperf.read_json, GENAI_DIR / "legacy_profile_export_genai_perf.json")
    assert run.tool == "genai_perf"
    assert (run.load.kind, run.load.rate) == ("rate", 2.5)
    assert (run.model, run.backend) == ("mistralai/Mistral-7B-Instruct-v0.3", "chat")
    assert run.completed is None  # this export has no request_count
    assert run.metrics["ttft_ms"].p99 == pytest.approx(99.7)


def test_genai_perf_csv_column_order_and_telemetry_tables() -> None:
    run = _one(aiperf.read_csv, GENAI_DIR / "profile_export_genai_perf.csv")
    assert (run.tool, run.completed, run.failed) == ("genai_perf", 6, None)
    ttft = run.metrics["ttft_ms"]
    assert (ttft.mean, ttft.p50, ttft.p99, ttft.min, ttft.max) == (42.58, 39.85, 57.13, 33.9, 57.6)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.80)
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.61)
    assert (run.requests_per_s, run.output_tokens_per_s) == (18.04, 288.70)
    gpus = [row for row in run.reported["telemetry"] if row.get("GPU") == "gpu0"]
    assert [row["Metric"] for row in gpus] == ["GPU Power Usage (W)", "GPU Memory Used (GB)", "Total GPU Memory (GB)"]


def test_genai_perf_legacy_csv_with_thousands_separators_and_crlf() -> None:
    run = _one(aiperf.read_csv, GENAI_DIR / "legacy_profile_export_genai_perf.csv")
    assert run.tool == "genai_perf"
    ttft = run.metrics["ttft_ms"]
    assert (ttft.mean, ttft.p50, ttft.p90, ttft.max, ttft.std) == (1284.37, 1240.18, 2144.90, 2410.55, None)
    assert run.metrics["e2e_ms"].mean == pytest.approx(3871.40)
    assert run.metrics["output_tokens"].mean == pytest.approx(63.71)
    assert (run.output_tokens_per_s, run.requests_per_s) == (1052.84, 16.53)
    assert run.completed is None


# ---------------------------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize(
    ("name", "reader", "reason"),
    [
        ("aiperf/broken_cut_profile_export_aiperf.json", "aiperf_json", "the file is cut short"),
        (
            "aiperf/broken_types_profile_export_aiperf.json",
            "aiperf_json",
            "time_to_first_token.avg is '42.58 ms', not a number",
        ),
        ("aiperf/broken_cut_profile_export.jsonl", "aiperf_records", "line 8 is not JSON"),
        ("aiperf/broken_cut_profile_export.jsonl", "aiperf_records", "the last line is cut short"),
        (
            "aiperf/broken_types_profile_export.jsonl",
            "aiperf_records",
            "line 3: metrics.inter_chunk_latency.value is a string, not a list",
        ),
        ("genai_perf/broken_cut_profile_export_genai_perf.csv", "aiperf_csv", "line 4 has 4 cells"),
        ("genai_perf/broken_cut_profile_export_genai_perf.csv", "aiperf_csv", "the file is cut short"),
        ("aiperf/profile_export.jsonl", "aiperf_json", "JSON lines of AIPerf per-request records"),
        ("aiperf/profile_export_aiperf.json", "aiperf_records", "one JSON object over several lines"),
        ("aiperf/profile_export_aiperf.json", "aiperf_csv", "JSON, not a CSV export"),
        ("aiperf/profile_export_aiperf.csv", "aiperf_json", "not valid JSON"),
    ],
)
def test_broken_and_foreign_files_are_refused_with_a_reason(name: str, reader: str, reason: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        READERS[reader](_text(FIXTURES / name))
    assert reason in refusal.value.reason


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (
            "aiperf/server_metrics_export.json",
            "an AIPerf server-metrics export, not a profile: upload it as a memory timeline",
        ),
        (
            "aiperf/gpu_telemetry_export.jsonl",
            "an AIPerf GPU-telemetry export, not a profile: upload it as a memory timeline",
        ),
    ],
)
def test_aiperf_timeline_exports_are_not_runs(name: str, reason: str, reader: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        READERS[reader](_text(FIXTURES / name))
    assert refusal.value.reason == reason


def test_an_aiperf_gpu_telemetry_csv_is_not_a_run() -> None:
    text = (
        "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max\n"
        "localhost:9401,0,NVIDIA H100 80GB HBM3,GPU-1,GPU Memory Used (GB),47.03,47.03,47.03\n"
    )
    with pytest.raises(FormatRefusal, match="GPU-telemetry export"):
        aiperf.read_csv(text)


@pytest.mark.parametrize(
    ("reader", "text", "reason"),
    [
        ("aiperf_json", "[1, 2]", "a JSON list, not an AIPerf/GenAI-Perf profile object"),
        (
            "aiperf_json",
            '{"time_to_first_token": 42.5, "input_config": {}}',
            "'time_to_first_token' is a number (42.5), not the tool's {unit, avg, …} object",
        ),
        ("aiperf_json", '{"time_to_first_token": {"unit": "ms", "avg": 42.5}}', "nothing says which tool wrote them"),
        (
            "aiperf_json",
            '{"error_summary": [], "was_cancelled": false, "aiperf_version": "0.13.0"}',
            "neither a metric nor an error",
        ),
        (
            "aiperf_json",
            '{"schema_version": "1.4", "error_summary": "HTTP 500", "time_to_first_token": {"unit": "ms", "avg": 1.0}}',
            "error_summary is a string, not a list",
        ),
        (
            "aiperf_csv",
            "Metric,avg,min,max,sum,p1,p50,p99,std\nTime to First Token (ms),fast,1,2,3,4,5,6,7\n",
            "line 2, column 'avg': 'fast' is not a number",
        ),
        (
            "aiperf_csv",
            "Metric,avg,min,max,p50,std\nTime to First Token (ms),1,1,2,1,0\n",
            "match neither AIPerf's nor GenAI-Perf's order",
        ),
        ("aiperf_csv", 'Metric,Value\n"Time to First Token (ms),42.5\n', "cut short inside a quoted value"),
        (
            "aiperf_records",
            '{"metadata": {"benchmark_phase": "warmup", "request_start_ns": 1}, "metrics": {}}\n',
            "only 1 warm-up record(s): no profiling request",
        ),
        (
            "aiperf_records",
            '{"metadata": {"request_start_ns": "soon"}, "metrics": {}}\n',
            "line 1: metadata.request_start_ns is 'soon', not a number",
        ),
        (
            "aiperf_records",
            '{"metadata": {"request_start_ns": 1}, "metrics": {"request_latency": {"value": 5, "unit": "tokens"}}}\n',
            "metrics.request_latency has the unit 'tokens', not a time unit",
        ),
        (
            "aiperf_records",
            '{"metadata": {"request_start_ns": 1}, "metrics": {}}\n{"metrics": {}}\n',
            "line 2 is an object without AIPerf's 'metadata' object",
        ),
    ],
)
def test_malformed_texts_are_refused_precisely(reader: str, text: str, reason: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        READERS[reader](text)
    assert reason in refusal.value.reason


# Other tools' files, in their real shapes (small): none of our readers may accept them.
FOREIGN_SAMPLES = {
    "vllm_bench_serve.json": json.dumps(
        {
            "date": "20260610-000000",
            "backend": "vllm",
            "model_id": "m",
            "completed": 6,
            "failed": 1,
            "mean_ttft_ms": 42.58,
            "request_rate": "inf",
            "ttfts": [0.03, 0.04],
            "errors": ["", ""],
        }
    ),
    "vllm_append_result.jsonl": json.dumps({"completed": 6, "mean_ttft_ms": 42.58})
    + "\n"
    + json.dumps({"completed": 5, "mean_ttft_ms": 40.1})
    + "\n",
    "sglang_bench_serving.jsonl": '{"backend": "sglang-oai", "request_rate": Infinity, "completed": 6, '
    '"mean_ttft_ms": 42.58}\n',
    "guidellm_benchmarks.json": json.dumps(
        {
            "metadata": {"version": 2},
            "benchmarks": [{"metrics": {"time_to_first_token_ms": {"successful": {"mean": 42.58}}}}],
        }
    ),
    "guidellm_benchmarks.csv": "Run Info,Run Info,Benchmark\nName,Version,Strategy\n,,\nguidellm,0.7.0,sync\n",
    "llmperf_summary.json": json.dumps(
        {"version": "2023-08-31", "results_ttft_s_mean": 0.0426, "results_number_output_tokens_min": "17"}
    ),
    "llmperf_individual_responses.json": json.dumps([{"error_code": None, "ttft_s": 0.0312}]),
    "inference_perf_summary_lifecycle_metrics.json": json.dumps(
        {
            "load_summary": {"count": 7},
            "successes": {"count": 6, "latency": {"time_to_first_token": {"mean": 0.0426, "median": 0.0412}}},
        }
    ),
    "nvidia_smi.csv": "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
    "2026/06/10 00:00:00.000, 0, 73123 MiB, 81559 MiB\n",
}
OTHER_FIXTURES = sorted(
    path for path in FIXTURES.rglob("*") if path.is_file() and path.parent not in (AIPERF_DIR, GENAI_DIR)
)


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("sample", sorted(FOREIGN_SAMPLES))
def test_other_tools_results_are_refused(sample: str, reader: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        READERS[reader](FOREIGN_SAMPLES[sample])
    assert refusal.value.reason


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_the_other_importers_fixtures_are_refused_by_our_readers(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    accepted, reasons = [], []
    for name, reader in READERS.items():
        try:
            reader(text)
        except FormatRefusal as refusal:
            reasons.append(refusal.reason)
        else:
            accepted.append(name)
    assert accepted == []
    assert all(reasons)


# ---------------------------------------------------------------------------------------------------------------
# Detection through the registry


@pytest.mark.parametrize(
    ("name", "format_id", "tool"),
    [
        ("aiperf/profile_export_aiperf.json", "aiperf_json", "aiperf"),
        ("aiperf/rate_profile_export_aiperf.json", "aiperf_json", "aiperf"),
        ("aiperf/all_failed_profile_export_aiperf.json", "aiperf_json", "aiperf"),
        ("aiperf/profile_export_aiperf.csv", "aiperf_csv", "aiperf"),
        ("aiperf/profile_export.jsonl", "aiperf_records", "aiperf"),
        ("aiperf/all_failed_profile_export.jsonl", "aiperf_records", "aiperf"),
        ("genai_perf/profile_export_genai_perf.json", "aiperf_json", "genai_perf"),
        ("genai_perf/legacy_profile_export_genai_perf.json", "aiperf_json", "genai_perf"),
        ("genai_perf/profile_export_genai_perf.csv", "aiperf_csv", "genai_perf"),
        ("genai_perf/legacy_profile_export_genai_perf.csv", "aiperf_csv", "genai_perf"),
    ],
)
def test_import_text_picks_our_format(name: str, format_id: str, tool: str) -> None:
    found, runs = import_text(_text(FIXTURES / name))
    assert (found, runs[0].tool) == (format_id, tool)


@pytest.mark.parametrize(
    ("name", "format_id", "reason"),
    [
        ("aiperf/broken_cut_profile_export_aiperf.json", "aiperf_json", "the file is cut short"),
        ("aiperf/broken_types_profile_export_aiperf.json", "aiperf_json", "not a number"),
        ("aiperf/broken_cut_profile_export.jsonl", "aiperf_records", "the last line is cut short"),
        ("genai_perf/broken_cut_profile_export_genai_perf.csv", "aiperf_csv", "the file is cut short"),
        ("aiperf/server_metrics_export.json", "aiperf_json", "upload it as a memory timeline"),
        ("aiperf/gpu_telemetry_export.jsonl", "aiperf_records", "upload it as a memory timeline"),
    ],
)
def test_import_text_refuses_broken_files_saying_why(name: str, format_id: str, reason: str) -> None:
    with pytest.raises(BenchmarkFormatError) as error:
        import_text(_text(FIXTURES / name))
    assert reason in dict(error.value.tried)[format_id]

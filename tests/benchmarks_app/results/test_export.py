"""Export of a stored run: our own JSON (the load generator's format) and the llm-d Benchmark Report v0.2 layout
(`benchmarks_app.results.export`).

The run below is written by hand, with figures checked by hand. Four successful requests with one token per event:

| request | TTFT ms | gap ms × count | output tokens | E2E ms = TTFT + gaps | TPOT ms | NTPOT ms = E2E / N |
|---|---|---|---|---|---|---|
| 0 | 30    | 10 × 7     | 8  | 100   | 10    | 12.5  |
| 1 | 38    | 11 × 8     | 9  | 126   | 11    | 14    |
| 2 | 42.32 | 12.32 × 9  | 10 | 153.2 | 12.32 | 15.32 |
| 3 | 60    | 8 × 12     | 13 | 156   | 8     | 12    |

TTFT mean 170.32 / 4 = 42.58, p50 (38 + 42.32) / 2 = 40.16; E2E mean 535.2 / 4 = 133.8; TPOT mean 41.32 / 4 = 10.33;
NTPOT mean 53.82 / 4 = 13.455, p50 (12.5 + 14) / 2 = 13.25; ITL pooled over 36 gaps: mean 364.88 / 36 = 10.1356.
A fifth request failed. The stored metrics are what the import computed, except E2E, stored as the tool reported it
(no sample count: every percentile kept), and NTPOT, left out so the llm-d export recomputes it from the records.
Over 2 s: 40 output tokens → 20 tokens/s, 4 requests → 2 requests/s, (40 + 4 × 200) / 2 = 420 tokens/s.
"""

from __future__ import annotations

import copy
import datetime as dt
import doctest
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks_app.results import export
from benchmarks_app.results.export import export_llm_d, export_ours
from benchmarks_app.results.run import METRIC_KEYS, RequestRecord, metrics_from_requests

LOADGEN_SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "loadgen-result.schema.json"


def _stat(**figures: Any) -> dict[str, Any]:
    base = {
        "mean": None,
        "p50": None,
        "p90": None,
        "p95": None,
        "p99": None,
        "min": None,
        "max": None,
        "std": None,
        "n": None,
        "source": "recomputed",
        "insufficient": [],
    }
    return base | figures


FEW = ["p90", "p95", "p99"]  # percentiles from 4 samples (METRICS.md minimums: 10, 20, 100)

RUN: dict[str, Any] = {
    "name": "qwen3-8b rate 4",
    "tool": "vllm",
    "tool_version": "0.11.0",
    "format": "vllm_bench_serve",
    "label": "request_rate=4.0",
    "model_name": "Qwen/Qwen3-8B",
    "model": "qwen3-8b",
    "gpu": "h100-sxm-80gb",
    "gpu_count": 1,
    "tp": 1,
    "engine": "vllm",
    "engine_version": "0.11.0",
    "backend": "openai-completions",
    "started_at": "2026-11-30T10:00:00+00:00",
    "duration_s": 2.0,
    "load": {"kind": "rate", "rate": 4.0, "concurrency": 16},
    "settings": {"request_rate": 4.0, "num_prompts": 5, "dataset_name": "random", "burstiness": math.inf},
    "completed": 4,
    "failed": 1,
    "incomplete": 0,
    "metrics": {
        "ttft_ms": _stat(
            mean=42.58,
            p50=40.16,
            p90=54.696,
            p95=57.348,
            p99=59.4696,
            min=30.0,
            max=60.0,
            std=10.985864,
            n=4,
            insufficient=FEW,
        ),
        "e2e_ms": _stat(
            mean=133.8,
            p50=139.6,
            p90=155.16,
            p95=155.58,
            p99=155.916,
            min=100.0,
            max=156.0,
            std=22.762249,
            source="reported",
        ),
        "tpot_ms": _stat(
            mean=10.33,
            p50=10.5,
            p90=11.924,
            p95=12.122,
            p99=12.2804,
            min=8.0,
            max=12.32,
            std=1.576927,
            n=4,
            insufficient=FEW,
        ),
        "itl_ms": _stat(
            mean=10.135556,
            p50=10.0,
            p90=12.32,
            p95=12.32,
            p99=12.32,
            min=8.0,
            max=12.32,
            std=1.697875,
            n=36,
            insufficient=["p99"],
        ),
        "input_tokens": _stat(
            mean=200.0, p50=200.0, p90=200.0, p95=200.0, p99=200.0, min=200.0, max=200.0, std=0.0, n=4, insufficient=FEW
        ),
        "output_tokens": _stat(
            mean=10.0, p50=9.5, p90=12.1, p95=12.55, p99=12.91, min=8.0, max=13.0, std=1.870829, n=4, insufficient=FEW
        ),
    },
    "reported": {"mean_ttft_ms": 42.58, "median_e2el_ms": 139.6},
    "notes": ["vLLM's ITL is a pooled per-chunk gap"],
    "output_tokens_per_s": 20.0,
    "requests_per_s": 2.0,
    "total_tokens_per_s": 420.0,
}


def _request(index: int, ttft: float, gap: float, tokens: int) -> dict[str, Any]:
    return {
        "index": index,
        "status": "ok",
        "error": "",
        "start_s": index * 0.25,
        "ttft_ms": ttft,
        "e2e_ms": round(ttft + gap * (tokens - 1), 6),
        "tpot_ms": None,
        "itl_ms": [gap] * (tokens - 1),
        "input_tokens": 200,
        "output_tokens": tokens,
    }


REQUESTS = [  # as BenchmarkRequest rows give them ("" for no error), out of order on purpose
    _request(3, 60.0, 8.0, 13),
    _request(0, 30.0, 10.0, 8),
    _request(1, 38.0, 11.0, 9),
    _request(2, 42.32, 12.32, 10),
    {
        "index": 4,
        "status": "error",
        "error": "HTTP 500: Internal Server Error",
        "start_s": 1.0,
        "ttft_ms": None,
        "e2e_ms": None,
        "tpot_ms": None,
        "itl_ms": [],
        "input_tokens": 200,
        "output_tokens": None,
    },
]


def _dumps(data: Any) -> str:
    return json.dumps(data, allow_nan=False)  # raises on NaN or Infinity anywhere


def _records(rows: list[dict[str, Any]]) -> list[RequestRecord]:
    return [
        RequestRecord(
            status=row["status"],
            ttft_ms=row["ttft_ms"],
            e2e_ms=row["e2e_ms"],
            tpot_ms=row["tpot_ms"],
            itl_ms=tuple(row["itl_ms"]),
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
        )
        for row in rows
    ]


def test_the_hand_built_run_holds_what_an_import_would_store():
    # when
    computed = {key: stat.as_dict() for key, stat in metrics_from_requests(_records(REQUESTS)).items()}

    # then: the stored figures match the records (E2E's marks aside: it is stored as reported; NTPOT left out)
    for key, stat in RUN["metrics"].items():
        for figure in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std"):
            assert computed[key][figure] == pytest.approx(stat[figure], abs=1e-6), (key, figure)
    assert computed["ntpot_ms"]["mean"] == pytest.approx(13.455)


# ---------------------------------------------------------------------------------------------------------------
# Our own JSON


def test_ours_is_the_load_generator_format_with_a_source_block():
    # when
    data = export_ours(RUN, REQUESTS)

    # then
    assert list(data) == ["format", "version", "tool", "source", "run", "requests", "summary"]
    assert (data["format"], data["version"]) == ("llm-sizing-loadgen-result", 1)
    assert data["tool"] == {"name": "llm-sizing-export", "version": "1"}
    assert data["source"]["tool"] == "vllm"
    assert data["source"]["tool_version"] == "0.11.0"
    assert data["source"]["format"] == "vllm_bench_serve"
    assert data["source"]["label"] == "request_rate=4.0"
    assert data["source"]["name"] == "qwen3-8b rate 4"
    assert data["source"]["deployment"] == {
        "model": "qwen3-8b",
        "gpu": "h100-sxm-80gb",
        "gpu_count": 1,
        "tp": 1,
        "engine": "vllm",
        "engine_version": "0.11.0",
    }
    assert data["run"] == {
        "started_at": "2026-11-30T10:00:00Z",
        "duration_s": 2.0,
        "load": {"kind": "rate", "rate": 4.0, "concurrency": 16},
        "endpoint": {"kind": "openai-completions", "model": "Qwen/Qwen3-8B", "engine": "vllm 0.11.0"},
        "settings": {"request_rate": 4.0, "num_prompts": 5, "dataset_name": "random", "burstiness": None},
        "window": {"start_s": 0.0, "end_s": 2.0},
    }


def test_ours_validates_against_the_load_generator_schema():
    # given: the schema names the export's "source" block (its top level allows nothing else)
    schema = json.loads(LOADGEN_SCHEMA.read_text())
    data = json.loads(_dumps(export_ours(RUN, REQUESTS)))

    # when / then
    jsonschema.validate(data, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "unexpected": 1}, schema)


def test_ours_writes_the_records_in_index_order():
    # when
    requests = export_ours(RUN, REQUESTS)["requests"]

    # then
    assert [request["id"] for request in requests] == [0, 1, 2, 3, 4]
    assert requests[0] == {
        "id": 0,
        "status": "ok",
        "error": None,
        "t_sched_s": 0.0,
        "t_send_s": 0.0,
        "ttft_ms": 30.0,
        "e2e_ms": 100.0,
        "itl_ms": [10.0] * 7,
        "input_tokens": 200,
        "output_tokens": 8,
    }
    assert requests[3]["t_send_s"] == 0.75
    assert requests[4] == {
        "id": 4,
        "status": "http_error",
        "error": "HTTP 500: Internal Server Error",
        "t_sched_s": 1.0,
        "t_send_s": 1.0,
        "ttft_ms": None,
        "e2e_ms": None,
        "itl_ms": [],
        "input_tokens": 200,
        "output_tokens": None,
    }


def test_ours_keeps_every_stored_figure_in_the_summary():
    # when
    summary = export_ours(RUN, REQUESTS)["summary"]

    # then: counts, throughputs and metrics as stored (marks included), the tool's fields and the notes
    assert {key: summary[key] for key in ("completed", "failed", "incomplete", "request_count")} == {
        "completed": 4,
        "failed": 1,
        "incomplete": 0,
        "request_count": 5,
    }
    assert (summary["output_tokens_per_s"], summary["requests_per_s"], summary["total_tokens_per_s"]) == (
        20.0,
        2.0,
        420.0,
    )
    assert summary["metrics"] == RUN["metrics"]
    assert summary["reported"] == RUN["reported"]
    assert summary["notes"] == RUN["notes"]


@pytest.mark.parametrize(
    ("stored", "written"),
    [
        (
            "http_error(503): Service Unavailable",
            {"status": "http_error", "http_status": 503, "error": "Service Unavailable"},
        ),
        ("timeout(ttft)", {"status": "timeout", "timeout_phase": "ttft", "error": None}),
        ("client_cancel: stopped", {"status": "client_cancel", "error": "stopped"}),
        ("truncated_prompt", {"status": "truncated_prompt", "error": None}),
        ("timeout(later): odd", {"status": "timeout", "error": "timeout(later): odd"}),
        ("Connection refused", {"status": "http_error", "error": "Connection refused"}),
        ("", {"status": "http_error", "error": None}),
    ],
)
def test_ours_gives_a_failure_its_load_generator_status(stored, written):
    # given
    row = {"index": 0, "status": "error", "error": stored, "start_s": 0.0}

    # when
    request = export_ours(RUN, [row])["requests"][0]

    # then
    assert {key: request[key] for key in written} == written
    assert not {"http_status", "timeout_phase"} - set(written) & set(request)


def test_ours_writes_incomplete_requests_as_cut_by_the_end():
    # when
    request = export_ours(RUN, [{"index": 0, "status": "incomplete", "start_s": 1.9, "ttft_ms": 50.0}])["requests"][0]

    # then
    assert request["status"] == "incomplete_at_end"


def test_ours_says_what_it_filled_by_convention():
    # when
    notes = export_ours(RUN, REQUESTS)["source"]["notes"]

    # then
    assert len(notes) == 2
    assert "t_sched_s is t_send_s" in notes[0]
    assert "http_error without a code" in notes[1]


def test_ours_is_json_without_nan_or_infinity():
    # given
    run = copy.deepcopy(RUN)
    run["metrics"]["tpot_ms"]["std"] = math.nan
    run["output_tokens_per_s"] = math.inf

    # when
    data = export_ours(run, REQUESTS)

    # then
    assert json.loads(_dumps(data)) == data
    assert data["summary"]["metrics"]["tpot_ms"]["std"] is None
    assert data["summary"]["output_tokens_per_s"] is None


def test_ours_writes_null_for_what_a_run_does_not_know():
    # given: the shape a Django model gives (datetime, "" for blank text), without records
    run = {
        "name": "bare",
        "tool": "llmperf",
        "format": "llmperf_summary",
        "label": "",
        "engine": "",
        "metrics": {},
        "started_at": dt.datetime(2026, 11, 30, 11, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    }

    # when
    data = export_ours(run, [])

    # then
    assert data["run"]["started_at"] == "2026-11-30T10:00:00Z"
    assert data["run"]["duration_s"] is None
    assert data["run"]["load"] == {"kind": "unknown", "rate": None, "concurrency": None}
    assert data["run"]["endpoint"] == {"kind": "unknown", "model": "unknown", "engine": None}
    assert data["run"]["window"] == {"start_s": 0.0, "end_s": None}
    assert data["source"]["label"] is None
    assert data["source"]["notes"] == []
    assert data["requests"] == []
    assert data["summary"]["completed"] is None
    _dumps(data)


def test_ours_reimports_through_our_importer():
    # given
    from benchmarks_app.results.detect import import_text

    text = _dumps(export_ours(RUN, REQUESTS))

    # when
    tool_format, runs = import_text(text)

    # then: the same counts, and the same distributions recomputed from the records
    assert tool_format == "llm_sizing"
    assert len(runs) == 1
    run = runs[0]
    assert (run.completed, run.failed, run.incomplete) == (4, 1, 0)
    for key, stat in RUN["metrics"].items():
        for figure in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std"):
            assert getattr(run.metrics[key], figure) == pytest.approx(stat[figure], abs=1e-6), (key, figure)
    assert run.model == "Qwen/Qwen3-8B"
    assert run.started_at == "2026-11-30T10:00:00+00:00"
    assert run.load.as_dict() == {"kind": "rate", "rate": 4.0, "concurrency": 16}
    assert [record.status for record in run.requests] == ["ok"] * 4 + ["error"]
    # the throughputs recomputed over the window agree with the stored ones for this run
    assert (run.output_tokens_per_s, run.requests_per_s, run.total_tokens_per_s) == pytest.approx((20.0, 2.0, 420.0))
    # and every stored figure comes back in `reported`
    assert run.reported["metrics"] == json.loads(text)["summary"]["metrics"]
    assert run.reported["completed"] == 4


def test_a_summary_only_run_reimports_with_its_stored_counts_and_metrics():
    # given: a run imported from a tool's summary (no per-request records), exported
    from benchmarks_app.results.detect import import_text

    text = _dumps(export_ours(RUN, []))

    # when
    _format, (run,) = import_text(text)

    # then: nothing to recompute from, so the stored figures come back as they were, under the original tool
    assert (run.completed, run.failed, run.tool) == (4, 1, "vllm")
    assert run.metrics["ttft_ms"].mean == pytest.approx(RUN["metrics"]["ttft_ms"]["mean"])
    assert run.metrics["ttft_ms"].source == RUN["metrics"]["ttft_ms"]["source"]
    assert run.output_tokens_per_s == pytest.approx(RUN["output_tokens_per_s"])
    assert run.notes[-1].startswith("Re-imported from this service's export of a vllm run")


# ---------------------------------------------------------------------------------------------------------------
# llm-d Benchmark Report v0.2

# Required keys per object, from llm-d-benchmark llmdbenchmark/analysis/benchmark_report/schema_v0_2.py and
# schema_v0_2_components.py (fields without a default; the same lists as "required" in br_v0_2_json_schema.json).
# Allowed keys: every field the class defines (the schema forbids others, extra="forbid", except where noted).
LLM_D_V0_2: dict[str, dict[str, Any]] = {
    "BenchmarkReportV02": {"required": ["run", "results"], "allowed": ["version", "run", "scenario", "results"]},
    "Run": {"required": ["uid"], "allowed": ["uid", "eid", "cid", "pid", "time", "user", "description", "keywords"]},
    "RunTime": {"required": [], "allowed": ["start", "end", "duration"]},
    "Scenario": {"required": [], "allowed": ["stack", "load"]},
    "Component": {
        "required": ["metadata", "standardized", "native"],
        "allowed": ["metadata", "standardized", "native"],
    },
    "ComponentMetadata": {
        "required": ["label", "cfg_id"],
        "allowed": ["schema_version", "label", "cfg_id", "description"],
    },
    "ComponentNative": {"required": [], "allowed": ["args", "envars", "config"]},
    "InferenceEngine": {
        "required": ["kind", "tool", "tool_version", "role", "replicas", "model", "accelerator"],
        "allowed": ["kind", "tool", "tool_version", "role", "replicas", "model", "accelerator"],
    },
    "Generic": {"required": ["kind", "tool", "tool_version"], "allowed": None},  # extra="allow"
    "InferenceEngineModel": {"required": ["name"], "allowed": ["name"]},
    "InferenceEngineAccelerator": {
        "required": ["model", "count", "parallelism"],
        "allowed": ["model", "count", "parallelism"],
    },
    "InferenceEngineParallelism": {"required": [], "allowed": ["tp", "dp", "dp_local", "workers", "ep", "pp"]},
    "Load": {"required": ["metadata", "standardized", "native"], "allowed": ["metadata", "standardized", "native"]},
    "LoadMetadata": {"required": [], "allowed": ["schema_version", "cfg_id", "description"]},
    "LoadStandardized": {
        "required": ["tool", "tool_version", "source", "input_seq_len"],
        "allowed": [
            "tool",
            "tool_version",
            "parallelism",
            "source",
            "stage",
            "input_seq_len",
            "output_seq_len",
            "prefix",
            "multi_turn",
            "rate_qps",
            "concurrency",
        ],
    },
    "LoadNative": {"required": [], "allowed": ["args", "envars", "config"]},
    "SequenceLength": {
        "required": ["distribution", "value"],
        "allowed": ["distribution", "value", "std_dev", "min", "max"],
    },
    "Results": {
        "required": [],
        "allowed": ["request_performance", "session_performance", "observability", "profiling", "component_health"],
    },
    "RequestPerformance": {"required": [], "allowed": ["aggregate", "time_series"]},
    "AggregateRequestPerformance": {"required": [], "allowed": ["requests", "latency", "throughput"]},
    "AggregateRequests": {
        "required": ["total"],
        "allowed": ["total", "failures", "incomplete", "input_length", "output_length"],
    },
    "AggregateLatency": {
        "required": [],
        "allowed": [
            "time_to_first_token",
            "normalized_time_per_output_token",
            "time_per_output_token",
            "inter_token_latency",
            "request_latency",
        ],
    },
    "AggregateThroughput": {
        "required": [],
        "allowed": ["input_token_rate", "output_token_rate", "total_token_rate", "request_rate"],
    },
    "Statistics": {
        "required": ["units", "mean"],
        "allowed": [
            "units",
            "mean",
            "mode",
            "stddev",
            "min",
            "p0p1",
            "p1",
            "p5",
            "p10",
            "p25",
            "p50",
            "p75",
            "p90",
            "p95",
            "p99",
            "p99p9",
            "max",
        ],
    },
}
# units each Statistics may carry (base.py UNITS_* lists, checked by the check_units validators)
LLM_D_UNITS = {
    "input_length": {"count", "pixels"},
    "output_length": {"count", "pixels"},
    "time_to_first_token": {"ms", "s"},
    "request_latency": {"ms", "s"},
    "time_per_output_token": {"ms/token", "s/token"},
    "inter_token_latency": {"ms/token", "s/token"},
    "normalized_time_per_output_token": {"ms/token", "s/token"},
    "input_token_rate": {"tokens/s"},
    "output_token_rate": {"tokens/s"},
    "total_token_rate": {"tokens/s"},
    "request_rate": {"queries/s"},
}
LLM_D_ENUMS = {
    "role": {"replica", "prefill", "decode"},
    "source": {"random", "sampled", "unknown"},
    "distribution": {"fixed", "gaussian", "uniform", "other"},
}


def _check(value: Mapping[str, Any], kind: str, where: str, problems: list[str]) -> None:
    rules = LLM_D_V0_2[kind]
    problems += [f"{where}: missing {key}" for key in rules["required"] if key not in value]
    if rules["allowed"] is not None:
        problems += [f"{where}: {key} not in the schema" for key in value if key not in rules["allowed"]]
    problems += [f"{where}.{key}: null" for key, item in value.items() if item is None]


def _llm_d_problems(report: Mapping[str, Any]) -> list[str]:
    """Every object of the report against the required and allowed keys, the units and the enumerations above."""
    problems: list[str] = []
    _check(report, "BenchmarkReportV02", "report", problems)
    _check(report["run"], "Run", "run", problems)
    if "time" in report["run"]:
        _check(report["run"]["time"], "RunTime", "run.time", problems)
    scenario = report.get("scenario", {})
    _check(scenario, "Scenario", "scenario", problems)
    for number, component in enumerate(scenario.get("stack", [])):
        where = f"scenario.stack[{number}]"
        _check(component, "Component", where, problems)
        _check(component["metadata"], "ComponentMetadata", where + ".metadata", problems)
        _check(component["native"], "ComponentNative", where + ".native", problems)
        standardized = component["standardized"]
        engine = standardized["kind"] == "inference_engine"
        _check(standardized, "InferenceEngine" if engine else "Generic", where + ".standardized", problems)
        if engine:
            assert standardized["role"] in LLM_D_ENUMS["role"]
            assert standardized["replicas"] >= 1
            _check(standardized["model"], "InferenceEngineModel", where + ".model", problems)
            accelerator = standardized["accelerator"]
            _check(accelerator, "InferenceEngineAccelerator", where + ".accelerator", problems)
            _check(accelerator["parallelism"], "InferenceEngineParallelism", where + ".parallelism", problems)
    if "load" in scenario:
        load = scenario["load"]
        _check(load, "Load", "scenario.load", problems)
        _check(load["metadata"], "LoadMetadata", "scenario.load.metadata", problems)
        _check(load["native"], "LoadNative", "scenario.load.native", problems)
        _check(load["standardized"], "LoadStandardized", "scenario.load.standardized", problems)
        assert load["standardized"]["source"] in LLM_D_ENUMS["source"]
        _check(load["standardized"]["input_seq_len"], "SequenceLength", "input_seq_len", problems)
        assert load["standardized"]["input_seq_len"]["distribution"] in LLM_D_ENUMS["distribution"]
    results = report["results"]
    _check(results, "Results", "results", problems)
    performance = results.get("request_performance", {})
    _check(performance, "RequestPerformance", "request_performance", problems)
    aggregate = performance.get("aggregate", {})
    _check(aggregate, "AggregateRequestPerformance", "aggregate", problems)
    for block, kind in (
        ("requests", "AggregateRequests"),
        ("latency", "AggregateLatency"),
        ("throughput", "AggregateThroughput"),
    ):
        if block not in aggregate:
            continue
        _check(aggregate[block], kind, block, problems)
        for field, statistics in aggregate[block].items():
            if field in LLM_D_UNITS:
                _check(statistics, "Statistics", f"{block}.{field}", problems)
                if statistics.get("units") not in LLM_D_UNITS[field]:
                    problems.append(f"{block}.{field}: units {statistics.get('units')}")
    return problems


def _aggregate(report: Mapping[str, Any]) -> dict[str, Any]:
    return report["results"]["request_performance"]["aggregate"]


def test_llm_d_has_the_required_keys_of_v0_2():
    # when
    report = export_llm_d(RUN, REQUESTS)

    # then
    assert _llm_d_problems(report) == []
    assert report["version"] == "0.2"
    assert list(report) == ["version", "run", "scenario", "results"]


def test_llm_d_latencies_are_in_seconds():
    # when
    latency = _aggregate(export_llm_d(RUN, REQUESTS))["latency"]

    # then: TTFT mean 42.58 ms → 0.04258 s; percentiles from too few samples are left out
    ttft = latency["time_to_first_token"]
    assert ttft["units"] == "s"
    assert ttft["mean"] == pytest.approx(0.04258)
    assert ttft["p50"] == pytest.approx(0.04016)
    assert ttft["min"] == pytest.approx(0.030)
    assert ttft["max"] == pytest.approx(0.060)
    assert ttft["stddev"] == pytest.approx(0.010985864)
    assert not {"p90", "p95", "p99"} & set(ttft)
    # E2E as reported by the tool (no sample count): every percentile kept
    e2e = latency["request_latency"]
    assert e2e == pytest.approx(
        {
            "units": "s",
            "mean": 0.1338,
            "stddev": 0.022762249,
            "min": 0.1,
            "p50": 0.1396,
            "p90": 0.15516,
            "p95": 0.15558,
            "p99": 0.155916,
            "max": 0.156,
        }
    )
    # per-token latencies in s/token
    tpot = latency["time_per_output_token"]
    assert tpot == pytest.approx(
        {"units": "s/token", "mean": 0.01033, "stddev": 0.001576927, "min": 0.008, "p50": 0.0105, "max": 0.01232}
    )
    # ITL from 36 gaps: p90 and p95 kept, p99 left out
    itl = latency["inter_token_latency"]
    assert itl == pytest.approx(
        {
            "units": "s/token",
            "mean": 0.010135556,
            "stddev": 0.001697875,
            "min": 0.008,
            "p50": 0.010,
            "p90": 0.01232,
            "p95": 0.01232,
            "max": 0.01232,
        }
    )


def test_llm_d_leaves_out_an_unknown_figure():
    # given
    run = copy.deepcopy(RUN)
    run["metrics"]["tpot_ms"]["std"] = math.nan

    # when
    tpot = _aggregate(export_llm_d(run, REQUESTS))["latency"]["time_per_output_token"]

    # then
    assert "stddev" not in tpot
    assert tpot["mean"] == pytest.approx(0.01033)


def test_llm_d_recomputes_a_missing_metric_from_the_records():
    # when
    ntpot = _aggregate(export_llm_d(RUN, REQUESTS))["latency"]["normalized_time_per_output_token"]

    # then: NTPOT 12.5, 14, 15.32, 12 ms/token over the four successful requests; population std
    # √((1.455² + 0.955² + 0.545² + 1.865²) / 4) = √1.701075
    assert ntpot == pytest.approx(
        {
            "units": "s/token",
            "mean": 0.013455,
            "stddev": math.sqrt(1.701075) / 1000,
            "min": 0.012,
            "p50": 0.01325,
            "max": 0.01532,
        }
    )


def test_llm_d_request_counts_and_throughput():
    # when
    aggregate = _aggregate(export_llm_d(RUN, REQUESTS))

    # then
    requests = aggregate["requests"]
    assert (requests["total"], requests["failures"], requests["incomplete"]) == (5, 1, 0)
    assert requests["input_length"] == {
        "units": "count",
        "mean": 200.0,
        "stddev": 0.0,
        "min": 200.0,
        "p50": 200.0,
        "max": 200.0,
    }
    assert requests["output_length"] == pytest.approx(
        {"units": "count", "mean": 10.0, "stddev": 1.870829, "min": 8.0, "p50": 9.5, "max": 13.0}
    )
    assert aggregate["throughput"] == {
        "output_token_rate": {"units": "tokens/s", "mean": 20.0},
        "total_token_rate": {"units": "tokens/s", "mean": 420.0},
        "request_rate": {"units": "queries/s", "mean": 2.0},
    }


def test_llm_d_scenario_names_the_engine_and_the_load():
    # when
    report = export_llm_d(RUN, REQUESTS)

    # then
    engine = report["scenario"]["stack"][0]
    assert engine["standardized"] == {
        "kind": "inference_engine",
        "tool": "vllm",
        "tool_version": "0.11.0",
        "role": "replica",
        "replicas": 1,
        "model": {"name": "Qwen/Qwen3-8B"},
        "accelerator": {"model": "h100-sxm-80gb", "count": 1, "parallelism": {"tp": 1}},
    }
    assert engine["metadata"]["label"] == "inference-engine"
    assert len(engine["metadata"]["cfg_id"]) == 64
    load = report["scenario"]["load"]
    assert load["standardized"] == {
        "tool": "vllm-benchmark",
        "tool_version": "0.11.0",
        "source": "unknown",
        "input_seq_len": {"distribution": "fixed", "value": 200.0, "min": 200, "max": 200},
        "rate_qps": 4.0,
        "concurrency": 16,
    }
    assert load["native"] == {
        "config": {"request_rate": 4.0, "num_prompts": 5, "dataset_name": "random", "burstiness": None}
    }


def test_llm_d_run_block():
    # when
    run = export_llm_d(RUN, REQUESTS)["run"]

    # then
    assert run["time"] == {"start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z", "duration": "PT2S"}
    assert export_llm_d(RUN | {"duration_s": 120.5}, [])["run"]["time"] == {
        "start": "2026-11-30T10:00:00Z",
        "end": "2026-11-30T10:02:00.500000Z",
        "duration": "PT120.5S",
    }
    assert run["description"] == "qwen3-8b rate 4"
    assert len(run["uid"]) == 36
    assert export_llm_d(RUN, REQUESTS)["run"]["uid"] == run["uid"]  # the same run, the same uid
    assert export_llm_d(RUN | {"name": "other"}, REQUESTS)["run"]["uid"] != run["uid"]
    assert export_llm_d(RUN | {"uid": "run-17"}, REQUESTS)["run"]["uid"] == "run-17"


def test_llm_d_gpus_that_are_not_one_engine_make_a_generic_component():
    # given: 8 GPUs at TP 4 (two engines, or one with data parallelism: the run does not say)
    run = RUN | {"gpu_count": 8, "tp": 4}

    # when
    report = export_llm_d(run, REQUESTS)

    # then
    standardized = report["scenario"]["stack"][0]["standardized"]
    assert standardized["kind"] == "generic"
    assert "replicas" not in standardized
    assert standardized["accelerator"] == {"model": "h100-sxm-80gb", "count": 8, "parallelism": {"tp": 4}}
    assert _llm_d_problems(report) == []


def test_llm_d_leaves_out_what_the_run_does_not_know():
    # given: a summary-only run without deployment, input length, counts or timing
    run = {
        "name": "summary only",
        "tool": "llmperf",
        "format": "llmperf_summary",
        "metrics": {
            "ttft_ms": {"p50": 40.0, "source": "reported"},  # no mean: no llm-d Statistics
            "e2e_ms": {"mean": 500.0, "source": "reported"},
        },
    }

    # when
    report = export_llm_d(run, [])

    # then
    assert "scenario" not in report
    assert set(report["run"]) == {"uid", "description"}
    assert _aggregate(report) == {"latency": {"request_latency": {"units": "s", "mean": 0.5}}}
    assert _llm_d_problems(report) == []


def test_llm_d_counts_come_from_the_records_when_the_run_has_none():
    # given
    run = {"name": "records only", "tool": "llm_sizing", "metrics": {}}

    # when
    report = export_llm_d(run, REQUESTS)

    # then
    aggregate = _aggregate(report)
    assert (aggregate["requests"]["total"], aggregate["requests"]["failures"]) == (5, 1)
    assert aggregate["latency"]["time_to_first_token"]["mean"] == pytest.approx(0.04258)
    assert set(aggregate["latency"]) == {
        "time_to_first_token",
        "time_per_output_token",
        "inter_token_latency",
        "request_latency",
        "normalized_time_per_output_token",
    }
    assert report["scenario"]["load"]["standardized"]["tool"] == "llm-sizing"
    assert _llm_d_problems(report) == []


def test_llm_d_of_an_empty_run_is_still_a_valid_report():
    # when
    report = export_llm_d({}, [])

    # then
    assert report == {"version": "0.2", "run": {"uid": report["run"]["uid"]}, "results": {}}
    assert _llm_d_problems(report) == []


def test_llm_d_is_json_without_nan_or_infinity():
    # given: a run with NaN and Infinity in places the store could hold them
    run = copy.deepcopy(RUN)
    run["metrics"]["itl_ms"]["p90"] = math.inf
    run["output_tokens_per_s"] = math.nan

    # when
    report = export_llm_d(run, REQUESTS)

    # then
    assert json.loads(_dumps(report)) == report
    assert "p90" not in _aggregate(report)["latency"]["inter_token_latency"]
    assert "output_token_rate" not in _aggregate(report)["throughput"]


def test_every_canonical_metric_has_an_llm_d_place():
    # then: the five latencies in AggregateLatency, the token counts in AggregateRequests; the v0.2 layout has no
    # TTFT from the scheduled send time (an open loop's client queueing), so that one stays ours
    placed = {key for key, *_ in export.LLM_D_LATENCY} | {"input_tokens", "output_tokens"}
    assert placed == set(METRIC_KEYS) - {"ttft_sched_ms"}


def test_module_docstring_example_runs():
    # when
    result = doctest.testmod(export)

    # then
    assert result.failed == 0
    assert result.attempted == 2

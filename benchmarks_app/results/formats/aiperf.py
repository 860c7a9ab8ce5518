"""Importer of AIPerf and GenAI-Perf results: the summary JSON and CSV, and AIPerf's per-record JSON lines.

Files read (checked against the tools' exporters: ai-dynamo/aiperf `exporters/json_exporter.py`,
`exporters/csv_exporter.py`, `post_processors/record_export_results_processor.py`, `metrics/types/*`; and
GenAI-Perf 0.0.x in triton-inference-server/perf_analyzer and the older triton-inference-server/client tree,
`export_data/{json,csv}_exporter.py`, `profile_data_parser/llm_profile_data_parser.py`):

- `profile_export_aiperf.json` (AIPerf 0.x, `schema_version` "1.x"): one object, flat
  `{metric_tag: {unit, avg, min, max, p1…p99, std, count, sum}}` in display units (the `unit` field says which:
  ms, sec, ns, tokens, requests/sec…), aggregate-only metrics with just `{unit, avg}`, plus `error_summary`,
  `was_cancelled`, `start_time`/`end_time` and `input_config`. One early AIPerf build nested the metrics under
  `records`; that layout is read too.
- `profile_export_genai_perf.json` (GenAI-Perf 0.0.x): the same flat shape without `count`/`sum`, no version,
  `input_config` either nested (0.0.13+: `endpoint`, `perf_analyzer.stimulus`, `tokenizer`) or the flat argparse
  namespace of older releases (`model`, `concurrency`, `request_rate`, `service_kind`…), an optional
  `telemetry_stats{metric: {unit, gpu0: {…}}}` and, for multi-turn runs, `sessions`.
- `profile_export_aiperf.csv`: tables separated by blank lines, `Metric,avg,min,max,sum,p1,…,p99,std` (older AIPerf:
  no `sum`), then `Metric,Value`, then optionally GPU telemetry (`Endpoint,GPU_Index,…`). GenAI-Perf's CSV orders
  the columns `avg,min,max,p99,p95,p90,p75,p50,p25[,p10,p5,p1]` and appends `Metric,GPU,…` telemetry tables.
  Display names carry the unit in parentheses ("Time to First Token (ms)"; AIPerf drops "requests"/"count").
- `profile_export.jsonl` (AIPerf): one `{metadata{…_ns wall-clock timestamps, benchmark_phase, was_cancelled…},
  metrics{tag: {value, unit}}, error}` per request. A failed record has `error{code, type, message}` and only
  `metrics.error_isl`. Warm-up records (`benchmark_phase` "warmup") are left out; every canonical figure is
  recomputed from the profiling records.

Traps (each handled below, and said in the run's `notes`):

- `request_count` counts successful requests only; `completed_request_count` counts success + error;
  `error_request_count` is absent when nothing failed. GenAI-Perf does not count failures at all (failed unknown).
- `inter_token_latency` = (request_latency − TTFT) / (OSL − 1) per request: the request-averaged decode time per
  token (≈ TPOT), mapped to `tpot_ms` with a note. Where request_latency ends differs: AIPerf releases that read the
  usage chunk (the file has `usage_*` metrics) end at the stream's last message, the trailing usage chunk included,
  so their ITL sits slightly above METRICS.md's TPOT and their latency is METRICS.md's E2E; GenAI-Perf (and AIPerf
  before usage parsing) drops chunks without content, so its latency ends at the last content chunk (slightly short
  of METRICS.md's E2E) and its ITL is METRICS.md's TPOT with n_1 = 1 (but a client-tokenizer OSL). Early GenAI-Perf
  releases wrote a pooled per-token gap under the same name; a file does not say which. With per-record data TPOT
  is recomputed as Σ inter-chunk gaps / (N_out − 1) (n_1 = 1, as METRICS.md prescribes when chunking is unknown).
- `inter_chunk_latency` is the pooled gap between content chunks (METRICS.md's ITL samples). When a chunk carries
  several tokens it is a per-chunk gap, not a per-token one. GenAI-Perf's summary has no pooled gap distribution.
- Token counts (`input/output_sequence_length`, and the throughputs built on them) come from the client tokenizer
  unless AIPerf ran with `--use-server-token-count`; the server's `usage_prompt_tokens`/`usage_completion_tokens`
  are preferred where the file has them (METRICS.md: usage is authoritative).
- AIPerf's throughputs count successful requests over the first request start → last response (not METRICS.md's
  measurement window). `start_time` is written with the host's local clock and no zone; `min_request_timestamp`
  (epoch ns) gives the UTC start when present.
- CSV figures are rounded to 2 decimals; GenAI-Perf writes values ≥ 1000 with thousands separators ("2,156.03").
- GenAI-Perf's `backend` defaults to "tensorrtllm" even for OpenAI endpoints, where it means nothing.
- AIPerf's server-metrics and GPU-telemetry exports are not runs: refused, with the advice to upload them as memory
  timelines.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from benchmarks_app.results.run import (
    FormatRefusal,
    ImportedRun,
    LoadKind,
    LoadPattern,
    RequestRecord,
    RequestStatus,
    Stat,
    finite,
    metrics_from_requests,
    stat_reported,
)
from sizing.kernel.json_limits import loads as bounded_loads
from sizing.kernel.jsonsafe import nonfinite_as_null

AIPERF = "aiperf"
GENAI_PERF = "genai_perf"
FORMAT_JSON = "aiperf_json"
FORMAT_CSV = "aiperf_csv"
FORMAT_RECORDS = "aiperf_records"

# milliseconds per unit of a time figure, as the tools spell their units
TIME_MS: dict[str, float] = {
    "ns": 1e-6,
    "us": 1e-3,
    "µs": 1e-3,
    "μs": 1e-3,
    "ms": 1.0,
    "s": 1000.0,
    "sec": 1000.0,
    "secs": 1000.0,
    "second": 1000.0,
    "seconds": 1000.0,
    "min": 60_000.0,
}
STAT_FIELDS = ("avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "count", "sum")
# per-request distributions whose n is the number of successful requests when the file gives no count
PER_REQUEST_TAGS = (
    "time_to_first_token",
    "inter_token_latency",
    "request_latency",
    "input_sequence_length",
    "output_sequence_length",
    "usage_prompt_tokens",
    "usage_completion_tokens",
)
SIGNATURE_TAGS = (
    "time_to_first_token",
    "request_latency",
    "inter_token_latency",
    "request_throughput",
    "request_count",
    "output_sequence_length",
)
TELEMETRY_ADVICE = "upload it as a memory timeline"
SERVER_METRICS_REFUSAL = f"an AIPerf server-metrics export, not a profile: {TELEMETRY_ADVICE}"
GPU_TELEMETRY_REFUSAL = f"an AIPerf GPU-telemetry export, not a profile: {TELEMETRY_ADVICE}"


# ---------------------------------------------------------------------------------------------------------------
# Small helpers


def _load_json(text: str) -> Any:
    """detect.load_json, imported at call time: detect imports this module, so a module-level import would be
    circular (whichever of the two is imported first would see the other half-initialised)."""
    from benchmarks_app.results.detect import load_json

    return load_json(text)


def _json_lines(text: str) -> Iterator[tuple[int, Any]]:
    """detect.json_lines, imported at call time (see `_load_json`)."""
    from benchmarks_app.results.detect import json_lines

    return json_lines(text)


def _number(value: Any, where: str) -> float | None:
    """A JSON figure as a float (None for null, NaN, ±Infinity); FormatRefusal for text, booleans and containers,
    which a tool never writes where a figure belongs (a hand-edited or corrupted file)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatRefusal(f"{where} is {_show(value)}, not a number")
    return finite(value)


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _utc_from_ns(ns: float | None) -> str | None:
    if ns is None or ns <= 0:
        return None
    try:
        return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def _integer(value: float | None) -> int | None:
    return round(value) if value is not None else None


def _first_name(value: Any) -> str | None:
    """The first model name of a list of names or of `{name: …}` objects, or a bare name."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, Mapping):
        return _first_name(value.get("items") or value.get("name"))
    if isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            name = _first_name(item)
            if name:
                return name
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# ---------------------------------------------------------------------------------------------------------------
# Refusals of AIPerf's other exports (server metrics, GPU telemetry): they are timelines, not runs


def _telemetry_line(value: Any) -> bool:
    return isinstance(value, Mapping) and "telemetry_data" in value and ("gpu_uuid" in value or "gpu_index" in value)


def _sniff_json(text: str) -> Any:
    """The text as one JSON value, else its first line's JSON value, else None (for refusal reasons only). The
    whole text goes through `detect.load_json`, so a large file is parsed once for every importer."""
    from benchmarks_app.results.detect import load_json  # detect's registry imports this module

    try:
        return load_json(text)
    except (FormatRefusal, RecursionError):
        pass
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return bounded_loads(first)
    except (json.JSONDecodeError, RecursionError):
        return None


def _refuse_other_exports(data: Any) -> None:
    """FormatRefusal when `data` (one JSON value) is one of AIPerf's exports that are not profiles."""
    if not isinstance(data, Mapping):
        return
    metrics = data.get("metrics")
    summary = _mapping(data.get("summary"))
    if "metrics_phase" in data or (
        isinstance(metrics, Mapping)
        and "endpoints_configured" in summary
        and any(isinstance(v, Mapping) and "series" in v for v in metrics.values())
    ):
        raise FormatRefusal(SERVER_METRICS_REFUSAL)
    if _telemetry_line(data) or (
        "endpoints" in data and "endpoints_configured" in summary and not any(tag in data for tag in SIGNATURE_TAGS)
    ):
        raise FormatRefusal(GPU_TELEMETRY_REFUSAL)


# ---------------------------------------------------------------------------------------------------------------
# Summary files (JSON and CSV) on one footing


@dataclass
class _Summary:
    """A summary export read into one shape: `metrics` {tag: {unit, avg, …}} in the tool's units."""

    tool: str
    metrics: dict[str, dict[str, Any]]
    top: Mapping[str, Any] = field(default_factory=dict)  # error_summary, was_cancelled, versions, times…
    config: Mapping[str, Any] = field(default_factory=dict)  # input_config
    rounded: bool = False  # CSV: 2 decimals
    telemetry: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: Mapping[str, Any] | None = None  # the file's summary as written (JSON), for `reported`


def _metric_entries(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The `{unit, avg, …}` objects of a summary, by tag; a canonical tag holding anything else is refused."""
    entries: dict[str, dict[str, Any]] = {}
    for tag, value in data.items():
        if isinstance(value, Mapping) and "unit" in value and any(key in value for key in STAT_FIELDS):
            entry: dict[str, Any] = {"unit": value.get("unit")}
            for key in STAT_FIELDS:
                if key in value:
                    entry[key] = _number(value[key], f"{tag}.{key}")
            entries[tag] = entry
        elif tag in SIGNATURE_TAGS or tag in (
            "inter_chunk_latency",
            "benchmark_duration",
            "error_request_count",
            "completed_request_count",
            "output_token_throughput",
        ):
            if value is None:
                continue
            raise FormatRefusal(f"'{tag}' is {_kind(value)} ({_show(value)}), not the tool's {{unit, avg, …}} object")
    return entries


def _time_scale(entry: Mapping[str, Any], tag: str, notes: list[str]) -> float | None:
    """Milliseconds per unit of `entry`, or None (noted) when the unit is not a time unit we know."""
    unit = str(entry.get("unit") or "").strip()
    scale = TIME_MS.get(unit) or TIME_MS.get(unit.lower())
    if scale is None:
        notes.append(f"{tag} has the unit {unit or '(none)'!r}, not a time unit: left out")
    return scale


def _stat(entry: Mapping[str, Any], *, scale: float, n: int | None) -> Stat | None:
    return stat_reported(
        scale=scale,
        n=n,
        mean=entry.get("avg"),
        p50=entry.get("p50"),
        p90=entry.get("p90"),
        p95=entry.get("p95"),
        p99=entry.get("p99"),
        min=entry.get("min"),
        max=entry.get("max"),
        std=entry.get("std"),
    )


def _avg(metrics: Mapping[str, Mapping[str, Any]], *tags: str) -> float | None:
    for tag in tags:
        entry = metrics.get(tag)
        if entry is not None and entry.get("avg") is not None:
            return entry["avg"]
    return None


def _duration_s(entry: Mapping[str, Any] | None) -> float | None:
    if not entry or entry.get("avg") is None:
        return None
    scale = TIME_MS.get(str(entry.get("unit") or "sec").strip().lower())
    return entry["avg"] * scale / 1000.0 if scale is not None else None


def _error_summary(top: Mapping[str, Any]) -> tuple[int | None, list[str]]:
    """(requests counted in error_summary, one text per error kind); None when the file has no error_summary."""
    summary = top.get("error_summary")
    if summary is None:
        return None, []
    if not isinstance(summary, list):
        raise FormatRefusal(f"error_summary is {_kind(summary)}, not a list of {{error_details, count}}")
    total, texts = 0, []
    for index, item in enumerate(summary):
        if not isinstance(item, Mapping):
            raise FormatRefusal(f"error_summary[{index}] is {_kind(item)}, not an {{error_details, count}} object")
        count = _number(item.get("count"), f"error_summary[{index}].count")
        details = _mapping(item.get("error_details"))
        label = " ".join(str(part) for part in (details.get("code"), details.get("type")) if part not in (None, ""))
        message = str(details.get("message") or "").strip()
        if len(message) > 120:
            message = message[:117] + "…"
        total += int(count or 0)
        texts.append(f"{int(count or 0)} × {label or 'error'}{': ' + message if message else ''}")
    return total, texts


def _load_aiperf(config: Mapping[str, Any]) -> LoadPattern:
    """The load of an AIPerf run: `loadgen` (0.x), `phases` (later schema), else the recorded CLI command."""
    loadgen = _mapping(config.get("loadgen"))
    concurrency: Any = loadgen.get("concurrency")
    rate: Any = loadgen.get("request_rate")
    phases = config.get("phases")
    if isinstance(phases, list) and phases:
        profiling = [
            p
            for p in phases
            if isinstance(p, Mapping) and "profil" in str(p.get("kind") or p.get("name") or "").lower()
        ]
        phase = profiling[-1] if profiling else phases[-1]
        if isinstance(phase, Mapping):
            concurrency = phase.get("concurrency", concurrency)
            rate = phase.get("request_rate", phase.get("rate", rate))
    command = str(config.get("cli_command") or _mapping(config.get("run_info")).get("cli_command") or "")
    if concurrency is None:
        found = re.search(r"--concurrency[= ]+'?(\d+)", command)
        concurrency = found.group(1) if found else None
    if rate is None:
        found = re.search(r"--request-rate[= ]+'?([\w.]+)", command)
        rate = found.group(1) if found else None
    return _load(rate, concurrency)


def _load_genai(config: Mapping[str, Any]) -> LoadPattern:
    stimulus = _mapping(_mapping(config.get("perf_analyzer")).get("stimulus"))
    concurrency = stimulus.get("concurrency", config.get("concurrency"))
    rate = stimulus.get("request_rate", config.get("request_rate"))
    return _load(rate, concurrency)


def _load(rate: Any, concurrency: Any) -> LoadPattern:
    clients = finite(concurrency)
    cap = int(clients) if clients is not None and clients > 0 else None
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        return LoadPattern(kind=LoadKind.OFFLINE.value, concurrency=cap)
    per_s = finite(rate)
    if per_s is not None and per_s > 0:
        return LoadPattern(kind=LoadKind.RATE.value, rate=per_s, concurrency=cap)
    if cap is not None:
        return LoadPattern(kind=LoadKind.CONCURRENCY.value, concurrency=cap)
    return LoadPattern()


def _model_backend(tool: str, config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    endpoint = config.get("endpoint")
    endpoint = endpoint if isinstance(endpoint, Mapping) else {}
    if tool == AIPERF:
        model = (
            _first_name(endpoint.get("model_names"))
            or _first_name(config.get("models"))
            or _first_name(config.get("model_names"))
        )
        kind = endpoint.get("type")
        return model, str(kind) if kind else None
    model = _first_name(config.get("model_names")) or _first_name(config.get("model"))
    service = str(endpoint.get("service_kind") or config.get("service_kind") or "").lower()
    kind = endpoint.get("type") or config.get("endpoint_type")
    backend = endpoint.get("backend") or config.get("backend")
    if service == "triton" and backend:  # the engine behind Triton; for OpenAI endpoints `backend` is a default
        return model, str(backend)
    return model, str(kind) if kind else (str(backend) if backend and service != "openai" else None)


def _token_notes(tool: str, summary: _Summary, used: dict[str, str]) -> list[str]:
    config = summary.config
    endpoint = _mapping(config.get("endpoint"))
    server_counts = bool(endpoint.get("use_server_token_count") or config.get("use_server_token_count"))
    tokenizer = (
        _mapping(config.get("tokenizer")).get("name")
        or config.get("tokenizer")
        or _first_name(endpoint.get("model_names"))
        or None
    )
    tokenizer_text = f" ({tokenizer})" if isinstance(tokenizer, str) and tokenizer else ""
    name = "AIPerf" if tool == AIPERF else "GenAI-Perf"
    if server_counts:
        return ["token counts are the server's usage figures (--use-server-token-count)"]
    token_sources = [used[key] for key in ("input_tokens", "output_tokens") if key in used]
    if token_sources and all(source.startswith("usage_") for source in token_sources):
        return [
            f"input/output tokens from the server's usage (usage_prompt_tokens, usage_completion_tokens); "
            f"{name}'s input/output_sequence_length and the throughputs built on them are counted by the client "
            f"tokenizer{tokenizer_text}"
        ]
    return [
        f"tokens counted by {name}'s client tokenizer{tokenizer_text}, not the server's usage; the output-token "
        f"throughput and inter_token_latency's OSL use the same count"
    ]


def _run_from_summary(summary: _Summary, format_id: str) -> ImportedRun:
    """One ImportedRun from a summary export (JSON or CSV); every figure "reported"."""
    tool, metrics, top, config = summary.tool, summary.metrics, summary.top, summary.config
    notes = list(summary.notes)
    name = "AIPerf" if tool == AIPERF else "GenAI-Perf"

    # counts: request_count = successes only; completed_request_count = success + error (AIPerf)
    ok = _integer(_avg(metrics, "request_count"))
    errors_in_summary, error_texts = _error_summary(top)
    failed = _integer(_avg(metrics, "error_request_count"))
    if tool == AIPERF:
        if failed is None and errors_in_summary is not None:
            failed = errors_in_summary
        if ok is None and failed is not None and not any(tag in metrics for tag in PER_REQUEST_TAGS):
            ok = 0  # an all-failed run: AIPerf writes no request_count
        if failed is None and ok is not None:
            failed = 0  # AIPerf computes error_request_count only when a request failed
            notes.append("no error count in the file: AIPerf writes one only when a request failed, so 0 failed")
        completed_all = _integer(_avg(metrics, "completed_request_count"))
        if completed_all is not None and ok is not None and failed is not None and completed_all != ok + failed:
            notes.append(f"completed_request_count {completed_all} ≠ request_count {ok} + errors {failed}")
        notes.append("request_count counts successful requests only (completed_request_count = success + error)")
    else:
        notes.append("GenAI-Perf does not count failed requests: failed unknown")
    if error_texts:
        notes.append("errors: " + "; ".join(error_texts))

    # canonical distributions
    found: dict[str, Stat] = {}
    used: dict[str, str] = {}

    def count_of(tag: str, entry: Mapping[str, Any]) -> int | None:
        count = _integer(entry.get("count"))
        if count is None and tag in PER_REQUEST_TAGS:
            return ok
        return count

    for tag, key in (
        ("time_to_first_token", "ttft_ms"),
        ("inter_token_latency", "tpot_ms"),
        ("inter_chunk_latency", "itl_ms"),
        ("request_latency", "e2e_ms"),
    ):
        entry = metrics.get(tag)
        if entry is None:
            continue
        scale = _time_scale(entry, tag, notes)
        if scale is None:
            continue
        stat = _stat(entry, scale=scale, n=count_of(tag, entry))
        if stat is not None:
            found[key] = stat
            used[key] = tag
    for key, tags in (
        ("input_tokens", ("usage_prompt_tokens", "input_sequence_length")),
        ("output_tokens", ("usage_completion_tokens", "output_sequence_length")),
    ):
        for tag in tags:
            entry = metrics.get(tag)
            stat = _stat(entry, scale=1.0, n=count_of(tag, entry)) if entry is not None else None
            if stat is not None:
                found[key] = stat
                used[key] = tag
                break

    # where request_latency ends: AIPerf releases that read the usage chunk (usage_* metrics) end at the stream's
    # last message; GenAI-Perf and older AIPerf drop chunks without content and end at the last content chunk
    usage_chunk = tool == AIPERF and any(tag in metrics for tag in ("usage_prompt_tokens", "usage_completion_tokens"))
    end_point = (
        "the stream's last message, the trailing usage chunk included"
        if usage_chunk
        else "the last content chunk (chunks without content are dropped)"
    )
    if "tpot_ms" in found:
        notes.append(
            f"tpot_ms is {name}'s inter_token_latency = (request_latency − TTFT) / (OSL − 1), request-"
            f"averaged, ending at {end_point}"
            + (
                ", so it sits slightly above METRICS.md's TPOT (which ends at the last content chunk)"
                if usage_chunk
                else ": METRICS.md's TPOT with n_1 = 1, but with OSL counted as below"
            )
        )
        if tool == GENAI_PERF:
            notes.append(
                "GenAI-Perf releases before mid-2024 wrote a pooled per-token gap as inter_token_latency; "
                "a file does not say which: read as the request-averaged figure"
            )
    if "itl_ms" in found:
        text = "itl_ms is AIPerf's inter_chunk_latency: pooled gaps between content chunks"
        gaps = _integer(metrics["inter_chunk_latency"].get("count"))
        tokens = _avg(metrics, "total_output_tokens", "total_osl")
        if gaps and tokens and ok:
            per_chunk = tokens / (gaps + ok)
            if per_chunk > 1.05:
                text += (
                    f"; {gaps:,} gaps for {tokens:,.0f} output tokens in {ok:,} requests: chunks carry ≈"
                    f"{per_chunk:.1f} tokens, so these are per-chunk gaps, not per-token ones"
                )
        notes.append(text)
    elif tool == GENAI_PERF:
        notes.append("GenAI-Perf's summary has no pooled inter-chunk gap distribution: itl_ms left out")
    if "e2e_ms" in found and usage_chunk:
        notes.append("e2e_ms is request_latency: request start to the stream's last message (METRICS.md's E2E)")
    elif "e2e_ms" in found:
        notes.append(
            "e2e_ms is request_latency: request start to the last content chunk, slightly short of "
            "METRICS.md's E2E (which ends at the stream end)"
        )
    if "e2e_output_token_throughput" in metrics:
        notes.append(
            "e2e_output_token_throughput is OSL / E2E per request; NTPOT (E2E / N_out) cannot be derived "
            "from its summary (the mean of reciprocals is not the reciprocal of the mean): ntpot_ms left out"
        )
    if "ttft_ms" not in found and ok:
        notes.append("no time_to_first_token in the file (a non-streaming run?): TTFT, TPOT and ITL unknown")
    if found or ok:
        notes.extend(_token_notes(tool, summary, used))
    if summary.rounded:
        notes.append("the CSV's figures are rounded to 2 decimals by the tool")
    if found:
        notes.append(f"percentiles as reported by {name} (numpy linear interpolation), not recomputed")

    # throughputs, duration, start
    output_per_s = _avg(metrics, "output_token_throughput")
    requests_per_s = _avg(metrics, "request_throughput")
    total_per_s = _avg(metrics, "total_token_throughput")
    if tool == AIPERF and (output_per_s is not None or requests_per_s is not None):
        notes.append(
            "AIPerf's throughputs count successful requests and their tokens over first request start → "
            "last response (benchmark_duration), not METRICS.md's measurement window"
        )
    duration = _duration_s(metrics.get("benchmark_duration"))
    started = _utc_from_ns(_min_request_ns(metrics))
    if started is None and isinstance(top.get("start_time"), str):
        started = top["start_time"]
        if not re.search(r"(Z|[+-]\d\d:?\d\d)$", started):
            notes.append("started_at is AIPerf's start_time: the tool host's local clock, without a time zone")
    if top.get("was_cancelled") is True:
        notes.append("the benchmark was cancelled before it finished (was_cancelled)")
    overflow = _avg(metrics, "context_overflow_count")
    if overflow:
        notes.append(f"AIPerf reports context_overflow_count = {overflow:,.0f}")

    model, backend = _model_backend(tool, config)
    load = _load_aiperf(config) if tool == AIPERF else _load_genai(config)
    if not config:
        notes.append("no input_config in the file: model, load and settings unknown (the JSON export has them)")
    version = top.get("aiperf_version") if tool == AIPERF else None
    if tool == GENAI_PERF:
        notes.append("GenAI-Perf writes no version into its exports: tool_version unknown")
    schema = top.get("schema_version")
    if isinstance(schema, str) and not schema.startswith("1."):
        notes.append(f"schema_version {schema} is newer than the 1.x this importer knows; read as 1.x")

    if summary.raw is not None:
        reported = nonfinite_as_null({key: value for key, value in summary.raw.items() if key != "input_config"})
    else:
        reported = nonfinite_as_null({tag: dict(entry) for tag, entry in metrics.items()})
    if summary.telemetry:
        reported["telemetry"] = nonfinite_as_null(summary.telemetry)
    return ImportedRun(
        format=format_id,
        tool=tool,
        tool_version=str(version) if version else None,
        model=model,
        backend=backend,
        started_at=started,
        duration_s=duration,
        load=load,
        settings=dict(config),
        completed=ok,
        failed=failed,
        metrics=found,
        reported=reported,
        output_tokens_per_s=output_per_s,
        requests_per_s=requests_per_s,
        total_tokens_per_s=total_per_s,
        notes=tuple(notes),
    )


def _min_request_ns(metrics: Mapping[str, Mapping[str, Any]]) -> float | None:
    entry = metrics.get("min_request_timestamp")
    if not entry or entry.get("avg") is None or str(entry.get("unit") or "ns") != "ns":
        return None
    return entry["avg"]


# ---------------------------------------------------------------------------------------------------------------
# profile_export_aiperf.json / profile_export_genai_perf.json


def _aiperf_marked(data: Mapping[str, Any]) -> bool:
    config = _mapping(data.get("input_config"))
    endpoint = _mapping(config.get("endpoint"))
    return bool(
        {
            "aiperf_version",
            "schema_version",
            "error_summary",
            "was_cancelled",
            "benchmark_duration",
            "inter_chunk_latency",
        }
        & set(data)
        or {"loadgen", "models", "phases"} & set(config)
        or "model_names" in endpoint
    )


def _genai_marked(data: Mapping[str, Any]) -> bool:
    config = _mapping(data.get("input_config"))
    return bool(
        {"perf_analyzer", "service_kind", "endpoint_type", "artifact_dir", "subcommand"} & set(config)
        or "request_goodput" in data
        or "telemetry_stats" in data
    )


def read_json(text: str) -> list[ImportedRun]:
    """The run in an AIPerf `profile_export_aiperf.json` or a GenAI-Perf `profile_export_genai_perf.json`.

    Refuses other tools' JSON (no `{unit, avg, …}` metric objects), AIPerf's server-metrics and GPU-telemetry
    exports, JSON lines, and figures of the wrong type. An all-failed AIPerf run (only `error_summary`) is read with
    completed 0.
    """
    try:
        data = _load_json(text)
    except FormatRefusal as refusal:
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            head = bounded_loads(first)
        except json.JSONDecodeError:
            raise refusal from None  # not JSON, or cut short: the helper's reason stands
        _refuse_other_exports(head)
        if isinstance(head, Mapping) and "metadata" in head and "metrics" in head:
            raise FormatRefusal(
                "JSON lines of AIPerf per-request records (profile_export.jsonl), not the "
                "profile_export_aiperf.json summary"
            ) from None
        raise
    if not isinstance(data, Mapping):
        raise FormatRefusal(f"a JSON {_kind(data).split(' ')[-1]}, not an AIPerf/GenAI-Perf profile object")
    _refuse_other_exports(data)
    nested = data.get("records")
    source = nested if isinstance(nested, Mapping) and _metric_entries(nested) else data
    metrics = _metric_entries(source)
    has_metric = any(tag in metrics for tag in SIGNATURE_TAGS)
    is_aiperf = _aiperf_marked(data)
    if not has_metric and not (is_aiperf and "error_summary" in data):
        raise FormatRefusal(
            "a JSON object without AIPerf's 'time_to_first_token' metric (nor 'request_latency' or "
            "another {unit, avg, …} metric object of AIPerf/GenAI-Perf)"
        )
    if is_aiperf:
        tool = AIPERF
    elif _genai_marked(data):
        tool = GENAI_PERF
    else:
        raise FormatRefusal(
            "AIPerf/GenAI-Perf metric objects, but nothing says which tool wrote them (no "
            "aiperf_version, error_summary or input_config)"
        )
    config = data.get("input_config")
    if config is not None and not isinstance(config, Mapping):
        raise FormatRefusal(f"input_config is {_kind(config)}, not an object")
    if tool == AIPERF and not has_metric and _error_summary(data)[0] in (None, 0):
        raise FormatRefusal("an AIPerf profile with neither a metric nor an error: nothing was measured")
    top = {key: value for key, value in data.items() if key not in metrics and key != "records"}
    notes = []
    if tool == GENAI_PERF and data.get("telemetry_stats"):
        notes.append("GenAI-Perf's GPU telemetry_stats kept in reported")
    summary = _Summary(tool=tool, metrics=metrics, top=top, config=config or {}, notes=notes, raw=data)
    return [_run_from_summary(summary, FORMAT_JSON)]


# ---------------------------------------------------------------------------------------------------------------
# profile_export_aiperf.csv / profile_export_genai_perf.csv

_NAME_UNIT = re.compile(r"^(?P<name>.*?)\s*\((?P<unit>[^()]*)\)\s*$")
_SYSTEM_ONLY_AIPERF = (
    "benchmark_duration",
    "error_request_count",
    "total_token_throughput",
    "completed_request_count",
    "good_request_count",
    "goodput",
    "input_token_throughput",
    "request_error_rate",
)


@dataclass
class _Table:
    line: int  # the header's line number
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line number, cells)
    title: str | None = None


def _csv_tables(text: str) -> list[_Table]:
    """The tables of a CSV text: runs of rows between blank rows; a "=== … ===" row titles the next table."""
    reader = csv.reader(io.StringIO(text), strict=True)
    tables: list[_Table] = []
    current: _Table | None = None
    title: str | None = None
    try:
        for cells in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):
                current = None
                continue
            first = cells[0].strip()
            if first.startswith("===") and not any(cell.strip() for cell in cells[1:]):
                current, title = None, first.strip("= ").strip()
                continue
            if current is None:
                current = _Table(line=line, header=[cell.strip() for cell in cells], rows=[], title=title)
                tables.append(current)
                title = None
            else:
                current.rows.append((line, cells))
    except csv.Error as error:
        cut = " (the file is cut short inside a quoted value)" if "end of data" in str(error) else ""
        raise FormatRefusal(f"not valid CSV at line {reader.line_num}: {error}{cut}") from None
    return tables


def _csv_number(cell: str, line: int, column: str) -> float | None:
    text = cell.strip()
    if text in ("", "N/A", "n/a", "-"):
        return None
    value = finite(text)
    if value is None and text.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity"):
        raise FormatRefusal(f"line {line}, column {column!r}: {text!r} is not a number")
    return value


def _display_tag(label: str) -> tuple[str, str | None]:
    """(tag, unit) of a display name: "Time to First Token (ms)" → ("time_to_first_token", "ms")."""
    found = _NAME_UNIT.match(label.strip())
    name, unit = (found.group("name"), found.group("unit").strip()) if found else (label.strip(), None)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_"), unit


def _check_width(table: _Table, last_line: int) -> None:
    for line, cells in table.rows:
        if len(cells) != len(table.header):
            cut = ": the file is cut short" if line == last_line and len(cells) < len(table.header) else ""
            raise FormatRefusal(
                f"line {line} has {len(cells)} cells where its table's header (line {table.line}) "
                f"has {len(table.header)}{cut}"
            )


def read_csv(text: str) -> list[ImportedRun]:
    """The run in an AIPerf `profile_export_aiperf.csv` or a GenAI-Perf `profile_export_genai_perf.csv`.

    The tool is told by the statistics table's column order (AIPerf: `…,max,[sum,]p1,…`; GenAI-Perf: `…,max,p99,…`)
    or, for a file with only the `Metric,Value` table, by names only one tool writes. Units come from the display
    names; a value cell that is not a number, or a row of the wrong width, is refused with its line.
    """
    text = text.lstrip("\ufeff")  # a byte-order mark (spreadsheet tools write one)
    if text.lstrip().startswith(("{", "[")):
        _refuse_other_exports(_sniff_json(text))
        raise FormatRefusal("JSON, not a CSV export")
    tables = _csv_tables(text)
    if not tables:
        raise FormatRefusal("an empty CSV")
    first = tables[0].header
    lowered = [cell.lower() for cell in first]
    if lowered[:2] in (["endpoint", "gpu_index"], ["gpu index", "gpu name"]) or "gpu_uuid" in lowered:
        raise FormatRefusal(GPU_TELEMETRY_REFUSAL)
    if lowered[:1] != ["metric"] or len(lowered) < 2 or lowered[1] not in ("avg", "value"):
        raise FormatRefusal(
            f"not an AIPerf/GenAI-Perf CSV: its first row is {','.join(first)[:60]!r}, not "
            "'Metric,avg,…' or 'Metric,Value'"
        )
    last_line = max([t.line for t in tables] + [line for t in tables for line, _ in t.rows])
    metrics: dict[str, dict[str, Any]] = {}
    telemetry: list[dict[str, Any]] = []
    column_order: list[str] | None = None
    for table in tables:
        header = [cell.lower() for cell in table.header]
        _check_width(table, last_line)
        if header[:1] == ["metric"] and len(header) > 1 and header[1] == "avg":
            column_order = column_order or header[1:]
            for line, cells in table.rows:
                tag, unit = _display_tag(cells[0])
                entry: dict[str, Any] = {"label": cells[0].strip(), "unit": unit}
                for column, cell in zip(header[1:], cells[1:], strict=True):
                    entry[column] = _csv_number(cell, line, column)
                metrics[tag] = entry
        elif header == ["metric", "value"]:
            for line, cells in table.rows:
                tag, unit = _display_tag(cells[0])
                metrics[tag] = {"label": cells[0].strip(), "unit": unit, "avg": _csv_number(cells[1], line, "Value")}
        else:  # GPU telemetry (GenAI-Perf "Metric,GPU,…", AIPerf "Endpoint,GPU_Index,…") and anything else
            for line, cells in table.rows:
                row: dict[str, Any] = {"table": table.title} if table.title else {}
                for column, cell in zip(table.header, cells, strict=True):
                    value = finite(cell)
                    row[column] = value if value is not None else cell.strip()
                row["line"] = line
                telemetry.append(row)
    if not metrics:
        raise FormatRefusal("an AIPerf/GenAI-Perf CSV header without a metric row")
    if column_order is not None:
        stats = [c for c in column_order if re.fullmatch(r"p\d+", c)]
        if "sum" in column_order or (stats and stats[0] == "p1"):
            tool = AIPERF
        elif stats and stats[0] == "p99":
            tool = GENAI_PERF
        else:
            raise FormatRefusal(
                f"a 'Metric,avg,…' CSV whose columns ({','.join(column_order)[:60]}) match neither "
                "AIPerf's nor GenAI-Perf's order"
            )
    elif any(tag in metrics for tag in _SYSTEM_ONLY_AIPERF) or metrics.get("request_count", {}).get("unit") is None:
        tool = AIPERF
    else:
        tool = GENAI_PERF
    signature = set(SIGNATURE_TAGS) | {"error_request_count"}
    if not signature & set(metrics):
        raise FormatRefusal(
            "a 'Metric,…' CSV without AIPerf's 'Time to First Token' (nor 'Request Latency', "
            "'Request Count' or 'Error Request Count')"
        )
    summary = _Summary(tool=tool, metrics=metrics, rounded=True, telemetry=telemetry)
    if telemetry:
        summary.notes.append("the CSV's GPU telemetry rows kept in reported")
    return [_run_from_summary(summary, FORMAT_CSV)]


# ---------------------------------------------------------------------------------------------------------------
# profile_export.jsonl: one record per request


@dataclass
class _Record:
    record: RequestRecord
    start_ns: float | None
    end_ns: float | None
    aiperf_itl_ms: float | None
    chunks_differ: bool
    cancelled: bool
    token_sources: tuple[str, str]


def _ns(value: Any, where: str) -> float | None:
    """An epoch-nanosecond timestamp; an int stays an int (a float loses ~256 ns at today's epoch)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _number(value, where)


def _record_value(metrics: Mapping[str, Any], tag: str, line: int) -> tuple[Any, str | None]:
    item = metrics.get(tag)
    if item is None:
        return None, None
    if not isinstance(item, Mapping) or "value" not in item:
        raise FormatRefusal(f"line {line}: metrics.{tag} is {_kind(item)}, not a {{value, unit}} object")
    return item.get("value"), (str(item["unit"]) if item.get("unit") is not None else None)


def _record_time_ms(metrics: Mapping[str, Any], tag: str, line: int) -> float | None:
    value, unit = _record_value(metrics, tag, line)
    if value is None:
        return None
    number = _number(value, f"line {line}: metrics.{tag}.value")
    scale = TIME_MS.get((unit or "").lower())
    if scale is None:
        raise FormatRefusal(f"line {line}: metrics.{tag} has the unit {unit!r}, not a time unit")
    return number * scale if number is not None else None


def _record_tokens(metrics: Mapping[str, Any], tags: tuple[str, ...], line: int) -> tuple[int | None, str]:
    for tag in tags:
        value, _ = _record_value(metrics, tag, line)
        number = _number(value, f"line {line}: metrics.{tag}.value")
        if number is not None:
            return round(number), tag
    return None, ""


def _parse_record(line: int, value: Any) -> _Record | None:
    """One request of the per-record export; None for a warm-up record."""
    if not isinstance(value, Mapping):
        raise FormatRefusal(f"line {line} is {_kind(value)}, not an AIPerf record object")
    if not isinstance(value.get("metadata"), Mapping):
        raise FormatRefusal(f"line {line} is an object without AIPerf's 'metadata' object, not a record")
    metadata = value["metadata"]
    metrics = value.get("metrics") or {}
    if not isinstance(metrics, Mapping):
        raise FormatRefusal(f"line {line}: metrics is {_kind(metrics)}, not an object")
    if str(metadata.get("benchmark_phase") or metadata.get("phase_kind") or "").lower() == "warmup":
        return None
    start_ns = _ns(metadata.get("request_start_ns"), f"line {line}: metadata.request_start_ns")
    end_ns = _ns(metadata.get("request_end_ns"), f"line {line}: metadata.request_end_ns")
    error = value.get("error")
    if error is not None and not isinstance(error, Mapping):
        raise FormatRefusal(f"line {line}: error is {_kind(error)}, not an {{code, type, message}} object")
    ttft = _record_time_ms(metrics, "time_to_first_token", line)
    e2e = _record_time_ms(metrics, "request_latency", line)
    aiperf_itl = _record_time_ms(metrics, "inter_token_latency", line)
    gaps_value, gaps_unit = _record_value(metrics, "inter_chunk_latency", line)
    gaps: tuple[float, ...] = ()
    if gaps_value is not None:
        if not isinstance(gaps_value, list):
            raise FormatRefusal(f"line {line}: metrics.inter_chunk_latency.value is {_kind(gaps_value)}, not a list")
        scale = TIME_MS.get((gaps_unit or "").lower())
        if scale is None:
            raise FormatRefusal(f"line {line}: metrics.inter_chunk_latency has the unit {gaps_unit!r}")
        try:  # the common case, checked and converted without a Python call per gap
            finite_sum = math.isfinite(math.fsum(gaps_value))
        except TypeError:
            finite_sum = False
        if finite_sum:
            gaps = tuple(gaps_value) if scale == 1.0 else tuple(map(scale.__mul__, gaps_value))
        else:
            numbers = [_number(gap, f"line {line}: an inter_chunk_latency gap") for gap in gaps_value]
            gaps = tuple(gap * scale for gap in numbers if gap is not None)
    input_tokens, input_source = _record_tokens(
        metrics, ("usage_prompt_tokens", "input_sequence_length", "error_isl"), line
    )
    output_tokens, output_source = _record_tokens(metrics, ("usage_completion_tokens", "output_sequence_length"), line)
    if error is not None:
        parts = [str(error.get(key)) for key in ("code", "type") if error.get(key) not in (None, "")]
        message = str(error.get("message") or "").strip()
        text = " ".join(parts) + (": " + message if message else "")
        record = RequestRecord(
            status=RequestStatus.ERROR.value,
            error=text or "error",
            ttft_ms=ttft,
            e2e_ms=e2e,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )
        return _Record(
            record, start_ns, end_ns, None, False, bool(metadata.get("was_cancelled")), (input_source, output_source)
        )
    tpot = None
    chunks_differ = False
    if gaps and output_tokens is not None and output_tokens >= 2:
        tpot = sum(gaps) / (output_tokens - 1)  # (t_cC − t_c1) / (N_out − n_1), n_1 = 1
        chunks_differ = len(gaps) + 1 != output_tokens
    record = RequestRecord(
        status=RequestStatus.OK.value,
        ttft_ms=ttft,
        e2e_ms=e2e,
        tpot_ms=tpot,
        itl_ms=gaps,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
    return _Record(
        record,
        start_ns,
        end_ns,
        aiperf_itl,
        chunks_differ,
        bool(metadata.get("was_cancelled")),
        (input_source, output_source),
    )


def read_records(text: str) -> list[ImportedRun]:
    """The run in an AIPerf per-record `profile_export.jsonl`, every canonical figure recomputed.

    Warm-up records are left out. TPOT per request is Σ inter-chunk gaps / (N_out − 1) (first to last content
    chunk), not AIPerf's inter_token_latency (which ends at the trailing usage chunk). Throughputs follow AIPerf's
    definition (successful requests over first start → last end of the profiling records). The file carries no
    model or load settings.
    """
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        raise FormatRefusal("not JSON lines of AIPerf records (the text does not start with '{')")
    try:
        first_line = stripped.split("\n", 1)[0]
        head = _sniff_json(text) if len(first_line) == len(stripped) else bounded_loads(first_line)
        if head is None:
            raise json.JSONDecodeError("not JSON", first_line, 0)
    except json.JSONDecodeError:
        whole = _sniff_json(text)
        _refuse_other_exports(whole)
        if isinstance(whole, Mapping):
            raise FormatRefusal(
                "one JSON object over several lines (a summary export?), not AIPerf's per-record JSON lines"
            ) from None
        head = None  # a cut or broken first line: json_lines below says where
    _refuse_other_exports(head)
    if isinstance(head, Mapping) and not ("metadata" in head and ("metrics" in head or "error" in head)):
        raise FormatRefusal("JSON without AIPerf's per-record 'metadata' and 'metrics' fields")
    parsed: list[_Record] = []
    warmup = 0
    lines = 0
    for line, value in _json_lines(text):
        lines += 1
        if lines == 1:
            _refuse_other_exports(value)
        item = _parse_record(line, value)
        if item is None:
            warmup += 1
        else:
            parsed.append(item)
    if not parsed:
        raise FormatRefusal(f"an AIPerf per-record export with only {warmup} warm-up record(s): no profiling request")
    starts = [p.start_ns for p in parsed if p.start_ns is not None]
    ends = [p.end_ns for p in parsed if p.end_ns is not None]
    origin = min(starts) if starts else None
    records = tuple(
        replace(p.record, start_s=(p.start_ns - origin) / 1e9)
        if p.start_ns is not None and origin is not None
        else p.record
        for p in parsed
    )
    ok = [r for r in records if r.status == RequestStatus.OK.value]
    failed = [r for r in records if r.status == RequestStatus.ERROR.value]
    duration = (max(ends) - origin) / 1e9 if ends and origin is not None and max(ends) > origin else None

    notes = [
        f"metrics recomputed from {_count(len(records), 'profiling record')}"
        + (f" ({_count(warmup, 'warm-up record')} left out)" if warmup else "")
    ]
    aiperf_itls = [p.aiperf_itl_ms for p in parsed if p.aiperf_itl_ms is not None and p.record.status == "ok"]
    tpots = [r.tpot_ms for r in ok if r.tpot_ms is not None]
    sources = Counter(p.token_sources for p in parsed if p.record.status == "ok")
    usage_chunk = any(source[1].startswith("usage_") for source in sources)  # AIPerf read a usage chunk
    end_point = (
        "the stream's last message, the trailing usage chunk included"
        if usage_chunk
        else "the last content chunk (no usage chunk in these records)"
    )
    if tpots:
        text_tpot = "tpot_ms = Σ inter-chunk gaps / (N_out − 1) per request (first to last content chunk, METRICS.md)"
        if aiperf_itls:
            text_tpot += (
                f"; AIPerf's own inter_token_latency ends at {end_point}: its mean is "
                f"{sum(aiperf_itls) / len(aiperf_itls):.3f} ms against {sum(tpots) / len(tpots):.3f} ms "
                "here"
            )
        notes.append(text_tpot)
    if ok:
        notes.append(
            f"e2e_ms is AIPerf's request_latency, from request start to {end_point}"
            + ("" if usage_chunk else ", slightly short of METRICS.md's E2E (which ends at the stream end)")
        )
    differ = sum(1 for p in parsed if p.chunks_differ)
    if differ:
        notes.append(
            f"chunking_unknown: in {_count(differ, 'request')} the number of content chunks differs from "
            "N_out, and the file has no per-chunk token counts; n_1 taken as 1 (METRICS.md)"
        )
    single = sum(1 for r in ok if r.ttft_ms is not None and not r.itl_ms and (r.output_tokens or 0) >= 2)
    if single:
        notes.append(
            f"{_count(single, 'request')} delivered the output in one content chunk: TPOT falls back to "
            "(E2E − TTFT) / (N_out − 1)"
        )
    if any(source[1] == "output_sequence_length" for source in sources):
        notes.append(
            "output tokens of some requests are AIPerf's client-tokenizer count (output_sequence_length): "
            "the server sent no usage"
        )
    elif sources:
        notes.append(
            "input/output tokens from the server's usage (usage_prompt_tokens, usage_completion_tokens); "
            "AIPerf's input/output_sequence_length are client-tokenizer counts"
        )
    if failed:
        kinds = Counter(r.error for r in failed)
        notes.append(
            f"{_count(len(failed), 'request')} failed: "
            + "; ".join(f"{count} × {text[:120]}" for text, count in kinds.most_common(5))
        )
    cancelled = sum(1 for p in parsed if p.cancelled)
    if cancelled:
        notes.append(f"{_count(cancelled, 'request')} cancelled by AIPerf; counted as failed, as AIPerf does")
    notes.append(
        "throughputs recomputed as AIPerf defines them: successful requests and their tokens over the first "
        "request start → last response, not METRICS.md's measurement window"
    )
    notes.append(
        "the per-record export carries no model, endpoint or load settings (profile_export_aiperf.json has them)"
    )

    out_tokens = sum(r.output_tokens or 0 for r in ok)
    in_tokens = sum(r.input_tokens or 0 for r in ok)
    reported: dict[str, Any] = {
        "records": len(records),
        "warmup_records_excluded": warmup,
        "successful": len(ok),
        "errors": len(failed),
    }
    if aiperf_itls:
        reported["inter_token_latency_mean_ms"] = sum(aiperf_itls) / len(aiperf_itls)
    if failed:
        reported["error_summary"] = [
            {"error": text, "count": count} for text, count in Counter(r.error for r in failed).most_common()
        ]
    return [
        ImportedRun(
            format=FORMAT_RECORDS,
            tool=AIPERF,
            started_at=_utc_from_ns(origin),
            duration_s=duration,
            completed=len(ok),
            failed=len(failed),
            metrics=metrics_from_requests(records),
            reported=reported,
            output_tokens_per_s=out_tokens / duration if duration else None,
            requests_per_s=len(ok) / duration if duration else None,
            total_tokens_per_s=(in_tokens + out_tokens) / duration if duration else None,
            requests=records,
            notes=tuple(notes),
        )
    ]

"""Export of a stored benchmark run: as our own JSON (`export_ours`) and as an llm-d Benchmark Report v0.2
(`export_llm_d`), so other tools can read it. Pure functions over plain mappings (no Django): a run is a dict with the
`BenchmarkRun` fields, its requests are dicts with the `BenchmarkRequest` fields.

Our own JSON
============

Our load generator's format, "llm-sizing-loadgen-result" version 1 (`docs/loadgen-result.md` and its JSON Schema),
so the llm_sizing importer reads an export back, plus a `source` block (the schema's top level does not list it yet)
saying which tool's file the run came from. `docs/benchmark-export.md` gives the mapping;
in short:

- `tool` ← {"name": "llm-sizing-export", "version": "1"}: the writer of the file;
- `source` ← the run's `tool`, `tool_version`, `format`, `label`, `name`, its deployment (`model` and `gpu` slugs,
  `gpu_count`, `tp`, `engine`, `engine_version`) and `notes` on what the export had to fill by convention;
- `run.started_at` ← `started_at` (UTC, "Z"), `run.duration_s`, `run.load` ← `load`, `run.endpoint` ← {kind:
  `backend`, model: `model_name` (else the slug), engine: "`engine` `engine_version`"}, `run.settings` ←
  `settings`, `run.window` ← [0, the later of `duration_s` and the last request's start], so every request is in it;
- `requests[]` ← the records in index order: `id` ← `index`; `status` ok → "ok", incomplete → "incomplete_at_end",
  error → the METRICS.md status written at the front of the error text by our own importer ("http_error(503): …",
  "timeout(ttft)"), else "http_error" without a code; `t_send_s` ← `start_s`; `t_sched_s` ← `start_s` too (no tool
  but ours records the scheduled time, and the format requires it: the schedule lag of an export reads as zero);
  `ttft_ms`, `e2e_ms`, `itl_ms`, `input_tokens`, `output_tokens` as stored; no `chunk_tokens` (one token per event);
- `summary` ← everything the service stored as figures: counts, throughputs, the canonical `metrics` (with `source`
  and `insufficient`), the tool's own `reported` fields and the `notes`. The importer keeps `summary` as `reported`.

Re-imported, an export gives back the same completed / failed / incomplete counts and, from the records, the same
TTFT, E2E, ITL, NTPOT and token distributions (TPOT too where the stored one came from the same gaps); the stored
figures themselves travel in `summary`. Required values a run does not know are written as null (text as
"unknown"), and the importer then refuses the file naming the field (a run without a start time, say).

llm-d Benchmark Report v0.2
===========================

Read from llm-d-benchmark's `llmdbenchmark/analysis/benchmark_report/` (`schema_v0_2.py`,
`schema_v0_2_components.py`, `base.py`, `br_v0_2_example.yaml`, `br_v0_2_json_schema.json`, `native_to_br0_2.py`).
The schema forbids keys it does not define (pydantic `extra="forbid"`), so nothing of ours is added to it; what we do
not know is left out (the schema's optional fields), never made up.

Units. The schema accepts `ms` or `s` for times and `ms/token` or `s/token` for per-token latencies. We write
**seconds** (`s`, `s/token`), as the v0.2 example report does and as llm-d's own cross-treatment analysis reads the
figures (it names the columns `ttft_mean_s`, ... without looking at `units`): every millisecond figure is divided by
1000 (TTFT mean 42.58 ms → 0.04258 s). Token counts are `count`, token rates `tokens/s`, request rates `queries/s`.

Field by field (ours → llm-d):

- `version` ← "0.2".
- `run.uid` (required) ← `run["uid"]` when given, else a UUID5 of the run's content (the same run always exports
  with the same uid). `run.time.start` ← `started_at` (ISO 8601, UTC written "Z"); `run.time.end` ← start +
  `duration_s`; `run.time.duration` ← `duration_s` as an ISO 8601 duration ("PT120S"). `run.description` ← the run's
  `name`. `eid`, `cid`, `pid`, `user`, `keywords`: not known, left out.
- `scenario.stack[0]`, the serving engine: `standardized.tool` ← `engine` ("" when unknown, as llm-d writes an
  unknown tool), `tool_version` ← `engine_version` (or ""), `model.name` ← `model_name` (the model as the file names
  it; else the catalog slug `model`), `accelerator.model` ← `gpu` (our catalog slug, not a Kubernetes node label),
  `accelerator.count` ← `gpu_count`, `accelerator.parallelism.tp` ← `tp`. The `inference_engine` kind requires
  `role` and `replicas`, which a run does not record; it is written only when the GPUs form one engine
  (`gpu_count` = `tp`, or a single GPU): role "replica", replicas 1. Otherwise the component is of kind `generic`
  (which allows unvalidated fields) carrying the same `model` and `accelerator` without claiming a replica count.
  `metadata.label` ← "inference-engine", `metadata.cfg_id` (required) ← SHA-256 of the standardized block;
  `native` ← {} (the engine's arguments are not stored with a run).
- `scenario.load` (the load generator): `standardized.tool` ← `tool` in llm-d's spelling (`vllm` → "vllm-benchmark",
  `inference_perf` → "inference-perf", `guidellm`, `aiperf`; others with "-" for "_"), `tool_version` ←
  `tool_version` (or ""), `source` ← "unknown" (a run does not say whether prompts were random or sampled),
  `input_seq_len` (required) ← the measured `input_tokens` distribution: "fixed" when min = max, else "other", with
  `value` = mean, `std_dev`, `min`, `max`; `rate_qps` ← `load.rate` (open loop), `concurrency` ← `load.concurrency`;
  `native.config` ← `settings` (the tool's settings as written); `metadata.cfg_id` ← SHA-256 of `settings`.
  `output_seq_len` ("if enforced") is left out: a run does not say whether the output length was enforced. Without a
  known input length (the required `input_seq_len`) the whole `scenario.load` block is left out.
- `results.request_performance.aggregate.requests`: `total` ← completed + failed + incomplete, `failures` ←
  `failed`, `incomplete` ← `incomplete`; `input_length` / `output_length` ← `input_tokens` / `output_tokens`
  (`count`). The counts come from the request records when the run has none.
- `...aggregate.latency`: `time_to_first_token` ← `ttft_ms` (s), `time_per_output_token` ← `tpot_ms` (s/token),
  `inter_token_latency` ← `itl_ms` (s/token; ours are pooled inter-chunk gaps, per token only when each chunk carries
  one token), `request_latency` ← `e2e_ms` (s), `normalized_time_per_output_token` ← `ntpot_ms` (s/token).
- `...aggregate.throughput`: `output_token_rate` ← `output_tokens_per_s`, `total_token_rate` ←
  `total_tokens_per_s` (tokens/s), `request_rate` ← `requests_per_s` (queries/s), each as `{units, mean}`.
  `input_token_rate` is left out (no stored figure).
- Each distribution (llm-d `Statistics`): `mean` (required: a metric without a mean is left out), `stddev` ← `std`,
  `min`, `p50`, `p90`, `p95`, `p99`, `max`. A percentile our Stat marks `insufficient` (too few samples, METRICS.md)
  is left out, since the schema cannot mark it. The sample count `n` and the `source` ("recomputed" / "reported")
  have no place in the schema and are not exported; neither are `reported`, `notes` or the per-request records
  (v0.2 holds no traces). A canonical metric the run lacks is recomputed from the request records when they are given.
- Not filled: `time_series`, `session_performance`, `observability`, `profiling`, `component_health`.

>>> report = export_llm_d({"name": "r", "tool": "vllm", "completed": 2, "failed": 0,
...                        "metrics": {"ttft_ms": {"mean": 42.58, "n": 2, "insufficient": ["p90", "p95", "p99"]}}}, [])
>>> report["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
{'units': 's', 'mean': 0.04258}
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks_app.results.run import METRIC_KEYS, RequestRecord, RequestStatus, finite, metrics_from_requests
from sizing.kernel.jsonsafe import nonfinite_as_null

FORMAT = "llm-sizing-loadgen-result"  # docs/loadgen-result.md
FORMAT_VERSION = 1
EXPORT_TOOL = "llm-sizing-export"
TIMEOUT_PHASES = ("connect", "ttft", "stream")
# "http_error(503): text", "timeout(ttft)", "client_cancel: text": the METRICS.md status our importer writes first
ERROR_TEXT = re.compile(
    r"^(?P<status>http_error|timeout|client_cancel|truncated_prompt|short_output)"
    r"(?:\((?P<detail>[^)]*)\))?(?::\s*(?P<text>.*))?$",
    re.DOTALL,
)
LLM_D_VERSION = "0.2"
LLM_D_COMPONENT_SCHEMA = "0.0.1"

# our tool ids → llm-d's workload generator names (base.py WorkloadGenerator) where llm-d has one
LLM_D_TOOLS = {"vllm": "vllm-benchmark", "inference_perf": "inference-perf", "guidellm": "guidellm", "aiperf": "aiperf"}
# canonical metric → (llm-d latency field, units, factor from our unit)
LLM_D_LATENCY = (
    ("ttft_ms", "time_to_first_token", "s", 1e-3),
    ("tpot_ms", "time_per_output_token", "s/token", 1e-3),
    ("itl_ms", "inter_token_latency", "s/token", 1e-3),
    ("e2e_ms", "request_latency", "s", 1e-3),
    ("ntpot_ms", "normalized_time_per_output_token", "s/token", 1e-3),
)
LLM_D_THROUGHPUT = (
    ("output_tokens_per_s", "output_token_rate", "tokens/s"),
    ("total_tokens_per_s", "total_token_rate", "tokens/s"),
    ("requests_per_s", "request_rate", "queries/s"),
)


# ---------------------------------------------------------------------------------------------------------------
# Values


def _number(value: Any) -> float | None:
    return finite(value)


def _count(value: Any) -> int | None:
    number = finite(value)
    return round(number) if number is not None else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _moment(value: Any) -> dt.datetime | None:
    """`started_at` (a datetime or ISO 8601 text) as an aware datetime; naive times are UTC (ImportedRun's rule)."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _iso_duration(seconds: float) -> str:
    text = f"{seconds:.6f}".rstrip("0").rstrip(".")
    return f"PT{text}S"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(nonfinite_as_null(value), sort_keys=True).encode()).hexdigest()


def _stat(stat: Any) -> dict[str, Any] | None:
    """A stored Stat dict with our keys only, numbers finite."""
    if not isinstance(stat, Mapping):
        return None
    data: dict[str, Any] = {
        key: _number(stat.get(key)) for key in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std")
    }
    data["n"] = _count(stat.get("n"))
    data["source"] = _text(stat.get("source"))
    data["insufficient"] = [str(mark) for mark in (stat.get("insufficient") or ())]
    return data


def _request(row: Mapping[str, Any], position: int) -> dict[str, Any]:
    index = _count(row.get("index"))
    return {
        "index": index if index is not None else position,
        "status": _text(row.get("status")) or RequestStatus.OK.value,
        "error": _text(row.get("error")),
        "start_s": _number(row.get("start_s")),
        "ttft_ms": _number(row.get("ttft_ms")),
        "e2e_ms": _number(row.get("e2e_ms")),
        "tpot_ms": _number(row.get("tpot_ms")),
        "itl_ms": [gap for gap in (_number(value) for value in (row.get("itl_ms") or ())) if gap is not None],
        "input_tokens": _count(row.get("input_tokens")),
        "output_tokens": _count(row.get("output_tokens")),
    }


def _requests(requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = [_request(row, position) for position, row in enumerate(requests)]
    return sorted(rows, key=lambda row: row["index"])


def _records(rows: list[dict[str, Any]]) -> list[RequestRecord]:
    return [
        RequestRecord(
            status=row["status"],
            error=row["error"],
            start_s=row["start_s"],
            ttft_ms=row["ttft_ms"],
            e2e_ms=row["e2e_ms"],
            tpot_ms=row["tpot_ms"],
            itl_ms=tuple(row["itl_ms"]),
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
        )
        for row in rows
    ]


# ---------------------------------------------------------------------------------------------------------------
# Our own JSON: the load generator's format


def _error_status(error: str | None) -> dict[str, Any]:
    """The load generator's status of a failed request, from the error text our importer wrote
    ("http_error(503): text", "timeout(ttft)"); a foreign tool's error becomes "http_error" without a code."""
    match = ERROR_TEXT.match(error or "")
    if match is None:
        return {"status": "http_error", "error": error}
    status, detail, text = match.group("status", "detail", "text")
    out: dict[str, Any] = {"status": status, "error": text}
    if status == "http_error" and detail is not None and detail.isdigit() and 100 <= int(detail) <= 599:
        out["http_status"] = int(detail)
    elif status == "timeout" and detail in TIMEOUT_PHASES:
        out["timeout_phase"] = detail
    elif detail is not None:
        out["error"] = error  # not a detail the format knows: keep the text whole
    return out


def _loadgen_request(row: Mapping[str, Any]) -> dict[str, Any]:
    if row["status"] == RequestStatus.OK.value:
        status: dict[str, Any] = {"status": "ok", "error": row["error"]}
    elif row["status"] == RequestStatus.INCOMPLETE.value:
        status = {"status": "incomplete_at_end", "error": row["error"]}
    else:
        status = _error_status(row["error"])
    return {
        "id": row["index"],
        **status,
        "t_sched_s": row["start_s"],
        "t_send_s": row["start_s"],
        "ttft_ms": row["ttft_ms"],
        "e2e_ms": row["e2e_ms"],
        "itl_ms": row["itl_ms"],
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
    }


def export_ours(run: Mapping[str, Any], requests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The run and its request records in our load generator's format with a `source` block (the module's docstring
    and docs/benchmark-export.md give the mapping); JSON-safe (no NaN or Infinity)."""
    moment = _moment(run.get("started_at"))
    rows = _requests(requests)
    load = run.get("load") if isinstance(run.get("load"), Mapping) else {}
    metrics = run.get("metrics") if isinstance(run.get("metrics"), Mapping) else {}
    duration = _number(run.get("duration_s"))
    rate, concurrency = _number(load.get("rate")), _count(load.get("concurrency"))
    starts = [row["start_s"] for row in rows if row["start_s"] is not None]
    ends = [value for value in (duration, max(starts, default=None)) if value is not None]
    window_end = max(ends) if ends else None
    engine = " ".join(part for part in (_text(run.get("engine")), _text(run.get("engine_version"))) if part)
    notes = []
    if rows:
        notes.append(
            "requests[].t_sched_s is t_send_s: the source tool did not record the scheduled send time, so "
            "the schedule lag of this file reads as zero."
        )
    if any(row["start_s"] is None for row in rows):
        notes.append("requests[].t_send_s is null where the source tool did not record when a request was sent.")
    if any(row["status"] == RequestStatus.ERROR.value and not ERROR_TEXT.match(row["error"] or "") for row in rows):
        notes.append(
            "A failed request whose kind of failure the source tool did not name is written as http_error "
            "without a code; its error text is the tool's."
        )
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tool": {"name": EXPORT_TOOL, "version": str(FORMAT_VERSION)},
        "source": {
            "tool": _text(run.get("tool")),
            "tool_version": _text(run.get("tool_version")),
            "format": _text(run.get("format")),
            "label": _text(run.get("label")),
            "name": _text(run.get("name")),
            "deployment": {
                "model": _text(run.get("model")),
                "gpu": _text(run.get("gpu")),
                "gpu_count": _count(run.get("gpu_count")),
                "tp": _count(run.get("tp")),
                "engine": _text(run.get("engine")),
                "engine_version": _text(run.get("engine_version")),
            },
            "notes": notes,
        },
        "run": {
            "started_at": _iso(moment) if moment is not None else None,
            "duration_s": duration,
            "load": {
                "kind": _text(load.get("kind")) or "unknown",
                "rate": rate if rate is not None and rate > 0 else None,
                "concurrency": concurrency if concurrency is not None and concurrency >= 1 else None,
            },
            "endpoint": {
                "kind": _text(run.get("backend")) or "unknown",
                "model": _text(run.get("model_name")) or _text(run.get("model")) or "unknown",
                "engine": engine or None,
            },
            "settings": nonfinite_as_null(dict(run.get("settings") or {})),
            "window": {"start_s": 0.0, "end_s": window_end},
        },
        "requests": [_loadgen_request(row) for row in rows],
        "summary": {
            "completed": _count(run.get("completed")),
            "failed": _count(run.get("failed")),
            "incomplete": _count(run.get("incomplete")),
            "request_count": len(rows),
            "output_tokens_per_s": _number(run.get("output_tokens_per_s")),
            "requests_per_s": _number(run.get("requests_per_s")),
            "total_tokens_per_s": _number(run.get("total_tokens_per_s")),
            "metrics": {
                str(key): stat
                for key, stat in ((key, _stat(value)) for key, value in metrics.items())
                if stat is not None
            },
            "reported": nonfinite_as_null(dict(run.get("reported") or {})),
            "notes": [str(note) for note in (run.get("notes") or ())],
        },
    }


# ---------------------------------------------------------------------------------------------------------------
# llm-d Benchmark Report v0.2


def _statistics(stat: Mapping[str, Any] | None, units: str, factor: float = 1.0) -> dict[str, Any] | None:
    """An llm-d `Statistics` (units and mean required) of one of our Stat dicts; percentiles marked insufficient
    are left out."""
    if not stat or stat.get("mean") is None:
        return None
    skip = set(stat.get("insufficient") or ())
    out: dict[str, Any] = {"units": units, "mean": stat["mean"] * factor}
    if stat.get("std") is not None and stat["std"] >= 0:
        out["stddev"] = stat["std"] * factor
    for key in ("min", "p50", "p90", "p95", "p99", "max"):
        if stat.get(key) is not None and key not in skip:
            out[key] = stat[key] * factor
    return out


def _sequence_length(stat: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """llm-d `SequenceLength` of a measured token-count distribution."""
    if not stat or stat.get("mean") is None or stat["mean"] < 0:
        return None
    low, high = stat.get("min"), stat.get("max")
    fixed = low is not None and high is not None and low == high
    out: dict[str, Any] = {"distribution": "fixed" if fixed else "other", "value": stat["mean"]}
    if stat.get("std") is not None and stat["std"] >= 0 and not fixed:
        out["std_dev"] = stat["std"]
    if low is not None and low >= 0:
        out["min"] = math.floor(low)
    if high is not None and high >= 1:
        out["max"] = math.ceil(high)
    return out


def _engine_component(run: Mapping[str, Any]) -> dict[str, Any] | None:
    engine, version = _text(run.get("engine")), _text(run.get("engine_version"))
    model = _text(run.get("model_name")) or _text(run.get("model"))
    gpu, gpu_count, tp = _text(run.get("gpu")), _count(run.get("gpu_count")), _count(run.get("tp"))
    if not (engine or model or gpu):
        return None
    if tp is None and gpu_count == 1:
        tp = 1
    accelerator: dict[str, Any] = {"model": gpu} if gpu else {}
    if gpu_count is not None:
        accelerator["count"] = gpu_count
    if tp:
        accelerator["parallelism"] = {"tp": tp}
    one_engine = bool(model and gpu and gpu_count and tp and gpu_count == tp)
    standardized: dict[str, Any] = {
        "kind": "inference_engine" if one_engine else "generic",
        "tool": engine or "",
        "tool_version": version or "",
    }
    if one_engine:
        standardized |= {"role": "replica", "replicas": 1}
    if model:
        standardized["model"] = {"name": model}
    if accelerator:
        standardized["accelerator"] = accelerator
    return {
        "metadata": {
            "schema_version": LLM_D_COMPONENT_SCHEMA,
            "label": "inference-engine",
            "cfg_id": _digest(standardized),
        },
        "standardized": standardized,
        "native": {},
    }


def _load(run: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    input_seq_len = _sequence_length(metrics.get("input_tokens"))
    if input_seq_len is None:
        return None  # the schema requires the input length
    tool = _text(run.get("tool")) or ""
    load = run.get("load") if isinstance(run.get("load"), Mapping) else {}
    standardized: dict[str, Any] = {
        "tool": LLM_D_TOOLS.get(tool, tool.replace("_", "-")),
        "tool_version": _text(run.get("tool_version")) or "",
        "source": "unknown",
        "input_seq_len": input_seq_len,
    }
    rate, concurrency = _number(load.get("rate")), _count(load.get("concurrency"))
    if rate is not None and rate > 0:
        standardized["rate_qps"] = rate
    if concurrency is not None and concurrency >= 1:
        standardized["concurrency"] = concurrency
    settings = nonfinite_as_null(dict(run.get("settings") or {}))
    return {
        "metadata": {"schema_version": LLM_D_COMPONENT_SCHEMA, "cfg_id": _digest(settings)},
        "standardized": standardized,
        "native": {"config": settings} if settings else {},
    }


def _run_block(run: Mapping[str, Any]) -> dict[str, Any]:
    uid = _text(run.get("uid")) or str(
        uuid.uuid5(
            uuid.NAMESPACE_URL,
            "llm-sizing:benchmark-run:" + _digest({key: value for key, value in run.items() if key != "uid"}),
        )
    )
    block: dict[str, Any] = {"uid": uid}
    moment, duration = _moment(run.get("started_at")), _number(run.get("duration_s"))
    time: dict[str, Any] = {}
    if moment is not None:
        time["start"] = _iso(moment)
        if duration is not None and duration >= 0:
            time["end"] = _iso(moment + dt.timedelta(seconds=duration))
    if duration is not None and duration >= 0:
        time["duration"] = _iso_duration(duration)
    if time:
        block["time"] = time
    if _text(run.get("name")):
        block["description"] = _text(run.get("name"))
    return block


def export_llm_d(run: Mapping[str, Any], requests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The run as an llm-d Benchmark Report v0.2 (a dict to write as JSON or YAML); the module's docstring gives the
    mapping. Request records fill in counts and metrics the run lacks; they are not themselves exported."""
    rows = _requests(requests)
    stored = run.get("metrics") if isinstance(run.get("metrics"), Mapping) else {}
    metrics = {key: stat for key, stat in ((key, _stat(stored.get(key))) for key in METRIC_KEYS) if stat is not None}
    missing = [key for key in METRIC_KEYS if key not in metrics]
    if rows and missing:
        recomputed = metrics_from_requests(_records(rows))
        metrics |= {key: _stat(recomputed[key].as_dict()) for key in missing if key in recomputed}

    completed, failed, incomplete = (_count(run.get(key)) for key in ("completed", "failed", "incomplete"))
    if completed is None and rows:
        by_status = [row["status"] for row in rows]
        completed = by_status.count(RequestStatus.OK.value)
        failed = by_status.count(RequestStatus.ERROR.value) if failed is None else failed
        incomplete = by_status.count(RequestStatus.INCOMPLETE.value) if incomplete is None else incomplete

    aggregate: dict[str, Any] = {}
    if completed is not None:
        requests_block: dict[str, Any] = {"total": completed + (failed or 0) + (incomplete or 0)}
        if failed is not None:
            requests_block["failures"] = failed
        if incomplete is not None:
            requests_block["incomplete"] = incomplete
        for key, field in (("input_tokens", "input_length"), ("output_tokens", "output_length")):
            statistics = _statistics(metrics.get(key), "count")
            if statistics is not None:
                requests_block[field] = statistics
        aggregate["requests"] = requests_block
    latency = {
        field: statistics
        for key, field, units, factor in LLM_D_LATENCY
        if (statistics := _statistics(metrics.get(key), units, factor)) is not None
    }
    if latency:
        aggregate["latency"] = latency
    throughput = {
        field: {"units": units, "mean": value}
        for key, field, units in LLM_D_THROUGHPUT
        if (value := _number(run.get(key))) is not None
    }
    if throughput:
        aggregate["throughput"] = throughput

    report: dict[str, Any] = {"version": LLM_D_VERSION, "run": _run_block(run)}
    scenario: dict[str, Any] = {}
    component = _engine_component(run)
    if component is not None:
        scenario["stack"] = [component]
    load = _load(run, metrics)
    if load is not None:
        scenario["load"] = load
    if scenario:
        report["scenario"] = scenario
    report["results"] = {"request_performance": {"aggregate": aggregate}} if aggregate else {}
    return report

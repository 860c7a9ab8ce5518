"""The result document of a run, in this service's format (`docs/loadgen-result.md`, version 1).

The format itself is `schemas.ResultDocument` (its JSON Schema is docs/loadgen-result.schema.json): this module
builds the document as plain JSON values, in the model's field order, and `result_document` validates it with the
model before anyone writes it, so the writer cannot drift from the format. The JSON text is that of the dict (the
model converts, e.g. a criterion of 500 to 500.0; the file keeps what the plan said).

Rules:

- t = 0 is the run's start on the monotonic clock; `run.started_at` is the wall clock (UTC) at that moment.
  Instants are seconds from t = 0 rounded to the microsecond; latencies are milliseconds rounded to the microsecond.
- Every request that was sent is written, whatever its status (the importer picks the window's by `t_send_s`).
- `chunk_tokens` is written only when the server gave running usage on every content event.
- `summary` holds what the generator computed itself (counts, client fidelity, percentiles over the window, the
  validation counters); the importer recomputes its figures from the requests and keeps this as reported.
- `server_metrics` (only with `plan.metrics`) holds every scrape: `t_s` on the requests' t = 0, `time` its wall
  clock (ISO 8601 UTC), and the kept exposition lines (`text`) or why it failed (`error`); `faults` one event per
  planned fault (skipped ones too); `scenario` the plan's scenario as given.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from llm_sizing_loadgen import TOOL_NAME, __version__
from llm_sizing_loadgen.client import RequestResult, Status
from llm_sizing_loadgen.faults import FaultEvent
from llm_sizing_loadgen.plan import LoadMode
from llm_sizing_loadgen.prompts import NONCE_WORDS
from llm_sizing_loadgen.runner import RunOutcome
from llm_sizing_loadgen.schemas import RESULT_FORMAT, RESULT_VERSION, ResultDocument
from llm_sizing_loadgen.scrape import ScrapeSample
from llm_sizing_loadgen.workload import ArrivalKind

PERCENTILE_MIN_N = {"p50": 1, "p90": 10, "p95": 20, "p99": 100}  # METRICS.md: never p99 with n < 100


def _ms(nanoseconds: int | None) -> float | None:
    return None if nanoseconds is None else round(nanoseconds / 1e6, 3)


def request_entry(record: RequestResult, t0_ns: int) -> dict[str, Any]:
    """One request as the result format writes it."""
    status = record.status or Status.INCOMPLETE_AT_END
    t_send = record.t_send_ns if record.t_send_ns is not None else record.t_sched_ns
    first = record.event_ns[0] if record.event_ns else None
    entry: dict[str, Any] = {
        "id": record.index,
        "status": status.value,
        "error": record.error,
        "http_status": record.http_status,
        "timeout_phase": record.timeout_phase,
        "t_sched_s": round((record.t_sched_ns - t0_ns) / 1e9, 6),
        "t_send_s": round((t_send - t0_ns) / 1e9, 6),
        "ttft_ms": _ms(first - t_send) if first is not None else None,
        "ttft_sched_ms": _ms(first - record.t_sched_ns) if first is not None else None,
        "e2e_ms": _ms(record.t_end_ns - t_send) if record.t_end_ns is not None else None,
        "itl_ms": [round((b - a) / 1e6, 3) for a, b in itertools.pairwise(record.event_ns)],
        "input_tokens": record.input_tokens,
        "input_tokens_sent": record.input_tokens_sent,
        "output_tokens": record.output_tokens,
        "output_tokens_source": record.output_tokens_source,
        "cached_tokens": record.cached_tokens,
        "finish_reason": record.finish_reason,
    }
    chunks = record.chunk_tokens
    if chunks is not None:
        entry["chunk_tokens"] = chunks
    return entry


def _stat(values: Sequence[float]) -> dict[str, Any]:
    """n, mean and the percentiles METRICS.md allows for this n (linear interpolation); the others are null."""
    if not values:
        return {"n": 0}
    array = np.asarray(values, dtype=np.float64)
    stat: dict[str, Any] = {"n": len(values), "mean": round(float(array.mean()), 3)}
    for name, minimum in PERCENTILE_MIN_N.items():
        stat[name] = round(float(np.percentile(array, int(name[1:]))), 3) if len(values) >= minimum else None
    return stat


def _settings(outcome: RunOutcome) -> dict[str, Any]:
    plan = outcome.plan
    load = plan.load
    settings: dict[str, Any] = {
        "dataset": "random" if plan.requests.fixed else "profile",
        "ignore_eos": plan.ignore_eos,
        "min_tokens": plan.min_tokens,
        "stream": plan.stream,
        "continuous_usage_stats": plan.continuous_usage_stats,
        "seed": plan.seed,
        "warmup_s": plan.warmup_s,
        "cooldown_s": plan.cooldown_s,
        "ramp_up_s": load.ramp_up_s,
        "max_requests": plan.bounds.max_requests,
        "max_duration_s": plan.bounds.max_duration_s,
        "timeout_s": {
            "connect": plan.timeouts.connect_s,
            "ttft": plan.timeouts.ttft_s,
            "stream": plan.timeouts.stream_s,
        },
        "prompt": f"synthetic: common English words, about one token each, the first {NONCE_WORDS} unique per "
        "request; usage.prompt_tokens is authoritative",
        "plan": plan.to_dict(),
    }
    if plan.name:
        settings["name"] = plan.name
    if outcome.label:
        settings["sweep_point"] = outcome.label
    if plan.requests.fixed:
        cls = plan.requests.profile.classes[0]
        settings["input_len"] = round(cls.input.mean)
        settings["output_len"] = round(cls.output.mean)
    else:
        settings["profile"] = plan.requests.profile.name
        settings["hour"] = plan.requests.hour
    if load.mode is LoadMode.OPEN:
        settings["arrival"] = load.arrival.value
        if load.arrival is ArrivalKind.BURST:
            settings["burst"] = {
                "requests": load.burst_requests,
                "window_s": load.burst_window_s,
                "at_s": load.burst_at_s,
            }
    return settings


def result_document(outcome: RunOutcome) -> dict[str, Any]:
    """The result of one run as a JSON-ready dict, validated with `schemas.ResultDocument` (a pydantic
    ValidationError here is a bug of this module, never of the run)."""
    plan = outcome.plan
    t0 = outcome.t0_ns
    load: dict[str, Any]
    if plan.load.mode is LoadMode.CLOSED:
        load = {"kind": "concurrency", "rate": None, "concurrency": plan.load.concurrency}
    else:
        arrival = plan.load.arrival.value if plan.load.arrival is not ArrivalKind.BURST else None
        load = {"kind": "rate", "rate": plan.load.rate, "concurrency": plan.load.concurrency, "arrival": arrival}
    endpoint: dict[str, Any] = {"kind": plan.endpoint.kind, "model": plan.endpoint.model}
    if plan.endpoint.engine:
        endpoint["engine"] = plan.endpoint.engine
    start_s, end_s = outcome.window_s
    document: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "version": RESULT_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "run": {
            "started_at": outcome.started_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "duration_s": round(max(0.0, outcome.seconds(outcome.end_ns)), 6),
            "load": load,
            "endpoint": endpoint,
            "settings": _settings(outcome),
            "window": {"start_s": round(start_s, 6), "end_s": round(end_s, 6)},
        },
        "requests": [request_entry(record, t0) for record in outcome.records],
        "summary": summary(outcome),
    }
    if plan.metrics is not None:
        document["server_metrics"] = {
            "url": plan.metrics.url,
            "interval_s": plan.metrics.interval_s,
            "engine": plan.metrics.engine,
            "scrapes": [scrape_entry(sample) for sample in outcome.scrapes],
        }
    if plan.faults:
        document["faults"] = [fault_entry(event) for event in outcome.fault_events]
    if plan.scenario is not None:
        document["scenario"] = {
            "kind": plan.scenario.kind,
            "peak_concurrency": plan.scenario.peak_concurrency,
            "criteria": dict(plan.scenario.criteria),
        }
    ResultDocument.model_validate(document)
    return document


def iso_utc(posix_s: float) -> str:
    """POSIX seconds as ISO 8601 UTC with microseconds, the way `run.started_at` is written.

    >>> iso_utc(1767225600.25)
    '2026-01-01T00:00:00.250000Z'
    """
    return datetime.fromtimestamp(posix_s, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def scrape_entry(sample: ScrapeSample) -> dict[str, Any]:
    """One scrape as the result writes it: `text` when it worked, `error` when it failed.

    >>> scrape_entry(ScrapeSample(t_s=1.5, time=1767225601.5, text=None, error="HTTP 503"))
    {'t_s': 1.5, 'time': '2026-01-01T00:00:01.500000Z', 'error': 'HTTP 503'}
    """
    entry: dict[str, Any] = {"t_s": sample.t_s, "time": iso_utc(sample.time)}
    if sample.error is not None:
        entry["error"] = sample.error
    else:
        entry["text"] = sample.text or ""
    return entry


def fault_entry(event: FaultEvent) -> dict[str, Any]:
    """One fault event as the result writes it."""
    return {
        "t_s": event.t_s,
        "label": event.label,
        "kind": event.kind,
        "ok": event.ok,
        "detail": event.detail,
        "duration_s": event.duration_s,
        "skipped": event.skipped,
    }


def summary(outcome: RunOutcome) -> dict[str, Any]:
    """What the generator computed over the window (requests chosen by send time)."""
    t0 = outcome.t0_ns
    start_s, end_s = outcome.window_s
    start_ns, end_ns = t0 + round(start_s * 1e9), t0 + round(end_s * 1e9)  # round: int() can drop the last send
    records = outcome.records
    inside = [r for r in records if r.t_send_ns is not None and start_ns <= r.t_send_ns <= end_ns]
    ok = [r for r in inside if r.status is Status.OK]
    statuses = Counter((r.status or Status.INCOMPLETE_AT_END).value for r in records)
    incomplete = sum(1 for r in inside if r.status is Status.INCOMPLETE_AT_END)
    fidelity = outcome.fidelity
    ttft = [r.ttft_ns / 1e6 for r in ok if r.ttft_ns is not None]
    ttft_sched = [(r.event_ns[0] - r.t_sched_ns) / 1e6 for r in ok if r.event_ns]
    tpot = [value for r in ok if (value := r.tpot_ms) is not None]
    e2e = [(r.t_end_ns - r.t_send_ns) / 1e6 for r in ok if r.t_end_ns is not None and r.t_send_ns is not None]
    gaps = [(b - a) / 1e6 for r in ok for a, b in itertools.pairwise(r.event_ns)]
    length = end_s - start_s
    finished = sum(1 for r in ok if r.t_end_ns is not None and r.t_end_ns <= end_ns)
    notes = list(outcome.notes)
    if not fidelity.valid:
        notes.append("INVALID by METRICS.md's client fidelity: " + "; ".join(fidelity.reasons) + ".")
    no_usage = sum(
        1
        for r in records
        if r.status is not None and r.output_tokens is not None and r.output_tokens_source is None and r.event_ns
    )
    if no_usage:
        notes.append(
            f"{no_usage} request(s) had no usage in the response: their output tokens are the number of "
            "content events (one token each assumed)."
        )
    return {
        "stop_reason": outcome.stop_reason,
        "label": outcome.label or None,
        "statuses": dict(sorted(statuses.items())),
        "sent": len(records),
        "in_window": {
            "requests": len(inside),
            "completed": len(ok),
            "incomplete": incomplete,
            "failed": len(inside) - len(ok) - incomplete,
        },
        "requests_per_s": round(finished / length, 6) if length > 0 else None,
        "client_fidelity": {
            "valid": fidelity.valid,
            "reasons": list(fidelity.reasons),
            "lag_n": fidelity.lag_n,
            "schedule_lag_p50_ms": _round(fidelity.lag_p50_ms),
            "schedule_lag_p99_ms": _round(fidelity.lag_p99_ms),
            "offered_rate_per_s": _round(fidelity.offered_rate_per_s),
            "achieved_rate_per_s": _round(fidelity.achieved_rate_per_s),
            "achieved_ratio": _round(fidelity.achieved_ratio),
            "cpu_percent": _round(fidelity.cpu_percent),
            "closed_loop_idle_share": _round(fidelity.idle_share, 6),
        },
        "metrics": {
            "ttft_ms": _stat(ttft),
            "ttft_sched_ms": _stat(ttft_sched),
            "tpot_ms": _stat(tpot),
            "itl_ms": _stat(gaps),
            "e2e_ms": _stat(e2e),
        },
        "validation": {
            "over_max_tokens": sum(
                1
                for r in records
                if r.output_tokens is not None and r.output_tokens_source and r.output_tokens > r.output_tokens_target
            ),
            "no_usage": no_usage,
            "chunking_unknown": sum(1 for r in records if r.status is Status.OK and r.chunking_unknown),
        },
        "percentiles": "linear interpolation; p90/p95/p99 null below n = 10/20/100",
        "notes": notes,
    }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def result_json(document: dict[str, Any]) -> str:
    """The document as JSON text: the header indented, one request per line (readable, and diffs stay small)."""
    head = {key: value for key, value in document.items() if key != "requests"}
    text = json.dumps(head, indent=1, ensure_ascii=False)
    lines = ",\n".join(
        "  " + json.dumps(entry, separators=(",", ":"), ensure_ascii=False) for entry in document["requests"]
    )
    body = f'"requests": [\n{lines}\n ]' if lines else '"requests": []'
    return text[:-1].rstrip() + (",\n " if head else " ") + body + "\n}\n"


def result_paths(out: str | Path, labels: Sequence[str]) -> list[Path]:
    """Where each point's result goes: `out` itself for one point; `<stem>.<label><suffix>` for a sweep."""
    path = Path(out)
    if len(labels) <= 1:
        return [path]
    return [path.with_name(f"{path.stem}.{label}{path.suffix or '.json'}") for label in labels]


def write_result(outcome: RunOutcome, path: str | Path) -> Path:
    """Write the run's result document to `path` (atomically: a partial file never replaces a good one)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".partial")
    temporary.write_text(result_json(result_document(outcome)), encoding="utf-8")
    temporary.replace(target)
    return target

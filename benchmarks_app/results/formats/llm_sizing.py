"""Importer of this service's own load generator result (`"format": "llm-sizing-loadgen-result"`, version 1).

The format is defined in `docs/loadgen-result.md` and `docs/loadgen-result.schema.json`: one run, its wall-clock
anchor, load, endpoint, settings and measurement window, and one record per request with METRICS.md's timings
(`t_sched_s`, `t_send_s`, `ttft_ms`, `ttft_sched_ms`, `e2e_ms`, the inter-chunk gaps `itl_ms`, optional
`chunk_tokens`) and token counts from the server's usage.

The file is validated field by field (a refusal names the path: `requests[3].ttft_ms: not a number`), and every
figure is recomputed from the requests sent inside the window; the generator's own `summary` is kept in `reported`.

Traps handled here (none is the tool's fault: they are what a careless writer of the format could do):

- requests outside the measurement window (warm-up, cool-down) are left out, by their send time, and counted;
- `incomplete_at_end` is neither a success nor an error (METRICS.md); every other non-ok status is an error,
  including `truncated_prompt` and `short_output`, which did answer;
- without `chunk_tokens` one token per event is assumed; where `output_tokens` differs from the number of events
  the chunking is unknown (said in the notes) and the tokens are spread evenly over the events for the throughput;
- TPOT divides by `N_out − n_1`, the tokens after the first event, not by `N_out − 1`;
- `started_at` may carry any zone: it is normalised to UTC.

The optional blocks of a run with server metrics, faults or a scenario (issue 7) are read too, and validated the
same way: `server_metrics.scrapes` become `ImportedRun.timeline` (a `benchmarks_app.results.timeline.MemoryTimeline`, its
times POSIX seconds from each scrape's `time`; failed scrapes are left out and counted in the notes, never read as
zeros), `faults` become `ImportedRun.faults` with `t_s` moved onto the records' `start_s` clock (seconds after the
first request sent in the window; `run_t_s` keeps the file's seconds from t = 0), and `scenario` is kept as given.
A file without these blocks imports exactly as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from benchmarks_app.results.run import (
    FormatRefusal,
    ImportedRun,
    LoadKind,
    LoadPattern,
    RequestRecord,
    RequestStatus,
    finite,
    metrics_from_requests,
    stat_reported,
)
from benchmarks_app.results.timeline import MemoryTimeline, TimelineRefusal, parse_scrape_records
from sizing.kernel.jsonsafe import nonfinite_as_null

FORMAT = "llm_sizing"
FORMAT_NAME = "llm-sizing-loadgen-result"
VERSION = 1
STATUSES = ("ok", "http_error", "timeout", "client_cancel", "truncated_prompt", "short_output", "incomplete_at_end")
TIMEOUT_PHASES = ("connect", "ttft", "stream")
LOAD_KINDS = (LoadKind.RATE.value, LoadKind.CONCURRENCY.value, LoadKind.OFFLINE.value)
SCHEDULE_LAG_LIMIT_MS = 10.0  # METRICS.md: client fidelity is invalid above a 10 ms p99 schedule lag
ACHIEVED_RATE_FLOOR = 0.95  # ... or below 95% of the offered rate
TIME_TOLERANCE_MS = 1.0  # rounding slack when checking e2e ≥ ttft + Σ gaps
FAULT_KINDS = ("http", "command")


def _load_json(text: str) -> Any:
    # imported here, not at the top: `detect` imports every importer module while it loads
    from benchmarks_app.results.detect import load_json

    return load_json(text)


# ---------------------------------------------------------------------------------------------------------------
# Validation: each helper returns the value or raises FormatRefusal naming the field's path


def _refuse(path: str, problem: str) -> FormatRefusal:
    return FormatRefusal(f"{path}: {problem}")


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _refuse(path, f"not an object ({type(value).__name__})")
    return value


def _number(value: Any, path: str, *, optional: bool = False, minimum: float | None = None) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(path, f"not a number ({value!r})")
    number = float(value)
    if not math.isfinite(number):
        raise _refuse(path, "not a finite number")
    if minimum is not None and number < minimum:
        raise _refuse(path, f"{number:g} is below {minimum:g}")
    return number


def _real(value: Any, path: str, *, minimum: float | None = None) -> float:
    """A required number (see `_number`)."""
    number = _number(value, path, minimum=minimum)
    if number is None:  # pragma: no cover - _number refuses None unless optional
        raise _refuse(path, "missing")
    return number


def _integer(value: Any, path: str, *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(path, f"not a whole number ({value!r})")
    if value < 0:
        raise _refuse(path, f"{value} is negative")
    return value


def _text(value: Any, path: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not optional and not value):
        raise _refuse(path, f"not a text ({value!r})")
    return value


def _required(obj: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise _refuse(path, f"'{key}' is missing")
    return obj[key]


def _timestamp(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _refuse(path, f"not a text ({value!r})")
    text = value
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise _refuse(path, f"not an ISO 8601 date-time ({text!r})") from None
    if moment.tzinfo is None:
        raise _refuse(path, f"an ISO 8601 date-time without a zone ({text!r})")
    return moment.astimezone(UTC).isoformat()


def _posix(value: Any, path: str) -> float:
    """POSIX seconds of an ISO 8601 date-time with a zone (see `_timestamp`)."""
    return datetime.fromisoformat(_timestamp(value, path)).timestamp()


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _refuse(path, f"not true or false ({value!r})")
    return value


def _header(data: Mapping[str, Any]) -> None:
    if data.get("format") != FORMAT_NAME:
        found = data.get("format")
        raise FormatRefusal(
            f'a JSON object without \'"format": "{FORMAT_NAME}"\''
            + (f" (it says {found!r})" if found is not None else "")
        )
    version = data.get("version")
    if version != VERSION or isinstance(version, bool):
        raise FormatRefusal(f"version: {version!r} is not a version this service reads (it reads {VERSION})")


# ---------------------------------------------------------------------------------------------------------------
# The importer


def read(text: str) -> list[ImportedRun]:
    """The run of a load generator result file; FormatRefusal naming the first field that does not fit."""
    stripped = text.strip()
    if not stripped:
        raise FormatRefusal("the file is empty")
    if not stripped.startswith("{"):
        raise FormatRefusal(f"not a JSON object: a {FORMAT_NAME} file is one JSON object")
    if f'"{FORMAT_NAME}"' not in stripped[:4096]:
        # not ours: say so before a JSON error in someone else's file is reported as ours
        raise FormatRefusal(f'a file without \'"format": "{FORMAT_NAME}"\'')
    data = _load_json(text)  # the text as given: parsed once for every importer
    if not isinstance(data, Mapping):
        raise FormatRefusal(f"not a JSON object: a {FORMAT_NAME} file is one JSON object")
    _header(data)
    tool = _object(_required(data, "tool", "(top)"), "tool")
    tool_name = _text(_required(tool, "name", "tool"), "tool.name")
    tool_version = _text(_required(tool, "version", "tool"), "tool.version")
    run = _object(_required(data, "run", "(top)"), "run")
    started_at = _timestamp(_required(run, "started_at", "run"), "run.started_at")
    duration = _real(_required(run, "duration_s", "run"), "run.duration_s", minimum=0)
    load = _load(_object(_required(run, "load", "run"), "run.load"))
    endpoint = _object(_required(run, "endpoint", "run"), "run.endpoint")
    endpoint_kind = _text(_required(endpoint, "kind", "run.endpoint"), "run.endpoint.kind")
    model = _text(_required(endpoint, "model", "run.endpoint"), "run.endpoint.model")
    _text(endpoint.get("engine"), "run.endpoint.engine", optional=True)
    settings = dict(_object(run.get("settings") or {}, "run.settings"))
    window = _object(_required(run, "window", "run"), "run.window")
    window_start = _real(_required(window, "start_s", "run.window"), "run.window.start_s", minimum=0)
    window_end = _real(_required(window, "end_s", "run.window"), "run.window.end_s", minimum=0)
    if window_end <= window_start:
        raise _refuse("run.window", f"it ends ({window_end:g} s) before it starts ({window_start:g} s)")
    requests = _required(data, "requests", "(top)")
    if not isinstance(requests, list):
        raise _refuse("requests", f"not a list ({type(requests).__name__})")
    summary = data.get("summary")
    if summary is not None:
        _object(summary, "summary")
    parsed = [_request(item, f"requests[{index}]") for index, item in enumerate(requests)]
    timeline, timeline_notes = _server_metrics(data.get("server_metrics"))
    scenario = _scenario(data.get("scenario"))

    notes: list[str] = [
        "Recomputed from the file's per-request records by METRICS.md's definitions; the "
        "generator's own summary (if any) is kept in reported."
    ]
    inside = [item for item in parsed if window_start <= item["t_send_s"] <= window_end]
    outside = len(parsed) - len(inside)
    if outside:
        notes.append(
            f"{outside} request(s) sent outside the measurement window [{window_start:g}, {window_end:g}] s "
            "(warm-up or cool-down) are left out."
        )
    origin = min((item["t_send_s"] for item in inside), default=0.0)
    records = [_record(item, origin) for item in inside]
    faults = _faults(data.get("faults"), origin)
    unknown_chunking = sum(1 for item in inside if item["chunking_unknown"])
    if unknown_chunking:
        notes.append(
            f"{unknown_chunking} request(s) have no chunk_tokens and an output token count that differs "
            "from their number of content events: chunking unknown, one token assumed in the first event."
        )
    length = window_end - window_start
    rates = _throughputs(parsed, window_start, window_end)
    notes.append(
        f"Throughputs are over the measurement window ({length:g} s): requests per second count the ok "
        "requests completing in it; output tokens per second the tokens of the content events that arrived "
        "in it; total tokens per second add the input tokens of those ok requests."
    )
    notes += _fidelity(inside, load, window_start, window_end)

    completed = sum(1 for record in records if record.status == RequestStatus.OK.value)
    incomplete = sum(1 for record in records if record.status == RequestStatus.INCOMPLETE.value)
    failed = len(records) - completed - incomplete
    if not completed:
        notes.append("No request succeeded in the window: there are no latency distributions.")
    run_settings = {
        **nonfinite_as_null(settings),
        "endpoint": nonfinite_as_null(dict(endpoint)),
        "window": {"start_s": window_start, "end_s": window_end},
        "generator": {"name": tool_name, "version": tool_version},
    }
    notes += timeline_notes
    source = data.get("source")
    if isinstance(source, Mapping) and not records and isinstance(summary, Mapping):
        exported = _from_export(
            source,
            summary,
            started_at=started_at,
            duration=duration,
            load=load,
            model=model,
            backend=endpoint_kind,
            settings=run_settings,
        )
        return [
            replace(
                exported,
                timeline=timeline,
                faults=faults,
                scenario=scenario,
                notes=exported.notes + tuple(timeline_notes),
            )
        ]
    return [
        ImportedRun(
            format=FORMAT,
            tool="llm_sizing",
            tool_version=tool_version,
            label=None,
            model=model,
            backend=endpoint_kind,
            started_at=started_at,
            duration_s=duration,
            load=load,
            settings=run_settings,
            completed=completed,
            failed=failed,
            incomplete=incomplete,
            metrics=metrics_from_requests(records),
            reported=nonfinite_as_null(dict(summary or {})),
            output_tokens_per_s=rates[0],
            requests_per_s=rates[1],
            total_tokens_per_s=rates[2],
            requests=tuple(records),
            notes=tuple(notes),
            timeline=timeline,
            faults=faults,
            scenario=scenario,
        )
    ]


def _server_metrics(value: Any) -> tuple[MemoryTimeline | None, list[str]]:
    """The timeline of the `server_metrics` block (None without one, or when no scrape held a metric read) and the
    notes saying what was left out."""
    if value is None:
        return None, []
    block = _object(value, "server_metrics")
    url = _text(_required(block, "url", "server_metrics"), "server_metrics.url")
    interval = _real(_required(block, "interval_s", "server_metrics"), "server_metrics.interval_s", minimum=0)
    _text(block.get("engine"), "server_metrics.engine", optional=True)
    scrapes = _required(block, "scrapes", "server_metrics")
    if not isinstance(scrapes, list):
        raise _refuse("server_metrics.scrapes", f"not a list ({type(scrapes).__name__})")
    records: list[tuple[float, str]] = []
    positions: list[int] = []  # the file's index of each record
    failed: list[tuple[float, str]] = []
    for index, item in enumerate(scrapes):
        path = f"server_metrics.scrapes[{index}]"
        scrape = _object(item, path)
        t_s = _real(_required(scrape, "t_s", path), f"{path}.t_s")
        time_s = _posix(_required(scrape, "time", path), f"{path}.time")
        if ("text" in scrape) == ("error" in scrape):
            raise _refuse(path, "give exactly one of 'text' (the scrape) or 'error' (why it failed)")
        if "error" in scrape:
            failed.append((t_s, _text(scrape["error"], f"{path}.error") or ""))
            continue
        text = scrape["text"]
        if not isinstance(text, str):
            raise _refuse(f"{path}.text", f"not a text ({text!r})")
        records.append((time_s, text))
        positions.append(index)
    notes = [f"Server metrics: {len(scrapes)} scrape(s) of {url} every {interval:g} s."]
    if failed:
        first_t, first_error = failed[0]
        notes.append(
            f"{len(failed)} scrape(s) failed and are left out of the timeline (gaps, not zeros; first at "
            f"{first_t:g} s: {first_error[:200]})."
        )
    if not records:
        notes.append("No scrape succeeded: there is no server timeline.")
        return None, notes
    try:
        timeline = parse_scrape_records(records)
    except TimelineRefusal as refusal:
        found = re.match(r"scrape (\d+): (.*)", refusal.reason, re.DOTALL)
        if found:
            raise _refuse(f"server_metrics.scrapes[{positions[int(found.group(1))]}].text", found.group(2)) from None
        notes.append(
            "No scrape holds a metric a server timeline reads (vLLM, SGLang, TGI, TensorRT-LLM or DCGM "
            "names): there is no server timeline."
        )
        return None, notes
    return timeline, notes


def _faults(value: Any, origin: float) -> tuple[Mapping[str, Any], ...]:
    """The `faults` block's events, `t_s` moved onto the records' `start_s` clock (see the module docstring)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _refuse("faults", f"not a list ({type(value).__name__})")
    events = []
    for index, item in enumerate(value):
        path = f"faults[{index}]"
        event = _object(item, path)
        t_s = _real(_required(event, "t_s", path), f"{path}.t_s", minimum=0)
        label = _required(event, "label", path)
        if not isinstance(label, str):
            raise _refuse(f"{path}.label", f"not a text ({label!r})")
        kind = _required(event, "kind", path)
        if kind not in FAULT_KINDS:
            raise _refuse(f"{path}.kind", f"{kind!r} is not one of {', '.join(FAULT_KINDS)}")
        ok = _boolean(_required(event, "ok", path), f"{path}.ok")
        detail = _required(event, "detail", path)
        if not isinstance(detail, str):
            raise _refuse(f"{path}.detail", f"not a text ({detail!r})")
        duration = _real(_required(event, "duration_s", path), f"{path}.duration_s", minimum=0)
        skipped = _boolean(event.get("skipped", False), f"{path}.skipped")
        events.append(
            {
                "t_s": t_s - origin,
                "run_t_s": t_s,
                "label": label,
                "kind": kind,
                "ok": ok,
                "detail": detail,
                "duration_s": duration,
                "skipped": skipped,
            }
        )
    return tuple(events)


def _scenario(value: Any) -> Mapping[str, Any] | None:
    """The `scenario` block as given: kind, peak concurrency, criteria of numbers and booleans."""
    if value is None:
        return None
    block = _object(value, "scenario")
    kind = _text(_required(block, "kind", "scenario"), "scenario.kind")
    peak = block.get("peak_concurrency")
    if peak is not None and (isinstance(peak, bool) or not isinstance(peak, int) or peak < 1):
        raise _refuse("scenario.peak_concurrency", f"not a whole number ≥ 1 ({peak!r})")
    criteria = _object(block.get("criteria") or {}, "scenario.criteria")
    for key, figure in criteria.items():
        if not isinstance(figure, bool):
            _real(figure, f"scenario.criteria.{key}")
    return {"kind": kind, "peak_concurrency": peak, "criteria": dict(criteria)}


def _load(load: Mapping[str, Any]) -> LoadPattern:
    kind = _required(load, "kind", "run.load")
    if kind not in LOAD_KINDS:
        raise _refuse("run.load.kind", f"{kind!r} is not one of {', '.join(LOAD_KINDS)}")
    rate = _number(load.get("rate"), "run.load.rate", optional=True, minimum=0)
    concurrency = _integer(load.get("concurrency"), "run.load.concurrency")
    if kind == LoadKind.RATE.value and not rate:
        raise _refuse("run.load.rate", "an open-loop ('rate') run needs its offered rate")
    if kind == LoadKind.CONCURRENCY.value and not concurrency:
        raise _refuse("run.load.concurrency", "a closed-loop ('concurrency') run needs its number of clients")
    return LoadPattern(kind=kind, rate=rate, concurrency=concurrency)


def _request(item: Any, path: str) -> dict[str, Any]:
    obj = _object(item, path)
    status = _required(obj, "status", path)
    if status not in STATUSES:
        raise _refuse(f"{path}.status", f"{status!r} is not one of {', '.join(STATUSES)}")
    error = _text(obj.get("error"), f"{path}.error", optional=True)
    http_status = _integer(obj.get("http_status"), f"{path}.http_status")
    phase = obj.get("timeout_phase")
    if phase is not None and phase not in TIMEOUT_PHASES:
        raise _refuse(f"{path}.timeout_phase", f"{phase!r} is not one of {', '.join(TIMEOUT_PHASES)}")
    t_sched = _real(_required(obj, "t_sched_s", path), f"{path}.t_sched_s")
    t_send = _real(_required(obj, "t_send_s", path), f"{path}.t_send_s")
    ttft = _number(_required(obj, "ttft_ms", path), f"{path}.ttft_ms", optional=True, minimum=0)
    ttft_sched = _number(obj.get("ttft_sched_ms"), f"{path}.ttft_sched_ms", optional=True, minimum=0)
    e2e = _number(_required(obj, "e2e_ms", path), f"{path}.e2e_ms", optional=True, minimum=0)
    gaps_value = _required(obj, "itl_ms", path)
    if not isinstance(gaps_value, list):
        raise _refuse(f"{path}.itl_ms", f"not a list ({type(gaps_value).__name__})")
    gaps = [_real(gap, f"{path}.itl_ms[{index}]", minimum=0) for index, gap in enumerate(gaps_value)]
    chunks_value = obj.get("chunk_tokens")
    chunks: list[int] | None = None
    if chunks_value is not None:
        if not isinstance(chunks_value, list):
            raise _refuse(f"{path}.chunk_tokens", f"not a list ({type(chunks_value).__name__})")
        chunks = [
            _integer(n, f"{path}.chunk_tokens[{index}]", optional=False) or 0 for index, n in enumerate(chunks_value)
        ]
        if ttft is not None and len(chunks) != len(gaps) + 1:
            raise _refuse(f"{path}.chunk_tokens", f"{len(chunks)} events for {len(gaps)} gaps (it needs gaps + 1)")
    input_tokens = _integer(_required(obj, "input_tokens", path), f"{path}.input_tokens")
    _integer(obj.get("input_tokens_sent"), f"{path}.input_tokens_sent")
    output_tokens = _integer(_required(obj, "output_tokens", path), f"{path}.output_tokens")
    _integer(obj.get("cached_tokens"), f"{path}.cached_tokens")
    _text(obj.get("finish_reason"), f"{path}.finish_reason", optional=True)
    if status == "ok":
        for key, value in (("ttft_ms", ttft), ("e2e_ms", e2e), ("output_tokens", output_tokens)):
            if value is None:
                raise _refuse(f"{path}.{key}", "an ok request needs it")
    if ttft is not None and e2e is not None:
        if e2e + TIME_TOLERANCE_MS < ttft + sum(gaps):
            raise _refuse(f"{path}.e2e_ms", f"{e2e:g} ms ends before its last chunk ({ttft + sum(gaps):g} ms)")
    if gaps and ttft is None:
        raise _refuse(f"{path}.itl_ms", "gaps without a first token (ttft_ms is null)")
    events = len(gaps) + 1 if ttft is not None else 0
    chunking_unknown = (
        chunks is None and status == "ok" and output_tokens is not None and events > 0 and output_tokens != events
    )
    return {
        "status": status,
        "error": error,
        "http_status": http_status,
        "timeout_phase": phase,
        "id": obj["id"] if isinstance(obj.get("id"), int) and not isinstance(obj.get("id"), bool) else None,
        "t_sched_s": t_sched,
        "t_send_s": t_send,
        "ttft_ms": ttft,
        "ttft_sched_ms": ttft_sched,
        "e2e_ms": e2e,
        "itl_ms": gaps,
        "chunk_tokens": chunks,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "chunking_unknown": chunking_unknown,
    }


def _status(item: Mapping[str, Any]) -> tuple[str, str | None]:
    status = item["status"]
    if status == "ok":
        return RequestStatus.OK.value, None
    if status == "incomplete_at_end":
        return RequestStatus.INCOMPLETE.value, None
    detail = status
    if status == "http_error" and item["http_status"] is not None:
        detail = f"http_error({item['http_status']})"
    elif status == "timeout" and item["timeout_phase"]:
        detail = f"timeout({item['timeout_phase']})"
    return RequestStatus.ERROR.value, f"{detail}: {item['error']}" if item["error"] else detail


def _record(item: Mapping[str, Any], origin: float) -> RequestRecord:
    status, error = _status(item)
    gaps: list[float] = item["itl_ms"]
    chunks: list[int] | None = item["chunk_tokens"]
    first = chunks[0] if chunks else 1
    output = item["output_tokens"]
    tpot = None
    if status == RequestStatus.OK.value and gaps and output is not None and output - first >= 1:
        tpot = sum(gaps) / (output - first)
    return RequestRecord(
        status=status,
        error=error,
        start_s=item["t_send_s"] - origin,
        ttft_ms=item["ttft_ms"],
        ttft_sched_ms=item["ttft_sched_ms"],
        e2e_ms=item["e2e_ms"],
        tpot_ms=tpot,
        itl_ms=tuple(gaps),
        input_tokens=item["input_tokens"],
        output_tokens=output,
    )


def _event_tokens(item: Mapping[str, Any]) -> list[tuple[float, float]]:
    """(arrival time in seconds from t = 0, tokens) of each content event of a request."""
    if item["ttft_ms"] is None:
        return []
    time = item["t_send_s"] + item["ttft_ms"] / 1000
    times = [time]
    for gap in item["itl_ms"]:
        time += gap / 1000
        times.append(time)
    chunks = item["chunk_tokens"]
    if chunks is not None:
        tokens: Sequence[float] = [float(n) for n in chunks]
    elif item["output_tokens"] is not None and item["output_tokens"] != len(times):
        tokens = [item["output_tokens"] / len(times)] * len(times)
    else:
        tokens = [1.0] * len(times)
    return list(zip(times, tokens, strict=True))


def _throughputs(items: Sequence[Mapping[str, Any]], start: float, end: float) -> tuple[float, float, float]:
    """(output tokens/s, requests/s, total tokens/s) over the window, by METRICS.md."""
    length = end - start
    generated = sum(tokens for item in items for time, tokens in _event_tokens(item) if start <= time <= end)
    finished = [
        item
        for item in items
        if item["status"] == "ok"
        and item["e2e_ms"] is not None
        and start <= item["t_send_s"] + item["e2e_ms"] / 1000 <= end
    ]
    inputs = sum(item["input_tokens"] or 0 for item in finished)
    return generated / length, len(finished) / length, (generated + inputs) / length


def _fidelity(items: Sequence[Mapping[str, Any]], load: LoadPattern, start: float, end: float) -> list[str]:
    """METRICS.md's client fidelity: schedule lag p50/p99 and achieved versus offered rate for an open loop; for a
    closed loop (no schedule to be late for) the share of the clients' time lost between requests, Σ lag /
    Σ (lag + E2E), above 5% meaning fewer than 95% of the clients were busy (the generator's rule, recomputed)."""
    if not items:
        return []
    lags = np.asarray([(item["t_send_s"] - item["t_sched_s"]) * 1000 for item in items], dtype=np.float64)
    p50, p99 = (float(value) for value in np.percentile(lags, [50, 99]))
    notes = [f"Client schedule lag (t_send − t_sched): p50 {p50:.2f} ms, p99 {p99:.2f} ms."]
    if load.kind == LoadKind.CONCURRENCY.value:
        steady = [
            item
            for item in items
            if item["e2e_ms"] is not None and (item.get("id") is None or item["id"] >= (load.concurrency or 1))
        ]  # first ones: connecting
        lag_total = sum(max(0.0, (item["t_send_s"] - item["t_sched_s"]) * 1000) for item in steady)
        busy = lag_total + sum(max(0.0, item["e2e_ms"]) for item in steady)
        idle = lag_total / busy if busy > 0 else 0.0
        notes.append(f"Closed loop: the clients were idle {idle:.2%} of their time between requests.")
        if idle > 1 - ACHIEVED_RATE_FLOOR:
            notes.append(
                f"INVALID by METRICS.md: fewer than {ACHIEVED_RATE_FLOOR:.0%} of the requested clients were "
                "busy (the generator's delay between requests)."
            )
        return notes
    if p99 > SCHEDULE_LAG_LIMIT_MS:
        notes.append(
            f"INVALID by METRICS.md: the schedule lag p99 exceeds {SCHEDULE_LAG_LIMIT_MS:g} ms, so the "
            "client did not send the load it was asked to."
        )
    if load.kind == LoadKind.RATE.value and load.rate:
        achieved = len(items) / (end - start)
        notes.append(f"Achieved send rate {achieved:.3g}/s for an offered {load.rate:.3g}/s.")
        if achieved < ACHIEVED_RATE_FLOOR * load.rate:
            notes.append(
                f"INVALID by METRICS.md: the achieved send rate is below {ACHIEVED_RATE_FLOOR:.0%} of the offered rate."
            )
    return notes


def _from_export(source: Mapping[str, Any], summary: Mapping[str, Any], **run: Any) -> ImportedRun:
    """A summary-only run exported by this service (its `source` block names the original tool): the summary's
    counts, throughputs and metrics as they were stored, since there are no records to recompute them from."""
    metrics = {}
    for key, value in (summary.get("metrics") or {}).items():
        if isinstance(value, Mapping):
            fields = {name: value.get(name) for name in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std")}
            stat = stat_reported(n=value.get("n") if isinstance(value.get("n"), int) else None, **fields)
            if stat is not None:
                metrics[key] = replace(stat, source=str(value.get("source") or stat.source))
    notes = [str(note) for note in summary.get("notes") or [] if isinstance(note, str)]
    notes.append(
        f"Re-imported from this service's export of a {source.get('tool') or 'tool'} run without "
        "per-request records: counts and metrics as the export stored them."
    )

    def number(key: str) -> float | None:
        return finite(summary.get(key))

    def count(key: str) -> int | None:
        value = summary.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    return ImportedRun(
        format=FORMAT,
        tool=str(source.get("tool") or "llm_sizing"),
        tool_version=source.get("tool_version") if isinstance(source.get("tool_version"), str) else None,
        label=source.get("label") if isinstance(source.get("label"), str) else None,
        model=run["model"],
        backend=run["backend"],
        started_at=run["started_at"],
        duration_s=run["duration"],
        load=run["load"],
        settings=run["settings"],
        completed=count("completed"),
        failed=count("failed"),
        incomplete=count("incomplete"),
        metrics=metrics,
        reported=nonfinite_as_null(dict(summary.get("reported") or {})),
        output_tokens_per_s=number("output_tokens_per_s"),
        requests_per_s=number("requests_per_s"),
        total_tokens_per_s=number("total_tokens_per_s"),
        notes=tuple(notes),
    )


def record_from_entry(entry: Mapping[str, Any], *, origin: float = 0.0) -> RequestRecord:
    """One request entry of our result format as a RequestRecord, checked like the importer checks it (its
    `start_s` is `t_send_s − origin`): the load-test worker stores requests with it as they finish."""
    return _record(_request(entry, "request"), origin)

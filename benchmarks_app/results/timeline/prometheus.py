"""GPU memory and server timelines from Prometheus text expositions, several scrapes concatenated or given one by
one (the DCGM exporter's figures: `dcgm`; the inference servers': `servers`; the layouts read: the package
docstring). Pure Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import Any

from benchmarks_app.results.timeline.common import (
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    TimelineEvent,
    TimelineFormat,
    TimelineRefusal,
    natural_key,
    parse_time,
    time_sorted,
    try_time,
)
from benchmarks_app.results.timeline.dcgm import DCGM, gpu_key, gpu_sample, identity, note_identity, xid_event
from benchmarks_app.results.timeline.servers import (
    SERVER,
    SERVER_LABELLED,
    counter_restarts,
    server_instance,
    server_metric,
    server_sample,
)
from sizing.kernel.json_limits import loads as bounded_loads

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_MARKER = re.compile(r"^#\s*(?:scrape|time|timestamp)\s*[:=]?\s*(\S.*?)\s*$", re.IGNORECASE)
_BARE_TIME = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?|\d{10}(?:\.\d+)?|"
    r"\w{3} \w{3} +\d+ \d{2}:\d{2}:\d{2}(?: \w+)? \d{4})$"
)


@dataclass
class _Scrape:
    time_s: float | None
    samples: list[tuple[str, dict[str, str], float, float | None]] = field(default_factory=list)


def _labels(text: str | None) -> dict[str, str] | None:
    if not text:
        return {}
    inner = text[1:-1]
    found: dict[str, str] = {}
    position = 0
    while position < len(inner):
        match = _LABEL.match(inner, position)
        if not match:
            return None if inner[position:].strip() else found
        found[match.group(1)] = match.group(2).replace('\\"', '"').replace("\\\\", "\\")
        position = match.end()
    return found


def _prom_value(text: str) -> float | None:
    lowered = text.lower()
    if lowered in ("nan", "+inf", "inf", "-inf"):
        return None
    return float(text)


def looks_like_prometheus(text: str) -> bool:
    for line in text.splitlines()[:400]:
        stripped = line.strip()
        if stripped.startswith(("# TYPE ", "# HELP ")):
            return True
        match = _SAMPLE.match(stripped)
        if match and (
            match.group(1) in DCGM
            or match.group(1) in SERVER
            or match.group(1) in SERVER_LABELLED
            or match.group(1).startswith(("vllm:", "sglang:", "DCGM_FI_", "tgi_", "trtllm_", "nv_trt_llm_"))
        ):
            return True
    return False


def scrape_record(value: Any, *, tz: tzinfo = UTC) -> tuple[float, str] | None:
    """(POSIX seconds, exposition) of a JSON-lines scrape record; a time without a zone is in `tz`."""
    if not isinstance(value, dict):
        return None
    when = value.get("time", value.get("timestamp"))
    body = value.get("text", value.get("body"))
    if when is None or not isinstance(body, str):
        return None
    try:
        return (float(when) if isinstance(when, int | float) else parse_time(str(when), tz=tz)), body
    except ValueError:
        return None


def _split_scrapes(text: str, *, tz: tzinfo) -> tuple[list[_Scrape], bool, list[str]]:
    """The scrapes of a text (marker-line or JSON-lines layout), whether the text was cut at its end, and notes."""
    notes: list[str] = []
    stripped = text.strip()
    lines = stripped.splitlines()
    if stripped.startswith("{"):
        scrapes: list[_Scrape] = []
        truncated = False
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = scrape_record(bounded_loads(line), tz=tz)
            except json.JSONDecodeError:
                record = None
                if number == len(lines):
                    truncated = True
                    notes.append(f"the last line ({number}) is cut short: that scrape was left out")
                    continue
            if record is None:
                raise TimelineRefusal(f"line {number} is not a {{time, text}} scrape record")
            scrape = _Scrape(time_s=record[0])
            cut = _fill_scrape(scrape, record[1].splitlines())
            if cut:
                raise TimelineRefusal(f"line {number}: the scrape text holds an unreadable line: {cut!r}")
            scrapes.append(scrape)
        return scrapes, truncated, notes
    scrapes = []
    current = _Scrape(time_s=None)
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    repeated = False
    cut_line: str | None = None
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        stripped_line = line.strip()
        if not stripped_line:
            continue
        marker = _MARKER.match(stripped_line)
        when = (
            try_time(marker.group(1), tz=tz)
            if marker
            else (try_time(stripped_line, tz=tz) if _BARE_TIME.match(stripped_line) else None)
        )
        if when is not None:
            scrapes.append(current)
            current, seen = _Scrape(time_s=when), set()
            continue
        if stripped_line.startswith("#"):
            continue
        match = _SAMPLE.match(stripped_line)
        labels = _labels(match.group(2)) if match else None
        value: float | None = None
        try:
            value = _prom_value(match.group(3)) if match and labels is not None else None
            readable = match is not None and labels is not None
        except ValueError:
            readable = False
        if not readable:
            if index == last:
                cut_line = stripped_line
                continue
            raise TimelineRefusal(f"line {index + 1} is not a Prometheus sample: {stripped_line[:80]!r}")
        assert match is not None  # noqa: S101 - readable
        assert labels is not None  # noqa: S101 - readable
        key = (match.group(1), tuple(sorted(labels.items())))
        if key in seen:
            # a series seen twice: a new scrape begins (logs without markers, or with sample timestamps)
            repeated = repeated or current.time_s is not None
            scrapes.append(current)
            current, seen = _Scrape(time_s=None), set()
        seen.add(key)
        if value is not None:
            stamp = float(match.group(4)) / 1000 if match.group(4) else None
            current.samples.append((match.group(1), labels, value, stamp))
    scrapes.append(current)
    if repeated:
        notes.append("a series repeats inside one marked scrape: the rest was read as a new, undated scrape")
    truncated = cut_line is not None
    if truncated:
        notes.append(f"the last line is cut short ({cut_line[:60]!r}): it was left out")
    return [s for s in scrapes if s.samples], truncated, notes


def _fill_scrape(scrape: _Scrape, lines: list[str]) -> str | None:
    """Add the sample lines to the scrape; the first unreadable line, or None."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _SAMPLE.match(stripped)
        labels = _labels(match.group(2)) if match else None
        if not match or labels is None:
            return stripped
        try:
            value = _prom_value(match.group(3))
        except ValueError:
            return stripped
        if value is None:
            continue
        stamp = float(match.group(4)) / 1000 if match.group(4) else None
        scrape.samples.append((match.group(1), labels, value, stamp))
    return None


def parse_prometheus_scrapes(text: str, *, tz: tzinfo = UTC) -> MemoryTimeline:
    """The timeline of Prometheus scrapes of the DCGM exporter, vLLM, SGLang, TGI and/or TensorRT-LLM (layouts in
    the module docstring). DCGM memory is MiB; the total is ``FB_TOTAL`` when exported, else ``FB_USED + FB_FREE (+
    FB_RESERVED)``; a MIG instance (``GPU_I_ID`` label) is its own series ("0:mig1"). A change of
    ``DCGM_FI_DEV_XID_ERRORS`` (the last XID seen, held) to a non-zero value is an XID event, including a non-zero
    value at the first scrape (an XID at or before the log's start); a decrease of a server counter or a new
    ``process_start_time_seconds`` is a restart event. Several hosts (``Hostname``) make GPU ids "host/0".

    >>> scrapes = '''# scrape 2026-11-30T13:41:02Z
    ... DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 71000
    ... DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 10559
    ... # scrape 2026-11-30T13:42:02Z
    ... DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 71100
    ... DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 10459
    ... '''
    >>> series = parse_prometheus_scrapes(scrapes).gpus[0]
    >>> series.peak_bytes == 71100 * MIB, series.total_bytes == 81559 * MIB, series.uuid
    (True, True, 'GPU-a')
    """
    scrapes, truncated, notes = _split_scrapes(text, tz=tz)
    return _scrapes_timeline(scrapes, truncated=truncated, notes=notes)


def parse_scrape_records(records: Iterable[tuple[float | None, str]]) -> MemoryTimeline:
    """The timeline of scrapes given one by one as (POSIX seconds, exposition text): what our load generator's
    result holds in `server_metrics.scrapes`. An empty text is a scrape that found none of the metrics read here.
    TimelineRefusal names the record (0-based) holding an unreadable line, or says that no record holds any metric
    read here.

    >>> timeline = parse_scrape_records([(0.0, 'tgi_queue_size 3\\ntgi_batch_current_size 8\\n'), (1.0, '')])
    >>> sample = timeline.servers[0].samples[0]
    >>> timeline.servers[0].engine, sample.requests_waiting, sample.requests_running, sample.kv_cache_usage
    ('tgi', 3.0, 8.0, None)
    """
    scrapes: list[_Scrape] = []
    for index, (time_s, text) in enumerate(records):
        scrape = _Scrape(time_s=time_s)
        cut = _fill_scrape(scrape, text.splitlines())
        if cut:
            raise TimelineRefusal(f"scrape {index}: an unreadable line: {cut[:80]!r}")
        if scrape.samples:
            scrapes.append(scrape)
    return _scrapes_timeline(scrapes, truncated=False, notes=[])


def _scrapes_timeline(scrapes: list[_Scrape], *, truncated: bool, notes: list[str]) -> MemoryTimeline:
    """The timeline of split scrapes (see `parse_prometheus_scrapes`)."""
    # sample timestamps stand in for missing scrape times
    expanded: list[_Scrape] = []
    for scrape in scrapes:
        stamps = sorted({s[3] for s in scrape.samples if s[3] is not None})
        if scrape.time_s is None and len(stamps) > 1:
            by_stamp: dict[float | None, _Scrape] = {}
            for sample in scrape.samples:
                by_stamp.setdefault(sample[3], _Scrape(time_s=sample[3])).samples.append(sample)
            expanded.extend(by_stamp[k] for k in sorted(by_stamp, key=lambda t: t if t is not None else -1.0))
            continue
        if scrape.time_s is None and stamps:
            scrape.time_s = stamps[0]
        expanded.append(scrape)
    scrapes = expanded
    hosts = {labels.get("Hostname") for scrape in scrapes for name, labels, _, _ in scrape.samples if name in DCGM}
    multi_host = len(hosts - {None}) > 1
    gpu_rows: dict[str, list[GpuSample]] = {}
    gpu_info: dict[str, dict[str, str | None]] = {}
    server_rows: dict[tuple[str, str], list[ServerSample]] = {}
    events: list[TimelineEvent] = []
    last_xid: dict[str, float] = {}
    sources: set[str] = set()
    known = False
    for scrape in scrapes:
        per_gpu: dict[str, dict[str, float]] = {}
        per_server: dict[tuple[str, str], dict[str, float]] = {}
        process_start: float | None = None
        for name, labels, value, _ in scrape.samples:
            if name in DCGM:
                known = True
                sources.add("dcgm")
                key = gpu_key(labels, multi_host=multi_host)
                per_gpu.setdefault(key, {})[DCGM[name]] = value
                note_identity(gpu_info.setdefault(key, {}), labels)
            elif (found := server_metric(name, labels)) is not None:
                known = True
                engine, metric = found
                sources.add(engine)
                bucket = per_server.setdefault((engine, server_instance(labels)), {})
                # counters split by a label (none of those read here today) are summed
                bucket[metric] = bucket.get(metric, 0.0) + value if metric.endswith("_total") else value
            elif name == "process_start_time_seconds":
                process_start = value
        for key, values in per_gpu.items():
            gpu_rows.setdefault(key, []).append(gpu_sample(scrape.time_s, values))
            xid = xid_event(scrape.time_s, key, values, last_xid)
            if xid is not None:
                events.append(xid)
        for key, values in per_server.items():
            sample = server_sample(scrape.time_s, values, process_start if len(per_server) == 1 else None)
            if sample is not None:
                server_rows.setdefault(key, []).append(sample)
    if not known:
        raise TimelineRefusal(
            "Prometheus text without any metric a memory timeline reads (DCGM_FI_DEV_FB_USED, "
            "vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc, vllm:num_requests_running, "
            "sglang:token_usage, ...)"
        )
    undated = sum(1 for s in scrapes if s.time_s is None)
    if undated:
        notes.append(
            f"{undated} scrape(s) carry no time: peaks are read, but they make no time series (precede "
            "each scrape with '# scrape <ISO 8601 time>')"
        )
    gpus = tuple(
        GpuSeries(gpu=key, samples=time_sorted(rows), **identity(gpu_info[key]))
        for key, rows in sorted(gpu_rows.items(), key=lambda item: natural_key(item[0]))
    )
    servers = tuple(
        ServerSeries(engine=engine, instance=instance, samples=time_sorted(rows))
        for (engine, instance), rows in sorted(server_rows.items())
    )
    for server in servers:
        events.extend(counter_restarts(server))
    return MemoryTimeline(
        format=TimelineFormat.PROMETHEUS_SCRAPES.value,
        sources=tuple(sorted(sources)),
        gpus=gpus,
        servers=servers,
        events=tuple(sorted(events, key=lambda e: e.time_s or 0.0)),
        truncated=truncated,
        notes=tuple(notes),
    )

"""The 72-hour sentinel's file (deploy/tools/memory_sentinel.py, format "memory-sentinel/1") read into frozen
dataclasses, and the memory health criteria judged on it (issue 20). Pure Python, no Django; the service
(reports.services.health_reports) stores the file and the result, and renders the signed report.

Reading (`parse_sentinel`) refuses, with a `SentinelRefusal` whose `code` is stable and whose `message` says what to
do: an empty file (``empty``); a file another tool wrote, or with no header line (``foreign_file``); a format version
this module does not read (``unsupported_format``); a header without its GPUs, start or interval (``bad_header``); a
line in the middle that is not JSON (``bad_line``); a cut last line or no ``end`` line (``truncated``: resume the
sentinel with the same file, or close it with ``--close``); samples that go back in time or repeat (``overlap``);
a sample naming a GPU the header does not (``unknown_gpu``); fewer than 2 GPU samples (``too_short``). Overlap with
an earlier import of the same host is the service's check (`overlaps`).

The criteria (`evaluate`), each pass or fail with its evidence, in this order:

- ``coverage``: the hours watched ≥ `hours_required` (72), counted as `health.coverage_hours` counts them (per
  GPU, each gap between samples counted up to 3× the median interval, at least 60 s: a reboot's hole is not
  watched time; the least covered GPU), and the sampling interval at most `MAX_INTERVAL_S` (60 s, the largest a
  thinned file reaches).
- ``no_oom``: no out-of-memory or XID line in the engine log, and no OOM seen in memory (`health.memory_ooms`:
  a card at ≥ 99 % followed by a fall of ≥ 5 %).
- ``no_sustained_climb``: `health.climb` on each GPU (hourly medians, Theil–Sen slope with its 95 % interval; a
  climb is sustained when the rise is significant and reaches the commitment, or the card's total, within 720 h).
- ``breaker_response``: every stretch of KV-cache usage above the breaker's threshold (0.95) lasting at least its
  window (5 s) is followed by a trip line within window + `BREAKER_REACTION_S` (2 s) of the first reading above,
  and the breaker recovers within `recover_within_s` (30 s) of the first reading back at or below the threshold.
  The sentinel reads the metrics every second while KV ≥ 0.90, so these times are good to about a second. No
  stretch long enough: pass ("not needed"). No KV figure in the file (no --metrics-url): fail, it cannot be judged.
- ``failure_recovered``: the injected failure (the engine killed once in the window) is seen: an outage starts at
  the first of a ``process_exit``, ``engine_down`` or ``restart`` event and ends when the engine serves again (the
  metrics endpoint answers; without a metrics URL, the engine's processes are back on the GPUs with ≥ 90 % of the
  memory they held before); each outage must end within `RESTART_RECOVERY_S` (600 s: an engine reloads its weights
  and captures its CUDA graphs in minutes). No outage at all: fail (the failure was not injected).

The verdict is pass when every criterion passed, else fail.

>>> text = sample_file_text(hours=0.01, interval_s=10)
>>> sentinel = parse_sentinel(text)
>>> sentinel.host, len(sentinel.gpu_samples), sentinel.end_reason
('gpu-01', 4, 'duration')
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from benchmarks_app.results.health import BREAKER_MAX_REACTION_S, climb, coverage_hours, memory_ooms
from benchmarks_app.results.timeline import (
    MIB,
    EventKind,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    TimelineEvent,
    iso_utc,
)

TOOL = "memory-sentinel"
FORMAT = "memory-sentinel/1"
HOURS_REQUIRED = 72.0
MAX_INTERVAL_S = 60.0
BREAKER_REACTION_S = BREAKER_MAX_REACTION_S  # 2 s: from the window's end to the trip (health.py, issue 6 part 6)
RESTART_RECOVERY_S = 600.0
RECOVERED_MEMORY_FRACTION = 0.9
MIN_GPU_SAMPLES = 2
OUTAGE_STARTS = ("process_exit", "engine_down", "restart")


class RefusalCode(StrEnum):
    EMPTY = "empty"
    FOREIGN_FILE = "foreign_file"
    UNSUPPORTED_FORMAT = "unsupported_format"
    BAD_HEADER = "bad_header"
    BAD_LINE = "bad_line"
    TRUNCATED = "truncated"
    OVERLAP = "overlap"
    UNKNOWN_GPU = "unknown_gpu"
    TOO_SHORT = "too_short"


class SentinelRefusal(ValueError):
    """The file cannot be imported; `code` (RefusalCode) and `message` (what is wrong and what to do)."""

    def __init__(self, code: RefusalCode, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.extra = code, message, extra


class CriterionCode(StrEnum):
    COVERAGE = "coverage"
    NO_OOM = "no_oom"
    NO_SUSTAINED_CLIMB = "no_sustained_climb"
    BREAKER_RESPONSE = "breaker_response"
    FAILURE_RECOVERED = "failure_recovered"
    PEAK_WITHIN_COMMITMENT = "peak_within_commitment"


# ---------------------------------------------------------------------------------------------------------------
# The file


@dataclass(frozen=True, kw_only=True)
class SentinelGpu:
    index: int
    uuid: str
    name: str
    memory_total_bytes: int | None


@dataclass(frozen=True, kw_only=True)
class GpuReading:
    index: int
    used_bytes: int | None
    total_bytes: int | None
    utilization_pct: float | None


@dataclass(frozen=True, kw_only=True)
class SentinelSample:
    """One line of type sample; `time_s` is POSIX seconds (header start + off_s). A fast sample has no GPUs."""

    time_s: float
    fast: bool
    gpus: tuple[GpuReading, ...] = ()
    pids: tuple[int, ...] | None = None
    engine: Mapping[str, Any] | None = None

    @property
    def engine_up(self) -> bool | None:
        return None if self.engine is None else bool(self.engine.get("up"))

    @property
    def kv(self) -> float | None:
        value = (self.engine or {}).get("kv")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, kw_only=True)
class SentinelEvent:
    time_s: float
    kind: str
    source: str
    detail: str


@dataclass(frozen=True, kw_only=True)
class SentinelFile:
    """A whole sentinel file: its header, samples, events, notes, resumes and how it ended."""

    header: Mapping[str, Any]
    host: str
    gpus: tuple[SentinelGpu, ...]
    interval_s: float
    max_interval_s: float  # after thinning
    start_s: float
    zone: str
    samples: tuple[SentinelSample, ...]
    events: tuple[SentinelEvent, ...]
    notes: tuple[Mapping[str, Any], ...]
    resumes: tuple[Mapping[str, Any], ...]
    end_reason: str
    end_s: float
    tool_version: str
    metrics_url: str | None
    breaker_watched: bool

    @property
    def gpu_uuids(self) -> tuple[str, ...]:
        return tuple(sorted(g.uuid for g in self.gpus))

    @property
    def gpu_samples(self) -> tuple[SentinelSample, ...]:
        return tuple(s for s in self.samples if not s.fast)

    @property
    def first_s(self) -> float:
        return self.samples[0].time_s

    @property
    def last_s(self) -> float:
        return self.samples[-1].time_s

    def summary(self) -> dict[str, Any]:
        """The file's metadata, JSON-safe, as the service stores it."""
        return {
            "tool": TOOL,
            "format": FORMAT,
            "version": self.tool_version,
            "host": self.host,
            "gpus": [
                {"index": g.index, "uuid": g.uuid, "name": g.name, "memory_total_bytes": g.memory_total_bytes}
                for g in self.gpus
            ],
            "interval_s": self.interval_s,
            "max_interval_s": self.max_interval_s,
            "zone": self.zone,
            "start": iso_utc(self.start_s),
            "first_sample": iso_utc(self.first_s),
            "last_sample": iso_utc(self.last_s),
            "end_reason": self.end_reason,
            "samples": len(self.gpu_samples),
            "fast_samples": len(self.samples) - len(self.gpu_samples),
            "events": len(self.events),
            "resumes": len(self.resumes),
            "notes": [dict(n) for n in self.notes],
            "metrics_url": self.metrics_url,
            "breaker_watched": self.breaker_watched,
        }


def _refuse(code: RefusalCode, message: str, **extra: Any) -> SentinelRefusal:
    return SentinelRefusal(code, message, **extra)


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _mib(value: Any) -> int | None:
    number = _float(value)
    return None if number is None else int(number) * MIB


def _header(line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("tool") != TOOL or header.get("type") != "header":
        hint = ""
        lowered = line.lower()
        if "memory.used" in lowered or ("timestamp" in lowered and "," in line):
            hint = " (it looks like an nvidia-smi log: import it as a memory log instead)"
        raise _refuse(
            RefusalCode.FOREIGN_FILE,
            f"not a {TOOL} file: its first line is not the sentinel's header{hint}; record the 72 hours "
            "with deploy/tools/memory_sentinel.py",
        )
    if header.get("format") != FORMAT:
        raise _refuse(
            RefusalCode.UNSUPPORTED_FORMAT,
            f"the file's format is {header.get('format')!r}; this service reads {FORMAT!r}: use the "
            "sentinel shipped with this service",
        )
    gpus = header.get("gpus")
    missing = [name for name in ("host", "gpus", "interval_s", "start_epoch_s") if header.get(name) in (None, "", [])]
    if (
        missing
        or not isinstance(gpus, list)
        or _float(header.get("start_epoch_s")) is None
        or not (_float(header.get("interval_s")) or 0) > 0
    ):
        raise _refuse(
            RefusalCode.BAD_HEADER,
            "the header line lacks " + (", ".join(missing) or "valid values") + ": the file was damaged or edited",
        )
    for gpu in gpus:
        if not isinstance(gpu, dict) or not isinstance(gpu.get("uuid"), str) or not isinstance(gpu.get("index"), int):
            raise _refuse(RefusalCode.BAD_HEADER, "the header's GPU list is damaged (each GPU needs index and uuid)")
    return header


def parse_sentinel(text: str) -> SentinelFile:
    """Read a sentinel file's text; SentinelRefusal (module docstring) when it cannot be imported."""
    if not text.strip():
        raise _refuse(RefusalCode.EMPTY, "the file is empty")
    lines = text.split("\n")
    complete = text.endswith("\n")
    if complete:
        lines.pop()
    header = _header(lines[0])
    start = float(header["start_epoch_s"])
    gpus = tuple(
        SentinelGpu(
            index=g["index"],
            uuid=g["uuid"],
            name=str(g.get("name") or ""),
            memory_total_bytes=_mib(g.get("memory_total_mib")),
        )
        for g in header["gpus"]
    )
    indices = {g.index for g in gpus}
    samples: list[SentinelSample] = []
    events: list[SentinelEvent] = []
    notes: list[Mapping[str, Any]] = []
    resumes: list[Mapping[str, Any]] = []
    end: dict[str, Any] | None = None
    interval = float(header["interval_s"])
    max_interval = interval
    last_off = -math.inf
    for number, line in enumerate(lines[1:], start=2):
        last_line = number == len(lines)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if last_line and not complete:
                raise _refuse(
                    RefusalCode.TRUNCATED,
                    f"the file is cut: its last line (line {number:,}) is incomplete (the copy was taken "
                    "while the sentinel was writing, or the transfer broke off); resume the sentinel "
                    "with the same file, or end it with memory_sentinel.py --close FILE",
                    line=number,
                ) from None
            raise _refuse(
                RefusalCode.BAD_LINE, f"line {number:,} is not JSON: the file was damaged or edited", line=number
            ) from None
        if not isinstance(record, dict):
            raise _refuse(RefusalCode.BAD_LINE, f"line {number:,} is not a JSON object", line=number)
        kind = record.get("type")
        off = _float(record.get("off_s"))
        if kind in ("sample", "event", "note", "resumed", "end") and off is None:
            raise _refuse(RefusalCode.BAD_LINE, f"line {number:,} ({kind}) has no off_s", line=number)
        if end is not None and kind not in ("resumed", "end"):
            raise _refuse(
                RefusalCode.OVERLAP,
                f"line {number:,}: a {kind} after the end line with no resumed "
                "marker: two runs were written into one file",
                line=number,
            )
        if kind == "sample":
            assert off is not None  # noqa: S101 - checked above
            if off <= last_off:
                raise _refuse(
                    RefusalCode.OVERLAP,
                    f"line {number:,}: a sample at {off:,.3f} s is not after the one before it "
                    f"({last_off:,.3f} s): overlapping or repeated samples (two sentinels writing one "
                    "file, or files joined by hand)",
                    line=number,
                )
            last_off = off
            readings = []
            for row in record.get("gpus") or []:
                if not isinstance(row, list) or len(row) < 3 or not isinstance(row[0], int):
                    raise _refuse(RefusalCode.BAD_LINE, f"line {number:,}: a GPU reading is damaged", line=number)
                if row[0] not in indices:
                    raise _refuse(
                        RefusalCode.UNKNOWN_GPU,
                        f"line {number:,}: GPU {row[0]} is not in the header's GPUs",
                        line=number,
                    )
                readings.append(
                    GpuReading(
                        index=row[0],
                        used_bytes=_mib(row[1]),
                        total_bytes=_mib(row[2]),
                        utilization_pct=_float(row[3]) if len(row) > 3 else None,
                    )
                )
            pids = record.get("pids")
            engine = record.get("engine")
            samples.append(
                SentinelSample(
                    time_s=start + off,
                    fast=bool(record.get("fast")),
                    gpus=tuple(readings),
                    pids=tuple(p for p in pids if isinstance(p, int)) if isinstance(pids, list) else None,
                    engine=engine if isinstance(engine, dict) else None,
                )
            )
        elif kind == "event":
            assert off is not None  # noqa: S101
            events.append(
                SentinelEvent(
                    time_s=start + off,
                    kind=str(record.get("kind") or ""),
                    source=str(record.get("source") or ""),
                    detail=str(record.get("detail") or "")[:300],
                )
            )
        elif kind == "note":
            notes.append(record)
            if record.get("kind") == "thinned" and _float(record.get("interval_s")):
                max_interval = max(max_interval, float(record["interval_s"]))
        elif kind == "resumed":
            resumes.append(record)
            end = None
        elif kind == "end":
            end = record
    if not complete and end is None:
        raise _refuse(
            RefusalCode.TRUNCATED,
            "the file is cut: it has no end line and its last line is incomplete; "
            "resume the sentinel with the same file, or end it with "
            "memory_sentinel.py --close FILE",
        )
    if end is None:
        raise _refuse(
            RefusalCode.TRUNCATED,
            "the file has no end line: the sentinel is still running, or a crash or a reboot stopped it; "
            "let it finish (re-run the same command to resume it), or end it with "
            "memory_sentinel.py --close FILE",
        )
    gpu_samples = [s for s in samples if not s.fast]
    if len(gpu_samples) < MIN_GPU_SAMPLES:
        raise _refuse(
            RefusalCode.TOO_SHORT,
            f"the file holds {len(gpu_samples)} GPU sample(s): nothing to judge "
            f"(a pass needs {HOURS_REQUIRED:g} hours of samples)",
            samples=len(gpu_samples),
        )
    return SentinelFile(
        header=header,
        host=str(header["host"]),
        gpus=gpus,
        interval_s=interval,
        max_interval_s=max_interval,
        start_s=start,
        zone=str(header.get("zone") or "+00:00"),
        samples=tuple(samples),
        events=tuple(events),
        notes=tuple(notes),
        resumes=tuple(resumes),
        end_reason=str(end.get("reason") or ""),
        end_s=start + float(end["off_s"]),
        tool_version=str(header.get("version") or ""),
        metrics_url=header.get("metrics_url") or None,
        breaker_watched=bool(header.get("breaker_trip_pattern")),
    )


def overlaps(
    *,
    uuids: Sequence[str],
    start_s: float,
    end_s: float,
    other_uuids: Sequence[str],
    other_start_s: float,
    other_end_s: float,
) -> bool:
    """Whether two sentinel files watched a GPU in common at a time in common (closed ranges touching at one instant
    do not overlap: a file may start where another ended)."""
    return bool(set(uuids) & set(other_uuids)) and start_s < other_end_s and other_start_s < end_s


# ---------------------------------------------------------------------------------------------------------------
# As a memory timeline (the health module's checks run on it)


def sentinel_timeline(sentinel: SentinelFile) -> MemoryTimeline:
    """The file's GPU series (named by index, with UUID and host), its engine series and its OOM/XID events."""
    series = []
    for gpu in sentinel.gpus:
        rows = tuple(
            GpuSample(
                time_s=s.time_s,
                memory_used_bytes=r.used_bytes,
                memory_total_bytes=r.total_bytes or gpu.memory_total_bytes,
                utilization_pct=r.utilization_pct,
            )
            for s in sentinel.gpu_samples
            for r in s.gpus
            if r.index == gpu.index
        )
        series.append(GpuSeries(gpu=str(gpu.index), name=gpu.name, uuid=gpu.uuid, host=sentinel.host, samples=rows))
    engine_samples = tuple(
        ServerSample(
            time_s=s.time_s,
            kv_cache_usage=s.kv,
            requests_running=_float((s.engine or {}).get("running")),
            requests_waiting=_float((s.engine or {}).get("waiting")),
            preemptions_total=_float((s.engine or {}).get("preemptions")),
            process_start_time_s=_float((s.engine or {}).get("process_start")),
        )
        for s in sentinel.samples
        if s.engine_up
    )
    engines = {str((s.engine or {}).get("engine") or "unknown") for s in sentinel.samples if s.engine_up}
    servers = (
        (ServerSeries(engine=sorted(engines)[0], instance=sentinel.host, samples=engine_samples),)
        if engine_samples
        else ()
    )
    events = tuple(
        TimelineEvent(
            time_s=e.time_s, kind=EventKind.OOM.value if e.kind == "oom" else EventKind.XID.value, message=e.detail
        )
        for e in sentinel.events
        if e.kind in ("oom", "xid")
    )
    return MemoryTimeline(
        format="memory_sentinel",
        sources=("nvidia_smi", *sorted(engines)),
        gpus=tuple(series),
        servers=servers,
        events=events,
    )


# ---------------------------------------------------------------------------------------------------------------
# The criteria


@dataclass(frozen=True, kw_only=True)
class BreakerRule:
    """The commitment's breaker: KV usage above `threshold` for `for_s` → refuse; recover within `recover_within_s`
    (reports.evidence.BREAKER_KV)."""

    threshold: float = 0.95
    for_s: float = 5.0
    recover_within_s: float = 30.0


@dataclass(frozen=True, kw_only=True)
class Criterion:
    code: CriterionCode
    passed: bool
    message: str  # English, for the API and logs; the report builds its sentence from `evidence`
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "verdict": "pass" if self.passed else "fail",
            "message": self.message,
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True, kw_only=True)
class HealthEvaluation:
    verdict: str  # "pass" | "fail"
    criteria: tuple[Criterion, ...]
    coverage_hours: float
    peak_bytes: int | None
    start_s: float
    end_s: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "criteria": [c.as_dict() for c in self.criteria],
            "coverage_hours": self.coverage_hours,
            "peak_bytes": self.peak_bytes,
            "start": iso_utc(self.start_s),
            "end": iso_utc(self.end_s),
        }


def _coverage(sentinel: SentinelFile, timeline: MemoryTimeline, hours_required: float) -> Criterion:
    hours = coverage_hours(timeline)
    gaps = [float(r.get("gap_s") or 0.0) for r in sentinel.resumes]
    evidence = {
        "coverage_hours": hours,
        "hours_required": hours_required,
        "interval_s": sentinel.interval_s,
        "max_interval_s": sentinel.max_interval_s,
        "interval_limit_s": MAX_INTERVAL_S,
        "first_sample": iso_utc(sentinel.first_s),
        "last_sample": iso_utc(sentinel.last_s),
        "resumes": len(sentinel.resumes),
        "resume_gaps_s": round(sum(gaps), 3),
        "end_reason": sentinel.end_reason,
    }
    too_sparse = sentinel.max_interval_s > MAX_INTERVAL_S
    passed = hours >= hours_required and not too_sparse
    message = (
        f"{hours:.2f} h watched of the {hours_required:g} h required, every {sentinel.interval_s:g} s"
        + (f" (thinned to {sentinel.max_interval_s:g} s)" if sentinel.max_interval_s > sentinel.interval_s else "")
        + (f"; at most {MAX_INTERVAL_S:g} s between samples" if too_sparse else "")
    )
    return Criterion(code=CriterionCode.COVERAGE, passed=passed, message=message, evidence=evidence)


def _no_oom(sentinel: SentinelFile, timeline: MemoryTimeline) -> Criterion:
    logged = [e for e in sentinel.events if e.kind in ("oom", "xid")]
    seen = [e for series in timeline.gpus for e in memory_ooms(series)]
    events = sorted(
        [{"time": iso_utc(e.time_s), "kind": e.kind, "detail": e.detail} for e in logged]
        + [{"time": iso_utc(e.time_s), "kind": "oom_in_memory", "detail": e.message} for e in seen],
        key=lambda e: e["time"] or "",
    )
    evidence = {
        "logged": len(logged),
        "in_memory": len(seen),
        "events": events[:10],
        "engine_logs_watched": bool(sentinel.header.get("engine_logs")),
    }
    if not events:
        return Criterion(
            code=CriterionCode.NO_OOM, passed=True, evidence=evidence, message="no out-of-memory or XID event"
        )
    return Criterion(
        code=CriterionCode.NO_OOM,
        passed=False,
        evidence=evidence,
        message=f"{len(events)} out-of-memory/XID event(s), first at {events[0]['time']}",
    )


def _no_climb(timeline: MemoryTimeline, committed_bytes: int | None) -> Criterion:
    climbs = [
        climb(series, committed_bytes=committed_bytes) for series in timeline.gpus if series.peak_bytes is not None
    ]
    gpus = [
        {
            "gpu": c.gpu,
            "judged": c.judged,
            "sustained": c.sustained,
            "buckets": c.buckets,
            "slope_mib_per_h": None if c.slope_bytes_per_hour is None else round(c.slope_bytes_per_hour / MIB, 3),
            "slope_low_mib_per_h": None
            if c.slope_low_bytes_per_hour is None
            else round(c.slope_low_bytes_per_hour / MIB, 3),
            "slope_high_mib_per_h": None
            if c.slope_high_bytes_per_hour is None
            else round(c.slope_high_bytes_per_hour / MIB, 3),
            "limit_bytes": c.limit_bytes,
            "limit_source": c.limit_source,
            "hours_to_limit": None if c.hours_to_limit is None else round(c.hours_to_limit, 1),
            "detected_at": iso_utc(c.detected_at_s),
            "reason": c.reason,
        }
        for c in climbs
    ]
    evidence = {"gpus": gpus, "committed_bytes_per_gpu": committed_bytes, "horizon_hours": 720.0}
    sustained = [g for g in gpus if g["sustained"]]
    unjudged = [g for g in gpus if not g["judged"]]
    if sustained:
        worst = max(sustained, key=lambda g: g["slope_mib_per_h"] or 0.0)
        return Criterion(
            code=CriterionCode.NO_SUSTAINED_CLIMB,
            passed=False,
            evidence=evidence,
            message=f"sustained climb: GPU {worst['gpu']} rises {worst['slope_mib_per_h']:.1f} MiB/h and "
            f"reaches the {worst['limit_source']} in {worst['hours_to_limit']:,.0f} h",
        )
    if unjudged or not gpus:
        return Criterion(
            code=CriterionCode.NO_SUSTAINED_CLIMB,
            passed=False,
            evidence=evidence,
            message="too little data to judge a climb (24 hourly buckets needed)",
        )
    steepest = max(gpus, key=lambda g: g["slope_mib_per_h"] or 0.0)
    return Criterion(
        code=CriterionCode.NO_SUSTAINED_CLIMB,
        passed=True,
        evidence=evidence,
        message=f"no sustained climb; the steepest slope is {steepest['slope_mib_per_h']:.1f} MiB/h "
        f"(GPU {steepest['gpu']})",
    )


GAUGE_STEP_BYTES = MIB  # nvidia-smi reports whole MiB: a peak within one step of the commitment is not above it


def _peak(timeline: MemoryTimeline, committed_bytes: int | None) -> Criterion:
    """The highest memory used on a card against the signed commitment's peak per GPU, within the gauge's step
    (a reading more than 1 MiB above it is above it); with no signed commitment there is nothing to hold the peak
    to, and the criterion says so (it fails: the health report is the commitment's acceptance)."""
    peaks = [(series.gpu, series.peak_bytes) for series in timeline.gpus if series.peak_bytes is not None]
    evidence: dict[str, Any] = {
        "committed_bytes_per_gpu": committed_bytes,
        "tolerance_bytes": GAUGE_STEP_BYTES,
        "gpus": [{"gpu": gpu, "peak_bytes": peak} for gpu, peak in peaks],
    }
    if not peaks:
        return Criterion(
            code=CriterionCode.PEAK_WITHIN_COMMITMENT,
            passed=False,
            evidence=evidence,
            message="no GPU memory reading in the file",
        )
    gpu, peak = max(peaks, key=lambda item: item[1])
    evidence.update(peak_bytes=peak, peak_gpu=gpu)
    if committed_bytes is None:
        return Criterion(
            code=CriterionCode.PEAK_WITHIN_COMMITMENT,
            passed=False,
            evidence=evidence,
            message="no signed commitment to hold the peak to: sign the memory commitment first",
        )
    above = peak - committed_bytes
    evidence["margin_bytes"] = -above
    if above > GAUGE_STEP_BYTES:
        return Criterion(
            code=CriterionCode.PEAK_WITHIN_COMMITMENT,
            passed=False,
            evidence=evidence,
            message=f"GPU {gpu} peaked {above / MIB:,.1f} MiB above the committed peak per GPU",
        )
    return Criterion(
        code=CriterionCode.PEAK_WITHIN_COMMITMENT,
        passed=True,
        evidence=evidence,
        message=f"the highest peak (GPU {gpu}) is within the committed peak per GPU",
    )


def _kv_stretches(readings: Sequence[tuple[float, float]], threshold: float) -> list[tuple[float, float | None]]:
    """(first reading above, first reading back at or below | None) for each run of readings above the threshold."""
    stretches: list[tuple[float, float | None]] = []
    above: float | None = None
    for time_s, kv in readings:
        if kv > threshold and above is None:
            above = time_s
        elif kv <= threshold and above is not None:
            stretches.append((above, time_s))
            above = None
    if above is not None:
        stretches.append((above, None))
    return stretches


def _breaker(sentinel: SentinelFile, rule: BreakerRule) -> Criterion:
    readings = [(s.time_s, s.kv) for s in sentinel.samples if s.kv is not None]
    trips = [e.time_s for e in sentinel.events if e.kind == "breaker_trip"]
    recovers = [e.time_s for e in sentinel.events if e.kind == "breaker_recover"]
    trip_bound = rule.for_s + BREAKER_REACTION_S
    evidence: dict[str, Any] = {
        "threshold": rule.threshold,
        "for_s": rule.for_s,
        "trip_within_s": trip_bound,
        "recover_within_s": rule.recover_within_s,
        "trips": len(trips),
        "recoveries": len(recovers),
        "breaker_watched": sentinel.breaker_watched,
        "kv_readings": len(readings),
    }
    if not readings:
        return Criterion(
            code=CriterionCode.BREAKER_RESPONSE,
            passed=False,
            evidence=evidence,
            message="the file has no KV-cache figures: run the sentinel with --metrics-url",
        )
    evidence["kv_peak"] = max(kv for _, kv in readings)
    episodes = []
    for above, back in _kv_stretches(readings, rule.threshold):
        lasted = (back if back is not None else sentinel.last_s) - above
        if lasted < rule.for_s:
            continue
        trip = next((t for t in trips if t >= above), None)
        if trip is not None and back is not None and trip > back + rule.recover_within_s:
            trip = None  # a later stretch's trip
        trip_s = None if trip is None else round(trip - above, 3)
        recover = None
        if trip is not None:
            recover = next((t for t in recovers if t >= trip), None)
        recovery_s = None
        if recover is not None:
            recovery_s = round(max(0.0, recover - back), 3) if back is not None else None
        ok = (
            trip_s is not None
            and trip_s <= trip_bound
            and recovery_s is not None
            and recovery_s <= rule.recover_within_s
        )
        episodes.append(
            {
                "above_at": iso_utc(above),
                "back_at": iso_utc(back),
                "lasted_s": round(lasted, 3),
                "trip_after_s": trip_s,
                "recovered_after_s": recovery_s,
                "passed": ok,
            }
        )
    evidence["episodes"] = episodes[:20]
    evidence["episodes_total"] = len(episodes)
    if not episodes:
        return Criterion(
            code=CriterionCode.BREAKER_RESPONSE,
            passed=True,
            evidence=evidence,
            message=f"KV-cache usage never stayed above {rule.threshold:.0%} for {rule.for_s:g} s "
            f"(peak {evidence['kv_peak']:.1%}): the breaker was not needed",
        )
    evidence["slowest_trip_s"] = max(
        (e["trip_after_s"] for e in episodes if e["trip_after_s"] is not None), default=None
    )
    evidence["slowest_recovery_s"] = max(
        (e["recovered_after_s"] for e in episodes if e["recovered_after_s"] is not None), default=None
    )
    if not sentinel.breaker_watched:
        return Criterion(
            code=CriterionCode.BREAKER_RESPONSE,
            passed=False,
            evidence=evidence,
            message=f"KV-cache usage stayed above {rule.threshold:.0%} for {rule.for_s:g} s "
            f"{len(episodes)} time(s), but the sentinel watched no breaker line "
            "(--breaker-trip-pattern)",
        )
    failed = [e for e in episodes if not e["passed"]]
    if failed:
        first = failed[0]
        return Criterion(
            code=CriterionCode.BREAKER_RESPONSE,
            passed=False,
            evidence=evidence,
            message=f"{len(failed)} of {len(episodes)} breaker response(s) out of bounds; first at "
            f"{first['above_at']}: trip after {first['trip_after_s']} s (≤ {trip_bound:g} s), "
            f"recovery after {first['recovered_after_s']} s (≤ {rule.recover_within_s:g} s)",
        )
    return Criterion(
        code=CriterionCode.BREAKER_RESPONSE,
        passed=True,
        evidence=evidence,
        message=f"{len(episodes)} breaker response(s) within bounds: slowest trip "
        f"{evidence['slowest_trip_s']} s (≤ {trip_bound:g} s), slowest recovery "
        f"{evidence['slowest_recovery_s']} s (≤ {rule.recover_within_s:g} s)",
    )


def _memory_total(sample: SentinelSample) -> int:
    return sum(r.used_bytes or 0 for r in sample.gpus)


def _outages(sentinel: SentinelFile) -> list[dict[str, Any]]:
    """Outages: from the first outage event to the engine serving again (module docstring)."""
    metrics = any(s.engine is not None for s in sentinel.samples)
    gpu_samples = sentinel.gpu_samples
    found: list[dict[str, Any]] = []
    events = sorted((e for e in sentinel.events if e.kind in OUTAGE_STARTS), key=lambda e: e.time_s)
    index = 0
    while index < len(events):
        event = events[index]
        begin = event.time_s
        if event.kind == "restart":  # it happened between the sample before and this one
            begin = max((s.time_s for s in sentinel.samples if s.time_s < event.time_s), default=event.time_s)
        before = [s for s in gpu_samples if s.time_s < begin]
        level = _memory_total(before[-1]) if before else 0
        end = None
        if metrics:
            after = [s for s in sentinel.samples if s.time_s >= event.time_s and s.engine_up]
            if event.kind == "restart":
                end = after[0].time_s if after else None
            else:
                down = [s for s in sentinel.samples if s.time_s >= event.time_s and s.engine_up is False]
                up_after_down = [s for s in after if not down or s.time_s > down[0].time_s]
                end = up_after_down[0].time_s if up_after_down else None
        else:
            back = [
                s
                for s in gpu_samples
                if s.time_s >= event.time_s and s.pids and _memory_total(s) >= RECOVERED_MEMORY_FRACTION * level
            ]
            if event.kind == "process_exit":
                back = [s for s in back if s.time_s > event.time_s]
            end = back[0].time_s if back else None
        kinds = [event.kind]
        index += 1
        while index < len(events) and (end is None or events[index].time_s <= end):
            kinds.append(events[index].kind)
            index += 1
        found.append(
            {
                "began_at": iso_utc(begin),
                "served_again_at": iso_utc(end),
                "events": kinds,
                "recovery_s": None if end is None else round(end - begin, 3),
                "detail": event.detail,
            }
        )
    return found


def _failure(sentinel: SentinelFile, bound_s: float) -> Criterion:
    outages = _outages(sentinel)
    evidence = {
        "outages": outages[:20],
        "outages_total": len(outages),
        "recovery_within_s": bound_s,
        "served_again_by": "metrics" if any(s.engine is not None for s in sentinel.samples) else "gpu_processes",
    }
    if not outages:
        return Criterion(
            code=CriterionCode.FAILURE_RECOVERED,
            passed=False,
            evidence=evidence,
            message="no engine restart in the window: the failure (kill the engine once) was not injected",
        )
    late = [o for o in outages if o["recovery_s"] is None or o["recovery_s"] > bound_s]
    slowest = max((o["recovery_s"] for o in outages if o["recovery_s"] is not None), default=None)
    evidence["slowest_recovery_s"] = slowest
    if late:
        first = late[0]
        why = (
            "did not serve again before the file ends"
            if first["recovery_s"] is None
            else f"served again after {first['recovery_s']:,.1f} s"
        )
        return Criterion(
            code=CriterionCode.FAILURE_RECOVERED,
            passed=False,
            evidence=evidence,
            message=f"the engine stopped at {first['began_at']} and {why} (≤ {bound_s:g} s)",
        )
    return Criterion(
        code=CriterionCode.FAILURE_RECOVERED,
        passed=True,
        evidence=evidence,
        message=f"{len(outages)} restart(s), each serving again within {bound_s:g} s (slowest {slowest:,.1f} s)",
    )


def evaluate(
    sentinel: SentinelFile,
    *,
    breaker: BreakerRule | None = None,
    hours_required: float = HOURS_REQUIRED,
    committed_bytes_per_gpu: int | None = None,
    restart_recovery_s: float = RESTART_RECOVERY_S,
) -> HealthEvaluation:
    """The memory health criteria of a sentinel file (module docstring)."""
    timeline = sentinel_timeline(sentinel)
    criteria = (
        _coverage(sentinel, timeline, hours_required),
        _no_oom(sentinel, timeline),
        _no_climb(timeline, committed_bytes_per_gpu),
        _breaker(sentinel, breaker or BreakerRule()),
        _failure(sentinel, restart_recovery_s),
        _peak(timeline, committed_bytes_per_gpu),
    )
    peaks = [series.peak_bytes for series in timeline.gpus if series.peak_bytes is not None]
    return HealthEvaluation(
        verdict="pass" if all(c.passed for c in criteria) else "fail",
        criteria=criteria,
        coverage_hours=coverage_hours(timeline),
        peak_bytes=max(peaks) if peaks else None,
        start_s=sentinel.first_s,
        end_s=sentinel.last_s,
    )


# ---------------------------------------------------------------------------------------------------------------
# A small file for doctests and unit tests (the synthetic 72-hour file lives in benchmarks_app.services.sentinel_synthetic)


def sample_file_text(*, hours: float, interval_s: float, start_s: float = 1_796_000_000.0) -> str:
    """A minimal well-formed sentinel file: one GPU at 70,000 MiB, every `interval_s`, for `hours`."""
    header = {
        "type": "header",
        "tool": TOOL,
        "format": FORMAT,
        "version": "1.0.0",
        "host": "gpu-01",
        "gpus": [{"index": 0, "uuid": "GPU-0000", "name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559}],
        "interval_s": interval_s,
        "duration_s": hours * 3600,
        "zone": "+00:00",
        "start_epoch_s": start_s,
    }
    lines = [json.dumps(header)]
    count = int(hours * 3600 / interval_s) + 1
    for i in range(count):
        lines.append(json.dumps({"type": "sample", "off_s": i * interval_s, "gpus": [[0, 70000, 81559, 30]]}))
    lines.append(json.dumps({"type": "end", "off_s": count * interval_s, "reason": "duration"}))
    return "\n".join(lines) + "\n"

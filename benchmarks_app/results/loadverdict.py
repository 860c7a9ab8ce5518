"""The memory verdict of one load test (METRICS.md, "Memory verdict"), from the timeline scraped during the run.

PASS when, inside the run's window: the GPU memory peak stays at or below the committed budget per GPU; the KV-cache
usage stays below 100 % with zero preemptions (at the promised concurrency); there is no OOM or XID event; and the
server did not restart. Otherwise FAIL, naming the first violating time slice (time, check, value). Pure Python, no
Django; the 72-hour monitoring verdict (`benchmarks_app.results.health`) judges the same things over days and its
detectors are reused here.

Each check is "pass", "fail" or "unknown". Missing metrics are *unknown*, never zero: no GPU series (or no budget
given) leaves the GPU check unknown, no KV-usage series the KV check, no preemption counter the preemption check.
The verdict is "fail" when any check fails, "unknown" when no check could pass (nothing measured), else "pass";
`unverified` lists the checks that stayed unknown, so a pass says what it does not cover.

How each check reads the timeline (times are POSIX seconds; `window` keeps samples and events with
start ≤ time ≤ end, and drops undated ones; without a window everything counts):

- ``peak_within_commitment``: per GPU series, the samples' memory used, against `committed_bytes_per_gpu` within
  the gauge's step (`GpuSeries.resolution_bytes`: DCGM's FB_USED, nvidia-smi and NVML report whole MiB, so
  1 MiB; AIPerf's two-decimal GB, 10 MB): the first sample more than one step above the commitment is the
  violation (time and value). Equality, or a difference below the step, never fails: the gauge cannot tell them
  apart from the commitment. The check's ``extra`` and the figures carry ``tolerance_bytes``.
- ``kv_below_full``: per server series, ``kv_cache_usage`` (a fraction); the first sample at ≥ 1.0 is the
  violation (`health.kv_summary`).
- ``no_preemption``: the preemption counter's increase between consecutive samples in the window, summed over the
  servers (a counter that falls restarted from zero and counts its new value). With `promised_concurrency`,
  increases in scrape intervals where more requests were running than promised are reported, not failed
  (`health.kv_summary`). The violation is the end of the first interval with a counted increase.
- ``no_oom``: OOM and XID events of the timeline, and OOMs seen in a GPU series' shape (full, then a fall:
  `health.memory_ooms`). Unknown when the timeline has neither a GPU series in the window nor any event (nothing
  could have shown an OOM).
- ``no_restart``: restarts counted per event (one restart seen on two GPUs and in a counter within a minute is one:
  `health.group_restarts`): a server counter that falls or a new ``process_start_time_seconds`` (the timeline's
  restart logic), restart events of the timeline, and GPU memory falling to near zero (`health.memory_restarts`,
  "restart" or "down"). With `allow_restarts` (a failure-injection run) restarts pass but are still counted and named.
  Unknown when neither a server series with a counter or process start time, nor a GPU series, has two samples in the
  window.

Figures (METRICS.md, "Server-side"): KV usage peak, p95 (linear interpolation, the highest of the servers') and
seconds at ≥ 90 % (each sample held until the next, the longest of the servers'); preemptions; waiting-queue peak
and mean and running peak, of the per-scrape sums over the servers (samples sharing a time are added; the mean is
over scrapes); the GPU peaks (``gpu_peak_bytes``, the highest per-GPU peak) and ``tolerance_bytes``. Each check
also has a stable ``reason`` code and an ``extra`` of the numbers behind its English ``detail``. AIPerf's
aggregate-only server statistics carry no time slices and are not read here.

>>> from benchmarks_app.results.timeline import ServerSample, ServerSeries, MemoryTimeline
>>> server = ServerSeries(engine="vllm", instance="engine=0", samples=tuple(
...     ServerSample(time_s=100.0 + i, kv_cache_usage=kv, preemptions_total=0.0, requests_running=8.0,
...                  requests_waiting=0.0) for i, kv in enumerate((0.5, 0.97, 1.0, 0.6))))
>>> result = load_memory_verdict(MemoryTimeline(format="prometheus_scrapes", servers=(server,)),
...                              committed_bytes_per_gpu=None, promised_concurrency=8)
>>> result["verdict"], result["first_violation"]["check"], result["first_violation"]["time_s"]
('fail', 'kv_below_full', 102.0)
>>> result["figures"]["kv_peak"], result["figures"]["kv_seconds_above_90"], result["figures"]["preemptions"]
(1.0, 2.0, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from benchmarks_app.results.health import (
    KvSummary,
    MemoryEvent,
    group_restarts,
    kv_summary,
    memory_ooms,
    memory_restarts,
    restart_window_s,
)
from benchmarks_app.results.timeline import (
    MIB,
    EventKind,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    counter_restarts,
    gauge_resolution_bytes,
    iso_utc,
)
from sizing.estimator.units import format_bytes

KV_FULL = 1.0  # a KV-cache usage fraction at or above this is a full cache (health.kv_summary's first_full)


class CheckCode(StrEnum):
    PEAK_WITHIN_COMMITMENT = "peak_within_commitment"
    KV_BELOW_FULL = "kv_below_full"
    NO_PREEMPTION = "no_preemption"
    NO_OOM = "no_oom"
    NO_RESTART = "no_restart"


class Verdict(StrEnum):
    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class _Check:
    code: CheckCode
    verdict: Verdict
    detail: str
    value: Any = None  # the measured figure the check judged (bytes, fraction, count)
    first_violation_s: float | None = None
    violation_value: Any = None  # the figure at the first violating time slice
    reason: str = ""  # a stable code of why (e.g. "within_resolution"), for words in another language
    extra: dict[str, Any] | None = None  # the numbers behind the words

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "verdict": self.verdict.value,
            "detail": self.detail,
            "value": self.value,
            "first_violation_s": self.first_violation_s,
            "reason": self.reason,
            "extra": dict(self.extra or {}),
        }


def _inside(time_s: float | None, window: tuple[float, float] | None) -> bool:
    if window is None:
        return True
    return time_s is not None and window[0] <= time_s <= window[1]


def _gib(n_bytes: float) -> str:
    return format_bytes(n_bytes, "GiB", 2)


def _when(time_s: float | None) -> str:
    return f"at {iso_utc(time_s)}" if time_s is not None else "at an unknown time"


def _earliest(times: Iterable[float | None]) -> float | None:
    known = [t for t in times if t is not None]
    return min(known) if known else None


def _windowed_gpus(timeline: MemoryTimeline, window: tuple[float, float] | None) -> list[GpuSeries]:
    kept = []
    for series in timeline.gpus:
        samples = tuple(s for s in series.samples if s.memory_used_bytes is not None and _inside(s.time_s, window))
        if samples:
            kept.append(replace(series, samples=samples))
    return kept


def _windowed_servers(timeline: MemoryTimeline, window: tuple[float, float] | None) -> list[ServerSeries]:
    kept = []
    for server in timeline.servers:
        samples = tuple(s for s in server.samples if _inside(s.time_s, window))
        if samples:
            kept.append(replace(server, samples=samples))
    return kept


# ---------------------------------------------------------------------------------------------------------------
# The checks


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / MIB:,.0f} MiB" if float(n_bytes / MIB).is_integer() else f"{n_bytes / MIB:,.2f} MiB"


def _check_gpu(gpus: Sequence[GpuSeries], committed: int | None) -> tuple[_Check, list[dict[str, Any]]]:
    peaks = []
    for series in gpus:
        best = max(series.samples, key=lambda s: s.memory_used_bytes or 0)
        peaks.append(
            {
                "gpu": series.gpu,
                "peak_bytes": best.memory_used_bytes,
                "peak_at_s": best.time_s,
                "samples": len(series.samples),
                "resolution_bytes": series.resolution_bytes,
            }
        )
    code = CheckCode.PEAK_WITHIN_COMMITMENT
    tolerance = gauge_resolution_bytes(gpus)
    extra: dict[str, Any] = {"committed_bytes_per_gpu": committed, "tolerance_bytes": tolerance, "gpu_peak_bytes": None}
    if not peaks:
        return _Check(
            code=code,
            verdict=Verdict.UNKNOWN,
            reason="no_gpu_series",
            extra=extra,
            detail="No GPU memory series in the window: the peak per GPU was not measured.",
        ), peaks
    highest = max(peaks, key=lambda p: p["peak_bytes"])
    extra.update(gpu_peak_bytes=highest["peak_bytes"], gpu=highest["gpu"], peak_at_s=highest["peak_at_s"])
    peak_words = (
        f"GPU memory peaked at {_gib(highest['peak_bytes'])} ({_mib(highest['peak_bytes'])}) on GPU "
        f"{highest['gpu']} {_when(highest['peak_at_s'])}"
    )
    if committed is None:
        return _Check(
            code=code,
            verdict=Verdict.UNKNOWN,
            value=highest["peak_bytes"],
            reason="no_commitment",
            extra=extra,
            detail=f"{peak_words}, but no committed budget per GPU was given to compare it with.",
        ), peaks
    limit = committed + tolerance
    extra["limit_bytes"] = limit
    over = [
        (s.time_s, series.gpu, s.memory_used_bytes)
        for series in gpus
        for s in series.samples
        if (s.memory_used_bytes or 0) > limit
    ]
    if not over:
        spare = committed - highest["peak_bytes"]
        within = spare < 0
        extra["spare_bytes"] = spare
        how = (
            f"{_mib(-spare)} above it, less than the gauge's step of {_mib(tolerance)}, which cannot tell it "
            "from the commitment"
            if within
            else f"{_mib(spare)} to spare, judged within the gauge's step of {_mib(tolerance)}"
        )
        return _Check(
            code=code,
            verdict=Verdict.PASS,
            value=highest["peak_bytes"],
            reason="within_resolution" if within else "within_commitment",
            extra=extra,
            detail=f"{peak_words}, within the committed {_gib(committed)} ({_mib(committed)}) per GPU: {how}.",
        ), peaks
    dated = [item for item in over if item[0] is not None]
    first = min(dated) if dated else over[0]
    gpus_over = sorted({gpu for _, gpu, _ in over})
    extra.update(first_violation_bytes=first[2], first_violation_gpu=first[1], over_bytes=first[2] - committed)
    return _Check(
        code=code,
        verdict=Verdict.FAIL,
        value=highest["peak_bytes"],
        first_violation_s=first[0],
        violation_value=first[2],
        reason="above_commitment",
        extra=extra,
        detail=f"GPU memory went above the committed {_gib(committed)} ({_mib(committed)}) per GPU by "
        f"more than the gauge's step of {_mib(tolerance)} on GPU {', '.join(gpus_over)}: first "
        f"{_mib(first[2])} on GPU {first[1]} {_when(first[0])}, {_mib(first[2] - committed)} "
        f"over; the peak was {_gib(highest['peak_bytes'])} on GPU {highest['gpu']}.",
    ), peaks


def _check_kv(summaries: Sequence[KvSummary], servers: Sequence[ServerSeries]) -> _Check:
    code = CheckCode.KV_BELOW_FULL
    measured = [s for s in summaries if s.kv_peak is not None]
    if not measured:
        return _Check(
            code=code,
            verdict=Verdict.UNKNOWN,
            reason="no_kv_series",
            detail="No KV-cache usage series in the window: the KV peak was not measured.",
        )
    peak = max(s.kv_peak for s in measured if s.kv_peak is not None)
    full = [s for s in measured if s.kv_peak is not None and s.kv_peak >= KV_FULL]
    if not full:
        return _Check(
            code=code,
            verdict=Verdict.PASS,
            value=peak,
            reason="below_full",
            extra={"kv_peak": peak},
            detail=f"KV-cache usage peaked at {peak:.1%}, below 100 %.",
        )
    first = _earliest(s.first_full_s for s in full)
    value = next(
        (
            sample.kv_cache_usage
            for server in servers
            for sample in server.samples
            if sample.time_s == first and sample.kv_cache_usage is not None and sample.kv_cache_usage >= KV_FULL
        ),
        peak,
    )
    names = ", ".join(s.instance or s.engine for s in full)
    return _Check(
        code=code,
        verdict=Verdict.FAIL,
        value=peak,
        first_violation_s=first,
        violation_value=value,
        reason="full",
        extra={"kv_peak": peak, "first_full_value": value},
        detail=f"KV-cache usage reached {value:.1%} {_when(first)} ({names}): the cache was full.",
    )


def _check_preemption(summaries: Sequence[KvSummary], promised: int | None) -> _Check:
    code = CheckCode.NO_PREEMPTION
    counted = [s for s in summaries if s.preemptions is not None]
    if not counted:
        return _Check(
            code=code,
            verdict=Verdict.UNKNOWN,
            reason="no_counter",
            detail="No preemption counter in the window: preemptions were not measured.",
        )
    total = sum(s.preemptions or 0.0 for s in counted)
    beyond = sum(s.preemptions_beyond_promise or 0.0 for s in counted)
    judged = total - beyond
    beyond_text = (
        f" ({beyond:g} more while over the promised {promised} running requests, reported, not failed)"
        if beyond
        else ""
    )
    if judged <= 0:
        scope = f" at or below the promised {promised} running requests" if promised is not None else ""
        return _Check(
            code=code,
            verdict=Verdict.PASS,
            value=judged,
            reason="none",
            extra={"preemptions": judged, "beyond_promise": beyond, "promised_concurrency": promised},
            detail=f"No preemption{scope}{beyond_text}.",
        )
    first = _earliest(
        s.first_preemption_s for s in counted if (s.preemptions or 0) - (s.preemptions_beyond_promise or 0) > 0
    )
    return _Check(
        code=code,
        verdict=Verdict.FAIL,
        value=judged,
        first_violation_s=first,
        violation_value=judged,
        reason="preempted",
        extra={"preemptions": judged, "beyond_promise": beyond, "promised_concurrency": promised},
        detail=f"{judged:g} preemption(s) in the window, the first counted {_when(first)}{beyond_text}.",
    )


def _check_oom(gpus: Sequence[GpuSeries], timeline: MemoryTimeline, window: tuple[float, float] | None) -> _Check:
    code = CheckCode.NO_OOM
    shapes: list[MemoryEvent] = [
        e for series in timeline.gpus for e in memory_ooms(series) if _inside(e.time_s, window)
    ]
    logged = [
        e for e in timeline.events if e.kind in (EventKind.OOM.value, EventKind.XID.value) and _inside(e.time_s, window)
    ]
    count = len(shapes) + len(logged)
    if not count:
        if not gpus and not timeline.events:
            return _Check(
                code=code,
                verdict=Verdict.UNKNOWN,
                reason="unwatched",
                detail="No GPU memory series and no event log: an OOM or XID error would not have been seen.",
            )
        return _Check(
            code=code,
            verdict=Verdict.PASS,
            value=0,
            reason="none",
            extra={"events": 0},
            detail="No out-of-memory event and no XID error.",
        )
    first = _earliest([*(e.time_s for e in shapes), *(e.time_s for e in logged)])
    parts = [e.message for e in shapes[:3]]
    parts += [
        (f"XID {e.code}" if e.kind == EventKind.XID.value else "OOM error")
        + (f" on GPU {e.gpu}" if e.gpu else "")
        + f" {_when(e.time_s)}"
        for e in logged[:3]
    ]
    return _Check(
        code=code,
        verdict=Verdict.FAIL,
        value=count,
        first_violation_s=first,
        violation_value=count,
        reason="events",
        extra={"events": count, "from_memory": len(shapes), "logged": len(logged)},
        detail=f"{count} out-of-memory/XID event(s): " + "; ".join(parts) + ".",
    )


def _restart_events(timeline: MemoryTimeline, window: tuple[float, float] | None) -> list[tuple[float | None, str]]:
    """(time, message) of each restart in the window, one per event: the same restart seen in several places (a
    counter, the log, the memory of each GPU it ran on) within `health.restart_window_s` is counted once."""
    sightings: list[tuple[float | None, str, str | None, str, str]] = []
    for server in timeline.servers:
        for event in counter_restarts(server):
            if _inside(event.time_s, window):
                sightings.append((event.time_s, "restart", None, "counter", event.message))
    for logged in timeline.events:
        if logged.kind == EventKind.RESTART.value and _inside(logged.time_s, window):
            sightings.append((logged.time_s, "restart", logged.gpu, "log", logged.message))
    for series in timeline.gpus:
        for fall in memory_restarts(series):
            if _inside(fall.time_s, window):
                sightings.append((fall.time_s, fall.kind, series.gpu, "memory", fall.message))
    events = group_restarts(sightings, window_s=restart_window_s(timeline.gpus))
    return [(event.time_s, "; ".join(event.messages)) for event in events]


def _restart_watchable(gpus: Sequence[GpuSeries], servers: Sequence[ServerSeries]) -> bool:
    def watched(sample: ServerSample) -> bool:
        return any(
            value is not None
            for value in (sample.preemptions_total, sample.generation_tokens_total, sample.process_start_time_s)
        )

    return any(sum(1 for s in server.samples if watched(s)) >= 2 for server in servers) or any(
        len(series.samples) >= 2 for series in gpus
    )


def _check_restart(
    timeline: MemoryTimeline,
    window: tuple[float, float] | None,
    gpus: Sequence[GpuSeries],
    servers: Sequence[ServerSeries],
    allow: bool,
) -> _Check:
    code = CheckCode.NO_RESTART
    restarts = _restart_events(timeline, window)
    if not restarts:
        if not _restart_watchable(gpus, servers):
            return _Check(
                code=code,
                verdict=Verdict.UNKNOWN,
                reason="unwatched",
                detail="No server counter, process start time or GPU memory series with two samples in "
                "the window: a restart would not have been seen.",
            )
        return _Check(
            code=code, verdict=Verdict.PASS, value=0, reason="none", extra={"restarts": 0}, detail="No server restart."
        )
    first = restarts[0][0]
    named = "; ".join(message for _, message in restarts[:3])
    if allow:
        return _Check(
            code=code,
            verdict=Verdict.PASS,
            value=len(restarts),
            reason="allowed",
            extra={"restarts": len(restarts), "first_s": first},
            detail=f"{len(restarts)} server restart(s), allowed in this run (failure injection), the "
            f"first {_when(first)}: {named}.",
        )
    return _Check(
        code=code,
        verdict=Verdict.FAIL,
        value=len(restarts),
        first_violation_s=first,
        violation_value=len(restarts),
        reason="restarted",
        extra={"restarts": len(restarts)},
        detail=f"{len(restarts)} server restart(s), the first {_when(first)}: {named}.",
    )


# ---------------------------------------------------------------------------------------------------------------
# Figures


def _per_scrape_sums(servers: Sequence[ServerSeries], name: str) -> list[float]:
    """The metric summed over the servers at each scrape time (undated samples each stand alone)."""
    sums: dict[Any, float] = {}
    for number, server in enumerate(servers):
        for index, sample in enumerate(server.samples):
            value = getattr(sample, name)
            if value is None:
                continue
            key = sample.time_s if sample.time_s is not None else ("undated", number, index)
            sums[key] = sums.get(key, 0.0) + float(value)
    return list(sums.values())


def _figures(
    *,
    summaries: Sequence[KvSummary],
    servers: Sequence[ServerSeries],
    peaks: list[dict[str, Any]],
    committed: int | None,
    promised: int | None,
    window: tuple[float, float] | None,
    restarts: int | None,
    allow_restarts: bool,
    tolerance: int,
) -> dict[str, Any]:
    kv = [s for s in summaries if s.kv_peak is not None]
    above = [s.seconds_above_high for s in kv if s.seconds_above_high is not None]
    counted = [s for s in summaries if s.preemptions is not None]
    waiting = _per_scrape_sums(servers, "requests_waiting")
    running = _per_scrape_sums(servers, "requests_running")
    in_system = _in_system(servers)
    in_system_peak = max(in_system) if in_system else None
    return {
        "window": {"start_s": window[0], "end_s": window[1]} if window is not None else None,
        "committed_bytes_per_gpu": committed,
        "gpu_peak_bytes": max((p["peak_bytes"] for p in peaks), default=None),
        "tolerance_bytes": tolerance,
        "gpus": peaks,
        "kv_peak": max((s.kv_peak for s in kv if s.kv_peak is not None), default=None),
        "kv_p95": max((s.kv_p95 for s in kv if s.kv_p95 is not None), default=None),
        "kv_seconds_above_90": max(above) if above else None,
        "preemptions": sum(s.preemptions or 0.0 for s in counted) if counted else None,
        "preemptions_beyond_promise": (
            sum(s.preemptions_beyond_promise or 0.0 for s in counted) if counted and promised is not None else None
        ),
        "waiting_peak": max(waiting) if waiting else None,
        "waiting_mean": sum(waiting) / len(waiting) if waiting else None,
        "running_peak": max(running) if running else None,
        "promised_concurrency": promised,
        "in_system_peak": in_system_peak,
        "concurrency_reached": (
            in_system_peak >= promised if in_system_peak is not None and promised is not None else None
        ),
        "restarts": restarts,
        "restarts_allowed": allow_restarts,
        "servers": [s.as_dict() for s in summaries],
    }


def _in_system(servers: Sequence[ServerSeries]) -> list[float]:
    """Running + waiting requests summed over the servers at each scrape time (samples with both figures)."""
    sums: dict[Any, float] = {}
    for number, server in enumerate(servers):
        for index, sample in enumerate(server.samples):
            if sample.requests_running is None or sample.requests_waiting is None:
                continue
            key = sample.time_s if sample.time_s is not None else ("undated", number, index)
            sums[key] = sums.get(key, 0.0) + sample.requests_running + sample.requests_waiting
    return list(sums.values())


# ---------------------------------------------------------------------------------------------------------------
# The verdict


def load_memory_verdict(
    timeline: MemoryTimeline | None,
    *,
    committed_bytes_per_gpu: int | None,
    promised_concurrency: int | None,
    window: tuple[float, float] | None = None,
    allow_restarts: bool = False,
) -> dict[str, Any]:
    """The memory verdict of a load test from the timeline scraped during it (rules in the module docstring).

    `window` is (start, end) in POSIX seconds, e.g. the run's measurement window; `committed_bytes_per_gpu` the
    budget per GPU (None: the GPU check stays unknown); `promised_concurrency` the number of running requests the
    deployment promises (preemptions beyond it are reported, not failed); `allow_restarts` lets a failure-injection
    run restart the server (still counted). A None timeline is a run without metrics: every check unknown.

    Returns a JSON-safe ``{"verdict": "pass" | "fail" | "unknown", "checks": [{"code", "verdict", "detail",
    "value", "first_violation_s"}], "unverified": [codes], "figures": {...}, "first_violation": {"time_s",
    "time", "check", "value", "detail"} | None}``. Check codes, in order: ``peak_within_commitment``,
    ``kv_below_full``, ``no_preemption``, ``no_oom``, ``no_restart``. ``first_violation`` is the failed check
    with the earliest time (a failed check without a time comes after every dated one); its ``value`` is the
    figure at that slice (bytes for the GPU, the KV fraction, the counts otherwise). ValueError for a window that
    ends before it starts, or a budget or promise below 1.
    """
    if window is not None:
        start, end = (float(window[0]), float(window[1]))
        if not (math.isfinite(start) and math.isfinite(end)) or end < start:
            raise ValueError(f"window: ({window[0]!r}, {window[1]!r}) must be finite POSIX seconds with start ≤ end")
        window = (start, end)
    if committed_bytes_per_gpu is not None and committed_bytes_per_gpu < 1:
        raise ValueError(f"committed_bytes_per_gpu: must be ≥ 1 byte (got {committed_bytes_per_gpu})")
    if promised_concurrency is not None and promised_concurrency < 1:
        raise ValueError(f"promised_concurrency: must be ≥ 1 request (got {promised_concurrency})")
    timeline = timeline or MemoryTimeline(format="none")
    gpus = _windowed_gpus(timeline, window)
    servers = _windowed_servers(timeline, window)
    summaries = [kv_summary(server, promised_concurrency=promised_concurrency) for server in servers]
    gpu_check, peaks = _check_gpu(gpus, committed_bytes_per_gpu)
    checks = [
        gpu_check,
        _check_kv(summaries, servers),
        _check_preemption(summaries, promised_concurrency),
        _check_oom(gpus, timeline, window),
        _check_restart(timeline, window, gpus, servers, allow_restarts),
    ]
    failed = [c for c in checks if c.verdict is Verdict.FAIL]
    if failed:
        verdict = Verdict.FAIL
    elif not any(c.verdict is Verdict.PASS for c in checks):
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.PASS
    first_violation = None
    if failed:
        first = min(failed, key=lambda c: (c.first_violation_s is None, c.first_violation_s or 0.0))
        first_violation = {
            "time_s": first.first_violation_s,
            "time": iso_utc(first.first_violation_s),
            "check": first.code.value,
            "value": first.violation_value,
            "detail": first.detail,
        }
    restart_check = checks[-1]
    return {
        "verdict": verdict.value,
        "checks": [c.as_dict() for c in checks],
        "unverified": [c.code.value for c in checks if c.verdict is Verdict.UNKNOWN],
        "figures": _figures(
            summaries=summaries,
            servers=servers,
            peaks=peaks,
            committed=committed_bytes_per_gpu,
            promised=promised_concurrency,
            window=window,
            restarts=restart_check.value if restart_check.verdict is not Verdict.UNKNOWN else None,
            allow_restarts=allow_restarts,
            tolerance=gauge_resolution_bytes(gpus),
        ),
        "first_violation": first_violation,
    }

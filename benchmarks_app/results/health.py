"""What a GPU memory timeline says about a deployment: peaks against the commitment, sustained climbs, OOM events,
restarts, KV-cache pressure, circuit-breaker reactions, and the 72-hour health verdict (issue 6, parts 5 and 6;
METRICS.md, "Memory verdict"). Pure Python and numpy, no Django.

Thresholds, and why:

- **OOM from memory**: a sample at ≥ 99 % of the card's total (`OOM_FULL_FRACTION`: nvidia-smi rounds to MiB and
  the driver keeps a little back, so a card that ran out shows 99.x %, never 100 %) followed, within the next
  3 samples (`OOM_DROP_WITHIN_SAMPLES`), by a fall of ≥ 5 % of the total (`OOM_DROP_FRACTION`: the allocator
  releasing its cache after the exception, or the process dying). Engines that reserve memory sit flat near
  their budget and do not fall by 4 GB of an 80 GB card without an event. From a log text (`events_text`): lines
  with "CUDA out of memory", "OutOfMemoryError" (torch.OutOfMemoryError), "CUDA error: out of memory"; and
  every XID (METRICS.md: "no OOM/XID"; 31 = memory page fault, 43 = GPU stopped processing, 48 = double-bit ECC,
  79 = fallen off the bus...).
- **Restart from memory**: memory falls from the series' footprint (≥ half its median, `RESTART_LOADED_FRACTION`)
  to near zero (≤ max(10 % of the footprint, 1 GiB), never above half the footprint: an idle CUDA context holds
  0.3–0.6 GiB) and later climbs back to ≥ 90 % of the level before the fall, or of the footprint when that is
  lower (`RESTART_BACK_FRACTION`); a fall that never comes back is reported as "down". The first climb from zero
  at the start of a log is the launch, not a restart. From Prometheus: a counter that goes down, or a new
  ``process_start_time_seconds``.
- **Sustained climb**: memory is reduced to medians of hourly buckets (`CLIMB_BUCKET_S`; a median ignores the
  short spikes of a busy hour and a restart's few near-zero samples), and the slope fitted by Theil–Sen (the
  median of all pairwise slopes: robust to up to 29 % outlying buckets, e.g. a one-off step at warm-up) in bytes
  per hour, with Sen's (1968) distribution-free confidence interval at 95 % (`CLIMB_CONFIDENCE`, z = 1.96, tie
  corrected, as scipy.stats.theilslopes). A climb is **sustained** when (1) the fit covers ≥ 24 hourly buckets
  (`CLIMB_MIN_HOURS`: one full day, so a daytime traffic ramp is not mistaken for a leak), (2) the slope's lower
  confidence bound is > 0 (the rise is not noise; for a flat series this happens ≤ 2.5 % of the time), and (3)
  at the fitted slope, the fitted level at the end of the log reaches the limit (the lower of the commitment and
  the card's total, of those known) within 720 hours (`CLIMB_HORIZON_HOURS`: 30 days, a maintenance cycle,
  and 10× the 72-hour window, beyond which extrapolating a three-day slope is not evidence). (3) also keeps a
  statistically certain but harmless creep (a few MiB a day) from failing a deployment. With neither limit known,
  (2) alone decides, and the result says so. When a climb is sustained, `detected_at` is the end of the first
  stretch of the log (from its start, ≥ 24 buckets) on which the same test already holds: the first time slice
  at which the data proved the climb.
- **KV cache** (when the log has server metrics): peak, p95 (linear interpolation), time above 90 %
  (`KV_HIGH_FRACTION`, each scrape's value held until the next, gaps capped as for coverage), preemptions as the
  sum of counter increases (a counter that falls restarted from zero). METRICS.md's verdict asks for a KV peak
  below 100 % and zero preemptions "at the promised concurrency": with `promised_concurrency`, preemptions in
  scrape intervals where more requests were running than promised are reported, not failed.
- **Circuit breaker**: a JSON-lines events log, one object per line ``{"time": <ISO 8601 or POSIX seconds>,
  "kind": "trip" | "shed" | "recover", "breaker": <name, optional>, "detail": <text, optional>}``: ``trip`` when
  the watched condition crossed its threshold (e.g. KV > 95 % for 5 s), ``shed`` when the breaker acted (the first
  request refused or load shed), ``recover`` when it closed again. Each trip must be followed by a shed of the
  same breaker (any breaker when unnamed) within 2 s (`BREAKER_MAX_REACTION_S`, issue 6 part 6) and before its
  recover; a trip never followed by a shed fails.
- **Peak against the commitment**: the highest reading of each GPU against the committed figure per GPU, within
  the gauge's step (`GpuSeries.resolution_bytes`: nvidia-smi, NVML and DCGM report whole MiB, so 1 MiB; AIPerf's
  GB with two decimals, 10 MB): a peak fails only when it is more than one step above the commitment, never on
  equality or a difference the gauge cannot show; the check's `extra` carries ``tolerance_bytes``.
- **Restarts are events**: one restart seen on two GPUs (and in a counter) is one restart. Sightings within
  60 s (`RESTART_SAME_EVENT_S`), or two sampling intervals of the slowest-sampled GPU when longer, are one event
  (`restart_events`).
- **Zones**: nvidia-smi and engine logs write local times without a zone; the caller's zone (`events_tz`, the
  zone the monitoring log was read in) applies to the events and breaker logs too, so every time is in one zone.
- **Coverage**: per GPU, the time between consecutive samples, each gap counted up to 3× the series' median
  sampling interval (at least 60 s): a monitoring outage does not count as watched time. The log's coverage is
  the least covered GPU's (server series when the log has no GPU).

The verdict (`health_verdict`): **fail** when any check other than coverage failed (a violation seen is a
violation, however short the log); else **insufficient** when coverage is below `hours_required`, or a check
could not be judged (`passed` None: no GPU memory series, no commitment, too few hours for the climb test);
else **pass**. `first_violation` is the earliest time a failed check points to (ISO 8601 UTC). The climb test
keeps its 24 hourly buckets whatever `hours_required` says (a shorter fit would read a daily traffic ramp as a
leak): with `hours_required` below 24 a pass still needs 24 h of data, which `verdict_requirements` states before
an upload and the verdict's ``requirements`` after it (note ``hours_below_climb_minimum``).

>>> from benchmarks_app.results.timeline import GpuSample, GpuSeries, MemoryTimeline, MIB
>>> samples = tuple(GpuSample(time_s=600.0 * i, memory_used_bytes=(70_000 + i % 3) * MIB,
...                           memory_total_bytes=81_559 * MIB) for i in range(433))  # 72 h every 10 min
>>> timeline = MemoryTimeline(format="nvidia_smi_csv", gpus=(GpuSeries(gpu="0", samples=samples),))
>>> result = health_verdict(timeline, committed_bytes_per_gpu=75_000 * MIB)
>>> result["verdict"], result["coverage_hours"], [c["code"] for c in result["checks"] if not c["passed"]]
('pass', 72.0, [])
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from itertools import pairwise
from statistics import NormalDist
from typing import Any

import numpy as np

from benchmarks_app.results.timeline import (
    EventKind,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSeries,
    TimelineEvent,
    gauge_resolution_bytes,
    iso_utc,
    parse_event_log,
    parse_time,
)
from sizing.estimator.units import format_bytes
from sizing.kernel.json_limits import loads as bounded_loads

GIB = 1 << 30

OOM_FULL_FRACTION = 0.99
OOM_DROP_FRACTION = 0.05
OOM_DROP_WITHIN_SAMPLES = 3
RESTART_LOADED_FRACTION = 0.5
RESTART_NEAR_ZERO_FRACTION = 0.1
RESTART_NEAR_ZERO_MIN_BYTES = GIB
RESTART_BACK_FRACTION = 0.9
CLIMB_BUCKET_S = 3600.0
CLIMB_MIN_HOURS = 24
CLIMB_HORIZON_HOURS = 720.0
CLIMB_CONFIDENCE = 0.95
KV_HIGH_FRACTION = 0.9
BREAKER_MAX_REACTION_S = 2.0
GAP_FACTOR = 3.0
GAP_MIN_S = 60.0
RESTART_SAME_EVENT_S = 60.0  # restarts seen within a minute (on several GPUs, in memory and in a counter) are one
RESTART_SAME_EVENT_SAMPLES = 2  # ... or within two sampling intervals of the slowest series, when that is longer


class CheckCode(StrEnum):
    COVERAGE = "coverage"
    NO_OOM = "no_oom"
    NO_RESTART = "no_restart"
    NO_SUSTAINED_CLIMB = "no_sustained_climb"
    PEAK_WITHIN_COMMITMENT = "peak_within_commitment"
    KV_HEADROOM = "kv_headroom"
    BREAKER_REACTION = "breaker_reaction"


class Verdict(StrEnum):
    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    INSUFFICIENT = "insufficient"


def _mib(n_bytes: float) -> str:
    return format_bytes(n_bytes, "MiB", 0)


def _rate(bytes_per_hour: float | None) -> str:
    value = (bytes_per_hour or 0.0) + 0.0  # no "-0.0"
    text = format_bytes(value, "MiB", 1)
    return ("0.0 MiB" if text == "-0.0 MiB" else text) + "/h"


def _dated(series: GpuSeries) -> list[GpuSample]:
    return [s for s in series.samples if s.time_s is not None and s.memory_used_bytes is not None]


# ---------------------------------------------------------------------------------------------------------------
# Peaks


@dataclass(frozen=True, kw_only=True)
class GpuPeak:
    """The highest memory one GPU reached, and the first time it did.

    >>> from benchmarks_app.results.timeline import GpuSample, GpuSeries
    >>> peak = gpu_peak(GpuSeries(gpu="0", samples=(GpuSample(time_s=0.0, memory_used_bytes=5),
    ...                                            GpuSample(time_s=60.0, memory_used_bytes=9))))
    >>> peak.peak_bytes, peak.at_s
    (9, 60.0)
    """

    gpu: str
    peak_bytes: int
    at_s: float | None
    total_bytes: int | None
    samples: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "peak_bytes": self.peak_bytes,
            "peak_at": iso_utc(self.at_s),
            "total_bytes": self.total_bytes,
            "samples": self.samples,
        }


def gpu_peak(series: GpuSeries) -> GpuPeak | None:
    """The peak of one GPU series; None when it has no memory figure."""
    best: GpuSample | None = None
    count = 0
    for sample in series.samples:
        if sample.memory_used_bytes is None:
            continue
        count += 1
        if best is None or sample.memory_used_bytes > (best.memory_used_bytes or 0):
            best = sample
    if best is None or best.memory_used_bytes is None:
        return None
    return GpuPeak(
        gpu=series.gpu,
        peak_bytes=best.memory_used_bytes,
        at_s=best.time_s,
        total_bytes=series.total_bytes,
        samples=count,
    )


# ---------------------------------------------------------------------------------------------------------------
# Robust slope


@dataclass(frozen=True, kw_only=True)
class TheilSen:
    """A Theil–Sen fit: `slope` and its confidence interval [`low`, `high`] (Sen 1968), `intercept` = median of
    y − slope·x, `n` points.

    >>> fit = theil_sen([0, 1, 2, 3, 4, 5], [0.0, 2.1, 3.9, 6.0, 8.2, 9.9])
    >>> round(fit.slope, 2), fit.low < fit.slope < fit.high
    (2.0, True)
    """

    slope: float
    intercept: float
    low: float
    high: float
    n: int


def theil_sen(x: Sequence[float], y: Sequence[float], *, confidence: float = CLIMB_CONFIDENCE) -> TheilSen:
    """Theil–Sen slope of y over x with Sen's two-sided `confidence` interval (the ranks of the sorted pairwise
    slopes at (N ∓ z·σ)/2, σ² = [n(n−1)(2n+5) − Σ ties t(t−1)(2t+5)]/18; the method of scipy.stats.theilslopes).
    ValueError with fewer than 2 distinct x."""
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(len(xs), k=1)
    dx = xs[j] - xs[i]
    keep = dx != 0
    if not keep.any():
        raise ValueError("Theil–Sen needs at least two distinct x")
    slopes = np.sort((ys[j] - ys[i])[keep] / dx[keep])
    slope = float(np.median(slopes))
    intercept = float(np.median(ys - slope * xs))
    n = len(ys)

    def ties(values: np.ndarray) -> float:
        _, counts = np.unique(values, return_counts=True)
        counts = counts[counts > 1].astype(np.float64)
        return float((counts * (counts - 1) * (2 * counts + 5)).sum())

    variance = (n * (n - 1) * (2 * n + 5) - ties(xs) - ties(ys)) / 18.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    sigma = math.sqrt(max(variance, 0.0))
    total = len(slopes)
    low_rank = max(round((total - z * sigma) / 2) - 1, 0)
    high_rank = min(round((total + z * sigma) / 2), total - 1)
    return TheilSen(slope=slope, intercept=intercept, low=float(slopes[low_rank]), high=float(slopes[high_rank]), n=n)


def bucket_medians(
    samples: Sequence[GpuSample],
    *,
    bucket_s: float = CLIMB_BUCKET_S,
) -> list[tuple[float, float, float]]:
    """(median time, median memory used in bytes, last time) per `bucket_s` bucket counted from the first sample,
    for the dated samples with a memory figure; empty buckets are left out.

    >>> from benchmarks_app.results.timeline import GpuSample
    >>> bucket_medians([GpuSample(time_s=t, memory_used_bytes=m) for t, m in ((0, 1), (1800, 9), (2400, 3),
    ...                                                                        (3600, 4))])
    [(1800.0, 3.0, 2400.0), (3600.0, 4.0, 3600.0)]
    """
    dated = [s for s in samples if s.time_s is not None and s.memory_used_bytes is not None]
    if not dated:
        return []
    start = min(s.time_s for s in dated if s.time_s is not None)
    groups: dict[int, list[GpuSample]] = {}
    for sample in dated:
        assert sample.time_s is not None  # noqa: S101 - filtered above
        groups.setdefault(int((sample.time_s - start) // bucket_s), []).append(sample)
    found = []
    for key in sorted(groups):
        times = [s.time_s for s in groups[key] if s.time_s is not None]
        used = [s.memory_used_bytes for s in groups[key] if s.memory_used_bytes is not None]
        found.append((float(np.median(times)), float(np.median(used)), float(max(times))))
    return found


@dataclass(frozen=True, kw_only=True)
class Climb:
    """The sustained-climb test of one GPU (see the module docstring). Slopes in bytes per hour; `judged` False
    when the log has fewer buckets than the test needs (then `sustained` is False and means "unknown")."""

    gpu: str
    judged: bool
    sustained: bool
    buckets: int
    slope_bytes_per_hour: float | None = None
    slope_low_bytes_per_hour: float | None = None
    slope_high_bytes_per_hour: float | None = None
    level_end_bytes: float | None = None
    limit_bytes: int | None = None
    limit_source: str | None = None  # "commitment" or "total"
    hours_to_limit: float | None = None
    detected_at_s: float | None = None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("detected_at_s")
        data["detected_at"] = iso_utc(self.detected_at_s)
        return data


def _limit(series: GpuSeries, committed_bytes: int | None) -> tuple[int | None, str | None]:
    candidates = [
        (value, name) for value, name in ((committed_bytes, "commitment"), (series.total_bytes, "total")) if value
    ]
    return min(candidates) if candidates else (None, None)


def _judge(
    points: list[tuple[float, float, float]], *, limit: int | None, horizon_hours: float, confidence: float
) -> tuple[TheilSen, float, float | None, bool]:
    """(fit, fitted level at the last point, hours to the limit, sustained) for points (time s, bytes, last)."""
    start = points[0][0]
    hours = [(p[0] - start) / 3600 for p in points]
    fit = theil_sen(hours, [p[1] for p in points], confidence=confidence)
    level_end = fit.intercept + fit.slope * hours[-1]
    hours_to_limit = None
    if limit is not None and fit.slope > 0:
        hours_to_limit = max(0.0, (limit - level_end) / fit.slope)
    elif limit is not None and level_end >= limit:
        hours_to_limit = 0.0
    significant = fit.low > 0
    sustained = significant and (limit is None or (hours_to_limit is not None and hours_to_limit <= horizon_hours))
    return fit, level_end, hours_to_limit, sustained


def climb(
    series: GpuSeries,
    *,
    committed_bytes: int | None = None,
    bucket_s: float = CLIMB_BUCKET_S,
    min_hours: int = CLIMB_MIN_HOURS,
    horizon_hours: float = CLIMB_HORIZON_HOURS,
    confidence: float = CLIMB_CONFIDENCE,
) -> Climb:
    """The sustained-climb test of one GPU series (module docstring: thresholds and why).

    >>> from benchmarks_app.results.timeline import GpuSample, GpuSeries, MIB
    >>> leak = GpuSeries(gpu="0", samples=tuple(
    ...     GpuSample(time_s=300.0 * i, memory_used_bytes=(70_000 + 40 * i // 12) * MIB,
    ...               memory_total_bytes=81_559 * MIB) for i in range(865)))  # +40 MiB an hour for 72 h
    >>> result = climb(leak)
    >>> result.sustained, round(result.slope_bytes_per_hour / MIB, 1), result.limit_source
    (True, 40.0, 'total')
    """
    min_buckets = max(2, math.ceil(min_hours * 3600 / bucket_s))
    points = bucket_medians(series.samples, bucket_s=bucket_s)
    limit, limit_source = _limit(series, committed_bytes)
    if len(points) < min_buckets:
        return Climb(
            gpu=series.gpu,
            judged=False,
            sustained=False,
            buckets=len(points),
            limit_bytes=limit,
            limit_source=limit_source,
            reason=f"{len(points)} hourly bucket(s) of data; the climb test needs {min_buckets}",
        )
    fit, level_end, hours_to_limit, sustained = _judge(
        points, limit=limit, horizon_hours=horizon_hours, confidence=confidence
    )
    detected_at = None
    if sustained:

        def holds(end: int) -> bool:
            return _judge(points[:end], limit=limit, horizon_hours=horizon_hours, confidence=confidence)[3]

        # every prefix up to 100 of them; beyond, a grid of 1/100 of the log refined within its step (each fit
        # costs O(n²) pairwise slopes)
        ends = range(min_buckets, len(points) + 1)
        step = max(1, len(ends) // 100)
        hit = next((end for end in ends[::step] if holds(end)), len(points))
        first = next((end for end in range(max(min_buckets, hit - step + 1), hit + 1) if holds(end)), hit)
        detected_at = points[first - 1][2]
    if fit.low <= 0:
        reason = "the slope's lower confidence bound is not above zero: no significant rise"
    elif limit is None:
        reason = "significant rise; neither the commitment nor the card's total is known, so no projection"
    elif hours_to_limit is not None and hours_to_limit > horizon_hours:
        reason = f"significant rise, but the {limit_source} is {hours_to_limit:,.0f} h away (> {horizon_hours:g} h)"
    else:
        reason = f"significant rise reaching the {limit_source} in {hours_to_limit:,.0f} h (≤ {horizon_hours:g} h)"
    return Climb(
        gpu=series.gpu,
        judged=True,
        sustained=sustained,
        buckets=len(points),
        slope_bytes_per_hour=fit.slope,
        slope_low_bytes_per_hour=fit.low,
        slope_high_bytes_per_hour=fit.high,
        level_end_bytes=level_end,
        limit_bytes=limit,
        limit_source=limit_source,
        hours_to_limit=hours_to_limit,
        detected_at_s=detected_at,
        reason=reason,
    )


# ---------------------------------------------------------------------------------------------------------------
# OOM and restarts seen in memory


@dataclass(frozen=True, kw_only=True)
class MemoryEvent:
    """An OOM, a restart or a server that went down, read from one GPU's memory series."""

    gpu: str
    kind: str  # "oom", "restart" or "down"
    time_s: float | None
    message: str
    before_bytes: int | None = None
    after_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "kind": self.kind,
            "time": iso_utc(self.time_s),
            "message": self.message,
            "before_bytes": self.before_bytes,
            "after_bytes": self.after_bytes,
        }


def memory_ooms(series: GpuSeries) -> list[MemoryEvent]:
    """OOM events of one GPU: a sample at ≥ 99 % of the total followed within 3 samples by a fall of ≥ 5 % of the
    total. The event's time is the last full sample before the fall. Needs the total (else no events).

    >>> from benchmarks_app.results.timeline import GpuSample, GpuSeries
    >>> series = GpuSeries(gpu="0", samples=tuple(GpuSample(time_s=60.0 * i, memory_used_bytes=m,
    ...                    memory_total_bytes=1000) for i, m in enumerate((900, 995, 996, 10, 900))))
    >>> [(e.kind, e.time_s, e.before_bytes, e.after_bytes) for e in memory_ooms(series)]
    [('oom', 120.0, 996, 10)]
    """
    samples = _dated(series)
    found: list[MemoryEvent] = []
    index = 0
    while index < len(samples):
        sample = samples[index]
        total = sample.memory_total_bytes or series.total_bytes
        used = sample.memory_used_bytes
        if total and used is not None and used >= OOM_FULL_FRACTION * total:
            drop_at = None
            for ahead in range(index + 1, min(index + 1 + OOM_DROP_WITHIN_SAMPLES, len(samples))):
                later = samples[ahead].memory_used_bytes
                if later is not None and later >= OOM_FULL_FRACTION * total:
                    break  # still full: the next full sample is examined in turn
                if later is not None and used - later >= OOM_DROP_FRACTION * total:
                    drop_at = ahead
                    break
            if drop_at is not None:
                after = samples[drop_at].memory_used_bytes
                found.append(
                    MemoryEvent(
                        gpu=series.gpu,
                        kind="oom",
                        time_s=sample.time_s,
                        before_bytes=used,
                        after_bytes=after,
                        message=f"GPU {series.gpu}: memory full ({_mib(used)} of {_mib(total)}, "
                        f"{used / total:.1%}) at {iso_utc(sample.time_s)}, then down to {_mib(after or 0)} at "
                        f"{iso_utc(samples[drop_at].time_s)}",
                    )
                )
                index = drop_at
                continue
        index += 1
    return found


def memory_restarts(series: GpuSeries) -> list[MemoryEvent]:
    """Restarts of the process on one GPU: memory falls from its footprint to near zero and climbs back to ≥ 90 %
    of the level before the fall, or of the footprint if lower (the level before an OOM is the full card)
    ("restart", at the first near-zero sample); a fall that never climbs back is "down". Footprint = the median of
    the series.

    >>> from benchmarks_app.results.timeline import GpuSample, GpuSeries, MIB
    >>> values = (5, 70_000, 70_000, 300, 200, 69_000, 70_000, 70_000)
    >>> series = GpuSeries(gpu="0", samples=tuple(GpuSample(time_s=60.0 * i, memory_used_bytes=m * MIB)
    ...                                           for i, m in enumerate(values)))
    >>> [(e.kind, e.time_s) for e in memory_restarts(series)]
    [('restart', 180.0)]
    """
    samples = _dated(series)
    if not samples:
        return []
    footprint = float(np.median([s.memory_used_bytes for s in samples]))
    loaded = RESTART_LOADED_FRACTION * footprint
    near_zero = min(max(RESTART_NEAR_ZERO_FRACTION * footprint, RESTART_NEAR_ZERO_MIN_BYTES), 0.5 * footprint)
    found: list[MemoryEvent] = []
    state = "start"
    before: GpuSample | None = None  # the last loaded sample
    fall: GpuSample | None = None
    for sample in samples:
        used = sample.memory_used_bytes
        assert used is not None  # noqa: S101 - _dated keeps samples with memory
        if state in ("start", "loaded"):
            if used >= loaded:
                state, before = "loaded", sample
            elif state == "loaded" and used <= near_zero:
                state, fall = "down", sample
        elif state == "down":
            assert before is not None  # noqa: S101 - a fall follows a loaded sample
            assert fall is not None  # noqa: S101
            level = before.memory_used_bytes or 0
            if used >= RESTART_BACK_FRACTION * min(level, footprint):
                found.append(
                    MemoryEvent(
                        gpu=series.gpu,
                        kind="restart",
                        time_s=fall.time_s,
                        before_bytes=level,
                        after_bytes=fall.memory_used_bytes,
                        message=f"GPU {series.gpu}: memory fell from {_mib(level)} to {_mib(fall.memory_used_bytes or 0)}"
                        f" at {iso_utc(fall.time_s)} and was back at {_mib(used)} at {iso_utc(sample.time_s)}: "
                        "the server restarted",
                    )
                )
                state, before = "loaded", sample
    if state == "down" and fall is not None and before is not None:
        found.append(
            MemoryEvent(
                gpu=series.gpu,
                kind="down",
                time_s=fall.time_s,
                before_bytes=before.memory_used_bytes,
                after_bytes=fall.memory_used_bytes,
                message=f"GPU {series.gpu}: memory fell from {_mib(before.memory_used_bytes or 0)} to "
                f"{_mib(fall.memory_used_bytes or 0)} at {iso_utc(fall.time_s)} and did not come back before the "
                "log ends: the server went down",
            )
        )
    return found


# ---------------------------------------------------------------------------------------------------------------
# Coverage


def _covered_s(times: Sequence[float]) -> float:
    if len(times) < 2:
        return 0.0
    gaps = np.diff(np.sort(np.asarray(times, dtype=np.float64)))
    cap = max(GAP_FACTOR * float(np.median(gaps)), GAP_MIN_S)
    return float(np.minimum(gaps, cap).sum())


def coverage_hours(timeline: MemoryTimeline) -> float:
    """Hours the log watched (module docstring): the least covered GPU, else the least covered server series;
    0 for undated logs. Rounded to 3 decimals.

    >>> from benchmarks_app.results.timeline import GpuSample, GpuSeries, MemoryTimeline
    >>> times = [0.0, 300.0, 600.0, 7800.0]  # 5-minute samples, then a two-hour hole
    >>> series = GpuSeries(gpu="0", samples=tuple(GpuSample(time_s=t, memory_used_bytes=1) for t in times))
    >>> coverage_hours(MemoryTimeline(format="nvidia_smi_csv", gpus=(series,)))  # 600 s + one 900 s cap
    0.417
    """
    per_gpu = [_covered_s([s.time_s for s in _dated(g)]) for g in timeline.gpus if g.peak_bytes is not None]
    if not per_gpu:
        per_gpu = [
            _covered_s([s.time_s for s in server.samples if s.time_s is not None]) for server in timeline.servers
        ]
    return round(min(per_gpu) / 3600, 3) if per_gpu else 0.0


# ---------------------------------------------------------------------------------------------------------------
# Server side: KV cache, queue, preemptions


@dataclass(frozen=True, kw_only=True)
class KvSummary:
    """KV-cache pressure of one server series (fractions 0–1; None where the log does not say)."""

    engine: str
    instance: str
    samples: int
    kv_peak: float | None = None
    kv_peak_at_s: float | None = None
    kv_p95: float | None = None
    seconds_above_high: float | None = None  # time with KV ≥ KV_HIGH_FRACTION
    first_full_s: float | None = None  # first scrape with KV ≥ 100 %
    preemptions: float | None = None  # sum of counter increases
    preemptions_beyond_promise: float | None = None  # of which with more requests running than promised
    first_preemption_s: float | None = None  # end of the first interval in which a counted preemption happened
    waiting_peak: float | None = None
    waiting_mean: float | None = None
    running_peak: float | None = None
    source: str = "scrapes"  # or "aggregate" (AIPerf server-metrics export)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("kv_peak_at_s", "first_full_s", "first_preemption_s"):
            data[key.removesuffix("_s")] = iso_utc(data.pop(key))
        return data


def kv_summary(server: ServerSeries, *, promised_concurrency: int | None = None) -> KvSummary:
    """KV usage peak, p95 and time ≥ 90 %; preemptions (counter increases; a fall restarts the counter from 0);
    waiting-queue peak and mean, of one server series.

    >>> from benchmarks_app.results.timeline import ServerSample, ServerSeries
    >>> server = ServerSeries(engine="vllm", instance="engine=0", samples=tuple(
    ...     ServerSample(time_s=15.0 * i, kv_cache_usage=kv, preemptions_total=p)
    ...     for i, (kv, p) in enumerate(((0.5, 0), (0.92, 0), (0.95, 2), (0.6, 3)))))
    >>> summary = kv_summary(server)
    >>> summary.kv_peak, summary.seconds_above_high, summary.preemptions, summary.first_preemption_s
    (0.95, 30.0, 3.0, 30.0)
    """
    samples = list(server.samples)
    kv = [(s.time_s, s.kv_cache_usage) for s in samples if s.kv_cache_usage is not None]
    result: dict[str, Any] = {"engine": server.engine, "instance": server.instance, "samples": len(samples)}
    if kv:
        values = np.asarray([v for _, v in kv], dtype=np.float64)
        peak_index = int(np.argmax(values))
        result.update(
            kv_peak=float(values[peak_index]), kv_peak_at_s=kv[peak_index][0], kv_p95=float(np.percentile(values, 95))
        )
        full = [t for t, v in kv if v >= 1.0]
        result["first_full_s"] = full[0] if full else None
        dated = [(t, v) for t, v in kv if t is not None]
        if len(dated) >= 2:
            times = [t for t, _ in dated]
            gaps = np.diff(np.asarray(times, dtype=np.float64))
            cap = max(GAP_FACTOR * float(np.median(gaps)), GAP_MIN_S)
            result["seconds_above_high"] = float(
                sum(min(float(gap), cap) for gap, (_, v) in zip(gaps, dated[:-1], strict=True) if v >= KV_HIGH_FRACTION)
            )
    counters = [s for s in samples if s.preemptions_total is not None]
    if counters:
        total = 0.0
        beyond = 0.0
        first: float | None = None
        for previous, current in pairwise(counters):
            assert previous.preemptions_total is not None  # noqa: S101 - filtered above
            assert current.preemptions_total is not None  # noqa: S101
            increase = current.preemptions_total - previous.preemptions_total
            if increase < 0:
                increase = current.preemptions_total  # the counter restarted from zero
            if increase <= 0:
                continue
            running = max(r for r in (previous.requests_running, current.requests_running, 0.0) if r is not None)
            if promised_concurrency is not None and running > promised_concurrency:
                beyond += increase
                continue
            total += increase
            if first is None:
                first = current.time_s
        result.update(
            preemptions=total + beyond,
            preemptions_beyond_promise=beyond if promised_concurrency is not None else None,
            first_preemption_s=first,
        )
    waiting = [s.requests_waiting for s in samples if s.requests_waiting is not None]
    if waiting:
        result.update(waiting_peak=max(waiting), waiting_mean=float(np.mean(waiting)))
    running = [s.requests_running for s in samples if s.requests_running is not None]
    if running:
        result["running_peak"] = max(running)
    return KvSummary(**result)


def _kv_from_stats(timeline: MemoryTimeline) -> list[KvSummary]:
    by_instance: dict[tuple[str, str], dict[str, Any]] = {}
    for stats in timeline.server_stats:
        entry = by_instance.setdefault(
            (stats.engine, stats.instance),
            {"engine": stats.engine, "instance": stats.instance, "samples": 0, "source": "aggregate"},
        )
        if stats.metric == "kv_cache_usage":
            entry.update(kv_peak=stats.stats.get("max"), kv_p95=stats.stats.get("p95"))
        elif stats.metric == "preemptions":
            entry["preemptions"] = stats.stats.get("total")
        elif stats.metric == "requests_waiting":
            entry.update(waiting_peak=stats.stats.get("max"), waiting_mean=stats.stats.get("avg"))
        elif stats.metric == "requests_running":
            entry["running_peak"] = stats.stats.get("max")
    return [KvSummary(**entry) for entry in by_instance.values()]


# ---------------------------------------------------------------------------------------------------------------
# Circuit breaker


class BreakerKind(StrEnum):
    TRIP = "trip"
    SHED = "shed"
    RECOVER = "recover"


@dataclass(frozen=True, kw_only=True)
class BreakerEvent:
    """One line of the circuit-breaker events log (module docstring)."""

    time_s: float
    kind: str  # a BreakerKind value
    breaker: str | None = None
    detail: str | None = None


class BreakerLogError(ValueError):
    """The breaker events log cannot be read; the message says where and why."""


def parse_breaker_events(text: str, *, tz: tzinfo = UTC) -> tuple[BreakerEvent, ...]:
    """The events of a breaker log (JSON lines ``{time, kind, breaker?, detail?}``), in time order; BreakerLogError
    naming the line otherwise. An ISO time without a zone is in `tz` (the zone the monitoring log's own local
    times are read in); POSIX seconds and times with a zone keep theirs.

    >>> events = parse_breaker_events('{"time": "2026-11-30T13:41:02Z", "kind": "trip", "breaker": "kv"}\\n'
    ...                               '{"time": "2026-11-30T13:41:03.200Z", "kind": "shed", "breaker": "kv"}')
    >>> [(e.kind, iso_utc(e.time_s)) for e in events]
    [('trip', '2026-11-30T13:41:02Z'), ('shed', '2026-11-30T13:41:03.200Z')]
    """
    found: list[BreakerEvent] = []
    kinds = {k.value for k in BreakerKind}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = bounded_loads(line)
        except json.JSONDecodeError as error:
            raise BreakerLogError(f"breaker log line {number} is not JSON ({error.msg})") from None
        if not isinstance(record, dict) or record.get("kind") not in kinds:
            raise BreakerLogError(f"breaker log line {number}: 'kind' must be one of trip, shed, recover")
        when = record.get("time")
        try:
            time_s = (
                float(when)
                if isinstance(when, int | float) and not isinstance(when, bool)
                else parse_time(str(when), tz=tz)
            )
        except ValueError:
            raise BreakerLogError(
                f"breaker log line {number}: 'time' {when!r} is not ISO 8601 or POSIX seconds"
            ) from None
        found.append(
            BreakerEvent(time_s=time_s, kind=record["kind"], breaker=record.get("breaker"), detail=record.get("detail"))
        )
    return tuple(sorted(found, key=lambda e: e.time_s))


@dataclass(frozen=True, kw_only=True)
class BreakerReaction:
    """A trip and the breaker's reaction: `reaction_s` None when no shed followed before its recover."""

    breaker: str | None
    trip_s: float
    shed_s: float | None
    reaction_s: float | None
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "breaker": self.breaker,
            "trip": iso_utc(self.trip_s),
            "shed": iso_utc(self.shed_s),
            "reaction_s": self.reaction_s,
            "passed": self.passed,
        }


def breaker_reactions(
    events: Iterable[BreakerEvent], *, max_reaction_s: float = BREAKER_MAX_REACTION_S
) -> list[BreakerReaction]:
    """Each trip with the first shed of the same breaker after it (before that breaker's recover).

    >>> events = [BreakerEvent(time_s=0.0, kind="trip"), BreakerEvent(time_s=1.5, kind="shed"),
    ...           BreakerEvent(time_s=9.0, kind="recover"), BreakerEvent(time_s=20.0, kind="trip"),
    ...           BreakerEvent(time_s=23.5, kind="shed")]
    >>> [(r.reaction_s, r.passed) for r in breaker_reactions(events)]
    [(1.5, True), (3.5, False)]
    """
    ordered = sorted(events, key=lambda e: e.time_s)
    found: list[BreakerReaction] = []
    for index, event in enumerate(ordered):
        if event.kind != BreakerKind.TRIP.value:
            continue
        shed: BreakerEvent | None = None
        for later in ordered[index + 1 :]:
            if event.breaker is not None and later.breaker is not None and later.breaker != event.breaker:
                continue
            if later.kind == BreakerKind.RECOVER.value:
                break
            if later.kind == BreakerKind.SHED.value:
                shed = later
                break
        reaction = round(shed.time_s - event.time_s, 6) if shed else None
        found.append(
            BreakerReaction(
                breaker=event.breaker,
                trip_s=event.time_s,
                shed_s=shed.time_s if shed else None,
                reaction_s=reaction,
                passed=reaction is not None and reaction <= max_reaction_s,
            )
        )
    return found


# ---------------------------------------------------------------------------------------------------------------
# Restarts as events


@dataclass(frozen=True, kw_only=True)
class RestartEvent:
    """One restart (or outage) of the server, however many places showed it: the GPUs whose memory fell, a
    counter that went down, a restart line of the log. `kind` is "restart", or "down" when no GPU came back."""

    time_s: float | None
    kind: str
    gpus: tuple[str, ...]
    sources: tuple[str, ...]  # "memory", "counter" / "log" (the timeline's restart events)
    messages: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": iso_utc(self.time_s),
            "kind": self.kind,
            "gpus": list(self.gpus),
            "sources": list(self.sources),
            "messages": list(self.messages),
        }


def restart_window_s(series: Iterable[GpuSeries]) -> float:
    """How close two sightings of a restart must be to count as one: `RESTART_SAME_EVENT_S`, or two sampling
    intervals of the slowest-sampled GPU when that is longer (GPUs logged in turn fall at adjacent samples)."""
    intervals = []
    for one in series:
        times = [s.time_s for s in _dated(one)]
        if len(times) >= 2:
            intervals.append(float(np.median(np.diff(np.asarray(times, dtype=np.float64)))))
    return max([RESTART_SAME_EVENT_S, *(RESTART_SAME_EVENT_SAMPLES * i for i in intervals)])


def group_restarts(
    sightings: Iterable[tuple[float | None, str, str | None, str, str]], *, window_s: float = RESTART_SAME_EVENT_S
) -> list[RestartEvent]:
    """Restart events from sightings ``(time, kind, gpu, source, message)``: dated sightings within `window_s` of
    the previous one of a group join it (one restart seen on two GPUs at the same time is one restart); undated
    ones are one event each. A group is "down" only when every sighting in it is.

    >>> events = group_restarts([(100.0, "restart", "0", "memory", "a"), (100.0, "restart", "1", "memory", "b"),
    ...                          (104.0, "restart", None, "counter", "c"), (900.0, "down", "0", "memory", "d")])
    >>> [(e.time_s, e.kind, e.gpus, e.sources) for e in events]
    [(100.0, 'restart', ('0', '1'), ('memory', 'counter')), (900.0, 'down', ('0',), ('memory',))]
    """
    items = sorted(sightings, key=lambda item: (item[0] is None, item[0] or 0.0))
    groups: list[list[tuple[float | None, str, str | None, str, str]]] = []
    for item in items:
        last = groups[-1][-1] if groups else None
        if item[0] is not None and last is not None and last[0] is not None and item[0] - last[0] <= window_s:
            groups[-1].append(item)
        else:
            groups.append([item])

    def unique(values: Iterable[str | None]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for v in values if v))

    return [
        RestartEvent(
            time_s=group[0][0],
            kind="down" if all(g[1] == "down" for g in group) else "restart",
            gpus=unique(g[2] for g in group),
            sources=unique(g[3] for g in group),
            messages=unique(g[4] for g in group),
        )
        for group in groups
    ]


def restart_events(timeline: MemoryTimeline, events: Iterable[TimelineEvent] | None = None) -> list[RestartEvent]:
    """The restarts of a timeline, one per event: falls to near zero in each GPU's memory and the restart events
    of the log (`events`, default the timeline's), grouped by `group_restarts` over `restart_window_s`."""
    sightings: list[tuple[float | None, str, str | None, str, str]] = [
        (e.time_s, e.kind, e.gpu, "memory", e.message) for series in timeline.gpus for e in memory_restarts(series)
    ]
    sightings += [
        (e.time_s, "restart", e.gpu, "log", e.message)
        for e in (timeline.events if events is None else events)
        if e.kind == EventKind.RESTART.value
    ]
    return group_restarts(sightings, window_s=restart_window_s(timeline.gpus))


# ---------------------------------------------------------------------------------------------------------------
# What a verdict needs


def verdict_requirements(
    *,
    hours_required: float,
    climb_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a "pass" needs, known before the upload: `hours_required` of coverage and, for the climb test,
    ``climb_min_buckets`` buckets of ``climb_bucket_s`` (24 hourly buckets by default). ``hours_for_pass`` is the
    larger of the two in hours: a log shorter than the climb test's minimum is "insufficient" even when it covers
    the hours required, and ``climb_limits_pass`` says so (code ``hours_below_climb_minimum`` in ``notes``).

    >>> needs = verdict_requirements(hours_required=1)
    >>> needs["climb_min_buckets"], needs["hours_for_pass"], needs["notes"]
    (24, 24.0, ['hours_below_climb_minimum'])
    """
    options = dict(climb_options or {})
    bucket_s = float(options.get("bucket_s", CLIMB_BUCKET_S))
    min_hours = float(options.get("min_hours", CLIMB_MIN_HOURS))
    buckets = max(2, math.ceil(min_hours * 3600 / bucket_s))
    climb_hours = buckets * bucket_s / 3600
    limits = climb_hours > hours_required
    return {
        "hours_required": hours_required,
        "climb_bucket_s": bucket_s,
        "climb_min_buckets": buckets,
        "climb_min_hours": climb_hours,
        "hours_for_pass": float(max(hours_required, climb_hours)),
        "climb_limits_pass": limits,
        "notes": ["hours_below_climb_minimum"] if limits else [],
    }


# ---------------------------------------------------------------------------------------------------------------
# Analysis and verdict


def _events_with_text(timeline: MemoryTimeline, events_text: str | None, tz: tzinfo = UTC) -> list[TimelineEvent]:
    """The timeline's events and those of the engine/kernel log, its times without a zone read in `tz` (the
    same zone as the monitoring log's own local times, so an OOM line sits where the samples show it)."""
    events = list(timeline.events)
    if events_text:
        start = timeline.start_s
        year = datetime.fromtimestamp(start, tz).year if start is not None else None  # for year-less log times
        events.extend(parse_event_log(events_text, year=year, tz=tz))
    return sorted(events, key=lambda e: (e.time_s is None, e.time_s or 0.0))


def memory_analysis(
    timeline: MemoryTimeline,
    *,
    committed_bytes_per_gpu: int | None = None,
    events_text: str | None = None,
    promised_concurrency: int | None = None,
    events_tz: tzinfo = UTC,
) -> dict[str, Any]:
    """Everything the timeline shows, for the detail page and charts. `events_tz` is the zone of the events log's
    times written without one (give the zone the monitoring log was read in).

    Returns ``{"start", "end", "coverage_hours", "gpus": [{"gpu", "name", "peak_bytes", "peak_at", "total_bytes",
    "committed_bytes", "headroom_bytes", "climb": Climb.as_dict(), "ooms": [MemoryEvent.as_dict()], "restarts":
    [...]}], "servers": [KvSummary.as_dict()], "events": [TimelineEvent.as_dict()]}`` (times ISO 8601 UTC,
    bytes as integers; ``headroom_bytes`` = commitment − peak).
    """
    gpus = []
    for series in timeline.gpus:
        peak = gpu_peak(series)
        if peak is None:
            continue
        gpus.append(
            {
                "gpu": series.gpu,
                "name": series.name,
                "peak_bytes": peak.peak_bytes,
                "peak_at": iso_utc(peak.at_s),
                "total_bytes": peak.total_bytes,
                "committed_bytes": committed_bytes_per_gpu,
                "headroom_bytes": committed_bytes_per_gpu - peak.peak_bytes if committed_bytes_per_gpu else None,
                "climb": climb(series, committed_bytes=committed_bytes_per_gpu).as_dict(),
                "ooms": [e.as_dict() for e in memory_ooms(series)],
                "restarts": [e.as_dict() for e in memory_restarts(series)],
            }
        )
    servers = [kv_summary(s, promised_concurrency=promised_concurrency) for s in timeline.servers]
    servers += _kv_from_stats(timeline)
    return {
        "start": iso_utc(timeline.start_s),
        "end": iso_utc(timeline.end_s),
        "coverage_hours": coverage_hours(timeline),
        "gpus": gpus,
        "servers": [s.as_dict() for s in servers],
        "events": [e.as_dict() for e in _events_with_text(timeline, events_text, events_tz)],
        "restart_events": [
            r.as_dict() for r in restart_events(timeline, _events_with_text(timeline, events_text, events_tz))
        ],
    }


@dataclass(frozen=True, kw_only=True)
class _Check:
    code: CheckCode
    passed: bool | None
    message: str
    extra: Mapping[str, Any]
    first_violation_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        extra = dict(self.extra)
        if self.passed is False:
            extra["first_violation"] = iso_utc(self.first_violation_s)
        return {"code": self.code.value, "passed": self.passed, "message": self.message, "extra": extra}


def _earliest(times: Iterable[float | None]) -> float | None:
    known = [t for t in times if t is not None]
    return min(known) if known else None


def _check_coverage(timeline: MemoryTimeline, hours: float, hours_required: float) -> _Check:
    start, end = timeline.start_s, timeline.end_s
    extra = {"coverage_hours": hours, "hours_required": hours_required, "start": iso_utc(start), "end": iso_utc(end)}
    if hours >= hours_required:
        return _Check(
            code=CheckCode.COVERAGE,
            passed=True,
            extra=extra,
            message=f"The log covers {hours:g} h of the {hours_required:g} h required.",
        )
    why = "" if start is not None else " (the log carries no times)"
    return _Check(
        code=CheckCode.COVERAGE,
        passed=False,
        extra=extra,
        message=f"The log covers {hours:g} h{why}; the verdict needs {hours_required:g} h of monitoring.",
    )


def _check_peak(timeline: MemoryTimeline, committed: int | None) -> _Check:
    """The highest reading against the commitment, within the gauge's step (`gauge_resolution_bytes`): a reading
    fails only when it is more than one step above it, never on equality or a difference the gauge cannot show."""
    peaks = [p for p in (gpu_peak(s) for s in timeline.gpus) if p is not None]
    tolerance = gauge_resolution_bytes(s for s in timeline.gpus if s.peak_bytes is not None)
    highest = max(peaks, key=lambda p: p.peak_bytes) if peaks else None
    extra: dict[str, Any] = {
        "committed_bytes_per_gpu": committed,
        "gpus": [p.as_dict() for p in peaks],
        "peak_bytes": highest.peak_bytes if highest else None,
        "tolerance_bytes": tolerance,
    }
    if highest is None:
        return _Check(
            code=CheckCode.PEAK_WITHIN_COMMITMENT,
            passed=None,
            extra={**extra, "reason": "no_gpu_series"},
            message="The log has no GPU memory series: the peak cannot be compared with the commitment.",
        )
    if not committed:
        return _Check(
            code=CheckCode.PEAK_WITHIN_COMMITMENT,
            passed=None,
            extra={**extra, "reason": "no_commitment"},
            message="No committed figure per GPU was given: the peak cannot be judged.",
        )
    limit = committed + tolerance
    over = [p for p in peaks if p.peak_bytes > limit]
    extra["max_peak_bytes"] = highest.peak_bytes
    extra["headroom_bytes"] = committed - highest.peak_bytes
    extra["limit_bytes"] = limit
    if not over:
        within = highest.peak_bytes > committed
        extra["reason"] = "within_resolution" if within else "within_commitment"
        spare = (
            f"{_mib(highest.peak_bytes - committed)} above it, less than the gauge's step of {_mib(tolerance)}"
            ", which cannot tell it from the commitment"
            if within
            else f"{_mib(committed - highest.peak_bytes)} to spare, judged within the gauge's step of {_mib(tolerance)}"
        )
        return _Check(
            code=CheckCode.PEAK_WITHIN_COMMITMENT,
            passed=True,
            extra=extra,
            message=f"The highest peak, {_mib(highest.peak_bytes)} on GPU {highest.gpu} at "
            f"{iso_utc(highest.at_s)}, stays within the commitment of {_mib(committed)} per GPU "
            f"({spare}).",
        )
    dated = sorted(
        (s.time_s, series.gpu, s.memory_used_bytes)
        for series in timeline.gpus
        for s in series.samples
        if s.time_s is not None and s.memory_used_bytes is not None and s.memory_used_bytes > limit
    )
    first_time, first_gpu, first_value = dated[0] if dated else (None, over[0].gpu, over[0].peak_bytes)
    extra.update(
        reason="above_commitment",
        over_bytes=highest.peak_bytes - committed,
        first_violation_bytes=first_value,
        first_violation_gpu=first_gpu,
    )
    names = ", ".join(f"GPU {p.gpu} ({_mib(p.peak_bytes)} at {iso_utc(p.at_s)})" for p in over)
    return _Check(
        code=CheckCode.PEAK_WITHIN_COMMITMENT,
        passed=False,
        extra=extra,
        first_violation_s=first_time,
        message=f"Memory went above the commitment of {_mib(committed)} per GPU by more than the gauge's "
        f"step of {_mib(tolerance)} on {names}; first {_mib(first_value)} on GPU {first_gpu} at "
        f"{iso_utc(first_time)}.",
    )


def _check_oom(timeline: MemoryTimeline, events: list[TimelineEvent]) -> _Check:
    ooms = [e for series in timeline.gpus for e in memory_ooms(series)]
    logged = [e for e in events if e.kind in (EventKind.OOM.value, EventKind.XID.value)]
    smi_errors = [e for e in events if e.kind == EventKind.SMI_ERROR.value]
    extra: dict[str, Any] = {
        "memory_ooms": [e.as_dict() for e in ooms],
        "logged": [e.as_dict() for e in logged],
        "smi_errors": [e.as_dict() for e in smi_errors],
        "gpus_without_total": [g.gpu for g in timeline.gpus if not g.total_bytes],
    }
    note = f" nvidia-smi reported {len(smi_errors)} error(s) instead of samples." if smi_errors else ""
    if not ooms and not logged:
        return _Check(
            code=CheckCode.NO_OOM, passed=True, extra=extra, message="No out-of-memory event and no XID error." + note
        )
    first = _earliest([*(e.time_s for e in ooms), *(e.time_s for e in logged)])
    parts = [e.message for e in ooms[:3]]
    parts += [
        (f"XID {e.code}" if e.kind == EventKind.XID.value else "OOM error") + f" at {iso_utc(e.time_s)}"
        for e in logged[:3]
    ]
    return _Check(
        code=CheckCode.NO_OOM,
        passed=False,
        extra=extra,
        first_violation_s=first,
        message=f"{len(ooms) + len(logged)} out-of-memory/XID event(s): " + "; ".join(parts) + "." + note,
    )


def _check_restart(timeline: MemoryTimeline, events: list[TimelineEvent]) -> _Check:
    seen = [e for series in timeline.gpus for e in memory_restarts(series)]
    logged = [e for e in events if e.kind == EventKind.RESTART.value]
    grouped = restart_events(timeline, events)
    extra = {
        "memory": [e.as_dict() for e in seen],
        "logged": [e.as_dict() for e in logged],
        "events": [e.as_dict() for e in grouped],
        "count": len(grouped),
        "restarts": sum(1 for e in grouped if e.kind == "restart"),
        "downs": sum(1 for e in grouped if e.kind == "down"),
        "same_event_s": restart_window_s(timeline.gpus),
    }
    if not grouped:
        return _Check(
            code=CheckCode.NO_RESTART, passed=True, extra={**extra, "reason": "none"}, message="No server restart."
        )
    parts = []
    for event in grouped[:3]:
        where = f" (GPU {', '.join(event.gpus)})" if event.gpus else ""
        parts.append(("outage" if event.kind == "down" else "restart") + f" at {iso_utc(event.time_s)}{where}")
    return _Check(
        code=CheckCode.NO_RESTART,
        passed=False,
        extra={**extra, "reason": "restarted"},
        first_violation_s=_earliest(e.time_s for e in grouped),
        message=f"{len(grouped)} restart(s) or outage(s), each counted once however many GPUs showed it: "
        + "; ".join(parts)
        + ".",
    )


def _check_climb(timeline: MemoryTimeline, committed: int | None, **options: Any) -> _Check:
    climbs = [
        climb(series, committed_bytes=committed, **options) for series in timeline.gpus if series.peak_bytes is not None
    ]
    extra = {
        "gpus": [c.as_dict() for c in climbs],
        "bucket_s": options.get("bucket_s", CLIMB_BUCKET_S),
        "min_hours": options.get("min_hours", CLIMB_MIN_HOURS),
        "horizon_hours": options.get("horizon_hours", CLIMB_HORIZON_HOURS),
        "confidence": options.get("confidence", CLIMB_CONFIDENCE),
    }
    if not climbs:
        return _Check(
            code=CheckCode.NO_SUSTAINED_CLIMB,
            passed=None,
            extra=extra,
            message="The log has no GPU memory series: a climb cannot be judged.",
        )
    sustained = [c for c in climbs if c.sustained]
    if sustained:
        parts = [
            f"GPU {c.gpu} rises {_rate(c.slope_bytes_per_hour)} (95 % CI {_rate(c.slope_low_bytes_per_hour)}"
            f" to {_rate(c.slope_high_bytes_per_hour)}) and reaches "
            + (
                f"the {c.limit_source} in {c.hours_to_limit:,.0f} h"
                if c.hours_to_limit is not None
                else "an unknown limit"
            )
            + f", proven by {iso_utc(c.detected_at_s)}"
            for c in sustained
        ]
        return _Check(
            code=CheckCode.NO_SUSTAINED_CLIMB,
            passed=False,
            extra=extra,
            first_violation_s=_earliest(c.detected_at_s for c in sustained),
            message="Sustained memory climb: " + "; ".join(parts) + ".",
        )
    unjudged = [c for c in climbs if not c.judged]
    if unjudged:
        return _Check(
            code=CheckCode.NO_SUSTAINED_CLIMB,
            passed=None,
            extra=extra,
            message="Too little data to judge a climb: "
            + "; ".join(f"GPU {c.gpu}: {c.reason}" for c in unjudged)
            + ".",
        )
    steepest = max(climbs, key=lambda c: c.slope_bytes_per_hour or 0.0)
    return _Check(
        code=CheckCode.NO_SUSTAINED_CLIMB,
        passed=True,
        extra=extra,
        message=f"No sustained climb; the steepest slope is {_rate(steepest.slope_bytes_per_hour)} on "
        f"GPU {steepest.gpu} ({steepest.reason}).",
    )


def _check_kv(timeline: MemoryTimeline, promised_concurrency: int | None) -> _Check | None:
    summaries = [kv_summary(s, promised_concurrency=promised_concurrency) for s in timeline.servers]
    summaries += _kv_from_stats(timeline)
    summaries = [s for s in summaries if s.kv_peak is not None or s.preemptions is not None]
    if not summaries:
        return None
    extra = {"servers": [s.as_dict() for s in summaries], "promised_concurrency": promised_concurrency}
    full = [s for s in summaries if s.kv_peak is not None and s.kv_peak >= 1.0]
    preempted = [s for s in summaries if (s.preemptions or 0) - (s.preemptions_beyond_promise or 0) > 0]
    peak = max((s.kv_peak for s in summaries if s.kv_peak is not None), default=None)
    preemptions = sum((s.preemptions or 0) - (s.preemptions_beyond_promise or 0) for s in summaries)
    if not full and not preempted:
        text = f"KV-cache usage peaked at {peak:.1%}" if peak is not None else "KV-cache usage unknown"
        return _Check(
            code=CheckCode.KV_HEADROOM,
            passed=True,
            extra=extra,
            message=f"{text}, with no preemption"
            + (" within the promised concurrency" if promised_concurrency is not None else "")
            + ".",
        )
    first = _earliest([*(s.first_full_s for s in full), *(s.first_preemption_s for s in preempted)])
    parts = []
    if full:
        parts.append(f"KV-cache usage reached 100 % ({', '.join(s.instance or s.engine for s in full)})")
    if preempted:
        parts.append(f"{preemptions:g} preemption(s)")
    return _Check(
        code=CheckCode.KV_HEADROOM,
        passed=False,
        extra=extra,
        first_violation_s=first,
        message="; ".join(parts) + (f", first at {iso_utc(first)}" if first is not None else "") + ".",
    )


def _check_breaker(events: Sequence[BreakerEvent], max_reaction_s: float) -> _Check:
    reactions = breaker_reactions(events, max_reaction_s=max_reaction_s)
    extra = {"max_reaction_s": max_reaction_s, "trips": len(reactions), "reactions": [r.as_dict() for r in reactions]}
    late = [r for r in reactions if not r.passed]
    if not reactions:
        return _Check(
            code=CheckCode.BREAKER_REACTION, passed=True, extra=extra, message="The circuit breaker never tripped."
        )
    slowest = max((r.reaction_s for r in reactions if r.reaction_s is not None), default=None)
    extra["slowest_reaction_s"] = slowest
    if not late:
        return _Check(
            code=CheckCode.BREAKER_REACTION,
            passed=True,
            extra=extra,
            message=f"All {len(reactions)} trip(s) were acted on within {max_reaction_s:g} s (slowest {slowest:g} s).",
        )
    parts = [
        f"trip at {iso_utc(r.trip_s)} "
        + (f"acted on after {r.reaction_s:g} s" if r.reaction_s is not None else "never acted on")
        for r in late[:3]
    ]
    return _Check(
        code=CheckCode.BREAKER_REACTION,
        passed=False,
        extra=extra,
        first_violation_s=_earliest(r.trip_s for r in late),
        message=f"{len(late)} of {len(reactions)} trip(s) not acted on within {max_reaction_s:g} s: "
        + "; ".join(parts)
        + ".",
    )


def health_verdict(
    timeline: MemoryTimeline,
    *,
    committed_bytes_per_gpu: int | None,
    hours_required: float = 72,
    breaker_events: str | Sequence[BreakerEvent] | None = None,
    events_text: str | None = None,
    promised_concurrency: int | None = None,
    max_reaction_s: float = BREAKER_MAX_REACTION_S,
    climb_options: Mapping[str, Any] | None = None,
    events_tz: tzinfo = UTC,
) -> dict[str, Any]:
    """The post-launch health verdict of a monitoring log (issue 6 part 6; rules in the module docstring).

    `breaker_events` is the breaker log's text (JSON lines) or parsed events: the ``breaker_reaction`` check is
    made only when it is given (``None``: no breaker events logged). `events_text` is an engine/kernel log scanned
    for OOM and XID lines. `climb_options` override `climb`'s keyword arguments (bucket_s, min_hours,
    horizon_hours, confidence).

    Returns ``{"verdict": "pass" | "fail" | "insufficient", "checks": [{"code", "passed", "message", "extra"}],
    "first_violation": ISO 8601 or None, "coverage_hours": float}``. Check codes, in order: ``coverage``,
    ``no_oom``, ``no_restart``, ``no_sustained_climb``, ``peak_within_commitment``, ``kv_headroom`` (when the log
    has KV or preemption figures), ``breaker_reaction`` (when breaker events are given). ``passed`` is None when a
    check cannot be judged; a failed check's ``extra`` holds its ``first_violation``. BreakerLogError when the
    breaker log cannot be read. `events_tz` is the zone of the events and breaker logs' times written without
    one: give the zone the monitoring log was read in, so every time of the log is in one zone.

    Also, at the top level and in ``"figures"``: ``peak_bytes`` (the highest memory used on any GPU, None without
    a series), ``tolerance_bytes`` (the gauge's step the peak is judged within); in ``"figures"`` also
    ``committed_bytes_per_gpu``, ``coverage_hours``, ``hours_required``, ``restarts`` (events, each counted once
    however many GPUs showed it); and ``"requirements"`` (`verdict_requirements`: what a pass needs, the climb
    test's buckets included).
    """
    hours = coverage_hours(timeline)
    events = _events_with_text(timeline, events_text, events_tz)
    checks = [
        _check_coverage(timeline, hours, hours_required),
        _check_oom(timeline, events),
        _check_restart(timeline, events),
        _check_climb(timeline, committed_bytes_per_gpu, **dict(climb_options or {})),
        _check_peak(timeline, committed_bytes_per_gpu),
    ]
    kv = _check_kv(timeline, promised_concurrency)
    if kv is not None:
        checks.append(kv)
    if breaker_events is not None:
        parsed = (
            parse_breaker_events(breaker_events, tz=events_tz)
            if isinstance(breaker_events, str)
            else tuple(breaker_events)
        )
        checks.append(_check_breaker(parsed, max_reaction_s))
    failed = [c for c in checks if c.code != CheckCode.COVERAGE and c.passed is False]
    if failed:
        verdict = Verdict.FAIL
    elif checks[0].passed is False or any(c.passed is None for c in checks):
        verdict = Verdict.INSUFFICIENT
    else:
        verdict = Verdict.PASS
    peak = checks[4].extra
    restart = checks[2].extra
    return {
        "verdict": verdict.value,
        "checks": [c.as_dict() for c in checks],
        "first_violation": iso_utc(_earliest(c.first_violation_s for c in failed)),
        "coverage_hours": hours,
        "peak_bytes": peak["peak_bytes"],
        "tolerance_bytes": peak["tolerance_bytes"],
        "figures": {
            "peak_bytes": peak["peak_bytes"],
            "committed_bytes_per_gpu": committed_bytes_per_gpu,
            "tolerance_bytes": peak["tolerance_bytes"],
            "coverage_hours": hours,
            "hours_required": hours_required,
            "restarts": restart["count"],
        },
        "requirements": verdict_requirements(hours_required=hours_required, climb_options=climb_options),
    }

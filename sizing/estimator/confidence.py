"""The confidence of a committed peak per GPU: the bound, the probability that it holds, and how it was obtained.

Two methods, by how the engine takes its memory (DESIGN §11):

- **reserved_budget** (vLLM, SGLang, TensorRT-LLM reserve at start). The engine holds its budget (the flag's fraction
  of the card, or the KV bytes given) from the first second and its own profiler keeps it there; what can go further
  is what lives outside that budget (CUDA graphs before vLLM 0.20, the memory the profiler does not see), and that is
  the estimator's. So the bound is ``budget + outside + margin`` with ``margin = q × outside``, where ``q`` is the
  one-sided prediction bound, at the stated probability, of the estimator's absolute relative error measured against
  real boot logs of that engine and release band (`MEASURED_ERRORS`; the KV budget error, the one figure a boot log
  states exactly): ``q = mean|e| + t(p, n−1) · sd|e| · √(1 + 1/n)`` (Student's t, a new observation from the same
  population as the n measured). A band with fewer than `MIN_BAND_SAMPLES` logs uses the engine's whole sample, and
  says so; an engine with no measured log gets `ASSUMED_ERROR` and is marked assumed.
  The probability that KV demand exceeds the cache at the stated workload (the simulation's overflow share) is not a
  risk of running out of memory for such an engine: it is the risk of queueing and preemption, and is stated apart.
- **simulated_percentile** (engines that grow on demand). The peak is the stated percentile of the simulated memory
  demand (the memory that does not depend on the load plus the KV demand over the simulated time), with the sample
  size; with fewer samples than the percentile resolves (n < 1 / (1 − p)) it is the largest sample, and says so.

Measured evidence then moves the bound (`with_measurements`): a measured peak above it raises the bound to the measured
peak plus the gauge's tolerance; 72 hours or more of monitoring whose peaks stay inside it tighten the margin to the
largest measured excess over the base plus that tolerance (never below the base: the budget is held regardless).

>>> round(prediction_bound([0.01, 0.02, 0.03], 0.999), 4)  # 0.02 + 22.327 · 0.01 · √(4/3)
0.2778
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from scipy import stats  # type: ignore[import-untyped]  # scipy ships no stubs (scipy-stubs is no dependency)

from sizing.estimator.versions import Version, parse_version

PROBABILITY = 0.999  # the commitment reads "显存峰值 ≤ X GiB, 置信度 99.9%"
MIN_BAND_SAMPLES = 3  # fewer logs in a release band: the engine's whole sample
ASSUMED_ERROR = 0.10  # no log of the engine measured: an assumed relative error, marked as such
MONITORING_HOURS_TO_TIGHTEN = 72.0


@dataclass(frozen=True)
class ErrorSample:
    """One real boot log against the estimate (tests/benchmarks/vllm_kv_budget.py, uncalibrated, its own release)."""

    source: str  # the log's record in the benchmark's data
    release: str
    relative_error: float  # (estimated − logged) / logged, of the KV cache the log states


@dataclass(frozen=True)
class ReleaseBand:
    engine: str
    label: str
    oldest: Version
    newest: Version | None  # None: up to the newest modelled


# The estimator's KV-budget error against real vLLM boot logs: tests/benchmarks/vllm_kv_budget.py, section 1, as last
# run (2026-12-02; the benchmark prints the same figures, so a change in the estimator shows there first).
MEASURED_ERRORS: dict[str, tuple[ErrorSample, ...]] = {
    "vllm": (
        ErrorSample("vllm-pr10511-llama3-8b-tp1", "0.6.5", +0.0145),
        ErrorSample("vllm-10517-llama3.1-8b-3090-20000", "0.6.4", -0.0108),
        ErrorSample("vllm-pr17122-llama3.1-8b-l40s", "0.8.5", +0.2100),
        ErrorSample("codefile-7884883735-llama3.2-3b-t4", "0.8.5", -0.0542),
        ErrorSample("vllm-21348-qwen3-235b-fp8-vllm", "0.9.2", -0.0184),
        ErrorSample("myoceane-gpt-oss-20b-a100", "0.19.0", +0.0036),
    ),
}

# Release bands whose memory rules differ in what lives outside the budget (sizing/estimator/vllm_budget.py): V0 era,
# V1 with CUDA graphs outside the budget, CUDA graphs inside from 0.20.
RELEASE_BANDS: tuple[ReleaseBand, ...] = (
    ReleaseBand("vllm", "0.6–0.7", Version(0, 6, 0), Version(0, 7, 99)),
    ReleaseBand("vllm", "0.8–0.19", Version(0, 8, 0), Version(0, 19, 99)),
    ReleaseBand("vllm", "0.20+", Version(0, 20, 0), None),
)


def prediction_bound(errors: Sequence[float], probability: float) -> float:
    """The one-sided `probability` prediction bound of |e| for a new case: mean|e| + t(p, n−1) · sd|e| · √(1 + 1/n).
    One sample gives its |e| (no spread is known); none is refused."""
    magnitudes = [abs(e) for e in errors]
    if not magnitudes:
        raise ValueError("no measured errors")
    n = len(magnitudes)
    if n == 1:
        return magnitudes[0]
    t = float(stats.t.ppf(probability, n - 1))
    return statistics.fmean(magnitudes) + t * statistics.stdev(magnitudes) * math.sqrt(1 + 1 / n)


@dataclass(frozen=True)
class ErrorBand:
    """The measured errors that apply to one engine release."""

    engine: str
    band: str  # the release band's label, or "all" when the engine's whole sample is used
    samples: tuple[ErrorSample, ...]
    pooled: bool  # the band had fewer than MIN_BAND_SAMPLES logs: the engine's whole sample
    assumed: bool  # no log of the engine measured: ASSUMED_ERROR

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def max_abs_error(self) -> float:
        return max((abs(s.relative_error) for s in self.samples), default=ASSUMED_ERROR)

    def bound(self, probability: float) -> float:
        return (
            ASSUMED_ERROR if self.assumed else prediction_bound([s.relative_error for s in self.samples], probability)
        )


def _band_of(engine: str, version: Version | None) -> ReleaseBand | None:
    if version is None:
        return None
    for band in RELEASE_BANDS:
        if band.engine == engine and band.oldest <= version and (band.newest is None or version <= band.newest):
            return band
    return None


def error_band(engine: str, release: str | None) -> ErrorBand:
    """The errors measured for `engine` at `release` (its band's, else the engine's whole sample, else assumed)."""
    samples = MEASURED_ERRORS.get(engine, ())
    if not samples:
        return ErrorBand(engine=engine, band="", samples=(), pooled=False, assumed=True)
    band = _band_of(engine, parse_version(release or ""))
    if band is not None:
        inside = tuple(s for s in samples if _band_of(engine, parse_version(s.release)) == band)
        if len(inside) >= MIN_BAND_SAMPLES:
            return ErrorBand(engine=engine, band=band.label, samples=inside, pooled=False, assumed=False)
    return ErrorBand(engine=engine, band="all", samples=samples, pooled=True, assumed=False)


@dataclass(frozen=True)
class Measurement:
    """A measured peak per GPU: a load test or a monitoring log."""

    kind: str  # "load_test" | "memory_log" | "sentinel"
    name: str
    peak_bytes: int
    tolerance_bytes: int  # the gauge's resolution and sampling
    hours: float = 0.0  # how long it watched


@dataclass(frozen=True)
class MeasurementEffect:
    measurement: Measurement
    effect: str  # "raised" | "tightened" | "confirmed"
    bound_bytes: int  # the bound after it


@dataclass(frozen=True)
class Confidence:
    """The committed peak per GPU and how it was obtained (see the module docstring)."""

    method: str  # "reserved_budget" | "simulated_percentile"
    probability: float
    base_bytes: int  # the budget plus what lives outside it, or the simulated percentile
    margin_bytes: int
    outside_bytes: int = 0  # reserved_budget: the estimated part outside the engine's budget
    relative_margin: float | None = None  # reserved_budget: q
    errors: ErrorBand | None = None
    kv_risk: float | None = None  # the simulated share of time KV demand exceeds the cache
    samples: int | None = None  # simulated_percentile: the sample size
    percentile_is_max: bool = False  # too few samples for the percentile: the largest
    effects: tuple[MeasurementEffect, ...] = field(default=())

    @property
    def peak_bytes(self) -> int:
        return self.base_bytes + self.margin_bytes


def reserved_confidence(
    *,
    engine: str,
    release: str | None,
    required_bytes: int,
    budget_bytes: int,
    kv_risk: float | None,
    probability: float = PROBABILITY,
) -> Confidence:
    """An engine that reserves at start: the required memory (its budget plus what lives outside it) and a margin of
    q × the part outside the budget."""
    outside = max(0, int(required_bytes) - int(budget_bytes))
    errors = error_band(engine, release)
    q = errors.bound(probability)
    return Confidence(
        method="reserved_budget",
        probability=probability,
        base_bytes=int(required_bytes),
        margin_bytes=math.ceil(q * outside),
        outside_bytes=outside,
        relative_margin=q,
        errors=errors,
        kv_risk=kv_risk,
    )


def simulated_confidence(
    *, fixed_bytes: int, kv_demand_bytes: Sequence[float], kv_risk: float | None, probability: float = PROBABILITY
) -> Confidence:
    """An engine that grows on demand: the memory that does not depend on the load plus the `probability` percentile
    of the simulated KV demand (the largest sample when there are fewer than the percentile resolves)."""
    if not kv_demand_bytes:
        raise ValueError("no simulated KV demand")
    n = len(kv_demand_bytes)
    too_few = n < math.ceil(1 / (1 - probability))
    kv = max(kv_demand_bytes) if too_few else float(_percentile(kv_demand_bytes, probability * 100))
    return Confidence(
        method="simulated_percentile",
        probability=probability,
        base_bytes=int(fixed_bytes) + math.ceil(kv),
        margin_bytes=0,
        kv_risk=kv_risk,
        samples=n,
        percentile_is_max=too_few,
    )


def _percentile(values: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q))


def with_measurements(confidence: Confidence, measurements: Sequence[Measurement]) -> Confidence:
    """The bound moved by what was measured (see the module docstring); each measurement says what it did.

    The floor is the highest measured peak plus its tolerance. A measured peak above the model's bound raises the
    bound to the floor; otherwise 72 hours or more of monitoring tighten it to the floor (never below the base); else
    the measurements confirm it."""
    if not measurements:
        return confidence
    floor = max(int(m.peak_bytes) + int(m.tolerance_bytes) for m in measurements)
    model = confidence.peak_bytes
    if any(int(m.peak_bytes) > model for m in measurements):
        bound = floor
    elif any(m.hours >= MONITORING_HOURS_TO_TIGHTEN for m in measurements) and floor < model:
        bound = max(confidence.base_bytes, floor)
    else:
        bound = model
    effects = []
    for m in sorted(measurements, key=lambda m: (m.kind, m.name)):
        if int(m.peak_bytes) > model:
            effect = "raised"
        elif bound < model and m.hours >= MONITORING_HOURS_TO_TIGHTEN:
            effect = "tightened"
        else:
            effect = "confirmed"
        effects.append(MeasurementEffect(m, effect, bound))
    return replace(confidence, margin_bytes=bound - confidence.base_bytes, effects=tuple(effects))

"""A customer's traffic: request classes with length distributions, and the arrival pattern of the whole profile.

A profile is data (frozen dataclasses, JSON round-trip with `profile_from_dict` / `profile_to_dict`); `workload_sample`
turns it into concrete requests for the serving simulator, deterministically for a seed.

>>> profile = sample_profile()
>>> [c.name for c in profile.classes]
['Real-time Q&A', 'Report generation', 'Archive analysis']
>>> profile.busiest_hour()
10
>>> requests = workload_sample(profile, rate_per_s=4.0, requests=1000, seed=7)
>>> len(requests.arrival_s), bool(requests.arrival_s[-1] > requests.arrival_s[0])
(1000, True)

Time of day: a class may be active only in windows ("10:00–12:00"). Its share is its share of the day's requests,
spread evenly over its active hours, so the class mix changes through the day; the simulator runs one hour's mix
(the busiest by default), at the offered rate the caller gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from llm_sizing_loadgen.errors import SizingError, invalid_argument

HOURS = 24


class LengthKind(StrEnum):
    FIXED = "fixed"
    NORMAL = "normal"  # truncated to [minimum, maximum] by clipping
    LOGNORMAL = "lognormal"  # parametrised by the mean and standard deviation of the lengths themselves
    EMPIRICAL = "empirical"  # a histogram: (low, high, weight) bins, uniform inside a bin


class ArrivalKind(StrEnum):
    POISSON = "poisson"  # exponential gaps at the rate
    CONSTANT = "constant"  # evenly spaced at the rate
    BURST = "burst"  # Poisson at the rate, plus a burst of extra requests within a short window


@dataclass(frozen=True, kw_only=True)
class LengthDistribution:
    """Token lengths of one side of a request (input or output). Lengths are whole tokens ≥ `minimum`."""

    kind: LengthKind
    mean: float = 0.0  # FIXED: the length; NORMAL / LOGNORMAL: the mean length
    std: float = 0.0
    minimum: int = 1
    maximum: int | None = None
    bins: tuple[tuple[int, int, float], ...] = ()  # EMPIRICAL: (low, high, weight), low ≤ length ≤ high

    def __post_init__(self) -> None:
        if self.minimum < 1:
            raise invalid_argument("minimum", "the shortest length must be ≥ 1 token")
        if self.maximum is not None and self.maximum < self.minimum:
            raise invalid_argument("maximum", f"maximum {self.maximum} is below minimum {self.minimum}")
        if self.kind is LengthKind.EMPIRICAL:
            if not self.bins:
                raise invalid_argument("bins", "an empirical distribution needs at least one (low, high, weight) bin")
            for low, high, weight in self.bins:
                if low < 1 or high < low or weight < 0:
                    raise invalid_argument("bins", f"bin ({low}, {high}, {weight}): need 1 ≤ low ≤ high and weight ≥ 0")
            if sum(weight for _, _, weight in self.bins) <= 0:
                raise invalid_argument("bins", "the bins' weights sum to zero")
        else:
            if not math.isfinite(self.mean) or self.mean < 1:
                raise invalid_argument("mean", f"mean length {self.mean} must be ≥ 1 token")
            if not math.isfinite(self.std) or self.std < 0:
                raise invalid_argument("std", f"standard deviation {self.std} must be ≥ 0")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` lengths as int64, clipped to [minimum, maximum]."""
        if self.kind is LengthKind.FIXED or (self.kind in (LengthKind.NORMAL, LengthKind.LOGNORMAL) and self.std == 0):
            values = np.full(n, round(self.mean), dtype=np.float64)
        elif self.kind is LengthKind.NORMAL:
            values = rng.normal(self.mean, self.std, n)
        elif self.kind is LengthKind.LOGNORMAL:
            mu, sigma = lognormal_parameters(self.mean, self.std)
            values = rng.lognormal(mu, sigma, n)
        else:
            weights = np.array([w for _, _, w in self.bins], dtype=np.float64)
            chosen = rng.choice(len(self.bins), size=n, p=weights / weights.sum())
            lows = np.array([low for low, _, _ in self.bins], dtype=np.float64)[chosen]
            highs = np.array([high for _, high, _ in self.bins], dtype=np.float64)[chosen]
            values = lows + rng.random(n) * (highs - lows + 1) - 0.5
        upper = self.maximum if self.maximum is not None else np.inf
        return np.clip(np.rint(values), self.minimum, upper).astype(np.int64)

    def expected(self) -> float:
        """The mean length before clipping (the figure people state: "≈128 tokens")."""
        if self.kind is LengthKind.EMPIRICAL:
            total = sum(w for _, _, w in self.bins)
            return sum((low + high) / 2 * w for low, high, w in self.bins) / total
        return float(self.mean)


def lognormal_parameters(mean: float, std: float) -> tuple[float, float]:
    """(mu, sigma) of the underlying normal for a lognormal with this mean and standard deviation.

    >>> mu, sigma = lognormal_parameters(2048, 890)
    >>> round(math.exp(mu + sigma**2 / 2))
    2048
    """
    sigma2 = math.log1p((std / mean) ** 2)
    return math.log(mean) - sigma2 / 2, math.sqrt(sigma2)


@dataclass(frozen=True, kw_only=True)
class RequestClass:
    """One kind of request in the customer's traffic."""

    name: str
    share: float  # of the day's requests (the shares of a profile are normalised)
    input: LengthDistribution
    output: LengthDistribution
    shared_prefix_tokens: int = 0  # a system prompt or document every request of the class starts with
    windows: tuple[tuple[int, int], ...] = ()  # active hours [start, end), e.g. ((10, 12),); empty: all day

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise invalid_argument("name", "a request class needs a name")
        if not math.isfinite(self.share) or self.share <= 0:
            raise invalid_argument("share", f"class {self.name!r}: share must be > 0")
        if self.shared_prefix_tokens < 0:
            raise invalid_argument("shared_prefix_tokens", "shared_prefix_tokens must be ≥ 0")
        for start, end in self.windows:
            if not (0 <= start < end <= HOURS):
                raise invalid_argument(
                    "windows", f"class {self.name!r}: window {start}–{end} must satisfy 0 ≤ start < end ≤ 24"
                )

    def active_hours(self) -> tuple[int, ...]:
        if not self.windows:
            return tuple(range(HOURS))
        return tuple(sorted({hour for start, end in self.windows for hour in range(start, end)}))


@dataclass(frozen=True, kw_only=True)
class ArrivalPattern:
    """How requests arrive. The rate itself is the load the caller offers (`workload_sample(rate_per_s=...)`)."""

    kind: ArrivalKind = ArrivalKind.POISSON
    burst_requests: int = 0  # BURST: extra requests, e.g. 50% of the peak concurrency
    burst_window_s: float = 10.0  # BURST: they arrive uniformly within this window
    burst_at_s: float = 0.0  # BURST: when the burst starts, from the start of the run

    def __post_init__(self) -> None:
        if self.burst_requests < 0:
            raise invalid_argument("burst_requests", "burst_requests must be ≥ 0")
        if not self.burst_window_s > 0:
            raise invalid_argument("burst_window_s", "burst_window_s must be > 0")
        if self.burst_at_s < 0:
            raise invalid_argument("burst_at_s", "burst_at_s must be ≥ 0")


@dataclass(frozen=True, kw_only=True)
class WorkloadProfile:
    name: str
    classes: tuple[RequestClass, ...]
    arrival: ArrivalPattern = field(default_factory=ArrivalPattern)
    description: str = ""

    def __post_init__(self) -> None:
        if not self.classes:
            raise invalid_argument("classes", "a profile needs at least one request class")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise invalid_argument("classes", "request class names must be unique")

    def hourly_rates(self) -> npt.NDArray[np.float64]:
        """Relative arrival rate per class and hour, shape (classes, 24): share spread over active hours."""
        total = sum(c.share for c in self.classes)
        rates = np.zeros((len(self.classes), HOURS))
        for index, request_class in enumerate(self.classes):
            hours = request_class.active_hours()
            rates[index, list(hours)] = request_class.share / total / len(hours)
        return rates

    def busiest_hour(self) -> int:
        """The hour with the most requests (the first of equals)."""
        return int(np.argmax(self.hourly_rates().sum(axis=0)))

    def mix_at(self, hour: int | None = None) -> npt.NDArray[np.float64]:
        """Probability that a request arriving at `hour` (default: the busiest) belongs to each class."""
        if hour is not None and not 0 <= hour < HOURS:
            raise invalid_argument("hour", f"hour {hour} must be in 0–23")
        rates: npt.NDArray[np.float64] = self.hourly_rates()[:, self.busiest_hour() if hour is None else hour]
        if rates.sum() <= 0:
            raise invalid_argument("hour", f"no request class is active at {hour}:00")
        mix: npt.NDArray[np.float64] = rates / rates.sum()
        return mix

    def daily_curve(self) -> npt.NDArray[np.float64]:
        """Requests per hour as a share of the day's requests (sums to 1)."""
        curve: npt.NDArray[np.float64] = self.hourly_rates().sum(axis=0)
        return curve


@dataclass(frozen=True, kw_only=True)
class SampledRequests:
    """Concrete requests, sorted by arrival. Arrays of equal length; lengths in tokens, times in seconds."""

    arrival_s: np.ndarray  # float64
    input_tokens: np.ndarray  # int64
    output_tokens: np.ndarray  # int64
    prefix_tokens: np.ndarray  # int64: the shared prefix part of input_tokens (≤ input_tokens - 1)
    class_index: np.ndarray  # int64, into WorkloadProfile.classes
    class_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.arrival_s)


def arrival_times(
    pattern: ArrivalPattern, *, rate_per_s: float | None, requests: int, rng: np.random.Generator
) -> np.ndarray:
    """`requests` arrival times from 0; `rate_per_s` None means offline: every request arrives at time 0."""
    if requests < 1:
        raise invalid_argument("requests", "the number of requests must be ≥ 1")
    if rate_per_s is None:
        return np.zeros(requests)
    if not math.isfinite(rate_per_s) or rate_per_s <= 0:
        raise invalid_argument("rate", f"rate {rate_per_s} must be > 0 requests per second")
    burst = min(pattern.burst_requests, requests - 1) if pattern.kind is ArrivalKind.BURST else 0
    base = requests - burst
    if pattern.kind is ArrivalKind.CONSTANT:
        times = np.arange(base) / rate_per_s
    else:
        times = np.cumsum(rng.exponential(1 / rate_per_s, base))  # the first gap included: a Poisson start
    if burst:
        extra = pattern.burst_at_s + rng.random(burst) * pattern.burst_window_s
        times = np.concatenate([times, extra])
    return np.sort(times)


def workload_sample(
    profile: WorkloadProfile, *, rate_per_s: float | None, requests: int, seed: int = 0, hour: int | None = None
) -> SampledRequests:
    """Draw `requests` requests of the profile's mix at `hour` arriving at `rate_per_s` (None: offline)."""
    rng = np.random.default_rng(seed)
    times = arrival_times(profile.arrival, rate_per_s=rate_per_s, requests=requests, rng=rng)
    mix = profile.mix_at(hour)
    classes = rng.choice(len(profile.classes), size=requests, p=mix)
    inputs = np.empty(requests, dtype=np.int64)
    outputs = np.empty(requests, dtype=np.int64)
    prefixes = np.zeros(requests, dtype=np.int64)
    for index, request_class in enumerate(profile.classes):
        members = np.flatnonzero(classes == index)
        if not len(members):
            continue
        inputs[members] = request_class.input.sample(rng, len(members))
        outputs[members] = request_class.output.sample(rng, len(members))
        if request_class.shared_prefix_tokens:
            inputs[members] += request_class.shared_prefix_tokens  # the prefix comes on top of the varying part
            prefixes[members] = request_class.shared_prefix_tokens
    return SampledRequests(
        arrival_s=times,
        input_tokens=inputs,
        output_tokens=outputs,
        prefix_tokens=prefixes,
        class_index=classes.astype(np.int64),
        class_names=tuple(c.name for c in profile.classes),
    )


def fixed_profile(*, input_tokens: int, output_tokens: int, name: str = "fixed lengths") -> WorkloadProfile:
    """One class with fixed input and output lengths (the field's benchmark shape, e.g. 1000/1000)."""
    return WorkloadProfile(
        name=name,
        classes=(
            RequestClass(
                name=f"{input_tokens}/{output_tokens}",
                share=1.0,
                input=LengthDistribution(kind=LengthKind.FIXED, mean=input_tokens),
                output=LengthDistribution(kind=LengthKind.FIXED, mean=output_tokens),
            ),
        ),
    )


def sample_profile() -> WorkloadProfile:
    """The field's example profile: 65% real-time Q&A all day, 25% report generation 10:00–12:00, 10% archive
    analysis 14:00–16:00. The stated lengths (≈128 σ 42, ≈2048 σ 890, ≈3500 σ 1200) are prompt tokens; the output
    lengths are our assumptions for such traffic, stated in the description, to edit for a real customer."""
    return WorkloadProfile(
        name="Sample: Q&A, reports, archive analysis",
        description=(
            "65% real-time Q&A (input ≈128 tokens, σ 42, all day), 25% report generation (input ≈2048, "
            "σ 890, 10:00–12:00), 10% archive analysis (input ≈3500, σ 1200, 14:00–16:00). Output "
            "lengths are assumptions: Q&A ≈256 (σ 96), reports ≈1024 (σ 384), archive ≈512 (σ 192)."
        ),
        classes=(
            RequestClass(
                name="Real-time Q&A",
                share=0.65,
                input=LengthDistribution(kind=LengthKind.NORMAL, mean=128, std=42, minimum=8),
                output=LengthDistribution(kind=LengthKind.NORMAL, mean=256, std=96, minimum=16),
            ),
            RequestClass(
                name="Report generation",
                share=0.25,
                windows=((10, 12),),
                input=LengthDistribution(kind=LengthKind.NORMAL, mean=2048, std=890, minimum=64),
                output=LengthDistribution(kind=LengthKind.NORMAL, mean=1024, std=384, minimum=64),
            ),
            RequestClass(
                name="Archive analysis",
                share=0.10,
                windows=((14, 16),),
                input=LengthDistribution(kind=LengthKind.NORMAL, mean=3500, std=1200, minimum=256),
                output=LengthDistribution(kind=LengthKind.NORMAL, mean=512, std=192, minimum=32),
            ),
        ),
    )


# ---------------------------------------------------------------------------------------------------------------
# JSON round trip (what the API stores and accepts)


def _length_from_dict(data: object, where: str) -> LengthDistribution:
    if not isinstance(data, Mapping):
        raise invalid_argument(where, f"{where} must be an object with a kind")
    try:
        kind = LengthKind(data.get("kind", ""))
    except ValueError:
        raise invalid_argument(where, f"{where}.kind must be one of {', '.join(k.value for k in LengthKind)}") from None
    try:
        return LengthDistribution(
            kind=kind,
            mean=float(data.get("mean", 0) or 0),
            std=float(data.get("std", 0) or 0),
            minimum=int(data.get("minimum", 1) or 1),
            maximum=int(data["maximum"]) if data.get("maximum") is not None else None,
            bins=tuple((int(b[0]), int(b[1]), float(b[2])) for b in data.get("bins", ()) or ()),
        )
    except SizingError as error:
        message = f"{where}: {error.message}"
        raise invalid_argument(where, message) from None
    except (TypeError, ValueError, IndexError, OverflowError):  # OverflowError: int() of 1e400, which JSON reads as inf
        raise invalid_argument(
            where, f"{where}: numbers expected (mean, std, minimum, maximum, bins as [low, high, weight])"
        ) from None


def profile_from_dict(data: Mapping[str, Any]) -> WorkloadProfile:
    """Build a profile from its JSON form; raises SizingError naming the field at fault."""
    if not isinstance(data, Mapping):
        raise invalid_argument("profile", "a profile must be a JSON object")
    raw_classes = data.get("classes")
    if not isinstance(raw_classes, Sequence) or isinstance(raw_classes, str) or not raw_classes:
        raise invalid_argument("classes", "a profile needs a non-empty list of request classes")
    classes = []
    for index, raw in enumerate(raw_classes):
        where = f"classes[{index}]"
        if not isinstance(raw, Mapping):
            raise invalid_argument(where, f"{where} must be an object")
        try:
            windows = tuple((int(w[0]), int(w[1])) for w in raw.get("windows", ()) or ())
            share = float(raw.get("share", 0))
            prefix = int(raw.get("shared_prefix_tokens", 0) or 0)
        except (TypeError, ValueError, IndexError, OverflowError):
            raise invalid_argument(
                where, f"{where}: share, shared_prefix_tokens and windows ([start, end] hours) must be numbers"
            ) from None
        try:
            classes.append(
                RequestClass(
                    name=str(raw.get("name", "")),
                    share=share,
                    input=_length_from_dict(raw.get("input"), f"{where}.input"),
                    output=_length_from_dict(raw.get("output"), f"{where}.output"),
                    shared_prefix_tokens=prefix,
                    windows=windows,
                )
            )
        except SizingError as error:
            message = error.message if error.message.startswith(where) else f"{where}: {error.message}"
            raise invalid_argument(where, message) from None
    raw_arrival = data.get("arrival") or {}
    if not isinstance(raw_arrival, Mapping):
        raise invalid_argument("arrival", "arrival must be an object")
    try:
        arrival = ArrivalPattern(
            kind=ArrivalKind(raw_arrival.get("kind", ArrivalKind.POISSON.value)),
            burst_requests=int(raw_arrival.get("burst_requests", 0) or 0),
            burst_window_s=float(raw_arrival.get("burst_window_s", 10.0) or 10.0),
            burst_at_s=float(raw_arrival.get("burst_at_s", 0.0) or 0.0),
        )
    except (TypeError, ValueError, OverflowError):  # a list or an object where a number belongs, too
        raise invalid_argument(
            "arrival",
            f"arrival.kind must be one of {', '.join(k.value for k in ArrivalKind)}; burst numbers must be numbers",
        ) from None
    return WorkloadProfile(
        name=str(data.get("name", "") or "profile"),
        classes=tuple(classes),
        arrival=arrival,
        description=str(data.get("description", "") or ""),
    )


def _length_to_dict(dist: LengthDistribution) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": dist.kind.value, "minimum": dist.minimum}
    if dist.kind is LengthKind.EMPIRICAL:
        out["bins"] = [list(b) for b in dist.bins]
    else:
        out["mean"] = dist.mean
        out["std"] = dist.std
    if dist.maximum is not None:
        out["maximum"] = dist.maximum
    return out


def profile_to_dict(profile: WorkloadProfile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "description": profile.description,
        "classes": [
            {
                "name": c.name,
                "share": c.share,
                "input": _length_to_dict(c.input),
                "output": _length_to_dict(c.output),
                "shared_prefix_tokens": c.shared_prefix_tokens,
                "windows": [list(w) for w in c.windows],
            }
            for c in profile.classes
        ],
        "arrival": {
            "kind": profile.arrival.kind.value,
            "burst_requests": profile.arrival.burst_requests,
            "burst_window_s": profile.arrival.burst_window_s,
            "burst_at_s": profile.arrival.burst_at_s,
        },
    }


# ---------------------------------------------------------------------------------------------------------------
# Fitting a profile to request logs


@dataclass(frozen=True, kw_only=True)
class LoggedRequest:
    timestamp_s: float  # seconds since the epoch (or any origin)
    input_tokens: int
    output_tokens: int
    request_class: str = ""
    hour: int | None = None  # local hour of day, when the timestamp carried one


@dataclass(frozen=True, kw_only=True)
class LengthFit:
    """How a fitted length distribution compares with the data."""

    distribution: LengthDistribution
    data_mean: float
    data_std: float
    data_percentiles: dict[str, float]  # p50, p90, p99 of the data
    fitted_percentiles: dict[str, float]  # the same percentiles of the fitted distribution
    ks_statistic: float  # largest gap between the data's and the fit's cumulative distributions
    histogram: dict[str, list[float]]  # edges, data (share per bin), fitted (share per bin)


def _fit_lengths(values: np.ndarray, rng: np.random.Generator) -> LengthFit:
    values = values.astype(np.float64)
    mean, std = float(values.mean()), float(values.std())
    minimum = max(1, int(values.min()))
    candidates = (
        [LengthDistribution(kind=LengthKind.FIXED, mean=max(1.0, mean), minimum=minimum)]
        if std == 0
        else [
            LengthDistribution(kind=LengthKind.NORMAL, mean=max(1.0, mean), std=std, minimum=minimum),
            LengthDistribution(kind=LengthKind.LOGNORMAL, mean=max(1.0, mean), std=std, minimum=minimum),
        ]
    )
    ordered = np.sort(values)
    best: tuple[float, LengthDistribution, np.ndarray] | None = None
    for candidate in candidates:
        draws = np.sort(candidate.sample(rng, 20_000).astype(np.float64))
        grid = np.unique(ordered)
        data_cdf = np.searchsorted(ordered, grid, side="right") / len(ordered)
        fit_cdf = np.searchsorted(draws, grid, side="right") / len(draws)
        ks = float(np.max(np.abs(data_cdf - fit_cdf)))
        if best is None or ks < best[0]:
            best = (ks, candidate, draws)
    assert best is not None  # at least one candidate  # noqa: S101
    ks, chosen, draws = best
    quantiles = {"p50": 50, "p90": 90, "p99": 99}
    edges = np.histogram_bin_edges(np.concatenate([values, draws]), bins=30)
    data_hist = np.histogram(values, bins=edges)[0] / len(values)
    fit_hist = np.histogram(draws, bins=edges)[0] / len(draws)
    return LengthFit(
        distribution=chosen,
        data_mean=mean,
        data_std=std,
        data_percentiles={k: float(np.percentile(values, q)) for k, q in quantiles.items()},
        fitted_percentiles={k: float(np.percentile(draws, q)) for k, q in quantiles.items()},
        ks_statistic=ks,
        histogram={"edges": edges.tolist(), "data": data_hist.tolist(), "fitted": fit_hist.tolist()},
    )


@dataclass(frozen=True, kw_only=True)
class ProfileFit:
    profile: WorkloadProfile
    requests: int
    duration_s: float
    mean_rate_per_s: float
    peak_hour_rate_per_s: float
    dispersion_index: float  # variance/mean of per-minute counts: ≈1 Poisson, ≫1 bursty
    classes: dict[str, dict[str, LengthFit]]  # class → {"input": fit, "output": fit}
    hourly_requests: list[int]  # requests per hour of day (when the log has hours)


def _hours(rows: Iterable[LoggedRequest]) -> list[int]:
    """The rows' hours of day (profile_fit asks only when every row has one)."""
    return [r.hour for r in rows if r.hour is not None]


def profile_fit(
    rows: Iterable[LoggedRequest], *, name: str = "Fitted from request log", seed: int = 0, min_hour_share: float = 0.02
) -> ProfileFit:
    """Fit a profile to logged requests: class shares, length distributions (normal or lognormal, whichever is
    closer by the Kolmogorov–Smirnov distance), active windows (hours with at least `min_hour_share` of the
    class's requests) and whether arrivals look Poisson or bursty."""
    logged = list(rows)
    if len(logged) < 2:
        raise invalid_argument("file", "the log needs at least 2 requests to fit a profile")
    rng = np.random.default_rng(seed)
    times = np.array([r.timestamp_s for r in logged], dtype=np.float64)
    order = np.argsort(times, kind="stable")
    times = times[order]
    logged = [logged[i] for i in order]
    duration = float(times[-1] - times[0])
    names = sorted({r.request_class or "default" for r in logged})
    hours_known = all(r.hour is not None for r in logged)
    classes: list[RequestClass] = []
    fits: dict[str, dict[str, LengthFit]] = {}
    for class_name in names:
        members = [r for r in logged if (r.request_class or "default") == class_name]
        input_fit = _fit_lengths(np.array([r.input_tokens for r in members]), rng)
        output_fit = _fit_lengths(np.array([r.output_tokens for r in members]), rng)
        windows: tuple[tuple[int, int], ...] = ()
        if hours_known:
            counts = np.bincount(_hours(members), minlength=HOURS)
            active = [h for h in range(HOURS) if counts[h] >= min_hour_share * len(members)]
            if len(active) < HOURS:
                windows = _windows(active)
        classes.append(
            RequestClass(
                name=class_name,
                share=len(members) / len(logged),
                input=input_fit.distribution,
                output=output_fit.distribution,
                windows=windows,
            )
        )
        fits[class_name] = {"input": input_fit, "output": output_fit}
    dispersion = _dispersion_per_minute(times)
    hourly = np.bincount(_hours(logged), minlength=HOURS).tolist() if hours_known else []
    days = max(1.0, duration / 86_400)
    peak_rate = (max(hourly) / days / 3600) if hourly else (len(logged) / duration if duration else 0.0)
    profile = WorkloadProfile(
        name=name,
        classes=tuple(classes),
        arrival=ArrivalPattern(kind=ArrivalKind.POISSON),
        description=(
            f"Fitted from {len(logged):,} logged requests over {duration / 3600:.1f} h; per-minute "
            f"dispersion index {dispersion:.2f} (1 = Poisson)"
        ),
    )
    return ProfileFit(
        profile=profile,
        requests=len(logged),
        duration_s=duration,
        mean_rate_per_s=len(logged) / duration if duration else 0.0,
        peak_hour_rate_per_s=peak_rate,
        dispersion_index=dispersion,
        classes=fits,
        hourly_requests=hourly,
    )


def _dispersion_per_minute(times: np.ndarray) -> float:
    """Variance/mean of the requests per minute from the first request on, empty minutes included.

    Computed from the non-empty minutes only, so a log with a stray far-off timestamp (a year away) costs memory
    for its requests, not for every minute in between.
    """
    minutes, counts = np.unique(((times - times[0]) // 60).astype(np.int64), return_counts=True)
    span = int(minutes[-1]) + 1  # minutes from the first request's to the last request's, inclusive
    if span < 2:
        return 1.0
    mean = len(times) / span
    variance = float((counts.astype(np.float64) ** 2).sum()) / span - mean**2
    return max(0.0, variance) / mean


def _windows(hours: list[int]) -> tuple[tuple[int, int], ...]:
    """Contiguous [start, end) runs of the given hours."""
    runs: list[list[int]] = []
    for hour in sorted(hours):
        if runs and runs[-1][1] == hour:
            runs[-1][1] = hour + 1
        else:
            runs.append([hour, hour + 1])
    return tuple((start, end) for start, end in runs)

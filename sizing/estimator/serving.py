"""From a memory estimate to latency at the customer's traffic: the serving plan, load sweeps, the knee and the
largest load that meets the SLOs.

A plan joins the three parts: the memory estimate (KV capacity per replica, `max_num_seqs`,
`max_num_batched_tokens`, replicas), the step-time model of one replica, and the simulator's configuration.
Every simulation of a plan samples the same profile with the same seed, so two loads differ only by the load.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from llm_sizing_loadgen.workload import WorkloadProfile, workload_sample
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode, invalid_argument
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.perf import Efficiencies, StepModel, step_model
from sizing.estimator.simulator import LoadKind, ServingConfig, SimulationResult, Slo, simulate

Progress = Callable[[int, int], None]  # (done, total): long work reports as it goes

KNEE_ACHIEVED_SHARE = 0.95  # a rate sweep is saturated once it generates < 95% of the output tokens asked for
KNEE_THROUGHPUT_SHARE = 0.9  # a concurrency sweep's knee: the first point at 90% of the best throughput


@dataclass(frozen=True, kw_only=True)
class ServingPlan:
    memory: MemoryEstimate
    model: StepModel
    config: ServingConfig
    efficiencies_source: str = "engine defaults"  # or where calibrated efficiencies came from
    memory_source: str = "estimated"  # or the boot log whose measured terms the KV capacity used

    def describe(self) -> dict[str, Any]:
        return {
            "replicas": self.config.replicas,
            "tp": self.memory.tp,
            "pp": self.memory.pp,
            "gpus": self.memory.gpus,
            "engine": self.memory.engine,
            "weights": self.memory.weight_format,
            "kv_dtype": self.memory.kv_dtype,
            "kv_capacity_tokens_per_replica": self.config.kv_capacity_tokens,
            "max_num_seqs": self.config.max_num_seqs,
            "max_num_batched_tokens": self.config.max_num_batched_tokens,
            "block_size": self.config.block_size,
            "max_queue_per_replica": self.config.queue_limit,
            "compute_dtype": self.model.compute_dtype,
            "link_bytes_per_s": self.model.link_bytes_per_s,
            "efficiencies_source": self.efficiencies_source,
            "memory_source": self.memory_source,
            "efficiencies": {
                "mfu": self.model.efficiencies.mfu,
                "bandwidth": self.model.efficiencies.bandwidth,
                "link": self.model.efficiencies.link,
                "step_overhead_ms": self.model.efficiencies.step_overhead_s * 1000,
                "sequence_overhead_us": self.model.efficiencies.sequence_overhead_s * 1e6,
            },
        }


def serving_plan(
    request: EstimateRequest,
    *,
    efficiencies: Efficiencies | None = None,
    link: str | None = None,
    link_bytes_per_s: float | None = None,
    max_queue: int | None = None,
    memory: MemoryEstimate | None = None,
) -> ServingPlan:
    """Estimate the deployment's memory and build its performance model. `link` and `link_bytes_per_s` replace
    the catalog's TP interconnect (a measured machine: see sizing.fingerprint.environment).

    Raises SizingError (CAPACITY) when the deployment has no room for the KV cache: there is nothing to simulate.
    """
    memory = memory or estimate_memory(replace(request, detail=False))
    if memory.kv_capacity_tokens <= 0:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="the deployment leaves no memory for the KV cache: "
            + "; ".join(memory.problems or ("no KV capacity",)),
            extra={"fields": {"gpu": ["no memory left for the KV cache"]}},
        )
    model = step_model(
        arch=request.arch,
        gpu=request.gpu,
        weights=request.weights,
        kv_dtype=request.kv_dtype,
        tp=memory.tp,
        pp=memory.pp,
        ep=memory.ep,
        engine=request.engine,
        link=link,
        link_bytes_per_s=link_bytes_per_s,
        efficiencies=efficiencies,
    )
    config = ServingConfig(
        kv_capacity_tokens=memory.kv_capacity_tokens,
        max_num_seqs=int(memory.assumptions["max_num_seqs"]),
        max_num_batched_tokens=int(memory.assumptions["max_num_batched_tokens"]),
        block_size=int(memory.assumptions["block_size"]),
        replicas=memory.replicas * memory.dp,
        max_queue=max_queue,
        prefix_caching=request.prefix_caching,
        reserve_full_sequence=request.engine is Engine.TRTLLM,
    )
    return ServingPlan(memory=memory, model=model, config=config)


def simulate_plan(
    plan: ServingPlan,
    profile: WorkloadProfile,
    *,
    load: LoadKind,
    rate_per_s: float | None = None,
    concurrency: int | None = None,
    requests: int = 1000,
    seed: int = 0,
    hour: int | None = None,
    slo: Slo | None = None,
    progress: Progress | None = None,
    timeline_points: int = 300,
) -> SimulationResult:
    """Simulate `requests` requests of the profile (its mix at `hour`, default the busiest) at one load; the KV
    timeline thinned to `timeline_points` buckets (each bucket's maximum)."""
    if load is LoadKind.RATE and (rate_per_s is None or rate_per_s <= 0):
        raise invalid_argument("rate", "an open-loop run needs a rate > 0 requests per second")
    if load is LoadKind.CONCURRENCY and (concurrency is None or concurrency < 1):
        raise invalid_argument("concurrency", "a closed-loop run needs concurrency ≥ 1")
    sample = workload_sample(
        profile, rate_per_s=rate_per_s if load is LoadKind.RATE else None, requests=requests, seed=seed, hour=hour
    )
    return simulate(
        model=plan.model,
        config=plan.config,
        requests=sample,
        load=load,
        concurrency=concurrency,
        rate_per_s=rate_per_s,
        slo=slo,
        progress=progress,
        timeline_points=timeline_points,
    )


def slo_verdict(result: SimulationResult, slo: Slo) -> dict[str, Any]:
    """Whether a run meets the SLOs at their percentile, with no rejected or failed request, as data a page can
    word in any language: {"met": bool, "code": "met" | "rejected" | "slo", and the numbers}."""
    q = slo.percentile
    if result.rejected or result.failed:
        return {"met": False, "code": "rejected", "count": result.rejected + result.failed, "total": result.requests}
    checks = [("TTFT", result.ttft, slo.ttft_s), ("TPOT", result.tpot, slo.tpot_s), ("E2E", result.e2e, slo.e2e_s)]
    for name, distribution, limit in checks:
        if limit is None:
            continue
        value = distribution.at(q) if distribution.at(q) is not None else distribution.max
        if value is None:
            continue
        if value > limit * 1000:
            return {
                "met": False,
                "code": "slo",
                "metric": name,
                "percentile": q,
                "value_s": value / 1000,
                "limit_s": limit,
            }
    return {"met": True, "code": "met"}


def verdict_text(verdict: dict[str, Any]) -> str:
    """The verdict in English, for the CLI and logs."""
    if verdict["code"] == "rejected":
        return f"{verdict['count']} of {verdict['total']} requests rejected or failed"
    if verdict["code"] == "slo":
        return f"{verdict['metric']} P{verdict['percentile']} {verdict['value_s']:.3g} s > {verdict['limit_s']:g} s"
    return "meets every SLO"


def meets_slo(result: SimulationResult, slo: Slo) -> tuple[bool, str]:
    """`slo_verdict` as (met, the reason in English)."""
    verdict = slo_verdict(result, slo)
    return verdict["met"], verdict_text(verdict)


@dataclass(frozen=True, kw_only=True)
class SweepPoint:
    load: float
    result: SimulationResult
    meets_slo: bool | None
    reason: str
    verdict: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "load": self.load,
            "meets_slo": self.meets_slo,
            "reason": self.reason,
            "verdict": self.verdict,
            "output_tokens_per_s": r.output_tokens_per_s,
            "requests_per_s": r.requests_per_s,
            "goodput_requests_per_s": r.goodput_requests_per_s,
            "ttft_ms": r.ttft.as_dict(),
            "tpot_ms": r.tpot.as_dict(),
            "itl_ms": r.itl.as_dict(),
            "e2e_ms": r.e2e.as_dict(),
            "rejected": r.rejected,
            "preempted": r.preempted,
            "kv_overflow_probability": r.kv_overflow_probability,
            "kv_peak_fraction": r.kv_peak_fraction,
        }


@dataclass(frozen=True, kw_only=True)
class Sweep:
    kind: LoadKind
    points: tuple[SweepPoint, ...]
    knee: float | None  # the load where the deployment saturates (see knee_of)
    max_load_meeting_slo: float | None  # the largest swept load meeting the SLOs (None: none does)
    saturation_requests_per_s: float  # the offline (all-at-once) request throughput the sweep was scaled to

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "points": [p.as_dict() for p in self.points],
            "knee": self.knee,
            "max_load_meeting_slo": self.max_load_meeting_slo,
            "saturation_requests_per_s": self.saturation_requests_per_s,
            "knee_rule": (
                f"rate: the last load whose output tokens per second reach {KNEE_ACHIEVED_SHARE:.0%} "
                "of what the arrivals ask for (and none rejected); concurrency: the first load "
                f"reaching {KNEE_THROUGHPUT_SHARE:.0%} of the best output throughput"
            ),
        }


def knee_of(kind: LoadKind, points: list[SweepPoint]) -> float | None:
    """The saturation knee of a sweep (rules in `Sweep.as_dict()['knee_rule']`)."""
    if not points:
        return None
    if kind is LoadKind.RATE:
        knee = None
        for point in sorted(points, key=lambda p: p.load):
            result = point.result
            if result.rejected or result.output_tokens_per_s < KNEE_ACHIEVED_SHARE * result.offered_output_tokens_per_s:
                break
            knee = point.load
        return knee
    best = max(p.result.output_tokens_per_s for p in points)
    return next(
        p.load
        for p in sorted(points, key=lambda p: p.load)
        if p.result.output_tokens_per_s >= KNEE_THROUGHPUT_SHARE * best
    )


def saturation_rate(
    plan: ServingPlan, profile: WorkloadProfile, *, requests: int = 500, seed: int = 0, hour: int | None = None
) -> float:
    """Requests per second the deployment completes when every request is queued at once."""
    result = simulate_plan(plan, profile, load=LoadKind.OFFLINE, requests=requests, seed=seed, hour=hour)
    return result.completed / result.duration_s if result.duration_s else 0.0


def load_sweep(
    plan: ServingPlan,
    profile: WorkloadProfile,
    *,
    kind: LoadKind = LoadKind.RATE,
    loads: list[float] | None = None,
    points: int = 8,
    requests: int = 1000,
    seed: int = 0,
    hour: int | None = None,
    slo: Slo | None = None,
    progress: Progress | None = None,
) -> Sweep:
    """Simulate the profile at increasing loads. Without `loads`, rates from 10% to 130% of the offline
    saturation rate (or concurrencies from 1 to 1.5 × max_num_seqs × replicas)."""
    saturation = saturation_rate(plan, profile, requests=min(requests, 500), seed=seed, hour=hour)
    if loads is None:
        if kind is LoadKind.RATE:
            loads = [round(saturation * (0.1 + 1.2 * k / max(1, points - 1)), 4) for k in range(points)]
        else:
            top = max(2, int(1.5 * plan.config.max_num_seqs * plan.config.replicas))
            loads = sorted({max(1, round(top ** (k / max(1, points - 1)))) for k in range(points)})
    results: list[SweepPoint] = []
    if any(load <= 0 for load in loads):
        raise invalid_argument("loads", "every load must be > 0")
    for index, load in enumerate(loads):
        if progress:
            progress(index, len(loads))
        result = simulate_plan(
            plan,
            profile,
            load=kind,
            rate_per_s=load if kind is LoadKind.RATE else None,
            concurrency=int(load) if kind is LoadKind.CONCURRENCY else None,
            requests=requests,
            seed=seed,
            hour=hour,
            slo=slo,
        )
        verdict = slo_verdict(result, slo) if slo else None
        results.append(
            SweepPoint(
                load=float(load),
                result=result,
                meets_slo=verdict["met"] if verdict else None,
                reason=verdict_text(verdict) if verdict else "",
                verdict=verdict,
            )
        )
    meeting = [p.load for p in results if p.meets_slo]
    return Sweep(
        kind=kind,
        points=tuple(results),
        knee=knee_of(kind, results),
        max_load_meeting_slo=max(meeting) if meeting else None,
        saturation_requests_per_s=saturation,
    )


@dataclass(frozen=True, kw_only=True)
class SloSearch:
    max_rate_per_s: float | None  # the largest rate meeting the SLOs, to `tolerance`; None: not even the lowest
    result: SimulationResult | None  # the run at that rate
    probes: tuple[tuple[float, dict[str, Any]], ...]  # (rate, verdict) in the order tried
    limit: dict[str, Any]  # what breaks first above the rate: a verdict, or {"code": "above_highest_probe"
    # | "nothing_completes", ...}

    @property
    def limit_reason(self) -> str:
        if self.limit["code"] == "above_highest_probe":
            return f"meets the SLOs up to the highest rate probed ({self.limit['rate']:.3g} requests/s)"
        if self.limit["code"] == "nothing_completes":
            return "nothing completes"
        return verdict_text(self.limit)

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_rate_per_s": self.max_rate_per_s,
            "result": self.result.as_dict() if self.result else None,
            "probes": [
                {"rate": rate, "meets_slo": verdict["met"], "reason": verdict_text(verdict), "verdict": verdict}
                for rate, verdict in self.probes
            ],
            "limit": self.limit,
            "limit_reason": self.limit_reason,
        }


def max_rate_meeting_slo(
    plan: ServingPlan,
    profile: WorkloadProfile,
    slo: Slo,
    *,
    requests: int = 1000,
    seed: int = 0,
    hour: int | None = None,
    tolerance: float = 0.03,
    max_probes: int = 12,
    progress: Progress | None = None,
) -> SloSearch:
    """The largest offered rate whose run meets the SLOs (to a relative `tolerance`).

    The first probe is 1.2 × the offline saturation rate. While it holds the rate doubles (the all-at-once run is
    a floor: it preempts under KV pressure an open loop may avoid); once it fails, the search bisects
    (geometrically) between the last rate that held (or 2 % of saturation) and the first that failed.
    """
    saturation = saturation_rate(plan, profile, requests=min(requests, 500), seed=seed, hour=hour)
    if saturation <= 0:
        return SloSearch(max_rate_per_s=None, result=None, probes=(), limit={"met": False, "code": "nothing_completes"})
    probes: list[tuple[float, dict[str, Any]]] = []

    def run(rate: float) -> tuple[dict[str, Any], SimulationResult]:
        if progress:
            progress(len(probes), max_probes)
        result = simulate_plan(
            plan, profile, load=LoadKind.RATE, rate_per_s=rate, requests=requests, seed=seed, hour=hour, slo=slo
        )
        verdict = slo_verdict(result, slo)
        probes.append((rate, verdict))
        return verdict, result

    low, high = 0.0, saturation * 1.2
    best: SimulationResult | None = None
    verdict, result = run(high)
    while verdict["met"] and len(probes) < max_probes // 2:
        low, best = high, result
        high *= 2
        verdict, result = run(high)
    if verdict["met"]:
        return SloSearch(
            max_rate_per_s=high,
            result=result,
            probes=tuple(probes),
            limit={"met": True, "code": "above_highest_probe", "rate": high},
        )
    limit = verdict
    if best is None:  # even 1.2 × saturation failed: does 2 % of it hold?
        verdict, result = run(saturation * 0.02)
        if not verdict["met"]:
            return SloSearch(max_rate_per_s=None, result=None, probes=tuple(probes), limit=verdict)
        low, best = saturation * 0.02, result
    while len(probes) < max_probes and (high - low) > tolerance * high:
        mid = math.sqrt(low * high)
        verdict, result = run(mid)
        if verdict["met"]:
            low, best = mid, result
        else:
            high, limit = mid, verdict
    return SloSearch(max_rate_per_s=low, result=best, probes=tuple(probes), limit=limit)

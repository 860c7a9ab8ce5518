"""Configuration search: which deployments of a model fit, meet the SLOs at the customer's load, and cost least.

Each candidate (GPU type and count, TP versus replicas, weight format, KV dtype, engine and its batch limit) is
sized by the memory estimator and, when it fits, simulated at the load with a short run. Those meeting every SLO
rank first, by cost per hour, then by cost per million output tokens at that load; the others follow with the
reason they fail, in the words a delivery engineer would use ("TTFT P95 3.2 s > 2 s", "does not fit: ...").

Candidates are independent: `evaluate_candidates` takes any slice of them, so a caller can fan the list out over
workers and merge the outcomes with `rank_outcomes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from llm_sizing_loadgen.workload import WorkloadProfile
from sizing.estimator.architecture import Architecture
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.estimator.serving import serving_plan, simulate_plan, slo_verdict, verdict_text
from sizing.estimator.simulator import LoadKind, Slo
from sizing.estimator.tensors import check_tensor_parallel

SECONDS_PER_HOUR = 3600


@dataclass(frozen=True, kw_only=True)
class Candidate:
    gpu: GpuSpec
    gpus: int
    tp: int
    weights: str = "auto"
    kv_dtype: str = "auto"
    engine: Engine = Engine.VLLM
    max_num_seqs: int | None = None

    @property
    def replicas(self) -> int:
        return self.gpus // self.tp

    def label(self) -> str:
        seqs = f", max_num_seqs {self.max_num_seqs}" if self.max_num_seqs else ""
        return (
            f"{self.gpus} x {self.gpu.name} (TP {self.tp} x {self.replicas} replica(s)), {self.engine.value}, "
            f"weights {self.weights}, KV {self.kv_dtype}{seqs}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu.slug,
            "gpu_name": self.gpu.name,
            "gpus": self.gpus,
            "tp": self.tp,
            "replicas": self.replicas,
            "weights": self.weights,
            "kv_dtype": self.kv_dtype,
            "engine": self.engine.value,
            "max_num_seqs": self.max_num_seqs,
            "label": self.label(),
        }


@dataclass(frozen=True, kw_only=True)
class Outcome:
    candidate: Candidate
    fits: bool
    meets_slo: bool
    reason: str
    cost_per_hour_usd: float | None
    cost_per_million_output_tokens_usd: float | None
    output_tokens_per_s: float | None = None
    ttft_p95_ms: float | None = None
    tpot_p95_ms: float | None = None
    e2e_p95_ms: float | None = None
    rejected: int = 0
    kv_overflow_probability: float | None = None
    kv_capacity_tokens: int | None = None
    required_bytes_per_gpu: int | None = None
    verdict: dict[str, Any] | None = None  # {"code": met | slo | rejected | does_not_fit | cannot_run, numbers}

    def as_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate.as_dict(),
            "fits": self.fits,
            "meets_slo": self.meets_slo,
            "reason": self.reason,
            "cost_per_hour_usd": self.cost_per_hour_usd,
            "cost_per_million_output_tokens_usd": self.cost_per_million_output_tokens_usd,
            "output_tokens_per_s": self.output_tokens_per_s,
            "ttft_p95_ms": self.ttft_p95_ms,
            "tpot_p95_ms": self.tpot_p95_ms,
            "e2e_p95_ms": self.e2e_p95_ms,
            "rejected": self.rejected,
            "kv_overflow_probability": self.kv_overflow_probability,
            "kv_capacity_tokens": self.kv_capacity_tokens,
            "required_bytes_per_gpu": self.required_bytes_per_gpu,
            "verdict": self.verdict,
        }


def candidates_for(
    arch: Architecture,
    *,
    gpus: Sequence[GpuSpec],
    counts: Iterable[int] = (1, 2, 4, 8),
    tps: Iterable[int] = (1, 2, 4, 8),
    weights: Iterable[str] = ("auto",),
    kv_dtypes: Iterable[str] = ("auto",),
    engines: Iterable[Engine] = (Engine.VLLM,),
    max_num_seqs: Iterable[int | None] = (None,),
) -> list[Candidate]:
    """Every combination whose TP divides the GPU count and the model's heads (others cannot start)."""
    out: list[Candidate] = []
    counts, tps = sorted(set(counts)), sorted(set(tps))
    for gpu in gpus:
        for count in counts:
            for tp in tps:
                if count % tp:
                    continue
                try:
                    check_tensor_parallel(arch, tp)
                except SizingError:
                    continue
                out.extend(
                    Candidate(gpu=gpu, gpus=count, tp=tp, weights=w, kv_dtype=kv, engine=engine, max_num_seqs=seqs)
                    for w in weights
                    for kv in kv_dtypes
                    for engine in engines
                    for seqs in max_num_seqs
                )
    return out


def evaluate_candidate(
    arch: Architecture,
    candidate: Candidate,
    profile: WorkloadProfile,
    *,
    rate_per_s: float,
    slo: Slo,
    requests: int = 300,
    seed: int = 0,
    hour: int | None = None,
    max_model_len: int | None = None,
) -> Outcome:
    """Size the candidate; when it fits, simulate `requests` requests at the rate and hold them to the SLOs."""
    price = candidate.gpu.price_per_hour_usd
    cost = price * candidate.gpus if price is not None else None
    request = EstimateRequest(
        arch=arch,
        gpu=candidate.gpu,
        gpus=candidate.gpus,
        tp=candidate.tp,
        weights=candidate.weights,
        kv_dtype=candidate.kv_dtype,
        engine=candidate.engine,
        max_num_seqs=candidate.max_num_seqs,
        max_model_len=max_model_len,
        detail=False,
    )
    try:
        memory = estimate_memory(request)
    except SizingError as error:
        return Outcome(
            candidate=candidate,
            cost_per_hour_usd=cost,
            cost_per_million_output_tokens_usd=None,
            fits=False,
            meets_slo=False,
            reason=f"cannot run: {error.message}",
            verdict={"met": False, "code": "cannot_run", "problem": error.message},
        )
    if memory.kv_capacity_tokens <= 0 or any("will not start" in p or "no memory left" in p for p in memory.problems):
        problem = next((p for p in memory.problems), "no memory left for the KV cache")
        return Outcome(
            candidate=candidate,
            cost_per_hour_usd=cost,
            cost_per_million_output_tokens_usd=None,
            fits=False,
            meets_slo=False,
            reason=f"does not fit: {problem}",
            required_bytes_per_gpu=memory.required_bytes_per_gpu,
            verdict={"met": False, "code": "does_not_fit", "problem": problem},
        )
    plan = serving_plan(request, memory=memory)
    result = simulate_plan(
        plan, profile, load=LoadKind.RATE, rate_per_s=rate_per_s, requests=requests, seed=seed, hour=hour, slo=slo
    )
    verdict = slo_verdict(result, slo)
    ok, why = verdict["met"], verdict_text(verdict)
    per_million = None
    if cost is not None and result.output_tokens_per_s > 0:
        per_million = cost / (result.output_tokens_per_s * SECONDS_PER_HOUR) * 1e6
    return Outcome(
        candidate=candidate,
        fits=True,
        meets_slo=ok,
        reason=why,
        cost_per_hour_usd=cost,
        cost_per_million_output_tokens_usd=per_million,
        output_tokens_per_s=result.output_tokens_per_s,
        ttft_p95_ms=result.ttft.p95,
        tpot_p95_ms=result.tpot.p95,
        e2e_p95_ms=result.e2e.p95,
        rejected=result.rejected,
        kv_overflow_probability=result.kv_overflow_probability,
        kv_capacity_tokens=plan.config.kv_capacity_tokens,
        required_bytes_per_gpu=memory.required_bytes_per_gpu,
        verdict=verdict,
    )


def evaluate_candidates(
    arch: Architecture,
    candidates: Sequence[Candidate],
    profile: WorkloadProfile,
    *,
    rate_per_s: float,
    slo: Slo,
    requests: int = 300,
    seed: int = 0,
    hour: int | None = None,
    max_model_len: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    outcomes = []
    for index, candidate in enumerate(candidates):
        if progress:
            progress(index, len(candidates))
        outcomes.append(
            evaluate_candidate(
                arch,
                candidate,
                profile,
                rate_per_s=rate_per_s,
                slo=slo,
                requests=requests,
                seed=seed,
                hour=hour,
                max_model_len=max_model_len,
            )
        )
    return outcomes


def outcome_sort_key(outcome: dict[str, Any]) -> tuple[int, float, float, int, str]:
    """The ranking, on an outcome's JSON form (so parts computed by different workers merge the same way):
    meeting the SLOs first (cheapest per hour, then per million tokens, then fewest GPUs), then fitting but
    missing them, then not fitting."""
    infinity = float("inf")
    hourly, per_million = outcome["cost_per_hour_usd"], outcome["cost_per_million_output_tokens_usd"]
    group = 0 if outcome["meets_slo"] else 1 if outcome["fits"] else 2
    return (
        group,
        hourly if hourly is not None else infinity,
        per_million if per_million is not None else infinity,
        outcome["candidate"]["gpus"],
        outcome["candidate"]["label"],
    )


def rank_outcomes(outcomes: Iterable[Outcome]) -> list[Outcome]:
    """Outcomes in the order of `outcome_sort_key`."""
    return sorted(outcomes, key=lambda o: outcome_sort_key(o.as_dict()))


def search(
    arch: Architecture,
    candidates: Sequence[Candidate],
    profile: WorkloadProfile,
    *,
    rate_per_s: float,
    slo: Slo,
    requests: int = 300,
    seed: int = 0,
    hour: int | None = None,
    max_model_len: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Evaluate every candidate in this process and rank them."""
    return rank_outcomes(
        evaluate_candidates(
            arch,
            candidates,
            profile,
            rate_per_s=rate_per_s,
            slo=slo,
            requests=requests,
            seed=seed,
            hour=hour,
            max_model_len=max_model_len,
            progress=progress,
        )
    )

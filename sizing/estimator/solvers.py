"""Solvers over the memory estimate: the largest context at a concurrency, the largest concurrency at a
context, the fewest GPUs for a target, and ranked remedies when a deployment does not fit.

Each solver calls `estimate_memory` with varied inputs; none mutates its request.

>>> from sizing.estimator.architecture import architecture_from_config
>>> from sizing.estimator.hardware import GpuSpec
>>> from sizing.estimator.units import GiB
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16", "max_position_embeddings": 8192})
>>> request = EstimateRequest(arch=arch, gpu=GpuSpec(slug="g", name="80 GiB", memory_bytes=80 * GiB),
...                           max_model_len=8192)
>>> largest_concurrency(request, tokens=8192).value
55
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sizing.estimator.errors import SizingError
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.units import format_bytes

MAX_SEARCH_TOKENS = 16_777_216
MAX_SEARCH_CONCURRENCY = 1_000_000
MAX_GPUS = 64
TP_SIZES = (1, 2, 4, 8)  # tensor parallel stays inside one node of up to 8 GPUs


@dataclass(frozen=True, kw_only=True)
class SolverResult:
    """A solved limit and why it stops there."""

    target: str
    value: int  # tokens, requests or GPUs; 0 when nothing fits
    stops_because: str  # the component or rule that runs out first
    settings: dict[str, object] = field(default_factory=dict)  # the estimate inputs that apply the result
    estimate: dict[str, object] | None  # the estimate at the solved value (None when nothing fits)


@dataclass(frozen=True, kw_only=True)
class Remedy:
    """One change that helps a deployment fit, with its effect and the exact flag (None when the change is
    not an engine flag, e.g. another checkpoint or a second replica: then `action` says what to do)."""

    key: str
    description: str
    flag: str | None
    action: str
    settings: dict[str, object]  # the estimate inputs this remedy changes, to apply it
    fits: bool
    max_concurrency_before: int
    max_concurrency_after: int
    freed_bytes_per_gpu: int  # more KV room per GPU (negative: less)


def _fits(request: EstimateRequest) -> MemoryEstimate | None:
    try:
        result = estimate_memory(replace(request, detail=False))
    except SizingError:
        return None
    return result if result.fits else None


def _stop_reason(request: EstimateRequest) -> str:
    """Say which part runs out first for a request that does not fit."""
    try:
        result = estimate_memory(request)
    except SizingError as error:
        return error.message
    return result.problems[0] if result.problems else "the memory bill exceeds the usable memory"


def largest_context(request: EstimateRequest, *, concurrency: int) -> SolverResult:
    """The longest request (tokens, a multiple of the block size) `concurrency` requests can each have."""
    base = replace(request, concurrency=concurrency, max_model_len=None, tokens_per_request=None)

    def at(tokens: int) -> EstimateRequest:
        return replace(base, max_model_len=tokens, tokens_per_request=tokens)

    step = request.block_size or 16
    upper = min(request.arch.max_position_embeddings or MAX_SEARCH_TOKENS, MAX_SEARCH_TOKENS) // step
    if _fits(at(step)) is None:
        return SolverResult(target="largest_context", value=0, stops_because=_stop_reason(at(step)), estimate=None)
    low, high = 1, upper
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(at(mid * step)):
            low = mid
        else:
            high = mid - 1
    best = low * step
    reason = ("the model's context length (max_position_embeddings)" if low == upper
              else _stop_reason(at(best + step)))
    return SolverResult(target="largest_context", value=best, stops_because=reason,
                        settings={"max_model_len": best, "tokens_per_request": best},
                        estimate=estimate_memory(at(best)).as_dict())


def largest_concurrency(request: EstimateRequest, *, tokens: int) -> SolverResult:
    """The most concurrent requests of `tokens` tokens the deployment holds."""
    base = replace(request, tokens_per_request=tokens)
    if _fits(replace(base, concurrency=1)) is None:
        return SolverResult(target="largest_concurrency", value=0,
                            stops_because=_stop_reason(replace(base, concurrency=1)), estimate=None)
    low, high = 1, 2
    while high < MAX_SEARCH_CONCURRENCY and _fits(replace(base, concurrency=high)):
        low, high = high, high * 2
    high = min(high, MAX_SEARCH_CONCURRENCY)
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(replace(base, concurrency=mid)):
            low = mid
        else:
            high = mid - 1
    return SolverResult(target="largest_concurrency", value=low,
                        stops_because=_stop_reason(replace(base, concurrency=low + 1)),
                        settings={"concurrency": low, "tokens_per_request": tokens},
                        estimate=estimate_memory(replace(base, concurrency=low)).as_dict())


def fewest_gpus(request: EstimateRequest, *, max_gpus: int = MAX_GPUS) -> SolverResult:
    """The fewest GPUs of the request's type that fit its model, context and concurrency.

    Layouts are tried from the fewest GPUs up: tensor parallel first (one node), then pipeline stages.
    """
    for gpus in range(1, max_gpus + 1):
        # At one GPU count: replicas of the smallest model-parallel group first (nothing shared, simplest to
        # run), then larger TP groups within a node, then pipeline stages across nodes.
        layouts = sorted(
            ((tp, pp) for tp in TP_SIZES for pp in range(1, gpus // tp + 1) if gpus % (tp * pp) == 0),
            key=lambda layout: (layout[0] * layout[1], layout[1]),
        )
        for tp, pp in layouts:
            result = _fits(replace(request, gpus=gpus, tp=tp, pp=pp))
            if result is not None:
                replicas = gpus // (tp * pp)
                return SolverResult(
                    target="fewest_gpus", value=gpus,
                    stops_because=f"{replicas} replica(s) of TP {tp} x PP {pp}: the smallest layout that fits",
                    settings={"gpus": gpus, "tp": tp, "pp": pp},
                    estimate=estimate_memory(replace(request, gpus=gpus, tp=tp, pp=pp)).as_dict())
    return SolverResult(target="fewest_gpus", value=0,
                        stops_because=f"no layout of up to {max_gpus} GPUs fits: "
                                      + _stop_reason(replace(request, gpus=max_gpus, tp=None, pp=1)),
                        estimate=None)


def _slack(result: MemoryEstimate) -> int:
    """KV room left per GPU after the requested demand (preallocated pool − demand, or headroom)."""
    if result.allocation == "preallocated":
        return result.kv_cache_bytes_per_gpu - result.kv_demand_bytes_per_gpu
    return result.headroom_bytes_per_gpu


def _total_fit(result: MemoryEstimate) -> int:
    """Requests of the requested length the whole deployment holds: per replica and DP rank, times their count."""
    return result.concurrency_curve.max_concurrency_fit * result.replicas * result.dp


def remedies(request: EstimateRequest) -> tuple[Remedy, ...]:
    """Changes that make more room, each measured by re-estimating; those that fit first, then by effect."""
    try:
        before = estimate_memory(request)
    except SizingError:
        return ()
    tokens = before.tokens_per_request
    gpus = before.gpus
    candidates: list[tuple[str, str, str | None, dict[str, object]]] = []
    if before.kv_dtype in ("bf16", "fp16", "fp32"):
        candidates.append(("kv_fp8", "FP8 KV cache", "--kv-cache-dtype fp8", {"kv_dtype": "fp8"}))
    if before.weight_format in ("bf16", "fp16", "fp32"):
        candidates.append(("weights_fp8", "FP8 weights (an FP8 checkpoint or online quantisation)",
                           "--quantization fp8", {"weights": "fp8"}))
        candidates.append(("weights_int4", "INT4 weights (an AWQ/GPTQ checkpoint)", None, {"weights": "int4"}))
    if before.assumptions["gpu_memory_utilization"] < 0.95:
        candidates.append(("utilization", "gpu_memory_utilization 0.95", "--gpu-memory-utilization 0.95",
                           {"gpu_memory_utilization": 0.95}))
    if before.effective_max_model_len and before.effective_max_model_len > tokens:
        candidates.append(("max_model_len", f"max_model_len {tokens} (the requests' length)",
                           f"--max-model-len {tokens}", {"max_model_len": tokens}))
    if request.arch.uses_mla and request.arch.is_moe and before.tp > 1 and not request.expert_parallel:
        # DP attention: each GPU keeps its own requests' latent instead of every GPU replicating all of them
        candidates.append(("dp_attention_ep", f"DP attention over {before.tp} ranks with expert parallelism",
                           f"--data-parallel-size {before.tp} --enable-expert-parallel",
                           {"tp": 1, "dp": before.tp * before.dp, "expert_parallel": True, "pp": before.pp}))
    candidates.append(("tp_double", f"{gpus * 2} GPUs with TP {before.tp * 2}",
                       f"--tensor-parallel-size {before.tp * 2}",
                       {"gpus": gpus * 2, "tp": before.tp * 2, "pp": before.pp}))
    candidates.append(("replica", f"{gpus * 2} GPUs as {before.replicas * 2} replicas", None,
                       {"gpus": gpus * 2, "tp": before.tp, "pp": before.pp}))
    actions = {"weights_int4": "serve an AWQ or GPTQ INT4 checkpoint of the model",
               "replica": "run a second replica behind the load balancer"}
    found: list[Remedy] = []
    for key, label, flag, settings in candidates:
        try:
            after = estimate_memory(replace(request, detail=False, **settings))  # type: ignore[arg-type]
        except SizingError:
            continue
        freed = _slack(after) - _slack(before)
        gained = _total_fit(after) - _total_fit(before)
        if gained <= 0 and not (after.fits and not before.fits):
            continue  # no more requests fit: not a remedy
        found.append(Remedy(
            key=key,
            description=(f"{label} frees {format_bytes(freed)} per GPU: {gained:+d} concurrent requests at "
                         f"{tokens} tokens"),
            flag=flag,
            action=actions.get(key, f"launch with {flag}"),
            settings=settings,
            fits=after.fits,
            max_concurrency_before=_total_fit(before),
            max_concurrency_after=_total_fit(before) + gained,
            freed_bytes_per_gpu=freed,
        ))
    return tuple(sorted(found, key=lambda r: (not r.fits, -(r.max_concurrency_after - r.max_concurrency_before),
                                              -r.freed_bytes_per_gpu)))

"""The memory bill per GPU (DESIGN §8): weights, KV cache, activations, runtime and CUDA graphs against
the card's capacity and the engine's budget, for a parallel layout, with a curve of memory against
concurrency.

>>> from sizing.estimator.architecture import architecture_from_numbers
>>> from sizing.estimator.hardware import GpuSpec
>>> from sizing.estimator.units import GiB
>>> arch = architecture_from_numbers(parameters=7 * 10**9, num_hidden_layers=32, num_key_value_heads=8,
...     head_dim=128)
>>> result = estimate_memory(EstimateRequest(arch=arch, gpu=GpuSpec(slug="g", name="24 GiB", memory_bytes=24 * GiB),
...     engine=Engine.IDEALIZED, weight_overhead=1.05, concurrency=16, tokens_per_request=2048))
>>> (result.kv_bytes_per_token, result.kv_cache_bytes_per_gpu / GiB, result.fits)
(131072, 4.0, True)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from sizing.estimator.activations import activation_peak_bytes
from sizing.estimator.architecture import Architecture
from sizing.estimator.engines import ENGINE_BUDGETS, PREALLOCATING, Engine, StageInputs, vllm_default_scheduler
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.kv import layers_kv_bytes_per_token, paged_tokens, resolve_kv_dtype
from sizing.estimator.tensors import (
    active_parameter_count,
    check_tensor_parallel,
    mtp_parameter_count,
    parameter_count,
    pipeline_stage_layers,
    tensor_inventory,
)
from sizing.estimator.units import format_bytes
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank, weight_bytes_total

CURVE_POINTS = 48


@dataclass(frozen=True, kw_only=True)
class EstimateRequest:
    """Everything a memory estimate depends on. Sizes in bytes, lengths in tokens."""

    arch: Architecture
    gpu: GpuSpec
    gpus: int | None = None  # defaults to tp x pp; more GPUs than that are replicas
    tp: int | None = None  # defaults to gpus / pp
    pp: int = 1
    weights: str = "auto"
    kv_dtype: str = "auto"
    engine: Engine = Engine.VLLM
    gpu_memory_utilization: float = 0.9
    gpu_memory_bytes: int | None = None  # measured total (a fingerprint) instead of the catalog figure
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int = 16
    concurrency: int = 1
    tokens_per_request: int | None = None  # defaults to max_model_len, else the model's context length
    weight_overhead: float = 1.0  # idealized engine only: field calculators use 1.05
    runtime_reserve_bytes: int | None = None  # vLLM non-torch memory / idealized reserve; None = default
    cuda_graph_bytes: int | None = None
    enforce_eager: bool = False


@dataclass(frozen=True, kw_only=True)
class GpuBill:
    """The bill of one GPU. Components in display order; headroom = usable − required (may be negative)."""

    index: int
    replica: int
    stage: int
    tp_rank: int
    components: dict[str, int]
    capacity_bytes: int
    usable_bytes: int
    budget_bytes: int
    required_bytes: int
    headroom_bytes: int
    kv_capacity_tokens: int
    fits: bool


@dataclass(frozen=True, kw_only=True)
class ConcurrencyCurve:
    """Memory the binding GPU needs at each concurrency, against the limit it must stay under."""

    concurrency: tuple[int, ...]
    required_bytes: tuple[int, ...]
    limit_bytes: int
    max_concurrency_fit: int


@dataclass(frozen=True, kw_only=True)
class MemoryEstimate:
    engine: str
    gpu: str
    gpus: int
    tp: int
    pp: int
    replicas: int
    weight_format: str
    kv_dtype: str
    approximate: bool
    parameters_total: int
    parameters_active: int
    parameters_mtp: int
    weight_bytes_total: int
    weight_bytes_per_gpu: int
    kv_bytes_per_token: int
    kv_bytes_per_token_per_gpu: int
    kv_cache_bytes_per_gpu: int
    kv_demand_bytes_per_gpu: int
    kv_capacity_tokens: int
    max_model_len: int | None
    effective_max_model_len: int | None
    max_concurrency: float | None
    concurrency: int
    tokens_per_request: int
    memory_per_gpu: dict[str, int]
    capacity_bytes_per_gpu: int
    budget_bytes_per_gpu: int
    required_bytes_per_gpu: int
    usable_bytes_per_gpu: int
    headroom_bytes_per_gpu: int
    fits: bool
    per_gpu: tuple[GpuBill, ...]
    concurrency_curve: ConcurrencyCurve
    launch_args: tuple[str, ...]
    assumptions: dict[str, Any]
    warnings: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's and the API's output)."""
        return asdict(self)


def _invalid(field_name: str, message: str) -> SizingError:
    return SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message,
                       extra={"fields": {field_name: [message]}})


def _layout(request: EstimateRequest, arch: Architecture) -> tuple[int, int, int, int]:
    """Resolve (gpus, tp, pp, replicas) and check them against the architecture."""
    pp = request.pp
    if pp < 1:
        raise _invalid("pp", "pipeline parallel size must be ≥ 1")
    if request.gpus is not None and request.gpus < 1:
        raise _invalid("gpus", "the number of GPUs must be ≥ 1")
    if request.tp is None:
        gpus = request.gpus or pp
        if gpus % pp:
            raise _invalid("gpus", f"{gpus} GPUs cannot be split into {pp} pipeline stages")
        tp = gpus // pp
    else:
        tp = request.tp
        gpus = request.gpus or tp * pp
    if tp < 1:
        raise _invalid("tp", "tensor parallel size must be ≥ 1")
    if gpus % (tp * pp):
        raise _invalid("gpus", f"{gpus} GPUs are not a whole number of TP {tp} x PP {pp} replicas")
    if arch.parameters_override is None:
        check_tensor_parallel(arch, tp)
    pipeline_stage_layers(arch.num_hidden_layers, pp)
    return gpus, tp, pp, gpus // (tp * pp)


def _check_request(request: EstimateRequest) -> None:
    if not 0 < request.gpu_memory_utilization <= 1:
        raise _invalid("gpu_memory_utilization", "gpu_memory_utilization must be in (0, 1]")
    for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "tokens_per_request",
                 "gpu_memory_bytes"):
        value = getattr(request, name)
        if value is not None and value < 1:
            raise _invalid(name, f"{name} must be ≥ 1")
    if request.block_size < 1:
        raise _invalid("block_size", "block_size must be ≥ 1")
    if request.concurrency < 1:
        raise _invalid("concurrency", "concurrency must be ≥ 1")
    if request.weight_overhead < 1:
        raise _invalid("weight_overhead", "weight_overhead must be ≥ 1")


def estimate_memory(request: EstimateRequest) -> MemoryEstimate:
    """Compute the memory bill of every GPU of a deployment and whether it fits."""
    _check_request(request)
    arch = request.arch
    gpus, tp, pp, replicas = _layout(request, arch)
    fmt = resolve_weight_format(arch, request.weights)
    kv_dtype = resolve_kv_dtype(arch, request.kv_dtype)
    capacity = request.gpu_memory_bytes or request.gpu.memory_bytes
    engine = request.engine
    warnings = list(arch.warnings)
    problems: list[str] = []

    effective_len = request.max_model_len or arch.max_position_embeddings
    if request.max_model_len and arch.max_position_embeddings and request.max_model_len > arch.max_position_embeddings:
        problems.append(
            f"max_model_len {request.max_model_len} exceeds the model's max_position_embeddings "
            f"{arch.max_position_embeddings}: vLLM refuses to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "
            "(and the model degrades beyond its trained context without RoPE scaling)"
        )
    tokens = request.tokens_per_request or effective_len
    if tokens is None:
        raise _invalid("tokens_per_request", "give tokens_per_request or max_model_len: the config has no "
                                             "max_position_embeddings to default to")
    default_seqs, default_batched = vllm_default_scheduler(capacity, f"{request.gpu.slug} {request.gpu.name}")
    max_num_seqs = request.max_num_seqs or default_seqs
    batched = request.max_num_batched_tokens or default_batched
    if engine is Engine.VLLM and request.max_num_batched_tokens and effective_len and batched < effective_len:
        warnings.append(f"max_num_batched_tokens {batched} < max_model_len {effective_len}: long prompts are "
                        "prefilled in chunks (chunked prefill)")

    stages = pipeline_stage_layers(arch.num_hidden_layers, pp)
    weights_per_stage = weight_bytes_per_rank(arch, fmt, tp=tp, pp=pp)
    per_replica_concurrency = math.ceil(request.concurrency / replicas)
    demand_tokens = per_replica_concurrency * (
        paged_tokens(tokens, request.block_size) if engine in PREALLOCATING else tokens
    )
    budget_fn = ENGINE_BUDGETS[engine]
    stage_results = []
    bounds = [sum(stages[:k]) for k in range(pp + 1)]
    for stage in range(pp):
        kv_token = layers_kv_bytes_per_token(arch.layers[bounds[stage]:bounds[stage + 1]], kv_bits=kv_dtype.bits,
                                             tp=tp)
        activations = 0
        if engine is Engine.VLLM:
            activations = activation_peak_bytes(arch, tp=tp, batched_tokens=batched,
                                                 sampled_sequences=max_num_seqs, last_stage=stage == pp - 1)
        inputs = StageInputs(
            capacity_bytes=capacity,
            gpu_memory_utilization=request.gpu_memory_utilization,
            weight_bytes=weights_per_stage[stage],
            activation_peak_bytes=activations,
            kv_bytes_per_token=kv_token,
            kv_page_bytes=kv_token * request.block_size,
            kv_demand_bytes=demand_tokens * kv_token,
            multi_gpu=tp * pp > 1,
            weight_overhead=request.weight_overhead,
            runtime_reserve_bytes=request.runtime_reserve_bytes,
            cuda_graph_bytes=request.cuda_graph_bytes,
            enforce_eager=request.enforce_eager,
        )
        stage_results.append((inputs, budget_fn(inputs)))

    # vLLM sizes one KV pool for all workers: the smallest stage's block count binds every stage.
    capacity_tokens = min(budget.kv_capacity_tokens for _, budget in stage_results)
    demand_fits = demand_tokens <= capacity_tokens
    bills: list[GpuBill] = []
    for replica in range(replicas):
        for stage, (_, budget) in enumerate(stage_results):
            required = sum(budget.components.values())
            stage_fits = required <= budget.usable_bytes and budget.kv_pool_bytes > 0 and demand_fits
            for rank in range(tp):
                bills.append(GpuBill(
                    index=len(bills), replica=replica, stage=stage, tp_rank=rank,
                    components=dict(budget.components), capacity_bytes=capacity,
                    usable_bytes=budget.usable_bytes, budget_bytes=budget.budget_bytes,
                    required_bytes=required, headroom_bytes=budget.usable_bytes - required,
                    kv_capacity_tokens=budget.kv_capacity_tokens, fits=stage_fits,
                ))
    binding_stage = min(range(pp), key=lambda s: (stage_results[s][1].kv_capacity_tokens,
                                                  bills[s * tp].headroom_bytes))
    binding_inputs, binding = stage_results[binding_stage]
    worst_bill = min(bills[: tp * pp], key=lambda bill: bill.headroom_bytes)

    for inputs, budget in stage_results:
        if budget.kv_pool_bytes <= 0:
            problems.append(
                f"no memory left for the KV cache: weights {format_bytes(inputs.weight_bytes)} + activations "
                f"{format_bytes(inputs.activation_peak_bytes)} + runtime {format_bytes(budget.components['runtime'])} "
                f"exceed the {format_bytes(budget.budget_bytes)} budget; use more GPUs (tensor parallel), a "
                "smaller weight format or a higher gpu_memory_utilization"
            )
            break
    if engine in PREALLOCATING and effective_len and capacity_tokens < paged_tokens(effective_len, request.block_size):
        one_sequence = paged_tokens(effective_len, request.block_size) * binding_inputs.kv_bytes_per_token
        fitting_len = capacity_tokens // request.block_size * request.block_size
        problems.append(
            f"vLLM will not start: one {effective_len}-token sequence needs {format_bytes(one_sequence)} of KV "
            f"cache, {format_bytes(max(0, binding.kv_pool_bytes))} available; max_model_len {fitting_len} "
            "would fit"
        )
    if not demand_fits:
        problems.append(
            f"{per_replica_concurrency} concurrent requests x {tokens} tokens per replica need {demand_tokens} "
            f"KV tokens, the cache holds {capacity_tokens}; lower the concurrency or the context, or add GPUs"
        )
    if worst_bill.required_bytes > worst_bill.usable_bytes:
        problems.append(
            f"GPU {worst_bill.index} needs {format_bytes(worst_bill.required_bytes)}, "
            f"{format_bytes(worst_bill.usable_bytes)} usable"
        )
    fits = all(bill.fits for bill in bills) and not problems

    step = paged_tokens(tokens, request.block_size) if engine in PREALLOCATING else tokens
    kv_for = binding_inputs.kv_bytes_per_token * step
    max_fit = max(0, binding.curve_limit_bytes - binding.curve_static_bytes) // kv_for if kv_for else 0
    if engine in PREALLOCATING:
        max_fit = capacity_tokens // step if step else 0
    top = max(8, math.ceil(max(max_fit, per_replica_concurrency) * 1.5))
    xs = sorted({max(1, round(top * k / (CURVE_POINTS - 1))) for k in range(CURVE_POINTS)})
    curve = ConcurrencyCurve(
        concurrency=tuple(xs),
        required_bytes=tuple(binding.curve_static_bytes + c * kv_for for c in xs),
        limit_bytes=binding.curve_limit_bytes,
        max_concurrency_fit=max_fit,
    )

    max_concurrency = None
    if request.max_model_len:
        per_request = paged_tokens(request.max_model_len, request.block_size) if engine in PREALLOCATING \
            else request.max_model_len
        max_concurrency = round(capacity_tokens / per_request, 2)

    inventory = tensor_inventory(arch)
    parameters = arch.parameters_override or parameter_count(inventory)
    active = arch.parameters_override or active_parameter_count(inventory)
    mtp = mtp_parameter_count(arch)
    if mtp:
        warnings.append(
            f"the checkpoint also holds {arch.mtp_layers} multi-token-prediction module(s) of {mtp:,} parameters; "
            "engines load them only for MTP speculative decoding, so they are not in this bill"
        )
    launch = _launch_args(request, engine=engine, tp=tp, pp=pp, max_num_seqs=max_num_seqs, batched=batched,
                          effective_len=effective_len, kv_dtype_name=request.kv_dtype)
    return MemoryEstimate(
        engine=engine.value,
        gpu=request.gpu.slug,
        gpus=gpus, tp=tp, pp=pp, replicas=replicas,
        weight_format=fmt.slug,
        kv_dtype=kv_dtype.slug,
        approximate=arch.approximate,
        parameters_total=parameters,
        parameters_active=active,
        parameters_mtp=mtp,
        weight_bytes_total=weight_bytes_total(arch, fmt),
        weight_bytes_per_gpu=max(weights_per_stage),
        kv_bytes_per_token=layers_kv_bytes_per_token(arch.layers, kv_bits=kv_dtype.bits),
        kv_bytes_per_token_per_gpu=max(inputs.kv_bytes_per_token for inputs, _ in stage_results),
        kv_cache_bytes_per_gpu=binding.components["kv_cache"],
        kv_demand_bytes_per_gpu=binding_inputs.kv_demand_bytes,
        kv_capacity_tokens=capacity_tokens,
        max_model_len=request.max_model_len,
        effective_max_model_len=effective_len,
        max_concurrency=max_concurrency,
        concurrency=request.concurrency,
        tokens_per_request=tokens,
        memory_per_gpu=dict(worst_bill.components),
        capacity_bytes_per_gpu=capacity,
        budget_bytes_per_gpu=worst_bill.budget_bytes,
        required_bytes_per_gpu=worst_bill.required_bytes,
        usable_bytes_per_gpu=worst_bill.usable_bytes,
        headroom_bytes_per_gpu=worst_bill.headroom_bytes,
        fits=fits,
        per_gpu=tuple(bills),
        concurrency_curve=curve,
        launch_args=launch,
        assumptions={
            "max_num_seqs": max_num_seqs,
            "max_num_batched_tokens": batched,
            "block_size": request.block_size,
            "gpu_memory_utilization": request.gpu_memory_utilization,
            "weight_overhead": request.weight_overhead,
            "runtime_bytes": binding.components["runtime"],
            "cuda_graph_bytes": binding.components["cuda_graphs"],
            "binding_stage": binding_stage,
            "per_replica_concurrency": per_replica_concurrency,
            "capacity_source": "measured" if request.gpu_memory_bytes else "catalog",
        },
        warnings=tuple(warnings),
        problems=tuple(problems),
    )


def _launch_args(request: EstimateRequest, *, engine: Engine, tp: int, pp: int, max_num_seqs: int, batched: int,
                 effective_len: int | None, kv_dtype_name: str) -> tuple[str, ...]:
    """The engine flags this estimate assumes, so the deployment runs what was sized."""
    if engine is not Engine.VLLM:
        return ()
    args = [
        f"--tensor-parallel-size {tp}",
        f"--pipeline-parallel-size {pp}",
        f"--gpu-memory-utilization {request.gpu_memory_utilization}",
        f"--max-num-seqs {max_num_seqs}",
        f"--max-num-batched-tokens {batched}",
        f"--block-size {request.block_size}",
        f"--kv-cache-dtype {kv_dtype_name}",
    ]
    if effective_len:
        args.insert(3, f"--max-model-len {effective_len}")
    if request.enforce_eager:
        args.append("--enforce-eager")
    return tuple(args)


__all__ = ["EstimateRequest", "GpuBill", "MemoryEstimate", "estimate_memory"]

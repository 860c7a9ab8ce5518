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

import json
import math
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache, partial
from typing import Any

from sizing.estimator.activations import VLLM_SAMPLER_BYTES_PER_LOGIT, activation_peak_bytes
from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType
from sizing.estimator.engines import (
    ENGINE_BUDGETS,
    ENGINE_TRAITS,
    Allocation,
    Engine,
    EngineTraits,
    StageBudget,
    StageInputs,
    VllmStageTerms,
    sglang_default_scheduler,
    vllm_default_scheduler,
)
from sizing.estimator.errors import invalid_argument
from sizing.estimator.formats import WeightFormat
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.kv import layers_kv_bytes_per_token, paged_tokens, resolve_kv_dtype
from sizing.estimator.kv_layout import KvLayout, kv_layout
from sizing.estimator.layers import AttentionKind, MlpKind
from sizing.estimator.tensors import (
    active_parameter_count,
    check_tensor_parallel,
    mtp_parameter_count,
    parameter_count,
    pipeline_stage_layers,
    tensor_inventory,
)
from sizing.estimator.trtllm_budget import trtllm_default_scheduler, trtllm_kv_dtype
from sizing.estimator.units import format_bytes
from sizing.estimator.versions import ResolvedVersion, Version, resolve_engine_version
from sizing.estimator.vllm_budget import (
    VllmRules,
    VllmSettings,
    activation_peak,
    cuda_graph_bytes,
    mxfp4_padded_expert_bytes,
    non_torch_bytes,
    persistent_bytes,
    vllm_default_utilization,
    vllm_rules,
)
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank, weight_bytes_total

CURVE_POINTS = 48
DEFAULT_PLANNING_UTILIZATION = 0.9  # engines without a version rule: plan at 90% of the card
# Pure functions of hashable inputs, called many times by sweeps and solvers.
_weight_bytes_per_rank = lru_cache(maxsize=1024)(weight_bytes_per_rank)
_weight_bytes_total = lru_cache(maxsize=256)(weight_bytes_total)
_activation_peak_bytes = lru_cache(maxsize=1024)(activation_peak_bytes)
_check_tensor_parallel = lru_cache(maxsize=1024)(check_tensor_parallel)  # raises: errors are not cached


@lru_cache(maxsize=256)
def _model_kv_bytes_per_token(arch: Architecture, kv_bits: int) -> int:
    """KV bytes per token of the whole model (keyed by the architecture, whose hash is cached)."""
    return layers_kv_bytes_per_token(arch.layers, kv_bits=kv_bits)


TGI_MAX_CONCURRENT_REQUESTS = 128  # TGI defaults: max_concurrent_requests, max_batch_prefill_tokens
TGI_MAX_BATCH_PREFILL_TOKENS = 4096
LLAMACPP_UBATCH = 512  # llama.cpp's physical micro-batch (n_ubatch) sizes its compute buffer


@dataclass(frozen=True, kw_only=True)
class EstimateRequest:
    """Everything a memory estimate depends on. Sizes in bytes, lengths in tokens."""

    arch: Architecture
    gpu: GpuSpec
    gpus: int | None = None  # defaults to tp x pp; more GPUs than that are replicas
    tp: int | None = None  # defaults to gpus / pp
    pp: int = 1
    dp: int = 1  # data-parallel attention ranks inside one server (vLLM --data-parallel-size)
    expert_parallel: bool = False  # MoE experts spread over the TP x DP ranks (vLLM --enable-expert-parallel)
    weights: str = "auto"
    kv_dtype: str = "auto"
    engine: Engine = Engine.VLLM
    # The engine release the estimate holds for ("latest" = the newest modelled, see estimator.versions); vLLM's
    # budget follows its rules (estimator.vllm_budget), SGLang's and TensorRT-LLM's defaults too.
    engine_version: str = "latest"
    usage_context: str = "serve"  # vLLM: serve (`vllm serve`, the OpenAI server) | llm (Python `LLM(...)`)
    engine_mode: str = "auto"  # vLLM 0.8-0.10: auto (vLLM's own V1/V0 choice) | v0 | v1
    install: str = "pip"  # pip | docker: vLLM 0.8-0.11's Docker image ships FlashInfer (a lighter sampler)
    flashinfer_sampler: bool | None = None  # VLLM_USE_FLASHINFER_SAMPLER; None = the version's default
    estimate_cudagraphs: bool | None = None  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; None = the default
    nccl_nvls: bool | None = None  # NCCL_NVLS_ENABLE; None = NCCL's default (NVLS on NVSwitch boards, TP > 2)
    enable_chunked_prefill: bool | None = None  # None = the engine's default for the version and context
    kv_cache_memory_bytes: int | None = None  # vLLM 0.11+ --kv-cache-memory-bytes: the KV cache exactly
    gpu_memory_utilization: float | None = None  # None = the engine version's default (vLLM 0.90, 0.92 from 0.20)
    gpu_memory_bytes: int | None = None  # measured driver total (nvidia-smi, a fingerprint) instead of the catalog's
    # measured CUDA-visible total (cudaMemGetInfo; a vLLM boot log's total_gpu_memory): what vLLM's budget
    # multiplies. None: from gpu_memory_bytes less the catalog's driver reservation, else the catalog's figure.
    gpu_cuda_total_bytes: int | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int | None = None  # tokens per KV block; None = the engine's default (vLLM 16)
    concurrency: int = 1
    tokens_per_request: int | None = None  # defaults to max_model_len, else the model's context length
    weight_overhead: float = 1.0  # idealized engine only: field calculators use 1.05
    runtime_reserve_bytes: int | None = None  # vLLM non-torch memory / idealized reserve; None = default
    cuda_graph_bytes: int | None = None
    activation_peak_bytes: int | None = None  # measured (a boot log) instead of the activation model
    enforce_eager: bool = False
    mem_fraction_static: float | None = None  # SGLang; None = SGLang's automatic choice
    kv_cache_free_gpu_mem_fraction: float = 0.9  # TensorRT-LLM
    draft_arch: Architecture | None = None  # a speculative-decoding draft model served beside the target
    num_speculative_tokens: int = 0  # tokens the draft proposes per step (extra KV slots per request)
    shared_prefix_tokens: int = 0  # a prompt prefix every request shares (a system prompt), cached once
    prefix_caching: bool = True  # vLLM V1 and SGLang share cached prefix blocks; off: every request holds its own
    parallel_samples: int = 1  # n (or beam width): each request decodes n sequences sharing its prompt
    output_tokens: int | None = None  # the output part of tokens_per_request; required when n > 1
    detail: bool = True  # False: skip what only people read (formulas, the curve's points, every replica's
    # bills): sweeps and solvers compare thousands of estimates


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
    allocation: str
    gpu: str
    gpus: int
    tp: int
    pp: int
    replicas: int
    dp: int
    ep: int
    weight_format: str
    kv_dtype: str
    approximate: bool
    parameters_total: int
    parameters_active: int
    parameters_active_compute: int  # active without the input-embedding lookup (DeepSeek's and OpenAI's convention)
    parameters_mtp: int
    draft_weight_bytes_per_gpu: int
    weight_bytes_total: int
    weight_bytes_per_gpu: int  # the model's tensors on the GPU; the bill's "weights" adds the rotary cache
    rope_cache_bytes_per_gpu: int
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
    launch_command: str
    assumptions: dict[str, Any]
    figure_sources: dict[str, str] = field(default_factory=dict)  # figure -> estimated / calibrated / measured
    engine_version: str = ""  # the release whose rules the bill follows ("0.33.0"); "" for engines without rules
    engine_version_requested: str = "latest"  # what was asked for ("latest", "0.40.1")
    defaults_assumed: dict[str, Any] = field(default_factory=dict)  # flags left empty -> the engine's default
    term_sources: dict[str, str] = field(default_factory=dict)  # bill line -> the version band/rule behind it
    rules_of_thumb: dict[str, dict[str, Any]] = field(default_factory=dict)  # the field's shortcuts, beside ours
    formulas: dict[str, str] = field(default_factory=dict)  # line item -> its formula with the numbers filled in
    warnings: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's and the API's output)."""
        return asdict(self)


def resolved_utilization(request: EstimateRequest, version: Version | None = None) -> float:
    """The request's gpu_memory_utilization, else the engine version's default (vLLM: 0.90, 0.92 from 0.20.0;
    other engines: a planning limit of 0.90)."""
    if request.gpu_memory_utilization is not None:
        return request.gpu_memory_utilization
    if request.engine is Engine.VLLM:
        if version is None:
            version = resolve_engine_version(request.engine.value, request.engine_version).version
        return vllm_default_utilization(version)
    return DEFAULT_PLANNING_UTILIZATION


def _layout(request: EstimateRequest, arch: Architecture) -> tuple[int, int, int, int]:
    """Resolve (gpus, tp, pp, replicas) and check them against the architecture."""
    pp = request.pp
    if pp < 1:
        raise invalid_argument("pp", "pipeline parallel size must be ≥ 1")
    if request.gpus is not None and request.gpus < 1:
        raise invalid_argument("gpus", "the number of GPUs must be ≥ 1")
    if request.tp is None:
        gpus = request.gpus or pp
        if gpus % pp:
            raise invalid_argument("gpus", f"{gpus} GPUs cannot be split into {pp} pipeline stages")
        tp = gpus // pp
    else:
        tp = request.tp
        gpus = request.gpus or tp * pp
    if tp < 1:
        raise invalid_argument("tp", "tensor parallel size must be ≥ 1")
    if request.dp < 1:
        raise invalid_argument("dp", "data parallel size must be ≥ 1")
    if request.tp is None and request.gpus is not None and request.dp > 1:
        tp = max(1, gpus // (pp * request.dp))
    if gpus % (tp * pp * request.dp):
        raise invalid_argument(
            "gpus", f"{gpus} GPUs are not a whole number of TP {tp} x PP {pp} x DP {request.dp} replicas"
        )
    if request.expert_parallel and not arch.is_moe:
        raise invalid_argument("expert_parallel", "expert parallelism needs a mixture-of-experts model")
    if request.engine is Engine.LLAMACPP and tp > 1:
        raise invalid_argument(
            "tp",
            "llama.cpp splits a model across GPUs by layers, not tensor parallel: "
            "set pp to the GPU count (--split-mode layer) instead of tp",
        )
    if arch.parameters_override is None:
        _check_tensor_parallel(arch, tp)
    pipeline_stage_layers(arch.num_hidden_layers, pp)
    return gpus, tp, pp, gpus // (tp * pp * request.dp)


def _check_request(request: EstimateRequest) -> None:
    if request.gpu_memory_utilization is not None and not 0 < request.gpu_memory_utilization <= 1:
        raise invalid_argument("gpu_memory_utilization", "gpu_memory_utilization must be in (0, 1]")
    for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "tokens_per_request", "gpu_memory_bytes"):
        value = getattr(request, name)
        if value is not None and value < 1:
            raise invalid_argument(name, f"{name} must be ≥ 1")
    if request.block_size is not None and request.block_size < 1:
        raise invalid_argument("block_size", "block_size must be ≥ 1")
    if request.concurrency < 1:
        raise invalid_argument("concurrency", "concurrency must be ≥ 1")
    if request.shared_prefix_tokens < 0:
        raise invalid_argument("shared_prefix_tokens", "shared_prefix_tokens must be ≥ 0")
    if request.num_speculative_tokens < 0:
        raise invalid_argument("num_speculative_tokens", "num_speculative_tokens must be ≥ 0")
    if request.parallel_samples < 1:
        raise invalid_argument("parallel_samples", "parallel_samples must be ≥ 1")
    if request.parallel_samples > 1 and request.output_tokens is None:
        raise invalid_argument(
            "output_tokens",
            "give output_tokens (the decoded part of each request) with "
            "parallel_samples > 1: only the decoded tokens are multiplied",
        )
    if request.weight_overhead < 1:
        raise invalid_argument("weight_overhead", "weight_overhead must be ≥ 1")


# vLLM and SGLang keep a precomputed cos/sin table per rotary embedding on every GPU, loaded with the weights
# (vLLM counts it in "model weights take"): max_position_embeddings x rotary dim x the model dtype.
ROPE_CACHE_ENGINES = frozenset({Engine.VLLM, Engine.SGLANG})


@lru_cache(maxsize=1024)
def _stage_kv_layout(
    arch: Architecture,
    *,
    pp: int,
    stage: int,
    kv_bits: int,
    tp: int,
    block_size: int,
    draft: Architecture | None = None,
) -> KvLayout:
    """The KV layout of one pipeline stage (cached: sweeps ask for the same stages over and over).

    A speculative-decoding draft model runs beside the last stage and takes its KV from the same pool.
    """
    stages = pipeline_stage_layers(arch.num_hidden_layers, pp)
    start = sum(stages[:stage])
    attentions = tuple(layer.attention for layer in arch.layers[start : start + stages[stage]])
    if draft is not None and stage == pp - 1:
        attentions += tuple(layer.attention for layer in draft.layers)
    return kv_layout(attentions, kv_bits=kv_bits, tp=tp, block_size=block_size)


@lru_cache(maxsize=1024)
def _parameter_counts(arch: Architecture) -> tuple[int, int, int]:
    """(total, active, active without the input-embedding lookup) parameters of the main model."""
    if arch.parameters_override is not None:
        return arch.parameters_override, arch.parameters_override, arch.parameters_override
    inventory = tensor_inventory(arch)
    return (
        parameter_count(inventory),
        active_parameter_count(inventory),
        active_parameter_count(inventory, input_embedding=False),
    )


@lru_cache(maxsize=4096)
def _curve_points(top: int) -> list[int]:
    """CURVE_POINTS concurrencies from 1 to `top`, evenly spread, without repeats."""
    return sorted({max(1, round(top * k / (CURVE_POINTS - 1))) for k in range(CURVE_POINTS)})


@lru_cache(maxsize=1024)
def rope_cache_bytes(arch: Architecture) -> int:
    """Bytes of the rotary cos/sin cache: positions x rotary dimension (cos and sin halves) x dtype."""
    if arch.rope_cache_elements is not None:
        return math.ceil(arch.rope_cache_elements * arch.dtype.bits / 8)
    if not arch.max_position_embeddings or not arch.layers:
        return 0
    attention = arch.layers[0].attention
    rotary_dim = attention.qk_rope_head_dim if attention.kind is AttentionKind.MLA else attention.head_dim
    return math.ceil(arch.max_position_embeddings * rotary_dim * arch.dtype.bits / 8)


def _engine_scheduler(request: EstimateRequest, capacity: int, *, tokens: int, tp: int) -> tuple[int, int]:
    """(max_num_seqs, batched_tokens) the engine runs with: the request's, else the engine's default."""
    engine = request.engine
    if engine is Engine.SGLANG:  # per release (sglang_budget); capacity is the driver's total, as SGLang reads it
        version = resolve_engine_version(engine.value, request.engine_version).version
        seqs, batched = sglang_default_scheduler(capacity, tp, version=version)
    elif engine is Engine.TRTLLM:  # per release (trtllm_budget): max_batch_size, max_num_tokens
        seqs, batched = trtllm_default_scheduler(resolve_engine_version(engine.value, request.engine_version).version)
    elif engine is Engine.TGI:
        seqs, batched = TGI_MAX_CONCURRENT_REQUESTS, TGI_MAX_BATCH_PREFILL_TOKENS
    elif engine is Engine.LLAMACPP:
        # the compute buffer holds the logits of a whole micro-batch
        seqs, batched = LLAMACPP_UBATCH, LLAMACPP_UBATCH
    elif engine is Engine.TRANSFORMERS:
        # generate() prefills the whole padded batch at once and samples every sequence
        seqs, batched = request.concurrency, request.concurrency * tokens
    else:
        seqs, batched = vllm_default_scheduler(capacity, f"{request.gpu.slug} {request.gpu.name}")
    return request.max_num_seqs or seqs, request.max_num_batched_tokens or batched


def cuda_visible_total(request: EstimateRequest) -> int:
    """The total vLLM's budget multiplies (cudaMemGetInfo): measured, else a measured driver total less the
    catalog's reservation for the SKU, else the catalog's CUDA-visible figure."""
    if request.gpu_cuda_total_bytes:
        return request.gpu_cuda_total_bytes
    gpu = request.gpu
    if request.gpu_memory_bytes:
        return max(1, request.gpu_memory_bytes - (gpu.memory_bytes - gpu.cuda_visible_bytes))
    return gpu.cuda_visible_bytes


_vllm_rules = lru_cache(maxsize=1024)(vllm_rules)


@lru_cache(maxsize=512)
def _first_equal(arch: Architecture, _uncompared: str) -> Architecture:
    return arch


_INTERNED_BY_ID: dict[int, tuple[weakref.ref[Architecture], Architecture]] = {}


def _interned(arch: Architecture) -> Architecture:
    """The first-seen instance equal to `arch`: every cache below is then hit by identity, not by comparing two
    equal layer tables field by field (tens of µs for a large model; each request parses its own copy of a config,
    and solvers and sweeps estimate the same copy again and again, so the copy is remembered by its identity)."""
    seen = _INTERNED_BY_ID.get(id(arch))
    if seen is not None and seen[0]() is arch:
        return seen[1]
    # the fields equality leaves out (the quantisation config, the parser's warnings) must match too
    uncompared = json.dumps([arch.quantization_config, arch.warnings], sort_keys=True, default=str)
    interned = _first_equal(arch, uncompared)
    if len(_INTERNED_BY_ID) >= 1024:
        _INTERNED_BY_ID.clear()
    _INTERNED_BY_ID[id(arch)] = (weakref.ref(arch), interned)
    return interned


_resolve_version = lru_cache(maxsize=256)(resolve_engine_version)


@lru_cache(maxsize=256)
def _has_sliding(arch: Architecture) -> bool:
    return any(layer.attention.kind is AttentionKind.SLIDING for layer in arch.layers)


def _vllm_settings(
    request: EstimateRequest, arch: Architecture, version: Version | None, cuda_total: int, max_model_len: int | None
) -> VllmSettings:
    gpu = request.gpu
    sliding = _has_sliding(arch)
    no_auto = (
        "a sliding-window model"
        if sliding
        else "a speculative-decoding draft"
        if request.draft_arch
        else "a vision model"
        if arch.vision_parameters
        else ""
    )
    return VllmSettings(
        version=version or Version(0, 33, 0),
        gpu_name=f"{gpu.name} {gpu.slug}",
        cuda_total_bytes=cuda_total,
        compute_capability=gpu.compute_capability,
        sm_count=gpu.sm_count,
        nvswitch=gpu.nvswitch,
        usage_context=request.usage_context,
        engine_mode=request.engine_mode,
        install=request.install,
        flashinfer_sampler=request.flashinfer_sampler,
        estimate_cudagraphs=request.estimate_cudagraphs,
        nccl_nvls=request.nccl_nvls,
        max_model_len=max_model_len,
        max_num_seqs=request.max_num_seqs,
        max_num_batched_tokens=request.max_num_batched_tokens,
        enable_chunked_prefill=request.enable_chunked_prefill,
        no_auto_chunking=no_auto,
        v1_unsupported="a float32 model" if arch.dtype.bits == 32 else "",
    )


def _vllm_stage_terms(
    request: EstimateRequest,
    arch: Architecture,
    rules: VllmRules,
    *,
    tp: int,
    pp: int,
    last: bool,
    max_model_len: int,
    block_size: int,
) -> VllmStageTerms:
    """The terms vLLM subtracts on one stage's binding rank (V0: the driver, which alone samples)."""
    gpu = request.gpu
    if request.activation_peak_bytes is not None:
        activation, forward, sampler = request.activation_peak_bytes, 0, 0
    else:
        activation, forward, sampler = _vllm_activation(arch, rules, tp=tp, samples=last, sm_count=gpu.sm_count)
    if request.runtime_reserve_bytes is not None:
        non_torch, non_torch_why = request.runtime_reserve_bytes, "measured"
    else:
        non_torch, non_torch_why = non_torch_bytes(
            rules,
            tp=tp,
            pp=pp,
            nvswitch=gpu.nvswitch,
            compute_capability=gpu.compute_capability,
            nccl_nvls=request.nccl_nvls,
        )
    graphs, inside = cuda_graph_bytes(rules, enforce_eager=request.enforce_eager, measured=request.cuda_graph_bytes)
    return VllmStageTerms(
        rules=rules,
        activation_bytes=activation,
        forward_bytes=forward,
        sampler_bytes=sampler,
        non_torch_bytes=non_torch,
        non_torch_source=non_torch_why,
        cuda_graph_bytes=graphs,
        graphs_in_budget=inside,
        # a measured non-torch figure (a boot log's) is the whole runtime line: the runner buffers are in it
        persistent_bytes=0
        if request.runtime_reserve_bytes is not None
        else persistent_bytes(arch, rules, max_model_len=max_model_len, block_size=block_size),
        kv_cache_memory_bytes=request.kv_cache_memory_bytes,
    )


_vllm_activation = lru_cache(maxsize=1024)(activation_peak)


@lru_cache(maxsize=256)
def _mxfp4_padding_per_stage(arch: Architecture, *, tp: int, pp: int, ep: int) -> tuple[int, ...]:
    """Bytes vLLM's MXFP4 MoE kernels add per rank by padding each expert (spec §3.1), per pipeline stage."""
    stages = pipeline_stage_layers(arch.num_hidden_layers, pp)
    extra = [0] * pp
    index = 0
    for stage, count in enumerate(stages):
        for layer in arch.layers[index : index + count]:
            mlp = layer.mlp
            if mlp.kind is not MlpKind.MOE:
                continue
            width = mlp.intermediate_size // (1 if ep > 1 else tp)
            experts = math.ceil(mlp.num_experts / ep) if ep > 1 else mlp.num_experts
            grow = mxfp4_padded_expert_bytes(
                hidden=arch.hidden_size, intermediate_per_rank=width
            ) - mxfp4_padded_expert_bytes(hidden=arch.hidden_size, intermediate_per_rank=width, backend="none")
            extra[stage] += experts * grow
        index += count
    return tuple(extra)


# -- estimate_memory, step by step: plan -> weights -> stage budgets -> fit -> bill -> diagnose -> curve -> estimate


@dataclass(frozen=True, kw_only=True)
class _Lengths:
    """The request's lengths in tokens, and the problems they raise."""

    effective_len: int | None  # max_model_len, else the model's context
    tokens: int  # tokens one request holds
    prefix: int  # a shared prefix cached once (0 without prefix caching)
    unique_tokens: int  # KV tokens one request holds apart from the shared prefix
    problems: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """What a request resolves to before any GPU is billed: the layout, the formats, the lengths, the engine's
    release, budget rules and scheduler limits."""

    arch: Architecture
    engine: Engine
    traits: EngineTraits
    gpus: int
    tp: int
    pp: int
    replicas: int
    ep: int
    fmt: WeightFormat
    kv_dtype: DType
    capacity: int  # bytes per GPU the engine's budget starts from
    block_size: int
    version: ResolvedVersion
    utilization: float
    lengths: _Lengths
    per_replica_concurrency: int  # requests one DP rank serves with its own KV cache
    rules: VllmRules | None
    max_num_seqs: int
    batched: int  # max_num_batched_tokens (or the engine's equivalent)
    warnings: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class _Stage:
    """One pipeline stage: what its budget was computed from, and the budget."""

    inputs: StageInputs
    budget: StageBudget


@dataclass(frozen=True, kw_only=True)
class _Fit:
    """What the stages' KV memory holds: tokens, full-length sequences and requests per stage."""

    stage_tokens: tuple[int, ...]
    stage_sequences: tuple[float, ...]
    capacity_tokens: int
    fit_at_tokens: float  # requests of the asked length one replica holds (the binding stage's)
    demand_fits: bool


@dataclass(frozen=True, kw_only=True)
class _Bills:
    """The GPUs' bills and the ones that bind: the stage with least room for sequences, the GPU with least headroom."""

    stage_bills: tuple[GpuBill, ...]  # one per pipeline stage (its TP ranks hold identical bills)
    bills: tuple[GpuBill, ...]  # every GPU with detail, else the stage bills
    binding_stage: int
    worst_bill: GpuBill


@dataclass(frozen=True, kw_only=True)
class _Curve:
    curve: ConcurrencyCurve
    max_concurrency: float | None


def _lengths(request: EstimateRequest, arch: Architecture) -> _Lengths:
    """Resolve the context and per-request lengths; refuse inconsistent ones."""
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
        raise invalid_argument(
            "tokens_per_request",
            "give tokens_per_request or max_model_len: the config has no max_position_embeddings to default to",
        )
    # KV tokens one request holds apart from a shared prefix: n samples share the prompt and decode n outputs.
    output = request.output_tokens or 0
    if output > tokens:
        raise invalid_argument("output_tokens", f"output_tokens {output} exceeds tokens_per_request {tokens}")
    if request.shared_prefix_tokens >= tokens:
        raise invalid_argument(
            "shared_prefix_tokens",
            f"shared_prefix_tokens {request.shared_prefix_tokens} must be below tokens_per_request {tokens}",
        )
    prefix = request.shared_prefix_tokens if request.prefix_caching else 0
    return _Lengths(
        effective_len=effective_len,
        tokens=tokens,
        prefix=prefix,
        unique_tokens=tokens + (request.parallel_samples - 1) * output - prefix + request.num_speculative_tokens,
        problems=tuple(problems),
    )


def _plan(request: EstimateRequest) -> _Plan:
    """Step 1: check the request and resolve everything the bill depends on."""
    _check_request(request)
    arch = _interned(request.arch)
    engine = request.engine
    traits = ENGINE_TRAITS[engine]
    gpus, tp, pp, replicas = _layout(request, arch)
    fmt = resolve_weight_format(arch, request.weights)
    kv_dtype = (
        trtllm_kv_dtype(arch, request.kv_dtype)
        if engine is Engine.TRTLLM  # auto: the checkpoint's FP8 KV
        else resolve_kv_dtype(arch, request.kv_dtype)
    )
    capacity = request.gpu_memory_bytes or request.gpu.memory_bytes
    if engine is Engine.VLLM:
        capacity = cuda_visible_total(request)  # what vLLM multiplies by gpu_memory_utilization
    warnings = list(arch.warnings)
    version = _resolve_version(engine.value, request.engine_version)
    if version.warning:
        warnings.append(version.warning)
    utilization = resolved_utilization(request, version.version)
    lengths = _lengths(request, arch)
    effective_len = lengths.effective_len
    rules = None
    if engine is Engine.VLLM:
        rules = _vllm_rules(_vllm_settings(request, arch, version.version, capacity, effective_len))
        max_num_seqs, batched = rules.max_num_seqs, rules.max_num_batched_tokens
        warnings.extend(rules.notes)
    else:
        max_num_seqs, batched = _engine_scheduler(request, capacity, tokens=lengths.tokens, tp=tp)
    if engine is Engine.VLLM and request.max_num_batched_tokens and effective_len and batched < effective_len:
        warnings.append(
            f"max_num_batched_tokens {batched} < max_model_len {effective_len}: long prompts are "
            "prefilled in chunks (chunked prefill)"
        )
    return _Plan(
        arch=arch,
        engine=engine,
        traits=traits,
        gpus=gpus,
        tp=tp,
        pp=pp,
        replicas=replicas,
        ep=tp * request.dp if request.expert_parallel else 1,
        fmt=fmt,
        kv_dtype=kv_dtype,
        capacity=capacity,
        block_size=request.block_size or traits.default_block_size,
        version=version,
        utilization=utilization,
        lengths=lengths,
        # each DP rank serves its own requests with its own KV cache
        per_replica_concurrency=math.ceil(request.concurrency / (replicas * request.dp)),
        rules=rules,
        max_num_seqs=max_num_seqs,
        batched=batched,
        warnings=tuple(warnings),
    )


def _stage_weights(request: EstimateRequest, plan: _Plan) -> tuple[tuple[int, ...], int, tuple[str, ...]]:
    """Step 2: the weight bytes per rank of each stage (MXFP4 padding, a draft model on the last stage):
    (per stage, the draft's bytes, warnings)."""
    arch, tp, pp, ep = plan.arch, plan.tp, plan.pp, plan.ep
    weights_per_stage = _weight_bytes_per_rank(arch, plan.fmt, tp=tp, pp=pp, ep=ep)
    if plan.rules is not None and plan.fmt.slug == "mxfp4":
        weights_per_stage = tuple(
            w + pad
            for w, pad in zip(weights_per_stage, _mxfp4_padding_per_stage(arch, tp=tp, pp=pp, ep=ep), strict=True)
        )
    if request.draft_arch is None:
        return weights_per_stage, 0, ()
    draft = _interned(request.draft_arch)
    if draft.parameters_override is None:
        _check_tensor_parallel(draft, tp)
    # the draft runs with the target's TP on the last stage's GPUs, in its own checkpoint format
    (draft_bytes,) = _weight_bytes_per_rank(draft, resolve_weight_format(draft, "auto"), tp=tp, pp=1)
    weights_per_stage = (*weights_per_stage[:-1], weights_per_stage[-1] + draft_bytes)
    warnings: tuple[str, ...] = ()
    if draft.vocab_size != arch.vocab_size:
        warnings = (
            f"the draft model's vocabulary ({draft.vocab_size}) differs from the target's "
            f"({arch.vocab_size}): engines require the same tokenizer",
        )
    return weights_per_stage, draft_bytes, warnings


def _stage_activations(request: EstimateRequest, plan: _Plan, *, stage: int) -> tuple[int, VllmStageTerms | None]:
    """The activation peak a stage's budget holds (0: the engine's budget models it), and vLLM's terms."""
    engine, arch = plan.engine, plan.arch
    if plan.rules is not None:
        vllm_terms = _vllm_stage_terms(
            request,
            arch,
            plan.rules,
            tp=plan.tp,
            pp=plan.pp,
            last=stage == plan.pp - 1,
            max_model_len=plan.lengths.effective_len or plan.lengths.tokens,
            block_size=plan.block_size,
        )
        return vllm_terms.activation_bytes, vllm_terms
    if engine in (Engine.IDEALIZED, Engine.SGLANG):
        return 0, None
    if request.activation_peak_bytes is not None:
        return request.activation_peak_bytes, None
    activations = _activation_peak_bytes(
        arch,
        tp=plan.tp,
        batched_tokens=plan.batched,
        sampled_sequences=plan.max_num_seqs,
        last_stage=stage == plan.pp - 1,
        sampler_bytes_per_logit=VLLM_SAMPLER_BYTES_PER_LOGIT if engine is Engine.VLLM else 4,
    )
    return activations, None


def _stage_budgets(request: EstimateRequest, plan: _Plan, weights_per_stage: tuple[int, ...]) -> tuple[_Stage, ...]:
    """Step 3: each pipeline stage's KV layout and inputs, through the engine's budget."""
    budget_fn = ENGINE_BUDGETS[plan.engine]
    rope_cache = rope_cache_bytes(plan.arch) if plan.engine in ROPE_CACHE_ENGINES else 0
    traits, batched, prefix = plan.traits, plan.batched, plan.lengths.prefix
    draft = _interned(request.draft_arch) if request.draft_arch else None
    stages: list[_Stage] = []
    for stage in range(plan.pp):
        layout = _stage_kv_layout(
            plan.arch,
            pp=plan.pp,
            stage=stage,
            kv_bits=plan.kv_dtype.bits,
            tp=plan.tp,
            block_size=plan.block_size,
            draft=draft,
        )
        activations, vllm_terms = _stage_activations(request, plan, stage=stage)
        inputs = StageInputs(
            capacity_bytes=plan.capacity,
            gpu_memory_utilization=plan.utilization,
            weight_bytes=weights_per_stage[stage] + rope_cache,
            activation_peak_bytes=activations,
            kv=layout,
            kv_demand_bytes=(_sequence_bytes(layout, traits, prefix, batched) if prefix else 0)
            + plan.per_replica_concurrency * _sequence_bytes(layout, traits, plan.lengths.unique_tokens, batched),
            tp=plan.tp,
            pp=plan.pp,
            weight_overhead=request.weight_overhead,
            runtime_reserve_bytes=request.runtime_reserve_bytes,
            cuda_graph_bytes=request.cuda_graph_bytes,
            enforce_eager=request.enforce_eager,
            batched_tokens=batched,
            max_num_seqs=plan.max_num_seqs,
            mem_fraction_static=request.mem_fraction_static,
            kv_cache_free_gpu_mem_fraction=request.kv_cache_free_gpu_mem_fraction,
            detail=request.detail,
            engine_version=plan.version.version,
            gpu=request.gpu,
            vllm=vllm_terms,
        )
        stages.append(_Stage(inputs=inputs, budget=budget_fn(inputs)))
    return tuple(stages)


def _kv_memory(traits: EngineTraits, stage: _Stage) -> int:
    """The KV memory a stage has: llama.cpp's static context is what it allocated, not what is free."""
    if traits.allocation is Allocation.STATIC:
        return min(stage.inputs.kv_demand_bytes, stage.budget.kv_pool_bytes)
    return stage.budget.kv_pool_bytes


def _capacity_tokens(plan: _Plan, stage: _Stage) -> int:
    """KV tokens a stage holds."""
    layout = stage.inputs.kv
    if plan.traits.block_pool:
        return layout.capacity_tokens(layout.num_blocks(stage.budget.kv_pool_bytes))
    per_token = layout.bytes_per_token
    block_size = plan.block_size
    return max(0, _kv_memory(plan.traits, stage)) // per_token // block_size * block_size if per_token else 0


def _sequences_fitting(plan: _Plan, stage: _Stage, length: int) -> float:
    """How many `length`-token sequences the stage's KV memory holds (fractional, as vLLM logs it)."""
    layout, traits, batched = stage.inputs.kv, plan.traits, plan.batched
    if traits.block_pool:
        per_sequence = layout.blocks_per_sequence(length, batched_tokens=batched)
        return layout.num_blocks(stage.budget.kv_pool_bytes) / per_sequence if per_sequence else 0.0
    per_sequence = _sequence_bytes(layout, traits, length, batched)
    return max(0, _kv_memory(traits, stage)) / per_sequence if per_sequence else 0.0


def _requests_fitting(plan: _Plan, stage: _Stage) -> float:
    """How many of the requested requests fit, after the shared prefix is cached once."""
    layout, traits, batched = stage.inputs.kv, plan.traits, plan.batched
    prefix, unique_tokens = plan.lengths.prefix, plan.lengths.unique_tokens
    if traits.block_pool:
        per_request = layout.blocks_per_sequence(unique_tokens, batched_tokens=batched)
        room = layout.num_blocks(stage.budget.kv_pool_bytes) - (
            layout.blocks_per_sequence(prefix, batched_tokens=batched) if prefix else 0
        )
        return max(0, room) / per_request if per_request else 0.0
    per_request = _sequence_bytes(layout, traits, unique_tokens, batched)
    room = _kv_memory(traits, stage) - (_sequence_bytes(layout, traits, prefix, batched) if prefix else 0)
    return max(0, room) / per_request if per_request else 0.0


def _fit(plan: _Plan, stages: tuple[_Stage, ...]) -> _Fit:
    """Step 4: per stage, computed once, the KV tokens it holds and how many full-length sequences / requests fit."""
    lengths = plan.lengths
    stage_sequences = tuple(_sequences_fitting(plan, stage, lengths.tokens) for stage in stages)
    if not lengths.prefix and lengths.unique_tokens == lengths.tokens:
        stage_requests = stage_sequences
    else:
        stage_requests = tuple(_requests_fitting(plan, stage) for stage in stages)
    stage_tokens = tuple(_capacity_tokens(plan, stage) for stage in stages)
    fit_at_tokens = min(stage_requests)
    return _Fit(
        stage_tokens=stage_tokens,
        stage_sequences=stage_sequences,
        capacity_tokens=min(stage_tokens),
        fit_at_tokens=fit_at_tokens,
        demand_fits=plan.per_replica_concurrency <= fit_at_tokens,
    )


def _bills(request: EstimateRequest, plan: _Plan, stages: tuple[_Stage, ...], fit: _Fit) -> _Bills:
    """Step 5: the bill of each stage's GPUs (and, with detail, of every GPU), and the bills that bind."""
    tp, pp = plan.tp, plan.pp
    stage_bills: list[GpuBill] = []
    for index, stage in enumerate(stages):
        budget = stage.budget
        required = sum(budget.components.values())
        stage_bills.append(
            GpuBill(
                index=index * tp,
                replica=0,
                stage=index,
                tp_rank=0,
                components=budget.components,
                capacity_bytes=plan.capacity,
                usable_bytes=budget.usable_bytes,
                budget_bytes=budget.budget_bytes,
                required_bytes=required,
                headroom_bytes=budget.usable_bytes - required,
                kv_capacity_tokens=fit.stage_tokens[index],
                fits=required <= budget.usable_bytes and budget.kv_pool_bytes > 0 and fit.demand_fits,
            )
        )
    bills = stage_bills
    if request.detail:
        # every GPU: replicas and DP ranks hold identical bills (a DP rank: its own attention and KV, its share of
        # the experts), as do the TP ranks of a stage
        bills = [
            replace(
                stage_bills[stage],
                index=(copy * pp + stage) * tp + rank,
                replica=copy,
                tp_rank=rank,
                components=dict(stage_bills[stage].components),
            )
            for copy in range(plan.replicas * request.dp)
            for stage in range(pp)
            for rank in range(tp)
        ]
    if pp == 1:
        binding_stage, worst_bill = 0, stage_bills[0]
    else:
        binding_stage = min(range(pp), key=lambda s: (fit.stage_sequences[s], stage_bills[s].headroom_bytes))
        worst_bill = min(stage_bills, key=lambda bill: bill.headroom_bytes)
    return _Bills(
        stage_bills=tuple(stage_bills), bills=tuple(bills), binding_stage=binding_stage, worst_bill=worst_bill
    )


def _no_kv_problem(stages: tuple[_Stage, ...]) -> tuple[str, ...]:
    """The first stage whose budget leaves nothing for the KV cache."""
    for stage in stages:
        budget = stage.budget
        if budget.kv_pool_bytes <= 0:
            return (
                f"no memory left for the KV cache: weights {format_bytes(stage.inputs.weight_bytes)} + activations "
                f"{format_bytes(budget.components['activations'])} + runtime "
                f"{format_bytes(budget.components['runtime'])} exceed the {format_bytes(budget.budget_bytes)} "
                "budget; use more GPUs (tensor parallel), a smaller weight format or a higher "
                "gpu_memory_utilization",
            )
    return ()


def _longest_sequence_check(
    plan: _Plan, stages: tuple[_Stage, ...], fit: _Fit, binding: _Stage
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An engine that preallocates must hold one sequence of max_model_len: (problems, warnings)."""
    traits, effective_len = plan.traits, plan.lengths.effective_len
    if traits.allocation is not Allocation.PREALLOCATED or not effective_len:
        return (), ()
    one_fits = min(
        fit.stage_sequences
        if effective_len == plan.lengths.tokens
        else [_sequences_fitting(plan, stage, effective_len) for stage in stages]
    )
    pool = binding.budget.kv_pool_bytes
    if one_fits >= 1 or pool <= 0:
        return (), ()
    one_sequence = _sequence_bytes(binding.inputs.kv, traits, effective_len, plan.batched)
    fitting_len = _longest_fitting(binding.inputs, binding.budget, traits, plan.batched, effective_len)
    if traits.refuses_short_pool:
        return (
            f"{traits.label} will not start: one {effective_len}-token sequence needs "
            f"{format_bytes(one_sequence)} of KV cache, {format_bytes(max(0, pool))} "
            f"available; max_model_len {fitting_len} would fit",
        ), ()
    # SGLang caps max_req_len at the pool; TensorRT-LLM shrinks max_seq_len / the attention window.
    return (), (
        f"{traits.label} starts but caps the longest request at about {fitting_len} tokens: one "
        f"{effective_len}-token sequence needs {format_bytes(one_sequence)} of KV cache, "
        f"{format_bytes(max(0, pool))} available",
    )


def _demand_problem(plan: _Plan, fit: _Fit, binding: _Stage) -> tuple[str, ...]:
    """The concurrent requests' KV against what the cache holds."""
    if fit.demand_fits:
        return ()
    concurrency, tokens = plan.per_replica_concurrency, plan.lengths.tokens
    if binding.inputs.kv.has_sliding:
        return (
            f"{concurrency} concurrent requests x {tokens} tokens per replica need more KV cache "
            f"than the {int(fit.fit_at_tokens)} sequences of that length it holds; lower the concurrency or the "
            "context, or add GPUs",
        )
    demand_tokens = concurrency * (
        paged_tokens(tokens, plan.block_size) if plan.traits.allocation is Allocation.PREALLOCATED else tokens
    )
    return (
        f"{concurrency} concurrent requests x {tokens} tokens per replica need {demand_tokens} "
        f"KV tokens, the cache holds {fit.capacity_tokens}; lower the concurrency or the context, or add GPUs",
    )


def _diagnose(
    plan: _Plan, stages: tuple[_Stage, ...], fit: _Fit, bills: _Bills
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Step 6: what stops the deployment (problems) and what the reader should know (warnings), in that order."""
    binding = stages[bills.binding_stage]
    longest_problems, longest_warnings = _longest_sequence_check(plan, stages, fit, binding)
    worst = bills.worst_bill
    problems = (
        *_no_kv_problem(stages),
        *longest_problems,
        *_demand_problem(plan, fit, binding),
        *(
            (
                f"GPU {worst.index} needs {format_bytes(worst.required_bytes)}, {format_bytes(worst.usable_bytes)} usable",
            )
            if worst.required_bytes > worst.usable_bytes
            else ()
        ),
    )
    warnings = (
        *longest_warnings,
        *(
            ("SGLang's sliding-window pool is sized here as full attention: an upper bound",)
            if binding.inputs.kv.has_sliding and plan.engine is Engine.SGLANG
            else ()
        ),
        *stages[0].budget.notes,
    )
    return problems, warnings


def _static_at(request: EstimateRequest, plan: _Plan, binding: _Stage, *, last_stage: bool, concurrency: int) -> int:
    """Memory before KV at a concurrency: fixed, except under transformers, whose prefill activations are
    those of the whole padded batch."""
    budget = binding.budget
    if request.engine is not Engine.TRANSFORMERS or request.activation_peak_bytes is not None:
        return budget.static_bytes
    fixed = budget.static_bytes - binding.inputs.activation_peak_bytes
    return fixed + _activation_peak_bytes(
        plan.arch,
        tp=plan.tp,
        batched_tokens=max(1, concurrency) * plan.lengths.tokens,
        sampled_sequences=max(1, concurrency),
        last_stage=last_stage,
    )


def _required_at(
    request: EstimateRequest,
    plan: _Plan,
    binding: _Stage,
    last_stage: bool,
    prefix_once: int,
    kv_for: int,
    concurrency: int,
) -> int:
    """Memory the binding GPU needs at a concurrency: before KV, the shared prefix once, each request's own KV."""
    static = _static_at(request, plan, binding, last_stage=last_stage, concurrency=concurrency)
    return static + prefix_once + concurrency * kv_for


def _curve(request: EstimateRequest, plan: _Plan, stages: tuple[_Stage, ...], fit: _Fit, bills: _Bills) -> _Curve:
    """Step 7: memory against concurrency on the binding GPU, the most requests that fit, and vLLM's logged
    maximum concurrency at max_model_len."""
    binding = stages[bills.binding_stage]
    traits, batched, prefix = plan.traits, plan.batched, plan.lengths.prefix
    kv_for = _sequence_bytes(binding.inputs.kv, traits, plan.lengths.unique_tokens, batched)
    prefix_once = _sequence_bytes(binding.inputs.kv, traits, prefix, batched) if prefix else 0
    last_stage = bills.binding_stage == plan.pp - 1
    limit = binding.budget.curve_limit_bytes

    required_at = partial(_required_at, request, plan, binding, last_stage, prefix_once, kv_for)
    max_fit = int(fit.fit_at_tokens)
    if request.engine is Engine.TRANSFORMERS:  # activations grow with the batch: search the crossing
        max_fit = _largest_fitting(required_at, limit, start=max(1, max_fit * 2 + 2))
    top = max(8, math.ceil(max(max_fit, plan.per_replica_concurrency) * 1.5))
    xs = _curve_points(top) if request.detail else []
    if request.engine is not Engine.TRANSFORMERS or request.activation_peak_bytes is not None:
        static = binding.budget.static_bytes  # fixed: one sum per point (sweeps draw thousands of curves)
        required = tuple(static + prefix_once + c * kv_for for c in xs)
    else:
        required = tuple(required_at(c) for c in xs)
    curve = ConcurrencyCurve(
        concurrency=tuple(xs),
        required_bytes=required,
        limit_bytes=limit,
        max_concurrency_fit=max_fit,
    )
    max_concurrency = None
    if request.max_model_len:
        max_concurrency = round(
            min(
                fit.stage_sequences
                if request.max_model_len == plan.lengths.tokens
                else [_sequences_fitting(plan, stage, request.max_model_len) for stage in stages]
            ),
            2,
        )
    return _Curve(curve=curve, max_concurrency=max_concurrency)


def _largest_fitting(required_at: Callable[[int], int], limit: int, *, start: int) -> int:
    """The largest concurrency whose memory stays within `limit` (memory grows with concurrency): doubling from
    `start`, then bisection."""
    low, high = 0, start
    while high < 1_000_000 and required_at(high) <= limit:
        high *= 2
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if required_at(mid) <= limit else (low, mid - 1)
    return low


def _model_warnings(plan: _Plan, binding: _Stage) -> tuple[str, ...]:
    """What the parameter counts and the KV heads tell the reader: MTP modules left out, replicated KV heads."""
    arch, tp = plan.arch, plan.tp
    warnings: list[str] = []
    mtp = mtp_parameter_count(arch)
    if mtp:
        warnings.append(
            f"the checkpoint also holds {arch.mtp_layers} multi-token-prediction module(s) of {mtp:,} parameters; "
            "engines load them only for MTP speculative decoding, so they are not in this bill"
        )
    replicated = sorted(
        {a.num_kv_heads for a, _ in binding.inputs.kv._kinds if a.kind is not AttentionKind.MLA and a.num_kv_heads < tp}
    )
    if replicated:
        warnings.append(
            f"KV heads replicated: {replicated[0]} KV heads over TP {tp}, so each GPU stores "
            f"{tp // replicated[0]}x the KV it would with enough heads to split"
        )
    return tuple(warnings)


def _assumptions(request: EstimateRequest, plan: _Plan, binding: _Stage, binding_stage: int) -> dict[str, Any]:
    """The scheduler settings and figures the bill assumed."""
    budget = binding.budget
    return {
        "max_num_seqs": plan.max_num_seqs,
        "max_num_batched_tokens": plan.batched,
        "block_size": plan.block_size,
        "enforce_eager": request.enforce_eager,
        "shared_prefix_tokens": plan.lengths.prefix,
        "parallel_samples": request.parallel_samples,
        "gpu_memory_utilization": plan.utilization,
        "weight_overhead": request.weight_overhead,
        "runtime_bytes": budget.components["runtime"],
        "cuda_graph_bytes": budget.components["cuda_graphs"],
        "binding_stage": binding_stage,
        "per_replica_concurrency": plan.per_replica_concurrency,
        "capacity_source": "measured" if request.gpu_memory_bytes or request.gpu_cuda_total_bytes else "catalog",
        "kv_groups": [
            f"{g.layers} x {g.kind.value}" + (f" (window {g.window})" if g.window else "")
            for g in binding.inputs.kv.groups
        ]
        if request.detail
        else [],
        **{f"engine_{key}": value for key, value in budget.settings.items()},
    }


def _figure_sources(request: EstimateRequest) -> dict[str, str]:
    """Which figures are estimated, calibrated (given by the caller) or measured."""
    return {
        "weights": "estimated",
        "kv_cache": "estimated",
        "activations": "calibrated" if request.activation_peak_bytes is not None else "estimated",
        "runtime": "calibrated" if request.runtime_reserve_bytes is not None else "estimated",
        "cuda_graphs": "calibrated" if request.cuda_graph_bytes is not None else "estimated",
        "capacity": "measured" if request.gpu_memory_bytes or request.gpu_cuda_total_bytes else "catalog",
    }


def _details(
    request: EstimateRequest, plan: _Plan, binding: _Stage, *, weights: int, required: int
) -> tuple[tuple[str, ...], dict[str, dict[str, Any]], dict[str, str], dict[str, str]]:
    """What only people read (skipped without detail): launch flags, rules of thumb, formulas, term sources."""
    if not request.detail:
        return (), {}, {}, {}
    inputs, budget = binding.inputs, binding.budget
    launch = _launch_args(
        request,
        utilization=plan.utilization,
        engine=plan.engine,
        tp=plan.tp,
        pp=plan.pp,
        max_num_seqs=plan.max_num_seqs,
        batched=plan.batched,
        effective_len=plan.lengths.effective_len,
        kv_dtype_name=request.kv_dtype,
        block_size=plan.block_size,
        settings=budget.settings,
        concurrency=plan.per_replica_concurrency,
        tokens=plan.lengths.tokens,
    )
    rules_of_thumb = _rules_of_thumb(
        request.gpu, weights=weights, kv_demand=inputs.kv_demand_bytes, capacity=plan.capacity, required=required
    )
    formulas = _formulas(
        request,
        plan.arch,
        fmt=plan.fmt,
        kv_bits=plan.kv_dtype.bits,
        tp=plan.tp,
        pp=plan.pp,
        batched=plan.batched,
        max_num_seqs=plan.max_num_seqs,
        inputs=inputs,
        budget=budget,
        tokens=plan.lengths.tokens,
    )
    return launch, rules_of_thumb, formulas, _term_sources(plan.rules, inputs)


def estimate_memory(request: EstimateRequest) -> MemoryEstimate:
    """Compute the memory bill of every GPU of a deployment and whether it fits.

    The steps: plan (layout, formats, lengths, the engine's rules) → weights per stage → each stage's budget →
    what the KV memory holds (fit) → the GPUs' bills → problems and warnings → the concurrency curve.
    """
    plan = _plan(request)
    weights_per_stage, draft_bytes, draft_warnings = _stage_weights(request, plan)
    stages = _stage_budgets(request, plan, weights_per_stage)
    fit = _fit(plan, stages)
    bills = _bills(request, plan, stages, fit)
    problems, bill_warnings = _diagnose(plan, stages, fit, bills)
    problems = (*plan.lengths.problems, *problems)
    curve = _curve(request, plan, stages, fit, bills)
    binding = stages[bills.binding_stage]
    warnings = (*plan.warnings, *draft_warnings, *bill_warnings, *_model_warnings(plan, binding))
    return _estimate(
        request,
        plan,
        stages,
        fit=fit,
        bills=bills,
        curve=curve,
        weights_per_stage=weights_per_stage,
        draft_bytes=draft_bytes,
        problems=problems,
        warnings=warnings,
    )


def _estimate(
    request: EstimateRequest,
    plan: _Plan,
    stages: tuple[_Stage, ...],
    *,
    fit: _Fit,
    bills: _Bills,
    curve: _Curve,
    weights_per_stage: tuple[int, ...],
    draft_bytes: int,
    problems: tuple[str, ...],
    warnings: tuple[str, ...],
) -> MemoryEstimate:
    """Step 8: the estimate, from the binding stage and the GPU with least headroom."""
    arch, binding_stage, worst = plan.arch, bills.binding_stage, bills.worst_bill
    binding = stages[binding_stage]
    parameters, active, active_compute = _parameter_counts(arch)
    launch, rules_of_thumb, formulas, term_sources = _details(
        request, plan, binding, weights=weights_per_stage[binding_stage], required=worst.required_bytes
    )
    version = plan.version
    return MemoryEstimate(
        engine=plan.engine.value,
        allocation=plan.traits.allocation.value,
        gpu=request.gpu.slug,
        gpus=plan.gpus,
        tp=plan.tp,
        pp=plan.pp,
        replicas=plan.replicas,
        dp=request.dp,
        ep=plan.ep,
        weight_format=plan.fmt.slug,
        kv_dtype=plan.kv_dtype.slug,
        approximate=arch.approximate,
        parameters_total=parameters,
        parameters_active=active,
        parameters_active_compute=active_compute,
        parameters_mtp=mtp_parameter_count(arch),
        draft_weight_bytes_per_gpu=draft_bytes,
        weight_bytes_total=_weight_bytes_total(arch, plan.fmt),
        weight_bytes_per_gpu=max(weights_per_stage),
        rope_cache_bytes_per_gpu=rope_cache_bytes(arch) if plan.engine in ROPE_CACHE_ENGINES else 0,
        kv_bytes_per_token=_model_kv_bytes_per_token(arch, plan.kv_dtype.bits),
        kv_bytes_per_token_per_gpu=max(stage.inputs.kv.bytes_per_token for stage in stages),
        kv_cache_bytes_per_gpu=binding.budget.components["kv_cache"],
        kv_demand_bytes_per_gpu=binding.inputs.kv_demand_bytes,
        kv_capacity_tokens=fit.capacity_tokens,
        max_model_len=request.max_model_len,
        effective_max_model_len=plan.lengths.effective_len,
        max_concurrency=curve.max_concurrency,
        concurrency=request.concurrency,
        tokens_per_request=plan.lengths.tokens,
        memory_per_gpu=dict(worst.components),
        capacity_bytes_per_gpu=plan.capacity,
        budget_bytes_per_gpu=worst.budget_bytes,
        required_bytes_per_gpu=worst.required_bytes,
        usable_bytes_per_gpu=worst.usable_bytes,
        headroom_bytes_per_gpu=worst.headroom_bytes,
        fits=all(bill.fits for bill in bills.bills) and not problems,
        per_gpu=bills.bills,
        concurrency_curve=curve.curve,
        launch_args=launch,
        launch_command=plan.traits.command,
        assumptions=_assumptions(request, plan, binding, binding_stage),
        rules_of_thumb=rules_of_thumb,
        formulas=formulas,
        figure_sources=_figure_sources(request),
        warnings=warnings,
        problems=problems,
        engine_version=str(version.version) if version.version else "",
        engine_version_requested=version.requested,
        defaults_assumed=_defaults_assumed(request, plan.rules, plan.utilization),
        term_sources=term_sources,
    )


def _defaults_assumed(request: EstimateRequest, rules: VllmRules | None, utilization: float) -> dict[str, Any]:
    """The flags the request left empty, with the value the engine's release gives them."""
    assumed: dict[str, Any] = dict(rules.defaults_assumed) if rules is not None else {}
    if request.gpu_memory_utilization is None:
        assumed["gpu_memory_utilization"] = utilization
    return assumed


def _term_sources(rules: VllmRules | None, inputs: StageInputs) -> dict[str, str]:
    """Each vLLM bill line with the release band and the vLLM source behind it."""
    if rules is None or inputs.vllm is None:
        return {}
    return {
        **rules.sources,
        "runtime": inputs.vllm.non_torch_source,
        "activations": f"{rules.sources['scheduler']}; {rules.sources['sampler']}",
    }


def _rules_of_thumb(
    gpu: GpuSpec, *, weights: int, kv_demand: int, capacity: int, required: int
) -> dict[str, dict[str, Any]]:
    """The field's rules of thumb (DESIGN §8), shown beside the principled bill, never instead of it."""
    name = f"{gpu.slug} {gpu.name}".lower()
    factor = 1.12 if "a100" in name or "a800" in name else 1.08 if "h100" in name or "h800" in name else 1.15
    total = math.ceil((weights + kv_demand) * factor)
    activations = math.ceil(kv_demand * 0.2)
    return {
        "overhead_factor": {
            "label": f"(weights + KV demand) × {factor}",
            "factor": factor,
            "bytes": total,
            "fits": total <= capacity,
        },
        "activations_share": {
            "label": "activations ≈ 20% of the KV demand",
            "share": 0.2,
            "bytes": activations,
            "fits": weights + kv_demand + activations <= capacity,
        },
        "plan_limit": {
            "label": "plan at no more than 90% of the card (keep 10–20% free)",
            "limit": 0.9,
            "bytes": math.floor(capacity * 0.9),
            "fits": required <= capacity * 0.9,
        },
    }


def _formulas(
    request: EstimateRequest,
    arch: Architecture,
    *,
    fmt: Any,
    kv_bits: int,
    tp: int,
    pp: int,
    batched: int,
    max_num_seqs: int,
    inputs: StageInputs,
    budget: StageBudget,
    tokens: int,
) -> dict[str, str]:
    """Each line item of the binding GPU's bill as a formula with its numbers (GiB = 2^30 bytes)."""
    layout = inputs.kv
    attention = layout.attentions[0] if layout.attentions else None
    kv_token = f"{layout.bytes_per_token:,} bytes"
    if attention is not None and attention.kind is AttentionKind.MLA:
        kv_token = (
            f"{len(layout.attentions)} layers × (kv_lora_rank {attention.kv_lora_rank} + rope "
            f"{attention.qk_rope_head_dim}) × {kv_bits / 8:g} bytes = {kv_token} (not split by TP)"
        )
    elif attention is not None:
        kv_token = (
            f"{len(layout.attentions)} layers × 2 (K, V) × {attention.kv_heads_per_rank(tp)} KV heads on this "
            f"GPU × {attention.head_dim} × {kv_bits / 8:g} bytes = {kv_token}"
        )
    formulas = {
        "weights": (
            f"the tensors this GPU holds in {fmt.slug} (TP {tp}, PP {pp}; vocabulary padded to 64 and "
            f"split)"
            + (
                f" + the rotary cos/sin cache ({arch.max_position_embeddings} positions × "
                f"{arch.dtype.bits // 8} bytes × rotary dim)"
                if request.engine in ROPE_CACHE_ENGINES
                else ""
            )
            + f" = {format_bytes(inputs.weight_bytes)}"
            + (f" × overhead {request.weight_overhead}" if request.engine is Engine.IDEALIZED else "")
        ),
        "kv_per_token": kv_token,
        "kv_demand": (
            f"concurrent requests per replica × KV bytes of one {tokens}-token request = "
            f"{format_bytes(inputs.kv_demand_bytes)}"
        ),
        **budget.formulas,
    }
    if request.engine not in (Engine.IDEALIZED, Engine.SGLANG, Engine.VLLM):
        sampler = (
            f"{VLLM_SAMPLER_BYTES_PER_LOGIT} bytes (vLLM's sampler: logits, probabilities, sort values and "
            "indices, noise, penalty counts)"
            if request.engine is Engine.VLLM
            else "4 bytes (fp32 logits)"
        )
        formulas["activations"] = (
            f"{batched} batched tokens × (MLP gate/up + activation + QKV + 4 hidden buffers) × "
            f"{arch.dtype.bits // 8} bytes + {max_num_seqs} sampled sequences × vocabulary {arch.vocab_size} × "
            f"{sampler} = {format_bytes(inputs.activation_peak_bytes)}"
            + (
                " (a warm start: on a first start with an empty torch.compile cache vLLM V1 also counts the "
                "compiler's scratch memory here, and the KV cache comes out smaller until a restart)"
                if request.engine is Engine.VLLM and not request.enforce_eager
                else ""
            )
            if request.activation_peak_bytes is None
            else f"measured: {format_bytes(inputs.activation_peak_bytes)}"
        )
    return formulas


def _sequence_bytes(layout: KvLayout, traits: EngineTraits, tokens: int, batched: int) -> int:
    """KV bytes one `tokens`-long sequence takes in this engine's allocator."""
    if traits.block_pool:
        return layout.blocks_per_sequence(tokens, batched_tokens=batched) * layout.page_bytes * layout.group_size
    return layout.sequence_bytes(tokens, paged=traits.allocation is Allocation.PREALLOCATED)


def _longest_fitting(inputs: StageInputs, budget: StageBudget, traits: EngineTraits, batched: int, upper: int) -> int:
    """The longest max_model_len (a multiple of the block size) whose one sequence fits the pool."""
    block = inputs.kv.block_size
    low, high = 0, upper // block
    while low < high:  # largest k with sequence_bytes(k x block) <= pool
        mid = (low + high + 1) // 2
        if _sequence_bytes(inputs.kv, traits, mid * block, batched) <= budget.kv_pool_bytes:
            low = mid
        else:
            high = mid - 1
    return low * block


def _vllm_launch_args(
    request: EstimateRequest,
    *,
    utilization: float,
    tp: int,
    pp: int,
    max_num_seqs: int,
    batched: int,
    effective_len: int | None,
    kv: str,
    block_size: int,
) -> tuple[str, ...]:
    """vLLM's flags (`vllm serve`) for the sized deployment."""
    args = [
        f"--tensor-parallel-size {tp}",
        f"--pipeline-parallel-size {pp}",
        f"--gpu-memory-utilization {utilization}",
    ]
    if effective_len:
        args.append(f"--max-model-len {effective_len}")
    args += [
        f"--max-num-seqs {max_num_seqs}",
        f"--max-num-batched-tokens {batched}",
        f"--block-size {block_size}",
        f"--kv-cache-dtype {kv}",
    ]
    if request.enable_chunked_prefill is not None:
        args.append("--enable-chunked-prefill" if request.enable_chunked_prefill else "--no-enable-chunked-prefill")
    if request.kv_cache_memory_bytes is not None:
        args.append(f"--kv-cache-memory-bytes {request.kv_cache_memory_bytes}")
    if request.dp > 1:
        args.append(f"--data-parallel-size {request.dp}")
    if request.expert_parallel:
        args.append("--enable-expert-parallel")
    if request.draft_arch is not None:
        args.append(
            f'--speculative-config \'{{"model": "DRAFT", "num_speculative_tokens": '
            f"{max(1, request.num_speculative_tokens)}}}'"
        )
    if request.enforce_eager:
        args.append("--enforce-eager")
    return tuple(args)


def _launch_args(
    request: EstimateRequest,
    *,
    utilization: float,
    engine: Engine,
    tp: int,
    pp: int,
    max_num_seqs: int,
    batched: int,
    effective_len: int | None,
    kv_dtype_name: str,
    block_size: int,
    settings: dict[str, Any],
    concurrency: int,
    tokens: int,
) -> tuple[str, ...]:
    """The engine flags this estimate assumes, so the deployment runs what was sized."""
    kv = kv_dtype_name
    if engine is Engine.VLLM:
        return _vllm_launch_args(
            request,
            utilization=utilization,
            tp=tp,
            pp=pp,
            max_num_seqs=max_num_seqs,
            batched=batched,
            effective_len=effective_len,
            kv=kv,
            block_size=block_size,
        )
    if engine is Engine.SGLANG:
        args = [
            f"--tp-size {tp}",
            f"--pp-size {pp}",
            f"--mem-fraction-static {settings['mem_fraction_static']}",
            f"--chunked-prefill-size {batched}",
            f"--cuda-graph-max-bs {max_num_seqs}",
        ]
        if effective_len:
            args.append(f"--context-length {effective_len}")
        args.append(f"--kv-cache-dtype {kv}")
        if request.enforce_eager:
            args.append("--disable-cuda-graph")
        return tuple(args)
    if engine is Engine.TRTLLM:
        args = [
            f"--tp_size {tp}",
            f"--pp_size {pp}",
            f"--max_batch_size {max_num_seqs}",
            f"--max_num_tokens {batched}",
            f"--kv_cache_free_gpu_memory_fraction {settings['kv_cache_free_gpu_mem_fraction']}",
        ]
        if effective_len:
            args.append(f"--max_seq_len {effective_len}")
        return tuple(args)
    if engine is Engine.TGI:
        args = [
            f"--num-shard {tp}",
            f"--cuda-memory-fraction {utilization}",
            f"--max-batch-prefill-tokens {batched}",
            f"--max-concurrent-requests {max_num_seqs}",
        ]
        if effective_len:
            args.append(f"--max-total-tokens {effective_len}")
        return tuple(args)
    if engine is Engine.LLAMACPP:
        cache = {"fp16": "f16", "bf16": "bf16", "fp32": "f32"}.get(kv, "f16")
        return (
            f"--ctx-size {concurrency * tokens}",
            f"--parallel {concurrency}",
            "--n-gpu-layers 999",
            f"--split-mode {'layer' if pp > 1 else 'none'}",
            f"--ubatch-size {batched}",
            f"--cache-type-k {cache}",
            f"--cache-type-v {cache}",
        )
    return ()


__all__ = ["EstimateRequest", "GpuBill", "MemoryEstimate", "estimate_memory"]

"""Serving engines and how each lays out a GPU's memory (DESIGN §7).

A registry keyed by `Engine`: each entry turns one pipeline stage's static memory into the components of
the bill and the memory its KV cache gets. Adding an engine is one function plus one registry line.

Modelled versions (defaults and formulas): vLLM V1 (0.8–0.11), SGLang 0.4/0.5 (`mem_fraction_static`
auto-sizing), TensorRT-LLM 0.1x PyTorch/C++ runtime (`kv_cache_free_gpu_mem_fraction`), TGI 2/3
(warm-up sizing), llama.cpp server (static `n_ctx`), Hugging Face transformers `generate()`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from sizing.estimator.kv_layout import KvLayout
from sizing.estimator.layers import AttentionKind
from sizing.estimator.sglang_budget import ACTIVATION_MIB_PER_TOKEN as SGLANG_ACTIVATION_MIB_PER_TOKEN
from sizing.estimator.sglang_budget import GRAPH_MIB_PER_BATCH as SGLANG_GRAPH_MIB_PER_BATCH
from sizing.estimator.sglang_budget import NEWEST as SGLANG_NEWEST
from sizing.estimator.sglang_budget import sglang_default_scheduler_for, sglang_mem_fraction_static
from sizing.estimator.trtllm_budget import CUDA_GRAPH_ESTIMATE_BYTES as TRTLLM_CUDA_GRAPH_ESTIMATE_BYTES
from sizing.estimator.trtllm_budget import trtllm_rules
from sizing.estimator.units import GiB, MiB, format_bytes, gib
from sizing.estimator.versions import Version

if TYPE_CHECKING:  # types only: vllm_budget and hardware are not needed at run time here
    from sizing.estimator.hardware import GpuSpec
    from sizing.estimator.vllm_budget import VllmRules


class Engine(Enum):
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    TGI = "tgi"
    LLAMACPP = "llamacpp"
    TRANSFORMERS = "transformers"
    IDEALIZED = "idealized"  # the field's calculator: weights x overhead + KV demand + a fixed reserve


class Allocation(Enum):
    """How an engine takes its KV memory: this decides what the memory commitment can promise (DESIGN §11)."""

    PREALLOCATED = "preallocated"  # a pool reserved at start; load turns into queueing/preemption, not OOM
    STATIC = "static"  # a fixed context allocated at start (llama.cpp n_ctx)
    ON_DEMAND = "on_demand"  # grows with each sequence until the card runs out


@dataclass(frozen=True, kw_only=True)
class EngineTraits:
    label: str
    command: str  # how the engine is launched; MODEL stands for the model path or id
    allocation: Allocation
    default_block_size: int  # tokens per KV block
    block_pool: bool = False  # vLLM's hybrid block pool shared by layer groups
    refuses_short_pool: bool = False  # refuses to start when one max_model_len request does not fit the pool


ENGINE_TRAITS: dict[Engine, EngineTraits] = {
    Engine.VLLM: EngineTraits(
        label="vLLM",
        command="vllm serve MODEL",
        allocation=Allocation.PREALLOCATED,
        default_block_size=16,
        block_pool=True,
        refuses_short_pool=True,
    ),
    Engine.SGLANG: EngineTraits(
        label="SGLang",
        command="python -m sglang.launch_server --model-path MODEL",
        allocation=Allocation.PREALLOCATED,
        default_block_size=1,
    ),
    Engine.TRTLLM: EngineTraits(
        label="TensorRT-LLM", command="trtllm-serve MODEL", allocation=Allocation.PREALLOCATED, default_block_size=32
    ),
    Engine.TGI: EngineTraits(
        label="TGI",
        command="text-generation-launcher --model-id MODEL",
        allocation=Allocation.PREALLOCATED,
        default_block_size=16,
        refuses_short_pool=True,
    ),
    Engine.LLAMACPP: EngineTraits(
        label="llama.cpp", command="llama-server -m MODEL.gguf", allocation=Allocation.STATIC, default_block_size=1
    ),
    Engine.TRANSFORMERS: EngineTraits(
        label="transformers", command="", allocation=Allocation.ON_DEMAND, default_block_size=1
    ),
    Engine.IDEALIZED: EngineTraits(
        label="idealized", command="", allocation=Allocation.ON_DEMAND, default_block_size=1
    ),
}


@dataclass(frozen=True, kw_only=True)
class VllmStageTerms:
    """What vLLM's profiler subtracts on one stage's binding rank, resolved by estimator.vllm_budget."""

    rules: VllmRules
    activation_bytes: int  # A = max(forward peak, sampler peak)
    forward_bytes: int
    sampler_bytes: int
    non_torch_bytes: int
    non_torch_source: str
    cuda_graph_bytes: int
    graphs_in_budget: bool
    persistent_bytes: int  # model-runner buffers the regime counts (V1 P0/P4)
    kv_cache_memory_bytes: int | None = None  # --kv-cache-memory-bytes (0.11+): the KV cache exactly


@dataclass(frozen=True, kw_only=True)
class StageInputs:
    """What an engine budget needs for one GPU of one pipeline stage."""

    capacity_bytes: int  # the card's memory as the driver reports it
    gpu_memory_utilization: float
    weight_bytes: int
    activation_peak_bytes: int
    kv: KvLayout
    kv_demand_bytes: int  # what the requested concurrency needs on this rank
    tp: int
    pp: int
    weight_overhead: float
    runtime_reserve_bytes: int | None
    cuda_graph_bytes: int | None
    enforce_eager: bool
    batched_tokens: int  # vLLM max_num_batched_tokens / SGLang chunked_prefill_size / TRT max_num_tokens
    max_num_seqs: int  # vLLM max_num_seqs / SGLang cuda_graph_max_bs and max_running_requests
    mem_fraction_static: float | None = None  # SGLang; None = its automatic choice
    kv_cache_free_gpu_mem_fraction: float = 0.9  # TensorRT-LLM
    detail: bool = True  # build the formulas people read
    engine_version: Version | None = None  # None: the engine's newest modelled release
    gpu: GpuSpec | None = None  # the card (compute capability, NVSwitch, CUDA-visible total)
    vllm: VllmStageTerms | None = None  # vLLM: the version's terms

    @property
    def multi_gpu(self) -> bool:
        return self.tp * self.pp > 1


@dataclass(frozen=True, kw_only=True)
class StageBudget:
    """The bill of one GPU as the engine lays it out, plus the KV memory it allocates."""

    components: dict[str, int]  # ordered: weights, kv_cache, activations, runtime, cuda_graphs
    usable_bytes: int  # the line the bill must stay under
    budget_bytes: int  # the engine's own budget (vLLM: total x utilization)
    kv_pool_bytes: int  # memory for the KV cache (can be negative: will not start / does not fit)
    static_bytes: int  # memory before any KV, for the concurrency curve
    curve_limit_bytes: int  # the limit the concurrency curve is drawn against
    settings: dict[str, float | int]  # what the engine derived (e.g. SGLang's mem_fraction_static)
    formulas: dict[str, str] = field(default_factory=dict)  # line item -> its formula with the numbers
    notes: tuple[str, ...] = ()  # risks the engine's settings carry, shown as warnings


# vLLM 0.11 on H100 measured ~0.15 GiB of non-torch memory at TP=1 and ~0.6 GiB at TP≥2 (NCCL buffers).
VLLM_NON_TORCH_SINGLE_BYTES = gib(0.15)
VLLM_NON_TORCH_MULTI_BYTES = gib(0.6)
# CUDA graphs have been captured after the KV allocation, outside the budget: 0.5-2.5 GiB per GPU
# in public reports. The default is the low end; a boot log or benchmark replaces it.
VLLM_CUDA_GRAPH_BYTES = gib(0.5)
# The field calculator's fixed reserve for CUDA context, allocator pools and workspaces.
IDEALIZED_RUNTIME_RESERVE_BYTES = 2 * GiB
# TGI keeps (1 − fraction x wiggle room) of the card free (TGI_WIGGLE_ROOM, default 0.90 since TGI 3.3).
TGI_WIGGLE_ROOM = 0.9
# CUDA context, cuBLAS workspaces and allocator slack of a process without vLLM's profiler.
CUDA_CONTEXT_BYTES = gib(0.5)


def _g(n_bytes: int) -> str:
    return format_bytes(n_bytes, "GiB")


def vllm_default_scheduler(capacity_bytes: int, gpu_name: str = "") -> tuple[int, int]:
    """vLLM V1 defaults for `vllm serve`: (max_num_seqs, max_num_batched_tokens).

    vLLM's engine arguments give cards of ≥ 70 GiB other than the A100 (H100, H200, MI300X) the larger
    defaults 1024 / 8192, every other card 256 / 2048.
    """
    large_card = capacity_bytes >= 70 * GiB and "a100" not in gpu_name.lower()
    return (1024, 8192) if large_card else (256, 2048)


def sglang_default_scheduler(capacity_bytes: int, tp: int = 1, version: Version | None = None) -> tuple[int, int]:
    """SGLang's defaults by release, card size and TP: (cuda_graph_max_bs, chunked_prefill_size).

    `capacity_bytes` is the driver's total (SGLang reads nvidia-smi's MiB); `version` None means the newest
    modelled release. The table per release is `sglang_budget.sglang_default_scheduler_for`.
    """
    defaults = sglang_default_scheduler_for(version=version or SGLANG_NEWEST, gpu_mem_mib=capacity_bytes / MiB, tp=tp)
    return defaults.cuda_graph_max_bs, defaults.chunked_prefill_size


def _vllm(stage: StageInputs) -> StageBudget:
    """vLLM's budget as the release in `stage.vllm.rules` computes it (estimator.vllm_budget, spec §3.0):
    KV = gpu_memory_utilization × CUDA-visible total − weights − activation peak − non-torch − model-runner buffers
    (− CUDA graphs from 0.20). Before 0.20 the graphs are captured after the KV allocation, above the budget."""
    terms = stage.vllm
    assert terms is not None  # noqa: S101 - memory.estimate_memory always resolves them for vLLM
    rules = terms.rules
    capacity = stage.capacity_bytes
    budget = math.floor(capacity * stage.gpu_memory_utilization)
    runtime = terms.non_torch_bytes + terms.persistent_bytes
    graphs = terms.cuda_graph_bytes
    inside = graphs if terms.graphs_in_budget else 0
    static = stage.weight_bytes + stage.activation_peak_bytes + runtime + inside
    kv_pool = budget - static
    if terms.kv_cache_memory_bytes is not None:
        kv_pool = terms.kv_cache_memory_bytes
    band = f"vLLM {rules.version} ({rules.engine.upper()}, profiler {rules.regime})"
    notes: list[str] = []
    if stage.detail and 0 < kv_pool < 0.1 * budget and terms.kv_cache_memory_bytes is None:
        notes.append(
            f"the KV figure is fragile: the KV cache is {kv_pool / budget:.0%} of the {_g(budget)} "
            "budget, a residual of "
            "weights, activations and non-torch memory, so a 0.1 GiB error in any of them moves it by "
            f"{0.1 * GiB / kv_pool:.0%}; measure it with a boot log before committing"
        )
    if not stage.detail:
        kv_formula = ""
    elif terms.kv_cache_memory_bytes is not None:
        kv_formula = f"--kv-cache-memory-bytes: exactly {_g(kv_pool)} (profiling still runs)"
    else:
        kv_formula = (
            f"budget − weights − activations − non-torch{' − CUDA graphs' if inside else ''} = "
            f"{_g(budget)} − {_g(stage.weight_bytes)} − {_g(stage.activation_peak_bytes)} − {_g(runtime)}"
            + (f" − {_g(inside)}" if inside else "")
            + f" = {_g(kv_pool)}"
        )
    sampler_k = rules.sampler_path
    return StageBudget(
        components={
            "weights": stage.weight_bytes,
            "kv_cache": max(0, kv_pool),
            "activations": stage.activation_peak_bytes,
            "runtime": runtime,
            "cuda_graphs": graphs,
        },
        usable_bytes=capacity,
        budget_bytes=budget,
        kv_pool_bytes=kv_pool,
        static_bytes=static,
        curve_limit_bytes=budget,
        settings={"gpu_memory_utilization": stage.gpu_memory_utilization},
        notes=tuple(notes),
        formulas={}
        if not stage.detail
        else {
            "budget": f"CUDA-visible total × gpu_memory_utilization = {_g(capacity)} × "
            f"{stage.gpu_memory_utilization} = {_g(budget)} ({band})",
            "kv_cache": kv_formula,
            "activations": (
                f"max(forward peak {_g(terms.forward_bytes)}, sampler warm-up {_g(terms.sampler_bytes)}) = "
                f"{_g(stage.activation_peak_bytes)}: the profile batch of {rules.max_num_batched_tokens} tokens, "
                f"then the {sampler_k} sampler over {rules.sampler_rows} rows; the two peaks do not add"
                if terms.forward_bytes or terms.sampler_bytes
                else f"measured: {_g(stage.activation_peak_bytes)}"
            ),
            "runtime": (
                f"non-torch memory {_g(terms.non_torch_bytes)} ({terms.non_torch_source})"
                + (
                    f" + model-runner buffers {_g(terms.persistent_bytes)} allocated before profiling"
                    if terms.persistent_bytes
                    else ""
                )
            ),
            "cuda_graphs": (
                f"{_g(graphs)}, "
                + (
                    "inside the budget"
                    if terms.graphs_in_budget
                    else "captured after the KV allocation, above the budget"
                )
                if graphs
                else "none (--enforce-eager)"
            ),
        },
    )


def _sglang(stage: StageInputs) -> StageBudget:
    """`mem_fraction_static` of the card holds weights and the KV pool; the rest is reserved.

    When it is not given, the release's own rule picks it (`sglang_budget.sglang_mem_fraction_static`: fixed by TP
    in 0.4.0-0.4.5, by card size until 0.5.2, a reserve for activations and CUDA graphs from 0.5.3). SGLang measures
    the pool from the memory free after loading, so the CUDA context comes out of it too (every release).
    """
    capacity = stage.capacity_bytes
    version = stage.engine_version or SGLANG_NEWEST
    mla = any(attention.kind is AttentionKind.MLA for attention in stage.kv.attentions)
    auto = sglang_mem_fraction_static(
        version=version,
        gpu_mem_mib=capacity / MiB,
        tp=stage.tp,
        pp=stage.pp,
        chunked_prefill_size=stage.batched_tokens,
        cuda_graph_max_bs=stage.max_num_seqs,
        cuda_graphs=not stage.enforce_eager,
        mla=mla,
    )
    # SGLang's own estimates of what lives outside the static pool (the reserve formula's terms, 0.5.3+)
    activations = math.ceil(SGLANG_ACTIVATION_MIB_PER_TOKEN * max(stage.batched_tokens, 2048) * MiB)
    decode_graphs = 0 if stage.enforce_eager else SGLANG_GRAPH_MIB_PER_BATCH * stage.max_num_seqs * MiB
    prefill_graphs = 0 if stage.enforce_eager else math.ceil(auto.prefill_graph_mib * MiB)
    graphs = decode_graphs + prefill_graphs
    explicit = stage.mem_fraction_static is not None
    fraction = stage.mem_fraction_static if stage.mem_fraction_static is not None else auto.mem_fraction_static
    static_budget = math.floor(capacity * fraction)
    context = CUDA_CONTEXT_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    # SGLang: pool = free after load − free before load x (1 − fraction); "before" is after the CUDA context.
    kv_pool = math.floor((capacity - context) * fraction) - stage.weight_bytes
    context_share = static_budget - stage.weight_bytes - kv_pool  # the context's part inside the static budget
    reserve = capacity - static_budget
    notes: tuple[str, ...] = ()
    if explicit and reserve < activations + graphs:
        notes = (
            f"mem_fraction_static {fraction} leaves {_g(reserve)} outside the static pool; SGLang's own "
            f"reserve for prefill activations and CUDA graphs is {_g(activations + graphs)}: long prefills "
            "can run out of memory",
        )
    shown_activations = min(activations, reserve)
    shown_graphs = min(graphs, reserve - shown_activations)
    runtime = context_share + reserve - shown_activations - shown_graphs
    graph_terms = f"2 MiB × cuda_graph_max_bs {stage.max_num_seqs}" if decode_graphs else "decode graphs off"
    if prefill_graphs:
        graph_terms += (
            " + piecewise prefill graphs 1.5 GiB under MLA"
            if mla
            else f" + piecewise prefill graphs 8 MiB × {round(auto.prefill_graph_mib / 8)} token sizes"
        )
    return StageBudget(
        components={
            "weights": stage.weight_bytes,
            "kv_cache": max(0, kv_pool),
            "activations": shown_activations,
            "runtime": runtime,
            "cuda_graphs": shown_graphs,
        },
        usable_bytes=capacity,
        budget_bytes=static_budget,
        kv_pool_bytes=kv_pool,
        static_bytes=stage.weight_bytes + context_share,
        curve_limit_bytes=static_budget,
        settings={"mem_fraction_static": fraction},
        notes=notes,
        formulas={}
        if not stage.detail
        else {
            "mem_fraction_static": (f"given: --mem-fraction-static {fraction}" if explicit else auto.rule),
            "budget": f"capacity × mem_fraction_static = {_g(capacity)} × {fraction} = {_g(static_budget)}",
            "kv_cache": f"SGLang 0.4.0–0.5.23 (profile_max_num_token): (capacity − CUDA context) × "
            f"mem_fraction_static − weights = ({_g(capacity)} − {_g(context)}) × {fraction} − "
            f"{_g(stage.weight_bytes)} = {_g(kv_pool)}",
            "activations": f"1.5 MiB × max(chunked_prefill_size {stage.batched_tokens}, 2048) = {_g(activations)}"
            " (SGLang's own estimate, the reserve formula's term since 0.5.3)",
            "cuda_graphs": f"{graph_terms} = {_g(graphs)} ({auto.band}'s graphs; SGLang's own estimate)",
            "runtime": f"CUDA context + the rest of the reserve = {_g(runtime)}"
            + (
                ""
                if auto.reserved_mib is None or explicit
                else f" ({auto.band}: reserve {auto.reserved_mib:g} MiB in all)"
            ),
        },
    )


def _trtllm(stage: StageInputs) -> StageBudget:
    """The KV cache takes `kv_cache_free_gpu_mem_fraction` of the memory free after the engine loads.

    From 1.0 trtllm-serve runs the PyTorch backend, which captures decode CUDA graphs after the pool, out of the
    memory the fraction leaves (`trtllm_budget`); 0.17-0.21 ran a TensorRT engine without them by default.
    """
    rules = trtllm_rules(stage.engine_version)
    runtime = CUDA_CONTEXT_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    static = stage.weight_bytes + stage.activation_peak_bytes + runtime
    free = stage.capacity_bytes - static
    kv_pool = math.floor(max(0, free) * stage.kv_cache_free_gpu_mem_fraction) if free > 0 else free
    graphs = 0
    if not stage.enforce_eager:
        if stage.cuda_graph_bytes is not None:
            graphs = stage.cuda_graph_bytes
        elif rules.cuda_graphs_by_default:
            graphs = TRTLLM_CUDA_GRAPH_ESTIMATE_BYTES
    graph_source = (
        "measured"
        if stage.cuda_graph_bytes is not None
        else "estimate: the low end of public reports"
        if graphs
        else "none by default"
    )
    return StageBudget(
        components={
            "weights": stage.weight_bytes,
            "kv_cache": max(0, kv_pool),
            "activations": stage.activation_peak_bytes,
            "runtime": runtime,
            "cuda_graphs": graphs,
        },
        usable_bytes=stage.capacity_bytes,
        budget_bytes=static + max(0, kv_pool),
        kv_pool_bytes=kv_pool,
        static_bytes=static,
        curve_limit_bytes=static + max(0, kv_pool),
        settings={"kv_cache_free_gpu_mem_fraction": stage.kv_cache_free_gpu_mem_fraction},
        formulas={}
        if not stage.detail
        else {
            "kv_cache": f"{rules.band} ({rules.backend} backend): kv_cache_free_gpu_mem_fraction × (capacity − "
            f"weights − activations − runtime) = {stage.kv_cache_free_gpu_mem_fraction} × "
            f"({_g(stage.capacity_bytes)} − {_g(stage.weight_bytes)} − "
            f"{_g(stage.activation_peak_bytes)} − {_g(runtime)}) = {_g(kv_pool)}",
            "cuda_graphs": (
                f"{rules.band}: decode CUDA graphs captured after the KV pool, out of the memory the "
                f"fraction leaves: {_g(graphs)} ({graph_source})"
                if rules.cuda_graphs_by_default
                else f"{rules.band}: the TensorRT engine captures no CUDA graphs by default: "
                f"{_g(graphs)}" + (" (measured)" if stage.cuda_graph_bytes is not None else "")
            ),
        },
    )


def _tgi(stage: StageInputs) -> StageBudget:
    """After a warm-up prefill of max_batch_prefill_tokens, TGI gives the KV cache the memory free below
    `cuda_memory_fraction x TGI_WIGGLE_ROOM` of the card (TGI 3.3+: wiggle room 0.90; 0.95 before)."""
    runtime = CUDA_CONTEXT_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    budget = math.floor(stage.capacity_bytes * stage.gpu_memory_utilization * TGI_WIGGLE_ROOM)
    static = stage.weight_bytes + stage.activation_peak_bytes + runtime
    kv_pool = budget - static
    return StageBudget(
        components={
            "weights": stage.weight_bytes,
            "kv_cache": max(0, kv_pool),
            "activations": stage.activation_peak_bytes,
            "runtime": runtime,
            "cuda_graphs": 0,
        },
        usable_bytes=stage.capacity_bytes,
        budget_bytes=budget,
        kv_pool_bytes=kv_pool,
        static_bytes=static,
        curve_limit_bytes=budget,
        settings={"cuda_memory_fraction": stage.gpu_memory_utilization},
        formulas={}
        if not stage.detail
        else {
            "kv_cache": f"capacity × cuda_memory_fraction × wiggle room {TGI_WIGGLE_ROOM} − weights − warm-up "
            "activations − runtime = "
            f"{_g(budget)} − {_g(stage.weight_bytes)} − {_g(stage.activation_peak_bytes)} − "
            f"{_g(runtime)} = {_g(kv_pool)}",
        },
    )


def _on_demand(stage: StageInputs, *, runtime: int, weights: int) -> StageBudget:
    usable = math.floor(stage.capacity_bytes * stage.gpu_memory_utilization)
    static = weights + stage.activation_peak_bytes + runtime
    return StageBudget(
        components={
            "weights": weights,
            "kv_cache": stage.kv_demand_bytes,
            "activations": stage.activation_peak_bytes,
            "runtime": runtime,
            "cuda_graphs": 0,
        },
        usable_bytes=usable,
        budget_bytes=usable,
        kv_pool_bytes=usable - static,
        static_bytes=static,
        curve_limit_bytes=usable,
        settings={"planning_limit": stage.gpu_memory_utilization},
        formulas={}
        if not stage.detail
        else {
            "budget": f"capacity × planning limit = {_g(stage.capacity_bytes)} × {stage.gpu_memory_utilization} "
            f"= {_g(usable)}",
            "kv_cache": f"concurrent requests × KV bytes per request = {_g(stage.kv_demand_bytes)} (grows on demand)",
        },
    )


def _llamacpp(stage: StageInputs) -> StageBudget:
    """A static context of n_ctx tokens allocated at start, plus the compute buffer of one micro-batch."""
    runtime = CUDA_CONTEXT_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    return _on_demand(stage, runtime=runtime, weights=stage.weight_bytes)


def _transformers(stage: StageInputs) -> StageBudget:
    """No budget: the KV cache grows with every sequence until the card runs out."""
    runtime = CUDA_CONTEXT_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    return _on_demand(stage, runtime=runtime, weights=stage.weight_bytes)


def _idealized(stage: StageInputs) -> StageBudget:
    reserve = IDEALIZED_RUNTIME_RESERVE_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    return _on_demand(stage, runtime=reserve, weights=math.ceil(stage.weight_bytes * stage.weight_overhead))


ENGINE_BUDGETS: dict[Engine, Callable[[StageInputs], StageBudget]] = {
    Engine.VLLM: _vllm,
    Engine.SGLANG: _sglang,
    Engine.TRTLLM: _trtllm,
    Engine.TGI: _tgi,
    Engine.LLAMACPP: _llamacpp,
    Engine.TRANSFORMERS: _transformers,
    Engine.IDEALIZED: _idealized,
}

ENGINE_CHOICES: tuple[str, ...] = tuple(engine.value for engine in Engine)
PREALLOCATING = frozenset(e for e, traits in ENGINE_TRAITS.items() if traits.allocation is Allocation.PREALLOCATED)

"""Serving engines and how each decides the KV cache's share of a GPU (DESIGN §7).

A registry keyed by `Engine`: each entry turns one pipeline stage's static memory into the components of
the bill and the KV cache the engine allocates. Adding an engine is one function plus one registry line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from sizing.estimator.units import GiB, gib


class Engine(Enum):
    VLLM = "vllm"
    IDEALIZED = "idealized"  # the field's calculator: weights x overhead + KV demand + a fixed reserve


@dataclass(frozen=True, kw_only=True)
class StageInputs:
    """What an engine budget needs for one GPU of one pipeline stage."""

    capacity_bytes: int  # the card's memory as the driver reports it
    gpu_memory_utilization: float
    weight_bytes: int
    activation_peak_bytes: int
    kv_bytes_per_token: int  # this rank's layers
    kv_page_bytes: int  # one block of block_size tokens over this rank's layers
    kv_demand_bytes: int  # what the requested concurrency needs on this rank
    multi_gpu: bool
    weight_overhead: float
    runtime_reserve_bytes: int | None
    cuda_graph_bytes: int | None
    enforce_eager: bool


@dataclass(frozen=True, kw_only=True)
class StageBudget:
    """The bill of one GPU as the engine lays it out, plus the KV memory it allocates."""

    components: dict[str, int]  # ordered: weights, kv_cache, activations, runtime, cuda_graphs
    usable_bytes: int  # the line the bill must stay under
    budget_bytes: int  # the engine's own budget (vLLM: total x utilization)
    kv_pool_bytes: int  # memory available to the KV cache (can be negative: will not start)
    kv_capacity_tokens: int
    curve_static_bytes: int  # memory before any KV demand, for the concurrency curve
    curve_limit_bytes: int  # the limit the concurrency curve is drawn against


# vLLM 0.11 on H100 measured ~0.15 GiB of non-torch memory at TP=1 and ~0.6 GiB at TP≥2 (NCCL buffers).
VLLM_NON_TORCH_SINGLE_BYTES = gib(0.15)
VLLM_NON_TORCH_MULTI_BYTES = gib(0.6)
# CUDA graphs have been captured after the KV allocation, outside the budget: 0.5-2.5 GiB per GPU
# in public reports. The default is the low end; a boot log or benchmark replaces it.
VLLM_CUDA_GRAPH_BYTES = gib(0.5)
# The field calculator's fixed reserve for CUDA context, allocator pools and workspaces.
IDEALIZED_RUNTIME_RESERVE_BYTES = 2 * GiB


def vllm_default_scheduler(capacity_bytes: int, gpu_name: str = "") -> tuple[int, int]:
    """vLLM V1 defaults for `vllm serve`: (max_num_seqs, max_num_batched_tokens).

    vLLM's engine arguments give cards of ≥ 70 GiB other than the A100 (H100, H200, MI300X) the larger
    defaults 1024 / 8192, every other card 256 / 2048.
    """
    large_card = capacity_bytes >= 70 * GiB and "a100" not in gpu_name.lower()
    return (1024, 8192) if large_card else (256, 2048)


def _vllm(stage: StageInputs) -> StageBudget:
    budget = math.floor(stage.capacity_bytes * stage.gpu_memory_utilization)
    non_torch = stage.runtime_reserve_bytes
    if non_torch is None:
        non_torch = VLLM_NON_TORCH_MULTI_BYTES if stage.multi_gpu else VLLM_NON_TORCH_SINGLE_BYTES
    graphs = 0 if stage.enforce_eager else (
        VLLM_CUDA_GRAPH_BYTES if stage.cuda_graph_bytes is None else stage.cuda_graph_bytes
    )
    static = stage.weight_bytes + stage.activation_peak_bytes + non_torch
    kv_pool = budget - static
    blocks = max(0, kv_pool) // stage.kv_page_bytes if stage.kv_page_bytes else 0
    block_tokens = stage.kv_page_bytes // stage.kv_bytes_per_token if stage.kv_bytes_per_token else 0
    return StageBudget(
        components={
            "weights": stage.weight_bytes,
            "kv_cache": max(0, kv_pool),
            "activations": stage.activation_peak_bytes,
            "runtime": non_torch,
            "cuda_graphs": graphs,
        },
        usable_bytes=stage.capacity_bytes,
        budget_bytes=budget,
        kv_pool_bytes=kv_pool,
        kv_capacity_tokens=blocks * block_tokens,
        curve_static_bytes=static,
        curve_limit_bytes=budget,
    )


def _idealized(stage: StageInputs) -> StageBudget:
    usable = math.floor(stage.capacity_bytes * stage.gpu_memory_utilization)
    weights = math.ceil(stage.weight_bytes * stage.weight_overhead)
    reserve = (
        IDEALIZED_RUNTIME_RESERVE_BYTES if stage.runtime_reserve_bytes is None else stage.runtime_reserve_bytes
    )
    static = weights + reserve
    kv_pool = usable - static
    capacity_tokens = max(0, kv_pool) // stage.kv_bytes_per_token if stage.kv_bytes_per_token else 0
    return StageBudget(
        components={
            "weights": weights,
            "kv_cache": stage.kv_demand_bytes,
            "activations": 0,
            "runtime": reserve,
            "cuda_graphs": 0,
        },
        usable_bytes=usable,
        budget_bytes=usable,
        kv_pool_bytes=kv_pool,
        kv_capacity_tokens=capacity_tokens,
        curve_static_bytes=static,
        curve_limit_bytes=usable,
    )


ENGINE_BUDGETS: dict[Engine, Callable[[StageInputs], StageBudget]] = {
    Engine.VLLM: _vllm,
    Engine.IDEALIZED: _idealized,
}

ENGINE_CHOICES: tuple[str, ...] = tuple(engine.value for engine in Engine)

# Engines that allocate the KV pool up front: demand is checked against the pool, not added to the bill.
PREALLOCATING = frozenset({Engine.VLLM})

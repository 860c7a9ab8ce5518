"""Step-time model: how long one engine step takes on one replica (DESIGN §9).

A step processes `decode` sequences one token each (reading every weight once and each sequence's KV cache) and
`prefill` prompt tokens (compute-bound matrix products plus causal attention over the chunk's context):

    linear_s    = max(2 × P_active × tokens / TP / (FLOP/s × mfu), weight bytes read / (bandwidth × efficiency))
    attention_s = max(attention FLOPs / TP / (FLOP/s × mfu), KV bytes read / (bandwidth × efficiency))
    step_s      = linear_s + attention_s + TP all-reduces + overhead + per-sequence overhead × sequences

Each operator is bound by its own roofline and they run one after the other: at a large decode batch the matrix
products turn compute-bound while attention stays bound by the KV it reads, and the two do not overlap.

Weights read per step: the non-expert weights once (the input embedding is a lookup, not read whole) and, for a
mixture of experts, only the experts the step's tokens are routed to: E × (1 − (1 − k/E)^tokens) of E experts
(tokens spread uniformly over experts). Attention FLOPs per (query token, context token): per layer
2 × heads × (qk_dim + v_dim); MLA layers work in the latent (kv_lora_rank + rope, and kv_lora_rank for values).

Pipeline stages run one after another for a step (latency-true; vLLM's overlapping micro-batches would raise
throughput, which this model leaves out: conservative).

>>> from sizing.estimator.architecture import architecture_from_config
>>> from sizing.estimator.hardware import GpuSpec
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
...     "torch_dtype": "bfloat16"})
>>> h100 = GpuSpec(slug="h100", name="H100", memory_bytes=80 * 2**30, memory_bandwidth_bytes_per_s=3_350 * 10**9,
...                tflops_dense={"bf16": 989, "fp8": 1979}, interconnect="nvlink")
>>> model = step_model(arch=arch, gpu=h100, weights="bf16", kv_dtype="auto", tp=1, engine="vllm")
>>> round(model.step_s(decode=1, context_tokens=1000) * 1000, 2)  # one sequence at 1K context: ms per token
6.46

By hand: weights 16,060,522,496 bytes less the 1,050,673,152-byte input table = 15,009,849,344, plus KV
1000 × 131,072 = 131,072,000 → 15,140,921,344 bytes / (3.35 TB/s × 0.8) = 5.650 ms; + 0.8 ms per step
+ 0.008 ms per sequence = 6.458 ms.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode, invalid_argument
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.kv import resolve_kv_dtype
from sizing.estimator.kv_layout import kv_layout
from sizing.estimator.layers import AttentionKind, MlpKind
from sizing.estimator.tensors import (
    Role,
    active_parameter_count,
    pipeline_stage_layers,
    tensor_inventory,
)
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank_by_role

ACTIVATION_BYTES = DType.BF16.bits // 8  # all-reduced hidden states travel in 16 bits


@dataclass(frozen=True, kw_only=True)
class Efficiencies:
    """What fraction of the datasheet a deployment reaches, and its fixed costs. Defaults per engine below;
    `perf_calibrate` fits them to measured runs of a GPU/engine pair."""

    mfu: float = 0.5  # share of the dense tensor FLOP/s reached by prefill matrix products
    bandwidth: float = 0.8  # share of memory bandwidth reached while reading weights and KV in decode
    link: float = 0.7  # share of the TP link bandwidth reached by all-reduces
    step_overhead_s: float = 0.0008  # scheduler, kernel launches, sampling: per step
    sequence_overhead_s: float = 0.000_008  # per sequence in the step (input preparation, detokenising)

    def __post_init__(self) -> None:
        for name in ("mfu", "bandwidth", "link"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise SizingError(
                    code=SizingErrorCode.INVALID_ARGUMENT,
                    message=f"{name} efficiency must be in (0, 1], got {value}",
                    extra={"fields": {name: ["must be in (0, 1]"]}},
                )
        for name in ("step_overhead_s", "sequence_overhead_s"):
            if getattr(self, name) < 0:
                raise SizingError(
                    code=SizingErrorCode.INVALID_ARGUMENT,
                    message=f"{name} must be ≥ 0",
                    extra={"fields": {name: ["must be ≥ 0"]}},
                )


# Defaults per engine: fraction-of-peak figures typical of each engine's kernels, and its per-step host overhead
# (CUDA graphs on for vLLM, SGLang and TensorRT-LLM; llama.cpp and transformers run eagerly). They are starting
# points, documented in docs/decisions.md, meant to be replaced by calibration from the customer's own runs.
ENGINE_EFFICIENCIES: dict[Engine, Efficiencies] = {
    Engine.VLLM: Efficiencies(),
    Engine.SGLANG: Efficiencies(step_overhead_s=0.0007, sequence_overhead_s=0.000_006),
    Engine.TRTLLM: Efficiencies(mfu=0.55, bandwidth=0.85, step_overhead_s=0.0004, sequence_overhead_s=0.000_002),
    Engine.TGI: Efficiencies(mfu=0.45, bandwidth=0.75, step_overhead_s=0.0015, sequence_overhead_s=0.000_010),
    Engine.LLAMACPP: Efficiencies(mfu=0.3, bandwidth=0.7, step_overhead_s=0.002, sequence_overhead_s=0.000_050),
    Engine.TRANSFORMERS: Efficiencies(mfu=0.35, bandwidth=0.5, step_overhead_s=0.010, sequence_overhead_s=0.000_050),
    Engine.IDEALIZED: Efficiencies(mfu=1.0, bandwidth=1.0, link=1.0, step_overhead_s=0.0, sequence_overhead_s=0.0),
}

# TP link: per-direction bandwidth and per-all-reduce latency when the catalog gives no figure.
LINK_DEFAULTS: dict[str, tuple[float, float]] = {
    "nvlink": (300e9, 8e-6),  # bytes/s per direction, seconds per all-reduce
    "xgmi": (256e9, 10e-6),  # AMD Infinity Fabric
    "pcie": (25e9, 25e-6),  # PCIe 4.0 x16 measured ≈ 25 GB/s per direction
}


@dataclass(frozen=True, kw_only=True)
class StepModel:
    """Everything a step time depends on, precomputed for one replica (TP × PP GPUs)."""

    tp: int
    pp: int
    compute_dtype: str  # the tflops_dense key used
    flops_per_s: float  # dense FLOP/s of one GPU at compute_dtype (datasheet)
    bandwidth_bytes_per_s: float  # one GPU (datasheet)
    link_bytes_per_s: float  # per direction
    link_latency_s: float
    efficiencies: Efficiencies
    dense_read_bytes: float  # weights read every step by one GPU, all stages together (no routed experts)
    expert_bytes: float  # one GPU's share of one routed expert, summed over the MoE layers
    experts: int  # routed experts per MoE layer this GPU holds (all of them without expert parallelism; 0: dense)
    experts_routed: int  # routed experts per MoE layer in the model
    experts_per_token: int
    matmul_flops_per_token: float  # 2 × active parameters of the decoder layers (no input table, no output head)
    expert_flops_per_token: float  # of those, the routed experts' share (their own roofline: each expert's weights
    # are read once for the few tokens routed to it)
    head_flops_per_token: float  # 2 × vocabulary × hidden: logits, computed only for tokens that are sampled
    attention_flops_per_pair: float  # per (query token, context token), full-attention layers, whole model
    sliding_flops_per_pair: float  # the same for sliding-window layers (context capped at the window)
    window: int  # the sliding window (0: none)
    kv_bytes_per_token: float  # KV bytes one GPU reads per context token, all stages together
    hidden_size: int
    layers: int

    def _weights_read(self, tokens: float) -> float:
        read: float = self.dense_read_bytes + self._experts_read(tokens)
        return read

    def _experts_read(self, tokens: Any) -> Any:
        if not self.experts:
            return 0.0
        touched = self.experts * (1 - (1 - self.experts_per_token / self.experts_routed) ** tokens)
        return self.expert_bytes * touched

    def _linear_s(self, tokens: Any, sampled: Any) -> Any:
        """Matrix products: the dense ones (and the output head for sampled tokens), then the routed experts."""
        dense_flops = (
            (self.matmul_flops_per_token - self.expert_flops_per_token) * tokens + self.head_flops_per_token * sampled
        ) / self.tp
        expert_flops = self.expert_flops_per_token * tokens / self.tp
        return self._roofline(dense_flops, self.dense_read_bytes) + (
            self._roofline(expert_flops, self._experts_read(tokens)) if self.experts else 0.0
        )

    def _comm_s(self, tokens: float) -> float:
        if self.tp == 1:
            return 0.0
        ring = 2 * (self.tp - 1) / self.tp  # ring all-reduce moves 2(t-1)/t of the message per GPU
        message = tokens * self.hidden_size * ACTIVATION_BYTES
        per_all_reduce = self.link_latency_s + ring * message / (self.link_bytes_per_s * self.efficiencies.link)
        return 2 * self.layers * per_all_reduce  # two all-reduces per layer: after attention and after the MLP

    def step_s(
        self,
        *,
        decode: int = 0,
        context_tokens: float = 0.0,
        prefill: int = 0,
        prefill_pairs: float = 0.0,
        prefill_context_tokens: float = 0.0,
        prefill_sequences: int | None = None,
    ) -> float:
        """Seconds for one step.

        decode: sequences decoding one token; context_tokens: the sum of their context lengths;
        prefill: prompt tokens processed; prefill_pairs: Σ over prefill tokens of the context each attends to
        (a chunk of T tokens after o cached ones: T × (o + (T + 1) / 2)); prefill_context_tokens: cached tokens
        the chunks read (Σ o); prefill_sequences: prompts in the step (logits for their last token; default 1).
        """
        tokens = decode + prefill
        if tokens <= 0:
            return 0.0
        e = self.efficiencies
        pairs = context_tokens + prefill_pairs
        sliding_pairs = pairs if not self.window else min(pairs, tokens * self.window)
        prompts = (1 if prefill else 0) if prefill_sequences is None else prefill_sequences
        tp = self.tp
        flops_attention = (self.attention_flops_per_pair * pairs + self.sliding_flops_per_pair * sliding_pairs) / tp
        kv_read = self.kv_bytes_per_token * (context_tokens + prefill_context_tokens + prefill)
        sequences = decode + prompts
        return float(
            self._linear_s(tokens, decode + prompts)
            + self._roofline(flops_attention, kv_read)
            + self._comm_s(tokens)
            + e.step_overhead_s
            + e.sequence_overhead_s * sequences
        )

    def _roofline(self, flops: Any, read_bytes: Any) -> Any:
        """An operator's time: bound by its FLOPs or by the bytes it reads, whichever is slower."""
        e = self.efficiencies
        compute = flops / (self.flops_per_s * e.mfu)
        memory = read_bytes / (self.bandwidth_bytes_per_s * e.bandwidth)
        if isinstance(compute, float) and isinstance(memory, float):
            return compute if compute > memory else memory  # scalars: numpy's call overhead is the bigger cost
        return np.maximum(compute, memory)

    def decode_steps_s(self, *, decode: int, context_tokens: float, steps: int) -> np.ndarray:
        """Durations of `steps` consecutive decode-only steps of `decode` sequences whose contexts grow by one
        token per step (vectorised: the simulator's fast path)."""
        e = self.efficiencies
        context = context_tokens + decode * np.arange(steps, dtype=np.float64)
        sliding = np.minimum(context, decode * self.window) if self.window else context
        flops_attention = (self.attention_flops_per_pair * context + self.sliding_flops_per_pair * sliding) / self.tp
        fixed = self._comm_s(decode) + e.step_overhead_s + e.sequence_overhead_s * decode
        durations: np.ndarray = (
            self._linear_s(decode, decode) + self._roofline(flops_attention, self.kv_bytes_per_token * context) + fixed
        )
        return durations

    def with_efficiencies(self, efficiencies: Efficiencies) -> StepModel:
        return replace(self, efficiencies=efficiencies)


def compute_dtype(gpu: GpuSpec, *, weight_slug: str, model_dtype: DType) -> str:
    """The tensor-core rate a format runs at: FP8 checkpoints at the FP8 rate where the GPU has one, FP4 at FP4,
    everything else (16-bit, and weight-only int4/int8 formats, which dequantise to 16 bits) at the model dtype's."""
    rates = gpu.tflops_dense
    if weight_slug.startswith(("nvfp4", "fp4")) and rates.get("fp4"):
        return "fp4"
    if weight_slug.startswith("fp8") and rates.get("fp8"):
        return "fp8"
    preferred = "fp16" if model_dtype is DType.FP16 else "bf16"
    for key in (preferred, "bf16", "fp16", "fp32"):
        if rates.get(key):
            return key
    raise invalid_argument("gpu", f"{gpu.name}: the catalog gives no dense FLOP/s (tflops_dense) to time prefill with")


def _attention_flops(arch: Architecture, layers: range) -> tuple[float, float, int]:
    """(full-layer, sliding-layer) FLOPs per (query, context) pair, and the sliding window."""
    full = sliding = 0.0
    window = 0
    for layer in arch.layers[layers.start : layers.stop]:
        a = layer.attention
        if a.kind is AttentionKind.MLA:
            per_head = (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank  # scores in the latent, values too
        else:
            per_head = a.head_dim + a.value_head_dim
        flops = 2 * a.num_heads * per_head  # multiply-add = 2 FLOPs
        if a.kind is AttentionKind.SLIDING and a.window:
            sliding += flops
            window = max(window, a.window)
        else:
            full += flops
    return full, sliding, window


@lru_cache(maxsize=2048)
def step_model(
    *,
    arch: Architecture,
    gpu: GpuSpec,
    weights: str,
    kv_dtype: str,
    tp: int,
    pp: int = 1,
    ep: int = 1,
    engine: Engine | str = Engine.VLLM,
    link: str | None = None,
    link_bytes_per_s: float | None = None,
    efficiencies: Efficiencies | None = None,
) -> StepModel:
    """The step-time model of one replica of `arch` on `tp` × `pp` GPUs of `gpu`.

    `link` overrides the catalog's interconnect (e.g. "pcie" when the server has no NVLink bridge);
    `efficiencies` override the engine's defaults (a calibration).
    """
    engine = Engine(engine)
    if tp < 1 or pp < 1:
        raise invalid_argument("tp", "tp and pp must be ≥ 1")
    if not gpu.memory_bandwidth_bytes_per_s:
        raise invalid_argument("gpu", f"{gpu.name}: the catalog gives no memory bandwidth to time decode with")
    if arch.parameters_override is not None:
        raise invalid_argument("model", "a model described only by its parameter count has no layer table to time")
    fmt = resolve_weight_format(arch, weights)
    dtype_key = compute_dtype(gpu, weight_slug=fmt.slug, model_dtype=arch.dtype)
    inventory = tensor_inventory(arch)
    by_role = weight_bytes_per_rank_by_role(arch, fmt, tp=tp, ep=ep)
    gpu_bytes = float(sum(by_role.values()))  # a step passes through every stage
    expert_total = float(by_role.get(Role.EXPERT, 0))
    # untied: the input table is only looked up (one row per token), not read whole
    lookup = float(by_role.get(Role.EMBEDDING, 0)) if Role.LM_HEAD in by_role else 0.0
    moe = next((layer.mlp for layer in arch.layers if layer.mlp.kind is MlpKind.MOE), None)
    experts_routed = moe.num_experts if moe else 0
    experts = -(-experts_routed // ep) if ep > 1 else experts_routed  # this rank's whole experts under EP
    expert_bytes = expert_total / experts if experts else 0.0
    dense_read = gpu_bytes - expert_total - lookup
    head = arch.vocab_size * arch.hidden_size  # the output projection (tied or not)
    full, sliding, window = _attention_flops(arch, range(0, arch.num_hidden_layers))
    kv_bits = resolve_kv_dtype(arch, kv_dtype).bits
    layout = kv_layout(tuple(layer.attention for layer in arch.layers), kv_bits=kv_bits, tp=tp, block_size=16)
    pipeline_stage_layers(arch.num_hidden_layers, pp)  # refuses more stages than layers
    interconnect = (link or gpu.interconnect or "pcie").lower()
    default_bw, latency = LINK_DEFAULTS.get(interconnect, LINK_DEFAULTS["pcie"])
    if link_bytes_per_s is None:
        link_bytes_per_s = (
            gpu.interconnect_bytes_per_s / 2
            if (gpu.interconnect_bytes_per_s and link is None and interconnect != "pcie")
            else default_bw
        )
    return StepModel(
        tp=tp,
        pp=pp,
        compute_dtype=dtype_key,
        flops_per_s=gpu.tflops_dense[dtype_key] * 1e12,
        bandwidth_bytes_per_s=float(gpu.memory_bandwidth_bytes_per_s),
        link_bytes_per_s=float(link_bytes_per_s),
        link_latency_s=latency,
        efficiencies=efficiencies or ENGINE_EFFICIENCIES[engine],
        dense_read_bytes=max(0.0, dense_read),
        expert_bytes=expert_bytes,
        experts=experts,
        experts_routed=experts_routed,
        experts_per_token=moe.experts_per_token if moe else 0,
        matmul_flops_per_token=2.0 * (active_parameter_count(inventory, input_embedding=False) - head),  # mul-add
        head_flops_per_token=2.0 * head,
        expert_flops_per_token=2.0
        * sum(t.elements * t.per_model * t.active_copies for t in inventory if t.role is Role.EXPERT),
        attention_flops_per_pair=full,
        sliding_flops_per_pair=sliding,
        window=window,
        kv_bytes_per_token=float(layout.bytes_per_token),
        hidden_size=arch.hidden_size,
        layers=arch.num_hidden_layers,  # a step passes every stage in turn: all layers' all-reduces
    )


def prefill_pairs(tokens: int, cached: int = 0) -> float:
    """Σ of the context each of `tokens` new tokens attends to after `cached` tokens (causal, itself included).

    >>> prefill_pairs(4), prefill_pairs(2, cached=10)
    (10.0, 23.0)
    """
    return tokens * cached + tokens * (tokens + 1) / 2


def time_to_first_token_s(model: StepModel, *, prompt_tokens: int, chunk_tokens: int | None = None) -> float:
    """An idle replica's time to prefill a prompt (in chunks of `chunk_tokens`) and emit the first token."""
    chunk = chunk_tokens or prompt_tokens
    done = 0
    total = 0.0
    while done < prompt_tokens:
        size = min(chunk, prompt_tokens - done)
        total += model.step_s(prefill=size, prefill_pairs=prefill_pairs(size, done), prefill_context_tokens=done)
        done += size
    return total


def decode_tokens_per_s(model: StepModel, *, batch: int, context_tokens: int) -> float:
    """Output tokens per second of a replica decoding `batch` sequences at `context_tokens` each."""
    return batch / model.step_s(decode=batch, context_tokens=batch * context_tokens) if batch else 0.0


__all__ = [
    "ENGINE_EFFICIENCIES",
    "Efficiencies",
    "StepModel",
    "compute_dtype",
    "decode_tokens_per_s",
    "prefill_pairs",
    "step_model",
    "time_to_first_token_s",
]

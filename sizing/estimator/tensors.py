"""The tensor inventory of an architecture: every weight tensor with its shape, role and how tensor
parallelism splits it. Parameters, weight bytes and per-rank shares are all sums over this list.

>>> from sizing.estimator.architecture import architecture_from_config
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
...     "vocab_size": 32000, "torch_dtype": "float16"})
>>> parameter_count(tensor_inventory(arch))  # Llama-2-7B, as published
6738415616
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any

from sizing.estimator.architecture import Architecture, NormKind
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.layers import AttentionKind, AttentionSpec, LayerSpec, MlpKind, MlpSpec

VOCAB_PADDING = 64  # vLLM pads the vocabulary to a multiple of 64 before splitting it over TP ranks


class Role(Enum):
    EMBEDDING = "embedding"
    LM_HEAD = "lm_head"
    ATTENTION = "attention"
    MLP = "mlp"
    EXPERT = "expert"  # routed MoE experts
    ROUTER = "router"
    NORM = "norm"
    BIAS = "bias"
    VISION = "vision"  # a vision tower, counted as one block of parameters


class Shard(Enum):
    """How tensor parallelism splits a tensor (Megatron/vLLM layout)."""

    COLUMN = "column"  # output features split t ways
    KV_HEADS = "kv_heads"  # output features are KV heads: split, or replicated when heads < t
    ROW = "row"  # input features split t ways
    VOCAB = "vocab"  # vocabulary rows split t ways after padding
    REPLICATED = "replicated"  # every rank holds all of it


@dataclass(frozen=True, kw_only=True)
class TensorSpec:
    """One weight tensor, repeated `per_model` times (e.g. once per layer of its kind) and `copies`
    times within a layer (the routed experts of a MoE layer)."""

    name: str
    role: Role
    rows: int  # output features (vocabulary for embeddings); the length for vectors
    cols: int  # input features; 1 for vectors (norm weights, biases)
    per_model: int  # copies in the whole model (the number of layers of this kind for per-layer tensors)
    per_layer: bool  # lives in each decoder layer (split by pipeline stages)
    shard: Shard
    quantizable: bool  # linear weights a quantisation recipe converts; embeddings, head and norms stay 16-bit
    copies: int = 1  # routed experts: one per expert
    active_copies: int = 1  # routed experts: the experts each token uses
    layer: LayerSpec | None = None  # the layer kind a per-layer tensor belongs to

    @property
    def elements(self) -> int:
        """Elements of one copy."""
        return self.rows * self.cols

    def rank_shape(self, *, tp: int, kv_heads: int, head_dim: int) -> tuple[int, int]:
        """Rows and columns of one copy of this tensor on one TP rank."""
        if self.shard is Shard.COLUMN:
            return self.rows // tp, self.cols
        if self.shard is Shard.KV_HEADS:
            return max(1, kv_heads // tp) * head_dim, self.cols
        if self.shard is Shard.ROW:
            return self.rows, self.cols // tp
        if self.shard is Shard.VOCAB:
            padded = math.ceil(self.rows / VOCAB_PADDING) * VOCAB_PADDING
            return math.ceil(padded / tp), self.cols
        return self.rows, self.cols


def _attention_tensors(attn: AttentionSpec, h: int) -> list[dict[str, Any]]:
    """Tensors of one attention block (vLLM's TP layout), as TensorSpec keyword dicts."""
    linear = {"role": Role.ATTENTION, "quantizable": True}
    vector = {"cols": 1, "quantizable": False}
    if attn.kind is AttentionKind.MLA:
        heads = attn.num_heads
        tensors: list[dict[str, Any]] = []
        if attn.q_lora_rank:
            tensors += [
                {"name": "q_a_proj", "rows": attn.q_lora_rank, "cols": h, "shard": Shard.REPLICATED, **linear},
                {
                    "name": "q_a_layernorm",
                    "role": Role.NORM,
                    "rows": attn.q_lora_rank,
                    "shard": Shard.REPLICATED,
                    **vector,
                },
                {
                    "name": "q_b_proj",
                    "rows": heads * attn.head_dim,
                    "cols": attn.q_lora_rank,
                    "shard": Shard.COLUMN,
                    **linear,
                },
            ]
        else:
            tensors.append(
                {"name": "q_proj", "rows": heads * attn.head_dim, "cols": h, "shard": Shard.COLUMN, **linear}
            )
        latent = attn.kv_lora_rank + attn.qk_rope_head_dim
        return [
            *tensors,
            {"name": "kv_a_proj_with_mqa", "rows": latent, "cols": h, "shard": Shard.REPLICATED, **linear},
            {
                "name": "kv_a_layernorm",
                "role": Role.NORM,
                "rows": attn.kv_lora_rank,
                "shard": Shard.REPLICATED,
                **vector,
            },
            {
                "name": "kv_b_proj",
                "rows": heads * (attn.qk_nope_head_dim + attn.value_head_dim),
                "cols": attn.kv_lora_rank,
                "shard": Shard.COLUMN,
                **linear,
            },
            {"name": "o_proj", "rows": h, "cols": heads * attn.value_head_dim, "shard": Shard.ROW, **linear},
        ]
    q_out = attn.num_heads * attn.head_dim
    k_out = attn.num_kv_heads * attn.head_dim
    v_out = attn.num_kv_heads * attn.value_head_dim
    tensors = [
        {"name": "q_proj", "rows": q_out, "cols": h, "shard": Shard.COLUMN, **linear},
        {"name": "k_proj", "rows": k_out, "cols": h, "shard": Shard.KV_HEADS, **linear},
        {"name": "v_proj", "rows": v_out, "cols": h, "shard": Shard.KV_HEADS, **linear},
        {"name": "o_proj", "rows": h, "cols": attn.num_heads * attn.value_head_dim, "shard": Shard.ROW, **linear},
    ]
    if attn.qkv_bias:
        tensors += [
            {"name": "q_proj.bias", "role": Role.BIAS, "rows": q_out, "shard": Shard.COLUMN, **vector},
            {"name": "k_proj.bias", "role": Role.BIAS, "rows": k_out, "shard": Shard.KV_HEADS, **vector},
            {"name": "v_proj.bias", "role": Role.BIAS, "rows": v_out, "shard": Shard.KV_HEADS, **vector},
        ]
    if attn.o_bias:
        tensors.append({"name": "o_proj.bias", "role": Role.BIAS, "rows": h, "shard": Shard.REPLICATED, **vector})
    if attn.qk_norm:
        tensors += [
            {"name": "q_norm", "role": Role.NORM, "rows": attn.head_dim, "shard": Shard.REPLICATED, **vector},
            {"name": "k_norm", "role": Role.NORM, "rows": attn.head_dim, "shard": Shard.REPLICATED, **vector},
        ]
    if attn.sinks:
        tensors.append({"name": "sinks", "role": Role.BIAS, "rows": attn.num_heads, "shard": Shard.COLUMN, **vector})
    return tensors


def _mlp_tensors(mlp: MlpSpec, h: int) -> list[dict[str, Any]]:
    """Tensors of one MLP or MoE block, as TensorSpec keyword dicts."""
    inputs = ("gate_proj", "up_proj") if mlp.gated else ("up_proj",)
    vector = {"cols": 1, "quantizable": False}
    if mlp.kind is MlpKind.DENSE:
        tensors = [
            {
                "name": name,
                "role": Role.MLP,
                "rows": mlp.intermediate_size,
                "cols": h,
                "shard": Shard.COLUMN,
                "quantizable": True,
            }
            for name in inputs
        ]
        tensors.append(
            {
                "name": "down_proj",
                "role": Role.MLP,
                "rows": h,
                "cols": mlp.intermediate_size,
                "shard": Shard.ROW,
                "quantizable": True,
            }
        )
        if mlp.bias:
            tensors += [
                {
                    "name": f"{name}.bias",
                    "role": Role.BIAS,
                    "rows": mlp.intermediate_size,
                    "shard": Shard.COLUMN,
                    **vector,
                }
                for name in inputs
            ]
            tensors.append(
                {"name": "down_proj.bias", "role": Role.BIAS, "rows": h, "shard": Shard.REPLICATED, **vector}
            )
        return tensors
    routed = {"copies": mlp.num_experts, "active_copies": mlp.experts_per_token}
    tensors = [
        {
            "name": "router",
            "role": Role.ROUTER,
            "rows": mlp.num_experts,
            "cols": h,
            "shard": Shard.REPLICATED,
            "quantizable": False,
        },
        *(
            {
                "name": f"experts.{name}",
                "role": Role.EXPERT,
                "rows": mlp.intermediate_size,
                "cols": h,
                "shard": Shard.COLUMN,
                "quantizable": True,
                **routed,
            }
            for name in inputs
        ),
        {
            "name": "experts.down_proj",
            "role": Role.EXPERT,
            "rows": h,
            "cols": mlp.intermediate_size,
            "shard": Shard.ROW,
            "quantizable": True,
            **routed,
        },
    ]
    if mlp.router_bias:
        tensors.append(
            {"name": "router.bias", "role": Role.BIAS, "rows": mlp.num_experts, "shard": Shard.REPLICATED, **vector}
        )
    if mlp.expert_bias:  # gpt-oss: per expert, gate/up biases (2 × width) and a down bias (hidden)
        tensors += [
            {
                "name": f"experts.{name}.bias",
                "role": Role.BIAS,
                "rows": mlp.intermediate_size,
                "shard": Shard.COLUMN,
                **vector,
                **routed,
            }
            for name in inputs
        ]
        tensors.append(
            {
                "name": "experts.down_proj.bias",
                "role": Role.BIAS,
                "rows": h,
                "shard": Shard.REPLICATED,
                **vector,
                **routed,
            }
        )
    if mlp.shared_experts:
        width = mlp.shared_experts * mlp.shared_intermediate_size
        tensors += [
            {
                "name": f"shared_expert.{name}",
                "role": Role.MLP,
                "rows": width,
                "cols": h,
                "shard": Shard.COLUMN,
                "quantizable": True,
            }
            for name in inputs
        ]
        tensors.append(
            {
                "name": "shared_expert.down_proj",
                "role": Role.MLP,
                "rows": h,
                "cols": width,
                "shard": Shard.ROW,
                "quantizable": True,
            }
        )
        if mlp.shared_expert_gate:
            tensors.append(
                {
                    "name": "shared_expert_gate",
                    "role": Role.ROUTER,
                    "rows": 1,
                    "cols": h,
                    "shard": Shard.REPLICATED,
                    "quantizable": False,
                }
            )
    return tensors


def layer_tensors(layer: LayerSpec, *, hidden_size: int, count: int) -> tuple[TensorSpec, ...]:
    """The tensors of `count` decoder layers of one kind."""
    dicts = [
        *_attention_tensors(layer.attention, hidden_size),
        *_mlp_tensors(layer.mlp, hidden_size),
        {
            "name": "layer_norms",
            "role": Role.NORM,
            "rows": hidden_size,
            "cols": layer.norms,
            "shard": Shard.REPLICATED,
            "quantizable": False,
        },
    ]
    return tuple(TensorSpec(per_model=count, per_layer=True, layer=layer, **spec) for spec in dicts)


@lru_cache(maxsize=1024)
def layer_counts(layers: tuple[LayerSpec, ...]) -> dict[LayerSpec, int]:
    """How many layers of each kind, in order of first appearance."""
    counts: dict[LayerSpec, int] = {}
    for layer in layers:
        counts[layer] = counts.get(layer, 0) + 1
    return counts


@lru_cache(maxsize=256)
def tensor_inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """List the weight tensors of the main model: embeddings, every layer kind, final norm, output head.

    Multi-token-prediction modules are not part of it (see `mtp_parameter_count`).
    """
    h = arch.hidden_size
    norm_vectors = 2 if arch.norm is NormKind.LAYER else 1  # LayerNorm: weight and bias
    tensors: list[TensorSpec] = [
        TensorSpec(
            name="embed_tokens",
            role=Role.EMBEDDING,
            rows=arch.vocab_size,
            cols=h,
            per_model=1,
            per_layer=False,
            shard=Shard.VOCAB,
            quantizable=False,
        ),
    ]
    for layer, count in layer_counts(arch.layers).items():
        tensors.extend(layer_tensors(layer, hidden_size=h, count=count))
    if arch.vision_parameters:
        # Counted as one replicated block in the checkpoint dtype: engines keep the encoder beside the text model.
        tensors.append(
            TensorSpec(
                name="vision_tower",
                role=Role.VISION,
                rows=arch.vision_parameters,
                cols=1,
                per_model=1,
                per_layer=False,
                shard=Shard.REPLICATED,
                quantizable=False,
            )
        )
    tensors.append(
        TensorSpec(
            name="final_norm",
            role=Role.NORM,
            rows=h,
            cols=norm_vectors,
            per_model=1,
            per_layer=False,
            shard=Shard.REPLICATED,
            quantizable=False,
        )
    )
    if not arch.tie_word_embeddings:
        tensors.append(
            TensorSpec(
                name="lm_head",
                role=Role.LM_HEAD,
                rows=arch.vocab_size,
                cols=h,
                per_model=1,
                per_layer=False,
                shard=Shard.VOCAB,
                quantizable=False,
            )
        )
    return tuple(tensors)


def parameter_count(tensors: tuple[TensorSpec, ...]) -> int:
    """Total parameters: every element of every tensor, counted once."""
    return sum(t.elements * t.per_model * t.copies for t in tensors)


def active_parameter_count(tensors: tuple[TensorSpec, ...], *, input_embedding: bool = True) -> int:
    """Parameters one token passes through: routed experts count only the experts it is sent to; a vision
    tower runs once per image, not per token, so it is left out.

    Publishers disagree on the input embedding table. Mistral (Mixtral "12.9B active") and Qwen ("3.3B
    activated" for Qwen3-30B-A3B) count it; DeepSeek ("37B activated", V2-Lite "2.4B"), Moonshot (Kimi K2
    "32B activated") and OpenAI (gpt-oss "5.13B active") leave it out, because a token reads one row of it
    (a lookup, not a matrix product). `input_embedding=False` gives that second figure; when the output head
    is tied to the embedding the table is multiplied for every token, so it stays in.

    >>> from sizing.estimator.architecture import architecture_from_config
    >>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    ...     "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 1000})
    >>> t = tensor_inventory(arch)
    >>> active_parameter_count(t) - active_parameter_count(t, input_embedding=False)
    64000
    """
    tied = not any(t.role is Role.LM_HEAD for t in tensors)
    return sum(
        t.elements * t.per_model * t.active_copies
        for t in tensors
        if t.role is not Role.VISION and (input_embedding or tied or t.role is not Role.EMBEDDING)
    )


@lru_cache(maxsize=256)
def mtp_parameter_count(arch: Architecture) -> int:
    """Parameters of DeepSeek's multi-token-prediction modules, as the checkpoint stores them.

    Each module: one decoder layer like the last, two input norms (enorm, hnorm), the projection
    eh_proj (2h -> h), its head norm, and its own copies of the embedding and output head.
    """
    if not arch.mtp_layers:
        return 0
    h = arch.hidden_size
    layer = parameter_count(layer_tensors(arch.layers[-1], hidden_size=h, count=1))
    extras = 2 * h + 2 * h * h + h + 2 * arch.vocab_size * h  # enorm, hnorm, eh_proj, norm, embed + head
    return arch.mtp_layers * (layer + extras)


def _parallel_error(field: str, message: str, **numbers: int) -> SizingError:
    """An INVALID_PARALLELISM error whose message is also attached to the form/API field it concerns."""
    return SizingError(
        code=SizingErrorCode.INVALID_PARALLELISM, message=message, extra={**numbers, "fields": {field: [message]}}
    )


def check_tensor_parallel(arch: Architecture, tp: int) -> None:
    """Raise unless `tp` splits the heads and KV heads the way vLLM and SGLang require."""
    if tp < 1:
        raise _parallel_error("tp", "tensor parallel size must be ≥ 1", tp=tp)
    heads, kv_heads = arch.num_attention_heads, arch.num_key_value_heads
    if heads % tp:
        raise _parallel_error(
            "tp",
            f"tensor parallel size {tp} does not divide the {heads} attention heads",
            tp=tp,
            num_attention_heads=heads,
        )
    if kv_heads % tp and tp % kv_heads:
        raise _parallel_error(
            "tp",
            f"tensor parallel size {tp} neither divides nor is a multiple of the {kv_heads} KV heads: "
            "the KV heads cannot be split or replicated evenly",
            tp=tp,
            num_key_value_heads=kv_heads,
        )
    widths: dict[str, int] = {}
    for layer in layer_counts(arch.layers):
        mlp = layer.mlp
        if mlp.kind is MlpKind.DENSE:
            widths["intermediate_size"] = mlp.intermediate_size
        else:
            widths["moe_intermediate_size"] = mlp.intermediate_size
            if mlp.shared_experts:
                widths["shared expert width"] = mlp.shared_experts * mlp.shared_intermediate_size
    for name, size in widths.items():
        if size % tp:
            raise _parallel_error(
                "tp",
                f"tensor parallel size {tp} does not divide {name} {size}",
                tp=tp,
                **{name.replace(" ", "_"): size},
            )


def pipeline_stage_layers(num_layers: int, pp: int) -> tuple[int, ...]:
    """Layers per pipeline stage as vLLM splits them: even shares, the remainder to the stages before the last."""
    if pp < 1 or pp > num_layers:
        raise _parallel_error(
            "pp",
            f"pipeline parallel size {pp} must be between 1 and the {num_layers} layers",
            pp=pp,
            num_hidden_layers=num_layers,
        )
    stages = [num_layers // pp] * pp
    for k in range(num_layers % pp):
        stages[-(k + 2) if pp > 1 else 0] += 1
    return tuple(stages)

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

from sizing.estimator.architecture import Architecture, NormKind
from sizing.estimator.errors import SizingError, SizingErrorCode

VOCAB_PADDING = 64  # vLLM pads the vocabulary to a multiple of 64 before splitting it over TP ranks


class Role(Enum):
    EMBEDDING = "embedding"
    LM_HEAD = "lm_head"
    ATTENTION = "attention"
    MLP = "mlp"
    NORM = "norm"
    BIAS = "bias"


class Shard(Enum):
    """How tensor parallelism splits a tensor (Megatron/vLLM layout)."""

    COLUMN = "column"  # output features split t ways
    KV_HEADS = "kv_heads"  # output features are KV heads: split, or replicated when heads < t
    ROW = "row"  # input features split t ways
    VOCAB = "vocab"  # vocabulary rows split t ways after padding
    REPLICATED = "replicated"  # every rank holds all of it


@dataclass(frozen=True, kw_only=True)
class TensorSpec:
    """One weight tensor, repeated `per_model` times (e.g. once per layer)."""

    name: str
    role: Role
    rows: int  # output features (vocabulary for embeddings); the length for vectors
    cols: int  # input features; 1 for vectors (norm weights, biases)
    per_model: int  # copies in the whole model (the layer count for per-layer tensors)
    per_layer: bool  # lives in each decoder layer (split by pipeline stages)
    shard: Shard
    quantizable: bool  # linear weights a quantisation recipe converts; embeddings, head and norms stay 16-bit

    @property
    def elements(self) -> int:
        return self.rows * self.cols

    def rank_shape(self, *, tp: int, kv_heads: int, head_dim: int) -> tuple[int, int]:
        """Rows and columns of this tensor on one TP rank."""
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


def tensor_inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """List the weight tensors of a dense decoder (embeddings, L layers, final norm, output head)."""
    h, n_layers, d = arch.hidden_size, arch.num_hidden_layers, arch.head_dim
    q_out = arch.num_attention_heads * d
    kv_out = arch.num_key_value_heads * d
    i = arch.intermediate_size
    layer = {"per_model": n_layers, "per_layer": True}
    tensors: list[TensorSpec] = [
        TensorSpec(name="embed_tokens", role=Role.EMBEDDING, rows=arch.vocab_size, cols=h, per_model=1,
                   per_layer=False, shard=Shard.VOCAB, quantizable=False),
        TensorSpec(name="q_proj", role=Role.ATTENTION, rows=q_out, cols=h, shard=Shard.COLUMN,
                   quantizable=True, **layer),
        TensorSpec(name="k_proj", role=Role.ATTENTION, rows=kv_out, cols=h, shard=Shard.KV_HEADS,
                   quantizable=True, **layer),
        TensorSpec(name="v_proj", role=Role.ATTENTION, rows=kv_out, cols=h, shard=Shard.KV_HEADS,
                   quantizable=True, **layer),
        TensorSpec(name="o_proj", role=Role.ATTENTION, rows=h, cols=q_out, shard=Shard.ROW,
                   quantizable=True, **layer),
    ]
    if arch.qkv_bias:
        tensors += [
            TensorSpec(name="q_proj.bias", role=Role.BIAS, rows=q_out, cols=1, shard=Shard.COLUMN,
                       quantizable=False, **layer),
            TensorSpec(name="k_proj.bias", role=Role.BIAS, rows=kv_out, cols=1, shard=Shard.KV_HEADS,
                       quantizable=False, **layer),
            TensorSpec(name="v_proj.bias", role=Role.BIAS, rows=kv_out, cols=1, shard=Shard.KV_HEADS,
                       quantizable=False, **layer),
        ]
    if arch.o_bias:
        tensors.append(TensorSpec(name="o_proj.bias", role=Role.BIAS, rows=h, cols=1, shard=Shard.REPLICATED,
                                  quantizable=False, **layer))
    if arch.qk_norm:
        tensors += [
            TensorSpec(name="q_norm", role=Role.NORM, rows=d, cols=1, shard=Shard.REPLICATED,
                       quantizable=False, **layer),
            TensorSpec(name="k_norm", role=Role.NORM, rows=d, cols=1, shard=Shard.REPLICATED,
                       quantizable=False, **layer),
        ]
    mlp_in = ("gate_proj", "up_proj") if arch.gated_mlp else ("up_proj",)
    for name in mlp_in:
        tensors.append(TensorSpec(name=name, role=Role.MLP, rows=i, cols=h, shard=Shard.COLUMN,
                                  quantizable=True, **layer))
    tensors.append(TensorSpec(name="down_proj", role=Role.MLP, rows=h, cols=i, shard=Shard.ROW,
                              quantizable=True, **layer))
    if arch.mlp_bias:
        for name in mlp_in:
            tensors.append(TensorSpec(name=f"{name}.bias", role=Role.BIAS, rows=i, cols=1, shard=Shard.COLUMN,
                                      quantizable=False, **layer))
        tensors.append(TensorSpec(name="down_proj.bias", role=Role.BIAS, rows=h, cols=1,
                                  shard=Shard.REPLICATED, quantizable=False, **layer))
    norm_vectors = 2 if arch.norm is NormKind.LAYER else 1  # LayerNorm: weight and bias
    tensors.append(TensorSpec(name="layer_norms", role=Role.NORM, rows=h, cols=2 * norm_vectors,
                              shard=Shard.REPLICATED, quantizable=False, **layer))  # input + post-attention
    tensors.append(TensorSpec(name="final_norm", role=Role.NORM, rows=h, cols=norm_vectors, per_model=1,
                              per_layer=False, shard=Shard.REPLICATED, quantizable=False))
    if not arch.tie_word_embeddings:
        tensors.append(TensorSpec(name="lm_head", role=Role.LM_HEAD, rows=arch.vocab_size, cols=h, per_model=1,
                                  per_layer=False, shard=Shard.VOCAB, quantizable=False))
    return tuple(tensors)


def parameter_count(tensors: tuple[TensorSpec, ...]) -> int:
    """Total parameters: every element of every tensor, counted once."""
    return sum(t.elements * t.per_model for t in tensors)


def _parallel_error(field: str, message: str, **numbers: int) -> SizingError:
    """An INVALID_PARALLELISM error whose message is also attached to the form/API field it concerns."""
    return SizingError(code=SizingErrorCode.INVALID_PARALLELISM, message=message,
                       extra={**numbers, "fields": {field: [message]}})


def check_tensor_parallel(arch: Architecture, tp: int) -> None:
    """Raise unless `tp` splits the heads and KV heads the way vLLM and SGLang require."""
    if tp < 1:
        raise _parallel_error("tp", "tensor parallel size must be ≥ 1", tp=tp)
    heads, kv_heads = arch.num_attention_heads, arch.num_key_value_heads
    if heads % tp:
        raise _parallel_error("tp", f"tensor parallel size {tp} does not divide the {heads} attention heads",
                              tp=tp, num_attention_heads=heads)
    if kv_heads % tp and tp % kv_heads:
        raise _parallel_error(
            "tp",
            f"tensor parallel size {tp} neither divides nor is a multiple of the {kv_heads} KV heads: "
            "the KV heads cannot be split or replicated evenly",
            tp=tp, num_key_value_heads=kv_heads,
        )
    for name, size in (("intermediate_size", arch.intermediate_size),):
        if size % tp:
            raise _parallel_error("tp", f"tensor parallel size {tp} does not divide {name} {size}",
                                  tp=tp, **{name: size})


def pipeline_stage_layers(num_layers: int, pp: int) -> tuple[int, ...]:
    """Layers per pipeline stage as vLLM splits them: even shares, the remainder to the stages before the last."""
    if pp < 1 or pp > num_layers:
        raise _parallel_error("pp", f"pipeline parallel size {pp} must be between 1 and the {num_layers} layers",
                              pp=pp, num_hidden_layers=num_layers)
    stages = [num_layers // pp] * pp
    for k in range(num_layers % pp):
        stages[-(k + 2) if pp > 1 else 0] += 1
    return tuple(stages)

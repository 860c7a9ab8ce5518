"""Weight bytes of a model in a format: for the whole checkpoint and for each GPU of a parallel layout.

>>> from sizing.estimator.architecture import architecture_from_config
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16"})
>>> fmt = resolve_weight_format(arch, "auto")
>>> weight_bytes_total(arch, fmt)  # Llama-3-8B: 8,030,261,248 parameters x 2 bytes
16060522496
"""

from __future__ import annotations

import math

from sizing.estimator.architecture import Architecture
from sizing.estimator.formats import (
    FORMATS,
    PLAIN_FORMATS,
    WeightFormat,
    format_from_quantization_config,
    weight_format,
)
from sizing.estimator.tensors import Role, TensorSpec, layer_counts, pipeline_stage_layers, tensor_inventory


def resolve_weight_format(arch: Architecture, slug: str) -> WeightFormat:
    """`auto` follows the config's quantization_config, else its torch_dtype; any other slug is explicit."""
    if slug == "auto":
        if arch.quantization_config:
            return format_from_quantization_config(arch.quantization_config)
        return PLAIN_FORMATS[arch.dtype.slug]
    return weight_format(slug)


def _tensor_bytes(tensor: TensorSpec, fmt: WeightFormat, arch: Architecture, rows: int, cols: int) -> int:
    """Bytes of one copy of `tensor` with the given shape."""
    if fmt.dense_dtype is not None:
        return math.ceil(rows * cols * fmt.dense_dtype.bits / 8)
    if tensor.quantizable:
        return fmt.tensor_bytes(rows=rows, cols=cols)
    return math.ceil(rows * cols * arch.dtype.bits / 8)  # kept in the checkpoint's 16-bit dtype


def weight_bytes_total(arch: Architecture, fmt: WeightFormat) -> int:
    """Bytes of all weights of the model in `fmt` (what a checkpoint in that format holds)."""
    if arch.parameters_override is not None:
        bits = fmt.dense_dtype.bits if fmt.dense_dtype else fmt.bits
        return math.ceil(arch.parameters_override * bits / 8)
    return sum(
        _tensor_bytes(t, fmt, arch, t.rows, t.cols) * t.per_model * t.copies for t in tensor_inventory(arch)
    )


def weight_bytes_per_rank(arch: Architecture, fmt: WeightFormat, *, tp: int, pp: int) -> tuple[int, ...]:
    """Bytes one TP rank holds in each pipeline stage (one entry per stage).

    Attention and MLP matrices split `tp` ways (KV heads replicated when fewer than `tp`), the vocabulary
    padded to 64 and split, norms replicated. Stage 0 holds the embeddings, the last stage the final norm
    and the output head (tied embeddings: a copy on the last stage when pp > 1).
    """
    stages = pipeline_stage_layers(arch.num_hidden_layers, pp)
    if arch.parameters_override is not None:
        # Described by numbers: no tensor list, split evenly (approximate by construction).
        total = weight_bytes_total(arch, fmt)
        return tuple(math.ceil(total * layers / arch.num_hidden_layers / tp) for layers in stages)
    per_stage = [0] * pp
    bounds = [sum(stages[:k]) for k in range(pp + 1)]
    stage_counts = [layer_counts(arch.layers[bounds[k]:bounds[k + 1]]) for k in range(pp)]
    for tensor in tensor_inventory(arch):
        attention = tensor.layer.attention if tensor.layer is not None else None
        rows, cols = tensor.rank_shape(
            tp=tp,
            kv_heads=attention.num_kv_heads if attention else arch.num_key_value_heads,
            head_dim=attention.head_dim if attention else arch.head_dim,
        )
        one = _tensor_bytes(tensor, fmt, arch, rows, cols) * tensor.copies
        if tensor.per_layer:
            for stage in range(pp):
                per_stage[stage] += one * stage_counts[stage].get(tensor.layer, 0)
        elif tensor.role is Role.VISION:
            per_stage[0] += one  # the encoder feeds the first stage
        elif tensor.role is Role.EMBEDDING:
            per_stage[0] += one
            if arch.tie_word_embeddings and pp > 1:
                per_stage[-1] += one  # the tied head needs the matrix on the last stage too
        else:
            per_stage[-1] += one
    return tuple(per_stage)


__all__ = ["FORMATS", "resolve_weight_format", "weight_bytes_per_rank", "weight_bytes_total"]

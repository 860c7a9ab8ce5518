"""Weight bytes of a model in a format: for the whole checkpoint and for each GPU of a parallel layout.

Every tensor of the inventory is visited once per decoder layer it occurs in, so a recipe can treat layers apart
(an `ignore` entry naming `model.layers.0.mlp.down_proj`, llama.cpp's Q6_K layers in a Q4_K_M file). Under tensor
parallelism a quantised tensor's metadata splits with it: groups, blocks and super-blocks are counted from the
rank's own rows and columns, and the per-tensor scalars (global scales, weight_shape) are held by every rank.

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
from collections.abc import Iterator
from functools import lru_cache

from sizing.estimator.architecture import Architecture
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.formats import (
    FORMATS,
    PLAIN_FORMATS,
    ModelFacts,
    WeightFormat,
    format_from_quantization_config,
    model_facts,
    weight_format,
)
from sizing.estimator.tensors import Role, TensorSpec, pipeline_stage_layers, tensor_inventory


def resolve_weight_format(arch: Architecture, slug: str) -> WeightFormat:
    """`auto` follows the config's quantization_config, else its torch_dtype; any other slug is explicit.

    An explicit experts-only format (MXFP4) on a model without routed experts is refused: it would convert nothing.
    """
    if slug == "auto":
        if arch.quantization_config:
            return format_from_quantization_config(arch.quantization_config)
        return PLAIN_FORMATS[arch.dtype.slug]
    fmt = weight_format(slug)
    if fmt.targets == frozenset({Role.EXPERT}) and not arch.is_moe:
        message = (
            f"{slug} converts only routed experts (as gpt-oss and vLLM's MXFP4 path do) and "
            f"{arch.model_type} has none; choose nvfp4, int4 or fp8 for a dense model"
        )
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"weights": [message]}}
        )
    return fmt


class _CopyBytes:
    """Bytes of one copy of a tensor with a given shape in a given layer, memoised for one pass over a model.

    Formats whose recipe does not depend on the layer are computed once per tensor, not once per layer.
    """

    def __init__(self, arch: Architecture, fmt: WeightFormat) -> None:
        self.arch = arch
        self.fmt = fmt
        self.model: ModelFacts = model_facts(arch)
        self.per_layer = fmt.layer_dependent
        self.memo: dict[tuple[int, int | None, int, int], int] = {}

    def __call__(self, tensor: TensorSpec, rows: int, cols: int, *, layer_index: int | None) -> int:
        key = (id(tensor), layer_index if self.per_layer or layer_index is None else -1, rows, cols)
        found = self.memo.get(key)
        if found is None:
            encoding = self.fmt.encoding_for(tensor, layer_index=layer_index, model=self.model)
            if encoding is None:
                found = math.ceil(rows * cols * self.arch.dtype.bits / 8)  # kept in the checkpoint's dtype
            else:
                found = encoding.tensor_bytes(rows=rows, cols=cols)
            self.memo[key] = found
        return found


def _placements(arch: Architecture) -> Iterator[tuple[TensorSpec, int | None]]:
    """Each tensor with the index of every decoder layer it is in; model-level tensors once, with None."""
    inventory = tensor_inventory(arch)
    by_layer: dict[object, list[TensorSpec]] = {}
    for tensor in inventory:
        if tensor.per_layer:
            by_layer.setdefault(tensor.layer, []).append(tensor)
        else:
            yield tensor, None
    for index, layer in enumerate(arch.layers):
        for tensor in by_layer.get(layer, ()):
            yield tensor, index


def weight_bytes_total(arch: Architecture, fmt: WeightFormat) -> int:
    """Bytes of all weights of the model in `fmt` (what a checkpoint in that format holds).

    A model described by its parameter count has no tensor list: every parameter is taken at the format's
    nominal bits per weight, metadata included (`WeightFormat.bits_per_weight`; approximate by construction).
    """
    if arch.parameters_override is not None:
        bits = fmt.dense_dtype.bits if fmt.dense_dtype else fmt.bits_per_weight
        return math.ceil(arch.parameters_override * bits / 8)
    copy_bytes = _CopyBytes(arch, fmt)
    total = 0
    for tensor, index in _placements(arch):
        one = copy_bytes(tensor, tensor.rows, tensor.cols, layer_index=index)
        total += one * tensor.copies * (1 if index is not None else tensor.per_model)
    return total


def _rank_placements(
    arch: Architecture, fmt: WeightFormat, *, tp: int, ep: int
) -> Iterator[tuple[TensorSpec, int | None, int]]:
    """Each tensor placement with the bytes one TP rank holds of it (all its copies in that layer).

    With expert parallelism (`ep` > 1) a rank holds ceil(E / ep) whole routed experts instead of a 1/tp slice
    of every expert.
    """
    copy_bytes = _CopyBytes(arch, fmt)
    for tensor, index in _placements(arch):
        attention = tensor.layer.attention if tensor.layer is not None else None
        rows, cols = tensor.rank_shape(
            tp=tp,
            kv_heads=attention.num_kv_heads if attention else arch.num_key_value_heads,
            head_dim=attention.head_dim if attention else arch.head_dim,
        )
        copies = tensor.copies
        if ep > 1 and tensor.copies > 1:  # routed experts: whole experts spread over the EP ranks
            rows, cols = tensor.rows, tensor.cols
            copies = math.ceil(tensor.copies / ep)
        yield tensor, index, copy_bytes(tensor, rows, cols, layer_index=index) * copies


def weight_bytes_per_rank(arch: Architecture, fmt: WeightFormat, *, tp: int, pp: int, ep: int = 1) -> tuple[int, ...]:
    """Bytes one TP rank holds in each pipeline stage (one entry per stage).

    With expert parallelism (`ep` > 1, vLLM's --enable-expert-parallel over TP x DP ranks) each rank holds
    ceil(E / ep) whole routed experts instead of a 1/tp slice of every expert.

    Attention and MLP matrices split `tp` ways (KV heads replicated when fewer than `tp`), the vocabulary
    padded to 64 and split, norms replicated. Stage 0 holds the embeddings, the last stage the final norm
    and the output head (tied embeddings: a copy on the last stage when pp > 1). A quantised tensor's scales,
    zero points and blocks are counted from the rank's shape.
    """
    stages = pipeline_stage_layers(arch.num_hidden_layers, pp)
    if arch.parameters_override is not None:
        # Described by numbers: no tensor list, split evenly (approximate by construction).
        total = weight_bytes_total(arch, fmt)
        return tuple(math.ceil(total * layers / arch.num_hidden_layers / tp) for layers in stages)
    stage_of_layer = [stage for stage, layers in enumerate(stages) for _ in range(layers)]
    per_stage = [0] * pp
    for tensor, index, one in _rank_placements(arch, fmt, tp=tp, ep=ep):
        if index is not None:
            per_stage[stage_of_layer[index]] += one
        elif tensor.role is Role.VISION:
            per_stage[0] += one  # the encoder feeds the first stage
        elif tensor.role is Role.EMBEDDING:
            per_stage[0] += one
            if arch.tie_word_embeddings and pp > 1:
                per_stage[-1] += one  # the tied head needs the matrix on the last stage too
        else:
            per_stage[-1] += one
    return tuple(per_stage)


@lru_cache(maxsize=1024)
def weight_bytes_per_rank_by_role(arch: Architecture, fmt: WeightFormat, *, tp: int, ep: int = 1) -> dict[Role, int]:
    """Bytes one TP rank holds for each tensor role, over all pipeline stages (what a step reads as it passes
    through them): the performance model reads the input table as a lookup and routed experts only when routed.

    A model described by its parameter count has no roles: everything is under Role.MLP.
    """
    if arch.parameters_override is not None:
        return {Role.MLP: math.ceil(weight_bytes_total(arch, fmt) / tp)}
    by_role: dict[Role, int] = {}
    for tensor, index, one in _rank_placements(arch, fmt, tp=tp, ep=ep):
        by_role[tensor.role] = by_role.get(tensor.role, 0) + one * (1 if index is not None else tensor.per_model)
    return by_role


__all__ = [
    "FORMATS",
    "resolve_weight_format",
    "weight_bytes_per_rank",
    "weight_bytes_per_rank_by_role",
    "weight_bytes_total",
]

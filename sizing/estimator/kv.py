"""KV-cache bytes per token (DESIGN §5): full attention with GQA/MQA, per layer and per TP rank.

>>> kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16)  # 128 KiB
131072
>>> kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16, tp=16)  # 1 head per rank
16384
"""

from __future__ import annotations

import math

from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType, dtype_from_name
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.layers import LayerSpec

K_AND_V = 2  # one key and one value vector per head


def kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """KV heads each TP rank stores: split when kv_heads ≥ tp, else each rank keeps one (replicated)."""
    return max(1, kv_heads // tp)


def kv_bytes_per_token(*, num_layers: int, kv_heads: int, head_dim: int, kv_bits: int, tp: int = 1) -> int:
    """Bytes of K and V for one token over `num_layers` layers on one TP rank."""
    return math.ceil(K_AND_V * num_layers * kv_heads_per_rank(kv_heads, tp) * head_dim * kv_bits / 8)


def resolve_kv_dtype(arch: Architecture, name: str) -> DType:
    """`auto` stores the KV cache in the model's activation dtype (16-bit for quantised checkpoints)."""
    if name == "auto":
        return arch.dtype
    dtype = dtype_from_name(name)
    if dtype is None or dtype is DType.INT4:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=f"unknown KV-cache dtype {name!r}; choose auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2 or fp32",
            extra={"fields": {"kv_dtype": [f"unknown KV-cache dtype {name!r}"]}},
        )
    return dtype


def paged_tokens(tokens: int, block_size: int) -> int:
    """Tokens a paged engine reserves for a sequence of `tokens`: whole blocks of `block_size`."""
    return math.ceil(tokens / block_size) * block_size


def layers_kv_bytes_per_token(layers: tuple[LayerSpec, ...], *, kv_bits: int, tp: int = 1) -> int:
    """Bytes of KV cache one token takes over `layers` on one TP rank (MLA: the latent, unsplit)."""
    elements = sum(layer.attention.kv_elements_per_token(tp=tp) for layer in layers)
    return math.ceil(elements * kv_bits / 8)

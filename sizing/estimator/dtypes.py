"""Numeric data types of weights, activations and the KV cache, with their sizes in bits."""

from __future__ import annotations

from enum import Enum


class DType(Enum):
    """A storage data type; `.bits` is its size. Never write a literal byte size for a dtype elsewhere."""

    FP32 = ("fp32", 32)
    FP16 = ("fp16", 16)
    BF16 = ("bf16", 16)
    FP8 = ("fp8", 8)  # E4M3 / E5M2
    INT8 = ("int8", 8)
    INT4 = ("int4", 4)

    def __init__(self, slug: str, bits: int) -> None:
        self.slug = slug
        self.bits = bits

    @property
    def bytes(self) -> float:
        return self.bits / 8


# Names found in config.json (`torch_dtype`, `dtype`) and on engine command lines.
_ALIASES: dict[str, DType] = {
    "float32": DType.FP32,
    "fp32": DType.FP32,
    "float": DType.FP32,
    "float16": DType.FP16,
    "fp16": DType.FP16,
    "half": DType.FP16,
    "bfloat16": DType.BF16,
    "bf16": DType.BF16,
    "fp8": DType.FP8,
    "fp8_e4m3": DType.FP8,
    "fp8_e5m2": DType.FP8,
    "float8_e4m3fn": DType.FP8,
    "int8": DType.INT8,
    "int4": DType.INT4,
}


def dtype_from_name(name: str) -> DType | None:
    """Return the DType for a name such as 'bfloat16' or 'fp8_e4m3', or None when unknown."""
    return _ALIASES.get(name.strip().lower())


KV_CACHE_DTYPES: tuple[str, ...] = ("auto", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp32")

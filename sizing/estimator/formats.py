"""Weight formats: bits per weight and the metadata each format stores (DESIGN §4).

A format applies to the quantizable linear weights; embeddings, the output head, norms and biases stay
in the checkpoint's 16-bit dtype (or the format's own `dense` dtype for plain FP32/FP16/BF16).

>>> fmt = weight_format("int4")
>>> fmt.tensor_bytes(rows=4096, cols=4096)  # 4-bit weights + per 128 inputs a 16-bit scale and a 4-bit zero
8716288
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sizing.estimator.dtypes import DType
from sizing.estimator.errors import SizingError, SizingErrorCode

FP32_BITS = DType.FP32.bits
FP16_BITS = DType.FP16.bits


class ScaleLayout(Enum):
    NONE = "none"
    PER_TENSOR = "per_tensor"  # one fp32 weight scale and one fp32 input scale per linear (FP8 per-tensor)
    PER_CHANNEL = "per_channel"  # one fp32 scale per output channel
    BLOCK = "block"  # one fp32 scale per block_rows x block_cols block (FP8 block-wise)
    GROUP = "group"  # per `group_size` input features of each output row: a scale and a zero-point


@dataclass(frozen=True, kw_only=True)
class WeightFormat:
    """How a quantizable linear weight is stored."""

    slug: str
    label: str
    bits: int
    scales: ScaleLayout = ScaleLayout.NONE
    group_size: int = 128
    block: tuple[int, int] = (128, 128)
    scale_bits: int = FP32_BITS
    zero_bits: int = 0
    act_order: bool = False  # GPTQ desc_act: an int32 group index per input feature
    input_scale: bool = True  # FP8 per-tensor with static activation scales stores one per linear
    dense_dtype: DType | None = None  # plain formats: the dtype of every tensor, not only the linears

    def tensor_bytes(self, *, rows: int, cols: int) -> int:
        """Bytes of one rows x cols linear weight in this format, metadata included."""
        weight_bits = rows * cols * self.bits
        meta_bits = 0
        if self.scales is ScaleLayout.PER_TENSOR:
            meta_bits = FP32_BITS * (2 if self.input_scale else 1)  # weight scale (+ static input scale)
        elif self.scales is ScaleLayout.PER_CHANNEL:
            meta_bits = rows * self.scale_bits
        elif self.scales is ScaleLayout.BLOCK:
            meta_bits = math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1]) * self.scale_bits
        elif self.scales is ScaleLayout.GROUP:
            groups = rows * math.ceil(cols / self.group_size)
            meta_bits = groups * (self.scale_bits + self.zero_bits)
            if self.act_order:
                meta_bits += cols * FP32_BITS  # g_idx: one int32 per input feature
        return math.ceil((weight_bits + meta_bits) / 8)


PLAIN_FORMATS: dict[str, WeightFormat] = {
    dtype.slug: WeightFormat(slug=dtype.slug, label=dtype.slug.upper(), bits=dtype.bits, dense_dtype=dtype)
    for dtype in (DType.FP32, DType.FP16, DType.BF16)
}

FORMATS: dict[str, WeightFormat] = {
    **PLAIN_FORMATS,
    "fp8": WeightFormat(slug="fp8", label="FP8 E4M3 (per-tensor scales)", bits=DType.FP8.bits,
                        scales=ScaleLayout.PER_TENSOR),
    "fp8-block": WeightFormat(slug="fp8-block", label="FP8 E4M3 (128x128 block scales)", bits=DType.FP8.bits,
                              scales=ScaleLayout.BLOCK),
    "int8": WeightFormat(slug="int8", label="INT8 (per-channel scales)", bits=DType.INT8.bits,
                         scales=ScaleLayout.PER_CHANNEL),
    "int4": WeightFormat(slug="int4", label="INT4 AWQ/GPTQ, group 128", bits=DType.INT4.bits,
                         scales=ScaleLayout.GROUP, scale_bits=FP16_BITS, zero_bits=DType.INT4.bits),
}

WEIGHT_FORMAT_CHOICES: tuple[str, ...] = ("auto", *FORMATS)


def weight_format(slug: str) -> WeightFormat:
    """Return a registered format by slug, or raise SizingError listing the choices."""
    try:
        return FORMATS[slug]
    except KeyError:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=f"unknown weight format {slug!r}; choose one of {', '.join(WEIGHT_FORMAT_CHOICES)}",
            extra={"fields": {"weights": [f"unknown weight format {slug!r}"]}},
        ) from None


def format_from_quantization_config(quant: Mapping[str, Any]) -> WeightFormat:
    """Read a config.json `quantization_config` (or a ModelOpt hf_quant_config) into a WeightFormat."""
    method = str(quant.get("quant_method") or quant.get("quant_algo") or "").lower()
    if method == "fp8":
        block = quant.get("weight_block_size")
        if block:
            return WeightFormat(slug="fp8-block", label=f"FP8 E4M3 ({block[0]}x{block[1]} block scales)",
                                bits=DType.FP8.bits, scales=ScaleLayout.BLOCK, block=(int(block[0]), int(block[1])))
        if str(quant.get("activation_scheme", "static")).lower() == "dynamic":
            return WeightFormat(slug="fp8", label="FP8 E4M3 (per-tensor scales, dynamic activations)",
                                bits=DType.FP8.bits, scales=ScaleLayout.PER_TENSOR, input_scale=False)
        return FORMATS["fp8"]
    if method == "modelopt" and str(quant.get("quant_algo", "")).upper() == "FP8":
        return FORMATS["fp8"]
    if method in ("awq", "gptq"):
        bits = int(quant.get("bits") or quant.get("w_bit") or 4)
        group = int(quant.get("group_size") or quant.get("q_group_size") or 128)
        act_order = method == "gptq" and bool(quant.get("desc_act"))
        if bits not in (4, 8) or group <= 0:
            raise SizingError(
                code=SizingErrorCode.UNSUPPORTED_QUANTIZATION,
                message=f"{method.upper()} with {bits} bits and group size {group} is not modelled",
                extra={"quant_method": method},
            )
        return WeightFormat(
            slug=f"{method}-int{bits}-g{group}" + ("-act-order" if act_order else ""),
            label=f"{method.upper()} INT{bits}, group {group}" + (", act-order" if act_order else ""),
            bits=bits, scales=ScaleLayout.GROUP, group_size=group, scale_bits=FP16_BITS, zero_bits=bits,
            act_order=act_order,
        )
    raise SizingError(
        code=SizingErrorCode.UNSUPPORTED_QUANTIZATION,
        message=(
            f"quantization_config quant_method {method or '(none)'!r} is not modelled yet; "
            f"choose a weight format explicitly ({', '.join(FORMATS)})"
        ),
        extra={"quant_method": method},
    )

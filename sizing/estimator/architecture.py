"""Read a Hugging Face config.json into an `Architecture`: the numbers that decide parameters and KV.

Families are a registry keyed by `model_type`. Dense decoder families are modelled; families whose
structure is not modelled yet (MoE, MLA, sliding-window patterns, state-space layers, vision towers)
are refused with a message that names what is missing, never sized with a silently wrong number.

>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16"})
>>> (arch.head_dim, arch.num_key_value_heads, arch.qkv_bias)
(128, 8, False)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from sizing.estimator.dtypes import DType, dtype_from_name
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.layers import AttentionKind, AttentionSpec, LayerSpec, MlpKind, MlpSpec


class NormKind(Enum):
    RMS = "rmsnorm"  # weight only
    LAYER = "layernorm"  # weight and bias


@dataclass(frozen=True, kw_only=True)
class Architecture:
    """A dense decoder-only transformer as the estimator sees it."""

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False  # Qwen3: a per-head RMSNorm on q and k (head_dim weights each)
    gated_mlp: bool = True  # SwiGLU: gate, up, down
    norm: NormKind = NormKind.RMS
    dtype: DType = DType.BF16
    max_position_embeddings: int | None = None
    quantization_config: Mapping[str, Any] | None = field(default=None, compare=False)
    approximate: bool = False  # described by numbers, not by a config
    parameters_override: int | None = None  # only for models described by their parameter count
    warnings: tuple[str, ...] = field(default=(), compare=False)
    layers: tuple[LayerSpec, ...] = ()  # the per-layer table; uniform from the fields above when not given
    mtp_layers: int = 0  # DeepSeek multi-token-prediction modules, reported apart from the main model
    vision_parameters: int = 0  # a vision tower (and its projector) loaded beside the text model
    vision_description: str = ""  # what the vision tower is, e.g. "ViT, 27 blocks of width 1152"

    def __post_init__(self) -> None:
        if not self.layers:
            attention = AttentionSpec(
                num_heads=self.num_attention_heads, num_kv_heads=self.num_key_value_heads, head_dim=self.head_dim,
                qkv_bias=self.qkv_bias, o_bias=self.o_bias, qk_norm=self.qk_norm,
            )
            mlp = MlpSpec(intermediate_size=self.intermediate_size, gated=self.gated_mlp, bias=self.mlp_bias)
            object.__setattr__(self, "layers", (LayerSpec(attention=attention, mlp=mlp),) * self.num_hidden_layers)

    @property
    def is_moe(self) -> bool:
        return any(layer.mlp.kind is MlpKind.MOE for layer in self.layers)

    @property
    def uses_mla(self) -> bool:
        return any(layer.attention.kind is AttentionKind.MLA for layer in self.layers)


_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")

# model_type -> why it is not modelled yet. The message is shown to users in place of a number.
UNSUPPORTED_FAMILIES: dict[str, str] = {
    "glm_moe_dsa": "mixture-of-experts layers and sparse (DSA) MLA attention are not modelled yet",
    "gpt_oss": "alternating sliding/full attention, attention sinks and MXFP4 mixture-of-experts layers are not "
    "modelled yet",
    "llama4": "mixture-of-experts layers, chunked attention and the vision tower are not modelled yet",
    "gemma2": "alternating sliding-window/global attention and Gemma's extra norms are not modelled yet",
    "gemma3": "the 5 local : 1 global sliding-window pattern and the vision tower are not modelled yet",
    "gemma3_text": "the 5 local : 1 global sliding-window attention pattern is not modelled yet",
    "gemma4": "mixture-of-experts layers, sliding-window patterns and the vision tower are not modelled yet",
    "qwen3_vl": "the vision tower and the nested text_config are not modelled yet",
    "qwen3_5": "hybrid linear-attention (Gated DeltaNet) layers with a constant per-sequence state and the vision "
    "tower are not modelled yet",
    "nemotron_h": "hybrid Mamba-2 state-space layers (constant per-sequence state) are not modelled yet",
    "chatglm": "ChatGLM key names (multi_query_group_num, ffn_hidden_size, padded_vocab_size) are not read yet",
    "glm4": "GLM-4 layers (extra post-attention and post-MLP norms) are not modelled yet",
}


def _int(config: Mapping[str, Any], key: str) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json field '{key}' must be a positive integer, got {value!r}",
            extra={"field": key},
        )
    return value


def _dtype(config: Mapping[str, Any]) -> tuple[DType, tuple[str, ...]]:
    name = config.get("torch_dtype") or config.get("dtype")
    if name is None:
        return DType.BF16, ("config.json has no torch_dtype; assuming bfloat16 weights",)
    dtype = dtype_from_name(str(name))
    if dtype is None or dtype not in (DType.FP32, DType.FP16, DType.BF16):
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json torch_dtype {name!r} is not one of float32, float16, bfloat16",
            extra={"field": "torch_dtype"},
        )
    return dtype, ()


def _dense_decoder(config: Mapping[str, Any], **family: Any) -> Architecture:
    """Build the architecture of a Llama-like dense decoder; `family` sets what the family fixes."""
    missing = [key for key in _REQUIRED if config.get(key) is None]
    if missing:
        raise SizingError(
            code=SizingErrorCode.MISSING_FIELDS,
            message=f"config.json lacks {', '.join(missing)}: cannot count parameters without them",
            extra={"missing": missing},
        )
    hidden = _int(config, "hidden_size")
    heads = _int(config, "num_attention_heads")
    kv_heads = _int(config, "num_key_value_heads") if config.get("num_key_value_heads") is not None else heads
    head_dim = _int(config, "head_dim") if config.get("head_dim") is not None else hidden // heads
    if config.get("head_dim") is None and hidden % heads:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"hidden_size {hidden} is not divisible by num_attention_heads {heads} and no head_dim is given",
            extra={"field": "head_dim"},
        )
    if heads % kv_heads:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}",
            extra={"field": "num_key_value_heads"},
        )
    dtype, warnings = _dtype(config)
    warnings = list(warnings) + list(family.pop("warnings", ()))
    window_used = family.pop("sliding_window_used", True)
    window = config.get("sliding_window")
    if window and window_used:
        warnings.append(
            f"config.json sets a {window}-token sliding window; the KV cache is sized as full attention "
            "(an upper bound) until sliding-window layers are modelled"
        )
    quant = config.get("quantization_config")
    if quant is not None and not isinstance(quant, Mapping):
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message="config.json quantization_config must be an object",
            extra={"field": "quantization_config"},
        )
    max_pos = config.get("max_position_embeddings")
    return Architecture(
        model_type=str(config["model_type"]),
        hidden_size=hidden,
        num_hidden_layers=_int(config, "num_hidden_layers"),
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_int(config, "intermediate_size"),
        vocab_size=_int(config, "vocab_size"),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        dtype=dtype,
        max_position_embeddings=max_pos if isinstance(max_pos, int) and max_pos > 0 else None,
        quantization_config=quant,
        warnings=tuple(warnings),
        **family,
    )


def _llama(config: Mapping[str, Any]) -> Architecture:
    bias = bool(config.get("attention_bias", False))
    return _dense_decoder(config, qkv_bias=bias, o_bias=bias, mlp_bias=bool(config.get("mlp_bias", False)))


def _mistral(config: Mapping[str, Any]) -> Architecture:
    return _dense_decoder(config)


def _qwen2(config: Mapping[str, Any]) -> Architecture:
    # Qwen2/2.5 always carry q, k and v biases; `sliding_window` only applies with use_sliding_window.
    return _dense_decoder(config, qkv_bias=True, sliding_window_used=bool(config.get("use_sliding_window")))


def _qwen3(config: Mapping[str, Any]) -> Architecture:
    bias = bool(config.get("attention_bias", False))
    return _dense_decoder(
        config,
        qkv_bias=bias,
        o_bias=bias,
        qk_norm=True,
        sliding_window_used=bool(config.get("use_sliding_window")),
    )


def _phi3(config: Mapping[str, Any]) -> Architecture:
    # Phi-3 fuses qkv and gate/up into single matrices: the same element counts, no biases.
    return _dense_decoder(config)


def _internlm2(config: Mapping[str, Any]) -> Architecture:
    # InternLM2 names them wqkv, wo, w1/w3/w2; one `bias` flag covers attention.
    bias = bool(config.get("bias", False))
    return _dense_decoder(config, qkv_bias=bias, o_bias=bias)


def _baichuan(config: Mapping[str, Any]) -> Architecture:
    # Baichuan/Baichuan2: multi-head attention through one W_pack projection, no biases.
    return _dense_decoder(config)


def _opt_int(config: Mapping[str, Any], key: str, default: int = 0) -> int:
    """An optional non-negative integer field (0 or the default when absent or null)."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json field '{key}' must be a non-negative integer, got {value!r}",
            extra={"field": key},
        )
    return value


def _require(config: Mapping[str, Any], keys: tuple[str, ...], what: str) -> None:
    missing = [key for key in keys if config.get(key) is None]
    if missing:
        raise SizingError(
            code=SizingErrorCode.MISSING_FIELDS,
            message=f"config.json lacks {', '.join(missing)}: cannot size its {what} without them",
            extra={"missing": missing},
        )


def _with_layers(base: Architecture, layers: list[LayerSpec], **extra: Any) -> Architecture:
    return replace(base, layers=tuple(layers), **extra)


def _moe_layers(
    base: Architecture, *, is_moe: Callable[[int], bool], experts: int, per_token: int, expert_width: int,
    shared: int = 0, shared_width: int = 0, shared_gate: bool = False, router_bias: bool = False,
    attention: AttentionSpec | None = None,
) -> list[LayerSpec]:
    """Layers whose MLP is a routed mixture of experts where `is_moe(index)`, else the dense MLP."""
    dense = base.layers[0]
    attention = attention or dense.attention
    moe = MlpSpec(kind=MlpKind.MOE, intermediate_size=expert_width, num_experts=experts,
                  experts_per_token=per_token, shared_experts=shared, shared_intermediate_size=shared_width,
                  shared_expert_gate=shared_gate, router_bias=router_bias)
    return [
        LayerSpec(attention=attention, mlp=moe if is_moe(index) else dense.mlp)
        for index in range(base.num_hidden_layers)
    ]


def _mixtral(config: Mapping[str, Any]) -> Architecture:
    # Every layer: num_local_experts SwiGLU experts of intermediate_size, a router h -> E, no shared expert.
    _require(config, ("num_local_experts", "num_experts_per_tok"), "mixture-of-experts layers")
    base = _dense_decoder(config)
    layers = _moe_layers(base, is_moe=lambda _: True, experts=_int(config, "num_local_experts"),
                         per_token=_int(config, "num_experts_per_tok"), expert_width=base.intermediate_size)
    return _with_layers(base, layers)


def _qwen_moe(config: Mapping[str, Any], *, qwen3: bool) -> Architecture:
    # Qwen2/3-MoE: layer i is sparse unless listed in mlp_only_layers, every decoder_sparse_step-th layer.
    _require(config, ("num_experts", "num_experts_per_tok", "moe_intermediate_size"), "mixture-of-experts layers")
    base = _qwen3(config) if qwen3 else _qwen2(config)
    dense_only = set(config.get("mlp_only_layers") or [])
    step = _opt_int(config, "decoder_sparse_step", 1) or 1
    shared_width = _opt_int(config, "shared_expert_intermediate_size")
    layers = _moe_layers(
        base,
        is_moe=lambda i: i not in dense_only and (i + 1) % step == 0,
        experts=_int(config, "num_experts"),
        per_token=_int(config, "num_experts_per_tok"),
        expert_width=_int(config, "moe_intermediate_size"),
        shared=1 if shared_width else 0,
        shared_width=shared_width,
        shared_gate=bool(shared_width),  # Qwen2-MoE gates its shared expert with a h -> 1 sigmoid
    )
    return _with_layers(base, layers)


def _deepseek(config: Mapping[str, Any]) -> Architecture:
    # DeepSeek-V2/V3 (and Kimi-K2): MLA attention in every layer; dense MLP in the first
    # first_k_dense_replace layers, then routed + shared experts every moe_layer_freq-th layer.
    _require(config, ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"), "MLA attention")
    base = _dense_decoder(config)
    heads = base.num_attention_heads
    nope, rope = _int(config, "qk_nope_head_dim"), _int(config, "qk_rope_head_dim")
    attention = AttentionSpec(
        kind=AttentionKind.MLA, num_heads=heads, num_kv_heads=heads, head_dim=nope + rope,
        v_head_dim=_int(config, "v_head_dim"), q_lora_rank=_opt_int(config, "q_lora_rank") or None,
        kv_lora_rank=_int(config, "kv_lora_rank"), qk_nope_head_dim=nope, qk_rope_head_dim=rope,
    )
    experts = _opt_int(config, "n_routed_experts")
    first_dense = _opt_int(config, "first_k_dense_replace")
    freq = _opt_int(config, "moe_layer_freq", 1) or 1
    if experts:
        _require(config, ("num_experts_per_tok", "moe_intermediate_size"), "mixture-of-experts layers")
        layers = _moe_layers(
            base,
            is_moe=lambda i: i >= first_dense and i % freq == 0,
            experts=experts,
            per_token=_int(config, "num_experts_per_tok"),
            expert_width=_int(config, "moe_intermediate_size"),
            shared=_opt_int(config, "n_shared_experts"),
            shared_width=_int(config, "moe_intermediate_size"),
            router_bias=config.get("topk_method") == "noaux_tc",  # e_score_correction_bias, one per expert
            attention=attention,
        )
    else:
        layers = [LayerSpec(attention=attention, mlp=base.layers[0].mlp)] * base.num_hidden_layers
    return _with_layers(base, layers, mtp_layers=_opt_int(config, "num_nextn_predict_layers"))


FAMILIES: dict[str, Callable[[Mapping[str, Any]], Architecture]] = {
    "mixtral": _mixtral,
    "qwen2_moe": lambda config: _qwen_moe(config, qwen3=False),
    "qwen3_moe": lambda config: _qwen_moe(config, qwen3=True),
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "kimi_k2": _deepseek,
    "llama": _llama,
    "mistral": _mistral,
    "qwen2": _qwen2,
    "qwen3": _qwen3,
    "phi3": _phi3,
    "internlm2": _internlm2,
    "baichuan": _baichuan,
}


def architecture_from_config(config: Mapping[str, Any]) -> Architecture:
    """Parse a config.json mapping; raise SizingError naming what is unsupported or missing."""
    if not isinstance(config, Mapping):
        raise SizingError(code=SizingErrorCode.INVALID_CONFIG, message="config.json must be a JSON object")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise SizingError(
            code=SizingErrorCode.MISSING_FIELDS,
            message="config.json has no model_type: cannot tell which architecture it describes",
            extra={"missing": ["model_type"]},
        )
    if model_type in UNSUPPORTED_FAMILIES:
        raise SizingError(
            code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
            message=f"{model_type}: {UNSUPPORTED_FAMILIES[model_type]}",
            extra={"model_type": model_type},
        )
    parser = FAMILIES.get(model_type)
    if parser is not None:
        return parser(config)
    # An unknown family with the standard fields is sized as a Llama-like dense decoder, with a warning.
    missing = [key for key in _REQUIRED if config.get(key) is None]
    if missing:
        raise SizingError(
            code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
            message=(
                f"unknown model_type {model_type!r} and config.json lacks {', '.join(missing)}: "
                "cannot size it as a dense decoder"
            ),
            extra={"model_type": model_type, "missing": missing},
        )
    return _dense_decoder(
        config,
        qkv_bias=bool(config.get("attention_bias", False)),
        o_bias=bool(config.get("attention_bias", False)),
        mlp_bias=bool(config.get("mlp_bias", False)),
        warnings=(
            f"unknown model_type {model_type!r}: sized as a Llama-like dense decoder from its standard fields; "
            "check the parameter count against the checkpoint",
        ),
    )


def architecture_from_numbers(
    *,
    parameters: int,
    num_hidden_layers: int,
    num_key_value_heads: int,
    head_dim: int,
    vocab_size: int = 32000,
    hidden_size: int | None = None,
    dtype: DType = DType.BF16,
    max_position_embeddings: int | None = None,
) -> Architecture:
    """Describe a model by its headline numbers (a sales call about "a 70B model"); results are approximate."""
    hidden = hidden_size or num_key_value_heads * head_dim
    return Architecture(
        model_type="described",
        hidden_size=hidden,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=max(num_key_value_heads, hidden // head_dim),
        num_key_value_heads=num_key_value_heads,
        head_dim=head_dim,
        intermediate_size=hidden,
        vocab_size=vocab_size,
        dtype=dtype,
        max_position_embeddings=max_position_embeddings,
        approximate=True,
        parameters_override=parameters,
        warnings=("model described by its numbers, not by a config.json: every figure is approximate",),
    )


def architecture_summary(arch: Architecture) -> dict[str, Any]:
    """A JSON-ready dict of the parsed architecture (enums as their values)."""
    return {
        "model_type": arch.model_type,
        "hidden_size": arch.hidden_size,
        "num_hidden_layers": arch.num_hidden_layers,
        "num_attention_heads": arch.num_attention_heads,
        "num_key_value_heads": arch.num_key_value_heads,
        "head_dim": arch.head_dim,
        "intermediate_size": arch.intermediate_size,
        "vocab_size": arch.vocab_size,
        "tie_word_embeddings": arch.tie_word_embeddings,
        "qkv_bias": arch.qkv_bias,
        "o_bias": arch.o_bias,
        "mlp_bias": arch.mlp_bias,
        "qk_norm": arch.qk_norm,
        "norm": arch.norm.value,
        "dtype": arch.dtype.slug,
        "max_position_embeddings": arch.max_position_embeddings,
        "quantization_config": dict(arch.quantization_config) if arch.quantization_config else None,
        "warnings": list(arch.warnings),
    }


def merge_quant_config(config: Mapping[str, Any], quant_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fold a ModelOpt `hf_quant_config.json` into config.json's `quantization_config` when it has none."""
    merged = dict(config)
    if quant_config and not merged.get("quantization_config"):
        quantization = quant_config.get("quantization", quant_config)
        if isinstance(quantization, Mapping):
            merged["quantization_config"] = {"quant_method": "modelopt", **quantization}
    return merged

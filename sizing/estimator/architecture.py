"""Read a Hugging Face config.json into an `Architecture`: the numbers that decide parameters and KV.

Families are a registry keyed by `model_type`; each parser fills the per-layer table (`layers.py`) from the
config's own fields (`layer_types`, `sliding_window`, `sliding_window_pattern`, `moe_layers`, `no_rope_layers`,
`num_experts_per_tok`, ...), reads a nested `text_config` when the text backbone sits in one, and counts a
`vision_config` tower exactly when its structure is known. Families whose structure is not modelled
(state-space and linear-attention layers, sparse-attention indexers, Gemma-4) are refused with a message
that names what is missing, never sized with a silently wrong number.

>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16"})
>>> (arch.head_dim, arch.num_key_value_heads, arch.qkv_bias)
(128, 8, False)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
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
    rope_cache_elements: int | None = None  # rotary cos/sin tables engines precompute (rows x rotary dim)
    vision_parameters: int = 0  # a vision tower (and its projector) loaded beside the text model
    vision_description: str = ""  # what the vision tower is, e.g. "ViT, 27 blocks of width 1152"

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __post_init__(self) -> None:
        if not self.layers:
            attention = AttentionSpec(
                num_heads=self.num_attention_heads,
                num_kv_heads=self.num_key_value_heads,
                head_dim=self.head_dim,
                qkv_bias=self.qkv_bias,
                o_bias=self.o_bias,
                qk_norm=self.qk_norm,
            )
            mlp = MlpSpec(intermediate_size=self.intermediate_size, gated=self.gated_mlp, bias=self.mlp_bias)
            object.__setattr__(self, "layers", (LayerSpec(attention=attention, mlp=mlp),) * self.num_hidden_layers)
        # Architectures key every estimator cache: hash once (the layer table has up to a few hundred entries).
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self) if f.compare)))

    @property
    def is_moe(self) -> bool:
        return any(layer.mlp.kind is MlpKind.MOE for layer in self.layers)

    @property
    def uses_mla(self) -> bool:
        return any(layer.attention.kind is AttentionKind.MLA for layer in self.layers)


_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")

# model_type -> why it is not modelled yet. The message is shown to users in place of a number.
UNSUPPORTED_FAMILIES: dict[str, str] = {
    "glm_moe_dsa": "DeepSeek Sparse Attention is not modelled yet: each layer's lightning indexer (its own q/k "
    "projections and norms, index_n_heads × index_head_dim) picks index_topk tokens per query, and the KV cache "
    "holds the indexer's keys beside the MLA latent",
    "gemma4": "Gemma-4 layers are not modelled yet: global layers with their own head size (global_head_dim) and "
    "KV heads (num_global_key_value_heads) whose keys double as values (attention_k_eq_v), a dense MLP beside a "
    "routed mixture of experts in the same layer (a normalised, scaled router with per-expert scales and extra "
    "branch norms), per-layer input embeddings and the Gemma-4 vision encoder",
    "qwen3_5": "hybrid linear-attention (Gated DeltaNet) layers with a constant per-sequence state and the vision "
    "tower are not modelled yet",
    "nemotron_h": "hybrid Mamba-2 state-space layers (constant per-sequence state) are not modelled yet",
}


def _int(config: Mapping[str, Any], key: str) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json field '{key}' must be a positive integer, got {value!r}",
            extra={"field": key},
        )
    number: int = value
    return number


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


def _rope_cache_elements(config: Mapping[str, Any], *, head_dim: int) -> int | None:
    """Elements of the rotary cos/sin tables vLLM and SGLang precompute: rows x rotary dim per table.

    Rows: max_position_embeddings, times the factor for linear and dynamic scaling; YaRN builds
    original_max_position_embeddings x factor; LongRoPE keeps a short and a long table. The rotary dim is
    head_dim x partial_rotary_factor (ChatGLM: rope_ratio's half). Gemma 3 keeps a local table beside the
    global one (rope_local_base_freq).
    """
    max_pos = config.get("max_position_embeddings")
    if not isinstance(max_pos, int) or max_pos <= 0:
        return None
    factor_raw = config.get("partial_rotary_factor", 1.0)
    partial = float(factor_raw) if isinstance(factor_raw, int | float) and 0 < factor_raw <= 1 else 1.0
    rotary_dim = int(head_dim * partial)
    rope_scaling = config.get("rope_scaling")
    scaling: Mapping[str, Any] = rope_scaling if isinstance(rope_scaling, Mapping) else {}
    kind = str(scaling.get("rope_type") or scaling.get("type") or "default").lower()
    factor = scaling.get("factor")
    factor = float(factor) if isinstance(factor, int | float) and factor > 0 else 1.0
    original = scaling.get("original_max_position_embeddings")
    if kind in ("linear", "dynamic"):
        rows = int(max_pos * factor)
    elif kind == "yarn" and isinstance(original, int):
        rows = int(original * factor)
    elif kind in ("longrope", "su") and isinstance(original, int):
        rows = original + max_pos
    else:
        rows = max_pos
    tables = rows * rotary_dim
    if config.get("rope_local_base_freq") is not None or str(config.get("model_type", "")).startswith("gemma3"):
        tables += max_pos * rotary_dim  # Gemma 3's local layers: their own unscaled table
    return tables


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
    dtype, dtype_warnings = _dtype(config)
    warnings = list(dtype_warnings) + list(family.pop("warnings", ()))
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
    family.setdefault("rope_cache_elements", _rope_cache_elements(config, head_dim=head_dim))
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
    number: int = value
    return number


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
    base: Architecture,
    *,
    is_moe: Callable[[int], bool],
    experts: int,
    per_token: int,
    expert_width: int,
    shared: int = 0,
    shared_width: int = 0,
    shared_gate: bool = False,
    router_bias: bool = False,
    attention: AttentionSpec | None = None,
) -> list[LayerSpec]:
    """Layers whose MLP is a routed mixture of experts where `is_moe(index)`, else the dense MLP."""
    dense = base.layers[0]
    attention = attention or dense.attention
    moe = MlpSpec(
        kind=MlpKind.MOE,
        intermediate_size=expert_width,
        num_experts=experts,
        experts_per_token=per_token,
        shared_experts=shared,
        shared_intermediate_size=shared_width,
        shared_expert_gate=shared_gate,
        router_bias=router_bias,
    )
    return [
        LayerSpec(attention=attention, mlp=moe if is_moe(index) else dense.mlp)
        for index in range(base.num_hidden_layers)
    ]


def _mixtral(config: Mapping[str, Any]) -> Architecture:
    # Every layer: num_local_experts SwiGLU experts of intermediate_size, a router h -> E, no shared expert.
    _require(config, ("num_local_experts", "num_experts_per_tok"), "mixture-of-experts layers")
    base = _dense_decoder(config)
    layers = _moe_layers(
        base,
        is_moe=lambda _: True,
        experts=_int(config, "num_local_experts"),
        per_token=_int(config, "num_experts_per_tok"),
        expert_width=base.intermediate_size,
    )
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
        kind=AttentionKind.MLA,
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=nope + rope,
        v_head_dim=_int(config, "v_head_dim"),
        q_lora_rank=_opt_int(config, "q_lora_rank") or None,
        kv_lora_rank=_int(config, "kv_lora_rank"),
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
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
    return _with_layers(
        base,
        layers,
        mtp_layers=_opt_int(config, "num_nextn_predict_layers"),
        rope_cache_elements=_rope_cache_elements(config, head_dim=rope),
    )


# --- Layer patterns -------------------------------------------------------------------------------------------

# layer_types values -> whether the layer keeps only a window of the sequence. Llama-4's chunked local attention
# is kept as a sliding window of one chunk: vLLM allocates its chunked-local layers like sliding-window ones.
_LOCAL_LAYER_TYPES: dict[str, bool] = {
    "full_attention": False,
    "sliding_attention": True,
    "chunked_attention": True,
}


def _local_layers(config: Mapping[str, Any], count: int, *, default: Callable[[int], bool]) -> list[bool]:
    """Which of `count` layers attend locally: from `layer_types` when given, else the family's rule `default`."""
    layer_types = config.get("layer_types")
    if layer_types is None:
        return [default(index) for index in range(count)]
    if not isinstance(layer_types, list) or len(layer_types) != count:
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json layer_types must list one attention type for each of the {count} layers",
            extra={"field": "layer_types"},
        )
    unknown = sorted({str(kind) for kind in layer_types if not isinstance(kind, str) or kind not in _LOCAL_LAYER_TYPES})
    if unknown:
        raise SizingError(
            code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
            message=f"config.json layer_types holds {', '.join(unknown)}: only "
            f"{', '.join(_LOCAL_LAYER_TYPES)} layers are modelled",
            extra={"field": "layer_types", "unsupported": unknown},
        )
    return [_LOCAL_LAYER_TYPES[kind] for kind in layer_types]


def _patterned_layers(
    base: Architecture,
    *,
    local: list[bool],
    window: int,
    mlp: MlpSpec | Callable[[int], MlpSpec] | None = None,
    attention: AttentionSpec | None = None,
    norms: int = 2,
) -> list[LayerSpec]:
    """Layers whose attention slides over `window` tokens where `local[i]`, else attends to the whole sequence."""
    full = attention or base.layers[0].attention
    sliding = replace(full, kind=AttentionKind.SLIDING, window=window)
    dense = base.layers[0].mlp

    def mlp_of(index: int) -> MlpSpec:
        if mlp is None:
            return dense
        return mlp(index) if callable(mlp) else mlp

    return [
        LayerSpec(attention=sliding if is_local else full, mlp=mlp_of(index), norms=norms)
        for index, is_local in enumerate(local)
    ]


# --- Nested configs (multimodal wrappers) ---------------------------------------------------------------------


def _nested(config: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message=f"config.json {key} must be an object",
            extra={"field": key},
        )
    return value


def _text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The text backbone's fields: `text_config` when nested, else the config itself.

    The wrapper's dtype and quantization fill what `text_config` leaves out; its `tie_word_embeddings`
    wins when it sets one, since the wrapper's flag decides whether the checkpoint stores a separate head.
    The wrapper's model_type names the architecture.
    """
    text = _nested(config, "text_config")
    if text is None:
        return dict(config)
    merged = dict(text)
    for key in ("torch_dtype", "dtype", "quantization_config"):
        if merged.get(key) is None and config.get(key) is not None:
            merged[key] = config[key]
    if config.get("tie_word_embeddings") is not None:
        merged["tie_word_embeddings"] = config["tie_word_embeddings"]
    merged["model_type"] = config["model_type"]
    return merged


def _with_defaults(
    config: Mapping[str, Any],
    defaults: Mapping[str, Any],
    source: str,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Fill the fields a published config leaves to its transformers class defaults, and say which."""
    absent = {key: value for key, value in defaults.items() if config.get(key) is None}
    if not absent:
        return dict(config), ()
    used = ", ".join(f"{key} {value}" for key, value in absent.items())
    return {**config, **absent}, (f"config.json omits {', '.join(absent)}: used the defaults of {source} ({used})",)


def _tied(config: Mapping[str, Any], default: bool) -> dict[str, Any]:
    """The config with `tie_word_embeddings` set to the family's default when absent or null."""
    tied = config.get("tie_word_embeddings")
    return {**config, "tie_word_embeddings": default if tied is None else bool(tied)}


# --- Vision towers --------------------------------------------------------------------------------------------


def _siglip_tower(vision: Mapping[str, Any], *, text_hidden: int) -> tuple[int, str]:
    """Gemma-3's SigLIP encoder and its projector: parameters and what they are.

    Patch conv (weight and bias), learned position table ((image/patch)² rows), per block two LayerNorms,
    q/k/v/out projections with biases and a GELU MLP with biases, a post-LayerNorm; then Gemma-3's projector:
    `mm_input_projection_weight` (vision hidden × text hidden) and its soft-embedding RMSNorm.
    """
    _require(
        vision,
        ("hidden_size", "intermediate_size", "num_hidden_layers", "image_size", "patch_size"),
        "SigLIP vision tower",
    )
    h, i = _int(vision, "hidden_size"), _int(vision, "intermediate_size")
    blocks, image, patch = _int(vision, "num_hidden_layers"), _int(vision, "image_size"), _int(vision, "patch_size")
    channels = _opt_int(vision, "num_channels", 3) or 3
    positions = (image // patch) ** 2
    embeddings = channels * patch * patch * h + h + positions * h  # patch conv weight + bias, position table
    block = (
        2 * 2 * h  # layer_norm1, layer_norm2: weight and bias
        + 4 * (h * h + h)  # q, k, v, out projections with biases
        + 2 * h * i
        + i
        + h  # fc1, fc2 with biases
    )
    encoder = embeddings + blocks * block + 2 * h  # post_layernorm: weight and bias
    projector = h * text_hidden + h  # mm_input_projection_weight, mm_soft_emb_norm
    description = (
        f"SigLIP vision encoder ({blocks} blocks of width {h}, MLP {i}, {patch}×{patch} patches of a "
        f"{image}×{image} image: {encoder:,} parameters) and the multimodal projector ({h} → {text_hidden} with its "
        f"soft-embedding norm: {projector:,} parameters)"
    )
    if vision.get("vision_use_head"):
        description += "; the unused attention-pooling head (vision_use_head) is not counted"
    return encoder + projector, description


def _llama4_tower(vision: Mapping[str, Any], *, text_hidden: int) -> tuple[int, str]:
    """Llama-4's vision encoder, pixel-shuffle adapter and projector (transformers' Llama4VisionModel)."""
    _require(
        vision,
        (
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "image_size",
            "patch_size",
            "projector_input_dim",
            "projector_output_dim",
            "vision_output_dim",
        ),
        "Llama-4 vision tower",
    )
    h, i = _int(vision, "hidden_size"), _int(vision, "intermediate_size")
    blocks, image, patch = _int(vision, "num_hidden_layers"), _int(vision, "image_size"), _int(vision, "patch_size")
    channels = _opt_int(vision, "num_channels", 3) or 3
    embeddings = (
        channels * patch * patch * h  # unfold + linear patch embedding, no bias
        + h  # class embedding
        + ((image // patch) ** 2 + 1) * h  # positional_embedding_vlm: one row per patch and the class token
        + 2 * 2 * h  # layernorm_pre, layernorm_post: weight and bias
    )
    block = 2 * 2 * h + 4 * (h * h + h) + 2 * h * i + i + h  # two LayerNorms, q/k/v/o and fc1/fc2 with biases
    adapter = i * _int(vision, "projector_input_dim") + _int(vision, "projector_output_dim") ** 2  # fc1, fc2
    projector = _int(vision, "vision_output_dim") * text_hidden  # multi_modal_projector.linear_1
    if vision.get("multi_modal_projector_bias"):
        projector += text_hidden
    encoder = embeddings + blocks * block
    description = (
        f"Llama-4 vision encoder ({blocks} blocks of width {h}, MLP {i}, {patch}×{patch} patches of a "
        f"{image}×{image} tile: {encoder:,} parameters), its pixel-shuffle MLP adapter ({adapter:,}) and the "
        f"projector to the text width ({projector:,})"
    )
    return encoder + adapter + projector, description


def _qwen3_vl_tower(vision: Mapping[str, Any]) -> tuple[int, str]:
    """Qwen3-VL's ViT with its patch merger and DeepStack mergers (transformers' Qwen3VLVisionModel)."""
    _require(
        vision,
        (
            "hidden_size",
            "intermediate_size",
            "depth",
            "patch_size",
            "temporal_patch_size",
            "spatial_merge_size",
            "out_hidden_size",
            "num_position_embeddings",
        ),
        "Qwen3-VL vision tower",
    )
    h, i, depth = _int(vision, "hidden_size"), _int(vision, "intermediate_size"), _int(vision, "depth")
    patch, temporal = _int(vision, "patch_size"), _int(vision, "temporal_patch_size")
    out, positions = _int(vision, "out_hidden_size"), _int(vision, "num_position_embeddings")
    channels = _opt_int(vision, "in_channels", 3) or 3
    merged = h * _int(vision, "spatial_merge_size") ** 2  # a merge × merge group of patches, concatenated
    deepstack = vision.get("deepstack_visual_indexes") or []
    if not isinstance(deepstack, list):
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message="config.json vision_config.deepstack_visual_indexes must be a list",
            extra={"field": "deepstack_visual_indexes"},
        )
    embeddings = channels * temporal * patch * patch * h + h + positions * h  # Conv3d weight + bias, pos_embed
    block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)  # norms, qkv, proj, MLP
    mlp = (merged * merged + merged) + (merged * out + out)  # linear_fc1, linear_fc2 with biases
    merger = 2 * h + mlp  # LayerNorm over one patch before the shuffle
    deepstack_merger = 2 * merged + mlp  # LayerNorm over the merged group (use_postshuffle_norm)
    total = embeddings + depth * block + merger + len(deepstack) * deepstack_merger
    description = (
        f"Qwen3-VL ViT ({depth} blocks of width {h}, MLP {i}, {patch}×{patch}×{temporal} patches, "
        f"{positions} learned positions), a {merged} → {out} patch merger and {len(deepstack)} DeepStack "
        f"mergers feeding text layers (after vision blocks {', '.join(str(k) for k in deepstack) or 'none'})"
    )
    return total, description


# --- Families -------------------------------------------------------------------------------------------------


def _gemma2(config: Mapping[str, Any]) -> Architecture:
    # Gemma-2: sliding and global attention alternate (layer 0 slides, as transformers' Gemma2 does when no
    # layer_types is given); input, post-attention, pre- and post-feedforward RMSNorms; GeGLU MLP; tied
    # embeddings unless the config says otherwise. Logit soft-capping and query_pre_attn_scalar hold no weights.
    _require(config, ("sliding_window",), "sliding-window layers")
    base = _dense_decoder(_tied(config, True), sliding_window_used=False)
    local = _local_layers(config, base.num_hidden_layers, default=lambda i: i % 2 == 0)
    return _with_layers(base, _patterned_layers(base, local=local, window=_int(config, "sliding_window"), norms=4))


# transformers' Gemma3TextConfig defaults for the fields published Gemma-3 configs often leave out.
_GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262_208,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "sliding_window": 4096,
}
_GEMMA3_SLIDING_WINDOW_PATTERN = 6  # transformers' Gemma3TextConfig: every 6th layer is global


def _gemma3(config: Mapping[str, Any]) -> Architecture:
    # Gemma-3 (gemma3: text_config + SigLIP vision_config; gemma3_text: the text model alone): 5 local : 1 global
    # layers (layer_types, else every sliding_window_pattern-th layer global), q/k RMSNorms, Gemma-2's four norms.
    text, warnings = _with_defaults(_text_config(config), _GEMMA3_TEXT_DEFAULTS, "transformers' Gemma3TextConfig")
    pattern = _opt_int(text, "sliding_window_pattern") or _opt_int(text, "_sliding_window_pattern")
    pattern = pattern or _GEMMA3_SLIDING_WINDOW_PATTERN
    base = _dense_decoder(_tied(text, True), qk_norm=True, sliding_window_used=False, warnings=warnings)
    local = _local_layers(text, base.num_hidden_layers, default=lambda i: (i + 1) % pattern != 0)
    layers = _patterned_layers(base, local=local, window=_int(text, "sliding_window"), norms=4)
    vision = _nested(config, "vision_config")
    if vision is None:
        return _with_layers(base, layers)
    parameters, description = _siglip_tower(vision, text_hidden=base.hidden_size)
    return _with_layers(base, layers, vision_parameters=parameters, vision_description=description)


def _gpt_oss(config: Mapping[str, Any]) -> Architecture:
    # gpt-oss: sliding (sliding_window) and full attention alternate by layer_types (else layer 0 slides, as in
    # transformers), a learned sink per head, q/k/v/o biases; every layer a MoE of num_local_experts SwiGLU
    # experts of intermediate_size with gate/up and down biases, a router with a bias; untied head.
    _require(config, ("num_local_experts", "sliding_window"), "mixture-of-experts and sliding-window layers")
    # gpt-oss configs carry both num_experts_per_tok (transformers) and experts_per_token (OpenAI's own name).
    per_token_key = next(
        (key for key in ("num_experts_per_tok", "experts_per_token") if config.get(key) is not None),
        "num_experts_per_tok",
    )
    _require(config, (per_token_key,), "mixture-of-experts layers")
    bias = bool(config.get("attention_bias", True))
    base = _dense_decoder(config, qkv_bias=bias, o_bias=bias, sliding_window_used=False)
    attention = replace(base.layers[0].attention, sinks=True)
    moe = MlpSpec(
        kind=MlpKind.MOE,
        intermediate_size=base.intermediate_size,
        num_experts=_int(config, "num_local_experts"),
        experts_per_token=_int(config, per_token_key),
        router_bias=True,
        expert_bias=True,
    )
    local = _local_layers(config, base.num_hidden_layers, default=lambda i: i % 2 == 0)
    layers = _patterned_layers(base, local=local, window=_int(config, "sliding_window"), mlp=moe, attention=attention)
    return _with_layers(base, layers)


_LLAMA4_NO_ROPE_LAYER_INTERVAL = 4  # transformers' Llama4TextConfig: every 4th layer is a NoPE (global) layer


def _llama4_rope_layers(text: Mapping[str, Any], count: int) -> list[bool]:
    """Which layers use RoPE (and so chunked local attention): `no_rope_layers` (1 = RoPE), else every layer but
    each `no_rope_layer_interval`-th."""
    flags = text.get("no_rope_layers")
    if flags:
        if not isinstance(flags, list) or len(flags) < count or any(flag not in (0, 1) for flag in flags[:count]):
            raise SizingError(
                code=SizingErrorCode.INVALID_CONFIG,
                message=f"config.json no_rope_layers must hold a 0 or 1 for each of the {count} layers",
                extra={"field": "no_rope_layers"},
            )
        return [flag == 1 for flag in flags[:count]]
    interval = _opt_int(text, "no_rope_layer_interval") or _LLAMA4_NO_ROPE_LAYER_INTERVAL
    return [(index + 1) % interval != 0 for index in range(count)]


def _llama4(config: Mapping[str, Any]) -> Architecture:
    # Llama-4 (text_config + vision_config): MoE layers (moe_layers, else every interleave_moe_layer_step-th)
    # of num_local_experts routed experts of intermediate_size plus one shared expert of the same width, a router
    # without bias; dense layers use intermediate_size_mlp. RoPE layers attend within attention_chunk_size-token
    # chunks, NoPE layers to the whole sequence. The q/k norm is an L2 norm without weights.
    text = _text_config(config)
    _require(text, ("num_local_experts", "num_experts_per_tok"), "mixture-of-experts layers")
    bias = bool(text.get("attention_bias", False))
    base = _dense_decoder(text, qkv_bias=bias, o_bias=bias)
    count = base.num_hidden_layers
    moe_layers = text.get("moe_layers")
    if moe_layers is None:
        step = _opt_int(text, "interleave_moe_layer_step", 1) or 1
        moe_layers = list(range(step - 1, count, step))
    if not isinstance(moe_layers, list) or any(not isinstance(i, int) or isinstance(i, bool) for i in moe_layers):
        raise SizingError(
            code=SizingErrorCode.INVALID_CONFIG,
            message="config.json moe_layers must be a list of layer indices",
            extra={"field": "moe_layers"},
        )
    sparse = set(moe_layers)
    width = base.intermediate_size
    moe = MlpSpec(
        kind=MlpKind.MOE,
        intermediate_size=width,
        num_experts=_int(text, "num_local_experts"),
        experts_per_token=_int(text, "num_experts_per_tok"),
        shared_experts=1,
        shared_intermediate_size=width,
    )
    if len(sparse & set(range(count))) < count:
        _require(text, ("intermediate_size_mlp",), "dense layers")
        dense = MlpSpec(intermediate_size=_int(text, "intermediate_size_mlp"))
    else:
        dense = base.layers[0].mlp  # unused: every layer is a MoE layer

    def mlp(index: int) -> MlpSpec:
        return moe if index in sparse else dense

    chunk = _opt_int(text, "attention_chunk_size")
    if chunk:
        rope = _llama4_rope_layers(text, count)
        local = _local_layers(text, count, default=lambda i: rope[i])
    else:
        local = [False] * count
    layers = _patterned_layers(base, local=local, window=chunk or 1, mlp=mlp)
    warnings = list(base.warnings)
    if any(local):
        warnings.append(
            f"Llama-4 chunked local attention ({sum(local)} of {count} layers, {chunk}-token chunks) is sized as a "
            f"sliding window of {chunk} tokens, as vLLM allocates chunked-local layers; the other "
            f"{count - sum(local)} layers keep the whole sequence"
        )
    extra: dict[str, Any] = {"warnings": tuple(warnings)}
    vision = _nested(config, "vision_config")
    if vision is None:
        if config.get("text_config") is not None:
            extra["warnings"] += ("config.json has no vision_config: a vision tower in the checkpoint is not counted",)
    else:
        extra["vision_parameters"], extra["vision_description"] = _llama4_tower(vision, text_hidden=base.hidden_size)
    return _with_layers(base, layers, **extra)


def _qwen3_vl(config: Mapping[str, Any]) -> Architecture:
    # Qwen3-VL: a Qwen3 text backbone in text_config (dense, or Qwen3-MoE when it carries num_experts) and the
    # Qwen3-VL ViT in vision_config.
    text = _text_config(config)
    base = _qwen_moe(text, qwen3=True) if text.get("num_experts") else _qwen3(text)
    vision = _nested(config, "vision_config")
    if vision is None:
        return base
    parameters, description = _qwen3_vl_tower(vision)
    return replace(base, vision_parameters=parameters, vision_description=description)


_CHATGLM_REQUIRED = (
    "hidden_size",
    "num_layers",
    "num_attention_heads",
    "kv_channels",
    "ffn_hidden_size",
    "padded_vocab_size",
)


def _chatglm(config: Mapping[str, Any]) -> Architecture:
    # ChatGLM2/3 and GLM-4 in THUDM's own key names: query_key_value (h -> (heads + 2 × groups) × kv_channels,
    # bias when add_qkv_bias), dense (no bias unless add_bias_linear), dense_h_to_4h fusing gate and up (2 × ffn),
    # dense_4h_to_h; RMSNorm when rmsnorm, else LayerNorm; output_layer untied unless tie_word_embeddings.
    _require(config, _CHATGLM_REQUIRED, "ChatGLM layers")
    heads = _int(config, "num_attention_heads")
    multi_query = bool(config.get("multi_query_attention", False))
    if multi_query:
        _require(config, ("multi_query_group_num",), "multi-query attention")
    kv_heads = _int(config, "multi_query_group_num") if multi_query else heads
    standard = {
        "model_type": config["model_type"],
        "hidden_size": config["hidden_size"],
        "num_hidden_layers": config["num_layers"],
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": config["kv_channels"],
        "partial_rotary_factor": 0.5,  # ChatGLM rotates half of each head
        "intermediate_size": config["ffn_hidden_size"],
        "vocab_size": config["padded_vocab_size"],
        "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
        "max_position_embeddings": config.get("seq_length"),
        "torch_dtype": config.get("torch_dtype") or config.get("dtype"),
        "quantization_config": config.get("quantization_config"),
    }
    linear_bias = bool(config.get("add_bias_linear", False))
    rms = bool(config.get("rmsnorm", True))
    warnings = (
        ()
        if config.get("post_layer_norm", True)
        else ("config.json sets post_layer_norm false: the final norm is counted although the model has none",)
    )
    base = _dense_decoder(
        standard,
        qkv_bias=bool(config.get("add_qkv_bias", False)),
        o_bias=linear_bias,
        mlp_bias=linear_bias,
        norm=NormKind.RMS if rms else NormKind.LAYER,
        warnings=warnings,
    )
    if rms:
        return base
    layer = replace(base.layers[0], norms=4)  # two LayerNorms, weight and bias each
    return _with_layers(base, [layer] * base.num_hidden_layers)


def _glm(config: Mapping[str, Any], *, sandwich_norms: bool) -> Architecture:
    # GLM / GLM-4 in transformers' key names: q/k/v biases (attention_bias, default true), no o_proj bias, a fused
    # gate_up_proj; GLM-4 (glm4) adds post-self-attention and post-MLP RMSNorms: 4 norms per layer.
    base = _dense_decoder(config, qkv_bias=bool(config.get("attention_bias", True)))
    if not sandwich_norms:
        return base
    return _with_layers(base, [replace(base.layers[0], norms=4)] * base.num_hidden_layers)


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
    "gemma2": _gemma2,
    "gemma3": _gemma3,
    "gemma3_text": _gemma3,
    "gpt_oss": _gpt_oss,
    "llama4": _llama4,
    "llama4_text": _llama4,
    "qwen3_vl": _qwen3_vl,
    "chatglm": _chatglm,
    "glm": lambda config: _glm(config, sandwich_norms=False),
    "glm4": lambda config: _glm(config, sandwich_norms=True),
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
        "moe": arch.is_moe,
        "mla": arch.uses_mla,
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
        "attention_layers": _attention_layer_counts(arch),
        "sliding_windows": sorted(
            {
                layer.attention.window
                for layer in arch.layers
                if layer.attention.kind is AttentionKind.SLIDING and layer.attention.window
            }
        ),
        "vision_parameters": arch.vision_parameters,
        "vision_description": arch.vision_description,
        "warnings": list(arch.warnings),
    }


def _attention_layer_counts(arch: Architecture) -> dict[str, int]:
    """Layers of each attention kind, e.g. {"sliding": 52, "full": 10}."""
    counts: dict[str, int] = {}
    for layer in arch.layers:
        counts[layer.attention.kind.value] = counts.get(layer.attention.kind.value, 0) + 1
    return counts


def merge_quant_config(config: Mapping[str, Any], quant_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fold a ModelOpt `hf_quant_config.json` into config.json's `quantization_config` when it has none."""
    merged = dict(config)
    if quant_config and not merged.get("quantization_config"):
        quantization = quant_config.get("quantization", quant_config)
        if isinstance(quantization, Mapping):
            merged["quantization_config"] = {"quant_method": "modelopt", **quantization}
    return merged

"""Weight formats: bits per weight, the metadata each format stores, and which tensors a recipe converts (DESIGN §4).

A format has two parts. Its *encoding* says how one rows x cols linear weight is stored (`tensor_bytes`: packed
weights plus scales, zero points, group indices, global scales). Its *recipe* says which tensors get that encoding:
by default the attention, dense-MLP and routed-expert projections (`LINEAR_ROLES`); the router, embeddings, output
head, norms and biases stay in the checkpoint's 16-bit dtype. Exceptions, each documented where it is built:

- plain FP32/FP16/BF16 store every tensor in that dtype;
- MXFP4 (gpt-oss) converts only the routed experts;
- a config's exclusion list (`modules_to_not_convert`, compressed-tensors `ignore`, bitsandbytes
  `llm_int8_skip_modules`, ModelOpt `exclude_modules`, FP8 `ignored_layers`) keeps the modules it names in 16 bits;
- compressed-tensors `config_groups` can give different modules different encodings;
- GGUF quantises every 2-D tensor, embeddings and output included, with llama.cpp's per-tensor mix (`GgufFileType`).

Matching checkpoint module names onto our tensors (`checkpoint_module_names`, `module_matches`): each tensor of the
inventory answers to the Hugging Face module paths it has, in its layer i (prefix `model.layers.{i}.`, also
`model.language_model.layers.{i}.` and `language_model.model.layers.{i}.`):

- q/k/v/o_proj, q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj: `self_attn.<name>`;
- dense gate_proj, up_proj, down_proj: `mlp.<name>`;
- routed experts.<proj>: `mlp.experts.0.<proj>`;
- shared_expert.<proj>: `mlp.shared_expert.<proj>` (Qwen-MoE) and `mlp.shared_experts.<proj>` (DeepSeek);
- router: `mlp.gate` (Qwen-MoE, DeepSeek); shared_expert_gate: `mlp.shared_expert_gate`;
- embed_tokens: `model.embed_tokens` (also `model.language_model.embed_tokens`); lm_head: `lm_head`;

and, only in the family that uses them (`_FAMILY_NAMES`): Mixtral's `block_sparse_moe.experts.0.w1/w3/w2` and
`block_sparse_moe.gate`; gpt-oss's fused `mlp.experts.gate_up_proj`, `mlp.experts.down_proj` and `mlp.router`;
Phi-3's fused `self_attn.qkv_proj` and `mlp.gate_up_proj`; InternLM2's `attention.wqkv`, `attention.wo`,
`feed_forward.w1/w3/w2`, `model.tok_embeddings`, `output`; Baichuan's `self_attn.W_pack`.

So `mlp.gate` in a MoE config is the router, `self_attn` covers q/k/v/o and the MLA projections, `mlp.experts` the
routed experts, `shared_expert(s)` the shared ones. Experts answer as expert 0: a pattern naming one expert applies to
every expert of that layer (no published recipe leaves single experts unconverted). A pattern `re:<regex>` is matched
from the start of the name (compressed-tensors' rule); any other pattern must match whole dot-separated segments, with
`*` matching anything (`lm_head`, `mlp.gate`, `model.layers.*.self_attn`, `*mlp.gate`, `model.layers.0`), so
`mlp.gate` never catches `mlp.gate_proj`. The router stays 16-bit in every recipe whatever the patterns say.

>>> weight_format("int4").tensor_bytes(rows=4096, cols=4096)  # 4 bits + per 128 inputs a 16-bit scale, 4-bit zero
8716288
>>> weight_format("nvfp4").tensor_bytes(rows=4096, cols=4096)  # 4 bits + an FP8 scale per 16 + 2 FP32 global scales
9437192
>>> GgmlType.Q4_K.bits_per_weight  # llama.cpp block_q4_K: 144 bytes per 256 weights
4.5
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from typing import Any

from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.tensors import Role, TensorSpec

FP32_BITS = DType.FP32.bits
FP16_BITS = DType.FP16.bits
FP8_BITS = DType.FP8.bits
INT32_BITS = 32  # GPTQ/compressed-tensors group indices, compressed-tensors int32 packing
INT64_BITS = 64  # compressed-tensors `weight_shape`
SCALE16_BITS = FP16_BITS  # compressed-tensors scales take the model's 16-bit dtype (bf16 or fp16)

LINEAR_ROLES: frozenset[Role] = frozenset({Role.ATTENTION, Role.MLP, Role.EXPERT})


class ScaleLayout(Enum):
    NONE = "none"
    PER_TENSOR = "per_tensor"  # one weight scale (+ one static input scale) per linear (FP8 per-tensor)
    PER_CHANNEL = "per_channel"  # one scale (+ zero) per output channel
    BLOCK = "block"  # one scale per block_rows x block_cols block (FP8 block-wise)
    GROUP = "group"  # per `group_size` input features of each output row: a scale (+ zero); MXFP4/NVFP4 too
    FLAT_BLOCK = "flat_block"  # bitsandbytes: an absmax per `group_size` elements of the flattened tensor
    GGML = "ggml"  # llama.cpp: each row in blocks of `group_size` inputs of `block_bytes` bytes, scales inside


@dataclass(frozen=True, kw_only=True)
class FormatGroup:
    """A compressed-tensors config group: the modules it targets and their encoding (None: weights unquantised)."""

    targets: tuple[str, ...]
    encoding: WeightFormat | None


@dataclass(frozen=True, kw_only=True)
class ModelFacts:
    """The architecture facts a recipe looks at (module names, llama.cpp's GGUF mixes)."""

    model_type: str
    num_layers: int
    gqa_ratio: int  # attention heads per KV head
    experts: int  # routed experts per MoE layer (0: dense)
    llama_70b: bool  # llama.cpp's LLM_TYPE_70B: 80 layers with grouped-query attention
    tied_embeddings: bool


def model_facts(arch: Architecture) -> ModelFacts:
    """The facts of `arch` that recipes depend on."""
    return ModelFacts(
        model_type=arch.model_type,
        num_layers=arch.num_hidden_layers,
        gqa_ratio=arch.num_attention_heads // max(1, arch.num_key_value_heads),
        experts=max((layer.mlp.num_experts for layer in arch.layers), default=0),
        llama_70b=arch.num_hidden_layers == 80 and arch.num_key_value_heads < arch.num_attention_heads,
        tied_embeddings=arch.tie_word_embeddings,
    )


@dataclass(frozen=True, kw_only=True)
class WeightFormat:
    """How a quantizable linear weight is stored (the encoding) and which tensors are stored so (the recipe)."""

    slug: str
    label: str
    bits: int
    scales: ScaleLayout = ScaleLayout.NONE
    group_size: int = 128
    block: tuple[int, int] = (128, 128)
    scale_bits: int = FP32_BITS
    zero_bits: int = 0
    act_order: bool = False  # GPTQ desc_act / compressed-tensors actorder "group": an int32 group index per input
    input_scale: bool = True  # FP8 per-tensor with static activation scales stores one per linear
    dense_dtype: DType | None = None  # plain formats: the dtype of every tensor, not only the linears
    tensor_meta_bits: int = 0  # fixed metadata per linear: global scales, weight_shape, static input scales, codebooks
    nested_group: int = 0  # bitsandbytes double quantisation: absmax values per second-level FP32 scale
    block_bytes: int = 0  # GGML: bytes of one block of `group_size` weights, its scales included
    # The recipe.
    targets: frozenset[Role] = LINEAR_ROLES
    exclude: tuple[str, ...] = ()  # checkpoint module patterns kept in the checkpoint dtype
    include: tuple[str, ...] = ()  # when given, only matching decoder-layer modules are converted
    groups: tuple[FormatGroup, ...] = ()  # compressed-tensors: per-target encodings (overrides the one above)
    gguf: GgufFileType | None = None

    def tensor_bytes(self, *, rows: int, cols: int) -> int:
        """Bytes of one rows x cols linear weight in this encoding, metadata included."""
        if self.scales is ScaleLayout.GGML:
            return rows * math.ceil(cols / self.group_size) * self.block_bytes
        weight_bits = rows * cols * self.bits
        meta_bits = self.tensor_meta_bits
        if self.scales is ScaleLayout.PER_TENSOR:
            meta_bits += self.scale_bits * (2 if self.input_scale else 1)  # weight scale (+ static input scale)
        elif self.scales is ScaleLayout.PER_CHANNEL:
            meta_bits += rows * (self.scale_bits + self.zero_bits)
        elif self.scales is ScaleLayout.BLOCK:
            meta_bits += math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1]) * self.scale_bits
        elif self.scales is ScaleLayout.GROUP:
            groups = rows * math.ceil(cols / self.group_size)
            meta_bits += groups * (self.scale_bits + self.zero_bits)
            if self.act_order:
                meta_bits += cols * INT32_BITS  # g_idx: one int32 per input feature
        elif self.scales is ScaleLayout.FLAT_BLOCK:
            blocks = math.ceil(rows * cols / self.group_size)
            meta_bits += blocks * self.scale_bits  # absmax per block (8-bit when double-quantised)
            if self.nested_group:
                meta_bits += math.ceil(blocks / self.nested_group) * FP32_BITS  # nested_absmax
        return math.ceil((weight_bits + meta_bits) / 8)

    @property
    def bits_per_weight(self) -> float:
        """Bits per weight of a 4096 x 4096 linear in this encoding, metadata included (a nominal figure)."""
        side = 4096
        return self.tensor_bytes(rows=side, cols=side) * 8 / (side * side)

    @property
    def layer_dependent(self) -> bool:
        """Whether the recipe can treat the same tensor differently in different layers (patterns, GGUF mixes)."""
        return self.gguf is not None or bool(self.exclude or self.include or self.groups)

    def encoding_for(self, tensor: TensorSpec, *, layer_index: int | None, model: ModelFacts) -> WeightFormat | None:
        """The encoding this recipe gives `tensor` in decoder layer `layer_index` (None for non-layer tensors).

        None means the tensor stays in the checkpoint's own dtype.
        """
        return _encoding(self, tensor, layer_index, model)


# --- module names and patterns -----------------------------------------------------------------------------------

_LAYER_PREFIXES = ("model.layers.{i}.", "model.language_model.layers.{i}.", "language_model.model.layers.{i}.")

# Module names a family uses instead of (or fused from) the common ones, by our tensor name.
_QKV = ("q_proj", "k_proj", "v_proj")
_FAMILY_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "mixtral": {
        "experts.gate_proj": ("block_sparse_moe.experts.0.w1",),
        "experts.up_proj": ("block_sparse_moe.experts.0.w3",),
        "experts.down_proj": ("block_sparse_moe.experts.0.w2",),
        "router": ("block_sparse_moe.gate",),
    },
    "gpt_oss": {
        "experts.gate_proj": ("mlp.experts.gate_up_proj",),
        "experts.up_proj": ("mlp.experts.gate_up_proj",),
        "experts.down_proj": ("mlp.experts.down_proj",),
        "router": ("mlp.router",),
    },
    "phi3": {
        **dict.fromkeys(_QKV, ("self_attn.qkv_proj",)),
        **dict.fromkeys(("gate_proj", "up_proj"), ("mlp.gate_up_proj",)),
    },
    "internlm2": {
        **dict.fromkeys(_QKV, ("attention.wqkv",)),
        "o_proj": ("attention.wo",),
        "gate_proj": ("feed_forward.w1",),
        "up_proj": ("feed_forward.w3",),
        "down_proj": ("feed_forward.w2",),
        "embed_tokens": ("model.tok_embeddings",),
        "lm_head": ("output",),
    },
    "baichuan": dict.fromkeys(_QKV, ("self_attn.W_pack",)),
}


def _layer_local_names(tensor: TensorSpec) -> tuple[str, ...]:
    """The common module names of `tensor` inside one decoder layer."""
    name = tensor.name
    if tensor.role is Role.ATTENTION:
        return (f"self_attn.{name}",)
    if tensor.role is Role.ROUTER:
        return ("mlp.gate",) if name == "router" else (f"mlp.{name}",)
    if tensor.role is Role.EXPERT:
        return (f"mlp.experts.0.{name.removeprefix('experts.')}",)
    if tensor.role is Role.MLP:
        if name.startswith("shared_expert."):
            proj = name.removeprefix("shared_expert.")
            return (f"mlp.shared_expert.{proj}", f"mlp.shared_experts.{proj}")
        return (f"mlp.{name}",)
    return ()


def checkpoint_module_names(tensor: TensorSpec, layer_index: int | None, model_type: str = "") -> tuple[str, ...]:
    """The Hugging Face module paths `tensor` has in a checkpoint of family `model_type` (module docstring)."""
    family = _FAMILY_NAMES.get(model_type, {}).get(tensor.name, ())
    if layer_index is not None:
        local = (*_layer_local_names(tensor), *family)
        return tuple(prefix.format(i=layer_index) + name for prefix in _LAYER_PREFIXES for name in local)
    if tensor.role is Role.EMBEDDING:
        return ("model.embed_tokens", "model.language_model.embed_tokens", "language_model.model.embed_tokens", *family)
    if tensor.role is Role.LM_HEAD:
        return ("lm_head", "language_model.lm_head", *family)
    return ()


@lru_cache(maxsize=4096)
def _pattern_regex(pattern: str) -> re.Pattern[str]:
    if pattern.startswith("re:"):
        return re.compile(pattern[3:])
    body = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.compile(rf"(?:.*\.)?{body}(?:\..*)?")  # whole dot-separated segments


def module_matches(pattern: str, name: str) -> bool:
    """Whether a checkpoint module pattern (`re:<regex>` or a dotted name with `*`) names module `name`."""
    regex = _pattern_regex(pattern)
    if pattern.startswith("re:"):
        return regex.match(name) is not None  # compressed-tensors: re.match from the start
    return regex.fullmatch(name) is not None


def _group_encoding(groups: tuple[FormatGroup, ...], names: tuple[str, ...]) -> WeightFormat | None:
    """The encoding of the most specific group targeting a module: an exact name beats a regex beats `Linear`."""
    best: tuple[int, WeightFormat | None] | None = None
    for group in groups:
        for target in group.targets:
            if target == "Linear":
                rank = 0
            elif any(module_matches(target, name) for name in names):
                rank = 1 if target.startswith("re:") else 2
            else:
                continue
            if best is None or rank > best[0]:
                best = (rank, group.encoding)
    return best[1] if best else None


@lru_cache(maxsize=1 << 16)
def _encoding(fmt: WeightFormat, tensor: TensorSpec, layer_index: int | None, model: ModelFacts) -> WeightFormat | None:
    if fmt.dense_dtype is not None:
        return fmt
    if fmt.gguf is not None:
        ggml = gguf_tensor_type(fmt.gguf, tensor, layer_index=layer_index, model=model)
        return ggml.encoding if ggml is not None else None
    if tensor.role not in fmt.targets or not (tensor.quantizable or tensor.role is Role.LM_HEAD):
        return None  # the router, norms, biases, embeddings, head (unless a recipe targets it), vision tower
    names = checkpoint_module_names(tensor, layer_index, model.model_type)
    if any(module_matches(pattern, name) for pattern in fmt.exclude for name in names):
        return None
    if (
        fmt.include
        and layer_index is not None
        and not any(module_matches(pattern, name) for pattern in fmt.include for name in names)
    ):
        return None
    if fmt.groups:
        return _group_encoding(fmt.groups, names)
    return fmt


# --- GGUF (llama.cpp) --------------------------------------------------------------------------------------------


class GgmlType(Enum):
    """A llama.cpp tensor type: weights per block and bytes per block, scales included.

    Source: the block structs and their static_asserts in llama.cpp's ggml/src/ggml-common.h.
    """

    F32 = ("f32", 1, 4)
    F16 = ("f16", 1, 2)
    Q8_0 = ("q8_0", 32, 34)  # fp16 d + 32 int8 quants: 8.5 bpw
    Q6_K = ("q6_k", 256, 210)  # ql[128] + qh[64] + 16 int8 scales + fp16 d: 6.5625 bpw
    Q5_K = ("q5_k", 256, 176)  # fp16 d, dmin + scales[12] + qh[32] + qs[128]: 5.5 bpw
    Q5_1 = ("q5_1", 32, 24)  # fp16 d, m + qh[4] + qs[16]: 6 bpw
    Q5_0 = ("q5_0", 32, 22)  # fp16 d + qh[4] + qs[16]: 5.5 bpw
    Q4_K = ("q4_k", 256, 144)  # fp16 d, dmin + scales[12] + qs[128]: 4.5 bpw
    Q4_0 = ("q4_0", 32, 18)  # fp16 d + qs[16]: 4.5 bpw
    Q3_K = ("q3_k", 256, 110)  # hmask[32] + qs[64] + scales[12] + fp16 d: 3.4375 bpw
    Q2_K = ("q2_k", 256, 84)  # scales[16] + qs[64] + fp16 d, dmin: 2.625 bpw

    def __init__(self, slug: str, block_elements: int, block_bytes: int) -> None:
        self.slug = slug
        self.block_elements = block_elements
        self.block_bytes = block_bytes

    @property
    def bits_per_weight(self) -> float:
        return self.block_bytes * 8 / self.block_elements

    @property
    def encoding(self) -> WeightFormat:
        return _GGML_ENCODINGS[self]


_GGML_ENCODINGS: dict[GgmlType, WeightFormat] = {
    t: (
        WeightFormat(slug=f"ggml-{t.slug}", label=t.name, bits=t.block_bytes * 8 // t.block_elements)
        if t.block_elements == 1
        else WeightFormat(
            slug=f"ggml-{t.slug}",
            label=t.name,
            bits=t.block_bytes * 8 // t.block_elements,
            scales=ScaleLayout.GGML,
            group_size=t.block_elements,
            block_bytes=t.block_bytes,
        )
    )
    for t in GgmlType
}


class GgufFileType(Enum):
    """A llama-quantize file type: its default tensor type; `gguf_tensor_type` applies the per-tensor mix.

    A mix has no single bits-per-weight: it depends on the model's shape (how much of it is attn_v, ffn_down and the
    output head). Computed here, all 2-D tensors, F32 norms, no GGUF header or tokenizer: on Llama-2-7B Q8_0 8.50,
    Q6_K 6.56, Q5_K_M 5.68, Q5_K_S 5.52, Q4_K_M 4.84, Q4_K_S 4.58, Q4_0 4.54, Q3_K_M 3.91, Q2_K 3.01 bits per
    weight (the often quoted ~5.69 / ~4.85 / ~3.91 are these Llama-2-7B figures; Q2_K's 2.63 is the bare block);
    on Llama-3-8B Q4_K_M 4.575 GiB, Q5_K_M 5.332 GiB, matching llama-quantize's own table (4.58G, 5.33G).
    `WeightFormat.bits_per_weight` of a gguf-* format is its default type's block figure only.
    """

    F16 = ("f16", GgmlType.F16)
    Q8_0 = ("q8_0", GgmlType.Q8_0)
    Q6_K = ("q6_k", GgmlType.Q6_K)
    Q5_K_M = ("q5_k_m", GgmlType.Q5_K)
    Q5_K_S = ("q5_k_s", GgmlType.Q5_K)
    Q4_K_M = ("q4_k_m", GgmlType.Q4_K)
    Q4_K_S = ("q4_k_s", GgmlType.Q4_K)
    Q4_0 = ("q4_0", GgmlType.Q4_0)
    Q3_K_M = ("q3_k_m", GgmlType.Q3_K)
    Q2_K = ("q2_k", GgmlType.Q2_K)

    def __init__(self, slug: str, base: GgmlType) -> None:
        self.slug = slug
        self.base = base


class _Category(Enum):
    TOKEN_EMBD = "token_embd"  # noqa: S105 (a tensor name, not a secret)
    OUTPUT = "output"
    ATTN_Q = "attn_q"
    ATTN_K = "attn_k"
    ATTN_V = "attn_v"
    ATTN_OUTPUT = "attn_output"
    FFN_GATE = "ffn_gate"
    FFN_UP = "ffn_up"
    FFN_DOWN = "ffn_down"
    OTHER = "other"  # MLA projections (attn_q_a/q_b/kv_a_mqa/k_b/v_b): the file type's default


_CATEGORY_BY_NAME: dict[str, _Category] = {
    "embed_tokens": _Category.TOKEN_EMBD,
    "lm_head": _Category.OUTPUT,
    "q_proj": _Category.ATTN_Q,
    "k_proj": _Category.ATTN_K,
    "v_proj": _Category.ATTN_V,
    "o_proj": _Category.ATTN_OUTPUT,
    "gate_proj": _Category.FFN_GATE,
    "up_proj": _Category.FFN_UP,
    "down_proj": _Category.FFN_DOWN,
}

# llama.cpp tensor_type_fallback: k-quants need a row length divisible by 256.
_GGUF_FALLBACK: dict[GgmlType, GgmlType] = {
    GgmlType.Q2_K: GgmlType.Q4_0,
    GgmlType.Q3_K: GgmlType.Q4_0,
    GgmlType.Q4_K: GgmlType.Q5_0,
    GgmlType.Q5_K: GgmlType.Q5_1,
    GgmlType.Q6_K: GgmlType.Q8_0,
}


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's use_more_bits: the first and last eighth of the layers and every third layer between."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def gguf_tensor_type(
    ftype: GgufFileType, tensor: TensorSpec, *, layer_index: int | None, model: ModelFacts
) -> GgmlType | None:
    """The tensor type llama-quantize gives `tensor` in a file of type `ftype` (None: not in the GGUF).

    Follows llama.cpp src/llama-quant.cpp (llama_tensor_get_type_impl and tensor_type_fallback) for the file types
    offered here: 1-D tensors, norms and the router (ffn_gate_inp) are F32; the output head (or, with tied embeddings,
    the token embeddings) is Q6_K unless the file type is Q8_0; the _M mixes move attn_v and ffn_down to Q6_K in the
    layers `use_more_bits` picks; Q4_K_S, Q3_K_M and Q2_K raise attn_v, ffn_down and attn_output as llama.cpp does;
    8-expert models (Mixtral) get attn_k/attn_v in Q8_0; 70B Llama-family models (80 layers, GQA) raise attn_v.
    Not modelled: Falcon's own rules, imatrix-only variants, fused qkv tensors (we list q/k/v apart), the split
    attn_k_b/attn_v_b of MLA (taken as the default type). The vision tower lives in a separate mmproj file.
    """
    if tensor.role is Role.VISION:
        return None
    if tensor.role in (Role.NORM, Role.BIAS, Role.ROUTER) or tensor.cols == 1:
        return GgmlType.F32
    if ftype is GgufFileType.F16:
        return GgmlType.F16
    base = ftype.base
    category = _CATEGORY_BY_NAME.get(tensor.name.rsplit(".", 1)[-1], _Category.OTHER)
    i = layer_index if layer_index is not None else 0
    n = model.num_layers
    new = base
    if category is _Category.OUTPUT or (model.tied_embeddings and category is _Category.TOKEN_EMBD):
        if tensor.cols % base.block_elements:
            new = GgmlType.Q8_0
        elif base is not GgmlType.Q8_0:
            new = GgmlType.Q6_K
    elif category is _Category.ATTN_V:
        if ftype is GgufFileType.Q2_K:
            new = GgmlType.Q4_K if model.gqa_ratio >= 4 else GgmlType.Q3_K
        elif ftype is GgufFileType.Q3_K_M:
            new = GgmlType.Q5_K if i < 2 else GgmlType.Q4_K
        elif ftype in (GgufFileType.Q4_K_M, GgufFileType.Q5_K_M) and _use_more_bits(i, n):
            new = GgmlType.Q6_K
        elif ftype is GgufFileType.Q4_K_S and i < 4:
            new = GgmlType.Q5_K
        if model.llama_70b and new in (GgmlType.Q3_K, GgmlType.Q4_K):
            new = GgmlType.Q5_K
        if model.experts == 8:
            new = GgmlType.Q8_0
    elif category is _Category.ATTN_K:
        if model.experts == 8:
            new = GgmlType.Q8_0
    elif category is _Category.FFN_DOWN:
        if ftype is GgufFileType.Q2_K:
            new = GgmlType.Q3_K
        elif ftype is GgufFileType.Q3_K_M:
            new = GgmlType.Q5_K if i < n // 16 else GgmlType.Q4_K
        elif ftype in (GgufFileType.Q4_K_M, GgufFileType.Q5_K_M) and _use_more_bits(i, n):
            new = GgmlType.Q6_K
        elif ftype is GgufFileType.Q4_K_S and i < n // 8:
            new = GgmlType.Q5_K
    elif category is _Category.ATTN_OUTPUT:
        if model.experts == 8:
            if ftype in (GgufFileType.Q2_K, GgufFileType.Q3_K_M, GgufFileType.Q4_K_S, GgufFileType.Q4_K_M):
                new = GgmlType.Q5_K
        elif ftype is GgufFileType.Q2_K:
            new = GgmlType.Q3_K
        elif ftype is GgufFileType.Q3_K_M:
            new = GgmlType.Q4_K
    if tensor.cols % new.block_elements:
        fallback = _GGUF_FALLBACK.get(new)
        new = fallback if fallback is not None and tensor.cols % fallback.block_elements == 0 else GgmlType.F16
    return new


def _gguf(ftype: GgufFileType, label: str) -> WeightFormat:
    base = ftype.base
    if base.block_elements == 1:
        return WeightFormat(slug=f"gguf-{ftype.slug}", label=label, bits=base.block_bytes * 8, gguf=ftype)
    return WeightFormat(
        slug=f"gguf-{ftype.slug}",
        label=label,
        bits=base.block_bytes * 8 // base.block_elements,
        scales=ScaleLayout.GGML,
        group_size=base.block_elements,
        block_bytes=base.block_bytes,
        gguf=ftype,
    )


# --- the registry ------------------------------------------------------------------------------------------------

PLAIN_FORMATS: dict[str, WeightFormat] = {
    dtype.slug: WeightFormat(slug=dtype.slug, label=dtype.slug.upper(), bits=dtype.bits, dense_dtype=dtype)
    for dtype in (DType.FP32, DType.FP16, DType.BF16)
}


def _int4_group(slug: str, label: str, *, act_order: bool = False) -> WeightFormat:
    """AWQ/GPTQ INT4, group 128: a 16-bit scale and a packed 4-bit zero per group (+ g_idx with act-order)."""
    return WeightFormat(
        slug=slug,
        label=label,
        bits=DType.INT4.bits,
        scales=ScaleLayout.GROUP,
        scale_bits=FP16_BITS,
        zero_bits=DType.INT4.bits,
        act_order=act_order,
    )


BNB_BLOCK = 64  # transformers quantises bitsandbytes 4-bit weights in blocks of 64
BNB_NESTED_BLOCK = 256  # double quantisation: one FP32 scale per 256 8-bit absmax values
BNB_4BIT_CODE_BITS = 16 * FP32_BITS  # quant_map: the 16-entry NF4/FP4 code book, fp32, stored with every weight
BNB_NESTED_CODE_BITS = 256 * FP32_BITS  # nested_quant_map: the 256-entry 8-bit dynamic map, fp32


def _bnb_4bit(quant_type: str, *, double_quant: bool) -> WeightFormat:
    """bitsandbytes 4-bit (transformers' Params4bit): packed 4-bit weights, an absmax per 64 flattened elements.

    Serialised per weight: `absmax` (fp32 per block, or uint8 with double quantisation), `quant_map` (16 fp32),
    with double quantisation `nested_absmax` (fp32 per 256 blocks) and `nested_quant_map` (256 fp32); the small
    JSON `quant_state.bitsandbytes__<type>` tensor (about 100–200 bytes) is not counted.
    """
    name = quant_type.upper()
    if double_quant:
        return WeightFormat(
            slug=f"{quant_type}-double-quant",
            label=f"bitsandbytes {name} (8-bit absmax per 64 + FP32 per 256 blocks)",
            bits=DType.INT4.bits,
            scales=ScaleLayout.FLAT_BLOCK,
            group_size=BNB_BLOCK,
            scale_bits=DType.INT8.bits,
            nested_group=BNB_NESTED_BLOCK,
            tensor_meta_bits=BNB_4BIT_CODE_BITS + BNB_NESTED_CODE_BITS,
        )
    return WeightFormat(
        slug=quant_type,
        label=f"bitsandbytes {name} (FP32 absmax per 64)",
        bits=DType.INT4.bits,
        scales=ScaleLayout.FLAT_BLOCK,
        group_size=BNB_BLOCK,
        scale_bits=FP32_BITS,
        tensor_meta_bits=BNB_4BIT_CODE_BITS,
    )


MXFP4_GROUP = 32  # OCP microscaling: one E8M0 scale per 32 elements
NVFP4_GROUP = 16  # one FP8 E4M3 scale per 16 elements

FORMATS: dict[str, WeightFormat] = {
    **PLAIN_FORMATS,
    "fp8": WeightFormat(
        slug="fp8", label="FP8 E4M3 (per-tensor scales)", bits=DType.FP8.bits, scales=ScaleLayout.PER_TENSOR
    ),
    "fp8-block": WeightFormat(
        slug="fp8-block", label="FP8 E4M3 (128x128 block scales)", bits=DType.FP8.bits, scales=ScaleLayout.BLOCK
    ),
    "fp8-channel": WeightFormat(
        slug="fp8-channel",
        label="FP8 E4M3 (per-channel 16-bit scales, W8A8 dynamic)",
        bits=DType.FP8.bits,
        scales=ScaleLayout.PER_CHANNEL,
        scale_bits=SCALE16_BITS,
    ),
    "int8": WeightFormat(
        slug="int8", label="INT8 (per-channel scales)", bits=DType.INT8.bits, scales=ScaleLayout.PER_CHANNEL
    ),
    "int4": _int4_group("int4", "INT4 AWQ/GPTQ, group 128"),
    "awq-int4": _int4_group("awq-int4", "AWQ INT4, group 128 (FP16 scale + 4-bit zero)"),
    "gptq-int4": _int4_group("gptq-int4", "GPTQ INT4, group 128 (FP16 scale + 4-bit zero)"),
    "gptq-int4-act-order": _int4_group(
        "gptq-int4-act-order", "GPTQ INT4, group 128, act-order (+ int32 g_idx)", act_order=True
    ),
    "nf4": _bnb_4bit("nf4", double_quant=False),
    "nf4-double-quant": _bnb_4bit("nf4", double_quant=True),
    "bnb-int8": WeightFormat(
        slug="bnb-int8",
        label="bitsandbytes LLM.int8 (FP32 scale per row)",
        bits=DType.INT8.bits,
        scales=ScaleLayout.PER_CHANNEL,
        scale_bits=FP32_BITS,
    ),
    "nvfp4": WeightFormat(
        slug="nvfp4",
        label="NVFP4 (FP4 + FP8 scale per 16 + FP32 global scales)",
        bits=DType.INT4.bits,
        scales=ScaleLayout.GROUP,
        group_size=NVFP4_GROUP,
        scale_bits=FP8_BITS,
        tensor_meta_bits=2 * FP32_BITS,
    ),  # weight + input global scale
    "mxfp4": WeightFormat(
        slug="mxfp4",
        label="MXFP4 routed experts (FP4 + E8M0 scale per 32), rest 16-bit",
        bits=DType.INT4.bits,
        scales=ScaleLayout.GROUP,
        group_size=MXFP4_GROUP,
        scale_bits=FP8_BITS,
        targets=frozenset({Role.EXPERT}),
    ),
    "gguf-f16": _gguf(GgufFileType.F16, "GGUF F16 (norms and router F32)"),
    "gguf-q8_0": _gguf(GgufFileType.Q8_0, "GGUF Q8_0 (8.5 bpw)"),
    "gguf-q6_k": _gguf(GgufFileType.Q6_K, "GGUF Q6_K (6.5625 bpw)"),
    "gguf-q5_k_m": _gguf(GgufFileType.Q5_K_M, "GGUF Q5_K_M (Q5_K 5.5 bpw, Q6_K attn_v/ffn_down/output; ~5.7)"),
    "gguf-q5_k_s": _gguf(GgufFileType.Q5_K_S, "GGUF Q5_K_S (Q5_K 5.5 bpw, Q6_K output)"),
    "gguf-q4_k_m": _gguf(GgufFileType.Q4_K_M, "GGUF Q4_K_M (Q4_K 4.5 bpw, Q6_K attn_v/ffn_down/output; ~4.85)"),
    "gguf-q4_k_s": _gguf(GgufFileType.Q4_K_S, "GGUF Q4_K_S (Q4_K 4.5 bpw, some Q5_K, Q6_K output)"),
    "gguf-q4_0": _gguf(GgufFileType.Q4_0, "GGUF Q4_0 (4.5 bpw, Q6_K output)"),
    "gguf-q3_k_m": _gguf(GgufFileType.Q3_K_M, "GGUF Q3_K_M (Q3_K 3.4375 bpw with Q4_K/Q5_K; ~3.9)"),
    "gguf-q2_k": _gguf(GgufFileType.Q2_K, "GGUF Q2_K (Q2_K 2.625 bpw with Q3_K/Q4_K; ~3)"),
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


# --- quantization_config -----------------------------------------------------------------------------------------


def _refuse(method: str, field: str, problem: str) -> SizingError:
    """UNSUPPORTED_QUANTIZATION naming the method and the config field that cannot be read."""
    return SizingError(
        code=SizingErrorCode.UNSUPPORTED_QUANTIZATION,
        message=f"{method} quantization_config field {field}: {problem}; choose a weight format explicitly",
        extra={"quant_method": method, "field": field},
    )


def _patterns(quant: Mapping[str, Any], method: str, *keys: str) -> tuple[str, ...]:
    """Module patterns from the first present key of `keys` (a list of names/regexes, or one name)."""
    for key in keys:
        value = quant.get(key)
        if value is None:
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise _refuse(method, key, f"must be a list of module names, got {value!r}")
        for item in items:
            try:
                _pattern_regex(item)
            except re.error as exc:
                raise _refuse(method, key, f"pattern {item!r} is not a valid regular expression ({exc})") from None
        return tuple(items)
    return ()


def _positive_int(value: Any, method: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _refuse(method, field, f"must be a positive integer, got {value!r}")
    number: int = value
    return number


def _fp8_format(quant: Mapping[str, Any]) -> WeightFormat:
    """`quant_method: fp8` (transformers FineGrainedFP8, Qwen/DeepSeek FP8 checkpoints, vLLM Fp8Config).

    Block scales (`weight_scale_inv`) are counted as FP32, as DeepSeek-V3 stores them; Qwen's FP8 checkpoints store
    them in BF16 (2 bytes less per 128x128 block, under 0.02% of the weights).
    """
    exclude = _patterns(quant, "fp8", "modules_to_not_convert", "ignored_layers")
    block = quant.get("weight_block_size")
    if block:
        if not isinstance(block, list) or len(block) != 2:
            raise _refuse("fp8", "weight_block_size", f"must be [rows, cols], got {block!r}")
        rows, cols = (_positive_int(side, "fp8", "weight_block_size") for side in block)
        return WeightFormat(
            slug="fp8-block",
            label=f"FP8 E4M3 ({rows}x{cols} block scales)",
            bits=DType.FP8.bits,
            scales=ScaleLayout.BLOCK,
            block=(rows, cols),
            exclude=exclude,
        )
    if str(quant.get("activation_scheme", "static")).lower() == "dynamic":
        return WeightFormat(
            slug="fp8",
            label="FP8 E4M3 (per-tensor scales, dynamic activations)",
            bits=DType.FP8.bits,
            scales=ScaleLayout.PER_TENSOR,
            input_scale=False,
            exclude=exclude,
        )
    return replace(FORMATS["fp8"], exclude=exclude)


def _modelopt_format(quant: Mapping[str, Any]) -> WeightFormat:
    """NVIDIA ModelOpt (hf_quant_config.json or `quant_method: modelopt`): FP8 per-tensor or NVFP4, `exclude_modules`.

    FP8: `weight` E4M3, `weight_scale` and `input_scale` FP32 scalars. NVFP4: `weight` two FP4 per byte,
    `weight_scale` FP8 per 16 inputs, `weight_scale_2` and `input_scale` FP32 scalars.
    """
    algo = str(quant.get("quant_algo") or "").upper()
    exclude = _patterns(quant, "modelopt", "exclude_modules", "ignore")
    if algo == "FP8":
        return replace(FORMATS["fp8"], exclude=exclude)
    if algo == "NVFP4":
        group = quant.get("group_size", NVFP4_GROUP)
        if group != NVFP4_GROUP:
            raise _refuse("modelopt", "group_size", f"NVFP4 uses groups of {NVFP4_GROUP}, got {group!r}")
        return replace(FORMATS["nvfp4"], exclude=exclude)
    raise _refuse("modelopt", "quant_algo", f"{algo or '(none)'!r} is not modelled (FP8 and NVFP4 are)")


def _awq_gptq_format(method: str, quant: Mapping[str, Any]) -> WeightFormat:
    """AWQ / GPTQ: INT4 (or INT8) per group of inputs, an FP16 scale and a packed zero per group.

    GPTQ `desc_act` adds an int32 g_idx per input feature (AutoGPTQ also stores g_idx without act-order; vLLM's
    Marlin kernels drop it then, so it is not counted). AWQ with `zero_point: false` stores no zeros.
    """
    bits = quant.get("bits") or quant.get("w_bit") or 4
    group = quant.get("group_size") or quant.get("q_group_size") or 128
    for field, value in (("bits", bits), ("group_size", group)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _refuse(method, field, f"must be an integer, got {value!r}")
    act_order = method == "gptq" and bool(quant.get("desc_act"))
    channel = method == "gptq" and group == -1  # GPTQ group_size -1: one scale and zero per output channel
    if bits not in (4, 8) or (group <= 0 and not channel):
        raise SizingError(
            code=SizingErrorCode.UNSUPPORTED_QUANTIZATION,
            message=f"{method.upper()} with {bits} bits and group size {group} is not modelled",
            extra={"quant_method": method},
        )
    if method == "gptq" and quant.get("dynamic"):
        raise _refuse(method, "dynamic", "per-module bit widths and group sizes are not modelled")
    zero = bits if method == "gptq" or quant.get("zero_point", True) else 0
    include: tuple[str, ...] = ()
    blocks = quant.get("modules_in_block_to_quantize")
    if blocks:
        if not isinstance(blocks, list) or not all(isinstance(b, list | str) for b in blocks):
            raise _refuse(method, "modules_in_block_to_quantize", f"must be a list of module lists, got {blocks!r}")
        include = tuple(name for b in blocks for name in ([b] if isinstance(b, str) else b))
    targets = LINEAR_ROLES | {Role.LM_HEAD} if method == "gptq" and quant.get("lm_head") else LINEAR_ROLES
    exclude = _patterns(quant, method, "modules_to_not_convert")
    if channel:
        return WeightFormat(
            slug=f"gptq-int{bits}-channel",
            label=f"GPTQ INT{bits}, per-channel",
            bits=bits,
            scales=ScaleLayout.PER_CHANNEL,
            scale_bits=FP16_BITS,
            zero_bits=zero,
            exclude=exclude,
            include=include,
            targets=targets,
        )
    return WeightFormat(
        slug=f"{method}-int{bits}-g{group}" + ("-act-order" if act_order else ""),
        label=f"{method.upper()} INT{bits}, group {group}" + (", act-order" if act_order else ""),
        bits=bits,
        scales=ScaleLayout.GROUP,
        group_size=group,
        scale_bits=FP16_BITS,
        zero_bits=zero,
        act_order=act_order,
        exclude=exclude,
        include=include,
        targets=targets,
    )


def _bitsandbytes_format(quant: Mapping[str, Any]) -> WeightFormat:
    """bitsandbytes (transformers BitsAndBytesConfig): 4-bit NF4/FP4 or LLM.int8, `llm_int8_skip_modules`.

    LLM.int8 stores int8 weights and `SCB`, an FP32 absmax per output row.
    """
    method = "bitsandbytes"
    four = bool(quant.get("load_in_4bit") or quant.get("_load_in_4bit"))
    eight = bool(quant.get("load_in_8bit") or quant.get("_load_in_8bit"))
    if four == eight:
        raise _refuse(method, "load_in_4bit", "exactly one of load_in_4bit and load_in_8bit must be true")
    if quant.get("llm_int8_has_fp16_weight"):
        raise _refuse(method, "llm_int8_has_fp16_weight", "16-bit weights kept beside int8 are not modelled")
    exclude = _patterns(quant, method, "llm_int8_skip_modules")
    if eight:
        return replace(FORMATS["bnb-int8"], exclude=exclude)
    quant_type = str(quant.get("bnb_4bit_quant_type") or "fp4").lower()  # transformers' default is fp4
    if quant_type not in ("nf4", "fp4"):
        raise _refuse(method, "bnb_4bit_quant_type", f"{quant_type!r} is not nf4 or fp4")
    fmt = _bnb_4bit(quant_type, double_quant=bool(quant.get("bnb_4bit_use_double_quant")))
    return replace(fmt, exclude=exclude)


def _mxfp4_format(quant: Mapping[str, Any]) -> WeightFormat:
    """`quant_method: mxfp4` (gpt-oss): routed experts as `<proj>_blocks` (two FP4 per byte) and `<proj>_scales`
    (one E8M0 byte per 32 inputs); attention, router, embeddings and head stay BF16 (`modules_to_not_convert`)."""
    return replace(FORMATS["mxfp4"], exclude=_patterns(quant, "mxfp4", "modules_to_not_convert"))


_CT_FORMATS = (
    "pack-quantized",
    "float-quantized",
    "int-quantized",
    "naive-quantized",
    "nvfp4-pack-quantized",
    "mxfp4-pack-quantized",
)
_CT_STRATEGIES = ("tensor", "channel", "group", "block", "tensor_group")


def _static_scale_bits(args: Any, method: str, field: str) -> int:
    """Bits a compressed-tensors activation scheme stores per linear: scale (+ zero point) when static."""
    if args is None:
        return 0
    if not isinstance(args, Mapping):
        raise _refuse(method, field, f"must be an object, got {args!r}")
    dynamic = args.get("dynamic", False)
    fp4 = str(args.get("type", "int")).lower() == "float" and args.get("num_bits") == 4
    if fp4:
        return FP32_BITS  # NVFP4 activations ("dynamic": "local") store an FP32 input_global_scale
    if dynamic is True:
        return 0
    zero = 0 if args.get("symmetric", True) else DType.INT8.bits
    return SCALE16_BITS + zero


def _ct_encoding(group: str, scheme: Mapping[str, Any], top_format: Any) -> WeightFormat | None:
    """One compressed-tensors config group's weight encoding (None when it leaves weights unquantised).

    Scales take the model's 16-bit dtype (compressed-tensors initialises them as the weight's dtype), except FP4:
    FP8 E4M3 scales and an FP32 `weight_global_scale`. pack-quantized stores the weights packed in int32 plus
    `weight_shape` (2 x int64) and packs asymmetric zero points too; the other formats store int8/fp8 values.
    Symmetric schemes store no zero point. actorder "group" adds `weight_g_idx` (int32 per input).
    """
    method = "compressed-tensors"
    where = f"config_groups.{group}"
    weights = scheme.get("weights")
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise _refuse(method, f"{where}.weights", f"must be an object, got {weights!r}")
    fmt_name = str(scheme.get("format") or top_format or "").lower()
    if fmt_name not in _CT_FORMATS:
        field = f"{where}.format" if scheme.get("format") else "format"
        raise _refuse(method, field, f"{fmt_name or '(none)'!r} is not modelled ({', '.join(_CT_FORMATS)} are)")
    num_bits: Any = weights.get("num_bits")  # a JSON value: checked against the modelled widths below
    qtype = str(weights.get("type", "int")).lower()
    strategy = str(weights.get("strategy", "tensor")).lower()
    symmetric = bool(weights.get("symmetric", True))
    if qtype not in ("int", "float"):
        raise _refuse(method, f"{where}.weights.type", f"{qtype!r} is not int or float")
    if (qtype, num_bits) not in (("int", 4), ("int", 8), ("float", 8), ("float", 4)):
        raise _refuse(
            method,
            f"{where}.weights.num_bits",
            f"{num_bits!r}-bit {qtype} weights are not modelled (int 4/8, float 8/4 are)",
        )
    if strategy not in _CT_STRATEGIES:
        raise _refuse(
            method, f"{where}.weights.strategy", f"{strategy!r} is not modelled ({', '.join(_CT_STRATEGIES)} are)"
        )
    fp4 = qtype == "float" and num_bits == 4
    if fp4 != (fmt_name in ("nvfp4-pack-quantized", "mxfp4-pack-quantized")):
        raise _refuse(method, f"{where}.format", f"{fmt_name!r} does not store {num_bits}-bit {qtype} weights")
    packed = fmt_name == "pack-quantized"
    storage_bits = num_bits if packed or fp4 else DType.INT8.bits  # int-/naive-/float-quantized: one byte each
    scale_bits = FP8_BITS if fp4 else SCALE16_BITS
    zero_bits = 0 if symmetric else (num_bits if packed and strategy in ("group", "channel") else DType.INT8.bits)
    meta = INT64_BITS * 2 if packed else 0  # weight_shape
    meta += _static_scale_bits(scheme.get("input_activations"), method, f"{where}.input_activations")
    meta += _static_scale_bits(scheme.get("output_activations"), method, f"{where}.output_activations")
    name = f"{qtype.upper()}{num_bits}" if not fp4 else ("NVFP4" if fmt_name.startswith("nvfp4") else "MXFP4")
    common: dict[str, Any] = {"bits": storage_bits, "scale_bits": scale_bits, "zero_bits": zero_bits}
    if strategy == "tensor":
        meta += zero_bits
        return WeightFormat(
            slug=f"ct-{name.lower()}-tensor",
            label=f"compressed-tensors {name} (per-tensor scale)",
            scales=ScaleLayout.PER_TENSOR,
            input_scale=False,
            tensor_meta_bits=meta,
            **{**common, "zero_bits": 0},
        )
    if strategy == "channel":
        return WeightFormat(
            slug=f"ct-{name.lower()}-channel",
            label=f"compressed-tensors {name} (per-channel scales)",
            scales=ScaleLayout.PER_CHANNEL,
            tensor_meta_bits=meta,
            **common,
        )
    if strategy == "block":
        structure = weights.get("block_structure")
        if isinstance(structure, str) and "x" in structure:
            structure = [int(side) for side in structure.lower().split("x")]
        if not isinstance(structure, list) or len(structure) != 2:
            raise _refuse(method, f"{where}.weights.block_structure", f"must be [rows, cols], got {structure!r}")
        rows, cols = (_positive_int(side, method, f"{where}.weights.block_structure") for side in structure)
        return WeightFormat(
            slug=f"ct-{name.lower()}-block{rows}x{cols}",
            label=f"compressed-tensors {name} ({rows}x{cols} block scales)",
            scales=ScaleLayout.BLOCK,
            block=(rows, cols),
            tensor_meta_bits=meta,
            **common,
        )
    size = _positive_int(weights.get("group_size"), method, f"{where}.weights.group_size")
    if strategy == "tensor_group":
        meta += FP32_BITS  # weight_global_scale
    act_order = str(weights.get("actorder") or "").lower() == "group"
    return WeightFormat(
        slug=f"ct-{name.lower()}-g{size}" + ("-act-order" if act_order else ""),
        label=f"compressed-tensors {name}, group {size}" + (", act-order" if act_order else ""),
        scales=ScaleLayout.GROUP,
        group_size=size,
        act_order=act_order,
        tensor_meta_bits=meta,
        **common,
    )


def _compressed_tensors_format(quant: Mapping[str, Any]) -> WeightFormat:
    """compressed-tensors (llm-compressor): `config_groups` → weights, format; `ignore` kept in 16 bits.

    Targets: `Linear` (every attention/MLP/expert linear), module names, or `re:` regexes. The most specific group
    wins (name, then regex, then `Linear`); a linear no group targets stays 16-bit. The KV-cache `k_scale`/`v_scale`
    scalars (`kv_cache_scheme`) are not counted (4 bytes per layer).
    """
    method = "compressed-tensors"
    config_groups = quant.get("config_groups")
    if not isinstance(config_groups, Mapping) or not config_groups:
        raise _refuse(method, "config_groups", "is missing or empty: nothing says how the weights are stored")
    sparsity = quant.get("sparsity_config")
    if isinstance(sparsity, Mapping) and sparsity and str(sparsity.get("format", "dense")).lower() != "dense":
        raise _refuse(method, "sparsity_config", f"sparse format {sparsity.get('format')!r} is not modelled")
    if quant.get("transform_config"):
        raise _refuse(method, "transform_config", "rotation/Hadamard transforms are not modelled")
    top_format = quant.get("format")
    groups: list[FormatGroup] = []
    for name, scheme in config_groups.items():
        if not isinstance(scheme, Mapping):
            raise _refuse(method, f"config_groups.{name}", f"must be an object, got {scheme!r}")
        targets = scheme.get("targets")
        if isinstance(targets, str):
            targets = [targets]
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise _refuse(method, f"config_groups.{name}.targets", f"must be a list of targets, got {targets!r}")
        for target in targets:
            if target != "Linear" and not target.startswith("re:") and "." not in target and target[:1].isupper():
                raise _refuse(
                    method,
                    f"config_groups.{name}.targets",
                    f"module class {target!r} is not modelled (Linear, module names and re: patterns are)",
                )
        _patterns({f"config_groups.{name}.targets": targets}, method, f"config_groups.{name}.targets")
        groups.append(FormatGroup(targets=tuple(targets), encoding=_ct_encoding(str(name), scheme, top_format)))
    ignore = _patterns(quant, method, "ignore")
    if len(groups) == 1 and groups[0].targets == ("Linear",) and groups[0].encoding is not None:
        return replace(groups[0].encoding, exclude=ignore)
    encodings = [group.encoding for group in groups if group.encoding is not None]
    main = encodings[0] if encodings else PLAIN_FORMATS[DType.BF16.slug]
    labels = " + ".join(dict.fromkeys(e.label.removeprefix("compressed-tensors ") for e in encodings)) or "none"
    return replace(
        main,
        slug="ct-mixed",
        label=f"compressed-tensors groups: {labels}",
        dense_dtype=None,
        groups=tuple(groups),
        exclude=ignore,
    )


def format_from_quantization_config(quant: Mapping[str, Any]) -> WeightFormat:
    """Read a config.json `quantization_config` (or a ModelOpt hf_quant_config) into a WeightFormat.

    Raises SizingError(UNSUPPORTED_QUANTIZATION) naming the method, and the field when one cannot be read.
    """
    method = str(quant.get("quant_method") or quant.get("quant_algo") or "").lower()
    if method == "fp8":
        return _fp8_format(quant)
    if method == "modelopt":
        return _modelopt_format(quant)
    if method == "nvfp4":  # a bare ModelOpt `quantization` object: {"quant_algo": "NVFP4", ...}
        return _modelopt_format(quant)
    if method in ("awq", "gptq"):
        return _awq_gptq_format(method, quant)
    if method == "compressed-tensors":
        return _compressed_tensors_format(quant)
    if method == "bitsandbytes":
        return _bitsandbytes_format(quant)
    if method == "mxfp4":
        return _mxfp4_format(quant)
    raise SizingError(
        code=SizingErrorCode.UNSUPPORTED_QUANTIZATION,
        message=(
            f"quantization_config quant_method {method or '(none)'!r} is not modelled yet; "
            f"choose a weight format explicitly ({', '.join(FORMATS)})"
        ),
        extra={"quant_method": method},
    )

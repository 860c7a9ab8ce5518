"""The per-layer table of an architecture: what each decoder layer's attention and MLP are.

Parsers fill it from a config's own fields (`layer_types`, `sliding_window`, `first_k_dense_replace`,
`kv_lora_rank`, `num_experts_per_tok`, ...); parameters, weight bytes and the KV cache are sums over it.

>>> attention = AttentionSpec(num_heads=32, num_kv_heads=8, head_dim=128)
>>> attention.kv_elements_per_token(tp=1), attention.kv_elements_per_token(tp=16)
(2048, 256)
>>> AttentionSpec(kind=AttentionKind.MLA, num_heads=128, num_kv_heads=1, head_dim=192, kv_lora_rank=512,
...               qk_rope_head_dim=64).kv_elements_per_token(tp=8)  # the latent is not split by TP
576
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum

K_AND_V = 2  # one key and one value vector per KV head


class AttentionKind(Enum):
    FULL = "full"  # keeps every token of the sequence
    SLIDING = "sliding"  # keeps at most `window` tokens of the sequence (also Llama-4's chunked local attention)
    MLA = "mla"  # multi-head latent attention: one compressed latent per token, no heads


class MlpKind(Enum):
    DENSE = "dense"
    MOE = "moe"


@dataclass(frozen=True, kw_only=True)
class AttentionSpec:
    """One layer's attention as the KV cache and the weights see it."""

    kind: AttentionKind = AttentionKind.FULL
    num_heads: int
    num_kv_heads: int
    head_dim: int  # q/k head size (MLA: qk_nope_head_dim + qk_rope_head_dim)
    v_head_dim: int | None = None  # when V's head size differs from K's
    window: int | None = None  # sliding layers only
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False  # a per-head RMSNorm on q and k (Qwen3, Gemma3)
    sinks: bool = False  # a learned per-head attention sink (gpt-oss)
    # MLA (DeepSeek-V2/V3): q low-rank path (None: one q projection), KV latent and its RoPE part.
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0

    def __post_init__(self) -> None:
        # Specs are hashed constantly (layer counts, caches): compute it once.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self))))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    @property
    def value_head_dim(self) -> int:
        return self.v_head_dim if self.v_head_dim is not None else self.head_dim

    def kv_heads_per_rank(self, tp: int) -> int:
        """KV heads one TP rank stores: split when kv_heads ≥ tp, else one each (replicated)."""
        return max(1, self.num_kv_heads // tp)

    def kv_elements_per_token(self, *, tp: int) -> int:
        """Elements this layer caches per token on one TP rank."""
        if self.kind is AttentionKind.MLA:
            return self.kv_lora_rank + self.qk_rope_head_dim  # the latent: every rank holds all of it
        return self.kv_heads_per_rank(tp) * (self.head_dim + self.value_head_dim)

    def cached_tokens(self, tokens: int) -> int:
        """Tokens of a `tokens`-long sequence this layer keeps."""
        if self.kind is AttentionKind.SLIDING and self.window is not None:
            return min(tokens, self.window)
        return tokens


@dataclass(frozen=True, kw_only=True)
class MlpSpec:
    """One layer's feed-forward block."""

    kind: MlpKind = MlpKind.DENSE
    intermediate_size: int  # dense: the MLP width; MoE: each routed expert's width
    gated: bool = True  # SwiGLU/GeGLU: gate, up and down projections
    bias: bool = False
    num_experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0  # always-active experts, each `shared_intermediate_size` wide
    shared_intermediate_size: int = 0
    shared_expert_gate: bool = False  # Qwen2-MoE: a sigmoid gate (h -> 1) on the shared expert
    router_bias: bool = False  # gpt-oss router bias; DeepSeek-V3's e_score_correction_bias
    expert_bias: bool = False  # gpt-oss: each routed expert's gate/up bias (2 × width) and down bias (hidden)

    def __post_init__(self) -> None:
        # Specs are hashed constantly (layer counts, caches): compute it once.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self))))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]


@dataclass(frozen=True, kw_only=True)
class LayerSpec:
    attention: AttentionSpec
    mlp: MlpSpec
    norms: int = 2  # hidden-size norm vectors (input and post-attention; Gemma-2/3 and GLM-4 have 4)

    def __post_init__(self) -> None:
        # Specs are hashed constantly (layer counts, caches): compute it once.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self))))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

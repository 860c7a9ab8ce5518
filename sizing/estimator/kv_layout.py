"""The KV cache of one pipeline stage on one TP rank: per-layer sizes, sliding windows, MLA latents,
paging, and vLLM's hybrid allocator (layers grouped by kind into groups that share one block pool).

>>> from sizing.estimator.layers import AttentionSpec
>>> full = AttentionSpec(num_heads=32, num_kv_heads=8, head_dim=128)
>>> layout = kv_layout((full,) * 32, kv_bits=16, tp=1, block_size=16)
>>> layout.bytes_per_token, layout.page_bytes, layout.group_size, len(layout.groups)
(131072, 65536, 32, 1)
>>> layout.sequence_bytes(2048, paged=False)  # 2048 tokens x 128 KiB = 256 MiB
268435456
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from sizing.estimator.layers import AttentionKind, AttentionSpec

# vLLM: when one kind of layer has fewer than 1.25x the layers of the other, all groups take the larger
# count (less padding); otherwise groups have the smaller count (kv_cache_utils, hybrid allocator).
VLLM_GROUP_PADDING_RATIO = 1.25


@dataclass(frozen=True, kw_only=True)
class KvGroup:
    """Layers of one attention kind that allocate blocks together (one vLLM KV-cache group)."""

    kind: AttentionKind
    window: int | None
    layers: int


@dataclass(frozen=True, kw_only=True)
class KvLayout:
    """The KV cache of a run of layers on one TP rank."""

    attentions: tuple[AttentionSpec, ...]
    kv_bits: int
    tp: int
    block_size: int
    bytes_per_token: int  # if every layer kept every token (sliding windows ignored)
    page_bytes: int  # one block of one layer, the largest layer's (vLLM pads smaller pages to it)
    group_size: int  # layers per vLLM KV-cache group
    groups: tuple[KvGroup, ...]

    @cached_property
    def has_sliding(self) -> bool:
        return any(a.kind is AttentionKind.SLIDING for a, _ in self._kinds)

    def layer_bytes_per_token(self, attention: AttentionSpec) -> int:
        return math.ceil(attention.kv_elements_per_token(tp=self.tp) * self.kv_bits / 8)

    @cached_property
    def _kinds(self) -> tuple[tuple[AttentionSpec, int], ...]:
        """Distinct attention specs with their layers' total bytes per token (a stack has one to three)."""
        totals: dict[AttentionSpec, int] = {}
        for attention in self.attentions:
            totals[attention] = totals.get(attention, 0) + self.layer_bytes_per_token(attention)
        return tuple(totals.items())

    def sequence_bytes(self, tokens: int, *, paged: bool) -> int:
        """Bytes one `tokens`-long sequence holds; sliding layers keep at most their window.

        Paged: whole blocks per layer, and a sliding window that does not start on a block boundary
        straddles one more block.
        """
        total = 0
        for attention, bytes_per_token in self._kinds:
            kept = attention.cached_tokens(tokens)
            if paged:
                straddle = self.block_size if kept < tokens else 0
                kept = math.ceil(kept / self.block_size) * self.block_size + straddle
            total += kept * bytes_per_token
        return total

    def blocks_per_sequence(self, tokens: int, *, batched_tokens: int) -> int:
        """vLLM blocks of the shared pool one `tokens`-long request needs at most, over all groups.

        Full attention: ceil(tokens / block). Sliding window: the window plus one prefill chunk of
        `batched_tokens`, capped at the request, plus one block (vLLM's SlidingWindowSpec).
        """
        blocks = 0
        for group in self.groups:
            if group.kind is AttentionKind.SLIDING and group.window is not None:
                kept = min(group.window - 1 + batched_tokens, tokens)
                blocks += math.ceil(kept / self.block_size) + 1
            else:
                blocks += math.ceil(tokens / self.block_size)
        return blocks

    def num_blocks(self, pool_bytes: int) -> int:
        """Blocks a pool of `pool_bytes` gives: each block is one page in each of `group_size` layer slots."""
        if pool_bytes <= 0 or not self.page_bytes:
            return 0
        return pool_bytes // (self.page_bytes * self.group_size)

    def capacity_tokens(self, num_blocks: int) -> int:
        """The token count vLLM logs as "GPU KV cache size": blocks shared by the groups, in tokens."""
        return num_blocks // max(1, len(self.groups)) * self.block_size


def kv_layout(attentions: tuple[AttentionSpec, ...], *, kv_bits: int, tp: int, block_size: int) -> KvLayout:
    """Lay out the KV cache of `attentions` (one per layer) on one TP rank."""
    per_layer = [math.ceil(a.kv_elements_per_token(tp=tp) * kv_bits / 8) for a in attentions]
    by_kind: dict[tuple[AttentionKind, int | None], int] = {}
    for attention in attentions:
        key = (attention.kind, attention.window if attention.kind is AttentionKind.SLIDING else None)
        by_kind[key] = by_kind.get(key, 0) + 1
    if by_kind:
        smallest, largest = min(by_kind.values()), max(by_kind.values())
        group_size = largest if largest < smallest * VLLM_GROUP_PADDING_RATIO else smallest
    else:
        group_size = 1
    groups: list[KvGroup] = []
    for (kind, window), count in by_kind.items():
        # vLLM deals a kind's layers into ceil(count / group_size) groups round-robin (layers[i::n]).
        n_groups = math.ceil(count / group_size)
        for index in range(n_groups):
            groups.append(KvGroup(kind=kind, window=window, layers=len(range(index, count, n_groups))))
    return KvLayout(
        attentions=attentions,
        kv_bits=kv_bits,
        tp=tp,
        block_size=block_size,
        bytes_per_token=sum(per_layer),
        page_bytes=max(per_layer, default=0) * block_size,
        group_size=group_size,
        groups=tuple(groups),
    )

"""The KV cache of one pipeline stage on one TP rank (DESIGN §5, §6, §7 vLLM): per-layer bytes, sliding windows,
MLA latents, paging, and vLLM's hybrid allocator (layers grouped into groups that share one block pool)."""

from __future__ import annotations

import pytest

from sizing.estimator.kv_layout import KvGroup, KvLayout, kv_layout
from sizing.estimator.layers import AttentionKind, AttentionSpec
from sizing.estimator.units import GiB


def _full(*, num_heads: int = 32, num_kv_heads: int = 8, head_dim: int = 128) -> AttentionSpec:
    return AttentionSpec(num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim)


def _sliding(window: int, *, num_heads: int = 64, num_kv_heads: int = 8, head_dim: int = 64) -> AttentionSpec:
    return AttentionSpec(
        kind=AttentionKind.SLIDING, num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim, window=window
    )


def _llama3_8b(*, tp: int = 1, kv_bits: int = 16) -> KvLayout:
    """meta-llama/Meta-Llama-3-8B: 32 full-attention layers, 8 KV heads of 128."""
    return kv_layout((_full(),) * 32, kv_bits=kv_bits, tp=tp, block_size=16)


def _deepseek_v3_mla() -> AttentionSpec:
    """deepseek-ai/DeepSeek-V3 attention: kv_lora_rank 512, qk_rope_head_dim 64, 128 heads of 128 + 64."""
    return AttentionSpec(
        kind=AttentionKind.MLA,
        num_heads=128,
        num_kv_heads=128,
        head_dim=192,
        v_head_dim=128,
        q_lora_rank=1536,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
    )


def _gpt_oss_like() -> KvLayout:
    """A gpt-oss-20b-like stack: 24 layers alternating sliding window 128 / full, 8 KV heads × 64, layer 0 sliding."""
    layers = tuple(_sliding(128) if index % 2 == 0 else _full(num_heads=64, head_dim=64) for index in range(24))
    return kv_layout(layers, kv_bits=16, tp=1, block_size=16)


def _gemma3_like() -> KvLayout:
    """A Gemma-3-27B-like stack: 62 layers, every 6th global (10 full), the rest sliding window 1024 (52);
    16 KV heads × 128."""
    layers = tuple(
        _full(num_kv_heads=16) if (index + 1) % 6 == 0 else _sliding(1024, num_heads=32, num_kv_heads=16, head_dim=128)
        for index in range(62)
    )
    return kv_layout(layers, kv_bits=16, tp=1, block_size=16)


def _two_kinds(sliding_layers: int, full_layers: int) -> KvLayout:
    layers = (_sliding(128),) * sliding_layers + (_full(num_heads=64, head_dim=64),) * full_layers
    return kv_layout(layers, kv_bits=16, tp=1, block_size=16)


# --- uniform full attention -------------------------------------------------------------------------------------


def test_llama3_8b_is_128_kib_per_token_in_one_group_of_32_layers():
    # given Llama-3-8B, BF16 KV, vLLM's 16-token blocks

    # when
    layout = _llama3_8b()

    # then
    # per layer 8 KV heads × 128 × 2 (K, V) × 2 bytes = 4,096 bytes per token; × 32 layers = 131,072
    # page = 16 tokens × 4,096 = 65,536 bytes per layer; one kind of layer → one group of all 32
    assert layout.layer_bytes_per_token(_full()) == 4_096
    assert layout.bytes_per_token == 131_072
    assert layout.page_bytes == 65_536
    assert layout.group_size == 32
    assert layout.groups == (KvGroup(kind=AttentionKind.FULL, window=None, layers=32),)
    assert layout.has_sliding is False


def test_llama3_8b_pool_gives_blocks_of_32_pages_and_16_tokens_each():
    # given Llama-3-8B and the pool vLLM leaves on an 80 GiB card (test_memory: 55,677,961,831 bytes)
    layout = _llama3_8b()

    # when
    blocks = layout.num_blocks(55_677_961_831)

    # then
    # a block is one page in each of the 32 layers: 65,536 × 32 = 2,097,152 bytes
    # 55,677,961,831 // 2,097,152 = 26,549 blocks (26,549 × 2,097,152 = 55,677,288,448) → × 16 = 424,784 tokens
    assert blocks == 26_549
    assert layout.capacity_tokens(blocks) == 424_784


@pytest.mark.parametrize(
    ("tokens", "blocks"),
    [
        pytest.param(1, 1, id="one-token-one-block"),
        pytest.param(16, 1, id="exactly-one-block"),
        pytest.param(17, 2, id="one-over-opens-a-block"),
        pytest.param(8192, 512, id="8192-tokens"),
        pytest.param(8193, 513, id="8193-tokens"),
    ],
)
def test_full_attention_request_needs_ceil_tokens_over_block_size_blocks(tokens, blocks):
    # given Llama-3-8B: one group of full attention
    layout = _llama3_8b()

    # when
    needed = layout.blocks_per_sequence(tokens, batched_tokens=8192)

    # then: ceil(tokens / 16); the prefill chunk does not matter for full attention
    assert needed == blocks


@pytest.mark.parametrize(
    ("tokens", "paged", "expected"),
    [
        # 100 × 131,072 = 13,107,200
        pytest.param(100, False, 13_107_200, id="100-unpaged"),
        # ceil(100 / 16) = 7 blocks = 112 tokens × 131,072 = 14,680,064
        pytest.param(100, True, 14_680_064, id="100-paged-rounds-up-to-7-blocks"),
        # 2048 = 128 blocks exactly: 2048 × 131,072 = 268,435,456 (256 MiB) either way
        pytest.param(2048, False, 268_435_456, id="2048-unpaged"),
        pytest.param(2048, True, 268_435_456, id="2048-paged-no-waste"),
    ],
)
def test_full_attention_sequence_bytes_page_up_to_whole_blocks(tokens, paged, expected):
    # given Llama-3-8B
    layout = _llama3_8b()

    # when
    held = layout.sequence_bytes(tokens, paged=paged)

    # then
    assert held == expected


@pytest.mark.parametrize(
    ("kv_bits", "per_token", "page"),
    [
        # 32 × 8 × 128 × 2 × 2 bytes = 131,072; page 16 × 4,096 = 65,536
        pytest.param(16, 131_072, 65_536, id="bf16"),
        # 32 × 8 × 128 × 2 × 1 byte = 65,536; page 16 × 2,048 = 32,768
        pytest.param(8, 65_536, 32_768, id="fp8"),
    ],
)
def test_kv_dtype_sets_the_bytes_per_element(kv_bits, per_token, page):
    # given Llama-3-8B with a BF16 or an FP8 KV cache

    # when
    layout = _llama3_8b(kv_bits=kv_bits)

    # then
    assert layout.bytes_per_token == per_token
    assert layout.page_bytes == page


# --- tensor parallelism --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "per_token", "page"),
    [
        # 8 KV heads split t ways: 32 layers × (8 / t) heads × 128 × 2 × 2 bytes
        pytest.param(1, 131_072, 65_536, id="tp1-8-heads"),
        pytest.param(2, 65_536, 32_768, id="tp2-4-heads"),
        pytest.param(8, 16_384, 8_192, id="tp8-1-head"),
        # 8 KV heads over 16 ranks: each rank keeps max(1, 8 // 16) = 1 head (replicated):
        # 32 × 1 × 128 × 2 × 2 = 16,384, not 131,072 / 16 = 8,192
        pytest.param(16, 16_384, 8_192, id="tp16-replicated"),
    ],
)
def test_kv_heads_split_over_tp_until_one_per_rank_then_replicate(tp, per_token, page):
    # given Llama-3-8B (8 KV heads)

    # when
    layout = _llama3_8b(tp=tp)

    # then
    assert layout.bytes_per_token == per_token
    assert layout.page_bytes == page
    assert layout.group_size == 32


# --- MLA -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tp", [pytest.param(1, id="tp1"), pytest.param(8, id="tp8")])
def test_deepseek_v3_mla_latent_is_70272_bytes_per_token_at_any_tp(tp):
    # given DeepSeek-V3: 61 MLA layers, BF16 KV

    # when
    layout = kv_layout((_deepseek_v3_mla(),) * 61, kv_bits=16, tp=tp, block_size=16)

    # then
    # one latent per layer: (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 bytes = 1,152; × 61 = 70,272
    # the latent has no heads to split: every TP rank holds all of it (DESIGN §5)
    # page 16 × 1,152 = 18,432; one group of 61 layers
    assert layout.layer_bytes_per_token(_deepseek_v3_mla()) == 1_152
    assert layout.bytes_per_token == 70_272
    assert layout.page_bytes == 18_432
    assert layout.groups == (KvGroup(kind=AttentionKind.MLA, window=None, layers=61),)


def test_deepseek_v3_mla_fp8_latent_halves():
    # given DeepSeek-V3 with an FP8 KV cache

    # when
    layout = kv_layout((_deepseek_v3_mla(),) * 61, kv_bits=8, tp=8, block_size=16)

    # then: 61 × 576 × 1 byte = 35,136
    assert layout.bytes_per_token == 35_136


def test_deepseek_v3_mla_pool_blocks():
    # given DeepSeek-V3 at TP 8 and a 10 GiB pool
    layout = kv_layout((_deepseek_v3_mla(),) * 61, kv_bits=16, tp=8, block_size=16)

    # when
    blocks = layout.num_blocks(10 * GiB)

    # then
    # a block = 18,432 × 61 = 1,124,352 bytes; 10,737,418,240 // 1,124,352 = 9,549 blocks (9,549 × 1,124,352
    # = 10,736,437,248) → 152,784 tokens
    assert blocks == 9_549
    assert layout.capacity_tokens(blocks) == 152_784


# --- hybrid: gpt-oss-like, 12 sliding (window 128) + 12 full ----------------------------------------------------------


def test_gpt_oss_like_stack_is_two_groups_of_12():
    # given

    # when
    layout = _gpt_oss_like()

    # then
    # per layer 8 × 64 × 2 × 2 = 2,048 bytes per token; × 24 layers = 49,152 if every layer kept every token
    # page 16 × 2,048 = 32,768; 12 sliding vs 12 full: 12 < 12 × 1.25 → group size 12 → one group of each kind
    assert layout.bytes_per_token == 49_152
    assert layout.page_bytes == 32_768
    assert layout.group_size == 12
    assert layout.groups == (
        KvGroup(kind=AttentionKind.SLIDING, window=128, layers=12),
        KvGroup(kind=AttentionKind.FULL, window=None, layers=12),
    )
    assert layout.has_sliding is True


@pytest.mark.parametrize(
    ("tokens", "paged", "expected"),
    [
        # below the window every layer keeps every token: 24 × 100 × 2,048 = 4,915,200
        pytest.param(100, False, 4_915_200, id="100-unpaged"),
        # 7 blocks = 112 tokens in every layer (window not full, no straddle): 24 × 112 × 2,048 = 5,505,024
        pytest.param(100, True, 5_505_024, id="100-paged"),
        # exactly the window: 24 × 128 × 2,048 = 6,291,456 (8 whole blocks, no straddle)
        pytest.param(128, True, 6_291_456, id="128-paged-window-just-full"),
        # one over: sliding layers keep 128 + a straddling block = 144; full layers ceil(129 / 16) = 9 blocks = 144
        # → 24 × 144 × 2,048 = 7,077,888
        pytest.param(129, True, 7_077_888, id="129-paged-straddles"),
        # sliding 12 × 128 × 2,048 = 3,145,728; full 12 × 10,000 × 2,048 = 245,760,000 → 248,905,728
        pytest.param(10_000, False, 248_905_728, id="10000-unpaged"),
        # sliding 12 × (128 + 16 straddling) × 2,048 = 3,538,944; full 625 blocks = 10,000 tokens exactly
        # → 245,760,000; total 249,298,944
        pytest.param(10_000, True, 249_298_944, id="10000-paged"),
    ],
)
def test_gpt_oss_like_sliding_layers_keep_at_most_their_window(tokens, paged, expected):
    # given
    layout = _gpt_oss_like()

    # when
    held = layout.sequence_bytes(tokens, paged=paged)

    # then
    assert held == expected


@pytest.mark.parametrize(
    ("tokens", "batched", "blocks"),
    [
        # sliding: ceil(min(127 + 8192, 100) / 16) + 1 = 7 + 1 = 8; full ceil(100 / 16) = 7 → 15
        pytest.param(100, 8192, 15, id="100-tokens"),
        # sliding: ceil(min(8319, 10,000) / 16) + 1 = ceil(519.94) + 1 = 521; full 625 → 1,146
        pytest.param(10_000, 8192, 1_146, id="10000-tokens-8192-chunk"),
        # sliding: ceil(min(127 + 2048 = 2175, 10,000) / 16) + 1 = 136 + 1 = 137; full 625 → 762
        pytest.param(10_000, 2048, 762, id="10000-tokens-2048-chunk"),
        # sliding 521 (capped by the window and one chunk); full 131,072 / 16 = 8,192 → 8,713
        pytest.param(131_072, 8192, 8_713, id="131072-tokens"),
    ],
)
def test_gpt_oss_like_blocks_per_sequence_follow_vllm_sliding_window_spec(tokens, batched, blocks):
    # given vLLM's SlidingWindowSpec.max_memory_usage_bytes: the window − 1 tokens plus one prefill chunk,
    # capped at the request, plus one block because the window need not start on a block boundary
    layout = _gpt_oss_like()

    # when
    needed = layout.blocks_per_sequence(tokens, batched_tokens=batched)

    # then
    assert needed == blocks


def test_gpt_oss_like_pool_blocks_are_shared_by_both_groups():
    # given a 1 GiB pool
    layout = _gpt_oss_like()

    # when
    blocks = layout.num_blocks(1 * GiB)

    # then
    # a block = 32,768 × 12 layer slots = 393,216 bytes; 1,073,741,824 // 393,216 = 2,730 blocks
    # "GPU KV cache size" = blocks // 2 groups × 16 = 1,365 × 16 = 21,840 tokens
    assert blocks == 2_730
    assert layout.capacity_tokens(blocks) == 21_840
    assert layout.capacity_tokens(2_731) == 21_840  # an odd block does not make a whole token slot


@pytest.mark.parametrize("pool", [pytest.param(0, id="empty"), pytest.param(-1, id="negative")])
def test_no_pool_means_no_blocks(pool):
    # given
    layout = _gpt_oss_like()

    # when
    blocks = layout.num_blocks(pool)

    # then
    assert blocks == 0
    assert layout.capacity_tokens(blocks) == 0


# --- hybrid: Gemma-3-like 5 local : 1 global -------------------------------------------------------------------------


def test_gemma3_like_is_six_sliding_groups_and_one_full_group_of_10():
    # given

    # when
    layout = _gemma3_like()

    # then
    # 52 sliding vs 10 full: 52 ≥ 10 × 1.25 → group size 10 (the smaller count)
    # sliding: ceil(52 / 10) = 6 groups; full: 1 group → 7 groups
    # per layer 16 × 128 × 2 × 2 = 8,192 bytes per token; × 62 = 507,904; page 16 × 8,192 = 131,072
    assert layout.group_size == 10
    assert [(group.kind, group.window) for group in layout.groups] == (
        [(AttentionKind.SLIDING, 1024)] * 6 + [(AttentionKind.FULL, None)]
    )
    assert sum(group.layers for group in layout.groups if group.kind is AttentionKind.SLIDING) == 52
    assert layout.bytes_per_token == 507_904
    assert layout.page_bytes == 131_072


def test_gemma3_like_groups_take_layers_strided_as_vllm_does():
    # given vLLM's _get_kv_cache_groups_uniform_page_size: a kind with n layers makes ceil(n / group_size) groups
    # and gives group i the layers[i::num_groups] (strided, so that pipeline stages have no empty group)

    # when
    layout = _gemma3_like()

    # then
    # 52 sliding layers over 6 groups: 52 = 6 × 8 + 4 → groups of 9, 9, 9, 9, 8, 8 (not 10, 10, 10, 10, 10, 2);
    # the 10 global layers make one group of 10
    assert tuple(group.layers for group in layout.groups) == (9, 9, 9, 9, 8, 8, 10)


def test_gemma3_like_pool_and_blocks_per_sequence():
    # given a 10 GiB pool
    layout = _gemma3_like()

    # when
    blocks = layout.num_blocks(10 * GiB)

    # then
    # a block = 131,072 × 10 layer slots = 1,310,720 bytes; 10,737,418,240 // 1,310,720 = 8,192 blocks
    # tokens: 8,192 // 7 groups = 1,170 × 16 = 18,720
    assert blocks == 8_192
    assert layout.capacity_tokens(blocks) == 18_720
    # 32,768 tokens, 2048-token chunks: each sliding group ceil(min(1023 + 2048, 32,768) / 16) + 1
    #   = ceil(3071 / 16) + 1 = 192 + 1 = 193, × 6 = 1,158; full 32,768 / 16 = 2,048 → 3,206
    assert layout.blocks_per_sequence(32_768, batched_tokens=2048) == 3_206
    # 8,192 tokens, 8192-token chunks: the window plus a chunk covers the request: 512 + 1 = 513 × 6 = 3,078
    #   + full 512 → 3,590 (more than 7 × 512 = 3,584 blocks of full attention for every group)
    assert layout.blocks_per_sequence(8_192, batched_tokens=8192) == 3_590


def test_gemma3_like_sequence_bytes():
    # given
    layout = _gemma3_like()

    # when
    unpaged = layout.sequence_bytes(32_768, paged=False)
    paged = layout.sequence_bytes(32_768, paged=True)

    # then
    # unpaged: sliding 52 × 1,024 × 8,192 = 436,207,616; full 10 × 32,768 × 8,192 = 2,684,354,560 → 3,120,562,176
    # paged: sliding 52 × (1,024 + 16) × 8,192 = 443,023,360; full unchanged → 3,127,377,920
    assert unpaged == 3_120_562_176
    assert paged == 3_127_377_920


# --- the 1.25 ratio rule ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sliding_layers", "full_layers", "group_size", "groups"),
    [
        # 13 < 11 × 1.25 = 13.75 → the larger count: 11 sliding → 1 group, 13 full → 1 group
        pytest.param(11, 13, 13, 2, id="11-vs-13-takes-the-larger"),
        pytest.param(12, 12, 12, 2, id="equal-counts"),
        # 9 < 8 × 1.25 = 10 → 9
        pytest.param(8, 9, 9, 2, id="8-vs-9-takes-the-larger"),
        # 10 < 8 × 1.25 = 10 is false (strict) → the smaller count 8: sliding 1 group, full ceil(10 / 8) = 2
        pytest.param(8, 10, 8, 3, id="8-vs-10-at-the-ratio-takes-the-smaller"),
        # 20 ≥ 4 × 1.25 → 4: sliding 5 groups, full 1 group
        pytest.param(20, 4, 4, 6, id="20-vs-4"),
    ],
)
def test_group_size_takes_the_larger_count_only_below_a_1_25_ratio(sliding_layers, full_layers, group_size, groups):
    # given

    # when
    layout = _two_kinds(sliding_layers, full_layers)

    # then
    assert layout.group_size == group_size
    assert len(layout.groups) == groups
    assert sum(group.layers for group in layout.groups) == sliding_layers + full_layers


def test_sliding_layers_with_different_windows_are_different_kinds():
    # given 4 layers of window 512, 4 of window 4096 and 4 full layers
    layers = (_sliding(512),) * 4 + (_sliding(4096),) * 4 + (_full(num_heads=64, head_dim=64),) * 4

    # when
    layout = kv_layout(layers, kv_bits=16, tp=1, block_size=16)

    # then: three kinds of 4 → group size 4, three groups
    assert layout.group_size == 4
    assert layout.groups == (
        KvGroup(kind=AttentionKind.SLIDING, window=512, layers=4),
        KvGroup(kind=AttentionKind.SLIDING, window=4096, layers=4),
        KvGroup(kind=AttentionKind.FULL, window=None, layers=4),
    )


def test_a_stage_without_attention_has_no_kv():
    # given an empty run of layers

    # when
    layout = kv_layout((), kv_bits=16, tp=1, block_size=16)

    # then
    assert (layout.bytes_per_token, layout.page_bytes, layout.group_size, layout.groups) == (0, 0, 1, ())
    assert layout.num_blocks(GiB) == 0
    assert layout.sequence_bytes(100, paged=True) == 0
    assert layout.blocks_per_sequence(100, batched_tokens=8192) == 0

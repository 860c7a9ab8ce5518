"""KV-cache bytes per token and per sequence (DESIGN §5) and KV heads under tensor parallelism (§6)."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.dtypes import DType
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.kv import kv_bytes_per_token, kv_heads_per_rank, paged_tokens, resolve_kv_dtype
from sizing.estimator.units import GiB, KiB, MiB
from tests.sizing.estimator.builders import LLAMA3_70B_CONFIG, build_arch


def test_gqa_32_layers_8_kv_heads_is_128_kib_per_token():
    # given DESIGN §5: 32 layers, 8 KV heads, head_dim 128, 2-byte KV

    # when
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16)

    # then: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 131,072 bytes = 128 KiB
    assert per_token == 131_072
    assert per_token == 128 * KiB


def test_16_requests_of_2048_tokens_hold_4_gib_of_kv():
    # given DESIGN §5 field calculator, small case
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16)

    # when
    total = 16 * 2048 * per_token

    # then: 16 × 2048 = 32,768 tokens × 131,072 bytes = 4,294,967,296 bytes = 4 GiB
    assert total == 4_294_967_296
    assert total == 4 * GiB


def test_100_requests_of_4096_tokens_hold_50_gib_of_kv():
    # given DESIGN §5 field calculator, large case
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16)

    # when
    total = 100 * 4096 * per_token

    # then: 100 × 4096 = 409,600 tokens × 131,072 bytes = 53,687,091,200 bytes = 50 GiB
    assert total == 53_687_091_200
    assert total == 50 * GiB


def test_mha_32_kv_heads_is_512_kib_per_token_512_mib_per_sequence_16_gib_for_32():
    # given DESIGN §5: a multi-head 7B, 32 layers × 32 KV heads × 128, 2 bytes; 32 sequences of 1024 tokens

    # when
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=32, head_dim=128, kv_bits=16)
    per_sequence = 1024 * per_token
    total = 32 * per_sequence

    # then
    # 32 × 32 × 128 × 2 (K, V) × 2 bytes = 524,288 bytes = 512 KiB per token
    # × 1024 tokens = 536,870,912 bytes = 512 MiB per sequence; × 32 = 17,179,869,184 bytes = 16 GiB
    assert per_token == 524_288
    assert per_token == 512 * KiB
    assert per_sequence == 536_870_912
    assert per_sequence == 512 * MiB
    assert total == 17_179_869_184
    assert total == 16 * GiB


def test_llama3_70b_is_327680_bytes_per_token():
    # given meta-llama/Meta-Llama-3-70B: 80 layers, 8 KV heads, head_dim 128, BF16
    arch = architecture_from_config(LLAMA3_70B_CONFIG)

    # when
    per_token = kv_bytes_per_token(
        num_layers=arch.num_hidden_layers,
        kv_heads=arch.num_key_value_heads,
        head_dim=arch.head_dim,
        kv_bits=arch.dtype.bits,
    )

    # then: 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 327,680 bytes per token
    assert per_token == 327_680


@pytest.mark.parametrize(
    ("tp", "heads_per_rank", "bytes_per_token_per_rank"),
    [
        # 32 layers × heads × 128 × 2 (K, V) × 2 bytes
        pytest.param(1, 8, 131_072, id="tp1-8-heads"),  # 32 × 8 × 128 × 2 × 2
        pytest.param(2, 4, 65_536, id="tp2-4-heads"),  # 32 × 4 × 128 × 2 × 2
        pytest.param(4, 2, 32_768, id="tp4-2-heads"),  # 32 × 2 × 128 × 2 × 2
        pytest.param(8, 1, 16_384, id="tp8-1-head"),  # 32 × 1 × 128 × 2 × 2
        pytest.param(16, 1, 16_384, id="tp16-replicated"),  # 8 heads < 16 ranks: each rank keeps 1 head
    ],
)
def test_kv_heads_split_over_tp_and_replicate_below_one_per_rank(tp, heads_per_rank, bytes_per_token_per_rank):
    # given 8 KV heads (Llama-3-8B shapes)

    # when
    heads = kv_heads_per_rank(8, tp)
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16, tp=tp)

    # then: max(1, 8 / tp) heads per rank
    assert heads == heads_per_rank
    assert per_token == bytes_per_token_per_rank


def test_replicated_kv_heads_make_tp16_hold_twice_the_ideal_share():
    # given 8 KV heads over 16 ranks
    full = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16)

    # when
    all_ranks = 16 * kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=16, tp=16)

    # then: 16 ranks × 16,384 = 262,144 bytes = 2 × 131,072 (every head is stored twice)
    assert all_ranks == 262_144
    assert all_ranks == 2 * full


def test_fp8_kv_halves_the_bytes_per_token():
    # given 32 layers × 8 KV heads × 128 in FP8 (1 byte)

    # when
    per_token = kv_bytes_per_token(num_layers=32, kv_heads=8, head_dim=128, kv_bits=DType.FP8.bits)

    # then: 32 × 8 × 128 × 2 (K, V) × 1 byte = 65,536 = 131,072 / 2
    assert per_token == 65_536


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        pytest.param("auto", DType.BF16, id="auto-follows-model"),
        pytest.param("fp8", DType.FP8, id="fp8"),
        pytest.param("fp8_e5m2", DType.FP8, id="fp8-e5m2"),
        pytest.param("fp16", DType.FP16, id="fp16"),
    ],
)
def test_kv_dtype_resolution(name, dtype):
    # given a BF16 model
    arch = build_arch()

    # when
    resolved = resolve_kv_dtype(arch, name)

    # then
    assert resolved is dtype


def test_unknown_kv_dtype_is_invalid_argument():
    # given
    arch = build_arch()

    # when
    with pytest.raises(SizingError) as caught:
        resolve_kv_dtype(arch, "int4")

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.extra == {"fields": {"kv_dtype": ["unknown KV-cache dtype 'int4'"]}}


@pytest.mark.parametrize(
    ("tokens", "reserved"),
    [
        pytest.param(1, 16, id="1-token-one-block"),
        pytest.param(16, 16, id="16-tokens-one-block"),
        pytest.param(17, 32, id="17-tokens-two-blocks"),
        pytest.param(8192, 8192, id="8192-tokens-512-blocks"),
        pytest.param(8193, 8208, id="8193-tokens-513-blocks"),
    ],
)
def test_paged_tokens_round_up_to_whole_blocks_of_16(tokens, reserved):
    # given vLLM's default block_size 16

    # when
    paged = paged_tokens(tokens, 16)

    # then: ceil(tokens / 16) × 16
    assert paged == reserved

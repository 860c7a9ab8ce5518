"""KV demand beyond one sequence per request: shared prefixes, parallel sampling, and the field's rules of thumb."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.memory import EstimateRequest, estimate_memory, rope_cache_bytes
from sizing.estimator.solvers import remedies
from tests.sizing.estimator.builders import build_arch, build_gpu

PER_TOKEN = 131_072  # Llama-3-8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes


def _idealized(**overrides) -> EstimateRequest:
    return EstimateRequest(
        arch=build_arch(),
        gpu=build_gpu(memory_gib=80),
        engine=Engine.IDEALIZED,
        max_model_len=8192,
        tokens_per_request=8192,
        concurrency=10,
        **overrides,
    )


def test_a_shared_prefix_is_cached_once():
    # given 10 requests of 8192 tokens whose first 4096 are one system prompt
    # when
    result = estimate_memory(_idealized(shared_prefix_tokens=4096))
    # then: 4096 shared + 10 × 4096 own = 45,056 tokens × 131,072 = 5,905,580,032 bytes
    assert result.kv_demand_bytes_per_gpu == 45_056 * PER_TOKEN


def test_without_prefix_caching_every_request_holds_the_prefix():
    # when
    result = estimate_memory(_idealized(shared_prefix_tokens=4096, prefix_caching=False))
    # then: 10 × 8192 × 131,072 = 10,737,418,240 bytes
    assert result.kv_demand_bytes_per_gpu == 10 * 8192 * PER_TOKEN


def test_parallel_samples_multiply_only_the_decoded_tokens():
    # given n = 4 samples of 1024 output tokens on a 7168-token prompt (8192 per request)
    # when
    result = estimate_memory(_idealized(parallel_samples=4, output_tokens=1024))
    # then: per request 7168 + 4 × 1024 = 11,264 tokens; 10 requests × 11,264 × 131,072 = 14,763,950,080
    assert result.kv_demand_bytes_per_gpu == 10 * 11_264 * PER_TOKEN


def test_vllm_shared_prefix_doubles_the_requests_a_pool_holds():
    # given vLLM 0.11.0 on 80 GiB: the pool holds 52 requests of 8192 tokens (427,040 tokens = 26,690 blocks)
    base = EstimateRequest(
        arch=build_arch(),
        gpu=build_gpu(memory_gib=80),
        max_model_len=8192,
        tokens_per_request=8192,
        concurrency=100,
        engine_version="0.11.0",
    )
    # when
    alone = estimate_memory(base)
    shared = estimate_memory(replace(base, shared_prefix_tokens=4096))
    # then: each request now holds 256 of its own blocks instead of 512, after 256 shared blocks:
    # (26,690 − 256) // 256 = 103 ≥ the 100 asked, where alone 26,690 // 512 = 52 < 100
    assert alone.concurrency_curve.max_concurrency_fit == 52
    blocks = alone.kv_capacity_tokens // 16
    assert shared.concurrency_curve.max_concurrency_fit == (blocks - 256) // 256
    assert shared.fits is True
    assert alone.fits is False


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"parallel_samples": 2}, "output_tokens"),
        ({"shared_prefix_tokens": 8192}, "shared_prefix_tokens"),
        ({"output_tokens": 9000}, "output_tokens"),
        ({"parallel_samples": 0}, "parallel_samples"),
    ],
    ids=["n-without-output", "prefix-as-long-as-request", "output-beyond-request", "n-zero"],
)
def test_inconsistent_demand_is_refused_naming_the_field(overrides, field):
    with pytest.raises(SizingError) as caught:
        estimate_memory(_idealized(**overrides))
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert field in caught.value.extra["fields"]


def test_rules_of_thumb_sit_beside_the_bill_with_the_card_factor():
    # given Llama-3-8B on an H100 (the field uses × 1.08 there) with 10 × 8192 tokens
    gpu = build_gpu(memory_gib=80, slug="nvidia-h100-sxm-80gb", name="NVIDIA H100")
    # when
    rules = estimate_memory(replace(_idealized(), gpu=gpu)).rules_of_thumb
    # then: (16,060,522,496 + 10,737,418,240) × 1.08 = 28,941,775,994.88 → 28,941,775,995 (rounded up)
    assert rules["overhead_factor"]["bytes"] == 28_941_775_995
    assert rules["overhead_factor"]["label"] == "(weights + KV demand) × 1.08"
    assert rules["activations_share"]["bytes"] == 2_147_483_648  # 20% of 10 GiB of KV demand
    assert rules["plan_limit"]["bytes"] == int(80 * 2**30 * 0.9)


@pytest.mark.parametrize(
    ("overrides", "elements"),
    [
        ({}, 8192 * 128),  # Llama-3-8B: 8192 positions × 128
        ({"rope_scaling": {"rope_type": "linear", "factor": 4.0}}, 4 * 8192 * 128),
        (
            {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}},
            4 * 4096 * 128,
        ),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, 8192 * 128),  # llama3 keeps max positions
        ({"partial_rotary_factor": 0.5}, 8192 * 64),
        ({"rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 4096}}, (4096 + 8192) * 128),
    ],
    ids=["plain", "linear", "yarn", "llama3", "partial", "longrope"],
)
def test_rotary_cache_rows_follow_the_scaling(overrides, elements):
    # given
    arch = build_arch(**overrides)
    # then: elements × 2 bytes (bf16)
    assert arch.rope_cache_elements == elements
    assert rope_cache_bytes(arch) == elements * 2


def test_remedies_leave_out_changes_that_fit_no_more_requests():
    # given Llama-3-8B at its full 8192 context, asked for 100 requests of 8192 tokens: max_model_len is already
    # the requests' length, so "lower max_model_len" would gain nothing and must not be offered
    request = EstimateRequest(
        arch=build_arch(),
        gpu=build_gpu(memory_gib=80),
        max_model_len=8192,
        tokens_per_request=8192,
        concurrency=100,
        engine_version="0.11.0",
    )
    # when
    found = remedies(request)
    # then: every remedy adds requests; the FP8 KV cache doubles the pool (vLLM 0.11.0): 427,040 tokens // 8192 =
    # 52 requests before, 854,096 // 8192 = 104 after (at least twice the 52)
    assert found
    assert all(r.max_concurrency_after > r.max_concurrency_before or r.fits for r in found)
    assert "max_model_len" not in {r.key for r in found}
    fp8 = next(r for r in found if r.key == "kv_fp8")
    assert (fp8.max_concurrency_before, fp8.settings) == (52, {"kv_dtype": "fp8"})
    assert fp8.max_concurrency_after == 104

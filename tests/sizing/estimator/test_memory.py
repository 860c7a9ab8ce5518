"""The memory bill per GPU through `estimate_memory` (DESIGN §5–§8): the field calculator's worked
examples, vLLM's budget, tensor/pipeline parallelism, replicas, refusals and the concurrency curve."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config, architecture_from_numbers
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.formats import weight_format
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.tensors import pipeline_stage_layers
from sizing.estimator.units import GiB
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank
from tests.sizing.estimator.builders import LLAMA31_8B_CONFIG, build_arch, build_gpu, small_config

# Figures shared by the vLLM tests on Llama-3-8B (hand computations in the tests that use them):
CAPACITY_80_GIB = 85_899_345_920  # 80 × 2^30
VLLM_BUDGET_80_GIB = 77_309_411_328  # floor(85,899,345,920 × 0.9)
LLAMA3_8B_BF16_WEIGHTS = 16_060_522_496  # 8,030,261,248 parameters × 2 bytes
LLAMA3_8B_ROPE_CACHE = 2_097_152  # vLLM's rotary cos/sin cache: 8192 positions × 128 (head_dim) × 2 bytes
VLLM_LLAMA3_8B_WEIGHTS = 16_062_619_648  # the bill's weights line: 16,060,522,496 + 2,097,152
# The vLLM tests pin a release (the rules change by release: estimator.vllm_budget, shared/design/vllm-memory.md).
# vLLM 0.11.0 on an 80 GiB card other than an A100: V1, profiler regime P2 (KV = budget − weights − activation
# peak − non-torch), big-card defaults 1024 sequences / 8192 batched tokens, a pip install's sort sampler.
VLLM = "0.11.0"
VLLM_NON_TORCH_TP1 = 161_061_274  # round(0.15 GiB): V1 before 0.18 at TP 1
VLLM_NON_TORCH_TP2 = 429_496_730  # round(0.15 GiB) + round(0.25 GiB) of NCCL buffers at TP > 1 (no NVSwitch)
VLLM_NON_TORCH_PP2 = 236_223_202  # round(0.15 GiB) + round(0.07 GiB): pipeline parallel only
CUDA_GRAPHS = 536_870_912  # 0.5 GiB, captured after the KV allocation (before 0.20): above vLLM's budget
# the activation peak: max(forward 8192 × (3 × 4096 + 3 × 14336) × 2 = 905,969,664, sampler 1024 rows × 128,256
# × 38 bytes (sort path) = 4,990,697,472 + hidden states 8192 × 4096 × 2 = 67,108,864 + V1 workspaces
# round(0.05 GiB) = 53,687,091) = 5,111,493,427
VLLM_ACTIVATIONS = 5_111_493_427
VLLM_FORWARD = 905_969_664


def vllm_request(**fields: object) -> EstimateRequest:
    """A vLLM request at the pinned release."""
    return EstimateRequest(engine_version=VLLM, **fields)  # type: ignore[arg-type]


def _field_calculator(concurrency: int, tokens: int) -> MemoryEstimate:
    """DESIGN §5: a 7B BF16 model (32 layers, 8 KV heads of 128), weights × 1.05, 2 GiB reserve, 90% of 24 GiB."""
    arch = architecture_from_numbers(parameters=7 * 10**9, num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    return estimate_memory(
        EstimateRequest(
            arch=arch,
            gpu=build_gpu(memory_gib=24),
            engine=Engine.IDEALIZED,
            weight_overhead=1.05,
            concurrency=concurrency,
            tokens_per_request=tokens,
        )
    )


def test_field_calculator_16_requests_of_2048_tokens_fit_a_24_gib_card():
    # given DESIGN §5, small case

    # when
    result = _field_calculator(16, 2048)

    # then
    # weights 7e9 × 2 bytes × 1.05 = 14,700,000,000; KV 16 × 2048 × 131,072 = 4,294,967,296 (4 GiB);
    # reserve 2 GiB = 2,147,483,648 → required 21,142,450,944
    # usable floor(24 × 2^30 × 0.9) = floor(23,192,823,398.4) = 23,192,823,398 → headroom 2,050,372,454
    assert result.memory_per_gpu == {
        "weights": 14_700_000_000,
        "kv_cache": 4_294_967_296,
        "activations": 0,
        "runtime": 2_147_483_648,
        "cuda_graphs": 0,
    }
    assert result.kv_bytes_per_token == 131_072
    assert result.kv_cache_bytes_per_gpu == 4 * GiB
    assert result.required_bytes_per_gpu == 21_142_450_944
    assert result.usable_bytes_per_gpu == 23_192_823_398
    assert result.headroom_bytes_per_gpu == 2_050_372_454
    assert result.fits is True
    assert result.problems == ()
    assert result.approximate is True


def test_field_calculator_100_requests_of_4096_tokens_do_not_fit():
    # given DESIGN §5, large case

    # when
    result = _field_calculator(100, 4096)

    # then
    # KV 100 × 4096 × 131,072 = 53,687,091,200 (50 GiB); required 14,700,000,000 + 53,687,091,200
    # + 2,147,483,648 = 70,534,574,848 > 23,192,823,398 usable
    # the KV room is 23,192,823,398 − 14,700,000,000 − 2,147,483,648 = 6,345,339,750 bytes
    #   = 48,411 tokens (÷ 131,072, rounded down)
    assert result.kv_cache_bytes_per_gpu == 50 * GiB
    assert result.required_bytes_per_gpu == 70_534_574_848
    assert result.kv_capacity_tokens == 48_411
    assert result.fits is False
    assert result.problems == (
        "100 concurrent requests x 4096 tokens per replica need 409600 KV tokens, the cache holds 48411; "
        "lower the concurrency or the context, or add GPUs",
        "GPU 0 needs 65.69 GiB, 21.60 GiB usable",
    )


def test_field_calculator_curve_crosses_the_limit_at_max_concurrency_fit():
    # given the small case: 2048 tokens per request

    # when
    curve = _field_calculator(16, 2048).concurrency_curve

    # then
    # static 14,700,000,000 + 2,147,483,648 = 16,847,483,648; each request 2048 × 131,072 = 268,435,456
    # (23,192,823,398 − 16,847,483,648) // 268,435,456 = 6,345,339,750 // 268,435,456 = 23
    assert curve.max_concurrency_fit == 23
    assert curve.limit_bytes == 23_192_823_398
    assert list(curve.concurrency) == sorted(set(curve.concurrency))
    assert all(a < b for a, b in zip(curve.required_bytes, curve.required_bytes[1:], strict=False))
    for concurrency, required in zip(curve.concurrency, curve.required_bytes, strict=True):
        assert required == 16_847_483_648 + concurrency * 268_435_456
        assert (required <= curve.limit_bytes) == (concurrency <= 23)
    assert curve.concurrency[0] <= 23 < curve.concurrency[-1]


def test_vllm_llama3_8b_on_80_gib_gives_the_kv_cache_what_the_budget_leaves():
    # given meta-llama/Meta-Llama-3-8B on one 80 GiB card (CUDA sees 80 GiB), vLLM 0.11.0 defaults, max_model_len 8192
    request = EstimateRequest(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192, engine_version=VLLM)

    # when
    result = estimate_memory(request)

    # then
    # budget floor(85,899,345,920 × 0.9) = 77,309,411,328
    # activation peak 5,111,493,427 (the sampler's warm-up: VLLM_ACTIVATIONS), non-torch 161,061,274
    # weights: tensors 16,060,522,496 + rotary cos/sin cache 8192 × 128 × 2 = 2,097,152 → 16,062,619,648
    # kv = 77,309,411,328 − 16,062,619,648 − 5,111,493,427 − 161,061,274 = 55,974,236,979
    # page = 16 tokens × 131,072 = 2,097,152 bytes → 26,690 blocks → 427,040 tokens
    # max concurrency at 8192 tokens: 427,040 / 8192 = 52.13
    assert result.budget_bytes_per_gpu == VLLM_BUDGET_80_GIB
    assert result.memory_per_gpu == {
        "weights": VLLM_LLAMA3_8B_WEIGHTS,
        "kv_cache": 55_974_236_979,
        "activations": VLLM_ACTIVATIONS,
        "runtime": VLLM_NON_TORCH_TP1,
        "cuda_graphs": CUDA_GRAPHS,
    }
    assert result.weight_bytes_per_gpu == LLAMA3_8B_BF16_WEIGHTS
    assert result.rope_cache_bytes_per_gpu == LLAMA3_8B_ROPE_CACHE
    assert result.kv_capacity_tokens == 427_040
    assert result.max_concurrency == 52.13
    assert result.concurrency_curve.max_concurrency_fit == 52
    assert result.assumptions["max_num_seqs"] == 1024
    assert result.assumptions["max_num_batched_tokens"] == 8192
    assert result.engine_version == "0.11.0"
    # the bill: the whole budget plus CUDA graphs 77,309,411,328 + 536,870,912 = 77,846,282,240
    assert result.required_bytes_per_gpu == 77_846_282_240
    assert result.headroom_bytes_per_gpu == CAPACITY_80_GIB - 77_846_282_240
    assert result.fits is True
    assert result.problems == ()


def test_vllm_weights_line_adds_the_rotary_cache_that_idealized_and_transformers_do_not():
    # given meta-llama/Meta-Llama-3.1-8B (131,072 positions, head_dim 128, bf16) on one 80 GiB card,
    # for which vLLM logged "Model loading took 14.9888 GiB"
    arch = architecture_from_config(LLAMA31_8B_CONFIG)
    logged = 14.9888 * GiB  # 16,094,101,451.6 bytes

    # when
    results = {
        engine: estimate_memory(
            EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), engine=engine, max_model_len=8192)
        )
        for engine in (Engine.VLLM, Engine.IDEALIZED, Engine.TRANSFORMERS)
    }

    # then
    # rotary cos/sin cache: 131,072 positions × 128 (cos and sin halves of the rotary dim) × 2 bytes = 33,554,432
    # vLLM's weights line: 16,060,522,496 (tensors) + 33,554,432 = 16,094,076,928 (14.98878 GiB)
    #   |16,094,076,928 − 16,094,101,451.6| = 24,523.6 bytes = 0.00015% of the logged figure (< 0.0004%)
    vllm = results[Engine.VLLM]
    assert vllm.weight_bytes_per_gpu == LLAMA3_8B_BF16_WEIGHTS
    assert vllm.rope_cache_bytes_per_gpu == 33_554_432
    assert vllm.memory_per_gpu["weights"] == 16_094_076_928
    assert [bill.components["weights"] for bill in vllm.per_gpu] == [16_094_076_928]
    assert abs(vllm.memory_per_gpu["weights"] - logged) / logged < 0.000004
    # idealized (overhead 1.0) and transformers bill the tensors alone
    for engine in (Engine.IDEALIZED, Engine.TRANSFORMERS):
        assert results[engine].rope_cache_bytes_per_gpu == 0
        assert results[engine].memory_per_gpu["weights"] == LLAMA3_8B_BF16_WEIGHTS


def test_vllm_kv_cache_is_budget_minus_weights_activations_and_runtime():
    # given the same deployment
    result = estimate_memory(vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192))

    # when
    bill = result.memory_per_gpu

    # then
    assert bill["kv_cache"] == result.budget_bytes_per_gpu - bill["weights"] - bill["activations"] - bill["runtime"]
    assert result.kv_capacity_tokens == bill["kv_cache"] // (16 * result.kv_bytes_per_token_per_gpu) * 16


def test_vllm_launch_args_name_what_was_sized():
    # given
    result = estimate_memory(vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192))

    # when
    args = result.launch_args

    # then
    assert args == (
        "--tensor-parallel-size 1",
        "--pipeline-parallel-size 1",
        "--gpu-memory-utilization 0.9",
        "--max-model-len 8192",
        "--max-num-seqs 1024",
        "--max-num-batched-tokens 8192",
        "--block-size 16",
        "--kv-cache-dtype auto",
    )


def test_vllm_fp8_kv_doubles_the_tokens_a_pool_holds():
    # given the same deployment with an FP8 KV cache
    request = vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192, kv_dtype="fp8")

    # when
    result = estimate_memory(request)

    # then: 32 × 8 × 128 × 2 × 1 byte = 65,536 per token; page 16 × 65,536 = 1,048,576
    # 55,974,236,979 // 1,048,576 = 53,381 blocks → 854,096 tokens (2 × 427,040 + the half block the BF16 pool
    # could not use)
    assert result.kv_bytes_per_token == 65_536
    assert result.kv_capacity_tokens == 854_096


def test_tp2_per_rank_weights_halve_attention_and_mlp_and_split_the_vocabulary():
    # given Llama-3-8B at tensor parallel 2
    arch = build_arch()

    # when
    per_rank = weight_bytes_per_rank(arch, resolve_weight_format(arch, "auto"), tp=2, pp=1)

    # then
    # per layer on a rank: q 2048 × 4096 = 8,388,608; k, v (4 heads × 128 = 512) × 4096 = 2,097,152 each;
    #   o 4096 × 2048 = 8,388,608 → 20,971,520; MLP 3 × 7168 × 4096 = 88,080,384; norms 8,192 (replicated)
    #   → 109,060,096 elements × 2 bytes = 218,120,192 × 32 = 6,979,846,144
    # vocabulary 128,256 (already 2004 × 64) / 2 = 64,128 rows × 4096 × 2 bytes = 525,336,576 each for the
    #   embeddings and the head → 1,050,673,152; final norm 8,192 bytes (replicated)
    # 6,979,846,144 + 1,050,673,152 + 8,192 = 8,030,527,488
    # = half of 16,060,522,496 (8,030,261,248) + half of the replicated norms 32 × 8,192 + 4,096 = 266,240
    assert per_rank == (8_030_527_488,)
    assert per_rank[0] - 16_060_522_496 // 2 == 266_240


def test_tp2_pads_the_vocabulary_to_a_multiple_of_64_before_splitting():
    # given the Llama-3-8B shapes with a 32,001-token vocabulary
    arch = build_arch(vocab_size=32001)

    # when
    per_rank = weight_bytes_per_rank(arch, resolve_weight_format(arch, "auto"), tp=2, pp=1)

    # then
    # 32,001 → 32,064 (501 × 64) / 2 = 16,032 rows × 4096 × 2 bytes = 131,334,144 each (embeddings, head)
    # 6,979,846,144 (layers, above) + 262,668,288 + 8,192 = 7,242,522,624
    assert per_rank == (7_242_522_624,)


def test_tp2_int4_per_rank_weights_split_the_groups_with_the_matrices():
    # given Llama-3-8B in INT4 group 128 at tensor parallel 2
    arch = build_arch()

    # when
    per_rank = weight_bytes_per_rank(arch, weight_format("int4"), tp=2, pp=1)

    # then
    # per layer on a rank: linear elements 109,060,096 − 8,192 (norms) = 109,051,904 × 4 bits = 54,525,952
    # groups of 128 inputs: q 2048 rows × 32 = 65,536; k, v 512 × 32 = 16,384 each; o 4096 × (2048 / 128 = 16)
    #   = 65,536; gate, up 7168 × 32 = 229,376 each; down 4096 × (7168 / 128 = 56) = 229,376
    #   → 851,968 groups × 20 bits / 8 = 2,129,920; norms 8,192 × 2 = 16,384 (16-bit)
    #   → 56,672,256 per layer × 32 = 1,813,512,192
    # embeddings + head at 16 bits 2 × 64,128 × 4096 × 2 = 1,050,673,152; final norm 8,192
    # 1,813,512,192 + 1,050,673,152 + 8,192 = 2,864,193,536
    assert per_rank == (2_864_193_536,)


def test_vllm_tp2_halves_weights_and_kv_per_gpu():
    # given Llama-3-8B on two 80 GiB cards at TP 2
    request = vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), tp=2, max_model_len=8192)

    # when
    result = estimate_memory(request)

    # then
    # KV per GPU: 32 × (8 / 2 = 4 heads) × 128 × 2 × 2 = 65,536 bytes per token
    # activations per rank: V1 all-gathers the logits, so every rank runs the whole sampler (5,111,493,427);
    #   the forward (8192 × (3 × 4096 + 3 × 7168) × 2 = 553,648,128) is smaller
    # weights 8,030,527,488 + the whole rotary cache on every rank 2,097,152 = 8,032,624,640
    # kv = 77,309,411,328 − 8,032,624,640 − 5,111,493,427 − 429,496,730 (TP 2: + NCCL) = 63,735,796,531
    # page 16 × 65,536 = 1,048,576 → 60,783 blocks → 972,528 tokens; / 8192 = 118.72
    assert (result.gpus, result.tp, result.replicas) == (2, 2, 1)
    assert result.kv_bytes_per_token == 131_072
    assert result.kv_bytes_per_token_per_gpu == 65_536
    assert result.weight_bytes_per_gpu == 8_030_527_488
    assert result.weight_bytes_total == LLAMA3_8B_BF16_WEIGHTS
    assert result.memory_per_gpu == {
        "weights": 8_032_624_640,
        "kv_cache": 63_735_796_531,
        "activations": VLLM_ACTIVATIONS,
        "runtime": VLLM_NON_TORCH_TP2,
        "cuda_graphs": CUDA_GRAPHS,
    }
    assert result.kv_capacity_tokens == 972_528
    assert result.max_concurrency == 118.72
    assert [(bill.stage, bill.tp_rank) for bill in result.per_gpu] == [(0, 0), (0, 1)]


@pytest.mark.parametrize(
    ("layers", "pp", "stages"),
    [
        pytest.param(32, 2, (16, 16), id="32-over-2"),
        pytest.param(32, 3, (11, 11, 10), id="32-over-3"),  # 10 each, remainder 2 to the stages before the last
        pytest.param(30, 4, (7, 8, 8, 7), id="30-over-4"),  # 7 each, remainder 2 to stages 2 and 1
        pytest.param(5, 1, (5,), id="no-pipeline"),
    ],
)
def test_pipeline_stages_split_layers_as_vllm_does(layers, pp, stages):
    # given

    # when
    split = pipeline_stage_layers(layers, pp)

    # then
    assert split == stages
    assert sum(split) == layers


def test_pp2_stage0_holds_the_embeddings_and_the_last_stage_the_head():
    # given Llama-3-8B at pipeline parallel 2 (16 layers per stage)
    arch = build_arch()

    # when
    stages = weight_bytes_per_rank(arch, resolve_weight_format(arch, "auto"), tp=1, pp=2)

    # then
    # a layer: 218,112,000 parameters × 2 bytes = 436,224,000; 16 layers = 6,979,584,000
    # embeddings 128,256 × 4096 × 2 = 1,050,673,152 on stage 0 → 8,030,257,152
    # head 1,050,673,152 + final norm 8,192 on stage 1 → 8,030,265,344
    assert stages == (8_030_257_152, 8_030_265_344)
    assert sum(stages) == LLAMA3_8B_BF16_WEIGHTS


def test_pp2_with_tied_embeddings_holds_a_copy_on_the_last_stage():
    # given the small model (h 256, 2 layers, vocabulary 1000) with tied embeddings, PP 2
    arch = architecture_from_config(small_config(tie_word_embeddings=True))

    # when
    stages = weight_bytes_per_rank(arch, resolve_weight_format(arch, "auto"), tp=1, pp=2)

    # then
    # a layer: (65,536 × 2 + 32,768 × 2 + 131,072 × 3) = 589,824 linear + 512 norm elements → 1,180,672 bytes
    # embeddings as vLLM allocates them, vocabulary padded to 64 even at TP 1: 1000 → 1024 rows
    #   × 256 × 2 = 524,288, on stage 0 and again on stage 1 for the tied head
    # stage 0: 524,288 + 1,180,672 = 1,704,960; stage 1: 1,180,672 + final norm 512 + 524,288 = 1,705,472
    assert stages == (1_704_960, 1_705_472)


def test_vllm_pp2_splits_layers_kv_and_the_sampler_between_stages():
    # given Llama-3-8B on two 80 GiB cards at PP 2
    request = vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), pp=2, max_model_len=8192)

    # when
    result = estimate_memory(request)

    # then
    # each stage: 16 layers × 8 × 128 × 2 × 2 = 65,536 KV bytes per token; non-torch 0.15 + 0.07 GiB (PP only)
    # each stage also holds the rotary cache 2,097,152
    # stage 0: weights 8,030,257,152 + 2,097,152 = 8,032,354,304; activations: the forward 905,969,664 only
    #   kv 77,309,411,328 − 8,032,354,304 − 905,969,664 − 236,223,202 = 68,134,864,158
    #   → 64,978 blocks of 1,048,576 → 1,039,648 tokens
    # stage 1: weights 8,030,265,344 + 2,097,152 = 8,032,362,496; activations: the sampler 5,111,493,427
    #   kv 77,309,411,328 − 8,032,362,496 − 5,111,493,427 − 236,223,202 = 63,929,332,203
    #   → 60,967 blocks → 975,472 tokens (binds both stages)
    stage0, stage1 = result.per_gpu
    assert (stage0.stage, stage1.stage) == (0, 1)
    assert stage0.components == {
        "weights": 8_032_354_304,
        "kv_cache": 68_134_864_158,
        "activations": VLLM_FORWARD,
        "runtime": VLLM_NON_TORCH_PP2,
        "cuda_graphs": CUDA_GRAPHS,
    }
    assert stage1.components == {
        "weights": 8_032_362_496,
        "kv_cache": 63_929_332_203,
        "activations": VLLM_ACTIVATIONS,
        "runtime": VLLM_NON_TORCH_PP2,
        "cuda_graphs": CUDA_GRAPHS,
    }
    assert (stage0.kv_capacity_tokens, stage1.kv_capacity_tokens) == (1_039_648, 975_472)
    assert result.kv_bytes_per_token_per_gpu == 65_536
    assert result.kv_capacity_tokens == 975_472
    assert result.assumptions["binding_stage"] == 1


def test_gpus_beyond_tp_are_replicas_that_split_the_concurrency():
    # given 4 GPUs at TP 2 → 2 replicas; 10 concurrent requests of 8192 tokens
    request = vllm_request(
        arch=build_arch(), gpu=build_gpu(memory_gib=80), gpus=4, tp=2, max_model_len=8192, concurrency=10
    )

    # when
    result = estimate_memory(request)

    # then
    # 10 / 2 replicas = 5 requests per replica; KV demand per GPU 5 × 8192 × 65,536 = 2,684,354,560
    # each replica has the TP-2 pool of 972,528 tokens (nothing shared)
    assert (result.gpus, result.tp, result.pp, result.replicas) == (4, 2, 1, 2)
    assert result.assumptions["per_replica_concurrency"] == 5
    assert result.kv_demand_bytes_per_gpu == 2_684_354_560
    assert result.kv_capacity_tokens == 972_528
    assert [(bill.index, bill.replica, bill.tp_rank) for bill in result.per_gpu] == [
        (0, 0, 0),
        (1, 0, 1),
        (2, 1, 0),
        (3, 1, 1),
    ]
    assert result.fits is True


def test_odd_concurrency_rounds_up_per_replica():
    # given 4 GPUs at TP 2 (2 replicas) and 11 requests

    # when
    result = estimate_memory(
        EstimateRequest(
            arch=build_arch(), gpu=build_gpu(memory_gib=80), gpus=4, tp=2, max_model_len=8192, concurrency=11
        )
    )

    # then: ceil(11 / 2) = 6 on the busier replica; 6 × 8192 × 65,536 = 3,221,225,472
    assert result.assumptions["per_replica_concurrency"] == 6
    assert result.kv_demand_bytes_per_gpu == 3_221_225_472


def test_vllm_will_not_start_when_max_model_len_does_not_fit_and_suggests_one():
    # given meta-llama/Meta-Llama-3.1-8B (131,072-token context) on one 24 GiB card, vLLM defaults
    request = vllm_request(arch=architecture_from_config(LLAMA31_8B_CONFIG), gpu=build_gpu(memory_gib=24))

    # when
    result = estimate_memory(request)

    # then
    # budget floor(25,769,803,776 × 0.9) = 23,192,823,398; < 70 GiB card: max_num_seqs 256, batched 2048
    # activations: max(forward 2048 × 55,296 × 2 = 226,492,416, sampler 256 × 128,256 × 38 = 1,247,674,368
    #   + 2048 × 4096 × 2 = 16,777,216 + 53,687,091) = 1,318,138,675
    # weights 16,060,522,496 + rotary cache 131,072 × 128 × 2 = 33,554,432 → 16,094,076,928
    # kv = 23,192,823,398 − 16,094,076,928 − 1,318,138,675 − 161,061,274 = 5,619,546,521 (5.23 GiB)
    #   → 2,679 blocks of 2,097,152 → 42,864 tokens
    # one 131,072-token sequence needs 131,072 × 131,072 = 17,179,869,184 bytes (16.00 GiB)
    assert result.memory_per_gpu["kv_cache"] == 5_619_546_521
    assert result.kv_capacity_tokens == 42_864
    assert result.fits is False
    assert result.problems[0] == (
        "vLLM will not start: one 131072-token sequence needs 16.00 GiB of KV cache, 5.23 GiB available; "
        "max_model_len 42864 would fit"
    )


def test_vllm_starts_with_the_suggested_max_model_len():
    # given the same deployment with the max_model_len the refusal suggested
    request = vllm_request(
        arch=architecture_from_config(LLAMA31_8B_CONFIG), gpu=build_gpu(memory_gib=24), max_model_len=42864
    )

    # when
    result = estimate_memory(request)

    # then: 42,864 tokens = 2,679 blocks, exactly the pool; 42,864 / 42,864 = 1.0×
    assert result.problems == ()
    assert result.fits is True
    assert result.max_concurrency == 1.0


def test_no_memory_left_for_the_kv_cache_is_a_problem():
    # given Llama-3-70B-sized weights on one 80 GiB card (141 GB of BF16 weights)
    arch = build_arch(hidden_size=8192, num_hidden_layers=80, num_attention_heads=64, intermediate_size=28672)

    # when
    result = estimate_memory(EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), max_model_len=8192))

    # then
    assert result.fits is False
    assert result.kv_capacity_tokens == 0
    assert result.memory_per_gpu["kv_cache"] == 0
    assert result.problems[0].startswith("no memory left for the KV cache: weights 131.42 GiB")


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        pytest.param({"tp": 3}, SizingErrorCode.INVALID_PARALLELISM, None, id="tp-does-not-divide-heads"),
        pytest.param({"gpus": 3, "tp": 2}, SizingErrorCode.INVALID_ARGUMENT, "gpus", id="gpus-not-multiple-of-tp"),
        pytest.param(
            {"gpus": 6, "tp": 2, "pp": 2}, SizingErrorCode.INVALID_ARGUMENT, "gpus", id="gpus-not-multiple-of-tp-x-pp"
        ),
        pytest.param({"gpus": 3, "pp": 2}, SizingErrorCode.INVALID_ARGUMENT, "gpus", id="gpus-not-split-by-pp"),
        pytest.param({"tp": 0}, SizingErrorCode.INVALID_ARGUMENT, "tp", id="tp-zero"),
        pytest.param({"pp": 0}, SizingErrorCode.INVALID_ARGUMENT, "pp", id="pp-zero"),
        pytest.param({"pp": 33}, SizingErrorCode.INVALID_PARALLELISM, None, id="pp-more-than-layers"),
        pytest.param(
            {"gpu_memory_utilization": 0},
            SizingErrorCode.INVALID_ARGUMENT,
            "gpu_memory_utilization",
            id="utilisation-zero",
        ),
        pytest.param(
            {"gpu_memory_utilization": 1.01},
            SizingErrorCode.INVALID_ARGUMENT,
            "gpu_memory_utilization",
            id="utilisation-above-one",
        ),
        pytest.param({"concurrency": 0}, SizingErrorCode.INVALID_ARGUMENT, "concurrency", id="concurrency-zero"),
        pytest.param({"block_size": 0}, SizingErrorCode.INVALID_ARGUMENT, "block_size", id="block-size-zero"),
        pytest.param(
            {"weight_overhead": 0.9}, SizingErrorCode.INVALID_ARGUMENT, "weight_overhead", id="overhead-below-one"
        ),
        pytest.param({"kv_dtype": "int4"}, SizingErrorCode.INVALID_ARGUMENT, "kv_dtype", id="kv-dtype-int4"),
    ],
)
def test_invalid_layout_or_argument_is_refused(overrides, code, field):
    # given Llama-3-8B (32 heads, 8 KV heads, 32 layers) on 80 GiB cards
    request = EstimateRequest(arch=build_arch(), gpu=build_gpu(memory_gib=80), **overrides)

    # when
    with pytest.raises(SizingError) as caught:
        estimate_memory(request)

    # then
    assert caught.value.code is code
    if field is not None:
        assert list(caught.value.extra["fields"]) == [field]


def test_tp_that_neither_divides_nor_is_a_multiple_of_kv_heads_is_invalid_parallelism():
    # given 24 heads over 6 KV heads at TP 4: 24 % 4 = 0 but 6 % 4 = 2 and 4 % 6 = 4
    arch = build_arch(num_attention_heads=24, num_key_value_heads=6)

    # when
    with pytest.raises(SizingError) as caught:
        estimate_memory(EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), tp=4))

    # then
    assert caught.value.code is SizingErrorCode.INVALID_PARALLELISM
    assert caught.value.extra["tp"] == 4
    assert caught.value.extra["num_key_value_heads"] == 6
    assert "tp" in caught.value.extra["fields"]


def test_tp16_over_8_kv_heads_is_accepted_with_replicated_heads():
    # given Llama-3-8B at TP 16: 8 KV heads, each rank keeps one
    request = EstimateRequest(arch=build_arch(), gpu=build_gpu(memory_gib=80), tp=16, max_model_len=8192)

    # when
    result = estimate_memory(request)

    # then: 32 layers × 1 head × 128 × 2 × 2 = 16,384 bytes per token per GPU
    assert result.kv_bytes_per_token_per_gpu == 16_384
    assert len(result.per_gpu) == 16


def test_vllm_concurrency_curve_is_increasing_and_crosses_the_budget_at_max_concurrency_fit():
    # given Llama-3-8B on 80 GiB, 8192-token requests
    result = estimate_memory(vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192))

    # when
    curve = result.concurrency_curve

    # then
    # static = weights (with the rotary cache) + activations + non-torch
    #   = 16,062,619,648 + 5,111,493,427 + 161,061,274 = 21,335,174,349
    # each request 8192 × 131,072 = 1,073,741,824; 427,040 pool tokens // 8192 = 52 requests
    assert curve.max_concurrency_fit == 52
    assert curve.limit_bytes == VLLM_BUDGET_80_GIB
    assert all(a < b for a, b in zip(curve.concurrency, curve.concurrency[1:], strict=False))
    assert all(a < b for a, b in zip(curve.required_bytes, curve.required_bytes[1:], strict=False))
    for concurrency, required in zip(curve.concurrency, curve.required_bytes, strict=True):
        assert required == 21_335_174_349 + concurrency * 1_073_741_824
        assert (required <= curve.limit_bytes) == (concurrency <= 52)
    assert curve.concurrency[0] <= 52 < curve.concurrency[-1]


def test_max_model_len_beyond_the_model_context_is_a_problem():
    # given Llama-3-8B (max_position_embeddings 8192) asked for 9000 tokens

    # when
    result = estimate_memory(vllm_request(arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=9000))

    # then: vLLM refuses it; the memory figures are still given: 9000 tokens = 563 blocks = 9,008 paged
    # tokens; 427,040 / 9,008 = 47.41
    assert result.fits is False
    assert result.problems == (
        "max_model_len 9000 exceeds the model's max_position_embeddings 8192: vLLM refuses to start unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (and the model degrades beyond its trained context without RoPE scaling)",
    )
    assert result.warnings == ()
    assert result.max_concurrency == 47.41


def test_measured_gpu_memory_replaces_the_catalog_capacity():
    # given an 80 GiB catalog card (CUDA sees all 80 GiB) whose fingerprint measured 79 GiB = 84,825,604,096 bytes:
    # the CUDA-visible total drops by the same 1 GiB (the catalog's reservation, 0 here, is kept)
    request = vllm_request(
        arch=build_arch(), gpu=build_gpu(memory_gib=80), max_model_len=8192, gpu_memory_bytes=79 * GiB
    )

    # when
    result = estimate_memory(request)

    # then
    # budget floor(84,825,604,096 × 0.9) = 76,343,043,686
    # kv = 76,343,043,686 − 16,062,619,648 (tensors + rotary cache) − 5,111,493,427 − 161,061,274
    #   = 55,007,869,337 → 26,229 blocks of 2,097,152 → 419,664 tokens
    assert result.capacity_bytes_per_gpu == 84_825_604_096
    assert result.budget_bytes_per_gpu == 76_343_043_686
    assert result.memory_per_gpu["kv_cache"] == 55_007_869_337
    assert result.kv_capacity_tokens == 419_664
    assert result.assumptions["capacity_source"] == "measured"

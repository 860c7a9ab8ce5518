"""Each serving engine's memory budget through `estimate_memory` (DESIGN §5–§8, §11): Llama-3-8B on one 80 GiB card
at max_model_len 8192, component by component, plus allocation kinds, launch arguments, refusals, KV-head replication
and a hybrid sliding-window stack."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from sizing.estimator.architecture import Architecture, architecture_from_config, architecture_from_numbers
from sizing.estimator.engines import (
    ENGINE_BUDGETS,
    ENGINE_CHOICES,
    ENGINE_TRAITS,
    PREALLOCATING,
    Allocation,
    Engine,
    StageInputs,
    sglang_default_scheduler,
    vllm_default_scheduler,
)
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.kv_layout import kv_layout
from sizing.estimator.layers import AttentionKind, AttentionSpec, LayerSpec, MlpSpec
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.units import GiB
from sizing.estimator.versions import Version
from tests.sizing.estimator.builders import (
    GEMMA3_27B_IT_CONFIG,
    GPT_OSS_20B_CONFIG,
    LLAMA31_8B_CONFIG,
    build_arch,
    build_gpu,
)

# Figures shared by the Llama-3-8B tests (hand computations in the tests that use them):
CAPACITY_80_GIB = 85_899_345_920  # 80 × 2^30
NINETY_PERCENT_80_GIB = 77_309_411_328  # floor(85,899,345,920 × 0.9)
LLAMA3_8B_BF16_WEIGHTS = 16_060_522_496  # 8,030,261,248 parameters × 2 bytes
# vLLM and SGLang also load a rotary cos/sin cache on every GPU: 8192 positions × 128 (head_dim) × 2 bytes = 2,097,152;
# their weights line is 16,060,522,496 + 2,097,152 = 16,062,619,648
LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE = 16_062_619_648
LLAMA3_8B_KV_PER_TOKEN = 131_072  # 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes
# activation bytes per batched token: gate+up 2 × 14336 + product 14336 + qkv (32 + 2 × 8) × 128 + 4 × 4096 hidden
# buffers = 65,536 elements × 2 bytes = 131,072; the sampler's fp32 logits: 128,256 × 4 = 513,024 per sequence
# (vLLM's sampler holds 33 bytes per logit instead: 128,256 × 33 = 4,232,448 per sequence)
ACTIVATION_BYTES_PER_TOKEN = 131_072
LOGIT_BYTES_PER_SEQUENCE = 513_024
CUDA_CONTEXT = 536_870_912  # 0.5 GiB
VLLM = "0.11.0"  # V1, profiler regime P2, big-card defaults 1024 / 8192, the sort sampler (estimator.vllm_budget)
VLLM_NON_TORCH_TP1 = 161_061_274  # round(0.15 × 2^30): V1 before 0.18 at TP 1
VLLM_CUDA_GRAPHS = 536_870_912  # 0.5 GiB, captured after the KV allocation before 0.20: outside the budget


def _llama3_8b(engine: Engine, **overrides) -> MemoryEstimate:
    """Llama-3-8B on one 80 GiB card at max_model_len 8192 (vLLM pinned to 0.11.0: its rules change by release)."""
    if engine is Engine.VLLM:
        overrides.setdefault("engine_version", VLLM)
    return estimate_memory(
        EstimateRequest(arch=build_arch(), gpu=build_gpu(memory_gib=80), engine=engine, max_model_len=8192, **overrides)
    )


def _gpt_oss_like_arch() -> Architecture:
    """A small gpt-oss-like stack: 24 layers alternating sliding window 128 / full attention (layer 0 sliding),
    8 heads and 8 KV heads of 64, h 512, dense gated MLP 1024, vocabulary 1024, context 131,072."""
    sliding = AttentionSpec(kind=AttentionKind.SLIDING, num_heads=8, num_kv_heads=8, head_dim=64, window=128)
    full = AttentionSpec(num_heads=8, num_kv_heads=8, head_dim=64)
    mlp = MlpSpec(intermediate_size=1024)
    layers = tuple(LayerSpec(attention=sliding if index % 2 == 0 else full, mlp=mlp) for index in range(24))
    return Architecture(
        model_type="gpt_oss_like",
        hidden_size=512,
        num_hidden_layers=24,
        num_attention_heads=8,
        num_key_value_heads=8,
        head_dim=64,
        intermediate_size=1024,
        vocab_size=1024,
        max_position_embeddings=131_072,
        layers=layers,
    )


# --- traits and defaults -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "allocation", "block_size", "command"),
    [
        pytest.param(Engine.VLLM, "preallocated", 16, "vllm serve MODEL", id="vllm"),
        pytest.param(
            Engine.SGLANG, "preallocated", 1, "python -m sglang.launch_server --model-path MODEL", id="sglang"
        ),
        # TensorRT-LLM's KvCacheConfig.tokens_per_block defaults to 32
        pytest.param(Engine.TRTLLM, "preallocated", 32, "trtllm-serve MODEL", id="trtllm"),
        pytest.param(Engine.TGI, "preallocated", 16, "text-generation-launcher --model-id MODEL", id="tgi"),
        pytest.param(Engine.LLAMACPP, "static", 1, "llama-server -m MODEL.gguf", id="llamacpp"),
        pytest.param(Engine.TRANSFORMERS, "on_demand", 1, "", id="transformers"),
        pytest.param(Engine.IDEALIZED, "on_demand", 1, "", id="idealized"),
    ],
)
def test_each_engine_states_how_it_takes_its_kv_memory(engine, allocation, block_size, command):
    # given Llama-3-8B on 80 GiB

    # when
    result = _llama3_8b(engine)

    # then
    assert result.engine == engine.value
    assert result.allocation == allocation
    assert ENGINE_TRAITS[engine].allocation is Allocation(allocation)
    assert result.assumptions["block_size"] == block_size
    assert result.launch_command == command


def test_engine_registry_lists_every_engine_and_the_preallocating_ones():
    # given the registry

    # when
    choices = ENGINE_CHOICES

    # then
    assert choices == ("vllm", "sglang", "trtllm", "tgi", "llamacpp", "transformers", "idealized")
    assert set(ENGINE_BUDGETS) == set(Engine)
    assert PREALLOCATING == {Engine.VLLM, Engine.SGLANG, Engine.TRTLLM, Engine.TGI}


@pytest.mark.parametrize(
    ("memory_gib", "name", "defaults"),
    [
        pytest.param(80, "H100 80GB HBM3", (1024, 8192), id="h100"),
        pytest.param(141, "H200", (1024, 8192), id="h200"),
        pytest.param(70, "some 70 GiB card", (1024, 8192), id="70-gib-boundary"),
        pytest.param(80, "A100 80GB", (256, 2048), id="a100-80gb-keeps-small-defaults"),
        pytest.param(48, "L40S", (256, 2048), id="l40s"),
        pytest.param(24, "RTX 4090", (256, 2048), id="rtx-4090"),
    ],
)
def test_vllm_defaults_are_1024_seqs_8192_tokens_on_large_non_a100_cards(memory_gib, name, defaults):
    # given vLLM V1 `vllm serve` defaults: (max_num_seqs, max_num_batched_tokens)

    # when
    seqs_and_tokens = vllm_default_scheduler(memory_gib * GiB, name)

    # then
    assert seqs_and_tokens == defaults


@pytest.mark.parametrize(
    ("memory_gib", "defaults"),
    [
        # SGLang 0.5.5–0.5.19 server_args._handle_gpu_memory_settings (server_args.py:911 @ v0.5.9), at TP < 4,
        # by the card's MiB (other releases: tests/sizing/estimator/test_engine_versions_sglang_trtllm.py):
        # < 20 × 1024 (T4, 4080): bs 8, chunk 2048
        pytest.param(16, (8, 2048), id="16-gib"),
        # < 35 × 1024 (A10, 4090, 5090): bs 24, chunk 2048
        pytest.param(24, (24, 2048), id="24-gib"),
        # < 60 × 1024 (A100 40GB, L40): bs 32, chunk 4096
        pytest.param(40, (32, 4096), id="40-gib"),
        # < 90 × 1024 (H100, A100 80GB) and < 160 × 1024 (H20, H200): bs 256, chunk 8192
        pytest.param(80, (256, 8192), id="80-gib"),
        pytest.param(141, (256, 8192), id="141-gib"),
        # ≥ 160 × 1024 (B200, MI300): bs 512, chunk 16384
        pytest.param(192, (512, 16384), id="192-gib"),
    ],
)
def test_sglang_defaults_grow_with_the_card(memory_gib, defaults):
    # given SGLang 0.5.9's (cuda_graph_max_bs, chunked_prefill_size) by card size, one GPU

    # when
    graph_bs_and_chunk = sglang_default_scheduler(memory_gib * GiB, version=Version(0, 5, 9))

    # then
    assert graph_bs_and_chunk == defaults


# --- vLLM ----------------------------------------------------------------------------------------------------------


def test_vllm_gives_the_kv_cache_the_budget_left_after_weights_activations_and_non_torch():
    # given vLLM defaults on an 80 GiB card: max_num_seqs 1024, max_num_batched_tokens 8192

    # when
    result = _llama3_8b(Engine.VLLM)

    # then
    # budget floor(85,899,345,920 × 0.9) = 77,309,411,328
    # activations: the max, not the sum, of the forward 8192 × (3 × 4096 + 3 × 14336) × 2 = 905,969,664 and the
    #   sampler's warm-up over min(1024, 8192) rows: 1024 × 128,256 × 38 bytes (bf16 logits 2 + fp32 copy 4 + sort
    #   values 4 + int64 indices 8 + sort temporaries 20) = 4,990,697,472 + hidden states 8192 × 4096 × 2 =
    #   67,108,864 + V1 workspaces round(0.05 GiB) = 53,687,091 → 5,111,493,427
    # weights 16,060,522,496 + rotary cache 2,097,152 = 16,062,619,648
    # kv = 77,309,411,328 − 16,062,619,648 − 5,111,493,427 − 161,061,274 = 55,974,236,979
    # CUDA graphs (0.5 GiB) are captured after the KV allocation, outside the budget
    assert result.budget_bytes_per_gpu == NINETY_PERCENT_80_GIB
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 55_974_236_979,
        "activations": 5_111_493_427,
        "runtime": VLLM_NON_TORCH_TP1,
        "cuda_graphs": VLLM_CUDA_GRAPHS,
    }
    assert result.usable_bytes_per_gpu == CAPACITY_80_GIB
    # required = the whole budget + graphs = 77,309,411,328 + 536,870,912 = 77,846,282,240
    assert result.required_bytes_per_gpu == 77_846_282_240
    assert result.headroom_bytes_per_gpu == 8_053_063_680  # 85,899,345,920 − 77,846,282,240
    # 55,974,236,979 // (16 × 131,072 = 2,097,152) = 26,690 blocks → 427,040 tokens; / 8192 = 52.13
    assert result.kv_capacity_tokens == 427_040
    assert result.max_concurrency == 52.13
    assert result.concurrency_curve.limit_bytes == NINETY_PERCENT_80_GIB
    assert result.fits is True


def test_vllm_measured_activations_runtime_and_graphs_replace_the_defaults():
    # given a boot log's figures: activation peak 2 GiB, non-torch 1 GiB, CUDA graphs 2 GiB

    # when
    result = _llama3_8b(
        Engine.VLLM, activation_peak_bytes=2 * GiB, runtime_reserve_bytes=1 * GiB, cuda_graph_bytes=2 * GiB
    )

    # then
    # kv = 77,309,411,328 − 16,062,619,648 (tensors + rotary cache) − 2,147,483,648 − 1,073,741,824
    #   = 58,025,566,208
    # 58,025,566,208 // 2,097,152 = 27,668 blocks (27,668 × 2,097,152 = 58,024,001,536) → 442,688 tokens
    # required = budget + graphs = 77,309,411,328 + 2,147,483,648 = 79,456,894,976
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 58_025_566_208,
        "activations": 2_147_483_648,
        "runtime": 1_073_741_824,
        "cuda_graphs": 2_147_483_648,
    }
    assert result.kv_capacity_tokens == 442_688
    assert result.required_bytes_per_gpu == 79_456_894_976


def test_vllm_enforce_eager_captures_no_cuda_graphs():
    # given --enforce-eager

    # when
    result = _llama3_8b(Engine.VLLM, enforce_eager=True)

    # then: the KV pool is unchanged, no graphs: required = the budget 77,309,411,328
    assert result.memory_per_gpu["cuda_graphs"] == 0
    assert result.memory_per_gpu["kv_cache"] == 55_974_236_979
    assert result.required_bytes_per_gpu == NINETY_PERCENT_80_GIB
    assert result.launch_args[-1] == "--enforce-eager"


# --- SGLang --------------------------------------------------------------------------------------------------------


def test_sglang_auto_mem_fraction_static_holds_weights_and_the_kv_pool():
    # given SGLang 0.5.9's defaults on an 80 GiB card (81,920 MiB): chunked_prefill_size 8192, cuda_graph_max_bs 256
    # (the 0.5.3–0.5.9 reserve formula, no piecewise graphs yet: server_args.py:1020 @ v0.5.9)

    # when
    result = _llama3_8b(Engine.SGLANG, engine_version="0.5.9")

    # then
    # reserve (MiB) 512 + 1.5 × max(8192, 2048) + 2 × 256 + 1024 × 1 × 1 / 8 = 512 + 12,288 + 512 + 128 = 13,440
    #   (above the 10,240 MiB floor for cards over 60 GB)
    # mem_fraction_static = round((81,920 − 13,440) / 81,920, 3) = round(0.8359375, 3) = 0.836
    # static budget floor(85,899,345,920 × 0.836) = 71,811,853,189
    # KV pool: SGLang's profile_max_num_token takes free memory after loading − free memory before loading
    #   × (1 − 0.836); the CUDA context is in use before loading, so 0.836 of it leaves the pool, not all of it:
    #   weights are the tensors 16,060,522,496 + the rotary cache 2,097,152 = 16,062,619,648
    #   floor((85,899,345,920 − 536,870,912) × 0.836) − 16,062,619,648 = 71,363,029,106 − 16,062,619,648
    #   = 55,300,409,458 → // 131,072 = 421,908 tokens (1-token pages)
    # activations 12,288 MiB = 12,884,901,888; graphs 512 MiB = 536,870,912
    # runtime = the rest of the card: 85,899,345,920 − 16,062,619,648 − 55,300,409,458 − 12,884,901,888
    #   − 536,870,912 = 1,114,544,014 (the CUDA context 536,870,912 + 577,673,102 of the reserve left over)
    assert result.assumptions["engine_mem_fraction_static"] == 0.836
    assert result.budget_bytes_per_gpu == 71_811_853_189
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 55_300_409_458,
        "activations": 12_884_901_888,
        "runtime": 1_114_544_014,
        "cuda_graphs": 536_870_912,
    }
    assert result.kv_capacity_tokens == 421_908
    # 55,300,409,458 / (8192 × 131,072 = 1,073,741,824) = 51.50
    assert result.max_concurrency == 51.5
    assert result.required_bytes_per_gpu == CAPACITY_80_GIB  # the card, split between static and reserve
    assert result.assumptions["max_num_seqs"] == 256
    assert result.assumptions["max_num_batched_tokens"] == 8192
    assert result.warnings == ()
    assert result.fits is True


@pytest.mark.parametrize(
    ("memory_gib", "overrides", "graph_bs", "fraction"),
    [
        # 512 + 12,288 + 2 × 256 + 128 = 13,440 MiB of 81,920 → 0.8359375 → 0.836
        pytest.param(80, {}, 256, 0.836, id="80-gib-tp1"),
        # TP 8 (≥ 4) takes cuda_graph_max_bs 512: 512 + 12,288 + 1,024 + 1024 × 8 / 8 = 14,848
        #   → (81,920 − 14,848) / 81,920 = 0.81875 → 0.819
        pytest.param(80, {"tp": 8}, 512, 0.819, id="80-gib-tp8"),
        # 48 GiB: chunk 4096, graph bs 32: 512 + 6,144 + 64 + 128 = 6,848 → 42,304 / 49,152 = 0.86068 → 0.861
        pytest.param(48, {}, 32, 0.861, id="48-gib"),
        # chunk 2048, graph bs 8: 512 + 3,072 + 16 + 128 = 3,728 < 10,240 floor above 60 GB → 71,680 / 81,920 = 0.875
        pytest.param(80, {"max_num_batched_tokens": 2048, "max_num_seqs": 8}, 8, 0.875, id="80-gib-10-gb-floor"),
        # the same reserve on a 48 GiB card has no floor: (49,152 − 3,728) / 49,152 = 0.92415 → 0.924
        pytest.param(48, {"max_num_batched_tokens": 2048, "max_num_seqs": 8}, 8, 0.924, id="48-gib-no-floor"),
    ],
)
def test_sglang_reserve_sets_mem_fraction_static(memory_gib, overrides, graph_bs, fraction):
    # given Llama-3-8B under SGLang 0.5.9; DESIGN §7's reserve in MiB: 512 + 1.5 × max(chunked_prefill_size, 2048)
    # + 2 × cuda_graph_max_bs + 1024 × tp × pp / 8, at least 10 GiB on cards above 60 GB (0.5.3–0.5.9)
    request = EstimateRequest(
        arch=build_arch(),
        gpu=build_gpu(memory_gib=memory_gib),
        engine=Engine.SGLANG,
        max_model_len=8192,
        engine_version="0.5.9",
        **overrides,
    )

    # when
    result = estimate_memory(request)

    # then
    assert result.assumptions["engine_mem_fraction_static"] == fraction
    assert f"--mem-fraction-static {fraction}" in result.launch_args
    assert f"--cuda-graph-max-bs {graph_bs}" in result.launch_args


def test_sglang_explicit_mem_fraction_static_replaces_the_automatic_one():
    # given --mem-fraction-static 0.8

    # when
    result = _llama3_8b(Engine.SGLANG, mem_fraction_static=0.8, engine_version="0.5.9")

    # then
    # static budget floor(85,899,345,920 × 0.8) = 68,719,476,736 (64 GiB); the reserve 17,179,869,184 (16 GiB)
    #   holds SGLang's activations 12,884,901,888 + graphs 536,870,912 = 13,421,772,800: nothing capped, no warning
    # KV pool floor((85,899,345,920 − 536,870,912) × 0.8) − 16,062,619,648 (tensors + rotary cache)
    #   = 68,289,980,006 − 16,062,619,648 = 52,227,360,358 → // 131,072 = 398,463 tokens
    # runtime 85,899,345,920 − 16,062,619,648 − 52,227,360,358 − 12,884,901,888 − 536,870,912 = 4,187,593,114
    assert result.assumptions["engine_mem_fraction_static"] == 0.8
    assert result.budget_bytes_per_gpu == 68_719_476_736
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 52_227_360_358,
        "activations": 12_884_901_888,
        "runtime": 4_187_593_114,
        "cuda_graphs": 536_870_912,
    }
    assert result.kv_capacity_tokens == 398_463
    assert "--mem-fraction-static 0.8" in result.launch_args
    assert result.warnings == ()


def test_sglang_explicit_mem_fraction_static_that_squeezes_the_reserve_warns_but_fits():
    # given --mem-fraction-static 0.9, above the automatic 0.836

    # when
    result = _llama3_8b(Engine.SGLANG, mem_fraction_static=0.9, engine_version="0.5.9")

    # then
    # static budget floor(85,899,345,920 × 0.9) = 77,309,411,328; the reserve left: 85,899,345,920 − 77,309,411,328
    #   = 8,589,934,592 (8.00 GiB) < activations 12,884,901,888 + graphs 536,870,912 = 13,421,772,800 (12.50 GiB)
    # the bill shows what the reserve can hold: activations min(12,884,901,888, 8,589,934,592) = 8,589,934,592,
    #   graphs min(536,870,912, 8,589,934,592 − 8,589,934,592) = 0
    # KV pool floor((85,899,345,920 − 536,870,912) × 0.9) − 16,062,619,648 (tensors + rotary cache)
    #   = 76,826,227,507 − 16,062,619,648 = 60,763,607,859 → // 131,072 = 463,589 tokens
    # runtime 85,899,345,920 − 16,062,619,648 − 60,763,607,859 − 8,589,934,592 − 0 = 483,183,821
    #   (0.9 of the 536,870,912 context, rounded up)
    # SGLang starts with this fraction: a long prefill may run out of memory later, which is a warning, not a refusal
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 60_763_607_859,
        "activations": 8_589_934_592,
        "runtime": 483_183_821,
        "cuda_graphs": 0,
    }
    assert result.kv_capacity_tokens == 463_589
    assert result.required_bytes_per_gpu == CAPACITY_80_GIB
    assert result.warnings == (
        "mem_fraction_static 0.9 leaves 8.00 GiB outside the static pool; SGLang's own reserve for prefill "
        "activations and CUDA graphs is 12.50 GiB: long prefills can run out of memory",
    )
    assert result.problems == ()
    assert result.fits is True


# --- TensorRT-LLM --------------------------------------------------------------------------------------------------


def test_trtllm_kv_is_90_percent_of_the_memory_free_after_loading():
    # given TensorRT-LLM 0.21's defaults: max_batch_size 2048, max_num_tokens 8192, kv_cache_free_gpu_mem_fraction
    # 0.9, a TensorRT engine without CUDA graphs (1.0+: test_engine_versions_sglang_trtllm.py)

    # when
    result = _llama3_8b(Engine.TRTLLM, engine_version="0.21.0")

    # then
    # activations 8192 × 131,072 = 1,073,741,824 + logits 2048 × 513,024 = 1,050,673,152 → 2,124,414,976
    # free after loading = 85,899,345,920 − 16,060,522,496 − 2,124,414,976 − 536,870,912 (context) = 67,177,537,536
    # kv = floor(67,177,537,536 × 0.9) = 60,459,783,782
    # tokens in whole 32-token blocks: 60,459,783,782 // 131,072 = 461,271 → // 32 × 32 = 461,248
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_BF16_WEIGHTS,
        "kv_cache": 60_459_783_782,
        "activations": 2_124_414_976,
        "runtime": CUDA_CONTEXT,
        "cuda_graphs": 0,
    }
    assert result.kv_capacity_tokens == 461_248
    # budget = static + kv = 18,721,808,384 + 60,459,783,782 = 79,181,592,166
    assert result.budget_bytes_per_gpu == 79_181_592_166
    assert result.assumptions["engine_kv_cache_free_gpu_mem_fraction"] == 0.9
    assert result.fits is True


def test_trtllm_explicit_free_memory_fraction():
    # given --kv_cache_free_gpu_memory_fraction 0.5

    # when
    result = _llama3_8b(Engine.TRTLLM, kv_cache_free_gpu_mem_fraction=0.5)

    # then: floor(67,177,537,536 × 0.5) = 33,588,768,768 → // 131,072 = 256,262 → 8,008 blocks of 32 = 256,256
    assert result.memory_per_gpu["kv_cache"] == 33_588_768_768
    assert result.kv_capacity_tokens == 256_256
    assert "--kv_cache_free_gpu_memory_fraction 0.5" in result.launch_args


def test_trtllm_budget_when_the_engine_alone_exceeds_the_card():
    # given one stage whose weights (12 GiB) exceed a 10 GiB card; activations 1 GiB, runtime default 0.5 GiB
    stage = StageInputs(
        capacity_bytes=10 * GiB,
        gpu_memory_utilization=0.9,
        weight_bytes=12 * GiB,
        activation_peak_bytes=1 * GiB,
        kv=kv_layout((), kv_bits=16, tp=1, block_size=32),
        kv_demand_bytes=0,
        tp=1,
        pp=1,
        weight_overhead=1.0,
        runtime_reserve_bytes=None,
        cuda_graph_bytes=None,
        enforce_eager=False,
        batched_tokens=8192,
        max_num_seqs=2048,
    )

    # when
    budget = ENGINE_BUDGETS[Engine.TRTLLM](stage)

    # then
    # free = 10 GiB − (12 + 1 + 0.5) GiB = −3.5 GiB = −3,758,096,384: the pool is that deficit, the bill shows no KV
    assert budget.kv_pool_bytes == -3_758_096_384
    assert budget.components["kv_cache"] == 0
    assert budget.static_bytes == 14_495_514_624  # 13.5 GiB
    assert budget.budget_bytes == 14_495_514_624


# --- TGI -----------------------------------------------------------------------------------------------------------


def test_tgi_bill_after_a_warm_up_of_4096_prefill_tokens():
    # given TGI defaults: max_batch_prefill_tokens 4096, max_concurrent_requests 128, paged blocks of 16

    # when
    result = _llama3_8b(Engine.TGI)

    # then
    # activations 4096 × 131,072 = 536,870,912 + logits 128 × 513,024 = 65,667,072 → 602,537,984
    assert result.memory_per_gpu["weights"] == LLAMA3_8B_BF16_WEIGHTS
    assert result.memory_per_gpu["activations"] == 602_537_984
    assert result.memory_per_gpu["runtime"] == CUDA_CONTEXT
    assert result.memory_per_gpu["cuda_graphs"] == 0
    assert result.assumptions["max_num_seqs"] == 128
    assert result.assumptions["max_num_batched_tokens"] == 4096
    assert result.assumptions["engine_cuda_memory_fraction"] == 0.9


@pytest.mark.parametrize(
    ("fraction", "kv_cache", "tokens"),
    [
        # --cuda-memory-fraction 0.9: floor(85,899,345,920 × 0.9 × 0.9) = 69,578,470,195
        #   − static (16,060,522,496 + 602,537,984 + 536,870,912 = 17,199,931,392) = 52,378,538,803
        #   → // 131,072 = 399,616 → whole 16-token blocks 399,616
        pytest.param(0.9, 52_378_538_803, 399_616, id="cuda-memory-fraction-0.9"),
        # TGI's default --cuda-memory-fraction 1.0: floor(85,899,345,920 × 0.9) = 77,309,411,328 − 17,199,931,392
        #   = 60,109,479,936 → 458,599 → 458,592
        pytest.param(1.0, 60_109_479_936, 458_592, id="cuda-memory-fraction-1.0"),
    ],
)
def test_tgi_kv_cache_keeps_tgi_wiggle_room_below_the_cuda_memory_fraction(fraction, kv_cache, tokens):
    # given TGI ≥ 3.0 warm-up (flash_causal_lm.warmup): free = mem_get_info free − (1 − cuda_memory_fraction
    # × TGI_WIGGLE_ROOM) × total, TGI_WIGGLE_ROOM = 0.90 by default (3.3+); what the warm-up left in use (weights,
    # its activation peak, the CUDA context) is not free, so KV = fraction × 0.9 × total − static

    # when
    result = _llama3_8b(Engine.TGI, gpu_memory_utilization=fraction)

    # then
    assert f"--cuda-memory-fraction {fraction}" in result.launch_args
    assert result.memory_per_gpu["kv_cache"] == kv_cache
    assert result.kv_capacity_tokens == tokens


# --- llama.cpp -----------------------------------------------------------------------------------------------------


def test_llamacpp_allocates_a_static_context_of_slots_times_tokens():
    # given llama-server with 4 parallel slots of 8192 tokens

    # when
    result = _llama3_8b(Engine.LLAMACPP, concurrency=4)

    # then
    # n_ctx = 4 × 8192 = 32,768 tokens × 131,072 = 4,294,967,296 (4 GiB), allocated at start
    # compute buffer of one 512-token micro-batch (n_ubatch), reserved for its worst case, every position an
    #   output: 512 × 131,072 = 67,108,864 + logits 512 × 513,024 = 262,668,288 → 329,777,152
    # required 16,060,522,496 + 4,294,967,296 + 329,777,152 + 536,870,912 = 21,222,137,856 against the 90% line
    assert result.allocation == "static"
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_BF16_WEIGHTS,
        "kv_cache": 4_294_967_296,
        "activations": 329_777_152,
        "runtime": CUDA_CONTEXT,
        "cuda_graphs": 0,
    }
    assert result.assumptions["max_num_seqs"] == 512
    assert result.assumptions["max_num_batched_tokens"] == 512
    assert result.required_bytes_per_gpu == 21_222_137_856
    assert result.usable_bytes_per_gpu == NINETY_PERCENT_80_GIB
    assert result.headroom_bytes_per_gpu == 56_087_273_472  # 77,309,411,328 − 21,222,137,856
    assert result.kv_demand_bytes_per_gpu == 4_294_967_296
    assert result.fits is True
    assert result.launch_args[:2] == ("--ctx-size 32768", "--parallel 4")


def test_llamacpp_kv_capacity_is_the_context_it_allocated():
    # given llama-server started with --ctx-size 32768 --parallel 4 (4 slots of 8192 tokens)

    # when
    result = _llama3_8b(Engine.LLAMACPP, concurrency=4)

    # then
    # a static allocation holds exactly n_ctx = 32,768 tokens (the 4 GiB in the bill), shared by 4 slots:
    # at most 32,768 / 8192 = 4.0 concurrent 8192-token requests, not what the rest of the card could hold
    assert result.kv_capacity_tokens == 32_768
    assert result.max_concurrency == 4.0


@pytest.mark.parametrize("overrides", [pytest.param({"tp": 2}, id="tp-2"), pytest.param({"gpus": 2}, id="gpus-2")])
def test_llamacpp_refuses_tensor_parallel(overrides):
    # given llama.cpp on two GPUs as tensor parallel
    request = EstimateRequest(
        arch=build_arch(), gpu=build_gpu(memory_gib=80), engine=Engine.LLAMACPP, max_model_len=8192, **overrides
    )

    # when
    with pytest.raises(SizingError) as caught:
        estimate_memory(request)

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert list(caught.value.extra["fields"]) == ["tp"]
    assert caught.value.message == (
        "llama.cpp splits a model across GPUs by layers, not tensor parallel: set pp to the GPU count "
        "(--split-mode layer) instead of tp"
    )


def test_llamacpp_splits_layers_over_pipeline_stages():
    # given llama.cpp over two GPUs by layers (pp 2), 4 slots of 8192 tokens

    # when
    result = _llama3_8b(Engine.LLAMACPP, pp=2, concurrency=4)

    # then
    # each stage 16 layers: 16 × 8 × 128 × 2 × 2 = 65,536 bytes per token × 32,768 = 2,147,483,648
    # stage 0 weights 8,030,257,152 (embeddings), no logits: 512 × 131,072 = 67,108,864
    # stage 1 weights 8,030,265,344 (head + final norm), logits of the 512-token micro-batch:
    #   67,108,864 + 512 × 513,024 = 67,108,864 + 262,668,288 = 329,777,152
    stage0, stage1 = result.per_gpu
    assert stage0.components == {
        "weights": 8_030_257_152,
        "kv_cache": 2_147_483_648,
        "activations": 67_108_864,
        "runtime": CUDA_CONTEXT,
        "cuda_graphs": 0,
    }
    assert stage1.components == {
        "weights": 8_030_265_344,
        "kv_cache": 2_147_483_648,
        "activations": 329_777_152,
        "runtime": CUDA_CONTEXT,
        "cuda_graphs": 0,
    }
    assert (result.gpus, result.tp, result.pp) == (2, 1, 2)
    assert "--split-mode layer" in result.launch_args
    assert result.fits is True


def test_llamacpp_context_beyond_the_planning_limit_does_not_fit():
    # given 60 slots of 8192 tokens

    # when
    result = _llama3_8b(Engine.LLAMACPP, concurrency=60)

    # then
    # KV 60 × 8192 × 131,072 = 64,424,509,440; activations (the 512-token micro-batch, whatever the slots)
    #   67,108,864 + 512 × 513,024 = 329,777,152
    # required 16,060,522,496 + 64,424,509,440 + 329,777,152 + 536,870,912 = 81,351,680,000 (75.76 GiB)
    #   > 77,309,411,328 (72.00 GiB)
    assert result.memory_per_gpu["kv_cache"] == 64_424_509_440
    assert result.memory_per_gpu["activations"] == 329_777_152
    assert result.required_bytes_per_gpu == 81_351_680_000
    assert result.fits is False
    assert result.problems[-1] == "GPU 0 needs 75.76 GiB, 72.00 GiB usable"


# --- transformers --------------------------------------------------------------------------------------------------


def test_transformers_kv_and_activations_grow_with_the_padded_batch():
    # given generate() on 8 sequences padded to 8192 tokens

    # when
    result = _llama3_8b(Engine.TRANSFORMERS, concurrency=8)

    # then
    # KV 8 × 8192 × 131,072 = 8,589,934,592 (8 GiB)
    # the whole padded batch is prefilled at once: 8 × 8192 = 65,536 tokens × 131,072 = 8,589,934,592
    #   + logits 8 × 513,024 = 4,104,192 → 8,594,038,784
    # required 16,060,522,496 + 8,589,934,592 + 8,594,038,784 + 536,870,912 = 33,781,366,784
    assert result.allocation == "on_demand"
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_BF16_WEIGHTS,
        "kv_cache": 8_589_934_592,
        "activations": 8_594_038_784,
        "runtime": CUDA_CONTEXT,
        "cuda_graphs": 0,
    }
    assert result.assumptions["max_num_seqs"] == 8
    assert result.assumptions["max_num_batched_tokens"] == 65_536
    assert result.required_bytes_per_gpu == 33_781_366_784
    assert result.usable_bytes_per_gpu == NINETY_PERCENT_80_GIB
    assert result.launch_args == ()
    assert result.fits is True


def test_transformers_beyond_the_90_percent_planning_limit_does_not_fit():
    # given 32 sequences of 8192 tokens

    # when
    result = _llama3_8b(Engine.TRANSFORMERS, concurrency=32)

    # then
    # KV 32 GiB = 34,359,738,368; activations 262,144 tokens × 131,072 = 34,359,738,368 + 32 × 513,024
    #   = 16,416,768 → 34,376,155,136
    # required 16,060,522,496 + 34,359,738,368 + 34,376,155,136 + 536,870,912 = 85,333,286,912 (79.47 GiB)
    #   > 77,309,411,328 (72.00 GiB)
    assert result.memory_per_gpu["kv_cache"] == 34_359_738_368
    assert result.memory_per_gpu["activations"] == 34_376_155_136
    assert result.required_bytes_per_gpu == 85_333_286_912
    assert result.fits is False
    assert result.problems[-1] == "GPU 0 needs 79.47 GiB, 72.00 GiB usable"


def test_transformers_concurrency_curve_grows_the_activations_with_each_sequence():
    # given generate() at 8 sequences of 8192 tokens

    # when
    curve = _llama3_8b(Engine.TRANSFORMERS, concurrency=8).concurrency_curve

    # then
    # each sequence adds its KV 1,073,741,824 and its padded prefill 8192 × 131,072 + 513,024 = 1,074,254,848
    #   → 2,147,996,672 per sequence; fixed: weights + context = 16,597,393,408
    # (77,309,411,328 − 16,597,393,408) // 2,147,996,672 = 60,712,017,920 // 2,147,996,672 = 28
    for concurrency, required in zip(curve.concurrency, curve.required_bytes, strict=True):
        assert required == 16_597_393_408 + concurrency * 2_147_996_672
    assert curve.max_concurrency_fit == 28
    assert _llama3_8b(Engine.TRANSFORMERS, concurrency=28).fits is True
    assert _llama3_8b(Engine.TRANSFORMERS, concurrency=29).fits is False


# --- idealized -----------------------------------------------------------------------------------------------------


def test_idealized_field_calculator_on_llama3_8b():
    # given the field calculator (DESIGN §5): weights × 1.05, a 2 GiB reserve, 90% of the card;
    # 16 requests × 2048 tokens

    # when
    result = _llama3_8b(Engine.IDEALIZED, weight_overhead=1.05, concurrency=16, tokens_per_request=2048)

    # then
    # weights ceil(16,060,522,496 × 1.05) = 16,863,548,621; KV 16 × 2048 × 131,072 = 4,294,967,296 (4 GiB)
    # required 16,863,548,621 + 4,294,967,296 + 2,147,483,648 = 23,305,999,565
    assert result.memory_per_gpu == {
        "weights": 16_863_548_621,
        "kv_cache": 4_294_967_296,
        "activations": 0,
        "runtime": 2_147_483_648,
        "cuda_graphs": 0,
    }
    assert result.required_bytes_per_gpu == 23_305_999_565
    assert result.usable_bytes_per_gpu == NINETY_PERCENT_80_GIB
    assert result.fits is True


@pytest.mark.parametrize(
    ("memory_gib", "fits"),
    [
        # 14,700,000,000 + 17,179,869,184 + 2,147,483,648 = 34,027,352,832 > floor(24 GiB × 0.9) = 23,192,823,398
        pytest.param(24, False, id="24-gib-does-not-fit"),
        # ≤ floor(40 GiB × 0.9) = 38,654,705,664
        pytest.param(40, True, id="40-gib-fits"),
    ],
)
def test_idealized_mha_32_sequences_of_1024_tokens_hold_16_gib(memory_gib, fits):
    # given DESIGN §5: a 7B multi-head model, 32 layers × 32 KV heads × 128, 2 bytes; 32 × 1024 tokens
    arch = architecture_from_numbers(parameters=7 * 10**9, num_hidden_layers=32, num_key_value_heads=32, head_dim=128)

    # when
    result = estimate_memory(
        EstimateRequest(
            arch=arch,
            gpu=build_gpu(memory_gib=memory_gib),
            engine=Engine.IDEALIZED,
            weight_overhead=1.05,
            concurrency=32,
            tokens_per_request=1024,
        )
    )

    # then
    # 32 × 32 × 128 × 2 × 2 = 524,288 bytes (512 KiB) per token; × 1024 = 512 MiB per sequence; × 32 = 16 GiB
    # weights 7e9 × 2 × 1.05 = 14,700,000,000; reserve 2 GiB
    assert result.kv_bytes_per_token == 524_288
    assert result.kv_cache_bytes_per_gpu == 17_179_869_184
    assert result.required_bytes_per_gpu == 34_027_352_832
    assert result.fits is fits


# --- launch arguments ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "args"),
    [
        pytest.param(
            Engine.VLLM,
            (
                "--tensor-parallel-size 1",
                "--pipeline-parallel-size 1",
                "--gpu-memory-utilization 0.9",
                "--max-model-len 8192",
                "--max-num-seqs 1024",
                "--max-num-batched-tokens 8192",
                "--block-size 16",
                "--kv-cache-dtype auto",
            ),
            id="vllm",
        ),
        # SGLang 0.5.23 (latest): reserve 512 + 12,288 + 512 + 128 + piecewise graphs 58 × 8 = 13,904 MiB
        #   → round((81,920 − 13,904) / 81,920, 3) = 0.83
        pytest.param(
            Engine.SGLANG,
            (
                "--tp-size 1",
                "--pp-size 1",
                "--mem-fraction-static 0.83",
                "--chunked-prefill-size 8192",
                "--cuda-graph-max-bs 256",
                "--context-length 8192",
                "--kv-cache-dtype auto",
            ),
            id="sglang",
        ),
        pytest.param(
            Engine.TRTLLM,
            (
                "--tp_size 1",
                "--pp_size 1",
                "--max_batch_size 2048",
                "--max_num_tokens 8192",
                "--kv_cache_free_gpu_memory_fraction 0.9",
                "--max_seq_len 8192",
            ),
            id="trtllm",
        ),
        pytest.param(
            Engine.TGI,
            (
                "--num-shard 1",
                "--cuda-memory-fraction 0.9",
                "--max-batch-prefill-tokens 4096",
                "--max-concurrent-requests 128",
                "--max-total-tokens 8192",
            ),
            id="tgi",
        ),
        pytest.param(
            Engine.LLAMACPP,
            (
                "--ctx-size 8192",
                "--parallel 1",
                "--n-gpu-layers 999",
                "--split-mode none",
                "--ubatch-size 512",
                "--cache-type-k f16",
                "--cache-type-v f16",
            ),
            id="llamacpp",
        ),
        pytest.param(Engine.TRANSFORMERS, (), id="transformers"),
        pytest.param(Engine.IDEALIZED, (), id="idealized"),
    ],
)
def test_launch_args_name_what_was_sized(engine, args):
    # given Llama-3-8B on 80 GiB, one request of 8192 tokens

    # when
    result = _llama3_8b(engine)

    # then
    assert result.launch_args == args


# --- refusals at start -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", [pytest.param(Engine.VLLM, id="vllm"), pytest.param(Engine.TGI, id="tgi")])
def test_engines_that_refuse_a_context_they_cannot_hold_name_themselves(engine):
    # given meta-llama/Meta-Llama-3.1-8B (131,072-token context) on one 24 GiB card: vLLM refuses to start
    # ("larger than the maximum number of tokens that can be stored in KV cache"), TGI's router refuses
    # ("Not enough memory to handle max_total_tokens")
    request = EstimateRequest(
        arch=architecture_from_config(LLAMA31_8B_CONFIG), gpu=build_gpu(memory_gib=24), engine=engine
    )

    # when
    result = estimate_memory(request)

    # then: one 131,072-token sequence needs 131,072 × 131,072 = 17,179,869,184 bytes (16.00 GiB)
    label = ENGINE_TRAITS[engine].label
    assert result.problems[0].startswith(
        f"{label} will not start: one 131072-token sequence needs 16.00 GiB of KV cache, "
    )
    assert re.search(r"; max_model_len \d+ would fit$", result.problems[0])
    assert result.fits is False


@pytest.mark.parametrize("engine", [pytest.param(Engine.SGLANG, id="sglang"), pytest.param(Engine.TRTLLM, id="trtllm")])
def test_engines_that_cap_the_context_to_their_pool_still_start(engine):
    # given the same deployment under SGLang or TensorRT-LLM. SGLang refuses only an empty pool ("Not enough
    # memory. Please try to increase --mem-fraction-static"); otherwise it caps max_req_len at
    # min(context_len − 1, max_total_num_tokens − 1). TensorRT-LLM reduces maxAttentionWindow and maxSequenceLen
    # to what the KV cache holds, with a warning. Neither "will not start".
    request = EstimateRequest(
        arch=architecture_from_config(LLAMA31_8B_CONFIG), gpu=build_gpu(memory_gib=24), engine=engine
    )

    # when
    result = estimate_memory(request)

    # then: the request of 131,072 tokens still does not fit the pool (a demand problem), but the engine starts,
    # and a warning says how long a request it will take (131,072 × 131,072 = 17,179,869,184 bytes = 16.00 GiB)
    label = ENGINE_TRAITS[engine].label
    assert not any("will not start" in problem for problem in result.problems)
    assert any(
        re.fullmatch(
            rf"{label} starts but caps the longest request at about \d+ tokens: one 131072-token "
            r"sequence needs 16\.00 GiB of KV cache, \d+\.\d\d GiB available",
            warning,
        )
        for warning in result.warnings
    )
    assert result.fits is False


def test_sglang_with_no_room_for_the_pool_reports_no_memory_for_the_kv_cache():
    # given Llama-3-70B-sized weights (141 GB) on one 80 GiB card under SGLang
    arch = build_arch(hidden_size=8192, num_hidden_layers=80, num_attention_heads=64, intermediate_size=28672)

    # when
    result = estimate_memory(
        EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), engine=Engine.SGLANG, max_model_len=8192)
    )

    # then
    assert result.kv_capacity_tokens == 0
    assert result.memory_per_gpu["kv_cache"] == 0
    assert result.problems[0].startswith("no memory left for the KV cache: weights 131.42 GiB")
    assert result.fits is False


# --- KV-head replication -------------------------------------------------------------------------------------------


def test_tp16_over_8_kv_heads_warns_that_heads_are_replicated():
    # given Llama-3-8B at TP 16

    # when
    result = _llama3_8b(Engine.VLLM, tp=16)

    # then
    # each rank keeps max(1, 8 // 16) = 1 head: 32 × 1 × 128 × 2 × 2 = 16,384 bytes per token per GPU,
    # twice the 131,072 / 16 = 8,192 an even split would give
    assert result.kv_bytes_per_token == LLAMA3_8B_KV_PER_TOKEN
    assert result.kv_bytes_per_token_per_gpu == 16_384
    assert result.warnings == (
        "KV heads replicated: 8 KV heads over TP 16, so each GPU stores 2x the KV it would with enough heads to split",
    )


def test_tp8_over_8_kv_heads_splits_them_without_a_warning():
    # given Llama-3-8B at TP 8: one KV head per rank

    # when
    result = _llama3_8b(Engine.VLLM, tp=8)

    # then: 32 × 1 × 128 × 2 × 2 = 16,384 bytes per token per GPU
    assert result.kv_bytes_per_token_per_gpu == 16_384
    assert result.warnings == ()


# --- hybrid sliding-window stack ------------------------------------------------------------------------------------


def test_vllm_hybrid_sliding_window_stack_shares_one_block_pool():
    # given the gpt-oss-like stack on one 80 GiB card, vLLM defaults, max_model_len 131,072, one request

    # when
    result = estimate_memory(
        EstimateRequest(
            arch=_gpt_oss_like_arch(), gpu=build_gpu(memory_gib=80), max_model_len=131_072, engine_version=VLLM
        )
    )

    # then
    # weights per layer: q, k, v, o 4 × 512 × 512 = 1,048,576; MLP 3 × 512 × 1024 = 1,572,864; 2 norms 1,024
    #   → 2,622,464 × 24 = 62,939,136; embeddings + head 2 × 1024 × 512 = 1,048,576; final norm 512
    #   → 63,988,224 parameters × 2 bytes = 127,976,448
    # rotary cache 131,072 positions × 64 (head_dim) × 2 bytes = 16,777,216 → weights line 144,753,664
    # activations: max(forward 8192 × (3 × 512 + MLP 3 × 1024) × 2 = 75,497,472, sampler 1024 × 1024 × 38
    #   = 39,845,888 + 8192 × 512 × 2 = 8,388,608 + 53,687,091) = 101,921,587
    # kv = 77,309,411,328 − 144,753,664 − 101,921,587 − 161,061,274 = 76,901,674,803
    # group size 12 (12 sliding vs 12 full); a block = 12 layer slots × 16 × 2,048 = 393,216 bytes
    #   → 76,901,674,803 // 393,216 = 195,571 blocks; "GPU KV cache size" 195,571 // 2 groups × 16 = 1,564,560
    # one 131,072-token request: sliding ceil(min(127 + 8192, 131,072) / 16) + 1 = 521, full 8,192 → 8,713 blocks
    #   → max concurrency 195,571 / 8,713 = 22.45; its demand 8,713 × 393,216 = 3,426,091,008 bytes
    assert result.weight_bytes_per_gpu == 127_976_448
    assert result.rope_cache_bytes_per_gpu == 16_777_216
    assert result.kv_bytes_per_token == 49_152
    assert result.memory_per_gpu == {
        "weights": 144_753_664,
        "kv_cache": 76_901_674_803,
        "activations": 101_921_587,
        "runtime": VLLM_NON_TORCH_TP1,
        "cuda_graphs": VLLM_CUDA_GRAPHS,
    }
    assert result.assumptions["kv_groups"] == ["12 x sliding (window 128)", "12 x full"]
    assert result.kv_capacity_tokens == 1_564_560
    assert result.max_concurrency == 22.45
    assert result.kv_demand_bytes_per_gpu == 3_426_091_008
    assert result.concurrency_curve.max_concurrency_fit == 22
    assert result.problems == ()


def test_vllm_sliding_windows_nearly_double_the_long_requests_a_pool_holds():
    # given the same stack with every layer full attention
    hybrid = _gpt_oss_like_arch()
    full = AttentionSpec(num_heads=8, num_kv_heads=8, head_dim=64)
    all_full = replace(hybrid, layers=tuple(LayerSpec(attention=full, mlp=layer.mlp) for layer in hybrid.layers))

    # when
    result = estimate_memory(
        EstimateRequest(arch=all_full, gpu=build_gpu(memory_gib=80), max_model_len=131_072, engine_version=VLLM)
    )

    # then
    # same weights (with the rotary cache) and pool 76,901,674,803; one group of 24: a block = 24 × 32,768
    #   = 786,432 bytes → 97,785 blocks → 1,564,560 tokens (the same "GPU KV cache size")
    # one request needs 131,072 / 16 = 8,192 blocks → 97,785 / 8,192 = 11.94 (hybrid: 22.45)
    assert result.memory_per_gpu["kv_cache"] == 76_901_674_803
    assert result.kv_capacity_tokens == 1_564_560
    assert result.max_concurrency == 11.94
    assert result.assumptions["kv_groups"] == ["24 x full"]


def test_sglang_warns_that_its_sliding_window_pool_is_sized_as_full_attention():
    # given the gpt-oss-like stack under SGLang

    # when
    result = estimate_memory(
        EstimateRequest(
            arch=_gpt_oss_like_arch(),
            gpu=build_gpu(memory_gib=80),
            engine=Engine.SGLANG,
            max_model_len=131_072,
            engine_version="0.5.9",
        )
    )

    # then
    # mem_fraction_static 0.836 (SGLang 0.5.9's 80 GiB defaults); weights 127,976,448 + rotary cache 16,777,216
    #   = 144,753,664; pool: floor((85,899,345,920 − 536,870,912 CUDA context) × 0.836) − 144,753,664
    #   = 71,363,029,106 − 144,753,664 = 71,218,275,442 → // 49,152 = 1,448,939 tokens,
    # every layer counted as keeping every token
    assert result.memory_per_gpu["kv_cache"] == 71_218_275_442
    assert result.kv_capacity_tokens == 1_448_939
    assert "SGLang's sliding-window pool is sized here as full attention: an upper bound" in result.warnings


def test_vllm_gpt_oss_20b_pool_is_shared_by_a_sliding_and_a_full_group():
    # given openai/gpt-oss-20b (24 layers alternating sliding window 128 / full, 8 KV heads × 64) on 80 GiB
    arch = architecture_from_config(GPT_OSS_20B_CONFIG)

    # when
    result = estimate_memory(EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), max_model_len=131_072))

    # then
    # KV per token if every layer kept every token: 24 × 8 × 64 × 2 × 2 = 49,152; a block = 12 slots × 16 × 2,048
    #   = 393,216 bytes; one 131,072-token request: 521 sliding + 8,192 full = 8,713 blocks = 3,426,091,008 bytes
    pool = result.memory_per_gpu["kv_cache"]
    blocks = pool // 393_216
    assert result.kv_bytes_per_token == 49_152
    assert result.assumptions["kv_groups"] == ["12 x sliding (window 128)", "12 x full"]
    assert result.kv_demand_bytes_per_gpu == 3_426_091_008
    assert result.kv_capacity_tokens == blocks // 2 * 16
    assert result.max_concurrency == round(blocks / 8_713, 2)


def test_vllm_gemma3_27b_request_holds_its_windows_plus_one_chunk():
    # given google/gemma-3-27b-it (62 layers: 52 sliding window 1024, 10 global; 16 KV heads × 128) on 80 GiB,
    # max_model_len 32,768, vLLM's 8192-token chunks
    arch = architecture_from_config(GEMMA3_27B_IT_CONFIG)

    # when
    result = estimate_memory(EstimateRequest(arch=arch, gpu=build_gpu(memory_gib=80), max_model_len=32_768))

    # then
    # 62 × 16 × 128 × 2 × 2 = 507,904 bytes per token if every layer kept every token
    # group size 10 → ceil(52 / 10) = 6 sliding groups, the 52 layers dealt round-robin (layers[i::6]):
    #   9, 9, 9, 9, 8, 8; + 1 full group of 10; a block = 10 slots × 16 × 8,192 = 1,310,720 bytes
    # one 32,768-token request: each sliding group ceil(min(1023 + 8192, 32,768) / 16) + 1 = 576 + 1 = 577,
    #   × 6 = 3,462; full 2,048 → 5,510 blocks × 1,310,720 = 7,222,067,200 bytes
    #   (every layer full: 32,768 × 507,904 = 16,642,998,272)
    pool = result.memory_per_gpu["kv_cache"]
    blocks = pool // 1_310_720
    assert result.kv_bytes_per_token == 507_904
    assert result.assumptions["kv_groups"] == [
        *["9 x sliding (window 1024)"] * 4,
        *["8 x sliding (window 1024)"] * 2,
        "10 x full",
    ]
    assert result.kv_demand_bytes_per_gpu == 7_222_067_200
    assert result.kv_capacity_tokens == blocks // 7 * 16
    assert result.max_concurrency == round(blocks / 5_510, 2)

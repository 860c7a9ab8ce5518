"""vLLM's KV budget by release (estimator.vllm_budget; shared/design/vllm-memory.md): the worked examples of the
specification, the version switches, the profiler's batch and the sampler rules, non-torch memory and the inputs.

Every expected figure is computed by hand in the comment beside it from the specification's rules (each rule cites
vLLM's source); "public" figures cite where they were published."""

from __future__ import annotations

from typing import Any

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.units import GiB, MiB
from sizing.estimator.vllm_budget import mxfp4_padded_expert_bytes
from tests.sizing.estimator.builders import GPT_OSS_20B_CONFIG, LLAMA3_8B_CONFIG, QWEN25_7B_CONFIG

# Sizing keys of published config.json files, copied by hand.
MISTRAL_7B_V03_CONFIG: dict[str, Any] = {
    # mistralai/Mistral-7B-v0.3 (no sliding window, vocabulary 32,768)
    "model_type": "mistral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 14336,
    "vocab_size": 32768,
    "tie_word_embeddings": False,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
    "sliding_window": None,
}
QWEN25_14B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-14B-Instruct
    "model_type": "qwen2",
    "hidden_size": 5120,
    "num_hidden_layers": 48,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "intermediate_size": 13824,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "sliding_window": 131072,
    "max_window_layers": 48,
}
LLAMA31_70B_CONFIG: dict[str, Any] = {
    # meta-llama/Llama-3.1-70B-Instruct
    "model_type": "llama",
    "hidden_size": 8192,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}
QWEN25_MATH_15B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-Math-1.5B (tied embeddings, 4,096-token context)
    "model_type": "qwen2",
    "hidden_size": 1536,
    "num_hidden_layers": 28,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "sliding_window": 4096,
    "max_window_layers": 21,
}


def _card(
    name: str, cuda_total_gib: float, cc: tuple[int, int], *, nvswitch: bool = False, sms: int | None = None
) -> GpuSpec:
    total = round(cuda_total_gib * GiB)
    return GpuSpec(
        slug=name.lower().replace(" ", "-"),
        name=name,
        memory_bytes=total + 512 * MiB,
        cuda_total_bytes=total,
        compute_capability=cc,
        nvswitch=nvswitch,
        sm_count=sms,
    )


ADA24 = _card("24 GiB card", 23.60, (8, 6))  # a 24 GiB-class card: CUDA sees 23.60 GiB
H100 = _card("NVIDIA H100 80GB HBM3", 79.19, (9, 0), sms=132)  # public capacity-planner report: 79.19 GiB
L40S = _card("NVIDIA L40S", 44.39, (8, 9), sms=142)
H200 = _card("NVIDIA H200", 139.7, (9, 0), nvswitch=True, sms=132)


def _estimate(config: dict[str, Any], gpu: GpuSpec, **settings: Any) -> MemoryEstimate:
    return estimate_memory(
        EstimateRequest(arch=architecture_from_config(config), gpu=gpu, engine=Engine.VLLM, **settings)
    )


def _kv_gib(result: MemoryEstimate) -> float:
    return result.memory_per_gpu["kv_cache"] / GiB


# --- the specification's worked examples (§4) ------------------------------------------------------------------
# The specification rounds its weights to 0.01 GiB; ours add the rotary cache exactly, so the KV figures agree within
# 0.5 % (the tokens to the block).


def test_example_a_v0_profiles_a_batch_of_max_model_len_tokens():
    # given vLLM 0.7.3 (V0, regime P2), Mistral-7B-v0.3 on a 24 GiB-class card, --max-model-len 16384, util 0.92
    result = _estimate(
        MISTRAL_7B_V03_CONFIG, ADA24, engine_version="0.7.3", max_model_len=16384, gpu_memory_utilization=0.92
    )
    # then: S 256, B = max(16384, 2048) = 16384; F = 16384 × (3 × 4096 + 3 × 14336) × 2 = 1.688 GiB; sampler
    # 256 × 32768 × 38 + 16384 × 4096 × 2 = 0.422 GiB → A = 1.688; NT 0.05
    # KV = 0.92 × 23.60 − 13.50 − 1.688 − 0.05 = 6.474 GiB → 53,024 tokens (spec)
    assert result.assumptions["max_num_seqs"] == 256
    assert result.assumptions["max_num_batched_tokens"] == 16384
    assert result.memory_per_gpu["activations"] == 16384 * (3 * 4096 + 3 * 14336) * 2
    assert result.memory_per_gpu["runtime"] == round(0.05 * GiB)
    assert _kv_gib(result) == pytest.approx(6.474, rel=0.005)
    assert result.kv_capacity_tokens == pytest.approx(53024, rel=0.005)


def test_example_a_v0_kv_shrinks_with_max_model_len_to_32k_then_jumps_with_chunked_prefill():
    # given the same deployment at growing contexts
    kv = {
        length: _kv_gib(
            _estimate(
                MISTRAL_7B_V03_CONFIG, ADA24, engine_version="0.7.3", max_model_len=length, gpu_memory_utilization=0.92
            )
        )
        for length in (4096, 16384, 32768, 32769, 40000)
    }
    # then: B = max(L, 2048) grows the forward peak up to 32,768; above it chunked prefill turns on by itself and
    # B = 2048: at 40,000 the spec gives KV 7.849 GiB (longer context, more KV)
    assert kv[4096] > kv[16384] > kv[32768]
    assert kv[32769] > kv[4096]
    assert kv[40000] == pytest.approx(7.849, rel=0.005)


def test_example_b_v0_before_0_6_5_counts_the_cuda_context():
    # given vLLM 0.6.4 (regime P0), the same model and card, --max-model-len 24000
    result = _estimate(MISTRAL_7B_V03_CONFIG, ADA24, engine_version="0.6.4", max_model_len=24000)
    # then: util 0.9; F = 24000 × 55296 × 2 = 2.472 GiB; NT with the context 0.40 GiB
    # KV = 0.9 × 23.60 − 13.50 − 2.472 − 0.40 = 4.868 GiB → 39,872 tokens (spec)
    assert result.memory_per_gpu["runtime"] == round(0.40 * GiB)
    assert _kv_gib(result) == pytest.approx(4.868, rel=0.005)
    assert result.kv_capacity_tokens == pytest.approx(39872, rel=0.005)


@pytest.mark.parametrize(("version", "kv_gib", "tokens"), [("0.8.5", 5.190, 97184), ("0.9.2", 5.455, 102128)])
def test_example_c_v1_regime_switch_at_0_9_1_drops_the_context_and_the_runner_buffers(version, kv_gib, tokens):
    # given `vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 16384` on the 24 GiB-class card
    result = _estimate(QWEN25_7B_CONFIG, ADA24, engine_version=version, max_model_len=16384)
    # then: S 256, B 2048, rows 256, sort: sampler 256 × 152064 × 38 + 2048 × 3584 × 2 + 0.05 GiB = 1.441 GiB
    # 0.8.5 (P0): NT 0.40 + model-runner buffers ≈ 0.015 → KV 5.190 GiB; 0.9.2 (P2): NT 0.15 → 5.455 GiB (spec)
    assert result.memory_per_gpu["activations"] == 256 * 152064 * 38 + 2048 * 3584 * 2 + round(0.05 * GiB)
    assert _kv_gib(result) == pytest.approx(kv_gib, rel=0.005)
    assert result.kv_capacity_tokens == pytest.approx(tokens, rel=0.005)


@pytest.mark.parametrize(("version", "kv_gib", "tokens"), [("0.11.0", 37.963, 207328), ("0.17.1", 41.382, 226000)])
def test_example_d_big_card_defaults_and_the_triton_sampler_from_0_17(version, kv_gib, tokens):
    # given `vllm serve Qwen/Qwen2.5-14B-Instruct` (pip) on one H100 SXM (CUDA total 79.19 GiB)
    result = _estimate(QWEN25_14B_CONFIG, H100, engine_version=version)
    # then: S 1024, B 8192, rows 1024; 0.11.0 sorts: 1024 × 152064 × 38 + 8192 × 5120 × 2 + 0.05 GiB = 5.639 GiB
    # → KV 71.271 − 27.519 − 5.639 − 0.15 = 37.963 GiB; 0.17.1's Triton sampler (14 bytes + a 132-row buffer of
    # 152064 × 4) → A 2.220, KV 41.382 GiB (spec)
    assert (result.assumptions["max_num_seqs"], result.assumptions["max_num_batched_tokens"]) == (1024, 8192)
    assert _kv_gib(result) == pytest.approx(kv_gib, rel=0.005)
    assert result.kv_capacity_tokens == pytest.approx(tokens, rel=0.005)


def test_example_e_v0_tp_only_the_driver_samples_and_binds_the_minimum():
    # given vLLM 0.7.3 (V0), Qwen2.5-14B-Instruct at TP 2 on two 48 GiB Ada cards (44.39 GiB), 65,536 context
    result = _estimate(QWEN25_14B_CONFIG, L40S, engine_version="0.7.3", tp=2, max_model_len=65536)
    # then: chunked prefill (L > 32K) → B 2048; the driver samples: A = 256 × 152064 × 38 + 2048 × 5120 × 2
    # = 1.397 GiB; NT 0.05 + 0.25 (NCCL); KV = 39.951 − 13.763 − 1.397 − 0.30 = 24.490 GiB → 267,488 tokens
    assert result.memory_per_gpu["activations"] == 256 * 152064 * 38 + 2048 * 5120 * 2
    assert result.memory_per_gpu["runtime"] == round(0.05 * GiB) + round(0.25 * GiB)
    assert _kv_gib(result) == pytest.approx(24.490, rel=0.005)
    assert result.kv_capacity_tokens == pytest.approx(267488, rel=0.005)


def test_example_f_gpt_oss_mxfp4_is_padded_for_marlin():
    # given vLLM 0.19.0, gpt-oss-20b at TP 2 on two L40S, --gpu-memory-utilization 0.85
    result = _estimate(GPT_OSS_20B_CONFIG, L40S, engine_version="0.19.0", tp=2, gpu_memory_utilization=0.85)
    # then: Marlin pads I/rank 1440 → 1536 and H 2880 → 3072: W 7.08 GiB per rank; Triton sampler 0.839 GiB;
    # NT 0.25 + 0.25; KV = 37.731 − 7.080 − 0.839 − 0.50 = 29.31 GiB (spec)
    assert result.memory_per_gpu["weights"] / GiB == pytest.approx(7.08, abs=0.01)
    assert _kv_gib(result) == pytest.approx(29.31, rel=0.005)


def test_mxfp4_marlin_padding_per_expert():
    # given gpt-oss-20b's experts at TP 2: I per rank 2880 / 2 = 1440, H 2880 (spec §3.1: 202.1 → 229.9 MiB a layer)
    # unpadded: w13 2 × 1440 × 2880 / 2 + 2 × 1440 × 2880 / 32 + 2 × 1440 × 2 = 4,147,200 + 259,200 + 5,760
    #   w2 2880 × 1440 / 2 + 2880 × 1440 / 32 + 2880 × 2 = 2,073,600 + 129,600 + 5,760 → 6,621,120 per expert
    # padded (1536, 3072): w13 4,718,592 + 294,912 + 6,144; w2 2,359,296 + 147,456 + 6,144 → 7,532,544
    unpadded = mxfp4_padded_expert_bytes(hidden=2880, intermediate_per_rank=1440, backend="none")
    padded = mxfp4_padded_expert_bytes(hidden=2880, intermediate_per_rank=1440)
    assert (unpadded, padded) == (6_621_120, 7_532_544)
    assert 32 * unpadded / MiB == pytest.approx(202.1, abs=0.05)
    assert 32 * padded / MiB == pytest.approx(229.9, abs=0.05)


def test_example_g_latest_defaults_on_an_nvswitch_board():
    # given latest (0.33.0), Llama-3.1-70B-Instruct at TP 2 on two H200 of an HGX board (CUDA total 139.7 GiB)
    result = _estimate(LLAMA31_70B_CONFIG, H200, tp=2)
    # then: util 0.92, S 1024, B 8192 (below 160 GiB), Triton sampler 1.95 GiB, NT ≈ 2.1 GiB (NVSwitch, 0.11+),
    # CUDA graphs 0.6 GiB inside the budget, runner buffers 0.16 GiB (regime P4):
    # KV = 128.52 − 65.74 − 0.16 − 2.10 − 1.95 − 0.60 = 57.98 GiB (spec)
    assert result.engine_version == "0.33.0"
    assert result.assumptions["gpu_memory_utilization"] == 0.92
    assert result.memory_per_gpu["cuda_graphs"] == round(0.6 * GiB)
    assert _kv_gib(result) == pytest.approx(57.98, rel=0.005)
    # graphs are inside the budget: the bill is the budget itself
    assert result.required_bytes_per_gpu == result.budget_bytes_per_gpu


def test_public_v0_log_qwen25_math_15b_on_a_48_gib_card():
    # given a public V0 boot log (code-corpus file 60430572081): Qwen2.5-Math-1.5B on a 44.39 GiB card, util 0.85,
    # 4096 context, vLLM V0 (0.7-era): 78,115 GPU blocks logged
    result = _estimate(
        QWEN25_MATH_15B_CONFIG, L40S, engine_version="0.7.3", gpu_memory_utilization=0.85, max_model_len=4096
    )
    # then: B 4096, sampler 256 × 151936 × 38 + 4096 × 1536 × 2 = 1.39 GiB (logged activation 1.40 GiB);
    # the specification predicts 78,206 blocks (+0.1 %)
    assert result.memory_per_gpu["activations"] / GiB == pytest.approx(1.40, abs=0.02)
    assert result.kv_capacity_tokens // 16 == pytest.approx(78115, rel=0.01)


# --- version switches (§7) ---------------------------------------------------------------------------------------


def test_v1_kv_does_not_depend_on_max_model_len():
    # given vLLM 0.9.2 (V1, regime P2: the runner buffers escape), Llama-3-8B on the 24 GiB card
    config = {**LLAMA3_8B_CONFIG, "max_position_embeddings": 131072}
    kv = {
        _estimate(config, ADA24, engine_version="0.9.2", max_model_len=length).memory_per_gpu["kv_cache"]
        for length in (2048, 8192, 32768, 65536)
    }
    # then: chunked prefill is always on in V1, the profile batch is B = 2048 whatever the context
    assert len(kv) == 1


def test_v1_samples_min_of_max_num_seqs_and_batched_tokens_rows():
    # given vLLM 0.11.0 with --max-num-batched-tokens 128 and 256 sequences on the 24 GiB card
    result = _estimate(LLAMA3_8B_CONFIG, ADA24, engine_version="0.11.0", max_num_batched_tokens=128, max_num_seqs=256)
    # then: rows = min(256, 128) = 128 ≥ 128: the sort path, 38 bytes per logit:
    # 128 × 128256 × 38 + 128 × 4096 × 2 + round(0.05 GiB) = 623,837,184 + 1,048,576 + 53,687,091
    assert result.memory_per_gpu["activations"] == 623_837_184 + 1_048_576 + 53_687_091


def test_sort_sampler_of_fewer_than_128_rows_costs_50_bytes_per_logit():
    # given 64 rows (max_num_seqs 64)
    result = _estimate(LLAMA3_8B_CONFIG, ADA24, engine_version="0.11.0", max_num_seqs=64)
    # then: 64 × 128256 × 50 + 2048 × 4096 × 2 + 53,687,091 = 410,419,200 + 16,777,216 + 53,687,091 = 480,883,507
    # against the forward 2048 × 55296 × 2 = 226,492,416: the sampler is the max
    assert result.memory_per_gpu["activations"] == 480_883_507


def test_sampler_shrinks_from_38_to_14_bytes_per_logit_at_0_17():
    before = _estimate(QWEN25_14B_CONFIG, H100, engine_version="0.16.0")
    after = _estimate(QWEN25_14B_CONFIG, H100, engine_version="0.17.0")
    # 1024 rows × 152064: 38 → 14 bytes, plus Triton's cached buffer min(1024, 132 SMs) × 152064 × 4
    shrink = 1024 * 152064 * (38 - 14) - 132 * 152064 * 4
    assert before.memory_per_gpu["activations"] - after.memory_per_gpu["activations"] == shrink


def test_docker_install_on_0_9_to_0_11_takes_flashinfer_light_sampler():
    pip = _estimate(QWEN25_14B_CONFIG, H100, engine_version="0.10.1")
    docker = _estimate(QWEN25_14B_CONFIG, H100, engine_version="0.10.1", install="docker")
    after = _estimate(QWEN25_14B_CONFIG, H100, engine_version="0.11.1", install="docker")
    # then: the Docker image ships FlashInfer, used whenever importable in 0.9.0-0.11.0 (14 bytes, no buffer);
    # 0.11.1 made it opt-in: the sort path again
    assert pip.memory_per_gpu["activations"] - docker.memory_per_gpu["activations"] == 1024 * 152064 * (38 - 14)
    assert after.memory_per_gpu["activations"] == pip.memory_per_gpu["activations"]


def test_utilization_default_and_cuda_graphs_move_inside_the_budget_at_0_20():
    old = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.19.0", max_model_len=8192)
    new = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.20.0", max_model_len=8192)
    assert (old.assumptions["gpu_memory_utilization"], new.assumptions["gpu_memory_utilization"]) == (0.9, 0.92)
    # before 0.20 the graphs sit above the budget; from 0.20 they are subtracted inside it
    assert old.required_bytes_per_gpu == old.budget_bytes_per_gpu + old.memory_per_gpu["cuda_graphs"]
    assert new.required_bytes_per_gpu == new.budget_bytes_per_gpu
    assert "inside the budget" in new.formulas["cuda_graphs"]


def test_estimate_cudagraphs_opt_in_on_0_18():
    off = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.18.1", max_model_len=8192)
    on = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.18.1", max_model_len=8192, estimate_cudagraphs=True)
    assert off.memory_per_gpu["kv_cache"] - on.memory_per_gpu["kv_cache"] == on.memory_per_gpu["cuda_graphs"]


def test_a100_leaves_the_big_card_defaults_at_0_9_0():
    a100 = _card("NVIDIA A100-SXM4-80GB", 79.15, (8, 0), sms=108)
    at_085 = _estimate(LLAMA3_8B_CONFIG, a100, engine_version="0.8.5", max_model_len=8192)
    at_090 = _estimate(LLAMA3_8B_CONFIG, a100, engine_version="0.9.0", max_model_len=8192)
    assert (at_085.assumptions["max_num_seqs"], at_085.assumptions["max_num_batched_tokens"]) == (1024, 8192)
    assert (at_090.assumptions["max_num_seqs"], at_090.assumptions["max_num_batched_tokens"]) == (256, 2048)


def test_usage_context_llm_profiles_a_bigger_batch():
    serve = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", max_model_len=8192)
    llm = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", max_model_len=8192, usage_context="llm")
    assert serve.assumptions["max_num_batched_tokens"] == 8192
    assert llm.assumptions["max_num_batched_tokens"] == 16384
    assert llm.defaults_assumed["max_num_batched_tokens"] == 16384


def test_v0_regime_switch_at_0_6_5_and_the_fragmentation_warning():
    p0 = _estimate(LLAMA3_8B_CONFIG, ADA24, engine_version="0.6.4", max_model_len=4096)
    p1 = _estimate(LLAMA3_8B_CONFIG, ADA24, engine_version="0.6.5", max_model_len=4096)
    p2 = _estimate(LLAMA3_8B_CONFIG, ADA24, engine_version="0.7.0", max_model_len=4096)
    # P0 0.40 GiB (the CUDA context counts); P1 0.05 + 1 GiB of allocator fragmentation (0.1-2 GiB: warned);
    # P2 0.05 GiB
    assert [r.memory_per_gpu["runtime"] for r in (p0, p1, p2)] == [
        round(0.40 * GiB),
        round(0.05 * GiB) + round(1.0 * GiB),
        round(0.05 * GiB),
    ]
    assert any("fragmentation" in warning for warning in p1.warnings)
    assert not any("fragmentation" in warning for warning in p2.warnings)


def test_compute_capability_below_8_falls_back_to_v0_until_0_10_1():
    t4 = _card("Tesla T4", 14.74, (7, 5), sms=40)
    old = _estimate(LLAMA3_8B_CONFIG, t4, engine_version="0.8.5", max_model_len=2048)
    new = _estimate(LLAMA3_8B_CONFIG, t4, engine_version="0.10.2", max_model_len=2048)
    assert "V0" in old.term_sources["engine"]
    assert "V1" in new.term_sources["engine"]


# --- non-torch memory (§3.5) --------------------------------------------------------------------------------------


def test_nvls_buffers_on_an_nvswitch_board_at_tp_above_2():
    hgx = _card("NVIDIA H100 80GB HBM3", 79.19, (9, 0), nvswitch=True, sms=132)
    config = {**LLAMA31_70B_CONFIG}
    before_011 = _estimate(config, hgx, engine_version="0.9.2", tp=4, max_model_len=8192)
    no_nvls = _estimate(config, hgx, engine_version="0.9.2", tp=4, max_model_len=8192, nccl_nvls=False)
    from_011 = _estimate(config, hgx, engine_version="0.11.0", tp=4, max_model_len=8192)
    # 0.9.2: 0.15 + 0.25 (NCCL) + 2 communicators × TP 4 × 288 MiB (vLLM issue #9699); NCCL_NVLS_ENABLE=0 drops it;
    # 0.11+: ≈2.1 GiB in total (public H100 report on 0.19: TP2 2.07, TP4 2.13 GiB)
    assert before_011.memory_per_gpu["runtime"] == round(0.15 * GiB) + round(0.25 * GiB) + 2 * 4 * 288 * MiB
    assert no_nvls.memory_per_gpu["runtime"] == round(0.15 * GiB) + round(0.25 * GiB)
    assert from_011.memory_per_gpu["runtime"] == round(2.1 * GiB)


# --- inputs -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["latest!", "1", "0.6", "v0.x.1", ""])
def test_an_engine_version_that_is_not_a_version_is_refused_on_its_field(version):
    if version == "":
        # empty means "let the default be": latest
        assert _estimate(LLAMA3_8B_CONFIG, H100, engine_version=version).engine_version == "0.33.0"
        return
    with pytest.raises(SizingError) as caught:
        _estimate(LLAMA3_8B_CONFIG, H100, engine_version=version)
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert "X.Y.Z" in caught.value.extra["fields"]["engine_version"][0]


def test_a_release_older_than_the_oldest_modelled_is_refused_with_the_reason():
    with pytest.raises(SizingError) as caught:
        _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.5.4")
    assert "older than the oldest release modelled (0.6.0)" in caught.value.extra["fields"]["engine_version"][0]


def test_a_newer_release_uses_the_newest_band_with_a_warning():
    result = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.40.1")
    assert result.engine_version == "0.33.0"
    assert result.engine_version_requested == "0.40.1"
    assert any("0.40.1 is newer than the newest release modelled" in warning for warning in result.warnings)


def test_v0_on_a_release_without_v0_is_refused():
    with pytest.raises(SizingError) as caught:
        _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", engine_mode="v0")
    assert "engine_mode" in caught.value.extra["fields"]


def test_flags_left_empty_are_resolved_and_said():
    result = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", max_model_len=8192, max_num_seqs=64)
    # max_num_seqs was given: not a default; max_num_batched_tokens and utilization were left empty
    assert "max_num_seqs" not in result.defaults_assumed
    assert result.defaults_assumed["max_num_batched_tokens"] == 8192
    assert result.defaults_assumed["gpu_memory_utilization"] == 0.9
    assert "--gpu-memory-utilization 0.9" in result.launch_args


def test_kv_cache_memory_bytes_is_the_cache_exactly():
    result = _estimate(
        LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", max_model_len=8192, kv_cache_memory_bytes=10 * GiB
    )
    # 10 GiB / (16 × 131,072 bytes) = 5,120 blocks → 81,920 tokens
    assert result.memory_per_gpu["kv_cache"] == 10 * GiB
    assert result.kv_capacity_tokens == 81_920
    assert f"--kv-cache-memory-bytes {10 * GiB}" in result.launch_args


def test_chunked_prefill_off_profiles_a_whole_prompt_and_says_so_in_the_flags():
    result = _estimate(
        LLAMA3_8B_CONFIG,
        H100,
        engine_version="0.11.0",
        max_model_len=8192,
        enable_chunked_prefill=False,
        max_num_seqs=64,
    )
    # then: B = max(max_model_len, the default 8192) = 8192; the flag is passed on
    assert result.assumptions["max_num_batched_tokens"] == 8192
    assert "--no-enable-chunked-prefill" in result.launch_args
    # a 32,768-token context without chunking: the profile batch is one whole prompt, B = 32,768, and its forward
    # 32768 × (3 × 4096 + 3 × 14336) × 2 = 3,623,878,656 outgrows the 64-row sampler
    longer = _estimate(
        {**LLAMA3_8B_CONFIG, "max_position_embeddings": 32768},
        H100,
        engine_version="0.11.0",
        max_model_len=32768,
        enable_chunked_prefill=False,
        max_num_seqs=64,
    )
    assert longer.assumptions["max_num_batched_tokens"] == 32768
    assert longer.memory_per_gpu["activations"] == 3_623_878_656


def test_the_catalog_figure_minus_the_typical_reservation_when_cuda_total_is_unknown():
    # given a card whose CUDA-visible total is not known: the driver's 80 GiB less 0.45 GiB
    card = GpuSpec(slug="x", name="x", memory_bytes=80 * GiB)
    result = _estimate(LLAMA3_8B_CONFIG, card, engine_version="0.11.0", max_model_len=8192)
    assert result.capacity_bytes_per_gpu == 80 * GiB - 45 * GiB // 100


def test_a_measured_cuda_total_wins():
    result = _estimate(
        LLAMA3_8B_CONFIG, H100, engine_version="0.11.0", max_model_len=8192, gpu_cuda_total_bytes=79 * GiB
    )
    assert result.capacity_bytes_per_gpu == 79 * GiB
    assert result.budget_bytes_per_gpu == int(79 * GiB * 0.9)


def test_a_kv_cache_under_10_percent_of_the_budget_is_said_to_be_fragile():
    # given Llama-3-8B on the 24 GiB card at util 0.74: budget 17.46 GiB, KV ≈ 17.46 − 14.96 − 1.23 − 0.15 = 1.1 GiB
    result = _estimate(
        LLAMA3_8B_CONFIG, ADA24, engine_version="0.11.0", max_model_len=4096, gpu_memory_utilization=0.74
    )
    budget = result.budget_bytes_per_gpu
    assert 0 < result.memory_per_gpu["kv_cache"] < 0.1 * budget
    assert any("fragile" in warning or "a residual" in warning for warning in result.warnings)


def test_every_bill_line_names_the_band_behind_it():
    result = _estimate(LLAMA3_8B_CONFIG, H100, engine_version="0.9.2", max_model_len=8192)
    for line in ("engine", "regime", "scheduler", "sampler", "cuda_graphs", "runtime"):
        assert result.term_sources[line]
    assert "0.9.1–0.26" in result.term_sources["regime"]

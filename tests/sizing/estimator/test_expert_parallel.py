"""Expert parallelism and data-parallel attention for MoE models (DESIGN §6)."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.errors import SizingError
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank
from tests.sizing.estimator.builders import build_arch, build_gpu

# a small Mixtral-shaped model: 2 layers, hidden 64, 8 experts of width 128, 2 per token, vocab 128
TINY_MOE = {
    "model_type": "mixtral",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "intermediate_size": 128,
    "vocab_size": 128,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "torch_dtype": "bfloat16",
    "max_position_embeddings": 1024,
}


def test_expert_parallel_holds_whole_experts_instead_of_slices():
    # given
    arch = architecture_from_config(TINY_MOE)
    fmt = resolve_weight_format(arch, "bf16")
    # when: TP 4 slices every expert; EP 4 gives each rank 2 whole experts
    (tp_only,) = weight_bytes_per_rank(arch, fmt, tp=4, pp=1)
    (with_ep,) = weight_bytes_per_rank(arch, fmt, tp=4, pp=1, ep=4)
    # then: experts are 8 × 3 × 64 × 128 × 2 bytes = 393,216 per layer; either way 1/4 of them per rank,
    # so the two layouts hold the same bytes when the experts divide evenly
    assert tp_only == with_ep


def test_expert_parallel_rounds_an_uneven_share_up():
    # given 8 experts over EP 3
    arch = architecture_from_config(TINY_MOE)
    fmt = resolve_weight_format(arch, "bf16")
    (ep1,) = weight_bytes_per_rank(arch, fmt, tp=1, pp=1)
    (ep3,) = weight_bytes_per_rank(arch, fmt, tp=1, pp=1, ep=3)
    # then: ceil(8 / 3) = 3 experts on the busiest rank: 5 fewer than 8, each 3 × 64 × 128 × 2 = 49,152 bytes
    # per layer over 2 layers
    assert ep1 - ep3 == 5 * 49_152 * 2


def test_dp_attention_with_ep_keeps_the_mla_latent_unreplicated():
    # given a DeepSeek-V3-shaped MLA model (4 layers) on 8 GPUs: TP 8 replicates the latent on every GPU,
    # DP 8 gives each GPU its own requests
    config = {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "num_hidden_layers": 4,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "vocab_size": 129280,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 1,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 163840,
    }
    arch = architecture_from_config(config)
    base = {
        "arch": arch,
        "gpu": build_gpu(memory_gib=140),
        "gpus": 8,
        "max_model_len": 8192,
        "tokens_per_request": 8192,
        "concurrency": 64,
    }
    # when
    tp8 = estimate_memory(EstimateRequest(**base))
    dp8 = estimate_memory(EstimateRequest(**base, tp=1, dp=8, expert_parallel=True))
    # then: the latent is 4 × 576 × 2 = 4,608 bytes per token on every GPU either way; DP splits the requests
    assert tp8.kv_bytes_per_token_per_gpu == dp8.kv_bytes_per_token_per_gpu == 4_608
    assert (dp8.dp, dp8.ep, dp8.tp) == (8, 8, 1)
    assert dp8.assumptions["per_replica_concurrency"] == 8  # 64 requests over 8 DP ranks
    assert "--enable-expert-parallel" in dp8.launch_args
    assert "--data-parallel-size 8" in dp8.launch_args
    assert len(dp8.per_gpu) == 8


def test_expert_parallel_needs_a_moe_model():
    with pytest.raises(SizingError) as caught:
        estimate_memory(EstimateRequest(arch=build_arch(), gpu=build_gpu(), gpus=2, expert_parallel=True))
    assert "expert_parallel" in caught.value.extra["fields"]

"""Configuration search: candidates, outcomes with reasons, ranking by cost."""

from __future__ import annotations

import pytest

from llm_sizing_loadgen.workload import fixed_profile
from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.engines import Engine
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.search import Candidate, candidates_for, evaluate_candidate, rank_outcomes, search
from sizing.estimator.simulator import Slo

LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
    "max_position_embeddings": 8192,
}
ARCH = architecture_from_config(LLAMA3_8B)
H100 = GpuSpec(
    slug="h100",
    name="H100",
    memory_bytes=81_559 * 2**20,
    memory_bandwidth_bytes_per_s=3_350 * 10**9,
    tflops_dense={"bf16": 989, "fp8": 1979},
    interconnect="nvlink",
    interconnect_bytes_per_s=900 * 10**9,
    price_per_hour_usd=2.5,
)
T4 = GpuSpec(
    slug="t4",
    name="T4",
    memory_bytes=15_360 * 2**20,
    memory_bandwidth_bytes_per_s=320 * 10**9,
    tflops_dense={"fp16": 65},
    interconnect="pcie",
    price_per_hour_usd=0.35,
)
PROFILE = fixed_profile(input_tokens=512, output_tokens=128)


def test_candidates_only_use_tp_sizes_that_divide_the_gpus_and_the_heads():
    candidates = candidates_for(ARCH, gpus=[H100], counts=(1, 2, 3), tps=(1, 2, 3, 16))
    layouts = {(c.gpus, c.tp) for c in candidates}
    # TP 3 divides 3 GPUs but not the 32 heads; TP 16 divides none of the GPU counts
    assert layouts == {(1, 1), (2, 1), (2, 2), (3, 1)}


def test_a_deployment_that_does_not_fit_is_ranked_last_with_the_reason():
    # given Llama-3-8B in BF16 on one 16 GB T4: the weights alone take 15 GiB
    outcome = evaluate_candidate(
        ARCH, Candidate(gpu=T4, gpus=1, tp=1, weights="bf16"), PROFILE, rate_per_s=1.0, slo=Slo(ttft_s=2.0)
    )
    assert not outcome.fits
    assert outcome.reason.startswith("does not fit:")
    assert outcome.verdict["code"] == "does_not_fit"
    assert outcome.cost_per_hour_usd == pytest.approx(0.35)


def test_cost_per_million_tokens_is_the_hourly_cost_over_the_tokens_served_in_an_hour():
    outcome = evaluate_candidate(
        ARCH, Candidate(gpu=H100, gpus=2, tp=1), PROFILE, rate_per_s=2.0, slo=Slo(ttft_s=2.0, tpot_s=0.1), requests=200
    )
    assert outcome.fits
    assert outcome.meets_slo
    assert outcome.cost_per_hour_usd == pytest.approx(5.0)
    assert outcome.cost_per_million_output_tokens_usd == pytest.approx(5.0 / (outcome.output_tokens_per_s * 3600) * 1e6)


def test_ranking_puts_the_cheapest_deployment_meeting_the_slos_first():
    # given one and two H100s, and a T4 that cannot hold the model
    candidates = [
        Candidate(gpu=H100, gpus=2, tp=2),
        Candidate(gpu=T4, gpus=1, tp=1, weights="bf16"),
        Candidate(gpu=H100, gpus=1, tp=1),
        Candidate(gpu=H100, gpus=1, tp=1, engine=Engine.SGLANG),
    ]

    # when
    ranked = search(ARCH, candidates, PROFILE, rate_per_s=1.0, slo=Slo(ttft_s=2.0, tpot_s=0.1), requests=150)

    # then one H100 first (either engine: same price), two H100s next, the T4 last with its reason
    assert [o.candidate.gpus for o in ranked[:2]] == [1, 1]
    assert ranked[2].candidate.gpus == 2
    assert ranked[-1].candidate.gpu.slug == "t4"
    assert [o.meets_slo for o in ranked] == [True, True, True, False]


def test_a_deployment_that_fits_but_misses_the_slo_says_which_slo():
    # given a TTFT SLO of 1 ms, which no prefill of 512 tokens meets
    outcome = evaluate_candidate(
        ARCH, Candidate(gpu=H100, gpus=1, tp=1), PROFILE, rate_per_s=1.0, slo=Slo(ttft_s=0.001), requests=100
    )
    assert outcome.fits
    assert not outcome.meets_slo
    assert outcome.reason.startswith("TTFT P95")
    # and as data a page can word in its own language
    assert outcome.verdict["code"] == "slo"
    assert outcome.verdict["metric"] == "TTFT"
    assert outcome.verdict["percentile"] == 95
    assert outcome.verdict["limit_s"] == 0.001
    assert outcome.verdict["value_s"] == pytest.approx(outcome.ttft_p95_ms / 1000)
    assert rank_outcomes([outcome])[0] is outcome

"""From a memory estimate to a serving plan; sweeps, the knee and the largest rate meeting the SLOs."""

from __future__ import annotations

import pytest

from llm_sizing_loadgen.workload import fixed_profile
from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest
from sizing.estimator.serving import (
    knee_of,
    load_sweep,
    max_rate_meeting_slo,
    meets_slo,
    serving_plan,
    simulate_plan,
)
from sizing.estimator.simulator import LoadKind, Slo

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
L40S = GpuSpec(
    slug="nvidia-l40s-48gb",
    name="NVIDIA L40S",
    memory_bytes=46_068 * 2**20,
    memory_bandwidth_bytes_per_s=864 * 10**9,
    tflops_dense={"bf16": 362, "fp8": 733},
    interconnect="pcie",
)
ARCH = architecture_from_config(LLAMA3_8B)
PROFILE = fixed_profile(input_tokens=1024, output_tokens=256)


def _plan(**kwargs):
    return serving_plan(EstimateRequest(arch=ARCH, gpu=L40S, engine=Engine.VLLM, **kwargs))


def test_plan_takes_capacity_and_scheduler_limits_from_the_memory_estimate():
    plan = _plan(max_num_seqs=128, max_num_batched_tokens=4096)
    assert plan.config.kv_capacity_tokens == plan.memory.kv_capacity_tokens
    assert plan.config.kv_capacity_tokens > 0
    assert plan.config.max_num_seqs == 128
    assert plan.config.max_num_batched_tokens == 4096
    assert plan.config.replicas == 1


def test_more_gpus_never_lower_capacity_or_throughput():
    # given 1, 2 and 4 L40S as replicas, and 2 as TP 2
    plans = {
        "1": _plan(gpus=1),
        "2 replicas": _plan(gpus=2, tp=1),
        "4 replicas": _plan(gpus=4, tp=1),
        "TP 2": _plan(gpus=2, tp=2),
    }

    # then the total KV capacity never falls as GPUs are added
    total = {name: p.config.kv_capacity_tokens * p.config.replicas for name, p in plans.items()}
    assert total["1"] <= total["2 replicas"] <= total["4 replicas"]
    assert total["1"] <= total["TP 2"]
    # and neither does the offline throughput
    rates = {
        name: simulate_plan(p, PROFILE, load=LoadKind.OFFLINE, requests=400).output_tokens_per_s
        for name, p in plans.items()
    }
    assert rates["1"] <= rates["2 replicas"] <= rates["4 replicas"]
    assert rates["1"] <= rates["TP 2"]


def test_deployment_without_room_for_kv_is_refused():
    tiny = GpuSpec(
        slug="tiny",
        name="16 GB card",
        memory_bytes=16 * 10**9,
        memory_bandwidth_bytes_per_s=300 * 10**9,
        tflops_dense={"fp16": 65},
    )
    with pytest.raises(SizingError) as caught:
        serving_plan(EstimateRequest(arch=ARCH, gpu=tiny, engine=Engine.VLLM))
    assert "KV cache" in caught.value.message


def test_rate_sweep_saturates_and_marks_the_knee():
    # given loads from 10% to 130% of the offline saturation rate
    plan = _plan()
    slo = Slo(ttft_s=2.0, tpot_s=0.1)

    # when
    sweep = load_sweep(plan, PROFILE, points=6, requests=600, slo=slo)

    # then achieved throughput rises with load until the knee, after which the deployment falls behind
    loads = [p.load for p in sweep.points]
    assert loads == sorted(loads)
    assert sweep.points[0].result.requests_per_s == pytest.approx(sweep.points[0].result.arrivals_per_s, rel=0.05)
    assert sweep.knee is not None
    assert loads[0] <= sweep.knee < loads[-1]
    beyond = [p for p in sweep.points if p.load > sweep.knee]
    assert all(
        p.result.output_tokens_per_s < 0.95 * p.result.offered_output_tokens_per_s or p.result.rejected for p in beyond
    )
    # and TTFT P95 is worse at the top than at the bottom
    assert sweep.points[-1].result.ttft.p95 > sweep.points[0].result.ttft.p95
    assert sweep.max_load_meeting_slo is None or sweep.max_load_meeting_slo <= loads[-1]


def test_concurrency_knee_is_where_throughput_reaches_90_percent_of_the_best():
    plan = _plan()
    sweep = load_sweep(plan, PROFILE, kind=LoadKind.CONCURRENCY, loads=[1, 4, 16, 64, 256], requests=512)
    best = max(p.result.output_tokens_per_s for p in sweep.points)
    assert sweep.knee == knee_of(LoadKind.CONCURRENCY, list(sweep.points))
    first = next(p for p in sweep.points if p.result.output_tokens_per_s >= 0.9 * best)
    assert sweep.knee == first.load


def test_largest_rate_meeting_slo_meets_it_and_a_bit_more_does_not():
    # given TTFT P95 ≤ 1 s and TPOT P95 ≤ 60 ms
    plan = _plan()
    slo = Slo(ttft_s=1.0, tpot_s=0.06)

    # when
    search = max_rate_meeting_slo(plan, PROFILE, slo, requests=600)

    # then
    assert search.max_rate_per_s is not None
    ok, _ = meets_slo(search.result, slo)
    assert ok
    above = simulate_plan(plan, PROFILE, load=LoadKind.RATE, rate_per_s=search.max_rate_per_s * 1.25, requests=600)
    assert not meets_slo(above, slo)[0]
    assert search.limit_reason.startswith(("TTFT", "TPOT", "E2E")) or "rejected" in search.limit_reason


def test_an_impossible_slo_finds_no_rate_and_says_why():
    search = max_rate_meeting_slo(_plan(), PROFILE, Slo(ttft_s=0.001), requests=200)
    assert search.max_rate_per_s is None
    assert search.limit_reason.startswith("TTFT P95")
    assert search.limit["code"] == "slo"
    assert search.limit["metric"] == "TTFT"
    assert search.as_dict()["limit"] == search.limit


def test_slo_search_climbs_past_the_offline_saturation_rate_when_the_slos_still_hold():
    # given SLOs so loose that 1.2 × the offline saturation rate still meets them
    plan = _plan()
    search = max_rate_meeting_slo(plan, PROFILE, Slo(ttft_s=600.0, tpot_s=10.0), requests=300, max_probes=10)
    first_rate, first_verdict = search.probes[0]
    # then it keeps doubling (and bisecting) instead of stopping at the first probe
    assert first_verdict == {"met": True, "code": "met"}
    assert len(search.probes) > 1
    assert search.max_rate_per_s is not None
    assert search.max_rate_per_s >= first_rate

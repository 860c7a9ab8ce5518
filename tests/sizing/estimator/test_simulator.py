"""The serving simulator: hand-computed single requests, and the physics of batching, queueing and KV pressure."""

from __future__ import annotations

import numpy as np
import pytest

from llm_sizing_loadgen.workload import (
    LengthDistribution,
    LengthKind,
    RequestClass,
    SampledRequests,
    WorkloadProfile,
    fixed_profile,
    sample_profile,
    workload_sample,
)
from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.errors import SizingError
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.perf import Efficiencies, prefill_pairs, step_model
from sizing.estimator.simulator import LoadKind, ServingConfig, Slo, simulate

LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}
H100 = GpuSpec(
    slug="h100",
    name="H100",
    memory_bytes=80 * 2**30,
    memory_bandwidth_bytes_per_s=3_350 * 10**9,
    tflops_dense={"bf16": 989, "fp8": 1979},
    interconnect="nvlink",
    interconnect_bytes_per_s=900 * 10**9,
)
MODEL = step_model(
    arch=architecture_from_config(LLAMA3_8B),
    gpu=H100,
    weights="bf16",
    kv_dtype="auto",
    tp=1,
    engine="vllm",
    efficiencies=Efficiencies(),
)
CONFIG = ServingConfig(kv_capacity_tokens=400_000, max_num_seqs=256, max_num_batched_tokens=8192)


def _requests(arrivals, inputs, outputs, prefixes=None) -> SampledRequests:
    n = len(arrivals)
    return SampledRequests(
        arrival_s=np.array(arrivals, dtype=float),
        input_tokens=np.array(inputs),
        output_tokens=np.array(outputs),
        prefix_tokens=np.array(prefixes or [0] * n),
        class_index=np.zeros(n, dtype=np.int64),
        class_names=("only",),
    )


def test_one_request_on_an_idle_replica_takes_its_prefill_then_its_decode_steps():
    # given one request of 1000 prompt tokens and 5 output tokens
    requests = _requests([0.0], [1000], [5])

    # when
    result = simulate(model=MODEL, config=CONFIG, requests=requests, load=LoadKind.RATE, rate_per_s=1.0)

    # then: TTFT is one prefill step of 1000 tokens (under the 8192-token budget); then 4 decode steps at
    # contexts 1001..1004 (the step feeds the previous token), each one sequence
    prefill = MODEL.step_s(prefill=1000, prefill_pairs=prefill_pairs(1000))
    decodes = [MODEL.step_s(decode=1, context_tokens=1001 + k) for k in range(4)]
    assert result.completed == 1
    assert result.ttft.mean == pytest.approx(prefill * 1000, rel=1e-9)
    assert result.e2e.mean == pytest.approx((prefill + sum(decodes)) * 1000, rel=1e-9)
    assert result.tpot.mean == pytest.approx(sum(decodes) / 4 * 1000, rel=1e-9)
    assert result.rejected == 0
    assert result.preempted == 0


def test_long_prompt_is_prefilled_in_chunks_of_the_token_budget():
    # given a 20,000-token prompt and an 8192-token budget: chunks 8192, 8192, 3616
    requests = _requests([0.0], [20_000], [1])

    # when
    result = simulate(model=MODEL, config=CONFIG, requests=requests, load=LoadKind.OFFLINE)

    # then
    chunks = [(8192, 0), (8192, 8192), (3616, 16384)]
    expected = sum(
        MODEL.step_s(prefill=t, prefill_pairs=prefill_pairs(t, o), prefill_context_tokens=o) for t, o in chunks
    )
    assert result.ttft.mean == pytest.approx(expected * 1000, rel=1e-9)


def test_same_seed_same_result_and_another_seed_differs():
    profile = sample_profile()

    def run(seed):
        sample = workload_sample(profile, rate_per_s=3.0, requests=400, seed=seed)
        return simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.RATE, rate_per_s=3.0).as_dict()

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_decode_slows_down_as_the_batch_grows():
    # given closed loops of 1, 16 and 128 clients with 256/256-token requests
    profile = fixed_profile(input_tokens=256, output_tokens=256)
    tpots = []
    for clients in (1, 16, 128):
        sample = workload_sample(profile, rate_per_s=None, requests=clients * 4, seed=1)
        result = simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.CONCURRENCY, concurrency=clients)
        tpots.append(result.tpot.p50)
        # then a closed loop never has more requests in flight than clients
        assert result.max_running <= clients
    assert tpots == sorted(tpots)
    assert len(set(tpots)) == 3


def test_overload_queues_and_rejects_instead_of_reporting_impossible_latency():
    # given 2048/512-token requests at 50 per second, far beyond one H100 replica, a queue of 64
    profile = fixed_profile(input_tokens=2048, output_tokens=512)
    sample = workload_sample(profile, rate_per_s=50.0, requests=3000, seed=3)
    config = ServingConfig(kv_capacity_tokens=400_000, max_num_seqs=256, max_num_batched_tokens=8192, max_queue=64)

    # when
    result = simulate(
        model=MODEL, config=config, requests=sample, load=LoadKind.RATE, rate_per_s=50.0, slo=Slo(ttft_s=2.0)
    )

    # then: most requests are turned away, the queue never exceeds its bound (preempted requests put back at its
    # head aside), and the ones served waited at most the run's length
    assert result.rejected > 1000
    assert result.completed + result.rejected == 3000
    assert result.max_waiting <= 64 + result.preempted
    assert result.ttft.max <= result.duration_s * 1000
    assert result.requests_per_s < 0.5 * 50.0
    assert result.slo_attainment < 0.5


def test_kv_pressure_preempts_and_every_request_still_completes():
    # given a cache of 20,000 tokens and 64 requests that would need 64 × 1500 = 96,000
    profile = fixed_profile(input_tokens=500, output_tokens=1000)
    sample = workload_sample(profile, rate_per_s=None, requests=64, seed=0)
    config = ServingConfig(kv_capacity_tokens=20_000, max_num_seqs=64, max_num_batched_tokens=8192)

    # when
    result = simulate(model=MODEL, config=config, requests=sample, load=LoadKind.OFFLINE)

    # then
    assert result.preempted > 0
    assert result.completed == 64
    assert result.kv_peak_fraction <= 1.0
    assert result.kv_overflow_probability > 0.5  # demand (running + waiting prompts) exceeded 20,000 tokens


def test_request_longer_than_the_whole_cache_fails_and_is_counted():
    sample = _requests([0.0, 0.0], [50_000, 100], [10, 10])
    config = ServingConfig(kv_capacity_tokens=20_000, max_num_seqs=8, max_num_batched_tokens=8192)
    result = simulate(model=MODEL, config=config, requests=sample, load=LoadKind.OFFLINE)
    assert result.failed == 1
    assert result.completed == 1


def test_more_replicas_serve_more_and_wait_less():
    profile = fixed_profile(input_tokens=1024, output_tokens=256)
    sample = workload_sample(profile, rate_per_s=12.0, requests=1200, seed=5)
    one = simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.RATE, rate_per_s=12.0)
    two = simulate(
        model=MODEL,
        config=ServingConfig(kv_capacity_tokens=400_000, max_num_seqs=256, max_num_batched_tokens=8192, replicas=2),
        requests=sample,
        load=LoadKind.RATE,
        rate_per_s=12.0,
    )
    assert two.completed >= one.completed
    assert two.ttft.p95 <= one.ttft.p95
    assert two.tpot.p50 < one.tpot.p50


def test_shared_prefix_is_computed_once_and_later_requests_skip_it():
    # given two requests of the same class, a 4000-token shared prefix plus 100 tokens each, far apart in time
    sample = _requests([0.0, 10.0], [4100, 4100], [2, 2], prefixes=[4000, 4000])

    # when
    cached = simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.RATE, rate_per_s=0.1)
    uncached = simulate(
        model=MODEL,
        config=ServingConfig(kv_capacity_tokens=400_000, prefix_caching=False),
        requests=sample,
        load=LoadKind.RATE,
        rate_per_s=0.1,
    )

    # then the second request prefills 100 tokens after 4000 cached ones
    second = cached.per_request["ttft_s"][1]
    assert second == pytest.approx(
        MODEL.step_s(prefill=100, prefill_pairs=prefill_pairs(100, 4000), prefill_context_tokens=4000), rel=1e-9
    )
    assert uncached.per_request["ttft_s"][1] > 5 * second


def test_offline_run_has_every_request_arrive_at_zero_and_reports_makespan_throughput():
    profile = fixed_profile(input_tokens=128, output_tokens=128)
    sample = workload_sample(profile, rate_per_s=None, requests=500, seed=0)
    result = simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.OFFLINE)
    assert result.completed == 500
    assert result.output_tokens_per_s == pytest.approx(500 * 128 / result.duration_s, rel=1e-6)


def test_timeline_stays_within_capacity_and_has_the_requested_points():
    sample = workload_sample(sample_profile(), rate_per_s=4.0, requests=2000, seed=2)
    result = simulate(
        model=MODEL, config=CONFIG, requests=sample, load=LoadKind.RATE, rate_per_s=4.0, timeline_points=100
    )
    timeline = result.timeline
    assert len(timeline["t_s"]) <= 100
    assert max(timeline["kv_used_fraction"]) <= 1.0
    assert timeline["t_s"] == sorted(timeline["t_s"])
    assert set(result.per_class) == {"Real-time Q&A", "Report generation"}  # archive analysis is off at 10:00


def test_percentiles_are_withheld_when_there_are_too_few_requests():
    sample = _requests([0.0] * 10, [100] * 10, [10] * 10)
    result = simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.OFFLINE)
    assert result.ttft.n == 10
    assert result.ttft.p99 is None  # fewer than 100 samples
    assert result.ttft.p50 is not None


def test_closed_loop_needs_a_concurrency():
    sample = _requests([0.0], [10], [10])
    with pytest.raises(SizingError) as caught:
        simulate(model=MODEL, config=CONFIG, requests=sample, load=LoadKind.CONCURRENCY)
    assert "concurrency" in caught.value.extra["fields"]


def test_bursts_raise_the_tail_of_ttft():
    base = WorkloadProfile(
        name="steady",
        classes=(
            RequestClass(
                name="q",
                share=1.0,
                input=LengthDistribution(kind=LengthKind.FIXED, mean=1500),
                output=LengthDistribution(kind=LengthKind.FIXED, mean=100),
            ),
        ),
    )
    from dataclasses import replace

    from llm_sizing_loadgen.workload import ArrivalKind, ArrivalPattern

    bursty = replace(
        base, arrival=ArrivalPattern(kind=ArrivalKind.BURST, burst_requests=300, burst_window_s=2.0, burst_at_s=20.0)
    )
    steady_run = simulate(
        model=MODEL,
        config=CONFIG,
        load=LoadKind.RATE,
        rate_per_s=5.0,
        requests=workload_sample(base, rate_per_s=5.0, requests=600, seed=1),
    )
    burst_run = simulate(
        model=MODEL,
        config=CONFIG,
        load=LoadKind.RATE,
        rate_per_s=5.0,
        requests=workload_sample(bursty, rate_per_s=5.0, requests=600, seed=1),
    )
    assert burst_run.ttft.p99 > 3 * steady_run.ttft.p99


def test_long_simulations_report_progress():
    sample = workload_sample(fixed_profile(input_tokens=64, output_tokens=8), rate_per_s=200.0, requests=20_000, seed=0)
    reports: list[tuple[int, int]] = []
    simulate(
        model=MODEL,
        config=CONFIG,
        requests=sample,
        load=LoadKind.RATE,
        rate_per_s=200.0,
        progress=lambda done, total: reports.append((done, total)),
    )
    assert reports
    assert all(total == 20_000 for _, total in reports)
    done = [d for d, _ in reports]
    assert done == sorted(done)

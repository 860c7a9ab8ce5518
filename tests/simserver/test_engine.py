"""The simulator's engine: its rules against the offline simulator (`replay`, no event loop), then live in asyncio
with a fast clock (speedup 50: a 65 ms L4 decode step lasts 1.3 ms) on a virtual-time event loop
(`tests.loadgen.virtual_time`): its steps end at their exact nominal times whatever the machine's load, so step
times, stalls and revivals are asserted exactly. Zero-delay mode runs on the real clock (it yields to the loop by
real time)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable

import numpy as np
import pytest

from benchmarks_app.simserver.engine import (
    ITL_BUCKETS,
    TTFT_BUCKETS,
    Event,
    InjectedFailure,
    QueueFull,
    SimEngine,
    SimRequest,
    TooLarge,
    Unavailable,
    replay,
)
from benchmarks_app.simserver.truth import itl_percentiles_ms, truth_sample
from llm_sizing_loadgen.workload import SampledRequests
from sizing.estimator.perf import prefill_pairs, time_to_first_token_s
from sizing.estimator.simulator import LoadKind, simulate
from tests.loadgen.virtual_time import run_virtual
from tests.simserver.helpers import with_config

SPEEDUP = 50.0


def live(plan, **options) -> SimEngine:
    """The engine for a virtual-time loop: no spinning at the end of a sleep (a virtual clock only jumps)."""
    return SimEngine.from_plan(plan, speedup=SPEEDUP, spin_s=0.0, **options)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    run_virtual(lambda _: scenario())


async def drain(request: SimRequest, timeout: float = 10.0) -> list[Event]:
    """Every event of a request up to its end (a finish, an error or a cancellation)."""
    events: list[Event] = []
    async with asyncio.timeout(timeout):
        while True:
            for event in await request.next_events():
                events.append(event)
                if event.finish_reason or event.error or event.cancelled:
                    return events


def test_replay_follows_the_offline_simulator_request_by_request(l4_plan):
    """The engine's rules, run in virtual time, give every request the TTFT and finish time the offline simulator
    gives it, and the same token-weighted ITL distribution: the live engine adds only real time to these."""
    plan = with_config(l4_plan, replicas=2)
    sample = truth_sample(rate_per_s=6, requests=300, seed=4)
    predicted = simulate(model=plan.model, config=plan.config, requests=sample, load=LoadKind.RATE)
    result = replay(
        plan.model,
        plan.config,
        arrival_s=sample.arrival_s,
        prompt_tokens=sample.input_tokens,
        output_tokens=sample.output_tokens,
    )
    assert predicted.preempted == result.preemptions == 0
    ttft = np.full(len(sample), np.nan)
    ttft[predicted.per_request["index"]] = predicted.per_request["ttft_s"]
    e2e = np.full(len(sample), np.nan)
    e2e[predicted.per_request["index"]] = predicted.per_request["e2e_s"]
    np.testing.assert_allclose(np.array(result.first_s) - sample.arrival_s, ttft, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.array(result.finish_s) - sample.arrival_s, e2e, rtol=0, atol=1e-9)
    mine = itl_percentiles_ms(np.array(result.gaps_s))
    assert len(result.gaps_s) == predicted.itl.n
    for q in (50, 90, 99):
        assert mine[q] == pytest.approx(predicted.itl.at(q), rel=1e-9)


def test_replay_without_chunked_prefill_prefills_each_prompt_whole_as_the_simulator_does(l4_plan):
    """With chunked prefill off, a prompt that does not fit the step's remaining budget waits for the next step
    (it is not cut into chunks), in the engine as in the offline simulator: both run one scheduler step."""
    # given two 1500-token prompts arriving together and a 2048-token step budget, chunked prefill off
    plan = with_config(l4_plan, max_num_batched_tokens=2048, chunked_prefill=False)

    # when
    result = replay(plan.model, plan.config, arrival_s=[0.0, 0.0], prompt_tokens=[1500, 1500], output_tokens=[4, 4])

    # then: the first prompt is prefilled alone (1500 tokens); the second one in the next step, beside the first
    # one's decode
    first_prefill = plan.model.step_s(prefill=1500, prefill_pairs=prefill_pairs(1500))
    second_step = plan.model.step_s(decode=1, context_tokens=1501, prefill=1500, prefill_pairs=prefill_pairs(1500))
    assert result.first_s == pytest.approx([first_prefill, first_prefill + second_step], rel=1e-12)
    predicted = simulate(model=plan.model, config=plan.config, requests=_two_requests(1500, 4), load=LoadKind.OFFLINE)
    assert predicted.per_request["ttft_s"].tolist() == pytest.approx(result.first_s, rel=1e-12)


def _two_requests(prompt: int, output: int) -> SampledRequests:
    return SampledRequests(
        arrival_s=np.zeros(2),
        input_tokens=np.array([prompt, prompt]),
        output_tokens=np.array([output, output]),
        prefix_tokens=np.zeros(2, dtype=np.int64),
        class_index=np.zeros(2, dtype=np.int64),
        class_names=("only",),
    )


def test_a_request_gets_its_tokens_at_the_models_step_times(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            request = engine.submit(200, 16)
            events = await drain(request)
            assert [e.index for e in events] == list(range(1, 17))
            assert [e.finish_reason for e in events][-2:] == [None, "length"]
            model = l4_plan.model
            first = time_to_first_token_s(model, prompt_tokens=200) / SPEEDUP
            assert events[0].t - request.arrival == pytest.approx(first, rel=1e-9)  # an idle replica starts at once
            for k in range(1, 16):  # decode k+1 reads the prompt and k generated tokens
                step = model.step_s(decode=1, context_tokens=200 + k) / SPEEDUP
                assert events[k].t - events[k - 1].t == pytest.approx(step, rel=1e-9)
            assert engine.clock() == pytest.approx(events[-1].t, abs=1e-9)  # delivered at the step's end
            stats = engine.replicas[0].stats
            assert (stats.prompt_tokens, stats.generation_tokens, stats.ttft.count, stats.itl.count) == (200, 16, 1, 15)
            assert stats.ttft.bounds == TTFT_BUCKETS
            assert stats.itl.bounds == ITL_BUCKETS
            assert stats.finished["length"] == 1

    run(scenario)


def test_a_shorter_output_finishes_with_stop(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            events = await drain(engine.submit(10, 50, output_tokens=5))
            assert len(events) == 5
            assert events[-1].finish_reason == "stop"

    run(scenario)


def test_max_num_seqs_limits_the_batch_and_a_full_queue_refuses(l4_plan):
    plan = with_config(l4_plan, max_num_seqs=2, max_queue=2)

    async def scenario() -> None:
        async with live(plan) as engine:
            first = [engine.submit(50, 40) for _ in range(2)]
            await first[0].next_events()  # both are running once a token came
            queued = [engine.submit(50, 40) for _ in range(2)]
            await asyncio.sleep(0.01)  # several steps (1.3 ms each): the queued two were seen and must wait
            replica = engine.state()["replicas"][0]
            assert (replica["running"], replica["waiting"]) == (2, 2)
            with pytest.raises(QueueFull) as refused:
                engine.submit(50, 40)
            assert refused.value.status == 429
            finished = []
            for request in first + queued:
                events = await drain(request)
                assert [e.index for e in events][-1] == 40
                assert events[-1].finish_reason == "length"
                finished.append(events[-1].t)
            assert max(finished[:2]) < min(finished[2:])  # the queued two ran after the first two, not beside them
            assert engine.rejected["queue_full"] == 1

    run(scenario)


def test_kv_exhaustion_preempts_the_latest_request_and_recomputes_it(l4_plan):
    """16 blocks of 16 tokens; two requests of 64 + 96 tokens need 10 blocks each at the end: the later one is
    preempted, recomputed with its generated tokens, and both still deliver every token in order."""
    plan = with_config(l4_plan, kv_capacity_tokens=256, block_size=16)

    async def scenario() -> None:
        async with live(plan) as engine:
            requests = [engine.submit(64, 96) for _ in range(2)]
            results = [await drain(request) for request in requests]
            for events in results:
                assert [e.index for e in events] == list(range(1, 97))
                assert events[-1].finish_reason == "length"
            replica = engine.replicas[0]
            assert replica.stats.preemptions >= 1
            assert requests[1].preemptions >= 1
            assert requests[0].preemptions == 0
            assert replica.free_blocks == replica.total_blocks
            assert replica.kv_usage == 0

    run(scenario)


def test_a_request_larger_than_the_cache_is_refused(l4_plan):
    plan = with_config(l4_plan, kv_capacity_tokens=256)

    async def scenario() -> None:
        async with live(plan) as engine:
            with pytest.raises(TooLarge):
                engine.submit(200, 100)

    run(scenario)


def test_kill_replica_fails_its_requests_until_it_comes_back(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            request = engine.submit(100, 500)
            await request.next_events()
            engine.kill_replica(0)
            events = await drain(request)
            assert events[-1].error
            assert events[-1].status == 503
            with pytest.raises(Unavailable):
                engine.submit(10, 4)
            engine.recover()
            assert (await drain(engine.submit(10, 4)))[-1].finish_reason == "length"
            engine.kill_replica(0, seconds=0.05)
            with pytest.raises(Unavailable):
                engine.submit(10, 4)
            await asyncio.sleep(0.049)
            with pytest.raises(Unavailable):  # still down 1 ms before its time
                engine.submit(10, 4)
            await asyncio.sleep(0.002)
            assert (await drain(engine.submit(10, 4)))[-1].finish_reason == "length"

    run(scenario)


def test_fail_next_refuses_the_next_requests_with_the_status(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            engine.fail_next(2, 503)
            for _ in range(2):
                with pytest.raises(InjectedFailure) as failure:
                    engine.submit(10, 4)
                assert failure.value.status == 503
            assert (await drain(engine.submit(10, 4)))[-1].finish_reason == "length"

    run(scenario)


def test_stall_freezes_the_steps(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            start = engine.clock()
            engine.stall(0.2)
            request = engine.submit(10, 4)
            events = await drain(request)
            assert request.arrival == start  # it arrived at once and waited
            assert events[0].t == pytest.approx(start + 0.2, abs=1e-9)  # the first step ended when the stall did
            model = l4_plan.model
            for k in range(1, 4):  # then the steps follow at their model times again
                step = model.step_s(decode=1, context_tokens=10 + k) / SPEEDUP
                assert events[k].t - events[k - 1].t == pytest.approx(step, rel=1e-9)

    run(scenario)


def test_cancel_frees_the_request(l4_plan):
    async def scenario() -> None:
        async with live(l4_plan) as engine:
            request = engine.submit(100, 1000)
            await request.next_events()
            engine.cancel(request)
            events = await drain(request)
            assert events[-1].cancelled
            replica = engine.replicas[0]
            assert not replica.running
            assert replica.free_blocks == replica.total_blocks
            assert replica.stats.finished["abort"] == 1

    run(scenario)


def test_requests_go_to_the_least_loaded_live_replica(l4_plan):
    plan = with_config(l4_plan, replicas=2)

    async def scenario() -> None:
        async with live(plan) as engine:
            requests = [engine.submit(10, 20) for _ in range(4)]
            assert sorted(r.replica for r in requests) == [0, 0, 1, 1]
            engine.kill_replica(0)
            assert {engine.submit(10, 20).replica for _ in range(3)} == {1}

    run(scenario)


def test_zero_delay_mode_serves_many_requests_at_once(h100_plan):
    async def scenario() -> None:
        async with SimEngine.from_plan(h100_plan, zero_delay=True) as engine:
            assert engine.zero_delay
            assert math.isinf(engine.speedup)
            requests = [engine.submit(100, 32) for _ in range(500)]
            results = await asyncio.gather(*(drain(r, timeout=60.0) for r in requests))  # a deadline, not a target
            assert all(
                [e.index for e in events] == list(range(1, 33)) and events[-1].finish_reason == "length"
                for events in results
            )
            assert engine.replicas[0].stats.generation_tokens == 500 * 32
            assert engine.replicas[0].stats.finished["length"] == 500

    asyncio.run(scenario())  # the real clock: its speed is a benchmark (tests/benchmarks/realtime_targets.py)


def test_under_kv_pressure_the_offline_simulator_readmits_a_preempted_request_as_the_engine_does(l4_plan):
    """A preemption holds admission for one step only. The offline simulator once kept a preempted request waiting
    until the next completion (its bulk decode skipped ahead), which doubled the predicted TTFT under KV pressure
    (945 preemptions in the engine's rules against 208 predicted); with block-granular padding out of the way
    (block size 1), both now preempt and readmit alike."""
    plan = with_config(l4_plan, block_size=1, kv_capacity_tokens=12_000)
    sample = truth_sample(
        rate_per_s=4, requests=300, seed=7, input_mean=512, input_std=64, output_mean=128, output_std=16
    )
    predicted = simulate(model=plan.model, config=plan.config, requests=sample, load=LoadKind.RATE)
    result = replay(
        plan.model,
        plan.config,
        arrival_s=sample.arrival_s,
        prompt_tokens=sample.input_tokens,
        output_tokens=sample.output_tokens,
    )
    assert result.preemptions > 20  # the cache is too small for the load: this is the regime under test
    assert predicted.preempted == pytest.approx(result.preemptions, rel=0.15)
    ttft = np.array(result.first_s) - sample.arrival_s
    assert predicted.ttft.p50 == pytest.approx(float(np.nanpercentile(ttft, 50)) * 1000, rel=0.10)

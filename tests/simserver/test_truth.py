"""Truth: a plain httpx streaming client measuring the simulator's app sees the TTFT and inter-token latency
percentiles that `sizing.estimator.simulator` predicts for the same requests.

Set-up. Llama-3-8B on one L4 (vLLM defaults: 31,744 KV tokens, max_num_batched_tokens 2048, decode steps of
~65-75 ms), 120 requests with prompts of 1024 ± 512 tokens and outputs of 32 ± 12, Poisson arrivals at 2 requests/s
of model time: up to ~18 requests in flight and 60% of the KV cache at the peak, chunked prefills mixing with
decodes, no preemption. The app (speedup 5, ≈13 s of its clock) and the client (`truth.measure`, sending each
request at its arrival time) share a virtual-time event loop (`tests.loadgen.virtual_time`) and the app streams
in-process (`tests.simserver.inprocess`); the prediction is the offline simulator's run of the same requests at the
times they were actually sent.

Why exact. The engine's rules reproduce the offline simulator request by request in virtual time
(test_engine.test_replay_follows_the_offline_simulator_request_by_request); here the live engine, its HTTP layer and
the client run their real code on a clock that moves only while everything waits, so the only differences left are
float rounding (the clock counts whole nanoseconds): every percentile agrees to 1e-6. The same comparison in real
time, over a socket to a server in its own process, differs by the HTTP stack's milliseconds and the machine's load:
that is a benchmark (tests/benchmarks/simserver_truth.py, scenario l4-short: this workload, target 10%), not a test.
"""

from __future__ import annotations

import asyncio

import pytest

from benchmarks_app.simserver import truth
from benchmarks_app.simserver.engine import SimEngine
from sizing.estimator.serving import ServingPlan
from tests.loadgen.virtual_time import VirtualClock, run_virtual
from tests.simserver.helpers import MODEL
from tests.simserver.inprocess import inprocess_simulator

SPEEDUP = 5.0


def test_measured_ttft_and_itl_agree_with_the_offline_simulator(l4_plan: ServingPlan) -> None:
    # given
    sample = truth.truth_sample(
        rate_per_s=2.0, requests=120, seed=1, input_mean=1024, input_std=512, output_mean=32, output_std=12
    )
    engine = SimEngine.from_plan(l4_plan, speedup=SPEEDUP, spin_s=0.0)

    async def scenario(clock: VirtualClock) -> truth.Measured:
        async with inprocess_simulator(engine, model_name=MODEL, max_model_len=8192) as transport:
            return await truth.measure(
                "http://simulator.test",
                MODEL,
                sample,
                speedup=SPEEDUP,
                clock=asyncio.get_running_loop().time,
                transport=transport,
                spin_s=0.0,
            )

    # when
    measured = run_virtual(scenario)
    predicted = truth.predict(l4_plan, measured.sample(sample))
    table = truth.comparison(measured, predicted)

    # then: every request answered in full, each sent at its time, and every percentile as predicted
    assert (measured.errors, measured.tokens_short) == (0, 0)
    assert float(abs(measured.send_lag_s).max()) < 1e-6
    assert predicted.preempted == 0
    assert predicted.ttft.n == 120  # enough for a p99
    assert set(table["ttft"]) == set(table["itl"]) == {50, 90, 99}
    for rows in table.values():
        for mine, theirs, _ in rows.values():
            assert mine == pytest.approx(theirs, rel=1e-6)

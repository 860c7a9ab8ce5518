"""The runner: closed and open loops, ramp-up, hard bounds, cancellation, progress and client fidelity, against an
in-test server on httpx's MockTransport (asyncio delays, the real clock). No database, no network."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import httpx
import numpy as np
import pytest

from benchmarks_app.loadgen.client import RequestResult, Status
from benchmarks_app.loadgen.plan import LoadMode, LoadSpec, PlanError, TestPlan, plan_from_dict
from benchmarks_app.loadgen.runner import LoadRunner, Progress, RequestSource, RunError, open_schedule, run_plan
from sizing.estimator.workload import ArrivalKind
from tests.loadgen.streams import FakeServer


def _plan(**overrides: Any) -> TestPlan:
    data: dict[str, Any] = {"endpoint": {"base_url": "http://llm.test", "model": "m"},
                            "load": {"concurrency": 4}, "requests": {"input_tokens": 32, "output_tokens": 4},
                            "bounds": {"max_requests": 20}}
    data.update(overrides)
    return plan_from_dict(data)


def _run(plan: TestPlan, server: FakeServer, **options: Any):
    return asyncio.run(LoadRunner(plan, transport=server.transport, **options).run())


# ---------------------------------------------------------------------------------------------------------------
# Closed loop


def test_closed_loop_keeps_the_concurrency_and_sends_exactly_max_requests() -> None:
    # given
    server = FakeServer()

    # when
    outcome = _run(_plan(), server)

    # then
    assert [r.index for r in outcome.records] == list(range(20))
    assert all(r.status is Status.OK for r in outcome.records)
    assert server.peak == 4
    assert len(server.bodies) == 20
    assert outcome.stop_reason == "completed"
    assert outcome.window_s[0] == 0.0
    assert outcome.window_s[1] == pytest.approx(max(r.t_send_ns for r in outcome.records) / 1e9
                                                - outcome.t0_ns / 1e9, abs=1e-6)
    assert outcome.fidelity.valid
    assert outcome.fidelity.offered_rate_per_s is None  # a closed loop offers no rate


def test_closed_loop_ramp_up_starts_the_clients_evenly() -> None:
    # given: 4 clients over 0.4 s: they start at 0, 0.1, 0.2 and 0.3 s (requests of 0.5 s: one each)
    server = FakeServer(ttft_s=0.5, itl_s=0.0)

    # when
    outcome = _run(_plan(load={"concurrency": 4, "ramp_up_s": 0.4}, bounds={"max_requests": 4},
                         requests={"input_tokens": 8, "output_tokens": 1}), server)

    # then: t_sched of each client's first request is its start; the window begins after the ramp
    scheduled = sorted((r.t_sched_ns - outcome.t0_ns) / 1e9 for r in outcome.records)
    assert scheduled == pytest.approx([0.0, 0.1, 0.2, 0.3], abs=1e-6)
    assert outcome.plan.warmup_s == 0.4


# ---------------------------------------------------------------------------------------------------------------
# Open loop


def test_open_loop_sends_on_the_constant_schedule() -> None:
    # given: 50 requests/s, constant, 15 requests: every 20 ms from 0
    server = FakeServer(ttft_s=0.001, itl_s=0.001)
    plan = _plan(load={"mode": "open", "rate": 50, "arrival": "constant"}, bounds={"max_requests": 15})

    # when
    outcome = _run(plan, server)

    # then
    scheduled = [(r.t_sched_ns - outcome.t0_ns) / 1e9 for r in outcome.records]
    assert scheduled == pytest.approx([i * 0.02 for i in range(15)], abs=1e-6)
    lags_ms = [(r.t_send_ns - r.t_sched_ns) / 1e6 for r in outcome.records]
    assert min(lags_ms) >= 0
    assert outcome.fidelity.lag_p99_ms is not None
    assert outcome.fidelity.lag_p99_ms < 10
    start_s, end_s = outcome.window_s  # [0, the last send], just after 0.28 s: all 15 scheduled inside
    assert end_s == pytest.approx(0.28 + lags_ms[-1] / 1000, abs=1e-6)
    assert outcome.fidelity.offered_rate_per_s == pytest.approx(15 / (end_s - start_s), rel=1e-6)
    assert outcome.fidelity.valid


def test_open_loop_cap_limits_requests_in_flight_and_the_wait_shows_as_lag() -> None:
    # given: 200 requests/s, each taking about 50 ms, at most 2 in flight
    server = FakeServer(ttft_s=0.05, itl_s=0.0)
    plan = _plan(load={"mode": "open", "rate": 200, "arrival": "constant", "concurrency": 2},
                 bounds={"max_requests": 10}, requests={"input_tokens": 8, "output_tokens": 1})

    # when
    outcome = _run(plan, server)

    # then: the client could not send on time: INVALID, not reported as server latency
    assert server.peak == 2
    assert all(r.status is Status.OK for r in outcome.records)
    assert outcome.fidelity.lag_p99_ms is not None
    assert outcome.fidelity.lag_p99_ms > 100
    assert not outcome.fidelity.valid
    assert "schedule lag p99" in outcome.fidelity.reasons[0]


def test_a_client_that_blocks_its_event_loop_is_invalid() -> None:
    # given: every request blocks the loop for 25 ms at 100 requests/s (10 ms apart)
    server = FakeServer(block_s=0.025, ttft_s=0.001, itl_s=0.0)
    plan = _plan(load={"mode": "open", "rate": 100, "arrival": "constant"}, bounds={"max_requests": 12},
                 requests={"input_tokens": 8, "output_tokens": 1})

    # when
    outcome = _run(plan, server)

    # then
    assert not outcome.fidelity.valid
    assert outcome.fidelity.lag_p99_ms is not None
    assert outcome.fidelity.lag_p99_ms > 10


def test_open_schedule_constant_poisson_ramp_burst_and_bounds() -> None:
    # given
    constant = LoadSpec(mode=LoadMode.OPEN, rate=10, arrival=ArrivalKind.CONSTANT)
    poisson = LoadSpec(mode=LoadMode.OPEN, rate=100, arrival=ArrivalKind.POISSON)
    ramped = LoadSpec(mode=LoadMode.OPEN, rate=100, arrival=ArrivalKind.CONSTANT, ramp_up_s=10)
    burst = LoadSpec(mode=LoadMode.OPEN, rate=1, arrival=ArrivalKind.BURST, burst_requests=30, burst_window_s=2,
                     burst_at_s=5)

    # when
    exact = open_schedule(constant, max_requests=5, max_duration_s=None, seed=0)
    drawn = open_schedule(poisson, max_requests=None, max_duration_s=50, seed=1)
    warped = open_schedule(ramped, max_requests=None, max_duration_s=20, seed=0)
    bursty = open_schedule(burst, max_requests=40, max_duration_s=None, seed=0)

    # then: constant 10/s from 0; Poisson ≈ 100/s over 50 s (σ ≈ 71 of 5000); the linear ramp to 100/s over
    # 10 s carries 100 × 10 / 2 = 500 requests, then 100/s for 10 s more; the burst puts 30 extras in [5, 7] s
    assert exact.tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert abs(len(drawn) - 5000) < 300
    assert drawn.max() < 50
    assert np.count_nonzero(warped < 10) == pytest.approx(500, abs=1)
    assert len(warped) == pytest.approx(1500, abs=2)
    assert len(bursty) == 40
    assert np.count_nonzero((bursty >= 5) & (bursty <= 7)) >= 30
    assert np.all(np.diff(bursty) >= 0)
    assert open_schedule(poisson, max_requests=None, max_duration_s=50, seed=1).tolist() == drawn.tolist()


# ---------------------------------------------------------------------------------------------------------------
# Bounds, cancellation, progress


def test_the_duration_bound_stops_the_run_and_marks_requests_in_flight_incomplete() -> None:
    # given: requests that take 2 s; a 0.3 s bound
    server = FakeServer(ttft_s=0.05, itl_s=1.0)
    plan = _plan(bounds={"max_duration_s": 0.3}, requests={"input_tokens": 8, "output_tokens": 3})
    began = time.perf_counter()

    # when
    outcome = _run(plan, server)

    # then
    assert time.perf_counter() - began < 1.5
    assert outcome.stop_reason == "max_duration"
    assert [r.status for r in outcome.records] == [Status.INCOMPLETE_AT_END] * 4
    assert all(r.ttft_ns is not None for r in outcome.records)  # what was measured is kept
    assert outcome.window_s[1] == pytest.approx(0.3, abs=0.05)


def test_cancel_keeps_what_was_measured_and_cuts_requests_in_flight() -> None:
    # given: fast requests until 20 have ended, then a cancel (on a count, not a clock: a busy machine is slow)
    server = FakeServer(ttft_s=0.005, itl_s=0.005)
    plan = _plan(bounds={"max_requests": 100_000}, requests={"input_tokens": 8, "output_tokens": 4})
    done: list[RequestResult] = []

    async def scenario():
        loop = asyncio.get_running_loop()

        def ended(record: RequestResult) -> None:
            done.append(record)
            if len(done) == 20:
                loop.call_soon(runner.cancel)

        runner = LoadRunner(plan, transport=server.transport, on_request=ended)
        return await runner.run()

    # when
    outcome = asyncio.run(scenario())

    # then: the 4 clients' requests in flight at the cancel are cut (the one that just ended may not have sent yet)
    statuses = [r.status for r in outcome.records]
    assert outcome.stop_reason == "cancelled"
    assert statuses.count(Status.OK) >= 20
    assert 3 <= statuses.count(Status.INCOMPLETE_AT_END) <= 4
    assert set(statuses) == {Status.OK, Status.INCOMPLETE_AT_END}
    assert len(done) == len(outcome.records)
    assert "Cancelled" in outcome.notes[0]


def test_cancel_from_another_thread_before_and_during_the_run() -> None:
    # given
    server = FakeServer()
    plan = _plan(bounds={"max_requests": 1000})
    runner = LoadRunner(plan, transport=server.transport)

    # when: cancelled before it starts
    runner.cancel()
    outcome = asyncio.run(runner.run())

    # then: nothing was sent
    assert outcome.records == []
    assert outcome.stop_reason == "cancelled"


def test_progress_is_reported_at_most_every_half_second() -> None:
    # given: a run of about 1.3 s
    server = FakeServer(ttft_s=0.01, itl_s=0.01)
    plan = _plan(bounds={"max_duration_s": 1.3}, requests={"input_tokens": 8, "output_tokens": 5})
    calls: list[tuple[float, Progress]] = []

    # when
    _run(plan, server, on_progress=lambda progress: calls.append((time.perf_counter(), progress)),
         progress_interval_s=0.1)

    # then: 0.1 s asked for, 0.5 s kept; the live figures are filled in
    assert 2 <= len(calls) <= 3
    assert all(b[0] - a[0] >= 0.49 for a, b in itertools.pairwise(calls))
    last = calls[-1][1]
    assert last.ok > 0
    assert last.in_flight == 4
    assert last.rate_per_s > 0
    assert last.ttft_p50_ms is not None
    assert last.ttft_p50_ms >= 10
    assert last.tpot_p50_ms is not None
    assert last.tpot_p99_ms is not None
    assert 0 < (last.fraction or 0) <= 1


def test_errors_are_counted_and_the_run_goes_on() -> None:
    # given: every third request answered 503
    server = FakeServer(fail_every=3)

    # when
    outcome = _run(_plan(bounds={"max_requests": 12}), server)

    # then
    statuses = [r.status for r in outcome.records]
    assert statuses.count(Status.HTTP_ERROR) == 4
    assert statuses.count(Status.OK) == 8


# ---------------------------------------------------------------------------------------------------------------
# Requests, keys, sweeps


def test_requests_follow_the_profile_deterministically() -> None:
    # given: two classes, 3:1, with different lengths and a shared prefix for the first
    profile = {"name": "mix", "classes": [
        {"name": "short", "share": 3, "shared_prefix_tokens": 16,
         "input": {"kind": "fixed", "mean": 40}, "output": {"kind": "fixed", "mean": 8}},
        {"name": "long", "share": 1, "input": {"kind": "normal", "mean": 400, "std": 50, "minimum": 100},
         "output": {"kind": "fixed", "mean": 64}}]}
    plan = _plan(requests={"profile": profile}, seed=11)

    # when
    source = RequestSource(plan)
    prepared = [source.prepare(i) for i in range(2000)]
    fresh = RequestSource(plan)
    again = [fresh.prepare(i) for i in (1999, 0)]

    # then
    short = [p for p in prepared if p.class_name == "short"]
    assert len(short) / len(prepared) == pytest.approx(0.75, abs=0.04)
    assert {p.input_tokens_sent for p in short} == {56}
    assert {p.output_tokens_target for p in short} == {8}
    body = json.loads(short[0].body)
    assert len(body["prompt"].split()) == 56
    assert body["max_tokens"] == 8
    assert [p.body for p in again] == [prepared[1999].body, prepared[0].body]


def test_the_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # given
    server = FakeServer()
    seen: list[str | None] = []
    original = server.handle

    async def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return await original(request)

    server.transport = httpx.MockTransport(handle)
    plan = _plan(endpoint={"base_url": "http://llm.test/v1", "model": "m", "api_key_env": "LOADGEN_TEST_KEY"},
                 bounds={"max_requests": 2})
    monkeypatch.delenv("LOADGEN_TEST_KEY", raising=False)

    # when / then: unset, the run does not start
    with pytest.raises(RunError, match="LOADGEN_TEST_KEY"):
        LoadRunner(plan, transport=server.transport)
    monkeypatch.setenv("LOADGEN_TEST_KEY", "sk-secret")
    _run(plan, server)
    assert seen == ["Bearer sk-secret"] * 2


def test_a_sweep_runs_each_point() -> None:
    # given
    server = FakeServer()
    plan = _plan(load={"mode": "closed"}, sweep={"concurrency": [1, 3]}, bounds={"max_requests": 6})

    # when
    outcomes = run_plan(plan, transport=server.transport)

    # then
    assert [(o.label, o.plan.load.concurrency, len(o.records)) for o in outcomes] == [
        ("concurrency-1", 1, 6), ("concurrency-3", 3, 6)]


def test_a_closed_loop_client_pauses_after_an_error_and_the_pause_is_not_schedule_lag() -> None:
    # given: every request fails at once; 2 clients pausing 0.1 s after each error, for 0.5 s
    server = FakeServer(fail_every=1)
    plan = _plan(load={"concurrency": 2, "error_pause_s": 0.1}, bounds={"max_duration_s": 0.5})

    # when
    outcome = _run(plan, server)

    # then: about 2 × 0.5 / 0.1 = 10 requests, not the thousands an unpaused loop sends into an outage
    assert 6 <= len(outcome.records) <= 14
    assert all(record.status is not Status.OK for record in outcome.records if record.status is not None)
    lags = [(r.t_send_ns - r.t_sched_ns) / 1e6 for r in outcome.records if r.t_send_ns is not None]
    assert max(lags) < 50  # each t_sched is after the pause


def test_an_open_loop_has_no_error_pause() -> None:
    with pytest.raises(PlanError, match="error_pause_s: only for a closed loop"):
        _plan(load={"rate": 5, "error_pause_s": 0.1})

"""The runner: closed and open loops, ramp-up, hard bounds, cancellation, progress and client fidelity, against an
in-test server on httpx's MockTransport, on a virtual-time event loop (`tests.loadgen.virtual_time`): the server's
delays, the runner's clock and its timers share one exact clock, so schedules, lags, bounds, progress ticks and counts
are asserted exactly whatever the machine's load (the speed targets themselves are measured by
tests/benchmarks/loadgen_speed.py). No database, no network."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
import numpy as np
import pytest

from llm_sizing_loadgen.client import RequestResult, Status
from llm_sizing_loadgen.plan import LoadMode, LoadSpec, PlanError, TestPlan, plan_from_dict
from llm_sizing_loadgen.runner import (
    LoadRunner,
    Progress,
    RequestSource,
    RunError,
    RunOutcome,
    open_schedule,
    run_points,
)
from llm_sizing_loadgen.workload import ArrivalKind
from tests.loadgen.streams import MS, FakeServer
from tests.loadgen.virtual_time import VirtualClock, run_virtual


def _plan(**overrides: Any) -> TestPlan:
    data: dict[str, Any] = {
        "endpoint": {"base_url": "http://llm.test", "model": "m"},
        "load": {"concurrency": 4},
        "requests": {"input_tokens": 32, "output_tokens": 4},
        "bounds": {"max_requests": 20},
    }
    data.update(overrides)
    return plan_from_dict(data)


def _run(plan: TestPlan, server: FakeServer, **options: Any) -> RunOutcome:
    """One run on a virtual-time loop (the server's clock, if it has one, is the runner's)."""
    return run_virtual(
        lambda clock: LoadRunner(plan, transport=server.transport, clock=clock, **options).run(), clock=server.clock
    )


def _offsets_ms(outcome: RunOutcome, field: str) -> list[float]:
    """Each record's `t_sched_ns` or `t_send_ns` in milliseconds from the run's t0."""
    return [(getattr(r, field) - outcome.t0_ns) / MS for r in outcome.records]


def _lags_ms(outcome: RunOutcome) -> list[float]:
    return [(r.t_send_ns - r.t_sched_ns) / MS for r in outcome.records if r.t_send_ns is not None]


# ---------------------------------------------------------------------------------------------------------------
# Closed loop


def test_closed_loop_keeps_the_concurrency_and_sends_exactly_max_requests() -> None:
    # given
    server = FakeServer()

    # when
    outcome = _run(_plan(), server)

    # then: requests of 2 + 3 × 1 = 5 ms, four clients in step: sends at 0, 5, 10, 15 and 20 ms, each as its
    # client became free (no lag, no idle time); the window ends at the last send
    assert [r.index for r in outcome.records] == list(range(20))
    assert all(r.status is Status.OK for r in outcome.records)
    assert server.peak == 4
    assert len(server.bodies) == 20
    assert outcome.stop_reason == "completed"
    assert sorted(_offsets_ms(outcome, "t_send_ns")) == [float(5 * (i // 4)) for i in range(20)]
    assert _lags_ms(outcome) == [0.0] * 20
    assert outcome.window_s == (0.0, 0.02)
    assert (outcome.fidelity.idle_share, outcome.fidelity.valid) == (0.0, True)
    assert outcome.fidelity.offered_rate_per_s is None  # a closed loop offers no rate


def test_closed_loop_ramp_up_starts_the_clients_evenly() -> None:
    # given: 4 clients over 0.4 s: they start at 0, 0.1, 0.2 and 0.3 s (requests of 0.5 s: one each)
    server = FakeServer(ttft_s=0.5, itl_s=0.0)

    # when
    outcome = _run(
        _plan(
            load={"concurrency": 4, "ramp_up_s": 0.4},
            bounds={"max_requests": 4},
            requests={"input_tokens": 8, "output_tokens": 1},
        ),
        server,
    )

    # then: t_sched of each client's first request is its start; the window begins after the ramp
    assert sorted(_offsets_ms(outcome, "t_sched_ns")) == [0.0, 100.0, 200.0, 300.0]
    assert sorted(_offsets_ms(outcome, "t_send_ns")) == [0.0, 100.0, 200.0, 300.0]
    assert outcome.plan.warmup_s == 0.4


# ---------------------------------------------------------------------------------------------------------------
# Open loop


def test_open_loop_sends_on_the_constant_schedule() -> None:
    # given: 50 requests/s, constant, 15 requests: every 20 ms from 0
    server = FakeServer(ttft_s=0.001, itl_s=0.001)
    plan = _plan(load={"mode": "open", "rate": 50, "arrival": "constant"}, bounds={"max_requests": 15})

    # when
    outcome = _run(plan, server)

    # then: each request sent at its time (no lag: nothing else needs the loop); the window is [0, the last send at
    # 280 ms] with all 15 scheduled inside
    assert _offsets_ms(outcome, "t_sched_ns") == [20.0 * i for i in range(15)]
    assert _lags_ms(outcome) == [0.0] * 15
    assert (outcome.fidelity.lag_p50_ms, outcome.fidelity.lag_p99_ms) == (0.0, 0.0)
    assert outcome.window_s == (0.0, 0.28)
    assert outcome.fidelity.offered_rate_per_s == pytest.approx(15 / 0.28, rel=1e-12)
    assert outcome.fidelity.achieved_ratio == 1.0
    assert (outcome.fidelity.valid, outcome.fidelity.reasons) == (True, ())


def test_open_loop_cap_limits_requests_in_flight_and_the_wait_shows_as_lag() -> None:
    # given: 200 requests/s, each taking about 50 ms, at most 2 in flight
    server = FakeServer(ttft_s=0.05, itl_s=0.0)
    plan = _plan(
        load={"mode": "open", "rate": 200, "arrival": "constant", "concurrency": 2},
        bounds={"max_requests": 10},
        requests={"input_tokens": 8, "output_tokens": 1},
    )

    # when
    outcome = _run(plan, server)

    # then: requests due every 5 ms, a slot free every 50 ms per slot: requests 0 and 1 go at once, 2 and 3 when 0
    # and 1 end at 50 and 55 ms (due at 10 and 15 ms: 40 ms late), 4 and 5 at 100 and 105 ms (80 ms late), ... The
    # client could not send on time: INVALID, the wait counted as schedule lag, not reported as server latency
    assert server.peak == 2
    assert all(r.status is Status.OK for r in outcome.records)
    assert _lags_ms(outcome) == [0.0, 0.0, 40.0, 40.0, 80.0, 80.0, 120.0, 120.0, 160.0, 160.0]
    assert (outcome.fidelity.lag_p50_ms, outcome.fidelity.lag_p99_ms) == (80.0, 160.0)
    assert outcome.fidelity.reasons == (
        "the schedule lag p99 is 160.00 ms, over 10 ms: the client did not send when it should have",
    )
    assert not outcome.fidelity.valid


def test_a_client_that_blocks_its_event_loop_is_invalid() -> None:
    # given: every request blocks the loop for 25 ms at 100 requests/s (10 ms apart)
    server = FakeServer(block_s=0.025, ttft_s=0.001, itl_s=0.0, clock=VirtualClock())
    plan = _plan(
        load={"mode": "open", "rate": 100, "arrival": "constant"},
        bounds={"max_requests": 12},
        requests={"input_tokens": 8, "output_tokens": 1},
    )

    # when
    outcome = _run(plan, server)

    # then: request k goes out when request k − 1's block ends, at 25·k ms instead of 10·k: 15·k ms late; p99 of
    # 0, 15, ..., 165 ms by linear interpolation: 150 + 0.89 × 15 = 163.35 ms. The rate itself was kept (all 12
    # scheduled in the window were sent in it): only the lag says the client could not keep up
    assert _lags_ms(outcome) == [15.0 * k for k in range(12)]
    assert outcome.fidelity.lag_p99_ms == pytest.approx(163.35, abs=1e-9)
    assert outcome.fidelity.achieved_ratio == 1.0
    assert outcome.fidelity.reasons == (
        "the schedule lag p99 is 163.35 ms, over 10 ms: the client did not send when it should have",
    )
    assert not outcome.fidelity.valid


def test_open_schedule_constant_poisson_ramp_burst_and_bounds() -> None:
    # given
    constant = LoadSpec(mode=LoadMode.OPEN, rate=10, arrival=ArrivalKind.CONSTANT)
    poisson = LoadSpec(mode=LoadMode.OPEN, rate=100, arrival=ArrivalKind.POISSON)
    ramped = LoadSpec(mode=LoadMode.OPEN, rate=100, arrival=ArrivalKind.CONSTANT, ramp_up_s=10)
    burst = LoadSpec(
        mode=LoadMode.OPEN, rate=1, arrival=ArrivalKind.BURST, burst_requests=30, burst_window_s=2, burst_at_s=5
    )

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

    # when
    outcome = _run(plan, server)

    # then: stopped at 0.3 s sharp, nothing waited for the requests' 2 s; their first tokens (50 ms) are kept
    assert outcome.stop_reason == "max_duration"
    assert [r.status for r in outcome.records] == [Status.INCOMPLETE_AT_END] * 4
    assert [r.ttft_ns for r in outcome.records] == [50 * MS] * 4  # what was measured is kept
    assert (outcome.send_end_ns - outcome.t0_ns, outcome.end_ns - outcome.t0_ns) == (300 * MS, 300 * MS)
    assert outcome.window_s == (0.0, 0.3)


def test_cancel_keeps_what_was_measured_and_cuts_requests_in_flight() -> None:
    # given: requests of 5 + 3 × 5 = 20 ms on 4 clients; a cancel once 20 have ended (the fifth round, at 100 ms)
    server = FakeServer(ttft_s=0.005, itl_s=0.005)
    plan = _plan(bounds={"max_requests": 100_000}, requests={"input_tokens": 8, "output_tokens": 4})
    done: list[RequestResult] = []

    async def scenario(clock: VirtualClock) -> RunOutcome:
        loop = asyncio.get_running_loop()

        def ended(record: RequestResult) -> None:
            done.append(record)
            if len(done) == 20:
                loop.call_soon(runner.cancel)

        runner = LoadRunner(plan, transport=server.transport, clock=clock, on_request=ended)
        return await runner.run()

    # when
    outcome = run_virtual(scenario)

    # then: the 20 that ended are kept; each client had sent its next request the moment its last one ended, so
    # 4 requests were in flight at 100 ms: they are cut, with what was measured (sent, no token yet)
    statuses = [r.status for r in outcome.records]
    assert outcome.stop_reason == "cancelled"
    assert statuses == [Status.OK] * 20 + [Status.INCOMPLETE_AT_END] * 4
    assert _offsets_ms(outcome, "t_send_ns")[20:] == [100.0] * 4
    assert outcome.send_end_ns - outcome.t0_ns == 100 * MS
    assert [r.ttft_ns for r in outcome.records[20:]] == [None] * 4
    assert done == sorted(done, key=lambda r: r.status is Status.INCOMPLETE_AT_END)
    assert len(done) == len(outcome.records)
    assert outcome.notes == ["Cancelled: what was measured is kept; requests in flight are incomplete_at_end."]


def test_cancel_from_another_thread_before_and_during_the_run() -> None:
    # given
    server = FakeServer()
    plan = _plan(bounds={"max_requests": 1000})
    clock = VirtualClock()
    runner = LoadRunner(plan, transport=server.transport, clock=clock)

    # when: cancelled before it starts
    runner.cancel()
    outcome = run_virtual(lambda _: runner.run(), clock=clock)

    # then: nothing was sent
    assert outcome.records == []
    assert outcome.stop_reason == "cancelled"


def test_progress_is_reported_at_most_every_half_second() -> None:
    # given: a run of 1.3 s; requests of 15 + 4 × 10 = 55 ms on 4 clients in step (no request ends at 0.5 or 1 s)
    server = FakeServer(ttft_s=0.015, itl_s=0.01)
    plan = _plan(bounds={"max_duration_s": 1.3}, requests={"input_tokens": 8, "output_tokens": 5})
    calls: list[tuple[int, Progress]] = []

    # when
    outcome = run_virtual(
        lambda clock: LoadRunner(
            plan,
            transport=server.transport,
            clock=clock,
            progress_interval_s=0.1,
            on_progress=lambda progress: calls.append((clock(), progress)),
        ).run()
    )

    # then: 0.1 s asked for, 0.5 s kept: at 0.5 and 1.0 s (1.5 s is past the end). By 0.5 s 9 rounds of 4 have
    # ended (at 495 ms), by 1.0 s 18 (at 990 ms), the next round in flight; TTFT 15 ms, TPOT (55 − 15) / 4 = 10 ms;
    # the rate is the completions over the elapsed time (under the 5 s window): 36 / 0.5 = 72 / 1.0 = 72 per second
    assert [(instant - outcome.t0_ns) / MS for instant, _ in calls] == [500.0, 1000.0]
    assert [b[0] - a[0] for a, b in itertools.pairwise(calls)] == [500 * MS]
    assert [(p.elapsed_s, p.sent, p.done, p.ok, p.failed, p.in_flight) for _, p in calls] == [
        (0.5, 40, 36, 36, 0, 4),
        (1.0, 76, 72, 72, 0, 4),
    ]
    last = calls[-1][1]
    assert last.rate_per_s == 72.0
    assert (last.ttft_p50_ms, last.ttft_p99_ms, last.tpot_p50_ms, last.tpot_p99_ms) == (15.0, 15.0, 10.0, 10.0)
    assert last.fraction == pytest.approx(1.0 / 1.3, rel=1e-12)


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
    profile = {
        "name": "mix",
        "classes": [
            {
                "name": "short",
                "share": 3,
                "shared_prefix_tokens": 16,
                "input": {"kind": "fixed", "mean": 40},
                "output": {"kind": "fixed", "mean": 8},
            },
            {
                "name": "long",
                "share": 1,
                "input": {"kind": "normal", "mean": 400, "std": 50, "minimum": 100},
                "output": {"kind": "fixed", "mean": 64},
            },
        ],
    }
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
    plan = _plan(
        endpoint={"base_url": "http://llm.test/v1", "model": "m", "api_key_env": "LOADGEN_TEST_KEY"},
        bounds={"max_requests": 2},
    )
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
    outcomes = run_virtual(lambda clock: run_points(plan, transport=server.transport, clock=clock))

    # then
    assert [(o.label, o.plan.load.concurrency, len(o.records)) for o in outcomes] == [
        ("concurrency-1", 1, 6),
        ("concurrency-3", 3, 6),
    ]


def test_a_closed_loop_client_pauses_after_an_error_and_the_pause_is_not_schedule_lag() -> None:
    # given: every request fails at once; 2 clients pausing 0.1 s after each error, for 0.45 s
    server = FakeServer(fail_every=1)
    plan = _plan(load={"concurrency": 2, "error_pause_s": 0.1}, bounds={"max_duration_s": 0.45})

    # when
    outcome = _run(plan, server)

    # then: each client sends at 0, 0.1, 0.2, 0.3 and 0.4 s: 10 requests, not the thousands an unpaused loop sends
    # into an outage; each t_sched is after the pause, so no lag (counted as lag, the pause would be 100 ms of it)
    assert [record.status for record in outcome.records] == [Status.HTTP_ERROR] * 10
    assert _offsets_ms(outcome, "t_sched_ns") == [100.0 * (i // 2) for i in range(10)]
    assert _lags_ms(outcome) == [0.0] * 10


def test_an_open_loop_has_no_error_pause() -> None:
    with pytest.raises(PlanError, match="error_pause_s: only for a closed loop"):
        _plan(load={"rate": 5, "error_pause_s": 0.1})

"""Failure injection during a run (`llm_sizing_loadgen.faults`): an HTTP fault that kills the simulator's
replica, commands that run, fail, time out or are killed when the run stops, faults skipped after the stop, the
API key kept away from fault URLs, and the events read back by the importer. Runs and the stop's grace are on a
virtual-time loop (`tests.loadgen.virtual_time`; the simulator in-process), so their times are exact; commands are
real processes on the real clock, checked for what they did, not how fast. No database."""

from __future__ import annotations

import asyncio
import doctest
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks_app.results.detect import import_text
from llm_sizing_loadgen import faults as faults_module
from llm_sizing_loadgen.client import Status
from llm_sizing_loadgen.faults import STOP_GRACE_S, FaultEvent, FaultInjector, command_fault
from llm_sizing_loadgen.plan import FaultKind, FaultSpec, plan_from_dict
from llm_sizing_loadgen.result import result_document, result_json
from llm_sizing_loadgen.runner import LoadRunner, RunOutcome, run_points
from tests.loadgen.conftest import SIM_GPU, SIM_MODEL, SIM_SERVED_NAME
from tests.loadgen.streams import FakeServer
from tests.loadgen.virtual_time import VirtualClock, run_virtual
from tests.simserver.inprocess import catalog_engine, inprocess_simulator

PYTHON = sys.executable


def _plan(url: str, **overrides: Any):
    data: dict[str, Any] = {
        "endpoint": {"base_url": url, "model": "llama"},
        "load": {"concurrency": 2},
        "requests": {"input_tokens": 64, "output_tokens": 16},
        "bounds": {"max_requests": 4},
    }
    data.update(overrides)
    return plan_from_dict(data)


def _command(*argv: str, timeout_s: float = 10.0) -> FaultSpec:
    return FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=argv, timeout_s=timeout_s)


def _virtual(plan, transport: httpx.AsyncBaseTransport) -> RunOutcome:
    return run_virtual(lambda clock: LoadRunner(plan, transport=transport, clock=clock).run())


def _hanging(fake: FakeServer, *, control_s: float) -> httpx.MockTransport:
    """The fake server, with a /control that answers 200 after `control_s` (asyncio time)."""

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/control":
            await asyncio.sleep(control_s)
            return httpx.Response(200, text="done")
        return await fake.handle(request)

    return httpx.MockTransport(handler)


def test_the_module_examples_hold() -> None:
    # when
    result = doctest.testmod(faults_module)

    # then
    assert (result.failed, result.attempted > 0) == (0, True)


def test_a_fault_at_one_second_kills_the_replica_and_requests_fail() -> None:
    # given: an open loop at 20 requests/s for 2.5 s against the simulator (requests of 10.3 ms); at 0.955 s the
    # only replica is killed for 1 s, while request 19 (sent at 0.95 s) streams
    url = "http://simulator.test"
    plan = _plan(
        url,
        load={"mode": "open", "rate": 20, "arrival": "constant"},
        bounds={"max_duration_s": 2.5},
        faults=[
            {
                "at_s": 0.955,
                "http": {"url": f"{url}/control", "body": {"action": "kill_replica", "replica": 0, "seconds": 1}},
                "label": "kill replica 0 for 1 s",
            }
        ],
        scenario={"kind": "failure", "peak_concurrency": 8, "criteria": {"recovery_s": 5}},
    )
    seen: list[FaultEvent] = []
    engine, max_model_len = catalog_engine(model=SIM_MODEL, gpu=SIM_GPU, speedup=10.0)

    async def scenario(clock: VirtualClock) -> list[RunOutcome]:
        async with inprocess_simulator(engine, model_name=SIM_SERVED_NAME, max_model_len=max_model_len) as transport:
            return await run_points(plan, transport=transport, clock=clock, on_fault=seen.append)

    # when
    [outcome] = run_virtual(scenario)

    # then: the event says it worked, at its time
    [event] = outcome.fault_events
    assert seen == [event]
    assert (event.label, event.kind, event.ok, event.skipped) == ("kill replica 0 for 1 s", "http", True, False)
    assert (event.t_s, event.duration_s) == (0.955, 0.0)
    assert event.detail.startswith('HTTP 200: {"ok":true,"action":"kill_replica"')

    # then: requests sent before the fault succeed, the one streaming is cut by an error event, those sent while
    # the replica is down are refused (503), those sent after it is back (1.955 s) succeed
    assert [round(outcome.seconds(r.t_send_ns), 6) for r in outcome.records] == [i / 20 for i in range(50)]
    assert [(r.status, r.http_status) for r in outcome.records] == (
        [(Status.OK, 200)] * 19 + [(Status.HTTP_ERROR, 503)] * 21 + [(Status.OK, 200)] * 10
    )
    assert "replica 0 was killed" in (outcome.records[19].error or "")
    assert outcome.records[19].ttft_ns is not None
    assert {r.error for r in outcome.records[20:40]} == {"HTTP 503: no replica of the simulated deployment is running"}

    # then: the result carries the event and the scenario; the importer puts the event on the records' clock
    document = result_document(outcome)
    assert document["faults"] == [
        {
            "t_s": 0.955,
            "label": "kill replica 0 for 1 s",
            "kind": "http",
            "ok": True,
            "detail": event.detail,
            "duration_s": 0.0,
            "skipped": False,
        }
    ]
    assert document["scenario"] == {"kind": "failure", "peak_concurrency": 8, "criteria": {"recovery_s": 5}}
    [run] = import_text(result_json(document))[1]
    assert run.faults[0]["t_s"] == pytest.approx(0.955, abs=1e-9)  # the first send was at t = 0
    assert run.faults[0]["ok"] is True
    assert run.scenario == {"kind": "failure", "peak_concurrency": 8, "criteria": {"recovery_s": 5}}


def test_a_command_fault_runs_and_keeps_its_output() -> None:
    # when
    script = "import sys; print('x'); print('e', file=sys.stderr)"
    ok, detail = asyncio.run(command_fault(_command(PYTHON, "-c", script)))

    # then
    assert (ok, detail) == (True, "exit 0; stdout: x; stderr: e")


def test_a_failing_command_and_a_missing_program_are_not_ok() -> None:
    # when
    failed = asyncio.run(command_fault(_command(PYTHON, "-c", "raise SystemExit(3)")))
    missing = asyncio.run(command_fault(_command("/nonexistent/kubectl", "delete", "pod", "x")))

    # then
    assert failed == (False, "exit 3")
    assert missing == (False, "cannot run '/nonexistent/kubectl': No such file or directory")


def test_the_output_is_cut_to_2000_characters() -> None:
    # when
    ok, detail = asyncio.run(command_fault(_command(PYTHON, "-c", "print('y' * 5000)")))

    # then
    assert ok
    assert detail == "exit 0; stdout: " + "y" * 2000 + "…"


def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    # given: a command whose child sleeps for a minute, with a 2 s timeout (time enough for Python to start the
    # script and its child on a busy machine: what is checked is the kill, not its moment)
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )

    # when
    ok, detail = asyncio.run(command_fault(_command(PYTHON, "-c", script, timeout_s=2.0)))

    # then: killed at its timeout (not the minute of its sleep), what it printed kept, its child gone too
    assert not ok
    assert detail == "killed after 2 s (timeout_s); exit -9; stdout: started"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30  # a deadline for the kill to be seen, not a figure
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (reaped by init later) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_faults_due_after_the_run_stopped_are_skipped() -> None:
    # given: 4 quick requests; a fault at 30 s
    fake = FakeServer()
    plan = _plan(
        "http://llm.test",
        bounds={"max_requests": 4, "max_duration_s": 60},
        faults=[{"at_s": 30, "command": [PYTHON, "-c", "print('never')"], "label": "late"}],
    )

    # when
    outcome = _virtual(plan, fake.transport)

    # then: 2 rounds of 2 requests of 2 + 15 × 1 ms: the run stopped at 34 ms
    [event] = outcome.fault_events
    assert (event.label, event.ok, event.skipped, event.t_s, event.duration_s) == ("late", False, True, 30.0, 0.0)
    assert event.detail == "skipped: the run stopped at 0.034 s, before the fault's time (30 s)"
    assert (
        "Fault 'late' was not executed: skipped: the run stopped at 0.034 s, before the fault's time (30 s)."
        in outcome.notes
    )


def test_a_fault_still_running_at_the_stop_gets_two_seconds_then_is_cut() -> None:
    # given: two HTTP faults at 0 s: one answered after a minute, one after 0.8 s; the stop at 0.3 s
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(float(request.url.params["s"]))
        return httpx.Response(200, text="done")

    async def scenario(clock: VirtualClock) -> tuple[list[FaultEvent], int]:
        injector = FaultInjector(
            [
                FaultSpec(at_s=0.0, kind=FaultKind.HTTP, url="http://control.test/?s=60", label="long"),
                FaultSpec(at_s=0.0, kind=FaultKind.HTTP, url="http://control.test/?s=0.8", label="short"),
            ],
            clock=clock,
            transport=httpx.MockTransport(handler),
        )
        injector.start(t0_ns=clock())
        await asyncio.sleep(0.3)
        began = clock()
        await injector.stop()
        return injector.events, clock() - began

    # when
    events, took_ns = run_virtual(scenario)

    # then: the stop waited the whole grace (the long one still running), the short one finished within it
    by_label = {event.label: event for event in events}
    assert took_ns == round(STOP_GRACE_S * 1e9)
    assert (by_label["short"].ok, by_label["short"].duration_s) == (True, 0.8)
    assert (by_label["long"].ok, by_label["long"].duration_s) == (False, 0.3 + STOP_GRACE_S)
    assert by_label["long"].detail == (
        "cut when the run stopped, after 2.300 s (a fault gets 2 s to finish once the run has stopped)"
    )


def test_a_command_still_running_after_the_grace_is_killed_with_its_children(tmp_path: Path) -> None:
    # given: a command fault whose script and child would sleep a minute; a grace of 0.2 s
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )

    async def scenario() -> list[FaultEvent]:
        injector = FaultInjector(
            [FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=(PYTHON, "-c", script), label="long")], stop_grace_s=0.2
        )
        injector.start(t0_ns=time.perf_counter_ns())
        deadline = time.monotonic() + 30  # wait for the script to start its child (a deadline, not a figure)
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the command did not start"
            await asyncio.sleep(0.02)
        await injector.stop()
        return injector.events

    # when
    [event] = asyncio.run(scenario())

    # then: killed at the stop, with everything it started
    assert (event.label, event.ok, event.skipped) == ("long", False, False)
    assert event.detail.startswith("killed when the run stopped, after ")
    assert event.detail.endswith("(a fault gets 0.2 s to finish once the run has stopped)")
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_an_http_fault_with_an_error_status_is_not_ok_and_gets_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # given: the endpoint needs a key; the fault's URL answers 400
    monkeypatch.setenv("LLM_TEST_KEY", "sk-very-secret")
    fake = FakeServer()
    control_headers: list[httpx.Headers] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/control":
            control_headers.append(request.headers)
            return httpx.Response(400, json={"error": "unknown action 'melt'"})
        return await fake.handle(request)

    plan = _plan(
        "http://llm.test",
        endpoint={"base_url": "http://llm.test", "model": "llama", "api_key_env": "LLM_TEST_KEY"},
        bounds={"max_duration_s": 0.6},
        faults=[
            {"at_s": 0.1, "http": {"url": "http://llm.test/control", "method": "POST", "body": {"action": "melt"}}}
        ],
    )

    # when
    outcome = _virtual(plan, httpx.MockTransport(handler))

    # then
    [event] = outcome.fault_events
    assert (event.label, event.ok, event.detail) == (
        "POST http://llm.test/control",
        False,
        'HTTP 400: {"error":"unknown action \'melt\'"}',
    )
    assert event.t_s == 0.1
    assert [headers.get("authorization") for headers in control_headers] == [None]
    assert "sk-very-secret" not in result_json(result_document(outcome))


def test_cancelling_stops_the_faults_and_the_run_at_once() -> None:
    # given: long streams; a fault at 0.2 s that would take a minute, another at 30 s; a cancel at 0.5 s
    fake = FakeServer(itl_s=0.02)
    plan = _plan(
        "http://llm.test",
        requests={"input_tokens": 16, "output_tokens": 1000},
        bounds={"max_duration_s": 60},
        faults=[
            {"at_s": 0.2, "http": {"url": "http://llm.test/control"}, "label": "sleeper"},
            {"at_s": 30, "http": {"url": "http://llm.test/control"}, "label": "late"},
        ],
    )

    async def scenario(clock: VirtualClock) -> tuple[RunOutcome, int]:
        runner = LoadRunner(plan, transport=_hanging(fake, control_s=60), clock=clock)
        task = asyncio.create_task(runner.run())
        while not runner.started:  # no time passes while the run sets up: it starts at this instant
            await asyncio.sleep(0)
        await asyncio.sleep(0.5)
        began = clock()
        runner.cancel()
        outcome = await task
        return outcome, clock() - began

    # when
    outcome, took_ns = run_virtual(scenario)

    # then: the requests are cut at once, the running fault after its 2 s grace, the late fault skipped
    assert outcome.stop_reason == "cancelled"
    assert took_ns == round(STOP_GRACE_S * 1e9)
    assert outcome.seconds(outcome.send_end_ns) == 0.5
    assert {r.status for r in outcome.records} == {Status.INCOMPLETE_AT_END}
    sleeper, late = outcome.fault_events
    assert (sleeper.label, sleeper.ok, sleeper.skipped, sleeper.t_s) == ("sleeper", False, False, 0.2)
    assert sleeper.detail == (
        "cut when the run stopped, after 2.300 s (a fault gets 2 s to finish once the run has stopped)"
    )
    assert (late.label, late.skipped) == ("late", True)
    assert late.detail == "skipped: the run stopped at 0.500 s, before the fault's time (30 s)"

"""Failure injection during a run (`benchmarks_app.loadgen.faults`): an HTTP fault that kills the simulator's
replica, commands that run, fail, time out or are killed when the run stops, faults skipped after the stop, the
API key kept away from fault URLs, and the events read back by the importer. No database."""

from __future__ import annotations

import asyncio
import doctest
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks_app.loadgen import faults as faults_module
from benchmarks_app.loadgen.client import Status
from benchmarks_app.loadgen.faults import STOP_GRACE_S, FaultEvent, FaultInjector, command_fault
from benchmarks_app.loadgen.plan import FaultKind, FaultSpec, plan_from_dict
from benchmarks_app.loadgen.result import result_document, result_json
from benchmarks_app.loadgen.runner import LoadRunner, run_plan
from benchmarks_app.simserver.engine import SimEngine
from sizing.benchmarks.detect import import_text
from tests.loadgen.streams import FakeServer

Serve = Callable[..., tuple[str, SimEngine]]
PYTHON = sys.executable


def _plan(url: str, **overrides: Any):
    data: dict[str, Any] = {"endpoint": {"base_url": url, "model": "llama"}, "load": {"concurrency": 2},
                            "requests": {"input_tokens": 64, "output_tokens": 16}, "bounds": {"max_requests": 4}}
    data.update(overrides)
    return plan_from_dict(data)


def _command(*argv: str, timeout_s: float = 10.0) -> FaultSpec:
    return FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=argv, timeout_s=timeout_s)


def test_the_module_examples_hold() -> None:
    # when
    result = doctest.testmod(faults_module)

    # then
    assert (result.failed, result.attempted > 0) == (0, True)


def test_a_fault_at_one_second_kills_the_replica_and_requests_fail(simserver: Serve) -> None:
    # given: an open loop at 20 requests/s for 2.5 s; at 1 s the only replica is killed for 1 s
    url, _ = simserver(speedup=10.0)
    plan = _plan(url, load={"mode": "open", "rate": 20, "arrival": "constant"},
                 bounds={"max_duration_s": 2.5},
                 faults=[{"at_s": 1, "http": {"url": f"{url}/control",
                                              "body": {"action": "kill_replica", "replica": 0, "seconds": 1}},
                          "label": "kill replica 0 for 1 s"}],
                 scenario={"kind": "failure", "peak_concurrency": 8, "criteria": {"recovery_s": 5}})
    seen: list[FaultEvent] = []

    # when
    [outcome] = run_plan(plan, on_fault=seen.append)

    # then: the event says it worked, at 1 s
    [event] = outcome.fault_events
    assert seen == [event]
    assert (event.label, event.kind, event.ok, event.skipped) == ("kill replica 0 for 1 s", "http", True, False)
    assert event.t_s == pytest.approx(1.0, abs=0.05)
    assert event.detail.startswith('HTTP 200: {"ok":true,"action":"kill_replica"')

    # then: requests sent before the fault succeed, those sent while the replica is down fail, later ones recover
    def statuses(start: float, end: float) -> set[Status | None]:
        return {r.status for r in outcome.records if r.t_send_ns is not None
                and start <= outcome.seconds(r.t_send_ns) < end}

    assert statuses(0.0, 0.8) == {Status.OK}
    assert statuses(1.1, 1.9) == {Status.HTTP_ERROR}
    assert Status.OK in statuses(2.1, 2.4)

    # then: the result carries the event and the scenario; the importer puts the event on the records' clock
    document = result_document(outcome)
    assert document["faults"] == [{"t_s": event.t_s, "label": "kill replica 0 for 1 s", "kind": "http", "ok": True,
                                   "detail": event.detail, "duration_s": event.duration_s, "skipped": False}]
    assert document["scenario"] == {"kind": "failure", "peak_concurrency": 8, "criteria": {"recovery_s": 5}}
    [run] = import_text(result_json(document))[1]
    first_send = min(outcome.seconds(r.t_send_ns) for r in outcome.records if r.t_send_ns is not None)
    assert run.faults[0]["t_s"] == pytest.approx(event.t_s - first_send, abs=1e-6)
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
    # given: a command whose child sleeps for a minute, with a 0.5 s timeout
    pid_file = tmp_path / "child.pid"
    script = ("import subprocess, sys, time\n"
              f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
              "print('started', flush=True)\n"
              "time.sleep(60)\n")
    began = time.monotonic()

    # when
    ok, detail = asyncio.run(command_fault(_command(PYTHON, "-c", script, timeout_s=0.5)))

    # then: killed at its timeout, what it printed kept, its child gone too
    took = time.monotonic() - began
    assert not ok
    assert detail.startswith("killed after 0.5 s (timeout_s); exit -9; stdout: started")
    assert took < 3
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
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
    plan = _plan("http://llm.test", bounds={"max_requests": 4, "max_duration_s": 60},
                 faults=[{"at_s": 30, "command": [PYTHON, "-c", "print('never')"], "label": "late"}])

    # when
    outcome = asyncio.run(LoadRunner(plan, transport=fake.transport).run())

    # then
    [event] = outcome.fault_events
    assert (event.label, event.ok, event.skipped, event.t_s, event.duration_s) == ("late", False, True, 30.0, 0.0)
    assert event.detail.startswith("skipped: the run stopped at ")
    assert "Fault 'late' was not executed: skipped: the run stopped at " in " ".join(outcome.notes)


def test_a_command_still_running_at_the_stop_gets_two_seconds_then_is_killed() -> None:
    # given: one command that would sleep a minute, one that ends within the grace
    async def scenario() -> tuple[list[FaultEvent], float]:
        injector = FaultInjector([
            FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=(PYTHON, "-c", "import time; time.sleep(60)"),
                      label="long"),
            FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=(PYTHON, "-c", "import time; time.sleep(0.8)"),
                      label="short")])
        injector.start(t0_ns=time.perf_counter_ns())
        await asyncio.sleep(0.3)
        began = time.monotonic()
        await injector.stop()
        return injector.events, time.monotonic() - began

    # when
    events, took = asyncio.run(scenario())

    # then
    by_label = {event.label: event for event in events}
    assert took == pytest.approx(STOP_GRACE_S, abs=0.5)
    assert by_label["short"].ok
    assert not by_label["long"].ok
    assert by_label["long"].detail.startswith("killed when the run stopped, after ")
    assert by_label["long"].duration_s == pytest.approx(0.3 + STOP_GRACE_S, abs=0.5)


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

    plan = _plan("http://llm.test", endpoint={"base_url": "http://llm.test", "model": "llama",
                                              "api_key_env": "LLM_TEST_KEY"},
                 bounds={"max_duration_s": 0.6},
                 faults=[{"at_s": 0.1, "http": {"url": "http://llm.test/control", "method": "POST",
                                                "body": {"action": "melt"}}}])

    # when
    outcome = asyncio.run(LoadRunner(plan, transport=httpx.MockTransport(handler)).run())

    # then
    [event] = outcome.fault_events
    assert (event.label, event.ok, event.detail) == ("POST http://llm.test/control", False,
                                                     'HTTP 400: {"error":"unknown action \'melt\'"}')
    assert [headers.get("authorization") for headers in control_headers] == [None]
    assert "sk-very-secret" not in result_json(result_document(outcome))


def test_cancelling_stops_the_faults_and_the_run_at_once(tmp_path: Path) -> None:
    # given: long streams; a command fault at 0.2 s that would sleep a minute, an HTTP fault at 30 s
    fake = FakeServer(itl_s=0.02)
    plan = _plan("http://llm.test", requests={"input_tokens": 16, "output_tokens": 1000},
                 bounds={"max_duration_s": 60},
                 faults=[{"at_s": 0.2, "command": [PYTHON, "-c", "import time; time.sleep(60)"], "label": "sleeper"},
                         {"at_s": 30, "http": {"url": "http://llm.test/control"}, "label": "late"}])
    runner = LoadRunner(plan, transport=fake.transport)

    async def scenario():
        task = asyncio.create_task(runner.run())
        while not runner.started:  # the run collects garbage before its clock starts: long in a big test process
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        began = time.monotonic()
        runner.cancel()
        outcome = await asyncio.wait_for(task, 10)
        return outcome, time.monotonic() - began

    # when
    outcome, took = asyncio.run(scenario())

    # then: the requests are cut at once, the running command within its 2 s grace, the late fault skipped
    assert outcome.stop_reason == "cancelled"
    assert took < STOP_GRACE_S + 1
    assert {r.status for r in outcome.records} == {Status.INCOMPLETE_AT_END}
    sleeper, late = outcome.fault_events
    assert (sleeper.label, sleeper.ok, sleeper.skipped) == ("sleeper", False, False)
    assert sleeper.detail.startswith("killed when the run stopped")
    assert (late.label, late.skipped) == ("late", True)

"""The command line (`python -m llm_sizing_loadgen`): flags mode and plan files against a real socket, sweeps,
exit codes, Ctrl-C and the progress line (the Django-free wheel installed and run on its own: test_wheel.py). No
database.

Over a real socket on the real clock, whether the client kept up (exit 0) or not (exit 3, client fidelity INVALID)
is the machine's load's to decide: those tests check that the exit code says what the written result says. Which
outcome gives which code and verdict line is checked exactly on the virtual clock
(test_the_exit_code_and_the_verdict_line_follow_the_outcome); the fidelity at speed is
tests/benchmarks/loadgen_speed.py's."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks_app.results.detect import import_text
from llm_sizing_loadgen.__main__ import (
    EXIT_CANCELLED,
    EXIT_INVALID,
    EXIT_NOTHING_OK,
    EXIT_OK,
    ProgressLine,
    exit_code,
    format_progress,
    main,
    outcome_line,
)
from llm_sizing_loadgen.client import RequestResult
from llm_sizing_loadgen.plan import plan_from_dict
from llm_sizing_loadgen.runner import LoadRunner, Progress, RunOutcome
from llm_sizing_loadgen.schemas import plan_schema, result_schema
from tests.loadgen.streams import FakeServer, ThreadedSseServer
from tests.loadgen.virtual_time import VirtualClock, run_virtual

PLAN_SCHEMA = plan_schema()  # written from the pydantic models (llm_sizing_loadgen.schemas)
ROOT = Path(__file__).resolve().parents[2]


def _imported(path: Path):
    fmt, runs = import_text(path.read_text())
    assert fmt == "llm_sizing"
    return runs[0]


def _fidelity_code(*paths: Path) -> int:
    """The exit code the written results call for: 0 when every point's client fidelity held, else 3."""
    valid = [json.loads(path.read_text())["summary"]["client_fidelity"]["valid"] for path in paths]
    return EXIT_OK if all(valid) else EXIT_INVALID


def _run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_flags_mode_runs_a_closed_loop_and_writes_an_importable_result(tmp_path: Path) -> None:
    # given
    result = tmp_path / "result.json"

    # when
    # requests of ~80 ms: a closed loop of them keeps its clients busy (the generator adds ~0.3 ms between them, a
    # few ms on a loaded machine)
    with ThreadedSseServer(ttft_s=0.02, itl_s=0.02) as server:
        code, _, err = _run_cli(
            "run",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--concurrency",
            "2",
            "--requests",
            "10",
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--stream",
            "--out",
            str(result),
            "--quiet",
        )

    # then
    run = _imported(result)
    assert code == _fidelity_code(result), err
    assert (run.completed, run.failed) == (10, 0)
    assert run.metrics["output_tokens"].mean == 4
    assert err.startswith("ok 10 (completed); schedule lag p99 ")
    assert err.rstrip().endswith(f"-> {result}")
    assert ("INVALID" in err) is (code == EXIT_INVALID)


def test_flags_mode_open_loop_with_progress_and_a_saved_plan(tmp_path: Path) -> None:
    # given
    result, plan = tmp_path / "r.json", tmp_path / "plan.json"

    # when
    with ThreadedSseServer(itl_s=0.001) as server:
        code, _, err = _run_cli(
            "run",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--api",
            "chat",
            "--rate",
            "40",
            "--arrival",
            "constant",
            "--requests",
            "30",
            "--input-tokens",
            "8",
            "--output-tokens",
            "8",
            "--out",
            str(result),
            "--save-plan",
            str(plan),
        )

    # then: stderr is not a terminal: progress lines, then the verdict
    run = _imported(result)
    saved = json.loads(plan.read_text())
    assert code == _fidelity_code(result), err
    assert run.completed == 30
    assert run.load.rate == 40.0
    assert saved["load"] == {"mode": "open", "ramp_up_s": 0.0, "rate": 40.0, "arrival": "constant"}
    assert saved["endpoint"]["api"] == "chat"
    assert "req/s | TTFT p50" in err


def test_a_plan_file_with_a_sweep_writes_one_result_per_point(tmp_path: Path) -> None:
    # given
    # requests of ~80 ms: a closed loop of them keeps its clients busy (the generator adds ~0.3 ms between them, a
    # few ms on a loaded machine)
    with ThreadedSseServer(ttft_s=0.02, itl_s=0.02) as server:
        plan = tmp_path / "plan.json"
        plan.write_text(
            json.dumps(
                {
                    "endpoint": {"base_url": "http://unreachable.invalid", "model": "m"},
                    "load": {"mode": "closed"},
                    "requests": {"input_tokens": 8, "output_tokens": 2},
                    "bounds": {"max_requests": 6},
                    "sweep": {"concurrency": [1, 3]},
                }
            )
        )

        # when: the address is overridden on the command line
        code, _, _ = _run_cli("run", str(plan), "--base-url", server.url, "--out", str(tmp_path / "r.json"), "--quiet")

    # then
    assert sorted(p.name for p in tmp_path.glob("r.*.json")) == ["r.concurrency-1.json", "r.concurrency-3.json"]
    assert code == _fidelity_code(*sorted(tmp_path.glob("r.*.json")))
    assert [_imported(path).completed for path in sorted(tmp_path.glob("r.*.json"))] == [6, 6]
    assert _imported(tmp_path / "r.concurrency-3.json").load.concurrency == 3


def test_plan_errors_and_mixed_modes_exit_2_with_every_problem(tmp_path: Path) -> None:
    # given
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "endpoint": {"base_url": "ftp://x", "model": "m"},
                "load": {"concurrency": 0},
                "requests": {"input_tokens": 8, "output_tokens": 2},
                "bounds": {},
            }
        )
    )

    # when
    bad_plan = _run_cli("run", str(plan), "--out", str(tmp_path / "r.json"))
    mixed = _run_cli("run", str(plan), "--concurrency", "3", "--out", str(tmp_path / "r.json"))
    no_flags = _run_cli("run", "--base-url", "http://h", "--out", str(tmp_path / "r.json"))

    # then
    assert bad_plan == (
        2,
        "",
        "The plan does not fit:\n"
        "  endpoint.base_url: must be an http:// or https:// URL (got 'ftp://x')\n"
        "  load.concurrency: must be ≥ 1 (got 0)\n"
        "  bounds: give max_requests, max_duration_s or both: a run needs a hard bound\n",
    )
    assert mixed[0] == 2
    assert "give a plan file or the load flags, not both (--concurrency)" in mixed[2]
    assert no_flags[0] == 2
    assert "  endpoint.model: is required\n" in no_flags[2]
    assert not (tmp_path / "r.json").exists()


def test_an_unset_key_variable_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # given
    monkeypatch.delenv("LOADGEN_CLI_KEY", raising=False)

    # when
    code, _, err = _run_cli(
        "run",
        "--base-url",
        "http://h",
        "--model",
        "m",
        "--api-key-env",
        "LOADGEN_CLI_KEY",
        "--concurrency",
        "1",
        "--requests",
        "1",
        "--input-tokens",
        "1",
        "--output-tokens",
        "1",
        "--out",
        str(tmp_path / "r.json"),
    )

    # then
    assert code == 2
    assert err == "Cannot run: endpoint.api_key_env names LOADGEN_CLI_KEY, but that environment variable is not set\n"


def test_an_unreachable_endpoint_exits_4_with_the_failures_written(tmp_path: Path) -> None:
    # given: nothing listens on this port (the server is closed first)
    # requests of ~80 ms: a closed loop of them keeps its clients busy (the generator adds ~0.3 ms between them, a
    # few ms on a loaded machine)
    with ThreadedSseServer(ttft_s=0.02, itl_s=0.02) as server:
        url = server.url

    # when
    code, _, _ = _run_cli(
        "run",
        "--base-url",
        url,
        "--model",
        "m",
        "--concurrency",
        "2",
        "--requests",
        "4",
        "--input-tokens",
        "4",
        "--output-tokens",
        "2",
        "--out",
        str(tmp_path / "r.json"),
        "--quiet",
    )

    # then
    run = _imported(tmp_path / "r.json")
    assert code == 4
    assert (run.completed, run.failed) == (0, 4)
    assert run.requests[0].error.startswith("http_error: connection failed: ")


def test_validate_and_schema_commands(tmp_path: Path) -> None:
    # given
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "endpoint": {"base_url": "http://h", "model": "m"},
                "load": {"rate": 2},
                "requests": {"input_tokens": 8, "output_tokens": 2},
                "bounds": {"max_duration_s": 60},
            }
        )
    )

    # when
    validated = _run_cli("validate", str(plan))
    schema = _run_cli("schema")
    results = _run_cli("schema", "result")

    # then
    assert validated[0] == 0
    assert json.loads(validated[1])["load"] == {"mode": "open", "ramp_up_s": 0.0, "rate": 2.0, "arrival": "poisson"}
    assert json.loads(schema[1]) == PLAN_SCHEMA
    assert (results[0], json.loads(results[1])) == (0, result_schema())


def test_the_progress_line() -> None:
    # given
    progress = Progress(
        elapsed_s=12.44,
        sent=548,
        done=540,
        ok=538,
        failed=2,
        in_flight=8,
        rate_per_s=31.25,
        ttft_p50_ms=45.06,
        ttft_p99_ms=120.3,
        tpot_p50_ms=10.2,
        tpot_p99_ms=None,
        max_requests=1000,
        max_duration_s=None,
    )
    stream = io.StringIO()

    # when
    line = format_progress(progress)
    ProgressLine(stream, label="rate-2")(progress)

    # then
    assert line == (
        "[###########.........]  54% 540/1000 ok 538 err 2 in-flight 8 | 31.2 req/s | TTFT p50 45.1 "
        "p99 120.3 ms | TPOT p50 10.2 p99 - ms | 12.4 s"
    )
    assert stream.getvalue() == f"rate-2 {line}\n"


def test_ctrl_c_stops_the_run_and_writes_what_was_measured(tmp_path: Path) -> None:
    # given: slow streams (10 ms per token, 1000 tokens: 10 s) so the 3 requests are in flight when Ctrl-C comes,
    # which is once the server has received them (the run has started: its signal handler is in place)
    result = tmp_path / "r.json"
    with ThreadedSseServer(itl_s=0.01) as server:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llm_sizing_loadgen",
                "run",
                "--base-url",
                server.url,
                "--model",
                "m",
                "--concurrency",
                "3",
                "--duration",
                "60",
                "--input-tokens",
                "8",
                "--output-tokens",
                "1000",
                "--out",
                str(result),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            deadline = time.monotonic() + 60  # a deadline for the requests to arrive, not a figure
            while server.server.requests < 3:
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "the generator sent no requests"
                time.sleep(0.02)

            # when
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    # then: what was measured is written: the 3 requests cut, nothing sent after the signal
    run = _imported(result)
    assert process.returncode == EXIT_CANCELLED, err
    assert (run.completed, run.failed, run.incomplete) == (0, 0, 3)
    assert server.server.requests == 3
    assert "incomplete_at_end 3 (cancelled)" in err


def _virtual_outcome(server: FakeServer, cancel_after: int | None = None, **plan: Any) -> RunOutcome:
    data: dict[str, Any] = {
        "endpoint": {"base_url": "http://llm.test", "model": "m"},
        "load": {"concurrency": 2},
        "requests": {"input_tokens": 8, "output_tokens": 2},
        "bounds": {"max_requests": 6},
    }
    data.update(plan)
    ended: list[RequestResult] = []
    runners: list[LoadRunner] = []

    def on_request(record: RequestResult) -> None:
        ended.append(record)
        if len(ended) == cancel_after:
            runners[0].cancel()

    async def scenario(clock: VirtualClock) -> RunOutcome:
        runners.append(LoadRunner(plan_from_dict(data), transport=server.transport, clock=clock, on_request=on_request))
        return await runners[0].run()

    return run_virtual(scenario, clock=server.clock)


def test_the_exit_code_and_the_verdict_line_follow_the_outcome(tmp_path: Path) -> None:
    # given: on the virtual clock, a run that kept up, one whose client blocked its loop 25 ms per request at 100
    # requests/s (lag p99 163.35 ms: see test_runner), one where every request failed, one cancelled
    path = tmp_path / "r.json"
    kept_up = _virtual_outcome(FakeServer())
    blocked = _virtual_outcome(
        FakeServer(block_s=0.025, ttft_s=0.001, itl_s=0.0, clock=VirtualClock()),
        load={"mode": "open", "rate": 100, "arrival": "constant"},
        bounds={"max_requests": 12},
        requests={"input_tokens": 8, "output_tokens": 1},
    )
    failing = _virtual_outcome(FakeServer(fail_every=1))
    cancelled = _virtual_outcome(FakeServer(), cancel_after=2, bounds={"max_requests": 1000})

    # when
    codes = [exit_code([outcome]) for outcome in (kept_up, blocked, failing, cancelled)]
    lines = [outcome_line(outcome, path) for outcome in (kept_up, blocked, failing, cancelled)]

    # then: 0 done, 3 done but INVALID (the reason in the line), 4 nothing ok, 130 cancelled (which wins)
    assert codes == [EXIT_OK, EXIT_INVALID, EXIT_NOTHING_OK, EXIT_CANCELLED]
    assert exit_code([kept_up, blocked]) == EXIT_INVALID
    assert lines[0] == f"ok 6 (completed); schedule lag p99 0.00 ms -> {path}"
    assert lines[1] == (
        f"ok 12 (completed); schedule lag p99 163.35 ms; INVALID: the schedule lag p99 is 163.35 ms, "
        f"over 10 ms: the client did not send when it should have -> {path}"
    )
    assert lines[2] == f"http_error 6 (completed); schedule lag p99 0.00 ms -> {path}"
    # (cancelled as the second request ended: the first client had already sent its next one)
    assert lines[3] == f"incomplete_at_end 1, ok 2 (cancelled); schedule lag p99 0.00 ms -> {path}"

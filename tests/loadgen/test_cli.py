"""The command line (`python -m benchmarks_app.loadgen`): flags mode and plan files against a real socket, sweeps,
exit codes, Ctrl-C, the progress line, and the Django-free wheel installed and run on its own. No database."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks_app.loadgen.__main__ import ProgressLine, format_progress, main
from benchmarks_app.loadgen.plan_schema import PLAN_SCHEMA
from benchmarks_app.loadgen.runner import Progress
from benchmarks_app.loadgen.wheel import build_wheel
from sizing.benchmarks.detect import import_text
from tests.loadgen.streams import ThreadedSseServer

ROOT = Path(__file__).resolve().parents[2]


def _imported(path: Path):
    fmt, runs = import_text(path.read_text())
    assert fmt == "llm_sizing"
    return runs[0]


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
        code, _, err = _run_cli("run", "--base-url", server.url, "--model", "m", "--concurrency", "2",
                                "--requests", "10", "--input-tokens", "16", "--output-tokens", "4", "--stream",
                                "--out", str(result), "--quiet")

    # then
    run = _imported(result)
    assert code == 0
    assert (run.completed, run.failed) == (10, 0)
    assert run.metrics["output_tokens"].mean == 4
    assert err.startswith("ok 10 (completed); schedule lag p99 ")
    assert err.rstrip().endswith(f"-> {result}")


def test_flags_mode_open_loop_with_progress_and_a_saved_plan(tmp_path: Path) -> None:
    # given
    result, plan = tmp_path / "r.json", tmp_path / "plan.json"

    # when
    with ThreadedSseServer(itl_s=0.001) as server:
        code, _, err = _run_cli("run", "--base-url", server.url, "--model", "m", "--api", "chat", "--rate", "40",
                                "--arrival", "constant", "--requests", "30", "--input-tokens", "8",
                                "--output-tokens", "8", "--out", str(result), "--save-plan", str(plan))

    # then: stderr is not a terminal: progress lines, then the verdict
    run = _imported(result)
    saved = json.loads(plan.read_text())
    assert code == 0
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
        plan.write_text(json.dumps({
            "endpoint": {"base_url": "http://unreachable.invalid", "model": "m"},
            "load": {"mode": "closed"}, "requests": {"input_tokens": 8, "output_tokens": 2},
            "bounds": {"max_requests": 6}, "sweep": {"concurrency": [1, 3]}}))

        # when: the address is overridden on the command line
        code, _, _ = _run_cli("run", str(plan), "--base-url", server.url, "--out", str(tmp_path / "r.json"),
                              "--quiet")

    # then
    assert code == 0
    assert sorted(p.name for p in tmp_path.glob("r.*.json")) == ["r.concurrency-1.json", "r.concurrency-3.json"]
    assert _imported(tmp_path / "r.concurrency-3.json").load.concurrency == 3


def test_plan_errors_and_mixed_modes_exit_2_with_every_problem(tmp_path: Path) -> None:
    # given
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"endpoint": {"base_url": "ftp://x", "model": "m"}, "load": {"concurrency": 0},
                                "requests": {"input_tokens": 8, "output_tokens": 2}, "bounds": {}}))

    # when
    bad_plan = _run_cli("run", str(plan), "--out", str(tmp_path / "r.json"))
    mixed = _run_cli("run", str(plan), "--concurrency", "3", "--out", str(tmp_path / "r.json"))
    no_flags = _run_cli("run", "--base-url", "http://h", "--out", str(tmp_path / "r.json"))

    # then
    assert bad_plan == (2, "", "The plan does not fit:\n"
                               "  endpoint.base_url: must be an http:// or https:// URL (got 'ftp://x')\n"
                               "  load.concurrency: must be ≥ 1 (got 0)\n"
                               "  bounds: give max_requests, max_duration_s or both: a run needs a hard bound\n")
    assert mixed[0] == 2
    assert "give a plan file or the load flags, not both (--concurrency)" in mixed[2]
    assert no_flags[0] == 2
    assert "  endpoint.model: is required\n" in no_flags[2]
    assert not (tmp_path / "r.json").exists()


def test_an_unset_key_variable_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # given
    monkeypatch.delenv("LOADGEN_CLI_KEY", raising=False)

    # when
    code, _, err = _run_cli("run", "--base-url", "http://h", "--model", "m", "--api-key-env", "LOADGEN_CLI_KEY",
                            "--concurrency", "1", "--requests", "1", "--input-tokens", "1", "--output-tokens", "1",
                            "--out", str(tmp_path / "r.json"))

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
    code, _, _ = _run_cli("run", "--base-url", url, "--model", "m", "--concurrency", "2", "--requests", "4",
                          "--input-tokens", "4", "--output-tokens", "2", "--out", str(tmp_path / "r.json"), "--quiet")

    # then
    run = _imported(tmp_path / "r.json")
    assert code == 4
    assert (run.completed, run.failed) == (0, 4)
    assert run.requests[0].error.startswith("http_error: connection failed: ")


def test_validate_and_schema_commands(tmp_path: Path) -> None:
    # given
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"endpoint": {"base_url": "http://h", "model": "m"}, "load": {"rate": 2},
                                "requests": {"input_tokens": 8, "output_tokens": 2},
                                "bounds": {"max_duration_s": 60}}))

    # when
    validated = _run_cli("validate", str(plan))
    schema = _run_cli("schema")

    # then
    assert validated[0] == 0
    assert json.loads(validated[1])["load"] == {"mode": "open", "ramp_up_s": 0.0, "rate": 2.0, "arrival": "poisson"}
    assert json.loads(schema[1]) == PLAN_SCHEMA


def test_the_progress_line() -> None:
    # given
    progress = Progress(elapsed_s=12.44, sent=548, done=540, ok=538, failed=2, in_flight=8, rate_per_s=31.25,
                        ttft_p50_ms=45.06, ttft_p99_ms=120.3, tpot_p50_ms=10.2, tpot_p99_ms=None,
                        max_requests=1000, max_duration_s=None)
    stream = io.StringIO()

    # when
    line = format_progress(progress)
    ProgressLine(stream, label="rate-2")(progress)

    # then
    assert line == ("[###########.........]  54% 540/1000 ok 538 err 2 in-flight 8 | 31.2 req/s | TTFT p50 45.1 "
                    "p99 120.3 ms | TPOT p50 10.2 p99 - ms | 12.4 s")
    assert stream.getvalue() == f"rate-2 {line}\n"


def test_ctrl_c_stops_the_run_and_writes_what_was_measured(tmp_path: Path) -> None:
    # given: slow streams (10 ms per token, 1000 tokens) so requests are in flight when Ctrl-C comes
    result = tmp_path / "r.json"
    with ThreadedSseServer(itl_s=0.01) as server:
        process = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
            [sys.executable, "-m", "benchmarks_app.loadgen", "run", "--base-url", server.url, "--model", "m",
             "--concurrency", "3", "--duration", "60", "--input-tokens", "8", "--output-tokens", "1000",
             "--out", str(result)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        time.sleep(2.0)

        # when
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)

    # then
    run = _imported(result)
    assert process.returncode == 130, err
    assert run.incomplete == 3
    assert "(cancelled)" in err


def test_the_wheel_installs_and_runs_without_django_or_the_repository(tmp_path: Path) -> None:
    # given: the wheel installed into a folder of its own
    wheel = build_wheel(tmp_path / "dist")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",  # noqa: S603
                    "--target", str(site), str(wheel)], check=True, capture_output=True)
    result = tmp_path / "r.json"
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        f"sys.path[:] = [p for p in sys.path if p not in ('', {str(ROOT)!r})]\n"
        "sys.modules['django'] = None  # any Django import fails\n"
        "import benchmarks_app.loadgen.__main__ as cli, sizing.estimator.workload as workload\n"
        f"assert cli.__file__.startswith({str(site)!r}) and workload.__file__.startswith({str(site)!r})\n"
        "sys.exit(cli.main(sys.argv[1:]))\n")

    # when
    # requests of ~80 ms: a closed loop of them keeps its clients busy (the generator adds ~0.3 ms between them, a
    # few ms on a loaded machine)
    with ThreadedSseServer(ttft_s=0.02, itl_s=0.02) as server:
        done = subprocess.run(  # noqa: S603 - our own script
            [sys.executable, "-c", script, "run", "--base-url", server.url, "--model", "m", "--concurrency", "2",
             "--requests", "4", "--input-tokens", "8", "--output-tokens", "2", "--out", str(result), "--quiet"],
            cwd=tmp_path, capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if k != "PYTHONPATH"}, timeout=60)

    # then
    assert done.returncode == 0, done.stderr
    assert _imported(result).completed == 4
    assert (site / "bin" / "llm-sizing-loadgen").exists()

"""deploy/tools/memory_sentinel.py with a fake nvidia-smi on PATH (a script reading a state file) and a local HTTP
server for the engine's /metrics, on a fake clock (its sleeps advance time at once; scripted changes happen at set
times): it writes one file the service reads, captures OOM lines, breaker lines and restarts, resumes after a cut
without duplicated samples, thins then stops at its size cap, and documents itself."""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks_app.results.sentinel import BreakerRule, evaluate, parse_sentinel

TOOL = Path(__file__).resolve().parents[2] / "deploy" / "tools" / "memory_sentinel.py"
START = 1_796_000_000.0
FAKE_SMI = """#!/bin/sh
state="$SENTINEL_TEST_STATE"
used=$(cat "$state/used")
case "$1" in
  --query-gpu=*) echo "0, GPU-aaaa-1111, NVIDIA H100 80GB HBM3, $used, 81559, 35, 2026/11/30 13:41:02.123"
                 echo "1, GPU-bbbb-2222, NVIDIA H100 80GB HBM3, $used, 81559, [N/A], 2026/11/30 13:41:02.123";;
  --query-compute-apps=*) for pid in $(cat "$state/pids"); do echo "$pid, GPU-aaaa-1111, 70000"; done;;
esac
"""


def _load_tool():
    spec = importlib.util.spec_from_file_location("memory_sentinel", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sentinel_tool = _load_tool()


class FakeClock(sentinel_tool.Clock):
    """Time starts at START; sleeping advances it; `at` runs scripted changes once their time has come."""

    def __init__(self, script: list[tuple[float, object]] | None = None, start: float = START) -> None:
        self.now = start
        self.script = sorted(script or [], key=lambda item: item[0])

    def time(self) -> float:
        while self.script and self.script[0][0] <= self.now - START:
            _, action = self.script.pop(0)
            action()
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.001)


BODY = (
    '# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine="0"} 0.42\n'
    'vllm:num_requests_running{engine="0"} 12\nvllm:num_requests_waiting{engine="0"} 1\n'
    'vllm:num_preemptions_total{engine="0"} 0\nprocess_start_time_seconds 1795999000\n'
)


class Metrics:
    body = BODY
    up = True


@pytest.fixture
def metrics_url():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not Metrics.up:
                self.send_response(503)
                self.end_headers()
                return
            data = Metrics.body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Metrics.up, Metrics.body = True, BODY
    yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    (state / "used").write_text("71000")
    (state / "pids").write_text("4242")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SENTINEL_TEST_STATE", str(state))
    return state


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_help_documents_the_format_the_cap_and_resuming():
    done = subprocess.run(
        [sys.executable, str(TOOL), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for words in (
        "memory-sentinel/1",
        "--metrics-url",
        "--engine-log",
        "--breaker-trip-pattern",
        "--max-bytes",
        "thins, then stops",
        "Resuming",
        "--once",
        "--close",
        "resumed",
    ):
        assert words in done.stdout


def test_once_prints_the_header_and_one_sample_and_writes_nothing(fake_smi, metrics_url, tmp_path):
    # when
    done = subprocess.run(
        [
            sys.executable,
            str(TOOL),
            "--once",
            "--metrics-url",
            metrics_url,
            "--host",
            "gpu-01",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    # then
    header, sample = (json.loads(line) for line in done.stdout.splitlines())
    assert (header["tool"], header["format"], header["host"]) == ("memory-sentinel", "memory-sentinel/1", "gpu-01")
    assert [g["uuid"] for g in header["gpus"]] == ["GPU-aaaa-1111", "GPU-bbbb-2222"]
    assert sample["gpus"] == [[0, 71000, 81559, 35], [1, 71000, 81559, None]]
    assert sample["pids"] == [4242]
    assert sample["engine"] == {
        "up": True,
        "engine": "vllm",
        "kv": 0.42,
        "running": 12.0,
        "waiting": 1.0,
        "preemptions": 0.0,
        "process_start": 1795999000.0,
    }
    assert "projected size" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "state"]


def test_a_run_captures_ooms_breaker_lines_and_a_restart_into_a_file_the_service_reads(fake_smi, metrics_url, tmp_path):
    # given an engine log and a breaker log, an OOM at 100 s, the engine down from 200 s to 260 s with new PIDs
    engine_log, breaker_log = tmp_path / "engine.log", tmp_path / "breaker.log"
    engine_log.write_text("INFO started\n")
    breaker_log.write_text("")
    out = tmp_path / "sentinel.jsonl"

    def append(path: Path, line: str):
        return lambda: path.open("a").write(line + "\n")

    def engine_down():
        Metrics.up = False
        (fake_smi / "pids").write_text("")
        (fake_smi / "used").write_text("3")

    def engine_up():
        Metrics.up = True
        Metrics.body = Metrics.body.replace("1795999000", "1796000250")  # a new process
        (fake_smi / "pids").write_text("5151")
        (fake_smi / "used").write_text("71000")

    clock = FakeClock(
        [
            (100, append(engine_log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate")),
            (101, append(engine_log, "  File x.py, line 3 (the same traceback)")),
            (102, append(engine_log, "torch.OutOfMemoryError: CUDA out of memory (same event)")),
            (150, append(breaker_log, "WARN breaker tripped kv 0.97")),
            (170, append(breaker_log, "INFO breaker closed")),
            (200, engine_down),
            (260, engine_up),
        ]
    )
    # when
    code = sentinel_tool.main(
        [
            "-o",
            str(out),
            "--duration-hours",
            "0.1",
            "--interval",
            "10",
            "--host",
            "gpu-01",
            "--metrics-url",
            metrics_url,
            "--engine-log",
            str(engine_log),
            "--breaker-log",
            str(breaker_log),
            "--breaker-trip-pattern",
            "breaker tripped",
            "--breaker-recover-pattern",
            "breaker closed",
        ],
        clock=clock,
    )
    # then
    assert code == 0
    records = _records(out)
    events = [(r["kind"], r["source"]) for r in records if r["type"] == "event"]
    assert events == [
        ("oom", "engine_log"),
        ("breaker_trip", "breaker_log"),
        ("breaker_recover", "breaker_log"),
        ("process_exit", "pids"),
        ("engine_down", "metrics"),
        ("process_start", "pids"),
        ("engine_up", "metrics"),
        ("restart", "metrics"),
    ]
    assert records[-1]["type"] == "end"
    assert records[-1]["reason"] == "duration"
    offsets = [r["off_s"] for r in records if r["type"] == "sample"]
    assert offsets == sorted(set(offsets))
    assert offsets[0] == 0.0
    assert offsets[-1] >= 360.0
    sentinel = parse_sentinel(out.read_text())
    assert sentinel.gpu_uuids == ("GPU-aaaa-1111", "GPU-bbbb-2222")
    result = evaluate(sentinel, breaker=BreakerRule(), hours_required=0.1)
    verdicts = {c.code.value: c.passed for c in result.criteria}
    assert verdicts["coverage"] is True
    assert verdicts["no_oom"] is False
    assert verdicts["failure_recovered"] is True
    outage = result.criteria[4].evidence["outages"][0]
    assert outage["recovery_s"] == 60.0


def test_a_cut_file_resumes_with_a_marker_and_no_overlapping_samples(fake_smi, tmp_path):
    # given a run stopped at 120 s (a reboot) whose last line was cut mid-write
    out = tmp_path / "sentinel.jsonl"
    args = ["-o", str(out), "--duration-hours", "0.1", "--interval", "10", "--host", "gpu-01"]

    def reboot():
        raise KeyboardInterrupt

    sentinel_tool.main(args, clock=FakeClock([(120, reboot)]))
    lines = out.read_text().splitlines(keepends=True)
    assert json.loads(lines[-1])["reason"] == "stopped"
    out.write_text("".join(lines[:-2]) + lines[-2][:25])  # the end line lost, the last sample cut
    # when the same command runs again at 300 s
    code = sentinel_tool.main(args, clock=FakeClock(start=START + 300))
    # then
    assert code == 0
    records = _records(out)
    kinds = [r["type"] for r in records]
    assert kinds.count("header") == 1
    assert "resumed" in kinds
    assert [r["kind"] for r in records if r["type"] == "note"] == ["partial_line_dropped"]
    resumed = next(r for r in records if r["type"] == "resumed")
    assert resumed["gap_s"] > 100
    offsets = [r["off_s"] for r in records if r["type"] == "sample"]
    assert offsets == sorted(set(offsets))
    sentinel = parse_sentinel(out.read_text())
    assert len(sentinel.resumes) == 1
    assert sentinel.end_reason == "duration"
    # and a complete file is left as it is
    before = out.read_bytes()
    assert sentinel_tool.main(args, clock=FakeClock(start=START + 900)) == 0
    assert out.read_bytes() == before


def test_a_file_of_another_host_is_refused_on_resume(fake_smi, tmp_path):
    out = tmp_path / "sentinel.jsonl"
    sentinel_tool.main(["-o", str(out), "--duration-hours", "0.01", "--host", "gpu-01"], clock=FakeClock())
    assert sentinel_tool.main(["-o", str(out), "--duration-hours", "0.01", "--host", "gpu-02"], clock=FakeClock()) == 2


def test_the_size_cap_thins_the_interval_then_stops_with_a_note(fake_smi, tmp_path):
    # given a cap far below what 2 hours every 10 s would write
    out = tmp_path / "sentinel.jsonl"
    # when
    sentinel_tool.main(
        ["-o", str(out), "--duration-hours", "2", "--interval", "10", "--max-bytes", "12000", "--host", "gpu-01"],
        clock=FakeClock(),
    )
    # then
    records = _records(out)
    notes = [r for r in records if r["type"] == "note"]
    assert [n["kind"] for n in notes if n["kind"] == "thinned"]
    assert notes[-1]["kind"] == "cap_reached"
    assert records[-1]["reason"] == "cap"
    assert out.stat().st_size < 12000 + 1000  # one sample and the closing lines past the cap at most


def test_close_ends_an_unfinished_file(fake_smi, tmp_path):
    out = tmp_path / "sentinel.jsonl"

    def crash():
        raise KeyboardInterrupt

    sentinel_tool.main(["-o", str(out), "--duration-hours", "0.1", "--host", "gpu-01"], clock=FakeClock([(60, crash)]))
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:-1]))  # no end line: a crash
    assert sentinel_tool.main(["--close", str(out)]) == 0
    assert parse_sentinel(out.read_text()).end_reason == "closed"

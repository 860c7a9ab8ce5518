"""Speed of the load generator (not collected by pytest; no database): how many streamed requests per second one
process sustains against a zero-delay server, and how much latency it adds to TTFT.

Servers (each in its own process, so the generator's event loop is its own):

- `simserver`: `python -m benchmarks_app.simserver --model meta-llama/Meta-Llama-3-8B --gpu nvidia-h100-sxm-80gb
  --zero-delay` (uvicorn + Starlette + the simulated engine, every step taking no time). Its usage event carries
  its own timestamps (`simulator.received_ns`: the handler got the request; `first_token_ns`: the first token's
  chunk was handed to the transport).
- `minimal`: `tests/loadgen/sse_server.py`, raw asyncio streams, no framework: `recv_ns` right after the body is
  read, `first_ns` right before the first content event is written. Its figures bound the generator's own share
  more tightly (the simulator's include uvicorn's parsing and Starlette's routing, which are server time).

Both stamp `time.perf_counter_ns()`: CLOCK_MONOTONIC on Linux, the clock of the generator's own readings in this
process, so the two sides compare directly.

Measurements (requests of 128 prompt tokens and 32 streamed output tokens, one event per token):

1. Sustained rate: an open loop (Poisson) at each `--rates` value for `--duration` seconds. Sustained means every
   request succeeded and METRICS.md's client fidelity holds: achieved send rate ≥ 95% of the offered rate and
   schedule lag (t_send − t_sched) p99 ≤ 10 ms. Target: 300 requests/s.
2. Added TTFT: per request, (t_c1 − t_send) − (server first token − server received): the time the generator (and
   the loopback, and for the simulator the server framework) adds to the server's own TTFT; also split into the send
   side (server received − t_send) and the receive side (t_c1 − server first token). Target: p99 < 1 ms, at the
   300/s load.
   The same figure is measured for a bare asyncio socket client (one hand-written HTTP/1.1 request per connection,
   one write, the first content event found with a regular expression: no httpx, no SSE or JSON parsing) under the
   same load: the floor the machine itself imposes (loopback, wake-ups, CPU contention). The generator's own share
   is the difference between the two.
3. Ceiling: a closed loop of `--concurrency` clients for `--closed-requests` requests: completions per second when
   the generator runs flat out (the client is then the bottleneck, so its schedule lag is not a fidelity figure).

    .venv/bin/python tests/benchmarks/loadgen_speed.py [--server simserver|minimal|both] [--duration 20]
        [--rates 300,400] [--concurrency 64] [--closed-requests 6000] [--json out.json]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llm_sizing_loadgen.client import RequestResult, Status, StreamClient  # noqa: E402
from llm_sizing_loadgen.plan import plan_from_dict  # noqa: E402
from llm_sizing_loadgen.prompts import PromptFactory  # noqa: E402
from llm_sizing_loadgen.runner import LoadRunner, RequestSource, RunOutcome, open_schedule  # noqa: E402

MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-h100-sxm-80gb"
INPUT_TOKENS = 128
OUTPUT_TOKENS = 32
TARGET_RATE = 300.0
TARGET_ADDED_P99_MS = 1.0
SEED = 0

# the simulator's own timestamps, captured from its usage event (index → {"received_ns", "first_token_ns", ...})
SIM_TIMES: dict[int, dict[str, Any]] = {}
_original_event = StreamClient._event


def _capturing_event(payload: bytes, record: RequestResult) -> tuple[bool, dict[str, Any] | None]:
    content, usage = _original_event(payload, record)
    if usage is not None and b'"simulator"' in payload:  # once per request, after its last token
        SIM_TIMES[record.index] = json.loads(payload)["simulator"]
    return content, usage


StreamClient._event = staticmethod(_capturing_event)  # type: ignore[method-assign]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def server(kind: str, timings: Path | None = None) -> Iterator[str]:
    """Start a server process and yield its base URL; stop it (SIGTERM to its pid) afterwards."""
    port = free_port()
    if kind == "simserver":
        command = [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            GPU,
            "--zero-delay",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-control",
        ]
    else:
        command = [sys.executable, str(ROOT / "tests" / "loadgen" / "sse_server.py"), "--port", str(port)]
        if timings is not None:
            command += ["--timings", str(timings)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                output = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"the {kind} server exited: {output}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the {kind} server did not listen in time") from None
                time.sleep(0.1)
        time.sleep(0.5 if kind == "simserver" else 0.1)  # the app's start-up after the socket opens
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _plan(url: str, load: dict[str, Any], bounds: dict[str, Any]):
    return plan_from_dict(
        {
            "endpoint": {"base_url": url, "model": MODEL},
            "load": load,
            "requests": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
            "bounds": bounds,
            "seed": SEED,
            "timeout_s": {"connect": 5, "ttft": 30, "stream": 30},
        }
    )


def _pct(values: list[float] | np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def _server_times(kind: str, outcome: RunOutcome, timings: Path | None) -> dict[int, tuple[int, int]]:
    """index → (server received ns, server first token ns)."""
    if kind == "simserver":
        return {
            index: (int(t["received_ns"]), int(t["first_token_ns"]))
            for index, t in SIM_TIMES.items()
            if t.get("received_ns") and t.get("first_token_ns")
        }
    assert timings is not None
    by_nonce = {}
    for line in timings.read_text().splitlines():
        row = json.loads(line)
        by_nonce[row["nonce"]] = (int(row["recv_ns"]), int(row["first_ns"]))
    prompts = PromptFactory(SEED)
    return {r.index: by_nonce[prompts.nonce(r.index)] for r in outcome.records if prompts.nonce(r.index) in by_nonce}


def added_latency(outcome: RunOutcome, times: dict[int, tuple[int, int]]) -> dict[str, Any]:
    added, send, receive, server_ttft = [], [], [], []
    for record in outcome.records:
        if record.status is not Status.OK or record.index not in times or record.t_send_ns is None:
            continue
        received, first = times[record.index]
        t_c1 = record.event_ns[0]
        added.append(((t_c1 - record.t_send_ns) - (first - received)) / 1e6)
        send.append((received - record.t_send_ns) / 1e6)
        receive.append((t_c1 - first) / 1e6)
        server_ttft.append((first - received) / 1e6)
    return {
        "n": len(added),
        "added_p50_ms": _pct(added, 50),
        "added_p99_ms": _pct(added, 99),
        "send_side_p50_ms": _pct(send, 50),
        "send_side_p99_ms": _pct(send, 99),
        "receive_side_p50_ms": _pct(receive, 50),
        "receive_side_p99_ms": _pct(receive, 99),
        "server_ttft_p50_ms": _pct(server_ttft, 50),
        "negative": sum(1 for value in added if value < 0),
    }


def open_loop(kind: str, rate: float, duration_s: float) -> dict[str, Any]:
    SIM_TIMES.clear()
    with tempfile.TemporaryDirectory() as folder:
        timings = Path(folder) / "timings.jsonl" if kind == "minimal" else None
        with server(kind, timings) as url:
            outcome = asyncio.run(
                LoadRunner(_plan(url, {"mode": "open", "rate": rate}, {"max_duration_s": duration_s})).run()
            )
        # the server wrote its timings as it stopped
        times = _server_times(kind, outcome, timings)
    statuses: dict[str, int] = {}
    for record in outcome.records:
        key = (record.status or Status.INCOMPLETE_AT_END).value
        statuses[key] = statuses.get(key, 0) + 1
    fidelity = outcome.fidelity
    errors = sum(count for key, count in statuses.items() if key not in ("ok", "incomplete_at_end"))
    start_s, end_s = outcome.window_s
    completed = sum(
        1
        for r in outcome.records
        if r.status is Status.OK and r.t_end_ns is not None and r.t_end_ns <= outcome.t0_ns + end_s * 1e9
    )
    return {
        "server": kind,
        "offered_rate_per_s": rate,
        "duration_s": duration_s,
        "statuses": statuses,
        "achieved_send_rate_per_s": fidelity.achieved_rate_per_s,
        "achieved_ratio": fidelity.achieved_ratio,
        "completed_per_s": completed / (end_s - start_s),
        "schedule_lag_p50_ms": fidelity.lag_p50_ms,
        "schedule_lag_p99_ms": fidelity.lag_p99_ms,
        "client_cpu_percent": fidelity.cpu_percent,
        "fidelity_valid": fidelity.valid,
        "sustained": fidelity.valid and errors == 0,
        "ttft_p50_ms": _pct([r.ttft_ns / 1e6 for r in outcome.records if r.ttft_ns], 50),
        "ttft_p99_ms": _pct([r.ttft_ns / 1e6 for r in outcome.records if r.ttft_ns], 99),
        "added_ttft": added_latency(outcome, times),
    }


CONTENT = re.compile(rb'"text":"[^"]')
SIM_RECEIVED = re.compile(rb'"received_ns":(\d+)')
SIM_FIRST = re.compile(rb'"first_token_ns":(\d+)')


async def _bare_request(
    port: int, body: bytes, t_sched: int, index: int, found: dict[int, tuple[int, int, int | None, int | None]]
) -> None:
    """One request on its own connection: (t_send, t_c1, server received, server first token) into `found`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    t_send = time.perf_counter_ns()
    writer.write(head + body)
    t_c1 = None
    data = b""
    while True:
        chunk = await reader.read(65536)
        now = time.perf_counter_ns()
        if not chunk:
            break
        data += chunk
        if t_c1 is None and CONTENT.search(data):
            t_c1 = now
        if data.rstrip().endswith(b"0\r\n\r\n") or b"data: [DONE]" in data[-64:]:
            break
    writer.close()
    received, first = SIM_RECEIVED.search(data), SIM_FIRST.search(data)
    if t_c1 is not None:
        found[index] = (
            t_send,
            t_c1,
            int(received.group(1)) if received else None,
            int(first.group(1)) if first else None,
        )


async def _bare_open_loop(port: int, rate: float, duration_s: float) -> dict[int, tuple[int, int, Any, Any]]:
    plan = _plan(f"http://127.0.0.1:{port}", {"mode": "open", "rate": rate}, {"max_duration_s": duration_s})
    source = RequestSource(plan)
    schedule = open_schedule(plan.load, max_requests=None, max_duration_s=duration_s, seed=SEED)
    found: dict[int, tuple[int, int, Any, Any]] = {}
    tasks = []
    t0 = time.perf_counter_ns()
    for index, offset in enumerate(schedule.tolist()):
        body = source.prepare(index).body
        due = t0 + int(offset * 1e9)
        delay = (due - time.perf_counter_ns()) / 1e9
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_bare_request(port, body, due, index, found)))
    await asyncio.gather(*tasks, return_exceptions=True)
    return found


def bare_open_loop(kind: str, rate: float, duration_s: float) -> dict[str, Any]:
    """The environment's floor: the added-TTFT figure of a bare socket client at the same load."""
    with tempfile.TemporaryDirectory() as folder:
        timings = Path(folder) / "timings.jsonl" if kind == "minimal" else None
        with server(kind, timings) as url:
            port = int(url.rsplit(":", 1)[1])
            found = asyncio.run(_bare_open_loop(port, rate, duration_s))
        times: dict[int, tuple[int, int]] = {}
        if kind == "minimal" and timings is not None:
            by_nonce = {
                row["nonce"]: (row["recv_ns"], row["first_ns"])
                for row in map(json.loads, timings.read_text().splitlines())
            }
            prompts = PromptFactory(SEED)
            times = {index: by_nonce[prompts.nonce(index)] for index in found if prompts.nonce(index) in by_nonce}
        else:
            times = {index: (received, first) for index, (_, _, received, first) in found.items() if received and first}
    added = [
        ((t_c1 - t_send) - (times[i][1] - times[i][0])) / 1e6 for i, (t_send, t_c1, _, _) in found.items() if i in times
    ]
    send = [(times[i][0] - t_send) / 1e6 for i, (t_send, _, _, _) in found.items() if i in times]
    receive = [(t_c1 - times[i][1]) / 1e6 for i, (_, t_c1, _, _) in found.items() if i in times]
    return {
        "n": len(added),
        "added_p50_ms": _pct(added, 50),
        "added_p99_ms": _pct(added, 99),
        "send_side_p50_ms": _pct(send, 50),
        "send_side_p99_ms": _pct(send, 99),
        "receive_side_p50_ms": _pct(receive, 50),
        "receive_side_p99_ms": _pct(receive, 99),
    }


def closed_loop(kind: str, concurrency: int, requests: int) -> dict[str, Any]:
    with server(kind) as url:
        began = time.perf_counter()
        outcome = asyncio.run(
            LoadRunner(_plan(url, {"mode": "closed", "concurrency": concurrency}, {"max_requests": requests})).run()
        )
        wall = time.perf_counter() - began
    ok = [r for r in outcome.records if r.status is Status.OK]
    span_s = (max(r.t_end_ns for r in ok) - min(r.t_send_ns for r in ok)) / 1e9 if ok else float("nan")
    return {
        "server": kind,
        "concurrency": concurrency,
        "requests": requests,
        "ok": len(ok),
        "completed_per_s": len(ok) / span_s,
        "wall_s": wall,
        "client_cpu_percent": outcome.fidelity.cpu_percent,
        "ttft_p50_ms": _pct([r.ttft_ns / 1e6 for r in ok if r.ttft_ns], 50),
    }


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _fmt(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("simserver", "minimal", "both"), default="both")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--rates", default="300", help="comma-separated offered rates for the open loop")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--closed-requests", type=int, default=6000)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    kinds = ["simserver", "minimal"] if args.server == "both" else [args.server]
    rates = [float(part) for part in args.rates.split(",") if part.strip()]
    print(
        f"machine: {os.cpu_count()} CPUs; requests of {INPUT_TOKENS} prompt / {OUTPUT_TOKENS} output tokens, "
        "streamed, one event per token"
    )
    report: dict[str, Any] = {"cpus": os.cpu_count(), "open": [], "closed": []}
    missed = []
    for kind in kinds:
        for rate in rates:
            figures = open_loop(kind, rate, args.duration)
            report["open"].append(figures)
            added = figures["added_ttft"]
            print(
                f"[{kind}] open loop {rate:g}/s for {args.duration:g} s: sent "
                f"{_fmt(figures['achieved_send_rate_per_s'])}/s "
                f"(ratio {_fmt(figures['achieved_ratio'], 3)}), completed {_fmt(figures['completed_per_s'])}/s, "
                f"statuses {figures['statuses']}, schedule lag p50 {_fmt(figures['schedule_lag_p50_ms'], 3)} "
                f"p99 {_fmt(figures['schedule_lag_p99_ms'], 3)} ms, client CPU "
                f"{_fmt(figures['client_cpu_percent'], 0)}%"
                f", sustained: {figures['sustained']}"
            )
            print(
                f"[{kind}]   added TTFT over the server's own (n={added['n']}): p50 "
                f"{_fmt(added['added_p50_ms'], 3)} p99 {_fmt(added['added_p99_ms'], 3)} ms (send side p50 "
                f"{_fmt(added['send_side_p50_ms'], 3)} p99 {_fmt(added['send_side_p99_ms'], 3)}; receive side p50 "
                f"{_fmt(added['receive_side_p50_ms'], 3)} p99 {_fmt(added['receive_side_p99_ms'], 3)}); server "
                f"TTFT p50 {_fmt(added['server_ttft_p50_ms'], 3)} ms; client TTFT p50 "
                f"{_fmt(figures['ttft_p50_ms'], 3)} p99 {_fmt(figures['ttft_p99_ms'], 3)} ms"
            )
            bare = bare_open_loop(kind, rate, args.duration)
            figures["bare_client"] = bare
            mine_p99, floor_p99 = added["added_p99_ms"], bare["added_p99_ms"]
            print(
                f"[{kind}]   bare socket client, same load (n={bare['n']}): added p50 "
                f"{_fmt(bare['added_p50_ms'], 3)} p99 {_fmt(floor_p99, 3)} ms (send side p50 "
                f"{_fmt(bare['send_side_p50_ms'], 3)} p99 {_fmt(bare['send_side_p99_ms'], 3)}; receive side p50 "
                f"{_fmt(bare['receive_side_p50_ms'], 3)} p99 {_fmt(bare['receive_side_p99_ms'], 3)}) -> the "
                f"generator's own share: p50 {_fmt(_minus(added['added_p50_ms'], bare['added_p50_ms']), 3)} "
                f"p99 {_fmt(_minus(mine_p99, floor_p99), 3)} ms"
            )
            if rate >= TARGET_RATE and not figures["sustained"]:
                missed.append(f"{kind}: {rate:g}/s not sustained")
            if rate == TARGET_RATE and (added["added_p99_ms"] is None or added["added_p99_ms"] >= TARGET_ADDED_P99_MS):
                missed.append(f"{kind}: added TTFT p99 {_fmt(added['added_p99_ms'], 3)} ms ≥ {TARGET_ADDED_P99_MS} ms")
        if args.closed_requests:
            figures = closed_loop(kind, args.concurrency, args.closed_requests)
            report["closed"].append(figures)
            print(
                f"[{kind}] closed loop, {args.concurrency} clients, {args.closed_requests} requests: "
                f"{_fmt(figures['completed_per_s'], 1)} completed/s ({figures['ok']} ok), client CPU "
                f"{_fmt(figures['client_cpu_percent'], 0)}%"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    print("targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

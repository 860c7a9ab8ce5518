"""Does the simulator server keep the performance model's promise? Send a workload to a running server with a
plain streaming HTTP client and compare the TTFT and inter-token latency percentiles it measures with what the
offline simulator (`sizing.estimator.simulator`) predicts for the very same requests and arrival times.

The client is deliberately simple (httpx, one task per request, an open loop: request i is sent at its sampled
arrival time divided by the server's speedup). Client times are converted back to model time (× speedup) before
the comparison. Percentiles use the offline simulator's methods: TTFT by linear interpolation over requests, ITL
as the token-weighted nearest rank over every gap between consecutive token events of every request.

Used by `tests/simserver/test_truth.py` and `tests/benchmarks/simserver_truth.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from llm_sizing_loadgen.workload import (
    LengthDistribution,
    LengthKind,
    RequestClass,
    SampledRequests,
    WorkloadProfile,
    workload_sample,
)
from sizing.estimator.serving import ServingPlan
from sizing.estimator.simulator import LoadKind, SimulationResult, simulate

ROOT = Path(__file__).resolve().parents[2]
QUANTILES = (50, 90, 99)


def normal_profile(*, input_mean: int, input_std: int, output_mean: int, output_std: int) -> WorkloadProfile:
    """One class of requests with normally distributed prompt and output lengths, Poisson arrivals."""
    return WorkloadProfile(
        name="truth",
        classes=(
            RequestClass(
                name="truth",
                share=1.0,
                input=LengthDistribution(kind=LengthKind.NORMAL, mean=input_mean, std=input_std, minimum=16),
                output=LengthDistribution(kind=LengthKind.NORMAL, mean=output_mean, std=output_std, minimum=8),
            ),
        ),
    )


def truth_sample(
    *,
    rate_per_s: float,
    requests: int,
    seed: int = 0,
    input_mean: int = 512,
    input_std: int = 256,
    output_mean: int = 64,
    output_std: int = 24,
) -> SampledRequests:
    profile = normal_profile(input_mean=input_mean, input_std=input_std, output_mean=output_mean, output_std=output_std)
    return workload_sample(profile, rate_per_s=rate_per_s, requests=requests, seed=seed)


def predict(plan: ServingPlan, sample: SampledRequests) -> SimulationResult:
    """The offline simulator's run of exactly these requests (open loop at their arrival times)."""
    return simulate(model=plan.model, config=plan.config, requests=sample, load=LoadKind.RATE)


@dataclass(frozen=True, kw_only=True)
class Measured:
    """What the client saw. Latencies in model seconds (wall clock × speedup), per request in input order (NaN:
    the request failed)."""

    sent_s: np.ndarray  # when each request was sent, model seconds from the run's start (the arrivals to predict)
    ttft_s: np.ndarray
    gaps_s: np.ndarray  # every gap between consecutive token events, pooled over the requests
    send_lag_s: np.ndarray  # wall-clock seconds each request went out after its scheduled time (not scaled)
    errors: int
    tokens_short: int  # requests whose usage.completion_tokens disagreed with the token events counted
    wall_s: float

    def sample(self, sample: SampledRequests) -> SampledRequests:
        """The requests as they were really sent (the workload to predict): arrivals at the send times, sorted by
        them as the offline simulator expects (a closed loop's sends may interleave)."""
        sent = np.nan_to_num(self.sent_s, nan=0.0)
        order = np.argsort(sent, kind="stable")
        return replace(
            sample,
            arrival_s=sent[order],
            input_tokens=sample.input_tokens[order],
            output_tokens=sample.output_tokens[order],
            prefix_tokens=sample.prefix_tokens[order],
            class_index=sample.class_index[order],
        )


SPIN_S = 0.0015  # the client sleeps to this close to a send time, then spins: sends go out within tens of µs
Seconds = Callable[[], float]  # a monotonic clock in seconds


async def _one(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    index: int,
    due: float,
    start: float,
    speedup: float,
    out: dict[str, Any],
    *,
    clock: Seconds,
    spin_s: float,
) -> None:
    delay = due - clock() - spin_s
    if delay > 0:
        await asyncio.sleep(delay)
    while spin_s and clock() < due:
        await asyncio.sleep(0)
    sent = clock()
    out["sent"][index] = (sent - start) * speedup
    out["lag"][index] = sent - due
    times: list[float] = []
    usage: dict[str, Any] | None = None
    buffer = b""
    try:
        async with client.stream("POST", url, content=body, headers={"content-type": "application/json"}) as reply:
            if reply.status_code != 200:
                await reply.aread()
                out["errors"] += 1
                return
            async for chunk in reply.aiter_raw():
                now = clock()
                buffer += chunk
                while b"\n\n" in buffer:
                    event, buffer = buffer.split(b"\n\n", 1)
                    if b'"text":"' in event:
                        times.append(now)
                    elif b'"usage"' in event:
                        usage = json.loads(event[len(b"data: ") :])["usage"]
    except httpx.HTTPError:
        out["errors"] += 1
        return
    if not times:
        out["errors"] += 1
        return
    out["ttft"][index] = (times[0] - sent) * speedup
    out["gaps"].extend((b - a) * speedup for a, b in itertools.pairwise(times))
    if usage is None or usage["completion_tokens"] != len(times):
        out["short"] += 1


async def measure(
    base_url: str,
    model_name: str,
    sample: SampledRequests,
    *,
    speedup: float,
    concurrency: int | None = None,
    start_delay_s: float = 0.3,
    warm_connections: int = 32,
    clock: Seconds = time.perf_counter,
    transport: httpx.AsyncBaseTransport | None = None,
    spin_s: float = SPIN_S,
) -> Measured:
    """Send the sample's completion requests, streaming, and time every token event: at their arrival times
    (÷ speedup), or with `concurrency` a closed loop (that many clients, each sending the next request as soon as
    its last one ended; arrival times ignored). `warm_connections` keep-alive connections are opened first, so
    connection set-up is not timed.

    `clock` (seconds), `transport` and `spin_s` are for tests on a virtual-time event loop: the loop's own clock,
    the app in that loop, and no spinning (a virtual clock never moves while a task spins)."""
    url = base_url.rstrip("/") + "/v1/completions"
    bodies = [
        json.dumps(
            {
                "model": model_name,
                "prompt": " ".join(["word"] * int(p)),
                "max_tokens": int(o),
                "ignore_eos": True,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
        ).encode()
        for p, o in zip(sample.input_tokens, sample.output_tokens, strict=True)
    ]
    n = len(bodies)
    out: dict[str, Any] = {
        "sent": np.full(n, np.nan),
        "lag": np.full(n, np.nan),
        "ttft": np.full(n, np.nan),
        "gaps": [],
        "errors": 0,
        "short": 0,
    }
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), limits=limits, transport=transport) as client:
        await asyncio.gather(
            *(client.get(base_url.rstrip("/") + "/health") for _ in range(max(warm_connections, concurrency or 0)))
        )
        start = clock() + start_delay_s
        if concurrency is None:
            await asyncio.gather(
                *(
                    _one(
                        client,
                        url,
                        body,
                        index,
                        start + float(arrival) / speedup,
                        start,
                        speedup,
                        out,
                        clock=clock,
                        spin_s=spin_s,
                    )
                    for index, (body, arrival) in enumerate(zip(bodies, sample.arrival_s, strict=True))
                )
            )
        else:
            queue = iter(range(n))

            async def user() -> None:
                for index in queue:
                    due = max(start, clock())
                    await _one(client, url, bodies[index], index, due, start, speedup, out, clock=clock, spin_s=spin_s)

            await asyncio.gather(*(user() for _ in range(concurrency)))
        wall = clock() - start
    return Measured(
        sent_s=out["sent"],
        ttft_s=out["ttft"],
        gaps_s=np.array(out["gaps"]),
        send_lag_s=out["lag"],
        errors=out["errors"],
        tokens_short=out["short"],
        wall_s=wall,
    )


def ttft_percentiles_ms(values_s: np.ndarray) -> dict[int, float]:
    """Linear interpolation between closest ranks, as the offline simulator reports TTFT."""
    values = values_s[~np.isnan(values_s)] * 1000
    return {q: float(np.percentile(values, q)) for q in QUANTILES}


def itl_percentiles_ms(values_s: np.ndarray) -> dict[int, float]:
    """Nearest rank over unit-weighted gaps, as the offline simulator reports its token-weighted ITL."""
    ms = np.sort(values_s * 1000)
    total = len(ms)
    return {
        q: float(ms[min(total - 1, int(np.searchsorted(np.arange(1, total + 1), total * q / 100)))]) for q in QUANTILES
    }


def comparison(measured: Measured, predicted: SimulationResult) -> dict[str, dict[int, tuple[float, float, float]]]:
    """{"ttft": {q: (measured ms, predicted ms, relative difference)}, "itl": {...}}."""
    result: dict[str, dict[int, tuple[float, float, float]]] = {}
    for name, mine, theirs in (
        ("ttft", ttft_percentiles_ms(measured.ttft_s), predicted.ttft),
        ("itl", itl_percentiles_ms(measured.gaps_s), predicted.itl),
    ):
        rows = {}
        for q in QUANTILES:
            expected = theirs.at(q)
            if expected is None:
                continue
            rows[q] = (mine[q], expected, mine[q] / expected - 1)
        result[name] = rows
    return result


def comparison_table(table: dict[str, dict[int, tuple[float, float, float]]]) -> str:
    lines = [f"{'metric':<6} {'pct':>4} {'measured ms':>12} {'predicted ms':>13} {'diff':>7}"]
    for name, rows in table.items():
        for q, (mine, theirs, diff) in rows.items():
            lines.append(f"{name.upper():<6} {'p' + str(q):>4} {mine:>12.2f} {theirs:>13.2f} {diff:>+7.1%}")
    return "\n".join(lines)


# -- a server in a subprocess --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server_process(arguments: list[str], *, timeout_s: float = 30.0) -> Iterator[str]:
    """Start `python -m benchmarks_app.simserver ARGUMENTS --port P` and yield its base URL once /health answers;
    stop it (by its pid) afterwards. A separate process keeps the client's work off the server's event loop."""
    port = free_port()
    command = [sys.executable, "-m", "benchmarks_app.simserver", *arguments, "--host", "127.0.0.1", "--port", str(port)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process = subprocess.Popen(  # noqa: S603
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"the simulator server exited with {process.returncode}: {output}")
            try:
                if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the simulator server did not answer /health in time")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()

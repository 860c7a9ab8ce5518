"""End to end: the load generator against the OpenAI-compatible simulator (`benchmarks_app.simserver`), served by
uvicorn in a thread on a free port: statuses, token counts from usage, errors the simulator injects, and the result
imported. Over a real socket on the real clock, so these assert what was sent and answered, not how late (the
client's fidelity at speed is tests/benchmarks/loadgen_speed.py's). No database."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from benchmarks_app.results.detect import import_text
from benchmarks_app.simserver.app import CHAT_REPLY_TOKENS, CHAT_TOKENS_PER_MESSAGE, create_app
from benchmarks_app.simserver.catalog import catalog_plan, served_max_model_len
from benchmarks_app.simserver.engine import SimEngine
from llm_sizing_loadgen.client import Status
from llm_sizing_loadgen.plan import plan_from_dict
from llm_sizing_loadgen.result import result_document, result_json
from llm_sizing_loadgen.runner import open_schedule, run_plan

MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-h100-sxm-80gb"
SPEEDUP = 10.0  # the model's clock runs 10 × faster than the wall clock: a short test


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    """The simulator of Llama-3-8B on one H100, at 10 × speed, on a free port; its base URL."""
    plan = catalog_plan(model=MODEL, gpu=GPU)
    engine = SimEngine.from_plan(plan, speedup=SPEEDUP)
    app = create_app(engine, model_name="llama", max_model_len=served_max_model_len(plan))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the simulator did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _plan(url: str, **overrides: Any):
    data: dict[str, Any] = {
        "endpoint": {"base_url": url, "model": "llama"},
        "load": {"concurrency": 4},
        "requests": {"input_tokens": 128, "output_tokens": 16},
        "bounds": {"max_requests": 16},
    }
    data.update(overrides)
    return plan_from_dict(data)


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_a_closed_loop_against_the_simulator(simulator: str, api: str) -> None:
    # when
    [outcome] = run_plan(_plan(simulator, endpoint={"base_url": simulator, "model": "llama", "api": api}))

    # then: every request ran to its 16 tokens; the simulator counts one token per prompt word (plus the chat
    # template's tokens), so the server's count is the client's exactly
    template = CHAT_TOKENS_PER_MESSAGE + CHAT_REPLY_TOKENS if api == "chat" else 0
    assert [r.status for r in outcome.records] == [Status.OK] * 16
    assert {r.output_tokens for r in outcome.records} == {16}
    assert {r.input_tokens for r in outcome.records} == {128 + template}
    assert {r.finish_reason for r in outcome.records} == {"length"}
    assert {tuple(r.chunk_tokens or ()) for r in outcome.records} == {(1,) * 16}  # continuous usage stats
    assert all(r.ttft_ns and r.ttft_ns > 0 for r in outcome.records)
    fmt, runs = import_text(result_json(result_document(outcome)))
    assert (fmt, runs[0].completed, runs[0].failed) == ("llm_sizing", 16, 0)
    assert runs[0].metrics["tpot_ms"].n == 16


def test_an_open_loop_with_a_profile_and_shared_prefixes(simulator: str) -> None:
    # given: two classes; a Poisson open loop at 20 requests/s
    profile = {
        "name": "two",
        "classes": [
            {
                "name": "qa",
                "share": 0.7,
                "input": {"kind": "normal", "mean": 200, "std": 50, "minimum": 20},
                "output": {"kind": "fixed", "mean": 12},
            },
            {
                "name": "rag",
                "share": 0.3,
                "shared_prefix_tokens": 300,
                "input": {"kind": "fixed", "mean": 500},
                "output": {"kind": "fixed", "mean": 24},
            },
        ],
    }
    plan = _plan(
        simulator, load={"mode": "open", "rate": 20}, requests={"profile": profile}, bounds={"max_requests": 30}
    )

    # when
    [outcome] = run_plan(plan)

    # then: every request was scheduled on the plan's Poisson schedule and none went out early
    schedule = open_schedule(plan.load, max_requests=30, max_duration_s=None, seed=plan.seed)
    assert [r.t_sched_ns - outcome.t0_ns for r in outcome.records] == (schedule * 1e9).astype("int64").tolist()
    assert all(r.t_send_ns is not None and r.t_send_ns >= r.t_sched_ns for r in outcome.records)
    assert outcome.fidelity.lag_n == 30
    assert [r.status for r in outcome.records] == [Status.OK] * 30
    assert {r.output_tokens for r in outcome.records if r.class_name == "rag"} == {24}
    assert {r.input_tokens for r in outcome.records if r.class_name == "rag"} == {800}
    assert all(r.input_tokens == r.input_tokens_sent for r in outcome.records)


def test_errors_from_the_simulator_are_recorded(simulator: str) -> None:
    # given: the next 3 requests fail with 503 (the control endpoint), and prompts too long for the context
    httpx.post(
        f"{simulator}/control", json={"action": "fail_next", "count": 3, "status": 503, "message": "injected"}
    ).raise_for_status()

    # when
    [injected] = run_plan(_plan(simulator, load={"concurrency": 1}, bounds={"max_requests": 5}))
    [too_long] = run_plan(
        _plan(simulator, requests={"input_tokens": 9000, "output_tokens": 16}, bounds={"max_requests": 2})
    )

    # then
    assert [(r.status, r.http_status) for r in injected.records] == (
        [(Status.HTTP_ERROR, 503)] * 3 + [(Status.OK, 200)] * 2
    )
    assert "injected" in (injected.records[0].error or "")
    assert {(r.status, r.http_status) for r in too_long.records} == {(Status.HTTP_ERROR, 400)}
    assert "maximum context length" in (too_long.records[0].error or "")

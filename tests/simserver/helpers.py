"""Helpers shared by the simulator tests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from typing import Any

import uvicorn

from benchmarks_app.simserver.truth import free_port
from sizing.estimator.serving import ServingPlan

MODEL = "meta-llama/Meta-Llama-3-8B"
L4 = "nvidia-l4-24gb"
H100 = "nvidia-h100-sxm-80gb"


def with_config(plan: ServingPlan, **changes: Any) -> ServingPlan:
    """The plan with some scheduler limits changed (a small KV cache, few sequences...)."""
    return replace(plan, config=replace(plan.config, **changes))


def sse_events(text: str) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded ("[DONE]" kept as the string)."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        block = block.strip()
        if not block:
            continue
        assert block.startswith("data: "), block
        payload = block[len("data: ") :]
        events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def metric_value(text: str, series: str) -> float:
    """The value of one exposition line, e.g. 'vllm:num_requests_running{model_name="m",engine="0"}'."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} not in the metrics")


class ThreadedServer:
    """uvicorn serving `app` on 127.0.0.1 in a daemon thread (its own event loop): a live simulator for a test
    (httpx's ASGI transport does not stream incrementally, so the HTTP tests talk to a socket)."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

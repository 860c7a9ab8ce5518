"""Fixtures for the load generator's tests against the simulator (`benchmarks_app.simserver`): a real uvicorn server
in a thread on a free port (httpx's ASGI transport does not stream incrementally, so the tests talk to a socket),
one per test so that a fault injected in one test never reaches another. No database."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn

from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan, served_max_model_len
from benchmarks_app.simserver.engine import SimEngine
from benchmarks_app.simserver.truth import free_port

SIM_MODEL = "meta-llama/Meta-Llama-3-8B"
SIM_GPU = "nvidia-h100-sxm-80gb"
SIM_SERVED_NAME = "llama"


class _ThreadedServer:
    """uvicorn serving `app` on 127.0.0.1 in a daemon thread (its own event loop)."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on",
                                access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the simulator did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def simserver() -> Iterator[Callable[..., tuple[str, SimEngine]]]:
    """simserver(speedup=..., gpu=...) -> (base URL, engine): Llama-3-8B served as "llama" by a live simulator for
    this test (its /metrics has vLLM's names; POST /control injects faults)."""
    servers: list[_ThreadedServer] = []

    def start(*, speedup: float = 10.0, gpu: str = SIM_GPU) -> tuple[str, SimEngine]:
        plan = catalog_plan(model=SIM_MODEL, gpu=gpu)
        engine = SimEngine.from_plan(plan, speedup=speedup)
        server = _ThreadedServer(create_app(engine, model_name=SIM_SERVED_NAME,
                                            max_model_len=served_max_model_len(plan)))
        server.start()
        servers.append(server)
        return server.url, engine

    yield start
    for server in servers:
        server.stop()

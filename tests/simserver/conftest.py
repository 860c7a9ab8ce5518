"""Fixtures for the simulator server: catalog plans (no database) and a real uvicorn server in a thread (httpx's
ASGI transport does not stream incrementally, so the HTTP tests talk to a socket)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan
from benchmarks_app.simserver.engine import SimEngine
from benchmarks_app.simserver.truth import free_port
from sizing.estimator.serving import ServingPlan
from tests.simserver.helpers import H100, L4, MODEL


@pytest.fixture(scope="session")
def l4_plan() -> ServingPlan:
    """Llama-3-8B on one L4: ~65 ms decode steps, 31,744 KV tokens, max_num_batched_tokens 2048."""
    return catalog_plan(model=MODEL, gpu=L4)


@pytest.fixture(scope="session")
def h100_plan() -> ServingPlan:
    return catalog_plan(model=MODEL, gpu=H100)


class ThreadedServer:
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
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[str, SimEngine]]]:
    """serve(plan, speedup=..., **create_app options) -> (base URL, engine): a live simulator for the test."""
    servers: list[ThreadedServer] = []

    def start(plan: ServingPlan, *, speedup: float = 20.0, model_name: str = MODEL, max_model_len: int = 8192,
              **options: Any) -> tuple[str, SimEngine]:
        engine = SimEngine.from_plan(plan, speedup=speedup)
        server = ThreadedServer(create_app(engine, model_name=model_name, max_model_len=max_model_len, **options))
        server.start()
        servers.append(server)
        return server.url, engine

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30.0) as session:
        yield session

"""Fixtures for the simulator server: catalog plans (no database) and a real uvicorn server in a thread (httpx's
ASGI transport does not stream incrementally, so the HTTP tests talk to a socket)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan
from benchmarks_app.simserver.engine import SimEngine
from sizing.estimator.serving import ServingPlan
from tests.simserver.helpers import H100, L4, MODEL, ThreadedServer


@pytest.fixture(scope="session")
def l4_plan() -> ServingPlan:
    """Llama-3-8B on one L4: ~65 ms decode steps, 31,744 KV tokens, max_num_batched_tokens 2048."""
    return catalog_plan(model=MODEL, gpu=L4)


@pytest.fixture(scope="session")
def h100_plan() -> ServingPlan:
    return catalog_plan(model=MODEL, gpu=H100)


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[str, SimEngine]]]:
    """serve(plan, speedup=..., **create_app options) -> (base URL, engine): a live simulator for the test."""
    servers: list[ThreadedServer] = []

    def start(
        plan: ServingPlan, *, speedup: float = 20.0, model_name: str = MODEL, max_model_len: int = 8192, **options: Any
    ) -> tuple[str, SimEngine]:
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

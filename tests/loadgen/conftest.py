"""Fixtures for the load generator's tests against the simulator (`benchmarks_app.simserver`): a real uvicorn server
in a thread on a free port (httpx's ASGI transport does not stream incrementally, so the tests talk to a socket),
one per test so that a fault injected in one test never reaches another. No database."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan, served_max_model_len
from benchmarks_app.simserver.engine import SimEngine
from tests.simserver.helpers import ThreadedServer

SIM_MODEL = "meta-llama/Meta-Llama-3-8B"
SIM_GPU = "nvidia-h100-sxm-80gb"
SIM_SERVED_NAME = "llama"


@pytest.fixture
def simserver() -> Iterator[Callable[..., tuple[str, SimEngine]]]:
    """simserver(speedup=..., gpu=...) -> (base URL, engine): Llama-3-8B served as "llama" by a live simulator for
    this test (its /metrics has vLLM's names; POST /control injects faults)."""
    servers: list[ThreadedServer] = []

    def start(*, speedup: float = 10.0, gpu: str = SIM_GPU) -> tuple[str, SimEngine]:
        plan = catalog_plan(model=SIM_MODEL, gpu=gpu)
        engine = SimEngine.from_plan(plan, speedup=speedup)
        server = ThreadedServer(
            create_app(engine, model_name=SIM_SERVED_NAME, max_model_len=served_max_model_len(plan))
        )
        server.start()
        servers.append(server)
        return server.url, engine

    yield start
    for server in servers:
        server.stop()

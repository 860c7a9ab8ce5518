"""The simulator's app served in the test's own event loop, streaming: for tests on a virtual-time loop
(`tests.loadgen.virtual_time`), where a socket to a server thread cannot be (the clock would jump past its I/O).

httpx's own `ASGITransport` runs the app to its end before it answers, so every token of a stream would arrive at
the same instant. `StreamingAsgiTransport` answers as soon as the app sends its status line and hands each body
chunk to the client the moment the app sends it; closing the response (the client went away, or its task was
cancelled) is the app's `http.disconnect`, and the app's task is cancelled if it is still running after that. Nothing
here takes time: on a virtual clock a request costs exactly what the engine's steps cost.

    engine = SimEngine.from_plan(plan, speedup=10.0, spin_s=0.0)  # no spinning on a clock that only jumps
    async with inprocess_simulator(engine, model_name="llama", max_model_len=8192) as transport:
        ...  # LoadRunner(plan, transport=transport, clock=clock)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan, served_max_model_len
from benchmarks_app.simserver.engine import SimEngine


class _Body(httpx.AsyncByteStream):
    """The response body as the app sends it; closing it disconnects the client."""

    def __init__(self, chunks: asyncio.Queue[bytes | None], exchange: _Exchange) -> None:
        self._chunks = chunks
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (chunk := await self._chunks.get()) is not None:
            if chunk:
                yield chunk

    async def aclose(self) -> None:
        await self._exchange.disconnect()


class _Exchange:
    """One request to the app: its receive and send channels and the task running it."""

    def __init__(self, body: bytes) -> None:
        self.body: bytes | None = body
        self.disconnected = asyncio.Event()
        self.started: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = asyncio.get_running_loop().create_future()
        self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            if not self.started.done():
                self.started.set_result((message["status"], list(message.get("headers", []))))
        elif message["type"] == "http.response.body":
            self.chunks.put_nowait(message.get("body", b""))
            if not message.get("more_body", False):
                self.chunks.put_nowait(None)

    async def disconnect(self) -> None:
        self.disconnected.set()
        self.chunks.put_nowait(None)
        task = self.task
        if task is None:
            return
        if not task.done():
            await asyncio.sleep(0)  # the app sees the disconnect (a stream cancels its engine request)
            if not task.done():
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task  # an exception of the app after its answer is the app's bug, not this client's


class StreamingAsgiTransport(httpx.AsyncBaseTransport):
    """An httpx transport that calls an ASGI app in this event loop and streams its answer (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        exchange = _Exchange(await request.aread())
        url = request.url
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "root_path": "",
            "headers": [(key.lower(), value) for key, value in request.headers.raw],
            "client": ("127.0.0.1", 50000),
            "server": (url.host, url.port or 80),
        }

        async def run() -> None:
            try:
                await self.app(scope, exchange.receive, exchange.send)
            finally:
                exchange.chunks.put_nowait(None)

        exchange.task = asyncio.get_running_loop().create_task(run())
        try:
            await asyncio.wait({exchange.started, exchange.task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await exchange.disconnect()
            raise
        if not exchange.started.done():  # the app ended without answering: its exception, or a protocol error
            exchange.task.result()
            raise RuntimeError("the ASGI app ended without sending a response")
        status, headers = exchange.started.result()
        return httpx.Response(status, headers=headers, stream=_Body(exchange.chunks, exchange), request=request)


@contextlib.asynccontextmanager
async def inprocess_simulator(
    engine: SimEngine, *, model_name: str, max_model_len: int, **options: Any
) -> AsyncIterator[StreamingAsgiTransport]:
    """The simulator app for `engine` (started, stopped at the end) behind a `StreamingAsgiTransport`; `options`
    go to `create_app`."""
    app = create_app(engine, model_name=model_name, max_model_len=max_model_len, **options)
    async with engine:
        yield StreamingAsgiTransport(app)


def catalog_engine(*, model: str, gpu: str, speedup: float) -> tuple[SimEngine, int]:
    """The engine of a catalog deployment (one GPU) for a virtual-time loop (no spinning), and the max_model_len
    it serves."""
    plan = catalog_plan(model=model, gpu=gpu)
    return SimEngine.from_plan(plan, speedup=speedup, spin_s=0.0), served_max_model_len(plan)

"""Builders for the load generator's tests: a clock the test moves, scripted SSE responses on httpx's MockTransport,
one-request sends, and a fake server for whole runs (on the virtual clock of `tests.loadgen.virtual_time`). No
database, no network."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import httpx

from llm_sizing_loadgen.client import ClientSettings, PreparedRequest, RequestResult, StreamClient
from tests.loadgen.virtual_time import VirtualClock

MS = 1_000_000  # nanoseconds per millisecond
START_NS = 5_000 * MS  # the fake clock's first reading
SCHED_LEAD_NS = 2 * MS  # a request's t_sched is this long before its t_send in these tests

Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


class FakeClock:
    """A `perf_counter_ns` stand-in that only moves when the test (or a scripted response) moves it."""

    def __init__(self, start_ns: int = START_NS) -> None:
        self.now = start_ns

    def __call__(self) -> int:
        return self.now

    def advance_ms(self, ms: float) -> None:
        self.now += round(ms * MS)


def event(data: dict[str, Any] | str) -> bytes:
    """One SSE event: `data: <json>` and the blank line."""
    text = data if isinstance(data, str) else json.dumps(data)
    return f"data: {text}\n\n".encode()


def chat_chunk(
    content: str | None = None,
    *,
    role: bool = False,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    **delta: Any,
) -> dict[str, Any]:
    fields: dict[str, Any] = dict(delta)
    if role:
        fields["role"] = "assistant"
    if content is not None:
        fields["content"] = content
    chunk: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": fields, "finish_reason": finish}],
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        data["prompt_tokens_details"] = {"cached_tokens": cached}
    return data


def usage_only(prompt: int, completion: int) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": usage(prompt, completion)}


def scripted(
    clock: FakeClock,
    steps: Sequence[tuple[float, bytes]],
    *,
    status: int = 200,
    header_ms: float = 0.0,
    content_type: str = "text/event-stream",
    error: Exception | None = None,
) -> Handler:
    """A handler answering `status` after `header_ms`, then yielding each (ms, bytes) step after moving the clock
    by ms; `error` is raised after the last step (a broken connection)."""

    async def handler(request: httpx.Request) -> httpx.Response:
        clock.advance_ms(header_ms)

        async def body() -> AsyncIterator[bytes]:
            for ms, chunk in steps:
                clock.advance_ms(ms)
                yield chunk
            if error is not None:
                raise error

        return httpx.Response(status, headers={"content-type": content_type}, content=body())

    return handler


async def send_one(
    handler: Handler,
    *,
    clock: Callable[[], int],
    settings: ClientSettings | None = None,
    sent: int = 100,
    target: int = 3,
    body: bytes = b"{}",
) -> RequestResult:
    """One request through StreamClient on a MockTransport; t_sched is SCHED_LEAD_NS before the send."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = StreamClient(
            http, url="http://llm.test/v1/chat/completions", settings=settings or ClientSettings(), clock=clock
        )
        record = RequestResult(
            index=0, t_sched_ns=clock() - SCHED_LEAD_NS, input_tokens_sent=sent, output_tokens_target=target
        )
        prepared = PreparedRequest(index=0, body=body, input_tokens_sent=sent, output_tokens_target=target)
        return await client.send(prepared, record)


class FakeServer:
    """Streams `max_tokens` completion tokens, `ttft_s` then `itl_s` apart (asyncio sleeps: exact on a virtual-time
    loop); counts what is in flight. `block_s` blocks the event loop per request (a client that cannot keep up): on
    `clock`, a virtual clock, it moves that clock without yielding; without one it really sleeps."""

    def __init__(
        self,
        *,
        ttft_s: float = 0.002,
        itl_s: float = 0.001,
        block_s: float = 0.0,
        fail_every: int = 0,
        clock: VirtualClock | None = None,
    ) -> None:
        self.ttft_s = ttft_s
        self.itl_s = itl_s
        self.block_s = block_s
        self.fail_every = fail_every
        self.clock = clock
        self.in_flight = 0
        self.peak = 0
        self.bodies: list[dict[str, Any]] = []
        self.transport = httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.block_s:
            if self.clock is not None:
                self.clock.advance_s(self.block_s)
            else:
                time.sleep(self.block_s)
        if self.fail_every and len(self.bodies) % self.fail_every == 0:
            return httpx.Response(503, json={"error": {"message": "overloaded"}})
        tokens = body["max_tokens"]
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

        async def stream():
            try:
                await asyncio.sleep(self.ttft_s)
                for index in range(tokens):
                    if index:
                        await asyncio.sleep(self.itl_s)
                    choice = {"index": 0, "text": " t", "finish_reason": "length" if index == tokens - 1 else None}
                    yield f'data: {{"choices":[{json.dumps(choice)}]}}\n\n'.encode()
                prompt = body["prompt"] if "prompt" in body else body["messages"][-1]["content"]
                usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": tokens}
                yield f'data: {{"choices":[],"usage":{json.dumps(usage)}}}\n\ndata: [DONE]\n\n'.encode()
            finally:
                self.in_flight -= 1

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())


class ThreadedSseServer:
    """`SseServer` on a real socket, in its own thread and event loop (for code that runs its own loop: the CLI)."""

    def __init__(self, **options: Any) -> None:
        from tests.loadgen.sse_server import SseServer

        self.server = SseServer(**options)
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self.port = 0

    def __enter__(self) -> ThreadedSseServer:
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            self.port = self._loop.run_until_complete(self.server.start())
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

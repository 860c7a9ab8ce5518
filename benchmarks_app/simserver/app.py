"""The simulator's OpenAI-compatible HTTP API (Starlette), in front of a `SimEngine`.

Routes
    GET  /v1/models             the one served model (with its max_model_len)
    POST /v1/completions        OpenAI/vLLM completion bodies; `stream` true or false
    POST /v1/chat/completions   chat bodies; `stream` true or false
    GET  /metrics               Prometheus text with vLLM's metric names (see `metrics_text`)
    GET  /health                200, or 503 when no replica is alive
    GET  /control               the engine's state (replicas, queues, KV usage, injected faults)
    POST /control               failure injection, JSON {"action": ...}:
                                  {"action": "kill_replica", "replica": 0, "seconds": 5}   (seconds optional)
                                  {"action": "fail_next", "count": 3, "status": 503, "message": "..."}
                                  {"action": "stall", "seconds": 2}
                                  {"action": "recover"}
        The control endpoint is for tests and failure-injection scenarios. It has no authentication: it is served
        on the same host and port as the API, so bind the simulator to 127.0.0.1 (the default) or a test network,
        never to a public address; `create_app(..., control=False)` leaves it out.

Token counting (a deterministic tokenizer stand-in, no model vocabulary)
    - a completion prompt given as text: its whitespace-separated words, one token each (`len(text.split())`);
      given as token ids (a list of integers): one token per id;
    - a chat request: the words of every message's text content plus CHAT_TOKENS_PER_MESSAGE per message (role
      markers and separators), plus CHAT_REPLY_TOKENS for the assistant header that opens the reply;
    - the generated text is words too: TOKEN_WORD per token, separated by single spaces (each streamed chunk after
      the first starts with the space), so a client counting the words of the output agrees with
      `usage.completion_tokens`.

Output length
    A request generates `max_tokens` tokens (default: max_model_len − prompt tokens, as vLLM does) and finishes with
    "length": the simulated model never chooses to stop early. A client can ask for a shorter reply with the
    non-standard body field `sim_output_tokens` (N): the model then "emits end-of-sequence" after N tokens and
    finishes with "stop" — unless `ignore_eos` is true (then it runs to max_tokens) — and never before
    `min_tokens`. This lets a load generator's `short_output` check be tested.

Streaming (`stream: true`): Server-Sent Events, `data: {json}\\n\\n`, one event per generated token (chunks that
the engine produced while the writer was busy are written together); completion chunks carry
`choices[0].text`, chat chunks `choices[0].delta.content` (after a first role-only chunk, as vLLM sends it); the
chunk of the last token carries `finish_reason`; with `stream_options.include_usage` a last chunk with empty
`choices` carries `usage` (and a `simulator` object with the server's own timestamps, below); with
`stream_options.continuous_usage_stats` every chunk carries the running `usage`; the stream ends with
`data: [DONE]`. A request that fails mid-stream (a killed replica) gets `data: {"error": {...}}` then
`data: [DONE]`.

Errors use the OpenAI shape `{"error": {"message", "type", "param", "code"}}`: 400 for invalid bodies and prompts
longer than the model allows (prompt + max_tokens > max_model_len, worded as vLLM words it), 404 for a model
name the server does not serve, 429 when the queue is full, 503 when no replica is alive, and the injected status
for `fail_next`.

Server timestamps: the usage chunk (and a non-streamed response) carries `simulator`: `received_ns` (the handler
got the request), `first_token_ns` (the first token's chunk was handed to the transport), `finished_ns`, on
`time.perf_counter_ns()` (CLOCK_MONOTONIC on Linux, so a client on the same host can compare them with its own
`perf_counter_ns` readings), plus the replica and its preemptions. Histograms in /metrics are wall-clock seconds:
the model's times divided by the engine's speedup.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from benchmarks_app.simserver.engine import EngineError, Histogram, SimEngine, SimRequest

CHAT_TOKENS_PER_MESSAGE = 4  # role header and end-of-turn markers around each message
CHAT_REPLY_TOKENS = 3  # the assistant header that opens the reply
TOKEN_WORD = "token"  # noqa: S105 - the word every generated token is


class BadRequest(Exception):
    def __init__(
        self, message: str, *, status: int = 400, kind: str = "BadRequestError", param: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind
        self.param = param


def error_body(message: str, kind: str, status: int, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


def error_response(message: str, kind: str, status: int, param: str | None = None) -> JSONResponse:
    return JSONResponse(error_body(message, kind, status, param), status_code=status)


# -- the tokenizer stand-in -----------------------------------------------------------------------------------


def count_words(text: str) -> int:
    return len(text.split())


def prompt_tokens(prompt: Any) -> int:
    """Tokens of a completion prompt: text (words) or token ids; a one-element list of either."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]
    if isinstance(prompt, str):
        return count_words(prompt)
    if isinstance(prompt, list) and all(isinstance(item, int) and not isinstance(item, bool) for item in prompt):
        return len(prompt)
    raise BadRequest("prompt must be a string or a list of token ids (one prompt per request)", param="prompt")


def chat_tokens(messages: Any) -> int:
    """Tokens of a chat conversation (see the module docstring)."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list", param="messages")
    total = CHAT_REPLY_TOKENS
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest("each message needs a role", param="messages")
        content = message.get("content")
        if isinstance(content, str):
            words = count_words(content)
        elif content is None:
            words = 0
        elif isinstance(content, list):
            words = sum(
                count_words(part.get("text") or "")
                for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            )
        else:
            raise BadRequest("message content must be a string or a list of parts", param="messages")
        total += words + CHAT_TOKENS_PER_MESSAGE
    return total


def generated_text(tokens: int) -> str:
    return " ".join([TOKEN_WORD] * tokens)


# -- request parsing ------------------------------------------------------------------------------------------


def _int_field(body: dict[str, Any], name: str, *, minimum: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise BadRequest(f"{name} must be an integer ≥ {minimum}", param=name)
    return value


class _Parsed:
    __slots__ = ("continuous_usage", "include_usage", "max_tokens", "output_tokens", "prompt_tokens", "stream")

    def __init__(
        self, *, prompt: int, max_tokens: int, output: int, stream: bool, include_usage: bool, continuous_usage: bool
    ) -> None:
        self.prompt_tokens = prompt
        self.max_tokens = max_tokens
        self.output_tokens = output
        self.stream = stream
        self.include_usage = include_usage
        self.continuous_usage = continuous_usage


def parse_body(body: Any, *, chat: bool, model_name: str, max_model_len: int) -> _Parsed:
    """Validate an OpenAI request body; raises BadRequest (its HTTP status: 400, or 404 for another model)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if model is not None and model != model_name:
        raise BadRequest(f"The model `{model}` does not exist.", status=404, kind="NotFoundError", param="model")
    if chat:
        tokens = chat_tokens(body.get("messages"))
        max_tokens = _int_field(body, "max_completion_tokens", minimum=1)
        if max_tokens is None:
            max_tokens = _int_field(body, "max_tokens", minimum=1)
    else:
        if "prompt" not in body:
            raise BadRequest("prompt is required", param="prompt")
        tokens = prompt_tokens(body["prompt"])
        max_tokens = _int_field(body, "max_tokens", minimum=1)
    if tokens < 1:
        raise BadRequest("the prompt is empty: it must hold at least one token", param="prompt")
    n = _int_field(body, "n", minimum=1)
    if n is not None and n != 1:
        raise BadRequest("the simulator serves n = 1 only", param="n")
    if tokens >= max_model_len:
        raise BadRequest(
            f"This model's maximum context length is {max_model_len} tokens. However, your request has "
            f"{tokens} input tokens. Please reduce the length of the input."
        )
    if max_tokens is None:
        max_tokens = max_model_len - tokens
    elif tokens + max_tokens > max_model_len:
        raise BadRequest(
            f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's maximum "
            f"context length is {max_model_len} tokens and your request has {tokens} input tokens "
            f"({max_tokens} > {max_model_len} - {tokens}).",
            param="max_tokens",
        )
    min_tokens = _int_field(body, "min_tokens", minimum=0) or 0
    if min_tokens > max_tokens:
        raise BadRequest(f"min_tokens ({min_tokens}) must be ≤ max_tokens ({max_tokens})", param="min_tokens")
    wanted = _int_field(body, "sim_output_tokens", minimum=1)
    ignore_eos = bool(body.get("ignore_eos", False))
    output = max_tokens if wanted is None or ignore_eos else max(min_tokens, min(wanted, max_tokens), 1)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("stream must be a boolean", param="stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise BadRequest("stream_options must be an object", param="stream_options")
    return _Parsed(
        prompt=tokens,
        max_tokens=max_tokens,
        output=output,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
        continuous_usage=bool(options.get("continuous_usage_stats")),
    )


# -- responses ------------------------------------------------------------------------------------------------


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion}


def _simulator_info(request: SimRequest, received_ns: int, first_ns: int | None, finished_ns: int) -> dict[str, Any]:
    def ns(seconds: float | None) -> int | None:
        return None if seconds is None else round(seconds * 1e9)

    return {
        "received_ns": received_ns,
        "first_token_ns": first_ns,
        "finished_ns": finished_ns,
        "engine_arrival_ns": ns(request.arrival),
        "engine_first_token_ns": ns(request.first_token_at),
        "engine_finished_ns": ns(request.finished_at),
        "replica": request.replica,
        "preemptions": request.preemptions,
    }


class EventStream:
    """A minimal ASGI response for Server-Sent Events: writes each chunk as it comes and watches for the client
    going away (then `on_disconnect` runs, which cancels the engine request)."""

    def __init__(self, chunks: AsyncIterator[bytes], on_disconnect: Callable[[], None]) -> None:
        self.chunks = chunks
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    self.on_disconnect()
                    return

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            self.on_disconnect()
        finally:
            watcher.cancel()
            aclose = getattr(self.chunks, "aclose", None)
            if aclose is not None:
                await aclose()


class _Templates:
    """Pre-rendered JSON around the varying parts of a chunk: one string join per token instead of a json.dumps."""

    def __init__(self, *, chat: bool, request_id: str, created: int, model: str) -> None:
        head = (
            f'data: {{"id":{json.dumps(request_id)},"object":'
            f'"{"chat.completion.chunk" if chat else "text_completion"}","created":{created},'
            f'"model":{json.dumps(model)},"choices":[{{"index":0,'
        )
        self.head = head
        if chat:
            self.text_open = head + '"delta":{"content":"'
            self.text_close = '"},"logprobs":null,"finish_reason":'
            self.tail = "}]"
        else:
            self.text_open = head + '"text":"'
            self.text_close = '","logprobs":null,"finish_reason":'
            self.tail = ',"stop_reason":null}]'
        self.role = head + '"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n'
        self.base = {
            "id": request_id,
            "object": "chat.completion.chunk" if chat else "text_completion",
            "created": created,
            "model": model,
        }

    def token(self, index: int, finish_reason: str | None, usage: str = "") -> str:
        text = TOKEN_WORD if index == 1 else " " + TOKEN_WORD
        reason = "null" if finish_reason is None else f'"{finish_reason}"'
        return f"{self.text_open}{text}{self.text_close}{reason}{self.tail}{usage}}}\n\n"


async def _stream_chunks(
    engine: SimEngine, request: SimRequest, parsed: _Parsed, templates: _Templates, *, chat: bool, received_ns: int
) -> AsyncIterator[bytes]:
    first_ns: int | None = None
    try:
        if chat:
            yield templates.role.encode()
        while True:
            events = await request.next_events()
            parts: list[str] = []
            finished = False
            for event in events:
                if event.cancelled:
                    return
                if event.error is not None:
                    kind = "ServiceUnavailable" if event.status == 503 else "InternalServerError"
                    parts.append("data: " + json.dumps(error_body(event.error, kind, event.status or 500)) + "\n\n")
                    parts.append("data: [DONE]\n\n")
                    finished = True
                    break
                usage = ""
                if parsed.continuous_usage:
                    usage = ',"usage":' + json.dumps(_usage(parsed.prompt_tokens, event.index), separators=(",", ":"))
                parts.append(templates.token(event.index, event.finish_reason, usage))
                if event.finish_reason is not None:
                    if parsed.include_usage:
                        finished_ns = time.perf_counter_ns()
                        body: dict[str, Any] = dict(
                            templates.base,
                            choices=[],
                            usage=_usage(parsed.prompt_tokens, event.index),
                            simulator=_simulator_info(request, received_ns, first_ns or finished_ns, finished_ns),
                        )
                        parts.append("data: " + json.dumps(body, separators=(",", ":")) + "\n\n")
                    parts.append("data: [DONE]\n\n")
                    finished = True
                    break
            if parts:
                if first_ns is None:
                    first_ns = time.perf_counter_ns()
                yield "".join(parts).encode()
            if finished:
                return
    finally:
        engine.cancel(request)  # a no-op when it ended; frees the engine when the client went away


async def _collect(request: SimRequest) -> tuple[int, str | None, Any]:
    """Wait for a request's end: (tokens, finish_reason, the error event or None)."""
    while True:
        for event in await request.next_events():
            if event.error is not None or event.cancelled:
                return event.index, None, event
            if event.finish_reason is not None:
                return event.index, event.finish_reason, None


# -- /metrics -------------------------------------------------------------------------------------------------


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def metrics_text(engine: SimEngine, *, model_name: str) -> str:
    """Prometheus text exposition with vLLM V1's metric names (current releases: `vllm:kv_cache_usage_perc`,
    `vllm:inter_token_latency_seconds`), one series per replica labelled `engine="<index>"` as vLLM labels its
    data-parallel engines, the DCGM exporter's `DCGM_FI_DEV_FB_USED`/`FB_FREE` (MiB) per simulated GPU when the
    engine knows its memory (`SimGpuMemory`: the estimate's, not a measurement), plus `simserver_*` series about the
    simulator itself."""
    replicas = engine.replicas
    model = _label(model_name)
    lines: list[str] = []

    def labels(index: int, extra: str = "") -> str:
        return f'{{model_name="{model}",engine="{index}"{extra}}}'

    def gauge(name: str, help_text: str, values: list[float]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} gauge")
        lines.extend(f"{name}{labels(i)} {_number(v)}" for i, v in enumerate(values))

    def counter(name: str, help_text: str, values: list[float]) -> None:
        lines.append(f"# HELP {name}_total {help_text}")
        lines.append(f"# TYPE {name}_total counter")
        lines.extend(f"{name}_total{labels(i)} {_number(v)}" for i, v in enumerate(values))

    def histogram(name: str, help_text: str, pick: Callable[[Any], Histogram]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} histogram")
        for i, replica in enumerate(replicas):
            h = pick(replica.stats)
            for bound, count in h.cumulative():
                le = ',le="' + _number(bound) + '"'
                lines.append(f"{name}_bucket{labels(i, le)} {count}")
            lines.append(f"{name}_count{labels(i)} {h.count}")
            lines.append(f"{name}_sum{labels(i)} {_number(h.sum)}")

    gauge("vllm:num_requests_running", "Requests in the replica's running batch.", [len(r.running) for r in replicas])
    gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.", [r.queued for r in replicas])
    gauge(
        "vllm:kv_cache_usage_perc", "Fraction of the KV-cache blocks in use (1 = full).", [r.kv_usage for r in replicas]
    )
    counter("vllm:num_preemptions", "Preemptions (recompute) since the start.", [r.stats.preemptions for r in replicas])
    counter(
        "vllm:prompt_tokens",
        "Prompt tokens of the requests that produced a first token.",
        [r.stats.prompt_tokens for r in replicas],
    )
    counter("vllm:generation_tokens", "Generated tokens.", [r.stats.generation_tokens for r in replicas])
    lines.append("# HELP vllm:request_success_total Finished requests by finish reason.")
    lines.append("# TYPE vllm:request_success_total counter")
    for i, replica in enumerate(replicas):
        for reason in ("length", "stop", "abort"):
            extra = ',finished_reason="' + reason + '"'
            lines.append(f"vllm:request_success_total{labels(i, extra)} {replica.stats.finished[reason]}")
    histogram("vllm:time_to_first_token_seconds", "Time to first token, seconds.", lambda s: s.ttft)
    histogram(
        "vllm:inter_token_latency_seconds", "Time between consecutive tokens of a request, seconds.", lambda s: s.itl
    )
    histogram(
        "vllm:request_time_per_output_token_seconds",
        "Per request: (last token - first token) / (tokens - 1), seconds.",
        lambda s: s.tpot,
    )
    histogram("vllm:e2e_request_latency_seconds", "Arrival to last token, seconds.", lambda s: s.e2e)
    histogram("vllm:request_queue_time_seconds", "Arrival to first scheduling, seconds.", lambda s: s.queue)
    histogram("vllm:iteration_tokens_total", "Tokens per engine step.", lambda s: s.iteration_tokens)
    config = engine.config
    lines.append("# HELP vllm:cache_config_info The KV cache's configuration.")
    lines.append("# TYPE vllm:cache_config_info gauge")
    for i in range(len(replicas)):
        lines.append(
            f'vllm:cache_config_info{{engine="{i}",block_size="{config.block_size}",'
            f'num_gpu_blocks="{config.kv_capacity_tokens // config.block_size}"}} 1'
        )
    memory = engine.gpu_memory
    if memory is not None:  # what a DCGM exporter on the simulated machine would show, in MiB
        mib = 1024 * 1024
        for name, help_text in (
            ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
            ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
        ):
            lines.append(f"# HELP {name} {help_text} Simulated: the estimate's memory of the engine.")
            lines.append(f"# TYPE {name} gauge")
            for r, replica in enumerate(replicas):
                used = (memory.used_bytes if replica.alive else 0) // mib
                value = used if name.endswith("USED") else memory.total_bytes // mib - used  # they add up
                for k in range(memory.gpus_per_replica):
                    gpu = r * memory.gpus_per_replica + k
                    lines.append(f'{name}{{gpu="{gpu}",modelName="simulated"}} {value}')
    gauge(
        "simserver_replica_up",
        "1 while the replica runs, 0 after kill_replica.",
        [1 if r.alive else 0 for r in replicas],
    )
    counter(
        "simserver_late_steps",
        "Steps that ended late by more than the engine's max lag (host too slow).",
        [r.stats.late_steps for r in replicas],
    )
    lines.append("# HELP simserver_speedup Model seconds per wall-clock second (0: zero-delay mode).")
    lines.append("# TYPE simserver_speedup gauge")
    lines.append(f"simserver_speedup {_number(0.0 if engine.zero_delay else engine.speedup)}")
    lines.append("# HELP simserver_rejected_total Requests refused before queueing, by reason.")
    lines.append("# TYPE simserver_rejected_total counter")
    lines.extend(f'simserver_rejected_total{{reason="{reason}"}} {count}' for reason, count in engine.rejected.items())
    return "\n".join(lines) + "\n"


# -- the application ------------------------------------------------------------------------------------------


def create_app(
    engine: SimEngine, *, model_name: str, max_model_len: int, control: bool = True, plan: dict[str, Any] | None = None
) -> Starlette:
    """The OpenAI-compatible simulator app for `engine` (routes and rules in the module docstring). `plan` (the
    serving plan's description) is shown by GET /control."""
    created = int(time.time())

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": model_name,
                        "object": "model",
                        "created": created,
                        "owned_by": "simserver",
                        "root": model_name,
                        "parent": None,
                        "max_model_len": max_model_len,
                        "permission": [],
                    }
                ],
            }
        )

    async def health(request: Request) -> Response:
        if not any(replica.alive for replica in engine.replicas):
            return Response(status_code=503)
        return Response(status_code=200)

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(
            metrics_text(engine, model_name=model_name), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    async def generate(request: Request, *, chat: bool) -> Response | EventStream:
        received_ns = time.perf_counter_ns()
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return error_response("the request body is not valid JSON", "BadRequestError", 400)
        try:
            parsed = parse_body(body, chat=chat, model_name=model_name, max_model_len=max_model_len)
            sim = engine.submit(parsed.prompt_tokens, parsed.max_tokens, output_tokens=parsed.output_tokens)
        except BadRequest as error:
            return error_response(error.message, error.kind, error.status, error.param)
        except EngineError as error:
            return error_response(error.message, error.kind, error.status)
        request_id = ("chatcmpl-" if chat else "cmpl-") + sim.id
        if parsed.stream:
            templates = _Templates(chat=chat, request_id=request_id, created=int(time.time()), model=model_name)
            chunks = _stream_chunks(engine, sim, parsed, templates, chat=chat, received_ns=received_ns)
            return EventStream(chunks, lambda: engine.cancel(sim))

        async def watch() -> None:  # a client that gives up cancels its request, as with a stream
            while (await request.receive())["type"] != "http.disconnect":
                pass
            engine.cancel(sim)

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            tokens, reason, failure = await _collect(sim)
        finally:
            watcher.cancel()
            engine.cancel(sim)
        if failure is not None:
            status = failure.status or 500
            return error_response(
                failure.error or "cancelled", "ServiceUnavailable" if status == 503 else "InternalServerError", status
            )
        finished_ns = time.perf_counter_ns()
        text = generated_text(tokens)
        if chat:
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text, "tool_calls": []},
                "logprobs": None,
                "finish_reason": reason,
            }
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": reason, "stop_reason": None}
        return JSONResponse(
            {
                "id": request_id,
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()),
                "model": model_name,
                "choices": [choice],
                "usage": _usage(parsed.prompt_tokens, tokens),
                "simulator": _simulator_info(sim, received_ns, None, finished_ns),
            }
        )

    async def completions(request: Request) -> Response | EventStream:
        return await generate(request, chat=False)

    async def chat_completions(request: Request) -> Response | EventStream:
        return await generate(request, chat=True)

    async def control_state(request: Request) -> Response:
        return JSONResponse({**engine.state(), "model": model_name, "max_model_len": max_model_len, "plan": plan})

    async def control_action(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return error_response("the request body is not valid JSON", "BadRequestError", 400)
        if not isinstance(body, dict):
            return error_response("the body must be a JSON object with an action", "BadRequestError", 400)
        action = body.get("action")
        try:
            if action == "kill_replica":
                seconds = body.get("seconds")
                engine.kill_replica(int(body.get("replica", 0)), None if seconds is None else float(seconds))
            elif action == "fail_next":
                engine.fail_next(int(body.get("count", 1)), int(body.get("status", 500)), body.get("message"))
            elif action == "stall":
                engine.stall(float(body["seconds"]))
            elif action == "recover":
                engine.recover()
            else:
                return error_response(
                    f"unknown action {action!r}: kill_replica, fail_next, stall or recover",
                    "BadRequestError",
                    400,
                    "action",
                )
        except (KeyError, TypeError, ValueError) as error:
            return error_response(f"{action}: {error}", "BadRequestError", 400)
        return JSONResponse({"ok": True, "action": action, **engine.state()})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await engine.start()
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                await engine.stop()

    routes = [
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    if control:
        routes += [
            Route("/control", control_state, methods=["GET"]),
            Route("/control", control_action, methods=["POST"]),
        ]
    return Starlette(routes=routes, lifespan=lifespan)


def serve(app: Starlette, *, host: str = "127.0.0.1", port: int = 8001, log_level: str = "warning") -> None:
    """Run the app with uvicorn until interrupted (no access log: it would cost more than the simulation)."""
    import uvicorn

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_keep_alive=60,
        backlog=4096,
    )


__all__ = [
    "CHAT_REPLY_TOKENS",
    "CHAT_TOKENS_PER_MESSAGE",
    "TOKEN_WORD",
    "chat_tokens",
    "create_app",
    "generated_text",
    "metrics_text",
    "prompt_tokens",
    "serve",
]

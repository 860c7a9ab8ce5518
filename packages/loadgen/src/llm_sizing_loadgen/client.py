"""One request to an OpenAI-compatible endpoint, streamed, timed and judged by METRICS.md.

Timings (`perf_counter_ns` by default; the clock is injectable):

- `t_sched`: given by the runner (the arrival process, or the moment a closed-loop client became free);
- `t_send`: immediately before the request is written: httpcore's `send_request_headers.started` trace event, so a
  new connection's TCP/TLS set-up counts as client time (schedule lag), not server latency. Transports without
  traces (tests' MockTransport) give the moment just before `AsyncClient.send`;
- `t_hdr`: when `AsyncClient.send` returns (status line and headers received);
- `t_c1..t_cC`: arrival of each SSE event carrying ≥ 1 generated token in `text`, `delta.content`,
  `delta.reasoning_content` / `delta.reasoning` or `delta.tool_calls`. Role-only, empty and usage-only events do not
  count. Every event in one network read shares that read's arrival time (they arrived together);
- `n_k`: the increase of `usage.completion_tokens` since the previous content event when the server sends running
  usage on every event (`continuous_usage_stats`); otherwise unknown (1 per event is assumed downstream, and the
  chunking is "unknown" when the final N_out differs from C);
- `t_end`: the arrival of the last event carrying `usage` when none of the content events came after it (the final
  usage event), else the `[DONE]` event, else the stream's close; for a request that failed (an error event, an
  HTTP error, a broken connection, a timeout), the moment the failure was seen, so a failed request's E2E says how
  long it was in flight (a failure-injection run tells the requests a fault cut from those sent after it);
  `incomplete_at_end` keeps none;
- `N_out`, `N_in`, `N_cached`: the last `usage` seen (`completion_tokens`, `prompt_tokens`,
  `prompt_tokens_details.cached_tokens`).

Statuses (first that applies):

- `timeout(connect)`: httpx's connect timeout; `timeout(ttft)`: no content event within `ttft_s` of the send;
  `timeout(stream)`: more than `stream_s` without a byte after the first content event;
- `http_error(code)`: a status ≥ 300; an error object inside the stream (its code if it has one); a connection that
  failed or broke (`http_status` is the response's status, or null when there was no response); a stream that ended
  without a finish_reason and without usage; an event that is not JSON; any other exception (logged: a bug);
- `short_output`: no content event at all ("empty output"), fewer tokens than the target when the length is
  enforced (`ignore_eos`, or `min_tokens`), or `finish_reason` "length" before the target (the context ran out);
- `truncated_prompt`: `usage.prompt_tokens` below the sent count by more than the tolerance (a fraction, and at least
  8 tokens: the sent count is approximate, see `prompts`);
- `incomplete_at_end`: cancelled by the end of the run (set by the runner's cancellation), kept with what was measured;
- `ok` otherwise (an output longer than `max_tokens` is ok, counted as `over_max_tokens` in the summary).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import sys
import time
from array import array
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import httpx

logger = logging.getLogger(__name__)
Clock = Callable[[], int]


def _skip_missing_sniffio() -> None:
    """httpcore tries `import sniffio` for every lock and event it sets up (about a dozen per request); when sniffio
    is not installed each try searches sys.path (tens of µs, a third of the client's time at 300 requests/s).
    Recording it as absent once gives httpcore the same answer (asyncio) without the search."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


_skip_missing_sniffio()
TRUNCATION_MIN_TOKENS = 8  # a prompt is truncated only when it is also this many tokens short
ERROR_TEXT_CHARS = 300


class Status(StrEnum):
    OK = "ok"
    HTTP_ERROR = "http_error"
    TIMEOUT = "timeout"
    CLIENT_CANCEL = "client_cancel"
    TRUNCATED_PROMPT = "truncated_prompt"
    SHORT_OUTPUT = "short_output"
    INCOMPLETE_AT_END = "incomplete_at_end"


@dataclass(frozen=True, kw_only=True)
class ClientSettings:
    """How requests are sent and judged (from the plan)."""

    stream: bool = True
    ignore_eos: bool = True
    min_tokens: int | None = None
    truncation_tolerance: float = 0.2
    ttft_timeout_s: float = 300.0
    stream_timeout_s: float = 60.0


@dataclass(slots=True, kw_only=True)
class PreparedRequest:
    index: int
    body: bytes
    input_tokens_sent: int
    output_tokens_target: int
    class_name: str = ""


@dataclass(slots=True, kw_only=True)
class RequestResult:
    """Everything measured for one request; instants in clock nanoseconds (None: not reached)."""

    index: int
    t_sched_ns: int
    input_tokens_sent: int
    output_tokens_target: int
    class_name: str = ""
    t_send_ns: int | None = None
    t_hdr_ns: int | None = None
    t_end_ns: int | None = None
    # arrays of int64, not lists: no object per value (a 100,000-request run of 256 tokens keeps 200 MB, not 900)
    # and nothing for the garbage collector to scan
    event_ns: array[int] = field(default_factory=lambda: array("q"))  # t_c1 .. t_cC
    event_tokens: array[int] = field(default_factory=lambda: array("q"))  # n_1 .. n_C when `chunking_known`
    chunking_known: bool = True  # every content event carried running usage
    status: Status | None = None
    error: str | None = None
    http_status: int | None = None
    timeout_phase: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    output_tokens_source: str | None = None  # "usage", or None: no usage, N_out is the number of content events
    cached_tokens: int | None = None
    finish_reason: str | None = None

    @property
    def ttft_ns(self) -> int | None:
        if not self.event_ns or self.t_send_ns is None:
            return None
        return self.event_ns[0] - self.t_send_ns

    @property
    def tpot_ms(self) -> float | None:
        """(t_cC − t_c1) / (N_out − n_1), when at least one token follows the first event."""
        if len(self.event_ns) < 2 or self.output_tokens is None:
            return None
        first = self.event_tokens[0] if self.chunking_known and self.event_tokens else 1
        after = self.output_tokens - first
        if after < 1:
            return None
        return (self.event_ns[-1] - self.event_ns[0]) / 1e6 / after

    @property
    def chunk_tokens(self) -> list[int] | None:
        """n_1 .. n_C when the server gave them, else None."""
        if self.chunking_known and self.event_ns and len(self.event_tokens) == len(self.event_ns):
            return list(self.event_tokens)
        return None

    @property
    def chunking_unknown(self) -> bool:
        """No per-event counts and N_out ≠ C: how the tokens were spread over the events is unknown."""
        return (
            self.chunk_tokens is None
            and bool(self.event_ns)
            and self.output_tokens is not None
            and self.output_tokens != len(self.event_ns)
        )

    def fail(self, status: Status, error: str | None, **fields: Any) -> None:
        """Set a non-ok status unless one is already set (the first cause wins)."""
        if self.status is None:
            self.status = status
            self.error = error
            for key, value in fields.items():
                setattr(self, key, value)


class _StreamFailure(Exception):
    """The stream says something went wrong (an error event, an event that is not JSON)."""

    def __init__(self, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status


class _Watchdog:
    """The ttft and stream timeouts, with one timer per request re-armed only when it fires (not per event).

    Phase "ttft": from the send until the first content event. Phase "stream": the idle time since `mark_ns`, which
    the reader moves on every network read. On expiry the request's task is cancelled and `fired` names the phase.
    """

    __slots__ = ("_clock", "_handle", "_loop", "_stream_ns", "_task", "_ttft_ns", "fired", "mark_ns", "streaming")

    def __init__(self, *, clock: Clock, ttft_s: float, stream_s: float) -> None:
        self._clock = clock
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._ttft_ns = int(ttft_s * 1e9)
        self._stream_ns = int(stream_s * 1e9)
        self._handle: asyncio.TimerHandle | None = None
        self.fired: str | None = None
        self.mark_ns = 0
        self.streaming = False

    def start(self, now_ns: int) -> None:
        self.mark_ns = now_ns
        self._handle = self._loop.call_later(self._ttft_ns / 1e9, self._check)

    def _check(self) -> None:
        limit = self._stream_ns if self.streaming else self._ttft_ns
        idle = self._clock() - self.mark_ns
        if idle >= limit:
            self.fired = "stream" if self.streaming else "ttft"
            self._handle = None
            if self._task is not None:
                self._task.cancel()
        else:
            self._handle = self._loop.call_later((limit - idle) / 1e9, self._check)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class StreamClient:
    """Sends prepared requests over a shared `httpx.AsyncClient` (its pool sized by the runner) and fills in
    `RequestResult`s. The module docstring gives the timing and status rules."""

    def __init__(
        self, http: httpx.AsyncClient, *, url: str, settings: ClientSettings, clock: Clock = time.perf_counter_ns
    ) -> None:
        self._http = http
        self._url = url
        self._settings = settings
        self._clock = clock

    async def send(self, prepared: PreparedRequest, record: RequestResult) -> RequestResult:
        """Send one request and judge it. Cancellation from outside (the run's end) marks the record
        `incomplete_at_end` and is re-raised; everything else ends in a status on the record."""
        clock = self._clock
        settings = self._settings
        watchdog = _Watchdog(clock=clock, ttft_s=settings.ttft_timeout_s, stream_s=settings.stream_timeout_s)
        request = self._http.build_request(
            "POST", self._url, content=prepared.body, extensions={"trace": _trace_send(record, clock)}
        )
        record.t_send_ns = clock()  # replaced by the trace's moment when the transport reports it
        watchdog.start(record.t_send_ns)
        try:
            response = await self._http.send(request, stream=True)
            try:
                record.t_hdr_ns = clock()
                record.http_status = response.status_code
                if response.status_code >= 300:
                    await self._http_error(response, record)
                elif settings.stream:
                    await self._read_stream(response, record, watchdog)
                else:
                    await self._read_whole(response, record)
            finally:
                await response.aclose()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if watchdog.fired is None or (task is not None and task.uncancel() > 0):
                record.fail(Status.INCOMPLETE_AT_END, None)
                raise
            record.fail(
                Status.TIMEOUT,
                f"no {'event' if watchdog.fired == 'stream' else 'content event'} within "
                f"{_timeout_of(settings, watchdog.fired):g} s",
                timeout_phase=watchdog.fired,
            )
        except (httpx.ConnectTimeout, httpx.PoolTimeout) as error:
            record.fail(Status.TIMEOUT, f"{type(error).__name__}: {error}".rstrip(": "), timeout_phase="connect")
        except httpx.TimeoutException as error:
            phase = "stream" if record.event_ns else "ttft"
            record.fail(Status.TIMEOUT, f"{type(error).__name__}: {error}".rstrip(": "), timeout_phase=phase)
        except httpx.ConnectError as error:
            record.fail(Status.HTTP_ERROR, f"connection failed: {error}", http_status=None)
        except httpx.HTTPError as error:  # the connection broke: RemoteProtocolError, ReadError, ...
            where = f"after {len(record.event_ns)} content event(s)" if record.t_hdr_ns else "before the response"
            record.fail(Status.HTTP_ERROR, f"the connection broke {where}: {type(error).__name__}: {error}")
        except _StreamFailure as failure:
            record.fail(
                Status.HTTP_ERROR,
                failure.message,
                http_status=failure.http_status if failure.http_status is not None else record.http_status,
            )
        except Exception as error:  # a transport's or a parser's bug: one odd answer must not end a client's loop
            logger.exception("request %d failed unexpectedly", prepared.index)
            record.fail(Status.HTTP_ERROR, f"unexpected {type(error).__name__}: {error}")
        finally:
            watchdog.stop()
        if record.t_end_ns is None and record.status not in (None, Status.OK, Status.INCOMPLETE_AT_END):
            record.t_end_ns = self._clock()  # the failure was seen now: the request was in flight until then
        self._judge(record)
        return record

    async def _http_error(self, response: httpx.Response, record: RequestResult) -> None:
        body = await response.aread()
        record.t_end_ns = self._clock()
        record.fail(Status.HTTP_ERROR, f"HTTP {response.status_code}: {_error_text(body)}")

    async def _read_whole(self, response: httpx.Response, record: RequestResult) -> None:
        """A non-streamed answer: one "event" carrying every token, at the moment the body is complete."""
        body = await response.aread()
        now = self._clock()
        record.t_end_ns = now
        try:
            data = json.loads(body)
        except ValueError:
            raise _StreamFailure(f"the response is not JSON: {_error_text(body)}") from None
        if not isinstance(data, dict):
            raise _StreamFailure("the response is not a JSON object")
        _check_error_object(data)
        content = False
        for choice in data.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            message = choice.get("message") or {}
            if choice.get("text") or (isinstance(message, dict) and _has_content(message)):
                content = True
            if choice.get("finish_reason"):
                record.finish_reason = str(choice["finish_reason"])
        usage = data.get("usage")
        completion = _take_usage(record, usage) if isinstance(usage, dict) else None
        if content:
            record.event_ns.append(now)
            if completion is not None:
                record.event_tokens.append(completion)
            else:
                record.chunking_known = False

    async def _read_stream(self, response: httpx.Response, record: RequestResult, watchdog: _Watchdog) -> None:
        """Read the SSE stream to its end, timing each content event."""
        clock = self._clock
        events = record.event_ns
        tokens = record.event_tokens
        pending = b""  # an event not yet terminated by a blank line
        last_completion = 0  # running usage.completion_tokens
        uncounted = 0  # tokens reported since the last content event
        t_usage: int | None = None
        t_done: int | None = None
        saw_usage_on_content = True
        async for chunk in response.aiter_raw():
            now = clock()
            if events:  # the stream phase: any bytes reset the silence timer (the ttft deadline never moves)
                watchdog.mark_ns = now
            data = pending + chunk if pending else chunk
            hold = b""
            if b"\r" in data:  # CRLF or CR line ends: normalise (a trailing CR may be half of a CRLF)
                if data.endswith(b"\r"):
                    data, hold = data[:-1], b"\r"
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            blocks = data.split(b"\n\n")
            pending = blocks.pop() + hold
            for block in blocks:
                payload = _payload(block)
                if payload is None:
                    continue
                if payload == b"[DONE]":
                    t_done = now
                    continue
                content, usage = self._event(payload, record)
                if usage is not None:
                    t_usage = now
                    completion = _take_usage(record, usage)
                    if completion is not None:
                        uncounted += max(0, completion - last_completion)
                        last_completion = max(last_completion, completion)
                if content:
                    if not events:
                        watchdog.streaming = True
                        watchdog.mark_ns = now
                    events.append(now)
                    if usage is not None and usage.get("completion_tokens") is not None:
                        tokens.append(uncounted)
                        uncounted = 0
                    else:
                        saw_usage_on_content = False
        closed = clock()
        tail = _payload(pending.strip(b"\r\n")) if pending.strip() else None
        if tail is not None and tail != b"[DONE]":  # a last event without its blank line, at the close
            content, usage = self._event(tail, record)
            if usage is not None:
                t_usage = closed
                completion = _take_usage(record, usage)
                if completion is not None:
                    uncounted += max(0, completion - last_completion)
            if content:
                events.append(closed)
                if usage is not None and usage.get("completion_tokens") is not None:
                    tokens.append(uncounted)
                else:
                    saw_usage_on_content = False
        elif tail == b"[DONE]":
            t_done = closed
        record.chunking_known = saw_usage_on_content
        if t_usage is not None and (not events or t_usage >= events[-1]):
            record.t_end_ns = t_usage  # the final usage event
        else:
            record.t_end_ns = t_done if t_done is not None else closed
        if record.finish_reason is None and record.output_tokens is None:
            record.fail(
                Status.HTTP_ERROR,
                f"the stream ended without a finish_reason or usage after {len(events)} content event(s)",
            )

    @staticmethod
    def _event(payload: bytes, record: RequestResult) -> tuple[bool, dict[str, Any] | None]:
        """(carries a generated token, its usage or None) of one event's JSON; the finish_reason is noted."""
        try:
            data = json.loads(payload)
        except ValueError:
            raise _StreamFailure(f"an event that is not JSON: {_error_text(payload)}") from None
        if not isinstance(data, dict):
            raise _StreamFailure(f"an event that is not a JSON object: {_error_text(payload)}")
        _check_error_object(data)
        content = False
        for choice in data.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            if not content:
                delta = choice.get("delta")
                content = bool(choice.get("text")) or (isinstance(delta, dict) and _has_content(delta))
            reason = choice.get("finish_reason")
            if reason:
                record.finish_reason = str(reason)
        usage = data.get("usage")
        return content, usage if isinstance(usage, dict) else None

    def _judge(self, record: RequestResult) -> None:
        """The status of a request that got a complete answer (see the module docstring)."""
        if record.status is not None:
            return
        settings = self._settings
        if record.output_tokens is None:
            record.output_tokens = len(record.event_ns)  # no usage: one token per event, source unknown
            record.output_tokens_source = None
        else:
            record.output_tokens_source = "usage"
        if not record.event_ns:
            record.fail(
                Status.SHORT_OUTPUT,
                f"empty output: no content event (finish_reason "
                f"{record.finish_reason!r}, {record.output_tokens} output tokens)",
            )
            return
        sent = record.input_tokens_sent
        if (
            record.input_tokens is not None
            and record.input_tokens < sent * (1 - settings.truncation_tolerance)
            and record.input_tokens < sent - TRUNCATION_MIN_TOKENS
        ):
            record.fail(
                Status.TRUNCATED_PROMPT, f"the server counted {record.input_tokens} prompt tokens for about {sent} sent"
            )
            return
        target = record.output_tokens_target
        enforced = target if settings.ignore_eos else min(settings.min_tokens or 0, target)
        produced = record.output_tokens
        if produced < enforced:
            record.fail(
                Status.SHORT_OUTPUT, f"{produced} of {target} output tokens (finish_reason {record.finish_reason!r})"
            )
        elif record.finish_reason == "length" and produced < target:
            record.fail(
                Status.SHORT_OUTPUT,
                f"finish_reason 'length' at {produced} of {target} output tokens (the context length ran out?)",
            )
        else:
            record.status = Status.OK


def _trace_send(record: RequestResult, clock: Clock) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """httpcore's trace hook: `t_send` when the request headers start being written."""

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_headers.started"):
            record.t_send_ns = clock()

    return trace


def _payload(block: bytes) -> bytes | None:
    """The data of one SSE event (its `data:` lines joined), None when it has none (comments, `event:` only)."""
    if block.startswith(b"data:") and b"\n" not in block:
        return block[6:] if block[5:6] == b" " else block[5:]
    lines = [line for line in block.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    return b"\n".join(line[6:] if line[5:6] == b" " else line[5:] for line in lines)


def _has_content(delta: dict[str, Any]) -> bool:
    return bool(
        delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning") or delta.get("tool_calls")
    )


def _take_usage(record: RequestResult, usage: dict[str, Any]) -> int | None:
    """Record the usage's counts; its completion_tokens (or None)."""
    prompt = usage.get("prompt_tokens")
    if isinstance(prompt, int) and not isinstance(prompt, bool):
        record.input_tokens = prompt
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
        if isinstance(cached, int) and not isinstance(cached, bool):
            record.cached_tokens = cached
    completion = usage.get("completion_tokens")
    if isinstance(completion, int) and not isinstance(completion, bool):
        record.output_tokens = completion
        return completion
    return None


def _check_error_object(data: dict[str, Any]) -> None:
    """Raise _StreamFailure for an error object (`{"error": {...}}` or `{"object": "error", ...}`)."""
    error = data.get("error")
    if error is None and data.get("object") != "error":
        return
    detail = error if isinstance(error, dict) else data
    message = detail.get("message") if isinstance(detail, dict) else None
    code = detail.get("code") if isinstance(detail, dict) else None
    status = code if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599 else None
    raise _StreamFailure(f"error event: {str(message or error)[:ERROR_TEXT_CHARS]}", status)


def _error_text(body: bytes) -> str:
    """The message of an error body (OpenAI's `{"error": {"message"}}`, FastAPI's `{"detail"}`), else its text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:ERROR_TEXT_CHARS] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:ERROR_TEXT_CHARS]
        for key in ("message", "detail", "error"):
            if data.get(key):
                return str(data[key])[:ERROR_TEXT_CHARS]
    return text[:ERROR_TEXT_CHARS]


def _timeout_of(settings: ClientSettings, phase: str | None) -> float:
    return settings.stream_timeout_s if phase == "stream" else settings.ttft_timeout_s

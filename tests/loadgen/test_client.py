"""One request: SSE parsing, METRICS.md timings (hand-checked on a clock the scripted stream moves), statuses and
the response checks; timeouts and cancellation on a virtual-time event loop (`tests.loadgen.virtual_time`), so they
fire at exact instants. httpx's MockTransport stands in for the server; no database."""

from __future__ import annotations

import asyncio
import itertools
import json

import httpx
import pytest

from llm_sizing_loadgen.client import ClientSettings, PreparedRequest, RequestResult, Status, StreamClient
from llm_sizing_loadgen.plan import Api
from llm_sizing_loadgen.prompts import PromptFactory, request_body
from tests.loadgen.sse_server import SseServer
from tests.loadgen.streams import (
    MS,
    SCHED_LEAD_NS,
    FakeClock,
    chat_chunk,
    event,
    scripted,
    send_one,
    usage,
    usage_only,
)
from tests.loadgen.virtual_time import VirtualClock, run_virtual


def _ms(nanoseconds: int | None) -> float | None:
    return None if nanoseconds is None else nanoseconds / MS


def _gaps_ms(record: RequestResult) -> list[float]:
    return [(b - a) / MS for a, b in itertools.pairwise(record.event_ns)]


def _e2e_ms(record: RequestResult) -> float | None:
    assert record.t_send_ns is not None
    return None if record.t_end_ns is None else (record.t_end_ns - record.t_send_ns) / MS


# ---------------------------------------------------------------------------------------------------------------
# Timings


def test_chat_stream_timings_skip_the_role_only_first_event_and_end_at_the_usage_event() -> None:
    # given: headers after 2 ms; a role-only event at 5 ms; content at 10, 15 and 25 ms (the last with
    # finish_reason); the usage-only event at 26 ms; [DONE] at 27 ms
    clock = FakeClock()
    start = clock.now
    handler = scripted(
        clock,
        [
            (3, event(chat_chunk(role=True, content=""))),
            (5, event(chat_chunk("Hello"))),
            (5, event(chat_chunk(" world"))),
            (10, event(chat_chunk("!", finish="length"))),
            (1, event(usage_only(12, 3))),
            (1, event("[DONE]")),
        ],
        header_ms=2,
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, sent=12, target=3))

    # then: TTFT = t_c1 − t_send = 10 ms; TTFT_sched adds the 2 ms before the send; gaps 5 and 10 ms;
    # E2E = t_end − t_send = 26 ms (the usage event, not [DONE]); TPOT = (25 − 10) / (3 − 1) = 7.5 ms
    assert record.status is Status.OK
    assert record.t_send_ns == start
    assert _ms(record.t_hdr_ns - start) == 2.0
    assert _ms(record.ttft_ns) == 10.0
    assert _ms(record.event_ns[0] - record.t_sched_ns) == 10.0 + SCHED_LEAD_NS / MS
    assert _gaps_ms(record) == [5.0, 10.0]
    assert _e2e_ms(record) == 26.0
    assert record.tpot_ms == 7.5
    assert (record.input_tokens, record.output_tokens, record.output_tokens_source) == (12, 3, "usage")
    assert record.finish_reason == "length"
    assert record.http_status == 200
    assert record.chunk_tokens is None  # no running usage: the tokens per event are not known ...
    assert record.chunking_unknown is False  # ... but N_out equals the number of events


def test_chunked_sse_split_mid_event_with_crlf_line_ends_times_events_by_the_read_that_completes_them() -> None:
    # given: the first event split mid-JSON; its end and a second event arrive together at 6 ms; the third event's
    # blank line arrives at 10 ms (after a lone CR at 9 ms), with the usage event and [DONE]
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (4, b'data: {"choices":[{"index":0,"text":"A","fini'),
            (2, b'sh_reason":null}]}\r\n\r\ndata: {"choices":[{"index":0,"text":"B","finish_reason":null}]}\r\n\r\n'),
            (3, b'data: {"choices":[{"index":0,"text":"C","finish_reason":"length"}]}\r'),
            (
                1,
                b'\n\r\ndata: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3}}\r\n\r\n'
                b"data: [DONE]\r\n\r\n",
            ),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=3))

    # then: A and B share the 6 ms read (a 0 ms gap); C and the usage event complete at 10 ms
    assert record.status is Status.OK
    assert _ms(record.ttft_ns) == 6.0
    assert _gaps_ms(record) == [0.0, 4.0]
    assert _e2e_ms(record) == 10.0
    assert record.output_tokens == 3


def test_continuous_usage_stats_give_the_tokens_of_each_event() -> None:
    # given: running usage on every event; a role event (0 tokens), "a" (1), "bc" (3 in all), an event with no
    # text whose token is held back (4), then "d" with finish_reason (5), then the usage-only event
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (5, event(chat_chunk(role=True, content="", usage=usage(20, 0)))),
            (5, event(chat_chunk("a", usage=usage(20, 1)))),
            (2, event(chat_chunk("bc", usage=usage(20, 3)))),
            (2, event(chat_chunk("", usage=usage(20, 4)))),
            (6, event(chat_chunk("d", finish="length", usage=usage(20, 5, cached=16)))),
            (1, event(usage_only(20, 5))),
            (1, event("[DONE]")),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, sent=20, target=5))

    # then: n_k = [1, 2, 2] (the held-back token goes with "d"); TPOT = (20 − 10) / (5 − 1) = 2.5 ms
    assert record.status is Status.OK
    assert record.chunk_tokens == [1, 2, 2]
    assert _gaps_ms(record) == [2.0, 8.0]
    assert record.tpot_ms == 2.5
    assert _e2e_ms(record) == 21.0
    assert (record.output_tokens, record.cached_tokens) == (5, 16)


def test_without_running_usage_a_count_that_differs_from_the_events_flags_unknown_chunking() -> None:
    # given: two content events, but usage says 4 tokens
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (10, event(chat_chunk("ab"))),
            (10, event(chat_chunk("cd", finish="length"))),
            (1, event(usage_only(100, 4))),
            (0, event("[DONE]")),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=4))

    # then
    assert record.status is Status.OK
    assert record.chunk_tokens is None
    assert record.chunking_unknown is True
    assert record.output_tokens == 4
    assert record.tpot_ms == 10.0 / 3  # one token assumed in the first event: (20 − 10) / (4 − 1)


@pytest.mark.parametrize(
    "delta",
    [
        pytest.param({"reasoning_content": "think"}, id="reasoning_content"),
        pytest.param({"reasoning": "think"}, id="reasoning"),
        pytest.param({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ""}}]}, id="tool_calls"),
    ],
)
def test_reasoning_and_tool_call_deltas_carry_tokens(delta: dict) -> None:
    # given: the first token is not content text
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (3, event(chat_chunk(role=True))),
            (4, event(chat_chunk(**delta))),
            (4, event(chat_chunk("x", finish="length"))),
            (1, event(usage_only(100, 2))),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=2))

    # then: it is t_c1
    assert record.status is Status.OK
    assert _ms(record.ttft_ns) == 7.0


def test_comments_event_fields_multi_line_data_and_a_last_event_without_its_blank_line() -> None:
    # given: a keep-alive comment, an `event:` field, a data payload over two `data:` lines, and a final usage
    # event the server closed without its blank line
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (1, b": keep-alive\n\n"),
            (4, b'event: message\ndata: {"choices":[{"index":0,\ndata: "text":"A","finish_reason":null}]}\n\n'),
            (5, b'data: {"choices":[{"index":0,"text":"B","finish_reason":"length"}]}\n\n'),
            (2, b'data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":2}}'),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=2))

    # then
    assert record.status is Status.OK
    assert _ms(record.ttft_ns) == 5.0
    assert _gaps_ms(record) == [5.0]
    assert _e2e_ms(record) == 12.0
    assert record.output_tokens == 2


def test_a_response_without_streaming_is_one_event_carrying_every_token() -> None:
    # given
    clock = FakeClock()
    answer = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "a b c"}, "finish_reason": "length"}],
        "usage": usage(100, 3),
    }
    handler = scripted(clock, [(30, json.dumps(answer).encode())], header_ms=5, content_type="application/json")

    # when
    record = asyncio.run(send_one(handler, clock=clock, settings=ClientSettings(stream=False), target=3))

    # then: TTFT = E2E = 35 ms; n_1 = N_out
    assert record.status is Status.OK
    assert _ms(record.ttft_ns) == 35.0
    assert _e2e_ms(record) == 35.0
    assert record.chunk_tokens == [3]
    assert record.tpot_ms is None


# ---------------------------------------------------------------------------------------------------------------
# Statuses


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        pytest.param(
            400,
            b'{"error":{"message":"This model\'s maximum context length is 4096 tokens","code":400}}',
            "HTTP 400: This model's maximum context length is 4096 tokens",
            id="400-openai-error",
        ),
        pytest.param(503, b"Service Unavailable", "HTTP 503: Service Unavailable", id="503-text"),
        pytest.param(429, b'{"detail":"queue full"}', "HTTP 429: queue full", id="429-detail"),
    ],
)
def test_http_errors_keep_the_status_the_message_and_the_time_to_the_error(
    status: int, body: bytes, message: str
) -> None:
    # given: the error headers at 3 ms and its body at 4 ms
    clock = FakeClock()
    handler = scripted(clock, [(1, body)], status=status, header_ms=3, content_type="application/json")

    # when
    record = asyncio.run(send_one(handler, clock=clock))

    # then
    assert record.status is Status.HTTP_ERROR
    assert record.http_status == status
    assert record.error == message
    assert record.ttft_ns is None
    assert list(record.event_ns) == []
    assert _e2e_ms(record) == 4.0


def test_a_stream_that_stops_early_is_an_error_that_keeps_what_was_measured() -> None:
    # given: two content events, then the stream closes without finish_reason, usage or [DONE]
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (10, event(chat_chunk("a"))),
            (5, event(chat_chunk("b"))),
            (1, b""),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=16))

    # then
    assert record.status is Status.HTTP_ERROR
    assert record.http_status == 200
    assert record.error == "the stream ended without a finish_reason or usage after 2 content event(s)"
    assert _ms(record.ttft_ns) == 10.0
    assert _gaps_ms(record) == [5.0]
    assert _e2e_ms(record) == 16.0


def test_a_connection_that_breaks_mid_stream_is_an_error_that_keeps_what_was_measured() -> None:
    # given
    clock = FakeClock()
    handler = scripted(
        clock,
        [(10, event(chat_chunk("a"))), (5, event(chat_chunk("b")))],
        error=httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=16))

    # then
    assert record.status is Status.HTTP_ERROR
    assert record.error == (
        "the connection broke after 2 content event(s): RemoteProtocolError: peer closed "
        "connection without sending complete message body"
    )
    assert _ms(record.ttft_ns) == 10.0
    assert _gaps_ms(record) == [5.0]
    assert _e2e_ms(record) == 15.0  # the break was seen with the second event's read


def test_an_error_event_inside_the_stream_is_an_http_error_with_its_code() -> None:
    # given: vLLM's way of failing a request after it started
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (10, event(chat_chunk("a"))),
            (5, event({"error": {"message": "replica died", "type": "InternalServerError", "code": 503}})),
            (1, event("[DONE]")),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=16))

    # then
    assert record.status is Status.HTTP_ERROR
    assert (record.http_status, record.error) == (503, "error event: replica died")
    assert _ms(record.ttft_ns) == 10.0
    # the request was in flight until the error event came, 10 + 5 ms after it was sent (t_end = the failure)
    assert _e2e_ms(record) == 15.0


def test_an_event_that_is_not_json_is_an_error() -> None:
    # given
    clock = FakeClock()
    handler = scripted(clock, [(10, b"data: {not json\n\n")])

    # when
    record = asyncio.run(send_one(handler, clock=clock))

    # then
    assert record.status is Status.HTTP_ERROR
    assert record.error == "an event that is not JSON: {not json"


@pytest.mark.parametrize(
    ("settings", "finish", "produced", "expected", "error"),
    [
        pytest.param(
            ClientSettings(),
            "stop",
            2,
            Status.SHORT_OUTPUT,
            "2 of 5 output tokens (finish_reason 'stop')",
            id="ignore_eos-stop-early",
        ),
        pytest.param(ClientSettings(ignore_eos=False), "stop", 2, Status.OK, None, id="free-to-stop"),
        pytest.param(
            ClientSettings(ignore_eos=False, min_tokens=4),
            "stop",
            2,
            Status.SHORT_OUTPUT,
            "2 of 5 output tokens (finish_reason 'stop')",
            id="below-min_tokens",
        ),
        pytest.param(
            ClientSettings(ignore_eos=False),
            "length",
            2,
            Status.SHORT_OUTPUT,
            "finish_reason 'length' at 2 of 5 output tokens (the context length ran out?)",
            id="length-before-target",
        ),
        pytest.param(ClientSettings(), "length", 5, Status.OK, None, id="full-length"),
    ],
)
def test_output_length_checks(
    settings: ClientSettings, finish: str, produced: int, expected: Status, error: str | None
) -> None:
    # given: `produced` tokens, the last event with `finish`, for a target of 5
    clock = FakeClock()
    steps = [(5, event(chat_chunk("t"))) for _ in range(produced - 1)]
    steps += [(5, event(chat_chunk("t", finish=finish))), (1, event(usage_only(100, produced)))]
    handler = scripted(clock, steps)

    # when
    record = asyncio.run(send_one(handler, clock=clock, settings=settings, target=5))

    # then
    assert (record.status, record.error) == (expected, error)


def test_an_empty_output_is_short() -> None:
    # given: a role event and a usage event, no token
    clock = FakeClock()
    handler = scripted(
        clock,
        [
            (5, event(chat_chunk(role=True, content=""))),
            (1, event(chat_chunk("", finish="stop"))),
            (1, event(usage_only(100, 0))),
            (1, event("[DONE]")),
        ],
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock))

    # then
    assert record.status is Status.SHORT_OUTPUT
    assert record.error == "empty output: no content event (finish_reason 'stop', 0 output tokens)"
    assert record.ttft_ns is None


@pytest.mark.parametrize(
    ("prompt_tokens", "expected"),
    [
        pytest.param(50, Status.TRUNCATED_PROMPT, id="half-the-prompt"),
        pytest.param(81, Status.OK, id="within-20-percent"),
        pytest.param(130, Status.OK, id="template-tokens-added"),
    ],
)
def test_a_prompt_the_server_counted_far_shorter_than_sent_is_truncated(prompt_tokens: int, expected: Status) -> None:
    # given: about 100 tokens sent
    clock = FakeClock()
    handler = scripted(clock, [(5, event(chat_chunk("t", finish="length"))), (1, event(usage_only(prompt_tokens, 1)))])

    # when
    record = asyncio.run(send_one(handler, clock=clock, sent=100, target=1))

    # then
    assert record.status is expected
    assert record.input_tokens == prompt_tokens


def test_without_usage_the_output_is_counted_in_events_with_no_source() -> None:
    # given: a server that ignores include_usage
    clock = FakeClock()
    handler = scripted(
        clock, [(5, event(chat_chunk("a"))), (5, event(chat_chunk("b", finish="length"))), (1, event("[DONE]"))]
    )

    # when
    record = asyncio.run(send_one(handler, clock=clock, target=2))

    # then
    assert record.status is Status.OK
    assert (record.output_tokens, record.output_tokens_source, record.input_tokens) == (2, None, None)
    assert _e2e_ms(record) == 11.0  # no usage event: [DONE] ends it


# ---------------------------------------------------------------------------------------------------------------
# Timeouts and cancellation (the timers are the event loop's: a virtual-time loop, its clock the client's)


def _sleeping(before_headers_s: float = 0.0, steps: list[tuple[float, bytes]] | None = None):
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(before_headers_s)

        async def body():
            for seconds, chunk in steps or []:
                await asyncio.sleep(seconds)
                yield chunk

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    return handler


@pytest.mark.parametrize(
    ("handler", "phase"),
    [
        pytest.param(_sleeping(before_headers_s=5), "ttft", id="no-headers"),
        pytest.param(
            _sleeping(steps=[(0, event(chat_chunk(role=True))), (5, event(chat_chunk("a")))]),
            "ttft",
            id="headers-and-role-but-no-token",
        ),
        pytest.param(
            _sleeping(steps=[(0, event(chat_chunk("a"))), (5, event(chat_chunk("b")))]),
            "stream",
            id="stalled-after-the-first-token",
        ),
        pytest.param(
            _sleeping(steps=[(0.011, b": keep-alive\n\n")] * 500),
            "ttft",
            id="keep-alive-comments-do-not-move-the-ttft-deadline",
        ),
    ],
)
def test_timeouts_by_phase(handler, phase: str) -> None:
    # given: 50 ms limits, a server that would take 5 s
    settings = ClientSettings(ttft_timeout_s=0.05, stream_timeout_s=0.05)

    async def scenario(clock: VirtualClock) -> tuple[RequestResult, int]:
        record = await send_one(handler, clock=clock, settings=settings, target=16)
        return record, clock()

    # when
    record, gave_up_ns = run_virtual(scenario)

    # then: it gave up 50 ms after the send (the last byte in the stream phase: the first token, at the send)
    assert record.t_send_ns is not None
    assert gave_up_ns - record.t_send_ns == 50 * MS
    assert record.status is Status.TIMEOUT
    assert record.timeout_phase == phase
    assert record.error == ("no event within 0.05 s" if phase == "stream" else "no content event within 0.05 s")
    assert (record.ttft_ns is not None) is (phase == "stream")


@pytest.mark.parametrize(
    ("error", "status", "phase", "message"),
    [
        pytest.param(
            httpx.ConnectTimeout("timed out"),
            Status.TIMEOUT,
            "connect",
            "ConnectTimeout: timed out",
            id="connect-timeout",
        ),
        pytest.param(
            httpx.ConnectError("[Errno 111] Connection refused"),
            Status.HTTP_ERROR,
            None,
            "connection failed: [Errno 111] Connection refused",
            id="refused",
        ),
    ],
)
def test_connection_failures(error: Exception, status: Status, phase: str | None, message: str) -> None:
    # given
    async def handler(request: httpx.Request) -> httpx.Response:
        raise error

    # when
    record = asyncio.run(send_one(handler, clock=FakeClock()))

    # then
    assert (record.status, record.timeout_phase, record.error, record.http_status) == (status, phase, message, None)


def test_cancellation_marks_the_request_incomplete_keeps_its_timings_and_propagates() -> None:
    # given: a stream that sends one token, then nothing for 10 s
    handler = _sleeping(steps=[(0, event(chat_chunk("a"))), (10, event(chat_chunk("b")))])

    async def scenario(clock: VirtualClock) -> tuple[RequestResult, bool]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = StreamClient(http, url="http://llm.test/v1/completions", settings=ClientSettings(), clock=clock)
            record = RequestResult(index=0, t_sched_ns=clock(), input_tokens_sent=1, output_tokens_target=2)
            task = asyncio.create_task(
                client.send(PreparedRequest(index=0, body=b"{}", input_tokens_sent=1, output_tokens_target=2), record)
            )
            await asyncio.sleep(0.05)
            # when
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return record, True
            return record, False

    record, propagated = run_virtual(scenario)

    # then: the token that came at once is kept
    assert propagated
    assert record.status is Status.INCOMPLETE_AT_END
    assert record.ttft_ns == 0
    assert record.t_end_ns is None


# ---------------------------------------------------------------------------------------------------------------
# Over a real socket: t_send comes from httpcore's trace, just before the headers are written


def test_t_send_is_taken_when_the_request_headers_are_written() -> None:
    # given: a clock that counts its readings, and the minimal SSE server on a real socket
    readings = itertools.count(1)

    def counting_clock() -> int:
        return next(readings) * MS

    async def scenario() -> RequestResult:
        server = SseServer()
        port = await server.start()
        try:
            async with httpx.AsyncClient() as http:
                client = StreamClient(
                    http, url=f"http://127.0.0.1:{port}/v1/completions", settings=ClientSettings(), clock=counting_clock
                )
                body = request_body(
                    api=Api.COMPLETIONS,
                    model="m",
                    prompt="a b c d",
                    max_tokens=3,
                    stream=True,
                    continuous_usage_stats=True,
                    ignore_eos=True,
                    min_tokens=None,
                    extra={},
                )
                record = RequestResult(index=0, t_sched_ns=0, input_tokens_sent=4, output_tokens_target=3)
                return await client.send(
                    PreparedRequest(index=0, body=body, input_tokens_sent=4, output_tokens_target=3), record
                )
        finally:
            await server.close()

    # when
    record = asyncio.run(scenario())

    # then: reading 1 is before AsyncClient.send; the trace's reading replaced it
    assert record.status is Status.OK
    assert record.t_send_ns is not None
    assert record.t_send_ns > 1 * MS
    assert record.t_hdr_ns is not None
    assert record.t_send_ns < record.t_hdr_ns < record.event_ns[0]
    assert (record.input_tokens, record.output_tokens, record.chunk_tokens) == (4, 3, [1, 1, 1])


# ---------------------------------------------------------------------------------------------------------------
# Request bodies and prompts


def test_streamed_chat_body_asks_for_usage_running_usage_and_the_enforced_length() -> None:
    # when
    body = json.loads(
        request_body(
            api=Api.CHAT,
            model="llama",
            prompt="hello there",
            max_tokens=64,
            stream=True,
            continuous_usage_stats=True,
            ignore_eos=True,
            min_tokens=80,
            extra={"temperature": 0},
        )
    )

    # then
    assert body == {
        "model": "llama",
        "messages": [{"role": "user", "content": "hello there"}],
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "ignore_eos": True,
        "min_tokens": 64,
        "temperature": 0,
    }


def test_completion_body_without_streaming_has_no_stream_options() -> None:
    # when
    body = json.loads(
        request_body(
            api=Api.COMPLETIONS,
            model="m",
            prompt="p",
            max_tokens=8,
            stream=False,
            continuous_usage_stats=True,
            ignore_eos=False,
            min_tokens=None,
            extra={},
        )
    )

    # then
    assert body == {"model": "m", "prompt": "p", "max_tokens": 8, "stream": False}


def test_prompts_have_the_word_count_share_the_class_prefix_and_differ_after_it() -> None:
    # given
    factory = PromptFactory(seed=3)

    # when
    first = factory.text(index=0, class_index=1, input_tokens=200, prefix_tokens=50)
    second = factory.text(index=1, class_index=1, input_tokens=120, prefix_tokens=50)
    other_class = factory.text(index=2, class_index=2, input_tokens=200, prefix_tokens=50)
    huge = factory.text(index=3, class_index=0, input_tokens=150_000)

    # then
    assert len(first.split()) == 200
    assert len(second.split()) == 120
    assert len(huge.split()) == 150_000
    assert first.split()[:50] == second.split()[:50]
    assert first.split()[50:54] != second.split()[50:54]  # the nonce
    assert first.split()[:50] != other_class.split()[:50]
    assert first.split()[50:54] == factory.nonce(0).split()
    assert PromptFactory(seed=3).text(index=0, class_index=1, input_tokens=200, prefix_tokens=50) == first
    assert PromptFactory(seed=4).text(index=0, class_index=1, input_tokens=200, prefix_tokens=50) != first


def test_an_unexpected_exception_fails_the_request_not_the_run() -> None:
    # given: a transport with a bug
    async def handler(request: httpx.Request) -> httpx.Response:
        raise KeyError("prompt")

    # when
    record = asyncio.run(send_one(handler, clock=FakeClock()))

    # then
    assert (record.status, record.error) == (Status.HTTP_ERROR, "unexpected KeyError: 'prompt'")


def test_bytes_after_the_first_token_keep_the_stream_alive() -> None:
    # given: 330 ms between the tokens, filled by keep-alive comments every 30 ms; a 50 ms stream limit, checked
    # from the 40 ms ttft limit on (idle 10 ms at 40 ms, 20 ms at 80 ms, ...: without the comments, 50 ms at 50 ms)
    steps = [(0, event(chat_chunk("a")))] + [(0.03, b": keep-alive\n\n")] * 10
    steps += [(0.03, event(chat_chunk("b", finish="length"))), (0, event(usage_only(100, 2)))]
    settings = ClientSettings(ttft_timeout_s=0.04, stream_timeout_s=0.05)

    # when
    record = run_virtual(lambda clock: send_one(_sleeping(steps=steps), clock=clock, settings=settings, target=2))

    # then
    assert record.status is Status.OK
    assert _gaps_ms(record) == [330.0]

"""The simulator's HTTP API against a real uvicorn server in a thread: the OpenAI shapes, SSE, usage, errors,
/metrics and the control endpoint. These assert what is answered and in what order; what depends on how long things
take (a kill for some seconds, a stall) runs the app in-process on a virtual-time loop (`tests.simserver.inprocess`),
where those times are exact."""

from __future__ import annotations

import asyncio
import json
import math
import time

import httpx
import pytest

from benchmarks_app.simserver.app import CHAT_REPLY_TOKENS, CHAT_TOKENS_PER_MESSAGE
from benchmarks_app.simserver.engine import ITL_BUCKETS, TTFT_BUCKETS, SimEngine
from tests.loadgen.virtual_time import VirtualClock, run_virtual
from tests.simserver.helpers import MODEL, metric_value, sse_events, with_config
from tests.simserver.inprocess import inprocess_simulator

LABELS = f'{{model_name="{MODEL}",engine="0"}}'


def success_series(reason: str) -> str:
    return f'vllm:request_success_total{{model_name="{MODEL}",engine="0",finished_reason="{reason}"}}'


def completion(client: httpx.Client, url: str, **body):
    return client.post(url + "/v1/completions", json={"model": MODEL, **body})


def test_models_lists_the_served_model(serve, client, l4_plan):
    url, _ = serve(l4_plan, max_model_len=4096)
    data = client.get(url + "/v1/models").json()["data"]
    assert [(m["id"], m["object"], m["max_model_len"]) for m in data] == [(MODEL, "model", 4096)]
    assert client.get(url + "/health").status_code == 200


def test_streamed_completion_events_usage_and_done(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    before = time.perf_counter_ns()
    reply = completion(
        client, url, prompt="one two three four five", max_tokens=6, stream=True, stream_options={"include_usage": True}
    )
    after = time.perf_counter_ns()
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply.text)
    assert events[-1] == "[DONE]"
    tokens, usage = events[:-2], events[-2]
    assert [e["choices"][0]["text"] for e in tokens] == ["token"] + [" token"] * 5
    assert [e["choices"][0]["finish_reason"] for e in tokens] == [None] * 5 + ["length"]
    assert all(e["object"] == "text_completion" and e["model"] == MODEL and e["id"] == tokens[0]["id"] for e in tokens)
    text = "".join(e["choices"][0]["text"] for e in tokens)
    assert len(text.split()) == 6  # a client counting words agrees with usage
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}
    sim = usage["simulator"]
    assert before <= sim["received_ns"] <= sim["first_token_ns"] <= sim["finished_ns"] <= after  # one clock
    assert sim["engine_arrival_ns"] <= sim["engine_first_token_ns"] <= sim["engine_finished_ns"]


def test_streamed_chat_sends_the_role_then_content_deltas(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hello there world"}]},
    ]
    reply = client.post(
        url + "/v1/chat/completions",
        json={
            "model": MODEL,
            "messages": messages,
            "max_completion_tokens": 3,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    events = sse_events(reply.text)
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    deltas = events[1:-2]
    assert [e["choices"][0]["delta"]["content"] for e in deltas] == ["token", " token", " token"]
    assert deltas[-1]["choices"][0]["finish_reason"] == "length"
    assert all(e["object"] == "chat.completion.chunk" for e in events[:-1])
    assert events[-2]["usage"]["prompt_tokens"] == 2 + 3 + 2 * CHAT_TOKENS_PER_MESSAGE + CHAT_REPLY_TOKENS


def test_non_streamed_completion_and_chat_return_the_whole_text(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    body = completion(client, url, prompt=[1, 2, 3, 4], max_tokens=4).json()
    assert body["object"] == "text_completion"
    assert body["choices"][0]["text"] == "token token token token"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    chat = client.post(
        url + "/v1/chat/completions",
        json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
    ).json()
    assert chat["object"] == "chat.completion"
    assert chat["choices"][0]["message"]["content"] == "token token"
    assert chat["usage"]["completion_tokens"] == 2


def test_output_length_rules(serve, client, l4_plan):
    """max_tokens by default; `sim_output_tokens` stops early ("stop") unless ignore_eos, never below min_tokens;
    without max_tokens the reply runs to max_model_len."""
    url, _ = serve(l4_plan, speedup=1000.0, max_model_len=64)

    def finish(**body) -> tuple[int, str]:
        data = completion(client, url, prompt="a b c d", **body).json()
        return data["usage"]["completion_tokens"], data["choices"][0]["finish_reason"]

    assert finish(max_tokens=8) == (8, "length")
    assert finish(max_tokens=8, sim_output_tokens=3) == (3, "stop")
    assert finish(max_tokens=8, sim_output_tokens=3, ignore_eos=True) == (8, "length")
    assert finish(max_tokens=8, sim_output_tokens=3, min_tokens=5) == (5, "stop")
    assert finish() == (60, "length")


def test_continuous_usage_stats_count_up(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    events = sse_events(
        completion(
            client, url, prompt="a b", max_tokens=3, stream=True, stream_options={"continuous_usage_stats": True}
        ).text
    )
    assert [e["usage"]["completion_tokens"] for e in events[:-1]] == [1, 2, 3]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"prompt": " ".join(["w"] * 100), "max_tokens": 1}, 400, "maximum context length is 100 tokens"),
        (
            {"prompt": " ".join(["w"] * 90), "max_tokens": 20},
            400,
            "'max_tokens' or 'max_completion_tokens' is too large",
        ),
        ({"prompt": "", "max_tokens": 2}, 400, "empty"),
        ({"prompt": "a", "max_tokens": 0}, 400, "max_tokens"),
        ({"prompt": "a", "n": 2}, 400, "n = 1"),
        ({"prompt": "a", "model": "other/model"}, 404, "The model `other/model` does not exist."),
        ({"max_tokens": 2}, 400, "prompt is required"),
    ],
)
def test_invalid_requests_get_openai_errors(serve, client, l4_plan, body, status, words):
    url, _ = serve(l4_plan, max_model_len=100)
    reply = client.post(url + "/v1/completions", json={"model": MODEL, **body})
    assert reply.status_code == status
    error = reply.json()["error"]
    assert words in error["message"]
    assert error["code"] == status
    assert error["type"] == ("NotFoundError" if status == 404 else "BadRequestError")


def test_a_body_that_is_not_json_is_refused(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    reply = client.post(url + "/v1/completions", content=b"{nope", headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert "JSON" in reply.json()["error"]["message"]


def test_metrics_use_vllm_names_and_count_what_was_served(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    for prompt, tokens in (("a b c", 4), ("a b c d e", 2)):
        completion(client, url, prompt=prompt, max_tokens=tokens, stream=True)
    text = client.get(url + "/metrics").text
    assert metric_value(text, f"vllm:num_requests_running{LABELS}") == 0
    assert metric_value(text, f"vllm:num_requests_waiting{LABELS}") == 0
    assert metric_value(text, f"vllm:kv_cache_usage_perc{LABELS}") == 0
    assert metric_value(text, f"vllm:num_preemptions_total{LABELS}") == 0
    assert metric_value(text, f"vllm:prompt_tokens_total{LABELS}") == 8
    assert metric_value(text, f"vllm:generation_tokens_total{LABELS}") == 6
    assert metric_value(text, f"vllm:time_to_first_token_seconds_count{LABELS}") == 2
    assert metric_value(text, f"vllm:inter_token_latency_seconds_count{LABELS}") == 4  # 3 + 1 gaps
    assert metric_value(text, f"vllm:e2e_request_latency_seconds_count{LABELS}") == 2
    ttft_bounds = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("vllm:time_to_first_token_seconds_bucket")
    ]
    assert ttft_bounds == [repr(b) for b in TTFT_BUCKETS] + ["+Inf"]
    itl_bounds = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("vllm:inter_token_latency_seconds_bucket")
    ]
    assert itl_bounds == [repr(b) for b in ITL_BUCKETS] + ["+Inf"]
    assert metric_value(text, success_series("length")) == 2
    for kind in (
        "# TYPE vllm:num_requests_running gauge",
        "# TYPE vllm:prompt_tokens_total counter",
        "# TYPE vllm:time_to_first_token_seconds histogram",
    ):
        assert kind in text


def test_metrics_show_a_running_request_and_its_kv(serve, l4_plan):
    url, _ = serve(l4_plan, speedup=5.0)
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST",
            url + "/v1/completions",
            json={"model": MODEL, "prompt": " ".join(["w"] * 1000), "max_tokens": 500, "stream": True},
        ) as reply,
    ):
        lines = reply.iter_lines()  # kept: a dropped iterator closes the response (httpx)
        next(lines)  # the first token is out: the request is decoding
        with httpx.Client() as other:
            text = other.get(url + "/metrics").text
        assert metric_value(text, f"vllm:num_requests_running{LABELS}") == 1
        usage = metric_value(text, f"vllm:kv_cache_usage_perc{LABELS}")
        assert 1000 / l4_plan.config.kv_capacity_tokens <= usage < 0.05


def test_a_client_that_goes_away_frees_its_request(serve, l4_plan):
    url, _engine = serve(l4_plan, speedup=5.0)
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", url + "/v1/completions", json={"model": MODEL, "prompt": "a b", "max_tokens": 2000, "stream": True}
        ) as reply,
    ):
        next(reply.iter_lines())
    with httpx.Client() as client:
        deadline = time.monotonic() + 30  # a deadline for it to happen, not a figure
        while True:
            text = client.get(url + "/metrics").text
            if metric_value(text, f"vllm:num_requests_running{LABELS}") == 0:
                break
            assert time.monotonic() < deadline, "the request kept running after its client left"
            time.sleep(0.02)
        assert metric_value(text, success_series("abort")) == 1


def test_control_fail_next_returns_the_injected_status(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    assert client.post(url + "/control", json={"action": "fail_next", "count": 2, "status": 503}).json()["ok"]
    statuses = [completion(client, url, prompt="a", max_tokens=1).status_code for _ in range(3)]
    assert statuses == [503, 503, 200]


def test_control_kill_replica_errors_the_stream_then_recover(serve, client, l4_plan):
    url, _ = serve(l4_plan, speedup=5.0)
    with (
        httpx.Client(timeout=30) as streaming,
        streaming.stream(
            "POST", url + "/v1/completions", json={"model": MODEL, "prompt": "a b", "max_tokens": 2000, "stream": True}
        ) as reply,
    ):
        lines = reply.iter_lines()
        assert next(lines).startswith("data: {")
        killed = client.post(url + "/control", json={"action": "kill_replica", "replica": 0})
        assert killed.json()["replicas"][0]["alive"] is False
        rest = [line for line in lines if line.startswith("data: ")]
    error = json.loads(next(line for line in rest if '"error"' in line)[len("data: ") :])["error"]
    assert error["code"] == 503
    assert "killed" in error["message"]
    assert rest[-1] == "data: [DONE]"
    assert client.get(url + "/health").status_code == 503
    assert completion(client, url, prompt="a", max_tokens=1).status_code == 503
    client.post(url + "/control", json={"action": "recover"})
    assert client.get(url + "/health").status_code == 200
    assert completion(client, url, prompt="a", max_tokens=1).status_code == 200


def test_control_kill_for_some_seconds_and_stall(l4_plan):
    engine = SimEngine.from_plan(l4_plan, speedup=50.0, spin_s=0.0)
    step_s = l4_plan.model.step_s(decode=1, context_tokens=2) / 50.0  # the second token's decode step

    async def scenario(clock: VirtualClock) -> None:
        async with (
            inprocess_simulator(engine, model_name=MODEL, max_model_len=8192) as transport,
            httpx.AsyncClient(transport=transport, base_url="http://simulator.test") as client,
        ):

            async def complete(max_tokens: int) -> int:
                reply = await client.post(
                    "/v1/completions", json={"model": MODEL, "prompt": "a", "max_tokens": max_tokens}
                )
                return reply.status_code

            # a kill for 0.2 s: 503 until then (1 ms before it too), 200 after it
            killed = await client.post("/control", json={"action": "kill_replica", "replica": 0, "seconds": 0.2})
            assert killed.json()["replicas"][0]["alive"] is False
            assert await complete(1) == 503
            await asyncio.sleep(0.199)
            assert await complete(1) == 503
            await asyncio.sleep(0.002)
            assert await complete(1) == 200
            # a stall of 0.3 s: a request sent now gets its first token when the stall ends, its second one step
            # later
            await client.post("/control", json={"action": "stall", "seconds": 0.3})
            start = clock()
            assert await complete(2) == 200
            assert (clock() - start) / 1e9 == pytest.approx(0.3 + step_s, abs=1e-9)
            state = (await client.get("/control")).json()
            assert state["model"] == MODEL
            assert state["replicas"][0]["alive"] is True

    run_virtual(scenario)


def test_control_rejects_unknown_actions_and_can_be_left_out(serve, client, l4_plan):
    url, _ = serve(l4_plan)
    reply = client.post(url + "/control", json={"action": "explode"})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "action"
    quiet, _ = serve(l4_plan, control=False)
    assert client.post(quiet + "/control", json={"action": "recover"}).status_code == 404


def test_a_full_queue_answers_429(serve, client, l4_plan):
    url, _ = serve(with_config(l4_plan, max_num_seqs=1, max_queue=1), speedup=5.0)
    with (
        httpx.Client(timeout=30) as first,
        first.stream(
            "POST", url + "/v1/completions", json={"model": MODEL, "prompt": "a", "max_tokens": 2000, "stream": True}
        ) as running,
    ):
        lines = running.iter_lines()  # kept: a dropped iterator closes the response (httpx)
        next(lines)  # running: the queue is empty
        with (
            httpx.Client(timeout=30) as second,
            second.stream(
                "POST", url + "/v1/completions", json={"model": MODEL, "prompt": "a", "max_tokens": 5, "stream": True}
            ) as waiting,
        ):
            assert waiting.status_code == 200  # queued behind the first (max_num_seqs 1)
            reply = completion(client, url, prompt="a", max_tokens=1)
            assert reply.status_code == 429
            assert reply.json()["error"]["type"] == "TooManyRequests"


def test_a_non_streamed_request_is_cancelled_when_its_client_gives_up(serve, l4_plan):
    url, _ = serve(l4_plan, speedup=5.0)
    # a 0.3 s read timeout against a reply of ~28 s (2000 tokens at speedup 5); the connection itself may take its time
    with httpx.Client(timeout=httpx.Timeout(30.0, read=0.3)) as client, pytest.raises(httpx.ReadTimeout):
        completion(client, url, prompt="a b", max_tokens=2000)
    with httpx.Client() as client:
        deadline = time.monotonic() + 30  # a deadline for it to happen, not a figure
        while metric_value(client.get(url + "/metrics").text, f"vllm:num_requests_running{LABELS}") != 0:
            assert time.monotonic() < deadline, "the request kept running after its client left"
            time.sleep(0.02)


def test_zero_delay_server_streams_many_requests_at_once(serve, h100_plan):
    """Zero-delay steps outrun the writer, so several SSE events share a write: each still parses, and every
    stream carries all its tokens."""
    url, _ = serve(h100_plan, speedup=math.inf)

    async def one(client: httpx.AsyncClient) -> list:
        reply = await client.post(
            url + "/v1/completions",
            json={
                "model": MODEL,
                "prompt": "a b c",
                "max_tokens": 64,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        return sse_events(reply.text)

    async def many() -> list[list]:
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=None)) as client:
            return await asyncio.gather(*(one(client) for _ in range(100)))

    for events in asyncio.run(many()):
        assert len(events) == 64 + 2
        assert events[-2]["usage"]["completion_tokens"] == 64


def test_metrics_show_the_simulated_gpus_memory_as_a_dcgm_exporter_would(serve, client, l4_plan) -> None:
    """An engine that reserves its budget at start holds it whatever the load; a killed replica's GPU holds nothing
    until it is back (what a GPU exporter shows when vLLM dies and restarts)."""
    url, _engine = serve(l4_plan)
    budget_mib = l4_plan.memory.required_bytes_per_gpu // (1024 * 1024)  # the budget and the CUDA graphs
    capacity_mib = l4_plan.memory.capacity_bytes_per_gpu // (1024 * 1024)
    text = client.get(url + "/metrics").text
    assert metric_value(text, 'DCGM_FI_DEV_FB_USED{gpu="0",modelName="simulated"}') == budget_mib
    assert metric_value(text, 'DCGM_FI_DEV_FB_FREE{gpu="0",modelName="simulated"}') == capacity_mib - budget_mib
    client.post(url + "/control", json={"action": "kill_replica", "replica": 0, "seconds": 30})
    text = client.get(url + "/metrics").text
    assert metric_value(text, 'DCGM_FI_DEV_FB_USED{gpu="0",modelName="simulated"}') == 0

"""Scraping the server's Prometheus metrics during a run (`llm_sizing_loadgen.scrape`): the kept lines, the
interval and the clock, failures recorded as errors (never zeros), the API key header, the CLI flags, and the
scrapes read back by the importer into a timeline. Runs are on a virtual-time loop (`tests.loadgen.virtual_time`),
against the simulator in-process where it helps, so the scrape times are exact; the tests over a real socket (a
dead port, a 404, the CLI) assert what was answered, not when. No database."""

from __future__ import annotations

import asyncio
import doctest
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks_app.results import timeline as timeline_module
from benchmarks_app.results.detect import import_text
from benchmarks_app.simserver.engine import SimEngine
from benchmarks_app.simserver.truth import free_port
from llm_sizing_loadgen import scrape as scrape_module
from llm_sizing_loadgen.__main__ import EXIT_INVALID, EXIT_OK, main
from llm_sizing_loadgen.client import Status
from llm_sizing_loadgen.plan import MetricsSpec, PlanError, plan_from_dict
from llm_sizing_loadgen.result import result_document, result_json
from llm_sizing_loadgen.runner import LoadRunner, RunOutcome, run_plan, run_points
from llm_sizing_loadgen.scrape import KEPT_METRICS, MetricsScraper, ScrapeSample, keep_known_lines
from tests.loadgen.conftest import SIM_GPU, SIM_MODEL, SIM_SERVED_NAME
from tests.loadgen.streams import FakeServer
from tests.loadgen.virtual_time import VirtualClock, run_virtual
from tests.simserver.inprocess import catalog_engine, inprocess_simulator

Serve = Callable[..., tuple[str, SimEngine]]
VLLM_EXPOSITION = """# HELP vllm:num_requests_running Requests in the running batch.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="llama",engine="0"} 3
vllm:kv_cache_usage_perc{model_name="llama",engine="0"} 0.25
vllm:time_to_first_token_seconds_bucket{model_name="llama",engine="0",le="0.1"} 7
vllm:num_preemptions_total{model_name="llama",engine="0"} 0
simserver_speedup 10.0
process_start_time_seconds 1767225600.0
"""


def _plan(url: str, **overrides: Any):
    data: dict[str, Any] = {
        "endpoint": {"base_url": url, "model": "llama"},
        "load": {"concurrency": 4},
        "requests": {"input_tokens": 256, "output_tokens": 32},
        "bounds": {"max_requests": 8},
    }
    data.update(overrides)
    return plan_from_dict(data)


def _virtual(plan, transport: httpx.AsyncBaseTransport, **options: Any) -> RunOutcome:
    """One run of the plan on a virtual-time loop."""
    return run_virtual(lambda clock: LoadRunner(plan, transport=transport, clock=clock, **options).run())


def _imported(outcome):
    fmt, runs = import_text(result_json(result_document(outcome)))
    assert fmt == "llm_sizing"
    return runs[0]


def test_the_module_examples_hold() -> None:
    # when
    result = doctest.testmod(scrape_module)

    # then
    assert (result.failed, result.attempted > 0) == (0, True)


def test_only_the_lines_of_the_metrics_a_timeline_reads_are_kept() -> None:
    # when
    kept = keep_known_lines(VLLM_EXPOSITION)

    # then: HELP/TYPE lines, histograms and the simulator's own series are dropped
    assert kept == (
        'vllm:num_requests_running{model_name="llama",engine="0"} 3\n'
        'vllm:kv_cache_usage_perc{model_name="llama",engine="0"} 0.25\n'
        'vllm:num_preemptions_total{model_name="llama",engine="0"} 0\n'
        "process_start_time_seconds 1767225600.0\n"
    )
    assert keep_known_lines("# nothing here\nfoo 1\n") == ""


def test_the_kept_names_are_the_names_the_timeline_reads() -> None:
    # then: the wheel cannot import the timeline module, so the list is written twice and kept equal here
    read = (
        set(timeline_module.SERVER)
        | set(timeline_module.SERVER_LABELLED)
        | set(timeline_module.DCGM)
        | {"process_start_time_seconds"}
    )
    assert read == KEPT_METRICS


def test_scrapes_are_taken_at_the_interval_and_show_the_kv_cache_in_use() -> None:
    # given: 8 clients for 1.1 s against the simulator (in-process), scraped every 0.25 s
    url = "http://simulator.test"
    seen: list[ScrapeSample] = []
    plan = _plan(
        url,
        load={"concurrency": 8},
        requests={"input_tokens": 512, "output_tokens": 64},
        bounds={"max_duration_s": 1.1},
        metrics={"url": f"{url}/metrics", "interval_s": 0.25},
    )
    engine, max_model_len = catalog_engine(model=SIM_MODEL, gpu=SIM_GPU, speedup=10.0)

    async def scenario(clock: VirtualClock) -> list[RunOutcome]:
        async with inprocess_simulator(engine, model_name=SIM_SERVED_NAME, max_model_len=max_model_len) as transport:
            return await run_points(plan, transport=transport, clock=clock, on_scrape=seen.append)

    # when
    [outcome] = run_virtual(scenario)

    # then: one scrape at t = 0 and every 0.25 s after it (1.25 s is past the stop), the last right at the stop
    scrapes = outcome.scrapes
    assert seen == scrapes
    assert all(sample.ok for sample in scrapes), [sample.error for sample in scrapes]
    assert [sample.t_s for sample in scrapes] == [0.0, 0.25, 0.5, 0.75, 1.0, 1.1]
    assert outcome.seconds(outcome.send_end_ns) == 1.1
    started = outcome.started_at.timestamp()
    assert all(abs(sample.time - (started + sample.t_s)) < 1e-5 for sample in scrapes)
    assert all("vllm:time_to_first_token" not in (sample.text or "") for sample in scrapes)

    # then: read back, the timeline shows the 8 requests and their KV cache during the load (at t = 0 the scrape
    # came before the requests reached the engine; after the stop they were cancelled)
    run = _imported(outcome)
    [server] = run.timeline.servers
    assert server.engine == "vllm"
    assert [sample.requests_running for sample in server.samples] == [0.0] + [8.0] * 4 + [0.0]
    assert all(0 < (sample.kv_cache_usage or 0.0) < 0.05 for sample in server.samples[1:-1])
    assert server.samples[0].time_s == pytest.approx(started, abs=1e-5)


def test_a_dead_metrics_url_gives_errors_not_zeros() -> None:
    # given: the metrics URL refuses connections (a transport raising what httpx raises for a closed port)
    fake = FakeServer()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return await fake.handle(request)

    plan = _plan(
        "http://llm.test", bounds={"max_duration_s": 0.7}, metrics={"url": "http://llm.test/metrics", "interval_s": 0.2}
    )

    # when
    outcome = _virtual(plan, httpx.MockTransport(handler))

    # then: every scrape (t = 0, 0.2, 0.4, 0.6 and the stop at 0.7) failed with its reason; the run went on
    assert [sample.t_s for sample in outcome.scrapes] == [0.0, 0.2, 0.4, 0.6, 0.7]
    assert {(sample.text, sample.error) for sample in outcome.scrapes} == {
        (None, "cannot connect: [Errno 111] Connection refused")
    }
    assert any(record.status is Status.OK for record in outcome.records)
    document = result_document(outcome)
    assert all(set(entry) == {"t_s", "time", "error"} for entry in document["server_metrics"]["scrapes"])
    run = _imported(outcome)
    assert run.timeline is None
    assert any(note.startswith("5 scrape(s) failed") for note in run.notes)
    assert any(note.startswith("5 of 5 metrics scrape(s) failed") for note in outcome.notes)


def test_a_closed_port_is_a_connection_error() -> None:
    # given: nothing listens on the metrics port (a real socket)
    scraper = MetricsScraper(MetricsSpec(url=f"http://127.0.0.1:{free_port()}/metrics", interval_s=1.0))

    async def scenario() -> ScrapeSample:
        try:
            return await scraper.scrape()
        finally:
            await scraper.stop(final=False)

    # when
    sample = asyncio.run(scenario())

    # then
    assert sample.text is None
    assert (sample.error or "").startswith("cannot connect: ")


def test_a_non_200_answer_is_an_error(simserver: Serve) -> None:
    # given: a path the simulator does not serve
    url, _ = simserver(speedup=10.0)
    plan = _plan(url, bounds={"max_requests": 2}, metrics={"url": f"{url}/no-metrics-here", "interval_s": 1})

    # when
    [outcome] = run_plan(plan)

    # then
    assert {(sample.error or "")[:8] for sample in outcome.scrapes} == {"HTTP 404"}


def test_a_server_that_never_answers_times_out_after_the_interval() -> None:
    # given: a server that never answers (a transport that honours the request's read timeout, as httpcore does)
    asked: list[dict[str, float]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.extensions["timeout"])
        await asyncio.sleep(request.extensions["timeout"]["read"])
        raise httpx.ReadTimeout("timed out", request=request)

    async def scenario(clock: VirtualClock) -> tuple[ScrapeSample, int]:
        scraper = MetricsScraper(
            MetricsSpec(url="http://llm.test/metrics", interval_s=0.3),
            clock=clock,
            transport=httpx.MockTransport(handler),
        )
        began = clock()
        try:
            sample = await scraper.scrape()
        finally:
            await scraper.stop(final=False)
        return sample, clock() - began

    # when
    sample, took_ns = run_virtual(scenario)

    # then: the timeout is the interval (at most 5 s), on every phase of the request
    assert asked == [{"connect": 0.3, "read": 0.3, "write": 0.3, "pool": 0.3}]
    assert took_ns == 300_000_000
    assert (sample.text, sample.error) == (None, "no answer within 0.3 s (ReadTimeout)")


def test_a_silent_socket_times_out() -> None:
    # given: a real socket that accepts and never answers
    async def scenario() -> ScrapeSample:
        closed = asyncio.Event()

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1 << 16)
            await reader.read()  # until the client gives up and closes
            writer.close()
            closed.set()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        scraper = MetricsScraper(MetricsSpec(url=f"http://127.0.0.1:{port}/metrics", interval_s=0.3))
        try:
            return await asyncio.wait_for(scraper.scrape(), 20)  # a deadline against hanging, not a figure
        finally:
            await scraper.stop(final=False)
            await asyncio.wait_for(closed.wait(), 20)
            server.close()

    # when
    sample = asyncio.run(scenario())

    # then: httpx enforced the timeout the scraper set
    assert sample.text is None
    assert sample.error == "no answer within 0.3 s (ReadTimeout)"


def test_the_api_key_is_sent_with_the_scrapes_and_recorded_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    # given: a fake server behind one transport, answering /metrics too, and a key in the environment
    monkeypatch.setenv("LLM_TEST_KEY", "sk-very-secret")
    fake = FakeServer()
    metric_headers: list[httpx.Headers] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            metric_headers.append(request.headers)
            return httpx.Response(200, text=VLLM_EXPOSITION)
        return await fake.handle(request)

    plan = _plan(
        "http://llm.test",
        endpoint={"base_url": "http://llm.test", "model": "llama", "api_key_env": "LLM_TEST_KEY"},
        metrics={"url": "http://llm.test/metrics", "interval_s": 0.2},
    )

    # when
    outcome = _virtual(plan, httpx.MockTransport(handler))

    # then: 8 requests of 2 + 31 × 1 ms on 4 clients end at 66 ms: scrapes at t = 0 and at the stop
    assert [sample.t_s for sample in outcome.scrapes] == [0.0, 0.066]
    assert len(metric_headers) == 2
    assert {headers["authorization"] for headers in metric_headers} == {"Bearer sk-very-secret"}
    assert "sk-very-secret" not in result_json(result_document(outcome))
    assert outcome.scrapes[0].text == keep_known_lines(VLLM_EXPOSITION)


def test_cancelling_stops_the_scraper_with_a_last_scrape() -> None:
    # given: long streams, scraped every 0.2 s; a cancel at 0.5 s
    fake = FakeServer(itl_s=0.02)

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(200, text=VLLM_EXPOSITION)
        return await fake.handle(request)

    plan = _plan(
        "http://llm.test",
        requests={"input_tokens": 16, "output_tokens": 1000},
        bounds={"max_duration_s": 60},
        metrics={"url": "http://llm.test/metrics", "interval_s": 0.2},
    )

    async def scenario(clock: VirtualClock) -> tuple[RunOutcome, int]:
        runner = LoadRunner(plan, transport=httpx.MockTransport(handler), clock=clock)
        task = asyncio.create_task(runner.run())
        while not runner.started:  # no time passes while the run sets up: it starts at this instant
            await asyncio.sleep(0)
        await asyncio.sleep(0.5)
        runner.cancel()
        outcome = await task
        count = len(outcome.scrapes)
        await asyncio.sleep(0.5)  # nothing scrapes any more
        return outcome, count

    # when
    outcome, count = run_virtual(scenario)

    # then: t = 0, 0.2, 0.4 and the last one at the cancel
    assert outcome.stop_reason == "cancelled"
    assert count == len(outcome.scrapes)
    assert [sample.t_s for sample in outcome.scrapes] == [0.0, 0.2, 0.4, 0.5]
    assert outcome.seconds(outcome.send_end_ns) == 0.5


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    return main(list(argv), stdout=io.StringIO(), stderr=err), err.getvalue()


def test_the_cli_scrapes_with_the_metrics_flags_and_says_how_many(simserver: Serve, tmp_path: Path) -> None:
    # given
    url, _ = simserver(speedup=10.0)
    result = tmp_path / "r.json"

    # when: over a real socket (a scrape's timeout is its interval: 5 s, time enough on any machine)
    code, err = _cli(
        "run",
        "--base-url",
        url,
        "--model",
        "llama",
        "--concurrency",
        "2",
        "--requests",
        "6",
        "--input-tokens",
        "32",
        "--output-tokens",
        "8",
        "--metrics-url",
        f"{url}/metrics",
        "--scrape-interval",
        "5",
        "--out",
        str(result),
        "--quiet",
    )

    # then: done (3 says the client fell behind, which the machine's load decides: the simulator shares this
    # process's GIL); at least the scrapes at t = 0 and at the end, as many as the line says
    document = json.loads(result.read_text())
    scrapes = document["server_metrics"]["scrapes"]
    failed = sum(1 for scrape in scrapes if "error" in scrape)
    assert code == (EXIT_OK if document["summary"]["client_fidelity"]["valid"] else EXIT_INVALID), err
    assert document["server_metrics"]["interval_s"] == 5.0
    assert len(scrapes) >= 2
    assert f"; scrapes {len(scrapes)} ({failed} failed)" in err
    assert import_text(result.read_text())[1][0].timeline.servers[0].engine == "vllm"


def test_the_metrics_flags_override_a_plan_file(tmp_path: Path) -> None:
    # given
    from llm_sizing_loadgen.__main__ import _plan_for_run, build_parser

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(
        json.dumps(
            {
                "endpoint": {"base_url": "http://a:1", "model": "m"},
                "load": {"concurrency": 1},
                "requests": {"input_tokens": 4, "output_tokens": 4},
                "bounds": {"max_requests": 1},
                "metrics": {"url": "http://a:1/metrics", "engine": "sglang"},
            }
        )
    )
    parser = build_parser()

    # when
    moved = _plan_for_run(
        parser.parse_args(
            ["run", str(plan_file), "--out", "r.json", "--metrics-url", "http://b:2/metrics", "--scrape-interval", "5"]
        )
    )
    kept = _plan_for_run(parser.parse_args(["run", str(plan_file), "--out", "r.json"]))

    # then
    assert moved.metrics == MetricsSpec(url="http://b:2/metrics", interval_s=5.0, engine="sglang")
    assert kept.metrics == MetricsSpec(url="http://a:1/metrics", interval_s=1.0, engine="sglang")
    with pytest.raises(PlanError, match="--scrape-interval needs --metrics-url"):
        _plan_for_run(
            parser.parse_args(
                [
                    "run",
                    "--base-url",
                    "http://a:1",
                    "--model",
                    "m",
                    "--concurrency",
                    "1",
                    "--requests",
                    "1",
                    "--input-tokens",
                    "4",
                    "--output-tokens",
                    "4",
                    "--scrape-interval",
                    "2",
                    "--out",
                    "r.json",
                ]
            )
        )
    with pytest.raises(PlanError, match=r"metrics.interval_s: must be between 0.2 and 60 seconds \(got 0.1\)"):
        _plan_for_run(parser.parse_args(["run", str(plan_file), "--out", "r.json", "--scrape-interval", "0.1"]))

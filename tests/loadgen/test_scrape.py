"""Scraping the server's Prometheus metrics during a run (`benchmarks_app.loadgen.scrape`): the kept lines, the
interval and the clock, failures recorded as errors (never zeros), the API key header, the CLI flags, and the
scrapes read back by the importer into a timeline. Against the simulator where it helps. No database."""

from __future__ import annotations

import asyncio
import doctest
import io
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks_app.loadgen import scrape as scrape_module
from benchmarks_app.loadgen.__main__ import EXIT_INVALID, EXIT_OK, main
from benchmarks_app.loadgen.client import Status
from benchmarks_app.loadgen.plan import MetricsSpec, PlanError, plan_from_dict
from benchmarks_app.loadgen.result import result_document, result_json
from benchmarks_app.loadgen.runner import LoadRunner, run_plan
from benchmarks_app.loadgen.scrape import KEPT_METRICS, MetricsScraper, ScrapeSample, keep_known_lines
from benchmarks_app.simserver.engine import SimEngine
from benchmarks_app.simserver.truth import free_port
from sizing.benchmarks import timeline as timeline_module
from sizing.benchmarks.detect import import_text
from tests.loadgen.streams import FakeServer

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
    data: dict[str, Any] = {"endpoint": {"base_url": url, "model": "llama"}, "load": {"concurrency": 4},
                            "requests": {"input_tokens": 256, "output_tokens": 32}, "bounds": {"max_requests": 8}}
    data.update(overrides)
    return plan_from_dict(data)


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
    assert kept == ('vllm:num_requests_running{model_name="llama",engine="0"} 3\n'
                    'vllm:kv_cache_usage_perc{model_name="llama",engine="0"} 0.25\n'
                    'vllm:num_preemptions_total{model_name="llama",engine="0"} 0\n'
                    "process_start_time_seconds 1767225600.0\n")
    assert keep_known_lines("# nothing here\nfoo 1\n") == ""


def test_the_kept_names_are_the_names_the_timeline_reads() -> None:
    # then: the wheel cannot import the timeline module, so the list is written twice and kept equal here
    read = (set(timeline_module._SERVER) | set(timeline_module._SERVER_LABELLED) | set(timeline_module._DCGM)
            | {"process_start_time_seconds"})
    assert read == KEPT_METRICS


def test_scrapes_are_taken_at_the_interval_and_show_the_kv_cache_in_use(simserver: Serve) -> None:
    # given: 16 clients for 1.6 s, scraped every 0.25 s
    url, _ = simserver(speedup=10.0)
    seen: list[ScrapeSample] = []
    plan = _plan(url, load={"concurrency": 16}, requests={"input_tokens": 512, "output_tokens": 64},
                 bounds={"max_duration_s": 1.6}, metrics={"url": f"{url}/metrics", "interval_s": 0.25})

    # when
    [outcome] = run_plan(plan, on_scrape=seen.append)

    # then: one scrape at t = 0 and every 0.25 s after it, the last right after the stop
    scrapes = outcome.scrapes
    periodic, last = scrapes[:-1], scrapes[-1]
    assert seen == scrapes
    assert all(sample.ok for sample in scrapes), [sample.error for sample in scrapes]
    assert len(periodic) in (6, 7)  # t = 0, 0.25, ..., 1.5 (< 1.6 s); a tick late past the stop is not taken
    assert periodic[0].t_s < 0.05
    gaps = [b.t_s - a.t_s for a, b in itertools.pairwise(periodic)]
    assert all(0.1 < gap < 0.4 for gap in gaps), gaps
    assert sum(abs(sample.t_s - 0.25 * round(sample.t_s / 0.25)) for sample in periodic) / len(periodic) < 0.05
    assert last.t_s >= outcome.seconds(outcome.send_end_ns)
    started = outcome.started_at.timestamp()
    assert all(abs(sample.time - (started + sample.t_s)) < 1e-5 for sample in scrapes)
    assert all("vllm:time_to_first_token" not in (sample.text or "") for sample in scrapes)

    # then: read back, the timeline shows the KV cache in use during the load
    run = _imported(outcome)
    [server] = run.timeline.servers
    assert server.engine == "vllm"
    assert len(server.samples) == len(scrapes)
    assert max(sample.kv_cache_usage or 0.0 for sample in server.samples) > 0
    assert max(sample.requests_running or 0.0 for sample in server.samples) >= 8
    assert server.samples[0].time_s == pytest.approx(started, abs=0.05)


def test_a_dead_metrics_url_gives_errors_not_zeros(simserver: Serve) -> None:
    # given: nothing listens on the metrics port
    url, _ = simserver(speedup=10.0)
    dead = f"http://127.0.0.1:{free_port()}/metrics"
    plan = _plan(url, bounds={"max_duration_s": 0.7}, metrics={"url": dead, "interval_s": 0.2})

    # when
    [outcome] = run_plan(plan)

    # then: every scrape failed with its reason; the run went on
    assert len(outcome.scrapes) >= 4
    assert all(sample.text is None and (sample.error or "").startswith("cannot connect") for sample in
               outcome.scrapes)
    assert any(record.status is Status.OK for record in outcome.records)
    document = result_document(outcome)
    assert all(set(entry) == {"t_s", "time", "error"} for entry in document["server_metrics"]["scrapes"])
    run = _imported(outcome)
    assert run.timeline is None
    assert any(note.startswith(f"{len(outcome.scrapes)} scrape(s) failed") for note in run.notes)
    assert any("metrics scrape(s) failed" in note for note in outcome.notes)


def test_a_non_200_answer_is_an_error(simserver: Serve) -> None:
    # given: a path the simulator does not serve
    url, _ = simserver(speedup=10.0)
    plan = _plan(url, bounds={"max_requests": 2}, metrics={"url": f"{url}/no-metrics-here", "interval_s": 1})

    # when
    [outcome] = run_plan(plan)

    # then
    assert {(sample.error or "")[:8] for sample in outcome.scrapes} == {"HTTP 404"}


def test_a_server_that_never_answers_times_out_after_the_interval() -> None:
    # given: a socket that accepts and never answers
    async def scenario() -> tuple[ScrapeSample, float]:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1 << 16)
            await asyncio.sleep(10)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        scraper = MetricsScraper(MetricsSpec(url=f"http://127.0.0.1:{port}/metrics", interval_s=0.3))
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            sample = await scraper.scrape()
        finally:
            await scraper.stop(final=False)
            server.close()
        return sample, loop.time() - began

    # when
    sample, took = asyncio.run(scenario())

    # then: the timeout is the interval (at most 5 s)
    assert sample.text is None
    assert (sample.error or "").startswith("no answer within 0.3 s")
    assert took == pytest.approx(0.3, abs=0.2)


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

    plan = _plan("http://llm.test", endpoint={"base_url": "http://llm.test", "model": "llama",
                                              "api_key_env": "LLM_TEST_KEY"},
                 metrics={"url": "http://llm.test/metrics", "interval_s": 0.2})

    # when
    outcome = asyncio.run(LoadRunner(plan, transport=httpx.MockTransport(handler)).run())

    # then
    assert len(metric_headers) == len(outcome.scrapes) >= 2
    assert {headers["authorization"] for headers in metric_headers} == {"Bearer sk-very-secret"}
    assert "sk-very-secret" not in result_json(result_document(outcome))
    assert outcome.scrapes[0].text == keep_known_lines(VLLM_EXPOSITION)


def test_cancelling_stops_the_scraper_with_a_last_scrape() -> None:
    # given: long streams, scraped every 0.2 s
    fake = FakeServer(itl_s=0.02)

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(200, text=VLLM_EXPOSITION)
        return await fake.handle(request)

    plan = _plan("http://llm.test", requests={"input_tokens": 16, "output_tokens": 1000},
                 bounds={"max_duration_s": 60}, metrics={"url": "http://llm.test/metrics", "interval_s": 0.2})
    runner = LoadRunner(plan, transport=httpx.MockTransport(handler))

    async def scenario():
        task = asyncio.create_task(runner.run())
        while not runner.started:  # the run collects garbage before its clock starts: long in a big test process
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        runner.cancel()
        outcome = await asyncio.wait_for(task, 5)
        count = len(outcome.scrapes)
        await asyncio.sleep(0.5)  # nothing scrapes any more
        return outcome, count

    # when
    outcome, count = asyncio.run(scenario())

    # then
    assert outcome.stop_reason == "cancelled"
    assert count == len(outcome.scrapes)
    assert 3 <= count <= 5  # t = 0, 0.2, 0.4 and the last one after the cancel
    assert outcome.scrapes[-1].t_s >= outcome.seconds(outcome.send_end_ns)


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    return main(list(argv), stdout=io.StringIO(), stderr=err), err.getvalue()


def test_the_cli_scrapes_with_the_metrics_flags_and_says_how_many(simserver: Serve, tmp_path: Path) -> None:
    # given
    url, _ = simserver(speedup=10.0)
    result = tmp_path / "r.json"

    # when
    code, err = _cli("run", "--base-url", url, "--model", "llama", "--concurrency", "2", "--requests", "6",
                     "--input-tokens", "32", "--output-tokens", "8", "--metrics-url", f"{url}/metrics",
                     "--scrape-interval", "0.2", "--out", str(result), "--quiet")

    # then: done (3 would say the client fell behind: the simulator shares this process's GIL on a busy machine)
    document = json.loads(result.read_text())
    taken = len(document["server_metrics"]["scrapes"])
    assert code in (EXIT_OK, EXIT_INVALID), err
    assert document["server_metrics"]["interval_s"] == 0.2
    assert f"; scrapes {taken} (0 failed)" in err
    assert import_text(result.read_text())[1][0].timeline.servers[0].engine == "vllm"


def test_the_metrics_flags_override_a_plan_file(tmp_path: Path) -> None:
    # given
    from benchmarks_app.loadgen.__main__ import _plan_for_run, build_parser

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"endpoint": {"base_url": "http://a:1", "model": "m"},
                                     "load": {"concurrency": 1}, "requests": {"input_tokens": 4, "output_tokens": 4},
                                     "bounds": {"max_requests": 1},
                                     "metrics": {"url": "http://a:1/metrics", "engine": "sglang"}}))
    parser = build_parser()

    # when
    moved = _plan_for_run(parser.parse_args(["run", str(plan_file), "--out", "r.json", "--metrics-url",
                                             "http://b:2/metrics", "--scrape-interval", "5"]))
    kept = _plan_for_run(parser.parse_args(["run", str(plan_file), "--out", "r.json"]))

    # then
    assert moved.metrics == MetricsSpec(url="http://b:2/metrics", interval_s=5.0, engine="sglang")
    assert kept.metrics == MetricsSpec(url="http://a:1/metrics", interval_s=1.0, engine="sglang")
    with pytest.raises(PlanError, match="--scrape-interval needs --metrics-url"):
        _plan_for_run(parser.parse_args(["run", "--base-url", "http://a:1", "--model", "m", "--concurrency", "1",
                                         "--requests", "1", "--input-tokens", "4", "--output-tokens", "4",
                                         "--scrape-interval", "2", "--out", "r.json"]))
    with pytest.raises(PlanError, match=r"metrics.interval_s: must be between 0.2 and 60 seconds \(got 0.1\)"):
        _plan_for_run(parser.parse_args(["run", str(plan_file), "--out", "r.json", "--scrape-interval", "0.1"]))

"""The result document: hand-checked request entries, its pydantic model (`schemas.ResultDocument`) and the JSON
Schema written from it (docs/loadgen-result.schema.json), and the round trip through the benchmark importer
(`benchmarks_app.results.detect.import_text`). Runs use a fake server on a virtual-time loop
(`tests.loadgen.virtual_time`), so their timings are exact. No database."""

from __future__ import annotations

import copy
import json
import re
import typing
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from benchmarks_app.results.detect import import_text
from llm_sizing_loadgen import result as result_module
from llm_sizing_loadgen import schemas
from llm_sizing_loadgen.client import RequestResult, Status
from llm_sizing_loadgen.plan import plan_from_dict
from llm_sizing_loadgen.result import (
    request_entry,
    result_document,
    result_json,
    result_paths,
    write_result,
)
from llm_sizing_loadgen.runner import LoadRunner, RunOutcome
from llm_sizing_loadgen.schemas import (
    RequestStatusName,
    ResultDocument,
    ResultFault,
    ResultScenario,
    ResultServerMetrics,
    result_schema,
)
from tests.loadgen.streams import MS, FakeServer
from tests.loadgen.virtual_time import run_virtual

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "loadgen-result.schema.json"
SCHEMA = result_schema()  # written from the pydantic models (llm_sizing_loadgen.schemas)
T0 = 7_000 * MS


def _validate(document: dict[str, Any]) -> list[str]:
    return [f"{list(error.path)}: {error.message}" for error in Draft202012Validator(SCHEMA).iter_errors(document)]


def _run(server: FakeServer, **overrides: Any) -> RunOutcome:
    data: dict[str, Any] = {
        "endpoint": {"base_url": "http://llm.test", "api": "chat", "model": "llama", "engine": "fake 1.0"},
        "load": {"concurrency": 3},
        "requests": {"input_tokens": 24, "output_tokens": 5},
        "bounds": {"max_requests": 12},
    }
    data.update(overrides)
    plan = plan_from_dict(data)
    return run_virtual(lambda clock: LoadRunner(plan, transport=server.transport, clock=clock).run())


def _hand_record() -> RequestResult:
    """Scheduled at 100 ms, sent at 100.5 ms, content events at 110.5, 115.5 and 125.5 ms, usage at 126.5 ms."""
    return RequestResult(
        index=4,
        t_sched_ns=T0 + 100 * MS,
        input_tokens_sent=500,
        output_tokens_target=4,
        t_send_ns=T0 + 100_500_000,
        t_hdr_ns=T0 + 102 * MS,
        t_end_ns=T0 + 126_500_000,
        event_ns=array("q", [T0 + 110_500_000, T0 + 115_500_000, T0 + 125_500_000]),
        event_tokens=array("q", [1, 2, 1]),
        status=Status.OK,
        http_status=200,
        input_tokens=498,
        output_tokens=4,
        output_tokens_source="usage",
        cached_tokens=16,
        finish_reason="length",
    )


def test_a_request_entry_by_hand() -> None:
    # when
    entry = request_entry(_hand_record(), T0)

    # then: TTFT 110.5 − 100.5 = 10 ms; TTFT_sched 10.5 ms; gaps 5 and 10 ms; E2E 126.5 − 100.5 = 26 ms
    assert entry == {
        "id": 4,
        "status": "ok",
        "error": None,
        "http_status": 200,
        "timeout_phase": None,
        "t_sched_s": 0.1,
        "t_send_s": 0.1005,
        "ttft_ms": 10.0,
        "ttft_sched_ms": 10.5,
        "e2e_ms": 26.0,
        "itl_ms": [5.0, 10.0],
        "chunk_tokens": [1, 2, 1],
        "input_tokens": 498,
        "input_tokens_sent": 500,
        "output_tokens": 4,
        "output_tokens_source": "usage",
        "cached_tokens": 16,
        "finish_reason": "length",
    }


def test_the_hand_checked_request_imports_with_its_ttft_and_tpot() -> None:
    # given: a run document around the hand-made request (window [0, 1] s)
    server = FakeServer()
    outcome = _run(server, bounds={"max_requests": 1})
    outcome.records = [_hand_record()]
    outcome.t0_ns = T0
    outcome.window_s = (0.0, 1.0)
    outcome.end_ns = T0 + 126_500_000
    document = result_document(outcome)

    # when
    fmt, runs = import_text(result_json(document))

    # then: TPOT = (15 ms of gaps) / (N_out 4 − n_1 1) = 5 ms
    run = runs[0]
    assert _validate(document) == []
    assert fmt == "llm_sizing"
    assert (run.completed, run.failed, run.incomplete) == (1, 0, 0)
    assert run.metrics["ttft_ms"].mean == 10.0
    assert run.metrics["ttft_sched_ms"].mean == 10.5
    assert run.metrics["tpot_ms"].mean == 5.0
    assert run.metrics["e2e_ms"].mean == 26.0
    assert run.model == "llama"
    assert run.backend == "openai-chat"


def test_a_run_with_errors_validates_and_imports_with_its_counts() -> None:
    # given: every third request answered 503
    outcome = _run(FakeServer(fail_every=3))
    document = result_document(outcome)

    # when
    fmt, runs = import_text(result_json(document))

    # then
    run = runs[0]
    ok = [r for r in outcome.records if r.status is Status.OK]
    assert _validate(document) == []
    assert (fmt, run.completed, run.failed, run.incomplete) == ("llm_sizing", 8, 4, 0)
    expected_ttft = sum(round(r.ttft_ns / MS, 3) for r in ok) / len(ok)
    assert run.metrics["ttft_ms"].mean == pytest.approx(expected_ttft, abs=1e-9)
    assert run.load.kind == "concurrency"
    assert run.load.concurrency == 3
    assert document["summary"]["statuses"] == {"http_error": 4, "ok": 8}
    assert document["summary"]["in_window"] == {"requests": 12, "completed": 8, "incomplete": 0, "failed": 4}
    failed = [entry for entry in document["requests"] if entry["status"] == "http_error"]
    assert {(entry["http_status"], entry["error"], entry["ttft_ms"]) for entry in failed} == {
        (503, "HTTP 503: overloaded", None)
    }


def test_an_open_loop_cut_by_its_duration_imports_its_incomplete_requests() -> None:
    # given: 40 requests/s (25 ms apart), requests of 50 + 4 × 40 = 210 ms, a 0.5 s bound
    outcome = _run(
        FakeServer(ttft_s=0.05, itl_s=0.04),
        load={"mode": "open", "rate": 40, "arrival": "constant"},
        bounds={"max_duration_s": 0.5},
    )
    document = result_document(outcome)

    # when
    _, runs = import_text(result_json(document))

    # then: 20 sent (0 to 475 ms); the 12 sent by 275 ms ended by 485 ms, the 8 sent from 300 ms were cut at 0.5 s
    run = runs[0]
    assert [r.status for r in outcome.records] == [Status.OK] * 12 + [Status.INCOMPLETE_AT_END] * 8
    assert _validate(document) == []
    assert (run.completed, run.failed, run.incomplete) == (12, 0, 8)
    assert document["run"]["load"] == {"kind": "rate", "rate": 40.0, "concurrency": None, "arrival": "constant"}
    assert document["run"]["window"]["end_s"] == 0.5
    assert run.load.rate == 40.0


def test_the_summary_and_settings_say_how_it_was_run() -> None:
    # given
    outcome = _run(FakeServer(), warmup_s=0.0, seed=9, extra_body={"temperature": 0})

    # when
    document = result_document(outcome)

    # then
    settings = document["run"]["settings"]
    summary = document["summary"]
    assert (settings["dataset"], settings["input_len"], settings["output_len"], settings["seed"]) == (
        "random",
        24,
        5,
        9,
    )
    assert settings["plan"]["extra_body"] == {"temperature": 0}
    assert document["run"]["endpoint"] == {"kind": "openai-chat", "model": "llama", "engine": "fake 1.0"}
    assert document["tool"] == {"name": "llm-sizing-loadgen", "version": "0.1.0"}
    assert document["run"]["started_at"].endswith("Z")
    assert summary["metrics"]["ttft_ms"]["n"] == 12
    assert summary["metrics"]["ttft_ms"]["p95"] is None  # n = 12: no p95 (needs 20) nor p99 (needs 100)
    assert summary["metrics"]["ttft_ms"]["p90"] is not None
    assert summary["client_fidelity"]["valid"] is True
    assert summary["validation"] == {"over_max_tokens": 0, "no_usage": 0, "chunking_unknown": 0}


def test_result_json_is_the_document_and_the_file_is_written_whole(tmp_path: Path) -> None:
    # given
    outcome = _run(FakeServer(), bounds={"max_requests": 3})
    document = result_document(outcome)

    # when
    path = write_result(outcome, tmp_path / "out" / "result.json")

    # then: one request per line, nothing left behind
    text = path.read_text()
    assert json.loads(text)["requests"] == document["requests"]
    assert len([line for line in text.splitlines() if line.startswith('  {"id"')]) == 3
    assert sorted(p.name for p in path.parent.iterdir()) == ["result.json"]
    empty = {**document, "requests": []}
    assert json.loads(result_json(empty)) == empty


def test_sweep_results_go_beside_the_named_file() -> None:
    # when / then
    assert result_paths("out/result.json", [""]) == [Path("out/result.json")]
    assert result_paths("out/result.json", ["rate-1", "rate-2.5"]) == [
        Path("out/result.rate-1.json"),
        Path("out/result.rate-2.5.json"),
    ]


# ---------------------------------------------------------------------------------------------------------------
# Server metrics, faults and the scenario (issue 7)


def _metrics_transport(server: FakeServer) -> httpx.MockTransport:
    """`server`, answering /metrics with one kept line too."""

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/metrics":
            return httpx.Response(
                200, text='# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine="0"} 0.5\n'
            )
        return await server.handle(request)

    return httpx.MockTransport(handler)


BLOCKS_PLAN: dict[str, Any] = {
    "endpoint": {"base_url": "http://llm.test", "api": "chat", "model": "llama"},
    "load": {"concurrency": 3},
    "requests": {"input_tokens": 24, "output_tokens": 5},
    "bounds": {"max_requests": 6, "max_duration_s": 30},
    "metrics": {"url": "http://llm.test/metrics", "interval_s": 0.5, "engine": "vllm"},
    "faults": [{"at_s": 20, "command": ["true"], "label": "too late"}],
    "scenario": {"kind": "custom", "criteria": {"ttft_ms": 500}},
}


def test_server_metrics_faults_and_the_scenario_are_written_and_read_back() -> None:
    # given: a fake server that answers /metrics too; a fault due after the end; a scenario
    plan = plan_from_dict(BLOCKS_PLAN)
    outcome = run_virtual(lambda clock: LoadRunner(plan, transport=_metrics_transport(FakeServer()), clock=clock).run())

    # when
    document = result_document(outcome)
    fmt, runs = import_text(result_json(document))

    # then
    metrics = document["server_metrics"]
    assert _validate(document) == []
    assert (metrics["url"], metrics["interval_s"], metrics["engine"]) == ("http://llm.test/metrics", 0.5, "vllm")
    assert [scrape["t_s"] for scrape in metrics["scrapes"]] == [0.0, 0.012]  # t = 0, then after the stop (2 × 6 ms)
    assert {scrape["text"] for scrape in metrics["scrapes"]} == {'vllm:kv_cache_usage_perc{engine="0"} 0.5\n'}
    assert metrics["scrapes"][0]["time"].endswith("Z")
    [fault] = document["faults"]
    assert (fault["label"], fault["kind"], fault["ok"], fault["skipped"], fault["t_s"]) == (
        "too late",
        "command",
        False,
        True,
        20.0,
    )
    assert document["scenario"] == {"kind": "custom", "peak_concurrency": None, "criteria": {"ttft_ms": 500}}
    run = runs[0]
    assert fmt == "llm_sizing"
    assert [sample.kv_cache_usage for sample in run.timeline.servers[0].samples] == [0.5] * len(metrics["scrapes"])
    assert run.faults[0]["skipped"] is True
    assert run.scenario == document["scenario"]


def test_a_plan_without_metrics_faults_or_scenario_writes_none_of_the_blocks() -> None:
    # when
    document = result_document(_run(FakeServer(), bounds={"max_requests": 3}))

    # then
    assert {"server_metrics", "faults", "scenario"} & set(document) == set()


def test_the_result_module_examples_hold() -> None:
    # when
    import doctest

    from llm_sizing_loadgen import result as result_module

    result = doctest.testmod(result_module)

    # then
    assert (result.failed, result.attempted > 0) == (0, True)


# ---------------------------------------------------------------------------------------------------------------
# The model (schemas.ResultDocument) is the format: the writer validates with it, the JSON Schema is written from it


def _blocks_document() -> dict[str, Any]:
    """A run with every block: server metrics, a skipped fault, a scenario (and 6 requests)."""
    plan = plan_from_dict(BLOCKS_PLAN)
    return result_document(
        run_virtual(lambda clock: LoadRunner(plan, transport=_metrics_transport(FakeServer()), clock=clock).run())
    )


def test_the_docs_result_schema_is_the_model_schema() -> None:
    # then: `python -m llm_sizing_loadgen.schemas docs` (make loadgen-schemas) keeps them equal
    assert json.loads(SCHEMA_FILE.read_text()) == SCHEMA
    Draft202012Validator.check_schema(SCHEMA)


def test_one_command_writes_both_committed_schemas(tmp_path: Path) -> None:
    # when
    code = schemas.main([str(tmp_path)])

    # then: byte for byte the files in docs/
    assert code == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "loadgen-plan.schema.json",
        "loadgen-result.schema.json",
    ]
    for path in tmp_path.iterdir():
        assert path.read_text() == (ROOT / "docs" / path.name).read_text(), path.name


def _keys_in_order(value: Any) -> Any:
    """The document's shape: every object's keys in order, with the same for its values."""
    if isinstance(value, dict):
        return [(key, _keys_in_order(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_keys_in_order(item) for item in value]
    return None


def test_the_model_names_the_writers_fields_in_the_writers_order() -> None:
    # given
    document = _blocks_document()

    # when
    model = ResultDocument.model_validate(document)
    dumped = model.model_dump(mode="json", by_alias=True, exclude_unset=True)

    # then: the same values (500 reads as 500.0) and the same keys in the same order, down to each request
    assert dumped == document
    assert _keys_in_order(dumped) == _keys_in_order(document)
    assert model.server_metrics is not None
    assert model.scenario is not None
    assert (model.server_metrics.scrapes[0].text, model.scenario.criteria) == (
        'vllm:kv_cache_usage_perc{engine="0"} 0.5\n',
        {"ttft_ms": 500.0},
    )


def test_the_models_statuses_are_the_clients() -> None:
    # then
    assert typing.get_args(RequestStatusName) == tuple(status.value for status in Status)


def test_the_writer_refuses_a_document_outside_the_format(monkeypatch: pytest.MonkeyPatch) -> None:
    # given: a request entry with a key the format does not name
    outcome = _run(FakeServer(), bounds={"max_requests": 2})
    monkeypatch.setattr(
        result_module, "request_entry", lambda record, t0: {**request_entry(record, t0), "latency_ms": 1.0}
    )

    # when / then
    with pytest.raises(ValidationError, match=r"requests\.0\.latency_ms\n  Extra inputs are not permitted"):
        result_document(outcome)


REPLACEMENTS = {
    "null": None,
    "text": "x",
    "empty text": "",
    "negative": -1,
    "true": True,
    "fraction": 1.5,
    "zero": 0,
    "list": [],
    "object": {},
}


def _mutations(document: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """`document` with one value replaced (every value of the header, the first two requests and scrapes), removed
    or given an extra key: (what changed, the changed document)."""

    def paths(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        items = node.items() if isinstance(node, dict) else enumerate(node[:2]) if isinstance(node, list) else ()
        for key, item in items:
            yield (*path, key)
            yield from paths(item, (*path, key))

    for path in paths(document, ()):
        changes: list[tuple[str, Any]] = [*REPLACEMENTS.items(), ("removed", KeyError), ("extra key", TypeError)]
        for name, value in changes:
            changed = copy.deepcopy(document)
            parent = changed
            for key in path[:-1]:
                parent = parent[key]
            if value is KeyError:
                if not isinstance(parent, dict):
                    continue
                del parent[path[-1]]
            elif value is TypeError:
                if not isinstance(parent[path[-1]], dict):
                    continue
                parent[path[-1]]["unexpected"] = 1
            else:
                parent[path[-1]] = value
            yield f"{'.'.join(map(str, path))}: {name}", changed


def test_the_model_and_its_json_schema_accept_the_same_documents() -> None:
    # given: a run with every block, and an export's source block
    document = _blocks_document()
    document["source"] = {"tool": "vllm", "format": "vllm_bench_serve", "deployment": None, "notes": ["n"]}
    validator = Draft202012Validator(SCHEMA)

    # when
    verdicts = []
    for change, changed in _mutations(document):
        try:
            ResultDocument.model_validate(changed)
            model_accepts = True
        except ValidationError:
            model_accepts = False
        verdicts.append((change, model_accepts, validator.is_valid(changed)))

    # then: over a thousand changes, some accepted and most refused, and never one without the other
    assert len(verdicts) > 1000
    assert {schema for _, _, schema in verdicts} == {True, False}
    assert [verdict for verdict in verdicts if verdict[1] != verdict[2]] == []


def test_the_examples_of_the_format_doc_are_in_the_format() -> None:
    # given: the ```json blocks of docs/loadgen-result.md: a whole document, then the three optional blocks
    text = (ROOT / "docs" / "loadgen-result.md").read_text()
    whole, blocks = (json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.DOTALL))

    # when / then
    ResultDocument.model_validate(whole)
    ResultServerMetrics.model_validate(blocks["server_metrics"])
    ResultScenario.model_validate(blocks["scenario"])
    assert [ResultFault.model_validate(fault).skipped for fault in blocks["faults"]] == [False]

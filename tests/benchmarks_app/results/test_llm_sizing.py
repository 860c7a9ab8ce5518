"""Our own load generator's result format (docs/loadgen-result.md): the JSON Schema, and the importer that validates
a file and recomputes every figure from its requests by METRICS.md's definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import llm_sizing
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
OWN = FIXTURES / "llm_sizing"
VALID = sorted(path for path in OWN.iterdir() if path.is_file())
BROKEN = sorted((OWN / "broken").iterdir())
OTHERS = sorted(path for path in FIXTURES.rglob("*") if path.is_file() and OWN not in path.parents)
SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "loadgen-result.schema.json").read_text())


def read(name: str) -> ImportedRun:
    (run,) = llm_sizing.read((OWN / name).read_text())
    return run


def refusal(text: str) -> str:
    with pytest.raises(FormatRefusal) as caught:
        llm_sizing.read(text)
    return caught.value.reason


def test_closed_loop_ground_truth() -> None:
    run = read("closed_loop.json")
    assert (run.tool, run.tool_version, run.model, run.backend) == (
        "llm_sizing",
        "0.1.0",
        "meta-llama/Llama-3.1-8B-Instruct",
        "openai-chat",
    )
    assert (run.completed, run.failed, run.incomplete, len(run.requests)) == (6, 1, 0, 7)
    assert run.metrics["ttft_ms"].mean == pytest.approx((31.2 + 46.8 + 59.7 + 35.4 + 40.1 + 42.3) / 6)
    assert run.metrics["ttft_ms"].p99 == pytest.approx(59.055)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)  # Σ gaps / (16 − n_1), n_1 = 1
    assert run.metrics["itl_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.metrics["itl_ms"].p99 == pytest.approx(23.403, abs=1e-3)
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117 + 0.4, abs=1e-4)  # to the stream's end
    assert all(stat.source == "recomputed" for stat in run.metrics.values())
    window = 0.17023 + 0.18407  # the last request to end: sent at 0.17023 s, 184.07 ms long
    assert run.duration_s == pytest.approx(window)
    assert run.requests_per_s == pytest.approx(6 / window)
    assert run.output_tokens_per_s == pytest.approx(96 / window)
    assert run.total_tokens_per_s == pytest.approx((96 + 3063) / window)
    assert run.started_at == "2026-01-01T00:00:00+00:00"
    assert run.load.as_dict() == {"kind": "concurrency", "rate": None, "concurrency": 3}
    assert str(run.requests[6].error).startswith("http_error(400): This model's")
    assert run.reported["completed"] == 6  # the generator's own summary
    assert run.settings["generator"] == {"name": "llm-sizing-loadgen", "version": "0.1.0"}
    assert run.settings["window"] == {"start_s": 0.0, "end_s": pytest.approx(window)}
    assert any("p99 0.40 ms" in note for note in run.notes)


def test_open_loop_window_incomplete_and_multi_token_chunks() -> None:
    run = read("open_loop_window.json")
    # requests 1-6 were sent in [1, 3] s: the warm-up (0) and the cool-down (7) are left out
    assert len(run.requests) == 6
    assert (run.completed, run.failed, run.incomplete) == (3, 2, 1)  # 503 and a timeout; one cut by the end
    assert run.metrics["ttft_ms"].mean == pytest.approx((100 + 120 + 200) / 3)
    # TPOT = Σ gaps / (N_out − n_1): 80/(5−1), 60/(8−2) with 2 tokens in the first chunk, 360/(10−1)
    assert run.metrics["tpot_ms"].mean == pytest.approx((20 + 10 + 40) / 3)
    assert run.metrics["itl_ms"].mean == pytest.approx((80 + 60 + 360) / 15)
    assert run.metrics["e2e_ms"].mean == pytest.approx((181 + 181 + 561) / 3)
    assert run.metrics["ntpot_ms"].mean == pytest.approx((181 / 5 + 181 / 8 + 561 / 10) / 3)
    # tokens arriving in the window: 5 + 8 + 8 of request 4's 10 (two after 3 s) + 2 of the incomplete one's 3
    assert run.output_tokens_per_s == pytest.approx((5 + 8 + 8 + 2) / 2)
    assert run.requests_per_s == pytest.approx(2 / 2)  # requests 1 and 2 end in the window; 4 ends at 3.06 s
    assert run.total_tokens_per_s == pytest.approx((23 + 100 + 200) / 2)
    assert run.started_at == "2026-03-04T09:00:00+00:00"  # +01:00 in the file
    assert run.requests[2].error == "http_error(503): Service Unavailable"
    assert run.requests[5].error == "timeout(ttft): no first token in 30 s"
    assert run.requests[4].status == "incomplete"
    assert run.requests[0].start_s == 0.0  # counted from the first request in the window
    assert run.load.as_dict() == {"kind": "rate", "rate": 4.0, "concurrency": None}
    assert any("2 request(s) sent outside the measurement window" in note for note in run.notes)
    assert any("INVALID" in note and "achieved send rate" in note for note in run.notes)  # 3/s of 4/s


def test_all_failed_run() -> None:
    run = read("all_failed.json")
    assert (run.completed, run.failed, run.incomplete) == (0, 3, 0)
    assert run.metrics == {}
    assert run.requests_per_s == 0.0


def test_unknown_chunking_is_noted() -> None:
    data = json.loads((OWN / "closed_loop.json").read_text())
    del data["requests"][0]["chunk_tokens"]
    data["requests"][0]["output_tokens"] = 20  # 16 events carried 20 tokens: chunking unknown
    (run,) = llm_sizing.read(json.dumps(data))
    assert any("chunking unknown" in note for note in run.notes)
    assert run.requests[0].tpot_ms == pytest.approx(sum(data["requests"][0]["itl_ms"]) / 19)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("cut_short.json", "not valid JSON"),
        ("wrong_types.json", "requests[3].ttft_ms: not a number ('fast')"),
        ("wrong_version.json", "version: 2 is not a version this service reads"),
        ("bad_chunks.json", "requests[2].chunk_tokens: 15 events for 15 gaps"),
        ("ok_without_e2e.json", "requests[0].e2e_ms: an ok request needs it"),
        ("window_backwards.json", "run.window: it ends (0.1 s) before it starts (0.3 s)"),
    ],
)
def test_broken_files_are_refused_with_the_field(name: str, reason: str) -> None:
    assert reason in refusal((OWN / "broken" / name).read_text())


def test_other_refusals() -> None:
    data = json.loads((OWN / "closed_loop.json").read_text())
    data["run"]["started_at"] = "2026-01-01T00:00:00"
    assert "without a zone" in refusal(json.dumps(data))
    data = json.loads((OWN / "closed_loop.json").read_text())
    data["requests"][1]["status"] = "done"
    assert "requests[1].status: 'done' is not one of" in refusal(json.dumps(data))
    data = json.loads((OWN / "closed_loop.json").read_text())
    data["run"]["load"] = {"kind": "rate", "rate": None}
    assert "run.load.rate: an open-loop ('rate') run needs its offered rate" in refusal(json.dumps(data))
    assert 'without \'"format": "llm-sizing-loadgen-result"\'' in refusal(
        (FIXTURES / "vllm" / "bench_serve_detailed.json").read_text()
    )


def test_schema_is_valid_and_matches_the_fixtures() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    validator = Draft202012Validator(SCHEMA)
    for path in VALID:
        errors = [error.message for error in validator.iter_errors(json.loads(path.read_text()))]
        assert errors == [], path.name
    for name in ("wrong_types.json", "wrong_version.json"):
        assert not validator.is_valid(json.loads((OWN / "broken" / name).read_text())), name


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.name)
def test_import_text_detects_llm_sizing(path: Path) -> None:
    fmt, runs = import_text(path.read_text())
    assert fmt == "llm_sizing"
    json.dumps([run.as_dict(with_requests=True) for run in runs], allow_nan=False)


@pytest.mark.parametrize("path", BROKEN, ids=lambda path: path.name)
def test_import_text_refuses_broken_llm_sizing_files(path: Path) -> None:
    with pytest.raises(BenchmarkFormatError):
        import_text(path.read_text())


@pytest.mark.parametrize("path", OTHERS, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_fixtures_are_not_llm_sizing(path: Path) -> None:
    refusal(path.read_text())


# ---------------------------------------------------------------------------------------------------------------
# Server metrics, faults and the scenario (issue 7)


def _with_blocks() -> dict:
    """closed_loop.json (t = 0 at 2026-01-01T00:00:00Z; its first request in the window sent at 0.0004 s) with two
    scrapes around a failed one, a fault at 0.2 s, one skipped, and a scenario."""
    data = json.loads((OWN / "closed_loop.json").read_text())
    data["server_metrics"] = {
        "url": "http://gpu-1:8000/metrics",
        "interval_s": 0.1,
        "engine": "vllm",
        "scrapes": [
            {
                "t_s": 0.0,
                "time": "2026-01-01T00:00:00Z",
                "text": 'vllm:kv_cache_usage_perc{engine="0"} 0.0\nvllm:num_requests_running{engine="0"} 0\n',
            },
            {"t_s": 0.1, "time": "2026-01-01T00:00:00.100Z", "error": "cannot connect: [Errno 111] Connection refused"},
            {
                "t_s": 0.2,
                "time": "2026-01-01T00:00:00.200Z",
                "text": 'vllm:kv_cache_usage_perc{engine="0"} 0.42\nvllm:num_requests_running{engine="0"} 3\n',
            },
        ],
    }
    data["faults"] = [
        {
            "t_s": 0.2,
            "label": "kill replica 0",
            "kind": "http",
            "ok": True,
            "detail": "HTTP 200",
            "duration_s": 0.004,
            "skipped": False,
        },
        {
            "t_s": 5.0,
            "label": "late",
            "kind": "command",
            "ok": False,
            "detail": "skipped: the run stopped",
            "duration_s": 0.0,
            "skipped": True,
        },
    ]
    data["scenario"] = {"kind": "failure", "peak_concurrency": 6, "criteria": {"recovery_s": 30, "strict": True}}
    return data


def test_server_metrics_faults_and_scenario_are_imported() -> None:
    # given
    data = _with_blocks()

    # when
    [run] = llm_sizing.read(json.dumps(data))

    # then: the two good scrapes make the timeline (POSIX times from "time"); the failed one is a gap, not zeros
    [server] = run.timeline.servers
    assert (server.engine, server.instance) == ("vllm", "engine=0")
    assert [(sample.time_s, sample.kv_cache_usage, sample.requests_running) for sample in server.samples] == [
        (1767225600.0, 0.0, 0.0),
        (1767225600.2, 0.42, 3.0),
    ]
    assert (
        "1 scrape(s) failed and are left out of the timeline (gaps, not zeros; first at 0.1 s: cannot connect: "
        "[Errno 111] Connection refused)." in run.notes
    )
    assert "Server metrics: 3 scrape(s) of http://gpu-1:8000/metrics every 0.1 s." in run.notes

    # then: the faults on the records' start_s clock (0.2 − 0.0004 s), the file's time kept
    assert run.faults[0] == {
        "t_s": pytest.approx(0.1996),
        "run_t_s": 0.2,
        "label": "kill replica 0",
        "kind": "http",
        "ok": True,
        "detail": "HTTP 200",
        "duration_s": 0.004,
        "skipped": False,
    }
    assert (run.faults[1]["label"], run.faults[1]["skipped"], run.faults[1]["ok"]) == ("late", True, False)
    assert run.requests[0].start_s == 0.0
    assert run.scenario == {"kind": "failure", "peak_concurrency": 6, "criteria": {"recovery_s": 30, "strict": True}}
    assert list(Draft202012Validator(SCHEMA).iter_errors(data)) == []


def test_a_file_without_the_blocks_imports_as_before() -> None:
    # when
    run = read("closed_loop.json")

    # then
    assert (run.timeline, run.faults, run.scenario) == (None, (), None)
    assert not any("Server metrics" in note for note in run.notes)


def test_scrapes_that_all_failed_or_hold_no_known_metric_give_no_timeline() -> None:
    # given
    failed, unknown = _with_blocks(), _with_blocks()
    failed["server_metrics"]["scrapes"] = [failed["server_metrics"]["scrapes"][1]]
    unknown["server_metrics"]["scrapes"][0]["text"] = ""
    unknown["server_metrics"]["scrapes"][2]["text"] = "my_own_metric 3\n"

    # when
    [without] = llm_sizing.read(json.dumps(failed))
    [nothing_known] = llm_sizing.read(json.dumps(unknown))

    # then
    assert without.timeline is None
    assert "No scrape succeeded: there is no server timeline." in without.notes
    assert nothing_known.timeline is None
    assert any(note.startswith("No scrape holds a metric a server timeline reads") for note in nothing_known.notes)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(lambda d: d.update(server_metrics=[1]), "server_metrics: not an object (list)", id="block"),
        pytest.param(
            lambda d: d["server_metrics"].pop("scrapes"), "server_metrics: 'scrapes' is missing", id="scrapes"
        ),
        pytest.param(
            lambda d: d["server_metrics"]["scrapes"][0].update(time="soon"),
            "server_metrics.scrapes[0].time: not an ISO 8601 date-time ('soon')",
            id="time",
        ),
        pytest.param(
            lambda d: d["server_metrics"]["scrapes"][1].update(text="x 1\n"),
            "server_metrics.scrapes[1]: give exactly one of 'text' (the scrape) or 'error' (why it failed)",
            id="text-and-error",
        ),
        pytest.param(
            lambda d: d["server_metrics"]["scrapes"][2].update(text="vllm:kv_cache_usage_perc{engine= 0.5\n"),
            "server_metrics.scrapes[2].text: an unreadable line: 'vllm:kv_cache_usage_perc{engine= 0.5'",
            id="unreadable-text",
        ),
        pytest.param(
            lambda d: d["server_metrics"]["scrapes"][0].update(t_s="0"),
            "server_metrics.scrapes[0].t_s: not a number ('0')",
            id="t_s",
        ),
        pytest.param(lambda d: d.update(faults={}), "faults: not a list (dict)", id="faults"),
        pytest.param(lambda d: d["faults"][0].update(ok="yes"), "faults[0].ok: not true or false ('yes')", id="ok"),
        pytest.param(
            lambda d: d["faults"][1].update(kind="chaos"),
            "faults[1].kind: 'chaos' is not one of http, command",
            id="kind",
        ),
        pytest.param(lambda d: d["faults"][0].pop("detail"), "faults[0]: 'detail' is missing", id="detail"),
        pytest.param(
            lambda d: d["faults"][0].update(duration_s=-1), "faults[0].duration_s: -1 is below 0", id="duration"
        ),
        pytest.param(
            lambda d: d["scenario"].update(peak_concurrency=0),
            "scenario.peak_concurrency: not a whole number ≥ 1 (0)",
            id="peak",
        ),
        pytest.param(
            lambda d: d["scenario"]["criteria"].update(ttft_ms="fast"),
            "scenario.criteria.ttft_ms: not a number ('fast')",
            id="criteria",
        ),
    ],
)
def test_malformed_blocks_are_refused_with_their_path(change, reason: str) -> None:
    # given
    data = _with_blocks()
    change(data)

    # when / then
    assert refusal(json.dumps(data)) == reason


@pytest.mark.parametrize(("lag_ms", "invalid"), [(0.4, False), (9.0, True)])
def test_a_closed_loop_is_invalid_when_its_clients_idle_over_5_percent(lag_ms: float, invalid: bool) -> None:
    """A closed loop has no schedule: its fidelity is the clients' time lost between requests, Σ lag / Σ (lag +
    E2E). Requests 3..6 of closed_loop.json (its 3 clients' later requests) last 484.02 ms in all: 4 lags of 0.4 ms
    idle them 0.33%, of 9 ms 6.9% (> 5%). Each client's first request (ids 0-2) opens its connection and is left
    out (their 50 ms lags would otherwise make both cases invalid)."""
    data = json.loads((OWN / "closed_loop.json").read_text())
    for entry in data["requests"]:
        entry["t_sched_s"] = round(entry["t_send_s"] - (lag_ms if entry["id"] >= 3 else 50.0) / 1000, 6)
    (run,) = llm_sizing.read(json.dumps(data))
    notes = " ".join(run.notes)
    assert ("INVALID by METRICS.md: fewer than 95% of the requested clients were busy" in notes) is invalid
    assert "Closed loop: the clients were idle" in notes

"""Our own load generator's result format (docs/loadgen-result.md): the JSON Schema, and the importer that validates
a file and recomputes every figure from its requests by METRICS.md's definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sizing.benchmarks.detect import BenchmarkFormatError, import_text
from sizing.benchmarks.formats import llm_sizing
from sizing.benchmarks.run import FormatRefusal, ImportedRun

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
    assert (run.tool, run.tool_version, run.model, run.backend) == ("llm_sizing", "0.1.0",
                                                                    "meta-llama/Llama-3.1-8B-Instruct", "openai-chat")
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


@pytest.mark.parametrize(("name", "reason"), [
    ("cut_short.json", "not valid JSON"),
    ("wrong_types.json", "requests[3].ttft_ms: not a number ('fast')"),
    ("wrong_version.json", "version: 2 is not a version this service reads"),
    ("bad_chunks.json", "requests[2].chunk_tokens: 15 events for 15 gaps"),
    ("ok_without_e2e.json", "requests[0].e2e_ms: an ok request needs it"),
    ("window_backwards.json", "run.window: it ends (0.1 s) before it starts (0.3 s)"),
])
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
    assert "without '\"format\": \"llm-sizing-loadgen-result\"'" in refusal(
        (FIXTURES / "vllm" / "bench_serve_detailed.json").read_text())


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

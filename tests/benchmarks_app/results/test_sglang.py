"""The SGLang importer (`python -m sglang.bench_serving --output-file … [--output-details]`) on the project's fixtures.

The detailed fixture is the ground-truth run (7 requests at concurrency 3, one HTTP 400) as SGLang writes it: its
E2E runs to the stream's end, 0.4 ms after the last content chunk, so SGLang's own TPOT is 0.4/15 ms larger than
METRICS.md's, which the importer recomputes from the gaps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import sglang
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
OWN = FIXTURES / "sglang"
VALID = sorted(path for path in OWN.iterdir() if path.is_file())
BROKEN = sorted((OWN / "broken").iterdir())
OTHERS = sorted(path for path in FIXTURES.rglob("*") if path.is_file() and OWN not in path.parents)
TTFT = [31.2, 46.8, 59.7, 35.4, 40.1, 42.3]
TAIL_MS = 0.4  # last content chunk to [DONE]


def read(name: str) -> list[ImportedRun]:
    return sglang.read((OWN / name).read_text())


def refusal(path: Path) -> str:
    with pytest.raises(FormatRefusal) as caught:
        sglang.read(path.read_text())
    return caught.value.reason


@pytest.mark.parametrize("name", ["bench_serving_details.jsonl", "bench_serving_nested_details.jsonl"])
def test_details_are_recomputed(name: str) -> None:
    (run,) = read(name)
    assert (run.completed, run.failed, len(run.requests)) == (6, 1, 7)  # no 'failed' in the file: from 'errors'
    assert run.metrics["ttft_ms"].source == "recomputed"
    assert run.metrics["ttft_ms"].mean == pytest.approx(sum(TTFT) / 6)
    assert run.metrics["ttft_ms"].p99 == pytest.approx(59.055)
    assert run.metrics["itl_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.metrics["itl_ms"].p99 == pytest.approx(23.403, abs=1e-3)
    assert run.metrics["itl_ms"].n == 90
    # METRICS.md's TPOT, from the gaps; SGLang's own runs to [DONE], 0.4 ms later, over 15 tokens
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.reported["mean_tpot_ms"] == pytest.approx(7.8019 + TAIL_MS / 15, abs=1e-4)
    # E2E rebuilt to the last content chunk; SGLang's (kept in reported) to the stream's end
    assert run.metrics["e2e_ms"].mean == pytest.approx(159.6117, abs=1e-4)
    assert run.reported["mean_e2e_latency_ms"] == pytest.approx(159.6117 + TAIL_MS, abs=1e-4)
    assert str(run.requests[6].error).startswith("Bad Request")
    assert run.requests[6].input_tokens == 9200
    assert run.requests[0].start_s is None  # SGLang records no start times


def test_details_run_identity_and_load() -> None:
    (run,) = read("bench_serving_details.jsonl")
    assert (run.tool, run.format, run.label) == ("sglang", "sglang_bench_serving", "h100-c3")
    assert (run.model, run.tool_version, run.backend) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        "0.5.4",
        "sglang-oai-chat",
    )
    assert run.load.as_dict() == {"kind": "concurrency", "rate": None, "concurrency": 3}  # Infinity, 3 at a time
    assert run.settings["request_rate"] is None  # the bare Infinity, JSON-safe
    assert run.settings["server"]["chunked_prefill_size"] == 8192
    assert run.reported["total_output_tokens_retokenized"] == 95
    assert run.output_tokens_per_s == pytest.approx(96 / 0.3553)
    assert run.requests_per_s == pytest.approx(6 / 0.3553)
    assert run.total_tokens_per_s == pytest.approx((3063 + 96) / 0.3553)
    assert run.started_at is None  # SGLang writes no date
    assert any("retokenized" in note for note in run.notes)


def test_nested_details_say_so() -> None:
    (run,) = read("bench_serving_nested_details.jsonl")
    assert any("nested under 'details'" in note for note in run.notes)
    assert "details" not in run.reported


def test_appended_december_2024_runs() -> None:
    first, second = read("bench_serving_appended.jsonl")  # a blank line at the end is no run
    assert [first.label, second.label] == ["random_input_len=1024", "random_input_len=256"]
    assert first.load.kind == "offline"
    assert first.metrics["ttft_ms"].p50 == 114572.0
    assert first.metrics["ttft_ms"].mean is None  # this version wrote the median only
    assert first.metrics["e2e_ms"].mean == 208761.5
    assert "tpot_ms" not in first.metrics
    assert first.failed is None  # no details, no 'failed': unknown
    assert first.requests_per_s == pytest.approx(4000 / 294.75)  # recomputed: no request_throughput
    assert first.total_tokens_per_s == pytest.approx((2034177 + 1029594) / 294.75)
    assert first.metrics["output_tokens"].mean == pytest.approx(1029594 / 4000)
    assert any("recomputed as completed / duration" in note for note in first.notes)


def test_disaggregated_servers() -> None:
    (run,) = read("pd_disaggregated.jsonl")
    assert (run.model, run.tool_version) == ("Qwen/Qwen2.5-3B-Instruct", "0.5.6")  # the decode server's
    assert run.settings["server"]["disaggregated"] == {
        "prefill_servers": 1,
        "decode_servers": 1,
        "versions": ["0.5.5.post3", "0.5.6"],
    }
    assert run.metrics["itl_ms"].p95 == 7.6
    assert run.metrics["e2e_ms"].p99 == 2200.0
    assert any("different SGLang versions" in note for note in run.notes)


def test_all_failed_run_with_nan_summaries() -> None:
    (run,) = read("all_failed.jsonl")
    assert (run.completed, run.failed) == (0, 3)
    assert run.metrics == {}
    assert run.reported["mean_e2e_latency_ms"] is None  # NaN in the file
    assert run.load.as_dict() == {"kind": "rate", "rate": 8.0, "concurrency": None}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("cut_short.jsonl", "line 2 is not JSON"),
        ("wrong_types.jsonl", "itls[1] holds a gap that is not a number ('slow')"),
        ("wrong_count.jsonl", "'completed' is not a count of requests ('six')"),
    ],
)
def test_broken_files_are_refused_with_their_reason(name: str, reason: str) -> None:
    assert reason in refusal(OWN / "broken" / name)


def test_cut_last_line_says_so() -> None:
    assert "the last line is cut short" in refusal(OWN / "broken" / "cut_short.jsonl")


def test_refusals_of_other_shapes() -> None:
    assert "a vLLM bench serve result" in refusal(FIXTURES / "vllm" / "bench_serve_detailed.json")
    with pytest.raises(FormatRefusal, match="without SGLang's 'completed' count"):
        sglang.read('{"tag": null}')
    with pytest.raises(FormatRefusal, match="none of SGLang's result fields"):
        sglang.read('{"completed": 3}')
    with pytest.raises(FormatRefusal, match="line 2 is not a JSON object"):
        sglang.read('{"completed": 1, "total_throughput": 2.0}\n[1]\n')


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.name)
def test_import_text_detects_sglang(path: Path) -> None:
    fmt, runs = import_text(path.read_text())
    assert fmt == "sglang_bench_serving"
    json.dumps([run.as_dict(with_requests=True) for run in runs], allow_nan=False)


@pytest.mark.parametrize("path", BROKEN, ids=lambda path: path.name)
def test_import_text_refuses_broken_sglang_files(path: Path) -> None:
    with pytest.raises(BenchmarkFormatError):
        import_text(path.read_text())


@pytest.mark.parametrize("path", OTHERS, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_fixtures_are_not_sglang(path: Path) -> None:
    refusal(path)

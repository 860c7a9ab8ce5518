"""llmperf importer: the summary and the per-request file, the traps, the refusals.

Ground truth: 7 requests, 6 succeed (TTFT 31.2/46.8/59.7/35.4/40.1/42.3 ms, E2E 138.76/171.26/169.13/146.55/184.07/
150.30 ms), one HTTP 400; llmperf's re-tokenised output length is 17 for 16 generated tokens.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import llmperf
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
HERE = FIXTURES / "llmperf"
STEM = "meta-llama-Llama-3-1-8B-Instruct_512_16"
TTFT = [31.2, 46.8, 59.7, 35.4, 40.1, 42.3]
E2E = [138.76, 171.26, 169.13, 146.55, 184.07, 150.30]


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def only(runs: list[ImportedRun]) -> ImportedRun:
    assert len(runs) == 1
    return runs[0]


def has_note(run: ImportedRun, fragment: str) -> bool:
    return any(fragment in note for note in run.notes)


@pytest.fixture(scope="module")
def summary() -> ImportedRun:
    return only(llmperf.read_summary(text_of(f"{STEM}_summary.json")))


@pytest.fixture(scope="module")
def per_request() -> ImportedRun:
    return only(llmperf.read_requests(text_of(f"{STEM}_individual_responses.json")))


# ---------------------------------------------------------------------------------------------------------------
# Summary


def test_summary_identity(summary: ImportedRun) -> None:
    assert (summary.format, summary.tool, summary.tool_version) == ("llmperf_summary", "llmperf", "2023-08-31")
    assert summary.label == STEM
    assert summary.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert (summary.completed, summary.failed, summary.incomplete) == (6, 1, None)
    assert (summary.load.kind, summary.load.concurrency) == ("concurrency", 3)
    assert summary.settings["gpu"] == "1xH100-80GB"  # --metadata pairs are kept with the settings


def test_summary_latencies_in_ms(summary: ImportedRun) -> None:
    ttft = summary.metrics["ttft_ms"]
    assert ttft.source == "reported"
    assert ttft.mean == pytest.approx(255.5 / 6)  # 0.042583 s
    assert ttft.p50 == pytest.approx(41.2)
    assert ttft.p99 == pytest.approx(59.055)
    assert (ttft.min, ttft.max) == (pytest.approx(31.2), pytest.approx(59.7))
    assert ttft.std == pytest.approx(statistics.pstdev(TTFT))  # llmperf's sample deviation, converted
    assert ttft.n == 6
    e2e = summary.metrics["e2e_ms"]
    assert e2e.mean == pytest.approx(sum(E2E) / 6)  # 160.0 ms
    assert e2e.std == pytest.approx(statistics.pstdev(E2E))


def test_summary_never_maps_llmperfs_itl_or_token_counts(summary: ImportedRun) -> None:
    assert set(summary.metrics) == {"ttft_ms", "e2e_ms"}
    assert summary.output_tokens_per_s is None
    assert summary.reported["results_inter_token_latency_s_mean"] == pytest.approx(0.0088673, abs=1e-7)  # TTFT in
    assert summary.reported["results_number_output_tokens_mean"] == 17  # 16 tokens + BOS
    assert summary.reported["results_number_input_tokens_min"] == "489"  # a string, as written
    assert summary.reported["error_code_frequency_parsed"] == {"400": 1}
    assert has_note(summary, "it includes TTFT")
    assert has_note(summary, "17 for 16 generated tokens")


def test_summary_rates_and_times(summary: ImportedRun) -> None:
    assert summary.requests_per_s == pytest.approx(6 / 0.3669)  # completed per minute / 60
    assert summary.duration_s == pytest.approx(0.3669)
    assert summary.started_at == "2026-01-01T00:00:00.633100Z"  # timestamp 1767225601 − 0.3669 s
    json.dumps(summary.as_dict(), allow_nan=False)


# ---------------------------------------------------------------------------------------------------------------
# Per-request file


def test_per_request_recomputed(per_request: ImportedRun) -> None:
    assert (per_request.format, per_request.completed, per_request.failed) == ("llmperf_requests", 6, 1)
    assert len(per_request.requests) == 7
    ttft = per_request.metrics["ttft_ms"]
    assert ttft.source == "recomputed"
    assert ttft.mean == pytest.approx(255.5 / 6)
    assert ttft.p99 == pytest.approx(59.055)
    assert per_request.metrics["e2e_ms"].mean == pytest.approx(sum(E2E) / 6)
    assert set(per_request.metrics) == {"ttft_ms", "e2e_ms"}
    failed = [r for r in per_request.requests if r.status == "error"]
    assert len(failed) == 1
    assert failed[0].error is not None
    assert failed[0].error.startswith("400: HTTP 400 Bad Request")
    assert failed[0].ttft_ms is None  # 0 is a placeholder
    assert all(r.output_tokens is None and r.input_tokens is None for r in per_request.requests)


def test_per_request_agrees_with_the_summary(summary: ImportedRun, per_request: ImportedRun) -> None:
    for key in ("ttft_ms", "e2e_ms"):
        a, b = summary.metrics[key], per_request.metrics[key]
        for field in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std"):
            assert getattr(a, field) == pytest.approx(getattr(b, field)), (key, field)
    own = per_request.reported["summary_as_llmperf_computes_it"]
    assert own["inter_token_latency_s"]["mean"] == pytest.approx(summary.reported["results_inter_token_latency_s_mean"])
    assert own["ttft_s"]["stddev"] == pytest.approx(summary.reported["results_ttft_s_stddev"])
    assert per_request.reported["error_code_frequency"] == {"400": 1}


def test_short_output_rejections_count_as_failed() -> None:
    record = {
        "error_code": None,
        "error_msg": "",
        "inter_token_latency_s": 0.02,
        "ttft_s": 0.3,
        "end_to_end_latency_s": 2.5,
        "request_output_throughput_token_per_s": 60.0,
        "number_total_tokens": 700,
        "number_output_tokens": 150,
        "number_input_tokens": 550,
    }
    short = dict(record, error_code=-100, error_msg="Output too few tokens 102", ttft_s=0.6, GEN_TEXT="text")
    run = only(llmperf.read_requests(json.dumps([record, short, record])))
    assert (run.completed, run.failed) == (2, 1)
    assert run.metrics["ttft_ms"].mean == pytest.approx(300.0)
    assert run.requests[1].error == "-100: Output too few tokens 102"
    assert has_note(run, "short_output")
    assert has_note(run, "GEN_TEXT")


# ---------------------------------------------------------------------------------------------------------------
# Broken and degenerate files


def test_all_failed_summary_with_nan() -> None:
    text = text_of("all_failed_summary.json")
    assert "NaN" in text
    run = only(llmperf.read_summary(text))
    assert (run.completed, run.failed) == (0, 4)
    assert run.metrics == {}
    assert run.started_at is None
    assert run.reported["results_ttft_s_mean"] is None
    assert run.reported["error_code_frequency_parsed"] == {"-1": 3, "503": 1}
    json.dumps(run.as_dict(), allow_nan=False)
    assert has_note(run, "No request succeeded")


def test_all_failed_per_request() -> None:
    run = only(llmperf.read_requests(text_of("all_failed_individual_responses.json")))
    assert (run.completed, run.failed) == (0, 4)
    assert run.metrics == {}
    assert [r.error for r in run.requests] == ["-1", "-1", "-1", "503: Service Unavailable"]


def test_wrong_types_refused() -> None:
    with pytest.raises(FormatRefusal) as refusal:
        llmperf.read_requests(text_of("wrong_types_individual_responses.json"))
    assert refusal.value.reason == "request 2 ttft_s is the text 'fast', not a number"


def test_cut_short_refused() -> None:
    with pytest.raises(FormatRefusal) as refusal:
        llmperf.read_requests(text_of("cut_individual_responses.json"))
    assert refusal.value.reason.startswith("not valid JSON (")
    assert refusal.value.reason.endswith("the file is cut short)")


@pytest.mark.parametrize(
    ("reader", "text", "reason"),
    [
        (llmperf.read_summary, "[]", "a JSON list, not llmperf's flattened summary object"),
        (
            llmperf.read_summary,
            '{"version": "2023-08-31", "name": "x"}',
            "a JSON object without llmperf's flattened 'results_ttft_s_…' / 'results_end_to_end_latency_s_…' keys",
        ),
        (
            llmperf.read_summary,
            '{"results_ttft_s_mean": 0.1, "results_num_completed_requests": 2.5}',
            "results_num_completed_requests is 2.5, not a count of requests",
        ),
        (
            llmperf.read_requests,
            '{"results_ttft_s_mean": 0.1}',
            "a JSON object, not llmperf's list of per-request records",
        ),
        (llmperf.read_requests, "[]", "an empty JSON list: no llmperf per-request record"),
        (
            llmperf.read_requests,
            '[{"ttft": 1}]',
            "a JSON list whose first entry is not an llmperf per-request record "
            "(error_code, ttft_s, end_to_end_latency_s, inter_token_latency_s)",
        ),
        (
            llmperf.read_requests,
            '[{"error_code": null, "ttft_s": 0.1, "end_to_end_latency_s": 1, "inter_token_latency_s": 0.01}, [1]]',
            "request 2 is a list, not llmperf's per-request object",
        ),
        (
            llmperf.read_requests,
            '[{"error_code": true, "ttft_s": 0.1, "end_to_end_latency_s": 1, "inter_token_latency_s": 0.01}]',
            "request 1 error_code is the boolean true, not an error code",
        ),
    ],
)
def test_refusals(reader: Callable[[str], list[ImportedRun]], text: str, reason: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        reader(text)
    assert refusal.value.reason == reason


def test_numbers_in_strings_are_read() -> None:
    record = {
        "error_code": None,
        "error_msg": "",
        "inter_token_latency_s": "0.02",
        "ttft_s": "0.25",
        "end_to_end_latency_s": "1,234.5",
        "number_output_tokens": "17",
        "number_input_tokens": "500",
    }
    run = only(llmperf.read_requests(json.dumps([record])))
    assert run.metrics["ttft_ms"].mean == pytest.approx(250.0)
    assert run.metrics["e2e_ms"].mean == pytest.approx(1_234_500.0)
    assert math.isclose(run.reported["summary_as_llmperf_computes_it"]["number_output_tokens"]["mean"], 17)


# ---------------------------------------------------------------------------------------------------------------
# Detection among every importer


ACCEPTED = {
    f"{STEM}_summary.json": "llmperf_summary",
    f"{STEM}_individual_responses.json": "llmperf_requests",
    "all_failed_summary.json": "llmperf_summary",
    "all_failed_individual_responses.json": "llmperf_requests",
}
REFUSED = {
    "wrong_types_individual_responses.json": ("llmperf_requests", "is the text 'fast', not a number"),
    "cut_individual_responses.json": ("llmperf_requests", "the file is cut short"),
}


def test_every_fixture_is_listed() -> None:
    assert {path.name for path in HERE.iterdir()} == set(ACCEPTED) | set(REFUSED)


@pytest.mark.parametrize(("name", "fmt"), sorted(ACCEPTED.items()))
def test_import_text_picks_llmperf(name: str, fmt: str) -> None:
    found, runs = import_text(text_of(name))
    assert found == fmt
    assert runs


@pytest.mark.parametrize(("name", "expected"), sorted(REFUSED.items()))
def test_import_text_refuses_broken_files_with_llmperfs_reason(name: str, expected: tuple[str, str]) -> None:
    with pytest.raises(BenchmarkFormatError) as error:
        import_text(text_of(name))
    fmt, fragment = expected
    assert fragment in dict(error.value.tried)[fmt]


OTHER_FIXTURES = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.is_file() and path.parent != HERE and path.suffix in (".json", ".jsonl", ".csv", ".prom", ".log", ".txt")
)


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_files_are_refused(path: Path) -> None:
    text = path.read_text(encoding="utf-8-sig")
    for reader in (llmperf.read_summary, llmperf.read_requests):
        with pytest.raises(FormatRefusal):
            reader(text)

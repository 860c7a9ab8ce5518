"""GuideLLM importer: every schema generation, the CSV, the traps, the refusals.

Expected numbers are hand-checked against the fixtures' ground truth (6 successful requests of 16 output tokens,
TTFT 31.2/46.8/59.7/35.4/40.1/42.3 ms, decode spans 107.16/124.06/109.03/110.75/143.57/107.60 ms, latencies
0.13876/0.17126/0.16913/0.14655/0.18407/0.15030 s, one HTTP 400).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks_app.results.detect import BenchmarkFormatError, import_text
from benchmarks_app.results.formats import guidellm
from benchmarks_app.results.run import FormatRefusal, ImportedRun

FIXTURES = Path(__file__).parent / "fixtures"
HERE = FIXTURES / "guidellm"


def text_of(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def only(runs: list[ImportedRun]) -> ImportedRun:
    assert len(runs) == 1
    return runs[0]


def has_note(run: ImportedRun, fragment: str) -> bool:
    return any(fragment in note for note in run.notes)


# ---------------------------------------------------------------------------------------------------------------
# 0.7 (metadata.version 2), per-request data


@pytest.fixture(scope="module")
def v07() -> ImportedRun:
    return only(guidellm.read_json(text_of("v07_concurrent_benchmarks.json")))


def test_v07_identity_and_counts(v07: ImportedRun) -> None:
    assert (v07.format, v07.tool, v07.tool_version) == ("guidellm_json", "guidellm", "0.7.3")
    assert v07.label == "concurrent@3"
    assert (v07.load.kind, v07.load.concurrency, v07.load.rate) == ("concurrency", 3, None)
    assert (v07.completed, v07.failed, v07.incomplete) == (6, 1, 0)
    assert v07.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert v07.backend == "openai_http"
    assert v07.started_at == "2026-01-01T00:00:00.001000Z"
    assert v07.duration_s == pytest.approx(0.3539, abs=1e-6)


def test_v07_recomputes_from_requests_in_the_measurement_window(v07: ImportedRun) -> None:
    # 8 records in the file: a warm-up request ends before the window opens and is left out, as GuideLLM does
    assert len(v07.requests) == 7
    assert has_note(v07, "1 of 8 recorded requests lie outside GuideLLM's measurement window")
    ttft = v07.metrics["ttft_ms"]
    assert ttft.source == "recomputed"
    assert ttft.mean == pytest.approx(255.5 / 6)  # 42.58
    assert ttft.p50 == pytest.approx(41.2)  # linear between 40.1 and 42.3
    assert ttft.p99 == pytest.approx(59.055)
    assert ttft.n == 6
    assert ttft.insufficient == ("p90", "p95", "p99")
    # the recomputed mean agrees with GuideLLM's own successful summary
    assert ttft.mean == pytest.approx(v07.reported["metrics"]["time_to_first_token_ms"]["successful"]["mean"])


def test_v07_e2e_from_seconds(v07: ImportedRun) -> None:
    e2e = v07.metrics["e2e_ms"]
    assert e2e.mean == pytest.approx(960.07 / 6)  # 160.0 ms from request_latency 0.160 s
    assert e2e.min == pytest.approx(138.76)
    assert e2e.max == pytest.approx(184.07)
    assert v07.metrics["ntpot_ms"].mean == pytest.approx(960.07 / 6 / 16)


def test_v07_tpot_and_itl_are_not_guidellms_tpot(v07: ImportedRun) -> None:
    tpot = v07.metrics["tpot_ms"]
    assert tpot.mean == pytest.approx(702.17 / 90)  # 7.80: (last − first token) / 15, averaged over requests
    assert tpot.min == pytest.approx(107.16 / 15)
    itl = v07.metrics["itl_ms"]
    assert itl.mean == pytest.approx(702.17 / 90)  # token-weighted, count 90 = Σ(out − 1)
    assert itl.n == 90
    assert (itl.p50, itl.p99) == (None, None)
    guidellm_tpot = v07.reported["metrics"]["time_per_output_token_ms"]["successful"]["mean"]
    assert guidellm_tpot == pytest.approx(9.9757, abs=1e-3)  # includes TTFT
    assert all(stat.mean != pytest.approx(guidellm_tpot) for stat in v07.metrics.values())
    assert has_note(v07, "includes the time to the first token")


def test_v07_records(v07: ImportedRun) -> None:
    ok = [r for r in v07.requests if r.status == "ok"]
    errored = [r for r in v07.requests if r.status == "error"]
    assert len(ok) == 6
    assert len(errored) == 1
    assert "maximum context length is 8192" in (errored[0].error or "")
    assert errored[0].ttft_ms is None
    assert errored[0].input_tokens == 9200
    assert ok[0].start_s == pytest.approx(0.0)
    assert ok[0].ttft_ms == pytest.approx(31.2)
    assert ok[0].tpot_ms == pytest.approx(107.16 / 15)
    assert ok[0].output_tokens == 16


def test_v07_throughput_as_reported_and_json_safe(v07: ImportedRun) -> None:
    assert v07.requests_per_s == pytest.approx(6 / 0.3539, rel=1e-4)
    assert v07.output_tokens_per_s == pytest.approx(96 / 0.3539, rel=1e-4)
    data = v07.as_dict(with_requests=True)
    text = json.dumps(data, allow_nan=False)
    assert '"pdf"' not in text  # the compact subset leaves the pdf arrays out
    assert "image" not in data["reported"]["metrics"]


# ---------------------------------------------------------------------------------------------------------------
# 0.5 (metadata.version 1): a sweep, summaries only


@pytest.fixture(scope="module")
def sweep() -> list[ImportedRun]:
    return guidellm.read_json(text_of("v05_sweep_benchmarks.json"))


def test_sweep_labels_and_loads(sweep: list[ImportedRun]) -> None:
    assert [run.label for run in sweep] == ["synchronous", "concurrent@8", "constant@4.00"]
    assert [run.load.as_dict() for run in sweep] == [
        {"kind": "concurrency", "rate": None, "concurrency": 1},
        {"kind": "concurrency", "rate": None, "concurrency": 8},
        {"kind": "rate", "rate": 4.0, "concurrency": 64},
    ]
    assert {run.tool_version for run in sweep} == {"0.5.4"}
    assert [run.started_at for run in sweep] == ["2026-01-01T00:00:05Z", "2026-01-01T00:01:45Z", "2026-01-01T00:03:25Z"]


def test_sweep_summary_as_reported(sweep: list[ImportedRun]) -> None:
    run = sweep[0]
    assert (run.completed, run.failed, run.incomplete) == (4, 0, 1)
    assert run.requests == ()
    assert has_note(run, "only a sample of the requests (0 of 4 successful")
    ttft = run.metrics["ttft_ms"]
    assert ttft.source == "reported"
    assert (ttft.mean, ttft.p50, ttft.min, ttft.max) == (23.0, 22.0, 20.0, 26.0)
    assert run.metrics["e2e_ms"].mean == pytest.approx(1365.0)  # 1.365 s
    # every request has 128 output tokens: GuideLLM's ITL distribution is the request-averaged TPOT
    assert run.metrics["tpot_ms"].mean == pytest.approx(10.5)
    assert run.metrics["ntpot_ms"].mean == pytest.approx(1365.0 / 128)
    assert run.metrics["itl_ms"].mean == pytest.approx(10.5)
    assert run.metrics["itl_ms"].p99 is None
    assert (run.requests_per_s, run.output_tokens_per_s, run.total_tokens_per_s) == (0.75, 96.0, 288.0)


def test_sweep_varying_output_lengths_leave_tpot_out(sweep: list[ImportedRun]) -> None:
    run = sweep[1]
    assert "tpot_ms" not in run.metrics
    assert "ntpot_ms" not in run.metrics
    assert "itl_ms" in run.metrics
    assert has_note(run, "output lengths vary")


def test_sweep_multi_token_chunks_leave_itl_out(sweep: list[ImportedRun]) -> None:
    run = sweep[2]
    assert "itl_ms" not in run.metrics
    assert has_note(run, "chunks carrying several tokens")
    assert run.metrics["tpot_ms"].mean == pytest.approx(14.5)
    assert has_note(run, "chunking_unknown")


# ---------------------------------------------------------------------------------------------------------------
# 0.2–0.3: per-request lists, percentiles without p50; a file cut short


@pytest.fixture(scope="module")
def v02() -> ImportedRun:
    return only(guidellm.read_json(text_of("v02_throughput_benchmarks.json")))


def test_v02_recomputed(v02: ImportedRun) -> None:
    assert v02.tool_version is None
    assert v02.reported["schema"].startswith("GuideLLM 0.2–0.3")
    assert (v02.label, v02.load.kind) == ("throughput", "offline")
    assert (v02.completed, v02.failed) == (4, 1)
    assert v02.model == "qwen2.5-7b"
    assert len(v02.requests) == 5
    assert v02.metrics["ttft_ms"].mean == pytest.approx(375.0)  # 250, 400, 300, 550
    assert v02.metrics["ttft_ms"].p50 == pytest.approx(350.0)
    assert v02.metrics["tpot_ms"].mean == pytest.approx(11.5)  # 1270/127, 1524/127, 1397/127, 1651/127
    assert v02.metrics["itl_ms"].mean == pytest.approx(5842 / 508)
    assert v02.metrics["e2e_ms"].mean == pytest.approx(1865.0)
    assert has_note(v02, "divided by N_out instead of N_out − 1")
    assert has_note(v02, "chunking_unknown")
    errored = [r for r in v02.requests if r.status == "error"]
    assert errored[0].error == "TimeoutError: request exceeded 300 s"
    assert errored[0].ttft_ms is None


def test_v02_cut_short_is_read_from_its_complete_summary(v02: ImportedRun) -> None:
    text = text_of("v02_throughput_benchmarks.cut.json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    run = only(guidellm.read_json(text))
    assert run.notes[0].startswith(
        f"The file is cut short after {len(text.encode()):,} bytes, inside benchmarks[0].requests.successful[2]"
    )
    assert "2 complete before the cut" in run.notes[0]
    assert run.requests == ()
    assert (run.completed, run.failed) == (4, 1)
    ttft = run.metrics["ttft_ms"]
    assert ttft.source == "reported"
    assert ttft.mean == pytest.approx(375.0)
    assert ttft.p50 == 300.0  # GuideLLM's median (0.2–0.3 percentiles have no p50)
    assert run.reported["metrics"] == v02.reported["metrics"]


@pytest.mark.parametrize("marker", ['"metrics": {', '"request_latency": {', '"run_stats": {'])
def test_v02_cut_before_the_summary_is_refused(marker: str) -> None:
    text = text_of("v02_throughput_benchmarks.json")
    cut = text[: text.index(marker) + len(marker) + 30]
    with pytest.raises(
        FormatRefusal,
        match=r"^not valid JSON: the file is cut short after [\d,]+ bytes, inside "
        r"benchmarks\[0\]\..*nothing can be imported",
    ):
        guidellm.read_json(cut)


def test_a_sweep_cut_inside_its_first_benchmark_is_refused() -> None:
    text = text_of("v02_sweep_benchmarks.cut.json")
    with pytest.raises(FormatRefusal) as refusal:
        guidellm.read_json(text)
    assert refusal.value.reason == (
        f"not valid JSON: the file is cut short after {len(text.encode()):,} bytes, inside "
        "benchmarks[0].requests.successful[1].request_id, in a run of 2 benchmarks: benchmark 2 is lost"
    )


# ---------------------------------------------------------------------------------------------------------------
# 0.1 (GuidanceReport)


def test_v01_guidance_report() -> None:
    runs = guidellm.read_json(text_of("v01_guidance_report.json"))
    assert [run.label for run in runs] == ["synchronous", "asynchronous@2.50"]
    first, second = runs
    assert (first.completed, first.failed) == (2, 1)
    assert first.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert first.metrics["ttft_ms"].mean == pytest.approx(45.0)  # first_token_time is a duration in seconds
    itl = first.metrics["itl_ms"]  # 0.1 keeps every gap
    assert itl.n == 6
    assert itl.mean == pytest.approx(11.5)
    assert itl.max == pytest.approx(14.0)
    assert first.metrics["tpot_ms"].mean == pytest.approx(11.5)  # per request 11 and 12
    assert "output_tokens" not in first.metrics  # a chunk count, not tokens
    assert has_note(first, "role-only first chunk")
    assert (second.load.kind, second.load.rate) == ("rate", 2.5)
    assert second.requests_per_s == pytest.approx(2 / 0.5204, rel=1e-3)


# ---------------------------------------------------------------------------------------------------------------
# Broken and degenerate files


def test_all_requests_failed() -> None:
    run = only(guidellm.read_json(text_of("v07_all_failed_benchmarks.json")))
    assert (run.completed, run.failed) == (0, 3)
    assert run.metrics == {}  # GuideLLM's zero-filled successful summaries are not latencies
    assert [r.status for r in run.requests] == ["error"] * 3
    assert has_note(run, "No request succeeded")


def test_wrong_types_are_refused_with_the_place() -> None:
    with pytest.raises(FormatRefusal) as refusal:
        guidellm.read_json(text_of("v07_wrong_types_benchmarks.json"))
    assert refusal.value.reason == (
        "benchmarks[0].metrics.time_to_first_token_ms.successful.mean is the text 'fast', not a number"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{}", "a JSON object without GuideLLM's 'benchmarks' list"),
        ("[1, 2]", "a JSON list, not GuideLLM's report object"),
        ('{"benchmarks": []}', "GuideLLM's 'benchmarks' list is empty: the report holds no benchmark"),
        ('{"benchmarks": {"a": 1}}', "GuideLLM's 'benchmarks' is an object, not a list"),
        (
            '{"benchmarks": [{"name": "x"}]}',
            "a JSON object with a 'benchmarks' list whose entries are not GuideLLM "
            "benchmarks (no type_ 'generative_benchmark')",
        ),
        (
            '{"metadata": {"version": 3}, "benchmarks": [{}]}',
            "GuideLLM metadata.version 3 is not one this importer reads (1: GuideLLM 0.5–0.6, 2: GuideLLM 0.7)",
        ),
        ("hello", "not valid JSON (Expecting value: at line 1, column 1)"),
        (
            "metadata:\n  version: 2\nbenchmarks:\n- type_: generative_benchmark\n",
            "YAML, not JSON: GuideLLM's benchmarks.yaml is not read here; save the report as benchmarks.json (or "
            "benchmarks.csv)",
        ),
    ],
)
def test_json_refusals(text: str, reason: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        guidellm.read_json(text)
    assert refusal.value.reason == reason


def test_a_cut_that_leaves_nothing_complete_is_refused() -> None:
    with pytest.raises(FormatRefusal, match="cut short after 15 bytes"):
        guidellm.read_json('{"benchmarks": ')


# ---------------------------------------------------------------------------------------------------------------
# CSV


def test_csv_three_header_rows() -> None:
    runs = guidellm.read_csv(text_of("v07_benchmarks.csv"))
    assert [run.label for run in runs] == ["concurrent@3", "constant@4.00"]  # rates from Run Info / Profile
    run = runs[0]
    assert (run.format, run.tool_version, run.model) == ("guidellm_csv", "0.7.3", "meta-llama/Llama-3.1-8B-Instruct")
    assert (run.completed, run.failed, run.incomplete) == (6, 1, 0)
    assert run.started_at is None  # local time without a zone
    assert run.reported["start_time_local"] == "2026-01-01 01:00:00"
    ttft = run.metrics["ttft_ms"]
    assert ttft.mean == pytest.approx(42.5833, abs=1e-4)
    assert ttft.p50 == pytest.approx(40.1)  # the Median column, not the 6th Percentiles entry (p25 = 35.4)
    assert (ttft.p90, ttft.min, ttft.max) == (pytest.approx(59.7), pytest.approx(31.2), pytest.approx(59.7))
    assert run.reported["metrics"]["time_to_first_token_ms"]["successful"]["percentiles"]["p25"] == pytest.approx(35.4)
    assert run.metrics["e2e_ms"].mean == pytest.approx(160.0117, abs=1e-4)
    assert run.metrics["itl_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.metrics["tpot_ms"].mean == pytest.approx(7.8019, abs=1e-4)
    assert run.requests_per_s == pytest.approx(16.954, abs=1e-3)
    assert (runs[1].load.kind, runs[1].load.rate, runs[1].load.concurrency) == ("rate", 4.0, 16)
    assert runs[1].metrics["ttft_ms"].mean == pytest.approx(30.0)


def test_csv_v03_single_header_row() -> None:
    run = only(guidellm.read_csv(text_of("v03_benchmarks.csv")))
    assert (run.label, run.load.kind) == ("throughput", "offline")
    assert (run.completed, run.failed) == (4, 1)
    assert run.metrics["ttft_ms"].mean == pytest.approx(375.0)
    assert (run.metrics["ttft_ms"].min, run.metrics["ttft_ms"].p90) == (250.0, 550.0)
    assert run.metrics["e2e_ms"].mean == pytest.approx(1865.0)
    assert run.duration_s == pytest.approx(2.23)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"benchmarks": []}', "JSON, not a CSV table"),
        (
            "Metric,avg,min,max\nTime To First Token (ms),42.58,31.2,59.7\n",
            "a table whose first row (Metric, avg, min, max, …) is neither GuideLLM's three-row header (Run Info, Benchmark, "
            "…, Request Counts) nor its 0.2–0.3 header (Type, Run Id, Id, Name, …)",
        ),
        ("", "an empty CSV table"),
    ],
)
def test_csv_refusals(text: str, reason: str) -> None:
    with pytest.raises(FormatRefusal) as refusal:
        guidellm.read_csv(text)
    assert refusal.value.reason == reason


def test_csv_cut_short_is_refused() -> None:
    with pytest.raises(FormatRefusal, match="the file is cut short"):
        guidellm.read_csv(text_of("v07_benchmarks.cut.csv"))


def test_csv_percentile_cell_of_the_wrong_length_is_refused() -> None:
    text = text_of("v07_benchmarks.csv").replace("[31.2, ", "[", 1)
    with pytest.raises(FormatRefusal, match=r"Time to First Token Successful ms Percentiles has 10 values"):
        guidellm.read_csv(text)


# ---------------------------------------------------------------------------------------------------------------
# Detection among every importer


ACCEPTED = {
    "v07_concurrent_benchmarks.json": "guidellm_json",
    "v05_sweep_benchmarks.json": "guidellm_json",
    "v02_throughput_benchmarks.json": "guidellm_json",
    "v02_throughput_benchmarks.cut.json": "guidellm_json",
    "v01_guidance_report.json": "guidellm_json",
    "v07_all_failed_benchmarks.json": "guidellm_json",
    "v07_benchmarks.csv": "guidellm_csv",
    "v03_benchmarks.csv": "guidellm_csv",
}
REFUSED = {
    "v07_wrong_types_benchmarks.json": "is the text 'fast', not a number",
    "v02_sweep_benchmarks.cut.json": "benchmark 2 is lost",
    "v07_benchmarks.cut.csv": "the file is cut short",
}


def test_every_fixture_is_listed() -> None:
    assert {path.name for path in HERE.iterdir()} == set(ACCEPTED) | set(REFUSED)


@pytest.mark.parametrize(("name", "fmt"), sorted(ACCEPTED.items()))
def test_import_text_picks_guidellm(name: str, fmt: str) -> None:
    found, runs = import_text(text_of(name))
    assert found == fmt
    assert runs


@pytest.mark.parametrize(("name", "fragment"), sorted(REFUSED.items()))
def test_import_text_refuses_broken_files_with_guidellms_reason(name: str, fragment: str) -> None:
    with pytest.raises(BenchmarkFormatError) as error:
        import_text(text_of(name))
    reasons = dict(error.value.tried)
    assert fragment in reasons["guidellm_csv" if name.endswith(".csv") else "guidellm_json"]


OTHER_FIXTURES = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.is_file() and path.parent != HERE and path.suffix in (".json", ".jsonl", ".csv", ".prom", ".log", ".txt")
)


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_other_tools_files_are_refused(path: Path) -> None:
    text = path.read_text(encoding="utf-8-sig")
    for reader in (guidellm.read_json, guidellm.read_csv):
        with pytest.raises(FormatRefusal):
            reader(text)

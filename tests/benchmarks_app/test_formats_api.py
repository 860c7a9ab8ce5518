"""Every format imports from its fixture through the API (the tool named, the runs counted), and a broken file
of each kind is a 400 naming the formats tried, with nothing stored."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from benchmarks_app.models import BenchmarkFile, BenchmarkRun

FIXTURES = Path(__file__).resolve().parents[1] / "benchmarks_app" / "results" / "fixtures"

GOOD = [  # (fixture, tool, runs in the file, successful requests of the first run)
    ("vllm/bench_serve_detailed.json", "vllm", 1, 6),
    ("vllm/legacy_benchmark_serving.json", "vllm", 1, 6),
    ("sglang/bench_serving_details.jsonl", "sglang", 1, 6),
    ("guidellm/v07_concurrent_benchmarks.json", "guidellm", None, None),
    ("guidellm/v07_benchmarks.csv", "guidellm", None, None),
    ("aiperf/profile_export_aiperf.json", "aiperf", 1, 6),
    ("aiperf/profile_export_aiperf.csv", "aiperf", 1, 6),
    ("aiperf/profile_export.jsonl", "aiperf", 1, 6),
    ("genai_perf/profile_export_genai_perf.json", "genai_perf", 1, None),
    ("llmperf/meta-llama-Llama-3-1-8B-Instruct_512_16_summary.json", "llmperf", 1, 6),
    ("llmperf/meta-llama-Llama-3-1-8B-Instruct_512_16_individual_responses.json", "llmperf", 1, 6),
    ("inference_perf/summary_lifecycle_metrics.json", "inference_perf", 1, 6),
    ("llm_sizing/closed_loop.json", "llm_sizing", 1, None),
]
BROKEN = [
    "vllm/broken/cut_short.json",
    "vllm/broken/wrong_types.json",
    "sglang/broken/cut_short.jsonl",
    "guidellm/v07_wrong_types_benchmarks.json",
    "guidellm/v07_benchmarks.cut.csv",
    "aiperf/broken_cut_profile_export_aiperf.json",
    "aiperf/broken_types_profile_export.jsonl",
    "genai_perf/broken_cut_profile_export_genai_perf.csv",
    "llmperf/wrong_types_individual_responses.json",
    "inference_perf/broken/cut_short.json",
    "llm_sizing/broken/wrong_version.json",
]


def _upload(client, path: str):
    handle = io.BytesIO((FIXTURES / path).read_bytes())
    handle.name = Path(path).name
    return client.post("/api/v1/benchmark-runs/", {"file": handle}, format="multipart")


@pytest.mark.parametrize(("path", "tool", "runs", "completed"), GOOD, ids=[item[0] for item in GOOD])
def test_each_format_imports_through_the_api(
    api_client, catalog, django_capture_on_commit_callbacks, path, tool, runs, completed
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(api_client, path)
    assert response.status_code == 201, response.content
    body = response.json()
    assert {run["tool"] for run in body} == {tool}
    if runs is not None:
        assert len(body) == runs
    if completed is not None:
        assert body[0]["completed"] == completed
    assert all(BenchmarkRun.objects.get(pk=run["id"]).status == "done" for run in body)


@pytest.mark.parametrize("path", BROKEN)
def test_a_broken_file_of_each_kind_is_refused_with_nothing_stored(api_client, catalog, path):
    response = _upload(api_client, path)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["message"].startswith(Path(path).name)
    assert len(body["extra"]["tried"]) == 11
    assert BenchmarkFile.objects.count() == 0

"""Benchmark runs through the API: upload (the file kept, runs answered at once, per-request records stored after
the commit), refusals that name every format tried with nothing stored, the size limit, filters, organisation
scoping, analysis (CDFs, goodput under SLOs, measured against estimated), links, calibration and the CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from benchmarks_app.models import BenchmarkFile, BenchmarkRequest, BenchmarkRun
from benchmarks_app.results.detect import IMPORTERS
from sizing.models import Membership, Organisation, SimulationJob
from tests.benchmarks_app.vllm_files import vllm_file


def _upload(client: APIClient, name: str, body: bytes, **fields: str):
    handle = io.BytesIO(body)
    handle.name = name
    return client.post("/api/v1/benchmark-runs/", {"file": handle, **fields}, format="multipart")


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/benchmark-runs/"),
        ("post", "/api/v1/benchmark-runs/"),
        ("get", "/api/v1/benchmark-runs/1/analysis"),
        ("post", "/api/v1/benchmark-runs/calibrate"),
    ],
)
def test_benchmark_endpoints_require_authentication(db, method, url):
    assert getattr(APIClient(), method)(url).status_code in (401, 403)


def test_an_uploaded_run_is_answered_at_once_and_its_requests_stored_after_the_commit(
    api_client, catalog, django_capture_on_commit_callbacks
):
    # given: 40 requests, every 10th failed
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(
            api_client, "bench.json", vllm_file(40, failed_every=10), gpu="nvidia-h100-sxm-80gb", engine="vllm"
        )

    # then
    assert response.status_code == 201, response.content
    (run,) = response.json()
    assert (run["tool"], run["completed"], run["failed"], run["request_count"]) == ("vllm", 36, 4, 40)
    assert run["model"] == "meta-llama/Meta-Llama-3.1-8B"  # the file's model matched to the catalog
    assert run["gpu"] == "nvidia-h100-sxm-80gb"
    # TTFT 30 + (i mod 10) ms over the 36 successes (i = 9, 19, 29, 39 failed): recomputed from the records
    expected_ttft = sum(30 + i % 10 for i in range(40) if (i + 1) % 10) / 36
    assert run["metrics"]["ttft_ms"]["mean"] == pytest.approx(expected_ttft)
    assert run["metrics"]["ttft_ms"]["source"] == "recomputed"
    stored = BenchmarkRun.objects.get(pk=run["id"])
    assert stored.status == BenchmarkRun.Status.DONE
    assert BenchmarkRequest.objects.filter(run=stored).count() == 40
    assert BenchmarkRequest.objects.filter(run=stored, status="error").count() == 4
    assert stored.distributions["status_counts"] == {"ok": 36, "error": 4, "incomplete": 0}
    detail = api_client.get(f"/api/v1/benchmark-runs/{run['id']}/?requests_page=0").json()
    assert len(detail["requests"]) == 40
    assert detail["requests"][0]["ttft_ms"] == pytest.approx(30.0)


def test_a_file_no_importer_reads_is_a_400_naming_every_format_tried_and_nothing_is_stored(api_client, catalog):
    response = _upload(api_client, "notes.json", json.dumps({"hello": "world"}).encode())
    assert response.status_code == 400
    body = response.json()
    assert body["message"].startswith("notes.json: no importer reads this file")
    assert [item["format"] for item in body["extra"]["tried"]] == [importer.format for importer in IMPORTERS]
    assert all(item["reason"] for item in body["extra"]["tried"])
    assert BenchmarkFile.objects.count() == 0
    assert BenchmarkRun.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "words"),
    [(b"", "empty"), (bytes(range(256)) * 8, "binary"), (vllm_file(5)[:200], "cut short")],
    ids=["empty", "binary", "cut"],
)
def test_broken_files_are_refused_with_the_reason(api_client, catalog, body, words):
    response = _upload(api_client, "bench.json", body)
    assert response.status_code == 400
    assert words in response.json()["message"]
    assert BenchmarkFile.objects.count() == 0


def test_a_file_over_50_mib_is_refused_by_its_size(api_client, catalog):
    response = _upload(api_client, "huge.json", b"{" + b" " * (50 * 2**20))
    assert response.status_code == 400
    assert response.json()["extra"]["limit_bytes"] == 50 * 2**20
    assert BenchmarkFile.objects.count() == 0


def test_runs_are_filtered_and_scoped_to_the_organisation(api_client, catalog, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        mine = _upload(api_client, "a.json", vllm_file(10), gpu="nvidia-h100-sxm-80gb").json()[0]
        _upload(api_client, "b.json", vllm_file(10), gpu="nvidia-l40s-48gb")
    assert [r["id"] for r in api_client.get("/api/v1/benchmark-runs/?gpu=nvidia-h100-sxm-80gb").json()["results"]] == [
        mine["id"]
    ]
    assert len(api_client.get("/api/v1/benchmark-runs/?tool=vllm").json()["results"]) == 2
    assert api_client.get("/api/v1/benchmark-runs/?tool=guidellm").json()["results"] == []

    other = get_user_model().objects.create_user(username="rival", password="x" * 12)
    Membership.objects.create(user=other, organisation=Organisation.objects.create(name="Rival"))
    rival = APIClient()
    rival.force_authenticate(user=other)
    assert rival.get("/api/v1/benchmark-runs/").json()["results"] == []
    assert rival.get(f"/api/v1/benchmark-runs/{mine['id']}/").status_code == 404
    assert rival.get(f"/api/v1/benchmark-runs/{mine['id']}/analysis").status_code == 404


def test_analysis_gives_cdfs_goodput_under_the_slos_and_the_model_against_the_measurement(
    api_client, catalog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = _upload(
            api_client, "bench.json", vllm_file(40, failed_every=10), gpu="nvidia-h100-sxm-80gb", engine="vllm", tp="1"
        ).json()[0]

    analysis = api_client.get(f"/api/v1/benchmark-runs/{run['id']}/analysis?slo_ttft_ms=35").json()

    # TTFT ≤ 35 ms: i mod 10 ≤ 5 among the successes (i mod 10 = 9 failed): 6 of every 10, 24 of 40 counted
    assert analysis["goodput"]["good"] == 24
    assert analysis["goodput"]["requests"] == 40
    assert analysis["goodput"]["attainment"] == pytest.approx(24 / 40)
    assert analysis["distributions"]["ttft_ms"]["n"] == 36
    compare = analysis["compare"]
    assert {row["key"] for row in compare["rows"]} >= {"ttft_ms.mean", "tpot_ms.mean", "output_tokens_per_s"}
    ttft = next(row for row in compare["rows"] if row["key"] == "ttft_ms.mean")
    assert ttft["measured"] == pytest.approx(run["metrics"]["ttft_ms"]["mean"])
    assert ttft["predicted"] > 0


def test_a_run_without_a_gpu_says_what_the_comparison_needs_until_it_is_linked(
    api_client, catalog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = _upload(api_client, "bench.json", vllm_file(10)).json()[0]
    assert api_client.get(f"/api/v1/benchmark-runs/{run['id']}/analysis").json()["compare"] == {"missing": ["gpu"]}

    linked = api_client.patch(
        f"/api/v1/benchmark-runs/{run['id']}/links", {"gpu": "nvidia-l40s-48gb", "tp": 1}, format="json"
    )
    assert linked.status_code == 200, linked.content
    assert "rows" in api_client.get(f"/api/v1/benchmark-runs/{run['id']}/analysis").json()["compare"]
    bad = api_client.patch(f"/api/v1/benchmark-runs/{run['id']}/links", {"gpu": "nvidia-a99"}, format="json")
    assert bad.status_code == 400
    assert "gpu" in bad.json()["extra"]["fields"]


def test_calibrating_from_runs_queues_a_calibrate_job(api_client, catalog, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        runs = [
            _upload(
                api_client, f"b{i}.json", vllm_file(20, concurrency=c), gpu="nvidia-h100-sxm-80gb", engine="vllm"
            ).json()[0]
            for i, c in enumerate((1, 4))
        ]
    with django_capture_on_commit_callbacks(execute=False):
        response = api_client.post("/api/v1/benchmark-runs/calibrate", {"runs": [r["id"] for r in runs]}, format="json")
    assert response.status_code == 202, response.content
    job = SimulationJob.objects.get(pk=response.json()["id"])
    assert job.kind == "calibrate"
    assert [m["concurrency"] for m in job.inputs["measurements"]] == [1, 4]
    unknown = api_client.post("/api/v1/benchmark-runs/calibrate", {"runs": [999999]}, format="json")
    assert unknown.status_code == 400


def test_the_cli_dry_run_prints_the_contract_and_stores_nothing(tmp_path, capsys, db):
    path = tmp_path / "bench.json"
    path.write_bytes(vllm_file(12, failed_every=4))
    call_command("benchmark", "import", str(path), "--dry-run", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert (printed["tool"], printed["completed"], printed["failed"]) == ("vllm", 9, 3)
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert set(printed[key]) >= {"mean", "p50", "p90", "p99"}
    assert printed["output_tokens_per_s"] > 0
    assert printed["requests_per_s"] > 0
    assert BenchmarkRun.objects.count() == 0


def test_the_cli_stores_a_run_for_a_users_organisation(tmp_path, capsys, user, catalog):
    path = tmp_path / "bench.json"
    path.write_bytes(vllm_file(12))
    call_command("benchmark", "import", str(path), "--user", user.username, "--gpu", "nvidia-h100-sxm-80gb", "--json")
    stored = json.loads(capsys.readouterr().out)["stored"]
    run = BenchmarkRun.objects.get(pk=stored[0]["id"])
    assert run.organisation == user.membership.organisation
    assert run.status == BenchmarkRun.Status.DONE
    assert BenchmarkRequest.objects.filter(run=run).count() == 12


def test_a_run_exports_as_our_json_that_reimports_and_as_the_llm_d_report(
    api_client, catalog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = _upload(api_client, "bench.json", vllm_file(20, failed_every=5), gpu="nvidia-h100-sxm-80gb").json()[0]

    ours = api_client.get(f"/api/v1/benchmark-runs/{run['id']}/export")
    assert ours.status_code == 200
    assert 'filename="benchmark-run-' in ours["Content-Disposition"]
    exported = ours.json()
    assert exported["format"] == "llm-sizing-loadgen-result"
    assert len(exported["requests"]) == 20
    # it re-imports with the same counts and TTFT
    with django_capture_on_commit_callbacks(execute=True):
        again = _upload(api_client, "again.json", json.dumps(exported).encode()).json()[0]
    assert (again["completed"], again["failed"]) == (16, 4)
    assert again["metrics"]["ttft_ms"]["mean"] == pytest.approx(run["metrics"]["ttft_ms"]["mean"])

    llm_d = api_client.get(f"/api/v1/benchmark-runs/{run['id']}/export?kind=llm-d").json()
    assert llm_d["version"] == "0.2"
    ttft = llm_d["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
    assert ttft["mean"] == pytest.approx(run["metrics"]["ttft_ms"]["mean"] / 1000)  # seconds in the report
    assert api_client.get(f"/api/v1/benchmark-runs/{run['id']}/export?kind=csv").status_code == 400


def test_goodput_of_an_open_loop_holds_ttft_from_the_scheduled_send(
    api_client, catalog, django_capture_on_commit_callbacks
):
    # given: our generator's open-loop run; inside the window: TTFTs 100.0/120.0/200.0 ms (scheduled-send 100.4,
    # 120.3, 200.2), an HTTP error, a timeout, and one request cut by the end of the run
    path = Path(__file__).resolve().parents[1] / "benchmarks_app" / "results" / "fixtures" / "llm_sizing"
    with django_capture_on_commit_callbacks(execute=True):
        run = _upload(api_client, "open.json", (path / "open_loop_window.json").read_bytes()).json()[0]

    # when: a 100.2 ms limit passes 100.0 from the send, but not 100.4 from the schedule
    goodput = api_client.get(f"/api/v1/benchmark-runs/{run['id']}/analysis?slo_ttft_ms=100.2&compare=false").json()

    # then
    assert goodput["goodput"]["requests"] == 5  # 3 ok + 2 errors; the incomplete one left out
    assert goodput["goodput"]["good"] == 0
    assert goodput["compare"] is None

"""The benchmark pages: sign-in and the organisation's walls, uploading a result file (imported, or refused with every
format's reason and nothing stored), the list and its filters, a run's metrics, notes, failures, goodput and
measured-versus-estimated prompt, a sweep's knee, two runs side by side, and every string in Chinese."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import polib
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from benchmarks_app.models import BenchmarkFile, BenchmarkRequest, BenchmarkRun, BenchmarkSeries
from benchmarks_app.results.analysis import cdf, run_distributions
from benchmarks_app.results.detect import IMPORTERS
from benchmarks_app.results.run import RequestRecord
from frontend.views.benchmarks import knee_text
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import deployment_create
from tests.frontend.script_words import page_words, words_in

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
STATIC = ROOT / "frontend" / "static" / "frontend"
MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-a100-sxm-80gb"
OTHER_GPU = "nvidia-l40s-48gb"
PAGE_TEMPLATES = [
    "benchmarks.html",
    "benchmark_detail.html",
    "benchmark_compare.html",
    "benchmark_series.html",
    "base.html",
]

pytestmark = pytest.mark.django_db


# --- rows made directly (the importers are tested on their own) ---------------------------------------------------


def stat(mean: float, *, n: int = 200, source: str = "recomputed", spread: float = 0.5) -> dict[str, Any]:
    insufficient = [f"p{q}" for q, least in ((90, 10), (95, 20), (99, 100)) if n < least]
    return {
        "mean": mean,
        "p50": mean * 0.95,
        "p90": mean * (1 + spread * 0.6),
        "p95": mean * (1 + spread * 0.8),
        "p99": mean * (1 + spread),
        "min": mean * 0.5,
        "max": mean * 2,
        "std": mean * 0.2,
        "n": n,
        "source": source,
        "insufficient": insufficient,
    }


def make_run(organisation: Organisation, name: str = "vllm run", **fields: Any) -> BenchmarkRun:
    """A finished vLLM run at 16 concurrent clients: 198 completed, 2 failed, per-request CDFs."""
    ttft = [40.0 + i * 0.5 for i in range(198)]
    values: dict[str, Any] = {
        "organisation": organisation,
        "name": name,
        "format": "vllm_bench_serve",
        "tool": "vllm",
        "tool_version": "0.6.4",
        "model_name": MODEL,
        "engine": "vllm",
        "gpu_count": 2,
        "tp": 2,
        "load": {"kind": "concurrency", "rate": None, "concurrency": 16},
        "completed": 198,
        "failed": 2,
        "incomplete": 0,
        "duration_s": 20.0,
        "output_tokens_per_s": 2400.0,
        "requests_per_s": 9.9,
        "total_tokens_per_s": 12000.0,
        "request_count": 0,
        "metrics": {
            "ttft_ms": stat(90.0),
            "tpot_ms": stat(12.0),
            "itl_ms": stat(12.0, n=40000),
            "e2e_ms": stat(2500.0),
            "input_tokens": stat(1000.0, spread=0.0),
            "output_tokens": stat(200.0, spread=0.0),
        },
        "distributions": {
            "ttft_ms": cdf(ttft),
            "tpot_ms": cdf([12.0 + i * 0.01 for i in range(198)]),
            "itl_ms": cdf([11.0 + i * 0.02 for i in range(400)]),
            "e2e_ms": cdf([2400.0 + i for i in range(198)]),
            "status_counts": {"ok": 198, "error": 2, "incomplete": 0},
        },
        "reported": {"mean_ttft_ms": 90.0, "request_throughput": 9.9},
        "notes": [],
        "status": BenchmarkRun.Status.DONE,
    }
    values.update(fields)
    return BenchmarkRun.objects.create(**values)


def vllm_file(*, requests: int = 3, model: str = "meta-llama/Llama-3.1-8B-Instruct") -> bytes:
    """A small `vllm bench serve --save-result --save-detailed` file: `requests` requests, the last one failed."""
    ok = requests - 1
    return json.dumps(
        {
            "date": "20260101-000001",
            "endpoint_type": "openai",
            "backend": "openai",
            "label": None,
            "model_id": model,
            "tokenizer_id": model,
            "num_prompts": requests,
            "request_rate": "inf",
            "burstiness": 1.0,
            "max_concurrency": 2,
            "duration": 0.5,
            "completed": ok,
            "failed": 1,
            "total_input_tokens": 500 * requests,
            "total_output_tokens": 4 * ok,
            "request_throughput": ok / 0.5,
            "output_throughput": 4 * ok / 0.5,
            "total_token_throughput": (500 * requests + 4 * ok) / 0.5,
            "input_lens": [500] * requests,
            "output_lens": [4] * ok + [0],
            "ttfts": [0.03] * ok + [0.0],
            "itls": [[0.007, 0.007, 0.007]] * ok + [[]],
            "latencies": [0.051] * ok + [0.0],
            "start_times": [100.0 + i * 0.01 for i in range(requests)],
            "generated_texts": ["a b c d"] * ok + [""],
            "errors": [""] * ok + ["Bad Request"],
            "mean_ttft_ms": 30.0,
            "median_ttft_ms": 30.0,
            "std_ttft_ms": 0.0,
            "p99_ttft_ms": 30.0,
            "mean_tpot_ms": 7.0,
            "median_tpot_ms": 7.0,
            "std_tpot_ms": 0.0,
            "p99_tpot_ms": 7.0,
            "mean_itl_ms": 7.0,
            "median_itl_ms": 7.0,
            "std_itl_ms": 0.0,
            "p99_itl_ms": 7.0,
        }
    ).encode()


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """Llama 3 8B on 2 × A100 80GB with TP 2, with a TTFT SLO of 100 ms and a TPOT SLO of 15 ms."""
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "model": LlmModel.objects.get(slug=MODEL, organisation=None),
            "gpu": Gpu.objects.get(slug=GPU),
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
            "slo": {"ttft_ms": 100, "tpot_ms": 15},
        },
    )


@pytest.fixture
def other_run(catalog: None) -> BenchmarkRun:
    organisation = Organisation.objects.create(name="Other Integrator")
    stranger = get_user_model().objects.create_user(username="stranger", password="another horse battery")
    Membership.objects.create(user=stranger, organisation=organisation)
    series = BenchmarkSeries.objects.create(organisation=organisation, name="their sweep")
    return make_run(organisation, "their secret run", series=series)


def _blob(html: str, element_id: str) -> Any:
    start = html.index(f'<script id="{element_id}" type="application/json">')
    return json.loads(html[start:].split(">", 1)[1].split("</script>")[0])


# --- sign-in and the organisation's walls --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["/benchmarks/", "/benchmarks/1/", "/benchmarks/series/1/", "/benchmarks/compare?a=1&b=2"]
)
def test_the_pages_need_sign_in(client: Client, url: str) -> None:
    # when
    response = client.get(url)

    # then
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("frontend:login"))


def test_uploading_and_deleting_need_sign_in(client: Client, organisation: Organisation) -> None:
    # given
    run = make_run(organisation)

    # when
    upload = client.post("/benchmarks/", {"file": SimpleUploadedFile("run.json", vllm_file())})
    delete = client.post(f"/benchmarks/{run.pk}/delete/")

    # then
    assert upload.status_code == delete.status_code == 302
    assert BenchmarkRun.objects.filter(pk=run.pk).exists()
    assert BenchmarkFile.objects.count() == 0


def test_another_organisations_runs_are_404(
    signed_in: Client, organisation: Organisation, other_run: BenchmarkRun
) -> None:
    # given one run of ours
    ours = make_run(organisation, "our run")

    # when / then: reading, deleting and comparing theirs are all 404
    assert signed_in.get(reverse("frontend:benchmark", args=[other_run.pk])).status_code == 404
    assert signed_in.post(reverse("frontend:benchmark-delete", args=[other_run.pk])).status_code == 404
    assert signed_in.get(reverse("frontend:benchmark-series", args=[other_run.series_id])).status_code == 404
    compare = signed_in.get(reverse("frontend:benchmark-compare"), {"a": ours.pk, "b": other_run.pk})
    assert compare.status_code == 404
    assert f"no benchmark run {other_run.pk} in your organisation" in compare.content.decode()
    # and their run is neither changed nor listed
    assert BenchmarkRun.objects.filter(pk=other_run.pk).exists()
    listing = signed_in.get(reverse("frontend:benchmarks")).content.decode()
    assert "our run" in listing
    assert "their secret run" not in listing
    assert "their secret run" not in compare.content.decode()


# --- upload --------------------------------------------------------------------------------------------------------


def test_the_list_page_offers_the_upload_with_its_limit(signed_in: Client, deployment: Deployment) -> None:
    # when
    html = signed_in.get(reverse("frontend:benchmarks")).content.decode()

    # then
    assert 'enctype="multipart/form-data"' in html
    assert 'id="upload-file" name="file"' in html
    assert "At most 50 MiB" in html
    for name in ("deployment", "model", "gpu", "gpu_count", "tp", "engine", "engine_version"):
        assert f'id="upload-{name}" name="{name}"' in html
    assert f'<option value="{deployment.pk}">Acme chat</option>' in html
    assert 'data-calibrate-url="/api/v1/benchmark-runs/calibrate"' in html
    assert 'id="no-runs"' in html


def test_a_refused_upload_shows_every_format_tried_and_stores_nothing(signed_in: Client) -> None:
    # when a file no tool writes is uploaded
    response = signed_in.post(
        reverse("frontend:benchmarks"), {"file": SimpleUploadedFile("notes.txt", b"hello world, not a benchmark")}
    )

    # then the page comes back with the reason and every format with its own reason
    assert response.status_code == 400
    html = response.content.decode()
    assert "The file was refused; nothing was stored" in html
    assert "notes.txt: no format reads this file. What each format found:" in html
    table = html[html.index('id="tried-formats"') : html.index("</table>", html.index('id="tried-formats"'))]
    for importer in IMPORTERS:
        assert f'data-format="{importer.format}"' in table
    assert "not a JSON object" in table  # the vLLM importer's own words
    assert BenchmarkFile.objects.count() == BenchmarkRun.objects.count() == 0


def test_a_refused_upload_in_chinese(signed_in: Client) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:benchmarks"),
        {"file": SimpleUploadedFile("notes.txt", b"hello world")},
        headers={"accept-language": "zh-hans"},
    )

    # then the lead is in Chinese; the formats' reasons stay in English, marked so
    html = response.content.decode()
    assert response.status_code == 400
    assert "文件被拒绝，未保存任何内容" in html
    assert "notes.txt：没有任何格式能读取此文件。各格式的判断：" in html
    assert '<td lang="en">' in html


def test_an_empty_file_is_refused_with_its_reason(signed_in: Client) -> None:
    # when
    response = signed_in.post(reverse("frontend:benchmarks"), {"file": SimpleUploadedFile("empty.json", b"")})

    # then
    assert response.status_code == 400
    assert "empty.json: the file is empty" in response.content.decode()
    assert BenchmarkFile.objects.count() == 0


def test_an_upload_over_the_limit_is_refused_by_its_size(signed_in: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # given a limit of 100 bytes
    monkeypatch.setattr("frontend.views.benchmarks.MAX_BYTES", 100)

    # when
    response = signed_in.post(reverse("frontend:benchmarks"), {"file": SimpleUploadedFile("big.json", vllm_file())})

    # then
    assert response.status_code == 400
    html = response.content.decode()
    assert "big.json: the file is" in html
    assert "the limit is 100 bytes" in html
    assert BenchmarkFile.objects.count() == 0


def test_a_wrong_link_in_the_upload_is_refused_by_its_field(signed_in: Client) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:benchmarks"), {"file": SimpleUploadedFile("run.json", vllm_file()), "gpu": "no-such-gpu"}
    )

    # then
    assert response.status_code == 400
    assert "Unknown GPU no-such-gpu" in response.content.decode()
    assert BenchmarkFile.objects.count() == 0


def test_an_upload_is_imported_and_opens_its_run(signed_in: Client, deployment: Deployment) -> None:
    # when a vLLM result is uploaded for the deployment
    response = signed_in.post(
        reverse("frontend:benchmarks"),
        {
            "file": SimpleUploadedFile("vllm-run.json", vllm_file()),
            "deployment": deployment.pk,
            "gpu": OTHER_GPU,
            "engine_version": "0.6.4",
        },
    )

    # then the run is stored with what was given (the GPU chosen wins over the deployment's) and its page opens
    assert response.status_code == 302
    run = BenchmarkRun.objects.get()
    assert response["Location"] == reverse("frontend:benchmark", args=[run.pk])
    assert (run.tool, run.deployment, run.gpu.slug, run.tp, run.engine_version) == (
        "vllm",
        deployment,
        OTHER_GPU,
        2,
        "0.6.4",
    )
    assert BenchmarkFile.objects.get().name == "vllm-run.json"
    # and its records are left to the worker: the page shows the import under way
    page = signed_in.get(response["Location"]).content.decode()
    assert "1 run imported from vllm-run.json" in page
    assert 'id="import-status"' in page
    assert _blob(page, "benchmark-data")["status"] == "importing"


def test_a_file_of_several_runs_opens_its_series(signed_in: Client) -> None:
    # given two vLLM results appended to one file (--append-result), one object per line
    data = vllm_file() + b"\n" + vllm_file(requests=5) + b"\n"

    # when
    response = signed_in.post(reverse("frontend:benchmarks"), {"file": SimpleUploadedFile("appended.jsonl", data)})

    # then the runs form a series, whose page opens
    assert response.status_code == 302
    series = BenchmarkSeries.objects.get()
    assert response["Location"] == reverse("frontend:benchmark-series", args=[series.pk])
    assert series.runs.count() == 2
    assert "2 runs imported from appended.jsonl" in signed_in.get(response["Location"]).content.decode()


# --- the list ------------------------------------------------------------------------------------------------------


@pytest.fixture
def listed(catalog: None, organisation: Organisation, deployment: Deployment) -> dict[str, BenchmarkRun]:
    """Four runs differing by deployment, model, GPU, engine and tool."""
    llama = LlmModel.objects.get(slug=MODEL, organisation=None)
    a100, l40s = Gpu.objects.get(slug=GPU), Gpu.objects.get(slug=OTHER_GPU)
    return {
        "deployed": make_run(organisation, "deployed run", deployment=deployment, model=llama, gpu=a100),
        "l40s": make_run(organisation, "l40s run", model=llama, gpu=l40s),
        "sglang": make_run(organisation, "sglang run", engine="sglang", tool="sglang", gpu=a100),
        "bare": make_run(
            organisation,
            "bare run",
            engine="",
            model_name="some/unknown-model",
            status=BenchmarkRun.Status.IMPORTING,
            progress=0.4,
            request_count=1000,
        ),
    }


def _names(html: str) -> set[str]:
    body = html[html.index('id="runs-table"') :] if 'id="runs-table"' in html else ""
    return set(re.findall(r'<th scope="row"><a href="/benchmarks/\d+/">([^<]+)</a>', body))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, {"deployed run", "l40s run", "sglang run", "bare run"}),
        ({"model": MODEL}, {"deployed run", "l40s run"}),
        ({"gpu": GPU}, {"deployed run", "sglang run"}),
        ({"engine": "sglang"}, {"sglang run"}),
        ({"tool": "sglang"}, {"sglang run"}),
        ({"gpu": GPU, "engine": "vllm"}, {"deployed run"}),
        ({"engine": "trtllm"}, set()),
    ],
)
def test_the_list_filters_runs(
    signed_in: Client, listed: dict[str, BenchmarkRun], query: dict[str, str], expected: set[str]
) -> None:
    # when
    html = signed_in.get(reverse("frontend:benchmarks"), query).content.decode()

    # then
    assert _names(html) == expected
    if not expected:
        assert "No run matches these filters." in html


def test_the_list_filters_by_deployment(
    signed_in: Client, listed: dict[str, BenchmarkRun], deployment: Deployment
) -> None:
    # when
    html = signed_in.get(reverse("frontend:benchmarks"), {"deployment": deployment.pk}).content.decode()

    # then
    assert _names(html) == {"deployed run"}
    assert f'<option value="{deployment.pk}" selected>Acme chat</option>' in html
    assert 'id="filter-clear"' in html


def test_the_list_shows_each_runs_figures_and_the_import_progress(
    signed_in: Client, listed: dict[str, BenchmarkRun]
) -> None:
    # when
    html = signed_in.get(reverse("frontend:benchmarks")).content.decode()

    # then a finished run shows its tool, model, GPU × count, load, counts and figures
    run = listed["deployed"]
    row = html[html.index(f'<tr data-run="{run.pk}"') :]
    row = row[: row.index("</tr>")]
    for text in (
        "vLLM bench serve 0.6.4",
        MODEL,
        "NVIDIA A100",
        "× 2",
        "16 concurrent clients",
        ">198<",
        "85.5",
        "135.0",
        "11.4",
        "2,400",
        "Done",
    ):
        assert text in row, text
    assert 'class="num cell-warn">2' in row  # the failures stand out
    # and the importing run its progress; the page follows it
    importing = html[html.index(f'<tr data-run="{listed["bare"].pk}"') :]
    assert "Importing" in importing[: importing.index("</tr>")]
    assert "width: 40%" in importing[: importing.index("</tr>")]
    assert "data-importing" in html
    # and every run can be ticked to compare or calibrate
    assert html.count('class="run-pick"') == 4
    assert 'id="compare-button"' in html
    assert 'id="calibrate-button"' in html


# --- a run ---------------------------------------------------------------------------------------------------------


def test_the_run_page_shows_metrics_notes_failures_and_the_missing_prompt(
    signed_in: Client, organisation: Organisation
) -> None:
    # given a summary-only run of a model outside the catalog, with few requests and the tool's notes
    run = make_run(
        organisation,
        "small run",
        model_name="acme/private-model",
        completed=8,
        failed=3,
        incomplete=1,
        metrics={"ttft_ms": stat(90.0, n=8, source="reported"), "e2e_ms": stat(1500.0, n=8)},
        distributions={},
        notes=["GuideLLM's TPOT includes the TTFT: not mapped onto TPOT."],
        reported={"mean_ttft_ms": 90.0, "tool_field": "kept as written"},
    )

    # when
    response = signed_in.get(reverse("frontend:benchmark", args=[run.pk]))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    # the canonical metrics with their source, the unreliable percentiles greyed with a reason
    table = html[html.index('id="metrics-table"') : html.index("</table>", html.index('id="metrics-table"'))]
    assert '<tr data-metric="ttft_ms">' in table
    assert '<tr data-metric="e2e_ms">' in table
    ttft = table[table.index('<tr data-metric="ttft_ms">') : table.index('<tr data-metric="e2e_ms">')]
    assert 'data-source="reported"' in ttft
    assert "as reported by the tool" in ttft
    assert 'class="num is-insufficient" data-field="p99"' in ttft
    assert "Too few samples for this percentile (n = 8)" in ttft
    assert 'class="num" data-field="p50"' in ttft
    # the failures and the incomplete requests, prominently
    assert '<div class="bench-count count-bad" data-count="failed"><dt>Failed</dt><dd>3' in html
    assert 'data-count="incomplete"><dt>Incomplete (cut by the run\'s end)</dt><dd>1' in html
    # the notes, the raw summary, and no distributions to draw
    assert "GuideLLM&#x27;s TPOT includes the TTFT" in html
    assert "kept as written" in html
    assert 'id="no-distributions"' in html
    # the estimate needs a model and a GPU: said, with the form to set them
    assert 'id="estimate-missing"' in html
    assert '<li data-missing="model">' in html
    assert '<li data-missing="gpu">' in html
    assert 'id="links-form"' in html
    assert 'id="links-details" open' in html
    assert "The file names acme/private-model" in html
    assert "acme/private-model (not matched to a known model)" in html
    assert _blob(html, "benchmark-data")["compare_pending"] is False


def test_the_run_page_of_a_complete_run_draws_and_estimates(
    signed_in: Client, deployment: Deployment, organisation: Organisation
) -> None:
    # given a run on the deployment's plan, with per-request records: 8 within the SLOs, 1 too slow, 1 failed
    run = make_run(
        organisation,
        "full run",
        deployment=deployment,
        model=deployment.model,
        gpu=deployment.gpu,
        request_count=10,
        notes=["a note"],
    )
    records = [RequestRecord(ttft_ms=50.0, e2e_ms=500.0, tpot_ms=10.0, output_tokens=50) for _ in range(8)]
    records += [
        RequestRecord(ttft_ms=500.0, e2e_ms=900.0, tpot_ms=10.0, output_tokens=50),
        RequestRecord(status="error", error="Bad Request"),
    ]
    BenchmarkRequest.objects.bulk_create(
        [
            BenchmarkRequest(
                run=run,
                index=i,
                status=r.status,
                error=r.error or "",
                ttft_ms=r.ttft_ms,
                e2e_ms=r.e2e_ms,
                tpot_ms=r.tpot_ms,
                output_tokens=r.output_tokens,
            )
            for i, r in enumerate(records)
        ]
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(distributions=run_distributions(records))

    # when
    html = signed_in.get(reverse("frontend:benchmark", args=[run.pk])).content.decode()

    # then the CDFs are drawn from the run's data, the deployment's SLOs marked
    data = _blob(html, "benchmark-data")
    assert data["distributions"]["ttft_ms"]["n"] == 9
    assert data["slo"] == {"ttft_ms": 100.0, "tpot_ms": 15.0}
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert f'id="cdf-{key}"' in html
    # the goodput under the deployment's SLOs: 8 of 10 (the error is a miss)
    assert "80.0%" in html
    assert "of the requests met every SLO (8 of 10)" in html
    assert "1 error counted as a miss" in html
    assert "The SLOs are those of the deployment Acme chat." in html
    assert 'id="slo-ttft_ms" name="slo_ttft_ms" min="0" step="any" inputmode="decimal" value="100.0"' in html
    # and the estimate is asked of the analysis API, which answers with the rows the script shows
    assert data["compare_pending"] is True
    assert 'id="estimate-loading"' in html
    analysis = signed_in.get(data["analysis_url"]).json()
    assert analysis["goodput"]["good"] == 8
    keys = [row["key"] for row in analysis["compare"]["rows"]]
    assert "ttft_ms.mean" in keys
    assert "output_tokens_per_s" in keys
    assert {"measured", "predicted", "error"} <= set(analysis["compare"]["rows"][0])


def test_deleting_a_run_returns_to_the_list(signed_in: Client, organisation: Organisation) -> None:
    # given
    run = make_run(organisation, "doomed run")

    # when
    response = signed_in.post(reverse("frontend:benchmark-delete", args=[run.pk]))

    # then
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:benchmarks")
    assert not BenchmarkRun.objects.filter(pk=run.pk).exists()
    assert "Run doomed run deleted" in signed_in.get(response["Location"]).content.decode()


# --- a series ------------------------------------------------------------------------------------------------------


@pytest.fixture
def sweep(organisation: Organisation) -> BenchmarkSeries:
    """Four runs at 1, 2, 4 and 8 clients: 10, 19, 30 and 31 output tokens/s (the knee at 4); 5 failures at 8."""
    series = BenchmarkSeries.objects.create(organisation=organisation, name="sweep.json")
    for index, (clients, tokens) in enumerate(((1, 10.0), (2, 19.0), (4, 30.0), (8, 31.0))):
        make_run(
            organisation,
            f"sweep.json #{index + 1}",
            series=series,
            series_index=index,
            load={"kind": "concurrency", "rate": None, "concurrency": clients},
            output_tokens_per_s=tokens,
            failed=5 if clients == 8 else 0,
            metrics={"ttft_ms": stat(50.0 * clients), "tpot_ms": stat(10.0 + clients), "e2e_ms": stat(800.0 * clients)},
        )
    return series


def test_the_series_page_marks_the_knee(signed_in: Client, sweep: BenchmarkSeries) -> None:
    # when
    html = signed_in.get(reverse("frontend:benchmark-series", args=[sweep.pk])).content.decode()

    # then the knee in words, its row marked, every run linked
    assert (
        "The knee is at 4 concurrent clients: the output throughput reaches 90% of the series&#x27; best "
        "there (30 of 31 tokens/s)"
    ) in html
    knee_row = html[html.index("data-knee") :]
    assert knee_row[: knee_row.index("</tr>")].count("sweep.json #3") == 1
    assert html.count('class="row-knee"') == 1
    assert html.count('href="/benchmarks/') >= 5
    assert "5 requests failed across the series" in html
    # and the charts get the points and the knee
    data = _blob(html, "series-data")
    assert data["axis"] == "concurrency"
    assert data["knee"] == 4
    assert [p["x"] for p in data["points"]] == [1, 2, 4, 8]
    for chart in ("series-throughput", "series-ttft", "series-tpot", "series-e2e"):
        assert f'id="{chart}"' in html


def test_the_knee_in_words_without_a_load_axis_or_enough_points() -> None:
    assert "share no load axis" in knee_text({"axis": "index", "knee": None, "points": []})
    assert "fewer than three" in knee_text({"axis": "rate", "knee": None, "points": [{"x": 1.0}]})
    assert "2.50 requests/s" in knee_text(
        {
            "axis": "rate",
            "knee": 2.5,
            "points": [
                {"x": 1.0, "output_tokens_per_s": 10.0},
                {"x": 2.5, "output_tokens_per_s": 20.0},
                {"x": 4.0, "output_tokens_per_s": 21.0},
            ],
        }
    )


# --- two runs ------------------------------------------------------------------------------------------------------


def test_the_compare_page_shows_the_differences(signed_in: Client, organisation: Organisation) -> None:
    # given run B with a 50 % higher TTFT and a better throughput
    a = make_run(organisation, "before tuning")
    b = make_run(
        organisation,
        "after tuning",
        metrics={**a.metrics, "ttft_ms": stat(135.0)},
        output_tokens_per_s=3000.0,
        failed=0,
    )

    # when
    response = signed_in.get(reverse("frontend:benchmark-compare"), {"a": a.pk, "b": b.pk})

    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert "before tuning" in html
    assert "after tuning" in html
    ttft_mean = html[html.index('<tr data-metric="ttft_ms" data-field="mean"') :]
    ttft_mean = ttft_mean[: ttft_mean.index("</tr>")]
    assert ">90.0<" in ttft_mean
    assert ">135.0<" in ttft_mean
    assert '<td class="num diff-delta is-worse">+45.0</td>' in ttft_mean
    assert '<td class="num diff-percent is-worse">+50.0%</td>' in ttft_mean
    throughput = html[html.index('<tr data-row="output_tokens_per_s"') :]
    throughput = throughput[: throughput.index("</tr>")]
    assert '<td class="num diff-delta is-better">+600</td>' in throughput
    assert '<td class="num diff-percent is-better">+25.0%</td>' in throughput
    failed = html[html.index('<tr data-row="failed"') :]
    assert '<td class="num diff-delta is-better">−2</td>' in failed[: failed.index("</tr>")]
    # every canonical metric of the runs, and both CDFs for the charts
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "input_tokens", "output_tokens"):
        assert f'<tr data-metric="{key}" data-field="mean" class="row-group">' in html
    data = _blob(html, "compare-data")
    assert data["a"]["name"] == "before tuning"
    assert data["b"]["distributions"]["ttft_ms"]["n"] == 198


def test_the_list_checkboxes_open_the_comparison(signed_in: Client, organisation: Organisation) -> None:
    # given
    a, b = make_run(organisation, "first"), make_run(organisation, "second")

    # when the list's form sends the two ticked runs
    response = signed_in.get(reverse("frontend:benchmark-compare") + f"?run={a.pk}&run={b.pk}")

    # then
    assert response.status_code == 200
    assert 'id="compare-metrics"' in response.content.decode()


@pytest.mark.parametrize("query", ["?run=1", "?a=1"])
def test_the_compare_page_asks_for_two_runs(signed_in: Client, organisation: Organisation, query: str) -> None:
    # given
    run = make_run(organisation)
    make_run(organisation, "another")

    # when
    response = signed_in.get(reverse("frontend:benchmark-compare") + query.replace("1", str(run.pk)))

    # then
    assert response.status_code == 400
    html = response.content.decode()
    assert "Choose two runs to compare" in html
    assert 'id="compare-form"' in html


# --- Chinese -------------------------------------------------------------------------------------------------------


def test_the_run_page_in_chinese(signed_in: Client, organisation: Organisation) -> None:
    # given
    run = make_run(organisation, "small run", metrics={"ttft_ms": stat(90.0, n=8, source="reported")})

    # when
    html = signed_in.get(
        reverse("frontend:benchmark", args=[run.pk]), headers={"accept-language": "zh-hans"}
    ).content.decode()

    # then
    assert '<html lang="zh-hans">' in html
    for text in (
        "基准测试",
        "指标",
        "工具自报",
        "失败",
        "延迟分布",
        "SLO 下的有效吞吐",
        "实测与估算对比",
        "16 个并发客户端",
    ):
        assert text in html, text
    assert "Metrics" not in html
    assert words_in(signed_in, "benchmarks", "zh-hans")["goodput_none"] == "有效吞吐需要逐请求记录和至少一个 SLO"


def test_the_list_and_series_pages_in_chinese(signed_in: Client, sweep: BenchmarkSeries) -> None:
    # when
    listing = signed_in.get(reverse("frontend:benchmarks"), headers={"accept-language": "zh-hans"}).content.decode()
    series = signed_in.get(
        reverse("frontend:benchmark-series", args=[sweep.pk]), headers={"accept-language": "zh-hans"}
    ).content.decode()

    # then
    assert "上传结果文件" in listing
    assert "对比勾选的两次运行" in listing
    assert "拐点位于 4 个并发客户端" in series


def test_every_script_string_reaches_the_page_in_chinese(signed_in: Client) -> None:
    # given
    english = {key: value for key, value in words_in(signed_in, "benchmarks", "en").items() if isinstance(value, str)}

    # when
    chinese = words_in(signed_in, "benchmarks", "zh-hans")

    # then every English sentence was translated (names, units and flags may stay as they are)
    untranslated = {
        key
        for key, value in english.items()
        if chinese[key] == value and re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", value))
    }
    assert untranslated == set()


def test_every_string_the_script_reads_is_in_the_blob() -> None:
    # given the fixed keys the scripts read, and those benchmarks.js builds from API values
    source = "\n".join((STATIC / name).read_text() for name in ("common.js", "benchmarks.js"))
    read = set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
    built = {
        *(
            f"metric_{key}"
            for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "output_tokens_per_s", "requests_per_s")
        ),
        *(f"metric_title_{key}" for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")),
        *(f"field_{field}" for field in ("mean", "p50", "p99")),
        *(f"missing_{item}" for item in ("model", "gpu", "traffic")),
        *(f"axis_{axis}" for axis in ("concurrency", "rate", "index")),
    }
    # common.js's figure sources and units belong to the sizing pages; this script does not show them
    common_only = {key for key in read if key.startswith(("source_", "gib_value"))}

    # then
    assert (read - common_only) | built <= set(page_words("benchmarks"))


def _template_msgids(text: str) -> set[str]:
    """The msgids of the templates' {% translate %} and {% blocktranslate %} tags (variables as %(name)s)."""
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    for body in re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", text, flags=re.DOTALL):
        for part in body.split("{% plural %}"):
            msgids.add(re.sub(r"{{ (\w+) }}", r"%(\1)s", part))
    return msgids


def _python_msgids(path: Path) -> set[str]:
    """The literal strings the module passes to _(), gettext_lazy() and ngettext()."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("_", "gettext_lazy", "ngettext")
        ):
            for arg in node.args[: 2 if node.func.id == "ngettext" else 1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
    return found


def test_every_string_of_the_benchmark_pages_is_in_the_chinese_catalog() -> None:
    # given the templates' strings and those of the view module
    text = "".join((TEMPLATES / name).read_text() for name in PAGE_TEMPLATES)
    msgids = _template_msgids(text) | _python_msgids(ROOT / "frontend" / "views" / "benchmarks.py")
    catalog: dict[str, polib.POEntry] = {}
    for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po")):
        catalog[entry.msgid] = entry
        if entry.msgid_plural:
            catalog[entry.msgid_plural] = entry

    # when
    missing = {
        msgid
        for msgid in msgids
        if msgid not in catalog or not (catalog[msgid].msgstr or any(catalog[msgid].msgstr_plural.values()))
    }

    # then
    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()


def test_the_list_reads_the_counts_of_the_records_when_the_file_gives_none(
    signed_in: Client, organisation: Organisation
) -> None:
    # given a run whose file counts nothing, its records 7 ok, 2 errors and 1 incomplete
    run = make_run(
        organisation,
        "uncounted",
        completed=None,
        failed=None,
        incomplete=None,
        distributions={"status_counts": {"ok": 7, "error": 2, "incomplete": 1}},
    )

    # when
    html = signed_in.get(reverse("frontend:benchmarks")).content.decode()

    # then
    row = html[html.index(f'<tr data-run="{run.pk}"') :]
    row = row[: row.index("</tr>")]
    assert '<td class="num">7</td>' in row
    assert 'class="num cell-warn">2 <span class="muted"' in row
    assert ">+1</span>" in row


def test_the_list_reads_the_runs_in_a_fixed_number_of_queries(
    signed_in: Client, organisation: Organisation, django_assert_max_num_queries
) -> None:
    # given many runs (their distributions and raw summaries are not read for the list)
    for index in range(30):
        make_run(organisation, f"run {index}")

    # when / then
    with django_assert_max_num_queries(20):
        response = signed_in.get(reverse("frontend:benchmarks"))
    assert response.status_code == 200
    assert response.content.decode().count('class="run-pick"') == 30

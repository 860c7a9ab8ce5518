"""The GPU memory pages: sign-in and the organisation's walls, uploading a monitoring log (judged, or refused with
its reason under its field and nothing stored), a log's health verdict with each check in the user's language, the
charts' data and the per-GPU table, deleting, the export links of a benchmark run, and every string in Chinese."""

from __future__ import annotations

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
from django.utils import translation

from benchmarks_app.models import MemoryLog
from benchmarks_app.results.health import health_verdict
from benchmarks_app.results.timeline import parse_timeline
from benchmarks_app.services.memory_logs import memory_log_import
from frontend.views.memory_logs import CHECKS, check_text
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import deployment_create
from tests.frontend.script_words import page_words, words_in
from tests.frontend.test_benchmark_pages import _blob, _python_msgids, _template_msgids, make_run

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
STATIC = ROOT / "frontend" / "static" / "frontend"
TIMELINE = ROOT / "tests" / "benchmarks_app" / "results" / "fixtures" / "timeline"
MIB = 2**20
COMMITTED_GIB = "73.2421875"  # 75,000 MiB: the commitment the health tests use
SMI_COMMAND = (
    "nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu --format=csv -l 5 "
    "&gt; gpu-memory.csv"
)
PAGE_TEMPLATES = ["memory_logs.html", "memory_log_detail.html", "benchmark_detail.html", "base.html"]

pytestmark = pytest.mark.django_db


def fixture_file(name: str, as_name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(as_name or name, (TIMELINE / name).read_bytes())


def upload(client: Client, name: str, **fields: Any) -> Any:
    data: dict[str, Any] = {"file": fixture_file(name)}
    for key in ("events", "breaker"):
        if key in fields:
            data[key] = fixture_file(fields.pop(key))
    return client.post(reverse("frontend:memory-logs"), {**data, **fields})


def _row(html: str, start: str) -> str:
    row = html[html.index(start) :]
    return row[: row.index("</tr>")]


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "model": LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation=None),
            "gpu": Gpu.objects.get(slug="nvidia-a100-sxm-80gb"),
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
        },
    )


@pytest.fixture
def other_log(db: None) -> MemoryLog:
    organisation = Organisation.objects.create(name="Other Integrator")
    stranger = get_user_model().objects.create_user(username="stranger", password="another horse battery")
    Membership.objects.create(user=stranger, organisation=organisation)
    return memory_log_import(
        organisation=organisation,
        user=stranger,
        name="their-secret.csv",
        data=(TIMELINE / "healthy_2gpu_72h.csv").read_bytes(),
    )


# --- sign-in and the organisation's walls --------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/memory/", "/memory/1/"])
def test_the_pages_need_sign_in(client: Client, url: str) -> None:
    # when
    response = client.get(url)

    # then
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("frontend:login"))


def test_uploading_and_deleting_need_sign_in(client: Client, other_log: MemoryLog) -> None:
    # when
    uploaded = upload(client, "healthy_2gpu_72h.csv")
    deleted = client.post(reverse("frontend:memory-log-delete", args=[other_log.pk]))

    # then
    assert uploaded.status_code == deleted.status_code == 302
    assert list(MemoryLog.objects.values_list("pk", flat=True)) == [other_log.pk]


def test_another_organisations_logs_are_404(signed_in: Client, other_log: MemoryLog) -> None:
    # when / then: reading and deleting theirs are 404
    assert signed_in.get(reverse("frontend:memory-log", args=[other_log.pk])).status_code == 404
    assert signed_in.post(reverse("frontend:memory-log-delete", args=[other_log.pk])).status_code == 404
    # and their log is neither changed nor listed
    assert MemoryLog.objects.filter(pk=other_log.pk).exists()
    listing = signed_in.get(reverse("frontend:memory-logs")).content.decode()
    assert "their-secret.csv" not in listing
    assert 'id="no-logs"' in listing


# --- the list and the upload ---------------------------------------------------------------------------------------


def test_the_list_page_offers_the_upload_with_its_limit_and_the_command(
    signed_in: Client, deployment: Deployment
) -> None:
    # when
    html = signed_in.get(reverse("frontend:memory-logs")).content.decode()

    # then the form: the log, the two optional event logs, the deployment, the commitment, the hours, the zone
    assert 'enctype="multipart/form-data"' in html
    for name in ("file", "events", "breaker"):
        assert f'id="upload-{name}" name="{name}"' in html
    assert f'<option value="{deployment.pk}">Acme chat</option>' in html
    assert 'name="committed_gib_per_gpu"' in html
    assert re.search(r'name="hours_required"[^>]*value="72"', html)
    assert '<option value="0" selected>UTC</option>' in html
    assert '<option value="480">UTC+08:00</option>' in html
    assert '<option value="-300">UTC−05:00</option>' in html
    assert "At most 50 MiB" in html
    assert 'data-max-bytes="52428800"' in html
    assert SMI_COMMAND in html
    # and the header links the page
    assert 'href="/memory/" class="topnav-link is-active"' in html
    assert ">GPU memory</a>" in html


def test_a_healthy_log_passes_and_its_page_draws_it(signed_in: Client, deployment: Deployment) -> None:
    # when the healthy 72-hour log is uploaded with the commitment of 75,000 MiB per GPU
    response = upload(signed_in, "healthy_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB, deployment=deployment.pk)

    # then it is stored, judged against the commitment, and its page opens
    assert response.status_code == 302
    log = MemoryLog.objects.get()
    assert response["Location"] == reverse("frontend:memory-log", args=[log.pk])
    assert (log.committed_bytes_per_gpu, log.hours_required, log.deployment) == (75_000 * MIB, 72, deployment)
    html = signed_in.get(response["Location"]).content.decode()
    assert "Log healthy_2gpu_72h.csv imported: Pass" in html
    # the verdict, big, then every check passed
    assert 'id="verdict-badge" data-verdict="pass">Pass</span>' in html
    assert "72 h of 72 h monitored" in html
    assert 'id="first-violation"' not in html
    for code in ("coverage", "no_oom", "no_restart", "no_sustained_climb", "peak_within_commitment"):
        assert f'<tr data-check="{code}" data-passed="true" class="check-pass">' in html
    peak = _row(html, '<tr data-check="peak_within_commitment"')
    assert (
        "The highest peak, 70.81 GiB on GPU 0 at 2026-12-02 15:41:02 UTC, stays within the commitment of "
        "73.24 GiB per GPU (2,488 MiB to spare, judged within the gauge&#x27;s step of 1 MiB)"
    ) in peak
    # 2,488 MiB = 75,000 − 72,512 MiB
    assert 'lang="en"' not in peak
    assert "The log covers 72 h of the 72 h required" in html
    # the verdict as evidence: the API's JSON, linked
    assert f'href="/api/v1/memory-logs/{log.pk}/?format=json" id="api-link"' in html
    assert signed_in.get(f"/api/v1/memory-logs/{log.pk}/?format=json").json()["verdict"]["verdict"] == "pass"
    # the chart gets both GPUs' series, the commitment and no events
    data = _blob(html, "memory-data")
    assert [gpu["gpu"] for gpu in data["gpus"]] == ["0", "1"]
    assert len(data["gpus"][0]["t"]) == len(data["gpus"][0]["used_bytes"]) == 865
    assert max(data["gpus"][0]["used_bytes"]) == 76_034_342_912
    assert data["gpus"][0]["total_bytes"] == 81_559 * MIB
    assert data["committed_bytes"] == 75_000 * MIB
    assert data["markers"] == data["climbs"] == []
    assert 'id="memory-chart"' in html
    assert 'id="kv-chart"' not in html
    assert "vendor/plotly/plotly.min.js" in html
    # the per-GPU table
    gpu0 = _row(html, '<tr data-gpu="0"')
    assert '<td class="num" data-field="peak">70.81</td>' in gpu0
    assert '<td class="num" data-field="total">79.65</td>' in gpu0
    assert '<td class="num" data-field="committed">73.24</td>' in gpu0
    assert '<td class="num" data-field="headroom">2.43</td>' in gpu0
    assert "0.0 MiB/h" in gpu0
    # and the list shows it with its badge
    listing = signed_in.get(reverse("frontend:memory-logs")).content.decode()
    row = _row(listing, f'<tr data-log="{log.pk}"')
    assert '<span class="health-badge health-pass">Pass</span>' in row
    assert '<td class="num">72 <span class="muted">/ 72</span></td>' in row
    assert '<td class="num">73.24</td>' in row
    assert "Acme chat" in row


def test_a_leaking_log_fails_on_the_climb(signed_in: Client) -> None:
    # when the log whose GPU 0 rises 40 MiB an hour is uploaded
    response = upload(signed_in, "leak_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB)

    # then it fails on the climb alone, when the climb was proven
    assert response.status_code == 302
    html = signed_in.get(response["Location"]).content.decode()
    assert 'id="verdict-badge" data-verdict="fail">Fail</span>' in html
    assert "First violation: <strong>2026-12-01 13:36:02 UTC</strong>" in html
    climb = _row(html, '<tr data-check="no_sustained_climb"')
    assert 'data-passed="false" class="check-fail"' in climb
    assert (
        "Sustained memory climb: GPU 0 rises 40.0 MiB/h (95% CI 39.8 MiB/h to 40.2 MiB/h) and reaches the "
        "commitment in 28 h, proven by 2026-12-01 13:36:02 UTC"
    ) in climb
    assert html.count('class="check-fail"') == 1
    # the GPU's row and the chart mark it
    assert '<tr data-gpu="0" class="row-climb">' in html
    assert "40.0 MiB/h" in _row(html, '<tr data-gpu="0"')
    assert "28 h to the commitment" in _row(html, '<tr data-gpu="0"')
    assert _blob(html, "memory-data")["climbs"] == [{"gpu": "0", "detected_at": "2026-12-01T13:36:02.123Z"}]
    # the note of the parser
    assert "no header line: columns read as" in html
    # and the list shows the failure
    listing = signed_in.get(reverse("frontend:memory-logs")).content.decode()
    assert '<span class="health-badge health-fail">Fail</span>' in listing
    assert "2026-12-01 13:36:02 UTC" in listing


def test_an_oom_with_a_restart_and_a_slow_breaker(signed_in: Client) -> None:
    # when the log of an OOM and a restart is uploaded with its engine log and the breaker's events
    response = upload(
        signed_in,
        "oom_restart_2gpu_72h.csv",
        committed_gib_per_gpu=COMMITTED_GIB,
        events="oom_events.log",
        breaker="breaker_events.jsonl",
    )

    # then every violation is a failed check, the first of them (the slow breaker) the verdict's
    assert response.status_code == 302
    html = signed_in.get(response["Location"]).content.decode()
    assert "First violation: <strong>2026-11-30 15:41:02 UTC</strong>" in html
    for code in ("no_oom", "no_restart", "peak_within_commitment", "breaker_reaction"):
        assert f'<tr data-check="{code}" data-passed="false" class="check-fail">' in html
    assert (
        "3 out-of-memory or XID events: GPU 0 full (79.30 GiB) at 2026-12-01 19:41:02 UTC, then down to "
        "0.00 GiB; out-of-memory error at 2026-12-01 19:41:03 UTC; XID 31 at 2026-12-01 19:41:05 UTC"
    ) in html
    # both GPUs fell at 19:46:02 and came back: one restart of the server, not two
    assert (
        "1 restart or outage, counted once however many GPUs showed it: a restart at 2026-12-01 19:46:02 UTC (GPU 0, 1)"
    ) in html
    assert ("1 of 3 trips not acted on within 2 s: trip at 2026-11-30 15:41:02 UTC acted on after 3.5 s") in html
    assert (
        "Memory went above the commitment of 73.24 GiB per GPU by more than the gauge&#x27;s step of 1 MiB on "
        "GPU 0 (79.30 GiB at"
    ) in html
    # the chart marks the events; the per-GPU table counts them; the logged lines are listed
    kinds = {marker["kind"] for marker in _blob(html, "memory-data")["markers"]}
    assert kinds == {"oom", "restart", "oom_logged", "xid"}
    gpu0 = _row(html, '<tr data-gpu="0"')
    assert 'data-field="headroom">−6.05</td>' in gpu0
    assert '<td class="num cell-warn" data-field="ooms">1</td>' in gpu0
    assert 'id="events-table"' in html
    assert "torch.OutOfMemoryError" in html


def test_without_a_commitment_the_verdict_is_insufficient(signed_in: Client) -> None:
    # when
    response = upload(signed_in, "healthy_2gpu_72h.csv")

    # then
    html = signed_in.get(response["Location"]).content.decode()
    assert 'data-verdict="insufficient">Insufficient</span>' in html
    peak = _row(html, '<tr data-check="peak_within_commitment"')
    assert 'data-passed="null" class="check-unknown"' in peak
    assert "No committed figure per GPU was given: the peak cannot be judged" in peak
    assert "Could not be judged" in peak


def test_a_short_cut_log_shows_its_notes(signed_in: Client) -> None:
    # when a log cut mid-line, of a few minutes, is uploaded
    response = upload(signed_in, "cut_last_line.csv", committed_gib_per_gpu=COMMITTED_GIB)

    # then
    html = signed_in.get(response["Location"]).content.decode()
    assert 'data-verdict="insufficient"' in html
    assert 'id="truncated-note"' in html
    assert "the last line (14) is cut short" in html
    assert "The log covers 0.083 h; the verdict needs 72 h of monitoring" in html
    assert "Too little data to judge a climb: GPU 0 has 1 of the 24 hourly buckets the test needs" in html


# --- refusals ------------------------------------------------------------------------------------------------------


def test_a_benchmark_result_is_refused_under_its_field(signed_in: Client) -> None:
    # when a benchmark result is uploaded as a monitoring log
    response = signed_in.post(
        reverse("frontend:memory-logs"),
        {
            "file": SimpleUploadedFile("bench.json", b'{"completed": 6, "failed": 1, "mean_ttft_ms": 42.5}'),
            "committed_gib_per_gpu": COMMITTED_GIB,
        },
    )

    # then the page comes back with the reason under the file, the values kept, nothing stored
    assert response.status_code == 400
    html = response.content.decode()
    assert "The log was refused; nothing was stored" in html
    error = html[html.index('data-error-for="file"') :]
    error = error[: error.index("</p>")]
    assert (
        "bench.json: a benchmark result, not a monitoring log: import it as a benchmark run on the Benchmarks page"
    ) in error
    assert 'lang="en"' not in error
    assert f'value="{COMMITTED_GIB}"' in html
    assert MemoryLog.objects.count() == 0


def test_a_bad_breaker_log_is_refused_under_its_field(signed_in: Client) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:memory-logs"),
        {
            "file": fixture_file("healthy_2gpu_72h.csv"),
            "breaker": SimpleUploadedFile("breaker.jsonl", b'{"time": "yesterday", "kind": "trip"}\n'),
        },
    )

    # then the backend's own words, marked English, under the breaker field
    assert response.status_code == 400
    html = response.content.decode()
    error = html[html.index('data-error-for="breaker"') :]
    error = error[: error.index("</p>")]
    assert '<span lang="en">breaker log: breaker log line 1: &#x27;time&#x27; &#x27;yesterday&#x27;' in error
    assert MemoryLog.objects.count() == 0


def test_an_upload_over_the_limit_is_refused_by_its_size(signed_in: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # given a limit of 100 bytes
    monkeypatch.setattr("frontend.views.memory_logs.MAX_BYTES", 100)

    # when
    response = upload(signed_in, "healthy_2gpu_72h.csv")

    # then
    assert response.status_code == 400
    assert "healthy_2gpu_72h.csv: the file is" in response.content.decode()
    assert "the limit is 100 bytes" in response.content.decode()
    assert MemoryLog.objects.count() == 0


def test_a_wrong_commitment_is_refused_by_its_field(signed_in: Client) -> None:
    # when
    response = upload(signed_in, "healthy_2gpu_72h.csv", committed_gib_per_gpu="-3", hours_required="0")

    # then
    assert response.status_code == 400
    html = response.content.decode()
    for field in ("committed_gib_per_gpu", "hours_required"):
        error = html[html.index(f'data-error-for="{field}"') :]
        assert "Ensure this value is greater than or equal to" in error[: error.index("</p>")]
    assert MemoryLog.objects.count() == 0


def test_deleting_a_log_returns_to_the_list(signed_in: Client) -> None:
    # given
    upload(signed_in, "healthy_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB)
    log = MemoryLog.objects.get()

    # when
    response = signed_in.post(reverse("frontend:memory-log-delete", args=[log.pk]))

    # then
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:memory-logs")
    assert MemoryLog.objects.count() == 0
    assert "Log healthy_2gpu_72h.csv deleted" in signed_in.get(response["Location"]).content.decode()


# --- the export of a benchmark run ---------------------------------------------------------------------------------


def test_the_run_page_offers_both_exports(signed_in: Client, organisation: Organisation) -> None:
    # given
    run = make_run(organisation)

    # when
    html = signed_in.get(reverse("frontend:benchmark", args=[run.pk])).content.decode()

    # then both links are there (JSON asked for by name: a browser's Accept would get DRF's HTML page)
    ours = f"/api/v1/benchmark-runs/{run.pk}/export?kind=ours&format=json"
    llm_d = f"/api/v1/benchmark-runs/{run.pk}/export?kind=llm-d&format=json"
    assert f'<a href="{ours.replace("&", "&amp;")}" download id="export-ours">Export as our JSON</a>' in html
    assert (
        f'<a href="{llm_d.replace("&", "&amp;")}" download id="export-llm-d">Export as llm-d Benchmark Report v0.2</a>'
    ) in html
    # and both download JSON files, also when a browser follows them
    for url, kind in ((ours, "ours"), (llm_d, "llm-d")):
        response = signed_in.get(url, headers={"accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response["Content-Disposition"] == f'attachment; filename="benchmark-run-{run.pk}-{kind}.json"'
    assert signed_in.get(llm_d).json()["version"] == "0.2"


# --- the checks' words ---------------------------------------------------------------------------------------------


def _verdicts() -> list[dict[str, Any]]:
    """Verdicts with every check code passed, failed and unjudged, from the fixtures."""
    committed = 75_000 * MIB
    cases = [
        ("healthy_2gpu_72h.csv", committed, None, "breaker_events_ok.jsonl"),
        ("healthy_2gpu_72h.csv", None, None, None),
        ("leak_2gpu_72h.csv", committed, None, None),
        ("oom_restart_2gpu_72h.csv", committed, "oom_events.log", "breaker_events.jsonl"),
        ("vllm_scrapes.prom", committed, None, None),
        ("sglang_scrapes.prom", committed, None, None),
        ("cut_last_line.csv", committed, None, "breaker_events_ok.jsonl"),
    ]
    found = []
    for name, commitment, events, breaker in cases:
        timeline = parse_timeline((TIMELINE / name).read_text())
        found.append(
            health_verdict(
                timeline,
                committed_bytes_per_gpu=commitment,
                events_text=(TIMELINE / events).read_text() if events else None,
                breaker_events=(TIMELINE / breaker).read_text() if breaker else None,
            )
        )
    return found


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_check_of_the_fixtures_has_its_words(language: str) -> None:
    # given every check of the fixtures' verdicts
    checks = [check for verdict in _verdicts() for check in verdict["checks"]]
    assert {check["code"] for check in checks} == set(CHECKS)
    assert {check["passed"] for check in checks} == {True, False, None}

    # when / then each is worded from its numbers, none falling back to the English message
    with translation.override(language):
        fallbacks = [(check["code"], check["passed"]) for check in checks if not check_text(check)[1]]
    assert fallbacks == []


def test_an_unknown_check_or_a_missing_number_falls_back_to_the_english_message() -> None:
    assert check_text({"code": "new_check", "passed": True, "message": "As written.", "extra": {}}) == (
        "As written.",
        False,
    )
    assert check_text({"code": "coverage", "passed": True, "message": "Covers 5 h.", "extra": {}}) == (
        "Covers 5 h.",
        False,
    )


# --- Chinese -------------------------------------------------------------------------------------------------------


def test_the_log_page_in_chinese(signed_in: Client) -> None:
    # given
    response = upload(signed_in, "leak_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB)

    # when
    html = signed_in.get(response["Location"], headers={"accept-language": "zh-hans"}).content.decode()

    # then the verdict and every check are in Chinese, none in English
    assert '<html lang="zh-hans">' in html
    assert 'data-verdict="fail">不通过</span>' in html
    for text in (
        "监控覆盖",
        "日志覆盖了 72 小时，满足所需的 72 小时",
        "无显存耗尽事件",
        "无持续显存增长",
        "持续显存增长：GPU 0 以 40.0 MiB/h 增长（95% 置信区间 39.8 MiB/h 至 40.2 MiB/h），将在 28 小时后达到承诺值",
        "峰值在承诺范围内",
        "显存随时间变化",
        "首次违规",
        ">95% 置信区间</th>",
        "附 95% 置信区间",
    ):
        assert text in html, text
    checks = html[html.index('id="checks-table"') : html.index("</table>", html.index('id="checks-table"'))]
    assert 'lang="en"' not in checks
    assert "Sustained memory climb" not in html
    assert words_in(signed_in, "memory", "zh-hans")["axis_time"] == "时间（UTC）"


def test_the_list_page_in_chinese(signed_in: Client) -> None:
    # given
    upload(signed_in, "healthy_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB)

    # when
    html = signed_in.get(reverse("frontend:memory-logs"), headers={"accept-language": "zh-hans"}).content.decode()

    # then
    for text in ("上传监控日志", ">显存</a>", "每 GPU 承诺显存（GiB）", "所需监控小时数", ">通过</span>"):
        assert text in html, text


def test_a_refusal_in_chinese(signed_in: Client) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:memory-logs"),
        {"file": SimpleUploadedFile("bench.json", b'{"completed": 6, "mean_ttft_ms": 42.5}')},
        headers={"accept-language": "zh-hans"},
    )

    # then
    assert response.status_code == 400
    html = response.content.decode()
    assert "日志被拒绝，未保存任何内容" in html
    assert "bench.json：这是基准测试结果，不是监控日志" in html


def test_every_script_string_reaches_the_page_in_chinese(signed_in: Client) -> None:
    # given
    english = {key: value for key, value in words_in(signed_in, "memory", "en").items() if isinstance(value, str)}

    # when
    chinese = words_in(signed_in, "memory", "zh-hans")

    # then every English sentence was translated (names, units and placeholders may stay as they are)
    untranslated = {
        key
        for key, value in english.items()
        if chinese[key] == value and re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", value))
    }
    assert untranslated == set()


def test_every_string_the_script_reads_is_in_the_blob() -> None:
    # given the fixed keys the scripts read, and the marker kinds memory.js names from the page's data
    source = "\n".join((STATIC / name).read_text() for name in ("common.js", "memory.js"))
    read = set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
    built = {f"marker_{kind}" for kind in ("oom", "restart", "down", "xid", "oom_logged", "restart_logged")}
    # common.js's engine names and figure sources belong to other pages; this script does not show them
    common_only = {key for key in read if key.startswith(("source_", "engine_names"))}

    # then
    assert (read - common_only) | built <= set(page_words("memory"))


def test_every_string_of_the_memory_pages_is_in_the_chinese_catalog() -> None:
    # given the templates' strings and those of the view module
    text = "".join((TEMPLATES / name).read_text() for name in PAGE_TEMPLATES)
    msgids = _template_msgids(text) | _python_msgids(ROOT / "frontend" / "views" / "memory_logs.py")
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
    assert {
        msgid for msgid in msgids if any(value.endswith("。") for value in catalog[msgid].msgstr_plural.values())
    } == set()


def test_the_list_reads_the_logs_in_a_fixed_number_of_queries(
    signed_in: Client, organisation: Organisation, django_assert_max_num_queries
) -> None:
    # given many logs (their contents, series and analyses are not read for the list)
    for index in range(20):
        MemoryLog.objects.create(
            organisation=organisation,
            name=f"log {index}",
            format="nvidia_smi_csv",
            size_bytes=10,
            sha256="0" * 64,
            content="x",
            verdict={"verdict": "pass", "coverage_hours": 72.0, "first_violation": None},
        )

    # when / then
    with django_assert_max_num_queries(12):
        response = signed_in.get(reverse("frontend:memory-logs"))
    assert response.status_code == 200
    assert response.content.decode().count('<span class="health-badge health-pass">Pass</span>') == 20


# --- issue 20: banners the colour of the verdict, one zone for all three files, what a pass needs ----------------


@pytest.mark.parametrize(
    ("name", "fields", "level", "css"),
    [
        ("healthy_2gpu_72h.csv", {"committed_gib_per_gpu": COMMITTED_GIB}, "success", "alert-ok"),
        ("healthy_2gpu_72h.csv", {}, "warning", "alert-warn"),
        ("oom_restart_2gpu_72h.csv", {"committed_gib_per_gpu": COMMITTED_GIB}, "error", "alert-error"),
    ],
    ids=["pass-green", "insufficient-amber", "fail-red"],
)
def test_the_import_banner_takes_the_verdicts_colour(
    signed_in: Client, name: str, fields: dict, level: str, css: str
) -> None:
    # when
    response = upload(signed_in, name, **fields)

    # then
    html = signed_in.get(response["Location"]).content.decode()
    assert f'<div class="alert {css}" data-level="{level}">Log {name} imported: ' in html
    assert "frontend/memory.css" in html


def test_an_insufficient_verdict_card_is_amber_not_green(signed_in: Client) -> None:
    # when
    response = upload(signed_in, "healthy_2gpu_72h.csv")

    # then
    html = signed_in.get(response["Location"]).content.decode()
    assert 'class="verdict health-verdict verdict-neutral health-verdict-warn"' in html
    assert "verdict-ok" not in html


def test_the_zone_applies_to_the_events_log_as_to_the_samples(signed_in: Client) -> None:
    # given: the fixture's samples and its engine log are both local times; the server ran at UTC+08:00

    # when
    response = upload(
        signed_in,
        "oom_restart_2gpu_72h.csv",
        committed_gib_per_gpu=COMMITTED_GIB,
        events="oom_events.log",
        utc_offset_minutes="480",
    )

    # then: the memory OOM (19:41:02 local) and the logged OOM line (19:41:03 local) are both 8 h earlier in
    # UTC, one second apart, and the page says which zone it read them in
    html = signed_in.get(response["Location"]).content.decode()
    assert (
        "GPU 0 full (79.30 GiB) at 2026-12-01 11:41:02 UTC, then down to 0.00 GiB; out-of-memory error at "
        "2026-12-01 11:41:03 UTC"
    ) in html
    assert "19:41:03 UTC" not in html
    assert "Times written without a zone were read as UTC+08:00; every time here is in UTC." in html
    log = MemoryLog.objects.get()
    assert log.utc_offset_minutes == 480
    assert log.verdict["zone"] == {"utc_offset_minutes": 480}


def test_the_form_says_what_a_pass_needs_before_the_upload(signed_in: Client) -> None:
    # when
    html = signed_in.get(reverse("frontend:memory-logs")).content.decode()

    # then
    assert (
        "A pass needs the hours of monitoring required (72 h unless you change it), a committed figure per GPU, "
        "and at least 24 hourly buckets of data for the climb test: with fewer than 24 h required, a log shorter "
        "than 24 h can only be insufficient"
    ) in html
    assert "Zone of the logs' times" in html


def test_a_requirement_below_the_climb_tests_day_says_so_on_the_page(signed_in: Client) -> None:
    # when: a five-minute log, with only 1 h required
    response = upload(signed_in, "cut_last_line.csv", committed_gib_per_gpu=COMMITTED_GIB, hours_required="1")

    # then
    html = signed_in.get(response["Location"]).content.decode()
    assert 'data-verdict="insufficient"' in html
    assert (
        "A pass needs at least 24 h of data: the climb test fits 24 hourly buckets, more than the 1 h "
        "required, so a shorter log can only be insufficient"
    ) in html

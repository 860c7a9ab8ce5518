"""The sentinel's page under a deployment, in English and Chinese: it states what a pass needs before anything is
uploaded (72 hours, the interval), takes a file (judged by the worker, eager here) and lists the report with its
criteria and the signed PDF; a refused file is a 400 with the reason under its field and nothing stored. The
deployment page links to it. The synthetic generator's command writes a file the page takes."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.test import Client

from benchmarks_app.models.memory_health import MemoryHealthReport
from tests.sentinel.conftest import synthetic


def _client(user, language: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    client.cookies["django_language"] = language
    return client


def test_the_page_states_what_a_pass_needs_in_both_languages(user, deployment):
    english = _client(user, "en").get(f"/deployments/{deployment.pk}/sentinel/")
    assert english.status_code == 200
    text = english.content.decode()
    assert "What a pass needs" in text
    assert "72 hours of samples, one every 10 s (at most 60 s)" in text
    assert "memory_sentinel.py -o sentinel-$(hostname).jsonl --interval 10 --duration-hours 72" in text
    chinese = _client(user, "zh-hans").get(f"/deployments/{deployment.pk}/sentinel/").content.decode()
    assert "通过的条件" in chinese
    assert "72 小时的采样，每 10 秒一次（最长 60 秒）" in chinese
    assert "上传哨兵文件" in chinese
    detail = _client(user, "en").get(f"/deployments/{deployment.pk}/").content.decode()
    assert f'href="/deployments/{deployment.pk}/sentinel/"' in detail


def test_an_upload_through_the_page_is_judged_and_listed(user, deployment, django_capture_on_commit_callbacks):
    client = _client(user, "en")
    upload = io.BytesIO(synthetic(climb_mib_per_h=40.0).encode())
    upload.name = "sentinel.jsonl"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/deployments/{deployment.pk}/sentinel/", {"file": upload, "language": "en"})
    assert response.status_code == 302
    page = client.get(f"/deployments/{deployment.pk}/sentinel/").content.decode()
    report = MemoryHealthReport.objects.get()
    assert report.verdict == "fail"
    assert f'data-health-report="{report.pk}" data-status="done" data-verdict="fail"' in page
    assert 'data-criterion="no_sustained_climb" data-verdict="fail"' in page
    assert "GPU 0 climbs 40.0 MiB/h" in page
    pdf = client.get(f"/health-reports/{report.pk}/pdf/")
    assert pdf.status_code == 200
    assert pdf.content.startswith(b"%PDF")


def test_a_refused_file_shows_the_reason_and_stores_nothing(user, deployment):
    upload = io.BytesIO(synthetic(hours=1.0)[:-20].encode())
    upload.name = "cut.jsonl"
    response = _client(user, "en").post(f"/deployments/{deployment.pk}/sentinel/", {"file": upload})
    assert response.status_code == 400
    assert "the file is cut: its last line" in response.content.decode()
    assert MemoryHealthReport.objects.count() == 0


def test_the_synthetic_command_writes_a_file_the_parser_reads(tmp_path):
    from benchmarks_app.results.sentinel import parse_sentinel

    out = tmp_path / "steady.jsonl"
    call_command("sentinel_synthetic", "--hours", "2", "--climb-mib-per-h", "0", "--out", str(out))
    sentinel = parse_sentinel(out.read_text())
    assert sentinel.end_reason == "duration"
    assert len(sentinel.gpu_samples) == 721  # every 10 s for 2 h, both ends

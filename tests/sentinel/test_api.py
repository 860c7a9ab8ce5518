"""The sentinel through the API: a steady synthetic 72 hours imports (202), a worker (eager here) judges it, renders
the memory health report and signs it; the PDF's text says so in Chinese with units and page numbers and carries a
valid signature. A slow climb fails naming the climb. Refusals are 400s naming the problem with nothing stored; other
organisations see nothing; `latest_health_report` gives the newest finished report."""

from __future__ import annotations

import io
import re
import subprocess

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from benchmarks_app.models.memory_health import MemoryHealthReport
from reports.selectors.health_reports import latest_health_report
from reports.services.reports import trusted_certificates
from reports.signing import verify_pdf
from sizing.models import Membership, Organisation
from tests.sentinel.conftest import synthetic

MIB = 2**20


def _upload(client: APIClient, deployment, text: str, name: str = "sentinel-gpu-sim-01.jsonl", **extra):
    upload = io.BytesIO(text.encode())
    upload.name = name
    return client.post(
        f"/api/v1/deployments/{deployment.pk}/health-reports/", {"file": upload, **extra}, format="multipart"
    )


def _pdf_text(pdf: bytes) -> str:
    done = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True, check=True)
    return done.stdout.decode()


def test_sentinel_endpoints_require_authentication(db, deployment):
    assert APIClient().get(f"/api/v1/deployments/{deployment.pk}/health-reports/").status_code in (401, 403)
    assert APIClient().get("/api/v1/health-reports/1/").status_code in (401, 403)


def test_a_steady_72_hours_gives_a_signed_passing_report_in_chinese(
    api_client, deployment, tmp_path, django_capture_on_commit_callbacks
):
    # when
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(api_client, deployment, synthetic(climb_mib_per_h=0.0), language="zh-hans")
    # then
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "queued"
    body = api_client.get(response.json()["url"]).json()
    assert (body["status"], body["verdict"], body["coverage_hours"]) == ("done", "pass", 72.0)
    assert [c["code"] for c in body["criteria"]] == [
        "coverage",
        "no_oom",
        "no_sustained_climb",
        "breaker_response",
        "failure_recovered",
        "peak_within_commitment",
    ]
    assert {c["verdict"] for c in body["criteria"]} == {"pass"}
    assert body["host"] == "gpu-sim-01"
    assert len(body["gpu_uuids"]) == 2
    pdf = api_client.get(body["pdf_url"])
    assert pdf.status_code == 200
    assert pdf["Content-Type"] == "application/pdf"
    data = b"".join(pdf.streaming_content) if pdf.streaming else pdf.content
    text = _pdf_text(data)
    assert "显存健康报告" in text
    assert "通过" in text
    assert "72.0 小时" in text
    assert "70.21 GiB" in text  # the peak: 71,900 MiB (the jitter only dips below it) = 70.21 GiB
    assert "5.5 秒" in text  # the breaker's trip
    assert "8.0 秒" in text  # and recovery
    assert "90.0 秒" in text  # the injected failure's recovery
    for title in ("显存无持续增长", "熔断响应", "注入故障已恢复"):
        assert title in text
    assert "第1页/共2页" in text
    assert "UTC+08:00" in text  # times in the Chinese report's zone, as the commitment's
    assert " UTC\n" not in text
    assert "UTC " not in text.replace("UTC+08:00", "")
    for code in ("no_sustained_climb", "breaker_response", "failure_recovered"):
        assert code not in text  # no internal codes
    (tmp_path / "report.pdf").write_bytes(data)
    fonts = subprocess.run(["pdffonts", str(tmp_path / "report.pdf")], capture_output=True, check=True)
    assert b"-CJK-SC" in fonts.stdout  # the Chinese is drawn with an embedded CJK font, not boxes
    verification = verify_pdf(data, trusted=trusted_certificates())
    assert verification.verdict == "valid", verification
    report = latest_health_report(deployment)
    assert report is not None
    assert (report.pk, report.verdict, report.sha256, report.coverage_hours) == (
        body["id"],
        "pass",
        body["sha256"],
        72.0,
    )
    assert report.signed_at is not None
    assert all({"code", "verdict", "text"} <= set(c) for c in report.criteria)


def test_a_slow_climb_fails_naming_the_climb_in_english(api_client, deployment, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(api_client, deployment, synthetic(climb_mib_per_h=40.0), language="en")
    body = api_client.get(response.json()["url"]).json()
    assert body["verdict"] == "fail"
    failed = [c for c in body["criteria"] if c["verdict"] == "fail"]
    assert [c["code"] for c in failed] == ["no_sustained_climb"]
    assert failed[0]["text"].startswith("GPU ")
    assert "40.0 MiB/h" in failed[0]["text"]
    text = _pdf_text(bytes(MemoryHealthReport.objects.get(pk=body["id"]).pdf))
    assert "Memory health report" in text
    assert "No sustained climb" in text
    assert "GPU 0 climbs 40.0 MiB/h" in text
    # towards the signed commitment's 76,000 MiB (74.22 GiB): about (76,000 − 74,780) / 40 ≈ 30 h from the end
    reach = re.search(r"would\s+reach\s+the\s+commitment\s+\(74\.22\s+GiB\)\s+in\s+([\d.]+)\s+h", text)
    assert reach is not None, text
    assert 25.0 <= float(reach.group(1)) <= 35.0
    assert "Verdict: Fail" in text
    assert "Page 1 of" in text


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (synthetic(hours=1.0)[:-25], "the file is cut: its last line"),
        ("timestamp, index, memory.used [MiB]\n2026/11/30 13:41:02.123, 0, 71000 MiB\n", "not a memory-sentinel file"),
        ("".join(synthetic(hours=1.0).splitlines(keepends=True)[:-1]), "the file has no end line"),
    ],
    ids=["partial-last-line", "foreign-file", "no-end"],
)
def test_a_file_that_cannot_be_imported_is_a_400_naming_the_problem_with_nothing_saved(
    api_client, deployment, text, words
):
    # when
    response = _upload(api_client, deployment, text)
    # then
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_argument"
    assert words in body["message"]
    assert list(body["extra"]["fields"]) == ["file"]
    assert MemoryHealthReport.objects.count() == 0


def test_a_file_overlapping_an_earlier_import_of_the_same_gpus_is_refused(
    api_client, deployment, django_capture_on_commit_callbacks
):
    # given one import of the host's 6 hours
    with django_capture_on_commit_callbacks(execute=True):
        first = _upload(api_client, deployment, synthetic(hours=6.0, failure=False, breaker=False))
    assert first.status_code == 202
    # when the same GPUs' file starting 3 hours in is uploaded
    later = synthetic(hours=6.0, failure=False, breaker=False, start_s=1_796_000_000.0 + 3 * 3600)
    response = _upload(api_client, deployment, later, name="again.jsonl")
    # then
    assert response.status_code == 400
    assert "it overlaps health report" in response.json()["message"]
    assert response.json()["extra"]["refusal"] == "overlap"
    assert MemoryHealthReport.objects.count() == 1
    # and a file of the next 6 hours is taken
    with django_capture_on_commit_callbacks(execute=True):
        after = _upload(
            api_client,
            deployment,
            synthetic(hours=6.0, failure=False, breaker=False, start_s=1_796_000_000.0 + 6 * 3600 + 10),
            name="next.jsonl",
        )
    assert after.status_code == 202, after.content
    assert latest_health_report(deployment).pk == after.json()["id"]


def test_another_organisation_sees_nothing(api_client, deployment, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        mine = _upload(api_client, deployment, synthetic(hours=6.0, failure=False, breaker=False)).json()
    other = get_user_model().objects.create_user(username="other", password="correct horse battery")
    Membership.objects.create(user=other, organisation=Organisation.objects.create(name="Other Integrator"))
    client = APIClient()
    client.force_authenticate(user=other)
    assert client.get(f"/api/v1/health-reports/{mine['id']}/").status_code == 404
    assert client.get(f"/api/v1/health-reports/{mine['id']}/pdf").status_code == 404
    assert client.get(f"/api/v1/deployments/{deployment.pk}/health-reports/").status_code == 404
    refused = _upload(client, deployment, synthetic(hours=6.0, failure=False, breaker=False))
    assert refused.status_code == 404
    assert MemoryHealthReport.objects.count() == 1


def test_no_finished_report_means_none(db, deployment):
    assert latest_health_report(deployment) is None

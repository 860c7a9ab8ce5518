"""Issue 8's "done means", through the API: a report for a deployment whose customer is Chinese goes draft → in
review → approved → signed (the drafting and the signing run by the workers' tasks, eager here), its PDF holds the
Chinese text and the committed figures (pdftotext), its signature validates, a flipped byte is reported as tampered,
and the signed version cannot be edited through the API, the admin or the ORM. Since issue 20 the evidence it lacks
is waived by its author and the waivers granted by the reviewer before approval."""

from __future__ import annotations

import io
import subprocess

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from deploy.celery import app as celery_app
from reports.models import ImmutableVersionError, ReportAuditEvent, ReportVersion
from reports.signing import verify_pdf
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation

CUSTOMER = "深圳市某某科技有限公司"
MODEL = "meta-llama/Meta-Llama-3-8B"
GIB = 1024**3


@pytest.fixture(autouse=True)
def eager_tasks(settings, tmp_path):
    settings.VAR_DIR = tmp_path  # a fresh self-signed organisation certificate for the test
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def team(catalog, organisation):
    users = {}
    for name, role in (("author", "engineer"), ("reviewer", "reviewer"), ("signer", "signer")):
        user = get_user_model().objects.create_user(username=name, password="correct horse battery")
        Membership.objects.create(user=user, organisation=organisation, role=role)
        users[name] = user
    return users


@pytest.fixture
def deployment(organisation, catalog) -> Deployment:
    return Deployment.objects.create(
        organisation=organisation,
        name="客服大模型",
        customer=CUSTOMER,
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug="nvidia-l4-24gb"),
        slo={"ttft_ms": 2000.0, "tpot_ms": 150.0},
    )


def _text(pdf: bytes) -> str:
    done = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True, check=True)
    return done.stdout.decode()


def test_a_chinese_report_is_drafted_reviewed_approved_signed_and_verified(
    team, deployment, django_capture_on_commit_callbacks
) -> None:
    author, reviewer, signer = (_client(team[name]) for name in ("author", "reviewer", "signer"))

    # a report in Chinese, version 1 drafted from the evidence by the worker once the request commits
    with django_capture_on_commit_callbacks(execute=True):
        created = author.post("/api/v1/reports/", {"deployment": deployment.pk, "language": "zh-hans"}, format="json")
    assert created.status_code == 201, created.content
    report = created.json()
    base = report["url"]
    assert report["versions"][0]["status"] == "draft"
    assert report["versions"][0]["drafting"] is True  # as the request answered: the worker had not started
    version = author.get(base + "versions/1/").json()
    assert version["drafting"] is False
    assert version["content"]["customer"]["name"] == CUSTOMER
    peak = version["content"]["commitment"]["peak_bytes_per_gpu"]
    assert peak == version["content"]["confidence"]["peak_bytes_per_gpu"]
    assert peak >= version["content"]["memory"]["required_bytes_per_gpu"]
    assert "客户机器" in " ".join(version["content"]["missing"])  # no machine chosen, said in the report's language

    # review: the author cannot submit with evidence missing, waives each open item with the reason, then submits
    refused = author.post(base + "versions/1/submit")
    assert refused.status_code == 400
    open_items = [item["code"] for item in refused.json()["extra"]["items"]]
    assert "machines" in open_items
    assert "load_test_pulse" in open_items
    for item in open_items:
        asked = author.post(
            base + "versions/1/waivers/", {"item": item, "reason": "试点阶段，上线后补齐"}, format="json"
        )
        assert asked.status_code == 201, asked.content
    assert author.post(base + "versions/1/submit").json()["status"] == "in_review"
    # the author cannot approve; the reviewer grants each waiver, then approves
    assert author.post(base + "versions/1/approve").status_code == 403
    for item in open_items:
        assert (
            reviewer.post(
                base + f"versions/1/waivers/{item}/decision", {"grant": True, "reason": "同意"}, format="json"
            ).status_code
            == 200
        )
    assert reviewer.post(base + "versions/1/approve").json()["status"] == "approved"

    # only a signer signs
    assert reviewer.post(base + "versions/1/sign").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):  # the worker's task, run here when the request commits
        response = signer.post(base + "versions/1/sign")
    assert response.status_code == 202, response.content
    signed = signer.get(base + "versions/1/").json()
    assert signed["status"] == "signed", signed
    assert len(signed["sha256"]) == 64
    assert signed["signer"] == "signer"

    # the PDF: Chinese text and the committed figures, a signature that validates
    download = author.get(base + "pdf")
    assert download.status_code == 200
    pdf = download.content
    text = _text(pdf)
    assert CUSTOMER in text
    assert f"{peak / GIB:.2f}" in text  # commitment 1: the peak per card in GiB
    assert "report" in text.lower() or "报告" in text
    verification = verify_pdf(pdf)
    assert verification.signed
    assert verification.intact

    # verification through the API: the version it is; one flipped byte is tampering
    answer = author.post("/api/v1/reports/verify", {"file": io.BytesIO(pdf)}, format="multipart").json()
    assert answer["verdict"] == "valid", answer
    assert answer["matches_record"] is True
    assert answer["version"]["number"] == 1
    middle = len(pdf) // 3
    flipped = pdf[:middle] + bytes([pdf[middle] ^ 0x01]) + pdf[middle + 1 :]
    tampered = author.post("/api/v1/reports/verify", {"file": io.BytesIO(flipped)}, format="multipart").json()
    assert tampered["verdict"] in ("tampered", "unreadable"), tampered
    assert tampered["matches_record"] is False

    # the signed version never changes: API, ORM and admin refuse
    edit = author.patch(base + "versions/1/", {"assumptions": ["changed"]}, format="json")
    assert edit.status_code == 400
    assert "never changes" in edit.json()["message"]
    stored = ReportVersion.objects.get(report_id=report["id"], number=1)
    stored.content = {"changed": True}
    with pytest.raises(ImmutableVersionError):
        stored.save()

    # a change makes version 2, saying what changed
    Deployment.objects.filter(pk=deployment.pk).update(max_model_len=4096)
    with django_capture_on_commit_callbacks(execute=True):
        second = author.post(base + "versions/").json()
    assert second["number"] == 2
    second = author.get(base + "versions/2/").json()
    assert "已变更：部署计划" in second["changes"], second["changes"]  # in the report's language

    actions = list(
        ReportAuditEvent.objects.filter(version__number=1, version__report_id=report["id"]).values_list(
            "action", flat=True
        )
    )
    waivers = len(open_items)
    assert actions == [
        "created",
        *["waiver_ask"] * waivers,
        "submitted",
        *["waiver_grant"] * waivers,
        "approved",
        "signed",
        "downloaded",
        "verified",
    ]


def test_the_admin_cannot_change_a_signed_version(admin_client, organisation, deployment) -> None:
    from reports.models import Report

    report = Report.objects.create(organisation=organisation, deployment=deployment, title="t")
    version = ReportVersion.objects.create(report=report, number=1, content={"a": 1})
    version.status = ReportVersion.Status.SIGNED
    version.save()
    url = f"/admin/reports/reportversion/{version.pk}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b'name="_save"' not in page.content  # read-only: no save button
    posted = admin_client.post(url, {"number": 1, "status": "draft", "content": '{"a": 2}'})
    assert posted.status_code == 403
    assert admin_client.post(f"/admin/reports/reportversion/{version.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ReportVersion.objects.get(pk=version.pk).content == {"a": 1}


def test_other_organisations_see_nothing(team, deployment) -> None:
    report = _client(team["author"]).post("/api/v1/reports/", {"deployment": deployment.pk}, format="json").json()
    stranger = get_user_model().objects.create_user(username="x", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=Organisation.objects.create(name="Other"))
    client = _client(stranger)
    assert client.get("/api/v1/reports/").json()["results"] == []
    for path in ("", "pdf", "versions/1/", "versions/1/pdf"):
        assert client.get(report["url"] + path).status_code == 404
    assert client.post(report["url"] + "versions/1/submit").status_code == 404
    assert client.post("/api/v1/reports/", {"deployment": deployment.pk}, format="json").status_code == 400

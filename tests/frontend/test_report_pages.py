"""The report pages (issue 8): sign-in and the organisation's walls, the "New report" form (a refusal saves nothing),
a report's page with its workflow step, the evidence checklist with its waivers (issue 20), the key figures and the
audit log, the workflow's actions as forms with their refusals shown as messages (submitting with evidence open, the
author approving, a user without the signing permission signing, a return without a reason, an edit of a version in
review), the drafting and the signing (the workers' parts run here) and the verification of a signed, a tampered and
an oversized PDF, the deployment page's reports, and every string of the pages in the Chinese catalog."""

from __future__ import annotations

import ast
import hashlib
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
from django.utils import translation

from deploy.celery import app as celery_app
from reports.models import Report, ReportAuditEvent, ReportVersion
from reports.services.reports import report_create, version_draft, waiver_decide, waiver_request
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation
from tests.frontend.script_words import words_in

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
STATIC = ROOT / "frontend" / "static" / "frontend"
CUSTOMER = "深圳市某某科技有限公司"
MODEL = "meta-llama/Meta-Llama-3-8B"
ZH = {"accept-language": "zh-hans"}
GIB = 2**30

pytestmark = pytest.mark.django_db


def _html(response) -> str:
    return response.content.decode()


def _messages(html: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", text).strip()
        for text in re.findall(r'<div class="alert alert-(?:error|ok)">(.*?)</div>', html, re.S)
    ]


def _field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="field-error" data-error-for="{field}">(.*?)</p>', html, re.S)
    assert match, field
    return match.group(1).strip()


def _browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def team(organisation: Organisation, user) -> dict[str, Any]:
    """The author (the `user` fixture's engineer), a reviewer and a signer (their roles)."""
    people: dict[str, Any] = {"author": user}
    for name in ("reviewer", "signer"):
        account = get_user_model().objects.create_user(username=name, password="correct horse battery")
        Membership.objects.create(user=account, organisation=organisation, role=name)
        people[name] = account
    return people


@pytest.fixture
def author(team) -> Client:
    return _browser(team["author"])


@pytest.fixture
def reviewer(team) -> Client:
    return _browser(team["reviewer"])


@pytest.fixture
def signer(team) -> Client:
    return _browser(team["signer"])


@pytest.fixture
def deployment(catalog: None, organisation: Organisation) -> Deployment:
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


def _drafted(report: Report, number: int = 1) -> Report:
    """The drafting worker's part, run here (a request queues it once its transaction commits)."""
    version = report.versions.get(number=number)
    version_draft(version_id=version.pk, user_id=version.author_id)
    return report


@pytest.fixture
def report(organisation: Organisation, team, deployment: Deployment) -> Report:
    return _drafted(
        report_create(
            organisation=organisation, user=team["author"], data={"deployment": deployment.pk, "language": "en"}
        )
    )


def _open_items(report: Report, number: int = 1) -> list[str]:
    return [item["code"] for item in report.versions.get(number=number).content["checklist"] if item["state"] != "done"]


def _waive_all(report: Report, team: dict[str, Any], number: int = 1) -> list[str]:
    """The author asks to waive every open item (before submitting)."""
    version = report.versions.get(number=number)
    items = _open_items(report, number)
    for item in items:
        waiver_request(version=version, user=team["author"], item=item, reason=f"{item}: after go-live")
    return items


def _grant_all(report: Report, team: dict[str, Any], number: int = 1) -> None:
    """The reviewer grants every waiver requested (the version in review)."""
    version = report.versions.get(number=number)
    for waiver in version.waivers.all():
        waiver_decide(version=version, user=team["reviewer"], item=waiver.item, grant=True, reason="accepted")


@pytest.fixture
def eager_signing(settings, tmp_path):
    settings.VAR_DIR = tmp_path  # a fresh self-signed organisation certificate for the test
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def other_report(catalog: None) -> Report:
    other = Organisation.objects.create(name="Globex")
    stranger = get_user_model().objects.create_user(username="stranger", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=other)
    theirs = Deployment.objects.create(
        organisation=other,
        name="their deployment",
        customer="Globex Corp",
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug="nvidia-l4-24gb"),
        gpu_count=1,
        tp=1,
        engine="vllm",
    )
    return report_create(organisation=other, user=stranger, data={"deployment": theirs.pk, "title": "their secret"})


def _page(report: Report, number: int | None = None) -> str:
    url = reverse("frontend:report", args=[report.pk])
    return f"{url}?version={number}" if number else url


def _action(report: Report, action: str, number: int = 1) -> str:
    return reverse(f"frontend:report-version-{action}", args=[report.pk, number])


def _status(report: Report, number: int = 1) -> str:
    return ReportVersion.objects.get(report=report, number=number).status


def _actions(report: Report, number: int = 1) -> list[str]:
    return list(
        ReportAuditEvent.objects.filter(version__report=report, version__number=number).values_list("action", flat=True)
    )


# --- who may see what ---------------------------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_sign_in(client: Client, report: Report):
    # when / then
    for url in (reverse("frontend:reports"), _page(report), reverse("frontend:report-verify")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("frontend:login"))
    for url in (
        reverse("frontend:reports"),
        _action(report, "submit"),
        _action(report, "approve"),
        reverse("frontend:report-version-new", args=[report.pk]),
    ):
        assert client.post(url, {"deployment": report.deployment_id}).status_code == 302
    assert (Report.objects.count(), _status(report), _actions(report)) == (1, "draft", ["created"])


def test_another_organisations_report_is_a_404(author: Client, other_report: Report):
    # when
    responses = [
        author.get(_page(other_report)),
        author.post(_action(other_report, "submit")),
        author.post(_action(other_report, "edit"), {"assumptions": "mine"}),
        author.post(reverse("frontend:report-version-new", args=[other_report.pk])),
    ]

    # then
    assert [response.status_code for response in responses] == [404, 404, 404, 404]
    assert (_status(other_report), other_report.versions.count()) == ("draft", 1)
    assert "their secret" not in _html(author.get(reverse("frontend:reports")))


# --- the list and the form ----------------------------------------------------------------------------------------


def test_the_form_creates_a_chinese_report_and_opens_it(author: Client, deployment: Deployment):
    # given the list with its form
    listing = _html(author.get(reverse("frontend:reports")))
    assert f'<option value="{deployment.pk}">客服大模型 · {CUSTOMER}</option>' in listing
    assert '<option value="zh-hans" lang="zh-hans">简体中文</option>' in listing
    assert 'id="no-reports"' in listing

    # when
    response = author.post(
        reverse("frontend:reports"), {"deployment": deployment.pk, "language": "zh-hans", "title": ""}
    )

    # then its page, version 1 a draft
    report = Report.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:report", args=[report.pk])
    assert (report.language, report.title) == ("zh-hans", f"显存承诺书 · {CUSTOMER}")
    page = _html(author.get(response["Location"]))
    assert f'<span id="report-title" lang="zh-hans">显存承诺书 · {CUSTOMER}</span>' in page
    assert f'<span id="report-customer">{CUSTOMER}</span>' in page
    assert '<li class="report-step is-current" data-step="draft" aria-current="step">Draft</li>' in page
    assert "Report created: a worker is gathering the evidence of version 1" in page
    # the worker has not run (its message goes once the request commits): the page follows its progress
    assert 'id="drafting-progress"' in page
    assert 'id="submit-button"' in page
    data = json.loads(page.split('<script id="report-data" type="application/json">')[1].split("</script>")[0])
    assert data["drafting"] is True
    # once the worker gathered it, the checklist in the report's words
    page = _html(author.get(reverse("frontend:report", args=[_drafted(report).pk])))
    assert 'id="drafting-progress"' not in page
    assert '<strong lang="zh-hans">已选定客户机器（每台主机及其指纹版本）</strong>' in page
    row = _html(author.get(reverse("frontend:reports"))).split(f'data-report="{report.pk}"')[1].split("</tr>")[0]
    for text in ("客服大模型", CUSTOMER, "简体中文", "v1", "Draft", 'data-signed="false"'):
        assert text in row


def test_a_refused_form_says_why_and_saves_nothing(author: Client, deployment: Deployment, other_report: Report):
    # when: no deployment, then another organisation's
    empty = author.post(reverse("frontend:reports"), {"deployment": "", "language": "en"})
    theirs = author.post(reverse("frontend:reports"), {"deployment": other_report.deployment_id, "language": "en"})

    # then
    assert (empty.status_code, theirs.status_code) == (400, 400)
    assert _field_error(_html(empty), "deployment") == "Choose the deployment to report on"
    assert _field_error(_html(theirs), "deployment") == "Choose one of your organisation&#x27;s deployments"
    assert "The report was not created; nothing was saved" in _html(theirs)
    zh = author.post(
        reverse("frontend:reports"), {"deployment": other_report.deployment_id, "language": "en"}, headers=ZH
    )
    assert _field_error(_html(zh), "deployment") == "请选择您组织的部署配置"
    assert Report.objects.count() == 1  # theirs only


# --- a report's page ----------------------------------------------------------------------------------------------


def test_the_page_shows_the_checklist_the_figures_and_the_audit_log(author: Client, report: Report):
    # given version 1 drafted from a deployment with no machine chosen, no load test or monitoring log
    content = report.versions.get().content
    peak = content["commitment"]["peak_bytes_per_gpu"]

    # when
    page = _html(author.get(_page(report)))

    # then the checklist names each piece of evidence with its state, the author may ask to waive the open ones
    checklist = page.split('id="checklist">')[1].split("</ul>")[0]
    states = dict(re.findall(r'data-item="(\w+)" data-state="(\w+)"', checklist))
    assert states == {
        "machines": "missing",
        "machines_match": "missing",
        "plan": "done",
        "release": "done",
        "peak_fits": "done",
        "workload": "missing",
        "load_test_pulse": "missing",
        "load_test_long_tail": "missing",
        "load_test_failure": "missing",
        "monitoring": "missing",
    }
    assert checklist.count('data-form="waiver-request"') == 7
    assert len(content["missing"]) == 7
    # the key figures: the peak per card in GiB and GB with its confidence, the overflow probability, the budget
    figures = page.split('id="report-figures">')[1].split("</dl>")[0]
    assert f"≤ {peak / GIB:,.2f} GiB ({peak / 1e9:,.2f} GB), confidence 99.9%" in figures
    assert "KV overflow probability</dt><dd>not simulated" in figures
    assert content["protection"]["engine_budget"] in figures
    assert '<p class="muted" id="no-changes">The first version.</p>' in page
    audit = page.split('id="audit-table">')[1].split("</table>")[0]
    assert re.findall(r'<tr data-action="(\w+)">\s*<td>(\w+)</td>\s*<td>([^<]+)', audit) == [
        ("created", "engineer", "Created")
    ]
    # the draft's actions: submit, edit, download (marked DRAFT), gather again
    for element in (
        'id="submit-button"',
        'id="edit-form"',
        'id="pdf-link"',
        "Download the PDF (marked DRAFT)",
        "Gather the evidence again",
    ):
        assert element in page
    assert f'href="/api/v1/reports/{report.pk}/versions/1/pdf"' in page
    data = json.loads(page.split('<script id="report-data" type="application/json">')[1].split("</script>")[0])
    assert data == {
        "signing": False,
        "status": "draft",
        "drafting": False,
        "api_url": f"/api/v1/reports/{report.pk}/versions/1/",
    }


def test_the_page_reads_in_chinese(author: Client, report: Report):
    # when
    page = _html(author.get(_page(report), headers=ZH))

    # then the steps, the checklist's states and the actions are in Chinese (the English report's sentences are
    # marked as English)
    assert '<li class="report-step is-current" data-step="draft" aria-current="step">草稿</li>' in page
    checklist = page.split('id="checklist">')[1].split("</ul>")[0]
    assert '<span class="status-pill status-check-missing">缺失</span>' in checklist
    assert '<span class="status-pill status-check-done">已完成</span>' in checklist
    assert "申请豁免" in checklist
    assert "证据检查清单" in page
    assert '<button type="submit" class="button button-primary" id="submit-button">提交审核</button>' in page
    assert 'href="/reports/" class="topnav-link is-active"' in page


# --- the workflow -------------------------------------------------------------------------------------------------


def test_submit_approve_and_return_with_their_refusals(author: Client, reviewer: Client, report: Report, team):
    # given the author submits the draft with its evidence open: refused, listing the items
    refused = author.post(_action(report, "submit"), follow=True)
    assert _status(report) == "draft"
    assert any(
        text.startswith("Submission refused: 7 checklist items are not done and carry no waiver request")
        and "A passed load test of the pulse scenario (Missing)" in text
        for text in _messages(_html(refused))
    )

    # when the author asks to waive each on the page, then submits
    for item in _open_items(report):
        author.post(
            reverse("frontend:report-version-waiver-request", args=[report.pk, 1, item]),
            {"reason": "the pilot runs without it"},
        )
    response = author.post(_action(report, "submit"))
    assert response.status_code == 302
    assert response["Location"] == _page(report, 1)
    assert _status(report) == "in_review"

    # when the author (an engineer) tries to approve it: hidden on the page, refused when posted
    page = _html(author.get(_page(report)))
    assert 'id="approve-button"' not in page
    assert 'id="return-form"' not in page
    assert 'data-form="waiver-decide"' not in page
    assert "In review: a reviewer or a signer of your organisation approves it or returns it to draft." in page
    refused = author.post(_action(report, "approve"))

    # then nothing changed and the reason is shown
    assert _status(report) == "in_review"
    assert refused.status_code == 403
    assert "It needs one of: Reviewer, Signer" in _html(refused)

    # when the author is also a reviewer (their role changed): still not their own version, nor its waivers
    Membership.objects.filter(user__username=report.versions.get().author.username).update(role="reviewer")
    page = _html(author.get(_page(report)))
    assert "You wrote this version: a reviewer other than its author approves it" in page
    assert 'data-form="waiver-decide"' not in page
    refused = _html(author.post(_action(report, "approve"), follow=True))
    assert _status(report) == "in_review"
    assert (
        "You wrote this version: a reviewer other than its author approves it. Ask a colleague to review it"
        in _messages(refused)
    )
    Membership.objects.filter(user__username=report.versions.get().author.username).update(role="engineer")

    # when the reviewer approves before deciding the waivers: refused
    early = _html(reviewer.post(_action(report, "approve"), follow=True))
    assert any(
        text.startswith("Approval refused: 7 checklist items are not done and their waiver is not granted")
        for text in _messages(early)
    )
    # the reviewer's page offers a decision per waiver; one refused without a reason is refused itself
    page = _html(reviewer.get(_page(report)))
    assert page.count('data-form="waiver-decide"') == 7
    no_reason = _html(
        reviewer.post(
            reverse("frontend:report-version-waiver-decide", args=[report.pk, 1, "monitoring"]),
            {"grant": "1", "reason": " "},
            follow=True,
        )
    )
    assert "Say why the waiver is granted or refused" in _messages(no_reason)

    # when the reviewer returns it without a reason, then with one
    no_reason = _html(reviewer.post(_action(report, "return"), {"reason": "  "}, follow=True))
    assert "Say why the version goes back to draft" in _messages(no_reason)
    assert _status(report) == "in_review"
    reviewer.post(_action(report, "return"), {"reason": "The peak needs a fingerprint"})

    # then it is a draft again, with the reason in the audit log
    assert _status(report) == "draft"
    audit = _html(author.get(_page(report))).split('id="audit-table">')[1]
    assert "Returned to draft" in audit
    assert "Reason: The peak needs a fingerprint" in audit

    # when approving a draft: refused, it is not in review
    not_open = _html(reviewer.post(_action(report, "approve"), follow=True))
    assert "Version 1 is draft, not in review: that step is not open now" in _messages(not_open)

    # and after a new submission the reviewer grants each waiver on the page and approves it
    author.post(_action(report, "submit"))
    for item in _open_items(report):
        reviewer.post(
            reverse("frontend:report-version-waiver-decide", args=[report.pk, 1, item]),
            {"grant": "1", "reason": "the customer accepts it in writing"},
        )
    approved = _html(reviewer.post(_action(report, "approve"), follow=True))
    assert _status(report) == "approved"
    assert "Version 1 approved: a signer of your organisation can sign it now" in _messages(approved)
    assert '<li class="report-step is-current" data-step="approved" aria-current="step">Approved</li>' in approved
    assert approved.count('data-state="waived"') == 7
    assert _actions(report) == [
        "created",
        *["waiver_ask"] * 7,
        "submitted",
        "returned",
        "submitted",
        *["waiver_grant"] * 7,
        "approved",
    ]


def test_signing_needs_the_permission(author: Client, reviewer: Client, report: Report, team):
    # given an approved version (its open items waived and granted)
    _waive_all(report, team)
    author.post(_action(report, "submit"))
    _grant_all(report, team)
    reviewer.post(_action(report, "approve"))

    # when the reviewer (not a signer) looks at it and posts the sign form anyway
    page = _html(reviewer.get(_page(report)))
    refused = reviewer.post(_action(report, "sign"))

    # then no sign button, a 403 page saying why, and nothing queued
    assert 'id="sign-button"' not in page
    assert "Approved: a signer of your organisation signs it. Your role cannot sign." in page
    assert refused.status_code == 403
    assert "Your role (Reviewer) does not allow this. It needs one of: Signer" in _html(refused)
    version = report.versions.get()
    assert (version.status, version.progress_message, version.sha256) == ("approved", "", "")
    assert _actions(report)[-2:] == ["waiver_grant", "approved"]


def test_a_draft_is_edited_one_sentence_per_line(author: Client, report: Report):
    # when
    response = author.post(
        _action(report, "edit"),
        {
            "assumptions": "The load stays below 4 requests/s.\r\n\r\n  The driver stays at 550.  ",
            "exclusions": "",
            "fallback": "Refuse new requests with HTTP 503.",
        },
    )

    # then
    assert response.status_code == 302
    content = report.versions.get().content
    assert content["assumptions"] == ["The load stays below 4 requests/s.", "The driver stays at 550."]
    assert (content["exclusions"], content["fallback"]) == ([], ["Refuse new requests with HTTP 503."])
    page = _html(author.get(_page(report)))
    assert ">The load stays below 4 requests/s.\nThe driver stays at 550.</textarea>" in page


def test_an_edit_too_long_or_of_a_version_in_review_saves_nothing(author: Client, report: Report, team):
    # given
    before = report.versions.get().content

    # when fifty-one sentences are posted
    too_many = author.post(
        _action(report, "edit"),
        {"assumptions": "\n".join(f"s{i}" for i in range(51)), "exclusions": "x", "fallback": "y"},
    )

    # then the page again, the reason under the field, nothing saved
    assert too_many.status_code == 400
    assert _field_error(_html(too_many), "assumptions") == "51 sentences; at most 50"
    assert report.versions.get().content == before

    # when the version is in review
    _waive_all(report, team)
    author.post(_action(report, "submit"))
    refused = _html(author.post(_action(report, "edit"), {"assumptions": "changed"}, follow=True))

    # then
    assert "Version 1 is in review, not draft: that step is not open now" in _messages(refused)
    assert 'id="edit-form"' not in refused
    assert report.versions.get().content == before


# --- signing, a new version, verification --------------------------------------------------------------------------


def _signed(author: Client, reviewer: Client, signer: Client, report: Report, capture, team) -> bytes:
    """Waive, submit, grant, approve and sign version 1 (the worker's task run when the request commits); its PDF."""
    _waive_all(report, team)
    author.post(_action(report, "submit"))
    _grant_all(report, team)
    reviewer.post(_action(report, "approve"))
    approved = _html(signer.get(_page(report)))
    assert 'id="sign-button"' in approved
    with capture(execute=True):
        response = signer.post(_action(report, "sign"))
    assert response.status_code == 302
    version = report.versions.get(number=1)
    assert version.status == "signed", version.error
    return bytes(version.pdf)


def test_sign_then_verify_the_pdf_and_a_tampered_copy(
    eager_signing,
    author: Client,
    reviewer: Client,
    signer: Client,
    report: Report,
    team,
    django_capture_on_commit_callbacks,
):
    # given version 1 signed
    pdf = _signed(author, reviewer, signer, report, django_capture_on_commit_callbacks, team)
    sha256 = hashlib.sha256(pdf).hexdigest()

    # then its page says so, with the SHA-256, and offers no workflow action but a new version
    page = _html(author.get(_page(report)))
    assert f'<code id="version-sha256">{sha256}</code>' in page
    assert "Signed by signer at " in page
    assert '<li class="report-step is-current" data-step="signed" aria-current="step">Signed</li>' in page
    for absent in (
        'id="submit-button"',
        'id="approve-button"',
        'id="sign-button"',
        'id="edit-form"',
        'id="return-form"',
    ):
        assert absent not in page
    assert "Download the signed PDF" in page
    assert "Draft a new version" in page

    # when the PDF is uploaded on the verification page
    verify = reverse("frontend:report-verify")
    valid = _html(author.post(verify, {"file": SimpleUploadedFile("r.pdf", pdf, "application/pdf")}))

    # then valid, who signed, when, which version, with a link to it
    assert 'data-verdict="valid"' in valid
    assert '<strong class="verdict-title" id="verdict-name">Valid</strong>' in valid
    assert 'id="verdict-other" lang="zh-hans"><strong>有效</strong> 签名完整且由组织证书签署' in valid
    assert f'<a href="{_page(report, 1)}" id="version-link">report {report.pk} v1 · {report.title}</a>' in valid
    assert "yes: the same bytes as the signed version kept here" in valid
    assert f'<code id="verify-sha256">{sha256}</code>' in valid
    assert 'id="verify-problems"' not in valid

    # when one byte is flipped
    middle = len(pdf) // 3
    flipped = pdf[:middle] + bytes([pdf[middle] ^ 0x01]) + pdf[middle + 1 :]
    tampered = _html(author.post(verify, {"file": SimpleUploadedFile("r.pdf", flipped, "application/pdf")}, headers=ZH))

    # then tampered (or unreadable where the byte broke the structure), in Chinese, matching no record
    verdict = re.search(r'id="verify-result" data-verdict="(\w+)"', tampered).group(1)
    assert verdict in ("tampered", "unreadable")
    assert "no: no signed version kept here" not in tampered
    assert 'id="version-link"' not in tampered
    assert 'id="verify-problems"' in tampered
    assert 'lang="en"' not in tampered.split('id="verify-problems">')[1].split("</ul>")[0]

    # and a new version drafted from the signed one says what changed
    response = author.post(reverse("frontend:report-version-new", args=[report.pk]))
    assert response["Location"] == _page(report, 2)
    second = _html(author.get(_page(_drafted(report, 2), 2)))
    assert 'id="no-changes"' not in second
    assert '<li class="report-step is-current" data-step="draft" aria-current="step">Draft</li>' in second
    assert _actions(report)[-4:] == ["waiver_grant", "approved", "signed", "verified"]


def test_an_oversized_upload_is_refused_and_nothing_checked(settings, author: Client, report: Report):
    # given a limit of 1,000 bytes
    settings.REPORTS_MAX_VERIFY_BYTES = 1000
    page = _html(author.get(reverse("frontend:report-verify")))
    assert '<p class="hint" id="verify-limit">At most 1,000 bytes.</p>' in page

    # when
    response = author.post(
        reverse("frontend:report-verify"),
        {"file": SimpleUploadedFile("big.pdf", b"%PDF-1.7\n" + b"0" * 2000, "application/pdf")},
    )

    # then
    assert response.status_code == 400
    html = _html(response)
    assert "The file is 2,009 bytes; the limit is 1,000 bytes: nothing was checked" in html
    assert 'id="verify-result"' not in html
    assert not ReportAuditEvent.objects.filter(action="verified").exists()


def test_an_unsigned_file_is_reported_unsigned_or_unreadable(eager_signing, author: Client):
    # when
    response = author.post(
        reverse("frontend:report-verify"),
        {"file": SimpleUploadedFile("notes.pdf", b"not a pdf at all", "application/pdf")},
    )

    # then
    html = _html(response)
    assert response.status_code == 200
    assert 'data-verdict="unreadable"' in html
    assert "The file could not be read as a PDF: nothing could be checked" in html
    assert "The file is not a PDF" in html


# --- the deployment page ------------------------------------------------------------------------------------------


def test_the_deployment_page_lists_its_reports_and_creates_one(author: Client, report: Report, deployment: Deployment):
    # when
    page = _html(author.get(reverse("frontend:deployment", args=[deployment.pk])))

    # then
    section = page.split('id="reports-card"')[1].split("</section>")[0]
    assert f'<a href="{_page(report)}" lang="en">{report.title}</a> v1 ' in section
    assert '<span class="status-pill status-report-draft">Draft</span>' in section
    response = author.post(reverse("frontend:reports"), {"deployment": deployment.pk, "language": "zh-hans"})
    assert response.status_code == 302
    assert Report.objects.filter(deployment=deployment).count() == 2


# --- every string in Chinese --------------------------------------------------------------------------------------


def _template_msgids(text: str) -> set[str]:
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    for body in re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", text, flags=re.DOTALL):
        msgids.add(re.sub(r"{{ (\w+) }}", r"%(\1)s", body))
    return msgids


def _python_msgids(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "gettext_lazy"):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
    return found


def test_every_string_of_the_report_pages_is_in_the_chinese_catalog() -> None:
    # given the templates' strings, those of the view module and the models' choices
    names = ("reports.html", "report_detail.html", "report_verify.html", "deployment_detail.html", "base.html")
    msgids = _template_msgids("".join((TEMPLATES / name).read_text() for name in names))
    msgids |= _python_msgids(ROOT / "frontend" / "views" / "reports.py")
    with translation.override("en"):
        msgids |= {
            str(label)
            for choices in (ReportVersion.Status.choices, ReportAuditEvent.Action.choices)
            for _value, label in choices
        }
    catalog = {
        entry.msgid: entry
        for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    }

    # when
    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}

    # then
    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()


def test_every_script_string_is_in_the_blob_and_translated(author: Client, report: Report) -> None:
    # given the keys reports.js reads
    read = set(re.findall(r"\bT\.(\w+)", (STATIC / "reports.js").read_text()))
    read |= set(re.findall(r'"(signing_\w+)"', (STATIC / "reports.js").read_text()))
    english = words_in(author, "reports", "en")

    # when
    assert author.get(_page(report), headers=ZH).status_code == 200
    chinese = words_in(author, "reports", "zh-hans")

    # then
    assert read <= set(english)
    assert {key for key, value in english.items() if chinese[key] == value and re.search(r"[a-z]{4,}", value)} == set()

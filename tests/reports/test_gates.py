"""Issue 20's evidence gates, through the API: a version goes for review only with every checklist item done or
carrying its author's waiver request, is approved only with every item done or its waiver granted by a reviewer
other than the author and the asker, and nobody approves or signs a version they wrote (admins included). Granted
waivers reach the PDF's content under `waivers`, their items "waived"."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from reports.models import ChecklistWaiver, Report, ReportAuditEvent, ReportVersion
from reports.services.reports import content_with_decisions
from sizing.models import Deployment, Membership, Organisation

pytestmark = pytest.mark.django_db

CHECKLIST = [
    {"code": "machines", "text": "The customer's machines chosen", "state": "done", "detail": "gpu-01 v1"},
    {
        "code": "load_test_pulse",
        "text": "A passed load test of the pulse scenario",
        "state": "failed",
        "detail": "the newest, “pulse 1”, verdict: failed",
    },
    {"code": "monitoring", "text": "Post-launch monitoring passed", "state": "missing", "detail": "No log yet"},
]


@pytest.fixture
def team(organisation: Organisation) -> dict[str, Any]:
    users = {}
    for name, role in (
        ("author", "engineer"),
        ("reviewer", "reviewer"),
        ("signer", "signer"),
        ("admin", "admin"),
        ("other", "engineer"),
    ):
        user = get_user_model().objects.create_user(username=name, password="correct horse battery")
        Membership.objects.create(user=user, organisation=organisation, role=role)
        users[name] = user
    return users


@pytest.fixture
def version(organisation: Organisation, team: dict[str, Any]) -> ReportVersion:
    deployment = Deployment.objects.create(organisation=organisation, name="chat", customer="Acme")
    report = Report.objects.create(organisation=organisation, deployment=deployment, title="Memory commitment")
    return ReportVersion.objects.create(
        report=report,
        number=1,
        author=team["author"],
        drafted_at=timezone.now(),
        content={"language": "en", "report": {"id": report.pk, "version": 1}, "checklist": CHECKLIST},
    )


def _client(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _url(version: ReportVersion, tail: str) -> str:
    return f"/api/v1/reports/{version.report_id}/versions/{version.number}/{tail}"


def _waive(version: ReportVersion, user: Any, item: str, reason: str = "the customer accepts it") -> Any:
    return _client(user).post(_url(version, "waivers/"), {"item": item, "reason": reason}, format="json")


def _decide(version: ReportVersion, user: Any, item: str, *, grant: bool, reason: str = "checked") -> Any:
    return _client(user).post(
        _url(version, f"waivers/{item}/decision"), {"grant": grant, "reason": reason}, format="json"
    )


def test_submitting_with_failed_and_missing_items_and_no_waiver_is_refused_listing_them(
    version: ReportVersion, team: dict[str, Any]
) -> None:
    # when
    response = _client(team["author"]).post(_url(version, "submit"))

    # then
    assert response.status_code == 400
    body = response.json()
    assert [item["code"] for item in body["extra"]["items"]] == ["load_test_pulse", "monitoring"]
    assert [item["state"] for item in body["extra"]["items"]] == ["failed", "missing"]
    assert len(body["extra"]["fields"]["checklist"]) == 2
    version.refresh_from_db()
    assert version.status == ReportVersion.Status.DRAFT


def test_the_whole_gate_request_grant_approve_sign(version: ReportVersion, team: dict[str, Any], settings: Any) -> None:
    # given the author asks to waive both open items, with reasons
    assert (
        _waive(version, team["author"], "load_test_pulse", "the pulse failed on the simulator only").status_code == 201
    )
    assert _waive(version, team["author"], "monitoring", "monitoring starts after go-live").status_code == 201

    # when submitted
    assert _client(team["author"]).post(_url(version, "submit")).status_code == 200
    # then approval waits for the decisions
    refused = _client(team["reviewer"]).post(_url(version, "approve"))
    assert refused.status_code == 400
    assert [item["code"] for item in refused.json()["extra"]["items"]] == ["load_test_pulse", "monitoring"]

    # when the reviewer grants both
    assert _decide(version, team["reviewer"], "load_test_pulse", grant=True).status_code == 200
    assert _decide(version, team["reviewer"], "monitoring", grant=True, reason="72 h after go-live").status_code == 200
    approved = _client(team["reviewer"]).post(_url(version, "approve"))

    # then
    assert approved.status_code == 200
    assert approved.json()["status"] == "approved"
    version.refresh_from_db()
    content = content_with_decisions(version)
    assert {w["item"]: (w["requested_by"], w["granted_by"], w["decision_reason"]) for w in content["waivers"]} == {
        "load_test_pulse": ("author", "reviewer", "checked"),
        "monitoring": ("author", "reviewer", "72 h after go-live"),
    }
    assert [item["state"] for item in content["checklist"]] == ["done", "waived", "waived"]
    actions = list(ReportAuditEvent.objects.filter(version=version).values_list("action", flat=True))
    assert actions.count("waiver_ask") == 2
    assert actions.count("waiver_grant") == 2


def test_a_refused_waiver_blocks_approval(version: ReportVersion, team: dict[str, Any]) -> None:
    # given
    _waive(version, team["author"], "load_test_pulse")
    _waive(version, team["author"], "monitoring")
    _client(team["author"]).post(_url(version, "submit"))
    _decide(version, team["reviewer"], "load_test_pulse", grant=True)
    _decide(version, team["reviewer"], "monitoring", grant=False, reason="no: monitor first")

    # when
    response = _client(team["reviewer"]).post(_url(version, "approve"))

    # then
    assert response.status_code == 400
    assert [item["code"] for item in response.json()["extra"]["items"]] == ["monitoring"]


def test_a_waiver_needs_a_reason_an_open_item_and_its_author(version: ReportVersion, team: dict[str, Any]) -> None:
    # a blank reason
    blank = _waive(version, team["author"], "monitoring", "   ")
    assert blank.status_code == 400
    assert "reason" in blank.json()["extra"]["fields"]
    # an item that is done, or that does not exist
    done = _waive(version, team["author"], "machines")
    assert done.status_code == 400
    assert "item" in done.json()["extra"]["fields"]
    assert _waive(version, team["author"], "no_such_item").status_code == 400
    # someone else than the author, an admin included
    assert _waive(version, team["other"], "monitoring").status_code == 403
    assert _waive(version, team["admin"], "monitoring").status_code == 403
    # nothing saved
    assert not ChecklistWaiver.objects.filter(version=version).exists()


def test_nobody_grants_a_waiver_of_a_version_they_wrote(version: ReportVersion, team: dict[str, Any]) -> None:
    # given the admin wrote the version and asked for the waivers
    version.author = team["admin"]
    version.save()
    _waive(version, team["admin"], "load_test_pulse")
    _waive(version, team["admin"], "monitoring")
    _client(team["admin"]).post(_url(version, "submit"))

    # when the admin, also a reviewer by role? no: the admin's role cannot review, and being the author is refused
    # even where the role allows it (a superuser)
    team["admin"].is_superuser = True
    team["admin"].save()
    response = _decide(version, team["admin"], "monitoring", grant=True)

    # then a 400 naming the problem, nothing saved
    assert response.status_code == 400
    assert "reviewer" in response.json()["extra"]["fields"]
    assert ChecklistWaiver.objects.get(version=version, item="monitoring").status == "requested"


def test_nobody_approves_or_signs_a_version_they_wrote_admins_included(
    version: ReportVersion, team: dict[str, Any]
) -> None:
    # given a version with nothing open, written by a superuser
    author = team["admin"]
    author.is_superuser = True
    author.save()
    version.author = author
    version.content = {**version.content, "checklist": [CHECKLIST[0]]}
    version.save()
    assert _client(author).post(_url(version, "submit")).status_code == 200

    # when / then the author cannot approve
    assert _client(author).post(_url(version, "approve")).status_code == 403
    # a reviewer can
    assert _client(team["reviewer"]).post(_url(version, "approve")).status_code == 200
    # the author cannot sign, though a superuser may sign
    assert _client(author).post(_url(version, "sign")).status_code == 403
    version.refresh_from_db()
    assert version.status == ReportVersion.Status.APPROVED
    assert version.sign_requested_at is None


def test_a_version_being_drafted_cannot_be_submitted(version: ReportVersion, team: dict[str, Any]) -> None:
    # given a worker is still gathering its evidence
    version.drafted_at = None
    version.content = {}
    version.save()

    # when
    response = _client(team["author"]).post(_url(version, "submit"))

    # then
    assert response.status_code == 400
    assert "still being gathered" in response.json()["message"]

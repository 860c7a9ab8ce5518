"""The commitment checklist (reports.checklist): each item flips to done as its evidence appears in the database,
a load test counts only when it finished with a full pass, and failed evidence is "failed", never done (issue 20)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone, translation

from benchmarks_app.models import LoadTest, MemoryLog
from reports.checklist import checklist_summary, commitment_checklist, passed_scenarios
from reports.models import Report, ReportVersion
from sizing.models import Deployment, DeploymentMachine, Fingerprint, Gpu, LlmModel, Organisation, WorkloadProfile

pytestmark = pytest.mark.django_db

CODES = [
    "machines",
    "plan",
    "workload",
    "load_test_pulse",
    "load_test_long_tail",
    "load_test_failure",
    "monitoring",
    "signed_report",
]


@pytest.fixture
def deployment(organisation: Organisation) -> Deployment:
    return Deployment.objects.create(organisation=organisation, name="Acme chat", customer="Acme Bank")


def _done(deployment: Deployment) -> dict[str, bool]:
    return {item["code"]: item["done"] for item in commitment_checklist(deployment)}


def _states(deployment: Deployment) -> dict[str, str]:
    return {item["code"]: item["state"] for item in commitment_checklist(deployment)}


def _memory_log(deployment: Deployment, verdict: str | None) -> MemoryLog:
    return MemoryLog.objects.create(
        organisation=deployment.organisation,
        deployment=deployment,
        name="72 h",
        format="nvidia_smi_csv",
        size_bytes=1,
        sha256="0" * 64,
        content="x",
        verdict={"verdict": verdict} if verdict else {},
    )


def _load_test(
    deployment: Deployment, scenario: str, *, status: str = LoadTest.Status.DONE, verdict: dict[str, Any] | None = None
) -> LoadTest:
    return LoadTest.objects.create(
        organisation=deployment.organisation,
        deployment=deployment,
        endpoint_name="sim",
        name=f"{scenario} test",
        scenario=scenario,
        plan={},
        status=status,
        verdict={"verdict": "pass"} if verdict is None else verdict,
    )


def test_a_new_deployment_has_every_item_to_do(deployment: Deployment) -> None:
    # when (in English, whatever an earlier test left active in this thread)
    with translation.override("en"):
        items = commitment_checklist(deployment)

    # then
    assert [item["code"] for item in items] == CODES
    assert [item["done"] for item in items] == [False] * 8
    assert checklist_summary(items) == {"done": 0, "total": 8, "failed": 0}
    assert items[3]["text"] == "A passed load test of the pulse scenario"


def test_each_item_flips_to_done_as_its_evidence_appears(catalog: None, deployment: Deployment) -> None:
    # given a fingerprint: uploaded is not chosen
    fingerprint = Fingerprint.objects.create(
        deployment=deployment,
        host="gpu-01",
        host_key="gpu-01",
        captured_at=timezone.now(),
        facts={},
        raw=[],
        size_bytes=1,
        sha256="0" * 64,
    )
    assert _done(deployment)["machines"] is False
    DeploymentMachine.objects.create(deployment=deployment, fingerprint=fingerprint, host_key=fingerprint.host_key)
    assert _done(deployment)["machines"] is True
    # and the model and GPU of the plan
    deployment.model = LlmModel.objects.filter(organisation=None).first()
    deployment.gpu = Gpu.objects.first()
    deployment.save()
    assert _done(deployment)["plan"] is True
    # and a workload profile, then its rate
    deployment.workload = WorkloadProfile.objects.create(organisation=deployment.organisation, name="chat", profile={})
    deployment.save()
    assert _done(deployment)["workload"] is False
    deployment.rate_per_s = 12.5
    deployment.save()
    assert _done(deployment)["workload"] is True
    # and a passed test of each scenario
    for scenario in ("pulse", "long_tail", "failure"):
        _load_test(deployment, scenario)
    assert passed_scenarios(deployment) == {"pulse", "long_tail", "failure"}
    # and a monitoring log that passed
    _memory_log(deployment, "pass")
    assert _done(deployment)["monitoring"] is True
    # and a signed version of a report
    report = Report.objects.create(organisation=deployment.organisation, deployment=deployment, title="t")
    version = ReportVersion.objects.create(report=report, number=1, content={})
    assert _done(deployment)["signed_report"] is False
    version.status = ReportVersion.Status.SIGNED
    version.save()

    # when
    items = commitment_checklist(deployment)

    # then
    assert [item["done"] for item in items] == [True] * 8
    assert checklist_summary(items) == {"done": 8, "total": 8, "failed": 0}


@pytest.mark.parametrize(
    ("status", "verdict"),
    [
        (LoadTest.Status.DONE, {"verdict": "fail"}),
        (LoadTest.Status.DONE, {"verdict": "invalid"}),
        (LoadTest.Status.DONE, {"verdict": "pass", "partial": True}),
        (LoadTest.Status.CANCELLED, {"verdict": "pass"}),
        (LoadTest.Status.FAILED, {"verdict": "pass"}),
        (LoadTest.Status.RUNNING, {}),
    ],
    ids=["failed-verdict", "invalid-verdict", "partial-pass", "cancelled", "failed-run", "running"],
)
def test_a_load_test_counts_only_when_it_finished_with_a_full_pass(
    deployment: Deployment, status: str, verdict: dict[str, Any]
) -> None:
    # given
    _load_test(deployment, "pulse", status=status, verdict=verdict)

    # when / then: a finished test that did not pass is failed evidence; a running one is no evidence yet
    assert _done(deployment)["load_test_pulse"] is False
    assert _states(deployment)["load_test_pulse"] == ("missing" if status == LoadTest.Status.RUNNING else "failed")
    assert passed_scenarios(deployment) == set()


@pytest.mark.parametrize(
    ("verdict", "state"), [("pass", "done"), ("fail", "failed"), ("insufficient", "missing"), (None, "missing")]
)
def test_a_monitoring_log_is_done_only_when_it_passed(deployment: Deployment, verdict: str | None, state: str) -> None:
    # given
    _memory_log(deployment, verdict)

    # when / then
    assert _states(deployment)["monitoring"] == state
    assert checklist_summary(commitment_checklist(deployment))["failed"] == (1 if state == "failed" else 0)


def test_another_deployments_evidence_does_not_count(organisation: Organisation, deployment: Deployment) -> None:
    # given
    other = Deployment.objects.create(organisation=organisation, name="Other")
    _load_test(other, "pulse")
    MemoryLog.objects.create(
        organisation=organisation,
        deployment=other,
        name="log",
        format="nvidia_smi_csv",
        size_bytes=1,
        sha256="0" * 64,
        content="x",
    )

    # when / then
    assert checklist_summary(commitment_checklist(deployment)) == {"done": 0, "total": 8, "failed": 0}


def test_the_items_are_in_chinese_when_chinese_is_active(deployment: Deployment) -> None:
    # when
    with translation.override("zh-hans"):
        texts = [item["text"] for item in commitment_checklist(deployment)]

    # then
    assert texts[-1] == "一个已签署的报告版本"
    assert texts[3] == "一次通过的脉冲场景压测"
    assert not any(text.endswith("。") for text in texts)

"""The customers' pages and the deployment page as the engineer's home: customers are the distinct customer names
of the organisation's deployments (another organisation's never shown), a customer's deployments with their
checklist summary, the deployment page's checklist and load-test and benchmark-run cards, and the plan form's
workload profile and rate."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from benchmarks_app.models import BenchmarkRun, LoadTest
from reports.models import Report, ReportVersion
from sizing.models import Deployment, Membership, Organisation, WorkloadProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def deployments(organisation: Organisation) -> list[Deployment]:
    return [
        Deployment.objects.create(organisation=organisation, name=name, customer=customer)
        for name, customer in (("Chat", "Acme Bank"), ("Search", "Acme Bank"), ("Docs", "华为"), ("Internal", ""))
    ]


@pytest.fixture
def foreign(db) -> Deployment:
    other = Organisation.objects.create(name="Globex")
    stranger = get_user_model().objects.create_user(username="stranger", password="another horse battery")
    Membership.objects.create(user=stranger, organisation=other)
    return Deployment.objects.create(organisation=other, name="Their chat", customer="Secret Customer")


def test_the_customers_page_lists_the_names_with_their_counts(
    signed_in: Client, deployments: list[Deployment], foreign: Deployment
) -> None:
    # when
    response = signed_in.get(reverse("frontend:customers"))
    html = response.content.decode()

    # then
    assert response.status_code == 200
    assert '<tr data-customer="Acme Bank">' in html
    assert '<tr data-customer="华为">' in html
    assert html.count("<tr data-customer=") == 2
    row = html.split('<tr data-customer="Acme Bank">')[1].split("</tr>")[0]
    assert '<span class="customer-count">2</span>' in row
    assert f'href="{reverse("frontend:deployment", args=[deployments[0].pk])}"' in row
    assert f'href="/customers/{quote("华为")}/"' in html
    assert "Secret Customer" not in html
    assert "Their chat" not in html
    assert f'href="{reverse("frontend:customers")}"' in html  # the nav link


def test_the_customers_page_shows_the_newest_signed_report(signed_in: Client, deployments: list[Deployment]) -> None:
    # given a signed version of a report on one of Acme Bank's deployments
    report = Report.objects.create(
        organisation=deployments[1].organisation, deployment=deployments[1], title="Search commitment"
    )
    version = ReportVersion.objects.create(report=report, number=1, content={})
    version.status = ReportVersion.Status.SIGNED
    version.save()

    # when
    html = signed_in.get(reverse("frontend:customers")).content.decode()

    # then
    row = html.split('<tr data-customer="Acme Bank">')[1].split("</tr>")[0]
    assert "Search commitment</a> v1" in row
    other = html.split('<tr data-customer="华为">')[1].split("</tr>")[0]
    assert "Search commitment" not in other


def test_the_customer_page_shows_its_deployments_with_their_checklist(
    signed_in: Client, deployments: list[Deployment]
) -> None:
    # when
    response = signed_in.get(f"/customers/{quote('Acme Bank')}/")
    html = response.content.decode()

    # then
    assert response.status_code == 200
    assert re.findall(r'<tr data-deployment="(\d+)">', html) == [str(d.pk) for d in deployments[:2]]  # by name
    assert html.count('data-done="0" data-total="8"') == 2
    assert "0 of 8 done" in html
    assert "Docs" not in html


def test_another_organisations_customer_and_an_unknown_name_are_404(signed_in: Client, foreign: Deployment) -> None:
    assert signed_in.get(f"/customers/{quote('Secret Customer')}/").status_code == 404
    assert signed_in.get("/customers/Nobody/").status_code == 404


def test_the_deployment_page_shows_the_checklist_and_the_load_tests(
    signed_in: Client, deployments: list[Deployment]
) -> None:
    # given a passed pulse test, a failed long-tail test and a benchmark run
    deployment = deployments[0]
    for name, scenario, verdict in (("pulse run", "pulse", "pass"), ("tail run", "long_tail", "fail")):
        LoadTest.objects.create(
            organisation=deployment.organisation,
            deployment=deployment,
            endpoint_name="sim",
            name=name,
            scenario=scenario,
            plan={},
            status=LoadTest.Status.DONE,
            verdict={"verdict": verdict},
        )
    run = BenchmarkRun.objects.create(
        organisation=deployment.organisation, deployment=deployment, name="vllm bench", format="vllm", tool="vllm-bench"
    )

    # when
    html = signed_in.get(reverse("frontend:deployment", args=[deployment.pk])).content.decode()

    # then the checklist
    assert 'id="checklist-card"' in html
    assert '<li class="checklist-item is-done" data-code="load_test_pulse" data-done="true" data-state="done">' in html
    # a failed test is failed evidence, never done (issue 20)
    assert (
        '<li class="checklist-item is-failed" data-code="load_test_long_tail" data-done="false" '
        'data-state="failed">' in html
    )
    assert "1 of 8 done" in html
    assert f'href="{reverse("frontend:memory-logs")}"' in html
    # and the load tests, newest first, with their verdicts
    cards = html.split('id="load-tests-card"')[1].split("</section>")[0]
    assert cards.index("tail run") < cards.index("pulse run")
    assert 'data-verdict="pass">Pass</span>' in cards
    assert 'data-verdict="fail">Fail</span>' in cards
    # and the benchmark runs
    runs = html.split('id="benchmark-runs-card"')[1].split("</section>")[0]
    assert f'<a href="{reverse("frontend:benchmark", args=[run.pk])}">vllm bench</a>' in runs


def test_the_deployment_page_in_chinese(signed_in: Client, deployments: list[Deployment]) -> None:
    html = signed_in.get(
        reverse("frontend:deployment", args=[deployments[0].pk]), headers={"accept-language": "zh-hans"}
    ).content.decode()
    assert "签署承诺之前" in html
    assert "已完成 0 / 8" in html


def test_the_plan_form_saves_the_workload_and_the_rate(signed_in: Client, deployments: list[Deployment]) -> None:
    # given
    deployment = deployments[0]
    profile = WorkloadProfile.objects.create(organisation=deployment.organisation, name="Bank chat", profile={})

    # when
    response = signed_in.post(
        reverse("frontend:deployment", args=[deployment.pk]),
        {"name": "Chat", "customer": "Acme Bank", "engine": "vllm", "workload": str(profile.pk), "rate_per_s": "12.5"},
    )

    # then
    deployment.refresh_from_db()
    assert response.status_code == 302
    assert (deployment.workload_id, deployment.rate_per_s) == (profile.pk, 12.5)
    html = signed_in.get(response["Location"]).content.decode()
    assert '<span id="plan-workload">Bank chat</span>' in html
    assert "12.5 requests/s" in html
    assert f'<option value="{profile.pk}" selected>Bank chat</option>' in html


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        ("0", "The rate is a number of requests per second above 0, at most 100,000"),
        ("200000", "The rate is a number of requests per second above 0, at most 100,000"),
        ("fast", "Enter a number."),
    ],
    ids=["zero", "too-high", "not-a-number"],
)
def test_a_bad_rate_is_refused_under_its_field_and_nothing_is_saved(
    signed_in: Client, deployments: list[Deployment], rate: str, message: str
) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment", args=[deployments[0].pk]),
        {"name": "Renamed", "engine": "vllm", "rate_per_s": rate},
    )

    # then
    html = response.content.decode()
    assert response.status_code == 400
    assert f'<p class="field-error" data-error-for="rate_per_s">{message} </p>' in html
    deployment = Deployment.objects.get(pk=deployments[0].pk)
    assert (deployment.name, deployment.rate_per_s) == ("Chat", None)


def test_another_organisations_workload_profile_is_refused(
    signed_in: Client, deployments: list[Deployment], foreign: Deployment
) -> None:
    # given
    theirs = WorkloadProfile.objects.create(organisation=foreign.organisation, name="Their traffic", profile={})

    # when
    response = signed_in.post(
        reverse("frontend:deployment", args=[deployments[0].pk]),
        {"name": "Chat", "engine": "vllm", "workload": str(theirs.pk)},
    )

    # then
    assert response.status_code == 400
    assert f"Unknown workload profile {theirs.pk}" in response.content.decode()
    assert "Their traffic" not in response.content.decode()
    assert Deployment.objects.get(pk=deployments[0].pk).workload_id is None

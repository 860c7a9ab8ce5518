"""One way for every list (the limit/offset envelope, `ordering` checked against an allow-list, filters) and one
error shape for every error: unknown URLs and crashes under /api/, throttling, missing credentials."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from reports.services.reports import report_create
from sizing.models import Deployment
from sizing.selectors.estimates import gpu_get
from sizing.services.deployments import deployment_create

LISTS = [
    "/api/v1/gpus/",
    "/api/v1/models/",
    "/api/v1/calibrations/",
    "/api/v1/deployments/",
    "/api/v1/fingerprints/",
    "/api/v1/simulations/",
    "/api/v1/perf-calibrations/",
    "/api/v1/workloads/",
    "/api/v1/benchmark-runs/",
    "/api/v1/endpoints/",
    "/api/v1/load-tests/",
    "/api/v1/memory-logs/",
    "/api/v1/reports/",
]


@pytest.mark.parametrize("url", LISTS)
def test_every_list_answers_the_envelope_and_checks_ordering(api_client: APIClient, catalog: None, url: str) -> None:
    body = api_client.get(url).json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert isinstance(body["results"], list)
    assert body["count"] >= len(body["results"])

    refused = api_client.get(url, {"ordering": "-no_such_field"})
    assert refused.status_code == 400
    error = refused.json()
    assert error["code"] == "invalid_input"
    assert "'-no_such_field'" in error["message"]
    assert "allowed: " in error["message"]
    assert list(error["extra"]["fields"]) == ["ordering"]


def test_pages_are_at_most_500_and_follow_each_other(api_client: APIClient, catalog: None) -> None:
    everything = api_client.get("/api/v1/models/", {"limit": 100000}).json()
    assert len(everything["results"]) == min(everything["count"], 500)
    first = api_client.get("/api/v1/models/", {"limit": 2, "ordering": "slug"}).json()
    second = api_client.get(first["next"]).json()
    slugs = [row["slug"] for row in first["results"] + second["results"]]
    assert slugs == sorted(slugs)
    assert len(set(slugs)) == 4
    assert second["previous"]


def test_ordering_and_filters_of_deployments(api_client: APIClient, user, catalog: None) -> None:
    organisation = user.membership.organisation
    for name, customer, gpu in (("b", "Bank", "nvidia-l40s-48gb"), ("a", "Bank", None), ("c", "Telco", None)):
        deployment_create(
            organisation=organisation,
            user=user,
            data={"name": name, "customer": customer, "gpu": gpu_get(slug=gpu) if gpu else None},
        )

    def names(**query: str) -> list[str]:
        return [row["name"] for row in api_client.get("/api/v1/deployments/", query).json()["results"]]

    assert names() == ["a", "b", "c"]
    assert names(ordering="-name") == ["c", "b", "a"]
    assert names(ordering="customer,-name") == ["b", "a", "c"]
    assert names(customer="Bank") == ["a", "b"]
    assert names(gpu="nvidia-l40s-48gb") == ["b"]
    assert names(model="no/such-model") == []


def test_filters_refuse_what_is_not_a_choice_or_an_id(api_client: APIClient) -> None:
    for url, query, field in (
        ("/api/v1/reports/", {"status": "lost"}, "status"),
        ("/api/v1/reports/", {"deployment": "x1"}, "deployment"),
        ("/api/v1/simulations/", {"kind": "guess"}, "kind"),
        ("/api/v1/workloads/", {"sample": "perhaps"}, "sample"),
    ):
        response = api_client.get(url, query)
        assert response.status_code == 400, (url, query)
        assert list(response.json()["extra"]["fields"]) == [field]


def test_a_documented_deployment_is_not_deleted(api_client: APIClient, user, catalog: None) -> None:
    deployment = deployment_create(organisation=user.membership.organisation, user=user, data={"name": "kept"})
    report_create(organisation=user.membership.organisation, user=user, data={"deployment": deployment.pk})
    response = api_client.delete(f"/api/v1/deployments/{deployment.pk}/")
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["deployment"]
    assert Deployment.objects.filter(pk=deployment.pk).exists()


def test_an_unknown_api_url_is_a_json_404_and_a_page_url_is_a_page(api_client: APIClient) -> None:
    response = api_client.get("/api/v1/no-such-thing/")
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": "no API at /api/v1/no-such-thing/", "extra": {}}
    page = api_client.get("/no-such-page/")
    assert page.status_code == 404
    assert not page["Content-Type"].startswith("application/json")


def test_a_crash_under_the_api_is_a_json_500(api_client: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("sizing.apis.estimates.gpu_list", crash)
    api_client.raise_request_exception = False
    response = api_client.get("/api/v1/gpus/")
    assert response.status_code == 500
    assert response.json()["code"] == "server_error"
    assert "boom" not in response.content.decode()


def test_throttled_answers_say_when_to_retry(api_client: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    rates = {scope: "1/min" for scope in [*SimpleRateThrottle.THROTTLE_RATES, "sustained", "burst"]}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)  # whichever throttle counts this client
    assert api_client.get("/api/v1/gpus/").status_code == 200
    refused = api_client.get("/api/v1/gpus/")
    assert refused.status_code == 429
    body = refused.json()
    assert body["code"] == "throttled"
    assert 0 < body["extra"]["retry_after_s"] <= 60
    assert int(refused["Retry-After"]) == body["extra"]["retry_after_s"]


def test_no_credentials_is_a_401_saying_how_to_authenticate(db: None) -> None:
    response = APIClient().get("/api/v1/deployments/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response.json()["code"] == "not_authenticated"

"""Issue 19, finding 5: errors stay JSON under /api/ and say nothing internal in every mode (DEBUG included), the
throttles count per user over all of the user's keys and per address for anonymous and refused-key requests,
/readyz tells anonymous callers which check failed but not its host or port, and the smaller answers agree with the
schema (a revoked key's 200, a PDF for `Accept: application/pdf`, another organisation's fingerprint refused)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory, override_settings
from django.utils import timezone
from django.views.debug import ExceptionReporter
from rest_framework.test import APIClient

from sizing.kernel.apikeys import AnonymousThrottle, ApiKeyBurstThrottle, api_key_create
from sizing.models import ApiKey, Deployment, Fingerprint, Membership, Organisation

ROOT = Path(__file__).resolve().parents[2]
BROKER_URL = "redis://:hunter2-broker@broker.internal:6390/0"
DATABASE_URL = "postgres://sizing:hunter2-db@db.internal:5432/sizing"
CACHE_URL = "redis://:hunter2-cache@cache.internal:6379/1"


def _bearer(key: str, address: str = "127.0.0.1") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _member(organisation: Organisation, username: str, role: str = "engineer"):
    account = get_user_model().objects.create_user(username=username, password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=role)
    return account


# --- errors ---------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@override_settings(DEBUG=True)
def test_an_unknown_api_url_is_a_json_404_with_debug_on():
    # when: DEBUG on, where Django would answer its 32 KB technical 404 page
    response = Client().get("/api/v1/no-such-thing/")
    # then
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"code": "not_found", "message": "no API at /api/v1/no-such-thing/", "extra": {}}


@pytest.mark.django_db
@override_settings(DEBUG=True)
def test_a_crash_under_the_api_is_a_json_500_without_a_traceback_with_debug_on(api_client, monkeypatch):
    # given: a view that crashes with a connection URL in its message
    def crash() -> None:
        raise RuntimeError(f"cannot reach {BROKER_URL}")

    monkeypatch.setattr("sizing.apis.estimates.gpu_list", crash)
    api_client.raise_request_exception = False
    # when
    response = api_client.get("/api/v1/gpus/")
    # then
    assert response.status_code == 500
    assert response.json() == {
        "code": "server_error",
        "message": "the server failed to answer; the error is logged",
        "extra": {},
    }
    assert "hunter2" not in response.content.decode()


@pytest.mark.django_db
@override_settings(DEBUG=True)
def test_a_bad_request_under_the_api_is_json_with_debug_on():
    # given: a Host header outside ALLOWED_HOSTS (DisallowedHost: Django's technical 400 page with DEBUG)
    # when
    response = Client().get("/api/v1/gpus/", HTTP_HOST="evil.example")
    # then
    assert response.status_code == 400
    assert response.json() == {"code": "bad_request", "message": "the request was refused (bad request)", "extra": {}}


@pytest.mark.django_db
@override_settings(
    DEBUG=True,
    CELERY_BROKER_URL=BROKER_URL,
    CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": CACHE_URL}},
)
def test_the_debug_page_masks_connection_urls_in_settings_and_the_environment():
    # given: a request whose environment (runserver copies os.environ into META) holds the connection URLs
    request = RequestFactory().get(
        "/deployments/", DATABASE_URL=DATABASE_URL, CELERY_BROKER_URL=BROKER_URL, SOME_OTHER_VALUE=f"see {DATABASE_URL}"
    )
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        # when: the technical 500 page is made
        html = ExceptionReporter(request, *sys.exc_info()).get_traceback_html()
    # then: the connection settings and variables masked whole, a URL's password inside any other value masked
    assert "boom" in html  # it is the debug page
    assert "CELERY_BROKER_URL" in html
    for secret in ("hunter2-db", "hunter2-broker", "hunter2-cache", "broker.internal", "cache.internal"):
        assert secret not in html, secret
    assert "see postgres://sizing:********************@db.internal:5432/sizing" in html


def test_make_run_serves_without_debug_by_default():
    script = (ROOT / "deploy" / "run-dev.sh").read_text()
    assert "export DEBUG=${DEBUG:-0}" in script
    assert "whitenoise.middleware.WhiteNoiseMiddleware" in (ROOT / "deploy" / "settings" / "base.py").read_text()


@pytest.mark.django_db
@override_settings(DEBUG=False)
def test_static_files_are_served_without_debug():
    response = Client().get("/static/vendor/plotly/plotly.min.js")
    assert response.status_code == 200
    assert b"plotly" in b"".join(response.streaming_content)[:2000].lower()


# --- throttles ------------------------------------------------------------------------------------------------------


def test_the_burst_throttle_counts_all_of_a_users_keys_together(user, organisation, monkeypatch):
    # given a burst rate of 3 a minute, two keys of one user and a key of a colleague
    monkeypatch.setattr(ApiKeyBurstThrottle, "THROTTLE_RATES", {**ApiKeyBurstThrottle.THROTTLE_RATES, "burst": "3/min"})
    _, first = api_key_create(user=user, name="one")
    _, second = api_key_create(user=user, name="two")
    _, colleagues = api_key_create(user=_member(organisation, "colleague"), name="theirs")

    # when the user calls twice with one key and twice with the other
    answers = [
        _bearer(first).get("/api/v1/me/"),
        _bearer(first).get("/api/v1/me/"),
        _bearer(second).get("/api/v1/me/"),
        _bearer(second).get("/api/v1/me/"),
    ]

    # then the fourth is throttled, whichever key made it; the colleague is not
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert answers[-1].json()["code"] == "throttled"
    assert 0 < int(answers[-1]["Retry-After"]) <= 60
    assert _bearer(colleagues).get("/api/v1/me/").status_code == 200


@pytest.mark.django_db
def test_anonymous_requests_are_throttled_per_address(monkeypatch):
    # given an anonymous rate of 3 a minute
    monkeypatch.setattr(AnonymousThrottle, "THROTTLE_RATES", {**AnonymousThrottle.THROTTLE_RATES, "anonymous": "3/min"})
    client = APIClient(REMOTE_ADDR="192.0.2.10")
    # when
    answers = [client.get("/api/v1/deployments/") for _ in range(4)]
    # then: three 401s, then a 429 in the error shape; another address is still answered
    assert [a.status_code for a in answers] == [401, 401, 401, 429]
    assert answers[-1].json()["code"] == "throttled"
    assert 0 < answers[-1].json()["extra"]["retry_after_s"] <= 60
    assert APIClient(REMOTE_ADDR="192.0.2.11").get("/api/v1/deployments/").status_code == 401


@pytest.mark.django_db
def test_wrong_keys_count_against_the_anonymous_rate(user, monkeypatch):
    # given an anonymous rate of 3 a minute, and a user's real key
    monkeypatch.setattr(AnonymousThrottle, "THROTTLE_RATES", {**AnonymousThrottle.THROTTLE_RATES, "anonymous": "3/min"})
    _, real = api_key_create(user=user, name="real")
    address = "192.0.2.20"
    # when one address guesses keys
    guesses = [_bearer(f"lls_{n:012x}_guess", address).get("/api/v1/me/") for n in range(3)]
    throttled = _bearer("lls_000000000009_guess", address).get("/api/v1/me/")
    # then the guesses are 401s until the rate is spent, then 429s
    assert [g.status_code for g in guesses] == [401, 401, 401]
    assert throttled.status_code == 429
    assert throttled.json()["code"] == "throttled"
    # and a valid key is never counted there: it has its own rate, per user
    assert _bearer(real, address).get("/api/v1/me/").status_code == 200


@pytest.mark.django_db
def test_a_signed_in_user_is_not_counted_as_anonymous(api_client, monkeypatch):
    monkeypatch.setattr(AnonymousThrottle, "THROTTLE_RATES", {**AnonymousThrottle.THROTTLE_RATES, "anonymous": "1/min"})
    assert [api_client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 200]


def test_the_anonymous_throttle_is_no_security_scheme_in_the_schema(db):
    schema = Client().get("/api/schema/", {"format": "json"}).json()
    assert set(schema["components"]["securitySchemes"]) == {"ApiKey", "cookieAuth"}


# --- /readyz --------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_readyz_names_the_failed_check_but_not_its_host_to_anonymous_callers():
    # when
    response = Client().get("/readyz")
    # then: which check failed, and its kind of error, without host or port
    body = response.json()
    assert response.status_code == 503
    assert body["failed"] == ["broker"]
    assert body["checks"]["broker"]["error"].endswith("(the details are in the service's log)")
    assert "127.0.0.1" not in response.content.decode()
    assert ":1" not in body["checks"]["broker"]["error"]


@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_readyz_tells_staff_why_a_check_failed():
    # given a signed-in staff user
    staff = get_user_model().objects.create_user(username="operator", password="correct horse battery", is_staff=True)
    client = Client()
    client.force_login(staff)
    # when
    error = client.get("/readyz").json()["checks"]["broker"]["error"]
    # then
    assert "Connection refused" in error or "connect" in error


# --- answers the schema documents -----------------------------------------------------------------------------------


def test_revoking_a_key_answers_200_with_the_key_as_the_schema_says(api_client, user):
    # given
    row, _key = api_key_create(user=user, name="old script")
    # when
    response = api_client.delete(f"/api/v1/api-keys/{row.pk}/")
    # then
    assert response.status_code == 200
    assert response.json()["status"] == "revoked"
    operation = Client().get("/api/schema/", {"format": "json"}).json()["paths"]["/api/v1/api-keys/{key_id}/"]
    assert "200" in operation["delete"]["responses"]
    assert "204" not in operation["delete"]["responses"]
    assert ApiKey.objects.get(pk=row.pk).revoked_at is not None


@pytest.mark.django_db
def test_the_pdf_operations_document_application_pdf():
    paths = Client().get("/api/schema/", {"format": "json"}).json()["paths"]
    for path in ("/api/v1/reports/{report_id}/pdf", "/api/v1/reports/{report_id}/versions/{number}/pdf"):
        assert list(paths[path]["get"]["responses"]["200"]["content"]) == ["application/pdf"], path


def test_a_missing_reports_pdf_asked_for_as_a_pdf_is_a_json_404(api_client):
    # when a PDF client (Accept: application/pdf) asks for a report that is not there
    response = api_client.get("/api/v1/reports/999999/pdf", HTTP_ACCEPT="application/pdf")
    # then it is told so in the error shape, not refused with a 406
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_found"


def test_another_organisations_fingerprint_is_refused_by_the_boot_log_comparison(api_client, catalog):
    # given a fingerprint of another organisation
    other = Organisation.objects.create(name="Other Integrator")
    deployment = Deployment.objects.create(
        organisation=other, name="theirs", customer="Them", engine="vllm", gpu_count=1, tp=1, slo={}
    )
    theirs = Fingerprint.objects.create(
        deployment=deployment,
        host="their-gpu-1",
        captured_at=timezone.now(),
        facts={},
        raw=[],
        size_bytes=0,
        sha256="0" * 64,
    )
    # when
    response = api_client.post(
        "/api/v1/bootlogs/compare",
        {"gpu": "nvidia-l4-24gb", "text": "INFO starting", "fingerprint": theirs.pk},
        format="json",
    )
    # then: refused naming the field, as estimates/quick refuses it; nothing saved
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["fingerprint"]
    assert f"unknown fingerprint {theirs.pk}" in response.json()["message"]


def test_a_reports_pdf_is_served_to_a_client_that_accepts_only_pdf(api_client, user, catalog):
    # given a report of a deployment (its first version, a draft)
    from reports.services.reports import report_create, version_draft
    from sizing.selectors.estimates import gpu_get, model_get_for_organisation
    from sizing.services.deployments import deployment_create

    organisation = user.membership.organisation
    deployment = deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "pdf",
            "customer": "Bank",
            "gpu_count": 1,
            "tp": 1,
            "gpu": gpu_get(slug="nvidia-l40s-48gb"),
            "model": model_get_for_organisation(organisation=organisation, slug="meta-llama/Meta-Llama-3-8B"),
        },
    )
    report = report_create(organisation=organisation, user=user, data={"deployment": deployment.pk})
    version = report.versions.get()
    version_draft(version_id=version.pk, user_id=user.pk)  # the drafting worker's part
    # when: what a PDF client sends
    response = api_client.get(f"/api/v1/reports/{report.pk}/pdf", HTTP_ACCEPT="application/pdf")
    # then
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF-")


def test_an_unknown_format_is_a_404_in_the_error_shape(api_client):
    # DRF's content negotiation raises Django's Http404 for ?format= it has no renderer for
    response = api_client.get("/api/v1/reports/1/pdf", {"format": "AAA"})
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert set(response.json()) == {"code", "message", "extra"}

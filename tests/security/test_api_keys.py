"""Per-user API keys (created, shown once, stored hashed, used, revoked, expired), the throttles per user, and that
no response or log line carries a secret: an endpoint's API key or a user's API key."""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from sizing.kernel.apikeys import ApiKeyBurstThrottle, SessionThrottle, api_key_authenticate, api_key_create
from sizing.models import ApiKey, Membership
from tests.security.test_isolation import _organisation_objects, _values, routes

ENDPOINT_SECRET = "sk-live-endpoint-secret-4d1f6a"


def _bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def sales_user(organisation):
    account = get_user_model().objects.create_user(username="sales", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role="sales")
    return account


def test_a_key_is_shown_once_stored_hashed_used_and_revoked(api_client, user):
    # when the user creates a key
    created = api_client.post("/api/v1/api-keys/", {"name": "CRM quote script"}, format="json")

    # then the key is in that answer only, and stored as its SHA-256
    assert created.status_code == 201
    assert created["Cache-Control"] == "no-store"
    body = created.json()
    key = body["key"]
    assert key.startswith(body["prefix"] + "_")
    assert len(key) > 50
    row = ApiKey.objects.get()
    assert row.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
    assert key not in str(ApiKey.objects.values().get())
    listed = api_client.get("/api/v1/api-keys/").content.decode()
    assert key not in listed
    assert body["prefix"] in listed
    assert key not in api_client.get(body["url"]).content.decode()

    # when a script uses it
    me = _bearer(key).get("/api/v1/me/")

    # then it acts as the user, and its use is stamped
    assert me.status_code == 200
    assert me.json() == {
        "username": "engineer",
        "organisation": "Acme Integrator",
        "role": "engineer",
        "authenticated_by": "api_key",
    }
    assert ApiKey.objects.get().last_used_at is not None

    # when the user revokes it
    revoked = api_client.delete(body["url"])

    # then it stays listed as revoked and is refused from now on
    assert revoked.json()["status"] == "revoked"
    refused = _bearer(key).get("/api/v1/me/")
    assert refused.status_code == 401
    assert refused.json()["code"] == "authentication_failed"
    assert refused["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize(
    "header",
    ["Bearer lls_000000000000_wrong", "Bearer not-a-key", "Bearer", "Bearer a b", "Token lls_x_y"],
    ids=["unknown", "malformed", "missing", "two-words", "token-keyword-unknown"],
)
def test_a_bad_key_is_a_401_never_anonymous(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/deployments/")
    assert response.status_code == 401
    assert set(response.json()) == {"code", "message", "extra"}


def test_an_expired_key_and_a_deactivated_user_are_refused(user):
    row, key = api_key_create(user=user, name="short-lived", expires_at=timezone.now() + timedelta(hours=1))
    assert api_key_authenticate(key) is not None
    ApiKey.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert api_key_authenticate(key) is None
    _, other = api_key_create(user=user, name="long-lived")
    user.is_active = False
    user.save()
    assert api_key_authenticate(other) is None
    assert _bearer(other).get("/api/v1/me/").status_code == 401


def test_a_user_sees_and_revokes_only_their_own_keys(api_client, organisation):
    colleague = get_user_model().objects.create_user(username="colleague")
    Membership.objects.create(user=colleague, organisation=organisation)
    theirs, _ = api_key_create(user=colleague, name="theirs")
    assert api_client.get("/api/v1/api-keys/").json() == []
    assert api_client.delete(f"/api/v1/api-keys/{theirs.pk}/").status_code == 404
    assert ApiKey.objects.get().revoked_at is None


def test_key_creation_is_validated(api_client, user):
    assert api_client.post("/api/v1/api-keys/", {"name": "  "}, format="json").status_code == 400
    past = api_client.post("/api/v1/api-keys/", {"name": "x", "expires_at": "2001-01-01T00:00:00Z"}, format="json")
    assert past.json()["extra"]["fields"] == {"expires_at": ["the expiry must be in the future"]}
    for index in range(20):
        api_key_create(user=user, name=f"key {index}")
    full = api_client.post("/api/v1/api-keys/", {"name": "one too many"}, format="json")
    assert full.status_code == 400
    assert "20 active keys" in full.json()["message"]
    assert ApiKey.objects.count() == 20


def test_a_sales_key_quotes_but_cannot_write(catalog, sales_user):
    _, key = api_key_create(user=sales_user, name="sales tool")
    client = _bearer(key)
    quick = client.post(
        "/api/v1/estimates/quick",
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l4-24gb", "max_model_len": 4096},
        format="json",
    )
    assert quick.status_code == 200
    refused = client.post("/api/v1/deployments/", {}, format="json")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        "your role in the organisation (sales) does not allow this; it needs: admin, engineer"
    )


def test_the_burst_throttle_counts_per_user_and_answers_429(user, monkeypatch):
    # given a burst rate of 3 a minute
    monkeypatch.setattr(ApiKeyBurstThrottle, "THROTTLE_RATES", {**ApiKeyBurstThrottle.THROTTLE_RATES, "burst": "3/min"})
    _, first = api_key_create(user=user, name="one")
    _, second = api_key_create(user=user, name="two")

    # when one key calls four times
    answers = [_bearer(first).get("/api/v1/me/") for _ in range(4)]

    # then the fourth is throttled with Retry-After, in the API's error shape; so is the user's other key (the
    # counter is the user's: more keys are not more requests, tests/security/test_errors_and_throttles.py)
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    throttled = answers[-1]
    assert 0 < int(throttled["Retry-After"]) <= 60
    assert throttled.json()["code"] == "throttled"
    assert _bearer(second).get("/api/v1/me/").status_code == 429


def test_a_browser_session_has_its_own_rate(api_client, monkeypatch):
    monkeypatch.setattr(SessionThrottle, "THROTTLE_RATES", {**SessionThrottle.THROTTLE_RATES, "session": "2/min"})
    assert [api_client.get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]


def test_the_key_page_shows_a_new_key_once_and_revokes(user):
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(user)
    created = client.post("/account/api-keys/", {"name": "报价脚本"})
    assert created.status_code == 201
    page = created.content.decode()
    key = page.split('id="created-key-value" lang="en">')[1].split("<")[0]
    assert api_key_authenticate(key) is not None
    assert "复制" in page  # the page is in Chinese
    again = client.get("/account/api-keys/").content.decode()
    assert key not in again
    assert "报价脚本" in again
    row = ApiKey.objects.get()
    assert client.post(f"/account/api-keys/{row.pk}/revoke/").status_code == 302
    assert api_key_authenticate(key) is None


@pytest.mark.django_db
def test_no_response_or_log_line_carries_a_secret(catalog, caplog):
    # given an organisation whose endpoint has an API key, and a user key used for the calls
    caplog.set_level(logging.DEBUG)
    objects = _organisation_objects("Org S", role="admin")
    _, user_key = api_key_create(user=objects["user"], name="walker")
    session = Client(HTTP_ACCEPT_LANGUAGE="en")
    session.force_login(objects["user"])
    api = _bearer(user_key)
    ids = {
        "deployment_id": objects["deployment"].pk,
        "fingerprint_id": objects["fingerprint"].pk,
        "estimate_id": objects["estimate"].pk,
        "simulation": objects["simulation"].pk,
        "load_test": objects["load_test"].pk,
        "workload_profile_id": objects["workload"].pk,
        "run_id": objects["run"].pk,
        "series_id": objects["series"].pk,
        "log_id": objects["memory_log"].pk,
        "endpoint_id": objects["endpoint"].pk,
        "report_id": objects["report"].pk,
        "number": 1,
        "key_id": objects["api_key"].pk,
        "user_id": objects["user"].pk,
        "name": objects["deployment"].customer,
        "quote_id": objects["quote"].pk,
        "item": "monitoring",
    }
    endpoint_url = f"/api/v1/endpoints/{objects['endpoint'].pk}/"

    # when the endpoint's key is changed and a bad change is refused, and every route is read
    bodies = [
        api.patch(endpoint_url, {"api_key": ENDPOINT_SECRET}, format="json"),
        api.patch(endpoint_url, {"api_key": ENDPOINT_SECRET, "base_url": "ftp://nope"}, format="json"),
        api.post("/api/v1/endpoints/", {"name": "x", "api_key": ENDPOINT_SECRET}, format="json"),
        session.post("/endpoints/", {"name": "y", "api_key": ENDPOINT_SECRET, "base_url": "bad"}),
    ]
    for route in routes():
        path = route.path(_values(route, ids))
        bodies.append(api.get(path) if route.is_api else session.get(path))

    # then the changed key works (it was stored) but is nowhere in any answer or log line
    assert bodies[0].status_code == 200, bodies[0].content
    assert bodies[1].status_code == 400
    text = "\n".join(b.content.decode(errors="replace") for b in bodies)
    assert ENDPOINT_SECRET not in text
    assert user_key not in text
    assert ENDPOINT_SECRET not in caplog.text
    assert user_key not in caplog.text
    assert len(bodies) > 100

"""Saved estimates are computed by a real Celery worker (Redis in CI), not inside the web request."""

from __future__ import annotations

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from deploy.celery import app as celery_app
from sizing.models import Estimate, Membership, Organisation
from sizing.services.estimates import catalog_load

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture(scope="module")  # one worker for the module's tests: stopping one takes a few seconds
def worker():
    with start_worker(celery_app, perform_ping_check=False, queues=["estimates"], pool="solo", shutdown_timeout=30):
        yield


def _client() -> APIClient:
    catalog_load()
    organisation = Organisation.objects.create(name="Worker Org")
    user = get_user_model().objects.create_user(username="w", password="correct horse battery")
    Membership.objects.create(user=user, organisation=organisation)
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _wait_done(client: APIClient, estimate_id: int, timeout_s: float = 30) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/estimates/{estimate_id}/").json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.2)
    raise AssertionError(f"estimate {estimate_id} not finished after {timeout_s} s: {body}")


def test_worker_computes_a_saved_estimate(worker):
    # given
    client = _client()
    # when
    response = client.post(
        "/api/v1/estimates/",
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l40s-48gb", "max_model_len": 8192},
        format="json",
    )
    # then: accepted at once, computed by the worker
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "pending"
    body = _wait_done(client, response.json()["id"])
    assert body["status"] == "done"
    assert body["result"]["kv_bytes_per_token"] == 131072
    assert body["result"]["weight_bytes_per_gpu"] == 16060522496


def test_worker_stores_a_sizing_error_instead_of_crashing(worker):
    # given a layout the model cannot take: TP 3 does not divide 32 heads
    client = _client()
    # when
    response = client.post(
        "/api/v1/estimates/", {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l40s-48gb", "tp": 3}, format="json"
    )
    # then
    body = _wait_done(client, response.json()["id"])
    assert body["status"] == "failed"
    assert body["error"]["code"] == "invalid_parallelism"
    assert Estimate.objects.get(pk=body["id"]).result is None

"""A real Celery worker (Redis in CI) on the `imports` queue stores an uploaded run's per-request records: the run
is answered at once as importing, then done with every record in PostgreSQL."""

from __future__ import annotations

import io
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from benchmarks_app.models import BenchmarkRequest
from deploy.celery import app as celery_app
from sizing.models import Membership, Organisation
from sizing.services.estimates import catalog_load
from tests.benchmarks_app.vllm_files import vllm_file

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture
def worker():
    with start_worker(celery_app, perform_ping_check=False, queues=["imports"], pool="solo", shutdown_timeout=30):
        yield


def test_worker_stores_the_per_request_records_of_an_upload(worker):
    catalog_load()
    user = get_user_model().objects.create_user(username="b", password="correct horse battery")
    Membership.objects.create(user=user, organisation=Organisation.objects.create(name="Bench Org"))
    client = APIClient()
    client.force_authenticate(user=user)
    handle = io.BytesIO(vllm_file(2000, failed_every=50))
    handle.name = "bench.json"

    response = client.post("/api/v1/benchmark-runs/", {"file": handle}, format="multipart")

    assert response.status_code == 201, response.content
    (run,) = response.json()
    assert run["status"] == "importing"
    deadline = time.monotonic() + 60
    body = run
    while time.monotonic() < deadline and body["status"] == "importing":
        time.sleep(0.2)
        body = client.get(run["url"]).json()
    assert body["status"] == "done", body
    assert body["progress"] == 1.0
    assert BenchmarkRequest.objects.filter(run_id=run["id"]).count() == 2000
    assert BenchmarkRequest.objects.filter(run_id=run["id"], status="error").count() == 40

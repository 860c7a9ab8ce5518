"""Latency and throughput jobs run by a real Celery worker (Redis in CI): simulation, sweep with progress, a
deployment search fanned out in parts and merged, and a job that fails cleanly."""

from __future__ import annotations

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from deploy.celery import app as celery_app
from sizing.models import Membership, Organisation, SimulationJob, SimulationJobPart
from sizing.services.estimates import catalog_load
from sizing.tasks import simulation_job_run_task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]
BASE = {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l40s-48gb", "max_model_len": 8192}
CONTRACT = {
    "ttft_ms",
    "itl_ms",
    "tpot_ms",
    "e2e_ms",
    "output_tokens_per_s",
    "requests_per_s",
    "completed",
    "rejected",
    "preempted",
    "kv_overflow_probability",
}


@pytest.fixture(scope="module")  # one worker for the module's tests: stopping one takes a few seconds
def worker():
    with start_worker(celery_app, perform_ping_check=False, queues=["simulations"], pool="solo", shutdown_timeout=30):
        yield


def _client() -> tuple[APIClient, Organisation]:
    catalog_load()
    organisation = Organisation.objects.create(name="Perf Org")
    user = get_user_model().objects.create_user(username="p", password="correct horse battery")
    Membership.objects.create(user=user, organisation=organisation)
    client = APIClient()
    client.force_authenticate(user=user)
    return client, organisation


def _wait(client: APIClient, url: str, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    body: dict = {}
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.2)
    raise AssertionError(f"{url} not finished after {timeout_s} s: {body}")


def test_worker_runs_a_simulation_and_returns_the_cli_contract(worker):
    client, _ = _client()
    response = client.post(
        "/api/v1/simulations/",
        {**BASE, "kind": "simulate", "input_tokens": 1000, "output_tokens": 200, "rate": 2.0, "requests": 300},
        format="json",
    )
    assert response.status_code == 202, response.content
    body = _wait(client, response.json()["url"])
    assert body["status"] == "done", body
    assert CONTRACT <= set(body["result"])
    assert body["result"]["completed"] == 300
    assert body["result"]["plan"]["kv_capacity_tokens_per_replica"] > 0
    assert body["progress"] == 1.0


def test_worker_sweeps_the_sample_profile_and_marks_the_knee(worker):
    client, _ = _client()
    profiles = client.get("/api/v1/workloads/").json()["results"]
    sample = next(p for p in profiles if p["source"] == "sample")
    response = client.post(
        "/api/v1/simulations/",
        {
            **BASE,
            "kind": "sweep",
            "profile": sample["id"],
            "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
            "sweep": {"points": 5},
            "requests": 300,
        },
        format="json",
    )
    body = _wait(client, response.json()["url"])
    assert body["status"] == "done", body
    result = body["result"]
    assert len(result["points"]) == 5
    assert result["knee"] is not None
    loads = [p["load"] for p in result["points"]]
    assert loads == sorted(loads)


def test_a_search_fans_out_in_parts_and_the_last_part_ranks_them_all(worker, settings):
    # given searches split into parts of 4 candidates, queued even with one worker
    settings.SIZING_SEARCH_FANOUT = "always"
    settings.SIZING_SEARCH_CHUNK = 4
    client, _ = _client()

    # when: 2 GPU types x counts 1, 2 x TP 1, 2 → 6 candidates → 2 parts
    response = client.post(
        "/api/v1/simulations/",
        {
            **BASE,
            "kind": "search",
            "input_tokens": 512,
            "output_tokens": 128,
            "rate": 1.0,
            "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
            "search": {
                "gpus": ["nvidia-l40s-48gb", "nvidia-h100-sxm-80gb"],
                "counts": [1, 2],
                "tps": [1, 2],
                "requests": 60,
            },
        },
        format="json",
    )
    assert response.status_code == 202, response.content
    body = _wait(client, response.json()["url"])

    # then
    assert body["status"] == "done", body
    assert SimulationJobPart.objects.filter(job_id=body["id"]).count() == 2
    result = body["result"]
    assert result["candidates"] == 6
    assert result["parts"] == 2
    costs = [o["cost_per_hour_usd"] for o in result["outcomes"] if o["meets_slo"]]
    assert costs == sorted(costs)
    assert result["outcomes"][0]["candidate"]["gpu"] == "nvidia-l40s-48gb"  # one L40S is the cheapest


def test_a_job_whose_inputs_no_longer_resolve_fails_with_a_clear_error(worker):
    _, organisation = _client()
    job = SimulationJob.objects.create(
        organisation=organisation,
        kind="simulate",
        inputs={**BASE, "kind": "simulate", "model": "gone/model", "rate": 1, "input_tokens": 10, "output_tokens": 10},
    )
    simulation_job_run_task.delay(job.pk)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in ("done", "failed"):
            break
        time.sleep(0.2)
    assert job.status == "failed"
    assert job.error["code"] == "invalid_argument"
    assert "gone/model" in job.error["message"]


def test_a_saved_calibration_changes_later_simulations_of_that_gpu_and_engine(worker):
    # given measured runs much slower than the defaults predict (a TPOT of 60 ms at 4 clients)
    client, _ = _client()
    measured = [
        {
            "input_tokens": 512,
            "output_tokens": 64,
            "load": "concurrency",
            "concurrency": 4,
            "requests": 40,
            "tpot_ms": 60.0,
            "ttft_ms": 400.0,
        },
        {
            "input_tokens": 512,
            "output_tokens": 64,
            "load": "concurrency",
            "concurrency": 1,
            "requests": 20,
            "tpot_ms": 50.0,
        },
    ]
    simulate = {
        **BASE,
        "kind": "simulate",
        "input_tokens": 512,
        "output_tokens": 64,
        "load": "concurrency",
        "concurrency": 4,
        "requests": 40,
    }
    before = _wait(client, client.post("/api/v1/simulations/", simulate, format="json").json()["url"])

    # when the calibration is saved
    job = client.post(
        "/api/v1/simulations/",
        {**BASE, "kind": "calibrate", "input_tokens": 512, "output_tokens": 64, "measurements": measured, "save": True},
        format="json",
    )
    assert job.status_code == 202, job.content
    calibration = _wait(client, job.json()["url"], timeout_s=180)
    assert calibration["status"] == "done", calibration
    assert calibration["result"]["saved"] is True
    assert calibration["result"]["calibrated_rms_log_error"] < calibration["result"]["default_rms_log_error"]

    # then the same simulation now uses the fitted efficiencies and comes out slower, closer to the measurement
    after = _wait(client, client.post("/api/v1/simulations/", simulate, format="json").json()["url"])
    assert after["result"]["plan"]["efficiencies_source"].startswith("calibrated from 2 measured run(s)")
    assert before["result"]["plan"]["efficiencies_source"] == "engine defaults"
    assert abs(after["result"]["tpot_ms"]["mean"] - 60.0) < abs(before["result"]["tpot_ms"]["mean"] - 60.0)
    # and use_calibration: false goes back to the defaults
    plain = _wait(
        client, client.post("/api/v1/simulations/", {**simulate, "use_calibration": False}, format="json").json()["url"]
    )
    assert plain["result"]["plan"]["efficiencies_source"] == "engine defaults"

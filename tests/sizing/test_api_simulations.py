"""REST API of latency and throughput jobs: validation before queueing, 202 with a job URL, organisation scope.
The worker itself is exercised in tests/integration/test_simulation_worker.py."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.models import Membership, Organisation, SimulationJob, WorkloadProfile

URL = "/api/v1/simulations/"
BASE = {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l40s-48gb", "max_model_len": 8192}


@pytest.mark.parametrize(
    ("method", "url"), [("get", URL), ("post", URL), ("get", f"{URL}1/")], ids=["list", "create", "detail"]
)
def test_simulation_endpoints_require_authentication(db, method, url):
    assert getattr(APIClient(), method)(url, {}, format="json").status_code in (401, 403)


def test_a_simulation_is_accepted_with_202_and_a_job_url(catalog, api_client, django_capture_on_commit_callbacks):
    # when
    with django_capture_on_commit_callbacks() as callbacks:
        response = api_client.post(
            URL,
            {**BASE, "kind": "simulate", "input_tokens": 1000, "output_tokens": 200, "rate": 2.0, "requests": 200},
            format="json",
        )

    # then: stored as queued, handed to the worker only after the commit
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"] == f"/api/v1/simulations/{body['id']}/"
    assert body["inputs"]["gpu"] == "nvidia-l40s-48gb"
    assert len(callbacks) == 1
    assert api_client.get(body["url"]).json()["status"] == "queued"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"kind": "simulate", "rate": 1.0}, "profile"),  # no traffic given
        ({"kind": "simulate", "input_tokens": 100}, "output_tokens"),
        ({"kind": "simulate", "input_tokens": 100, "output_tokens": 10}, "rate"),
        ({"kind": "simulate", "input_tokens": 100, "output_tokens": 10, "load": "concurrency"}, "concurrency"),
        ({"kind": "slo_search", "input_tokens": 100, "output_tokens": 10}, "slo"),
        ({"kind": "search", "input_tokens": 100, "output_tokens": 10, "slo": {"ttft_s": 2}}, "rate"),
        (
            {
                "kind": "search",
                "input_tokens": 100,
                "output_tokens": 10,
                "rate": 1,
                "slo": {"ttft_s": 2},
                "search": {"gpus": ["no-such-gpu"]},
            },
            "search",
        ),
        ({"kind": "calibrate", "input_tokens": 100, "output_tokens": 10}, "measurements"),
        ({"kind": "teleport", "input_tokens": 100, "output_tokens": 10}, "kind"),
        ({"kind": "simulate", "profile": 999999, "rate": 1}, "profile"),
        ({"kind": "simulate", "profile_json": {"classes": []}, "rate": 1}, "classes"),
        ({"kind": "simulate", "input_tokens": 100, "output_tokens": 10, "rate": 1, "requests": 10**9}, "requests"),
    ],
    ids=[
        "no-traffic",
        "no-output",
        "no-rate",
        "no-clients",
        "no-slo",
        "search-no-rate",
        "search-bad-gpu",
        "no-measurements",
        "bad-kind",
        "unknown-profile",
        "empty-profile",
        "too-many-requests",
    ],
)
def test_bad_jobs_are_refused_with_the_field_and_nothing_is_stored(catalog, api_client, payload, field):
    # when
    response = api_client.post(URL, {**BASE, **payload}, format="json")

    # then
    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["extra"]["fields"], body
    assert SimulationJob.objects.count() == 0


def test_a_model_that_cannot_fit_is_refused_before_queueing(catalog, api_client):
    # given Llama-3-70B in BF16 on one L40S: the weights alone exceed the card
    response = api_client.post(
        URL,
        {
            **BASE,
            "model": "meta-llama/Meta-Llama-3-70B",
            "kind": "simulate",
            "input_tokens": 100,
            "output_tokens": 10,
            "rate": 1,
        },
        format="json",
    )
    assert response.status_code == 400
    assert "KV cache" in response.json()["message"]
    assert SimulationJob.objects.count() == 0


def test_jobs_of_another_organisation_are_not_visible(catalog, api_client):
    # given a job of another organisation
    other = Organisation.objects.create(name="Other")
    stranger = get_user_model().objects.create_user(username="stranger", password="x" * 12)
    Membership.objects.create(user=stranger, organisation=other)
    job = SimulationJob.objects.create(organisation=other, kind="simulate", inputs={})

    # then
    assert api_client.get(f"{URL}{job.pk}/").status_code == 404
    assert api_client.get(URL).json()["results"] == []


def test_a_job_can_use_a_sample_workload_profile(catalog, api_client, django_capture_on_commit_callbacks):
    sample = WorkloadProfile.objects.get(organisation__isnull=True)
    with django_capture_on_commit_callbacks():
        response = api_client.post(
            URL,
            {
                **BASE,
                "kind": "sweep",
                "profile": sample.pk,
                "slo": {"ttft_s": 2, "tpot_s": 0.1},
                "sweep": {"points": 4},
            },
            format="json",
        )
    assert response.status_code == 202, response.content
    assert response.json()["inputs"]["profile"] == sample.pk


def test_the_openapi_schema_generates_without_warnings(db, tmp_path):
    from django.core.management import call_command

    # drf-spectacular exits non-zero on any warning (e.g. two names for one choice set)
    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    schema = (tmp_path / "schema.yml").read_text()
    assert "/api/v1/simulations/{job_id}/" in schema
    assert "/api/v1/workloads/" in schema
    assert "/api/v1/fingerprints/parse" in schema


def test_saved_perf_calibrations_are_listed_for_the_organisation_only(catalog, api_client, organisation):
    from sizing.models import Gpu, PerfCalibration

    gpu = Gpu.objects.get(slug="nvidia-l40s-48gb")
    mine = PerfCalibration.objects.create(
        organisation=organisation,
        gpu=gpu,
        engine="vllm",
        efficiencies={"mfu": 0.4, "bandwidth": 0.6},
        default_rms_log_error=0.5,
        calibrated_rms_log_error=0.05,
        measurements=3,
    )
    PerfCalibration.objects.create(
        organisation=Organisation.objects.create(name="Else"),
        gpu=gpu,
        engine="vllm",
        efficiencies={},
        default_rms_log_error=0.1,
        calibrated_rms_log_error=0.1,
        measurements=1,
    )
    rows = api_client.get("/api/v1/perf-calibrations/").json()["results"]
    assert [row["id"] for row in rows] == [mine.pk]
    assert rows[0]["gpu"] == "nvidia-l40s-48gb"


def test_a_calibration_needs_no_traffic_beside_its_measured_runs(
    catalog, api_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        response = api_client.post(
            URL,
            {
                **BASE,
                "kind": "calibrate",
                "measurements": [
                    {"input_tokens": 512, "output_tokens": 64, "load": "concurrency", "concurrency": 4, "tpot_ms": 40.0}
                ],
            },
            format="json",
        )
    assert response.status_code == 202, response.content

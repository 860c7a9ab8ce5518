"""Issue 19, finding 2: with the broker unreachable, each of the six job-creating POSTs (estimates, simulations,
quotes, load tests, benchmark upload, report signing) answers 503 `job_queue_unavailable` with Retry-After, and
once the broker is back no job row is left waiting for a message that was never sent (target: 0 stuck rows).

The broker is taken away for real: the Celery app is pointed at Redis on a closed port (kombu's OperationalError,
as when Redis is down) or at a filesystem-transport folder that does not exist (an OSError). Transactional tests,
so the request's transaction commits and its on-commit publishing runs as in production (ATOMIC_REQUESTS)."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from benchmarks_app.models import BenchmarkRun, Endpoint, LoadTest, LoadTestShard
from deploy.celery import app as celery_app
from reports.models import Report, ReportVersion
from sizing.models import Deployment, Estimate, Gpu, LlmModel, Membership, Organisation, SimulationJob
from sizing.services.estimates import catalog_load
from tests.benchmarks_app.vllm_files import vllm_file

pytestmark = [pytest.mark.django_db(transaction=True)]

MODEL, GPU = "meta-llama/Meta-Llama-3-8B", "nvidia-l40s-48gb"
UNREACHABLE = {
    "redis closed port": ("redis://127.0.0.1:1/0", {}),
    "filesystem folder gone": (
        "filesystem://",
        {
            "data_folder_in": "/nonexistent/sizing-broker/out",
            "data_folder_out": "/nonexistent/sizing-broker/out",
            "control_folder": "/nonexistent/sizing-broker/control",
        },
    ),
}


def _point_broker(url: str, options: dict, environment: str | None) -> None:
    # Celery's broker_url reads the CELERY_BROKER_URL environment variable before its configuration (CI sets it to
    # the real Redis): point both at the broker
    if environment is None:
        os.environ.pop("CELERY_BROKER_URL", None)
    else:
        os.environ["CELERY_BROKER_URL"] = environment
    celery_app.conf.update(CELERY_BROKER_URL=url, CELERY_BROKER_TRANSPORT_OPTIONS=options)
    celery_app._pool = None  # the connections and producers made for the previous broker
    celery_app.amqp._producer_pool = None


@pytest.fixture(params=list(UNREACHABLE), ids=list(UNREACHABLE))
def broker(request) -> Iterator[dict]:
    """Take the broker away; `state["back"]()` brings it back (also at the end)."""
    environment = os.environ.get("CELERY_BROKER_URL")
    before = (celery_app.conf.broker_url, dict(celery_app.conf.broker_transport_options or {}), environment)
    url, options = UNREACHABLE[request.param]
    _point_broker(url, options, url if environment is not None else None)
    state = {"back": lambda: _point_broker(*before)}
    yield state
    _point_broker(*before)


def _user(organisation: Organisation, name: str, role: str) -> APIClient:
    user = get_user_model().objects.create_user(username=name, password="correct horse battery")
    Membership.objects.create(user=user, organisation=organisation, role=role)
    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def team() -> dict:
    catalog_load()
    organisation = Organisation.objects.create(name="Broker Org")
    deployment = Deployment.objects.create(
        organisation=organisation,
        name="chat",
        customer="Acme",
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug="nvidia-l4-24gb"),
        slo={"ttft_ms": 2000.0, "tpot_ms": 150.0},
    )
    endpoint = Endpoint.objects.create(
        organisation=organisation,
        name="sim",
        base_url="http://127.0.0.1:9",
        kind=Endpoint.Kind.SIMULATOR,
        model_name=MODEL,
    )
    return {
        "admin": _user(organisation, "admin", "admin"),
        "reviewer": _user(organisation, "rev", "reviewer"),
        "signer": _user(organisation, "sig", "signer"),
        "deployment": deployment,
        "endpoint": endpoint,
    }


def _approved_version_url(team: dict) -> str:
    """A report version drafted and approved (as the workers and the reviewer left it: approving queues nothing)."""
    deployment = team["deployment"]
    report = Report.objects.create(organisation=deployment.organisation, deployment=deployment, title="t")
    ReportVersion.objects.create(
        report=report,
        number=1,
        status=ReportVersion.Status.APPROVED,
        drafted_at=timezone.now(),
        content={"checklist": []},
    )
    return f"/api/v1/reports/{report.pk}/versions/1/sign"


def _posts(team: dict, sign_url: str) -> dict:
    upload = io.BytesIO(vllm_file(50))
    upload.name = "bench.json"
    admin = team["admin"]
    return {
        "estimate": lambda: admin.post(
            "/api/v1/estimates/", {"model": MODEL, "gpu": GPU, "max_model_len": 8192}, format="json"
        ),
        "simulation": lambda: admin.post(
            "/api/v1/simulations/",
            {
                "model": MODEL,
                "gpu": GPU,
                "max_model_len": 8192,
                "kind": "simulate",
                "input_tokens": 1000,
                "output_tokens": 200,
                "rate": 2.0,
                "requests": 100,
            },
            format="json",
        ),
        "quote": lambda: admin.post(
            "/api/v1/quotes/",
            {
                "model": MODEL,
                "input_tokens": 1000,
                "output_tokens": 200,
                "rate": 2.0,
                "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
                "gpus": [GPU],
                "max_gpus": 1,
                "requests": 60,
                "max_model_len": 8192,
            },
            format="json",
        ),
        "load test": lambda: admin.post(
            "/api/v1/load-tests/",
            {"endpoint": team["endpoint"].pk, "scenario": "pulse", "peak_concurrency": 4},
            format="json",
        ),
        "benchmark upload": lambda: admin.post("/api/v1/benchmark-runs/", {"file": upload}, format="multipart"),
        "report sign": lambda: team["signer"].post(sign_url),
        "report draft": lambda: admin.post("/api/v1/reports/", {"deployment": team["deployment"].pk}, format="json"),
    }


def _stuck() -> dict[str, int]:
    """Job rows waiting for a worker or a message: what would stay so forever if nothing was sent."""
    return {
        "estimates": Estimate.objects.filter(status__in=(Estimate.Status.PENDING, Estimate.Status.RUNNING)).count(),
        "simulation jobs": SimulationJob.objects.filter(
            status__in=(SimulationJob.Status.QUEUED, SimulationJob.Status.RUNNING)
        ).count(),
        "load tests": LoadTest.objects.filter(status__in=(LoadTest.Status.QUEUED, LoadTest.Status.RUNNING)).count(),
        "load-test shards": LoadTestShard.objects.filter(
            status__in=(LoadTestShard.Status.QUEUED, LoadTestShard.Status.RUNNING)
        ).count(),
        "benchmark runs": BenchmarkRun.objects.filter(
            status__in=(BenchmarkRun.Status.IMPORTING, BenchmarkRun.Status.RUNNING)
        ).count(),
        "report versions": ReportVersion.objects.filter(status=ReportVersion.Status.APPROVED)
        .exclude(progress_message="")
        .count(),
        "report drafts": ReportVersion.objects.filter(
            status=ReportVersion.Status.DRAFT, drafted_at__isnull=True, error__isnull=True
        ).count(),
    }


def test_every_job_post_answers_503_and_leaves_no_row_waiting_once_the_broker_is_back(team, broker) -> None:
    # given: the broker taken away (the version approved before: approving queues nothing)
    sign_url = _approved_version_url(team)

    # when: each job-creating POST
    answers = {name: post() for name, post in _posts(team, sign_url).items()}
    broker["back"]()

    # then: 503 with the job queue's message, seven of seven
    for name, response in answers.items():
        assert response.status_code == 503, (name, response.status_code, response.content[:300])
        body = response.json()
        assert body["code"] == "job_queue_unavailable", (name, body)
        assert "the job queue is unavailable" in body["message"]
        assert body["extra"]["retry_after_s"] == 30
        assert response["Retry-After"] == "30"
    # and no row waits: each is failed (the version approved) with that reason
    assert _stuck() == dict.fromkeys(_stuck(), 0)
    for model in (Estimate, SimulationJob, LoadTest):
        codes = [row.error["code"] for row in model.objects.all()]
        assert codes, model
        assert set(codes) == {"job_queue_unavailable"}, model
    # the upload's run and the load test's run
    assert sorted(BenchmarkRun.objects.values_list("status", flat=True)) == ["failed", "failed"]
    version = ReportVersion.objects.get(status=ReportVersion.Status.APPROVED)
    assert (version.status, version.error["code"]) == ("approved", "job_queue_unavailable")
    draft = ReportVersion.objects.get(status=ReportVersion.Status.DRAFT)
    assert (draft.drafted_at, draft.error["code"]) == (None, "job_queue_unavailable")

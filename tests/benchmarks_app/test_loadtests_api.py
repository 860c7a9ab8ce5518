"""Load tests through the API, with the shards run in this process (eager tasks) against a simulator served in a
thread: validation (nothing saved on a refusal), a whole run into a benchmark run with its verdict, cancel, the
reaper for lost workers, isolation between organisations, the plan export (no key) and the deployment defaults.
A test run through the service runs on the real clock, so whether its client kept up (its client fidelity, hence
an "invalid" verdict) is the machine's load's to decide: the verdict is checked against its criteria. The agent's
run outside the service is on the virtual clock with the simulator in-process, so its verdict is exact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from benchmarks_app.kernel.endpoint_secrets import secret_encrypt
from benchmarks_app.models import BenchmarkRequest, BenchmarkRun, Endpoint, LoadTest, LoadTestShard
from benchmarks_app.services.loadtests import loadtest_reap
from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan
from benchmarks_app.simserver.engine import SimEngine
from sizing.models import Deployment, Gpu, LlmModel, Organisation
from tests.simserver.helpers import ThreadedServer

MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-l4-24gb"
URL = "/api/v1/load-tests/"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    # requests of ~0.1 s (whether a closed loop of them keeps its clients busy is the machine's load's to decide)
    engine = SimEngine.from_plan(catalog_plan(model=MODEL, gpu=GPU), speedup=10.0)
    server = ThreadedServer(create_app(engine, model_name=MODEL, max_model_len=8192))
    server.start()
    yield server.url
    server.stop()


@pytest.fixture
def fast_start(settings) -> None:
    settings.LOADTEST_START_LEAD_S = 0.0


@pytest.fixture
def endpoint(organisation: Organisation, simulator: str) -> Endpoint:
    return Endpoint.objects.create(
        organisation=organisation,
        name="sim",
        base_url=simulator,
        kind=Endpoint.Kind.SIMULATOR,
        model_name=MODEL,
        metrics_url=simulator + "/metrics",
    )


@pytest.fixture
def vllm_endpoint(organisation: Organisation) -> Endpoint:
    return Endpoint.objects.create(
        organisation=organisation,
        name="customer",
        base_url="http://10.0.0.5:8000",
        kind=Endpoint.Kind.VLLM,
        model_name=MODEL,
        api_key_encrypted=secret_encrypt("sk-very-secret"),
    )


def _nothing_saved() -> None:
    assert LoadTest.objects.count() == 0
    assert BenchmarkRun.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"endpoint": 9999}, "endpoint", "registered endpoints only"),
        ({"scenario": "pulse"}, "peak_concurrency", "peak concurrency"),
        ({"scenario": "custom"}, "concurrency", "concurrency (closed loop) or a rate"),
        ({"scenario": "custom", "concurrency": 2}, "duration_s", "duration or a number of requests"),
        ({"peak_concurrency": 4, "workers": 3}, "workers", "at most 2 worker"),
        ({"peak_concurrency": 4, "duration_s": 10**6}, "duration_s", "at most"),
    ],
)
def test_a_bad_request_is_a_400_naming_the_field_and_nothing_is_saved(
    api_client, endpoint, change, field, words
) -> None:
    body = {"endpoint": endpoint.pk, "scenario": "pulse", **change}
    response = api_client.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["extra"]["fields"], response.json()
    assert words in response.json()["message"]
    _nothing_saved()


def test_a_failure_test_on_a_real_endpoint_needs_its_failure_command(api_client, vllm_endpoint) -> None:
    response = api_client.post(
        URL, {"endpoint": vllm_endpoint.pk, "scenario": "failure", "peak_concurrency": 8}, format="json"
    )
    assert response.status_code == 400
    assert "failure command" in response.json()["message"]
    _nothing_saved()
    vllm_endpoint.failure_command = ["kubectl", "delete", "pod", "vllm-0"]
    vllm_endpoint.save()
    from benchmarks_app.services.loadtests import loadtest_plan

    plan = loadtest_plan(
        organisation=vllm_endpoint.organisation,
        endpoint=vllm_endpoint,
        scenario="failure",
        data={},
        peak_concurrency=8,
        slo={},
    )
    (fault,) = plan.faults
    assert fault.argv == ("kubectl", "delete", "pod", "vllm-0")


def test_an_endpoint_of_another_organisation_cannot_be_targeted(api_client, db) -> None:
    other = Organisation.objects.create(name="Other")
    foreign = Endpoint.objects.create(
        organisation=other, name="x", base_url="http://10.1.1.1:8000", kind=Endpoint.Kind.VLLM, model_name=MODEL
    )
    response = api_client.post(
        URL, {"endpoint": foreign.pk, "scenario": "custom", "concurrency": 1, "max_requests": 1}, format="json"
    )
    assert response.status_code == 400
    assert "registered endpoints only" in response.json()["message"]
    _nothing_saved()


@pytest.mark.django_db(transaction=True)  # the shard's writer thread stores requests on its own connection
def test_a_custom_test_runs_into_a_benchmark_run_with_a_verdict(api_client, endpoint, fast_start) -> None:
    budget = catalog_plan(model=MODEL, gpu=GPU).memory.required_bytes_per_gpu  # what the simulated vLLM holds
    response = api_client.post(
        URL,
        {
            "endpoint": endpoint.pk,
            "scenario": "custom",
            "concurrency": 2,
            "max_requests": 24,
            "input_tokens": 64,
            "output_tokens": 16,
            "slo": {"ttft_ms": 60000},
            "committed_bytes_per_gpu": budget,
        },
        format="json",
    )
    assert response.status_code == 202, response.content
    assert response["Location"] == response.json()["url"]
    body = api_client.get(response.json()["url"]).json()
    assert body["status"] == "done", body
    assert body["shards"][0]["status"] == "done"
    assert body["progress"]["fraction"] == 1.0
    run = api_client.get(body["run_url"]).json()
    assert run["status"] == "done"
    assert run["tool"] == "llm_sizing"
    assert run["completed"] == 24
    assert run["failed"] == 0
    assert BenchmarkRequest.objects.filter(run_id=body["run"]).count() == 24
    assert run["load"] == {"kind": "concurrency", "rate": None, "concurrency": 2}
    verdict = body["verdict"]
    criteria = {criterion["code"]: criterion["verdict"] for criterion in verdict["criteria"]}
    assert verdict["scenario"] == "custom"
    assert list(criteria) == ["client_fidelity", "slo_attainment", "memory"]
    assert (criteria["slo_attainment"], criteria["memory"]) == ("pass", "pass")  # TTFT far under 60 s; at budget
    assert criteria["client_fidelity"] in ("pass", "fail")  # the load on this machine decides
    assert verdict["verdict"] == ("pass" if criteria["client_fidelity"] == "pass" else "invalid")
    assert run["verdict"] == verdict
    checks = {check["code"]: check["verdict"] for check in body["verdict"]["memory"]["checks"]}
    assert checks["peak_within_commitment"] == "pass"  # the simulator's GPU at its budget, scraped as DCGM's
    assert checks["no_restart"] == "pass"
    samples = run["server_series"]["servers"][0]["samples"]
    assert samples
    assert all(0.0 <= (s["kv_cache_usage"] or 0.0) <= 1.0 for s in samples)
    # the run's file is the merged result in our format: it re-imports to the same figures
    assert run["file_name"] == f"load-test-{body['id']}.json"


def test_cancelling_a_queued_test_ends_it_at_once(api_client, endpoint) -> None:
    response = api_client.post(
        URL, {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    )  # on_commit never runs here: it stays queued
    job_url = response.json()["url"]
    cancelled = api_client.post(job_url + "cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["shards"][0]["status"] == "cancelled"
    assert api_client.delete(job_url).status_code == 204
    _nothing_saved()


def test_a_running_test_cannot_be_deleted(api_client, endpoint) -> None:
    job_url = api_client.post(
        URL, {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    ).json()["url"]
    response = api_client.delete(job_url)
    assert response.status_code == 400
    assert "cancel the test before deleting it" in response.json()["message"]


def test_a_lost_worker_fails_the_job_with_what_was_measured(api_client, endpoint, settings) -> None:
    job_url = api_client.post(
        URL, {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    ).json()["url"]
    job = LoadTest.objects.get()
    long_ago = timezone.now() - timedelta(seconds=settings.LOADTEST_HEARTBEAT_TIMEOUT_S + 5)
    LoadTest.objects.filter(pk=job.pk).update(status=LoadTest.Status.RUNNING, started_at=long_ago)
    LoadTestShard.objects.filter(job=job).update(
        status=LoadTestShard.Status.RUNNING, heartbeat_at=long_ago, worker="celery@box-7"
    )
    BenchmarkRequest.objects.bulk_create(
        [
            BenchmarkRequest(
                run_id=job.run_id,
                index=i,
                status="ok",
                start_s=i * 0.1,
                ttft_ms=100.0 + i,
                e2e_ms=500.0,
                tpot_ms=10.0,
                input_tokens=512,
                output_tokens=40,
            )
            for i in range(30)
        ]
    )
    fresh = timezone.now() - timedelta(seconds=1)
    assert loadtest_reap(now=fresh - timedelta(seconds=settings.LOADTEST_HEARTBEAT_TIMEOUT_S)) == 0  # not yet
    body = api_client.get(job_url).json()  # a read reaps
    assert body["status"] == "failed"
    assert "celery@box-7" in body["error"]["message"]
    assert "no heartbeat" in body["error"]["message"]
    run = api_client.get(body["run_url"]).json()
    assert run["status"] == "failed"
    assert run["completed"] == 30
    assert run["request_count"] == 30
    assert run["metrics"]["ttft_ms"]["n"] == 30
    assert run["metrics"]["ttft_ms"]["p50"] == pytest.approx(114.5)


def test_a_shard_no_worker_takes_fails_the_job_naming_the_queue(api_client, endpoint, settings) -> None:
    job_url = api_client.post(
        URL, {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    ).json()["url"]
    LoadTest.objects.update(created_at=timezone.now() - timedelta(seconds=settings.LOADTEST_QUEUE_TIMEOUT_S + 1))
    body = api_client.get(job_url).json()
    assert body["status"] == "failed"
    assert "-Q loadtests" in body["error"]["message"]


def test_organisations_see_only_their_own_tests(api_client, endpoint, db) -> None:
    job_url = api_client.post(
        URL, {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    ).json()["url"]
    from django.contrib.auth import get_user_model

    from sizing.models import Membership

    stranger = get_user_model().objects.create_user(username="s", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=Organisation.objects.create(name="Other"))
    client = APIClient()
    client.force_authenticate(user=stranger)
    assert client.get(URL).json()["results"] == []
    assert client.get(job_url).status_code == 404
    assert client.post(job_url + "cancel").status_code == 404
    assert client.get(job_url + "plan").status_code == 404
    assert client.delete(job_url).status_code == 404
    assert LoadTest.objects.get().status == LoadTest.Status.QUEUED


def test_every_load_test_api_needs_a_sign_in(db) -> None:
    client = APIClient()
    for method, path in (
        ("get", URL),
        ("post", URL),
        ("get", URL + "1/"),
        ("post", URL + "1/cancel"),
        ("get", URL + "1/plan"),
        ("get", URL + "defaults"),
    ):
        assert getattr(client, method)(path).status_code in (401, 403), path


def test_the_exported_plan_names_the_keys_variable_never_the_key(api_client, vllm_endpoint) -> None:
    response = api_client.post(
        URL, {"endpoint": vllm_endpoint.pk, "scenario": "long_tail", "peak_concurrency": 40}, format="json"
    )
    assert response.status_code == 202, response.content
    exported = api_client.get(response.json()["url"] + "plan")
    assert exported.status_code == 200
    assert "attachment" in exported["Content-Disposition"]
    text = exported.content.decode()
    assert "sk-very-secret" not in text
    plan = json.loads(text)
    assert plan["endpoint"]["api_key_env"] == "LLM_API_KEY"
    assert plan["load"]["concurrency"] == 4  # 10% of 40
    from llm_sizing_loadgen.plan import plan_from_dict

    assert plan_from_dict(plan).scenario.kind == "long_tail"  # the agent reads it back


def test_the_deployment_gives_the_defaults(api_client, organisation, catalog) -> None:
    deployment = Deployment.objects.create(
        organisation=organisation,
        name="d",
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug=GPU),
        gpu_count=1,
        tp=1,
        engine="vllm",
        slo={"ttft_ms": 2000.0},
    )
    body = api_client.get(URL + f"defaults?deployment={deployment.pk}").json()
    assert set(body["scenarios"]) >= {"pulse", "long_tail", "failure"}
    defaults = body["defaults"]
    assert defaults["slo"] == {"ttft_ms": 2000.0}
    # the peak its KV cache holds at the test's 512 + 128 tokens per request (31,744 tokens on an L4: 49)
    assert defaults["peak_concurrency"] == defaults["kv_capacity_tokens"] // 640 > 1
    shorter = api_client.get(URL + f"defaults?deployment={deployment.pk}&input_tokens=256&output_tokens=64").json()
    assert shorter["defaults"]["peak_concurrency"] == defaults["kv_capacity_tokens"] // 320
    # vLLM (latest: 0.33) reserves its budget at start, 0.92 × what CUDA sees on the L4 (the catalog's cuda_total),
    # with its CUDA graphs inside it (from 0.20): the peak per card is the budget
    gpu = Gpu.objects.get(slug=GPU)
    plan = catalog_plan(model=MODEL, gpu=GPU).memory
    assert defaults["committed_bytes_per_gpu"] == plan.required_bytes_per_gpu
    assert plan.budget_bytes_per_gpu == int(0.92 * gpu.cuda_total_bytes)
    assert plan.required_bytes_per_gpu == plan.budget_bytes_per_gpu
    assert api_client.get(URL + "defaults?deployment=999999").status_code == 404


def test_an_air_gapped_agents_result_uploads_with_its_verdict(api_client, organisation, simulator) -> None:
    """The same plan run by the agent outside the service: its result, uploaded as a benchmark run, is judged like
    a test run from the service (the scenario and the scrapes travel in the file)."""
    import io

    from benchmarks_app.loadtests.scenarios import scenario_plan
    from llm_sizing_loadgen.plan import EndpointSpec, MetricsSpec
    from llm_sizing_loadgen.result import result_document, result_json
    from llm_sizing_loadgen.runner import run_points
    from tests.loadgen.virtual_time import run_virtual
    from tests.simserver.inprocess import catalog_engine, inprocess_simulator

    url = "http://simulator.test"
    plan = scenario_plan(
        "pulse",
        endpoint=EndpointSpec(base_url=url, model=MODEL),
        peak_concurrency=4,
        scale=0.03,
        metrics=MetricsSpec(url=url + "/metrics", interval_s=0.2),
        criteria={"ttft_ms": 60000.0},
    )
    engine, _ = catalog_engine(model=MODEL, gpu=GPU, speedup=10.0)

    async def agent(clock):
        async with inprocess_simulator(engine, model_name=MODEL, max_model_len=8192) as transport:
            return await run_points(plan, transport=transport, clock=clock)

    (outcome,) = run_virtual(agent)
    handle = io.BytesIO(result_json(result_document(outcome)).encode())
    handle.name = "agent-result.json"
    deployment = Deployment.objects.create(organisation=organisation, name="air-gapped", slo={"ttft_ms": 60000.0})

    response = api_client.post(
        "/api/v1/benchmark-runs/", {"file": handle, "deployment": deployment.pk}, format="multipart"
    )

    assert response.status_code == 201, response.content
    (run,) = response.json()
    verdict = run["verdict"]
    assert verdict["scenario"] == "pulse"
    assert [(criterion["code"], criterion["verdict"]) for criterion in verdict["criteria"]] == [
        ("client_fidelity", "pass"),
        ("slo_attainment", "pass"),
        ("error_rate", "pass"),
        ("memory", "pass"),
    ]
    assert verdict["verdict"] == "pass"
    assert verdict["memory"]["verdict"] == "pass"
    assert verdict["memory"]["unverified"] == ["peak_within_commitment"]  # no budget given with the upload
    assert run["server_series"]["servers"]

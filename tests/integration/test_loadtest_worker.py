"""Load tests through real processes: a Celery worker on the `loadtests` queue (Redis in CI) drives the bundled
simulator (its own process, `python -m benchmarks_app.simserver`), and the job is followed through the API.

- A short pulse suite ends done, its requests in a benchmark run, the simulator's KV-cache usage scraped into the
  run, and a pass/fail verdict with its criteria.
- A worker killed (SIGKILL) mid-run leaves a failed job naming the lost worker, with the requests it had measured
  kept in the run; the job is never left running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from benchmarks_app.models import BenchmarkRequest, Endpoint
from benchmarks_app.simserver.truth import free_port
from sizing.models import Membership, Organisation
from sizing.services.estimates import catalog_load

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

ROOT = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-l4-24gb"


def _wait(predicate, *, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


@pytest.fixture
def simulator() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            GPU,
            "--port",
            str(port),
            "--speedup",
            "10",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the simulator exited: {process.stderr.read().decode()[-2000:]}")
        try:
            return httpx.get(url + "/health", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    _wait(ready, timeout=60, what="the simulator")
    yield url
    process.terminate()
    process.wait(timeout=10)


def _start_worker(log: Path, *, concurrency: int = 2, name: str = "lt") -> subprocess.Popen[bytes]:
    environment = dict(os.environ)
    environment["DATABASE_URL"] = _database_url()
    handle = log.open("wb")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "deploy",
            "worker",
            "-Q",
            "loadtests",
            "--pool=threads",
            f"--concurrency={concurrency}",
            "--loglevel=INFO",
            "-n",
            f"{name}-{os.getpid()}@%h",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=ROOT,
        env=environment,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )


def _database_url() -> str:
    """The test database as the worker process must reach it (pytest-django's `test_` database)."""
    config = connection.settings_dict
    if connection.vendor == "postgresql":
        user = config.get("USER") or "postgres"
        host = config.get("HOST") or "127.0.0.1"
        port = config.get("PORT") or 5432
        return f"postgres://{user}@{host}:{port}/{config['NAME']}"
    return f"sqlite:///{config['NAME']}"


@pytest.fixture
def client_and_endpoint(simulator: str) -> tuple[APIClient, int]:
    catalog_load()
    user = get_user_model().objects.create_user(username="lt", password="correct horse battery")
    organisation = Organisation.objects.create(name="Load Org")
    Membership.objects.create(user=user, organisation=organisation, role=Membership.Role.ADMIN)
    endpoint = Endpoint.objects.create(
        organisation=organisation,
        name="sim",
        base_url=simulator,
        kind=Endpoint.Kind.SIMULATOR,
        model_name=MODEL,
        metrics_url=simulator + "/metrics",
    )
    client = APIClient()
    client.force_authenticate(user=user)
    return client, endpoint.pk


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith("file:"):
        pytest.fail("the worker process needs a database it can open: run the suite on PostgreSQL (DATABASE_URL)")
    process = _start_worker(tmp_path / "worker.log")
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def test_a_pulse_suite_runs_on_a_worker_and_ends_with_a_verdict(client_and_endpoint, worker) -> None:
    client, endpoint = client_and_endpoint
    response = client.post(
        "/api/v1/load-tests/",
        {
            "endpoint": endpoint,
            "scenario": "pulse",
            "peak_concurrency": 8,
            "scale": 0.04,
            "input_tokens": 128,
            "output_tokens": 32,
            "slo": {"ttft_ms": 5000, "tpot_ms": 500},
        },
        format="json",
    )
    assert response.status_code == 202, response.content
    url = response.json()["url"]
    seen_running = []

    def ended() -> dict | None:
        body = client.get(url).json()
        if body["status"] == "running":
            seen_running.append(body["progress"])
        return body if body["status"] in ("done", "failed", "cancelled") else None

    body = _wait(ended, timeout=120, what="the pulse test to end")
    assert body["status"] == "done", body
    assert seen_running, "the job was never seen running"
    run = client.get(body["run_url"]).json()
    assert run["status"] == "done"
    assert run["completed"] > 0
    assert run["failed"] == 0
    assert run["load"]["concurrency"] == 4  # 50% of a peak of 8
    servers = run["server_series"]["servers"]
    assert servers
    assert any((sample["kv_cache_usage"] or 0) > 0 for sample in servers[0]["samples"])
    verdict = body["verdict"]
    assert verdict["scenario"] == "pulse"
    assert verdict["verdict"] in ("pass", "fail")
    assert {criterion["code"] for criterion in verdict["criteria"]}
    assert BenchmarkRequest.objects.filter(run_id=body["run"]).count() == run["request_count"]


def test_a_killed_worker_leaves_a_failed_job_with_partial_results(client_and_endpoint, worker, settings) -> None:
    settings.LOADTEST_HEARTBEAT_TIMEOUT_S = 3.0
    client, endpoint = client_and_endpoint
    response = client.post(
        "/api/v1/load-tests/",
        {
            "endpoint": endpoint,
            "scenario": "custom",
            "concurrency": 4,
            "duration_s": 120,
            "input_tokens": 128,
            "output_tokens": 32,
        },
        format="json",
    )
    assert response.status_code == 202, response.content
    url = response.json()["url"]
    run_id = response.json()["run"]

    _wait(
        lambda: BenchmarkRequest.objects.filter(run_id=run_id).count() >= 5,
        timeout=90,
        what="the first requests to be stored",
    )
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    stored = BenchmarkRequest.objects.filter(run_id=run_id).count()

    body = _wait(
        lambda: (b := client.get(url).json())["status"] != "running" and b,
        timeout=30,
        what="the job to end after its worker died",
    )
    assert body["status"] == "failed"
    assert "was lost" in body["error"]["message"]
    assert "no heartbeat" in body["error"]["message"]
    assert body["shards"][0]["status"] == "failed"
    run = client.get(body["run_url"]).json()
    assert run["status"] == "failed"
    assert run["request_count"] >= stored > 0
    assert BenchmarkRequest.objects.filter(run_id=run_id).count() >= stored
    assert run["metrics"]["ttft_ms"]["n"] > 0


def test_a_test_fans_out_over_two_worker_processes_into_one_run(client_and_endpoint, tmp_path) -> None:
    client, endpoint = client_and_endpoint
    workers = [_start_worker(tmp_path / f"worker-{n}.log", concurrency=1, name=f"fan{n}") for n in range(2)]
    try:
        response = client.post(
            "/api/v1/load-tests/",
            {
                "endpoint": endpoint,
                "scenario": "custom",
                "concurrency": 4,
                "duration_s": 4,
                "workers": 2,
                "input_tokens": 128,
                "output_tokens": 16,
            },
            format="json",
        )
        assert response.status_code == 202, response.content
        url = response.json()["url"]
        body = _wait(
            lambda: (b := client.get(url).json())["status"] in ("done", "failed", "cancelled") and b,
            timeout=120,
            what="the fanned-out test to end",
        )
    finally:
        for process in workers:
            process.send_signal(signal.SIGTERM)
        for process in workers:
            process.wait(timeout=30)
    assert body["status"] == "done", body
    assert [shard["status"] for shard in body["shards"]] == ["done", "done"]
    assert len({shard["worker"] for shard in body["shards"]}) >= 1
    run = client.get(body["run_url"]).json()
    assert run["load"]["concurrency"] == 4  # 2 + 2 clients, merged
    assert run["settings"]["shards"] == 2
    shard_summaries = run["reported"]["shards"]
    assert len(shard_summaries) == 2
    assert all(summary["sent"] > 0 for summary in shard_summaries)
    assert run["completed"] > 0
    # both waited for the common start (none began before it); a shard a busy machine let start late is within the
    # late-start allowance (past it the shard fails) and the merge places its requests by their offset
    common = datetime.fromisoformat(body["start_at"].replace("Z", "+00:00"))
    for shard in body["shards"]:
        started = datetime.fromisoformat(shard["started_at"].replace("Z", "+00:00"))
        assert started >= common, (started, common)
        assert (started - common).total_seconds() <= settings.LOADTEST_LATE_START_S

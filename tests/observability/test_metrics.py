"""Prometheus metrics at /metrics (issue 10): off without a token, refused with a wrong one, and with the right one:
requests by route name, Celery task outcomes and durations, queue lengths read from the broker and active load tests
from the database at scrape time, and several processes added up through PROMETHEUS_MULTIPROC_DIR."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from django.db import connection
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from benchmarks_app.models import LoadTest
from benchmarks_app.simserver.truth import free_port
from benchmarks_app.tasks import loadtest_reap_task
from sizing.kernel import observability
from sizing.kernel.observability import broker_connection
from sizing.tasks import estimate_compute_task

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "metrics-test-token-0123456789"


def scrape(**extra: str) -> str:
    with override_settings(SIZING_METRICS_TOKEN=TOKEN):
        response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return response.content.decode()


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample `name` with these labels (a subset of its labels), or None."""
    for family in text_string_to_metric_families(text):
        for item in family.samples:
            if item.name == name and all(item.labels.get(k) == v for k, v in labels.items()):
                return item.value
    return None


# --- access ---------------------------------------------------------------------------------------------------------


@override_settings(SIZING_METRICS_TOKEN="")
def test_metrics_are_off_without_a_token_setting():
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


@override_settings(SIZING_METRICS_TOKEN=TOKEN)
def test_metrics_need_the_right_bearer_token():
    client = Client()
    missing = client.get("/metrics")
    assert missing.status_code == 401
    assert missing["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong-token").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


@pytest.mark.django_db
def test_probes_and_metrics_are_not_in_the_openapi_schema():
    paths = Client().get("/api/schema/", {"format": "json"}).json()["paths"]
    assert not [path for path in paths if path.rstrip("/") in ("/metrics", "/healthz", "/readyz")]


@pytest.mark.django_db
def test_metrics_are_never_throttled(settings):
    # the API's throttles are DRF's; /metrics is a plain view: a scraper asking often is always answered
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"sustained": "1/hour", "burst": "1/min", "session": "1/min"},
    }
    for _ in range(5):
        scrape()


# --- requests -------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_requests_are_counted_by_route_name_not_by_path(api_client, catalog):
    before = scrape()
    labels = {"method": "GET", "route": "sizing:gpu-list", "status_class": "2xx"}
    assert api_client.get("/api/v1/gpus/", {"vendor": "nvidia"}).status_code == 200
    assert Client().get("/no-such-page/12345/").status_code == 404
    assert Client().generic("BREW", "/healthz").status_code == 405
    after = scrape()
    assert sample(after, "http_requests_total", **labels) == (sample(before, "http_requests_total", **labels) or 0) + 1
    assert sample(after, "http_requests_total", route="unmatched", status_class="4xx") >= 1
    assert sample(after, "http_requests_total", method="other", route="healthz", status_class="4xx") >= 1
    assert sample(after, "http_request_duration_seconds_count", route="sizing:gpu-list") >= 1
    # the label set is bounded: no path, no query string, no id
    assert "/api/v1/gpus" not in after
    assert "no-such-page" not in after
    assert "12345" not in after
    assert "vendor" not in after


# --- Celery tasks ---------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_task_outcomes_and_durations_are_counted():
    reap = "benchmarks_app.tasks.loadtest_reap_task"
    compute = "sizing.tasks.estimate_compute_task"
    before = scrape()
    # when: a real task run through Celery's tracer (apply fires task_prerun/task_postrun), and one that fails
    assert loadtest_reap_task.apply().get() == 0
    result = estimate_compute_task.apply(args=[0])  # no estimate 0: the task fails
    assert result.failed()
    after = scrape()

    def grew(name: str, **labels: str) -> float:
        return (sample(after, name, **labels) or 0) - (sample(before, name, **labels) or 0)

    assert grew("celery_tasks_total", task=reap, outcome="success") == 1
    assert grew("celery_task_duration_seconds_count", task=reap) == 1
    assert grew("celery_tasks_total", task=compute, outcome="failure") == 1
    assert grew("celery_task_duration_seconds_count", task=compute) == 1


@pytest.mark.django_db  # the reap task reads the load tests
def test_a_worker_serves_its_task_metrics_on_its_port(monkeypatch):
    port = free_port()
    monkeypatch.setenv("SIZING_WORKER_METRICS_PORT", str(port))
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    labels = {"task": "benchmarks_app.tasks.loadtest_reap_task", "outcome": "success"}
    server, thread = observability._on_worker_init()
    try:
        before = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert loadtest_reap_task.apply().get() == 0
        after = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    # the counters are the process's: another test may have counted the task before; this run adds one
    assert (sample(after, "celery_tasks_total", **labels) or 0) - (
        sample(before, "celery_tasks_total", **labels) or 0
    ) == 1


def test_a_prefork_worker_without_a_multiprocess_directory_is_warned(monkeypatch, caplog):
    class Prefork:  # what Celery's worker_init sender names as its pool
        __module__ = "celery.concurrency.prefork"

    monkeypatch.setenv("SIZING_WORKER_METRICS_PORT", str(free_port()))
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    server, thread = observability._on_worker_init(sender=SimpleNamespace(pool_cls=Prefork))
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)
    assert "without PROMETHEUS_MULTIPROC_DIR" in caplog.text


def test_no_worker_metrics_server_without_the_port(monkeypatch):
    monkeypatch.delenv("SIZING_WORKER_METRICS_PORT", raising=False)
    assert observability._on_worker_init() is None


# --- scrape-time gauges ---------------------------------------------------------------------------------------------


@pytest.fixture
def isolated_broker(settings, tmp_path):
    """The test run's kind of broker, on its own: a Redis database of its own, or filesystem folders of its own."""
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        settings.CELERY_BROKER_URL = urlunsplit(urlsplit(url)._replace(path="/14"))
    else:
        folder = tmp_path / "broker"
        folder.mkdir()
        settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
            **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
        }
    return settings.CELERY_BROKER_URL


@pytest.mark.django_db
def test_queue_length_is_read_from_the_broker_at_scrape_time(isolated_broker):
    before = scrape()
    assert sample(before, "celery_broker_up") == 1
    waiting = sample(before, "celery_queue_length", queue="loadtests")
    assert waiting is not None
    for queue in observability.CELERY_QUEUES:
        assert sample(before, "celery_queue_length", queue=queue) is not None
    with broker_connection() as broker:
        queue = broker.SimpleQueue("loadtests")
        try:
            queue.put({"observability": "test"})
            after = scrape()
        finally:
            queue.clear()
            queue.close()
    assert sample(after, "celery_queue_length", queue="loadtests") == waiting + 1


@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_an_unreachable_broker_does_not_fail_the_scrape():
    text = scrape()
    assert sample(text, "celery_broker_up") == 0
    assert sample(text, "celery_queue_length") is None
    assert sample(text, "sizing_loadtests_active", status="running") is not None


@pytest.mark.django_db
def test_active_load_tests_are_counted_at_scrape_time(organisation):
    before = scrape()
    running_before = sample(before, "sizing_loadtests_active", status="running")
    queued_before = sample(before, "sizing_loadtests_active", status="queued")
    for status in ("running", "running", "queued", "done"):
        LoadTest.objects.create(
            organisation=organisation, endpoint_name="e", name=f"t {status}", scenario="pulse", plan={}, status=status
        )
    after = scrape()
    assert sample(after, "sizing_loadtests_active", status="running") == running_before + 2
    assert sample(after, "sizing_loadtests_active", status="queued") == queued_before + 1


# --- several processes ----------------------------------------------------------------------------------------------


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    host, port, user = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432, db.get("USER") or "postgres"
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


@pytest.mark.django_db
def test_multiprocess_mode_adds_up_every_process(tmp_path):
    kept = {
        name: os.environ[name]
        for name in ("PATH", "HOME", "LANG", "SIZING_VAR_DIR", "CELERY_BROKER_URL")
        if name in os.environ
    }
    environment = {
        **kept,
        "DJANGO_SETTINGS_MODULE": "deploy.settings.test",
        "DATABASE_URL": _database_url(),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "SIZING_METRICS_TOKEN": TOKEN,
    }
    serve = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "from sizing.tasks import estimate_compute_task\n"
        "assert Client().get('/healthz').status_code == 200\n"
        "assert estimate_compute_task.apply(args=[0]).failed()\n"
    )  # no estimate 0: fails, on any database
    scraper = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        f"print(Client().get('/metrics', HTTP_AUTHORIZATION='Bearer {TOKEN}').content.decode())\n"
    )

    def run(code: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    run(serve)
    run(serve)  # a second process (a second gunicorn worker)
    text = run(scraper)
    assert sample(text, "http_requests_total", method="GET", route="healthz", status_class="2xx") == 2
    assert sample(text, "celery_tasks_total", task="sizing.tasks.estimate_compute_task", outcome="failure") == 2
    assert sample(text, "celery_task_duration_seconds_count", task="sizing.tasks.estimate_compute_task") == 2
    assert sample(text, "celery_broker_up") is not None  # the scrape-time collectors answer in multiprocess mode too
    assert sample(text, "sizing_loadtests_active", status="running") is not None
    assert list(tmp_path.glob("*.db"))  # the processes' metrics were written to files

"""Structured logs with a request id (issue 10): every request gets an id (the client's when it is a sane token),
answered in X-Request-ID and on each log line (one JSON object a line with LOG_FORMAT=json); one line per request with
its method, route name, status and duration and nothing else of the request; the id follows a task into the worker;
and no secret (an API key in the Authorization header, an endpoint key in a body, a query string) reaches a log."""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import before_task_publish
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient

from deploy.celery import app as celery_app
from sizing.kernel.apikeys import api_key_create
from sizing.kernel.observability import (
    JsonLogFormatter,
    RequestContextFilter,
    RequestIdMiddleware,
    TextLogFormatter,
    current_request_id,
)
from sizing.models import Membership

HEX_ID = re.compile(r"[0-9a-f]{32}")
PROBE_QUEUE = "observability-test"  # a queue of this test's own: no other worker takes its message
probe_logger = logging.getLogger("tests.observability.probe")


@celery_app.task(name="tests.observability.probe")
def probe_task(word: str) -> str:
    probe_logger.warning("probe ran: %s", word)
    return word


class Lines:
    """Records as the production handler writes them: the context filter and the JSON formatter."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.addFilter(RequestContextFilter())
        self.handler.setFormatter(JsonLogFormatter())

    def all(self) -> list[dict]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    def requests(self) -> list[dict]:
        return [line for line in self.all() if line["logger"] == "sizing.requests"]


@pytest.fixture
def lines() -> Iterator[Lines]:
    captured = Lines()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(captured.handler)
    root.setLevel(logging.DEBUG)
    yield captured
    root.removeHandler(captured.handler)
    root.setLevel(previous)


# --- request ids ----------------------------------------------------------------------------------------------------


def test_a_request_line_is_json_with_the_answered_request_id(lines):
    response = Client().get("/healthz", {"probe": "q-secret-value"})
    request_id = response["X-Request-ID"]
    assert HEX_ID.fullmatch(request_id)
    [line] = lines.requests()
    assert line["request_id"] == request_id
    assert line["level"] == "DEBUG"  # a probe's success: every few seconds, so not at INFO
    assert line["method"] == "GET"
    assert line["route"] == "healthz"
    assert line["status"] == 200
    assert isinstance(line["duration_ms"], float)
    assert line["message"].startswith("GET healthz 200 ")
    assert "time" in line
    assert "q-secret-value" not in lines.stream.getvalue()  # no query string
    assert current_request_id() is None  # nothing left behind once the request is answered


@pytest.mark.parametrize("given", ["abc-123.XYZ_9", "a" * 64, "0f8fad5b-d9cb-469f-a165-70867728950e"])
def test_a_sane_request_id_is_kept(lines, given):
    response = Client().get("/healthz", HTTP_X_REQUEST_ID=given)
    assert response["X-Request-ID"] == given
    assert lines.requests()[0]["request_id"] == given


@pytest.mark.parametrize("given", ["abc\ninjected: yes", "a" * 65, "x" * 500, "<script>", "id with spaces", ""])
def test_a_malicious_request_id_is_replaced(lines, given):
    response = Client().get("/healthz", HTTP_X_REQUEST_ID=given)
    assert HEX_ID.fullmatch(response["X-Request-ID"])
    assert lines.requests()[0]["request_id"] == response["X-Request-ID"]
    if given:
        assert given not in lines.stream.getvalue()


@pytest.mark.django_db
def test_a_failed_probe_and_static_files_are_logged_at_info(lines):
    with override_settings(SIZING_METRICS_TOKEN="t"):
        Client().get("/metrics")
    Client().get("/static/frontend/does-not-exist.css")
    assert [(line["route"], line["status"], line["level"]) for line in lines.requests()] == [
        ("metrics", 401, "INFO"),
        ("static", 404, "INFO"),
    ]


def test_lines_inside_an_authenticated_request_name_the_user(lines, api_client, user):
    response = api_client.get("/api/v1/me/")
    [line] = lines.requests()
    assert line["route"] == "accounts:me"
    assert line["status"] == response.status_code
    assert line["user_id"] == user.pk
    assert line["request_id"] == response["X-Request-ID"]


def test_the_text_format_shows_the_request_id():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", None, None)
    record.request_id, record.task_name = "rid-1", "sizing.tasks.estimate_compute_task"
    assert "[rid-1 task=sizing.tasks.estimate_compute_task] hello" in TextLogFormatter().format(record)
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", None, None)
    RequestContextFilter().filter(plain)
    assert TextLogFormatter().format(plain).endswith(" INFO x hello")


def test_logging_is_configured_with_the_filter_and_the_chosen_format(settings):
    from deploy.settings.base import logging_settings

    config = logging_settings("json")
    assert config["handlers"]["console"]["formatter"] == "json"
    assert config["handlers"]["console"]["filters"] == ["context"]
    assert config["loggers"]["pyhanko"] == {"level": "ERROR"}  # the per-logger levels are kept
    assert settings.LOG_FORMAT == "text"  # the local default
    assert settings.MIDDLEWARE[:3] == [
        "django.middleware.security.SecurityMiddleware",
        "sizing.kernel.observability.RequestIdMiddleware",
        "sizing.kernel.observability.RequestMetricsMiddleware",
    ]
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured):
        logging_settings("xml")


# --- secrets --------------------------------------------------------------------------------------------------------

BEARER = "lls_0123456789ab_secretSECRETsecretSECRETsecretSECRETsecret0"
ENDPOINT_KEY = "sk-live-Zq8v3T1xWp0rKs9uNEVERLOGGED"
QUERY_SECRET = "qs-token-NEVERLOGGED"
BODY = {
    "name": "Simulator",
    "base_url": "http://127.0.0.1:8001",
    "kind": "vllm",
    "model_name": "llama-3-8b",
    "api_key": ENDPOINT_KEY,
}


@pytest.mark.django_db
def test_no_secret_reaches_a_log_line(caplog, lines, organisation):
    caplog.set_level(logging.DEBUG)
    admin = get_user_model().objects.create_user(username="admin-obs", password="correct horse battery")
    Membership.objects.create(user=admin, organisation=organisation, role=Membership.Role.ADMIN)
    _, valid_key = api_key_create(user=admin, name="script")
    client = APIClient()
    # a bad key (401), then a good one creating an endpoint with its key in the body (201), and a 404 with a query
    bad = client.post(
        f"/api/v1/endpoints/?token={QUERY_SECRET}", BODY, format="json", HTTP_AUTHORIZATION=f"Bearer {BEARER}"
    )
    assert bad.status_code == 401
    good = client.post(
        f"/api/v1/endpoints/?token={QUERY_SECRET}", BODY, format="json", HTTP_AUTHORIZATION=f"Bearer {valid_key}"
    )
    assert good.status_code == 201, good.content
    missing = client.get(f"/api/v1/endpoints/999999/?token={QUERY_SECRET}", HTTP_AUTHORIZATION=f"Bearer {valid_key}")
    assert missing.status_code == 404
    # then: lines were written (each request, Django's 4xx warnings), and none holds a secret
    assert len(lines.requests()) == 3
    assert [line["status"] for line in lines.requests()] == [401, 201, 404]
    assert lines.requests()[1]["user_id"] == admin.pk
    # every record of the requests (caplog has all loggers at DEBUG) as either format writes it
    context, as_json, as_text = RequestContextFilter(), JsonLogFormatter(), TextLogFormatter()
    formatted = [
        form.format(record) for record in caplog.records if context.filter(record) for form in (as_json, as_text)
    ]
    assert len(formatted) >= 10
    texts = [lines.stream.getvalue(), caplog.text, *formatted]
    # the key is lls_<hex>_<secret>, and the secret itself may hold "_": split off the prefix only
    for secret in (BEARER, valid_key, ENDPOINT_KEY, QUERY_SECRET, valid_key.split("_", 2)[2]):
        for text in texts:
            assert secret not in text


# --- into the worker ------------------------------------------------------------------------------------------------


@pytest.fixture
def published() -> Iterator[list[dict]]:
    seen: list[dict] = []

    def capture(sender=None, headers=None, **kwargs):
        if sender == probe_task.name:
            seen.append(dict(headers or {}))

    before_task_publish.connect(capture, weak=False, dispatch_uid="test-observability-capture")
    yield seen
    before_task_publish.disconnect(dispatch_uid="test-observability-capture")


@pytest.mark.worker
def test_the_request_id_follows_a_task_into_the_worker(published):
    # given: a request (through the middleware) that publishes a task
    task_ids: list[str] = []

    def view(request):
        task_ids.append(probe_task.apply_async(args=["hello"], queue=PROBE_QUEUE).id)
        return HttpResponse("queued")

    response = RequestIdMiddleware(view)(RequestFactory().get("/", HTTP_X_REQUEST_ID="trace-me-42"))
    assert response["X-Request-ID"] == "trace-me-42"
    # then the message carries the id
    assert published[-1]["sizing_request_id"] == "trace-me-42"
    # when a real worker runs it
    captured = Lines()
    probe_logger.setLevel(logging.INFO)
    probe_logger.addHandler(captured.handler)
    try:
        with start_worker(celery_app, perform_ping_check=False, queues=[PROBE_QUEUE], pool="solo", shutdown_timeout=30):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not captured.all():
                time.sleep(0.1)
    finally:
        probe_logger.removeHandler(captured.handler)
        with celery_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(PROBE_QUEUE)
    # then the worker's log line for the task carries the request's id and names the task
    [line] = captured.all()
    assert line["message"] == "probe ran: hello"
    assert line["request_id"] == "trace-me-42"
    assert line["task_name"] == "tests.observability.probe"
    assert line["task_id"] == task_ids[0]
    assert current_request_id() is None


def test_an_eager_task_keeps_the_request_id_and_gives_it_back(lines):
    def view(request):
        probe_task.apply(args=["eager"])
        logging.getLogger("tests.observability").warning("after the task")
        return HttpResponse("done")

    probe_logger.setLevel(logging.INFO)
    RequestIdMiddleware(view)(RequestFactory().get("/", HTTP_X_REQUEST_ID="eager-1"))
    by_message = {line["message"]: line for line in lines.all()}
    assert by_message["probe ran: eager"]["request_id"] == "eager-1"
    assert by_message["probe ran: eager"]["task_name"] == "tests.observability.probe"
    assert by_message["after the task"]["request_id"] == "eager-1"
    assert "task_name" not in by_message["after the task"]

"""Probes (issue 10): /healthz answers without the database, /readyz checks the database, the broker and the
migrations (200 with each check, 503 naming the failed one and why, never a traceback), /health/ still answers,
and production does not redirect them to HTTPS."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.db.utils import OperationalError
from django.test import Client, override_settings

from sizing.kernel import health

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_answers_without_a_database():
    # no django_db mark: any database access would raise here
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["X-Request-ID"]
    assert not response.cookies  # no session, no CSRF cookie


@pytest.mark.django_db
def test_healthz_makes_no_query(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = Client().get("/healthz")
    assert response.status_code == 200


def test_healthz_and_readyz_need_no_csrf_token_and_take_head():
    client = Client(enforce_csrf_checks=True)
    assert client.head("/healthz").status_code == 200
    assert client.post("/healthz").status_code == 405  # not a CSRF 403: the probes read only


@pytest.mark.django_db
def test_the_old_health_endpoint_still_answers():
    assert Client().get("/health/").json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_on_the_test_database_and_broker():
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["failed"] == []
    assert set(body["checks"]) == {"database", "broker", "migrations"}
    for check in body["checks"].values():
        assert check["ok"] is True
        assert check["duration_ms"] >= 0


@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_readyz_names_the_broker_when_it_is_unreachable():
    # anonymous: the check and its kind of error, not the host and port (the staff's answer says why in full:
    # tests/security/test_errors_and_throttles.py)
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "unavailable"
    assert body["failed"] == ["broker"]
    assert body["checks"]["broker"]["error"].endswith("(the details are in the service's log)")
    assert "127.0.0.1" not in response.content.decode()
    assert body["checks"]["database"]["ok"] is True
    assert "Traceback" not in response.content.decode()


@pytest.mark.django_db
def test_readyz_names_an_unapplied_migration():
    # given: the record of the last applied sizing migration removed (inside the test's transaction, rolled back)
    recorder = MigrationRecorder(connection)
    last = recorder.migration_qs.filter(app="sizing").order_by("-applied", "-id").first()
    assert last is not None
    last.delete()
    # when
    response = Client().get("/readyz")
    # then
    body = response.json()
    assert response.status_code == 503
    assert body["failed"] == ["migrations"]
    assert f"sizing.{last.name}" in body["checks"]["migrations"]["error"]
    assert body["checks"]["broker"]["ok"] is True


@pytest.mark.django_db
def test_readyz_says_why_the_database_failed_in_one_line_without_credentials(monkeypatch):
    def down() -> str:
        raise OperationalError('connection to "postgres://sizing:hunter2@db:5432/sizing" failed\nDETAIL: more')

    monkeypatch.setitem(health.CHECKS, "database", down)
    # a staff user is told why in full (anonymous callers only the error's kind)
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="operator", is_staff=True))
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["failed"] == ["database"]
    error = body["checks"]["database"]["error"]
    assert error.startswith("OperationalError: ")
    assert "hunter2" not in response.content.decode()
    assert "\n" not in error
    assert "Traceback" not in error


def _test_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    host, port, user = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432, db.get("USER") or "postgres"
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


@pytest.mark.django_db
def test_production_keeps_probes_and_metrics_on_http_and_logs_json():
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "SIZING_VAR_DIR") if name in os.environ}
    environment = {
        **kept,
        "DJANGO_SETTINGS_MODULE": "deploy.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "DATABASE_URL": _test_database_url(),
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
        "ALLOWED_HOSTS": "sizing.example.com",
        "SIZING_METRICS_TOKEN": "scrape-token",
    }
    code = (
        "import django; django.setup()\n"
        "from django.conf import settings as s\n"
        "from django.test import Client\n"
        "assert s.LOG_FORMAT == 'json', s.LOG_FORMAT\n"
        "client = Client(SERVER_NAME='sizing.example.com')\n"
        "assert client.get('/healthz').status_code == 200\n"
        "assert client.get('/readyz').status_code in (200, 503)\n"
        "assert client.get('/metrics', HTTP_AUTHORIZATION='Bearer scrape-token').status_code == 200\n"
        "assert client.get('/login/').status_code == 301\n"  # answered by SecurityMiddleware, before any line
        "assert client.get('/metrics').status_code == 401\n"
    )
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
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    requests = [line for line in lines if line.get("logger") == "sizing.requests"]
    # the probes' and scrapes' successes are at DEBUG (they come every few seconds); the rest at INFO
    answered = [(line["route"], line["status"]) for line in requests]
    assert ("metrics", 401) in answered
    assert ("healthz", 200) not in answered
    assert ("metrics", 200) not in answered
    assert all(line["request_id"] for line in requests)

"""Hardening (issue 9): sign-in throttling per user name and address (django-axes: 429 and a message in the user's
language), the Content-Security-Policy and the other security headers on every page, the cookies' flags, and the
production settings passing `manage.py check --deploy`."""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from sizing.models import Membership, Organisation
from tests.security.plotly_css import STYLESHEET, maplibre_style_id, plotly_stylesheet

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"
LOCKOUT_EN = "Too many failed sign-in attempts (5) for this user name from your address"
LOCKOUT_ZH = "此用户名从您的地址登录失败次数过多（5 次），登录已被锁定。请在 15 分钟后再试"
PAGES = [
    "/",
    "/bootlog/",
    "/colocated/",
    "/workloads/",
    "/performance/",
    "/deployments/",
    "/benchmarks/",
    "/endpoints/",
    "/memory/",
    "/load-tests/",
    "/reports/",
    "/customers/",
    "/api/docs/",
]

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="session", autouse=True)
def compiled_translations() -> None:
    call_command("compile_translations", verbosity=0)


@pytest.fixture
def other_user(organisation: Organisation):
    account = get_user_model().objects.create_user(username="reviewer", password=PASSWORD)
    Membership.objects.create(user=account, organisation=organisation, role="reviewer")
    return account


@pytest.fixture
def superuser(organisation: Organisation):
    account = get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    Membership.objects.create(user=account, organisation=organisation)
    return account


def _sign_in(client: Client, username: str, password: str, **headers: str):
    return client.post(reverse("frontend:login"), {"username": username, "password": password}, **headers)


def _fail(client: Client, username: str, times: int, **headers: str) -> list[int]:
    return [_sign_in(client, username, "wrong password", **headers).status_code for _ in range(times)]


def _directives(header: str) -> dict[str, list[str]]:
    parts = (part.strip().split() for part in header.split(";") if part.strip())
    return {words[0]: words[1:] for words in parts}


# Sign-in throttling


def test_settings_lock_a_user_name_and_address_after_five_failures() -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60
    assert settings.AXES_RESET_ON_SUCCESS is True
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"


def test_five_wrong_passwords_lock_the_user_name_from_that_address(user, other_user) -> None:
    client = Client()

    # four wrong passwords: the form says so (200); the fifth locks the pair out (429) with the message
    assert _fail(client, "engineer", 4) == [200] * 4
    locked = _sign_in(client, "engineer", "wrong password")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert LOCKOUT_EN in page
    assert "Try again in 15 minutes." in page
    assert 'id="lockout-message"' in page
    assert 'id="login-button"' in page  # the sign-in form is still there

    # the right password is refused while locked
    refused = _sign_in(client, "engineer", PASSWORD)
    assert refused.status_code == 429
    assert LOCKOUT_EN in refused.content.decode()
    assert "_auth_user_id" not in client.session
    assert client.get("/").status_code == 302  # still signed out

    # another user name from the same address signs in
    other = Client()
    assert _sign_in(other, "reviewer", PASSWORD).status_code == 302
    assert other.session["_auth_user_id"] == str(other_user.pk)


def test_the_same_user_name_from_another_address_is_not_locked(user) -> None:
    client = Client()
    assert _fail(client, "engineer", 5)[-1] == 429
    elsewhere = Client(REMOTE_ADDR="10.0.0.7")
    assert _sign_in(elsewhere, "engineer", PASSWORD).status_code == 302


def test_a_success_forgets_the_failures(user) -> None:
    client = Client()
    assert _fail(client, "engineer", 4) == [200] * 4
    assert _sign_in(client, "engineer", PASSWORD).status_code == 302
    client.post(reverse("frontend:logout"))
    assert _fail(client, "engineer", 4) == [200] * 4  # counted from zero again: not locked at the fifth in all


def test_the_lockout_message_is_chinese_from_the_accept_language_header(user) -> None:
    client = Client()
    statuses = _fail(client, "engineer", 5, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert statuses[-1] == 429
    refused = _sign_in(client, "engineer", PASSWORD, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert refused.status_code == 429
    assert LOCKOUT_ZH in refused.content.decode()


def test_the_lockout_message_is_chinese_from_the_language_cookie(user) -> None:
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    locked = _fail(client, "engineer", 5)
    assert locked[-1] == 429
    page = _sign_in(client, "engineer", "wrong password").content.decode()
    assert LOCKOUT_ZH in page
    assert LOCKOUT_EN not in page


# Headers and cookies


def test_every_page_carries_the_content_security_policy_and_security_headers(superuser) -> None:
    client = Client()
    client.force_login(superuser)
    responses = {path: client.get(path) for path in PAGES}
    responses["/login/ (signed out)"] = Client().get(reverse("frontend:login"))
    responses["/api/docs/?script"] = client.get("/api/docs/?script")
    responses["/health/"] = client.get("/health/")
    for path, response in responses.items():
        assert response.status_code == 200, path
        policy = _directives(response["Content-Security-Policy"])
        assert policy["default-src"] == ["'self'"], path
        assert policy["script-src"] == ["'self'"], path  # no 'unsafe-inline', no 'unsafe-eval'
        assert "'unsafe-inline'" not in policy["script-src"], path
        assert policy["frame-ancestors"] == ["'none'"], path
        assert policy["object-src"] == ["'none'"], path
        assert policy["base-uri"] == ["'self'"], path
        assert policy["form-action"] == ["'self'"], path
        assert policy["connect-src"] == ["'self'"], path
        assert policy["img-src"] == ["'self'", "data:", "blob:"], path
        assert policy["font-src"] == ["'self'", "data:"], path
        # style sheets only from files, except the API docs page's one inline <style> (drf-spectacular's template)
        assert policy["style-src"] == (["'self'", "'unsafe-inline'"] if path.startswith("/api/docs/") else ["'self'"])
        assert policy["style-src-attr"] == ["'unsafe-inline'"], path  # progress bars' widths, swatches' colours
        assert response["X-Frame-Options"] == "DENY", path
        assert response["X-Content-Type-Options"] == "nosniff", path
        assert response["Referrer-Policy"] == "same-origin", path
        assert response["Cross-Origin-Opener-Policy"] == "same-origin", path


def test_the_api_docs_page_has_no_inline_script(superuser) -> None:
    client = Client()
    client.force_login(superuser)
    page = client.get("/api/docs/").content.decode()
    assert reverse("swagger-ui") == "/api/docs/"
    assert "<script>" not in page
    assert '<script src="/api/docs/?script=">' in page
    script = client.get("/api/docs/?script")
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


def test_plotly_styles_come_from_a_file_that_matches_the_installed_plotly(superuser) -> None:
    assert STYLESHEET.read_text(encoding="utf-8") == plotly_stylesheet(), (
        "frontend/static/frontend/plotly.css is not plotly.js's stylesheet: run `python -m tests.security.plotly_css`"
    )
    client = Client()
    client.force_login(superuser)
    page = client.get("/").content.decode()
    assert 'id="plotly.js-style-global" class="no-inline-styles"' in page
    assert f'id="{maplibre_style_id()}"' in page


def test_the_session_and_csrf_cookies_are_http_only_and_same_site(user) -> None:
    client = Client()
    page = client.get(reverse("frontend:login"))
    csrf = page.cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["httponly"] is True
    assert csrf["samesite"] == "Lax"
    signed_in = _sign_in(client, "engineer", PASSWORD)
    assert signed_in.status_code == 302
    session = signed_in.cookies[settings.SESSION_COOKIE_NAME]
    assert session["httponly"] is True
    assert session["samesite"] == "Lax"


# Production settings


def _test_database_url() -> str:
    """The test run's own database (it exists while the tests run; DATABASE_URL's may not: CI creates only the
    test database)."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    host, port, user = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432, db.get("USER") or "postgres"
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


def _production_environment(**values: str) -> dict[str, str]:
    """Only what a deployment sets: nothing of the test run's (DJANGO_ALLOW_ASYNC_UNSAFE, DEBUG, ...) leaks in."""
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "SIZING_VAR_DIR") if name in os.environ}
    return {**kept, "DJANGO_SETTINGS_MODULE": "deploy.settings.production", **values}


def test_production_settings_pass_the_deploy_check(db) -> None:
    secret = "".join(secrets.choice(string.ascii_letters + string.digits + "!@#%^&*(-_=+)") for _ in range(60))
    environment = _production_environment(
        **{
            "SECRET_KEY": secret,
            "DATABASE_URL": _test_database_url(),
            "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
            "ALLOWED_HOSTS": "sizing.example.com",
        }
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout, result.stdout + result.stderr


def test_production_redirects_to_https_but_not_the_health_probe(db) -> None:
    environment = _production_environment(
        **{
            "SECRET_KEY": secrets.token_urlsafe(48),
            "DATABASE_URL": _test_database_url(),
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
            "ALLOWED_HOSTS": "sizing.example.com",
        }
    )
    code = (
        "import django; django.setup()\n"
        "from django.conf import settings as s\n"
        "from django.test import Client\n"
        "assert s.SECURE_HSTS_SECONDS == 31536000 and s.SECURE_HSTS_INCLUDE_SUBDOMAINS and not s.SECURE_HSTS_PRELOAD\n"
        "assert s.SESSION_COOKIE_SECURE and s.CSRF_COOKIE_SECURE and s.ALLOWED_HOSTS == ['sizing.example.com']\n"
        "client = Client(SERVER_NAME='sizing.example.com')\n"
        "health = client.get('/health/')\n"
        "assert health.status_code == 200, health.status_code\n"
        "login = client.get('/login/')\n"
        "assert login.status_code == 301 and login['Location'] == 'https://sizing.example.com/login/', login\n"
        "secure = client.get('/login/', secure=True)\n"
        "assert secure.status_code == 200 and secure['Strict-Transport-Security'] == "
        "'max-age=31536000; includeSubDomains', secure\n"
        "print('ok')\n"
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
    assert "ok" in result.stdout, result.stdout + result.stderr

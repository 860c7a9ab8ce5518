"""Shared fixtures: the shipped catalogs, an organisation with a signed-in user, an API client; and how the suite is
spread over pytest-xdist's processes (`make test`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.models import Membership, Organisation
from sizing.services.estimates import catalog_load

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop runs beside the live server

TESTS = Path(__file__).resolve().parent
# Tests that drive Chromium or start Celery workers run one after another in one process (xdist's loadgroup, group
# "serial"): two browsers, two workers, or a browser's load test beside a worker test's, at once on a 2-core machine
# starve each other's real-time simulators and load tests. The rest is shared by the other processes meanwhile.
SERIAL_GROUPS = {"serial": (TESTS / "browser", TESTS / "integration")}
SERIAL_MARKERS = ("browser", "worker")


def _group(item: pytest.Item) -> str | None:
    path = Path(str(item.path))
    for name, folders in SERIAL_GROUPS.items():
        if any(item.get_closest_marker(marker) for marker in SERIAL_MARKERS) or any(
            path.is_relative_to(folder) for folder in folders
        ):
            return name
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = list(SERIAL_GROUPS)
    for item in items:
        group = _group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    # the group first: it is the longest unit of work (about 4 minutes), so xdist hands it out at once and the other
    # processes share the rest meanwhile; a stable sort keeps every other order as collected
    items.sort(key=lambda item: groups.index(group) if (group := _group(item)) else len(groups))


@pytest.fixture(scope="session", autouse=True)
def _empty_broker() -> None:
    """This test process's broker starts empty: a message a previous run left would be taken by this run's worker
    tests (deploy/settings/test.py gives each process its own folder or Redis key prefix)."""
    from django.conf import settings

    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        for message in Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]).glob("*"):
            message.unlink(missing_ok=True)
    elif url.startswith(("redis://", "rediss://")):
        import redis

        prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
        client = redis.Redis.from_url(url)
        try:
            keys = list(client.scan_iter(match=f"{prefix}*"))
            if keys:
                client.delete(*keys)
        finally:
            client.close()


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Throttle counters live in the cache: each test starts with none."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def catalog(db: None) -> None:
    """The shipped GPU and model catalogs (idempotent; also after transactional tests flush the tables)."""
    catalog_load()


@pytest.fixture
def organisation(db: None) -> Organisation:
    return Organisation.objects.create(name="Acme Integrator")


@pytest.fixture
def user(organisation: Organisation):
    account = get_user_model().objects.create_user(username="engineer", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation)
    return account


@pytest.fixture
def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client

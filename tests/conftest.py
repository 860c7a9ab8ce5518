"""Shared fixtures: the shipped catalogs, an organisation with a signed-in user, an API client."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.models import Membership, Organisation
from sizing.services import catalog_load

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop runs beside the live server


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

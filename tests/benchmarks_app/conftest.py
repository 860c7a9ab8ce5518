"""Tasks run in the test's process here (the real worker is exercised in tests/integration)."""

from __future__ import annotations

import pytest

from deploy.celery import app as celery_app


@pytest.fixture(autouse=True)
def eager_tasks():
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous

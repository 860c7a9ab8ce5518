"""The sentinel's tests: the worker's task runs eagerly in the test's process, with a fresh self-signed organisation
certificate per test; files come from the synthetic generator (cached per session: each is ~6.5 MB)."""

from __future__ import annotations

import functools

import pytest

from benchmarks_app.services.sentinel_synthetic import synthetic_sentinel_text
from deploy.celery import app as celery_app
from sizing.models import Deployment


@pytest.fixture(autouse=True)
def eager_tasks(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@functools.cache
def synthetic(**options: object) -> str:
    return synthetic_sentinel_text(**options)


COMMITTED_BYTES_PER_GPU = 76_000 * 2**20  # above the synthetic cards' peak (71,900 MiB steady)


@pytest.fixture
def deployment(organisation) -> Deployment:
    """A deployment with a signed memory commitment (its peak per GPU is what the health report holds the peak to)."""
    from django.utils import timezone

    from reports.models import Report, ReportVersion

    deployment = Deployment.objects.create(
        organisation=organisation, name="客服大模型", customer="Acme Bank", engine="vllm", gpu_count=2, tp=2
    )
    report = Report.objects.create(organisation=organisation, deployment=deployment, title="显存承诺书")
    ReportVersion.objects.create(
        report=report,
        number=1,
        status=ReportVersion.Status.SIGNED,
        signed_at=timezone.now(),
        drafted_at=timezone.now(),
        content={"commitment": {"peak_bytes_per_gpu": COMMITTED_BYTES_PER_GPU}},
    )
    return deployment

"""Load tests against a registered endpoint and their shards (one load generator each)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmarks_app.models.endpoints import Endpoint
from benchmarks_app.models.runs import BenchmarkRun
from sizing.models import Deployment, Organisation


class LoadTest(models.Model):
    """A load test launched from the service (issue 7): a scenario against a registered endpoint, run by one or more
    Celery workers on the `loadtests` queue (one shard each, from a common start), whose requests stream into a
    benchmark run as they are measured. It always ends done, cancelled or failed, with what was measured."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        CANCELLED = "cancelled", _("Cancelled")
        FAILED = "failed", _("Failed")

    class Scenario(models.TextChoices):
        PULSE = "pulse", _("Pulse")
        LONG_TAIL = "long_tail", _("Long tail")
        FAILURE = "failure", _("Failure injection")
        CUSTOM = "custom", _("Custom load")

    FINAL = (Status.DONE, Status.CANCELLED, Status.FAILED)

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="load_tests")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    endpoint = models.ForeignKey(Endpoint, null=True, on_delete=models.SET_NULL, related_name="load_tests")
    endpoint_name = models.CharField(max_length=200, help_text=_("The endpoint's name when the test was made"))
    deployment = models.ForeignKey(
        Deployment, null=True, blank=True, on_delete=models.SET_NULL, related_name="load_tests"
    )
    name = models.CharField(max_length=255)
    scenario = models.CharField(max_length=10, choices=Scenario.choices)
    plan = models.JSONField(help_text=_("The test plan as run (the load generator's JSON form; no API key)"))
    workers = models.PositiveSmallIntegerField(default=1, help_text=_("Celery workers sharing the load"))
    peak_concurrency = models.PositiveIntegerField(null=True, blank=True)
    slo = models.JSONField(default=dict, blank=True)
    committed_bytes_per_gpu = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.JSONField(default=dict, blank=True)
    cancel_requested = models.BooleanField(default=False)
    run = models.ForeignKey(BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    verdict = models.JSONField(default=dict, blank=True)
    error = models.JSONField(null=True, blank=True)
    start_at = models.DateTimeField(null=True, blank=True, help_text=_("The common start of every shard"))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["organisation", "-created_at"]), models.Index(fields=["status"])]

    def __str__(self) -> str:
        return self.name


class LoadTestShard(models.Model):
    """One worker's share of a load test: its heartbeat (a worker that stops beating is lost), its progress, and its
    result document once it ends (the requests themselves stream into the job's benchmark run)."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        CANCELLED = "cancelled", _("Cancelled")
        FAILED = "failed", _("Failed")

    FINAL = (Status.DONE, Status.CANCELLED, Status.FAILED)

    job = models.ForeignKey(LoadTest, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    worker = models.CharField(max_length=255, blank=True, help_text=_("The Celery worker that ran it"))
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text=_("Its t = 0 on the wall clock"))
    progress = models.JSONField(default=dict, blank=True)
    stored = models.PositiveIntegerField(default=0, help_text=_("Requests stored into the run so far"))
    result = models.TextField(blank=True, help_text=_("Its result document (our format) once it ended"))
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="unique_load_test_shard")]

    def __str__(self) -> str:
        return f"{self.job} #{self.index}"

"""Simulation jobs and their parts: a performance model run over a workload, queued and followed."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.accounts import Organisation


class SimulationJob(models.Model):
    """Latency and throughput work run by a worker: a simulation, a load sweep, an SLO search, a deployment
    search or a calibration. `inputs` holds the validated request; `result` what the estimator returned."""

    class Kind(models.TextChoices):
        SIMULATE = "simulate", _("Simulation at one load")
        SWEEP = "sweep", _("Load sweep")
        SLO_SEARCH = "slo_search", _("Largest load meeting the SLOs")
        SEARCH = "search", _("Deployment search")
        CALIBRATE = "calibrate", _("Calibration from measured runs")
        QUOTE = "quote", _("Quote: the cheapest deployments meeting the SLOs")

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="simulation_jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0, help_text=_("Share of the work done, 0 to 1"))
    progress_message = models.CharField(max_length=300, blank=True)
    inputs = models.JSONField()
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True, help_text=_("{code, message, extra} when the job failed"))
    parts_total = models.PositiveIntegerField(default=0, help_text=_("Chunks fanned out to workers (searches)"))
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"


class SimulationJobPart(models.Model):
    """One chunk of a fanned-out deployment search: its candidates' outcomes, written when the chunk is done."""

    job = models.ForeignKey(SimulationJob, on_delete=models.CASCADE, related_name="parts")
    index = models.PositiveIntegerField()
    outcomes = models.JSONField()
    finished_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="unique_simulation_job_part")]

    def __str__(self) -> str:
        return f"{self.job} part {self.index}"

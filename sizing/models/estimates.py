"""Saved estimates (the memory bill of one model on one GPU) and the calibrations measured runs give them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.accounts import Organisation
from sizing.models.catalog import Gpu, LlmModel
from sizing.models.simulations import SimulationJob


class Estimate(models.Model):
    """A saved estimate, computed by a worker; inputs and the full result are kept as JSON."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="estimates")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="estimates")
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, related_name="estimates")
    inputs = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Estimate {self.pk} ({self.status})"


class Calibration(models.Model):
    """Runtime terms an engine's startup log measured for a model on a GPU, applied to later estimates."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="calibrations")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    model = models.ForeignKey(LlmModel, on_delete=models.CASCADE, related_name="calibrations")
    gpu = models.ForeignKey(Gpu, on_delete=models.CASCADE, related_name="calibrations")
    engine = models.CharField(max_length=20)
    engine_version = models.CharField(max_length=60, blank=True)
    tp = models.PositiveSmallIntegerField(default=1)
    terms = models.JSONField(help_text=_("EstimateRequest terms in bytes: runtime, activations, CUDA graphs, capacity"))
    evidence = models.JSONField(default=dict, help_text=_("The log lines each term came from"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.model} on {self.gpu} ({self.engine} {self.engine_version}, TP {self.tp})"


class PerfCalibration(models.Model):
    """Efficiencies of a GPU/engine pair fitted to measured runs (a calibrate job saved by its organisation);
    later simulations of that pair use the newest one unless asked not to."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="perf_calibrations")
    gpu = models.ForeignKey(Gpu, on_delete=models.CASCADE, related_name="perf_calibrations")
    engine = models.CharField(max_length=20)
    efficiencies = models.JSONField(help_text=_("mfu, bandwidth, link, step_overhead_s, sequence_overhead_s"))
    default_rms_log_error = models.FloatField()
    calibrated_rms_log_error = models.FloatField()
    measurements = models.PositiveIntegerField()
    job = models.ForeignKey(SimulationJob, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.gpu} {self.engine} efficiencies ({self.created_at:%Y-%m-%d})"

"""GPU memory logs: a time series of what the cards held during a run or a deployment's life."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models import Deployment, Organisation


class MemoryLog(models.Model):
    """A monitoring log of a deployment's GPUs (nvidia-smi -l, DCGM or engine scrapes), kept as uploaded, with
    what it shows (per-GPU peaks, climb, OOMs, restarts, KV) and the health verdict against the commitment."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="memory_logs")
    deployment = models.ForeignKey(
        Deployment, null=True, blank=True, on_delete=models.SET_NULL, related_name="memory_logs"
    )
    name = models.CharField(max_length=255)
    format = models.CharField(max_length=40)
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    content = models.TextField()
    events_text = models.TextField(blank=True, help_text=_("Engine or kernel log scanned for OOM and XID lines"))
    breaker_text = models.TextField(blank=True, help_text=_("Circuit-breaker events, JSON lines"))
    committed_bytes_per_gpu = models.BigIntegerField(null=True, blank=True)
    hours_required = models.PositiveIntegerField(default=72)
    utc_offset_minutes = models.IntegerField(default=0, help_text=_("The zone nvidia-smi's local times were in"))
    analysis = models.JSONField(default=dict)
    verdict = models.JSONField(default=dict)
    series = models.JSONField(default=dict, help_text=_("Per-GPU memory over time, thinned for charts"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name

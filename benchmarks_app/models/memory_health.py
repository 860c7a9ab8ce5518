"""The memory health report of a deployment's 72-hour sentinel (issue 20): the imported sentinel file (kept gzipped,
with its metadata and SHA-256), the criteria judged on it, the verdict and the signed PDF (显存健康报告).

Imported at the end of benchmarks_app/models.py, so that Django finds it as a model of the app."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models import Deployment, Organisation


class MemoryHealthReport(models.Model):
    """One sentinel file of one host of a deployment, judged and signed by a worker
    (reports.services.health_reports.sentinel_evaluate). `criteria` is a list of {code, verdict ("pass" | "fail"),
    title, text, evidence} in the report's language; `verdict` is empty until the worker finished."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    class Verdict(models.TextChoices):
        PASS = "pass", _("Pass")
        FAIL = "fail", _("Fail")

    class Language(models.TextChoices):
        ENGLISH = "en", "English"
        CHINESE = "zh-hans", "简体中文"

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="health_reports")
    deployment = models.ForeignKey(Deployment, on_delete=models.CASCADE, related_name="health_reports")
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.ENGLISH)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=200, blank=True)
    error = models.JSONField(null=True, blank=True)

    file_name = models.CharField(max_length=255)
    file_size_bytes = models.PositiveBigIntegerField()
    file_sha256 = models.CharField(max_length=64, help_text=_("SHA-256 of the sentinel file as uploaded"))
    file_gz = models.BinaryField(editable=False, help_text=_("The sentinel file as uploaded, gzip-compressed"))
    file_meta = models.JSONField(default=dict, help_text=_("The sentinel file's header and summary"))
    host = models.CharField(max_length=255)
    gpu_uuids = models.JSONField(default=list, help_text=_("The watched GPUs' UUIDs, sorted"))
    watched_from = models.DateTimeField(help_text=_("The first sample"))
    watched_to = models.DateTimeField(help_text=_("The last sample"))

    verdict = models.CharField(max_length=4, choices=Verdict.choices, blank=True)
    criteria = models.JSONField(default=list, blank=True)
    coverage_hours = models.FloatField(null=True, blank=True)
    peak_bytes = models.BigIntegerField(null=True, blank=True, help_text=_("The highest GPU memory used on a card"))
    committed_bytes_per_gpu = models.BigIntegerField(null=True, blank=True)
    series = models.JSONField(default=dict, blank=True, help_text=_("Per-GPU memory over time, thinned for charts"))

    pdf = models.BinaryField(null=True, blank=True, editable=False, help_text=_("The signed PDF"))
    sha256 = models.CharField(max_length=64, blank=True, help_text=_("SHA-256 of the signed PDF"))
    signer_certificate_sha256 = models.CharField(max_length=64, blank=True)
    signed_at = models.DateTimeField(null=True, blank=True)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["deployment", "status", "-created_at"], name="health_report_newest")]

    def __str__(self) -> str:
        return f"{self.deployment} · {self.host} · {self.watched_from:%Y-%m-%d}"

"""Benchmark runs as stored: the uploaded file, a sweep's series, a run's summary and its per-request records."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models import Deployment, Gpu, LlmModel, Organisation


class BenchmarkFile(models.Model):
    """An uploaded result file, kept as it came (the runs point back to it)."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="benchmark_files")
    name = models.CharField(max_length=255)
    format = models.CharField(max_length=40, help_text=_("The importer that read it"))
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    content = models.TextField(help_text=_("The file as uploaded"))
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name


class BenchmarkSeries(models.Model):
    """Runs that belong together: the benchmarks of one sweep file, in their order."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="benchmark_series")
    name = models.CharField(max_length=255)
    file = models.ForeignKey(BenchmarkFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="series")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name


class BenchmarkRun(models.Model):
    """One run: who, when, which deployment, engine, GPU, model, tool and version, load and settings, the summary
    metrics (canonical keys, each with its source) and the tool's own summary."""

    class Status(models.TextChoices):
        IMPORTING = "importing", _("Importing")
        RUNNING = "running", _("Measuring")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="benchmark_runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    file = models.ForeignKey(BenchmarkFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    series = models.ForeignKey(BenchmarkSeries, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    series_index = models.PositiveIntegerField(default=0)
    index_in_file = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=255)
    deployment = models.ForeignKey(
        Deployment, null=True, blank=True, on_delete=models.SET_NULL, related_name="benchmark_runs"
    )
    model = models.ForeignKey(LlmModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    model_name = models.CharField(max_length=255, blank=True, help_text=_("The model as the file names it"))
    gpu = models.ForeignKey(Gpu, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    gpu_count = models.PositiveSmallIntegerField(null=True, blank=True)
    tp = models.PositiveSmallIntegerField(null=True, blank=True)
    engine = models.CharField(max_length=20, blank=True)
    engine_version = models.CharField(max_length=60, blank=True)
    format = models.CharField(max_length=40)
    tool = models.CharField(max_length=40)
    tool_version = models.CharField(max_length=60, blank=True)
    label = models.CharField(max_length=255, blank=True)
    backend = models.CharField(max_length=120, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    load = models.JSONField(default=dict)
    settings = models.JSONField(default=dict)
    completed = models.PositiveIntegerField(null=True, blank=True)
    failed = models.PositiveIntegerField(null=True, blank=True)
    incomplete = models.PositiveIntegerField(null=True, blank=True)
    metrics = models.JSONField(default=dict, help_text=_("Canonical metrics (METRICS.md), each with its source"))
    reported = models.JSONField(default=dict, help_text=_("The tool's own summary fields"))
    notes = models.JSONField(default=list, help_text=_("Where a tool's field could not be mapped exactly"))
    output_tokens_per_s = models.FloatField(null=True, blank=True)
    requests_per_s = models.FloatField(null=True, blank=True)
    total_tokens_per_s = models.FloatField(null=True, blank=True)
    request_count = models.PositiveIntegerField(default=0, help_text=_("Per-request records in the file"))
    distributions = models.JSONField(default=dict, help_text=_("CDFs of TTFT, TPOT, ITL and E2E from the records"))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DONE)
    progress = models.FloatField(default=1.0)
    progress_message = models.CharField(max_length=300, blank=True)
    error = models.JSONField(null=True, blank=True)
    server_series = models.JSONField(
        default=dict,
        blank=True,
        help_text=_(
            "The endpoint's metrics scraped during the run (KV-cache usage, running and waiting requests), for charts"
        ),
    )
    verdict = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("The scenario's pass/fail with its criteria and the memory verdict (our load tests)"),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["organisation", "-created_at"])]

    def __str__(self) -> str:
        return self.name


class BenchmarkRequest(models.Model):
    """One request of a run, as the file recorded it (None where it does not say)."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="requests")
    index = models.PositiveIntegerField()
    status = models.CharField(max_length=12)
    error = models.TextField(blank=True)
    start_s = models.FloatField(null=True, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True)
    ttft_sched_ms = models.FloatField(null=True, blank=True, help_text=_("From the scheduled send (open loops)"))
    e2e_ms = models.FloatField(null=True, blank=True)
    tpot_ms = models.FloatField(null=True, blank=True)
    itl_ms = models.JSONField(default=list, help_text=_("Inter-chunk gaps in order"))
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="unique_benchmark_request_index")]

    def __str__(self) -> str:
        return f"request {self.index} of run {self.run_id}"

"""Benchmark runs imported from the field's tools (and, later, our own load tests), on one footing
(`benchmarks_app.results.run`): the raw file kept, one row per run with its canonical metrics, and the per-request records
in bulk. Runs from one file holding several (a sweep) form a series."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmarks_app.endpoint_urls import URL_MAX_LENGTH, validate_base_url, validate_metrics_url
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


class Endpoint(models.Model):
    """A customer's inference endpoint that load tests may target (they target registered endpoints only). Admins of
    the organisation register, change and delete them; every member sees them.

    The API key is stored encrypted (benchmarks_app.endpoint_secrets) and never shown back: pages and the API say
    only whether one is set, and neither __str__ nor __repr__ names it. The load generator reads it with
    benchmarks_app.endpoint_services.endpoint_api_key. URLs follow benchmarks_app.endpoint_urls (http/https, no
    credentials, no fragment; private and loopback addresses allowed)."""

    class Kind(models.TextChoices):
        VLLM = "vllm", "vLLM"
        SGLANG = "sglang", "SGLang"
        TGI = "tgi", "TGI"
        TRTLLM = "trtllm", "TensorRT-LLM"
        OPENAI = "openai", _("Generic OpenAI-compatible")
        SIMULATOR = "simulator", _("Bundled simulator")

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="endpoints")
    name = models.CharField(max_length=200)
    base_url = models.CharField(
        max_length=URL_MAX_LENGTH,
        validators=[validate_base_url],
        help_text=_("The server's root, e.g. http://10.0.0.5:8000 (load tests add /v1/...)"),
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.VLLM)
    model_name = models.CharField(max_length=255, help_text=_("The model name the server serves (the API's model)"))
    metrics_url = models.CharField(
        max_length=URL_MAX_LENGTH,
        blank=True,
        validators=[validate_metrics_url],
        help_text=_("Prometheus metrics, e.g. http://10.0.0.5:8000/metrics"),
    )
    api_key_encrypted = models.TextField(
        blank=True, editable=False, help_text="Fernet token of the API key; empty when none is set"
    )
    failure_command = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "The command a failure-injection test runs to kill a worker or drop a replica (argv, run without a shell by "
            "the load-test worker), e.g. kubectl delete pod vllm-0"
        ),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [models.UniqueConstraint(fields=["organisation", "name"], name="unique_endpoint_name")]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<Endpoint {self.pk}: {self.name} ({self.kind})>"

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)


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


from benchmarks_app.sentinel_models import MemoryHealthReport  # noqa: E402, F401 - the sentinel's model (issue 20)

"""Catalogs (GPUs, models), organisations and saved estimates. Byte counts are integers named *_bytes."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Organisation(models.Model):
    """A customer-facing team (an integrator). Users see only their own organisation's data."""

    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's organisation. One organisation per user. An admin of the organisation manages what is shared by all
    its members and needs care (the inference endpoints load tests may target, with their API keys); a member uses
    them. Django superusers pass every role check (sizing.access)."""

    class Role(models.TextChoices):
        """What each role may do: sizing/access.py."""

        ADMIN = "admin", _("Admin")
        ENGINEER = "engineer", _("Engineer")
        REVIEWER = "reviewer", _("Reviewer")
        SIGNER = "signer", _("Signer")
        SALES = "sales", _("Sales")

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ENGINEER)

    def __str__(self) -> str:
        return f"{self.user} @ {self.organisation}"


class ApiKey(models.Model):
    """A user's key for scripts (Authorization: Bearer <key>): shown once when created, stored as its SHA-256 (the
    key is 256 random bits, so a plain hash is enough and checking it costs microseconds). `prefix` is the key's
    public start, unique, shown in lists and used to find the row. A revoked key stays listed and never works
    again. The key acts as its user, with the user's role and organisation (sizing/apikeys.py)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=24, unique=True)
    key_sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class Gpu(models.Model):
    """A GPU model from public datasheets. `memory_bytes` is what the driver reports where known."""

    slug = models.SlugField(max_length=80, unique=True)
    vendor = models.CharField(max_length=20)
    name = models.CharField(max_length=120)
    architecture = models.CharField(max_length=40, blank=True)
    form_factor = models.CharField(max_length=20, blank=True)
    marketed_memory_gb = models.PositiveIntegerField(help_text=_("Memory on the datasheet, in GB"))
    memory_type = models.CharField(max_length=20, blank=True)
    nvidia_smi_memory_bytes = models.BigIntegerField(
        null=True, blank=True, help_text=_("Total memory as nvidia-smi / rocm-smi reports it, in bytes")
    )
    cuda_total_bytes = models.BigIntegerField(
        null=True,
        blank=True,
        help_text=_(
            "Total memory as CUDA sees it (cudaMemGetInfo, what vLLM multiplies by gpu_memory_utilization), "
            "in bytes; below the nvidia-smi total by the driver's reservation"
        ),
    )
    sm_count = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Streaming multiprocessors (compute units on AMD cards)")
    )
    compute_capability = models.CharField(
        max_length=8, blank=True, help_text=_("CUDA compute capability, e.g. 8.9; empty for AMD cards")
    )
    nvswitch = models.BooleanField(default=False, help_text=_("An HGX/DGX board whose GPUs meet through NVSwitch"))
    memory_bandwidth_bytes_per_s = models.BigIntegerField()
    tflops_dense = models.JSONField(default=dict, help_text=_("Dense TFLOP/s (TOPS for int8) per dtype"))
    interconnect = models.JSONField(default=dict)
    pcie_generation = models.PositiveSmallIntegerField(null=True, blank=True)
    tdp_w = models.PositiveIntegerField(null=True, blank=True)
    price_per_hour_usd = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    sources = models.JSONField(default=list)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["vendor", "slug"]

    def __str__(self) -> str:
        return self.name

    @property
    def memory_bytes(self) -> int:
        """The capacity estimates use: the driver's figure when known, else the datasheet's GB."""
        return self.nvidia_smi_memory_bytes or self.marketed_memory_gb * 10**9


class LlmModel(models.Model):
    """A model: from the catalog (organisation empty, visible to all) or uploaded by an organisation."""

    slug = models.CharField(max_length=200, help_text=_("Hugging Face repo id, e.g. meta-llama/Meta-Llama-3-8B"))
    organisation = models.ForeignKey(
        Organisation, null=True, blank=True, on_delete=models.CASCADE, related_name="models"
    )
    model_type = models.CharField(max_length=80, blank=True)
    config = models.JSONField(help_text=_("The raw config.json"))
    quant_config = models.JSONField(null=True, blank=True, help_text=_("hf_quant_config.json, when published"))
    architecture = models.JSONField(default=dict, help_text=_("The parsed architecture"))
    parameters_total = models.BigIntegerField(null=True, blank=True)
    supported = models.BooleanField(default=True)
    unsupported_reason = models.TextField(blank=True)
    source = models.CharField(max_length=300, blank=True)
    checkpoint = models.JSONField(
        null=True, blank=True, help_text=_("Checkpoint facts from model.safetensors.index.json / safetensors headers")
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(
                fields=["slug"], condition=models.Q(organisation__isnull=True), name="unique_catalog_model_slug"
            ),
            models.UniqueConstraint(fields=["organisation", "slug"], name="unique_org_model_slug"),
        ]

    def __str__(self) -> str:
        return self.slug


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


class WorkloadProfile(models.Model):
    """A customer's traffic as request classes (llm_sizing_loadgen.workload): a shipped sample (organisation empty,
    visible to all, read-only), written by hand, or fitted to a CSV of request logs (with its fit report)."""

    class Source(models.TextChoices):
        SAMPLE = "sample", _("Sample")
        MANUAL = "manual", _("Written by hand")
        CSV = "csv", _("Imported from a CSV log")

    organisation = models.ForeignKey(
        Organisation, null=True, blank=True, on_delete=models.CASCADE, related_name="workload_profiles"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    profile = models.JSONField(help_text=_("The profile in its JSON form (profile_to_dict)"))
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.MANUAL)
    fit = models.JSONField(null=True, blank=True, help_text=_("How the profile fits the imported log"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(organisation__isnull=True), name="unique_sample_workload_name"
            ),
            models.UniqueConstraint(fields=["organisation", "name"], name="unique_org_workload_name"),
        ]

    def __str__(self) -> str:
        return self.name


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


class Deployment(models.Model):
    """A customer deployment: the plan (model, GPU, count, TP, engine and its release, image) and the fingerprints of
    the machines it runs on. Fingerprints are checked against the plan when they are read, so a changed plan
    re-checks them. The machines the commitment rests on are chosen by a person (`machines`: DeploymentMachine, one
    fingerprint version per host; sizing.deployment_selectors.chosen_machines), never taken from the newest upload."""

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="deployments")
    name = models.CharField(max_length=200)
    customer = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True)
    model = models.ForeignKey(LlmModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    gpu = models.ForeignKey(
        Gpu,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The GPU the plan was sized for (the customer's claim)"),
    )
    gpu_count = models.PositiveSmallIntegerField(null=True, blank=True, help_text=_("GPUs per server in the plan"))
    tp = models.PositiveSmallIntegerField(default=1)
    engine = models.CharField(max_length=20, default="vllm")
    engine_version = models.CharField(
        max_length=60,
        blank=True,
        help_text=_("The engine release the plan is sized for, X.Y.Z (empty: the newest release modelled)"),
    )
    usage_context = models.CharField(
        max_length=10,
        default="serve",
        help_text=_("vLLM: serve (vllm serve, the OpenAI server) or llm (the Python LLM class)"),
    )
    install = models.CharField(
        max_length=10, default="pip", help_text=_("How the engine is installed: pip or docker (the official image)")
    )
    image_cuda_version = models.CharField(
        max_length=20, blank=True, help_text=_("The CUDA version the serving image was built for")
    )
    max_model_len = models.PositiveIntegerField(null=True, blank=True)
    workload = models.ForeignKey(
        "WorkloadProfile",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The customer's traffic (the report's commitment holds at this load)"),
    )
    rate_per_s = models.FloatField(null=True, blank=True, help_text=_("Requests per second at the busiest hour"))
    slo = models.JSONField(
        default=dict, blank=True, help_text=_("Latency SLOs in ms: ttft_ms, tpot_ms, e2e_ms (each optional)")
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [models.UniqueConstraint(fields=["organisation", "name"], name="unique_org_deployment_name")]

    def __str__(self) -> str:
        return self.name


class Fingerprint(models.Model):
    """What one server of a deployment measured at one time: the raw outputs as uploaded and the merged facts
    (sizing.fingerprint.merge: GPUs, versions, topology, host, parse findings). Versioned by host and capture time.

    Which host an upload is a version of comes from the file (sizing.fingerprint.identity): its GPUs' UUIDs, else its
    host name; an upload that names neither is a host of its own, named after its GPUs (`host_named` False), until a
    person merges it into another host (sizing.machine_services.fingerprint_host_merge). `host_key` groups a host's
    versions within the deployment; `host` is the name shown (the file's, the uploader's or the derived one)."""

    deployment = models.ForeignKey(Deployment, on_delete=models.CASCADE, related_name="fingerprints")
    host = models.CharField(max_length=255)
    host_key = models.CharField(
        max_length=64,
        blank=True,
        db_index=True,
        help_text=_("The host this is a version of, within the deployment (sizing.fingerprint.identity)"),
    )
    host_named = models.BooleanField(
        default=True, help_text=_("The host name came from the file or the uploader (not derived from the GPUs)")
    )
    gpu_uuids = models.JSONField(default=list, blank=True, help_text=_("The GPUs' UUIDs, sorted"))
    captured_at = models.DateTimeField(help_text=_("When the probe ran (the upload time for pasted outputs)"))
    label = models.CharField(max_length=100, blank=True, help_text=_("e.g. staging, production, after upgrade"))
    facts = models.JSONField(help_text=_("The merged fingerprint"))
    raw = models.JSONField(help_text=_("The uploaded texts: [{name, text}]"))
    size_bytes = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-captured_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["deployment", "sha256"], name="unique_deployment_fingerprint")]
        indexes = [models.Index(fields=["deployment", "host", "captured_at"])]

    def __str__(self) -> str:
        return f"{self.host} at {self.captured_at:%Y-%m-%d %H:%M}"


class DeploymentMachine(models.Model):
    """A machine the deployment runs on, chosen by a person: one host (`host_key`) with the one fingerprint version
    the commitment rests on. The report's hardware is these machines, never the newest upload."""

    deployment = models.ForeignKey(Deployment, on_delete=models.CASCADE, related_name="machines")
    fingerprint = models.ForeignKey(Fingerprint, on_delete=models.CASCADE, related_name="machine_choices")
    host_key = models.CharField(max_length=64, help_text=_("The fingerprint's host_key (one version per host)"))
    chosen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    chosen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["deployment", "host_key"]
        constraints = [
            models.UniqueConstraint(fields=["deployment", "host_key"], name="unique_deployment_machine_host"),
            models.UniqueConstraint(fields=["deployment", "fingerprint"], name="unique_deployment_machine_fingerprint"),
        ]

    def __str__(self) -> str:
        return f"{self.deployment} · {self.fingerprint}"

"""The catalogs: GPUs (memory in bytes, bandwidth, compute) and LLMs (architecture, parameter count, weight formats)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.accounts import Organisation


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

"""A customer's deployment: the plan (model, GPU, engine and version, parallelism, workload) a commitment is about."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.accounts import Organisation
from sizing.models.catalog import Gpu, LlmModel


class Deployment(models.Model):
    """A customer deployment: the plan (model, GPU, count, TP, engine and its release, image) and the fingerprints of
    the machines it runs on. Fingerprints are checked against the plan when they are read, so a changed plan
    re-checks them. The machines the commitment rests on are chosen by a person (`machines`: DeploymentMachine, one
    fingerprint version per host; sizing.selectors.deployments.chosen_machines), never taken from the newest upload."""

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

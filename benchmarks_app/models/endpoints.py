"""Inference endpoints an admin registered: the only servers load tests may reach (their keys encrypted at rest)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmarks_app.kernel.endpoint_urls import URL_MAX_LENGTH, validate_base_url, validate_metrics_url
from sizing.models import Organisation


class Endpoint(models.Model):
    """A customer's inference endpoint that load tests may target (they target registered endpoints only). Admins of
    the organisation register, change and delete them; every member sees them.

    The API key is stored encrypted (benchmarks_app.kernel.endpoint_secrets) and never shown back: pages and the API say
    only whether one is set, and neither __str__ nor __repr__ names it. The load generator reads it with
    benchmarks_app.services.endpoints.endpoint_api_key. URLs follow benchmarks_app.kernel.endpoint_urls (http/https, no
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

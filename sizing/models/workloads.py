"""Saved workload profiles: the customer's traffic as request classes (length distributions, arrivals)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.accounts import Organisation


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

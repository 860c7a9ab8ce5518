"""Machine fingerprints (what a server measured, versioned by host) and the machines a deployment's plan chose."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models.deployments import Deployment


class Fingerprint(models.Model):
    """What one server of a deployment measured at one time: the raw outputs as uploaded and the merged facts
    (sizing.fingerprint.merge: GPUs, versions, topology, host, parse findings). Versioned by host and capture time.

    Which host an upload is a version of comes from the file (sizing.fingerprint.identity): its GPUs' UUIDs, else its
    host name; an upload that names neither is a host of its own, named after its GPUs (`host_named` False), until a
    person merges it into another host (sizing.services.machines.fingerprint_host_merge). `host_key` groups a host's
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

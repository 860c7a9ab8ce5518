"""The audit trail of a report: every action on it, append-only (the database refuses updates and deletes)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from reports.models.reports import ImmutableVersionError, ReportVersion


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> int:
        raise ImmutableVersionError("the audit log is append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableVersionError("the audit log is append-only")


class ReportAuditEvent(models.Model):
    """Who created, submitted, returned, approved, signed, downloaded or verified a version, and when. Append-only."""

    class Action(models.TextChoices):
        CREATED = "created", _("Created")
        SUBMITTED = "submitted", _("Submitted for review")
        RETURNED = "returned", _("Returned to draft")
        APPROVED = "approved", _("Approved")
        SIGNED = "signed", _("Signed")
        DOWNLOADED = "downloaded", _("Downloaded")
        VERIFIED = "verified", _("Verified")
        WAIVER_REQUESTED = "waiver_ask", _("Waiver requested")
        WAIVER_GRANTED = "waiver_grant", _("Waiver granted")
        WAIVER_REFUSED = "waiver_deny", _("Waiver refused")

    version = models.ForeignKey(ReportVersion, on_delete=models.PROTECT, related_name="audit")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    actor_name = models.CharField(max_length=150, help_text=_("The user's name when it happened"))
    action = models.CharField(max_length=12, choices=Action.choices)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.version}: {self.action} by {self.actor_name}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ImmutableVersionError("the audit log is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableVersionError("the audit log is append-only")

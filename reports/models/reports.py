"""Reports and their versions: a deployment's memory commitment, drafted, reviewed, waived where allowed and signed."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from sizing.models import Deployment, Organisation

IMMUTABLE_MESSAGE = "a signed report version never changes: make a new version instead"


class ImmutableVersionError(ValidationError):
    """A write to a signed version (or to the audit log) was refused."""


class Report(models.Model):
    """One customer deployment's commitment, in one language; its content lives in its versions."""

    class Language(models.TextChoices):
        ENGLISH = "en", "English"
        CHINESE = "zh-hans", "简体中文"

    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="reports")
    deployment = models.ForeignKey(
        Deployment,
        on_delete=models.PROTECT,
        related_name="reports",
        help_text=_("A deployment with reports cannot be deleted"),
    )
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.ENGLISH)
    title = models.CharField(max_length=255)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.title


class ReportVersionQuerySet(models.QuerySet):
    """Bulk writes that would touch a signed version are refused before they reach the database."""

    def update(self, **kwargs: Any) -> int:
        if self.filter(status=ReportVersion.Status.SIGNED).exists():
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self.filter(status=ReportVersion.Status.SIGNED).exists():
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        return super().delete()


class ReportVersion(models.Model):
    """A version of a report: the content snapshot it was drafted from (the evidence as it stood), what changed from
    the previous version, who wrote, reviewed, approved and signed it, and once signed the PDF with its SHA-256."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        IN_REVIEW = "in_review", _("In review")
        APPROVED = "approved", _("Approved")
        SIGNED = "signed", _("Signed")

    report = models.ForeignKey(Report, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    content = models.JSONField(help_text=_("The report's content: the evidence as it stood when drafted"))
    changes = models.JSONField(default=list, blank=True, help_text=_("What changed from the previous version"))
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Who approved it (never its author)"),
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    signer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    signed_at = models.DateTimeField(null=True, blank=True)
    pdf = models.BinaryField(null=True, blank=True, editable=False, help_text=_("The signed PDF"))
    sha256 = models.CharField(max_length=64, blank=True, help_text=_("SHA-256 of the signed PDF"))
    signer_certificate_sha256 = models.CharField(max_length=64, blank=True)
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=200, blank=True)
    error = models.JSONField(null=True, blank=True)
    sign_requested_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("When its signing was last queued (the reaper fails a signing that never ends)"),
    )
    draft_requested_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When the gathering of its evidence was last queued (a worker gathers it)")
    )
    drafted_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When its evidence was gathered; empty while a worker gathers it")
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReportVersionQuerySet.as_manager()

    class Meta:
        ordering = ["report", "-number"]
        constraints = [models.UniqueConstraint(fields=["report", "number"], name="unique_report_version")]
        indexes = [models.Index(fields=["sha256"])]
        permissions = [("sign_reportversion", "Can sign report versions")]

    def __str__(self) -> str:
        return f"{self.report} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._stored_status() == self.Status.SIGNED:
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if self._stored_status() == self.Status.SIGNED:
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        return super().delete(*args, **kwargs)

    @property
    def drafting(self) -> bool:
        """A worker is gathering its evidence (its content is not there yet)."""
        return self.drafted_at is None and self.status == self.Status.DRAFT

    @property
    def label(self) -> str:
        """How the PDF and the verification name this version: "report 12 v3"."""
        return f"report {self.report_id} v{self.number}"

    def _stored_status(self) -> str | None:
        if self.pk is None:
            return None
        return type(self).objects.filter(pk=self.pk).values_list("status", flat=True).first()


class ChecklistWaiver(models.Model):
    """An item of a version's evidence checklist that is not done, carried by its author's waiver request with the
    reason, and the reviewer's decision (granted or refused, with who and why). A version goes for review only with
    every item done or carrying a request, is approved only with every item done or granted (reports.services.reports); the
    granted ones are printed under "Exceptions". A signed version's waivers never change."""

    class Status(models.TextChoices):
        REQUESTED = "requested", _("Requested")
        GRANTED = "granted", _("Granted")
        REFUSED = "refused", _("Refused")

    version = models.ForeignKey(ReportVersion, on_delete=models.PROTECT, related_name="waivers")
    item = models.CharField(max_length=64, help_text=_("The checklist item's code"))
    reason = models.TextField(help_text=_("Why the commitment may stand without this evidence"))
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    requested_by_name = models.CharField(max_length=150)
    requested_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.REQUESTED)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by_name = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["version", "pk"]
        constraints = [models.UniqueConstraint(fields=["version", "item"], name="unique_version_waiver")]

    def __str__(self) -> str:
        return f"{self.version}: waiver of {self.item} ({self.status})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if ReportVersion.objects.filter(pk=self.version_id, status=ReportVersion.Status.SIGNED).exists():
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if ReportVersion.objects.filter(pk=self.version_id, status=ReportVersion.Status.SIGNED).exists():
            raise ImmutableVersionError(IMMUTABLE_MESSAGE)
        return super().delete(*args, **kwargs)

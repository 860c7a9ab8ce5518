"""Organisations, their members and the members' API keys: who a request acts for."""

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
    them. Django superusers pass every role check (sizing.kernel.access)."""

    class Role(models.TextChoices):
        """What each role may do: sizing/kernel/access.py."""

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
    again. The key acts as its user, with the user's role and organisation (sizing/kernel/apikeys.py)."""

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

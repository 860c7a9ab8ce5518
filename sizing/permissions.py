"""Who may do what inside an organisation. Every member reads the organisation's data; an admin also manages what
all members share and that needs care (the inference endpoints load tests may target, with their API keys).

The rule: a user is an admin when their Membership's role is "admin", or when they are a Django superuser (the
operator of the service). Staff status alone does not make an admin. A user without a membership is no admin.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from sizing.models import Membership

ADMIN_ONLY_MESSAGE = "only an admin of your organisation can do this"


def membership_is_admin(user: Any) -> bool:
    """Whether `user` administers their organisation (see the module's rule)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    return Membership.objects.filter(user=user, role=Membership.Role.ADMIN).exists()


class IsOrganisationAdmin(BasePermission):
    """DRF: admins only (a member gets 403 in the API's error shape)."""

    message = ADMIN_ONLY_MESSAGE

    def has_permission(self, request: Any, view: Any) -> bool:
        return membership_is_admin(request.user)


class IsOrganisationAdminOrReadOnly(BasePermission):
    """DRF: any signed-in member reads (GET, HEAD, OPTIONS); only admins write."""

    message = ADMIN_ONLY_MESSAGE

    def has_permission(self, request: Any, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or membership_is_admin(request.user)

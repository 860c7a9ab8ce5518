"""An organisation's users, managed by its admins: add a user with a role (a one-time password to hand over),
change a role, deactivate or reactivate, set a new one-time password. An organisation always keeps an active
admin: the last one cannot be demoted or deactivated. Users of another organisation are not found (404).

A deactivated user cannot sign in, and their API keys stop working (the key authentication checks `is_active`).
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.models import Membership, Organisation

USERNAME_MAX_CHARS = 150
TEMPORARY_PASSWORD_BYTES = 12


def members_of(*, organisation: Organisation) -> Any:
    return Membership.objects.filter(organisation=organisation).select_related("user").order_by("user__username")


def member_get(*, organisation: Organisation, user_id: int) -> Membership | None:
    return members_of(organisation=organisation).filter(user_id=user_id).first()


def _refusal(field: str, reason: str, message: str, **values: Any) -> SizingError:
    """A 400 naming the field, with a stable `reason` (pages word it in the user's language) and its values."""
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=message,
        extra={"fields": {field: [message]}, "reason": reason, **values},
    )


def _temporary_password() -> str:
    return secrets.token_urlsafe(TEMPORARY_PASSWORD_BYTES)


@transaction.atomic
def member_create(*, organisation: Organisation, username: str, role: str, email: str = "") -> tuple[Membership, str]:
    """A new user of `organisation` with `role`; returns the membership and a one-time password to hand over."""
    username = username.strip()
    user_model = get_user_model()
    if not username or len(username) > USERNAME_MAX_CHARS:
        raise _refusal("username", "username_length", f"give a user name of 1 to {USERNAME_MAX_CHARS} characters")
    try:
        user_model.username_validator(username)
    except ValidationError:
        raise _refusal(
            "username", "username_characters", "a user name has letters, digits and @ . + - _ only"
        ) from None
    if user_model.objects.filter(username__iexact=username).exists():
        raise _refusal("username", "username_taken", f"the user name {username!r} is taken", username=username)
    if role not in Membership.Role.values:
        raise _refusal("role", "role_unknown", f"unknown role {role!r}; one of {', '.join(Membership.Role.values)}")
    password = _temporary_password()
    user = user_model.objects.create_user(username=username, email=email.strip(), password=password)
    membership = Membership.objects.create(user=user, organisation=organisation, role=role)
    return membership, password


def _other_active_admins(membership: Membership) -> int:
    return (
        Membership.objects.filter(
            organisation=membership.organisation, role=Membership.Role.ADMIN, user__is_active=True
        )
        .exclude(pk=membership.pk)
        .count()
    )


@transaction.atomic
def member_update(*, membership: Membership, role: str | None = None, active: bool | None = None) -> Membership:
    """Change a member's role and/or whether they may sign in; the organisation keeps at least one active admin."""
    membership = Membership.objects.select_for_update().select_related("user").get(pk=membership.pk)
    if role is not None and role not in Membership.Role.values:
        raise _refusal("role", "role_unknown", f"unknown role {role!r}; one of {', '.join(Membership.Role.values)}")
    stays_admin = (role or membership.role) == Membership.Role.ADMIN and (
        active if active is not None else membership.user.is_active
    )
    if membership.role == Membership.Role.ADMIN and not stays_admin and _other_active_admins(membership) == 0:
        raise _refusal(
            "role", "last_admin", "this is the organisation's last active admin: make someone else an admin first"
        )
    if role is not None:
        membership.role = role
        membership.save(update_fields=["role"])
    if active is not None and membership.user.is_active != active:
        membership.user.is_active = active
        membership.user.save(update_fields=["is_active"])
    return membership


@transaction.atomic
def member_password_reset(*, membership: Membership) -> str:
    """A new one-time password for the member (their sessions end: Django rotates the session hash)."""
    password = _temporary_password()
    try:
        validate_password(password, user=membership.user)
    except ValidationError:  # pragma: no cover - 16 random characters pass the configured validators
        password = _temporary_password() + _temporary_password()
    membership.user.set_password(password)
    membership.user.save(update_fields=["password"])
    return password

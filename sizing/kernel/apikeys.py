"""Per-user API keys for scripts and sales tooling, and the API's throttles.

A key looks like `lls_3f9a1c0d7e52_6J0...` (43 random URL-safe characters after the public prefix): the prefix
finds the row, the SHA-256 of the whole key is compared in constant time, the key itself is never stored, logged
or shown again after it was created. A revoked or expired key answers 401 like an unknown one.

Throttles count per user, all of a user's keys together (a user may hold 20): a sustained rate and a burst rate
(`SIZING_THROTTLE_SUSTAINED`, `SIZING_THROTTLE_BURST`); a browser session has its own, higher rate
(`SIZING_THROTTLE_SESSION`). Requests without credentials and requests whose key is refused count per client address
(`SIZING_THROTTLE_ANONYMOUS`): they are counted while authenticating, since DRF checks permissions (a 401) before its
throttles and would never count them. The counters live in Django's cache. A throttled call is a 429 with
Retry-After and the API's error shape.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from sizing.models import ApiKey

KEY_PREFIX = "lls_"
PREFIX_HEX = 12  # 48 bits of public id: collisions are retried
SECRET_BYTES = 32
MAX_ACTIVE_KEYS_PER_USER = 20
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most once a minute per key
KEYWORDS = (b"bearer", b"token")


def _sha256(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@transaction.atomic
def api_key_create(*, user: Any, name: str, expires_at: datetime | None = None) -> tuple[ApiKey, str]:
    """A new key for `user`: the row and the key, which the caller shows once and forgets."""
    name = name.strip()
    if not name:
        raise exceptions.ValidationError({"name": ["give the key a name (what script or tool uses it)"]})
    if expires_at is not None and expires_at <= timezone.now():
        raise exceptions.ValidationError({"expires_at": ["the expiry must be in the future"]})
    active = ApiKey.objects.select_for_update().filter(user=user, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_KEYS_PER_USER:
        raise exceptions.ValidationError(
            {"name": [f"you have {active} active keys, the most allowed: revoke one you no longer use"]}
        )
    while True:
        prefix = KEY_PREFIX + secrets.token_hex(PREFIX_HEX // 2)
        if not ApiKey.objects.filter(prefix=prefix).exists():
            break
    key = f"{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
    row = ApiKey.objects.create(
        user=user, name=name[:100], prefix=prefix, key_sha256=_sha256(key), expires_at=expires_at
    )
    return row, key


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    """Revoke `key` now (revoking twice keeps the first time)."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


def api_key_list_for_user(*, user: Any) -> Any:
    return ApiKey.objects.filter(user=user)


def api_key_get_for_user(*, user: Any, key_id: int) -> ApiKey | None:
    return ApiKey.objects.filter(user=user, pk=key_id).first()


def api_key_status(key: ApiKey, now: datetime | None = None) -> str:
    """active, revoked or expired."""
    now = now or timezone.now()
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= now:
        return "expired"
    return "active"


def api_key_authenticate(raw: str) -> ApiKey | None:
    """The active key row of `raw`, or None (unknown, wrong, revoked, expired, or its user inactive)."""
    if not raw.startswith(KEY_PREFIX) or raw.count("_") < 2 or len(raw) > 200:
        return None
    prefix = raw[: len(KEY_PREFIX) + PREFIX_HEX]
    row = ApiKey.objects.select_related("user").filter(prefix=prefix).first()
    if row is None or not hmac.compare_digest(row.key_sha256, _sha256(raw)):
        return None
    now = timezone.now()
    if api_key_status(row, now) != "active" or not row.user.is_active:
        return None
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
    return row


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer <key>` (or `Token <key>`). A request with a bad key is refused (401), never treated
    as anonymous. Session requests (no header) fall through to the session."""

    def authenticate(self, request: Request) -> tuple[Any, ApiKey] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("give the key as: Authorization: Bearer <key>")
        try:
            raw = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the API key is not valid") from None
        row = api_key_authenticate(raw)
        if row is None:
            anonymous_throttle_check(request)  # guessing keys costs the same rate as calling without one
            raise exceptions.AuthenticationFailed("the API key is not valid (unknown, revoked or expired)")
        return row.user, row

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class _PerKeyUserThrottle(SimpleRateThrottle):
    """Counts the API-key requests of one user, whichever of the user's keys makes them (one counter per user, not
    per key: more keys are not more requests); requests without a key are not counted here."""

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": f"user{request.auth.user_id}"}


class ApiKeyRateThrottle(_PerKeyUserThrottle):
    """A user's sustained rate over all of the user's keys (`SIZING_THROTTLE_SUSTAINED`, 3000/hour by default)."""

    scope = "sustained"


class ApiKeyBurstThrottle(_PerKeyUserThrottle):
    """A user's burst rate over all of the user's keys (`SIZING_THROTTLE_BURST`, 120/min by default)."""

    scope = "burst"


class SessionThrottle(SimpleRateThrottle):
    """A signed-in browser's rate (`SIZING_THROTTLE_SESSION`, 1200/min by default: the pages poll jobs every
    second and estimate as the user types); anonymous requests are not counted."""

    scope = "session"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiKey) or not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": f"user{request.user.pk}"}


class AnonymousThrottle(SimpleRateThrottle):
    """Requests without credentials, and requests whose key is refused, per client address
    (`SIZING_THROTTLE_ANONYMOUS`, 300/min by default)."""

    scope = "anonymous"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def anonymous_throttle_check(request: Request) -> None:
    """Count one anonymous or failed-authentication request of the client's address; over the rate, a 429."""
    throttle = AnonymousThrottle()
    if not throttle.allow_request(request, None):
        raise exceptions.Throttled(wait=throttle.wait())


class AnonymousThrottleAuthentication(BaseAuthentication):
    """Last of the authentication classes: authenticates nobody, and counts the request that no class before it
    authenticated against the anonymous rate. Here rather than among the throttles, which DRF only checks after the
    permissions have refused an anonymous caller (a 401 that would never be counted)."""

    def authenticate(self, request: Request) -> None:
        anonymous_throttle_check(request)
        return None


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of ApiKeyAuthentication: HTTP bearer."""

    target_class = "sizing.kernel.apikeys.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "lls_<prefix>_<secret>",
            "description": "A personal API key created on the API keys page (shown once).",
        }

"""The URLs of a registered inference endpoint: its base URL (the root the OpenAI paths hang off, e.g.
http://10.0.0.5:8000; the load generator adds /v1/completions) and its Prometheus metrics URL.

Rules: http or https only; a host is required; no user name or password in the URL (the API key has its own,
encrypted field; a URL is shown to every member and may end up in logs); no #fragment; the base URL takes no query
string and does not end in /v1 (the load generator adds it). At most URL_MAX_LENGTH characters, no spaces or
control characters.

Private, link-local and loopback addresses and single-label host names (a Kubernetes service, a Compose service)
are allowed on purpose: customers' inference servers sit on private networks, and the bundled simulator listens on
127.0.0.1. Only an organisation's admins register endpoints, and load tests target registered endpoints only; that,
not the address, is the guard against using the service to reach arbitrary hosts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

URL_MAX_LENGTH = 500
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)$")
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]")


@dataclass(frozen=True)
class UrlProblem:
    """Why a URL is refused: a stable `reason` (pages word it in the user's language) and the English message."""

    reason: str
    message: str


def url_problem(value: str, *, base: bool) -> UrlProblem | None:
    """What is wrong with `value` as a base URL (`base`) or a metrics URL, or None."""
    if len(value) > URL_MAX_LENGTH:
        return UrlProblem("url_too_long", f"the URL has {len(value)} characters; the limit is {URL_MAX_LENGTH}")
    if _UNSAFE.search(value):
        return UrlProblem("url_spaces", "the URL contains spaces or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return UrlProblem("url_malformed", "not a URL: write it like http://10.0.0.5:8000")
    if parts.scheme.lower() not in ("http", "https"):
        return UrlProblem("url_scheme", "the URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return UrlProblem("url_credentials", "no user name or password in the URL: enter the API key in its own field")
    if "#" in value:
        return UrlProblem("url_fragment", "no #fragment in the URL")
    host = parts.netloc.rsplit(":", 1)[0] if port is not None or parts.netloc.endswith(":") else parts.netloc
    if not host or not _HOST.match(host):
        return UrlProblem("url_host", "the URL names no valid host: write it like http://10.0.0.5:8000")
    if port == 0:
        return UrlProblem("url_malformed", "not a URL: write it like http://10.0.0.5:8000")
    if base:
        if parts.query or value.endswith("?"):
            return UrlProblem("url_query", "the base URL takes no query string")
        if parts.path.rstrip("/").lower().endswith("/v1"):
            return UrlProblem("url_v1", "give the server's root without /v1 (the load tests add /v1/...)")
    return None


def url_normalised(value: str) -> str:
    """Surrounding spaces and trailing slashes removed ("http://host:8000/" becomes "http://host:8000")."""
    value = value.strip()
    return value.rstrip("/") if "?" not in value and "#" not in value else value


def validate_base_url(value: str) -> None:
    """A model field validator (the Django admin's form): the rules of url_problem for a base URL."""
    problem = url_problem(value, base=True)
    if problem is not None:
        raise ValidationError(problem.message, code=problem.reason)


def validate_metrics_url(value: str) -> None:
    """A model field validator: the rules of url_problem for a metrics URL (an empty one is allowed)."""
    problem = url_problem(value, base=False) if value else None
    if problem is not None:
        raise ValidationError(problem.message, code=problem.reason)

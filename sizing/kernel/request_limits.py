"""Requests that would break a parser or a query are refused before a view sees them: the API's JSON parser (size
and depth limits, NUL characters) and a middleware for NUL in URLs, query strings and form fields. The limits
live in sizing/kernel/json_limits.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser

from sizing.kernel import json_limits


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"
    default_detail = "the request body is too large"


class JsonTooDeepError(exceptions.ParseError):
    default_code = "json_too_deep"


def _nul_refusal(field: str) -> str:
    return f"{field} holds a NUL character (\\u0000), which cannot be stored; remove it"


class LimitedJSONParser(JSONParser):
    """DRF's JSON parser with the body limit (413, read no further than the limit), the depth limit (400) and NUL
    characters refused in keys and strings (400 naming the field)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        limit_bytes = json_limits.JSON_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        length = _content_length(request)
        too_large = (
            f"the JSON body is {{size}} bytes; the limit is {limit_bytes:,} bytes (JSON_MAX_BODY_BYTES): "
            "send files as multipart uploads"
        )
        if length is not None and length > limit_bytes:
            raise BodyTooLarge(too_large.format(size=f"{length:,}"))
        raw = stream.read(limit_bytes + 1) if stream is not None else b""
        if len(raw) > limit_bytes:
            raise BodyTooLarge(too_large.format(size=f"over {limit_bytes:,}"))
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise exceptions.ParseError(f"JSON parse error - the body is not {encoding} text") from error
        try:
            data = json_limits.loads(text, parse_constant=_refuse_constant if self.strict else None)
        except json_limits.JsonTooDeep as error:
            raise JsonTooDeepError(
                f"JSON parse error - {error.msg}: JSON_MAX_DEPTH is {json_limits.JSON_MAX_DEPTH}"
            ) from None
        except ValueError as error:
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
        field = json_limits.nul_path(data) if "\\u0000" in text else None  # NUL only comes in escaped
        if field is not None:
            raise exceptions.ValidationError({field: [_nul_refusal(field)]})
        return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"Out of range float values are not JSON compliant: {name!r}")


def _content_length(request: Any) -> int | None:
    meta = getattr(request, "META", {}) or {}
    try:
        return int(meta.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


def _nul_field(request: HttpRequest) -> str | None:
    """The first place of a request's URL or form fields that holds a NUL character."""
    if "\x00" in request.path:
        return "path"
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "\\u0000")
    if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
        for name, values in request.POST.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return name.replace("\x00", "\\u0000")
    return None


class NulCharacterMiddleware:
    """400 for a NUL character in the path, a query parameter (the API's filters and ordering among them) or a form
    field: PostgreSQL cannot hold it in a query or a row. JSON under /api/, a page elsewhere."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        field = _nul_field(request)
        if field is None:
            return self.get_response(request)
        message = _nul_refusal(field)
        if request.path.startswith("/api/"):
            return JsonResponse(
                {"code": "invalid_input", "message": f"{field}: {message}", "extra": {"fields": {field: [message]}}},
                status=status.HTTP_400_BAD_REQUEST,
            )
        page_message = _("%(field)s holds a NUL character, which cannot be stored; remove it") % {"field": field}
        return render(request, "400_nul.html", {"message": page_message}, status=status.HTTP_400_BAD_REQUEST)

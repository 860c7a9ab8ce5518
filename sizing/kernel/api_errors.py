"""One error shape for the whole API: {"code", "message", "extra"}; field errors under extra.fields."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from sizing.estimator.errors import SizingError, SizingErrorCode


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            return f"{key}: {_first_message(value)}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, SizingError):
        set_rollback()  # nothing half-saved under ATOMIC_REQUESTS
        too_many = exc.code is SizingErrorCode.TOO_MANY_JOBS  # a per-organisation job limit (sizing.kernel.job_budgets)
        return Response(
            exc.as_dict(), status=status.HTTP_429_TOO_MANY_REQUESTS if too_many else status.HTTP_400_BAD_REQUEST
        )
    if isinstance(exc, DjangoPermissionDenied):  # raised by services (e.g. editing a shared sample): same shape
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, Http404):  # Django's (content negotiation's for an unknown ?format=): same shape
        exc = exceptions.NotFound(*exc.args)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = {"code": "invalid_input", "message": _first_message(fields), "extra": {"fields": fields}}
    elif isinstance(exc, exceptions.Throttled):
        retry_after_s = math.ceil(exc.wait) if exc.wait is not None else None
        response.data = {"code": "throttled", "message": str(exc.detail), "extra": {"retry_after_s": retry_after_s}}
    elif isinstance(exc, exceptions.APIException):
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else "error"
        response.data = {"code": code, "message": str(exc.detail), "extra": {}}
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: an unknown URL under /api/ answers in the error shape, elsewhere Django's page."""
    if _is_api(request):
        return JsonResponse(
            {"code": "not_found", "message": f"no API at {request.path}", "extra": {}}, status=status.HTTP_404_NOT_FOUND
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a crash under /api/ answers in the error shape (the details go to the logs), elsewhere Django's
    page."""
    if _is_api(request):
        return JsonResponse(
            {"code": "server_error", "message": "the server failed to answer; the error is logged", "extra": {}},
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    return defaults.server_error(request)


_PAGE_CODES = {
    400: "bad_request",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    500: "server_error",
}


class ApiErrorPageMiddleware:
    """Under /api/, an error that Django answered with an HTML page becomes the error shape, in every mode.

    handler404/handler500 answer JSON only without DEBUG: with it, Django answers an unknown URL or a crash with its
    technical pages (32 KB of HTML and a traceback) before any handler runs, and a bad request (SuspiciousOperation,
    a body over DATA_UPLOAD_MAX_MEMORY_SIZE) gets an HTML page in every mode. DRF's own answers are left alone (its
    browsable API answers HTML on purpose). The error was logged before the page was made; the page is dropped.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code >= 400
            and _is_api(request)
            and not isinstance(response, Response)
            and response.get("Content-Type", "").startswith("text/html")
        ):
            status_code = response.status_code
            if status_code == status.HTTP_404_NOT_FOUND:
                return not_found(request)
            if status_code >= 500:
                return server_error(request)
            code = _PAGE_CODES.get(status_code, "error")
            answer = JsonResponse(
                {"code": code, "message": f"the request was refused ({code.replace('_', ' ')})", "extra": {}},
                status=status_code,
            )
            for header in ("Allow", "Retry-After"):
                if header in response:
                    answer[header] = response[header]
            return answer
        return response


class ApiErrorSerializer(serializers.Serializer):
    """The schema of every error answer."""

    code = serializers.CharField(
        help_text="stable, machine-readable: invalid_input, not_found, not_authenticated, "
        "permission_denied, throttled, ..."
    )
    message = serializers.CharField(help_text="for people, in English")
    extra = serializers.DictField(
        help_text="details: `fields` (field -> messages) for invalid input, `retry_after_s` when throttled"
    )


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's schema plus the error answers every operation can give, in the error shape: 400 (bad
    input), 401/403 (unless the view is open to all), 404 (an id in the path, or an operation that says so), 429."""

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        errors = {"400": "invalid input: extra.fields names each field's problems"}
        if not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions()):
            errors["401"] = "no or bad credentials"
            errors["403"] = "not allowed for this user's role"
            errors["429"] = "throttled: extra.retry_after_s"
        if "{" in self.path:
            errors["404"] = "no such object in your organisation"
        if self.method in ("POST", "PUT", "PATCH"):
            errors["415"] = "a request body of a media type the operation does not take"
            errors["413"] = "a request body over its size limit (JSON_MAX_BODY_BYTES for JSON; the message names it)"
        if self.method == "POST" and ("202" in responses or getattr(self.view, "publishes_jobs", False)):
            errors["503"] = (
                "the job queue is unavailable (job_queue_unavailable; the job is marked failed): retry "
                "after extra.retry_after_s"
            )
        for code, description in errors.items():
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ApiErrorSerializer, description=description), code, direction=direction
                )
        return responses

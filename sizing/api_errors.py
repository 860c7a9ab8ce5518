"""One error shape for the whole API: {"code", "message", "extra"}; field errors under extra.fields."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from sizing.estimator.errors import SizingError


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
        return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DjangoPermissionDenied):  # raised by services (e.g. editing a shared sample): same shape
        exc = exceptions.PermissionDenied(*exc.args)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = {"code": "invalid_input", "message": _first_message(fields), "extra": {"fields": fields}}
    elif isinstance(exc, exceptions.APIException):
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else "error"
        response.data = {"code": code, "message": str(exc.detail), "extra": {}}
    return response

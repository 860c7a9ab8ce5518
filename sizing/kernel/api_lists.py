"""Every list endpoint the same way: DRF's limit/offset envelope {count, next, previous, results} (at most
MAX_LIMIT rows a page), an `ordering` query parameter checked against the list's allow-list, and its filters.

A view subclasses ListApiMixin next to APIView, names its `ordering_fields` (API name: ORM expression), wraps its
GET in `list_schema(...)` and answers `self.list_response(request, rows, Serializer)`."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

from sizing.kernel.api_errors import ApiAutoSchema, ApiErrorSerializer

MAX_LIMIT = 500


class ApiPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT


class ListSchema(ApiAutoSchema):
    """The envelope and limit/offset documented on the GET only (a POST answering a list, e.g. the runs a result
    file holds, is not paginated)."""

    def _get_paginator(self) -> ApiPagination | None:
        return ApiPagination() if self.method == "GET" else None


class ListApiMixin:
    pagination_class = ApiPagination
    schema = ListSchema()
    ordering_fields: dict[str, str] = {}  # API name -> ORM field; each may be given with "-" for descending

    def list_response(
        self,
        request: Request,
        rows: QuerySet[Any],
        serializer_class: type[serializers.BaseSerializer],
    ) -> Response:
        rows = ordered(rows, request.query_params.get("ordering"), self.ordering_fields)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(serializer_class(page, many=True).data)


def ordering_choices(fields: dict[str, str]) -> list[str]:
    return [prefix + name for name in fields for prefix in ("", "-")]


def ordered(rows: QuerySet[Any], raw: str | None, fields: dict[str, str]) -> QuerySet[Any]:
    """`rows` in the order `raw` asks ("name,-created_at"); an unknown field is a 400 naming it and the allowed."""
    if not raw:
        return rows
    keys = []
    for part in (piece.strip() for piece in raw.split(",")):
        name = part.removeprefix("-")
        if name not in fields:
            raise serializers.ValidationError(
                {"ordering": [f"cannot order by {part!r}; allowed: {', '.join(ordering_choices(fields))}"]}
            )
        keys.append(("-" if part.startswith("-") else "") + fields[name])
    return rows.order_by(*keys, "-pk" if keys[-1].startswith("-") else "pk")


def filter_parameter(name: str, kind: Any = str, description: str = "", enum: Any = None) -> OpenApiParameter:
    return OpenApiParameter(name, kind, required=False, description=description, enum=enum)


def list_schema(
    serializer_class: type[serializers.BaseSerializer],
    *,
    ordering: dict[str, str],
    filters: list[OpenApiParameter] = (),
    not_found: str = "",
    **kwargs: Any,
) -> Any:
    """extend_schema of a list GET: its filters, `ordering` (one of the allowed names, or several joined by commas),
    and the serializer as a paginated list (limit and offset come from the paginator); `not_found` describes the
    404 of a filter naming a row that is not there."""
    choices = ", ".join(ordering_choices(ordering))
    parameter = OpenApiParameter(
        "ordering",
        str,
        required=False,
        description=f"order by these fields, comma-separated, - for descending: {choices}",
    )
    responses: Any = serializer_class(many=True)
    if not_found:
        responses = {200: responses, 404: OpenApiResponse(ApiErrorSerializer, description=not_found)}
    return extend_schema(parameters=[*filters, parameter], responses=responses, **kwargs)


def id_filter(request: Request, name: str) -> int | None:
    """A query parameter naming a row by id: None when absent, else a positive int (a 400 otherwise)."""
    raw = request.query_params.get(name)
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise serializers.ValidationError({name: [f"a {name} id"]})
    return int(raw)


def choice_filter(request: Request, name: str, choices: Any) -> str | None:
    """A query parameter that must be one of `choices` (a 400 listing them otherwise)."""
    raw = request.query_params.get(name)
    if not raw:
        return None
    allowed = [choice[0] if isinstance(choice, tuple) else choice for choice in choices]
    if raw not in allowed:
        raise serializers.ValidationError({name: [f"unknown {name} {raw!r}; one of: {', '.join(allowed)}"]})
    return raw


def bool_filter(request: Request, name: str) -> bool | None:
    """A true/false query parameter: None when absent (a 400 when not a boolean)."""
    raw = request.query_params.get(name)
    if not raw:
        return None
    try:
        return serializers.BooleanField().to_internal_value(raw)
    except serializers.ValidationError:
        raise serializers.ValidationError({name: ["true or false"]}) from None

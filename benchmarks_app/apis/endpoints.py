"""Thin APIs of registered inference endpoints (issue 7, part 1): every member of the organisation lists and reads
them; only admins (sizing.kernel.access) register, change and delete them (a member gets 403 in the API's error
shape). The API key is write-only: no response holds it, only `has_api_key`."""

from __future__ import annotations

from typing import Any

from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks_app.kernel.endpoint_urls import URL_MAX_LENGTH
from benchmarks_app.models import Endpoint
from benchmarks_app.selectors.endpoints import endpoint_get_for_organisation, endpoint_list_for_organisation
from benchmarks_app.services.endpoints import (
    API_KEY_MAX_LENGTH,
    MODEL_NAME_MAX_LENGTH,
    NAME_MAX_LENGTH,
    endpoint_create,
    endpoint_delete,
    endpoint_update,
)
from sizing.kernel.api_lists import ListApiMixin, choice_filter, filter_parameter, list_schema
from sizing.services.estimates import organisation_for_user

SECRET_FIELDS = ("api_key",)


class EndpointOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    has_api_key = serializers.BooleanField(
        read_only=True, help_text="whether an API key is stored (it is never shown back)"
    )
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = Endpoint
        fields = [
            "id",
            "url",
            "name",
            "kind",
            "base_url",
            "model_name",
            "metrics_url",
            "failure_command",
            "has_api_key",
            "created_by",
            "created_at",
            "updated_at",
        ]

    def get_url(self, obj: Endpoint) -> str:
        return f"/api/v1/endpoints/{obj.pk}/"

    def get_created_by(self, obj: Endpoint) -> str | None:
        return obj.created_by.get_username() if obj.created_by else None


class EndpointInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX_LENGTH, help_text="unique in your organisation")
    base_url = serializers.CharField(
        max_length=URL_MAX_LENGTH,
        help_text=(
            "the server's root, http or https, without /v1, credentials or #fragment, e.g. http://10.0.0.5:8000 "
            "(private and loopback addresses are allowed)"
        ),
    )
    kind = serializers.ChoiceField(choices=Endpoint.Kind.choices, help_text="the serving engine")
    model_name = serializers.CharField(
        max_length=MODEL_NAME_MAX_LENGTH, help_text="the model name the server serves (as GET /v1/models lists it)"
    )
    metrics_url = serializers.CharField(
        max_length=URL_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text="Prometheus metrics URL, e.g. http://10.0.0.5:8000/metrics",
    )
    failure_command = serializers.JSONField(
        required=False,
        help_text=(
            "what a failure-injection test runs to kill a worker or drop a replica, without a shell, on the load-test "
            "worker: a list of strings (argv, 1–64 words of at most 1,000 characters) or a command line split as a "
            'shell would, e.g. "kubectl delete pod vllm-0"; [] or "" for none'
        ),
    )
    api_key = serializers.CharField(
        max_length=API_KEY_MAX_LENGTH,
        required=False,
        allow_blank=True,
        write_only=True,
        style={"input_type": "password"},
        help_text="stored encrypted, never shown back; on update an empty or absent key keeps the stored one",
    )
    clear_api_key = serializers.BooleanField(
        required=False, write_only=True, help_text="on update: remove the stored API key"
    )


def _not_found(endpoint_id: int) -> Response:
    return Response(
        {"code": "not_found", "message": f"no endpoint {endpoint_id}", "extra": {}}, status=status.HTTP_404_NOT_FOUND
    )


@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="dispatch")
class EndpointListApi(ListApiMixin, APIView):
    ordering_fields = {"name": "name", "kind": "kind", "created_at": "created_at", "updated_at": "updated_at"}

    @list_schema(
        EndpointOutputSerializer,
        ordering=ordering_fields,
        filters=[filter_parameter("kind", enum=Endpoint.Kind.values)],
        description="The organisation's registered endpoints (load tests can target these only).",
    )
    def get(self, request: Request) -> Response:
        rows = endpoint_list_for_organisation(organisation=organisation_for_user(user=request.user))
        if kind := choice_filter(request, "kind", Endpoint.Kind.choices):
            rows = rows.filter(kind=kind)
        return self.list_response(request, rows, EndpointOutputSerializer)

    @extend_schema(
        request=EndpointInputSerializer,
        responses={201: EndpointOutputSerializer},
        description="Register an endpoint (admins of the organisation only).",
    )
    @sensitive_variables()  # Django's error reports show no variable of it or below
    def post(self, request: Request) -> Response:
        serializer = EndpointInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        created = endpoint_create(organisation=organisation_for_user(user=request.user), user=request.user, data=data)
        return Response(EndpointOutputSerializer(created).data, status=status.HTTP_201_CREATED)


@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="dispatch")
class EndpointDetailApi(APIView):
    def _found(self, request: Request, endpoint_id: int) -> Endpoint | None:
        return endpoint_get_for_organisation(
            organisation=organisation_for_user(user=request.user), endpoint_id=endpoint_id
        )

    @sensitive_variables()
    def _update(self, request: Request, endpoint_id: int, *, partial: bool) -> Response:
        found = self._found(request, endpoint_id)
        if found is None:
            return _not_found(endpoint_id)
        serializer = EndpointInputSerializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(serializer.validated_data)
        if not partial:
            data.setdefault("metrics_url", "")  # a replacement: an omitted metrics URL is removed
            data.setdefault("failure_command", [])  # and so is an omitted failure command
        return Response(EndpointOutputSerializer(endpoint_update(endpoint=found, data=data)).data)

    @extend_schema(responses=EndpointOutputSerializer)
    def get(self, request: Request, endpoint_id: int) -> Response:
        found = self._found(request, endpoint_id)
        return _not_found(endpoint_id) if found is None else Response(EndpointOutputSerializer(found).data)

    @extend_schema(
        request=EndpointInputSerializer,
        responses=EndpointOutputSerializer,
        description="Replace the endpoint's fields (admins only). The API key is kept unless a new one "
        "is given or clear_api_key is true.",
    )
    def put(self, request: Request, endpoint_id: int) -> Response:
        return self._update(request, endpoint_id, partial=False)

    @extend_schema(
        request=EndpointInputSerializer,
        responses=EndpointOutputSerializer,
        description="Change some of the endpoint's fields (admins only). The API key is kept unless a new "
        "one is given or clear_api_key is true.",
    )
    def patch(self, request: Request, endpoint_id: int) -> Response:
        return self._update(request, endpoint_id, partial=True)

    @extend_schema(responses={204: None}, description="Delete the endpoint (admins only).")
    def delete(self, request: Request, endpoint_id: int) -> Response:
        found = self._found(request, endpoint_id)
        if found is None:
            return _not_found(endpoint_id)
        endpoint_delete(endpoint=found)
        return Response(status=status.HTTP_204_NO_CONTENT)

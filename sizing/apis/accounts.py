"""Thin APIs of the signed-in user: who am I (organisation, role, what the role allows) and my API keys (create:
the key is in this one answer and never again; list; revoke)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.kernel.access import role_of
from sizing.kernel.apikeys import (
    api_key_create,
    api_key_get_for_user,
    api_key_list_for_user,
    api_key_revoke,
    api_key_status,
)
from sizing.models import ApiKey
from sizing.services.estimates import organisation_for_user


class ApiKeyOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()

    class Meta:
        model = ApiKey
        fields = ["id", "url", "name", "prefix", "status", "created_at", "expires_at", "last_used_at", "revoked_at"]

    def get_url(self, key: ApiKey) -> str:
        return reverse("accounts:api-key-detail", kwargs={"key_id": key.pk})

    def get_status(self, key: ApiKey) -> str:
        return api_key_status(key)


class ApiKeyCreatedSerializer(ApiKeyOutputSerializer):
    key = serializers.CharField(help_text="the key: shown in this answer only; store it now")

    class Meta(ApiKeyOutputSerializer.Meta):
        fields = [*ApiKeyOutputSerializer.Meta.fields, "key"]


class ApiKeyListApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100, help_text="what uses the key, e.g. 'CRM quote script'")
        expires_at = serializers.DateTimeField(required=False, allow_null=True)

    @extend_schema(responses=ApiKeyOutputSerializer(many=True), summary="Your API keys (never the keys themselves)")
    def get(self, request: Request) -> Response:
        return Response(ApiKeyOutputSerializer(api_key_list_for_user(user=request.user), many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={201: ApiKeyCreatedSerializer},
        summary="Create an API key (shown once)",
        examples=[OpenApiExample("A key for a script", request_only=True, value={"name": "CRM quote script"})],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        row, key = api_key_create(user=request.user, **serializer.validated_data)
        row.key = key  # type: ignore[attr-defined] - this answer only; never stored
        data = ApiKeyCreatedSerializer(row).data
        response = Response(data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class ApiKeyDetailApi(APIView):
    def _key(self, request: Request, key_id: int) -> ApiKey:
        key = api_key_get_for_user(user=request.user, key_id=key_id)
        if key is None:
            raise NotFound(f"no API key {key_id} of yours")
        return key

    @extend_schema(responses=ApiKeyOutputSerializer)
    def get(self, request: Request, key_id: int) -> Response:
        return Response(ApiKeyOutputSerializer(self._key(request, key_id)).data)

    # 200 with the revoked key (its revoked_at), not drf-spectacular's default 204 for a DELETE: the key is kept
    @extend_schema(responses={200: ApiKeyOutputSerializer}, summary="Revoke an API key (it stays listed, revoked)")
    def delete(self, request: Request, key_id: int) -> Response:
        return Response(ApiKeyOutputSerializer(api_key_revoke(key=self._key(request, key_id))).data)


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    organisation = serializers.CharField()
    role = serializers.CharField()
    authenticated_by = serializers.ChoiceField(choices=["api_key", "session"])


class MeApi(APIView):
    @extend_schema(responses=MeSerializer, summary="Who the request is signed in as")
    def get(self, request: Request) -> Response:
        organisation = organisation_for_user(user=request.user)
        data: dict[str, Any] = {
            "username": request.user.get_username(),
            "organisation": organisation.name,
            "role": role_of(request.user),
            "authenticated_by": "api_key" if isinstance(request.auth, ApiKey) else "session",
        }
        return Response(MeSerializer(data).data)

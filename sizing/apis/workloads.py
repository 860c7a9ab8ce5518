"""Thin DRF APIs of workload profiles: list, create, read, change and delete them, fit one to a CSV request log,
and preview what a profile means over a day. Users see their organisation's profiles and the shipped samples."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from llm_sizing_loadgen.workload import profile_to_dict, sample_profile
from sizing.kernel.api_lists import ListApiMixin, bool_filter, choice_filter, filter_parameter, list_schema
from sizing.models import WorkloadProfile
from sizing.selectors.workloads import workload_profile_get_for_organisation, workload_profile_list_for_organisation
from sizing.services.estimates import organisation_for_user
from sizing.services.workloads import (
    NAME_MAX_LENGTH,
    workload_preview,
    workload_profile_create,
    workload_profile_delete,
    workload_profile_import_csv,
    workload_profile_update,
)

PROFILE_HELP = (
    "The profile: {classes: [{name, share, input: {kind, mean, std, minimum, maximum, bins}, output: "
    "{...}, shared_prefix_tokens, windows: [[start, end], ...]}], arrival: {kind, burst_requests, "
    "burst_window_s, burst_at_s}}; kind of a length: fixed, normal, lognormal or empirical; of arrival: "
    "poisson, constant or burst"
)
SAMPLE_EXAMPLE = OpenApiExample(
    "The shipped sample",
    value={"name": "Q&A, reports, archive", "profile": profile_to_dict(sample_profile())},
    request_only=True,
)


def _profile_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise serializers.ValidationError("a profile must be a JSON object")
    return value


class WorkloadProfileOutputSerializer(serializers.ModelSerializer):
    sample = serializers.SerializerMethodField(help_text="a shipped sample: visible to all, read-only")
    has_fit = serializers.SerializerMethodField(help_text="a fit report from a CSV import is kept")
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = WorkloadProfile
        fields = [
            "id",
            "name",
            "description",
            "source",
            "sample",
            "has_fit",
            "profile",
            "fit",
            "created_by",
            "created_at",
            "updated_at",
        ]

    def get_sample(self, obj: WorkloadProfile) -> bool:
        return obj.organisation_id is None

    def get_has_fit(self, obj: WorkloadProfile) -> bool:
        return obj.fit is not None

    def get_created_by(self, obj: WorkloadProfile) -> str | None:
        return obj.created_by.get_username() if obj.created_by is not None else None


class WorkloadProfileListOutputSerializer(WorkloadProfileOutputSerializer):
    """The list leaves out the fit reports (histograms); GET workloads/<id>/ has them."""

    class Meta(WorkloadProfileOutputSerializer.Meta):
        fields = [field for field in WorkloadProfileOutputSerializer.Meta.fields if field != "fit"]


def _not_found(workload_profile_id: int) -> Response:
    return Response(
        {"code": "not_found", "message": f"no workload profile {workload_profile_id}", "extra": {}},
        status=status.HTTP_404_NOT_FOUND,
    )


class WorkloadProfileInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX_LENGTH)
    description = serializers.CharField(
        required=False, allow_blank=True, max_length=5000, help_text="default: the profile's own description"
    )
    profile = serializers.JSONField(help_text=PROFILE_HELP)

    def validate_profile(self, value: Any) -> Any:
        return _profile_object(value)


class WorkloadProfileListApi(ListApiMixin, APIView):
    ordering_fields = {"name": "name", "source": "source", "created_at": "created_at", "updated_at": "updated_at"}

    @list_schema(
        WorkloadProfileListOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("source", enum=WorkloadProfile.Source.values),
            filter_parameter(
                "sample", bool, description="true: the shipped samples only; false: your organisation's only"
            ),
        ],
    )
    def get(self, request: Request) -> Response:
        profiles = workload_profile_list_for_organisation(organisation=organisation_for_user(user=request.user))
        if source := choice_filter(request, "source", WorkloadProfile.Source.choices):
            profiles = profiles.filter(source=source)
        sample = bool_filter(request, "sample")
        if sample is not None:
            profiles = profiles.filter(organisation__isnull=sample)
        return self.list_response(request, profiles, WorkloadProfileListOutputSerializer)

    @extend_schema(
        request=WorkloadProfileInputSerializer,
        responses={201: WorkloadProfileOutputSerializer},
        examples=[SAMPLE_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        serializer = WorkloadProfileInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        created = workload_profile_create(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            name=data["name"],
            description=data.get("description"),
            profile=data["profile"],
        )
        return Response(WorkloadProfileOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class WorkloadProfileDetailApi(APIView):
    @extend_schema(responses={200: WorkloadProfileOutputSerializer})
    def get(self, request: Request, workload_profile_id: int) -> Response:
        found = workload_profile_get_for_organisation(
            organisation=organisation_for_user(user=request.user), workload_profile_id=workload_profile_id
        )
        if found is None:
            return _not_found(workload_profile_id)
        return Response(WorkloadProfileOutputSerializer(found).data)

    @extend_schema(
        request=WorkloadProfileInputSerializer,
        responses={200: WorkloadProfileOutputSerializer},
        description="Replace the name, description and profile of one of your profiles; samples are "
        "read-only (403): save a copy with POST workloads/.",
    )
    def put(self, request: Request, workload_profile_id: int) -> Response:
        organisation = organisation_for_user(user=request.user)
        found = workload_profile_get_for_organisation(
            organisation=organisation, workload_profile_id=workload_profile_id
        )
        if found is None:
            return _not_found(workload_profile_id)
        serializer = WorkloadProfileInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        updated = workload_profile_update(
            workload_profile=found,
            organisation=organisation,
            name=data["name"],
            description=data.get("description"),
            profile=data["profile"],
        )
        return Response(WorkloadProfileOutputSerializer(updated).data)

    @extend_schema(responses={204: None}, description="Delete one of your profiles; samples are read-only (403).")
    def delete(self, request: Request, workload_profile_id: int) -> Response:
        organisation = organisation_for_user(user=request.user)
        found = workload_profile_get_for_organisation(
            organisation=organisation, workload_profile_id=workload_profile_id
        )
        if found is None:
            return _not_found(workload_profile_id)
        workload_profile_delete(workload_profile=found, organisation=organisation)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WorkloadProfileImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class WorkloadImportInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=NAME_MAX_LENGTH)
        file = serializers.FileField(
            help_text="CSV request log with a header row: timestamp (ISO 8601 or Unix epoch seconds), input_tokens, "
            "output_tokens and optionally class (aliases such as prompt_tokens / completion_tokens are "
            "accepted); at most SIZING_MAX_WORKLOAD_CSV_BYTES"
        )

    @extend_schema(
        request={"multipart/form-data": WorkloadImportInputSerializer},
        responses={201: WorkloadProfileOutputSerializer},
        description="Fit a profile to a request log and keep it with its fit report (data against "
        "fitted lengths per class, Kolmogorov–Smirnov statistic, histograms, hourly counts).",
    )
    def post(self, request: Request) -> Response:
        serializer = self.WorkloadImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        created = workload_profile_import_csv(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            name=data["name"],
            file=data["file"],
        )
        return Response(WorkloadProfileOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class WorkloadPreviewApi(APIView):
    class WorkloadPreviewInputSerializer(serializers.Serializer):
        profile = serializers.JSONField(help_text=PROFILE_HELP)

        def validate_profile(self, value: Any) -> Any:
            return _profile_object(value)

    @extend_schema(
        request=WorkloadPreviewInputSerializer,
        examples=[
            OpenApiExample(
                "The shipped sample", value={"profile": profile_to_dict(sample_profile())}, request_only=True
            )
        ],
        description="What a profile means over a day, without saving it. Shares are of the day's requests; "
        "expected input tokens include the shared prefix.",
        responses=inline_serializer(
            "WorkloadPreview",
            {
                "busiest_hour": serializers.IntegerField(),
                "busiest_hour_share": serializers.FloatField(),
                "daily_curve": serializers.ListField(child=serializers.FloatField()),
                "classes": serializers.ListField(
                    child=inline_serializer(
                        "WorkloadPreviewClass",
                        {
                            "name": serializers.CharField(),
                            "share": serializers.FloatField(),
                            "hourly": serializers.ListField(child=serializers.FloatField()),
                            "mix_at_busiest_hour": serializers.FloatField(),
                            "active_hours": serializers.ListField(child=serializers.IntegerField()),
                            "shared_prefix_tokens": serializers.IntegerField(),
                            "expected_input_tokens": serializers.FloatField(),
                            "expected_output_tokens": serializers.FloatField(),
                        },
                    )
                ),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = self.WorkloadPreviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(workload_preview(profile=serializer.validated_data["profile"]))

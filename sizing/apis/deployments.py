"""Thin APIs of customer deployments and their fingerprints: create and read deployments, upload what a server
measured (the probe's file, or pasted outputs), read a fingerprint checked against the plan, compare two."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.launch import INSTALLS, USAGE_CONTEXTS
from sizing.estimator.versions import ACCEPTED_FORM
from sizing.kernel.api_lists import ListApiMixin, filter_parameter, id_filter, list_schema
from sizing.kernel.request_limits import LimitedJSONParser
from sizing.models import Deployment, Fingerprint
from sizing.selectors.deployments import (
    deployment_get_for_organisation,
    deployment_list_for_organisation,
    fingerprint_get_for_organisation,
    fingerprint_list_for_organisation,
)
from sizing.selectors.estimates import gpu_get, model_get_for_organisation
from sizing.selectors.workloads import workload_profile_get_for_organisation
from sizing.services.deployments import (
    MAX_FILES,
    NAME_MAX_LENGTH,
    deployment_create,
    deployment_delete,
    deployment_launch,
    deployment_update,
    fingerprint_delete,
    fingerprint_diff_report,
    fingerprint_report,
    fingerprint_upload,
    uploads_from,
)
from sizing.services.estimates import organisation_for_user
from sizing.texts.findings import change_text, finding_text


def _not_found(what: str, key: int) -> Response:
    return Response({"code": "not_found", "message": f"no {what} {key}", "extra": {}}, status=status.HTTP_404_NOT_FOUND)


class DeploymentOutputSerializer(serializers.ModelSerializer):
    workload = serializers.IntegerField(source="workload_id", allow_null=True, read_only=True)
    model = serializers.SerializerMethodField()
    gpu = serializers.SerializerMethodField()
    fingerprint_count = serializers.SerializerMethodField()

    class Meta:
        model = Deployment
        fields = [
            "id",
            "name",
            "customer",
            "notes",
            "model",
            "gpu",
            "gpu_count",
            "tp",
            "engine",
            "engine_version",
            "usage_context",
            "install",
            "image_cuda_version",
            "max_model_len",
            "slo",
            "workload",
            "rate_per_s",
            "fingerprint_count",
            "created_at",
            "updated_at",
        ]

    def get_model(self, obj: Deployment) -> str | None:
        return obj.model.slug if obj.model else None

    def get_gpu(self, obj: Deployment) -> str | None:
        return obj.gpu.slug if obj.gpu else None

    def get_fingerprint_count(self, obj: Deployment) -> int:
        count = getattr(obj, "fingerprint_count", None)
        return count if count is not None else obj.fingerprints.count()


class DeploymentInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=NAME_MAX_LENGTH)
    customer = serializers.CharField(max_length=200, required=False, allow_blank=True)
    notes = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    model = serializers.CharField(
        max_length=200, required=False, allow_null=True, help_text="model slug from GET /api/v1/models/"
    )
    gpu = serializers.CharField(
        max_length=80,
        required=False,
        allow_null=True,
        help_text="the GPU the plan was sized for (slug from GET /api/v1/gpus/)",
    )
    gpu_count = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=64, help_text="GPUs per server in the plan"
    )
    tp = serializers.IntegerField(required=False, min_value=1, max_value=64)
    engine = serializers.ChoiceField(choices=ENGINE_CHOICES, required=False)
    engine_version = serializers.CharField(
        max_length=60,
        required=False,
        allow_blank=True,
        help_text=f"the engine release the plan is sized for: {ACCEPTED_FORM} (empty: the newest release modelled "
        "when the plan is estimated); a release older than the modelled ones is refused",
    )
    usage_context = serializers.ChoiceField(
        choices=USAGE_CONTEXTS, required=False, help_text="vLLM: serve (vllm serve; default) or llm (Python LLM(...))"
    )
    install = serializers.ChoiceField(
        choices=INSTALLS, required=False, help_text="pip (default) or docker (the engine's official image)"
    )
    image_cuda_version = serializers.CharField(
        max_length=20,
        required=False,
        allow_blank=True,
        help_text="the CUDA version the serving image was built for, e.g. 12.4",
    )
    max_model_len = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=16_777_216)
    slo = serializers.JSONField(
        required=False,
        help_text="latency SLOs in ms: {ttft_ms, tpot_ms, e2e_ms}, each "
        "optional (benchmark goodput counts against them)",
    )
    workload = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="the customer's traffic: a workload profile id (GET workloads/)",
    )
    rate_per_s = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0.000001,
        max_value=100_000,
        help_text="requests per second at the busiest hour (the report's load)",
    )


def _deployment_data(request: Request, data: dict[str, Any]) -> dict[str, Any]:
    """Slugs of the input resolved to rows (a 400 naming the field when unknown)."""
    organisation = organisation_for_user(user=request.user)
    if data.get("model"):
        model = model_get_for_organisation(organisation=organisation, slug=data["model"])
        if model is None:
            raise serializers.ValidationError({"model": [f"unknown model {data['model']!r}; see GET /api/v1/models/"]})
        data["model"] = model
    elif "model" in data:
        data["model"] = None
    if data.get("gpu"):
        gpu = gpu_get(slug=data["gpu"])
        if gpu is None:
            raise serializers.ValidationError({"gpu": [f"unknown GPU {data['gpu']!r}; see GET /api/v1/gpus/"]})
        data["gpu"] = gpu
    elif "gpu" in data:
        data["gpu"] = None
    if data.get("workload"):
        workload = workload_profile_get_for_organisation(
            organisation=organisation, workload_profile_id=data["workload"]
        )
        if workload is None:
            raise serializers.ValidationError(
                {"workload": [f"unknown workload profile {data['workload']}; see GET /api/v1/workloads/"]}
            )
        data["workload"] = workload
    elif "workload" in data:
        data["workload"] = None
    return data


class DeploymentListApi(ListApiMixin, APIView):
    ordering_fields = {"name": "name", "customer": "customer", "created_at": "created_at", "updated_at": "updated_at"}

    @list_schema(
        DeploymentOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("customer", description="this customer's (exact name)"),
            filter_parameter("model", description="planned for this model (slug)"),
            filter_parameter("gpu", description="planned on this GPU (slug)"),
        ],
    )
    def get(self, request: Request) -> Response:
        rows = deployment_list_for_organisation(organisation=organisation_for_user(user=request.user))
        query = request.query_params
        if query.get("customer"):
            rows = rows.filter(customer=query["customer"])
        if query.get("model"):
            rows = rows.filter(model__slug=query["model"])
        if query.get("gpu"):
            rows = rows.filter(gpu__slug=query["gpu"])
        return self.list_response(request, rows, DeploymentOutputSerializer)

    @extend_schema(request=DeploymentInputSerializer, responses={201: DeploymentOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = DeploymentInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        created = deployment_create(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            data=_deployment_data(request, dict(serializer.validated_data)),
        )
        return Response(DeploymentOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class DeploymentLaunchSerializer(serializers.Serializer):
    engine = serializers.CharField()
    label = serializers.CharField()
    version = serializers.CharField(
        help_text='the release the plan\'s estimate holds for ("0.11.0"); empty for engines without version rules'
    )
    requested = serializers.CharField(help_text="the plan's engine_version, latest when empty")
    install = serializers.CharField()
    usage_context = serializers.CharField()
    install_command = serializers.CharField(allow_null=True, help_text="e.g. pip install vllm==0.11.0")
    launch = serializers.ListField(
        child=serializers.CharField(), help_text="the lines that install and start the release the plan is sized for"
    )
    warnings = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField(allow_null=True, help_text="why the plan cannot be estimated, if it cannot")


class DeploymentDetailOutputSerializer(DeploymentOutputSerializer):
    launch = serializers.SerializerMethodField()

    class Meta(DeploymentOutputSerializer.Meta):
        fields = [*DeploymentOutputSerializer.Meta.fields, "launch"]

    @extend_schema_field(DeploymentLaunchSerializer)
    def get_launch(self, obj: Deployment) -> dict[str, Any]:
        return self.context["launch"]


class DeploymentDetailApi(APIView):
    @extend_schema(responses=DeploymentDetailOutputSerializer)
    def get(self, request: Request, deployment_id: int) -> Response:
        found = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if found is None:
            return _not_found("deployment", deployment_id)
        return Response(
            DeploymentDetailOutputSerializer(found, context={"launch": deployment_launch(deployment=found)}).data
        )

    @extend_schema(
        request=DeploymentInputSerializer,
        responses=DeploymentOutputSerializer,
        description="Change the deployment's plan; its fingerprints are checked against the new plan.",
    )
    def put(self, request: Request, deployment_id: int) -> Response:
        found = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if found is None:
            return _not_found("deployment", deployment_id)
        serializer = DeploymentInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        updated = deployment_update(deployment=found, data=_deployment_data(request, dict(serializer.validated_data)))
        return Response(DeploymentOutputSerializer(updated).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, deployment_id: int) -> Response:
        found = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if found is None:
            return _not_found("deployment", deployment_id)
        deployment_delete(deployment=found)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FingerprintListOutputSerializer(serializers.ModelSerializer):
    deployment = serializers.IntegerField(source="deployment_id")
    url = serializers.SerializerMethodField()
    gpu_count = serializers.SerializerMethodField()
    gpu_names = serializers.SerializerMethodField()
    driver_version = serializers.SerializerMethodField()
    cuda_version = serializers.SerializerMethodField()
    severities = serializers.SerializerMethodField(
        help_text="machine findings per severity (the plan's are in the detail)"
    )

    class Meta:
        model = Fingerprint
        fields = [
            "id",
            "url",
            "deployment",
            "host",
            "captured_at",
            "label",
            "gpu_count",
            "gpu_names",
            "driver_version",
            "cuda_version",
            "severities",
            "size_bytes",
            "created_at",
        ]

    def get_url(self, obj: Fingerprint) -> str:
        return f"/api/v1/fingerprints/{obj.pk}/"

    def get_gpu_count(self, obj: Fingerprint) -> int:
        return int(obj.facts.get("gpu_count") or 0)

    def get_gpu_names(self, obj: Fingerprint) -> list[str]:
        return sorted({g.get("name") for g in obj.facts.get("gpus", []) if g.get("name")})

    def get_driver_version(self, obj: Fingerprint) -> str | None:
        return obj.facts.get("driver_version")

    def get_cuda_version(self, obj: Fingerprint) -> str | None:
        return obj.facts.get("cuda_version")

    def get_severities(self, obj: Fingerprint) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for finding in obj.facts.get("findings", []):
            counts[finding.get("severity", "info")] = counts.get(finding.get("severity", "info"), 0) + 1
        return counts


UPLOAD_HELP = (
    "multipart/form-data with `deployment`, one or more `files` (the probe's JSON file, or nvidia-smi "
    "outputs) and/or `text` (pasted outputs), optional `label` and `host`; or JSON {deployment, texts: "
    "[...], label, host}. Each file at most SIZING_MAX_FINGERPRINT_BYTES."
)


class FingerprintListApi(ListApiMixin, APIView):
    ordering_fields = {"captured_at": "captured_at", "host": "host", "label": "label"}

    parser_classes = [LimitedJSONParser, MultiPartParser, FormParser]  # JSON within the limits of every body

    class FingerprintUploadInputSerializer(serializers.Serializer):
        deployment = serializers.IntegerField(min_value=1)
        files = serializers.ListField(
            child=serializers.FileField(allow_empty_file=True), required=False, max_length=MAX_FILES
        )
        text = serializers.CharField(
            required=False, allow_blank=True, trim_whitespace=False, help_text="one pasted output (a form field)"
        )
        texts = serializers.ListField(
            child=serializers.CharField(trim_whitespace=False),
            required=False,
            max_length=MAX_FILES,
            help_text="pasted outputs (JSON)",
        )
        label = serializers.CharField(max_length=100, required=False, allow_blank=True)
        host = serializers.CharField(
            max_length=255,
            required=False,
            allow_blank=True,
            help_text="the machine's name, for pasted outputs (a probe file names it)",
        )

    @list_schema(
        FingerprintListOutputSerializer,
        ordering=ordering_fields,
        filters=[filter_parameter("deployment", int, description="only this deployment's")],
        not_found="no such deployment",
    )
    def get(self, request: Request) -> Response:
        organisation = organisation_for_user(user=request.user)
        deployment = None
        deployment_id = id_filter(request, "deployment")
        if deployment_id is not None:
            deployment = deployment_get_for_organisation(organisation=organisation, deployment_id=deployment_id)
            if deployment is None:
                return _not_found("deployment", deployment_id)
        rows = fingerprint_list_for_organisation(organisation=organisation, deployment=deployment)
        return self.list_response(request, rows, FingerprintListOutputSerializer)

    @extend_schema(
        request={
            "multipart/form-data": FingerprintUploadInputSerializer,
            "application/json": FingerprintUploadInputSerializer,
        },
        responses={201: OpenApiResponse(description="the stored fingerprint, checked against the plan")},
        description=UPLOAD_HELP,
    )
    def post(self, request: Request) -> Response:
        data: Any = request.data
        if hasattr(data, "getlist"):  # a multipart form: several files under one name
            data = {**{key: data.get(key) for key in data}, "files": request.FILES.getlist("files")}
        serializer = self.FingerprintUploadInputSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        values = serializer.validated_data
        organisation = organisation_for_user(user=request.user)
        deployment = deployment_get_for_organisation(organisation=organisation, deployment_id=values["deployment"])
        if deployment is None:
            raise serializers.ValidationError({"deployment": [f"unknown deployment {values['deployment']}"]})
        fingerprint = fingerprint_upload(
            deployment=deployment,
            user=request.user,
            uploads=uploads_from(
                files=values.get("files") or [],
                texts=[*([values["text"]] if values.get("text") else []), *(values.get("texts") or [])],
            ),
            label=values.get("label", ""),
            host=values.get("host", ""),
        )
        payload = {
            **FingerprintListOutputSerializer(fingerprint).data,
            **_worded(fingerprint_report(fingerprint=fingerprint)),
        }
        return Response(payload, status=status.HTTP_201_CREATED)


def _worded(report: dict[str, Any]) -> dict[str, Any]:
    """Each finding with `text`: its message in the request's language (the English `message` stays)."""
    for finding in report.get("findings", []):
        finding["text"] = finding_text(finding)
    return report


class FingerprintDetailApi(APIView):
    @extend_schema(
        responses={
            200: OpenApiResponse(
                description="facts, findings (machine and plan), the measured "
                "environment and its effect on the estimate"
            )
        }
    )
    def get(self, request: Request, fingerprint_id: int) -> Response:
        found = fingerprint_get_for_organisation(
            organisation=organisation_for_user(user=request.user), fingerprint_id=fingerprint_id
        )
        if found is None:
            return _not_found("fingerprint", fingerprint_id)
        payload = {**FingerprintListOutputSerializer(found).data, **_worded(fingerprint_report(fingerprint=found))}
        if request.query_params.get("raw") in ("1", "true"):
            payload["raw"] = found.raw
        return Response(payload)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, fingerprint_id: int) -> Response:
        found = fingerprint_get_for_organisation(
            organisation=organisation_for_user(user=request.user), fingerprint_id=fingerprint_id
        )
        if found is None:
            return _not_found("fingerprint", fingerprint_id)
        fingerprint_delete(fingerprint=found)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FingerprintDiffApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("before", int, required=True), OpenApiParameter("after", int, required=True)],
        responses={200: OpenApiResponse(description="{same, summary, changes: [...], before, after}")},
    )
    def get(self, request: Request) -> Response:
        organisation = organisation_for_user(user=request.user)
        found = []
        for key in ("before", "after"):
            raw = request.query_params.get(key, "")
            if not raw.isdigit():
                raise serializers.ValidationError({key: ["a fingerprint id"]})
            row = fingerprint_get_for_organisation(organisation=organisation, fingerprint_id=int(raw))
            if row is None:
                raise serializers.ValidationError({key: [f"unknown fingerprint {raw}"]})
            found.append(row)
        report = fingerprint_diff_report(before=found[0], after=found[1])
        for change in report["changes"]:
            change["text"] = change_text(change)
        return Response(report)

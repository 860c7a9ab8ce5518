"""Thin APIs of monitoring logs: upload (with the optional engine events and breaker logs, the commitment and
the hours required), list, read with the analysis, the verdict and chart series, delete."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks_app.models import MemoryLog
from benchmarks_app.results.detect import MAX_BYTES
from benchmarks_app.services.memory_logs import memory_log_delete, memory_log_import
from sizing.kernel.api_lists import ListApiMixin, filter_parameter, id_filter, list_schema
from sizing.kernel.uploads import upload_size_check
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.services.estimates import organisation_for_user

GIB = 2**30


class MemoryLogOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    deployment = serializers.IntegerField(source="deployment_id", allow_null=True)

    class Meta:
        model = MemoryLog
        fields = [
            "id",
            "url",
            "name",
            "deployment",
            "format",
            "size_bytes",
            "committed_bytes_per_gpu",
            "hours_required",
            "utc_offset_minutes",
            "verdict",
            "analysis",
            "series",
            "created_at",
        ]

    def get_url(self, obj: MemoryLog) -> str:
        return f"/api/v1/memory-logs/{obj.pk}/"


class MemoryLogListOutputSerializer(MemoryLogOutputSerializer):
    class Meta(MemoryLogOutputSerializer.Meta):
        fields = [f for f in MemoryLogOutputSerializer.Meta.fields if f not in ("analysis", "series")]


def _log_for(request: Request, log_id: int) -> MemoryLog | None:
    return MemoryLog.objects.filter(organisation=organisation_for_user(user=request.user), pk=log_id).first()


class MemoryLogListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "name": "name", "size_bytes": "size_bytes"}
    parser_classes = [MultiPartParser, FormParser]

    class MemoryLogInputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,"
            "utilization.gpu --format=csv -l N log, DCGM exporter or vLLM/SGLang "
            "scrapes, or AIPerf GPU telemetry; at most 50 MiB"
        )
        events = serializers.FileField(required=False, help_text="engine/kernel log scanned for OOM and XID lines")
        breaker = serializers.FileField(
            required=False, help_text="circuit-breaker events, JSON lines {time, kind: trip|shed|recover, breaker}"
        )
        deployment = serializers.IntegerField(required=False, min_value=1)
        committed_gib_per_gpu = serializers.FloatField(
            required=False, min_value=0.1, max_value=4096, help_text="the committed peak per GPU, GiB"
        )
        hours_required = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=24 * 90,
            default=72,
            help_text="hours of monitoring a verdict needs; a pass also needs the climb test's 24 hourly buckets, "
            "so below 24 the log must still cover 24 h (the verdict's requirements say so)",
        )
        utc_offset_minutes = serializers.IntegerField(
            required=False,
            min_value=-14 * 60,
            max_value=14 * 60,
            default=0,
            help_text="minutes east of UTC of every time the files write without a zone (nvidia-smi's samples, "
            "the events log's lines, the breaker log's times); default 0 (UTC)",
        )

    @list_schema(
        MemoryLogListOutputSerializer,
        ordering=ordering_fields,
        filters=[filter_parameter("deployment", int, description="linked to this deployment")],
    )
    def get(self, request: Request) -> Response:
        rows = MemoryLog.objects.filter(organisation=organisation_for_user(user=request.user)).defer(
            "content", "events_text", "breaker_text", "analysis", "series"
        )
        if (deployment := id_filter(request, "deployment")) is not None:
            rows = rows.filter(deployment_id=deployment)
        return self.list_response(request, rows, MemoryLogListOutputSerializer)

    @extend_schema(
        request={"multipart/form-data": MemoryLogInputSerializer}, responses={201: MemoryLogOutputSerializer}
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is not None:
            upload_size_check(upload.size, limit_bytes=MAX_BYTES, field="file", name=upload.name, note="(50 MiB)")
        serializer = self.MemoryLogInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = serializer.validated_data
        organisation = organisation_for_user(user=request.user)
        deployment = None
        if "deployment" in values:
            deployment = deployment_get_for_organisation(organisation=organisation, deployment_id=values["deployment"])
            if deployment is None:
                raise serializers.ValidationError({"deployment": [f"unknown deployment {values['deployment']}"]})
        committed = values.get("committed_gib_per_gpu")
        log = memory_log_import(
            organisation=organisation,
            user=request.user,
            name=str(values["file"].name),
            data=values["file"].read(MAX_BYTES + 1),
            deployment=deployment,
            committed_bytes_per_gpu=round(committed * GIB) if committed else None,
            hours_required=values["hours_required"],
            utc_offset_minutes=values["utc_offset_minutes"],
            events=values["events"].read() if values.get("events") else None,
            breaker=values["breaker"].read() if values.get("breaker") else None,
        )
        return Response(MemoryLogOutputSerializer(log).data, status=status.HTTP_201_CREATED)


class MemoryLogDetailApi(APIView):
    @extend_schema(responses={200: MemoryLogOutputSerializer, 404: OpenApiResponse(description="not found")})
    def get(self, request: Request, log_id: int) -> Response:
        log = _log_for(request, log_id)
        if log is None:
            return Response(
                {"code": "not_found", "message": f"no memory log {log_id}", "extra": {}},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(MemoryLogOutputSerializer(log).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, log_id: int) -> Response:
        log = _log_for(request, log_id)
        if log is None:
            return Response(
                {"code": "not_found", "message": f"no memory log {log_id}", "extra": {}},
                status=status.HTTP_404_NOT_FOUND,
            )
        memory_log_delete(log=log)
        return Response(status=status.HTTP_204_NO_CONTENT)

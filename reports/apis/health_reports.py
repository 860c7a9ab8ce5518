"""Thin APIs of the 72-hour sentinel: upload a sentinel file under a deployment (202: its memory health report is
judged, rendered and signed by a worker), list a deployment's health reports, read one (progress, verdict,
criteria), download its signed PDF."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks_app.models.memory_health import MemoryHealthReport
from benchmarks_app.results.detect import MAX_BYTES
from reports.apis.reports import PdfRenderer
from reports.models import Report
from reports.selectors.health_reports import health_report_get, health_report_list
from reports.services.health_reports import sentinel_import
from sizing.kernel.api_lists import ListApiMixin, list_schema
from sizing.kernel.uploads import upload_size_check
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.services.estimates import organisation_for_user


class HealthReportOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    pdf_url = serializers.SerializerMethodField()
    deployment = serializers.IntegerField(source="deployment_id")

    class Meta:
        model = MemoryHealthReport
        fields = [
            "id",
            "url",
            "pdf_url",
            "deployment",
            "language",
            "status",
            "progress",
            "progress_message",
            "error",
            "file_name",
            "file_size_bytes",
            "file_sha256",
            "file_meta",
            "host",
            "gpu_uuids",
            "watched_from",
            "watched_to",
            "verdict",
            "criteria",
            "coverage_hours",
            "peak_bytes",
            "committed_bytes_per_gpu",
            "sha256",
            "signed_at",
            "created_at",
            "finished_at",
        ]

    def get_url(self, obj: MemoryHealthReport) -> str:
        return f"/api/v1/health-reports/{obj.pk}/"

    def get_pdf_url(self, obj: MemoryHealthReport) -> str | None:
        return f"/api/v1/health-reports/{obj.pk}/pdf" if obj.status == MemoryHealthReport.Status.DONE else None


def _not_found(what: str) -> Response:
    return Response({"code": "not_found", "message": f"no {what}", "extra": {}}, status=status.HTTP_404_NOT_FOUND)


class HealthReportListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "watched_from": "watched_from"}
    parser_classes = [MultiPartParser, FormParser]

    class SentinelUploadInputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="the sentinel's file (deploy/tools/memory_sentinel.py, format "
            "memory-sentinel/1, JSON lines); at most 50 MiB"
        )
        language = serializers.ChoiceField(
            choices=Report.Language.choices,
            required=False,
            help_text="the report's language; default: the deployment's report's",
        )

    @list_schema(HealthReportOutputSerializer, ordering=ordering_fields)
    def get(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(f"deployment {deployment_id}")
        return self.list_response(request, health_report_list(deployment=deployment), HealthReportOutputSerializer)

    @extend_schema(
        request={"multipart/form-data": SentinelUploadInputSerializer},
        responses={202: HealthReportOutputSerializer, 404: OpenApiResponse(description="no such deployment")},
    )
    def post(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(f"deployment {deployment_id}")
        upload = request.FILES.get("file")
        if upload is not None:
            upload_size_check(upload.size, limit_bytes=MAX_BYTES, field="file", name=upload.name, note="(50 MiB)")
        serializer = self.SentinelUploadInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = serializer.validated_data
        report = sentinel_import(
            deployment=deployment,
            user=request.user,
            name=str(values["file"].name),
            data=values["file"].read(MAX_BYTES + 1),
            language=values.get("language"),
        )
        return Response(HealthReportOutputSerializer(report).data, status=status.HTTP_202_ACCEPTED)


class HealthReportDetailApi(APIView):
    @extend_schema(responses={200: HealthReportOutputSerializer, 404: OpenApiResponse(description="not found")})
    def get(self, request: Request, report_id: int) -> Response:
        report = health_report_get(organisation=organisation_for_user(user=request.user), report_id=report_id)
        if report is None:
            return _not_found(f"health report {report_id}")
        return Response(HealthReportOutputSerializer(report).data)


class HealthReportPdfApi(APIView):
    renderer_classes = [JSONRenderer, PdfRenderer]

    @extend_schema(
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, description="the signed PDF"),
            404: OpenApiResponse(description="no such report, or not signed yet"),
        }
    )
    def get(self, request: Request, report_id: int) -> HttpResponse | Response:
        report = health_report_get(organisation=organisation_for_user(user=request.user), report_id=report_id)
        if report is None or report.status != MemoryHealthReport.Status.DONE or not report.pdf:
            return _not_found(f"signed health report {report_id}")
        response = HttpResponse(bytes(report.pdf), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="memory-health-report-{report.pk}.pdf"'
        return response

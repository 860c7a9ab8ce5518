"""Thin APIs of reports: create one for a deployment, draft new versions, move a version through review, approval and
signing (202: a worker renders and signs), download its PDF, verify an uploaded PDF."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import OuterRef, Subquery
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reports.models import ChecklistWaiver, Report, ReportVersion
from reports.services.reports import (
    report_create,
    report_verify,
    report_version_new,
    version_approve,
    version_edit,
    version_pdf,
    version_return,
    version_sign_start,
    version_submit,
    waiver_decide,
    waiver_request,
    waiver_withdraw,
)
from sizing.kernel.api_lists import ListApiMixin, choice_filter, filter_parameter, id_filter, list_schema
from sizing.kernel.uploads import field_upload_read
from sizing.services.estimates import organisation_for_user


class ReportVersionOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    author = serializers.SerializerMethodField()
    reviewer = serializers.SerializerMethodField()
    signer = serializers.SerializerMethodField()
    audit = serializers.SerializerMethodField()
    drafting = serializers.BooleanField(read_only=True, help_text="a worker is gathering its evidence")
    waivers = serializers.SerializerMethodField()

    class Meta:
        model = ReportVersion
        fields = [
            "id",
            "url",
            "number",
            "status",
            "drafting",
            "drafted_at",
            "changes",
            "author",
            "submitted_at",
            "reviewer",
            "approved_at",
            "signer",
            "signed_at",
            "sha256",
            "signer_certificate_sha256",
            "progress",
            "progress_message",
            "error",
            "created_at",
            "content",
            "waivers",
            "audit",
        ]

    def get_waivers(self, obj: ReportVersion) -> list[dict[str, Any]]:
        return [WaiverOutputSerializer(waiver).data for waiver in obj.waivers.all()]

    def get_url(self, obj: ReportVersion) -> str:
        return f"/api/v1/reports/{obj.report_id}/versions/{obj.number}/"

    def _user(self, user: Any) -> str | None:
        return user.get_username() if user else None

    def get_author(self, obj: ReportVersion) -> str | None:
        return self._user(obj.author)

    def get_reviewer(self, obj: ReportVersion) -> str | None:
        return self._user(obj.reviewer)

    def get_signer(self, obj: ReportVersion) -> str | None:
        return self._user(obj.signer)

    def get_audit(self, obj: ReportVersion) -> list[dict[str, Any]]:
        return [
            {"action": event.action, "actor": event.actor_name, "at": event.at.isoformat(), "detail": event.detail}
            for event in obj.audit.all()
        ]


class WaiverOutputSerializer(serializers.ModelSerializer):
    requested_by = serializers.CharField(source="requested_by_name")
    decided_by = serializers.CharField(source="decided_by_name")

    class Meta:
        model = ChecklistWaiver
        fields = [
            "item",
            "reason",
            "requested_by",
            "requested_at",
            "status",
            "decided_by",
            "decided_at",
            "decision_reason",
        ]


class ReportOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    deployment = serializers.IntegerField(source="deployment_id")
    versions = serializers.SerializerMethodField()

    class Meta:
        model = Report
        fields = ["id", "url", "title", "language", "deployment", "created_at", "versions"]

    def get_url(self, obj: Report) -> str:
        return f"/api/v1/reports/{obj.pk}/"

    def get_versions(self, obj: Report) -> list[dict[str, Any]]:
        rows = obj.versions.order_by("-number")
        return [
            {
                key: value
                for key, value in ReportVersionOutputSerializer(row).data.items()
                if key not in ("content", "audit", "waivers")
            }
            for row in rows
        ]


class ReportInputSerializer(serializers.Serializer):
    deployment = serializers.IntegerField(min_value=1)
    language = serializers.ChoiceField(choices=Report.Language.choices, required=False)
    title = serializers.CharField(required=False, allow_blank=True, max_length=255)


class VersionEditSerializer(serializers.Serializer):
    assumptions = serializers.ListField(child=serializers.CharField(max_length=2000), required=False, max_length=50)
    exclusions = serializers.ListField(child=serializers.CharField(max_length=2000), required=False, max_length=50)
    fallback = serializers.ListField(child=serializers.CharField(max_length=2000), required=False, max_length=50)


class ReturnSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class WaiverRequestSerializer(serializers.Serializer):
    item = serializers.CharField(max_length=64, help_text="the checklist item's code (content.checklist[].code)")
    reason = serializers.CharField(max_length=2000, help_text="why the commitment may stand without it")


class WaiverDecisionSerializer(serializers.Serializer):
    grant = serializers.BooleanField(help_text="true grants the waiver, false refuses it")
    reason = serializers.CharField(max_length=2000)


class VerifySerializer(serializers.Serializer):
    file = serializers.FileField()

    def validate_file(self, value: Any) -> bytes:
        from django.conf import settings

        return field_upload_read(value, limit_bytes=settings.REPORTS_MAX_VERIFY_BYTES, limit_unit=False)


def _not_found(what: str) -> Response:
    return Response({"code": "not_found", "message": f"no {what}", "extra": {}}, status=status.HTTP_404_NOT_FOUND)


def _report(request: Request, report_id: int) -> Report | None:
    return Report.objects.filter(organisation=organisation_for_user(user=request.user), pk=report_id).first()


def _version(request: Request, report_id: int, number: int) -> ReportVersion | None:
    return (
        ReportVersion.objects.select_related("report", "author", "reviewer", "signer")
        .filter(report__organisation=organisation_for_user(user=request.user), report_id=report_id, number=number)
        .first()
    )


class PdfRenderer(BaseRenderer):
    """Lets content negotiation accept `Accept: application/pdf` (what a PDF client sends) on the PDF operations; the
    PDF itself is an HttpResponse. An error answer on such a request renders in the error shape as JSON."""

    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        response = (renderer_context or {}).get("response")
        if response is not None:
            response["Content-Type"] = "application/json"
        return JSONRenderer().render(data)


def _pdf(data: bytes, name: str) -> HttpResponse:
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class ReportListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "title": "title", "language": "language"}

    @list_schema(
        ReportOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("deployment", int, description="of this deployment"),
            filter_parameter(
                "status", enum=ReportVersion.Status.values, description="whose newest version has this status"
            ),
            filter_parameter("language", enum=Report.Language.values),
        ],
    )
    def get(self, request: Request) -> Response:
        rows = Report.objects.filter(organisation=organisation_for_user(user=request.user))
        if (deployment := id_filter(request, "deployment")) is not None:
            rows = rows.filter(deployment_id=deployment)
        if version_status := choice_filter(request, "status", ReportVersion.Status.choices):
            newest = ReportVersion.objects.filter(report=OuterRef("pk")).order_by("-number").values("status")[:1]
            rows = rows.annotate(newest_status=Subquery(newest)).filter(newest_status=version_status)
        if language := choice_filter(request, "language", Report.Language.choices):
            rows = rows.filter(language=language)
        return self.list_response(request, rows, ReportOutputSerializer)

    @extend_schema(
        request=ReportInputSerializer,
        responses={201: ReportOutputSerializer},
        description="A report of a deployment, with its version 1: a worker gathers its evidence (the "
        "version's `drafting` is true, with `progress`, until it is done).",
    )
    def post(self, request: Request) -> Response:
        serializer = ReportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        report = report_create(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            data=dict(serializer.validated_data),
        )
        return Response(ReportOutputSerializer(report).data, status=status.HTTP_201_CREATED)


class ReportDetailApi(APIView):
    @extend_schema(responses=ReportOutputSerializer)
    def get(self, request: Request, report_id: int) -> Response:
        report = _report(request, report_id)
        return _not_found(f"report {report_id}") if report is None else Response(ReportOutputSerializer(report).data)


class ReportVersionListApi(APIView):
    @extend_schema(
        request=None,
        responses={201: ReportVersionOutputSerializer},
        description="Gather the evidence again: a new draft version saying what changed (an open draft "
        "is refreshed instead).",
    )
    def post(self, request: Request, report_id: int) -> Response:
        report = _report(request, report_id)
        if report is None:
            return _not_found(f"report {report_id}")
        version = report_version_new(report=report, user=request.user)
        return Response(ReportVersionOutputSerializer(version).data, status=status.HTTP_201_CREATED)


class ReportVersionDetailApi(APIView):
    @extend_schema(responses=ReportVersionOutputSerializer)
    def get(self, request: Request, report_id: int, number: int) -> Response:
        version = _version(request, report_id, number)
        return (
            _not_found(f"version {number} of report {report_id}")
            if version is None
            else Response(ReportVersionOutputSerializer(version).data)
        )

    @extend_schema(
        request=VersionEditSerializer,
        responses=ReportVersionOutputSerializer,
        description="Edit a draft's assumptions, exclusions or fallback plan; a version in review, "
        "approved or signed is refused (a signed one never changes: draft a new version).",
    )
    def patch(self, request: Request, report_id: int, number: int) -> Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        serializer = VersionEditSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        return Response(
            ReportVersionOutputSerializer(
                version_edit(version=version, user=request.user, data=dict(serializer.validated_data))
            ).data
        )


class ReportVersionActionApi(APIView):
    """POST …/versions/N/submit | return | approve | sign."""

    action_name = ""

    @extend_schema(
        request=ReturnSerializer, responses={200: ReportVersionOutputSerializer, 202: ReportVersionOutputSerializer}
    )
    def post(self, request: Request, report_id: int, number: int) -> Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        if self.action_name == "submit":
            done = version_submit(version=version, user=request.user)
        elif self.action_name == "return":
            serializer = ReturnSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            done = version_return(version=version, user=request.user, reason=serializer.validated_data["reason"])
        elif self.action_name == "approve":
            done = version_approve(version=version, user=request.user)
        else:
            done = version_sign_start(version=version, user=request.user)
            return Response(ReportVersionOutputSerializer(done).data, status=status.HTTP_202_ACCEPTED)
        return Response(ReportVersionOutputSerializer(done).data)


class ReportVersionWaiverListApi(APIView):
    @extend_schema(
        request=WaiverRequestSerializer,
        responses={201: WaiverOutputSerializer},
        description="The version's author asks to waive a checklist item that is not done, with the reason "
        "(a draft only; asking again replaces the reason).",
    )
    def post(self, request: Request, report_id: int, number: int) -> Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        serializer = WaiverRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        waiver = waiver_request(
            version=version,
            user=request.user,
            item=serializer.validated_data["item"],
            reason=serializer.validated_data["reason"],
        )
        return Response(WaiverOutputSerializer(waiver).data, status=status.HTTP_201_CREATED)


class ReportVersionWaiverDetailApi(APIView):
    @extend_schema(
        request=None, responses={204: None}, description="The version's author withdraws a waiver request of a draft."
    )
    def delete(self, request: Request, report_id: int, number: int, item: str) -> Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        waiver_withdraw(version=version, user=request.user, item=item)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReportVersionWaiverDecisionApi(APIView):
    @extend_schema(
        request=WaiverDecisionSerializer,
        responses={200: WaiverOutputSerializer},
        description="A reviewer (never the version's author or the one who asked) grants or refuses a "
        "waiver request of a version in review, with the reason.",
    )
    def post(self, request: Request, report_id: int, number: int, item: str) -> Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        serializer = WaiverDecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        waiver = waiver_decide(
            version=version,
            user=request.user,
            item=item,
            grant=serializer.validated_data["grant"],
            reason=serializer.validated_data["reason"],
        )
        return Response(WaiverOutputSerializer(waiver).data)


class ReportVersionPdfApi(APIView):
    renderer_classes = [JSONRenderer, PdfRenderer]

    @extend_schema(responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, description="the PDF")})
    def get(self, request: Request, report_id: int, number: int) -> HttpResponse | Response:
        version = _version(request, report_id, number)
        if version is None:
            return _not_found(f"version {number} of report {report_id}")
        return _pdf(version_pdf(version=version, user=request.user), f"report-{report_id}-v{number}.pdf")


class ReportPdfApi(APIView):
    renderer_classes = [JSONRenderer, PdfRenderer]

    @extend_schema(
        responses={
            (200, "application/pdf"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="the newest signed version's PDF, else the newest version's (marked DRAFT)",
            )
        }
    )
    def get(self, request: Request, report_id: int) -> HttpResponse | Response:
        report = _report(request, report_id)
        if report is None:
            return _not_found(f"report {report_id}")
        version = (
            report.versions.filter(status=ReportVersion.Status.SIGNED).order_by("-number").first()
            or report.versions.order_by("-number").first()
        )
        if version is None:
            return _not_found(f"version of report {report_id}")
        return _pdf(version_pdf(version=version, user=request.user), f"report-{report_id}-v{version.number}.pdf")


class ReportVerifyApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": VerifySerializer},
        responses={
            200: OpenApiResponse(
                description="verdict (valid, tampered, unsigned, untrusted, "
                "unreadable), signer, signing time, the version"
            )
        },
    )
    def post(self, request: Request) -> Response:
        serializer = VerifySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data["file"]  # the bytes, read by VerifySerializer.validate_file
        return Response(
            report_verify(organisation=organisation_for_user(user=request.user), user=request.user, data=data)
        )

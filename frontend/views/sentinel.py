"""The 72-hour sentinel's page under a deployment (issue 20): what a pass needs (72 hours of samples, the interval,
the injected failure), the command to run on each GPU server, the upload (refused with its reason under its field,
nothing stored), and the deployment's memory health reports with their progress while a worker judges and signs
them, their criteria and the signed PDF. Reads are scoped to the user's organisation (another's id is a 404);
writes go through reports.services.health_reports, as the API's do."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views import View

from benchmarks_app.models.memory_health import MemoryHealthReport
from benchmarks_app.results.detect import MAX_BYTES
from benchmarks_app.results.sentinel import HOURS_REQUIRED, MAX_INTERVAL_S
from reports.selectors.health_reports import health_report_get, health_report_list
from reports.services.health_reports import report_language, sentinel_import
from sizing.estimator.errors import SizingError
from sizing.models import Deployment
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.services.estimates import organisation_for_user

INTERVAL_S = 10  # the sentinel's default, what the plan asks for
LIST_LIMIT = 50
REFRESH_S = 3  # the page reloads itself while a report is being judged


def _command(deployment: Deployment) -> str:
    return (
        "python3 memory_sentinel.py -o sentinel-$(hostname).jsonl --interval 10 --duration-hours 72 \\\n"
        "    --metrics-url http://127.0.0.1:8000/metrics --engine-log /var/log/vllm/engine.log \\\n"
        "    --breaker-log /var/log/gateway/breaker.log --breaker-trip-pattern 'breaker (open|tripped)' \\\n"
        "    --breaker-recover-pattern 'breaker closed'"
    )


def _deployment_or_404(request: HttpRequest, deployment_id: int) -> Deployment:
    deployment = deployment_get_for_organisation(
        organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
    )
    if deployment is None:
        raise Http404("no such deployment")
    return deployment


def _rows(deployment: Deployment) -> list[dict[str, Any]]:
    rows = []
    for report in health_report_list(deployment=deployment)[:LIST_LIMIT]:
        rows.append(
            {
                "report": report,
                "busy": report.status in (MemoryHealthReport.Status.QUEUED, MemoryHealthReport.Status.RUNNING),
                "percent": round((report.progress or 0) * 100),
                "verdict_label": {"pass": _("Pass"), "fail": _("Fail")}.get(report.verdict, ""),
                "error": (report.error or {}).get("message", ""),
            }
        )
    return rows


class DeploymentSentinelPageView(LoginRequiredMixin, View):
    template_name = "frontend/sentinel.html"

    def _render(
        self,
        request: HttpRequest,
        deployment: Deployment,
        *,
        errors: dict[str, list[str]] | None = None,
        language: str | None = None,
        status: int = 200,
    ) -> HttpResponse:
        rows = _rows(deployment)
        context = {
            "deployment": deployment,
            "rows": rows,
            "errors": errors or {},
            "refused": bool(errors),
            "hours_required": f"{HOURS_REQUIRED:g}",
            "interval_s": INTERVAL_S,
            "max_interval_s": f"{MAX_INTERVAL_S:g}",
            "command": _command(deployment),
            "max_upload_mib": MAX_BYTES // 2**20,
            "languages": MemoryHealthReport.Language.choices,
            "language": language or report_language(deployment),
            "refresh_s": REFRESH_S if any(row["busy"] for row in rows) else None,
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        return self._render(request, _deployment_or_404(request, deployment_id))

    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        deployment = _deployment_or_404(request, deployment_id)
        upload = request.FILES.get("file")
        language = request.POST.get("language") or None
        if upload is None:
            return self._render(
                request, deployment, errors={"file": [_("Choose the sentinel's file")]}, language=language, status=400
            )
        if upload.size > MAX_BYTES:
            return self._render(
                request,
                deployment,
                language=language,
                status=400,
                errors={
                    "file": [
                        _("The file is %(size)s bytes; the limit is %(limit)s bytes")
                        % {"size": f"{upload.size:,}", "limit": f"{MAX_BYTES:,}"}
                    ]
                },
            )
        try:
            report = sentinel_import(
                deployment=deployment,
                user=request.user,
                name=str(upload.name),
                data=upload.read(MAX_BYTES + 1),
                language=language,
            )
        except SizingError as error:
            fields = dict((error.extra or {}).get("fields") or {}) or {"file": [error.message]}
            return self._render(request, deployment, errors=fields, language=language, status=400)
        messages.success(
            request, _("Sentinel file imported: health report %(id)s is being judged and signed") % {"id": report.pk}
        )
        return HttpResponseRedirect(reverse("frontend:deployment-sentinel", args=[deployment.pk]))


class HealthReportPdfView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, report_id: int) -> HttpResponse:
        report = health_report_get(organisation=organisation_for_user(user=request.user), report_id=report_id)
        if report is None or report.status != MemoryHealthReport.Status.DONE or not report.pdf:
            raise Http404("no such signed health report")
        response = HttpResponse(bytes(report.pdf), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="memory-health-report-{report.pk}.pdf"'
        return response

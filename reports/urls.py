from django.urls import path

from reports.apis.health_reports import HealthReportDetailApi, HealthReportListApi, HealthReportPdfApi
from reports.apis.reports import (
    ReportDetailApi,
    ReportListApi,
    ReportPdfApi,
    ReportVerifyApi,
    ReportVersionActionApi,
    ReportVersionDetailApi,
    ReportVersionListApi,
    ReportVersionPdfApi,
    ReportVersionWaiverDecisionApi,
    ReportVersionWaiverDetailApi,
    ReportVersionWaiverListApi,
)

app_name = "reports"

urlpatterns = [
    path("reports/", ReportListApi.as_view(), name="report-list"),
    # the 72-hour sentinel's memory health reports (issue 20), beside the commitment they accept
    path("deployments/<id:deployment_id>/health-reports/", HealthReportListApi.as_view(), name="health-report-list"),
    path("health-reports/<id:report_id>/", HealthReportDetailApi.as_view(), name="health-report-detail"),
    path("health-reports/<id:report_id>/pdf", HealthReportPdfApi.as_view(), name="health-report-pdf"),
    path("reports/verify", ReportVerifyApi.as_view(), name="report-verify"),
    path("reports/<id:report_id>/", ReportDetailApi.as_view(), name="report-detail"),
    path("reports/<id:report_id>/pdf", ReportPdfApi.as_view(), name="report-pdf"),
    path("reports/<id:report_id>/versions/", ReportVersionListApi.as_view(), name="report-version-list"),
    path(
        "reports/<id:report_id>/versions/<id:number>/", ReportVersionDetailApi.as_view(), name="report-version-detail"
    ),
    path("reports/<id:report_id>/versions/<id:number>/pdf", ReportVersionPdfApi.as_view(), name="report-version-pdf"),
    path(
        "reports/<id:report_id>/versions/<id:number>/waivers/",
        ReportVersionWaiverListApi.as_view(),
        name="report-version-waiver-list",
    ),
    path(
        "reports/<id:report_id>/versions/<id:number>/waivers/<slug:item>",
        ReportVersionWaiverDetailApi.as_view(),
        name="report-version-waiver-detail",
    ),
    path(
        "reports/<id:report_id>/versions/<id:number>/waivers/<slug:item>/decision",
        ReportVersionWaiverDecisionApi.as_view(),
        name="report-version-waiver-decision",
    ),
    *[
        path(
            f"reports/<id:report_id>/versions/<id:number>/{action}",
            ReportVersionActionApi.as_view(action_name=action),
            name=f"report-version-{action}",
        )
        for action in ("submit", "return", "approve", "sign")
    ],
]

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.i18n import JavaScriptCatalog

from frontend.views.accounts import ApiKeyPageView, ApiKeyRevokeView, UserEditView, UserListPageView
from frontend.views.benchmarks import (
    BenchmarkComparePageView,
    BenchmarkDeleteView,
    BenchmarkDetailPageView,
    BenchmarkListPageView,
    BenchmarkSeriesPageView,
)
from frontend.views.customers import CustomerDetailPageView, CustomerListPageView
from frontend.views.endpoints import EndpointDeleteView, EndpointEditPageView, EndpointListPageView
from frontend.views.estimates import (
    BootLogPageView,
    ColocatedPageView,
    PerformancePageView,
    SizingPageView,
    WorkloadsPageView,
)
from frontend.views.fingerprints import (
    DeploymentDeleteView,
    DeploymentDetailPageView,
    DeploymentHostMergeView,
    DeploymentListPageView,
    DeploymentMachinesView,
    DeploymentUploadView,
    FingerprintDeleteView,
    FingerprintDetailPageView,
    FingerprintDiffPageView,
)
from frontend.views.loadtests import (
    LoadTestCancelView,
    LoadTestDeleteView,
    LoadTestDetailPageView,
    LoadTestListPageView,
)
from frontend.views.memory_logs import MemoryLogDeleteView, MemoryLogDetailPageView, MemoryLogListPageView
from frontend.views.quotes import QuotePageView
from frontend.views.reports import (
    ReportDetailPageView,
    ReportListPageView,
    ReportVerifyPageView,
    ReportVersionActionView,
    ReportVersionNewView,
    ReportWaiverView,
)
from frontend.views.sentinel import DeploymentSentinelPageView, HealthReportPdfView

app_name = "frontend"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),  # POST only (Django ≥5)
    path("bootlog/", BootLogPageView.as_view(), name="bootlog"),
    path("colocated/", ColocatedPageView.as_view(), name="colocated"),
    path("workloads/", WorkloadsPageView.as_view(), name="workloads"),
    path("performance/", PerformancePageView.as_view(), name="performance"),
    path("quotes/", QuotePageView.as_view(), name="quotes"),
    path("deployments/", DeploymentListPageView.as_view(), name="deployments"),
    path("deployments/<id:deployment_id>/", DeploymentDetailPageView.as_view(), name="deployment"),
    path("deployments/<id:deployment_id>/upload/", DeploymentUploadView.as_view(), name="deployment-upload"),
    path("deployments/<id:deployment_id>/delete/", DeploymentDeleteView.as_view(), name="deployment-delete"),
    path("deployments/<id:deployment_id>/machines/", DeploymentMachinesView.as_view(), name="deployment-machines"),
    path(
        "deployments/<id:deployment_id>/hosts/merge/", DeploymentHostMergeView.as_view(), name="deployment-host-merge"
    ),
    path("fingerprints/diff", FingerprintDiffPageView.as_view(), name="fingerprint-diff"),
    path("fingerprints/<id:fingerprint_id>/", FingerprintDetailPageView.as_view(), name="fingerprint"),
    path("fingerprints/<id:fingerprint_id>/delete/", FingerprintDeleteView.as_view(), name="fingerprint-delete"),
    path("benchmarks/", BenchmarkListPageView.as_view(), name="benchmarks"),
    path("benchmarks/compare", BenchmarkComparePageView.as_view(), name="benchmark-compare"),
    path("benchmarks/series/<id:series_id>/", BenchmarkSeriesPageView.as_view(), name="benchmark-series"),
    path("benchmarks/<id:run_id>/", BenchmarkDetailPageView.as_view(), name="benchmark"),
    path("benchmarks/<id:run_id>/delete/", BenchmarkDeleteView.as_view(), name="benchmark-delete"),
    path("endpoints/", EndpointListPageView.as_view(), name="endpoints"),
    path("endpoints/<id:endpoint_id>/edit/", EndpointEditPageView.as_view(), name="endpoint-edit"),
    path("endpoints/<id:endpoint_id>/delete/", EndpointDeleteView.as_view(), name="endpoint-delete"),
    path("deployments/<id:deployment_id>/sentinel/", DeploymentSentinelPageView.as_view(), name="deployment-sentinel"),
    path("health-reports/<id:report_id>/pdf/", HealthReportPdfView.as_view(), name="health-report-pdf"),
    path("memory/", MemoryLogListPageView.as_view(), name="memory-logs"),
    path("memory/<id:log_id>/", MemoryLogDetailPageView.as_view(), name="memory-log"),
    path("memory/<id:log_id>/delete/", MemoryLogDeleteView.as_view(), name="memory-log-delete"),
    path("load-tests/", LoadTestListPageView.as_view(), name="load-tests"),
    path("load-tests/<id:job_id>/", LoadTestDetailPageView.as_view(), name="load-test"),
    path("load-tests/<id:job_id>/cancel/", LoadTestCancelView.as_view(), name="load-test-cancel"),
    path("load-tests/<id:job_id>/delete/", LoadTestDeleteView.as_view(), name="load-test-delete"),
    path("reports/", ReportListPageView.as_view(), name="reports"),
    path("reports/verify/", ReportVerifyPageView.as_view(), name="report-verify"),
    path("reports/<id:report_id>/", ReportDetailPageView.as_view(), name="report"),
    path("reports/<id:report_id>/versions/new/", ReportVersionNewView.as_view(), name="report-version-new"),
    *[
        path(
            f"reports/<id:report_id>/versions/<id:number>/{action}/",
            ReportVersionActionView.as_view(action_name=action),
            name=f"report-version-{action}",
        )
        for action in ("submit", "return", "approve", "sign", "edit")
    ],
    *[
        path(
            f"reports/<id:report_id>/versions/<id:number>/waivers/<slug:item>/{action}/",
            ReportWaiverView.as_view(action_name=action),
            name=f"report-version-waiver-{action}",
        )
        for action in ("request", "withdraw", "decide")
    ],
    path("customers/", CustomerListPageView.as_view(), name="customers"),
    path("account/api-keys/", ApiKeyPageView.as_view(), name="api-keys"),
    path("account/api-keys/<id:key_id>/revoke/", ApiKeyRevokeView.as_view(), name="api-key-revoke"),
    path("organisation/users/", UserListPageView.as_view(), name="users"),
    path("organisation/users/<id:user_id>/", UserEditView.as_view(), name="user-edit"),
    path("customers/<path:name>/", CustomerDetailPageView.as_view(), name="customer"),
    # the page scripts' words in the reader's language (locale/*/LC_MESSAGES/djangojs.po); signed in, as every page
    path("jsi18n/", JavaScriptCatalog.as_view(domain="djangojs"), name="javascript-catalog"),
    path("", SizingPageView.as_view(), name="sizing"),
]

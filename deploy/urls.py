from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from sizing.apis.estimates import HealthApi
from sizing.kernel.health import healthz, readyz
from sizing.kernel.observability import metrics_view

urlpatterns = [
    path("health/", HealthApi.as_view(), name="health"),
    path("healthz", healthz, name="healthz"),  # probes and metrics (issue 10): plain views, outside the API schema
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/v1/", include("sizing.urls")),
    path("api/v1/", include("benchmarks_app.urls")),
    path("api/v1/", include("reports.urls")),
    path("api/v1/", include("sizing.quote_urls")),
    path("api/v1/", include("sizing.account_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves its script from ?script (no inline script: it passes the Content-Security-Policy); its
    # page (drf-spectacular's template, no user content) has one inline <style> block: allowed on this page only
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="swagger-ui",
    ),
    path("admin/", admin.site.urls),
    path("", include("frontend.urls")),
]

handler404 = "sizing.kernel.api_errors.not_found"  # JSON in the error shape under /api/, Django's pages elsewhere
handler500 = "sizing.kernel.api_errors.server_error"

from django.contrib.auth import views as auth_views
from django.urls import path

from frontend.views import (
    BootLogPageView,
    ColocatedPageView,
    PerformancePageView,
    SizingPageView,
    WorkloadsPageView,
)

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
    path("", SizingPageView.as_view(), name="sizing"),
]

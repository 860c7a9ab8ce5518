from django.urls import path

from sizing.apis import EstimateCreateApi, EstimateDetailApi, EstimateQuickApi, GpuListApi, ModelListApi

app_name = "sizing"

urlpatterns = [
    path("gpus/", GpuListApi.as_view(), name="gpu-list"),
    path("models/", ModelListApi.as_view(), name="model-list"),
    path("estimates/quick", EstimateQuickApi.as_view(), name="estimate-quick"),
    path("estimates/", EstimateCreateApi.as_view(), name="estimate-create"),
    path("estimates/<int:estimate_id>/", EstimateDetailApi.as_view(), name="estimate-detail"),
]

from django.urls import path

from sizing.apis.deployments import (
    DeploymentDetailApi,
    DeploymentListApi,
    FingerprintDetailApi,
    FingerprintDiffApi,
    FingerprintListApi,
)
from sizing.apis.estimates import (
    BootLogCompareApi,
    CalibrationListApi,
    EstimateColocatedApi,
    EstimateCreateApi,
    EstimateDetailApi,
    EstimateQuickApi,
    EstimateSolveApi,
    GpuListApi,
    ModelCheckpointApi,
    ModelListApi,
)
from sizing.apis.fingerprints import FingerprintParseApi, FingerprintProbeApi
from sizing.apis.machines import DeploymentHostListApi, DeploymentHostMergeApi, DeploymentMachinesApi
from sizing.apis.simulations import PerfCalibrationListApi, SimulationDetailApi, SimulationListApi
from sizing.apis.workloads import (
    WorkloadPreviewApi,
    WorkloadProfileDetailApi,
    WorkloadProfileImportApi,
    WorkloadProfileListApi,
)

app_name = "sizing"

urlpatterns = [
    path("simulations/", SimulationListApi.as_view(), name="simulation-list"),
    path("simulations/<id:job_id>/", SimulationDetailApi.as_view(), name="simulation-detail"),
    path("perf-calibrations/", PerfCalibrationListApi.as_view(), name="perf-calibration-list"),
    path("fingerprints/probe", FingerprintProbeApi.as_view(), name="fingerprint-probe"),
    path("fingerprints/parse", FingerprintParseApi.as_view(), name="fingerprint-parse"),
    path("fingerprints/diff", FingerprintDiffApi.as_view(), name="fingerprint-diff"),
    path("fingerprints/", FingerprintListApi.as_view(), name="fingerprint-list"),
    path("fingerprints/<id:fingerprint_id>/", FingerprintDetailApi.as_view(), name="fingerprint-detail"),
    path("deployments/", DeploymentListApi.as_view(), name="deployment-list"),
    path("deployments/<id:deployment_id>/", DeploymentDetailApi.as_view(), name="deployment-detail"),
    path("deployments/<id:deployment_id>/hosts/", DeploymentHostListApi.as_view(), name="deployment-hosts"),
    path("deployments/<id:deployment_id>/hosts/merge", DeploymentHostMergeApi.as_view(), name="deployment-host-merge"),
    path("deployments/<id:deployment_id>/machines/", DeploymentMachinesApi.as_view(), name="deployment-machines"),
    path("gpus/", GpuListApi.as_view(), name="gpu-list"),
    path("models/", ModelListApi.as_view(), name="model-list"),
    path("models/checkpoint", ModelCheckpointApi.as_view(), name="model-checkpoint"),
    path("estimates/quick", EstimateQuickApi.as_view(), name="estimate-quick"),
    path("estimates/solve", EstimateSolveApi.as_view(), name="estimate-solve"),
    path("estimates/colocated", EstimateColocatedApi.as_view(), name="estimate-colocated"),
    path("bootlogs/compare", BootLogCompareApi.as_view(), name="bootlog-compare"),
    path("calibrations/", CalibrationListApi.as_view(), name="calibration-list"),
    path("estimates/", EstimateCreateApi.as_view(), name="estimate-create"),
    path("estimates/<id:estimate_id>/", EstimateDetailApi.as_view(), name="estimate-detail"),
    path("workloads/", WorkloadProfileListApi.as_view(), name="workload-list"),
    path("workloads/import", WorkloadProfileImportApi.as_view(), name="workload-import"),
    path("workloads/preview", WorkloadPreviewApi.as_view(), name="workload-preview"),
    path("workloads/<id:workload_profile_id>/", WorkloadProfileDetailApi.as_view(), name="workload-detail"),
]

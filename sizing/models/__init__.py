"""Catalogs (GPUs, models), organisations and saved estimates. Byte counts are integers named *_bytes.

One module per noun; every model is importable from sizing.models as before."""

from sizing.models.accounts import ApiKey, Membership, Organisation
from sizing.models.catalog import Gpu, LlmModel
from sizing.models.deployments import Deployment
from sizing.models.estimates import Calibration, Estimate, PerfCalibration
from sizing.models.fingerprints import DeploymentMachine, Fingerprint
from sizing.models.simulations import SimulationJob, SimulationJobPart
from sizing.models.workloads import WorkloadProfile

__all__ = [
    "ApiKey",
    "Calibration",
    "Deployment",
    "DeploymentMachine",
    "Estimate",
    "Fingerprint",
    "Gpu",
    "LlmModel",
    "Membership",
    "Organisation",
    "PerfCalibration",
    "SimulationJob",
    "SimulationJobPart",
    "WorkloadProfile",
]

"""The Django admin lists every model the service stores (a typo in list_display would be a 500 here)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from sizing.models import Gpu, Organisation, PerfCalibration, SimulationJob


@pytest.mark.parametrize("model", ["organisation", "membership", "gpu", "llmmodel", "estimate", "calibration",
                                   "workloadprofile", "simulationjob", "perfcalibration"])
def test_admin_change_lists_render(catalog, model):
    # given a superuser and one row of the newer models
    admin_user = get_user_model().objects.create_superuser(username="root", password="x" * 16)
    organisation = Organisation.objects.create(name="Admin Org")
    job = SimulationJob.objects.create(organisation=organisation, kind="simulate", inputs={})
    PerfCalibration.objects.create(organisation=organisation, gpu=Gpu.objects.first(), engine="vllm",
                                   efficiencies={}, default_rms_log_error=0.3, calibrated_rms_log_error=0.1,
                                   measurements=2, job=job)
    client = Client()
    client.force_login(admin_user)

    # when / then
    response = client.get(f"/admin/sizing/{model}/")
    assert response.status_code == 200

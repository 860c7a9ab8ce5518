"""The Django admin lists every model the service stores (a typo in list_display would be a 500 here)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from sizing.models import Gpu, Organisation, PerfCalibration, SimulationJob


@pytest.mark.parametrize(
    "model",
    [
        "organisation",
        "membership",
        "gpu",
        "llmmodel",
        "estimate",
        "calibration",
        "workloadprofile",
        "simulationjob",
        "perfcalibration",
    ],
)
def test_admin_change_lists_render(catalog, model):
    # given a superuser and one row of the newer models
    admin_user = get_user_model().objects.create_superuser(username="root", password="x" * 16)
    organisation = Organisation.objects.create(name="Admin Org")
    job = SimulationJob.objects.create(organisation=organisation, kind="simulate", inputs={})
    PerfCalibration.objects.create(
        organisation=organisation,
        gpu=Gpu.objects.first(),
        engine="vllm",
        efficiencies={},
        default_rms_log_error=0.3,
        calibrated_rms_log_error=0.1,
        measurements=2,
        job=job,
    )
    client = Client()
    client.force_login(admin_user)

    # when / then
    response = client.get(f"/admin/sizing/{model}/")
    assert response.status_code == 200


def test_a_superuser_makes_a_member_an_admin_from_the_membership_list(db, organisation):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from sizing.models import Membership

    member = get_user_model().objects.create_user(username="member", password="x" * 12)
    membership = Membership.objects.create(user=member, organisation=organisation)
    root = get_user_model().objects.create_superuser(username="root", password="x" * 12, email="r@example.com")
    client = Client()
    client.force_login(root)
    page = client.get("/admin/sizing/membership/").content.decode()
    assert 'name="form-0-role"' in page  # editable in the list
    response = client.post(
        "/admin/sizing/membership/",
        {
            "form-TOTAL_FORMS": "1",
            "form-INITIAL_FORMS": "1",
            "form-0-id": str(membership.pk),
            "form-0-role": "admin",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.role == "admin"

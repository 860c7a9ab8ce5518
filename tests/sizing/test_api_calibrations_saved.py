"""Boot-log calibrations kept per organisation and applied to later estimates of the same launch."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.models import Calibration, Estimate, Gpu, LlmModel, Membership, Organisation
from sizing.services.estimates import estimate_compute
from tests.sizing.test_api_calibration import VLLM_PROFILE_LOG

BOOTLOG = "/api/v1/bootlogs/compare"
QUICK = "/api/v1/estimates/quick"
ESTIMATE = {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "max_model_len": 8192}


def test_a_saved_calibration_is_applied_to_later_estimates(catalog, api_client, organisation):
    # given the PR #10511 log saved as a calibration
    saved = api_client.post(
        BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb", "save": True}, format="json"
    ).json()
    # when
    body = api_client.post(QUICK, ESTIMATE, format="json").json()
    # then: the measured terms (non-torch 1.79 GiB, activations 1.26 GiB, 79.22 GiB seen) replace the defaults
    calibration = Calibration.objects.get(pk=saved["calibration_id"])
    assert calibration.organisation == organisation
    assert (calibration.engine, calibration.tp) == ("vllm", 1)
    assert calibration.evidence["runtime_reserve_bytes"].endswith("non_torch_memory     1.79GiB")
    assert body["calibration_applied"]["id"] == calibration.pk
    assert body["memory_per_gpu"]["runtime"] == round(1.79 * 2**30)
    assert body["memory_per_gpu"]["activations"] == round(1.26 * 2**30)
    assert body["capacity_bytes_per_gpu"] == round(79.22 * 2**30)
    assert body["figure_sources"]["runtime"] == "calibrated"
    assert body["figure_sources"]["capacity"] == "measured"


def test_a_calibration_can_be_left_out_and_does_not_leak_to_other_launches(catalog, api_client):
    api_client.post(BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb", "save": True}, format="json")
    off = api_client.post(QUICK, {**ESTIMATE, "use_calibration": False}, format="json").json()
    tp2 = api_client.post(QUICK, {**ESTIMATE, "gpus": 2}, format="json").json()
    sglang = api_client.post(QUICK, {**ESTIMATE, "engine": "sglang"}, format="json").json()
    assert off["calibration_applied"] is None
    assert off["figure_sources"]["runtime"] == "estimated"
    assert tp2["calibration_applied"] is None  # measured at TP 1
    assert sglang["calibration_applied"] is None  # measured under vLLM


def test_other_organisations_do_not_see_a_calibration(catalog, api_client):
    api_client.post(BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb", "save": True}, format="json")
    stranger = get_user_model().objects.create_user(username="stranger", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=Organisation.objects.create(name="Elsewhere"))
    client = APIClient()
    client.force_authenticate(user=stranger)
    assert client.get("/api/v1/calibrations/").json()["results"] == []
    assert client.post(QUICK, ESTIMATE, format="json").json()["calibration_applied"] is None


def test_saving_a_log_without_runtime_terms_is_refused_and_keeps_nothing(catalog, api_client):
    # given a V1 fragment that prints only the KV figures
    text = "INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens"
    response = api_client.post(
        BOOTLOG,
        {"text": text, "gpu": "nvidia-l40s-48gb", "save": True, "model": "meta-llama/Meta-Llama-3.1-8B"},
        format="json",
    )
    assert response.status_code == 400
    assert "save" in response.json()["extra"]["fields"]
    assert not Calibration.objects.exists()


def test_calibrations_are_listed_for_the_organisation(catalog, api_client):
    api_client.post(BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb", "save": True}, format="json")
    rows = api_client.get("/api/v1/calibrations/").json()["results"]
    assert [(row["model"], row["gpu"], row["engine"]) for row in rows] == [
        ("meta-llama/Meta-Llama-3-8B", "nvidia-h100-sxm-80gb", "vllm")
    ]


def test_a_saved_estimate_applies_the_calibration_too(catalog, api_client, organisation, user):
    # given a saved calibration and a saved estimate of the same launch, computed as the worker does
    api_client.post(BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb", "save": True}, format="json")
    estimate = Estimate.objects.create(
        organisation=organisation,
        requested_by=user,
        model=LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation=None),
        gpu=Gpu.objects.get(slug="nvidia-h100-sxm-80gb"),
        inputs={"max_model_len": 8192},
    )
    # when
    done = estimate_compute(estimate_id=estimate.pk)
    # then
    assert done.result["calibration_applied"] is not None
    assert done.result["memory_per_gpu"]["runtime"] == round(1.79 * 2**30)

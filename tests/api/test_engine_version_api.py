"""The engine version as an input of every API that estimates (issue 18): a bad version is a 400 naming the field
and the accepted form, a release older than the modelled bands is refused with the reason, a newer one is
estimated with the newest band and a warning; the estimate echoes the release it holds for; the version's
companions (usage_context, engine_mode, install, the environment toggles, enable_chunked_prefill,
kv_cache_memory_bytes) are accepted and stay empty when left out."""

from __future__ import annotations

import pytest

from sizing.estimator.versions import ACCEPTED_FORM, ENGINE_VERSION_RANGES
from sizing.models import Estimate, SimulationJob

QUICK = "/api/v1/estimates/quick"
BASE = {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb"}
NEWEST = str(ENGINE_VERSION_RANGES["vllm"].newest)
OLDEST = str(ENGINE_VERSION_RANGES["vllm"].oldest)


@pytest.mark.parametrize(
    "version",
    ["latest!", "1", "0.6", "v", "0.11.0 beta", "latest latest", "0.11.x"],
    ids=["latest-bang", "one-number", "two-numbers", "letter", "trailing-word", "twice", "wildcard"],
)
def test_a_version_that_is_not_a_version_is_a_400_naming_the_field_and_the_form(catalog, api_client, version):
    # given a quick estimate with a malformed engine_version

    # when
    response = api_client.post(QUICK, {**BASE, "engine_version": version}, format="json")

    # then
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_input"
    assert body["extra"]["fields"] == {
        "engine_version": [f"engine_version {version!r} is not a version: give {ACCEPTED_FORM}"]
    }


def test_an_empty_version_is_left_empty_and_means_latest(catalog, api_client):
    # when
    response = api_client.post(QUICK, {**BASE, "engine_version": ""}, format="json")

    # then
    assert response.status_code == 200, response.content
    assert (response.json()["engine_version"], response.json()["engine_version_requested"]) == (NEWEST, "latest")


def test_a_release_older_than_the_modelled_bands_is_refused_with_the_reason(catalog, api_client):
    # when
    response = api_client.post(QUICK, {**BASE, "engine_version": "0.5.4"}, format="json")

    # then: refused, never silently estimated with another band
    assert response.status_code == 400
    assert response.json()["extra"]["fields"]["engine_version"] == [
        f"vllm 0.5.4 is older than the oldest release modelled ({OLDEST}): its memory rules are not in the "
        f"estimator, so it is not estimated; choose {OLDEST} or later"
    ]


def test_the_band_check_follows_the_chosen_engine(catalog, api_client):
    # given SGLang, whose modelled releases start at 0.4.0: 0.5.4 is one of them
    sglang = {**BASE, "engine": "sglang", "engine_version": "0.5.4"}

    # when
    accepted = api_client.post(QUICK, sglang, format="json")
    refused = api_client.post(QUICK, {**sglang, "engine_version": "0.3.6"}, format="json")

    # then
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["engine_version"] == "0.5.4"
    assert refused.status_code == 400
    assert (
        "sglang 0.3.6 is older than the oldest release modelled"
        in refused.json()["extra"]["fields"]["engine_version"][0]
    )


@pytest.mark.parametrize(
    ("version", "resolved"),
    [("0.11.0", "0.11.0"), ("0.8.5.post1", "0.8.5"), ("v0.10.1rc1", "0.10.1"), ("latest", NEWEST), (OLDEST, OLDEST)],
    ids=["plain", "post-release", "v-prefix-rc", "latest", "oldest"],
)
def test_an_accepted_version_is_echoed_with_the_release_the_estimate_holds_for(catalog, api_client, version, resolved):
    # when
    response = api_client.post(QUICK, {**BASE, "engine_version": version}, format="json")

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["engine_version"] == resolved
    assert body["engine_version_requested"] == ("latest" if version == "latest" else version)


def test_no_version_means_the_newest_modelled_release(catalog, api_client):
    # when
    body = api_client.post(QUICK, BASE, format="json").json()

    # then
    assert (body["engine_version"], body["engine_version_requested"]) == (NEWEST, "latest")


def test_a_newer_release_than_modelled_is_estimated_with_the_newest_band_and_a_warning(catalog, api_client):
    # when
    response = api_client.post(QUICK, {**BASE, "engine_version": "9.0.0"}, format="json")

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["engine_version"], body["engine_version_requested"]) == (NEWEST, "9.0.0")
    assert (
        f"vllm 9.0.0 is newer than the newest release modelled ({NEWEST}): estimated with {NEWEST}'s rules; "
        "check its boot log"
    ) in body["warnings"]


def test_the_companions_of_the_version_are_accepted(catalog, api_client):
    # given every new input set
    payload = {
        **BASE,
        "engine_version": "0.11.0",
        "usage_context": "llm",
        "engine_mode": "v1",
        "install": "docker",
        "flashinfer_sampler": False,
        "estimate_cudagraphs": True,
        "nccl_nvls": None,
        "enable_chunked_prefill": False,
        "kv_cache_memory_bytes": 20 * 2**30,
    }

    # when
    response = api_client.post(QUICK, payload, format="json")

    # then
    assert response.status_code == 200, response.content
    assert response.json()["engine_version"] == "0.11.0"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("usage_context", "cli"),
        ("engine_mode", "v2"),
        ("install", "conda"),
        ("flashinfer_sampler", "sometimes"),
        ("kv_cache_memory_bytes", 0),
        ("enable_chunked_prefill", "maybe"),
    ],
    ids=["usage-context", "engine-mode", "install", "toggle", "kv-bytes", "chunked"],
)
def test_a_bad_companion_is_a_400_naming_it(catalog, api_client, field, value):
    # when
    response = api_client.post(QUICK, {**BASE, field: value}, format="json")

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == [field]


def test_the_saved_estimate_refuses_a_bad_version_and_stores_nothing(catalog, api_client):
    # when
    response = api_client.post("/api/v1/estimates/", {**BASE, "engine_version": "0.6"}, format="json")

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["engine_version"]
    assert Estimate.objects.count() == 0


def test_the_saved_estimate_keeps_the_version_and_leaves_empty_flags_empty(
    catalog, api_client, django_capture_on_commit_callbacks
):
    # when
    with django_capture_on_commit_callbacks(execute=False):
        response = api_client.post(
            "/api/v1/estimates/", {**BASE, "engine_version": "0.9.2", "install": "docker"}, format="json"
        )

    # then: the inputs keep what was given, nothing the user left out
    assert response.status_code == 202, response.content
    inputs = Estimate.objects.get().inputs
    assert (inputs["engine_version"], inputs["install"]) == ("0.9.2", "docker")
    assert not {"usage_context", "flashinfer_sampler", "enable_chunked_prefill", "kv_cache_memory_bytes"} & set(inputs)


@pytest.mark.parametrize("target", ["largest_context", "fewest_gpus"], ids=["context", "gpus"])
def test_solve_takes_the_version(catalog, api_client, target):
    # when
    refused = api_client.post(
        "/api/v1/estimates/solve", {**BASE, "target": target, "engine_version": "1"}, format="json"
    )
    solved = api_client.post(
        "/api/v1/estimates/solve", {**BASE, "target": target, "engine_version": "0.11.0"}, format="json"
    )

    # then
    assert refused.status_code == 400
    assert list(refused.json()["extra"]["fields"]) == ["engine_version"]
    assert solved.status_code == 200, solved.content


def test_colocated_names_the_deployment_whose_version_is_bad(catalog, api_client):
    # given two deployments on one GPU, the second with a bad version
    payload = {
        "gpu": "nvidia-h100-sxm-80gb",
        "deployments": [
            {"model": "meta-llama/Meta-Llama-3-8B", "engine_version": "0.11.0", "gpu_memory_utilization": 0.4},
            {"model": "meta-llama/Meta-Llama-3-8B", "engine_version": "latest!", "gpu_memory_utilization": 0.4},
        ],
    }

    # when
    response = api_client.post("/api/v1/estimates/colocated", payload, format="json")

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["deployments[1]"]
    assert list(response.json()["extra"]["fields"]["deployments[1]"]) == ["engine_version"]


def test_colocated_accepts_versions(catalog, api_client):
    # given
    payload = {
        "gpu": "nvidia-h100-sxm-80gb",
        "deployments": [
            {"model": "meta-llama/Meta-Llama-3-8B", "engine_version": "0.11.0", "gpu_memory_utilization": 0.4},
            {"model": "meta-llama/Meta-Llama-3-8B", "engine_version": "0.9.2", "gpu_memory_utilization": 0.4},
        ],
    }

    # when
    response = api_client.post("/api/v1/estimates/colocated", payload, format="json")

    # then
    assert response.status_code == 200, response.content


def test_a_simulation_refuses_a_bad_version_and_stores_nothing(catalog, api_client):
    # when
    response = api_client.post(
        "/api/v1/simulations/",
        {**BASE, "kind": "simulate", "input_tokens": 512, "output_tokens": 128, "rate": 1.0, "engine_version": "0.5.4"},
        format="json",
    )

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["engine_version"]
    assert SimulationJob.objects.count() == 0


def test_a_simulation_keeps_the_version_with_its_inputs(catalog, api_client, django_capture_on_commit_callbacks):
    # when
    with django_capture_on_commit_callbacks(execute=False):
        response = api_client.post(
            "/api/v1/simulations/",
            {
                **BASE,
                "kind": "simulate",
                "input_tokens": 512,
                "output_tokens": 128,
                "rate": 1.0,
                "engine_version": "0.11.0",
            },
            format="json",
        )

    # then
    assert response.status_code == 202, response.content
    assert SimulationJob.objects.get().inputs["engine_version"] == "0.11.0"


def test_the_openapi_schema_shows_the_version_inputs_and_outputs(catalog, api_client):
    # when
    schema = api_client.get("/api/schema/", {"format": "json"}).json()

    # then
    components = schema["components"]["schemas"]
    quick = components["QuickEstimateInput"]["properties"]
    assert quick["engine_version"]["type"] == "string"
    assert ACCEPTED_FORM in quick["engine_version"]["description"]
    assert {
        "usage_context",
        "engine_mode",
        "install",
        "flashinfer_sampler",
        "estimate_cudagraphs",
        "nccl_nvls",
        "enable_chunked_prefill",
        "kv_cache_memory_bytes",
    } <= set(quick)
    assert quick["flashinfer_sampler"]["nullable"] is True
    assert {"engine_version", "engine_version_requested", "defaults_assumed"} <= set(
        components["QuickEstimate"]["properties"]
    )
    for name in ("EstimateCreateInput", "EstimateSolveInput", "BootLogInput", "SimulationInput"):
        assert "engine_version" in components[name]["properties"], name

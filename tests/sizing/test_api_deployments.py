"""Deployments and their stored fingerprints through the API: upload with validation (nothing stored on refusal),
read back checked against the plan with the effect on the estimate, compare two, organisation scoping; and an
estimate or a simulation on a measured machine."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from sizing.models import Fingerprint, Membership, Organisation
from sizing.services.simulations import simulation_job_run
from tests.sizing.fingerprint.fixture_files import fixture_text

MIB = 2**20
PLAN = {
    "name": "Acme chat",
    "customer": "Acme",
    "model": "Qwen/Qwen2.5-14B",
    "gpu": "nvidia-a100-pcie-80gb",
    "gpu_count": 2,
    "tp": 2,
    "engine": "vllm",
    "image_cuda_version": "12.4",
    "max_model_len": 8192,
}
# 2× A100 80GB PCIe, driver 470.82.01 (CUDA 11.4), 80,994 MiB each, 20,480 MiB held on GPU 1; PHB between them
TEXTS = [fixture_text("table_2xa100_pcie_80col.txt"), fixture_text("topo_2xl4_pcie_spaces.txt")]


@pytest.fixture
def deployment_id(api_client, catalog) -> int:
    response = api_client.post("/api/v1/deployments/", PLAN, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _upload(client: APIClient, deployment: int, *files: tuple[str, bytes], **fields: str):
    data = {"deployment": str(deployment), **fields, "files": [io.BytesIO(body) for _, body in files]}
    for handle, (name, _) in zip(data["files"], files, strict=True):
        handle.name = name
    return client.post("/api/v1/fingerprints/", data, format="multipart")


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/deployments/"),
        ("post", "/api/v1/fingerprints/"),
        ("get", "/api/v1/fingerprints/1/"),
        ("get", "/api/v1/fingerprints/diff?before=1&after=2"),
    ],
)
def test_deployment_and_fingerprint_endpoints_require_authentication(db, method, url):
    assert getattr(APIClient(), method)(url).status_code in (401, 403)


def test_a_deployment_is_created_and_listed(api_client, deployment_id):
    listed = api_client.get("/api/v1/deployments/").json()["results"]
    assert [(d["id"], d["gpu"], d["tp"], d["fingerprint_count"]) for d in listed] == [
        (deployment_id, "nvidia-a100-pcie-80gb", 2, 0)
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "name"),
        ({"gpu": "nvidia-a99"}, "gpu"),
        ({"image_cuda_version": "twelve"}, "image_cuda_version"),
        ({"gpu_count": 3}, "gpu_count"),
        ({"engine": "vllmx"}, "engine"),
    ],
)
def test_a_bad_deployment_is_a_400_naming_the_field(api_client, catalog, change, field):
    response = api_client.post("/api/v1/deployments/", {**PLAN, **change}, format="json")
    assert response.status_code == 400
    assert field in response.json()["extra"]["fields"]
    assert api_client.get("/api/v1/deployments/").json()["results"] == []


def test_uploaded_outputs_are_stored_checked_against_the_plan_with_the_effect_on_the_estimate(
    api_client, deployment_id
):
    response = api_client.post(
        "/api/v1/fingerprints/",
        {"deployment": deployment_id, "texts": TEXTS, "host": "gpu-07", "label": "production"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["host"], body["label"], body["gpu_count"], body["driver_version"]) == (
        "gpu-07",
        "production",
        2,
        "470.82.01",
    )

    # the machine against the plan: an image for CUDA 12.4 on a CUDA 11.4 driver, TP 2 over PHB, 20 GiB held
    codes = {f["code"]: f for f in body["findings"]}
    assert codes["driver_too_old"]["source"] == "plan"
    assert codes["driver_too_old"]["severity"] == "error"
    assert codes["tp_over_pcie"]["extra"]["largest_nvlink_island"] == 1
    held = codes["memory_held_by_others"]["extra"]
    assert held["used_bytes"] == 20480 * MIB
    # vLLM takes its whole budget at start: 0.9 of the card as the driver reports it
    assert held["required_bytes"] == body["effect"]["needed_bytes_per_gpu"]
    assert body["effect"]["needed_is_budget"] is True
    assert codes["memory_in_use"]["source"] == "machine"

    # the measured card (80,994 MiB) replaces the catalog's (81,920 MiB) in the estimate; vLLM's capacity is what CUDA
    # sees: the catalog's 81,154 MiB, and the measured 80,994 MiB less the catalog's reservation (81,920 - 81,154 =
    # 766 MiB) = 80,228 MiB
    rows = {row["key"]: row for row in body["effect"]["rows"]}
    assert rows["capacity_bytes_per_gpu"] == {
        "key": "capacity_bytes_per_gpu",
        "catalog": 81154 * MIB,
        "measured": 80228 * MIB,
    }
    assert rows["kv_capacity_tokens"]["measured"] < rows["kv_capacity_tokens"]["catalog"]
    assert body["environment"]["memory_bytes_per_gpu"] == 80994 * MIB
    assert body["environment"]["link"] == "pcie"
    # the performance model with the measured PCIe path instead of the catalog's link
    performance = body["effect"]["performance"]
    assert performance["measured_link"] == "pcie"
    assert Fingerprint.objects.count() == 1


def test_a_probe_file_upload_takes_its_host_and_capture_time(api_client, deployment_id):
    probe = {
        "probe": "llm-sizing gpu_probe 1",
        "host": "dgx-a",
        "captured_at": "2026-11-02T08:30:00Z",
        "pieces": [
            {"name": "nvidia_smi_table", "command": "nvidia-smi", "exit_code": 0, "output": TEXTS[0]},
            {"name": "nvidia_smi_topo", "command": "nvidia-smi topo -m", "exit_code": 0, "output": TEXTS[1]},
        ],
    }
    response = _upload(api_client, deployment_id, ("fingerprint.json", json.dumps(probe).encode()))
    assert response.status_code == 201, response.content
    assert (response.json()["host"], response.json()["captured_at"]) == ("dgx-a", "2026-11-02T08:30:00Z")
    # the same file again is refused, naming the fingerprint it duplicates
    again = _upload(api_client, deployment_id, ("fingerprint.json", json.dumps(probe).encode()))
    assert again.status_code == 400
    assert "already uploaded" in again.json()["message"]
    assert Fingerprint.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "body", "words"),
    [
        ("bench.json", fixture_text("bench_serve_result.json").encode(), "vllm bench serve result"),
        ("blob.bin", bytes(range(256)) * 64, "binary"),
        (
            "cut.json",
            b'{"probe": "llm-sizing gpu_probe 1", "host": "gpu-01", "pieces": [{"name": "nvidia_smi_xml", "o',
            "cut short",
        ),
        ("cut.xml", fixture_text("xml_a100_mig.xml").encode()[:1500], "cut short"),
        ("empty.txt", b"", "empty"),
    ],
    ids=["another_tool", "binary", "cut_probe", "truncated_xml", "empty"],
)
def test_a_file_that_is_not_a_whole_output_is_a_400_and_nothing_is_stored(api_client, deployment_id, name, body, words):
    response = _upload(api_client, deployment_id, ("ok.txt", TEXTS[0].encode()), (name, body))
    assert response.status_code == 400, response.content
    message = response.json()["extra"]["fields"]["files"][0]
    assert message.startswith(name)
    assert words in message.lower()
    assert Fingerprint.objects.count() == 0


def test_a_50_mb_file_is_refused_by_its_size(api_client, deployment_id):
    response = _upload(api_client, deployment_id, ("huge.xml", b"<" + b"x" * (50 * 10**6)))
    assert response.status_code == 400
    body = response.json()
    assert body["extra"]["size_bytes"] == 50 * 10**6 + 1
    assert body["extra"]["limit_bytes"] == 4 * 2**20
    assert "limit" in body["message"]
    assert Fingerprint.objects.count() == 0


@override_settings(SIZING_MAX_FINGERPRINT_BYTES=1000)
def test_the_size_limit_is_a_setting(api_client, deployment_id):
    response = _upload(api_client, deployment_id, ("table.txt", TEXTS[0].encode()))
    assert response.status_code == 400
    assert response.json()["extra"]["limit_bytes"] == 1000


def test_two_fingerprints_compare_in_words_and_a_table(api_client, deployment_id):
    first = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    upgraded = [
        TEXTS[0].replace("470.82.01", "550.54.15").replace("CUDA Version: 11.4", "CUDA Version: 12.4"),
        TEXTS[1],
    ]
    second = api_client.post(
        "/api/v1/fingerprints/",
        {"deployment": deployment_id, "texts": upgraded, "host": "a", "label": "after upgrade"},
        format="json",
    ).json()
    diff = api_client.get(f"/api/v1/fingerprints/diff?before={first['id']}&after={second['id']}").json()
    assert diff["same"] is False
    changes = {change["key"]: change for change in diff["changes"]}
    assert (changes["driver_version"]["before"], changes["driver_version"]["after"]) == ("470.82.01", "550.54.15")
    assert diff["summary"]
    # the upgraded driver no longer fails the plan's image
    upgraded_codes = {f["code"] for f in api_client.get(f"/api/v1/fingerprints/{second['id']}/").json()["findings"]}
    assert "driver_too_old" not in upgraded_codes
    listed = api_client.get(f"/api/v1/fingerprints/?deployment={deployment_id}").json()["results"]
    assert [row["id"] for row in listed] == [second["id"], first["id"]]
    bad = api_client.get(f"/api/v1/fingerprints/diff?before={first['id']}&after=999999")
    assert bad.status_code == 400
    assert "after" in bad.json()["extra"]["fields"]


def test_another_organisations_deployments_and_fingerprints_are_invisible(api_client, deployment_id):
    stored = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    other = get_user_model().objects.create_user(username="rival", password="x" * 12)
    Membership.objects.create(user=other, organisation=Organisation.objects.create(name="Rival"))
    client = APIClient()
    client.force_authenticate(user=other)
    assert client.get(f"/api/v1/deployments/{deployment_id}/").status_code == 404
    assert client.get(f"/api/v1/fingerprints/{stored['id']}/").status_code == 404
    assert client.get("/api/v1/fingerprints/").json()["results"] == []
    refused = client.post("/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS}, format="json")
    assert refused.status_code == 400
    assert (
        client.post(
            "/api/v1/estimates/quick",
            {"model": "Qwen/Qwen2.5-14B", "gpu": "nvidia-a100-pcie-80gb", "fingerprint": stored["id"]},
            format="json",
        ).status_code
        == 400
    )


def test_changing_the_plan_rechecks_the_stored_fingerprint(api_client, deployment_id):
    stored = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    response = api_client.put(
        f"/api/v1/deployments/{deployment_id}/", {"image_cuda_version": "11.4", "tp": 1}, format="json"
    )
    assert response.status_code == 200, response.content
    codes = {f["code"] for f in api_client.get(f"/api/v1/fingerprints/{stored['id']}/").json()["findings"]}
    assert "driver_too_old" not in codes
    assert "tp_over_pcie" not in codes


def test_a_quick_estimate_on_a_measured_machine_uses_its_memory_and_checks_the_plan(api_client, deployment_id):
    stored = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    request = {"model": "Qwen/Qwen2.5-14B", "gpu": "nvidia-a100-pcie-80gb", "gpus": 2, "tp": 2}
    catalog = api_client.post("/api/v1/estimates/quick", request, format="json").json()
    measured = api_client.post(
        "/api/v1/estimates/quick", {**request, "fingerprint": stored["id"]}, format="json"
    ).json()
    # what CUDA sees: the catalog's 81,154 MiB; the measured 80,994 MiB less the catalog's 766 MiB reservation
    assert catalog["capacity_bytes_per_gpu"] == 81154 * MIB
    assert catalog["environment"] is None
    assert measured["capacity_bytes_per_gpu"] == 80228 * MIB
    assert measured["environment"]["fingerprint"] == stored["id"]
    assert "memory_held_by_others" in {f["code"] for f in measured["environment"]["findings"]}


def test_a_simulation_on_a_measured_machine_runs_on_its_link_and_memory(
    api_client, deployment_id, django_capture_on_commit_callbacks
):
    stored = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    job = api_client.post(
        "/api/v1/simulations/",
        {
            "kind": "simulate",
            "model": "Qwen/Qwen2.5-14B",
            "gpu": "nvidia-a100-pcie-80gb",
            "gpus": 2,
            "tp": 2,
            "input_tokens": 512,
            "output_tokens": 64,
            "rate": 1,
            "requests": 50,
            "fingerprint": stored["id"],
        },
        format="json",
    )
    assert job.status_code == 202, job.content
    simulation_job_run(job_id=job.json()["id"])  # what the worker does (tests/integration run the real one)
    result = api_client.get(f"/api/v1/simulations/{job.json()['id']}/").json()["result"]
    assert result["environment"]["link"] == "pcie"
    # the table shows no PCIe generation or width: the PCIe path with the model's PCIe figure (Gen4 x16 measured)
    assert result["environment"]["link_bytes_per_s"] is None
    assert result["plan"]["link_bytes_per_s"] == 25e9
    searched = api_client.post(
        "/api/v1/simulations/",
        {
            "kind": "search",
            "model": "Qwen/Qwen2.5-14B",
            "gpu": "nvidia-a100-pcie-80gb",
            "input_tokens": 512,
            "output_tokens": 64,
            "rate": 1,
            "slo": {"ttft_s": 1},
            "fingerprint": stored["id"],
        },
        format="json",
    )
    assert searched.status_code == 400
    assert "fingerprint" in searched.json()["extra"]["fields"]


def test_solving_and_saving_on_a_measured_machine_use_its_memory(
    api_client, deployment_id, django_capture_on_commit_callbacks
):
    stored = api_client.post(
        "/api/v1/fingerprints/", {"deployment": deployment_id, "texts": TEXTS, "host": "a"}, format="json"
    ).json()
    request = {
        "model": "Qwen/Qwen2.5-14B",
        "gpu": "nvidia-a100-pcie-80gb",
        "gpus": 2,
        "tp": 2,
        "tokens_per_request": 32768,
        "target": "largest_concurrency",
    }
    explicit = api_client.post(
        "/api/v1/estimates/solve", {**request, "gpu_memory_bytes": 80994 * MIB}, format="json"
    ).json()
    measured = api_client.post(
        "/api/v1/estimates/solve", {**request, "fingerprint": stored["id"]}, format="json"
    ).json()
    # the same answer as giving the card's 80,994 MiB by hand
    assert measured.pop("fingerprint") == stored["id"]
    assert measured == {k: v for k, v in explicit.items() if k != "fingerprint"}
    assert measured["estimate"]["capacity_bytes_per_gpu"] == 80228 * MIB  # 80,994 MiB less the 766 MiB reservation

    saved = api_client.post(
        "/api/v1/estimates/",
        {k: v for k, v in request.items() if k != "target"} | {"fingerprint": stored["id"]},
        format="json",
    )
    assert saved.status_code == 202, saved.content
    inputs = saved.json()["inputs"]
    assert (inputs["gpu_memory_bytes"], inputs["fingerprint"]) == (80994 * MIB, stored["id"])

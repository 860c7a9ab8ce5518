"""The journey of issue 5 from a fresh start: download the probe from the API, run it on the customer's server
(a fake nvidia-smi replaying a scenario), upload its file to the deployment, and see the findings and what the
measured machine does to the estimate."""

from __future__ import annotations

import io

import pytest

from sizing.models import Fingerprint
from tests.sizing.fingerprint.test_scenarios import SCENARIOS, run_probe

MIB = 2**20


@pytest.fixture
def served_probe(api_client, tmp_path):
    response = api_client.get("/api/v1/fingerprints/probe")
    assert response.status_code == 200
    path = tmp_path / "gpu_probe.sh"
    path.write_bytes(response.content)
    return path


def _upload(api_client, deployment: int, text: str):
    handle = io.BytesIO(text.encode())
    handle.name = "gpu-fingerprint.json"
    return api_client.post(
        "/api/v1/fingerprints/", {"deployment": str(deployment), "files": [handle]}, format="multipart"
    )


def test_sold_as_h100_measured_as_h20_the_plan_is_flagged_and_the_estimate_uses_the_measured_cards(
    api_client, catalog, served_probe, tmp_path
):
    # given: the deal was sized for 8 × H100 SXM; the probe the engineer downloaded ran on the customer's server
    deployment = api_client.post(
        "/api/v1/deployments/",
        {
            "name": "Acme production",
            "model": "meta-llama/Meta-Llama-3.1-70B",
            "gpu": "nvidia-h100-sxm-80gb",
            "gpu_count": 8,
            "tp": 8,
            "engine": "vllm",
            "image_cuda_version": "12.4",
            "max_model_len": 32768,
        },
        format="json",
    ).json()
    (tmp_path / "server").mkdir()
    probe_file = run_probe(SCENARIOS / "h20_8x_nvswitch_docker", tmp_path / "server", probe=served_probe)

    # when
    response = _upload(api_client, deployment["id"], probe_file)

    # then: stored under the probe's host, with the claim against the machine
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["host"] == (SCENARIOS / "h20_8x_nvswitch_docker" / "hostname.txt").read_text().strip()
    assert body["gpu_count"] == 8
    codes = {f["code"]: f for f in body["findings"]}
    assert codes["gpu_model_mismatch"]["severity"] == "error"
    assert "H20" in codes["gpu_model_mismatch"]["message"]
    assert "tp_over_pcie" not in codes  # NV18 through NVSwitch between all eight
    assert codes["container_memory_limit"]["source"] == "machine"
    # the estimate on the measured cards: 97,871 MiB each instead of the H100's 81,559 MiB, so more KV cache; vLLM's
    # capacity is what CUDA sees: the catalog's 81,090 MiB for the H100, and for the measured cards their 97,871 MiB
    # less the H100's driver reservation (81,559 - 81,090 = 469 MiB) = 97,402 MiB (nvidia-smi shows no CUDA total)
    rows = {row["key"]: row for row in body["effect"]["rows"]}
    assert (rows["capacity_bytes_per_gpu"]["catalog"], rows["capacity_bytes_per_gpu"]["measured"]) == (
        81_090 * MIB,
        97_402 * MIB,
    )
    assert rows["kv_capacity_tokens"]["measured"] > rows["kv_capacity_tokens"]["catalog"]
    assert body["environment"]["link"] == "nvlink"
    assert body["environment"]["link_bytes_per_s"] == 18 * 25e9
    assert Fingerprint.objects.filter(deployment_id=deployment["id"]).count() == 1


def test_two_pcie_a100s_with_a_tenant_the_tp_and_memory_findings_and_the_measured_link(
    api_client, catalog, served_probe, tmp_path
):
    deployment = api_client.post(
        "/api/v1/deployments/",
        {
            "name": "Acme staging",
            "model": "Qwen/Qwen2.5-14B",
            "gpu": "nvidia-a100-pcie-80gb",
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
            "image_cuda_version": "12.2",
        },
        format="json",
    ).json()
    (tmp_path / "server").mkdir()
    probe_file = run_probe(SCENARIOS / "a100_pcie_2x_shared", tmp_path / "server", probe=served_probe)

    response = _upload(api_client, deployment["id"], probe_file)

    assert response.status_code == 201, response.content
    body = response.json()
    codes = {f["code"]: f for f in body["findings"]}
    # vLLM wants 0.9 × 81,920 MiB free on each card at start; GPU 0 shows 20,487 MiB used
    held = codes["memory_held_by_others"]["extra"]
    assert (held["gpu"], held["used_bytes"]) == (0, 20_487 * MIB)  # the 20,480 MiB process and the context
    assert held["required_bytes"] == body["effect"]["needed_bytes_per_gpu"]
    assert codes["tp_over_pcie"]["extra"]["largest_nvlink_island"] == 1
    # the performance model all-reduces over the measured Gen4 x16 link (× 0.8), not the catalog default
    performance = body["effect"]["performance"]
    assert performance["measured"]["link_bytes_per_s"] == pytest.approx(1.969e9 * 16 * 0.8)
    assert performance["catalog"]["link_bytes_per_s"] == 25e9

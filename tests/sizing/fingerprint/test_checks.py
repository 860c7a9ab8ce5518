"""A deployment plan against what the machine says: claimed vs found, TP over NVLink islands, memory held by other
processes, MIG, and the driver against the image's CUDA version."""

from __future__ import annotations

import pytest

from sizing.fingerprint.checks import Plan, base_image_for, nvlink_islands, plan_check
from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.merge import fingerprint_merge
from tests.sizing.fingerprint.fixture_files import fixture_text

GIB = 2**30


def _fingerprint(*names: str) -> dict:
    return fingerprint_merge([parse_any(fixture_text(name)) for name in names], names=list(names))


def _by_code(findings: list[dict]) -> dict[str, dict]:
    return {finding["code"]: finding for finding in findings}


def test_the_customers_claim_against_the_machine():
    # given the 2 x A100 80GB PCIe table (80,994 MiB each) and a plan sold as 4 x H100 80GB
    fingerprint = _fingerprint("table_2xa100_pcie_80col.txt", "topo_2xl4_pcie_spaces.txt")
    plan = Plan(gpu_name="NVIDIA H100 SXM5 80GB", gpu_count=4, memory_bytes_per_gpu=81_559 * 2**20, tp=2)

    # when
    findings = _by_code(plan_check(fingerprint, plan))

    # then
    assert findings["gpu_count_mismatch"]["message"] == "the plan counts 4 GPU(s); the machine shows 2"
    assert findings["gpu_model_mismatch"]["severity"] == "error"
    assert "NVIDIA A100 80G" in findings["gpu_model_mismatch"]["message"]
    # 80,994 MiB is within 3 % of 81,559 MiB: not a memory finding
    assert "gpu_memory_smaller" not in findings
    # TP 2 over the PHB path between the two GPUs, no NVLink
    assert findings["tp_over_pcie"]["extra"] == {"tp": 2, "largest_nvlink_island": 1, "paths": "PHB", "replicas": 2}
    assert "PHB" in findings["tp_over_pcie"]["message"]
    assert "one replica per GPU" in findings["tp_over_pcie"]["message"]


def test_memory_already_held_by_another_process_against_the_bill():
    # given GPU 1 with 20,480 MiB in use (a python3 process) and a plan that needs 64 GiB per card of 80,994 MiB
    fingerprint = _fingerprint("table_2xa100_pcie_80col.txt")

    # when
    findings = plan_check(fingerprint, Plan(required_bytes_per_gpu=64 * GIB))

    # then: 20,480 MiB + 64 GiB > 80,994 MiB on GPU 1 only
    held = [f for f in findings if f["code"] == "memory_held_by_others"]
    assert len(held) == 1
    assert held[0]["extra"]["gpu"] == 1
    assert held[0]["extra"]["used_bytes"] == 20_480 * 2**20
    assert held[0]["extra"]["total_bytes"] == 80_994 * 2**20
    assert "20.0 GiB is already in use" in held[0]["message"]


def test_eight_h100_with_nvswitch_form_one_nvlink_island_and_tp8_is_fine():
    fingerprint = _fingerprint("topo_8xh100_sxm_nv18.txt")
    assert nvlink_islands(fingerprint) == [[0, 1, 2, 3, 4, 5, 6, 7]]
    assert "tp_over_pcie" not in _by_code(plan_check(fingerprint, Plan(tp=8)))


def test_an_image_for_a_newer_cuda_than_the_driver_is_refused_with_the_image_to_use():
    # given driver 470.82.01 (CUDA 11.4) and an image built for CUDA 12.4
    fingerprint = _fingerprint("table_2xa100_pcie_80col.txt")

    # when
    findings = _by_code(plan_check(fingerprint, Plan(image_cuda_version="12.4")))

    # then: CUDA 12.x needs driver ≥ 525.60.13
    message = findings["driver_too_old"]["message"]
    assert "CUDA 12.x needs driver ≥ 525.60.13 and this machine has 470.82.01" in message
    assert "use a base image built for CUDA 11.4 or older (nvidia/cuda:11.4.3-runtime-ubuntu20.04)" in message
    assert findings["driver_too_old"]["extra"]["base_image"] == "nvidia/cuda:11.4.3-runtime-ubuntu20.04"


def test_a_newer_minor_cuda_runs_through_compatibility_with_a_warning():
    # given the same driver (CUDA 11.4) and an image for CUDA 11.8: same major, newer minor
    fingerprint = _fingerprint("table_2xa100_pcie_80col.txt")
    findings = _by_code(plan_check(fingerprint, Plan(image_cuda_version="11.8")))
    assert findings["cuda_newer_than_driver"]["severity"] == "warning"
    assert "driver_too_old" not in findings
    # and an image for the driver's own CUDA says nothing
    assert plan_check(fingerprint, Plan(image_cuda_version="11.4")) == []


def test_mig_slices_are_named():
    fingerprint = _fingerprint("xml_a100_mig.xml")
    findings = _by_code(plan_check(fingerprint, Plan()))
    assert findings["mig_slices"]["severity"] == "warning"
    assert "MIG is enabled on GPU(s) 0" in findings["mig_slices"]["message"]


def test_a_smaller_card_than_the_estimate_assumed_is_an_error():
    fingerprint = _fingerprint("table_2xa100_pcie_80col.txt")
    findings = _by_code(plan_check(fingerprint, Plan(memory_bytes_per_gpu=94 * 10**9)))
    assert findings["gpu_memory_smaller"]["extra"] == {"planned_bytes": 94 * 10**9, "found_bytes": 80_994 * 2**20}


@pytest.mark.parametrize(
    ("driver_cuda", "image"),
    [
        ((12, 2), "nvidia/cuda:12.2.2-runtime-ubuntu22.04"),
        ((12, 7), "nvidia/cuda:12.6.3-runtime-ubuntu22.04"),  # no 12.7 image: the newest older minor
        ((11, 5), "nvidia/cuda:11.4.3-runtime-ubuntu20.04"),
        ((13, 2), "nvidia/cuda:13.0.1-runtime-ubuntu24.04"),
        ((11, 2), None),
    ],
)
def test_the_base_image_recommended_is_the_newest_the_driver_runs(driver_cuda, image):
    assert base_image_for(driver_cuda) == image

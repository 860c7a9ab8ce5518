"""Two fingerprints compared: GPUs by index, topology, software and host, with severities, codes and a summary."""

from __future__ import annotations

import copy
import json

from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.diff import fingerprint_diff
from sizing.fingerprint.merge import fingerprint_merge
from tests.sizing.fingerprint.fixture_files import fixture_text

MIB = 2**20
GIB = 2**30
H100 = "NVIDIA H100 80GB HBM3"


def _fingerprint_from(texts: dict[str, str]) -> dict:
    return fingerprint_merge([parse_any(text) for text in texts.values()], names=list(texts))


def _gpu(index: int, **facts) -> dict:
    gpu = {
        "index": index,
        "name": H100,
        "name_truncated": False,
        "vendor": "nvidia",
        "memory_total_bytes": 81_559 * MIB,
        "memory_used_bytes": 4 * MIB,
        "processes_memory_bytes": None,
        "pcie_generation_current": 5,
        "pcie_generation_max": 5,
        "pcie_width_current": 16,
        "pcie_width_max": 16,
        "mig_mode": "disabled",
        "ecc_mode": "enabled",
        "persistence_mode": "enabled",
        "bus_id": None,
        "uuid": f"GPU-{index:04d}",
    }
    return {**gpu, **facts}


def _machine(count: int = 2, **top) -> dict:
    fingerprint = {
        "gpus": [_gpu(i) for i in range(count)],
        "gpu_count": count,
        "driver_version": "550.54.15",
        "cuda_version": "12.4",
        "cuda_toolkit_version": None,
        "kernel_module_version": None,
        "topology": {"matrix": {}, "nvlink_pairs": [], "connections": [], "devices": []},
        "findings": [],
    }
    return {**fingerprint, **top}


def _codes(result: dict) -> list[tuple]:
    return [(c["code"], c["severity"], c["key"], c["gpu"], c["pair"]) for c in result["changes"]]


def test_the_same_machine_twice_has_no_differences():
    # given the table, topology and nvcc of one machine, probed twice
    texts = {
        name: fixture_text(name)
        for name in ("table_2xa100_pcie_80col.txt", "topo_2xl4_pcie_spaces.txt", "nvcc_12_4.txt")
    }

    # when
    result = fingerprint_diff(_fingerprint_from(texts), _fingerprint_from(texts))

    # then
    assert result == {"same": True, "changes": [], "summary": "no differences in what both probes measured"}


def test_a_driver_upgrade_between_two_probes_of_the_fixture_machine():
    # given the same table before and after the driver went from 470.82.01 (CUDA 11.4) to 535.129.03 (CUDA 12.2)
    names = ("table_2xa100_pcie_80col.txt", "topo_2xl4_pcie_spaces.txt")
    before_texts = {name: fixture_text(name) for name in names}
    after_texts = {
        **before_texts,
        names[0]: before_texts[names[0]].replace(
            "NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4",
            "NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2",
        ),
    }

    # when
    result = fingerprint_diff(_fingerprint_from(before_texts), _fingerprint_from(after_texts))

    # then: two version bumps, both info
    assert _codes(result) == [
        ("driver_changed", "info", "driver_version", None, None),
        ("cuda_changed", "info", "cuda_version", None, None),
    ]
    assert result["changes"][0]["before"] == "470.82.01"
    assert result["changes"][0]["after"] == "535.129.03"
    assert result["summary"] == "2 differences: 2 info"
    assert result["same"] is False


def test_a_lost_gpu_and_smaller_memory_are_errors_listed_before_info():
    # given 2 × H100 before; after: GPU 1 gone, GPU 0 an A100 40GB (40,960 MiB), the driver upgraded
    before = _machine(2, driver_version="535.129.03")
    after = _machine(1, driver_version="550.54.15")
    after["gpus"][0].update(name="NVIDIA A100-SXM4-40GB", memory_total_bytes=40_960 * MIB)

    # when
    result = fingerprint_diff(before, after)

    # then: errors first (the gpu area), then the software info
    assert _codes(result) == [
        ("gpu_removed", "error", "gpu", 1, None),
        ("gpu_model_changed", "error", "name", 0, None),
        ("gpu_memory_changed", "error", "memory_total_bytes", 0, None),
        ("driver_changed", "info", "driver_version", None, None),
    ]
    memory = result["changes"][2]
    assert (memory["before"], memory["after"]) == (81_559 * MIB, 40_960 * MIB)  # raw bytes for a table
    # 81,559 MiB = 79.6 GiB; 40,960 MiB = 40.0 GiB; the difference 40,599 MiB = 39.6 GiB
    assert memory["message"] == "GPU 0: memory 79.6 GiB → 40.0 GiB (39.6 GiB less, as the driver reports it)"
    assert result["changes"][0]["message"] == "GPU 1 (NVIDIA H100 80GB HBM3, 79.6 GiB) is gone"
    assert result["summary"] == "4 differences: 3 errors, 1 info"


def test_memory_within_three_percent_less_is_a_warning_and_more_is_info():
    # given 81,920 MiB before; 81,559 MiB after (361 MiB less: 0.44 % < 3 %) on GPU 0, 82,000 MiB on GPU 1
    before = _machine(2)
    before["gpus"][0]["memory_total_bytes"] = 81_920 * MIB
    after = _machine(2)
    after["gpus"][1]["memory_total_bytes"] = 82_000 * MIB

    # when
    result = fingerprint_diff(before, after)

    # then
    assert _codes(result) == [
        ("gpu_memory_changed", "warning", "memory_total_bytes", 0, None),
        ("gpu_memory_changed", "info", "memory_total_bytes", 1, None),
    ]
    # 361 MiB = 0.35 GiB → "0.4 GiB"; 441 MiB = 0.43 GiB → "0.4 GiB"
    assert (
        result["changes"][0]["message"] == "GPU 0: memory 80.0 GiB → 79.6 GiB (0.4 GiB less, as the driver reports it)"
    )
    assert result["changes"][1]["after"] == 82_000 * MIB


def test_volatile_values_are_not_differences():
    # given memory in use moving under the 256 MiB threshold and the current PCIe generation dropping at idle
    before = _machine(2)
    after = _machine(2)
    after["gpus"][0].update(memory_used_bytes=250 * MIB, pcie_generation_current=1)
    after["gpus"][1].update(memory_reserved_bytes=600 * MIB)

    # when
    result = fingerprint_diff(before, after)

    # then
    assert result["same"] is True
    assert result["changes"] == []


def test_memory_held_by_other_processes_crossing_the_threshold():
    # given GPU 0: a process holding 20,477 MiB appears (the used figure unknown); GPU 1: 20,480 MiB freed
    before = _machine(2)
    before["gpus"][1]["memory_used_bytes"] = 20_480 * MIB
    after = _machine(2)
    after["gpus"][0].update(memory_used_bytes=None, processes_memory_bytes=20_477 * MIB)

    # when
    result = fingerprint_diff(before, after)

    # then
    assert _codes(result) == [
        ("memory_in_use_appeared", "warning", "memory_used_bytes", 0, None),
        ("memory_in_use_cleared", "info", "memory_used_bytes", 1, None),
    ]
    assert (result["changes"][0]["before"], result["changes"][0]["after"]) == (4 * MIB, 20_477 * MIB)
    # 20,477 MiB / 1024 = 19.997 GiB
    assert result["changes"][0]["message"] == "GPU 0: other processes now hold 20.0 GiB (before: 0.0 GiB)"


def test_pcie_width_and_max_generation_compared_not_the_current_generation():
    # given GPU 0 trained at x8 instead of x16 and GPU 1 in a Gen4 slot instead of Gen5 (current gen volatile)
    before = _machine(2)
    after = _machine(2)
    after["gpus"][0].update(pcie_width_current=8, pcie_generation_current=2)
    after["gpus"][1].update(pcie_generation_max=4, pcie_generation_current=4)

    # when
    result = fingerprint_diff(before, after)

    # then
    assert _codes(result) == [
        ("pcie_link_changed", "warning", "pcie_width_current", 0, None),
        ("pcie_link_changed", "warning", "pcie_generation_max", 1, None),
    ]
    assert result["changes"][0]["message"].startswith("GPU 0: PCIe link width x16 → x8")
    assert (result["changes"][1]["before"], result["changes"][1]["after"]) == (5, 4)


def test_a_different_card_at_the_same_index_and_a_card_that_moved():
    # given GPU 0 replaced by a new card, and GPU 1 now the card that was GPU 0 before ... by UUID
    before = _machine(2)
    after = _machine(2)
    after["gpus"][0]["uuid"] = "GPU-new"
    after["gpus"][1]["uuid"] = "GPU-0000"

    # when
    result = fingerprint_diff(before, after)

    # then
    assert _codes(result) == [("gpu_replaced", "info", "uuid", 0, None), ("gpu_replaced", "info", "uuid", 1, None)]
    assert result["changes"][0]["message"] == "GPU 0 is a different card (UUID GPU-0000 → GPU-new)"
    assert (
        result["changes"][1]["message"] == "GPU 1 is a different card (UUID GPU-0001 → GPU-0000; it was GPU 0 before)"
    )


def test_a_name_cut_short_by_the_table_matches_its_full_name_and_a_variant_is_a_warning():
    # given the table's "NVIDIA A100 80G" (cut) against the full name; and a PCIe A100 against an SXM A100
    before = _machine(2)
    before["gpus"][0].update(name="NVIDIA A100 80G", name_truncated=True)
    before["gpus"][1].update(name="NVIDIA A100 80GB PCIe")
    after = _machine(2)
    after["gpus"][0].update(name="NVIDIA A100 80GB PCIe")
    after["gpus"][1].update(name="NVIDIA A100-SXM4-80GB")

    # when
    result = fingerprint_diff(before, after)

    # then: GPU 0 is the same; GPU 1 is the same model (A100), another variant
    assert _codes(result) == [("gpu_model_changed", "warning", "name", 1, None)]
    assert "another variant of the same model" in result["changes"][0]["message"]


def test_mig_on_is_a_warning_ecc_off_is_info():
    before = _machine(2)
    after = _machine(2)
    after["gpus"][0]["mig_mode"] = "enabled"
    after["gpus"][1]["ecc_mode"] = "disabled"

    result = fingerprint_diff(before, after)

    assert _codes(result) == [
        ("mig_mode_changed", "warning", "mig_mode", 0, None),
        ("ecc_mode_changed", "info", "ecc_mode", 1, None),
    ]


def test_gpus_added_and_count_changes_without_a_list():
    # given 2 GPUs listed before, 4 after; and two fingerprints that list 2 GPUs of 8 and of 4 attached
    added = fingerprint_diff(_machine(2), _machine(4))
    attached = fingerprint_diff(_machine(2, gpu_count=8), _machine(2, gpu_count=4))

    assert _codes(added) == [("gpu_added", "info", "gpu", 2, None), ("gpu_added", "info", "gpu", 3, None)]
    assert _codes(attached) == [("gpu_count_changed", "error", "gpu_count", None, None)]
    assert (attached["changes"][0]["before"], attached["changes"][0]["after"]) == (8, 4)


def test_nvlink_lost_on_one_gpu_of_the_eight_h100_machine():
    # given the 8 × H100 NV18 topology; after: GPU 7 reached over SYS only, and GPU 0 ↔ GPU 1 down to 12 links
    before = _fingerprint_from({"topo": fixture_text("topo_8xh100_sxm_nv18.txt")})
    after = copy.deepcopy(before)
    topology = after["topology"]
    topology["nvlink_pairs"] = [p for p in topology["nvlink_pairs"] if 7 not in (p["a"], p["b"])]
    topology["nvlink_pairs"][0]["links"] = 12
    for connection in topology["connections"]:
        if 7 in (connection["a"], connection["b"]):
            connection["kind"] = "SYS"
        if (connection["a"], connection["b"]) == (0, 1):
            connection["kind"] = "NV12"

    # when
    result = fingerprint_diff(before, after)

    # then: 7 errors (one per pair with GPU 7), then the link and island warnings
    lost = [c for c in result["changes"] if c["code"] == "nvlink_lost"]
    assert [c["pair"] for c in lost] == [[i, 7] for i in range(7)]
    assert all(c["severity"] == "error" and c["area"] == "topology" and c["key"] == "link" for c in lost)
    assert (lost[0]["before"], lost[0]["after"]) == ("NV18", "SYS")
    assert _codes(result)[7:] == [
        ("link_changed", "warning", "link", None, [0, 1]),
        ("nvlink_island_changed", "warning", "nvlink_islands", None, None),
    ]
    island = result["changes"][8]
    assert island["before"] == [[0, 1, 2, 3, 4, 5, 6, 7]]
    assert island["after"] == [[0, 1, 2, 3, 4, 5, 6], [7]]
    assert result["summary"] == "9 differences: 7 errors, 2 warnings"


def test_a_pcie_path_through_the_cpu_interconnect_is_a_warning():
    # given the two L4 behind one host bridge (PHB) before, across sockets (SYS) after, and back
    phb = _fingerprint_from({"topo": fixture_text("topo_2xl4_pcie_spaces.txt")})
    sys = copy.deepcopy(phb)
    sys["topology"]["connections"][0]["kind"] = "SYS"

    farther = fingerprint_diff(phb, sys)
    closer = fingerprint_diff(sys, phb)

    assert _codes(farther) == [("link_changed", "warning", "link", None, [0, 1])]
    assert _codes(closer) == [("link_changed", "info", "link", None, [0, 1])]


def test_topology_only_on_one_side_is_not_a_difference():
    before = _fingerprint_from({"topo": fixture_text("topo_8xh100_sxm_nv18.txt")})
    after = copy.deepcopy(before)
    after["topology"] = {"matrix": {}, "nvlink_pairs": [], "connections": [], "devices": []}

    assert fingerprint_diff(before, after)["same"] is True


def test_driver_downgrades():
    # given 550.54.15 (CUDA 12.4) against 535.129.03 (12.2: minor) and 470.82.01 (11.4: below CUDA 12's 525.60.13)
    newer = _machine(1, driver_version="550.54.15", cuda_version="12.4")
    minor = _machine(1, driver_version="535.129.03", cuda_version="12.2")
    major = _machine(1, driver_version="470.82.01", cuda_version="11.4")

    to_minor = fingerprint_diff(newer, minor)
    to_major = fingerprint_diff(newer, major)

    assert _codes(to_minor) == [
        ("driver_changed", "warning", "driver_version", None, None),
        ("cuda_changed", "warning", "cuda_version", None, None),
    ]
    assert _codes(to_major) == [
        ("driver_changed", "error", "driver_version", None, None),
        ("cuda_changed", "error", "cuda_version", None, None),
    ]
    assert "CUDA 12.x needs driver ≥ 525.60.13" in to_major["changes"][0]["message"]


def test_driver_downgrade_below_the_minimum_without_the_cuda_versions():
    # given only driver versions: 535.129.03 runs CUDA 12 (≥ 525.60.13), 520.61.05 does not
    before = _machine(1, driver_version="535.129.03", cuda_version=None)
    after = _machine(1, driver_version="520.61.05", cuda_version=None)

    assert _codes(fingerprint_diff(before, after)) == [("driver_changed", "error", "driver_version", None, None)]


def _host(**facts) -> dict:
    host = {
        "name": "gpu-node-1",
        "captured_at": "2025-01-01T00:00:00Z",
        "cpu_count": 64,
        "cpu_model": "AMD EPYC 9354",
        "sockets": 2,
        "numa_nodes": 2,
        "memory_total_bytes": 512 * GIB,
        "container": {"detected": True, "runtime": "docker", "evidence": "/.dockerenv"},
        "cgroup_memory_limit_bytes": 64 * GIB,
        "cgroup_version": 2,
        "python_version": "3.11.9",
        "packages": {
            "torch": "2.5.1",
            "vllm": "0.6.4",
            "sglang": "0.3.6",
            "tensorrt_llm": None,
            "transformers": "4.46.3",
        },
    }
    return {**host, **facts}


def test_host_and_packages():
    # given another host name and capture time (identity, not differences), half the CPUs, a lower cgroup limit,
    # torch downgraded, vllm upgraded, sglang removed and tensorrt_llm installed
    before = _machine(1, host=_host())
    after = _machine(
        1,
        host=_host(
            name="gpu-node-2",
            captured_at="2025-02-01T00:00:00Z",
            cpu_count=32,
            cgroup_memory_limit_bytes=32 * GIB,
            packages={
                "torch": "2.4.0",
                "vllm": "0.7.0",
                "sglang": None,
                "tensorrt_llm": "0.15.0",
                "transformers": "4.46.3",
            },
        ),
    )

    # when
    result = fingerprint_diff(before, after)

    # then: warnings by area (software, then host), then info
    assert _codes(result) == [
        ("package_changed", "warning", "torch", None, None),
        ("package_removed", "warning", "sglang", None, None),
        ("cpu_count_changed", "warning", "cpu_count", None, None),
        ("memory_limit_changed", "warning", "cgroup_memory_limit_bytes", None, None),
        ("package_changed", "info", "vllm", None, None),
        ("package_added", "info", "tensorrt_llm", None, None),
    ]
    limit = result["changes"][3]
    assert (limit["area"], limit["before"], limit["after"]) == ("host", 64 * GIB, 32 * GIB)
    assert limit["message"].startswith("container memory limit 64.0 GiB → 32.0 GiB")
    assert result["summary"] == "6 differences: 4 warnings, 2 info"


def test_a_cgroup_limit_appearing_and_a_host_only_on_one_side():
    # given no limit (cgroup read, limit None) before and 16 GiB after
    unlimited = _machine(1, host=_host(cgroup_memory_limit_bytes=None))
    limited = _machine(1, host=_host(cgroup_memory_limit_bytes=16 * GIB))

    appeared = fingerprint_diff(unlimited, limited)
    one_sided = fingerprint_diff(_machine(1), limited)

    assert _codes(appeared) == [("memory_limit_changed", "warning", "cgroup_memory_limit_bytes", None, None)]
    assert one_sided["same"] is True


def test_a_rebuilt_package_of_the_same_version_is_info():
    before = _machine(1, host=_host(packages={"torch": "2.5.1+cu121"}))
    after = _machine(1, host=_host(packages={"torch": "2.5.1+cu124"}))

    result = fingerprint_diff(before, after)

    assert _codes(result) == [("package_changed", "info", "torch", None, None)]
    assert result["summary"] == "1 difference: 1 info"


def test_the_result_is_json_ready_with_the_documented_keys():
    before = _machine(2, host=_host())
    after = _machine(1, host=_host(cpu_count=32))

    result = fingerprint_diff(before, after)

    assert json.loads(json.dumps(result)) == result
    assert set(result) == {"same", "changes", "summary"}
    assert all(
        set(change) == {"area", "key", "gpu", "pair", "before", "after", "severity", "code", "message"}
        for change in result["changes"]
    )

"""Realistic machines, replayed: the real probe (`deploy/tools/gpu_probe.sh`) runs against fake `nvidia-smi`, `nvcc`,
`lscpu`, ... that print a scenario's recorded outputs, and reads the scenario's /proc and /sys files through
GPU_PROBE_ROOT; its file goes through `fingerprint_from_texts` and the plan checks. See scenarios/README.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sizing.fingerprint.checks import Plan, plan_check
from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.probe import probe_pieces
from sizing.services.fingerprints import fingerprint_from_texts

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
PROBE = Path(__file__).resolve().parents[3] / "deploy" / "tools" / "gpu_probe.sh"
BASH = shutil.which("bash") or "/bin/bash"
# the only real commands on the probe's PATH: coreutils and the text tools it uses
TOOLS = ("cat", "head", "tr", "sed", "awk", "date", "mktemp", "wc", "grep", "rm", "iconv")
MIB = 2**20
GIB = 2**30
ALL = sorted(path.name for path in SCENARIOS.iterdir() if path.is_dir())

FAKE_NVIDIA_SMI = """case "$*" in
  "-q -x") file=nvidia_smi_q_x.xml ;;
  "") file=nvidia_smi.txt ;;
  "topo -m") file=topo.txt ;;
  --query-compute-apps=gpu_bus_id,pid,process_name,used_memory\\ --format=csv) file=compute_apps.csv ;;
  *) echo "fake nvidia-smi: unexpected arguments $*" >&2; exit 9 ;;
esac
exec cat "$SCENARIO/$file"
"""
FAKE_REPLAYS = {  # command → (the arguments the probe passes, the scenario file printed)
    "nvcc": ("--version", "nvcc.txt"),
    "nproc": ("", "nproc.txt"),
    "lscpu": ("", "lscpu.txt"),
    "numactl": ("--hardware", "numactl.txt"),
    "hostname": ("", "hostname.txt"),
}


def _script(path: Path, scenario: Path, body: str) -> None:
    path.write_text(f"#!{BASH}\nSCENARIO='{scenario}'\n{body}")
    path.chmod(0o755)


def run_probe(scenario: Path, work: Path, probe: Path = PROBE) -> str:
    """The probe file of `scenario`, made by the real probe (or `probe`, e.g. the one the API served) with only
    fakes and coreutils on its PATH."""
    bin_dir, out, tmp = work / "bin", work / "out", work / "tmp"
    for folder in (bin_dir, out, tmp):
        folder.mkdir()
    for tool in TOOLS:
        if shutil.which(tool):
            (bin_dir / tool).symlink_to(shutil.which(tool))
    _script(bin_dir / "nvidia-smi", scenario, FAKE_NVIDIA_SMI)
    for command, (arguments, name) in FAKE_REPLAYS.items():
        if (scenario / name).exists():
            _script(bin_dir / command, scenario, f'[ "$*" = "{arguments}" ] || exit 9\nexec cat "$SCENARIO/{name}"\n')
    # python3 -c '<the probe's package listing>'
    _script(bin_dir / "python3", scenario, '[ "$1" = "-c" ] || exit 9\nexec cat "$SCENARIO/python_packages.txt"\n')
    env = {"PATH": str(bin_dir), "HOME": str(work), "TMPDIR": str(tmp), "GPU_PROBE_ROOT": str(scenario / "root")}
    if (scenario / "env.txt").exists():
        env.update(line.split("=", 1) for line in (scenario / "env.txt").read_text().splitlines() if line)
    result = subprocess.run(
        [BASH, str(probe), "-o", "fingerprint.json"],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert os.listdir(out) == ["fingerprint.json"]
    assert os.listdir(tmp) == []  # its temporary file removed
    return (out / "fingerprint.json").read_text()


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory) -> Callable[[str], str]:
    """The probe file of a scenario (each probe run once per module)."""
    made: dict[str, str] = {}

    def make(name: str) -> str:
        if name not in made:
            made[name] = run_probe(SCENARIOS / name, tmp_path_factory.mktemp(name))
        return made[name]

    return make


@pytest.fixture(scope="module")
def fingerprint(probe_file) -> Callable[[str], dict]:
    return lambda name: fingerprint_from_texts(texts=[probe_file(name)])


def _findings(fingerprint: dict) -> list[tuple[str, str, int | None]]:
    return [(f["code"], f["severity"], f.get("extra", {}).get("gpu_index")) for f in fingerprint["findings"]]


def _codes(findings: list[dict]) -> list[str]:
    return [finding["code"] for finding in findings]


# --- every scenario --------------------------------------------------------------------------------------------


def test_there_are_the_seven_scenarios_of_the_readme():
    readme = (SCENARIOS / "README.md").read_text()
    assert len(ALL) == 7
    for name in ALL:
        assert f"`{name}`" in readme


@pytest.mark.parametrize("name", ALL)
def test_each_recorded_output_parses_as_what_it_is(name):
    scenario = SCENARIOS / name
    expected = {
        "nvidia_smi_q_x.xml": "nvidia_smi_xml",
        "nvidia_smi.txt": "nvidia_smi_table",
        "topo.txt": "nvidia_smi_topo",
        "nvcc.txt": "nvcc_version",
        "root/proc/driver/nvidia/version": "proc_driver_version",
        "root/usr/local/cuda/version.json": "cuda_version_json",
    }
    for file, kind in expected.items():
        if not (scenario / file).exists():
            continue
        piece = parse_any((scenario / file).read_text())
        assert (file, piece.kind.value, piece.problems) == (file, kind, ())
    xml, table = (parse_any((scenario / f).read_text()).facts for f in ("nvidia_smi_q_x.xml", "nvidia_smi.txt"))
    # the table and the XML agree on what both say
    assert [
        (g.bus_id, g.memory_total_bytes, g.memory_used_bytes, g.ecc_mode, g.mig_mode, g.persistence_mode)
        for g in table.gpus
    ] == [
        (g.bus_id, g.memory_total_bytes, g.memory_used_bytes, g.ecc_mode, g.mig_mode, g.persistence_mode)
        for g in xml.gpus
    ]
    assert (table.driver_version, table.cuda_version) == (xml.driver_version, xml.cuda_version)


@pytest.mark.parametrize("name", ALL)
def test_the_probe_records_every_entry_and_no_command_fails(name, probe_file):
    facts, pieces, problems = probe_pieces(probe_file(name))
    assert problems == []
    assert facts["host"] == (SCENARIOS / name / "hostname.txt").read_text().strip()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", facts["captured_at"])
    assert [entry for entry, _ in pieces][:4] == [
        "nvidia_smi_xml",
        "nvidia_smi_table",
        "nvidia_smi_topo",
        "driver_version",
    ]
    assert {
        "cpu_count",
        "lscpu",
        "meminfo",
        "cgroup_membership",
        "container_markers",
        "python_packages",
        "nvidia_smi_compute_apps",
    } <= set(facts["raw"])
    assert facts["raw"]["nvidia_smi_compute_apps"] == (SCENARIOS / name / "compute_apps.csv").read_text().rstrip("\n")


# --- one machine each ------------------------------------------------------------------------------------------


def test_eight_h100_sxm_with_nvswitch(fingerprint):
    fp = fingerprint("h100_sxm_8x_nvswitch")

    assert fp["gpu_count"] == 8
    assert {g["name"] for g in fp["gpus"]} == {"NVIDIA H100 80GB HBM3"}
    assert [g["memory_total_bytes"] for g in fp["gpus"]] == [81_559 * MIB] * 8 == [85_520_809_984] * 8
    assert {g["persistence_mode"] for g in fp["gpus"]} == {"enabled"}
    assert (fp["driver_version"], fp["cuda_version"], fp["kernel_module_version"], fp["cuda_toolkit_version"]) == (
        "550.54.15",
        "12.4",
        "550.54.15",
        "12.4.1",
    )
    # NV18 between all 8 x 7 / 2 = 28 pairs, GPUs 4-7 on NUMA node 1
    assert len(fp["topology"]["nvlink_pairs"]) == 28
    assert {pair["links"] for pair in fp["topology"]["nvlink_pairs"]} == {18}
    assert fp["topology"]["numa_affinity"]["GPU4"] == "1"
    assert fp["topology"]["nic_names"]["NIC8"] == "mlx5_8"
    # a healthy machine: nothing to say
    assert fp["findings"] == []
    host = fp["host"]
    assert (host["name"], host["cpu_count"], host["cpu_model"], host["sockets"], host["numa_nodes"]) == (
        "hgx-h100-01",
        224,
        "Intel(R) Xeon(R) Platinum 8480+",
        2,
        2,
    )
    assert host["memory_total_bytes"] == 2_113_506_020 * 1024
    assert host["container"] == {"detected": False, "runtime": None, "evidence": []}
    assert (host["cgroup_version"], host["cgroup_memory_limit_bytes"]) == (2, None)
    assert (host["python_version"], host["packages"]["vllm"], host["packages"]["sglang"]) == (
        "3.10.12",
        "0.6.4.post1",
        None,
    )

    plan = Plan(
        gpu_name="NVIDIA H100 SXM5 80GB",
        gpu_count=8,
        memory_bytes_per_gpu=81_559 * MIB,
        tp=8,
        image_cuda_version="12.4",
        required_bytes_per_gpu=70 * GIB,
    )
    assert plan_check(fp, plan) == []


def test_two_a100_pcie_without_nvlink_and_a_process_holding_20_gib(fingerprint):
    fp = fingerprint("a100_pcie_2x_shared")

    assert fp["gpu_count"] == 2
    assert [g["memory_total_bytes"] for g in fp["gpus"]] == [81_920 * MIB] * 2 == [85_899_345_920] * 2
    assert [g["memory_used_bytes"] for g in fp["gpus"]] == [20_487 * MIB, 4 * MIB]
    assert fp["gpus"][0]["processes_memory_bytes"] == 20_480 * MIB
    assert (fp["driver_version"], fp["cuda_version"], fp["cuda_toolkit_version"]) == ("535.183.01", "12.2", "12.2.2")
    assert fp["topology"]["connections"] == [{"a": 0, "b": 1, "kind": "NODE"}]
    assert fp["topology"]["nvlink_pairs"] == []
    assert _findings(fp) == [("memory_in_use", "warning", 0)]
    assert fp["findings"][0]["extra"]["used_bytes"] == 20_487 * MIB
    assert fp["host"]["container"]["detected"] is False

    # TP 2 over the NODE path, and a bill of 70 GiB per GPU next to the 20 GiB already held on GPU 0
    findings = plan_check(fp, Plan(tp=2, required_bytes_per_gpu=70 * GIB))
    assert _codes(findings) == ["memory_held_by_others", "tp_over_pcie"]
    held = findings[0]
    assert held["extra"] == {
        "gpu": 0,
        "used_bytes": 20_487 * MIB,
        "required_bytes": 70 * GIB,
        "total_bytes": 81_920 * MIB,
    }
    assert "GPU 0: 20.0 GiB is already in use; the plan needs 70.0 GiB of its 80.0 GiB" in held["message"]
    assert (findings[1]["extra"]["tp"], findings[1]["extra"]["largest_nvlink_island"]) == (2, 1)
    assert "TP 2 would all-reduce over NODE paths" in findings[1]["message"]


def test_four_l40s_with_ecc_off_on_one_and_a_narrow_link(fingerprint):
    fp = fingerprint("l40s_pcie_4x")

    assert fp["gpu_count"] == 4
    assert {g["name"] for g in fp["gpus"]} == {"NVIDIA L40S"}
    # ECC reserves part of GDDR6: 46,068 MiB with ECC on, 49,140 MiB with it off
    assert [g["memory_total_bytes"] for g in fp["gpus"]] == [46_068 * MIB] * 3 + [49_140 * MIB]
    assert [g["ecc_mode"] for g in fp["gpus"]] == ["enabled"] * 3 + ["disabled"]
    assert [(g["pcie_width_current"], g["pcie_width_max"]) for g in fp["gpus"]] == [
        (16, 16),
        (16, 16),
        (8, 16),
        (16, 16),
    ]
    assert {(c["a"], c["b"]): c["kind"] for c in fp["topology"]["connections"]} == {
        (0, 1): "NODE",
        (0, 2): "SYS",
        (0, 3): "SYS",
        (1, 2): "SYS",
        (1, 3): "SYS",
        (2, 3): "NODE",
    }
    # idle cards drop to Gen1 (info); the x8 link stays narrow under load (warning)
    assert _findings(fp) == [
        ("pcie_link_below_max", "info", 0),
        ("pcie_link_below_max", "info", 1),
        ("pcie_link_below_max", "warning", 2),
        ("pcie_link_below_max", "info", 3),
        ("ecc_off", "info", 3),
    ]
    assert "GPU 2 (NVIDIA L40S): PCIe link at Gen1 x8, the GPU supports Gen4 x16" in fp["findings"][2]["message"]
    host = fp["host"]
    assert (host["cgroup_version"], host["cgroup_memory_limit_bytes"], host["cgroup_memory_unlimited"]) == (
        1,
        None,
        True,
    )
    assert (host["cpu_model"], host["sockets"], host["numa_nodes"]) == ("AMD EPYC 9354 32-Core Processor", 2, 2)
    assert host["container"]["detected"] is False

    plan = Plan(gpu_name="NVIDIA L40S 48GB", gpu_count=4, memory_bytes_per_gpu=46_068 * MIB, tp=4)
    findings = plan_check(fp, plan)
    assert _codes(findings) == ["tp_over_pcie"]
    assert findings[0]["message"].startswith("TP 4 would all-reduce over NODE, SYS paths")


def test_eight_h20_in_a_docker_container_with_a_limit(fingerprint):
    fp = fingerprint("h20_8x_nvswitch_docker")

    assert fp["gpu_count"] == 8
    assert {g["name"] for g in fp["gpus"]} == {"NVIDIA H20"}
    assert [g["memory_total_bytes"] for g in fp["gpus"]] == [97_871 * MIB] * 8 == [102_625_181_696] * 8
    assert len(fp["topology"]["nvlink_pairs"]) == 28
    assert (fp["driver_version"], fp["cuda_version"]) == ("550.127.05", "12.4")
    host = fp["host"]
    assert host["name"] == "7c1e9a4d2b80"
    assert host["container"] == {
        "detected": True,
        "runtime": "docker",
        "evidence": ["/.dockerenv", "memory.max at /sys/fs/cgroup (namespaced cgroup)"],
    }
    assert (host["cgroup_version"], host["cgroup_memory_limit_bytes"]) == (2, 256 * GIB)
    assert host["packages"]["sglang"] == "0.4.1.post7"
    assert _findings(fp) == [("container_memory_limit", "info", None)]
    assert fp["findings"][0]["extra"]["host_memory_bytes"] == 2_113_418_096 * 1024
    assert fp["findings"][0]["message"] == (
        "the memory limit of this docker container is 256 GiB (the host has 2,015.5 GiB of RAM)"
    )

    # sold as 8 x H100: the count and memory fit, the model does not
    plan = Plan(gpu_name="NVIDIA H100 SXM5 80GB", gpu_count=8, memory_bytes_per_gpu=81_559 * MIB, tp=8)
    findings = plan_check(fp, plan)
    assert _codes(findings) == ["gpu_model_mismatch"]
    assert findings[0]["message"] == "the plan is for NVIDIA H100 SXM5 80GB; the machine has NVIDIA H20"


def test_one_rtx_4090_in_a_docker_container_without_a_memory_limit(fingerprint, probe_file):
    fp = fingerprint("rtx4090_docker_no_limit")

    assert fp["gpu_count"] == 1
    assert fp["gpus"][0]["name"] == "NVIDIA GeForce RTX 4090"
    assert fp["gpus"][0]["memory_total_bytes"] == 24_564 * MIB == 25_757_220_864
    assert fp["gpus"][0]["ecc_mode"] is None  # N/A
    assert (fp["driver_version"], fp["cuda_version"], fp["cuda_toolkit_version"]) == ("560.35.03", "12.6", None)
    assert fp["topology"]["devices"] == ["GPU0"]
    assert fp["topology"]["cpu_affinity"] == {"GPU0": "0-31"}
    host = fp["host"]
    assert host["container"]["runtime"] == "docker"
    assert (host["cgroup_version"], host["cgroup_memory_limit_bytes"], host["cgroup_memory_unlimited"]) == (
        2,
        None,
        True,
    )
    assert _findings(fp) == [("pcie_link_below_max", "info", 0), ("container_no_memory_limit", "warning", None)]
    assert fp["findings"][1]["extra"] == {
        "runtime": "docker",
        "gpu_count": 1,
        "swap_space_gib_per_gpu": 4,
        "swap_space_gib": 4,
        "minimum_limit_gib": 12,
        "host_memory_bytes": 130_936_104 * 1024,
        "host_memory_gib": 124.9,
    }
    assert "the probe ran in a docker container with no memory limit" in fp["findings"][1]["message"]
    # the markers the probe wrote
    facts, _, _ = probe_pieces(probe_file("rtx4090_docker_no_limit"))
    assert facts["raw"]["container_markers"] == (
        "/.dockerenv present\n/run/.containerenv absent\nKUBERNETES_SERVICE_HOST unset\ncontainer unset"
    )

    plan = Plan(
        gpu_name="NVIDIA GeForce RTX 4090 24GB",
        gpu_count=1,
        memory_bytes_per_gpu=24_564 * MIB,
        image_cuda_version="12.4",
    )
    assert plan_check(fp, plan) == []
    assert _codes(plan_check(fp, Plan(image_cuda_version="12.8"))) == ["cuda_newer_than_driver"]


def test_an_a100_with_mig_enabled(fingerprint):
    fp = fingerprint("a100_sxm_mig")

    assert fp["gpu_count"] == 1
    gpu = fp["gpus"][0]
    assert (gpu["name"], gpu["mig_mode"], gpu["memory_total_bytes"], gpu["virtualization_mode"]) == (
        "NVIDIA A100-SXM4-80GB",
        "enabled",
        81_920 * MIB,
        "Pass-Through",
    )
    assert _findings(fp) == [("mig_enabled", "warning", 0)]
    assert (fp["host"]["cpu_count"], fp["host"]["cpu_model"], fp["host"]["numa_nodes"]) == (
        12,
        "Intel(R) Xeon(R) CPU @ 2.20GHz",
        1,
    )

    findings = plan_check(fp, Plan(gpu_name="NVIDIA A100 SXM4 80GB", gpu_count=1))
    assert _codes(findings) == ["mig_slices"]
    assert "MIG is enabled on GPU(s) 0" in findings[0]["message"]


def test_four_v100_on_driver_470_in_a_kubernetes_pod(fingerprint, probe_file):
    fp = fingerprint("v100_470_k8s_pod")

    assert fp["gpu_count"] == 4
    # the XML's full name, not the table's "Tesla V100-SXM2..."
    assert {g["name"] for g in fp["gpus"]} == {"Tesla V100-SXM2-32GB"}
    assert not any(g["name_truncated"] for g in fp["gpus"])
    assert [g["memory_total_bytes"] for g in fp["gpus"]] == [32_510 * MIB] * 4 == [34_089_205_760] * 4
    assert (fp["driver_version"], fp["cuda_version"], fp["cuda_toolkit_version"]) == ("470.182.03", "11.4", "11.4.3")
    # the hybrid cube-mesh: every pair joined, by one or two links
    assert {(p["a"], p["b"]): p["links"] for p in fp["topology"]["nvlink_pairs"]} == {
        (0, 1): 1,
        (0, 2): 1,
        (0, 3): 2,
        (1, 2): 2,
        (1, 3): 1,
        (2, 3): 2,
    }
    host = fp["host"]
    assert host["name"] == "llm-serving-7f9d8c6b5-x2k4q"
    assert host["container"]["runtime"] == "kubernetes"
    assert {"KUBERNETES_SERVICE_HOST", "/.dockerenv", "/proc/1/cgroup: kubepods"} <= set(host["container"]["evidence"])
    assert (host["cgroup_version"], host["cgroup_memory_limit_bytes"]) == (1, 16 * GIB)
    assert host["packages"]["torch"] == "1.12.1+cu113"
    # 16 GiB < 8 GiB + 4 GiB x 4 GPUs
    assert _findings(fp) == [("container_memory_limit", "info", None), ("container_memory_limit_low", "warning", None)]
    assert fp["findings"][1]["extra"]["minimum_limit_gib"] == 24
    assert "10.96.0.1" not in probe_file("v100_470_k8s_pod")  # the service address is not recorded

    # an image built for CUDA 12.4 on driver 470
    findings = plan_check(fp, Plan(gpu_count=4, tp=4, image_cuda_version="12.4"))
    assert _codes(findings) == ["driver_too_old"]
    assert "CUDA 12.x needs driver ≥ 525.60.13 and this machine has 470.182.03" in findings[0]["message"]
    assert "nvidia/cuda:11.4.3-runtime-ubuntu20.04" in findings[0]["message"]


def test_a_compute_apps_list_is_the_memory_its_processes_hold_per_gpu():
    # given the probe's --query-compute-apps outputs: one process on GPU 0, and none
    held = parse_any((SCENARIOS / "a100_pcie_2x_shared" / "compute_apps.csv").read_text())
    empty = parse_any((SCENARIOS / "h100_sxm_8x_nvswitch" / "compute_apps.csv").read_text())

    # then a GPU known by its bus id (no index: the list has none), and for none a problem in words
    assert [(g.index, g.bus_id, g.processes_memory_bytes, g.memory_total_bytes) for g in held.facts.gpus] == [
        (None, "00000000:17:00.0", 20_480 * MIB, None)
    ]
    assert held.problems == ()
    assert empty.facts.gpus == ()
    assert empty.problems == (
        "a --query-compute-apps process list with no compute process (nothing holds GPU "
        "memory, or the processes run in another PID namespace)",
    )


def test_a_scenario_file_can_be_pasted_without_the_probe():
    # the XML and topology of one machine, pasted: the same GPUs, and a host of nothing
    scenario = SCENARIOS / "a100_pcie_2x_shared"
    fp = fingerprint_from_texts(
        texts=[
            (scenario / "nvidia_smi_q_x.xml").read_text(),
            (scenario / "topo.txt").read_text(),
            (scenario / "compute_apps.csv").read_text(),
        ]
    )
    assert fp["gpu_count"] == 2
    assert fp["host"]["name"] is None
    assert fp["gpus"][0]["processes_memory_bytes"] == 20_480 * MIB
    assert json.loads(json.dumps(fp)) == fp

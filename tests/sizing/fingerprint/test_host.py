"""Host facts of the probe's raw entries (CPUs, RAM, NUMA, container and its memory limit, engine packages) and the
findings a delivery engineer acts on, from hand-written entries; and the `host` of a fingerprint."""

from __future__ import annotations

import json

from sizing.fingerprint.host import host_facts, host_findings
from sizing.services.fingerprints import fingerprint_from_texts
from tests.sizing.fingerprint.fixture_files import fixture_text

GIB = 2**30

LSCPU_FLAT = """Architecture:                    x86_64
CPU(s):                          64
On-line CPU(s) list:             0-63
Vendor ID:                       AuthenticAMD
Model name:                      AMD EPYC 7513 32-Core Processor
Thread(s) per core:              2
Core(s) per socket:              16
Socket(s):                       2
NUMA node(s):                    4
NUMA node0 CPU(s):               0-7,32-39
"""
# util-linux 2.37+ on a terminal: fields indented under their group, and a "BIOS Model name" that is not the CPU's
LSCPU_TREE = """Architecture:            aarch64
  CPU op-mode(s):        64-bit
CPU(s):                  72
Vendor ID:               ARM
  BIOS Vendor ID:        NVIDIA
  Model name:            Neoverse-V2
    BIOS Model name:     Grace A02
    Thread(s) per core:  1
    Core(s) per socket:  72
    Socket(s):           1
NUMA node(s):            9
"""
NO_MARKERS = "/.dockerenv absent\n/run/.containerenv absent\nKUBERNETES_SERVICE_HOST unset\ncontainer unset\n"
DOCKER_MARKERS = NO_MARKERS.replace("/.dockerenv absent", "/.dockerenv present")
PACKAGES = (
    "python 3.10.12\ntorch 2.5.1\nvllm 0.6.4.post1\nsglang not installed\ntensorrt_llm not installed\n"
    "transformers 4.46.3\n"
)


def _codes(findings: list[dict]) -> list[str]:
    return [finding["code"] for finding in findings]


def test_a_bare_metal_host_on_cgroup_v2():
    # given a host: PID 1 in /init.scope, no memory.max at the root of /sys/fs/cgroup, no marker
    raw = {
        "cpu_count": "64\n",
        "lscpu": LSCPU_FLAT,
        "numa": "available: 2 nodes (0-1)\nnode 0 cpus: 0 1\n",
        "meminfo": "MemTotal:       527804148 kB\nMemFree:        500000000 kB\n",
        "cgroup_membership": "0::/init.scope\n",
        "container_markers": NO_MARKERS,
        "python_packages": PACKAGES,
    }

    # when
    facts = host_facts(raw)

    # then: numactl's node count wins over lscpu's
    assert facts == {
        "cpu_count": 64,
        "cpu_model": "AMD EPYC 7513 32-Core Processor",
        "sockets": 2,
        "numa_nodes": 2,
        "memory_total_bytes": 527_804_148 * 1024,
        "container": {"detected": False, "runtime": None, "evidence": []},
        "cgroup_version": 2,
        "cgroup_memory_limit_bytes": None,
        "cgroup_memory_unlimited": None,
        "python_version": "3.10.12",
        "packages": {
            "torch": "2.5.1",
            "vllm": "0.6.4.post1",
            "sglang": None,
            "tensorrt_llm": None,
            "transformers": "4.46.3",
        },
    }
    assert host_findings(facts, gpu_count=8) == []


def test_cgroup_v1_sentinel_is_no_limit_and_on_a_host_no_finding():
    # given a cgroup v1 host: the root memory cgroup shows the "no limit" sentinel
    raw = {
        "cgroup_v1_memory_limit": "9223372036854771712\n",
        "cgroup_membership": "6:memory:/\n1:name=systemd:/init.scope\n0::/init.scope\n",
        "container_markers": NO_MARKERS,
    }

    # when
    facts = host_facts(raw)

    # then
    assert (facts["cgroup_version"], facts["cgroup_memory_limit_bytes"], facts["cgroup_memory_unlimited"]) == (
        1,
        None,
        True,
    )
    assert facts["container"]["detected"] is False
    assert host_findings(facts, gpu_count=4) == []


def test_a_docker_container_without_a_memory_limit_is_a_warning():
    # given Docker on cgroup v2 with a private cgroup namespace: memory.max "max", PID 1 in "/"
    raw = {
        "cgroup_v2_memory_max": "max\n",
        "cgroup_membership": "0::/\n",
        "container_markers": DOCKER_MARKERS,
        "meminfo": "MemTotal:       131072000 kB\n",
    }

    # when
    facts = host_facts(raw)
    findings = host_findings(facts, gpu_count=2)

    # then
    assert facts["container"] == {
        "detected": True,
        "runtime": "docker",
        "evidence": ["/.dockerenv", "memory.max at /sys/fs/cgroup (namespaced cgroup)"],
    }
    assert (facts["cgroup_version"], facts["cgroup_memory_limit_bytes"], facts["cgroup_memory_unlimited"]) == (
        2,
        None,
        True,
    )
    assert _codes(findings) == ["container_no_memory_limit"]
    finding = findings[0]
    assert finding["severity"] == "warning"
    # 131,072,000 kB = 125 GiB; 8 GiB + 4 GiB x 2 GPUs = 16 GiB
    assert finding["extra"] == {
        "runtime": "docker",
        "gpu_count": 2,
        "swap_space_gib_per_gpu": 4,
        "swap_space_gib": 8,
        "minimum_limit_gib": 16,
        "host_memory_bytes": 125 * GIB,
        "host_memory_gib": 125.0,
    }
    for words in (
        "docker container with no memory limit",
        "4 GiB per GPU by default, 8 GiB for 2 GPU(s)",
        "125 GiB of RAM",
        "OOM killer",
        "at least 16 GiB",
        "--memory",
        "resources.limits.memory",
    ):
        assert words in finding["message"]


def test_a_cgroup_v2_limit_is_reported_and_a_small_one_is_a_warning():
    # given a container limited to 24 GiB on a 512 GiB host
    raw = {
        "cgroup_v2_memory_max": f"{24 * GIB}\n",
        "cgroup_membership": "0::/",
        "meminfo": "MemTotal:       536870912 kB\n",
    }
    facts = host_facts(raw)
    assert facts["cgroup_memory_limit_bytes"] == 24 * GIB
    assert facts["container"] == {
        "detected": True,
        "runtime": None,
        "evidence": ["memory.max at /sys/fs/cgroup (namespaced cgroup)"],
    }

    # when 4 GPUs: 8 + 4 x 4 = 24 GiB is enough
    enough = host_findings(facts, gpu_count=4)

    # then only the information
    assert _codes(enough) == ["container_memory_limit"]
    assert enough[0]["severity"] == "info"
    assert enough[0]["message"] == "the memory limit of this container is 24 GiB (the host has 512 GiB of RAM)"
    assert enough[0]["extra"] == {
        "runtime": None,
        "limit_bytes": 24 * GIB,
        "limit_gib": 24.0,
        "cgroup_version": 2,
        "host_memory_bytes": 512 * GIB,
        "host_memory_gib": 512.0,
    }

    # when 5 GPUs: 28 GiB advised
    low = host_findings(facts, gpu_count=5)

    # then a warning too
    assert _codes(low) == ["container_memory_limit", "container_memory_limit_low"]
    assert low[1]["severity"] == "warning"
    assert low[1]["extra"] == {
        "runtime": None,
        "limit_bytes": 24 * GIB,
        "limit_gib": 24.0,
        "minimum_limit_gib": 28,
        "gpu_count": 5,
        "base_gib": 8,
        "swap_space_gib_per_gpu": 4,
    }
    assert "24 GiB, is below the 28 GiB we advise for 5 GPU(s)" in low[1]["message"]


def test_one_byte_under_the_advised_limit_is_low():
    facts = host_facts({"cgroup_v2_memory_max": str(12 * GIB - 1)})
    assert _codes(host_findings(facts, gpu_count=1)) == ["container_memory_limit", "container_memory_limit_low"]
    assert host_findings(facts, gpu_count=1)[0]["extra"]["limit_gib"] == 12.0  # rounded for the words


def test_a_kubernetes_pod_on_cgroup_v1_names_kubernetes_and_every_piece_of_evidence():
    # given a pod (dockershim, systemd cgroup driver) limited to 16 GiB
    path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3b0f6c1e.slice/docker-9d2f5e71c3a0.scope"
    raw = {
        "cgroup_v1_memory_limit": f"{16 * GIB}\n",
        "cgroup_membership": f"10:memory:{path}\n1:name=systemd:{path}\n",
        "container_markers": DOCKER_MARKERS.replace("KUBERNETES_SERVICE_HOST unset", "KUBERNETES_SERVICE_HOST set"),
    }

    # when
    facts = host_facts(raw)

    # then Kubernetes wins over the docker it runs on
    assert facts["container"] == {
        "detected": True,
        "runtime": "kubernetes",
        "evidence": [
            "/.dockerenv",
            "KUBERNETES_SERVICE_HOST",
            "/proc/1/cgroup: kubepods",
            "/proc/1/cgroup: docker",
            "memory.limit_in_bytes set at /sys/fs/cgroup/memory (namespaced cgroup)",
        ],
    }
    assert (facts["cgroup_version"], facts["cgroup_memory_limit_bytes"]) == (1, 16 * GIB)
    findings = host_findings(facts, gpu_count=4)
    assert _codes(findings) == ["container_memory_limit", "container_memory_limit_low"]
    assert findings[1]["message"].startswith(
        "the memory limit of this kubernetes container, 16 GiB, is below the 24 GiB we advise for 4 GPU(s)"
    )


def test_podman_and_lxc_runtimes():
    podman = host_facts(
        {
            "container_markers": NO_MARKERS.replace("/run/.containerenv absent", "/run/.containerenv present").replace(
                "container unset", "container podman"
            ),
            "cgroup_membership": "0::/machine.slice/libpod-4c1d2e.scope/container\n",
        }
    )
    assert podman["container"] == {
        "detected": True,
        "runtime": "podman",
        "evidence": ["/run/.containerenv", "container=podman", "/proc/1/cgroup: libpod"],
    }
    lxc = host_facts({"cgroup_membership": "12:memory:/lxc/gpu-box\n0::/lxc/gpu-box\n"})
    assert lxc["container"]["runtime"] == "lxc"
    nspawn = host_facts({"container_markers": "container systemd-nspawn\n"})
    assert nspawn["container"] == {"detected": True, "runtime": None, "evidence": ["container=systemd-nspawn"]}


def test_a_container_in_the_hosts_cgroup_namespace_has_an_unknown_limit():
    # given Docker with --cgroupns=host on cgroup v2: /sys/fs/cgroup is the host's root (no memory.max)
    raw = {"cgroup_membership": "0::/system.slice/docker-4f9c2a1b7e3d.scope\n", "container_markers": DOCKER_MARKERS}

    # when
    facts = host_facts(raw)
    findings = host_findings(facts, gpu_count=1)

    # then no claim that there is no limit
    assert (facts["cgroup_version"], facts["cgroup_memory_limit_bytes"], facts["cgroup_memory_unlimited"]) == (
        2,
        None,
        None,
    )
    assert _codes(findings) == ["container_memory_limit_unknown"]
    assert findings[0]["severity"] == "info"
    assert findings[0]["extra"] == {"runtime": "docker"}


def test_missing_entries_give_none_and_no_finding():
    facts = host_facts({})
    assert facts == {
        "cpu_count": None,
        "cpu_model": None,
        "sockets": None,
        "numa_nodes": None,
        "memory_total_bytes": None,
        "container": {"detected": False, "runtime": None, "evidence": []},
        "cgroup_version": None,
        "cgroup_memory_limit_bytes": None,
        "cgroup_memory_unlimited": None,
        "python_version": None,
        "packages": {"torch": None, "vllm": None, "sglang": None, "tensorrt_llm": None, "transformers": None},
    }
    assert host_findings(facts, gpu_count=8) == []
    assert json.loads(json.dumps(facts)) == facts  # JSON-ready


def test_odd_entries_give_none_never_an_exception():
    raw = {
        "cpu_count": "nproc: command not found",
        "lscpu": "garbage\nSocket(s): -\n",
        "numa": "No NUMA available",
        "meminfo": "MemTotal: lots",
        "cgroup_v2_memory_max": "",
        "cgroup_membership": "???",
        "container_markers": "odd",
        "python_packages": "python\ntorch not installed\nvllm 0.6.4\n",
    }
    facts = host_facts(raw)
    assert (facts["cpu_count"], facts["sockets"], facts["numa_nodes"], facts["memory_total_bytes"]) == (
        None,
        None,
        None,
        None,
    )
    assert (facts["cgroup_version"], facts["cgroup_memory_limit_bytes"], facts["cgroup_memory_unlimited"]) == (
        2,
        None,
        None,
    )
    assert facts["python_version"] is None
    assert facts["packages"]["torch"] is None
    assert facts["packages"]["vllm"] == "0.6.4"


def test_lscpu_tree_layout_and_its_bios_model_name():
    facts = host_facts({"lscpu": LSCPU_TREE})
    assert (facts["cpu_count"], facts["cpu_model"], facts["sockets"], facts["numa_nodes"]) == (72, "Neoverse-V2", 1, 9)


def test_pasted_outputs_give_a_host_of_nothing():
    # given pasted outputs, no probe file
    fingerprint = fingerprint_from_texts(texts=[fixture_text("table_2xa100_pcie_80col.txt")])

    # then
    assert fingerprint["host"] == {"name": None, "captured_at": None, **host_facts({})}
    assert not [f for f in fingerprint["findings"] if f["code"].startswith("container_")]


def test_the_first_probe_file_names_the_host_and_its_findings_follow():
    def probe(host: str, memory_max: str) -> str:
        return json.dumps(
            {
                "probe": "llm-sizing gpu_probe 1",
                "host": host,
                "captured_at": "2025-01-16T03:44:10Z",
                "pieces": [
                    {
                        "name": "nvidia_smi_table",
                        "command": "nvidia-smi",
                        "exit_code": 0,
                        "output": fixture_text("table_2xa100_pcie_80col.txt"),
                    },
                    {
                        "name": "cgroup_v2_memory_max",
                        "command": "cat /sys/fs/cgroup/memory.max",
                        "exit_code": 0,
                        "output": memory_max,
                    },
                    {
                        "name": "container_markers",
                        "command": "container_markers",
                        "exit_code": 0,
                        "output": DOCKER_MARKERS,
                    },
                ],
            }
        )

    # when two probe files are given
    fingerprint = fingerprint_from_texts(texts=[probe("gpu-01", "max\n"), probe("gpu-02", f"{64 * GIB}\n")])

    # then the first one's host
    assert (fingerprint["host"]["name"], fingerprint["host"]["captured_at"]) == ("gpu-01", "2025-01-16T03:44:10Z")
    assert fingerprint["host"]["container"]["runtime"] == "docker"
    no_limit = [f for f in fingerprint["findings"] if f["code"] == "container_no_memory_limit"]
    assert len(no_limit) == 1
    # 8 GiB + 4 GiB per GPU for the 2 GPUs of the table
    assert no_limit[0]["extra"]["minimum_limit_gib"] == 16
    assert fingerprint["findings"][-1] is no_limit[0]

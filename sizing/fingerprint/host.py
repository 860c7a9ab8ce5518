"""The machine around the GPUs, read from the probe's raw entries (`probe_pieces(...)[0]["raw"]`: entry name → the
command's output): CPUs, RAM, NUMA nodes, whether the probe ran in a container and under which memory limit, and the
versions of the serving engines' Python packages; and the findings a delivery engineer acts on before installing.

Plain functions of the texts: a missing or odd entry gives None (or an empty list), never an exception.

Container detection, from weakest to strongest evidence, every piece named in `container["evidence"]`:

* the markers the runtimes leave (`container_markers` entry of the probe): Docker's `/.dockerenv`, Podman's
  `/run/.containerenv`, the `KUBERNETES_SERVICE_HOST` variable Kubernetes sets in every pod, and the `container`
  variable systemd-nspawn, LXC and Podman set;
* `/proc/1/cgroup`: on a host, PID 1 is systemd in `/init.scope` (or `/`); in a container, PID 1 is the container's
  entry point and its cgroup path names the runtime (`/docker/<id>`, `/kubepods/...`, `.../libpod-<id>.scope`,
  `.../cri-containerd-<id>.scope`, `/lxc/<name>`). With a private cgroup namespace (the default of Docker and
  containerd on cgroup v2) the path is just `/` and says nothing, hence the next rule;
* cgroup v2: `/sys/fs/cgroup` is the root of the unified hierarchy the process sees. On a host that is the root
  cgroup, which has no `memory.max` file (the root cannot be limited); a readable `/sys/fs/cgroup/memory.max`
  therefore means a namespaced (non-root) cgroup mounted there, i.e. a container;
* cgroup v1: the root of the memory hierarchy cannot be limited either: its `memory.limit_in_bytes` is the "no
  limit" sentinel (PAGE_COUNTER_MAX × page size, 9223372036854771712 with 4 KiB pages, anything ≥ 2**62 here); a
  smaller value at `/sys/fs/cgroup/memory/` means a container's cgroup is mounted there.

The memory limit: cgroup v2 `memory.max` ("max" = unlimited, else bytes), or cgroup v1 `memory.limit_in_bytes` (the
sentinel = unlimited). `cgroup_memory_unlimited` tells "no limit" (True) from "could not tell" (None): a container
with a host cgroup namespace shows the host's root cgroup, whose limit is not the container's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

GIB = 2**30
KIB = 1024
CGROUP_V1_UNLIMITED = 2**62  # v1 prints PAGE_COUNTER_MAX × page size (9223372036854771712 with 4 KiB pages) for none
ENGINE_PACKAGES = ("torch", "vllm", "sglang", "tensorrt_llm", "transformers")
# the least memory limit we advise for a container serving on N GPUs: BASE + SWAP_SPACE × N (see `host_findings`)
CONTAINER_BASE_GIB = 8
VLLM_SWAP_SPACE_GIB_PER_GPU = 4
# cgroup path word → runtime, in order of precedence (a Kubernetes pod path also names docker or containerd)
_RUNTIME_WORDS = (
    ("kubepods", "kubernetes"),
    ("libpod", "podman"),
    ("docker", "docker"),
    ("containerd", "containerd"),
    ("lxc", "lxc"),
)
_RUNTIME_ORDER = ("kubernetes", "podman", "docker", "containerd", "lxc")
_CONTAINER_VARIABLE = {"docker": "docker", "podman": "podman", "lxc": "lxc", "lxc-libvirt": "lxc"}


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*", text)
    return int(match.group(1)) if match else None


def _field(text: str | None, name: str) -> str | None:
    """The value of the first "name: value" line (lscpu indents its fields in groups since util-linux 2.37)."""
    if not text:
        return None
    match = re.search(rf"^\s*{re.escape(name)}:\s*(.*?)\s*$", text, re.MULTILINE)
    return match.group(1) if match and match.group(1) else None


def _memory_total_bytes(meminfo: str | None) -> int | None:
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB\s*$", meminfo or "", re.MULTILINE)
    return int(match.group(1)) * KIB if match else None


def _numa_nodes(numactl: str | None, lscpu: str | None) -> int | None:
    match = re.search(r"^available:\s*(\d+)\s+nodes?\b", numactl or "", re.MULTILINE)
    if match:
        return int(match.group(1))
    return _int(_field(lscpu, "NUMA node(s)"))


def _cgroup(raw: Mapping[str, str]) -> tuple[int | None, int | None, bool | None]:
    """(cgroup version, memory limit in bytes, unlimited) of what the probe saw."""
    v2, v1 = raw.get("cgroup_v2_memory_max"), raw.get("cgroup_v1_memory_limit")
    if v2 is not None:
        if v2.strip() == "max":
            return 2, None, True
        limit = _int(v2)
        return 2, limit, False if limit is not None else None
    if v1 is not None:
        limit = _int(v1)
        if limit is None:
            return 1, None, None
        return (1, None, True) if limit >= CGROUP_V1_UNLIMITED else (1, limit, False)
    lines = [line.strip() for line in (raw.get("cgroup_membership") or "").splitlines() if line.strip()]
    if any(re.match(r"^\d+:[^:]*\bmemory\b[^:]*:", line) for line in lines):
        return 1, None, None
    if lines and all(line.startswith("0::") for line in lines):
        return 2, None, None
    return None, None, None


def _markers(text: str | None) -> dict[str, str]:
    """The `container_markers` entry: "NAME value" lines → {NAME: value}."""
    markers = {}
    for line in (text or "").splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            markers[parts[0]] = parts[1]
    return markers


def _container(raw: Mapping[str, str], limit: int | None) -> dict[str, Any]:
    evidence: list[str] = []
    runtimes: set[str] = set()
    markers = _markers(raw.get("container_markers"))
    for marker, runtime in (("/.dockerenv", "docker"), ("/run/.containerenv", "podman")):
        if markers.get(marker) == "present":
            evidence.append(marker)
            runtimes.add(runtime)
    if markers.get("KUBERNETES_SERVICE_HOST") == "set":
        evidence.append("KUBERNETES_SERVICE_HOST")
        runtimes.add("kubernetes")
    variable = markers.get("container")
    if variable and variable != "unset":
        evidence.append("container variable" if variable == "set" else f"container={variable}")
        if variable in _CONTAINER_VARIABLE:
            runtimes.add(_CONTAINER_VARIABLE[variable])
    paths = [
        line.split(":", 2)[2] for line in (raw.get("cgroup_membership") or "").splitlines() if line.count(":") >= 2
    ]
    for word, runtime in _RUNTIME_WORDS:
        if any(word in path for path in paths):
            evidence.append(f"/proc/1/cgroup: {word}")
            runtimes.add(runtime)
    if raw.get("cgroup_v2_memory_max") is not None:
        evidence.append("memory.max at /sys/fs/cgroup (namespaced cgroup)")
    elif limit is not None and raw.get("cgroup_v1_memory_limit") is not None:
        evidence.append("memory.limit_in_bytes set at /sys/fs/cgroup/memory (namespaced cgroup)")
    found = next((name for name in _RUNTIME_ORDER if name in runtimes), None)
    return {"detected": bool(evidence), "runtime": found, "evidence": evidence}


def _python_packages(text: str | None) -> tuple[str | None, dict[str, str | None]]:
    """The `python_packages` entry ("python 3.10.12", "torch 2.5.1", "vllm not installed") → (python, packages)."""
    versions: dict[str, str] = {}
    for line in (text or "").splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and re.match(r"^\d+(\.\w+)*", parts[1]):
            versions[parts[0]] = parts[1].strip()
    return versions.get("python"), {name: versions.get(name) for name in ENGINE_PACKAGES}


def host_facts(raw: Mapping[str, str]) -> dict[str, Any]:
    """The host facts of the probe's raw entries, JSON-ready: `cpu_count`, `cpu_model`, `sockets`, `numa_nodes`,
    `memory_total_bytes` (MemTotal), `container` ({"detected", "runtime", "evidence"}), `cgroup_version`,
    `cgroup_memory_limit_bytes` (None when unlimited or unknown), `cgroup_memory_unlimited` (True: no limit, False:
    a limit, None: unknown), `python_version` and `packages` (the engines' versions, None when not installed)."""
    lscpu = raw.get("lscpu")
    cpu_count = _int(raw.get("cpu_count"))
    version, limit, unlimited = _cgroup(raw)
    python, packages = _python_packages(raw.get("python_packages"))
    return {
        "cpu_count": cpu_count if cpu_count is not None else _int(_field(lscpu, "CPU(s)")),
        "cpu_model": _field(lscpu, "Model name"),
        "sockets": _int(_field(lscpu, "Socket(s)")),
        "numa_nodes": _numa_nodes(raw.get("numa"), lscpu),
        "memory_total_bytes": _memory_total_bytes(raw.get("meminfo")),
        "container": _container(raw, limit),
        "cgroup_version": version,
        "cgroup_memory_limit_bytes": limit,
        "cgroup_memory_unlimited": unlimited,
        "python_version": python,
        "packages": packages,
    }


def _gib(value: int) -> float:
    return round(value / GIB, 1)


def _gib_text(value: float) -> str:
    return f"{value:,.1f}".removesuffix(".0")


def _finding(code: str, severity: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, "extra": extra}


def host_findings(facts: Mapping[str, Any], *, gpu_count: int) -> list[dict[str, Any]]:
    """Findings of the host facts (`host_facts`) for a deployment on `gpu_count` GPUs; each finding's `extra` holds
    every number and name its message uses, so that the UI can word it in another language.

    * `container_no_memory_limit` (warning): a container without a memory limit. The engine's CPU-side memory
      (weight loading, vLLM's swap space, tokenizer workers) competes with every other process on the host, and when
      RAM runs out the kernel OOM killer chooses a victim by size, often the engine itself.
    * `container_memory_limit_unknown` (info): a container whose limit the probe could not read.
    * `container_memory_limit` (info): the limit, beside the host's RAM.
    * `container_memory_limit_low` (warning): the limit is below 8 GiB + 4 GiB × GPUs. The 4 GiB per GPU is vLLM's
      default `--swap-space` (pinned CPU memory for preempted KV blocks, allocated per GPU worker by the V0 engine);
      the 8 GiB covers the engine process itself: the CUDA context and Python heap, the tokenizer and detokenizer
      workers, and the staging of safetensors shards while the weights load (a container's page cache counts
      against its limit). Below that, the engine can be OOM-killed while loading or under load.
    """
    findings: list[dict[str, Any]] = []
    container = facts.get("container") or {}
    runtime = container.get("runtime")
    limit = facts.get("cgroup_memory_limit_bytes")
    host_bytes = facts.get("memory_total_bytes")
    gpus = max(int(gpu_count or 0), 0)
    minimum_gib = CONTAINER_BASE_GIB + VLLM_SWAP_SPACE_GIB_PER_GPU * gpus
    host_extra = {"host_memory_bytes": host_bytes, "host_memory_gib": _gib(host_bytes) if host_bytes else None}
    label = f"{runtime} container" if runtime else "container"
    if container.get("detected") and limit is None and facts.get("cgroup_memory_unlimited") is True:
        swap_gib = VLLM_SWAP_SPACE_GIB_PER_GPU * gpus
        host_words = f" on this host's {_gib_text(_gib(host_bytes))} GiB of RAM" if host_bytes else " on the host"
        findings.append(
            _finding(
                "container_no_memory_limit",
                "warning",
                f"the probe ran in a {label} with no memory limit: the engine's CPU-side memory (weight loading, vLLM's "
                f"swap space of {VLLM_SWAP_SPACE_GIB_PER_GPU} GiB per GPU by default, {swap_gib} GiB for {gpus} GPU(s), "
                f"tokenizer workers) competes with everything else{host_words}, and when memory runs out the kernel OOM "
                f"killer picks a victim, often the engine; set a memory limit of at least {minimum_gib} GiB (docker run "
                "--memory, or resources.limits.memory in Kubernetes)",
                runtime=runtime,
                gpu_count=gpus,
                swap_space_gib_per_gpu=VLLM_SWAP_SPACE_GIB_PER_GPU,
                swap_space_gib=swap_gib,
                minimum_limit_gib=minimum_gib,
                **host_extra,
            )
        )
    elif container.get("detected") and limit is None:
        findings.append(
            _finding(
                "container_memory_limit_unknown",
                "info",
                f"the probe ran in a {label} but could not read its memory limit (/sys/fs/cgroup shows the host's "
                "cgroups, not the container's); check it with docker inspect or kubectl describe pod",
                runtime=runtime,
            )
        )
    if limit is not None:
        limit_gib = _gib(limit)
        host_words = f" (the host has {_gib_text(_gib(host_bytes))} GiB of RAM)" if host_bytes else ""
        findings.append(
            _finding(
                "container_memory_limit",
                "info",
                f"the memory limit of this {label} is {_gib_text(limit_gib)} GiB{host_words}",
                runtime=runtime,
                limit_bytes=limit,
                limit_gib=limit_gib,
                cgroup_version=facts.get("cgroup_version"),
                **host_extra,
            )
        )
        if limit < minimum_gib * GIB:
            findings.append(
                _finding(
                    "container_memory_limit_low",
                    "warning",
                    f"the memory limit of this {label}, {_gib_text(limit_gib)} GiB, is below the {minimum_gib} GiB we "
                    f"advise for {gpus} GPU(s) ({CONTAINER_BASE_GIB} GiB for the engine process, tokenizer and weight "
                    f"loading, plus vLLM's default swap space of {VLLM_SWAP_SPACE_GIB_PER_GPU} GiB per GPU): the engine "
                    "may be OOM-killed while loading weights or under load; raise the limit (docker run --memory, "
                    "resources.limits.memory) or lower vLLM's --swap-space",
                    runtime=runtime,
                    limit_bytes=limit,
                    limit_gib=limit_gib,
                    minimum_limit_gib=minimum_gib,
                    gpu_count=gpus,
                    base_gib=CONTAINER_BASE_GIB,
                    swap_space_gib_per_gpu=VLLM_SWAP_SPACE_GIB_PER_GPU,
                )
            )
    return findings

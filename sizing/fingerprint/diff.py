"""Compare two fingerprints (the dicts `merge.fingerprint_merge` returns: staging against production, a machine
before and after an upgrade) and say what differs, each difference with a stable code, a severity and words.

What is compared, and only where both probes measured it (a value one side lacks is not a difference):

- GPUs, matched by index: added or removed, the model (a name cut short by the nvidia-smi table matches the full
  name it begins), the memory the driver reports, the PCIe link's current width and its max generation and max
  width, MIG, ECC, persistence and virtualisation modes, and the UUID (another UUID at the same index is a different
  card; the bus id is compared only for the same card). Volatile values are left out: `memory_used_bytes` counts
  only as "memory held by other processes" crossing the 256 MiB threshold of merge.py (an idle GPU shows 0-30 MiB),
  and the current PCIe generation is not compared at all, since an idle GPU lowers it to save power. Reserved
  memory and the CPU affinity strings are not compared either.
- topology (when both probes include `nvidia-smi topo -m`): the connection kind of every GPU pair both know (NVLink
  lost, fewer or more links, another PCIe path), the largest NVLink island, each GPU's NUMA node.
- software: driver, the CUDA version the driver supports, the kernel module, the CUDA toolkit, Python and the
  serving packages of the `host` key (torch, vllm, sglang, tensorrt_llm, transformers).
- host (when both fingerprints carry a `host` key): CPUs, sockets, NUMA nodes, host memory, the container and its
  cgroup memory limit. The host name and the capture time identify a probe; they are not differences.

Severity: what can break a deployment or slow it down is an error (fewer GPUs, less GPU memory beyond 3 %, another
GPU model, NVLink lost, a driver downgraded below the minimum of the CUDA major version the other supported) or a
warning (a narrower PCIe link, fewer NVLink links, memory held by other processes, MIG turned on, a version
downgrade); version upgrades and the like are info. Changes come errors first, then warnings, then info, each
severity by area (gpu, topology, software, host).

>>> gpu = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "memory_total_bytes": 81_559 * 2**20}
>>> before = {"gpus": [gpu, {**gpu, "index": 1}], "gpu_count": 2, "driver_version": "535.129.03"}
>>> after = {"gpus": [gpu], "gpu_count": 1, "driver_version": "550.54.15"}
>>> result = fingerprint_diff(before, after)
>>> result["summary"]
'2 differences: 1 error, 1 info'
>>> [(c["code"], c["gpu"], c["severity"]) for c in result["changes"]]
[('gpu_removed', 1, 'error'), ('driver_changed', None, 'info')]
>>> result["changes"][0]["message"]
'GPU 1 (NVIDIA H100 80GB HBM3, 79.6 GiB) is gone'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sizing.fingerprint.checks import MEMORY_TOLERANCE, MIN_DRIVER_FOR_CUDA_MAJOR, nvlink_islands
from sizing.fingerprint.merge import MEMORY_IN_USE_THRESHOLD_BYTES

GIB = 2**30
SEVERITIES = ("error", "warning", "info")
AREAS = ("gpu", "topology", "software", "host")
PACKAGES = ("torch", "vllm", "sglang", "tensorrt_llm", "transformers")
# PCIe paths from the closest to the farthest (nvidia-smi topo -m legend)
PATH_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SOC": 5, "SYS": 5}


def _gib(value: int | float) -> str:
    return f"{value / GIB:.1f} GiB"


def _version(text: Any) -> tuple[int, ...] | None:
    """The leading numbers of a version ("2.5.1+cu124" → (2, 5, 1)); None when it does not start with one."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text)) if text is not None else None
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _change(
    area: str,
    code: str,
    severity: str,
    key: str,
    before: Any,
    after: Any,
    message: str,
    *,
    gpu: int | None = None,
    pair: tuple[int, int] | None = None,
) -> dict[str, Any]:
    return {
        "area": area,
        "key": key,
        "gpu": gpu,
        "pair": list(pair) if pair else None,
        "before": before,
        "after": after,
        "severity": severity,
        "code": code,
        "message": message,
    }


# --- GPUs ----------------------------------------------------------------------------------------------------------


def _gpus_by_index(fingerprint: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    gpus = fingerprint.get("gpus") or []
    return {(gpu["index"] if gpu.get("index") is not None else position): gpu for position, gpu in enumerate(gpus)}


def _same_name(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """A name the table cut short ("NVIDIA A100 80G...") is the same as the full name it begins."""
    name_a, name_b = str(a["name"]).strip(), str(b["name"]).strip()
    if name_a == name_b:
        return True
    short_a, short_b = name_a.rstrip(".").rstrip(), name_b.rstrip(".").rstrip()
    if a.get("name_truncated") or name_a.endswith("..."):
        return name_b.startswith(short_a)
    if b.get("name_truncated") or name_b.endswith("..."):
        return name_a.startswith(short_b)
    return False


_MODEL = re.compile(r"\b([A-Z]{1,3}\d{2,4}[A-Z]?|RTX\s?\d{4}|MI\d{3}X?)\b", re.IGNORECASE)


def _models(name: str) -> set[str]:
    return {token.upper().replace(" ", "") for token in _MODEL.findall(name)}


def _bus(bus_id: str) -> str:
    """'00000000:0A:00.0' and '0000:0a:00.0' are the same slot."""
    parts = bus_id.strip().lower().split(":")
    if len(parts) == 3 and re.fullmatch(r"[0-9a-f]+", parts[0]):
        parts[0] = f"{int(parts[0], 16):x}"
    elif len(parts) == 2:
        parts.insert(0, "0")
    return ":".join(parts)


def _in_use(gpu: Mapping[str, Any]) -> int | None:
    values = [gpu.get("memory_used_bytes"), gpu.get("processes_memory_bytes")]
    known = [value for value in values if value is not None]
    return max(known) if known else None


def _describe(gpu: Mapping[str, Any]) -> str:
    parts = [str(gpu["name"])] if gpu.get("name") else []
    if gpu.get("memory_total_bytes"):
        parts.append(_gib(gpu["memory_total_bytes"]))
    return f" ({', '.join(parts)})" if parts else ""


def _gpu_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    old, new = _gpus_by_index(before), _gpus_by_index(after)
    changes: list[dict[str, Any]] = []
    if old and new:
        for index in sorted(old.keys() - new.keys()):
            changes.append(
                _change(
                    "gpu",
                    "gpu_removed",
                    "error",
                    "gpu",
                    index,
                    None,
                    f"GPU {index}{_describe(old[index])} is gone",
                    gpu=index,
                )
            )
        for index in sorted(new.keys() - old.keys()):
            changes.append(
                _change(
                    "gpu",
                    "gpu_added",
                    "info",
                    "gpu",
                    None,
                    index,
                    f"GPU {index}{_describe(new[index])} is new",
                    gpu=index,
                )
            )
    count_before, count_after = before.get("gpu_count") or 0, after.get("gpu_count") or 0
    if not changes and count_before and count_after and count_before != count_after:
        fewer = count_after < count_before
        changes.append(
            _change(
                "gpu",
                "gpu_count_changed",
                "error" if fewer else "info",
                "gpu_count",
                count_before,
                count_after,
                f"{count_before} GPUs attached before, {count_after} after",
            )
        )
    uuid_index = {gpu.get("uuid"): index for index, gpu in old.items() if gpu.get("uuid")}
    for index in sorted(old.keys() & new.keys()):
        changes.extend(_one_gpu(index, old[index], new[index], uuid_index))
    return changes


def _one_gpu(
    index: int, a: Mapping[str, Any], b: Mapping[str, Any], uuid_index: dict[Any, int]
) -> list[dict[str, Any]]:
    label = f"GPU {index}"
    found: list[dict[str, Any]] = []

    def both(key: str) -> bool:
        return a.get(key) is not None and b.get(key) is not None and a[key] != b[key]

    same_card = True
    if both("uuid"):
        same_card = False
        moved = uuid_index.get(b["uuid"])
        where = f"; it was GPU {moved} before" if moved is not None and moved != index else ""
        found.append(
            _change(
                "gpu",
                "gpu_replaced",
                "info",
                "uuid",
                a["uuid"],
                b["uuid"],
                f"{label} is a different card (UUID {a['uuid']} → {b['uuid']}{where})",
                gpu=index,
            )
        )
    if a.get("name") and b.get("name") and not _same_name(a, b):
        same_model = bool(_models(a["name"])) and _models(a["name"]) == _models(b["name"])
        found.append(
            _change(
                "gpu",
                "gpu_model_changed",
                "warning" if same_model else "error",
                "name",
                a["name"],
                b["name"],
                f"{label}: {a['name']} → {b['name']}"
                + (" (another variant of the same model)" if same_model else ": another GPU model"),
                gpu=index,
            )
        )
    if a.get("vendor") and b.get("vendor") and a["vendor"] != b["vendor"]:
        found.append(
            _change(
                "gpu",
                "gpu_model_changed",
                "error",
                "vendor",
                a["vendor"],
                b["vendor"],
                f"{label}: {a['vendor']} → {b['vendor']}",
                gpu=index,
            )
        )
    if both("memory_total_bytes"):
        less, more = a["memory_total_bytes"], b["memory_total_bytes"]
        if more < less:
            severity = "warning" if more >= less * (1 - MEMORY_TOLERANCE) else "error"
            words = f"{_gib(less - more)} less"
        else:
            severity, words = "info", f"{_gib(more - less)} more"
        found.append(
            _change(
                "gpu",
                "gpu_memory_changed",
                severity,
                "memory_total_bytes",
                less,
                more,
                f"{label}: memory {_gib(less)} → {_gib(more)} ({words}, as the driver reports it)",
                gpu=index,
            )
        )
    used_a, used_b = _in_use(a), _in_use(b)
    if used_a is not None and used_b is not None:
        held_a, held_b = used_a > MEMORY_IN_USE_THRESHOLD_BYTES, used_b > MEMORY_IN_USE_THRESHOLD_BYTES
        if held_b and not held_a:
            found.append(
                _change(
                    "gpu",
                    "memory_in_use_appeared",
                    "warning",
                    "memory_used_bytes",
                    used_a,
                    used_b,
                    f"{label}: other processes now hold {_gib(used_b)} (before: {_gib(used_a)})",
                    gpu=index,
                )
            )
        elif held_a and not held_b:
            found.append(
                _change(
                    "gpu",
                    "memory_in_use_cleared",
                    "info",
                    "memory_used_bytes",
                    used_a,
                    used_b,
                    f"{label}: the {_gib(used_a)} other processes held is free now",
                    gpu=index,
                )
            )
    for key, words in (
        ("pcie_width_current", "PCIe link width"),
        ("pcie_width_max", "PCIe max width"),
        ("pcie_generation_max", "PCIe max generation"),
    ):
        if both(key):
            narrower = b[key] < a[key]
            unit = "x" if "width" in key else "Gen"
            found.append(
                _change(
                    "gpu",
                    "pcie_link_changed",
                    "warning" if narrower else "info",
                    key,
                    a[key],
                    b[key],
                    f"{label}: {words} {unit}{a[key]} → {unit}{b[key]}"
                    + (
                        " (a slot, riser or BIOS setting: less host-to-GPU and PCIe all-reduce bandwidth)"
                        if narrower
                        else ""
                    ),
                    gpu=index,
                )
            )
    if both("mig_mode"):
        on = str(b["mig_mode"]).lower() == "enabled"
        found.append(
            _change(
                "gpu",
                "mig_mode_changed",
                "warning" if on else "info",
                "mig_mode",
                a["mig_mode"],
                b["mig_mode"],
                f"{label}: MIG {a['mig_mode']} → {b['mig_mode']}"
                + (": an engine sees one slice, not the whole card" if on else ""),
                gpu=index,
            )
        )
    for key, code, words in (
        ("ecc_mode", "ecc_mode_changed", "ECC"),
        ("persistence_mode", "persistence_mode_changed", "persistence mode"),
        ("virtualization_mode", "virtualization_mode_changed", "virtualisation mode"),
        ("driver_model", "driver_model_changed", "driver model"),
    ):
        if both(key):
            severity = "warning" if key == "virtualization_mode" else "info"
            found.append(
                _change("gpu", code, severity, key, a[key], b[key], f"{label}: {words} {a[key]} → {b[key]}", gpu=index)
            )
    if same_card and both("bus_id") and _bus(a["bus_id"]) != _bus(b["bus_id"]):
        found.append(
            _change(
                "gpu",
                "bus_id_changed",
                "info",
                "bus_id",
                a["bus_id"],
                b["bus_id"],
                f"{label}: PCI bus id {a['bus_id']} → {b['bus_id']}"
                + (" (the same card in another slot)" if a.get("uuid") and a.get("uuid") == b.get("uuid") else ""),
                gpu=index,
            )
        )
    return found


# --- topology ------------------------------------------------------------------------------------------------------


def _connections(fingerprint: Mapping[str, Any]) -> dict[tuple[int, int], str]:
    topology = fingerprint.get("topology") or {}
    return {(min(c["a"], c["b"]), max(c["a"], c["b"])): str(c["kind"]) for c in topology.get("connections") or []}


def _nvlinks(kind: str) -> int | None:
    match = re.fullmatch(r"NV(\d+)", kind)
    return int(match.group(1)) if match else None


def _topology_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    old, new = _connections(before), _connections(after)
    if not old or not new:
        return []
    changes: list[dict[str, Any]] = []
    for pair in sorted(old.keys() & new.keys()):
        was, now = old[pair], new[pair]
        if was == now:
            continue
        links_was, links_now = _nvlinks(was), _nvlinks(now)
        label = f"GPU {pair[0]} ↔ GPU {pair[1]}"
        if links_was and not links_now:
            changes.append(
                _change(
                    "topology",
                    "nvlink_lost",
                    "error",
                    "link",
                    was,
                    now,
                    f"{label}: NVLink ({was}) is gone, the pair now talks over {now}: "
                    "a TP group across it all-reduces over PCIe",
                    pair=pair,
                )
            )
        elif links_now and not links_was:
            changes.append(
                _change(
                    "topology",
                    "nvlink_gained",
                    "info",
                    "link",
                    was,
                    now,
                    f"{label}: joined by NVLink ({now}) where it was {was}",
                    pair=pair,
                )
            )
        elif links_was and links_now:
            fewer = links_now < links_was
            changes.append(
                _change(
                    "topology",
                    "link_changed",
                    "warning" if fewer else "info",
                    "link",
                    was,
                    now,
                    f"{label}: {links_was} → {links_now} NVLink links"
                    + (" (less all-reduce bandwidth)" if fewer else ""),
                    pair=pair,
                )
            )
        else:
            farther = PATH_RANK.get(now, 6) > PATH_RANK.get(was, 6)
            changes.append(
                _change(
                    "topology",
                    "link_changed",
                    "warning" if farther else "info",
                    "link",
                    was,
                    now,
                    f"{label}: PCIe path {was} → {now}" + (" (a longer path between the two)" if farther else ""),
                    pair=pair,
                )
            )
    islands_before, islands_after = nvlink_islands(before), nvlink_islands(after)
    largest_before = len(islands_before[0]) if islands_before else 0
    largest_after = len(islands_after[0]) if islands_after else 0
    if largest_before != largest_after:
        shrank = largest_after < largest_before
        changes.append(
            _change(
                "topology",
                "nvlink_island_changed",
                "warning" if shrank else "info",
                "nvlink_islands",
                islands_before,
                islands_after,
                f"the largest NVLink group has {largest_before} GPU(s) before, {largest_after} after"
                + (f": a TP group of more than {largest_after} no longer stays on NVLink" if shrank else ""),
            )
        )
    numa_before = (before.get("topology") or {}).get("numa_affinity") or {}
    numa_after = (after.get("topology") or {}).get("numa_affinity") or {}
    for device in sorted(numa_before.keys() & numa_after.keys(), key=lambda d: (len(d), d)):
        if numa_before[device] != numa_after[device] and device.startswith("GPU") and device[3:].isdigit():
            index = int(device[3:])
            changes.append(
                _change(
                    "topology",
                    "numa_affinity_changed",
                    "info",
                    "numa_affinity",
                    numa_before[device],
                    numa_after[device],
                    f"GPU {index}: NUMA node {numa_before[device]} → {numa_after[device]}",
                    gpu=index,
                )
            )
    return changes


# --- software ------------------------------------------------------------------------------------------------------


def _cuda_major_supported(driver: tuple[int, ...] | None, cuda: tuple[int, ...] | None) -> int | None:
    """The newest CUDA major version a driver runs: from its reported CUDA version, else from the minimums."""
    if cuda:
        return cuda[0]
    if driver is None:
        return None
    majors = [major for major, minimum in MIN_DRIVER_FOR_CUDA_MAJOR.items() if driver >= minimum]
    return max(majors) if majors else None


def _version_change(area: str, code: str, key: str, words: str, was: Any, now: Any) -> dict[str, Any] | None:
    """Up: info; down: warning; another build of the same numbers ("2.5.1+cu121" → "2.5.1+cu124"): info."""
    if was is None or now is None or str(was) == str(now):
        return None
    old, new = _version(was), _version(now)
    down = old is not None and new is not None and new < old
    return _change(
        area,
        code,
        "warning" if down else "info",
        key,
        was,
        now,
        f"{words} {was} → {now}" + (" (a downgrade)" if down else ""),
    )


def _software_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    was, now = before.get("driver_version"), after.get("driver_version")
    if was and now and was != now:
        old, new = _version(was), _version(now)
        old_major = _cuda_major_supported(old, _version(before.get("cuda_version")))
        down = old is not None and new is not None and new < old
        minimum = MIN_DRIVER_FOR_CUDA_MAJOR.get(old_major) if old_major is not None else None
        if down and minimum is not None and new is not None and new < minimum:
            severity = "error"
            words = (
                f" (a downgrade below what the other supported: CUDA {old_major}.x needs driver ≥ "
                f"{'.'.join(map(str, minimum))})"
            )
        else:
            severity = "warning" if down else "info"
            words = " (a downgrade)" if down else ""
        changes.append(
            _change("software", "driver_changed", severity, "driver_version", was, now, f"driver {was} → {now}{words}")
        )
    was, now = before.get("cuda_version"), after.get("cuda_version")
    if was and now and was != now:
        old, new = _version(was), _version(now)
        if old is not None and new is not None and new[:1] < old[:1]:
            severity, words = (
                "error",
                (f": images built for CUDA {was} need a driver for CUDA {old[0]}.x, this one does not run them"),
            )
        elif old is not None and new is not None and new < old:
            severity, words = (
                "warning",
                (
                    f": images built for CUDA {was} run through minor-version "
                    "compatibility, but kernels compiled just in time from PTX fail"
                ),
            )
        else:
            severity, words = "info", ""
        changes.append(
            _change(
                "software",
                "cuda_changed",
                severity,
                "cuda_version",
                was,
                now,
                f"the driver's CUDA version {was} → {now}{words}",
            )
        )
    for key, code, words in (
        ("kernel_module_version", "kernel_module_changed", "kernel module"),
        ("cuda_toolkit_version", "cuda_toolkit_changed", "CUDA toolkit"),
    ):
        change = _version_change("software", code, key, words, before.get(key), after.get(key))
        if change:
            changes.append(change)
    host_before, host_after = before.get("host") or {}, after.get("host") or {}
    change = _version_change(
        "software",
        "python_changed",
        "python_version",
        "Python",
        host_before.get("python_version"),
        host_after.get("python_version"),
    )
    if change:
        changes.append(change)
    packages_before, packages_after = host_before.get("packages"), host_after.get("packages")
    if isinstance(packages_before, Mapping) and isinstance(packages_after, Mapping):
        names = [name for name in PACKAGES if name in packages_before and name in packages_after]
        names += sorted((packages_before.keys() & packages_after.keys()) - set(PACKAGES))
        for name in names:
            was, now = packages_before[name], packages_after[name]
            if was is None and now is not None:
                changes.append(
                    _change(
                        "software",
                        "package_added",
                        "info",
                        name,
                        None,
                        now,
                        f"{name} {now} is installed now (it was not)",
                    )
                )
            elif was is not None and now is None:
                changes.append(
                    _change(
                        "software",
                        "package_removed",
                        "warning",
                        name,
                        was,
                        None,
                        f"{name} {was} is no longer installed",
                    )
                )
            else:
                change = _version_change("software", "package_changed", name, name, was, now)
                if change:
                    changes.append(change)
    return changes


# --- host ----------------------------------------------------------------------------------------------------------


def _host_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    a, b = before.get("host"), after.get("host")
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return []
    changes: list[dict[str, Any]] = []

    def both(key: str) -> bool:
        return a.get(key) is not None and b.get(key) is not None and a[key] != b[key]

    for key, code, words in (
        ("cpu_count", "cpu_count_changed", "CPUs"),
        ("sockets", "sockets_changed", "sockets"),
        ("numa_nodes", "numa_nodes_changed", "NUMA nodes"),
    ):
        if both(key):
            fewer = key == "cpu_count" and b[key] < a[key]
            changes.append(
                _change(
                    "host",
                    code,
                    "warning" if fewer else "info",
                    key,
                    a[key],
                    b[key],
                    f"{words}: {a[key]} → {b[key]}"
                    + (" (fewer cores for tokenising, scheduling and loading)" if fewer else ""),
                )
            )
    if both("cpu_model"):
        changes.append(
            _change(
                "host",
                "cpu_model_changed",
                "info",
                "cpu_model",
                a["cpu_model"],
                b["cpu_model"],
                f"CPU {a['cpu_model']} → {b['cpu_model']}",
            )
        )
    if both("memory_total_bytes"):
        less = b["memory_total_bytes"] < a["memory_total_bytes"]
        changes.append(
            _change(
                "host",
                "host_memory_changed",
                "warning" if less else "info",
                "memory_total_bytes",
                a["memory_total_bytes"],
                b["memory_total_bytes"],
                f"host memory {_gib(a['memory_total_bytes'])} → {_gib(b['memory_total_bytes'])}",
            )
        )
    container_a, container_b = a.get("container"), b.get("container")
    if isinstance(container_a, Mapping) and isinstance(container_b, Mapping):
        was = (container_a.get("detected"), container_a.get("runtime"))
        now = (container_b.get("detected"), container_b.get("runtime"))
        if None not in (was[0], now[0]) and was != now:

            def container_words(detected: Any, runtime: Any) -> str:
                return (
                    f"a container ({runtime})"
                    if detected and runtime
                    else "a container"
                    if detected
                    else "no container"
                )

            changes.append(
                _change(
                    "host",
                    "container_changed",
                    "info",
                    "container",
                    dict(container_a),
                    dict(container_b),
                    f"{container_words(*was)} → {container_words(*now)}",
                )
            )
    # None is "no limit" only where the probe read the cgroup (its version is known); otherwise not measured
    if a.get("cgroup_version") is not None and b.get("cgroup_version") is not None:
        limit_was, limit_now = a.get("cgroup_memory_limit_bytes"), b.get("cgroup_memory_limit_bytes")
        if limit_was != limit_now:
            lower = limit_now is not None and (limit_was is None or limit_now < limit_was)
            changes.append(
                _change(
                    "host",
                    "memory_limit_changed",
                    "warning" if lower else "info",
                    "cgroup_memory_limit_bytes",
                    limit_was,
                    limit_now,
                    f"container memory limit {_gib(limit_was) if limit_was is not None else 'none'} → "
                    f"{_gib(limit_now) if limit_now is not None else 'none'}"
                    + (" (loading weights or CPU swap space may hit it)" if lower else ""),
                )
            )
        if a["cgroup_version"] != b["cgroup_version"]:
            changes.append(
                _change(
                    "host",
                    "cgroup_version_changed",
                    "info",
                    "cgroup_version",
                    a["cgroup_version"],
                    b["cgroup_version"],
                    f"cgroup v{a['cgroup_version']} → v{b['cgroup_version']}",
                )
            )
    return changes


# --- the whole ------------------------------------------------------------------------------------------------------


def _summary(changes: list[dict[str, Any]]) -> str:
    if not changes:
        return "no differences in what both probes measured"
    counts = [(severity, sum(1 for c in changes if c["severity"] == severity)) for severity in SEVERITIES]
    words = [f"{n} {severity}{'s' if n > 1 and severity != 'info' else ''}" for severity, n in counts if n]
    return f"{len(changes)} difference{'s' if len(changes) > 1 else ''}: {', '.join(words)}"


def fingerprint_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What differs from `before` to `after`: {"same", "changes", "summary"} (see the module's docstring)."""
    changes = (
        _gpu_changes(before, after)
        + _topology_changes(before, after)
        + _software_changes(before, after)
        + _host_changes(before, after)
    )
    changes.sort(key=lambda c: (SEVERITIES.index(c["severity"]), AREAS.index(c["area"])))
    return {"same": not changes, "changes": changes, "summary": _summary(changes)}

"""Merge several parsed pieces of one machine into one fingerprint (a JSON-ready dict) with parse findings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, fields, replace
from typing import Any

from sizing.fingerprint.detect import ParsedPiece, PieceKind
from sizing.fingerprint.parsers import MIB_BYTES, GpuFacts, Topology

MEMORY_IN_USE_THRESHOLD_BYTES = 256 * MIB_BYTES  # an idle GPU shows 0-30 MiB used; more means another process

GPU_KEYS = tuple(f.name for f in fields(GpuFacts))


def _bus_key(bus_id: str | None) -> str | None:
    """'00000000:0A:00.0' and '0000:0a:00.0' are the same device."""
    if not bus_id:
        return None
    match = re.fullmatch(r"(?:([0-9A-Fa-f]+):)?([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-9A-Fa-f])", bus_id.strip())
    if not match:
        return bus_id.strip().lower()
    domain = int(match.group(1) or "0", 16)
    return f"{domain:04x}:{match.group(2)}:{match.group(3)}.{match.group(4)}".lower()


def _same(a: GpuFacts, b: GpuFacts) -> bool:
    if _bus_key(a.bus_id) and _bus_key(b.bus_id):
        return _bus_key(a.bus_id) == _bus_key(b.bus_id)
    if a.uuid and b.uuid:
        return a.uuid == b.uuid
    return a.index is not None and a.index == b.index


def _combine(old: GpuFacts, new: GpuFacts) -> GpuFacts:
    """`old` completed by `new`; a full name replaces a name the table cut short."""
    changes: dict[str, Any] = {}
    for key in GPU_KEYS:
        if getattr(old, key) is None and getattr(new, key) is not None:
            changes[key] = getattr(new, key)
    if old.name_truncated and new.name and not new.name_truncated:
        changes["name"], changes["name_truncated"] = new.name, False
    return replace(old, **changes)


def _topology_dict(topology: Topology | None) -> dict[str, Any]:
    if topology is None:
        return {"matrix": {}, "nvlink_pairs": [], "connections": [], "devices": []}
    return {
        "devices": list(topology.devices),
        "matrix": topology.matrix,
        "nvlink_pairs": [{"a": a, "b": b, "links": links} for a, b, links in topology.nvlink_pairs],
        "connections": [{"a": a, "b": b, "kind": kind} for a, b, kind in topology.gpu_connections],
        "cpu_affinity": topology.cpu_affinity,
        "numa_affinity": topology.numa_affinity,
        "nic_names": topology.nic_names,
    }


def _finding(code: str, severity: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, **({"extra": extra} if extra else {})}


def _mib(value: int) -> str:
    return f"{value // MIB_BYTES:,} MiB"


def _gpu_findings(gpu: GpuFacts) -> list[dict[str, Any]]:
    label = f"GPU {gpu.index}" + (f" ({gpu.name})" if gpu.name else "")
    found = []
    gen_low = (
        gpu.pcie_generation_current is not None
        and gpu.pcie_generation_max is not None
        and gpu.pcie_generation_current < gpu.pcie_generation_max
    )
    width_low = (
        gpu.pcie_width_current is not None
        and gpu.pcie_width_max is not None
        and gpu.pcie_width_current < gpu.pcie_width_max
    )
    if gen_low or width_low:
        found.append(
            _finding(
                "pcie_link_below_max",
                "warning" if width_low else "info",
                f"{label}: PCIe link at Gen{gpu.pcie_generation_current} x{gpu.pcie_width_current}, the GPU supports "
                f"Gen{gpu.pcie_generation_max} x{gpu.pcie_width_max}"
                + (
                    "; a narrower link stays narrow under load (slot or riser)"
                    if width_low
                    else "; idle GPUs lower the generation to save power, check again under load"
                ),
                gpu_index=gpu.index,
                gpu_name=gpu.name,
                generation=gpu.pcie_generation_current,
                width=gpu.pcie_width_current,
                generation_max=gpu.pcie_generation_max,
                width_max=gpu.pcie_width_max,
                width_low=width_low,
            )
        )
    if gpu.mig_mode == "enabled":
        found.append(
            _finding(
                "mig_enabled",
                "warning",
                f"{label}: MIG is enabled; a model sees only the memory of its MIG instance",
                gpu_index=gpu.index,
                gpu_name=gpu.name,
            )
        )
    if gpu.ecc_mode == "disabled":
        found.append(
            _finding(
                "ecc_off",
                "info",
                f"{label}: ECC is off (more usable memory, no error correction)",
                gpu_index=gpu.index,
                gpu_name=gpu.name,
            )
        )
    in_use = max(gpu.memory_used_bytes or 0, gpu.processes_memory_bytes or 0)
    if in_use > MEMORY_IN_USE_THRESHOLD_BYTES:
        found.append(
            _finding(
                "memory_in_use",
                "warning",
                f"{label}: {_mib(in_use)} of GPU memory already in use by other processes"
                + (f" (of {_mib(gpu.memory_total_bytes)})" if gpu.memory_total_bytes else ""),
                gpu_index=gpu.index,
                used_bytes=in_use,
                total_bytes=gpu.memory_total_bytes,
                gpu_name=gpu.name,
            )
        )
    if gpu.name_truncated:
        found.append(
            _finding(
                "gpu_name_truncated",
                "info",
                f"{label}: the nvidia-smi table cut the name short; nvidia-smi -q gives the full name",
                gpu_index=gpu.index,
                gpu_name=gpu.name,
            )
        )
    return found


def fingerprint_merge(pieces: Sequence[ParsedPiece], *, names: Sequence[str] | None = None) -> dict[str, Any]:
    """One fingerprint from `pieces` (in the order given; an earlier piece's value wins, except that a full GPU name
    replaces a truncated one). `names` label the pieces (file names) in `pieces` and messages."""
    labels = list(names) if names is not None else [f"piece {i + 1}" for i in range(len(pieces))]
    gpus: list[GpuFacts] = []
    topology: Topology | None = None
    host: dict[str, str | None] = {
        "driver_version": None,
        "cuda_version": None,
        "cuda_toolkit_version": None,
        "kernel_module_version": None,
    }
    attached: int | None = None
    findings: list[dict[str, Any]] = []
    described = []
    for label, piece in zip(labels, pieces, strict=True):
        described.append({"name": label, "kind": piece.kind.value, "problems": list(piece.problems)})
        facts = piece.facts
        if piece.kind in (PieceKind.UNKNOWN, PieceKind.NVIDIA_SMI_FAILURE) or (
            not facts.gpus and all(getattr(facts, key) is None for key in host) and facts.topology is None
        ):
            findings.append(
                _finding(
                    "unreadable_piece",
                    "warning",
                    f"{label}: nothing read ({'; '.join(piece.problems) or 'no facts'})",
                    piece=label,
                    problems="; ".join(piece.problems),
                )
            )
        for key in host:
            if host[key] is None:
                host[key] = getattr(facts, key)
        if facts.attached_gpus is not None and piece.kind is not PieceKind.NVIDIA_SMI_TOPO:
            attached = max(attached or 0, facts.attached_gpus)
        if topology is None and facts.topology is not None:
            topology = facts.topology
        for gpu in facts.gpus:
            position = next((i for i, known in enumerate(gpus) if _same(known, gpu)), None)
            if position is None:
                gpus.append(gpu)
            else:
                gpus[position] = _combine(gpus[position], gpu)
    gpus.sort(key=lambda gpu: (gpu.index is None, gpu.index or 0))
    for gpu in gpus:
        findings.extend(_gpu_findings(gpu))
    if (
        host["kernel_module_version"]
        and host["driver_version"]
        and host["kernel_module_version"] != host["driver_version"]
    ):
        findings.append(
            _finding(
                "driver_library_mismatch",
                "error",
                f"kernel module {host['kernel_module_version']} is loaded but nvidia-smi reports driver "
                f"{host['driver_version']}: reboot (or reload the module) before measuring",
                kernel_module=host["kernel_module_version"],
                driver=host["driver_version"],
            )
        )
    if host["driver_version"] is None and host["kernel_module_version"]:
        host["driver_version"] = host["kernel_module_version"]
    if attached is not None and attached > len(gpus):
        findings.append(
            _finding(
                "gpus_not_listed",
                "info",
                f"{attached} GPUs attached, {len(gpus)} described; add the others' output",
                attached=attached,
                described=len(gpus),
            )
        )
    return {
        "gpus": [{key: value for key, value in asdict(gpu).items()} for gpu in gpus],
        "gpu_count": max(len(gpus), attached or 0),
        **host,
        "topology": _topology_dict(topology),
        "findings": findings,
        "pieces": described,
    }

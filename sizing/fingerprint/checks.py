"""Check a deployment plan against a fingerprint (the dict `merge.fingerprint_merge` returns): what the customer
claimed versus what the machine says, each finding with a code, a severity and an explanation in words.

Checks: GPU model, count and memory claimed versus found; mixed GPU models in one node; a TP group that would
cross PCIe or the CPU interconnect instead of NVLink (with the layout to use instead: TP inside an NVLink island,
replicas across); memory other processes already hold against what the plan needs per GPU; MIG slices; a base
image built for a newer CUDA than the driver supports (with the base image to use instead).

Driver minimums (NVIDIA's CUDA Toolkit release notes, "CUDA minor version compatibility" table, Linux x86_64):
CUDA 11.x needs ≥ 450.80.02, CUDA 12.x ≥ 525.60.13, CUDA 13.x ≥ 580.65.06. Within a major version, an image
built for a newer minor than the driver reports runs through minor-version compatibility, but PTX JIT of newer
kernels does not: a warning, not an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GIB = 2**30
MEMORY_TOLERANCE = 0.03  # a card reports a little less than its marketed size (80 GB H100: 81,559 MiB)
MIN_DRIVER_FOR_CUDA_MAJOR: dict[int, tuple[int, ...]] = {
    11: (450, 80, 2),
    12: (525, 60, 13),
    13: (580, 65, 6),
}
# The newest nvidia/cuda image of each CUDA minor version (Docker Hub's nvidia/cuda tags, e.g.
# "12.4.1-runtime-ubuntu22.04"): (major, minor) → (version, Ubuntu release). CUDA 11.6 and older have no 22.04 image.
CUDA_BASE_IMAGES: dict[tuple[int, int], tuple[str, str]] = {
    (11, 4): ("11.4.3", "20.04"),
    (11, 6): ("11.6.2", "20.04"),
    (11, 7): ("11.7.1", "22.04"),
    (11, 8): ("11.8.0", "22.04"),
    (12, 0): ("12.0.1", "22.04"),
    (12, 1): ("12.1.1", "22.04"),
    (12, 2): ("12.2.2", "22.04"),
    (12, 3): ("12.3.2", "22.04"),
    (12, 4): ("12.4.1", "22.04"),
    (12, 5): ("12.5.1", "22.04"),
    (12, 6): ("12.6.3", "22.04"),
    (12, 8): ("12.8.1", "22.04"),
    (12, 9): ("12.9.1", "22.04"),
    (13, 0): ("13.0.1", "24.04"),
}


def base_image_for(driver_cuda: tuple[int, ...]) -> str | None:
    """The nvidia/cuda runtime image of the newest CUDA the driver runs (its CUDA version or the nearest older
    minor in the table), or None when the driver is older than the table.

    >>> base_image_for((12, 2)), base_image_for((12, 7)), base_image_for((11, 2))
    ('nvidia/cuda:12.2.2-runtime-ubuntu22.04', 'nvidia/cuda:12.6.3-runtime-ubuntu22.04', None)
    """
    fitting = [key for key in CUDA_BASE_IMAGES if key <= tuple(driver_cuda[:2])]
    if not fitting:
        return None
    version, ubuntu = CUDA_BASE_IMAGES[max(fitting)]
    return f"nvidia/cuda:{version}-runtime-ubuntu{ubuntu}"


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What the deployment is supposed to run on, as sold or sized."""

    gpu_name: str | None = None  # e.g. "NVIDIA A100 80GB" (the catalog name or the customer's words)
    gpu_count: int | None = None
    memory_bytes_per_gpu: int | None = None  # the memory the estimate assumed per card
    tp: int = 1
    image_cuda_version: str | None = None  # the CUDA version the serving image was built for, e.g. "12.4"
    required_bytes_per_gpu: int | None = None  # what the memory bill needs per card


def _finding(code: str, severity: str, message: str, **numbers: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, **({"extra": numbers} if numbers else {})}


def _gib(value: int) -> str:
    return f"{value / GIB:.1f} GiB"


_MODEL_TOKEN = re.compile(r"\b([A-Z]{1,3}\d{1,4}[A-Z]?|RTX\s?\d{4}|MI\d{3}X?)\b", re.IGNORECASE)
# words in GPU names that look like designations and are not: memory kinds and form factors ("HBM3", "SXM5")
_NOT_A_MODEL = re.compile(r"^(HBM\d\w?|SXM\d?|GDDR\d\w?|PCIE\d?|NVL\d*)$")


def model_tokens(name: str) -> set[str]:
    """The model designations in a name ("NVIDIA A100-SXM4-80GB" → {"A100"}; "GeForce RTX 4090" → {"RTX4090"};
    "NVIDIA L4" → {"L4"}: one digit counts, memory kinds and form factors do not)."""
    tokens = {token.upper().replace(" ", "") for token in _MODEL_TOKEN.findall(name)}
    return {token for token in tokens if not _NOT_A_MODEL.match(token)}


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = re.findall(r"\d+", text)
    return tuple(int(p) for p in parts) if parts else None


def nvlink_islands(fingerprint: Mapping[str, Any]) -> list[list[int]]:
    """Groups of GPUs joined by NVLink (directly or through others), largest first; a GPU without NVLink is an
    island of one."""
    indices = sorted(
        {g["index"] for g in fingerprint.get("gpus", []) if g.get("index") is not None}
        | {i for c in fingerprint.get("topology", {}).get("connections", []) for i in (c["a"], c["b"])}
    )
    parent = {i: i for i in indices}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for pair in fingerprint.get("topology", {}).get("nvlink_pairs", []):
        if pair["a"] in parent and pair["b"] in parent:
            parent[root(pair["a"])] = root(pair["b"])
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len(g), g))


def plan_check(fingerprint: Mapping[str, Any], plan: Plan) -> list[dict[str, Any]]:
    """Findings of the plan against the machine (an empty list: nothing to say)."""
    findings: list[dict[str, Any]] = []
    gpus = [g for g in fingerprint.get("gpus", []) if g.get("vendor", "nvidia")]
    names = sorted({g["name"] for g in gpus if g.get("name")})

    if plan.gpu_count is not None and gpus and len(gpus) != plan.gpu_count:
        findings.append(
            _finding(
                "gpu_count_mismatch",
                "error",
                f"the plan counts {plan.gpu_count} GPU(s); the machine shows {len(gpus)}",
                planned=plan.gpu_count,
                found=len(gpus),
            )
        )
    if plan.gpu_name and names:
        claimed = model_tokens(plan.gpu_name)
        unlike = [name for name in names if claimed and not claimed & model_tokens(name)]
        if unlike:
            findings.append(
                _finding(
                    "gpu_model_mismatch",
                    "error",
                    f"the plan is for {plan.gpu_name}; the machine has {', '.join(unlike)}",
                    planned=plan.gpu_name,
                    found=", ".join(unlike),
                )
            )
    if len(names) > 1:
        findings.append(
            _finding(
                "mixed_gpu_models",
                "warning",
                f"one node with different GPU models ({', '.join(names)}): a TP group runs at the pace of its slowest "
                "card and its memory budget is the smallest card's",
                models=", ".join(names),
            )
        )
    totals = [g["memory_total_bytes"] for g in gpus if g.get("memory_total_bytes")]
    if plan.memory_bytes_per_gpu and totals and min(totals) < plan.memory_bytes_per_gpu * (1 - MEMORY_TOLERANCE):
        findings.append(
            _finding(
                "gpu_memory_smaller",
                "error",
                f"the estimate assumed {_gib(plan.memory_bytes_per_gpu)} per GPU; the smallest card here reports "
                f"{_gib(min(totals))}: re-run the estimate with the measured memory",
                planned_bytes=plan.memory_bytes_per_gpu,
                found_bytes=min(totals),
            )
        )

    if plan.required_bytes_per_gpu:
        for gpu in gpus:
            total, used = gpu.get("memory_total_bytes"), gpu.get("memory_used_bytes") or 0
            if total and used and used + plan.required_bytes_per_gpu > total:
                findings.append(
                    _finding(
                        "memory_held_by_others",
                        "error",
                        f"GPU {gpu.get('index')}: {_gib(used)} is already in use; the plan needs "
                        f"{_gib(plan.required_bytes_per_gpu)} of its {_gib(total)}, {_gib(total - used)} are free",
                        gpu=gpu.get("index"),
                        used_bytes=used,
                        required_bytes=plan.required_bytes_per_gpu,
                        total_bytes=total,
                    )
                )
    mig = [g.get("index") for g in gpus if str(g.get("mig_mode") or "").lower() == "enabled"]
    if mig:
        findings.append(
            _finding(
                "mig_slices",
                "warning",
                f"MIG is enabled on GPU(s) {', '.join(map(str, mig))}: an engine sees one slice, not the whole card; "
                "size the deployment for the slice or disable MIG (nvidia-smi -i N -mig 0)",
                gpus=", ".join(map(str, mig)),
            )
        )

    if plan.tp > 1 and fingerprint.get("topology", {}).get("connections"):
        islands = nvlink_islands(fingerprint)
        largest = len(islands[0]) if islands else 1
        if largest < plan.tp:
            kinds = sorted(
                {c["kind"] for c in fingerprint["topology"]["connections"] if not str(c["kind"]).startswith("NV")}
            )
            advice = (
                f"keep TP within an NVLink island of {largest} GPU(s) and run the rest as replicas "
                f"(TP {largest} × {max(1, plan.tp // largest)} replicas)"
                if largest > 1
                else "use TP only if the model needs it to fit; otherwise run one replica per GPU"
            )
            findings.append(
                _finding(
                    "tp_over_pcie",
                    "warning",
                    f"TP {plan.tp} would all-reduce over {', '.join(kinds) or 'PCIe'} paths: the largest NVLink group "
                    f"here has {largest} GPU(s); {advice}",
                    tp=plan.tp,
                    largest_nvlink_island=largest,
                    paths=", ".join(kinds) or "PCIe",
                    replicas=max(1, plan.tp // largest),
                )
            )

    driver = _version(fingerprint.get("driver_version"))
    image = _version(plan.image_cuda_version)
    driver_cuda = _version(fingerprint.get("cuda_version"))
    if image and driver:
        minimum = MIN_DRIVER_FOR_CUDA_MAJOR.get(image[0])
        recommend = "upgrade the driver"
        supported = base_image = None
        if driver_cuda:
            supported = f"{driver_cuda[0]}.{driver_cuda[1] if len(driver_cuda) > 1 else 0}"
            base_image = base_image_for((driver_cuda[0], driver_cuda[1] if len(driver_cuda) > 1 else 0))
            recommend = (
                f"use a base image built for CUDA {supported} or older"
                + (f" ({base_image})" if base_image else "")
                + ", or upgrade the driver"
            )
        if minimum and driver < minimum:
            findings.append(
                _finding(
                    "driver_too_old",
                    "error",
                    f"the image is built for CUDA {plan.image_cuda_version}; CUDA {image[0]}.x needs driver ≥ "
                    f"{'.'.join(map(str, minimum))} and this machine has {fingerprint.get('driver_version')}: "
                    f"{recommend}",
                    image_cuda=plan.image_cuda_version,
                    minimum_driver=".".join(map(str, minimum)),
                    driver=fingerprint.get("driver_version"),
                    driver_cuda=supported,
                    base_image=base_image,
                )
            )
        elif driver_cuda and image[:2] > driver_cuda[:2]:
            findings.append(
                _finding(
                    "cuda_newer_than_driver",
                    "warning",
                    f"the image is built for CUDA {plan.image_cuda_version}, newer than the "
                    f"{fingerprint.get('cuda_version')} this driver supports: it runs through minor-version "
                    f"compatibility, but kernels compiled just in time from PTX fail; {recommend}",
                    image_cuda=plan.image_cuda_version,
                    driver_cuda=fingerprint.get("cuda_version"),
                    driver=fingerprint.get("driver_version"),
                    base_image=base_image,
                )
            )
    return findings

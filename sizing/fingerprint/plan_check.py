"""Contradictions between a deployment's plan and the machines chosen for it: what the plan claims (the catalog GPU,
GPUs per server, TP, whole cards) against what each machine's fingerprint measured. Pure Python, plain dicts in and
out; `sizing.services.machine_checks` words them in the active language for the report and the pages.

`plan`: {"gpu_name": the catalog name ("NVIDIA H800 SXM5 80GB"), "gpu_form_factor": the catalog's ("SXM5", "PCIe",
"NVL", "OAM"), "gpu_memory_bytes": the catalog card's memory as the driver reports it (`Gpu.memory_bytes`),
"gpu_count": GPUs per server, "tp": the tensor-parallel size}, each optional but tp (default 1).
`machines`: [{"host": its name, "facts": the merged fingerprint (`merge.fingerprint_merge`)}].

Each contradiction: {"code", "host", "params"}, one per rule and machine:
- `gpu_model_differs`: the plan's GPU model is not the one nvidia-smi names (model designations compared as
  `checks.plan_check` compares them: "H800" in the catalog's "NVIDIA H800 SXM5 80GB" against "H100" in
  "NVIDIA H100 80GB HBM3");
- `gpu_variant_differs`: the same model in another form factor (the catalog's SXM card, nvidia-smi's "... PCIe" or
  "... NVL"; nvidia-smi names most SXM boards without the word, so only a name that says its form factor counts);
- `gpu_count_short`: the plan counts more GPUs per server than the machine has;
- `tp_exceeds_gpus`: TP larger than the machine's GPUs (only where the plan names no count: a count ≥ TP that the
  machine lacks is already `gpu_count_short`);
- `tp_over_pcie`: TP > 1 and the machine's GPUs share no NVLink group of TP GPUs (`nvidia-smi topo -m` shows PCIe
  or CPU paths between them): the all-reduce of every layer crosses PCIe; only when the topology was uploaded;
- `mig_slices`: MIG is enabled (or MIG devices are listed) on a GPU: an engine sees a slice, the plan whole cards;
- `gpu_memory_smaller`: a whole card reports less memory than the catalog card, beyond the 3 % a card reports below
  its size (`checks.MEMORY_TOLERANCE`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sizing.fingerprint.checks import MEMORY_TOLERANCE, model_tokens, nvlink_islands

CODES = (
    "gpu_model_differs",
    "gpu_variant_differs",
    "gpu_count_short",
    "tp_exceeds_gpus",
    "tp_over_pcie",
    "mig_slices",
    "gpu_memory_smaller",
)


def _form_factor(text: str | None) -> str | None:
    """ "sxm", "pcie" or "nvl" where the text says it, else None ("NVIDIA H100 80GB HBM3" says nothing)."""
    if not text:
        return None
    lowered = text.lower()
    if "pcie" in lowered:
        return "pcie"
    if re.search(r"\bnvl\b", lowered):
        return "nvl"
    if "sxm" in lowered:
        return "sxm"
    return None


def _contradiction(code: str, host: str, **params: Any) -> dict[str, Any]:
    return {"code": code, "host": host, "params": params}


def _gpus(facts: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [gpu for gpu in facts.get("gpus") or [] if isinstance(gpu, Mapping)]


def _model_contradictions(
    plan: Mapping[str, Any], host: str, gpus: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    planned = plan.get("gpu_name")
    names = sorted({str(gpu["name"]) for gpu in gpus if gpu.get("name")})
    claimed = model_tokens(planned) if planned else set()
    if not claimed or not names:
        return []
    unlike = [name for name in names if not claimed & model_tokens(name)]
    if unlike:
        return [_contradiction("gpu_model_differs", host, planned=planned, found=", ".join(unlike))]
    planned_form = _form_factor(plan.get("gpu_form_factor")) or _form_factor(planned)
    other = [name for name in names if planned_form and _form_factor(name) not in (None, planned_form)]
    if other:
        return [
            _contradiction(
                "gpu_variant_differs",
                host,
                planned=planned,
                planned_form_factor=str(plan.get("gpu_form_factor") or planned_form),
                found=", ".join(other),
            )
        ]
    return []


def _count_contradictions(
    plan: Mapping[str, Any], host: str, facts: Mapping[str, Any], gpus: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    measured = max(int(facts.get("gpu_count") or 0), len(gpus))
    found: list[dict[str, Any]] = []
    count, tp = plan.get("gpu_count"), int(plan.get("tp") or 1)
    if count and measured and count > measured:
        found.append(_contradiction("gpu_count_short", host, planned=count, found=measured))
    elif not count and measured and tp > measured:
        found.append(_contradiction("tp_exceeds_gpus", host, tp=tp, found=measured))
    return found, measured


def _link_contradictions(
    plan: Mapping[str, Any], host: str, facts: Mapping[str, Any], measured: int
) -> list[dict[str, Any]]:
    tp = int(plan.get("tp") or 1)
    connections = (facts.get("topology") or {}).get("connections") or []
    if tp < 2 or not connections or measured < 2:
        return []
    islands = nvlink_islands(facts)
    largest = len(islands[0]) if islands else 1
    # the GPUs there are (a TP the machine cannot hold at all is gpu_count_short / tp_exceeds_gpus): its TP group
    # would need min(TP, GPUs) cards inside one NVLink group
    if largest >= min(tp, measured):
        return []
    paths = sorted({str(c["kind"]) for c in connections if not str(c["kind"]).startswith("NV")})
    return [_contradiction("tp_over_pcie", host, tp=tp, largest_nvlink_group=largest, paths=", ".join(paths) or "PCIe")]


def _mig_contradictions(host: str, gpus: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    sliced = [gpu for gpu in gpus if str(gpu.get("mig_mode") or "").lower() == "enabled" or gpu.get("mig_devices")]
    if not sliced:
        return []
    devices = [device for gpu in sliced for device in gpu.get("mig_devices") or [] if isinstance(device, Mapping)]
    memories = [int(device["memory_total_bytes"]) for device in devices if device.get("memory_total_bytes")]
    indices = [str(gpu["index"]) if gpu.get("index") is not None else "?" for gpu in sliced]
    return [
        _contradiction(
            "mig_slices",
            host,
            gpus=", ".join(indices),
            slices=len(devices),
            slice_bytes=min(memories) if memories else None,
        )
    ]


def _memory_contradictions(
    plan: Mapping[str, Any], host: str, gpus: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    planned = plan.get("gpu_memory_bytes")
    totals = [int(gpu["memory_total_bytes"]) for gpu in gpus if gpu.get("memory_total_bytes")]
    if not planned or not totals or min(totals) >= planned * (1 - MEMORY_TOLERANCE):
        return []
    return [_contradiction("gpu_memory_smaller", host, planned_bytes=int(planned), found_bytes=min(totals))]


def plan_contradictions(plan: Mapping[str, Any], machines: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The contradictions between `plan` and each of `machines` (the module's rules), machine by machine in the
    order given, each machine's in the order of `CODES`. An empty list: nothing contradicts the plan."""
    found: list[dict[str, Any]] = []
    for machine in machines:
        host = str(machine.get("host") or "")
        facts = machine.get("facts") or {}
        gpus = _gpus(facts)
        counts, measured = _count_contradictions(plan, host, facts, gpus)
        found += _model_contradictions(plan, host, gpus)
        found += counts
        found += _link_contradictions(plan, host, facts, measured)
        found += _mig_contradictions(host, gpus)
        found += _memory_contradictions(plan, host, gpus)
    return found

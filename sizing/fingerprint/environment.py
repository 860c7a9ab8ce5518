"""What a measured machine (a fingerprint, the dict `merge.fingerprint_merge` returns) means for an estimate and for
the performance model (`estimator.perf.step_model`'s `link` and `link_bytes_per_s`) of a TP group of `tp` GPUs.

- memory per GPU: the smallest `memory_total_bytes` among the GPUs, as the driver reports it (81,559 MiB on an
  80 GB H100). On a GPU in MIG mode whose MIG devices the output lists, an engine runs on one slice and sees only
  its memory, so that GPU counts with its smallest slice (19,968 MiB for a 3g.20gb slice of a 40 GB A100, not the
  card's 40,960 MiB); CUDA on a slice reports the slice's memory as the device total (no reservation taken off it),
  so that figure is also the measured CUDA-visible total. nvidia-smi never shows CUDA's own total of a whole card:
  `cuda_total_bytes_per_gpu` is None there and the estimate takes the catalog's reservation off the driver's total.
  Memory other processes hold: the most on any GPU (the larger of `memory_used_bytes` and what the listed processes
  hold).
- the TP link: the group is placed inside the largest NVLink island (`checks.nvlink_islands`) when that island
  holds ≥ tp GPUs, and its bandwidth is the smallest pair's bonded links × the per-link bandwidth of the GPU's
  NVLink generation; otherwise the group all-reduces over PCIe at the slowest member's per-lane rate × lanes × 0.8,
  taking each GPU's max generation (an idle GPU drops the current one to save power) and its current width (a link
  that trained narrow stays narrow). AMD GPUs joined by XGMI: link "xgmi" with no figure (the model's default).
  TP 1 has no all-reduce: no link. Without `nvidia-smi topo -m` whether the GPUs share NVLink is unknown: no link.
- every figure is None where the fingerprint does not say, and `explanation` says where each one came from.

>>> gpu = {"name": "NVIDIA H100 80GB HBM3", "memory_total_bytes": 81_559 * 2**20, "memory_used_bytes": 4 * 2**20}
>>> fingerprint = {"gpus": [{**gpu, "index": i} for i in range(4)], "gpu_count": 4, "topology": {
...     "nvlink_pairs": [{"a": a, "b": b, "links": 18} for a in range(4) for b in range(a + 1, 4)],
...     "connections": [{"a": a, "b": b, "kind": "NV18"} for a in range(4) for b in range(a + 1, 4)]}}
>>> env = measured_environment(fingerprint, tp=2)
>>> env.memory_bytes_per_gpu == 81_559 * 2**20, env.link, env.link_bytes_per_s == 18 * 25e9, env.tp_group
(True, 'nvlink', True, (0, 1))
>>> env.explanation[-1]
'TP 2 on GPUs 0-1 inside the NVLink group 0-3: NV18 = 18 links × 25 GB/s (NVLink 4) = 450 GB/s per direction'
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sizing.fingerprint.checks import nvlink_islands
from sizing.fingerprint.merge import MEMORY_IN_USE_THRESHOLD_BYTES
from sizing.fingerprint.parsers import MIB_BYTES

# NVLink bandwidth per link per direction, bytes/s. Sources: NVIDIA's NVLink page (nvidia.com/en-us/data-center/
# nvlink: 2nd generation 300 GB/s, 3rd 600 GB/s, 4th 900 GB/s, 5th 1,800 GB/s total per GPU) and the datasheets:
# V100 SXM2 300 GB/s over 6 links, A100 SXM4 600 GB/s over 12 links, H100 SXM5 900 GB/s over 18 links (all total
# bidirectional: 300 / 6 / 2 = 600 / 12 / 2 = 900 / 18 / 2 = 25 GB/s per link per direction); B200 1.8 TB/s over
# 18 links = 50 GB/s. P100 SXM2 (1st generation) 160 GB/s over 4 links = 20 GB/s. The NVLink bridges of A40 and
# RTX A6000 (A40 / RTX A6000 datasheets: 112.5 GB/s bidirectional, shown as NV4) and RTX 3090 (the same bridge
# speed) give 112.5 / 4 / 2 = 14.0625 GB/s per link.
NVLINK_LINK_BYTES_PER_S: tuple[tuple[str, float, str], ...] = (  # (name pattern, bytes/s, generation)
    (r"\b(?:GB|B)(?:100|200|300)\b", 50e9, "NVLink 5"),
    (r"\b(?:GH200|H100|H200|H800|H20)\b", 25e9, "NVLink 4"),
    (r"\b(?:A100|A800)\b", 25e9, "NVLink 3"),
    (r"\b(?:A40|A6000|RTX 3090)\b", 14.0625e9, "NVLink 3 bridge"),
    (r"\bV100\b", 25e9, "NVLink 2"),
    (r"\bP100\b", 20e9, "NVLink 1"),
)
# PCIe bytes/s per lane per direction after line encoding (PCI-SIG): Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b,
# Gen3 8 GT/s, Gen4 16 GT/s and Gen5 32 GT/s with 128b/130b, Gen6 64 GT/s PAM4 with 242B/256B FLITs.
PCIE_LANE_BYTES_PER_S: dict[int, float] = {1: 0.25e9, 2: 0.5e9, 3: 0.985e9, 4: 1.969e9, 5: 3.938e9, 6: 7.563e9}
# Share of the PCIe line rate an all-reduce reaches: perf.LINK_DEFAULTS takes 25 GB/s measured for Gen4 x16,
# 25 / (1.969 × 16) = 0.79.
PCIE_EFFICIENCY = 0.8
# PCIe paths from the closest to the farthest (nvidia-smi topo -m legend): a PCIe TP group prefers close GPUs.
PATH_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SOC": 5, "SYS": 5}
MAX_CANDIDATE_GROUPS = 20_000  # beyond, the first GPUs of an island in index order


@dataclass(frozen=True, kw_only=True)
class MeasuredEnvironment:
    """The measured figures an estimate and a step model of one TP group take; None where the fingerprint does not
    say. `link_bytes_per_s` is per direction, for `step_model(link=..., link_bytes_per_s=...)`."""

    tp: int
    gpu_count: int | None = None
    gpu_name: str | None = None  # the most common name
    memory_bytes_per_gpu: int | None = None  # the smallest card (MIG: the smallest slice), as the driver reports it
    # what CUDA sees as the device's total, where the fingerprint shows it: a MIG slice's memory; None for whole cards
    cuda_total_bytes_per_gpu: int | None = None
    mig: bool = False  # memory_bytes_per_gpu is a MIG slice's
    memory_used_bytes_max: int | None = None  # the most other processes hold on one GPU
    host_memory_bytes: int | None = None  # host memory, or the container's cgroup limit when lower
    link: str | None = None  # "nvlink", "xgmi", "pcie"; None: TP 1, or not known
    link_bytes_per_s: float | None = None
    tp_group: tuple[int, ...] | None = None  # the GPUs the link figure is for
    tp_groups: tuple[tuple[int, ...], ...] = ()  # every TP group laid out (one unless `gpus` asks for more)
    explanation: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "gpu_count": self.gpu_count,
            "gpu_name": self.gpu_name,
            "memory_bytes_per_gpu": self.memory_bytes_per_gpu,
            "cuda_total_bytes_per_gpu": self.cuda_total_bytes_per_gpu,
            "mig": self.mig,
            "memory_used_bytes_max": self.memory_used_bytes_max,
            "host_memory_bytes": self.host_memory_bytes,
            "link": self.link,
            "link_bytes_per_s": self.link_bytes_per_s,
            "tp_group": list(self.tp_group) if self.tp_group is not None else None,
            "tp_groups": [list(group) for group in self.tp_groups],
            "explanation": list(self.explanation),
        }


def _mib(value: int) -> str:
    return f"{value // MIB_BYTES:,} MiB"


def _gbs(value: float) -> str:
    return f"{value / 1e9:,.{0 if value / 1e9 == round(value / 1e9) else 1}f} GB/s"


def _number(value: float) -> str:
    return f"{value:g}"


def _span(indices: Iterable[int]) -> str:
    """[0, 1, 2, 3, 6] → "0-3, 6"; [4, 5] → "4-5"."""
    runs: list[list[int]] = []
    for index in sorted(indices):
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def _mig_on(gpu: Mapping[str, Any]) -> bool:
    return str(gpu.get("mig_mode") or "").lower() == "enabled"


def _slices(gpu: Mapping[str, Any]) -> list[int]:
    """The memory of each MIG slice the output lists for a GPU in MIG mode (empty: not in MIG mode, or not listed)."""
    if not _mig_on(gpu):
        return []
    return [
        int(device["memory_total_bytes"]) for device in gpu.get("mig_devices") or [] if device.get("memory_total_bytes")
    ]


def _in_use(gpu: Mapping[str, Any]) -> int | None:
    known = [v for v in (gpu.get("memory_used_bytes"), gpu.get("processes_memory_bytes")) if v is not None]
    return max(known) if known else None


def _nvlink_rate(name: str | None) -> tuple[float, str] | None:
    for pattern, rate, generation in NVLINK_LINK_BYTES_PER_S:
        if name and re.search(pattern, name, re.IGNORECASE):
            return rate, generation
    return None


def _pcie(gpu: Mapping[str, Any]) -> tuple[float, int, int, bool] | None:
    """(bytes/s per direction at line rate, generation, lanes, generation was the current one) of one GPU."""
    generation, from_current = gpu.get("pcie_generation_max"), False
    if generation is None:
        generation, from_current = gpu.get("pcie_generation_current"), True
    lanes = gpu.get("pcie_width_current") or gpu.get("pcie_width_max")
    if generation not in PCIE_LANE_BYTES_PER_S or not lanes:
        return None
    return PCIE_LANE_BYTES_PER_S[generation] * lanes, generation, lanes, from_current


# --- laying out TP groups ------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Layout:
    kind: str | None  # "nvlink" / "xgmi" when the machine has them, else None
    islands: list[list[int]]  # fast-link islands (NVLink or XGMI), largest first
    links: dict[tuple[int, int], int]  # NVLink pair → bonded links
    paths: dict[tuple[int, int], str]  # every GPU pair → topo -m connection kind


def _layout(fingerprint: Mapping[str, Any], indices: Sequence[int]) -> _Layout:
    topology = fingerprint.get("topology") or {}
    links = {
        (min(p["a"], p["b"]), max(p["a"], p["b"])): int(p.get("links") or 0) for p in topology.get("nvlink_pairs") or []
    }
    paths = {(min(c["a"], c["b"]), max(c["a"], c["b"])): str(c["kind"]) for c in topology.get("connections") or []}
    kind, islands = None, [[i] for i in indices]
    if links:
        kind, islands = "nvlink", nvlink_islands(fingerprint)
    else:
        xgmi = [{"a": a, "b": b, "links": None} for (a, b), path in paths.items() if path.upper().startswith("XGMI")]
        if xgmi:
            kind = "xgmi"
            islands = nvlink_islands(
                {
                    "gpus": fingerprint.get("gpus") or [],
                    "topology": {"connections": topology.get("connections") or [], "nvlink_pairs": xgmi},
                }
            )
    known = set(indices)
    islands = sorted(([i for i in island if i in known] for island in islands), key=lambda g: (-len(g), g))
    return _Layout(kind=kind, islands=[island for island in islands if island], links=links, paths=paths)


def _pairs(group: Sequence[int]) -> list[tuple[int, int]]:
    return [(min(a, b), max(a, b)) for a, b in itertools.combinations(group, 2)]


def _best(candidates: Sequence[int], tp: int, score: Callable[[tuple[int, ...]], Any]) -> tuple[int, ...]:
    """The group of `tp` from `candidates` with the highest score (the lowest indices among equals)."""
    ordered = sorted(candidates)
    count = 1
    for k in range(tp):
        count = count * (len(ordered) - k) // (k + 1)
    if count > MAX_CANDIDATE_GROUPS:
        return tuple(ordered[:tp])
    return max(itertools.combinations(ordered, tp), key=lambda group: (score(group), [-i for i in group]))


def _place(
    layout: _Layout, pool: set[int], tp: int, gpus_by_index: Mapping[int, Mapping[str, Any]]
) -> tuple[tuple[int, ...], bool] | None:
    """One TP group from `pool`: (indices, on the fast link) or None when the pool is too small."""
    if len(pool) < tp:
        return None
    if tp == 1:
        return (min(pool),), False
    if layout.kind is not None:
        islands = sorted(([i for i in island if i in pool] for island in layout.islands), key=lambda g: (-len(g), g))
        if islands and len(islands[0]) >= tp:

            def fast(group: tuple[int, ...]) -> tuple[bool, int, int]:
                linked = [layout.links.get(pair, 0) for pair in _pairs(group)]
                direct = [n for n in linked if n]
                if layout.kind == "xgmi":
                    direct = [1 for pair in _pairs(group) if layout.paths.get(pair, "").upper().startswith("XGMI")]
                return len(direct) == len(linked), min(direct, default=0), len(direct)

            return _best(islands[0], tp, fast), True

    def slow(group: tuple[int, ...]) -> tuple[float, int]:
        rates = [_pcie(gpus_by_index.get(i, {})) for i in group]
        rate = min((r[0] for r in rates if r), default=0.0)
        farthest = max((PATH_RANK.get(layout.paths.get(pair, ""), 6) for pair in _pairs(group)), default=0)
        return rate, -farthest

    return _best(sorted(pool), tp, slow), False


# --- the link of one group -----------------------------------------------------------------------------------------


def _fast_link(
    layout: _Layout, group: tuple[int, ...], gpus_by_index: Mapping[int, Mapping[str, Any]]
) -> tuple[str, float | None, str]:
    island = next((isl for isl in layout.islands if set(group) <= set(isl)), list(group))
    where = (
        f"TP {len(group)} on GPUs {_span(group)} inside the {'NVLink' if layout.kind == 'nvlink' else 'XGMI'} "
        f"group {_span(island)}"
    )
    if layout.kind == "xgmi":
        return "xgmi", None, f"{where}: AMD Infinity Fabric, no measured figure (the model keeps its default)"
    linked = {pair: layout.links[pair] for pair in _pairs(group) if layout.links.get(pair)}
    if not linked:  # only where an island too large to search gave its first GPUs
        return "nvlink", None, f"{where}: no direct NVLink between these GPUs, the model keeps its default"
    (a, b), links = min(linked.items(), key=lambda item: (item[1], item[0]))
    indirect = len(linked) < len(_pairs(group))
    rates = {i: _nvlink_rate(gpus_by_index.get(i, {}).get("name")) for i in group}
    unknown = sorted({str(gpus_by_index.get(i, {}).get("name") or "unnamed") for i, r in rates.items() if r is None})
    note = "; not every pair has its own NVLink (NCCL routes through the others)" if indirect else ""
    if unknown:
        return (
            "nvlink",
            None,
            (
                f"{where}: NV{links}, but the per-link bandwidth of {', '.join(unknown)} is not "
                f"known (add nvidia-smi -q for the GPU name); the model keeps its default{note}"
            ),
        )
    rate, generation = min((r for r in rates.values() if r is not None), key=lambda r: r[0])
    pair = "" if all(n == links for n in linked.values()) else f" (the narrowest pair, GPU {a} ↔ GPU {b})"
    return (
        "nvlink",
        links * rate,
        (
            f"{where}: NV{links}{pair} = {links} links × {_gbs(rate)} ({generation}) = "
            f"{_gbs(links * rate)} per direction{note}"
        ),
    )


def _pcie_link(
    layout: _Layout, group: tuple[int, ...], gpus_by_index: Mapping[int, Mapping[str, Any]]
) -> tuple[str | None, float | None, str]:
    kinds = sorted(
        {layout.paths[pair] for pair in _pairs(group) if pair in layout.paths}, key=lambda k: PATH_RANK.get(k, 6)
    )
    over = f"over PCIe through {', '.join(kinds)}" if kinds else "over PCIe"
    where = f"TP {len(group)} on GPUs {_span(group)}"
    if not layout.paths:
        figure = _pcie_figure(group, gpus_by_index)
        rate = f" (over PCIe it would be {_gbs(figure[0])} per direction)" if figure else ""
        return (
            None,
            None,
            (
                f"{where}: no nvidia-smi topo -m in the fingerprint, so whether the GPUs share NVLink is "
                f"unknown; the model keeps the catalog's interconnect{rate}"
            ),
        )
    largest = len(layout.islands[0]) if layout.islands and layout.kind else 1
    why = f" (the largest NVLink group has {largest} GPU(s))" if layout.kind == "nvlink" else " (no NVLink)"
    figure = _pcie_figure(group, gpus_by_index)
    if figure is None:
        return "pcie", None, f"{where} {over}{why}: no PCIe link facts (nvidia-smi -q), the model keeps its default"
    return "pcie", figure[0], f"{where} {over}{why}: {figure[1]}"


def _pcie_figure(group: Sequence[int], gpus_by_index: Mapping[int, Mapping[str, Any]]) -> tuple[float, str] | None:
    facts = {i: _pcie(gpus_by_index.get(i, {})) for i in group}
    known = {i: f for i, f in facts.items() if f is not None}
    if not known:
        return None
    index, (line, generation, lanes, from_current) = min(known.items(), key=lambda item: (item[1][0], item[0]))
    rate = line * PCIE_EFFICIENCY
    source = (
        "its current generation (no max reported)"
        if from_current
        else "the max generation (the current one drops at idle)"
    )
    missing = (
        f"; no PCIe facts for GPU(s) {_span(i for i in group if i not in known)}" if len(known) < len(group) else ""
    )
    return rate, (
        f"Gen{generation} × {lanes} lanes × {_number(PCIE_LANE_BYTES_PER_S[generation] / 1e9)} GB/s × "
        f"{PCIE_EFFICIENCY} = {_gbs(rate)} per direction, from GPU {index}: {source} and the current "
        f"width{missing}"
    )


def _slowness(figure: tuple[tuple[int, ...], str | None, float | None, str]) -> tuple[int, float]:
    """PCIe (or unknown) before NVLink/XGMI, then the smaller figure (an unknown figure counts as the slowest)."""
    _, link, rate, _ = figure
    return (0 if link in ("pcie", None) else 1), (rate if rate is not None else 0.0)


# --- the whole -----------------------------------------------------------------------------------------------------


def measured_environment(
    fingerprint: Mapping[str, Any], *, tp: int = 1, gpus: int | None = None
) -> MeasuredEnvironment:
    """The measured figures for a deployment with TP `tp` on the machine `fingerprint` describes.

    `gpus`: how many of the machine's GPUs the deployment occupies (tp × replicas). Given, it lays out gpus // tp
    TP groups (NVLink islands first), the memory figures cover those GPUs, and the link is the slowest group's.
    None: one TP group for the link, and the memory figures over every GPU (wherever the deployment lands).
    """
    if tp < 1:
        raise ValueError(f"tp must be ≥ 1, got {tp}")
    if gpus is not None and gpus < tp:
        raise ValueError(f"gpus ({gpus}) must be ≥ tp ({tp})")
    listed = [g for g in fingerprint.get("gpus") or [] if g.get("index") is not None]
    by_index = {g["index"]: g for g in listed}
    indices = sorted(by_index)
    explanation: list[str] = []
    count = max(fingerprint.get("gpu_count") or 0, len(listed)) or None

    layout = _layout(fingerprint, indices)
    replicas = gpus // tp if gpus is not None else 1
    pool, groups, fast = set(indices), [], []
    for _ in range(replicas):
        placed = _place(layout, pool, tp, by_index)
        if placed is None:
            break
        groups.append(placed[0])
        fast.append(placed[1])
        pool -= set(placed[0])
    if gpus is not None and gpus % tp:
        explanation.append(f"{gpus} GPUs make {replicas} TP {tp} group(s); {gpus % tp} left over")
    if indices and len(groups) < replicas:
        explanation.append(
            f"{replicas} TP {tp} group(s) need {replicas * tp} GPUs; the fingerprint lists "
            f"{len(indices)}, {len(groups)} group(s) laid out"
        )

    # a deployment larger than this machine (several servers, or a wrong count): the memory over every GPU here
    laid_out = gpus is not None and len(groups) == replicas
    covered = sorted({i for group in groups for i in group}) if laid_out else indices
    scope = f", over the {len(covered)} GPUs laid out" if laid_out else ""
    chosen = [by_index[i] for i in covered]

    names = Counter(g["name"] for g in chosen if g.get("name"))
    gpu_name = names.most_common(1)[0][0] if names else None
    if len(names) > 1:
        explanation.append(
            f"GPU models: {', '.join(f'{n} × {name}' for name, n in names.most_common())}; "
            f"{gpu_name} is the most common"
        )

    # a GPU in MIG mode counts with its smallest slice: an engine runs on one slice and sees only its memory
    sliced = {g["index"]: _slices(g) for g in chosen if _slices(g)}
    totals = {
        g["index"]: min(sliced[g["index"]]) if g["index"] in sliced else g["memory_total_bytes"]
        for g in chosen
        if g["index"] in sliced or g.get("memory_total_bytes")
    }
    memory = min(totals.values()) if totals else None
    on_slice = False
    if memory is not None:
        smallest = [i for i, v in totals.items() if v == memory]
        which = "" if len(set(totals.values())) == 1 else f" (GPU {_span(smallest)})"
        on_slice = all(i in sliced for i in smallest)
        if on_slice:
            cards = sorted(
                {by_index[i]["memory_total_bytes"] for i in smallest if by_index[i].get("memory_total_bytes")}
            )
            of_card = f", of the card's {' / '.join(_mib(c) for c in cards)}" if cards else ""
            carved = "; ".join(
                f"GPU {i}: {len(sizes)} slice(s) of {', '.join(_mib(v) for v in sorted(set(sizes)))}"
                for i, sizes in sorted(sliced.items())
            )
            explanation.append(
                f"memory per GPU: {_mib(memory)}, the smallest MIG slice{which}{scope} ({carved}{of_card}): an engine "
                f"runs on one slice and sees only its memory, so the estimate uses the slice's memory, not the "
                f"card's; CUDA reports the slice's memory as the device total, so it is also the CUDA-visible total"
            )
            if tp > 1:
                explanation.append(
                    f"TP {tp} on MIG slices: a CUDA process sees one MIG slice only, so the TP group "
                    f"needs {tp} processes on {tp} slices, which NCCL does not join (no peer-to-peer "
                    f"between MIG instances); disable MIG (nvidia-smi -i N -mig 0) for TP > 1"
                )
        else:
            explanation.append(
                f"memory per GPU: {_mib(memory)}, the smallest card as the driver reports it{which}{scope}"
            )
        if len(totals) < len(chosen):
            explanation.append(f"no memory size for GPU(s) {_span(i for i in covered if i not in totals)}")
    elif chosen:
        explanation.append("memory per GPU: not in the fingerprint (add nvidia-smi -q or the table)")
    unlisted = [g["index"] for g in chosen if _mig_on(g) and g["index"] not in sliced]
    if unlisted:
        explanation.append(
            f"MIG is enabled on GPU(s) {_span(unlisted)}, but the fingerprint lists no MIG devices "
            f"(add nvidia-smi -q -x or the table with its MIG devices): an engine sees one slice, not "
            f"the memory above"
        )

    held = {g["index"]: in_use for g in chosen if (in_use := _in_use(g)) is not None}
    used_max = max(held.values()) if held else None
    if used_max is not None:
        worst = min(i for i, v in held.items() if v == used_max)
        state = (
            "already held by other processes"
            if used_max > MEMORY_IN_USE_THRESHOLD_BYTES
            else "idle (an idle GPU shows up to 256 MiB)"
        )
        explanation.append(f"memory in use: at most {_mib(used_max)} on one GPU (GPU {worst}), {state}")

    found = fingerprint.get("host")
    host: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    host_total, limit = host.get("memory_total_bytes"), host.get("cgroup_memory_limit_bytes")
    host_memory = min((v for v in (host_total, limit) if v), default=None)
    if host_memory is not None:
        explanation.append(
            f"host memory: {_mib(host_memory)}"
            + (", the container's cgroup limit" if limit and host_memory == limit and host_memory != host_total else "")
        )

    link: str | None = None
    link_bytes: float | None = None
    group: tuple[int, ...] | None = groups[0] if groups else None
    if tp == 1:
        if groups:
            explanation.append("TP 1: no all-reduce, no link")
    elif not groups:
        if indices:
            explanation.append(f"TP {tp} needs {tp} GPUs; the fingerprint lists {len(indices)}: no link")
        else:
            explanation.append("no GPUs listed: the TP link is unknown")
    else:
        figures = []
        for candidate, on_fast in zip(groups, fast, strict=True):
            figures.append(
                (
                    candidate,
                    *(_fast_link(layout, candidate, by_index) if on_fast else _pcie_link(layout, candidate, by_index)),
                )
            )
        # the slowest group: PCIe before NVLink/XGMI, then the smaller figure (an unknown figure counts as slow)
        group, link, link_bytes, words = min(figures, key=_slowness)
        explanation.append(words + (f"; the slowest of {len(groups)} TP groups" if len(groups) > 1 else ""))
    return MeasuredEnvironment(
        tp=tp,
        gpu_count=count,
        gpu_name=gpu_name,
        memory_bytes_per_gpu=memory,
        cuda_total_bytes_per_gpu=memory if on_slice else None,
        mig=on_slice,
        memory_used_bytes_max=used_max,
        host_memory_bytes=host_memory,
        link=link,
        link_bytes_per_s=link_bytes,
        tp_group=group,
        tp_groups=tuple(groups),
        explanation=tuple(explanation),
    )

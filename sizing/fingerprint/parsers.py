"""One parser per output format (`nvidia-smi -q`, `-q -x`, the default table, `topo -m`, `--query-gpu` CSV, CUDA
version files, `nvcc --version`, `/proc/driver/nvidia/version`, `rocm-smi`), each returning `Facts`.

Parsers never raise on odd content: what they cannot read goes into `Facts.problems`, in words. Memory sizes that
the tools print in MiB become exact byte integers (81559 MiB → 81559 × 1,048,576 = 85,520,809,984 bytes). Modes are
normalised to "enabled" / "disabled", or None where the tool prints N/A. A GPU in MIG mode lists its MIG devices
(slices) where the output shows them (`-q`, `-q -x` and the table's "MIG devices:" part): each slice's memory is
what a CUDA process on it sees as the device's whole memory.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET  # DTDs and entities are refused before parsing, see _xml_safe_text
from dataclasses import dataclass, field
from typing import Any

from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from sizing.fingerprint.smi_csv import FIELD_ALIASES, csv_header_fields
from sizing.kernel.json_limits import loads as bounded_loads

MIB_BYTES = 1024 * 1024  # nvidia-smi's "MiB"
KIB_BYTES = 1024
GIB_BYTES = 1024 * MIB_BYTES

# PCIe transfer rate per lane (GT/s) → generation, for tools that print the rate instead (rocm-smi)
PCIE_GENERATION_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}

CONNECTION_KINDS = ("X", "SYS", "SOC", "NODE", "PHB", "PXB", "PIX")
_CONNECTION = re.compile(r"^(?:X|SYS|SOC|NODE|PHB|PXB|PIX|NV\d+|NVS\d*|NVB\d*)$")
_NA = {
    "",
    "n/a",
    "[n/a]",
    "not supported",
    "[not supported]",
    "not available",
    "not found",
    "unknown error",
    "[unknown error]",
    "insufficient permissions",
    "[insufficient permissions]",
    "none",
    "-",
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True, kw_only=True)
class MigDeviceFacts:
    """One MIG device (a GPU instance's compute instance) of a GPU in MIG mode; None where the output does not say.

    `memory_total_bytes` is the GPU instance's memory: CUDA on the slice reports it as the device total (public
    torch prints: total_memory=9856MB on an A100-SXM4-40GB 1g.10gb slice, whose nvidia-smi row reads 9856MiB).
    """

    index: int | None = None  # the MIG device's index on its GPU
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    sm_count: int | None = None  # multiprocessors of the slice


@dataclass(frozen=True, kw_only=True)
class GpuFacts:
    """What one output says about one GPU; None where it does not say."""

    index: int | None = None
    name: str | None = None
    name_truncated: bool = False  # the default table cuts long names to "NVIDIA RTX 6000 Ada Gene..."
    vendor: str = "nvidia"
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    memory_reserved_bytes: int | None = None
    processes_memory_bytes: int | None = None  # what the listed processes hold, where the output lists them
    pcie_generation_current: int | None = None
    pcie_generation_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    mig_mode: str | None = None
    mig_devices: tuple[MigDeviceFacts, ...] | None = None  # None: the output does not list them
    ecc_mode: str | None = None
    persistence_mode: str | None = None
    driver_model: str | None = None  # WDDM / TCC on Windows
    virtualization_mode: str | None = None
    bus_id: str | None = None
    uuid: str | None = None
    serial: str | None = None  # the board's serial number (nvidia-smi -q "Serial Number", -q -x <serial>)


@dataclass(frozen=True, kw_only=True)
class Topology:
    """`nvidia-smi topo -m`: the connection kind between every pair of devices, and the GPU pairs joined by NVLink."""

    devices: tuple[str, ...]
    matrix: dict[str, dict[str, str]]
    nvlink_pairs: tuple[tuple[int, int, int], ...]  # (gpu a, gpu b, bonded links), a < b
    gpu_connections: tuple[tuple[int, int, str], ...]  # (gpu a, gpu b, kind), a < b
    cpu_affinity: dict[str, str] = field(default_factory=dict)
    numa_affinity: dict[str, str] = field(default_factory=dict)
    nic_names: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Facts:
    """Everything one pasted output says, and what in it could not be read."""

    gpus: tuple[GpuFacts, ...] = ()
    attached_gpus: int | None = None
    driver_version: str | None = None
    kernel_module_version: str | None = None  # /proc/driver/nvidia/version: the loaded module, may differ
    cuda_version: str | None = None  # the driver's CUDA version (nvidia-smi)
    cuda_toolkit_version: str | None = None  # nvcc / version.json / version.txt
    topology: Topology | None = None
    samples: int | None = None  # CSV time series: rows read
    problems: tuple[str, ...] = ()


# --- small readers -------------------------------------------------------------------------------------------------


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in _NA else value


def _mode(value: str | None) -> str | None:
    value = _clean(value)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("enabled", "on", "enable", "yes"):
        return "enabled"
    if lowered in ("disabled", "off", "disable", "no"):
        return "disabled"
    return lowered


def _int(value: str | None) -> int | None:
    value = _clean(value)
    if value is None:
        return None
    match = re.match(r"^(\d+)\s*x?$", value, re.IGNORECASE)  # "16x", "4"
    return int(match.group(1)) if match else None


def _bytes(value: str | None, default_unit: str = "MiB") -> int | None:
    """'81559 MiB' → 85,520,809,984; a bare number is taken in `default_unit`."""
    value = _clean(value)
    if value is None:
        return None
    match = re.match(r"^(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?$", value, re.IGNORECASE)
    if not match:
        return None
    unit = (match.group(2) or default_unit).lower()
    factor = {
        "b": 1,
        "kib": KIB_BYTES,
        "kb": KIB_BYTES,
        "mib": MIB_BYTES,
        "mb": MIB_BYTES,
        "gib": GIB_BYTES,
        "gb": GIB_BYTES,
    }[unit]
    number = match.group(1)
    if "." in number:
        return round(float(number) * factor)
    return int(number) * factor


def _version(value: str | None) -> str | None:
    value = _clean(value)
    if value is None:
        return None
    match = re.match(r"^\d+(?:\.\d+)+", value)
    return match.group(0) if match else None


def _text(text: str) -> str:
    return _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).lstrip("\ufeff")


# --- nvidia-smi -q -------------------------------------------------------------------------------------------------

_Q_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[^:]*?[^\s:])\s*(?::\s?(?P<value>.*))?$")


def parse_nvidia_smi_q(text: str) -> Facts:
    """`nvidia-smi -q` (also `-i N` and `-d SECTION` filtered forms): indented "Key : value" lines under sections."""
    header: dict[str, str] = {}
    blocks: list[tuple[str, dict[str, str]]] = []
    process_memory: list[list[int]] = []  # per GPU block: "Used GPU Memory" of each listed process
    mig_blocks: list[list[dict[str, str]]] = []  # per GPU block: the "MIG Devices/MIG Device" sections' values
    current: dict[str, str] | None = None
    stack: list[tuple[int, str]] = []  # (indent, section name) above the current line
    for raw in _text(text).split("\n"):
        if not raw.strip() or raw.strip().startswith("====="):
            continue
        gpu = re.match(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$", raw)
        if gpu:
            current = {}
            blocks.append((gpu.group(1), current))
            process_memory.append([])
            mig_blocks.append([])
            stack = []
            continue
        match = _Q_LINE.match(raw.expandtabs(4))
        if not match:
            continue
        indent = len(match.group("indent"))
        key = match.group("key").strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([name for _, name in stack] + [key])
        if match.group("value") is None:
            if current is not None and path == "MIG Devices/MIG Device":
                mig_blocks[-1].append({})
            stack.append((indent, key))
            continue
        value = match.group("value").strip()
        if current is None or indent == 0:
            header[key] = value
        elif path.startswith("MIG Devices/MIG Device/") and mig_blocks[-1]:
            mig_blocks[-1][-1].setdefault(path.removeprefix("MIG Devices/MIG Device/"), value)
        else:
            current.setdefault(path, value)
            if key == "Used GPU Memory" and path.startswith("Processes/"):
                process_memory[-1].append(_bytes(value) or 0)
    problems: list[str] = []
    gpus = []
    for position, (bus_id, values) in enumerate(blocks):
        gpus.append(
            GpuFacts(
                index=position,
                name=_clean(values.get("Product Name")),
                memory_total_bytes=_bytes(values.get("FB Memory Usage/Total")),
                memory_used_bytes=_bytes(values.get("FB Memory Usage/Used")),
                memory_reserved_bytes=_bytes(values.get("FB Memory Usage/Reserved")),
                processes_memory_bytes=sum(process_memory[position])
                if "Processes" in values or process_memory[position]
                else None,
                pcie_generation_current=_int(values.get("PCI/GPU Link Info/PCIe Generation/Current")),
                pcie_generation_max=_int(values.get("PCI/GPU Link Info/PCIe Generation/Max")),
                pcie_width_current=_int(values.get("PCI/GPU Link Info/Link Width/Current")),
                pcie_width_max=_int(values.get("PCI/GPU Link Info/Link Width/Max")),
                mig_mode=_mode(values.get("MIG Mode/Current")),
                mig_devices=tuple(
                    MigDeviceFacts(
                        index=_int(device.get("Index")),
                        gpu_instance_id=_int(device.get("GPU Instance ID")),
                        compute_instance_id=_int(device.get("Compute Instance ID")),
                        memory_total_bytes=_bytes(device.get("FB Memory Usage/Total")),
                        memory_used_bytes=_bytes(device.get("FB Memory Usage/Used")),
                        sm_count=_int(device.get("Device Attributes/Shared/Multiprocessor count")),
                    )
                    for device in mig_blocks[position]
                )
                or None,
                ecc_mode=_mode(values.get("Ecc Mode/Current")),
                persistence_mode=_mode(values.get("Persistence Mode")),
                driver_model=_clean(values.get("Driver Model/Current")),
                virtualization_mode=_clean(values.get("GPU Virtualization Mode/Virtualization Mode")),
                bus_id=_clean(values.get("PCI/Bus Id")) or bus_id,
                uuid=_clean(values.get("GPU UUID")),
                serial=_clean(values.get("Serial Number")),
            )
        )
    attached = _int(header.get("Attached GPUs"))
    if not blocks:
        problems.append("no GPU section (a line 'GPU 00000000:xx:00.0') found")
    if attached is not None and attached > len(blocks):
        problems.append(
            f"lists {len(blocks)} of {attached} attached GPUs (filtered with -i?): the others are unknown;"
            " the positions in this output may not be the GPU indices"
        )
    if blocks and all(gpu.memory_total_bytes is None for gpu in gpus):
        problems.append("no 'FB Memory Usage' section: a filtered output (-d ...); run nvidia-smi -q without -d")
    elif any(gpu.memory_total_bytes is None for gpu in gpus):
        short = ", ".join(f"GPU {gpu.index}" for gpu in gpus if gpu.memory_total_bytes is None)
        problems.append(f"{short}: no 'FB Memory Usage' section (truncated paste?)")
    cuda = header.get("CUDA Version")
    if cuda is not None and _version(cuda) is None:
        problems.append(f"CUDA Version is {cuda.strip()!r} (a vGPU host or a driver without the CUDA library)")
    return Facts(
        gpus=tuple(gpus),
        attached_gpus=attached,
        driver_version=_version(header.get("Driver Version")),
        cuda_version=_version(cuda),
        problems=tuple(problems),
    )


# --- nvidia-smi -q -x ----------------------------------------------------------------------------------------------

# The DOCTYPE every nvidia-smi XML carries: an external SYSTEM id, no internal subset. Anything else is refused.
_NVSMI_DOCTYPE = re.compile(r"<!DOCTYPE\s+nvidia_smi_log\s+SYSTEM\s+\"[\w.\-]+\.dtd\"\s*>")
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.\-]*)[^<>]*?(/?)>")


def _xml_safe_text(text: str) -> str:
    """The XML without nvidia-smi's own DOCTYPE line; raises on any other DTD or an entity declaration."""
    stripped = _NVSMI_DOCTYPE.sub("", text, count=1)
    if "<!DOCTYPE" in stripped or "<!ENTITY" in stripped:
        raise FingerprintError(
            code=FingerprintErrorCode.UNSAFE_XML,
            message="XML with a DTD or entity declarations is refused (only nvidia-smi's own "
            "'<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_vNN.dtd\">' line is allowed)",
        )
    return stripped


def _open_tags(text: str) -> list[str]:
    stack: list[str] = []
    for closing, name, self_closing in _TAG.findall(re.sub(r"<\?.*?\?>|<!--.*?-->", "", text, flags=re.DOTALL)):
        if self_closing:
            continue
        if closing:
            if name in stack:
                del stack[len(stack) - 1 - stack[::-1].index(name) :]
        else:
            stack.append(name)
    return stack


def parse_nvidia_smi_xml(text: str) -> Facts:
    """`nvidia-smi -q -x` (DTD versions v10 to v12 and later). A truncated document is closed and read as far as it
    goes, with the problem saying where it ends."""
    body = _xml_safe_text(_text(text))
    problems: list[str] = []
    try:
        root = ET.fromstring(body)  # noqa: S314 (DTDs and entities refused above)
    except ET.ParseError as error:
        stack = _open_tags(body)
        if not stack:
            return Facts(problems=(f"unreadable XML: {error}",))
        where = f"<{stack[-1]}>" if stack[-1] == "gpu" or "gpu" not in stack else f"<{stack[-1]}> in <gpu>"
        problems.append(f"truncated XML: ends inside {where}")
        head = body[: body.rfind(">") + 1]
        repaired = head + "".join(f"</{name}>" for name in reversed(_open_tags(head)))
        try:
            root = ET.fromstring(repaired)  # noqa: S314
        except ET.ParseError:
            return Facts(problems=tuple(problems))
    if root.tag != "nvidia_smi_log":
        return Facts(problems=(f"XML root is <{root.tag}>, not <nvidia_smi_log>",))
    gpus = []
    for position, node in enumerate(root.findall("gpu")):
        processes = [_bytes(item.findtext("used_memory")) for item in node.findall("processes/process_info")]
        gpus.append(
            GpuFacts(
                index=position,
                name=_clean(node.findtext("product_name")),
                memory_total_bytes=_bytes(node.findtext("fb_memory_usage/total")),
                memory_used_bytes=_bytes(node.findtext("fb_memory_usage/used")),
                memory_reserved_bytes=_bytes(node.findtext("fb_memory_usage/reserved")),
                processes_memory_bytes=sum(p for p in processes if p is not None) if processes else None,
                pcie_generation_current=_int(node.findtext("pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
                pcie_generation_max=_int(node.findtext("pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
                pcie_width_current=_int(node.findtext("pci/pci_gpu_link_info/link_widths/current_link_width")),
                pcie_width_max=_int(node.findtext("pci/pci_gpu_link_info/link_widths/max_link_width")),
                mig_mode=_mode(node.findtext("mig_mode/current_mig")),
                mig_devices=tuple(
                    MigDeviceFacts(
                        index=_int(device.findtext("index")),
                        gpu_instance_id=_int(device.findtext("gpu_instance_id")),
                        compute_instance_id=_int(device.findtext("compute_instance_id")),
                        memory_total_bytes=_bytes(device.findtext("fb_memory_usage/total")),
                        memory_used_bytes=_bytes(device.findtext("fb_memory_usage/used")),
                        sm_count=_int(device.findtext("device_attributes/shared/multiprocessor_count")),
                    )
                    for device in node.findall("mig_devices/mig_device")
                )
                or None,
                ecc_mode=_mode(node.findtext("ecc_mode/current_ecc")),
                persistence_mode=_mode(node.findtext("persistence_mode")),
                driver_model=_clean(node.findtext("driver_model/current_dm")),
                virtualization_mode=_clean(node.findtext("gpu_virtualization_mode/virtualization_mode")),
                bus_id=_clean(node.findtext("pci/pci_bus_id")) or _clean(node.get("id")),
                uuid=_clean(node.findtext("uuid")),
                serial=_clean(node.findtext("serial")),
            )
        )
    attached = _int(root.findtext("attached_gpus"))
    if not gpus:
        problems.append("no <gpu> element")
    elif attached is not None and attached > len(gpus) and not problems:
        problems.append(f"lists {len(gpus)} of {attached} attached GPUs (filtered with -i?)")
    return Facts(
        gpus=tuple(gpus),
        attached_gpus=attached,
        driver_version=_version(root.findtext("driver_version")),
        cuda_version=_version(root.findtext("cuda_version")),
        problems=tuple(problems),
    )


# --- nvidia-smi (default table) ------------------------------------------------------------------------------------

_TABLE_HEADER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s*(?P<driver>\S+)"
    r"(?:\s+CUDA Version:\s*(?P<cuda>[\w./]+))?"
)
_TABLE_FIRST = re.compile(r"^\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persistence>On|Off|WDDM|TCC|N/A)\s*$")
_TABLE_MEMORY = re.compile(r"(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB")
_TABLE_PROCESS = re.compile(r"^\s*(?P<gpu>\d+)\s+.*?(?P<memory>\d+)\s*MiB\s*$")
# the first line of a row of the "MIG devices:" table: GPU, GI ID, CI ID, MIG device index
_TABLE_MIG_IDS = re.compile(r"^\s*(?P<gpu>\d+)\s+(?P<gi>\d+)\s+(?P<ci>\d+)\s+(?P<mig>\d+)\s*$")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_nvidia_smi_table(text: str) -> Facts:
    """The default `nvidia-smi` table (80- and 89-column layouts, 2- or 3-line GPU blocks, Windows WDDM/TCC)."""
    lines = _text(text).split("\n")
    problems: list[str] = []
    header = next((m for m in map(_TABLE_HEADER.search, lines) if m), None)
    blocks: list[list[list[str]]] = []
    processes: dict[int, int] = {}
    mig_devices: dict[int, list[MigDeviceFacts]] = {}
    state = "before"
    for line in lines:
        stripped = line.strip()
        if state == "before":
            if stripped.startswith("|=") and "+" in stripped:  # the line under the GPU table's column titles
                state = "gpus"
                blocks.append([])
            continue
        if state == "gpus":
            if "Processes:" in stripped or "MIG devices:" in stripped:
                state = "processes-header" if "Processes:" in stripped else "mig"
            elif stripped.startswith("+"):
                blocks.append([])
            elif stripped.startswith("|"):
                blocks[-1].append(_cells(stripped))
            else:
                state = "between"
            continue
        if state in ("between", "mig") and stripped.startswith("|") and "Processes:" in stripped:
            state = "processes-header"
            continue
        if state == "between" and stripped.startswith("|") and "MIG devices:" in stripped:
            state = "mig"
            continue
        if state == "mig" and stripped.startswith("|"):
            cells = _cells(stripped)
            ids = _TABLE_MIG_IDS.match(cells[0]) if cells else None
            memory = _TABLE_MEMORY.search(cells[1]) if ids and len(cells) > 1 else None
            sm = re.match(r"^\s*(\d+)", cells[2]) if ids and len(cells) > 2 else None
            if ids:
                mig_devices.setdefault(int(ids.group("gpu")), []).append(
                    MigDeviceFacts(
                        index=int(ids.group("mig")),
                        gpu_instance_id=int(ids.group("gi")),
                        compute_instance_id=int(ids.group("ci")),
                        memory_total_bytes=int(memory.group("total")) * MIB_BYTES if memory else None,
                        memory_used_bytes=int(memory.group("used")) * MIB_BYTES if memory else None,
                        sm_count=int(sm.group(1)) if sm else None,
                    )
                )
            continue
        if state == "processes-header" and stripped.startswith("|="):
            state = "processes"
            continue
        if state == "processes" and stripped.startswith("|"):
            match = _TABLE_PROCESS.match(stripped.strip("|"))
            if match:
                gpu = int(match.group("gpu"))
                processes[gpu] = processes.get(gpu, 0) + int(match.group("memory")) * MIB_BYTES
    gpus = []
    for block in (b for b in blocks if b):
        first = _TABLE_FIRST.match(block[0][0]) if block[0] else None
        if first is None:
            problems.append(f"unreadable GPU row: {' | '.join(block[0])!r}")
            continue
        name = first.group("name").strip()
        persistence = first.group("persistence")
        bus = block[0][1].split()[0] if len(block[0]) > 1 and block[0][1] else None
        ecc_cell = block[0][2] if len(block[0]) > 2 else ""
        ecc = "enabled" if re.fullmatch(r"\d+", ecc_cell) else _mode(ecc_cell)
        memory = _TABLE_MEMORY.search(block[1][1]) if len(block) > 1 and len(block[1]) > 1 else None
        mig = _mode(block[2][2]) if len(block) > 2 and len(block[2]) > 2 else None
        index = int(first.group("index"))
        gpus.append(
            GpuFacts(
                index=index,
                name=name.removesuffix("...").rstrip(),
                name_truncated=name.endswith("..."),
                memory_total_bytes=int(memory.group("total")) * MIB_BYTES if memory else None,
                memory_used_bytes=int(memory.group("used")) * MIB_BYTES if memory else None,
                processes_memory_bytes=processes.get(index, 0) if state == "processes" else None,
                mig_mode=mig,
                mig_devices=tuple(mig_devices[index]) if index in mig_devices else None,
                ecc_mode=ecc,
                persistence_mode=_mode(persistence) if persistence in ("On", "Off") else None,
                driver_model=persistence if persistence in ("WDDM", "TCC") else None,
                bus_id=bus,
            )
        )
        if memory is None:
            problems.append(f"GPU {index}: no 'used MiB / total MiB' cell")
    if header is None:
        problems.append("no 'NVIDIA-SMI ... Driver Version: ...' banner: driver and CUDA versions unknown")
    if not gpus:
        problems.append("no GPU rows in the table")
    return Facts(
        gpus=tuple(gpus),
        attached_gpus=len(gpus) or None,
        driver_version=_version(header.group("driver")) if header else None,
        cuda_version=_version(header.group("cuda")) if header else None,
        problems=tuple(problems),
    )


# --- nvidia-smi topo -m --------------------------------------------------------------------------------------------

_NOT_DEVICE = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def parse_nvidia_smi_topo(text: str) -> Facts:
    """`nvidia-smi topo -m`: tab-separated or with the tabs expanded to spaces, ANSI underline in the header, NICs as
    NIC# (with a legend) or mlx5_#, with or without the GPU NUMA ID column."""
    lines = _text(text).split("\n")
    problems: list[str] = []
    header_at = next((i for i, line in enumerate(lines) if "GPU0" in line.split() and "X" not in line.split()), None)
    if header_at is None:
        return Facts(problems=("no topology header line ('GPU0  GPU1 ...') found",))
    labels = [label for label in re.split(r"\t|\s{2,}", lines[header_at].strip()) if label]
    devices = []
    for label in labels:
        if label in _NOT_DEVICE:
            break
        devices.append(label)
    matrix: dict[str, dict[str, str]] = {}
    cpu_affinity: dict[str, str] = {}
    numa_affinity: dict[str, str] = {}
    for line in lines[header_at + 1 :]:
        tokens = line.split()
        if not tokens or tokens[0] not in devices:
            if tokens and tokens[0].startswith("Legend"):
                break
            continue
        cells = tokens[1 : 1 + len(devices)]
        if len(cells) < len(devices):
            problems.append(f"row {tokens[0]} has {len(cells)} of {len(devices)} cells (truncated paste?)")
        matrix[tokens[0]] = dict(zip(devices, cells, strict=False))
        unknown = [cell for cell in cells if not _CONNECTION.match(cell)]
        if unknown:
            problems.append(f"row {tokens[0]}: unknown connection kind(s) {', '.join(sorted(set(unknown)))}")
        extra = tokens[1 + len(devices) :]
        if tokens[0].startswith("GPU") and extra:
            cpu_affinity[tokens[0]] = extra[0]
            if len(extra) > 1:
                numa_affinity[tokens[0]] = extra[1]
    missing = [device for device in devices if device not in matrix]
    if missing:
        problems.append(f"no row for {', '.join(missing)} (truncated paste?)")
    gpu_labels = [d for d in devices if re.fullmatch(r"GPU\d+", d)]
    nvlink, connections = [], []
    for a_position, a in enumerate(gpu_labels):
        for b in gpu_labels[a_position + 1 :]:
            kind = matrix.get(a, {}).get(b)
            if kind is None:
                continue
            reverse = matrix.get(b, {}).get(a)
            if reverse is not None and reverse != kind:
                problems.append(f"{a}→{b} is {kind} but {b}→{a} is {reverse}")
            connections.append((int(a[3:]), int(b[3:]), kind))
            links = re.fullmatch(r"NV(\d+)", kind)
            if links:
                nvlink.append((int(a[3:]), int(b[3:]), int(links.group(1))))
    nic_names = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", "\n".join(lines), re.MULTILINE))
    topology = Topology(
        devices=tuple(devices),
        matrix=matrix,
        nvlink_pairs=tuple(nvlink),
        gpu_connections=tuple(connections),
        cpu_affinity=cpu_affinity,
        numa_affinity=numa_affinity,
        nic_names=nic_names,
    )
    gpus = tuple(GpuFacts(index=int(label[3:])) for label in gpu_labels)
    return Facts(gpus=gpus, attached_gpus=len(gpus), topology=topology, problems=tuple(problems))


# --- nvidia-smi --query-gpu=... --format=csv -----------------------------------------------------------------------

_CSV_FIELDS = {  # query field → GpuFacts field
    "index": "index",
    "name": "name",
    "uuid": "uuid",
    "pci.bus_id": "bus_id",
    "memory.total": "memory_total_bytes",
    "memory.used": "memory_used_bytes",
    "memory.reserved": "memory_reserved_bytes",
    "pcie.link.gen.current": "pcie_generation_current",
    "pcie.link.gen.gpucurrent": "pcie_generation_current",
    "pcie.link.gen.max": "pcie_generation_max",
    "pcie.link.gen.gpumax": "pcie_generation_max",
    "pcie.link.width.current": "pcie_width_current",
    "pcie.link.width.max": "pcie_width_max",
    "mig.mode.current": "mig_mode",
    "ecc.mode.current": "ecc_mode",
    "persistence_mode": "persistence_mode",
    "driver_model.current": "driver_model",
}
_CSV_LABEL = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
_CSV_PLAIN = {
    "timestamp",
    "index",
    "name",
    "gpu_name",
    "uuid",
    "gpu_uuid",
    "count",
    "serial",
    "pstate",
    "persistence_mode",
    "driver_version",
    "vbios_version",
    "compute_cap",
    "gpu_bus_id",
    "accounting.mode",
}


def csv_header(line: str) -> list[str] | None:
    """The query field names when `line` is a `--format=csv` header, else None."""
    fields = csv_header_fields(line.split(","), aliases={})
    if fields is None:
        return None
    labels = [label for label, _ in fields]
    if not all(_CSV_LABEL.match(label) for label in labels):
        return None
    if not any("." in label or label in _CSV_PLAIN for label in labels):
        return None
    return [FIELD_ALIASES.get(label, label) for label in labels]


_COMPUTE_APPS_MEMORY = ("used_gpu_memory", "used_memory")


def _parse_compute_apps(header: list[str], lines: list[str]) -> Facts:
    """`nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv`: one row per compute
    process (the header says `used_gpu_memory [MiB]` whichever alias was queried). The memory of each GPU's
    processes is summed into `processes_memory_bytes` of a GPU known only by its bus id or UUID (no index: the list
    has none), which merges with the same GPU of the other outputs."""
    memory_field = next(name for name in _COMPUTE_APPS_MEMORY if name in header)
    held: dict[tuple[str | None, str | None], int] = {}
    problems: list[str] = []
    rows = 0
    for line in lines:
        values = next(csv.reader([line], skipinitialspace=True))
        if len(values) != len(header):
            problems.append(f"a row has {len(values)} values for {len(header)} columns: {line.strip()[:80]!r}")
            continue
        rows += 1
        row = dict(zip(header, (value.strip() for value in values), strict=True))
        key = (_clean(row.get("pci.bus_id")), _clean(row.get("uuid")))
        held[key] = held.get(key, 0) + (_bytes(row.get(memory_field)) or 0)
    if not any(bus or uuid for bus, uuid in held):
        problems.insert(
            0,
            "a --query-compute-apps process list "
            + (
                f"of {rows} process(es) without gpu_bus_id or gpu_uuid: add one of them to the query"
                if rows
                else "with no compute process (nothing holds GPU memory, or the processes run in another PID namespace)"
            ),
        )
        held = {}
    gpus = tuple(GpuFacts(bus_id=bus, uuid=uuid, processes_memory_bytes=total) for (bus, uuid), total in held.items())
    return Facts(gpus=gpus, samples=rows, problems=tuple(problems))


def parse_nvidia_smi_csv(text: str) -> Facts:
    """`nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`, one sample or a time series (also the header
    repeated before every sample when the command was appended to a file in a loop). Facts come from each GPU's last
    sample; memory without a unit is in MiB, as nvidia-smi prints it. A `--query-compute-apps` list is read as the
    memory its processes hold per GPU (`_parse_compute_apps`)."""
    lines = [line for line in _text(text).split("\n") if line.strip()]
    first = csv_header(lines[0]) if lines else None
    if first is not None and "pid" in first and any(name in first for name in _COMPUTE_APPS_MEMORY):
        return _parse_compute_apps(first, [line for line in lines[1:] if csv_header(line) is None])
    problems: list[str] = []
    header: list[str] | None = None
    latest: dict[str, dict[str, str]] = {}
    rows = 0
    for line in lines:
        fields = csv_header(line)
        if fields is not None:
            header = fields
            continue
        values = next(csv.reader([line], skipinitialspace=True))
        if header is None:
            problems.append(
                "CSV without a header line (--format=csv,noheader): the columns are unknown; run the "
                "query again without noheader"
            )
            break
        if len(values) != len(header):
            problems.append(f"a row has {len(values)} values for {len(header)} columns: {line.strip()[:80]!r}")
            continue
        rows += 1
        row = dict(zip(header, (value.strip() for value in values), strict=True))
        key = row.get("uuid") or row.get("pci.bus_id") or row.get("index") or "0"
        latest[key] = row
    gpus: list[GpuFacts] = []
    if header is not None and not any(name in header for name in _CSV_FIELDS):
        problems.append(f"no GPU identity or memory column ({', '.join(header)}): nothing to fingerprint")
    elif header is not None:
        for position, row in enumerate(latest.values()):
            found: dict[str, Any] = {}
            for query, attribute in _CSV_FIELDS.items():
                if query not in row:
                    continue
                value = row[query]
                if attribute.endswith("_bytes"):
                    found[attribute] = _bytes(value)
                elif attribute in ("mig_mode", "ecc_mode", "persistence_mode"):
                    found[attribute] = _mode(value)
                elif attribute.startswith("pcie_") or attribute == "index":
                    found[attribute] = _int(value)
                else:
                    found[attribute] = _clean(value)
            found.setdefault("index", None if "index" in row else position)
            gpus.append(GpuFacts(**found))
    driver = next((_version(row.get("driver_version")) for row in latest.values() if row.get("driver_version")), None)
    if gpus and header is not None and "memory.total" not in header:
        problems.append("no memory.total column: add memory.total to --query-gpu")
    if rows > len(latest) and gpus:
        problems.append(f"time series of {rows} samples for {len(latest)} GPU(s): facts from the last sample")
    return Facts(
        gpus=tuple(gpus), attached_gpus=len(gpus) or None, driver_version=driver, samples=rows, problems=tuple(problems)
    )


# --- CUDA and driver versions --------------------------------------------------------------------------------------


def parse_cuda_version_json(text: str) -> Facts:
    """The CUDA toolkit's `version.json` (CUDA 11.1 and later): {"cuda": {"version": "12.4.1"}, ...}."""
    try:
        data = bounded_loads(text)
    except json.JSONDecodeError as error:
        return Facts(problems=(f"unreadable JSON: {error}",))
    version = (
        data.get("cuda", {}).get("version") if isinstance(data, dict) and isinstance(data.get("cuda"), dict) else None
    )
    if _version(version) is None:
        return Facts(problems=("version.json without cuda.version",))
    return Facts(cuda_toolkit_version=_version(version))


def parse_cuda_version_txt(text: str) -> Facts:
    """The CUDA toolkit's `version.txt` (CUDA 11.0 and older): 'CUDA Version 10.2.89'."""
    match = re.search(r"CUDA Version\s+(\d+(?:\.\d+)+)", text)
    return Facts(cuda_toolkit_version=match.group(1)) if match else Facts(problems=("no 'CUDA Version x.y' line",))


def parse_nvcc_version(text: str) -> Facts:
    """`nvcc --version`: 'Cuda compilation tools, release 12.4, V12.4.131' → toolkit 12.4.131."""
    match = re.search(r"release\s+(\d+\.\d+),\s*V(\d+(?:\.\d+)+)", text)
    if match:
        return Facts(cuda_toolkit_version=match.group(2))
    release = re.search(r"release\s+(\d+\.\d+)", text)
    if release:
        return Facts(cuda_toolkit_version=release.group(1))
    return Facts(problems=("no 'Cuda compilation tools, release X.Y, VX.Y.Z' line",))


def parse_proc_driver_version(text: str) -> Facts:
    """`/proc/driver/nvidia/version`: the kernel module loaded now (proprietary or open), which can differ from the
    user-space library that nvidia-smi reports ("Driver/library version mismatch")."""
    match = re.search(r"NVRM version:.*?Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    if not match:
        return Facts(problems=("no 'NVRM version: ... Kernel Module X.Y' line",))
    return Facts(kernel_module_version=match.group(1))


# --- AMD: rocm-smi and amd-smi -------------------------------------------------------------------------------------


def _pcie_from_rate(text: str | None) -> tuple[int | None, int | None]:
    match = re.search(r"(\d+(?:\.\d+)?)\s*GT/s\s*x(\d+)", text or "")
    if not match:
        return None, None
    return PCIE_GENERATION_BY_GTS.get(float(match.group(1))), int(match.group(2))


def parse_rocm_smi_json(text: str) -> Facts:
    """`rocm-smi --json` (ROCm 4.x to 6.x key sets): one "cardN" object per GPU, byte counts already in bytes."""
    data = bounded_loads(text)
    gpus = []
    for key in sorted((k for k in data if re.fullmatch(r"card\d+", k)), key=lambda k: int(k[4:])):
        card = data[key]
        generation, width = _pcie_from_rate(card.get("pcie clock level"))
        name = _clean(card.get("Card series")) or _clean(card.get("Card model"))
        gpus.append(
            GpuFacts(
                index=int(key[4:]),
                name=name,
                vendor="amd",
                memory_total_bytes=_int(card.get("VRAM Total Memory (B)")),
                memory_used_bytes=_int(card.get("VRAM Total Used Memory (B)")),
                pcie_generation_current=generation,
                pcie_width_current=width,
                bus_id=_clean(card.get("PCI Bus")),
                uuid=_clean(card.get("Unique ID")),
            )
        )
    system = data.get("system", {}) if isinstance(data.get("system"), dict) else {}
    problems = [] if gpus else ["no 'cardN' objects"]
    if gpus and all(gpu.memory_total_bytes is None for gpu in gpus):
        problems.append("no VRAM sizes: run rocm-smi --showmeminfo vram --json")
    return Facts(
        gpus=tuple(gpus),
        attached_gpus=len(gpus) or None,
        driver_version=_version(system.get("Driver version")),
        problems=tuple(problems),
    )


def parse_rocm_smi_text(text: str) -> Facts:
    """`rocm-smi` text views (Concise Info, --showuse, --showmemuse, --showmeminfo vram): GPU indices, and VRAM
    sizes where the view prints them."""
    clean = _text(text)
    indices: set[int] = set(int(i) for i in re.findall(r"^GPU\[(\d+)\]", clean, re.MULTILINE))
    totals = {
        int(i): int(v)
        for i, v in re.findall(r"^GPU\[(\d+)\]\s*:\s*VRAM Total Memory \(B\):\s*(\d+)", clean, re.MULTILINE)
    }
    used = {
        int(i): int(v)
        for i, v in re.findall(r"^GPU\[(\d+)\]\s*:\s*VRAM Total Used Memory \(B\):\s*(\d+)", clean, re.MULTILINE)
    }
    names = dict(re.findall(r"^GPU\[(\d+)\]\s*:\s*Card [Ss]eries:\s*(.+?)\s*$", clean, re.MULTILINE))
    concise = re.search(r"^\s*(?:Device|GPU)\s+.*(?:Temp|Node).*$", clean, re.MULTILINE)
    if concise:
        for line in clean[concise.end() :].split("\n"):
            row = re.match(r"^\s*(\d+)\s+\S", line)
            if row:
                indices.add(int(row.group(1)))
            elif line.startswith("="):
                break
    gpus = tuple(
        GpuFacts(
            index=i,
            vendor="amd",
            name=names.get(str(i)),
            memory_total_bytes=totals.get(i),
            memory_used_bytes=used.get(i),
        )
        for i in sorted(indices)
    )
    problems = [] if gpus else ["no GPU rows"]
    if gpus and not totals:
        problems.append(
            "this rocm-smi view has no GPU names or VRAM sizes: run rocm-smi --showproductname "
            "--showmeminfo vram --json"
        )
    return Facts(gpus=gpus, attached_gpus=len(gpus) or None, problems=tuple(problems))


def parse_amd_smi_xgmi(text: str) -> Facts:
    """`amd-smi xgmi -m --json`: the GPUs by bus id and the XGMI links between them."""
    data = bounded_loads(text)
    gpus, connections = [], []
    for item in data:
        index = item.get("gpu")
        gpus.append(GpuFacts(index=index, vendor="amd", bus_id=_clean(item.get("bdf"))))
        metrics = item.get("link_metrics") or {}
        for link in metrics.get("links") or []:
            peer = link.get("gpu")
            if isinstance(index, int) and isinstance(peer, int) and index < peer:
                connections.append((index, peer, str(metrics.get("link_type") or "XGMI")))
    labels = tuple(f"GPU{gpu.index}" for gpu in gpus)
    matrix: dict[str, dict[str, str]] = {label: {label: "X"} for label in labels}
    for a, b, kind in connections:
        matrix[f"GPU{a}"][f"GPU{b}"] = kind
        matrix[f"GPU{b}"][f"GPU{a}"] = kind
    topology = Topology(devices=labels, matrix=matrix, nvlink_pairs=(), gpu_connections=tuple(connections))
    return Facts(gpus=tuple(gpus), attached_gpus=len(gpus) or None, topology=topology)

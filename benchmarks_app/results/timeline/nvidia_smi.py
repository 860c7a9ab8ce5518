"""GPU memory timelines from ``nvidia-smi --query-gpu=... --format=csv -l N`` logs (the layouts read: the package
docstring). Pure Python.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo

from benchmarks_app.results.timeline.common import (
    EventKind,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    TimelineEvent,
    TimelineFormat,
    TimelineRefusal,
    natural_key,
    parse_time,
    try_time,
)
from sizing.fingerprint.smi_csv import NOT_AVAILABLE, csv_header_fields, smi_bytes, smi_number

DEFAULT_SMI_COLUMNS = ("timestamp", "index", "memory.used", "memory.total", "utilization.gpu")


_SMI_ERROR = re.compile(
    r"Unable to determine|GPU is lost|No devices were found|Failed to initialize NVML|"
    r"NVIDIA-SMI has failed|Unknown Error|driver",
    re.IGNORECASE,
)


# column aliases: nvidia-smi accepts several names for some fields
_SMI_ALIASES = {
    "gpu_name": "name",
    "gpu_bus_id": "pci.bus_id",
    "gpu_uuid": "uuid",
    "power.draw.instant": "power.draw",
    "power.draw.average": "power.draw",
    "temperature.gpu": "temperature.gpu",
}


def _smi_header(line: str) -> tuple[list[str], dict[str, str]] | None:
    """(field names, unit per field) of an nvidia-smi CSV header line, or None when the line is not one."""
    if line[:1].isdigit():  # a sample: a header starts with a field name
        return None
    cells = _cells(line)
    bare = [c.split(" [")[0].strip() for c in cells]
    if not cells or ("timestamp" not in bare and not any(c in ("memory.used", "index", "name", "uuid") for c in bare)):
        return None
    fields = csv_header_fields(cells, aliases=_SMI_ALIASES)
    if fields is None:
        return None
    names = [name for name, _ in fields]
    units = {name: unit for name, unit in fields if unit is not None}
    return names, units


def _cells(line: str) -> list[str]:
    if '"' in line:
        return [c.strip() for c in next(csv.reader([line]))]
    return [c.strip() for c in line.split(",")]


_SMI_TIME = re.compile(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


def _smi_time(text: str, tz: tzinfo) -> float:
    """nvidia-smi's ``2026/11/30 13:41:02.123`` quickly (a million lines in a 3-day log of 8 GPUs every second);
    any other form through `parse_time`."""
    match = _SMI_TIME.fullmatch(text)
    if not match:
        return parse_time(text, tz=tz)
    year, month, day, hour, minute, second, fraction = match.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz).timestamp()


def looks_like_smi_csv(text: str) -> bool:
    """A header line or a dated sample line among the first five lines (nvidia-smi may print an error first)."""
    for line in [line for line in text.splitlines() if line.strip()][:5]:
        if _smi_header(line):
            return True
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 3 and re.match(r"^\d{4}[/-]", cells[0]) and try_time(cells[0]) is not None:
            return True
    return False


def parse_nvidia_smi_csv(text: str, *, tz: tzinfo = UTC, columns: Sequence[str] | None = None) -> MemoryTimeline:
    """The timeline of an ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N`` log.

    Memory in MiB (or the unit written in the header or after the value); `memory_total_bytes` is
    ``memory.total``, else ``memory.used + memory.free (+ memory.reserved)`` (noted: without ``memory.reserved`` that
    is a little below the card's total). GPUs are told apart by ``index``, else ``pci.bus_id``, else ``uuid``.

    >>> timeline = parse_nvidia_smi_csv("2026/11/30 13:41:02.123, 1, 71000, 81559, 35\\n")
    >>> timeline.gpus[0].gpu, timeline.gpus[0].samples[0].memory_total_bytes == 81559 * MIB
    ('1', True)
    """
    lines = text.splitlines()
    content = [i for i, line in enumerate(lines) if line.strip()]
    if not content:
        raise TimelineRefusal("the file is empty")
    last_index = content[-1]
    names: list[str] | None = None
    units: dict[str, str] = {}
    headers = 0
    header_sets: set[tuple[str, ...]] = set()
    rows: dict[str, list[GpuSample]] = {}
    identity: dict[str, dict[str, str | None]] = {}
    events: list[TimelineEvent] = []
    notes: list[str] = []
    skipped: list[int] = []
    truncated = False
    last_time: float | None = None
    times: dict[str, float] = {}  # the GPUs of one sample share its timestamp
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        header = _smi_header(line)
        if header:
            names, units = header
            headers += 1
            header_sets.add(tuple(names))
            continue
        cells = _cells(line)
        is_last = number - 1 == last_index
        if len(cells) < 3 and _SMI_ERROR.search(line):
            events.append(TimelineEvent(time_s=last_time, kind=EventKind.SMI_ERROR.value, message=line.strip()))
            continue
        if names is None:
            names = list(columns or DEFAULT_SMI_COLUMNS)
            if len(cells) != len(names) and not is_last:
                raise TimelineRefusal(
                    f"an nvidia-smi CSV without a header line has {len(cells)} columns; without a header the columns "
                    f"must be {','.join(DEFAULT_SMI_COLUMNS)} (or name them with columns=)"
                )
            notes.append("no header line: columns read as " + ",".join(names))
        if "timestamp" not in names:
            raise TimelineRefusal(
                "an nvidia-smi query without a timestamp column (a one-off snapshot), not a "
                "monitoring log: add timestamp to --query-gpu, or import it as a hardware "
                "fingerprint"
            )
        if "memory.used" not in names:
            raise TimelineRefusal(
                f"an nvidia-smi log without memory.used (columns: {', '.join(names)}): a memory "
                "timeline needs --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu"
            )
        try:
            if len(cells) != len(names):
                raise ValueError("columns")
            record = dict(zip(names, cells, strict=True))
            stamp = record["timestamp"]
            time_s = times.get(stamp)
            if time_s is None:
                time_s = times[stamp] = _smi_time(stamp, tz)
            used = smi_bytes(record["memory.used"], units.get("memory.used"))
            total = smi_bytes(record["memory.total"], units.get("memory.total")) if "memory.total" in record else None
            if total is None and used is not None and "memory.free" in record:
                free = smi_bytes(record["memory.free"], units.get("memory.free"))
                reserved = (
                    smi_bytes(record["memory.reserved"], units.get("memory.reserved"))
                    if "memory.reserved" in record
                    else None
                )
                if free is not None:
                    total = used + free + (reserved or 0)
            utilization = smi_number(record["utilization.gpu"])[0] if "utilization.gpu" in record else None
            power = smi_number(record["power.draw"])[0] if "power.draw" in record else None
            temperature = smi_number(record["temperature.gpu"])[0] if "temperature.gpu" in record else None
        except (ValueError, KeyError):
            if is_last:
                truncated = True
                notes.append(
                    f"the last line ({number}) is cut short: it was left out, the complete samples before it are kept"
                )
                continue
            skipped.append(number)
            continue
        key = record.get("index") or record.get("pci.bus_id") or record.get("uuid") or "0"
        info = identity.setdefault(key, {"name": None, "uuid": None, "pci_bus_id": None})
        for field_name, column in (("name", "name"), ("uuid", "uuid"), ("pci_bus_id", "pci.bus_id")):
            if record.get(column) and record[column] not in NOT_AVAILABLE:
                info[field_name] = record[column]
        rows.setdefault(key, []).append(
            GpuSample(
                time_s=time_s,
                memory_used_bytes=used,
                memory_total_bytes=total,
                utilization_pct=utilization,
                power_w=power,
                temperature_c=temperature,
            )
        )
        last_time = time_s
    sample_count = sum(len(v) for v in rows.values())
    if skipped and len(skipped) > max(3, sample_count // 10):
        raise TimelineRefusal(
            f"{len(skipped)} lines could not be read as nvidia-smi samples (first: line "
            f"{skipped[0]}): not an nvidia-smi --query-gpu CSV log"
        )
    if skipped:
        notes.append(f"{len(skipped)} unreadable line(s) left out: {', '.join(map(str, skipped[:10]))}")
    if not sample_count:
        raise TimelineRefusal("an nvidia-smi CSV header without any complete sample")
    if headers > 1:
        notes.append(f"the header line appears {headers} times (the log was restarted or appended to)")
    if len(header_sets) > 1:
        notes.append("the queried columns change along the log; each part is read with its own header")
    if names and "memory.total" not in names and "memory.free" in names:
        notes.append(
            "memory total = memory.used + memory.free"
            + (
                " + memory.reserved"
                if "memory.reserved" in names
                else " (memory.reserved not logged: a little below the card's total)"
            )
        )
    gpus = []
    for key, samples in sorted(rows.items(), key=lambda item: natural_key(item[0])):
        ordered = sorted(samples, key=lambda s: s.time_s or 0.0)
        if ordered != samples:
            notes.append(f"GPU {key}: samples out of time order were sorted")
        info = identity[key]
        gpus.append(
            GpuSeries(
                gpu=key, name=info["name"], uuid=info["uuid"], pci_bus_id=info["pci_bus_id"], samples=tuple(ordered)
            )
        )
    return MemoryTimeline(
        format=TimelineFormat.NVIDIA_SMI_CSV.value,
        sources=("nvidia_smi",),
        gpus=tuple(gpus),
        events=tuple(events),
        truncated=truncated,
        notes=tuple(notes),
    )

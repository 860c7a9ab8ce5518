"""The low-level reading of ``nvidia-smi --query-gpu=... --format=csv`` text, shared by the fingerprint's parser of a
machine's query (`sizing.fingerprint.parsers.parse_nvidia_smi_csv`) and the memory timeline's parser of an
``-l N`` log (`benchmarks_app.results.timeline.nvidia_smi`): header cells → field names and units, "[N/A]" /
"[Not Supported]" cells, numbers with their units. Pure Python; each caller keeps its own rules of which lines are
headers and which fields it reads.

>>> csv_header_fields(["timestamp", " memory.used [MiB]", "gpu_name"], aliases=FIELD_ALIASES)
[('timestamp', None), ('memory.used', 'MiB'), ('name', None)]
>>> smi_number("841 MiB"), smi_number("[N/A]"), smi_bytes("2 GiB", None) == 2 * 1024 * MIB
((841.0, 'MiB'), (None, None), True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

MIB = 1_048_576  # bytes in a MiB: nvidia-smi reports memory in MiB
GB = 1_000_000_000

# names nvidia-smi accepts for the same query field
FIELD_ALIASES = {"gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id"}

# what nvidia-smi writes in a cell instead of a value
NOT_AVAILABLE = {
    "",
    "[N/A]",
    "N/A",
    "[Not Supported]",
    "Not Supported",
    "[Unknown Error]",
    "[GPU is lost]",
    "[Insufficient Permissions]",
    "[Requested functionality has been deprecated]",
}

MEMORY_UNITS = {"MiB": MIB, "GiB": 1024 * MIB, "KiB": 1024, "B": 1, "MB": 1_000_000, "GB": GB}

_HEADER_UNIT = re.compile(r"\s*\[([^\]]*)\]\s*$")
_FIELD_NAME = re.compile(r"[a-z_][a-z0-9_.]*")
_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)\s*([A-Za-z%]+)?")


def header_field(cell: str) -> tuple[str, str | None]:
    """(field name, unit in brackets or None) of a header cell: ``memory.used [MiB]`` → ("memory.used", "MiB")."""
    cell = cell.strip()
    unit_match = _HEADER_UNIT.search(cell)
    if not unit_match:
        return cell, None
    return _HEADER_UNIT.sub("", cell).strip(), unit_match.group(1)


def csv_header_fields(
    cells: Sequence[str], *, aliases: Mapping[str, str] = FIELD_ALIASES
) -> list[tuple[str, str | None]] | None:
    """(field name, unit) per cell of a ``--format=csv`` header line, the names through `aliases`; None when a cell
    is not a query field name (lower case letters, digits, "_" and ".")."""
    fields: list[tuple[str, str | None]] = []
    for cell in cells:
        name, unit = header_field(cell)
        if not _FIELD_NAME.fullmatch(name):
            return None
        fields.append((aliases.get(name, name), unit))
    return fields


def smi_number(cell: str) -> tuple[float | None, str | None]:
    """(number, unit written after it) of a cell like "841 MiB", "22 %", "[N/A]"; (None, None) when N/A;
    ValueError when the cell is no number."""
    value = cell.strip()
    number, _, unit = value.partition(" ")
    if unit.isalpha() or unit == "%" or not unit:  # the common "841 MiB", "22 %", "841" quickly
        try:
            parsed = float(number)
        except ValueError:
            pass
        else:
            return (parsed, unit or None) if math.isfinite(parsed) else (None, None)
    if value in NOT_AVAILABLE or value.startswith("[") or value.upper() == "N/A":
        return None, None
    match = _NUMBER.fullmatch(value)
    if not match:
        raise ValueError(value)
    return float(match.group(1)), match.group(2)


def smi_bytes(cell: str, header_unit: str | None) -> int | None:
    """Bytes of a memory cell, in the unit written after the value, else the header's, else MiB; None when N/A."""
    number, unit = smi_number(cell)
    if number is None:
        return None
    factor = MEMORY_UNITS.get(unit or header_unit or "MiB")
    if factor is None:
        raise ValueError(cell)
    return round(number * factor)

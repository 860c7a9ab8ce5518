"""Byte units. Bytes are the internal unit everywhere; these constants exist only for display and for
stating inputs that people give in GiB or GB.

>>> format_bytes(131072, "KiB")
'128.00 KiB'
>>> format_bytes(16 * GiB)
'16.00 GiB'
"""

from __future__ import annotations

KiB = 2**10
MiB = 2**20
GiB = 2**30
KB = 10**3
MB = 10**6
GB = 10**9

_UNITS: dict[str, int] = {"B": 1, "KiB": KiB, "MiB": MiB, "GiB": GiB, "KB": KB, "MB": MB, "GB": GB}


def bytes_in(n_bytes: int | float, unit: str) -> float:
    """Return `n_bytes` expressed in `unit` (one of B, KiB, MiB, GiB, KB, MB, GB)."""
    return n_bytes / _UNITS[unit]


def format_bytes(n_bytes: int | float, unit: str = "GiB", digits: int = 2) -> str:
    """Format a byte count for people, always naming the unit (GB = 10^9 bytes, GiB = 2^30 bytes)."""
    return f"{bytes_in(n_bytes, unit):.{digits}f} {unit}"


def gib(value: float) -> int:
    """Bytes in `value` GiB, rounded down to a whole byte."""
    return int(value * GiB)

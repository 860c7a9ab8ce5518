"""What the estimator needs to know about a GPU. The Django catalog converts its rows into this."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """A GPU model. `memory_bytes` is the total the driver reports (nvidia-smi), not the marketed figure."""

    slug: str
    name: str
    memory_bytes: int
    memory_bandwidth_bytes_per_s: int = 0
    tflops_dense: dict[str, float] = field(default_factory=dict)
    interconnect: str = ""

"""What the estimator needs to know about a GPU. The Django catalog converts its rows into this."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """A GPU model. `memory_bytes` is the total the driver reports (nvidia-smi), not the marketed figure.

    Hashable (by slug, memory and bandwidth figures) so performance models can be cached per GPU.
    """

    slug: str
    name: str
    memory_bytes: int
    memory_bandwidth_bytes_per_s: int = 0
    tflops_dense: dict[str, float] = field(default_factory=dict)
    interconnect: str = ""  # nvlink | pcie | xgmi
    interconnect_bytes_per_s: int = 0  # the GPU-to-GPU link's total (both directions), datasheet
    pcie_generation: int | None = None
    price_per_hour_usd: float | None = None

    def __hash__(self) -> int:
        return hash((self.slug, self.memory_bytes, self.memory_bandwidth_bytes_per_s,
                     tuple(sorted(self.tflops_dense.items())), self.interconnect, self.interconnect_bytes_per_s))

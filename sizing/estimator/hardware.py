"""What the estimator needs to know about a GPU. The Django catalog converts its rows into this."""

from __future__ import annotations

from dataclasses import dataclass, field

# cudaMemGetInfo's total sits 0.4-0.9 GiB below nvidia-smi's on public boot logs; the middle of the common range.
CUDA_RESERVATION_FALLBACK_BYTES = 45 * 2**30 // 100


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
    # What CUDA itself sees (DESIGN §7, vllm-memory spec §1): `cudaMemGetInfo`'s total, below nvidia-smi's by the
    # driver's reservation; vLLM multiplies this by gpu_memory_utilization. None: not known for this SKU.
    cuda_total_bytes: int | None = None
    sm_count: int | None = None
    compute_capability: tuple[int, int] | None = None  # (8, 9) for Ada; None for AMD cards
    nvswitch: bool = False  # an HGX/DGX board whose GPUs meet through NVSwitch (NCCL's NVLS buffers at TP > 2)
    mig: bool = False  # a MIG slice: `memory_bytes` is the slice's memory, not the card's

    @property
    def cuda_visible_bytes(self) -> int:
        """The total vLLM's budget multiplies: CUDA's own figure, else the driver's total less the typical
        0.45 GiB reservation (the spec's fallback)."""
        if self.cuda_total_bytes:
            return self.cuda_total_bytes
        return max(1, self.memory_bytes - CUDA_RESERVATION_FALLBACK_BYTES)

    def __hash__(self) -> int:
        return hash(
            (
                self.slug,
                self.memory_bytes,
                self.memory_bandwidth_bytes_per_s,
                tuple(sorted(self.tflops_dense.items())),
                self.interconnect,
                self.interconnect_bytes_per_s,
                self.cuda_total_bytes,
                self.compute_capability,
                self.nvswitch,
            )
        )

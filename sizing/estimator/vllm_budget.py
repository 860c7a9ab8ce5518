"""vLLM's KV-cache budget as each vLLM release computes it (placeholder; filled in below)."""

from __future__ import annotations

from sizing.estimator.versions import Version

UTILIZATION_092_FROM = Version(0, 20, 0)


def vllm_default_utilization(version: Version | None) -> float:
    """`gpu_memory_utilization`'s default: 0.90 up to 0.19.x, 0.92 from 0.20.0 (`config/cache.py` 66 @ v0.20.0)."""
    return 0.92 if version is not None and version >= UTILIZATION_092_FROM else 0.9

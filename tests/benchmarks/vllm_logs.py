"""How the benchmarks read a vLLM boot log's release and card (shared by accuracy.py and vllm_kv_budget.py)."""

from __future__ import annotations

import re
from typing import Any

from sizing.estimator.hardware import GpuSpec
from sizing.estimator.units import MiB
from sizing.estimator.versions import parse_version

# vLLM releases and their dates (PyPI upload dates, public): a log with no version is read with the newest release
# published before it.
RELEASES = (
    ("0.6.0", "2024-09-04"),
    ("0.6.3", "2024-10-14"),
    ("0.6.4", "2024-11-15"),
    ("0.6.5", "2024-12-17"),
    ("0.6.6", "2024-12-27"),
    ("0.7.0", "2025-01-27"),
    ("0.7.3", "2025-02-20"),
    ("0.8.0", "2025-03-18"),
    ("0.8.4", "2025-04-14"),
    ("0.8.5", "2025-04-28"),
    ("0.9.0", "2025-05-15"),
    ("0.9.1", "2025-06-10"),
    ("0.9.2", "2025-07-08"),
    ("0.10.0", "2025-07-24"),
    ("0.10.1", "2025-08-18"),
    ("0.10.2", "2025-09-13"),
    ("0.11.0", "2025-10-02"),
)
# V0's profiling lines (worker.py, "# cuda blocks", the 0.6.x one-line summary)
V0_FORMAT = re.compile(r"worker\.py:\d+\]|# (?:cuda|GPU) blocks|GPU blocks: \d+|Memory profiling results: total_gpu")


def log_release(log: dict[str, Any], printed: str | None) -> tuple[str, str]:
    """(release, where it came from): printed in the log, else the record's words ("~0.8.5", "pre-0.6.5 dev" = the
    0.6.5 code), else the newest release before the record's date."""
    if printed and parse_version(printed):
        return printed, "printed in the log"
    text = str(log.get("vllm_version") or "")
    found = re.search(r"(\d+\.\d+\.\d+)", text)
    if found:
        return found[1], f"the record: {text!r}"
    date = re.search(r"(20\d\d-\d\d-\d\d)", str(log.get("source") or ""))
    if date:
        earlier = [version for version, day in RELEASES if day <= date[1]]
        if earlier:
            return earlier[-1], f"the newest release before the log's date {date[1]}"
    return "latest", "unknown: latest"


def log_engine_mode(text: str, release: str) -> str:
    """v0 for a log in V0's format on a release that also has V1 (0.8-0.10), else vLLM's own choice."""
    version = parse_version(release)
    if V0_FORMAT.search(text) and version is not None and version >= (parse_version("0.8.0") or version):
        return "v0"
    return "auto"


def catalog_gpu(row: dict[str, Any]) -> GpuSpec:
    """A catalog row (sizing/catalog_data/gpus.json) as the estimator's GpuSpec, CUDA's view included."""
    cc = row.get("compute_capability")
    return GpuSpec(
        slug=row["slug"],
        name=row["name"],
        memory_bytes=(row.get("nvidia_smi_memory_mib") or 0) * MiB or row["marketed_memory_gb"] * 10**9,
        cuda_total_bytes=(row["cuda_total_mib"] * MiB) if row.get("cuda_total_mib") else None,
        sm_count=row.get("sm_count"),
        nvswitch=bool(row.get("nvswitch")),
        compute_capability=(int(str(cc).split(".")[0]), int(str(cc).split(".")[1])) if cc else None,
    )

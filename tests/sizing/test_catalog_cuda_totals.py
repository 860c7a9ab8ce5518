"""The GPU catalog knows what CUDA sees: cudaMemGetInfo's total (what vLLM multiplies by gpu_memory_utilization), the
SM count, the compute capability and whether the board's GPUs meet through NVSwitch; the loader stores them and the
estimator's GpuSpec gets them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sizing.estimator.hardware import GpuSpec
from sizing.models import Gpu
from sizing.services.estimates import catalog_load, gpu_spec

GPUS_JSON = Path(__file__).resolve().parents[2] / "sizing" / "catalog_data" / "gpus.json"
GPUS = json.loads(GPUS_JSON.read_text(encoding="utf-8"))
BY_SLUG = {gpu["slug"]: gpu for gpu in GPUS}
MIB = 2**20
MIB_PER_GIB = 1024
# the spec's fallback (vllm-memory.md §1): nvidia-smi's total less 0.45 GiB = 460.8 MiB, rounded up to whole MiB
FALLBACK_MIB = 461
NVIDIA = [gpu for gpu in GPUS if gpu["vendor"] == "nvidia"]
AMD = [gpu for gpu in GPUS if gpu["vendor"] == "amd"]

WIDENED = {
    "nvidia-rtx-2060-12gb",
    "nvidia-rtx-3060-12gb",
    "nvidia-rtx-4060-ti-16gb",
    "nvidia-rtx-4070-12gb",
    "nvidia-rtx-4080-16gb",
    "nvidia-rtx-5090-32gb",
    "nvidia-a30-24gb",
    "nvidia-a40-48gb",
    "nvidia-l40-48gb",
    "nvidia-rtx-6000-ada-48gb",
    "nvidia-h20-141gb",
    "nvidia-h200-nvl-141gb",
    "nvidia-b300-sxm-288gb",
    "amd-mi250x-64gb",
    "amd-mi325x-256gb",
}
# HGX/DGX SXM boards (NVSwitch between the GPUs); PCIe cards and NVL pairs are joined by bridges at most
NVSWITCH = {
    "nvidia-a100-sxm-40gb",
    "nvidia-a100-sxm-80gb",
    "nvidia-a800-sxm-80gb",
    "nvidia-h100-sxm-80gb",
    "nvidia-h800-sxm-80gb",
    "nvidia-h200-sxm-141gb",
    "nvidia-h20-96gb",
    "nvidia-h20-141gb",
    "nvidia-b200-sxm-180gb",
    "nvidia-b300-sxm-288gb",
}


def _ids(gpus: list[dict]) -> list[str]:
    return [gpu["slug"] for gpu in gpus]


def test_the_widened_catalog_has_the_named_cards() -> None:
    # then
    assert set(BY_SLUG) >= WIDENED
    assert len(GPUS) == 36  # 21 before issue 18, and the 15 named in it


@pytest.mark.parametrize("gpu", NVIDIA, ids=_ids(NVIDIA))
def test_cuda_sees_0_2_to_1_gib_less_than_nvidia_smi_on_nvidia_cards(gpu: dict) -> None:
    """The driver's reservation. The issue asked for 0.3-1.0 GiB, but the public figures of small cards sit lower:
    T4 15360 - 15095 = 265 MiB (0.26 GiB), RTX 3060 12288 - 12045 = 243 MiB (0.24 GiB), RTX 4070 12282 - 12002 =
    280 MiB, V100 32768 - 32494 = 274 MiB; the largest is the B300's 275040 - 274113 = 927 MiB (0.91 GiB)."""
    # given
    below_mib = gpu["nvidia_smi_memory_mib"] - gpu["cuda_total_mib"]
    # then
    assert isinstance(gpu["cuda_total_mib"], int)
    assert 0.2 * MIB_PER_GIB <= below_mib <= 1.0 * MIB_PER_GIB


@pytest.mark.parametrize("gpu", AMD, ids=_ids(AMD))
def test_rocm_sees_the_whole_rocm_smi_total_on_amd_cards(gpu: dict) -> None:
    # MI300X: rocm-smi 206141652992 B and torch's total_memory=196592MB are the same 196,592 MiB
    assert gpu["cuda_total_mib"] == gpu["nvidia_smi_memory_mib"]
    assert gpu["compute_capability"] is None


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_notes_say_whether_the_cuda_total_is_measured_or_the_fallback(gpu: dict) -> None:
    # given
    notes = gpu["notes"]
    fallback = "cuda_total_mib is the fallback (nvidia_smi_memory_mib - 0.45 GiB)" in notes
    measured = f"cuda_total_mib {gpu['cuda_total_mib']} is measured" in notes
    assumed = f"cuda_total_mib {gpu['cuda_total_mib']} is equally assumed" in notes  # the MI325X, no public output
    # then: exactly one, and a fallback row holds exactly the fallback figure
    assert [fallback, measured, assumed].count(True) == 1
    if fallback:
        assert gpu["cuda_total_mib"] == gpu["nvidia_smi_memory_mib"] - FALLBACK_MIB


def test_the_h100_sxm_holds_the_public_boot_log_figure() -> None:
    # public get_device_properties prints: total_memory=81090MB = 79.19 GiB, vLLM's "total_gpu_memory (79.19GiB)"
    h100 = BY_SLUG["nvidia-h100-sxm-80gb"]
    assert h100["cuda_total_mib"] == 81090
    assert round(h100["cuda_total_mib"] / MIB_PER_GIB, 2) == 79.19


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_sm_count_compute_capability_and_sources(gpu: dict) -> None:
    # then
    assert isinstance(gpu["sm_count"], int)
    assert gpu["sm_count"] > 0
    if gpu["vendor"] == "nvidia":
        assert re.fullmatch(r"\d+\.\d", gpu["compute_capability"]), gpu["compute_capability"]
    assert isinstance(gpu["nvswitch"], bool)
    assert gpu["sources"]
    assert all(source.startswith("https://") for source in gpu["sources"])


def test_only_hgx_and_dgx_sxm_boards_have_nvswitch() -> None:
    assert {gpu["slug"] for gpu in GPUS if gpu["nvswitch"]} == NVSWITCH


@pytest.mark.parametrize(
    ("slug", "compute_capability", "sm_count"),
    [
        ("nvidia-t4-16gb", "7.5", 40),
        ("nvidia-a100-sxm-80gb", "8.0", 108),
        ("nvidia-rtx-3090-24gb", "8.6", 82),
        ("nvidia-l40s-48gb", "8.9", 142),
        ("nvidia-h100-pcie-80gb", "9.0", 114),
        ("nvidia-h20-141gb", "9.0", 78),
        ("nvidia-b200-sxm-180gb", "10.0", 148),
        ("nvidia-b300-sxm-288gb", "10.3", 148),
        ("nvidia-rtx-5090-32gb", "12.0", 170),
        ("amd-mi250x-64gb", None, 110),
    ],
    ids=lambda value: str(value),
)
def test_datasheet_sm_counts_and_compute_capabilities(slug: str, compute_capability: str | None, sm_count: int) -> None:
    assert (BY_SLUG[slug]["compute_capability"], BY_SLUG[slug]["sm_count"]) == (compute_capability, sm_count)


def test_catalog_load_stores_the_cuda_fields_in_bytes(db: None) -> None:
    # when
    catalog_load()
    # then: 81,090 MiB × 1,048,576 = 85,029,027,840 bytes
    h100 = Gpu.objects.get(slug="nvidia-h100-sxm-80gb")
    assert (h100.cuda_total_bytes, h100.sm_count, h100.compute_capability, h100.nvswitch) == (
        85_029_027_840,
        132,
        "9.0",
        True,
    )
    mi300x = Gpu.objects.get(slug="amd-mi300x-192gb")
    assert (mi300x.cuda_total_bytes, mi300x.sm_count, mi300x.compute_capability, mi300x.nvswitch) == (
        196_592 * MIB,
        304,
        "",
        False,
    )
    assert Gpu.objects.count() == 36
    assert Gpu.objects.filter(cuda_total_bytes__isnull=True).count() == 0


def test_gpu_spec_maps_the_cuda_fields(db: None) -> None:
    # given
    catalog_load()
    # when
    l40s = gpu_spec(Gpu.objects.get(slug="nvidia-l40s-48gb"))
    b300 = gpu_spec(Gpu.objects.get(slug="nvidia-b300-sxm-288gb"))
    mi250x = gpu_spec(Gpu.objects.get(slug="amd-mi250x-64gb"))
    # then
    assert (l40s.memory_bytes, l40s.cuda_total_bytes, l40s.sm_count, l40s.compute_capability, l40s.nvswitch) == (
        46_068 * MIB,
        45_589 * MIB,
        142,
        (8, 9),
        False,
    )
    assert l40s.cuda_visible_bytes == 45_589 * MIB
    assert (b300.compute_capability, b300.nvswitch, b300.cuda_total_bytes) == ((10, 3), True, 274_113 * MIB)
    assert (mi250x.compute_capability, mi250x.cuda_visible_bytes, mi250x.mig) == (None, 65_520 * MIB, False)


def test_gpu_spec_of_a_row_without_cuda_figures_falls_back_to_the_reservation(db: None) -> None:
    # given: a GPU added by hand, with no CUDA total, SM count or compute capability
    gpu = Gpu.objects.create(
        slug="nvidia-custom-24gb",
        vendor="nvidia",
        name="Custom",
        marketed_memory_gb=24,
        nvidia_smi_memory_bytes=24_576 * MIB,
        memory_bandwidth_bytes_per_s=10**12,
    )
    # when
    spec = gpu_spec(gpu)
    # then: 24,576 MiB less 0.45 GiB (483,183,820 bytes)
    assert (spec.cuda_total_bytes, spec.sm_count, spec.compute_capability, spec.nvswitch) == (None, None, None, False)
    assert spec.cuda_visible_bytes == 24_576 * MIB - 483_183_820
    assert isinstance(spec, GpuSpec)


def test_gpu_list_api_shows_the_cuda_fields(catalog: None, api_client) -> None:
    # when
    rows = {row["slug"]: row for row in api_client.get("/api/v1/gpus/").json()["results"]}
    # then
    t4 = rows["nvidia-t4-16gb"]
    assert (t4["cuda_total_bytes"], t4["sm_count"], t4["compute_capability"], t4["nvswitch"]) == (
        15_095 * MIB,
        40,
        "7.5",
        False,
    )
    assert rows["nvidia-h200-sxm-141gb"]["nvswitch"] is True
    assert len(rows) == 36

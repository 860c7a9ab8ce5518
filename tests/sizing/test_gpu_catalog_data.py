"""Structure checks for the GPU catalog data file sizing/catalog_data/gpus.json.

Plain pytest functions: no Django settings or database are needed.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

GPUS_JSON = Path(__file__).resolve().parents[2] / "sizing" / "catalog_data" / "gpus.json"

REQUIRED_SLUGS = {
    "nvidia-a100-sxm-40gb",
    "nvidia-a100-sxm-80gb",
    "nvidia-a100-pcie-80gb",
    "nvidia-h100-sxm-80gb",
    "nvidia-h100-pcie-80gb",
    "nvidia-h100-nvl-94gb",
    "nvidia-h200-sxm-141gb",
    "nvidia-h20-96gb",
    "nvidia-l40s-48gb",
    "nvidia-l20-48gb",
    "nvidia-l4-24gb",
    "nvidia-a10-24gb",
    "nvidia-a800-sxm-80gb",
    "nvidia-rtx-4090-24gb",
    "nvidia-rtx-3090-24gb",
    "nvidia-rtx-a6000-48gb",
    "nvidia-t4-16gb",
    "nvidia-v100-sxm-32gb",
    "amd-mi300x-192gb",
}

EXPECTED_KEYS = {
    "slug",
    "vendor",
    "name",
    "architecture",
    "form_factor",
    "marketed_memory_gb",
    "memory_type",
    "nvidia_smi_memory_mib",
    "cuda_total_mib",
    "sm_count",
    "compute_capability",
    "nvswitch",
    "memory_bandwidth_gb_s",
    "tflops_dense",
    "interconnect",
    "pcie_generation",
    "tdp_w",
    "price_per_hour_usd",
    "sources",
    "notes",
}

SLUG_RE = re.compile(r"^(nvidia|amd)-[a-z0-9-]+-\d+gb$")
DTYPES = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}
INTERCONNECT_KINDS = {"nvlink", "pcie", "infinity_fabric"}
MIB_PER_GIB = 2**30 / 2**20


def _load():
    with GPUS_JSON.open(encoding="utf-8") as fh:
        return json.load(fh)


GPUS = _load()


def _ids(gpus):
    return [g.get("slug", "?") for g in gpus]


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def test_file_is_a_non_empty_list_of_objects():
    assert isinstance(GPUS, list)
    assert GPUS
    assert all(isinstance(g, dict) for g in GPUS)


def test_every_required_slug_present_exactly_once():
    counts = Counter(g["slug"] for g in GPUS)
    duplicates = sorted(slug for slug, n in counts.items() if n > 1)
    assert not duplicates, f"duplicate slugs: {duplicates}"
    missing = sorted(REQUIRED_SLUGS - counts.keys())
    assert not missing, f"missing slugs: {missing}"


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_entry_has_exactly_the_schema_keys(gpu):
    assert set(gpu) == EXPECTED_KEYS


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_slug_format_and_vendor(gpu):
    assert SLUG_RE.match(gpu["slug"]), gpu["slug"]
    assert gpu["vendor"] in {"nvidia", "amd"}
    assert gpu["slug"].startswith(gpu["vendor"] + "-")
    assert gpu["slug"].endswith(f"-{gpu['marketed_memory_gb']}gb")


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_text_fields_are_non_empty_strings(gpu):
    for key in ("name", "architecture", "form_factor", "memory_type", "notes"):
        assert isinstance(gpu[key], str), key
        assert gpu[key].strip(), key


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_every_numeric_figure_is_positive(gpu):
    scalars = [
        "marketed_memory_gb",
        "memory_bandwidth_gb_s",
        "pcie_generation",
        "tdp_w",
        "sm_count",
    ]
    for key in scalars:
        assert _is_number(gpu[key]), key
        assert gpu[key] > 0, key
    # null where the card has no public rental price (consumer cards, HPC-only parts)
    if gpu["price_per_hour_usd"] is not None:
        assert _is_number(gpu["price_per_hour_usd"])
        assert gpu["price_per_hour_usd"] > 0
    if gpu["nvidia_smi_memory_mib"] is not None:
        assert isinstance(gpu["nvidia_smi_memory_mib"], int)
        assert gpu["nvidia_smi_memory_mib"] > 0
    for key in ("generation", "bandwidth_gb_s"):
        assert _is_number(gpu["interconnect"][key]), key
        assert gpu["interconnect"][key] > 0, key
    tflops = gpu["tflops_dense"]
    assert tflops, "tflops_dense must not be empty"
    for dtype, value in tflops.items():
        assert _is_number(value), dtype
        assert value > 0, dtype


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_tflops_keys_are_known_dtypes(gpu):
    assert set(gpu["tflops_dense"]) <= DTYPES
    assert "fp32" in gpu["tflops_dense"]


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_bf16_not_above_fp8(gpu):
    tflops = gpu["tflops_dense"]
    if "bf16" in tflops and "fp8" in tflops:
        assert tflops["bf16"] <= tflops["fp8"]


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_interconnect_shape(gpu):
    interconnect = gpu["interconnect"]
    assert set(interconnect) == {"kind", "generation", "bandwidth_gb_s"}
    assert interconnect["kind"] in INTERCONNECT_KINDS
    if interconnect["kind"] == "pcie":
        assert interconnect["generation"] == gpu["pcie_generation"]


MEASURED = [gpu for gpu in GPUS if gpu["nvidia_smi_memory_mib"] is not None]


def test_every_catalog_gpu_has_its_driver_reported_memory():
    # estimates use the driver's figure; a row without one falls back to the datasheet's decimal GB
    assert [gpu["slug"] for gpu in GPUS if gpu["nvidia_smi_memory_mib"] is None] == []


@pytest.mark.parametrize("gpu", MEASURED, ids=_ids(MEASURED))
def test_nvidia_smi_memory_is_sane(gpu):
    """nvidia-smi / rocm-smi total must be near the marketed size.

    Vendors' "80 GB", "141 GB", "192 GB" are in practice binary (GiB-sized): nvidia-smi reports
    81920 MiB for an A100 80GB and 81559 MiB for an H100 80GB, i.e. ~1.07x the decimal 80e9 bytes.
    So the band is 0.85-1.05 x marketed_memory_gb x 2^30 / 2^20 MiB, not x 10^9 / 2^20.
    """
    mib = gpu["nvidia_smi_memory_mib"]
    nominal_mib = gpu["marketed_memory_gb"] * MIB_PER_GIB
    assert 0.85 * nominal_mib <= mib <= 1.05 * nominal_mib


@pytest.mark.parametrize("gpu", GPUS, ids=_ids(GPUS))
def test_has_https_source(gpu):
    sources = gpu["sources"]
    assert isinstance(sources, list)
    assert all(isinstance(s, str) for s in sources)
    assert any(s.startswith("https://") for s in sources)

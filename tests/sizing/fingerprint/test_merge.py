"""Merging pieces of one machine into a fingerprint, and the parse findings."""

from __future__ import annotations

from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.merge import fingerprint_merge
from tests.sizing.fingerprint.fixture_files import fixture_text


def _codes(fingerprint):
    return [(finding["code"], finding.get("extra", {}).get("gpu_index")) for finding in fingerprint["findings"]]


def test_table_topology_and_versions_merge_into_one_fingerprint():
    # given the table, the topology, nvcc and the kernel module version of one 2-GPU machine
    pieces = [
        parse_any(fixture_text(name))
        for name in ("table_2xa100_pcie_80col.txt", "topo_2xl4_pcie_spaces.txt", "nvcc_12_4.txt")
    ]

    # when
    fingerprint = fingerprint_merge(pieces, names=["table.txt", "topo.txt", "nvcc.txt"])

    # then
    assert fingerprint["gpu_count"] == 2
    assert [(g["index"], g["name"], g["memory_total_bytes"]) for g in fingerprint["gpus"]] == [
        (0, "NVIDIA A100 80G", 84_928_364_544),
        (1, "NVIDIA A100 80G", 84_928_364_544),
    ]
    assert (fingerprint["driver_version"], fingerprint["cuda_version"], fingerprint["cuda_toolkit_version"]) == (
        "470.82.01",
        "11.4",
        "12.4.131",
    )
    assert fingerprint["topology"]["nvlink_pairs"] == []
    assert fingerprint["topology"]["connections"] == [{"a": 0, "b": 1, "kind": "PHB"}]
    assert fingerprint["pieces"] == [
        {"name": "table.txt", "kind": "nvidia_smi_table", "problems": []},
        {"name": "topo.txt", "kind": "nvidia_smi_topo", "problems": []},
        {"name": "nvcc.txt", "kind": "nvcc_version", "problems": []},
    ]
    # 20480 MiB in use on GPU 1 is above the 256 MiB an idle GPU shows
    assert _codes(fingerprint) == [("gpu_name_truncated", 0), ("memory_in_use", 1), ("gpu_name_truncated", 1)]


def test_full_name_from_q_replaces_the_tables_cut_name_by_bus_id():
    # given a table and a -q of the same GPU (bus ids written differently)
    table = parse_any(fixture_text("table_2xa100_pcie_80col.txt").replace("00000000:17:00.0", "00000000:41:00.0"))
    q_text = parse_any(fixture_text("q_l40s.txt"))

    # when
    fingerprint = fingerprint_merge([table, q_text])

    # then
    gpu = fingerprint["gpus"][0]
    assert (gpu["name"], gpu["name_truncated"], gpu["uuid"]) == (
        "NVIDIA L40S",
        False,
        "GPU-4b1c7e2a-90d3-4f11-8a6e-1d2c3b4a5f60",
    )
    assert len(fingerprint["gpus"]) == 2


def test_findings_mig_and_ecc_off():
    # given the MIG-enabled A100 with ECC turned off
    text = fixture_text("xml_a100_mig.xml").replace("<current_ecc>Enabled", "<current_ecc>Disabled")

    # when
    fingerprint = fingerprint_merge([parse_any(text)])

    # then
    assert _codes(fingerprint) == [("mig_enabled", 0), ("ecc_off", 0)]
    assert fingerprint["findings"][0]["message"] == (
        "GPU 0 (NVIDIA A100-SXM4-80GB): MIG is enabled; a model sees only the memory of its MIG instance"
    )


def test_finding_messages_for_a_slow_link():
    # given the L40S at Gen1 x16 of Gen4 x16
    piece = parse_any(fixture_text("q_l40s.txt"))

    # when
    fingerprint = fingerprint_merge([piece])

    # then
    assert fingerprint["findings"] == [
        {
            "code": "pcie_link_below_max",
            "severity": "info",
            "message": "GPU 0 (NVIDIA L40S): PCIe link at Gen1 x16, the GPU supports Gen4 x16; idle GPUs lower the "
            "generation to save power, check again under load",
            "extra": {
                "gpu_index": 0,
                "gpu_name": "NVIDIA L40S",
                "generation": 1,
                "width": 16,
                "generation_max": 4,
                "width_max": 16,
                "width_low": False,
            },
        }
    ]


def test_ecc_off_and_narrow_link_from_csv():
    # given an H100 at x8 of x16 and an L4 with ECC off
    csv_h100 = parse_any(fixture_text("csv_units_repeated_header.csv"))

    # when
    fingerprint = fingerprint_merge([csv_h100])

    # then GPU 0 holds 61440 MiB in its last sample; GPU 1 runs at x8
    assert _codes(fingerprint) == [("memory_in_use", 0), ("pcie_link_below_max", 1)]
    assert fingerprint["findings"][1]["severity"] == "warning"


def test_unreadable_piece_and_driver_mismatch():
    # given a benchmark result, a CSV of driver 550.90.07 and a loaded kernel module 550.54.15
    pieces = [
        parse_any(fixture_text("bench_serve_result.json")),
        parse_any(fixture_text("csv_nounits.csv")),
        parse_any(fixture_text("proc_version_open.txt")),
    ]

    # when
    fingerprint = fingerprint_merge(pieces, names=["a.json", "b.csv", "c.txt"])

    # then
    assert [(f["code"], f["severity"], f["message"]) for f in fingerprint["findings"]] == [
        (
            "unreadable_piece",
            "warning",
            "a.json: nothing read (this looks like a vllm bench serve result, not an nvidia-smi output)",
        ),
        (
            "driver_library_mismatch",
            "error",
            "kernel module 550.54.15 is loaded but nvidia-smi reports driver 550.90.07: reboot (or reload the module) "
            "before measuring",
        ),
    ]
    assert (fingerprint["driver_version"], fingerprint["kernel_module_version"]) == ("550.90.07", "550.54.15")

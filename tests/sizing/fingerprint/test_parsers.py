"""Each parser on its own format: exact facts from the fixtures written for these tests."""

from __future__ import annotations

from sizing.fingerprint.parsers import (
    GpuFacts,
    parse_cuda_version_json,
    parse_cuda_version_txt,
    parse_nvcc_version,
    parse_nvidia_smi_csv,
    parse_nvidia_smi_q,
    parse_nvidia_smi_table,
    parse_nvidia_smi_topo,
    parse_nvidia_smi_xml,
    parse_proc_driver_version,
    parse_rocm_smi_json,
    parse_rocm_smi_text,
)
from tests.sizing.fingerprint.fixture_files import fixture_text

MIB = 1024 * 1024


def test_q_text_l40s_reads_every_fact():
    # given an `nvidia-smi -q` of one idle L40S
    text = fixture_text("q_l40s.txt")

    # when
    facts = parse_nvidia_smi_q(text)

    # then 46068 MiB × 1,048,576 = 48,305,799,168 bytes; the idle link has dropped to Gen1
    assert facts.driver_version == "550.54.15"
    assert facts.cuda_version == "12.4"
    assert facts.attached_gpus == 1
    assert facts.problems == ()
    assert facts.gpus == (
        GpuFacts(
            index=0,
            name="NVIDIA L40S",
            memory_total_bytes=48_305_799_168,
            memory_used_bytes=3 * MIB,
            memory_reserved_bytes=585 * MIB,
            processes_memory_bytes=0,
            pcie_generation_current=1,
            pcie_generation_max=4,
            pcie_width_current=16,
            pcie_width_max=16,
            mig_mode=None,
            ecc_mode="enabled",
            persistence_mode="enabled",
            driver_model=None,
            virtualization_mode=None,
            bus_id="00000000:41:00.0",
            uuid="GPU-4b1c7e2a-90d3-4f11-8a6e-1d2c3b4a5f60",
            serial="1000000000001",
        ),
    )


def test_q_text_filtered_to_one_of_four_gpus_says_so():
    # given `nvidia-smi -i 0 -q` on a host with 4 GPUs and no CUDA library
    text = fixture_text("q_l40s.txt").replace(
        "Attached GPUs                             : 1", "Attached GPUs                             : 4"
    )
    text = text.replace(
        "CUDA Version                              : 12.4", "CUDA Version                              : Not Found"
    )

    # when
    facts = parse_nvidia_smi_q(text)

    # then
    assert facts.cuda_version is None
    assert facts.problems == (
        "lists 1 of 4 attached GPUs (filtered with -i?): the others are unknown; the positions in this output may "
        "not be the GPU indices",
        "CUDA Version is 'Not Found' (a vGPU host or a driver without the CUDA library)",
    )


def test_q_text_sums_the_memory_of_listed_processes():
    # given the L40S running two processes (the -q layout of 470+ drivers)
    processes = """    Processes
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 2231
            Type                          : C
            Name                          : /usr/bin/python3
            Used GPU Memory               : 38912 MiB
        GPU instance ID                   : N/A
        Compute instance ID               : N/A
        Process ID                        : 2290
            Type                          : G
            Name                          : /usr/lib/xorg/Xorg
            Used GPU Memory               : 4 MiB
"""
    text = fixture_text("q_l40s.txt").replace("    Processes                             : None\n", processes)

    # when
    facts = parse_nvidia_smi_q(text)

    # then 38912 + 4 = 38916 MiB
    assert facts.gpus[0].processes_memory_bytes == 38916 * MIB


def test_q_text_with_the_second_gpu_cut_short_says_which():
    # given two GPU sections, the second cut off before its memory section
    one = fixture_text("q_l40s.txt")
    second = one[one.index("GPU 00000000:41:00.0") : one.index("    Fan Speed")].replace("41:00.0", "C1:00.0")
    text = (
        one.replace("Attached GPUs                             : 1", "Attached GPUs                             : 2")
        + second
    )

    # when
    facts = parse_nvidia_smi_q(text)

    # then
    assert [gpu.bus_id for gpu in facts.gpus] == ["00000000:41:00.0", "00000000:C1:00.0"]
    assert [gpu.memory_total_bytes for gpu in facts.gpus] == [48_305_799_168, None]
    assert facts.problems == ("GPU 1: no 'FB Memory Usage' section (truncated paste?)",)


def test_xml_with_mig_enabled():
    # given `nvidia-smi -q -x` of an A100 SXM4 80GB in MIG mode (with nvidia-smi's own DOCTYPE line)
    text = fixture_text("xml_a100_mig.xml")

    # when
    facts = parse_nvidia_smi_xml(text)

    # then the GPU's memory, not the MIG instance's: 81920 MiB × 1,048,576 = 85,899,345,920 bytes
    assert (facts.driver_version, facts.cuda_version, facts.attached_gpus) == ("535.129.03", "12.2", 1)
    assert facts.problems == ()
    gpu = facts.gpus[0]
    assert gpu.name == "NVIDIA A100-SXM4-80GB"
    assert gpu.memory_total_bytes == 85_899_345_920
    assert gpu.memory_used_bytes == 75 * MIB
    assert gpu.mig_mode == "enabled"
    assert (gpu.pcie_generation_current, gpu.pcie_generation_max, gpu.pcie_width_current, gpu.pcie_width_max) == (
        4,
        4,
        16,
        16,
    )
    assert gpu.bus_id == "00000000:07:00.0"
    assert gpu.uuid == "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"


def test_truncated_xml_is_read_as_far_as_it_goes():
    # given the XML cut right after the GPU's memory section
    text = fixture_text("xml_a100_mig.xml")
    text = text[: text.rindex("</fb_memory_usage>") + len("</fb_memory_usage>") + 1]

    # when
    facts = parse_nvidia_smi_xml(text)

    # then
    assert facts.problems == ("truncated XML: ends inside <gpu>",)
    assert facts.gpus[0].memory_total_bytes == 85_899_345_920
    assert facts.gpus[0].ecc_mode is None


def test_truncated_xml_inside_a_section_names_it():
    # given the XML cut inside <pci>
    text = fixture_text("xml_a100_mig.xml")
    text = text[: text.index("<pci_gpu_link_info>")]

    # when
    facts = parse_nvidia_smi_xml(text)

    # then
    assert facts.problems == ("truncated XML: ends inside <pci> in <gpu>",)
    assert facts.gpus[0].name == "NVIDIA A100-SXM4-80GB"


def test_table_80_columns_two_a100_pcie_without_nvlink():
    # given the 470-era 80-column table with a process on GPU 1
    text = fixture_text("table_2xa100_pcie_80col.txt")

    # when
    facts = parse_nvidia_smi_table(text)

    # then 80994 MiB × 1,048,576 = 84,928,364,544 bytes; the cut name is marked
    assert (facts.driver_version, facts.cuda_version) == ("470.82.01", "11.4")
    assert facts.problems == ()
    assert [(g.index, g.name, g.name_truncated, g.bus_id) for g in facts.gpus] == [
        (0, "NVIDIA A100 80G", True, "00000000:17:00.0"),
        (1, "NVIDIA A100 80G", True, "00000000:CA:00.0"),
    ]
    assert [g.memory_total_bytes for g in facts.gpus] == [84_928_364_544, 84_928_364_544]
    assert [g.memory_used_bytes for g in facts.gpus] == [0, 20480 * MIB]
    assert [g.processes_memory_bytes for g in facts.gpus] == [0, 20477 * MIB]
    assert [(g.mig_mode, g.ecc_mode, g.persistence_mode) for g in facts.gpus] == [
        ("disabled", "enabled", "enabled")
    ] * 2


def test_table_with_processes_right_under_the_gpu_table():
    # given the table with the blank line between the two tables lost in the paste
    text = fixture_text("table_2xa100_pcie_80col.txt").replace(
        "+-------------------------------+----------------------+----------------------+\n\n",
        "+-------------------------------+----------------------+----------------------+\n",
    )

    # when
    facts = parse_nvidia_smi_table(text)

    # then
    assert facts.problems == ()
    assert [g.processes_memory_bytes for g in facts.gpus] == [0, 20477 * MIB]


def test_topo_8xh100_sxm_all_pairs_nv18():
    # given `nvidia-smi topo -m` of an HGX H100 (tab separated, two NICs, a NIC legend)
    text = fixture_text("topo_8xh100_sxm_nv18.txt")

    # when
    facts = parse_nvidia_smi_topo(text)

    # then 8 × 7 / 2 = 28 GPU pairs, each with 18 bonded NVLinks
    topology = facts.topology
    assert facts.problems == ()
    assert topology.devices == ("GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "NIC0", "NIC1")
    assert len(topology.nvlink_pairs) == 28
    assert topology.nvlink_pairs[0] == (0, 1, 18)
    assert {links for _, _, links in topology.nvlink_pairs} == {18}
    assert topology.matrix["GPU0"]["NIC0"] == "PIX"
    assert topology.matrix["GPU5"]["NIC0"] == "SYS"
    assert topology.matrix["GPU3"]["GPU3"] == "X"
    assert topology.cpu_affinity["GPU4"] == "56-111,168-223"
    assert topology.numa_affinity["GPU4"] == "1"
    assert topology.nic_names == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert [gpu.index for gpu in facts.gpus] == list(range(8))


def test_topo_with_tabs_expanded_and_ansi_underline():
    # given the two-GPU PCIe matrix with spaces, and the header underlined by a terminal
    text = fixture_text("topo_2xl4_pcie_spaces.txt").replace("        GPU0", "\x1b[4m        GPU0", 1)

    # when
    facts = parse_nvidia_smi_topo(text)

    # then
    assert facts.problems == ()
    assert facts.topology.gpu_connections == ((0, 1, "PHB"),)
    assert facts.topology.nvlink_pairs == ()


def test_topo_truncated_paste_names_the_missing_rows():
    # given the H100 matrix cut after GPU5's row
    lines = fixture_text("topo_8xh100_sxm_nv18.txt").split("\n")

    # when
    facts = parse_nvidia_smi_topo("\n".join(lines[:7]))

    # then
    assert facts.problems == ("no row for GPU6, GPU7, NIC0, NIC1 (truncated paste?)",)
    # the rows of GPU0-GPU5 still give their links to GPU6 and GPU7: 28 pairs less GPU6-GPU7
    assert len(facts.topology.nvlink_pairs) == 27
    assert (6, 7, 18) not in facts.topology.nvlink_pairs


def test_csv_with_units_and_repeated_headers_keeps_each_gpus_last_sample():
    # given two samples of two H100s, the header repeated before each
    text = fixture_text("csv_units_repeated_header.csv")

    # when
    facts = parse_nvidia_smi_csv(text)

    # then 81559 MiB × 1,048,576 = 85,520,809,984 bytes
    assert facts.samples == 4
    assert facts.problems == ("time series of 4 samples for 2 GPU(s): facts from the last sample",)
    assert [g.memory_total_bytes for g in facts.gpus] == [85_520_809_984, 85_520_809_984]
    assert [g.memory_used_bytes for g in facts.gpus] == [61440 * MIB, 0]
    assert [(g.pcie_width_current, g.pcie_width_max) for g in facts.gpus] == [(16, 16), (8, 16)]
    assert [g.bus_id for g in facts.gpus] == ["00000000:18:00.0", "00000000:2A:00.0"]


def test_csv_nounits_reads_bare_numbers_as_mib():
    # given --format=csv,nounits (the header keeps its [MiB])
    text = fixture_text("csv_nounits.csv")

    # when
    facts = parse_nvidia_smi_csv(text)

    # then 23034 MiB × 1,048,576 = 24,152,899,584 bytes
    assert facts.driver_version == "550.90.07"
    assert facts.gpus == (
        GpuFacts(
            index=0,
            name="NVIDIA L4",
            memory_total_bytes=24_152_899_584,
            memory_used_bytes=0,
            ecc_mode="enabled",
            persistence_mode="enabled",
        ),
    )
    assert facts.problems == ()


def test_csv_without_header_is_a_problem_not_a_guess():
    # given --format=csv,noheader
    text = fixture_text("csv_noheader.csv")

    # when
    facts = parse_nvidia_smi_csv(text)

    # then
    assert facts.gpus == ()
    assert facts.problems == (
        "CSV without a header line (--format=csv,noheader): the columns are unknown; run the "
        "query again without noheader",
    )


def test_cuda_toolkit_versions():
    # given version.json, version.txt and nvcc --version
    # when
    versions = [
        parse_cuda_version_json(fixture_text("version.json")).cuda_toolkit_version,
        parse_cuda_version_txt(fixture_text("version.txt")).cuda_toolkit_version,
        parse_nvcc_version(fixture_text("nvcc_12_4.txt")).cuda_toolkit_version,
    ]

    # then
    assert versions == ["12.4.1", "10.2.89", "12.4.131"]


def test_proc_version_of_the_open_kernel_module():
    # given /proc/driver/nvidia/version of the open kernel module
    text = fixture_text("proc_version_open.txt")

    # when
    facts = parse_proc_driver_version(text)

    # then
    assert facts.kernel_module_version == "550.54.15"
    assert facts.problems == ()


def test_rocm_smi_json_bytes_and_pcie_rate():
    # given `rocm-smi --json` of one MI210 (VRAM already in bytes; the PCIe rate 16 GT/s is Gen4)
    text = (
        '{"card0": {"Card series": "AMD Instinct MI210", "VRAM Total Memory (B)": "68702699520", '
        '"VRAM Total Used Memory (B)": "10960896", "PCI Bus": "0000:C1:00.0", "pcie clock level": '
        '"1 (16.0GT/s x16)"}, "system": {"Driver version": "6.2.4"}}'
    )

    # when
    facts = parse_rocm_smi_json(text)

    # then
    assert facts.driver_version == "6.2.4"
    assert facts.gpus == (
        GpuFacts(
            index=0,
            name="AMD Instinct MI210",
            vendor="amd",
            memory_total_bytes=68_702_699_520,
            memory_used_bytes=10_960_896,
            pcie_generation_current=4,
            pcie_width_current=16,
            bus_id="0000:C1:00.0",
        ),
    )


def test_rocm_smi_text_counts_gpus_and_asks_for_sizes():
    # given `rocm-smi --showuse` of two GPUs
    text = (
        "======================= ROCm System Management Interface =======================\n"
        "GPU[0]          : GPU use (%): 3\nGPU[1]          : GPU use (%): 0\n"
        "============================= End of ROCm SMI Log ==============================\n"
    )

    # when
    facts = parse_rocm_smi_text(text)

    # then
    assert [gpu.index for gpu in facts.gpus] == [0, 1]
    assert facts.problems == (
        "this rocm-smi view has no GPU names or VRAM sizes: run rocm-smi --showproductname --showmeminfo vram --json",
    )

"""The plan against the chosen machines (sizing.fingerprint.plan_check): each rule on the real scenario machines
(their nvidia-smi -q -x and topo -m, read by fingerprint_from_texts) and on hand-built machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing.fingerprint.plan_check import plan_contradictions
from sizing.services.fingerprints import fingerprint_from_texts

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
MIB = 2**20
# the catalog's cards (sizing/catalog_data/gpus.json: name, form factor, nvidia_smi_memory_mib)
H100_SXM = {"gpu_name": "NVIDIA H100 SXM5 80GB", "gpu_form_factor": "SXM5", "gpu_memory_bytes": 81_559 * MIB}
H800_SXM = {"gpu_name": "NVIDIA H800 SXM5 80GB", "gpu_form_factor": "SXM5", "gpu_memory_bytes": 81_559 * MIB}
A100_SXM = {"gpu_name": "NVIDIA A100 SXM4 80GB", "gpu_form_factor": "SXM4", "gpu_memory_bytes": 81_920 * MIB}
L40S = {"gpu_name": "NVIDIA L40S 48GB", "gpu_form_factor": "PCIe", "gpu_memory_bytes": 46_068 * MIB}


def scenario(name: str) -> dict:
    """A scenario machine as its pasted nvidia-smi -q -x and topo -m read."""
    folder = SCENARIOS / name
    return fingerprint_from_texts(
        texts=[(folder / "nvidia_smi_q_x.xml").read_text(), (folder / "topo.txt").read_text()]
    )


def machine(
    host: str,
    *,
    name: str = "NVIDIA H100 80GB HBM3",
    count: int = 1,
    memory_mib: int = 81_559,
    nvlink: bool = False,
    topology: bool = True,
    **gpu: object,
) -> dict:
    """A hand-built machine of `count` equal GPUs, all pairs joined by NV18 (`nvlink`) or SYS."""
    gpus = [{"index": i, "name": name, "memory_total_bytes": memory_mib * MIB, **gpu} for i in range(count)]
    pairs = [(a, b) for a in range(count) for b in range(a + 1, count)]
    return {
        "host": host,
        "facts": {
            "gpus": gpus,
            "gpu_count": count,
            "topology": {
                "connections": [{"a": a, "b": b, "kind": "NV18" if nvlink else "SYS"} for a, b in pairs]
                if topology
                else [],
                "nvlink_pairs": [{"a": a, "b": b, "links": 18} for a, b in pairs] if nvlink and topology else [],
            },
        },
    }


def _codes(found: list[dict]) -> list[tuple[str, str]]:
    return [(item["code"], item["host"]) for item in found]


# --- the real scenarios --------------------------------------------------------------------------------------------


def test_the_hgx_h100_matches_an_8_gpu_tp_8_h100_plan():
    # given 8× H100 80GB HBM3 on NVSwitch (NV18 between all 28 pairs), 81,559 MiB each
    machines = [{"host": "hgx-h100-01", "facts": scenario("h100_sxm_8x_nvswitch")}]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 8, "tp": 8}, machines)

    # then nothing contradicts the plan
    assert found == []


def test_a_plan_claiming_h800_on_the_hgx_h100_is_a_model_contradiction():
    # given the H100 board, a plan sold as 8× H800
    machines = [{"host": "hgx-h100-01", "facts": scenario("h100_sxm_8x_nvswitch")}]

    # when
    found = plan_contradictions({**H800_SXM, "gpu_count": 8, "tp": 8}, machines)

    # then the catalog's "H800" is not nvidia-smi's "H100": one contradiction, naming both
    assert found == [
        {
            "code": "gpu_model_differs",
            "host": "hgx-h100-01",
            "params": {"planned": "NVIDIA H800 SXM5 80GB", "found": "NVIDIA H100 80GB HBM3"},
        }
    ]


def test_a_plan_on_an_l4_found_running_on_the_hgx_h100_is_a_model_contradiction():
    # given the README demo's plan (1× L4 24GB: a one-digit designation) and the H100 board chosen for it
    machines = [{"host": "hgx-h100-01", "facts": scenario("h100_sxm_8x_nvswitch")}]
    l4 = {"gpu_name": "NVIDIA L4 24GB", "gpu_form_factor": "PCIe", "gpu_memory_bytes": 22_491 * MIB}

    # when
    found = plan_contradictions({**l4, "gpu_count": 1, "tp": 1}, machines)

    # then "L4" is not "H100" (the memory kind "HBM3" is no designation)
    assert _codes(found) == [("gpu_model_differs", "hgx-h100-01")]


@pytest.mark.parametrize(
    ("name", "tokens"),
    [
        ("NVIDIA L4", {"L4"}),
        ("Tesla T4", {"T4"}),
        ("NVIDIA H100 80GB HBM3", {"H100"}),
        ("NVIDIA H800 SXM5 80GB", {"H800"}),
        ("NVIDIA A100-SXM4-80GB", {"A100"}),
        ("NVIDIA GeForce RTX 4090", {"RTX4090"}),
    ],
)
def test_model_designations_in_gpu_names(name: str, tokens: set[str]):
    from sizing.fingerprint.checks import model_tokens

    assert model_tokens(name) == tokens


def test_the_mig_box_is_a_slice_where_the_plan_assumes_whole_cards():
    # given 1× A100-SXM4-80GB with MIG enabled, two 3g.40gb slices of 40,192 MiB
    machines = [{"host": "a2-ultragpu-1g-mig", "facts": scenario("a100_sxm_mig")}]

    # when
    found = plan_contradictions({**A100_SXM, "gpu_count": 1, "tp": 1}, machines)

    # then MIG is the only contradiction (the card's own 81,920 MiB is the catalog's)
    assert found == [
        {
            "code": "mig_slices",
            "host": "a2-ultragpu-1g-mig",
            "params": {"gpus": "0", "slices": 2, "slice_bytes": 40_192 * MIB},
        }
    ]


def test_tp_4_across_the_four_pcie_l40s_is_a_link_contradiction():
    # given 4× L40S joined by NODE (one socket) and SYS (across sockets) paths, no NVLink
    machines = [{"host": "l40s-node-03", "facts": scenario("l40s_pcie_4x")}]

    # when
    found = plan_contradictions({**L40S, "gpu_count": 4, "tp": 4}, machines)

    # then the all-reduce of TP 4 crosses PCIe: the largest NVLink group is one GPU
    assert found == [
        {
            "code": "tp_over_pcie",
            "host": "l40s-node-03",
            "params": {"tp": 4, "largest_nvlink_group": 1, "paths": "NODE, SYS"},
        }
    ]


def test_tp_1_replicas_on_the_pcie_l40s_need_no_nvlink():
    # given the same machine, a plan of 4 replicas of TP 1
    machines = [{"host": "l40s-node-03", "facts": scenario("l40s_pcie_4x")}]

    # when / then
    assert plan_contradictions({**L40S, "gpu_count": 4, "tp": 1}, machines) == []


def test_an_h100_tp_8_plan_on_the_pcie_l40s_contradicts_model_count_link_and_memory():
    # given the 4× L40S (46,068 MiB each) as the machine of an 8× H100 SXM5 TP 8 plan (81,559 MiB each)
    machines = [{"host": "l40s-node-03", "facts": scenario("l40s_pcie_4x")}]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 8, "tp": 8}, machines)

    # then each contradiction once, in the rules' order; the link needs min(TP 8, 4 GPUs) = 4 in one NVLink group
    assert found == [
        {
            "code": "gpu_model_differs",
            "host": "l40s-node-03",
            "params": {"planned": "NVIDIA H100 SXM5 80GB", "found": "NVIDIA L40S"},
        },
        {"code": "gpu_count_short", "host": "l40s-node-03", "params": {"planned": 8, "found": 4}},
        {
            "code": "tp_over_pcie",
            "host": "l40s-node-03",
            "params": {"tp": 8, "largest_nvlink_group": 1, "paths": "NODE, SYS"},
        },
        {
            "code": "gpu_memory_smaller",
            "host": "l40s-node-03",
            "params": {"planned_bytes": 81_559 * MIB, "found_bytes": 46_068 * MIB},
        },
    ]


# --- hand-built machines -------------------------------------------------------------------------------------------


def test_the_laptop_of_the_chinese_report_contradicts_an_a100_plan():
    # given an RTX 3060 Laptop GPU with 6 GiB (6,144 MiB) as the machine of a 1× A100 SXM4 80GB plan
    laptop = machine("laptop", name="NVIDIA GeForce RTX 3060 Laptop GPU", memory_mib=6_144, topology=False)

    # when
    found = plan_contradictions({**A100_SXM, "gpu_count": 1, "tp": 1}, [laptop])

    # then another model, and 6,144 MiB below 81,920 MiB
    assert _codes(found) == [("gpu_model_differs", "laptop"), ("gpu_memory_smaller", "laptop")]
    assert found[1]["params"] == {"planned_bytes": 81_920 * MIB, "found_bytes": 6_144 * MIB}


@pytest.mark.parametrize(
    ("count", "tp", "expected"),
    [
        pytest.param(8, 8, [("gpu_count_short", {"planned": 8, "found": 4})], id="count-8-on-4"),
        pytest.param(None, 8, [("tp_exceeds_gpus", {"tp": 8, "found": 4})], id="no-count-tp-8-on-4"),
        pytest.param(4, 4, [], id="count-4-on-4"),
        pytest.param(None, 4, [], id="no-count-tp-4-on-4"),
    ],
)
def test_gpus_per_server_and_tp_against_the_gpus_measured(count, tp, expected):
    # given 4 H100 joined by NVLink
    machines = [machine("gpu-01", count=4, nvlink=True)]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": count, "tp": tp}, machines)

    # then the plan's count, or its TP when it names no count, larger than 4 is one contradiction
    assert [(item["code"], item["params"]) for item in found] == expected


def test_tp_over_pcie_is_said_only_where_the_topology_was_uploaded():
    # given 8 PCIe GPUs with topo -m, and the same without it
    with_topology = machine("with-topo", count=8)
    without = machine("without-topo", count=8, topology=False)

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 8, "tp": 8}, [with_topology, without])

    # then unknown links are not a contradiction
    assert found == [
        {"code": "tp_over_pcie", "host": "with-topo", "params": {"tp": 8, "largest_nvlink_group": 1, "paths": "SYS"}}
    ]


def test_a_mig_device_listed_without_the_mode_is_a_slice_too():
    # given a GPU whose output lists a MIG device of 19,968 MiB but not the mode
    sliced = machine(
        "mig-01",
        name="NVIDIA A100-SXM4-80GB",
        memory_mib=81_920,
        mig_mode=None,
        mig_devices=[{"index": 0, "memory_total_bytes": 19_968 * MIB}],
    )

    # when
    found = plan_contradictions({**A100_SXM, "gpu_count": 1}, [sliced])

    # then
    assert found == [
        {"code": "mig_slices", "host": "mig-01", "params": {"gpus": "0", "slices": 1, "slice_bytes": 19_968 * MIB}}
    ]


@pytest.mark.parametrize(
    ("memory_mib", "contradicts"),
    [
        pytest.param(81_559, False, id="the-catalog-figure"),
        pytest.param(79_200, False, id="within-3-percent"),  # 81,559 × 0.97 = 79,112.2 MiB
        pytest.param(79_000, True, id="beyond-3-percent"),
        pytest.param(40_960, True, id="a-40gb-card"),
    ],
)
def test_memory_below_the_catalog_card_beyond_3_percent_is_a_contradiction(memory_mib, contradicts):
    # given an H100 reporting memory_mib
    machines = [machine("gpu-01", memory_mib=memory_mib)]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 1}, machines)

    # then
    assert [item["code"] for item in found] == (["gpu_memory_smaller"] if contradicts else [])


@pytest.mark.parametrize(
    ("measured", "expected"),
    [
        pytest.param("NVIDIA H100 PCIe", ["gpu_variant_differs"], id="pcie-for-sxm"),
        pytest.param("NVIDIA H100 NVL", ["gpu_variant_differs"], id="nvl-for-sxm"),
        pytest.param("NVIDIA H100 80GB HBM3", [], id="the-sxm-name-says-no-form-factor"),
    ],
)
def test_the_same_model_in_another_form_factor(measured, expected):
    # given an H100 SXM5 plan and an H100 whose nvidia-smi name says its form factor (or not)
    machines = [machine("gpu-01", name=measured)]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 1}, machines)

    # then
    assert [item["code"] for item in found] == expected


def test_a_plan_without_a_gpu_or_count_checks_only_what_it_states():
    # given a plan naming only TP 2, and one PCIe machine of 2 GPUs with MIG on
    machines = [machine("gpu-01", count=2, mig_mode="enabled")]

    # when
    found = plan_contradictions({"tp": 2}, machines)

    # then the link and the slices, no model, count or memory
    assert _codes(found) == [("tp_over_pcie", "gpu-01"), ("mig_slices", "gpu-01")]


def test_each_machine_is_checked_in_the_order_given():
    # given two machines, the second short of GPUs
    machines = [machine("b-host", count=8, nvlink=True), machine("a-host", count=4, nvlink=True)]

    # when
    found = plan_contradictions({**H100_SXM, "gpu_count": 8, "tp": 8}, machines)

    # then only the second contradicts
    assert _codes(found) == [("gpu_count_short", "a-host")]


def test_no_machine_no_contradiction():
    assert plan_contradictions({**H100_SXM, "gpu_count": 8, "tp": 8}, []) == []

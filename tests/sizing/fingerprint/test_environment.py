"""What a measured machine means for an estimate and the step model: memory per GPU, memory held by others, and the
TP link (NVLink inside an island, PCIe otherwise, XGMI on AMD) with the figures' sources in words."""

from __future__ import annotations

import copy
import json

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.perf import LINK_DEFAULTS, step_model
from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.environment import MeasuredEnvironment, measured_environment
from sizing.fingerprint.merge import fingerprint_merge
from tests.sizing.fingerprint.fixture_files import fixture_text

MIB = 2**20
GIB = 2**30
H100 = "NVIDIA H100 80GB HBM3"


def _fingerprint(*names: str) -> dict:
    return fingerprint_merge([parse_any(fixture_text(name)) for name in names], names=list(names))


def _eight_h100() -> dict:
    """The 8 × H100 NV18 topology fixture, with the names and memory an nvidia-smi -q would add."""
    fingerprint = _fingerprint("topo_8xh100_sxm_nv18.txt")
    for gpu in fingerprint["gpus"]:
        gpu.update(name=H100, memory_total_bytes=81_559 * MIB, memory_used_bytes=4 * MIB)
    return fingerprint


def _machine(
    gpus: list[dict],
    *,
    nvlink: dict[tuple[int, int], int] | None = None,
    paths: dict[tuple[int, int], str] | None = None,
    **top,
) -> dict:
    """A fingerprint by hand: `nvlink` pair → links (NV#), `paths` pair → PCIe kind; `paths` default to PHB."""
    nvlink = nvlink or {}
    indices = [gpu["index"] for gpu in gpus]
    connections = []
    if paths is not None or nvlink:
        for a in indices:
            for b in indices:
                if a < b:
                    kind = f"NV{nvlink[a, b]}" if (a, b) in nvlink else (paths or {}).get((a, b), "PHB")
                    connections.append({"a": a, "b": b, "kind": kind})
    fingerprint = {
        "gpus": gpus,
        "gpu_count": len(gpus),
        "driver_version": "550.54.15",
        "cuda_version": "12.4",
        "topology": {
            "devices": [f"GPU{i}" for i in indices],
            "matrix": {},
            "nvlink_pairs": [{"a": a, "b": b, "links": n} for (a, b), n in sorted(nvlink.items())],
            "connections": connections,
        },
        "findings": [],
    }
    return {**fingerprint, **top}


def _pcie_gpu(index: int, *, name: str = "NVIDIA L40S", generation_max: int = 4, width: int = 16, **facts) -> dict:
    gpu = {
        "index": index,
        "name": name,
        "memory_total_bytes": 46_068 * MIB,
        "memory_used_bytes": 3 * MIB,
        "pcie_generation_current": 1,
        "pcie_generation_max": generation_max,
        "pcie_width_current": width,
        "pcie_width_max": 16,
    }
    return {**gpu, **facts}


def test_tp4_inside_the_nvswitch_island_of_eight_h100():
    # when
    env = measured_environment(_eight_h100(), tp=4)

    # then: NV18 = 18 links × 25 GB/s per link per direction (900 GB/s bidirectional over 18 links, H100 datasheet)
    assert env.link == "nvlink"
    assert env.link_bytes_per_s == 18 * 25e9
    assert env.tp_group == (0, 1, 2, 3)
    assert env.memory_bytes_per_gpu == 81_559 * MIB
    assert env.gpu_count == 8
    assert env.gpu_name == H100
    assert env.explanation == (
        "memory per GPU: 81,559 MiB, the smallest card as the driver reports it",
        "memory in use: at most 4 MiB on one GPU (GPU 0), idle (an idle GPU shows up to 256 MiB)",
        "TP 4 on GPUs 0-3 inside the NVLink group 0-7: NV18 = 18 links × 25 GB/s (NVLink 4) = 450 GB/s per direction",
    )


def test_tp1_has_no_link():
    env = measured_environment(_eight_h100(), tp=1)

    assert (env.link, env.link_bytes_per_s, env.tp_group) == (None, None, (0,))
    assert env.explanation[-1] == "TP 1: no all-reduce, no link"


def test_the_figures_plug_into_the_step_model():
    # given the measured link of TP 2 on the 8 × H100 machine
    env = measured_environment(_eight_h100(), tp=2)
    arch = architecture_from_config(
        {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
            "torch_dtype": "bfloat16",
        }
    )
    gpu = GpuSpec(
        slug="h100",
        name="H100",
        memory_bytes=env.memory_bytes_per_gpu,
        memory_bandwidth_bytes_per_s=3_350 * 10**9,
        tflops_dense={"bf16": 989},
        interconnect="nvlink",
        interconnect_bytes_per_s=900 * 10**9,
    )

    # when
    model = step_model(
        arch=arch, gpu=gpu, weights="bf16", kv_dtype="auto", tp=2, link=env.link, link_bytes_per_s=env.link_bytes_per_s
    )

    # then: the measured 450 GB/s, not the catalog's 900 / 2 nor LINK_DEFAULTS' 300 GB/s
    assert env.link in LINK_DEFAULTS
    assert model.link_bytes_per_s == 18 * 25e9


def test_blackwell_links_are_twice_as_fast_and_an_unnamed_gpu_has_no_figure():
    named = _eight_h100()
    for gpu in named["gpus"]:
        gpu["name"] = "NVIDIA B200"
    unnamed = _fingerprint("topo_8xh100_sxm_nv18.txt")  # topo -m alone: no GPU names

    b200 = measured_environment(named, tp=8)
    unknown = measured_environment(unnamed, tp=8)

    assert b200.link_bytes_per_s == 18 * 50e9
    assert "18 links × 50 GB/s (NVLink 5) = 900 GB/s per direction" in b200.explanation[-1]
    assert (unknown.link, unknown.link_bytes_per_s, unknown.memory_bytes_per_gpu) == ("nvlink", None, None)
    assert "the model keeps its default" in unknown.explanation[-1]


def test_memory_is_the_smallest_card_and_in_use_the_most_any_process_holds():
    # given three cards, one reporting less memory, and a process listing 20,477 MiB where used says 20,000 MiB
    gpus = [
        _pcie_gpu(0, memory_total_bytes=81_559 * MIB, name=H100),
        _pcie_gpu(1, memory_total_bytes=81_559 * MIB, name=H100),
        _pcie_gpu(
            2,
            memory_total_bytes=80_994 * MIB,
            name="NVIDIA A100 80GB PCIe",
            memory_used_bytes=20_000 * MIB,
            processes_memory_bytes=20_477 * MIB,
        ),
    ]

    # when
    env = measured_environment(_machine(gpus), tp=1)

    # then
    assert env.memory_bytes_per_gpu == 80_994 * MIB
    assert env.memory_used_bytes_max == 20_477 * MIB
    assert env.gpu_name == H100  # the most common name
    assert "memory per GPU: 80,994 MiB, the smallest card as the driver reports it (GPU 2)" in env.explanation
    assert "memory in use: at most 20,477 MiB on one GPU (GPU 2), already held by other processes" in env.explanation


def test_tp_over_pcie_takes_the_max_generation_and_the_narrowest_current_width():
    # given the two L4 behind one host bridge (topology fixture), idle at Gen1, max Gen4; GPU 1 trained at x8
    fingerprint = _fingerprint("topo_2xl4_pcie_spaces.txt")
    fingerprint["gpus"][0].update(_pcie_gpu(0, name="NVIDIA L4", width=16))
    fingerprint["gpus"][1].update(_pcie_gpu(1, name="NVIDIA L4", width=8))

    # when
    env = measured_environment(fingerprint, tp=2)

    # then: Gen4 at 1.969 GB/s per lane × 8 lanes × 0.8
    assert env.link == "pcie"
    assert env.link_bytes_per_s == 1.969e9 * 8 * 0.8
    assert env.tp_group == (0, 1)
    assert env.explanation[-1] == (
        "TP 2 on GPUs 0-1 over PCIe through PHB (no NVLink): Gen4 × 8 lanes × 1.969 GB/s × 0.8 = 12.6 GB/s per "
        "direction, from GPU 1: the max generation (the current one drops at idle) and the current width"
    )


def test_gen4_x16_matches_the_models_pcie_default_within_a_percent():
    env = measured_environment(_machine([_pcie_gpu(0), _pcie_gpu(1)], paths={}), tp=2)

    assert env.link_bytes_per_s == 1.969e9 * 16 * 0.8
    assert env.link_bytes_per_s == pytest.approx(LINK_DEFAULTS["pcie"][0], rel=0.01)  # 25.2 vs 25 GB/s


def test_tp_larger_than_the_nvlink_islands_goes_over_pcie():
    # given four A100 PCIe cards bridged in pairs (NV12: 0-1, 2-3), Gen4 x16 each
    gpus = [_pcie_gpu(i, name="NVIDIA A100 80GB PCIe") for i in range(4)]
    fingerprint = _machine(
        gpus, nvlink={(0, 1): 12, (2, 3): 12}, paths={(0, 2): "SYS", (0, 3): "SYS", (1, 2): "SYS", (1, 3): "SYS"}
    )

    pair = measured_environment(fingerprint, tp=2)
    four = measured_environment(fingerprint, tp=4)

    assert (pair.link, pair.link_bytes_per_s, pair.tp_group) == ("nvlink", 12 * 25e9, (0, 1))
    assert (four.link, four.link_bytes_per_s, four.tp_group) == ("pcie", 1.969e9 * 16 * 0.8, (0, 1, 2, 3))
    assert "through SYS" in four.explanation[-1]
    assert "the largest NVLink group has 2 GPU(s)" in four.explanation[-1]


def test_a_pcie_group_prefers_gpus_behind_the_same_bridge():
    # given four PCIe GPUs: 0-1 and 2-3 share a switch (PIX), the halves meet across sockets (SYS)
    gpus = [_pcie_gpu(i) for i in range(4)]
    fingerprint = _machine(
        gpus, paths={(0, 1): "SYS", (0, 2): "SYS", (0, 3): "PIX", (1, 2): "PIX", (1, 3): "SYS", (2, 3): "SYS"}
    )

    env = measured_environment(fingerprint, tp=2)

    assert env.tp_group == (0, 3)


def test_the_narrowest_pair_of_a_hybrid_mesh_sets_the_figure():
    # given three V100 with unequal bonds: 0-1 NV1, 1-2 NV2, 0-2 NV1
    gpus = [_pcie_gpu(i, name="Tesla V100-SXM2-32GB") for i in range(3)]
    fingerprint = _machine(gpus, nvlink={(0, 1): 1, (1, 2): 2, (0, 2): 1})

    two = measured_environment(fingerprint, tp=2)
    three = measured_environment(fingerprint, tp=3)

    # TP 2 takes the double bond, not the lowest indices
    assert (two.tp_group, two.link_bytes_per_s) == ((1, 2), 2 * 25e9)
    assert (three.tp_group, three.link_bytes_per_s) == ((0, 1, 2), 1 * 25e9)
    assert "NV1 (the narrowest pair, GPU 0 ↔ GPU 1) = 1 links × 25 GB/s (NVLink 2)" in three.explanation[-1]


def test_a_group_where_every_pair_has_its_own_nvlink_comes_first():
    # given four V100 bonded 0-1, 1-2, 2-3, 1-3 (NV2 each): GPUs 1, 2, 3 are all bonded to each other, 0, 1, 2 not
    gpus = [_pcie_gpu(i, name="Tesla V100-SXM2-32GB") for i in range(4)]
    fingerprint = _machine(gpus, nvlink={(0, 1): 2, (1, 2): 2, (2, 3): 2, (1, 3): 2})

    three = measured_environment(fingerprint, tp=3)
    four = measured_environment(fingerprint, tp=4)

    assert (three.tp_group, three.link_bytes_per_s) == ((1, 2, 3), 2 * 25e9)
    assert "NCCL" not in three.explanation[-1]
    assert four.link_bytes_per_s == 2 * 25e9
    assert four.explanation[-1].endswith("; not every pair has its own NVLink (NCCL routes through the others)")


def test_amd_xgmi_is_a_link_without_a_figure():
    # given amd-smi xgmi's view of two MI300X joined by XGMI
    gpus = [
        {"index": i, "name": "AMD Instinct MI300X", "vendor": "amd", "memory_total_bytes": 196_592 * MIB}
        for i in range(2)
    ]
    fingerprint = _machine(gpus, paths={(0, 1): "XGMI"})

    env = measured_environment(fingerprint, tp=2)

    assert (env.link, env.link_bytes_per_s, env.tp_group) == ("xgmi", None, (0, 1))
    assert env.link in LINK_DEFAULTS


def test_without_a_topology_the_link_is_unknown_but_the_pcie_figure_is_said():
    gpus = [_pcie_gpu(0), _pcie_gpu(1)]
    fingerprint = _machine(gpus)  # no topo -m: no connections

    env = measured_environment(fingerprint, tp=2)

    assert (env.link, env.link_bytes_per_s, env.tp_group) == (None, None, (0, 1))
    # 1.969 × 16 × 0.8 = 25.2 GB/s
    assert "over PCIe it would be 25.2 GB/s per direction" in env.explanation[-1]


def test_missing_facts_are_none():
    empty = measured_environment({}, tp=2)
    too_few = measured_environment(_fingerprint("topo_2xl4_pcie_spaces.txt"), tp=4)

    assert empty == MeasuredEnvironment(tp=2, explanation=("no GPUs listed: the TP link is unknown",))
    assert (too_few.gpu_count, too_few.link, too_few.tp_group, too_few.memory_bytes_per_gpu) == (2, None, None, None)
    assert too_few.explanation[-1] == "TP 4 needs 4 GPUs; the fingerprint lists 2: no link"


def test_pcie_facts_missing_keep_the_models_default():
    # given the table (no PCIe facts) and the PHB topology
    env = measured_environment(_fingerprint("table_2xa100_pcie_80col.txt", "topo_2xl4_pcie_spaces.txt"), tp=2)

    assert (env.link, env.link_bytes_per_s) == ("pcie", None)
    assert env.memory_bytes_per_gpu == 80_994 * MIB
    assert env.memory_used_bytes_max == 20_480 * MIB


def test_replicas_lay_out_groups_and_the_slowest_sets_the_link():
    # given eight H100: 0-3 on NVLink, 4-7 without (PCIe Gen5 x16); GPU 7 reports less memory
    gpus = [_pcie_gpu(i, name=H100, generation_max=5, memory_total_bytes=81_559 * MIB) for i in range(8)]
    gpus[7]["memory_total_bytes"] = 80_000 * MIB
    nvlink = {(a, b): 18 for a in range(4) for b in range(a + 1, 4)}
    fingerprint = _machine(gpus, nvlink=nvlink)

    one = measured_environment(fingerprint, tp=4, gpus=4)
    two = measured_environment(fingerprint, tp=4, gpus=8)

    # one replica: NVLink, the memory of GPUs 0-3 only
    assert (one.link, one.link_bytes_per_s, one.tp_groups) == ("nvlink", 18 * 25e9, ((0, 1, 2, 3),))
    assert one.memory_bytes_per_gpu == 81_559 * MIB
    # two replicas: the second over PCIe Gen5 x16 (3.938 GB/s × 16 × 0.8), the slowest
    assert two.tp_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert (two.link, two.link_bytes_per_s, two.tp_group) == ("pcie", 3.938e9 * 16 * 0.8, (4, 5, 6, 7))
    assert two.memory_bytes_per_gpu == 80_000 * MIB
    assert two.explanation[-1].endswith("; the slowest of 2 TP groups")


def test_host_memory_is_the_cgroup_limit_when_lower():
    base = _machine([_pcie_gpu(0)])
    host = {"memory_total_bytes": 512 * GIB, "cgroup_memory_limit_bytes": 64 * GIB, "cgroup_version": 2}
    limited = measured_environment({**base, "host": host})
    unlimited = measured_environment({**base, "host": {**host, "cgroup_memory_limit_bytes": None}})

    assert limited.host_memory_bytes == 64 * GIB
    assert "host memory: 65,536 MiB, the container's cgroup limit" in limited.explanation
    assert unlimited.host_memory_bytes == 512 * GIB
    assert measured_environment(base).host_memory_bytes is None


def test_as_dict_is_json_ready_with_the_documented_keys():
    env = measured_environment(_eight_h100(), tp=2, gpus=4)

    data = env.as_dict()

    assert json.loads(json.dumps(data)) == data
    assert set(data) == {
        "tp",
        "gpu_count",
        "gpu_name",
        "memory_bytes_per_gpu",
        "cuda_total_bytes_per_gpu",
        "mig",
        "memory_used_bytes_max",
        "host_memory_bytes",
        "link",
        "link_bytes_per_s",
        "tp_group",
        "tp_groups",
        "explanation",
    }
    assert data["tp_groups"] == [[0, 1], [2, 3]]
    assert data["tp_group"] == [0, 1]


def test_the_fingerprint_is_not_changed():
    fingerprint = _eight_h100()
    before = copy.deepcopy(fingerprint)

    measured_environment(fingerprint, tp=8, gpus=8)

    assert fingerprint == before


@pytest.mark.parametrize(("tp", "gpus"), [(0, None), (4, 2)])
def test_impossible_arguments_are_refused(tp, gpus):
    with pytest.raises(ValueError, match="must be ≥"):
        measured_environment(_eight_h100(), tp=tp, gpus=gpus)


def test_a_deployment_larger_than_the_machine_keeps_the_memory_of_every_card_here():
    # given: 8 × H100 on this machine, one of them smaller; a deployment of 16 GPUs (two servers)
    fingerprint = _eight_h100()
    fingerprint["gpus"][5]["memory_total_bytes"] = 81_000 * MIB

    # when
    env = measured_environment(fingerprint, tp=8, gpus=16)

    # then: the groups cannot all be laid out here, but the memory per card is still this machine's smallest
    assert env.memory_bytes_per_gpu == 81_000 * MIB
    assert any("need 16 GPUs" in sentence for sentence in env.explanation)

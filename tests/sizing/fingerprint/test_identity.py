"""Which host an upload is a version of (sizing.fingerprint.identity): the identity read from a real machine's
nvidia-smi -q -x (UUIDs, serial numbers) and the probe's host name, the matching rules, names derived from the GPUs
and the merge refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from sizing.fingerprint.identity import (
    HostIdentity,
    KnownHost,
    derived_name,
    host_for,
    identities_match,
    identity_from_facts,
    merge_conflict,
    natural_key,
)
from sizing.services.fingerprints import fingerprint_from_texts

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def scenario(name: str) -> dict:
    return fingerprint_from_texts(texts=[(SCENARIOS / name / "nvidia_smi_q_x.xml").read_text()])


def test_the_identity_of_the_hgx_h100_is_its_eight_gpu_uuids_and_serials():
    # given the HGX H100's nvidia-smi -q -x pasted (no probe file: no host name)
    facts = scenario("h100_sxm_8x_nvswitch")

    # when
    identity = identity_from_facts(facts)

    # then the 8 UUIDs and serial numbers, sorted; no host name
    assert identity.hostname is None
    assert len(identity.gpu_uuids) == 8
    assert identity.gpu_uuids == tuple(sorted(gpu["uuid"] for gpu in facts["gpus"]))
    assert "GPU-9906e30b-5ee2-ea4c-a6ba-7d4f19faf58e" in identity.gpu_uuids
    assert identity.gpu_serials == tuple(sorted(gpu["serial"] for gpu in facts["gpus"]))
    assert "1203407642144" in identity.gpu_serials


@pytest.mark.parametrize(
    ("facts_name", "given", "expected"),
    [
        pytest.param("gpu-a100-07", "", "gpu-a100-07", id="the-probe-file-names-it"),
        pytest.param(None, " gpu-02 ", "gpu-02", id="the-uploader-names-it"),
        pytest.param("gpu-a100-07", "typed", "gpu-a100-07", id="the-file-wins"),
        pytest.param(None, "unnamed host", None, id="the-old-placeholder-is-no-name"),
        pytest.param(None, "", None, id="nobody-names-it"),
    ],
)
def test_the_host_name_comes_from_the_probe_file_else_the_uploader(facts_name, given, expected):
    # given a fingerprint whose probe file gives facts_name
    facts = {"gpus": [], "host": {"name": facts_name}}

    # when / then
    assert identity_from_facts(facts, given_name=given).hostname == expected


A = HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-1", "GPU-2"))


@pytest.mark.parametrize(
    ("other", "same"),
    [
        pytest.param(HostIdentity(hostname="GPU-01", gpu_uuids=("gpu-2", "GPU-1")), True, id="same-name-and-uuids"),
        pytest.param(HostIdentity(hostname=None, gpu_uuids=("GPU-1", "GPU-2")), True, id="same-uuids-no-name"),
        pytest.param(HostIdentity(hostname="gpu-01"), True, id="same-name-no-uuids"),
        pytest.param(HostIdentity(hostname="7c1e9a4d2b80", gpu_uuids=("GPU-1", "GPU-2")), False, id="another-name"),
        pytest.param(HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-1", "GPU-3")), False, id="a-gpu-swapped"),
        pytest.param(HostIdentity(hostname=None, gpu_uuids=("GPU-1",)), False, id="fewer-gpus"),
        pytest.param(HostIdentity(), False, id="nothing-known"),
    ],
)
def test_two_uploads_are_one_host_when_nothing_differs_and_something_is_equal(other, same):
    assert identities_match(A, other) is same
    assert identities_match(other, A) is same


def test_two_uploads_that_say_nothing_are_never_one_host():
    assert identities_match(HostIdentity(), HostIdentity()) is False


def test_a_merge_of_different_uuids_is_refused_naming_each_sides_own():
    # given two hosts sharing GPU-1, and a host without UUIDs
    conflict = merge_conflict(frozenset({"gpu-1", "gpu-2"}), frozenset({"gpu-1", "gpu-3"}))

    # then
    assert conflict == (["gpu-2"], ["gpu-3"])
    assert merge_conflict(frozenset({"gpu-1"}), frozenset()) is None
    assert merge_conflict(frozenset({"gpu-1"}), frozenset({"gpu-1"})) is None


def test_a_host_without_name_or_uuids_is_named_after_its_gpus_with_a_free_number():
    # given the laptop's GPU, and two hosts already named after the same GPU (#1 and #3)
    facts = {"gpus": [{"name": "NVIDIA GeForce RTX 3060 Laptop GPU"}]}
    taken = ["1× NVIDIA GeForce RTX 3060 Laptop GPU · #1", "1× NVIDIA GeForce RTX 3060 Laptop GPU · #3", "gpu-01"]

    # when
    name = derived_name(facts, HostIdentity(), taken=taken)

    # then the first free number
    assert name == "1× NVIDIA GeForce RTX 3060 Laptop GPU · #2"


def test_a_host_with_uuids_but_no_name_is_named_after_its_gpus_and_first_uuid():
    # given the HGX H100 pasted without a host name
    facts = scenario("h100_sxm_8x_nvswitch")
    identity = identity_from_facts(facts)

    # when
    name = derived_name(facts, identity, taken=[])

    # then "8× <name> · GPU-<first 8 hex digits of the first sorted UUID>"
    assert name == f"8× NVIDIA H100 80GB HBM3 · {identity.gpu_uuids[0][:12]}"


def test_the_chinese_reports_three_unnamed_uploads_are_three_hosts():
    # given a MIG box, an HPE server and a laptop pasted without host names, the first two with UUIDs
    mig = scenario("a100_sxm_mig")
    hpe = scenario("l40s_pcie_4x")
    laptop = {"gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 3060 Laptop GPU"}]}
    known: list[KnownHost] = []
    choices = []

    # when each is uploaded in turn
    for number, facts in enumerate((mig, hpe, laptop)):
        identity = identity_from_facts(facts, given_name="")
        choice = host_for(facts, identity, upload_sha256=str(number) * 64, known=known)
        choices.append(choice)
        known.insert(0, KnownHost(key=choice.key, name=choice.name, named=choice.named, identities=(identity,)))

    # then three hosts, none named by the file, each named after its GPUs
    assert len({choice.key for choice in choices}) == 3
    assert [choice.joined for choice in choices] == [False, False, False]
    assert [choice.named for choice in choices] == [False, False, False]
    assert choices[0].name.startswith("1× NVIDIA A100-SXM4-80GB · GPU-")
    assert choices[1].name.startswith("4× NVIDIA L40S · GPU-")
    assert choices[2].name == "1× NVIDIA GeForce RTX 3060 Laptop GPU · #1"
    assert choices[2].key == "upload-" + "2" * 24  # the upload's own SHA-256, cut to 24 hex digits


def test_a_second_capture_of_a_host_joins_it_and_a_pasted_one_takes_its_name():
    # given gpu-a100-07 known by its probe file (name and UUIDs)
    facts = scenario("a100_pcie_2x_shared")
    first = identity_from_facts({**facts, "host": {"name": "gpu-a100-07"}})
    known = [
        KnownHost(key=natural_key(first, upload_sha256="a" * 64), name="gpu-a100-07", named=True, identities=(first,))
    ]

    # when the same GPUs are uploaded again, pasted without a name
    pasted = identity_from_facts(facts)
    choice = host_for(facts, pasted, upload_sha256="b" * 64, known=known)

    # then a version of gpu-a100-07, under its name
    assert (choice.key, choice.name, choice.named, choice.joined) == (known[0].key, "gpu-a100-07", True, True)


def test_a_machine_of_the_same_name_with_other_gpus_is_another_host():
    # given gpu-01 with GPU-1 known
    first = HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-1",))
    known = [
        KnownHost(
            key=natural_key(first, upload_sha256="a" * 64),
            name="gpu-01",
            named=True,
            identities=(first, HostIdentity(hostname="gpu-01")),
        )
    ]

    # when gpu-01 is uploaded with GPU-9 (a name reused, or a board swapped)
    choice = host_for(
        {"gpus": [{"name": "X", "uuid": "GPU-9"}]},
        HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-9",)),
        upload_sha256="c" * 64,
        known=known,
    )

    # then a new host, even though a version of gpu-01 showed no UUIDs
    assert choice.joined is False
    assert choice.key != known[0].key

"""A deployment measured on MIG slices is estimated with the slice's memory, not the whole card's: the parsers list
each GPU's MIG devices, the measured environment takes the smallest slice as the memory per GPU (and, since CUDA on
a slice reports the slice's memory as the device total, as the measured CUDA-visible total), and a fingerprint's
measured figures replace the catalog's in the estimate."""

from __future__ import annotations

import pytest
from django.utils import timezone

from sizing.estimator.memory import cuda_visible_total
from sizing.fingerprint.environment import measured_environment
from sizing.fingerprint.parsers import (
    MigDeviceFacts,
    parse_nvidia_smi_q,
    parse_nvidia_smi_table,
    parse_nvidia_smi_xml,
)
from sizing.models import Deployment, Fingerprint, Gpu, Organisation
from sizing.services.deployments import fingerprint_parameters
from sizing.services.estimates import estimate_request_build
from sizing.services.fingerprints import fingerprint_from_texts
from tests.sizing.fingerprint.fixture_files import fixture_text

MIB = 2**20
# An A100-SXM4-40GB split into a 3g.20gb, a 2g.10gb and a 1g.5gb slice (written for this test; the slice sizes are
# the ones nvidia-smi prints for those profiles on a 40 GB A100: 19,968, 9,856 and 4,864 MiB)
MIXED_XML = "xml_a100_40gb_mig_mixed.xml"

# the default nvidia-smi table of an A100 80GB PCIe split into two 3g.40gb slices (written for this test)
TABLE_TWO_SLICES = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A100 80GB PCIe          On  |   00000000:3B:00.0 Off |                   On |
| N/A   35C    P0             44W /  300W |      50MiB /  81920MiB |     N/A      Default |
|                                         |                        |              Enabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| MIG devices:                                                                            |
+------------------+----------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |                     Memory-Usage |        Vol|        Shared         |
|      ID  ID  Dev |                       BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |
|                  |                                  |        ECC|                       |
|==================+==================================+===========+=======================|
|  0    1   0   0  |              25MiB / 40192MiB    | 42      0 |  3   0    2    0    0 |
|                  |                 0MiB / 65535MiB  |           |                       |
+------------------+----------------------------------+-----------+-----------------------+
|  0    2   0   1  |              25MiB / 40192MiB    | 42      0 |  3   0    2    0    0 |
|                  |                 0MiB / 65535MiB  |           |                       |
+------------------+----------------------------------+-----------+-----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
"""

# `nvidia-smi -q` of the same kind of card with one 7g.80gb slice (written for this test)
Q_ONE_SLICE = """\
==============NVSMI LOG==============

Timestamp                                 : Tue Sep 10 09:30:00 2024
Driver Version                            : 550.90.07
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100 80GB PCIe
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
    MIG Devices
        MIG Device
            Index                         : 0
            GPU Instance ID               : 0
            Compute Instance ID           : 0
            Device Attributes
                Shared
                    Multiprocessor count  : 98
                    Copy Engine count     : 7
            FB Memory Usage
                Total                     : 80384 MiB
                Reserved                  : 0 MiB
                Used                      : 37 MiB
                Free                      : 80346 MiB
    FB Memory Usage
        Total                             : 81920 MiB
        Reserved                          : 421 MiB
        Used                              : 60 MiB
        Free                              : 81438 MiB
"""


def test_the_xml_lists_each_mig_slice_with_its_memory_and_multiprocessors() -> None:
    # when
    gpu = parse_nvidia_smi_xml(fixture_text(MIXED_XML)).gpus[0]
    # then: the card's 40,960 MiB stays the GPU's total; each slice has its own
    assert (gpu.mig_mode, gpu.memory_total_bytes) == ("enabled", 40_960 * MIB)
    assert gpu.mig_devices == (
        MigDeviceFacts(
            index=0,
            gpu_instance_id=2,
            compute_instance_id=0,
            memory_total_bytes=19_968 * MIB,
            memory_used_bytes=25 * MIB,
            sm_count=42,
        ),
        MigDeviceFacts(
            index=1,
            gpu_instance_id=3,
            compute_instance_id=0,
            memory_total_bytes=9_856 * MIB,
            memory_used_bytes=13 * MIB,
            sm_count=28,
        ),
        MigDeviceFacts(
            index=2,
            gpu_instance_id=9,
            compute_instance_id=0,
            memory_total_bytes=4_864 * MIB,
            memory_used_bytes=7 * MIB,
            sm_count=14,
        ),
    )


def test_the_table_lists_the_mig_devices_under_their_gpu() -> None:
    # when
    facts = parse_nvidia_smi_table(TABLE_TWO_SLICES)
    # then
    assert facts.problems == ()
    gpu = facts.gpus[0]
    assert (gpu.mig_mode, gpu.memory_total_bytes, gpu.processes_memory_bytes) == ("enabled", 81_920 * MIB, 0)
    assert [(d.index, d.gpu_instance_id, d.memory_total_bytes, d.sm_count) for d in gpu.mig_devices] == [
        (0, 1, 40_192 * MIB, 42),
        (1, 2, 40_192 * MIB, 42),
    ]


def test_q_text_lists_the_mig_devices_and_keeps_the_cards_memory() -> None:
    # when
    gpu = parse_nvidia_smi_q(Q_ONE_SLICE).gpus[0]
    # then: the slice's FB Memory Usage does not shadow the card's
    assert gpu.memory_total_bytes == 81_920 * MIB
    assert gpu.mig_devices == (
        MigDeviceFacts(
            index=0,
            gpu_instance_id=0,
            compute_instance_id=0,
            memory_total_bytes=80_384 * MIB,
            memory_used_bytes=37 * MIB,
            sm_count=98,
        ),
    )


def test_a_gpu_without_mig_lists_no_mig_devices() -> None:
    assert parse_nvidia_smi_q(fixture_text("q_l40s.txt")).gpus[0].mig_devices is None


def test_the_memory_per_gpu_on_mig_is_the_smallest_slice_and_cudas_total() -> None:
    # given
    fingerprint = fingerprint_from_texts(texts=[fixture_text(MIXED_XML)])
    # when
    env = measured_environment(fingerprint, tp=1)
    # then: 4,864 MiB × 1,048,576 = 5,100,273,664 bytes, not the card's 40,960 MiB
    assert (env.memory_bytes_per_gpu, env.cuda_total_bytes_per_gpu, env.mig) == (5_100_273_664, 5_100_273_664, True)
    assert env.explanation[0] == (
        "memory per GPU: 4,864 MiB, the smallest MIG slice (GPU 0: 3 slice(s) of 4,864 MiB, 9,856 MiB, 19,968 MiB, "
        "of the card's 40,960 MiB): an engine runs on one slice and sees only its memory, so the estimate uses the "
        "slice's memory, not the card's; CUDA reports the slice's memory as the device total, so it is also the "
        "CUDA-visible total"
    )
    assert env.as_dict()["mig"] is True
    assert env.as_dict()["cuda_total_bytes_per_gpu"] == 5_100_273_664


def test_tp_over_mig_slices_is_explained() -> None:
    # given
    fingerprint = fingerprint_from_texts(texts=[TABLE_TWO_SLICES])
    # when
    env = measured_environment(fingerprint, tp=2)
    # then
    assert env.memory_bytes_per_gpu == 40_192 * MIB
    assert any(
        line.startswith("TP 2 on MIG slices: a CUDA process sees one MIG slice only") for line in env.explanation
    )


def test_mig_without_its_devices_keeps_the_card_and_says_the_slices_are_missing() -> None:
    # given: the XML with the MIG devices cut out
    text = fixture_text(MIXED_XML)
    text = text[: text.index("<mig_devices>")] + text[text.index("</mig_devices>") + len("</mig_devices>") :]
    fingerprint = fingerprint_from_texts(texts=[text])
    # when
    env = measured_environment(fingerprint, tp=1)
    # then
    assert (env.memory_bytes_per_gpu, env.cuda_total_bytes_per_gpu, env.mig) == (40_960 * MIB, None, False)
    assert env.explanation[1] == (
        "MIG is enabled on GPU(s) 0, but the fingerprint lists no MIG devices (add nvidia-smi -q -x or the table "
        "with its MIG devices): an engine sees one slice, not the memory above"
    )


def test_a_whole_card_gives_no_cuda_total() -> None:
    # given: an L40S (no MIG): nvidia-smi shows the driver's total, never CUDA's own
    env = measured_environment(fingerprint_from_texts(texts=[fixture_text("q_l40s.txt")]), tp=1)
    # then
    assert env.memory_bytes_per_gpu is not None
    assert (env.cuda_total_bytes_per_gpu, env.mig) == (None, False)


def _stored(text: str) -> Fingerprint:
    deployment = Deployment.objects.create(organisation=Organisation.objects.create(name="Acme"), name="MIG box")
    return Fingerprint.objects.create(
        deployment=deployment,
        host="gpu-7",
        captured_at=timezone.now(),
        facts=fingerprint_from_texts(texts=[text]),
        raw=[],
        size_bytes=len(text),
        sha256="0" * 64,
    )


@pytest.mark.django_db
def test_a_mig_fingerprint_sizes_the_estimate_for_the_slice() -> None:
    # given
    fingerprint = _stored(fixture_text(MIXED_XML))
    # when
    parameters, environment = fingerprint_parameters(fingerprint=fingerprint, parameters={"tp": 1})
    # then: the measured slice replaces the catalog's card, as the driver's total and as CUDA's
    assert parameters == {"tp": 1, "gpu_memory_bytes": 4_864 * MIB, "gpu_cuda_total_bytes": 4_864 * MIB}
    assert environment.mig is True


@pytest.mark.django_db
def test_the_estimate_on_a_mig_slice_budgets_the_slice_not_the_card(catalog: None) -> None:
    # given: the plan's card from the catalog (40,536 MiB CUDA-visible) and the measured 4,864 MiB slice
    gpu = Gpu.objects.get(slug="nvidia-a100-sxm-40gb")
    fingerprint = _stored(fixture_text(MIXED_XML))
    parameters, _ = fingerprint_parameters(fingerprint=fingerprint, parameters={"tp": 1})
    # when
    catalog_request = estimate_request_build(gpu=gpu, config=_small_config(), parameters={"tp": 1})
    measured_request = estimate_request_build(gpu=gpu, config=_small_config(), parameters=parameters)
    # then: what vLLM's budget multiplies
    assert cuda_visible_total(catalog_request) == 40_536 * MIB
    assert cuda_visible_total(measured_request) == 4_864 * MIB
    assert measured_request.gpu_memory_bytes == 4_864 * MIB


@pytest.mark.django_db
def test_a_whole_card_fingerprint_leaves_cudas_total_to_the_catalogs_reservation(catalog: None) -> None:
    # given: an A100-SXM4-40GB measured at 40,960 MiB without MIG
    text = fixture_text(MIXED_XML).replace("<current_mig>Enabled", "<current_mig>Disabled")
    fingerprint = _stored(text)
    gpu = Gpu.objects.get(slug="nvidia-a100-sxm-40gb")
    # when
    parameters, environment = fingerprint_parameters(fingerprint=fingerprint, parameters={"tp": 1})
    request = estimate_request_build(gpu=gpu, config=_small_config(), parameters=parameters)
    # then: 40,960 MiB measured less the catalog's 424 MiB reservation (40,960 - 40,536)
    assert parameters == {"tp": 1, "gpu_memory_bytes": 40_960 * MIB}
    assert environment.mig is False
    assert cuda_visible_total(request) == 40_536 * MIB


@pytest.mark.django_db
def test_figures_given_with_the_request_win_over_the_fingerprint() -> None:
    # given
    fingerprint = _stored(fixture_text(MIXED_XML))
    # when
    memory_given, _ = fingerprint_parameters(
        fingerprint=fingerprint, parameters={"tp": 1, "gpu_memory_bytes": 9_856 * MIB}
    )
    cuda_given, _ = fingerprint_parameters(
        fingerprint=fingerprint, parameters={"tp": 1, "gpu_cuda_total_bytes": 9_000 * MIB}
    )
    # then: a given driver total keeps the fingerprint's CUDA total out (they describe one card)
    assert memory_given == {"tp": 1, "gpu_memory_bytes": 9_856 * MIB}
    assert cuda_given == {"tp": 1, "gpu_cuda_total_bytes": 9_000 * MIB, "gpu_memory_bytes": 4_864 * MIB}


def _small_config() -> dict:
    """A Llama-like 1B config (the estimate's numbers are not asserted here, only the memory it is given)."""
    return {
        "model_type": "llama",
        "hidden_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 8192,
        "vocab_size": 128256,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 8192,
    }

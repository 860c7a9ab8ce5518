"""Format detection and `parse_any`: every fixture's kind, other tools' files, and the refusals."""

from __future__ import annotations

import pytest

from sizing.fingerprint.detect import MAX_INPUT_BYTES, PieceKind, decode_input, detect_kind, parse_any
from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from tests.sizing.fingerprint.fixture_files import fixture_text


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param("q_l40s.txt", PieceKind.NVIDIA_SMI_Q, id="q-text"),
        pytest.param("xml_a100_mig.xml", PieceKind.NVIDIA_SMI_XML, id="xml"),
        pytest.param("table_2xa100_pcie_80col.txt", PieceKind.NVIDIA_SMI_TABLE, id="table"),
        pytest.param("topo_8xh100_sxm_nv18.txt", PieceKind.NVIDIA_SMI_TOPO, id="topo-tabs"),
        pytest.param("topo_2xl4_pcie_spaces.txt", PieceKind.NVIDIA_SMI_TOPO, id="topo-spaces"),
        pytest.param("csv_units_repeated_header.csv", PieceKind.NVIDIA_SMI_CSV, id="csv-units"),
        pytest.param("csv_nounits.csv", PieceKind.NVIDIA_SMI_CSV, id="csv-nounits"),
        pytest.param("csv_noheader.csv", PieceKind.NVIDIA_SMI_CSV, id="csv-noheader"),
        pytest.param("version.json", PieceKind.CUDA_VERSION_JSON, id="version-json"),
        pytest.param("version.txt", PieceKind.CUDA_VERSION_TXT, id="version-txt"),
        pytest.param("nvcc_12_4.txt", PieceKind.NVCC_VERSION, id="nvcc"),
        pytest.param("proc_version_open.txt", PieceKind.PROC_DRIVER_VERSION, id="proc-version"),
    ],
)
def test_detect_kind_of_each_fixture(name, kind):
    # given
    text = fixture_text(name)

    # when
    detected, why = detect_kind(text)

    # then
    assert (detected, why) == (kind, None)


def test_a_benchmark_result_is_named_as_such():
    # given a vllm bench serve result pasted by mistake
    text = fixture_text("bench_serve_result.json")

    # when
    piece = parse_any(text)

    # then
    assert piece.kind is PieceKind.UNKNOWN
    assert piece.problems == ("this looks like a vllm bench serve result, not an nvidia-smi output",)
    assert piece.facts.gpus == ()


def test_prometheus_metrics_are_named_as_such():
    # given
    text = "# HELP vllm:num_requests_running Number of requests\n# TYPE vllm:num_requests_running gauge\n"

    # when
    piece = parse_any(text)

    # then
    assert piece.problems == ("this looks like Prometheus metrics, not an nvidia-smi output",)


def test_nvidia_smi_failure_message_is_a_problem():
    # given the message of nvidia-smi on a machine whose driver is not loaded
    text = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
        "NVIDIA driver is installed and running.\n"
    )

    # when
    piece = parse_any(text)

    # then
    assert piece.kind is PieceKind.NVIDIA_SMI_FAILURE
    assert piece.problems == ("nvidia-smi could not read the GPUs: " + text.strip(),)


def test_binary_bytes_are_refused():
    # given the first bytes of an ELF executable
    data = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00"

    # when
    with pytest.raises(FingerprintError) as caught:
        decode_input(data)

    # then
    assert caught.value.code is FingerprintErrorCode.BINARY_INPUT
    assert caught.value.message == "binary content (NUL or control bytes); paste the command's text output"


def test_non_utf8_bytes_are_refused():
    # given
    data = b"GPU \xff\xfe\xfd\x80"

    # when
    with pytest.raises(FingerprintError) as caught:
        decode_input(data)

    # then
    assert caught.value.code is FingerprintErrorCode.BINARY_INPUT
    assert caught.value.message == "binary content (not UTF-8 text); paste the command's text output"


def test_oversize_input_is_refused_with_the_numbers():
    # given one byte over the limit
    data = b"a" * (MAX_INPUT_BYTES + 1)

    # when
    with pytest.raises(FingerprintError) as caught:
        decode_input(data)

    # then
    assert caught.value.code is FingerprintErrorCode.OVERSIZE_INPUT
    assert caught.value.message == (
        "input of 4,194,305 bytes exceeds the 4,194,304-byte limit; paste one command's output at a time"
    )
    assert caught.value.extra == {"size_bytes": 4_194_305, "limit_bytes": 4_194_304}


def test_utf16_as_powershell_writes_it_is_read():
    # given the -q text saved by PowerShell's `>` (UTF-16 with a BOM)
    data = fixture_text("q_l40s.txt").encode("utf-16")

    # when
    piece = parse_any(decode_input(data))

    # then
    assert piece.kind is PieceKind.NVIDIA_SMI_Q
    assert piece.facts.gpus[0].memory_total_bytes == 48_305_799_168


def test_xml_with_an_entity_declaration_is_refused():
    # given an XML with an internal DTD declaring an entity
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY big "xxxxxxxx">]>\n'
        "<nvidia_smi_log><driver_version>&big;</driver_version></nvidia_smi_log>"
    )

    # when
    with pytest.raises(FingerprintError) as caught:
        parse_any(text)

    # then
    assert caught.value.code is FingerprintErrorCode.UNSAFE_XML


def test_empty_input_is_refused():
    # given
    text = "  \n\n"

    # when
    with pytest.raises(FingerprintError) as caught:
        parse_any(text)

    # then
    assert caught.value.code is FingerprintErrorCode.EMPTY_INPUT


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        pytest.param(
            '{"card0": {"Card series": "AMD Instinct MI210"}, "system": {"Driver version": "6.2.4"}}',
            PieceKind.ROCM_SMI_JSON,
            id="rocm-smi-json",
        ),
        pytest.param(
            '[{"gpu": 0, "bdf": "0000:0c:00.0", "link_metrics": {"link_type": "XGMI", "links": []}}]',
            PieceKind.AMD_SMI_XGMI_JSON,
            id="amd-smi-xgmi",
        ),
        pytest.param("GPU[0]          : GPU use (%): 0\n", PieceKind.ROCM_SMI_TEXT, id="rocm-smi-text"),
    ],
)
def test_detect_kind_of_amd_outputs(text, kind):
    # given an AMD tool's output
    # when
    detected, why = detect_kind(text)

    # then
    assert (detected, why) == (kind, None)


def test_code_fences_and_prompt_lines_of_a_chat_paste_are_ignored():
    # given a CSV pasted from a chat with a Markdown fence and the shell prompt
    text = (
        "```\nuser@gpu01:~$ nvidia-smi --query-gpu=name,memory.total --format=csv\n"
        "name, memory.total [MiB]\nNVIDIA L4, 23034 MiB\n```\n"
    )

    # when
    piece = parse_any(text)

    # then 23034 MiB × 1,048,576 = 24,152,899,584 bytes
    assert piece.kind is PieceKind.NVIDIA_SMI_CSV
    assert piece.problems == ()
    assert piece.facts.gpus[0].memory_total_bytes == 24_152_899_584


def test_xml_with_a_foreign_doctype_is_refused():
    # given an XML whose DOCTYPE points somewhere else than nvidia-smi's DTD name
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log SYSTEM "http://example.invalid/x.dtd">\n'
        "<nvidia_smi_log><driver_version>550.54.15</driver_version></nvidia_smi_log>"
    )

    # when
    with pytest.raises(FingerprintError) as caught:
        parse_any(text)

    # then
    assert caught.value.code is FingerprintErrorCode.UNSAFE_XML


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "Metric,avg,min,max\nTime To First Token (ms),24.6,23.5,26.3\n",
            "this looks like a genai-perf CSV export, not an nvidia-smi output",
            id="genai-perf-csv",
        ),
        pytest.param(
            '{"benchmarks": [{"type_": "generative_benchmark", "id_": "1", "args": {"profile": ',
            "this looks like a truncated guidellm benchmark report (invalid JSON), not an nvidia-smi output",
            id="truncated-guidellm",
        ),
        pytest.param(
            '{"backend": "sglang", "num_prompts": 10, "output_throughput": 99.5}\n',
            "this looks like an sglang bench_serving result, not an nvidia-smi output",
            id="sglang-bench",
        ),
        pytest.param(
            "hello\nworld\n",
            "not a known fingerprint format (nvidia-smi -q / -q -x / table / topo -m / --query-gpu CSV, nvcc, "
            "version.json, /proc/driver/nvidia/version, rocm-smi)",
            id="plain-text",
        ),
    ],
)
def test_other_tools_outputs_are_named(text, problem):
    # given a text that is no fingerprint
    # when
    piece = parse_any(text)

    # then
    assert (piece.kind, piece.problems) == (PieceKind.UNKNOWN, (problem,))

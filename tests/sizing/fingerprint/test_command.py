"""`manage.py fingerprint parse`: JSON and human output, and one-line errors with exit status 2."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from tests.sizing.fingerprint.fixture_files import FIXTURES


def _run(*args: str) -> str:
    out = StringIO()
    call_command("fingerprint", *args, stdout=out)
    return out.getvalue()


def test_parse_json_prints_the_merged_fingerprint():
    # given the table and nvcc output of one machine
    paths = [str(FIXTURES / "table_2xa100_pcie_80col.txt"), str(FIXTURES / "nvcc_12_4.txt")]

    # when
    fingerprint = json.loads(_run("parse", *paths, "--json"))

    # then
    assert fingerprint["gpu_count"] == 2
    assert fingerprint["gpus"][1]["memory_total_bytes"] == 84_928_364_544
    assert (fingerprint["driver_version"], fingerprint["cuda_toolkit_version"]) == ("470.82.01", "12.4.131")
    assert [piece["kind"] for piece in fingerprint["pieces"]] == ["nvidia_smi_table", "nvcc_version"]


def test_parse_prints_a_short_summary():
    # given
    path = str(FIXTURES / "topo_8xh100_sxm_nv18.txt")

    # when
    output = _run("parse", path)

    # then
    assert output.splitlines()[0] == "8 GPU(s); driver unknown, CUDA unknown"
    assert "topology: 28 NVLink pair(s); GPU links NV18" in output


def test_binary_file_is_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    # given
    path = tmp_path / "smi.bin"
    path.write_bytes(b"\x00\x01\x02\x03" * 64)

    # when
    with pytest.raises(SystemExit) as caught:
        _run("parse", str(path))

    # then
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"fingerprint: error: {path}: binary_input: binary content (NUL or control "
        "bytes); paste the command's text output\n"
    )


def test_missing_file_is_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    # given
    path = tmp_path / "absent.txt"

    # when
    with pytest.raises(SystemExit) as caught:
        _run("parse", str(path))

    # then
    assert caught.value.code == 2
    assert capsys.readouterr().err == f"fingerprint: error: cannot read {path}: No such file or directory\n"


def test_parse_checks_the_machine_against_a_plan(catalog):
    # given the 2 x A100 PCIe table and a plan for 4 H100 SXM with TP 2 and an image for CUDA 12.4
    paths = [str(FIXTURES / "table_2xa100_pcie_80col.txt"), str(FIXTURES / "topo_2xl4_pcie_spaces.txt")]

    # when
    fingerprint = json.loads(
        _run(
            "parse",
            *paths,
            "--plan-gpu",
            "nvidia-h100-sxm-80gb",
            "--plan-gpus",
            "4",
            "--tp",
            "2",
            "--image-cuda",
            "12.4",
            "--json",
        )
    )

    # then the plan's findings follow the parse findings
    codes = {finding["code"] for finding in fingerprint["findings"]}
    assert {"gpu_count_mismatch", "gpu_model_mismatch", "tp_over_pcie", "driver_too_old"} <= codes

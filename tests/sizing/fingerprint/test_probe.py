"""The probe script, run against a fake `nvidia-smi` (and `nvcc`) on PATH that replays our fixtures: its JSON file
reads back into the pieces the parsers know, and the command merges it like pasted outputs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.errors import FingerprintError
from sizing.fingerprint.probe import probe_pieces
from tests.sizing.fingerprint.fixture_files import FIXTURES

PROBE = Path(__file__).resolve().parents[3] / "deploy" / "tools" / "gpu_probe.sh"
FAKE_NVIDIA_SMI = f"""#!/usr/bin/env bash
case "$*" in
  "-q -x") cat "{FIXTURES}/xml_a100_mig.xml" ;;
  "topo -m") cat "{FIXTURES}/topo_2xl4_pcie_spaces.txt" ;;
  --query-compute-apps*) printf 'gpu_bus_id, pid, process_name, used_memory [MiB]\\n' ;;
  "") cat "{FIXTURES}/table_2xa100_pcie_80col.txt" ;;
  *) echo "fake nvidia-smi: unexpected arguments $*" >&2; exit 9 ;;
esac
"""
FAKE_NVCC = f"""#!/usr/bin/env bash
cat "{FIXTURES}/nvcc_12_4.txt"
"""


def _run_probe(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("nvidia-smi", FAKE_NVIDIA_SMI), ("nvcc", FAKE_NVCC)):
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    out = tmp_path / "work"
    out.mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(
        ["bash", str(PROBE), "-o", "fingerprint.json"],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "gpu_probe: wrote fingerprint.json" in result.stdout
    assert os.listdir(out) == ["fingerprint.json"]  # nothing else written
    return out / "fingerprint.json"


def test_the_probe_writes_one_json_file_whose_pieces_the_parsers_read(tmp_path):
    # when
    path = _run_probe(tmp_path)

    # then: valid JSON with the raw outputs and their exit statuses
    facts, pieces, problems = probe_pieces(path.read_text())
    names = [name for name, _ in pieces]
    assert names[:4] == ["nvidia_smi_xml", "nvidia_smi_table", "nvidia_smi_topo", "nvcc_version"]
    assert problems == []
    assert facts["host"]
    assert "cpu_count" in facts["raw"]
    kinds = {name: parse_any(text).kind.value for name, text in pieces}
    assert kinds["nvidia_smi_xml"].startswith("nvidia_smi_xml")
    assert kinds["nvidia_smi_topo"].startswith("nvidia_smi_topo")
    assert kinds["nvcc_version"] == "nvcc_version"


def test_a_probe_file_merges_like_pasted_outputs(tmp_path, capsys):
    path = _run_probe(tmp_path)
    call_command("fingerprint", "parse", str(path), "--json")
    fingerprint = json.loads(capsys.readouterr().out)
    assert fingerprint["gpu_count"] >= 1
    assert fingerprint["cuda_toolkit_version"] == "12.4.131"
    assert any(f["code"] == "mig_enabled" for f in fingerprint["findings"])


def test_a_cut_probe_file_is_refused_with_the_reason():
    with pytest.raises(FingerprintError) as caught:
        probe_pieces('{"probe": "llm-sizing gpu_probe 1", "pieces": [{"name": "nvidia_smi_xml", "out')
    assert caught.value.code.value == "invalid_probe"
    assert "cut short" in caught.value.message

"""The JSON file `deploy/tools/gpu_probe.sh` writes: one entry per command with its exit status and raw output.
`probe_pieces` turns it back into the raw texts the parsers read, and says which commands failed."""

from __future__ import annotations

import json
from typing import Any

from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from sizing.kernel.json_limits import loads as bounded_loads

PROBE_MARK = "llm-sizing gpu_probe"
# entries the parsers read (the rest, CPU/RAM/cgroups/packages, are kept as facts beside the GPUs)
PARSED_ENTRIES = (
    "nvidia_smi_xml",
    "nvidia_smi_csv",
    "nvidia_smi_table",
    "nvidia_smi_topo",
    "driver_version",
    "cuda_version_json",
    "cuda_version_txt",
    "nvcc_version",
    "rocm_smi",
    "amd_smi_xgmi",
)


def is_probe_output(text: str) -> bool:
    return text.lstrip().startswith("{") and PROBE_MARK in text[:400]


def probe_pieces(text: str) -> tuple[dict[str, Any], list[tuple[str, str]], list[str]]:
    """(host facts, [(entry name, raw output)] for the parsers, problems) of a probe file."""
    try:
        data = bounded_loads(text)
    except json.JSONDecodeError as error:
        raise FingerprintError(
            code=FingerprintErrorCode.INVALID_PROBE,
            message=f"the probe file is not valid JSON ({error.msg} at line {error.lineno}): "
            "was it cut short? Run the probe again and upload the whole file",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("pieces"), list):
        raise FingerprintError(code=FingerprintErrorCode.INVALID_PROBE, message="the probe file has no 'pieces' list")
    facts: dict[str, Any] = {"host": data.get("host"), "captured_at": data.get("captured_at"), "raw": {}}
    pieces: list[tuple[str, str]] = []
    problems: list[str] = []
    for entry in data["pieces"]:
        if not isinstance(entry, dict):
            continue
        name, output, code = str(entry.get("name", "")), str(entry.get("output", "")), entry.get("exit_code")
        if code not in (0, None):
            problems.append(f"{entry.get('command', name)} exited with status {code}: {output.strip()[:200]}")
            continue
        if name in PARSED_ENTRIES:
            pieces.append((name, output))
        else:
            facts["raw"][name] = output
    return facts, pieces, problems


def probe_findings(problems: list[str]) -> list[dict[str, Any]]:
    """A finding for each probe command that failed (a missing tool is simply absent, not a failure)."""
    return [
        {"code": "probe_command_failed", "severity": "warning", "message": problem, "extra": {"detail": problem}}
        for problem in problems
    ]

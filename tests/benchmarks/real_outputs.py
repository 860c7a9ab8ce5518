"""The fingerprint parsers against real pasted outputs in the shared data (not collected by pytest).

Reads ../shared/data/real_outputs beside the project (`--shared PATH` to point elsewhere; a fresh clone has none:
the script says so and exits 0), parses every file under nvidia_smi_q, nvidia_smi_xml, nvidia_smi_csv, topo,
cuda_version and rocm_smi, and prints per file the detected kind, the key facts and the problems. Each file's
`shows` text in real_outputs/INDEX.json is checked where it states a fact:

- GPU count ("8x NVIDIA H200", "8-GPU", "GPU 0 of 4"), the GPU model (a token with a digit of the parsed name, e.g.
  "MI100", appears in the text), the memory ("81559MiB" → every GPU's memory_total_bytes = 81559 × 1,048,576);
- the driver ("driver 510.47.03", "kernel module 470.103.01") and CUDA ("CUDA 11.6") versions, for formats that
  carry them (the tool_version text counts too);
- NVLink: "NV18" with "every/all pair(s)" → every GPU pair has 18 links; "no NVLink" / "PCIe only" → no pair;
- "MIG enabled" → a GPU in MIG mode.

A file is "parsed" (facts read, checks pass), "refused" (a FingerprintError, or a known format that gives no facts,
with the reason), or "failed" (a check missed, an exception, or nothing read without a reason). Exit status 1 when a
file failed, 0 otherwise.

    .venv/bin/python tests/benchmarks/real_outputs.py [--shared PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sizing.fingerprint.detect import PieceKind, decode_input, parse_any  # noqa: E402
from sizing.fingerprint.errors import FingerprintError  # noqa: E402
from sizing.fingerprint.merge import fingerprint_merge  # noqa: E402

DEFAULT_SHARED = ROOT.parent / "shared" / "data"
FOLDERS = ("nvidia_smi_q", "nvidia_smi_xml", "nvidia_smi_csv", "topo", "cuda_version", "rocm_smi")
MIB = 1024 * 1024
VERSIONED_KINDS = {
    PieceKind.NVIDIA_SMI_Q,
    PieceKind.NVIDIA_SMI_XML,
    PieceKind.NVIDIA_SMI_TABLE,
    PieceKind.PROC_DRIVER_VERSION,
    PieceKind.NVCC_VERSION,
    PieceKind.ROCM_SMI_JSON,
}


def _expected_count(shows: str) -> int | None:
    for pattern in (r"\b(\d+)x\s", r"\b(\d+)-GPU\b", r"\bGPU \d+ of (\d+)\b"):
        match = re.search(pattern, shows)
        if match:
            return int(match.group(1))
    return None


def _checks(entry: dict[str, Any], kind: PieceKind, fingerprint: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(what, passed, detail) for each fact the INDEX text states."""
    shows = entry.get("shows", "")
    versions_text = f"{shows} {entry.get('tool_version', '')} {entry.get('tool', '')}"
    gpus = fingerprint["gpus"]
    results: list[tuple[str, bool, str]] = []
    count = _expected_count(shows)
    if count is not None:
        results.append(("count", fingerprint["gpu_count"] == count, f"{fingerprint['gpu_count']} vs {count}"))
    names = sorted({gpu["name"] for gpu in gpus if gpu["name"]})
    for name in names:
        tokens = [token for token in re.findall(r"[A-Za-z0-9]+", name) if re.search(r"\d", token) and len(token) >= 2]
        found = any(re.search(rf"(?<![A-Za-z0-9]){re.escape(token)}", shows, re.IGNORECASE) for token in tokens)
        results.append(("name", found, name))
    memory = re.search(r"\b(\d{3,6})\s*MiB", shows)
    if memory and gpus:
        expected = int(memory.group(1)) * MIB
        totals = [gpu["memory_total_bytes"] for gpu in gpus]
        results.append(
            (
                "memory",
                all(total == expected for total in totals),
                f"{[t // MIB if t else None for t in totals]} MiB vs {memory.group(1)} MiB",
            )
        )
    if kind in VERSIONED_KINDS:
        driver = re.search(r"(?:driver|NVIDIA-SMI|kernel module)\s+(\d+\.\d+(?:\.\d+)?)", versions_text, re.IGNORECASE)
        if driver:
            got = fingerprint["kernel_module_version"] or fingerprint["driver_version"]
            results.append(("driver", got == driver.group(1), f"{got} vs {driver.group(1)}"))
        cuda = re.search(r"CUDA\s+(\d+\.\d+(?:\.\d+)?)", versions_text)
        if cuda and kind is not PieceKind.PROC_DRIVER_VERSION:
            got = fingerprint["cuda_version"] or fingerprint["cuda_toolkit_version"]
            passed = got is not None and (got == cuda.group(1) or got.startswith(cuda.group(1) + "."))
            results.append(("cuda", passed, f"{got} vs {cuda.group(1)}"))
    pairs = fingerprint["topology"]["nvlink_pairs"]
    nvlink = re.search(r"\bNV(\d+)\b", shows)
    if kind is PieceKind.NVIDIA_SMI_TOPO and nvlink and re.search(r"(every|all)[ -]pairs?|every GPU pair", shows):
        n = len(gpus)
        passed = len(pairs) == n * (n - 1) // 2 and {pair["links"] for pair in pairs} == {int(nvlink.group(1))}
        results.append(("nvlink", passed, f"{len(pairs)} pairs of {sorted({p['links'] for p in pairs})} links"))
    if kind is PieceKind.NVIDIA_SMI_TOPO and re.search(r"no NVLink|PCIe only", shows, re.IGNORECASE):
        results.append(("nvlink", pairs == [], f"{len(pairs)} NVLink pairs vs none"))
    if re.search(r"MIG enabled", shows):
        results.append(("mig", any(gpu["mig_mode"] == "enabled" for gpu in gpus), "MIG mode"))
    return results


def _has_facts(fingerprint: dict[str, Any]) -> bool:
    keys = ("driver_version", "cuda_version", "cuda_toolkit_version", "kernel_module_version")
    return (
        bool(fingerprint["gpus"])
        or any(fingerprint[key] for key in keys)
        or bool(fingerprint["topology"]["connections"])
    )


def _facts_line(fingerprint: dict[str, Any]) -> str:
    gpus = fingerprint["gpus"]
    names = sorted({gpu["name"] for gpu in gpus if gpu["name"]})
    memory = sorted({gpu["memory_total_bytes"] // MIB for gpu in gpus if gpu["memory_total_bytes"]})
    parts = [f"{fingerprint['gpu_count']} GPU(s)"]
    if names:
        parts.append(" / ".join(names))
    if memory:
        parts.append(" / ".join(f"{m:,} MiB" for m in memory))
    for key, label in (
        ("driver_version", "driver"),
        ("kernel_module_version", "module"),
        ("cuda_version", "CUDA"),
        ("cuda_toolkit_version", "toolkit"),
    ):
        if fingerprint[key]:
            parts.append(f"{label} {fingerprint[key]}")
    if fingerprint["topology"]["connections"]:
        kinds = sorted({item["kind"] for item in fingerprint["topology"]["connections"]})
        parts.append(f"{len(fingerprint['topology']['nvlink_pairs'])} NVLink pairs, links {'/'.join(kinds)}")
    codes = sorted({finding["code"] for finding in fingerprint["findings"]})
    if codes:
        parts.append(f"findings {', '.join(codes)}")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    arguments = parser.parse_args()
    folder = arguments.shared / "real_outputs"
    if not folder.is_dir():
        print(f"no shared data at {folder}: nothing to check")
        return 0
    index_path = folder / "INDEX.json"
    index = {entry["path"]: entry for entry in json.loads(index_path.read_text())} if index_path.exists() else {}
    tally = {"parsed": 0, "refused": 0, "failed": 0}
    for name in FOLDERS:
        for path in sorted((folder / name).glob("*")) if (folder / name).is_dir() else []:
            relative = path.relative_to(folder).as_posix()
            entry = index.get(relative, {})
            try:
                piece = parse_any(decode_input(path.read_bytes()))
            except FingerprintError as error:
                tally["refused"] += 1
                print(f"refused  {relative}\n         {error.code.value}: {error.message}")
                continue
            except Exception as error:  # a crash fails this file; the others still run
                tally["failed"] += 1
                print(f"FAILED   {relative}\n         {type(error).__name__}: {error}")
                continue
            fingerprint = fingerprint_merge([piece], names=[relative])
            checks = _checks(entry, piece.kind, fingerprint) if _has_facts(fingerprint) else []
            if not _has_facts(fingerprint):
                status = "refused" if piece.problems else "failed"
            else:
                status = "parsed" if all(passed for _, passed, _ in checks) else "failed"
            tally[status] += 1
            label = status.upper() if status == "failed" else status
            print(f"{label:<8} {relative}\n         kind {piece.kind.value}: {_facts_line(fingerprint)}")
            for problem in piece.problems:
                print(f"         problem: {problem}")
            if checks:
                print(
                    "         checks: "
                    + ", ".join(f"{what} {'ok' if passed else 'MISSED'} ({detail})" for what, passed, detail in checks)
                )
            elif entry and _has_facts(fingerprint):
                print("         checks: INDEX states no checkable fact")
    missing = sorted(p for p in index if p.split("/")[0] in FOLDERS and not (folder / p).exists())
    for relative in missing:
        print(f"absent   {relative} (listed in INDEX.json)")
    print(f"\n{tally['parsed']} parsed, {tally['refused']} refused with a reason, {tally['failed']} failed")
    return 1 if tally["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Which tool printed a pasted text, and `parse_any`: detect, parse, and say what could not be read.

Binary content and oversize input are refused (`FingerprintError`); a text from another tool (a benchmark result,
Prometheus metrics) is not an error but a piece of kind "unknown" whose problem names what it looks like.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from sizing.fingerprint.parsers import (
    Facts,
    csv_header,
    parse_amd_smi_xgmi,
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
from sizing.kernel.json_limits import loads as bounded_loads

MAX_INPUT_BYTES = 4 * 1024 * 1024  # the largest real -q -x for 8 GPUs with processes is well under 1 MiB


class PieceKind(Enum):
    NVIDIA_SMI_Q = "nvidia_smi_q"
    NVIDIA_SMI_XML = "nvidia_smi_xml"
    NVIDIA_SMI_TABLE = "nvidia_smi_table"
    NVIDIA_SMI_TOPO = "nvidia_smi_topo"
    NVIDIA_SMI_CSV = "nvidia_smi_csv"
    NVIDIA_SMI_FAILURE = "nvidia_smi_failure"
    CUDA_VERSION_JSON = "cuda_version_json"
    CUDA_VERSION_TXT = "cuda_version_txt"
    NVCC_VERSION = "nvcc_version"
    PROC_DRIVER_VERSION = "proc_driver_version"
    ROCM_SMI_TEXT = "rocm_smi_text"
    ROCM_SMI_JSON = "rocm_smi_json"
    AMD_SMI_XGMI_JSON = "amd_smi_xgmi_json"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class ParsedPiece:
    """One pasted output: what it is, the facts read from it, and what could not be read (in words)."""

    kind: PieceKind
    facts: Facts
    problems: tuple[str, ...]


def decode_input(data: bytes) -> str:
    """Bytes of a pasted file as text (UTF-8, or UTF-16 with a BOM as PowerShell's `>` writes it); refuses oversize
    and binary content."""
    if len(data) > MAX_INPUT_BYTES:
        raise FingerprintError(
            code=FingerprintErrorCode.OVERSIZE_INPUT,
            message=f"input of {len(data):,} bytes exceeds the {MAX_INPUT_BYTES:,}-byte limit; "
            "paste one command's output at a time",
            extra={"size_bytes": len(data), "limit_bytes": MAX_INPUT_BYTES},
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return check_text(data.decode("utf-16"))
        except UnicodeDecodeError:
            pass
    try:
        return check_text(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise FingerprintError(
            code=FingerprintErrorCode.BINARY_INPUT,
            message="binary content (not UTF-8 text); paste the command's text output",
        ) from None


def check_text(text: str) -> str:
    """`text` itself, or a refusal when it is oversize or binary (NUL bytes, mostly control characters)."""
    if len(text) > MAX_INPUT_BYTES:
        raise FingerprintError(
            code=FingerprintErrorCode.OVERSIZE_INPUT,
            message=f"input of {len(text):,} characters exceeds the {MAX_INPUT_BYTES:,} limit; "
            "paste one command's output at a time",
            extra={"size_chars": len(text), "limit_bytes": MAX_INPUT_BYTES},
        )
    sample = text[:8192]
    controls = sum(1 for char in sample if ord(char) < 32 and char not in "\t\n\r\x1b\x0c")
    if "\x00" in text or (sample and controls > len(sample) // 20):  # NUL anywhere: no text, nor storable
        raise FingerprintError(
            code=FingerprintErrorCode.BINARY_INPUT,
            message="binary content (NUL or control bytes); paste the command's text output",
        )
    return text


def _json(text: str) -> Any:
    try:
        return bounded_loads(text)
    except ValueError:
        return None


def _other_tool_json(data: Any) -> str:
    """What a JSON document that is no fingerprint looks like."""
    keys = set(data) if isinstance(data, dict) else set(data[0]) if data and isinstance(data[0], dict) else set()
    if {"request_throughput", "mean_ttft_ms"} <= keys or {"backend", "num_prompts", "output_throughput"} <= keys:
        first = data if isinstance(data, dict) else data[0]
        if str(first.get("backend", "")).startswith("sglang"):
            return "this looks like an sglang bench_serving result, not an nvidia-smi output"
        return "this looks like a vllm bench serve result, not an nvidia-smi output"
    if "benchmarks" in keys:
        return "this looks like a guidellm benchmark report, not an nvidia-smi output"
    if "input_config" in keys or "records" in keys:
        return "this looks like an aiperf / genai-perf export, not an nvidia-smi output"
    return "a JSON document of no known fingerprint format (nvidia-smi has no JSON output; use -q -x)"


def _other_tool_text(text: str) -> str:
    if re.search(r"^# (HELP|TYPE) ", text, re.MULTILINE):
        return "this looks like Prometheus metrics, not an nvidia-smi output"
    lines = [line for line in text.split("\n") if line.strip()]
    if lines and lines[0].startswith("Metric,"):
        return "this looks like a genai-perf CSV export, not an nvidia-smi output"
    if lines and lines[0].lstrip().startswith("{") and '"benchmarks"' in text[:4096] and _json(text) is None:
        return "this looks like a truncated guidellm benchmark report (invalid JSON), not an nvidia-smi output"
    if lines and all(_json(line) is not None for line in lines[:5]) and lines[0].lstrip().startswith("{"):
        return "this looks like JSON lines from a benchmark tool, not an nvidia-smi output"
    if text.lstrip().startswith("<"):
        return "XML that is not an nvidia-smi -q -x log (no <nvidia_smi_log> root)"
    return (
        "not a known fingerprint format (nvidia-smi -q / -q -x / table / topo -m / --query-gpu CSV, nvcc, "
        "version.json, /proc/driver/nvidia/version, rocm-smi)"
    )


def detect_kind(text: str) -> tuple[PieceKind, str | None]:
    """The format of `text`, and when unknown what it looks like instead."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("<") and "<nvidia_smi_log" in text[:4096]:
        return PieceKind.NVIDIA_SMI_XML, None
    if "NVSMI LOG" in text[:2048]:
        return PieceKind.NVIDIA_SMI_Q, None
    if re.search(
        r"NVIDIA-SMI has failed|No devices were found|couldn't communicate with the NVIDIA driver|"
        r"Failed to initialize NVML",
        text[:4096],
    ):
        return PieceKind.NVIDIA_SMI_FAILURE, None
    if re.search(r"NVIDIA-SMI\s+\S+\s+Driver Version:", text[:4096]) or re.search(
        r"^\|\s*GPU\s+Name\s", text, re.MULTILINE
    ):
        return PieceKind.NVIDIA_SMI_TABLE, None
    if re.search(r"^\s*X\s+= Self", text, re.MULTILINE) or re.search(r"^GPU0\s+X\s", text, re.MULTILINE):
        return PieceKind.NVIDIA_SMI_TOPO, None
    if "Cuda compilation tools" in text or "nvcc: NVIDIA (R) Cuda compiler" in text:
        return PieceKind.NVCC_VERSION, None
    if "NVRM version:" in text:
        return PieceKind.PROC_DRIVER_VERSION, None
    if re.match(r"CUDA Version\s+\d+\.\d+", head):
        return PieceKind.CUDA_VERSION_TXT, None
    if "ROCm System Management Interface" in text or re.search(r"^GPU\[\d+\]\s*:", text, re.MULTILINE):
        return PieceKind.ROCM_SMI_TEXT, None
    if head.startswith(("{", "[")):
        data = _json(text)
        if isinstance(data, dict) and isinstance(data.get("cuda"), dict) and "version" in data["cuda"]:
            return PieceKind.CUDA_VERSION_JSON, None
        if isinstance(data, dict) and any(re.fullmatch(r"card\d+", key) for key in data):
            return PieceKind.ROCM_SMI_JSON, None
        if isinstance(data, list) and data and all(isinstance(i, dict) and "link_metrics" in i for i in data):
            return PieceKind.AMD_SMI_XGMI_JSON, None
        if data is not None:
            return PieceKind.UNKNOWN, _other_tool_json(data)
    first = next((line for line in text.split("\n") if line.strip()), "")
    if csv_header(first) is not None and ("," in first or "." in first):
        return PieceKind.NVIDIA_SMI_CSV, None
    if "," in first and re.search(r"GPU-[0-9a-f]{8}-|\d+ MiB|[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.\d", first):
        return PieceKind.NVIDIA_SMI_CSV, None  # --format=csv,noheader
    return PieceKind.UNKNOWN, _other_tool_text(text)


_PARSERS: dict[PieceKind, Callable[[str], Facts]] = {
    PieceKind.NVIDIA_SMI_Q: parse_nvidia_smi_q,
    PieceKind.NVIDIA_SMI_XML: parse_nvidia_smi_xml,
    PieceKind.NVIDIA_SMI_TABLE: parse_nvidia_smi_table,
    PieceKind.NVIDIA_SMI_TOPO: parse_nvidia_smi_topo,
    PieceKind.NVIDIA_SMI_CSV: parse_nvidia_smi_csv,
    PieceKind.CUDA_VERSION_JSON: parse_cuda_version_json,
    PieceKind.CUDA_VERSION_TXT: parse_cuda_version_txt,
    PieceKind.NVCC_VERSION: parse_nvcc_version,
    PieceKind.PROC_DRIVER_VERSION: parse_proc_driver_version,
    PieceKind.ROCM_SMI_TEXT: parse_rocm_smi_text,
    PieceKind.ROCM_SMI_JSON: parse_rocm_smi_json,
    PieceKind.AMD_SMI_XGMI_JSON: parse_amd_smi_xgmi,
}


_PASTE_WRAPPING = re.compile(
    r"^\s*```[\w-]*\s*$|^\s*(?:\S*[$#>]\s*|PS [^>]*>\s*)(?:sudo\s+)?"
    r"(?:nvidia-smi|nvcc|rocm-smi|amd-smi|cat)\b[^\n]*$",
    re.MULTILINE,
)


def strip_paste_wrapping(text: str) -> str:
    """`text` without Markdown code fences and shell prompt lines ("$ nvidia-smi -q", "PS C:\\> nvidia-smi")."""
    return _PASTE_WRAPPING.sub("", text)


def parse_any(text: str) -> ParsedPiece:
    """Detect the format of `text` and parse it. Raises `FingerprintError` for binary or oversize input and for XML
    with a DTD or entities; anything else unreadable comes back as problems."""
    text = check_text(text)
    if not text.strip():
        raise FingerprintError(code=FingerprintErrorCode.EMPTY_INPUT, message="empty input")
    text = strip_paste_wrapping(text)
    kind, why = detect_kind(text)
    if kind is PieceKind.UNKNOWN:
        return ParsedPiece(kind=kind, facts=Facts(), problems=(why or "unknown format",))
    if kind is PieceKind.NVIDIA_SMI_FAILURE:
        line = next(line.strip() for line in text.split("\n") if line.strip())
        return ParsedPiece(kind=kind, facts=Facts(), problems=(f"nvidia-smi could not read the GPUs: {line}",))
    facts = _PARSERS[kind](text)
    return ParsedPiece(kind=kind, facts=facts, problems=facts.problems)

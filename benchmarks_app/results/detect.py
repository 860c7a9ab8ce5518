"""Which tool wrote a result file, and `import_text`: every importer is tried; the file is read by the one that
accepts it, or refused with each importer's reason.

Importers live in `benchmarks_app.results.formats` (one module per tool); each `read(text)` returns the runs in the
text or raises `FormatRefusal` with its reason. Exactly one importer must accept a text.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks_app.results.run import FormatRefusal, ImportedRun
from sizing.kernel.json_limits import JSON_MAX_DEPTH, json_depth_exceeds, nul_path, text_encoding
from sizing.kernel.json_limits import loads as bounded_loads

MAX_BYTES = 50 * 1024 * 1024  # the API's upload limit; a 100,000-request vLLM file with details is ~40 MB

Reader = Callable[[str], list[ImportedRun]]


@dataclass(frozen=True)
class Importer:
    """One format: its id, what it is, and the reader (`module.function` under benchmarks_app.results.formats, looked
    up when used, so importer modules may import this module's helpers)."""

    format: str
    description: str
    module: str
    function: str

    @property
    def read(self) -> Reader:
        module = importlib.import_module(f"benchmarks_app.results.formats.{self.module}")
        reader: Reader = getattr(module, self.function)
        return reader


IMPORTERS: tuple[Importer, ...] = (
    Importer("vllm_bench_serve", "vllm bench serve --save-result JSON (one object, or one per line)", "vllm", "read"),
    Importer("sglang_bench_serving", "SGLang bench_serving JSON lines", "sglang", "read"),
    Importer("guidellm_json", "GuideLLM benchmarks.json", "guidellm", "read_json"),
    Importer("guidellm_csv", "GuideLLM benchmarks.csv", "guidellm", "read_csv"),
    Importer("aiperf_json", "AIPerf / GenAI-Perf profile_export JSON", "aiperf", "read_json"),
    Importer("aiperf_csv", "AIPerf / GenAI-Perf profile_export CSV", "aiperf", "read_csv"),
    Importer("aiperf_records", "AIPerf per-record profile_export.jsonl", "aiperf", "read_records"),
    Importer("llmperf_summary", "llmperf *_summary.json", "llmperf", "read_summary"),
    Importer("llmperf_requests", "llmperf *_individual_responses.json", "llmperf", "read_requests"),
    Importer("inference_perf", "inference-perf summary_lifecycle_metrics.json", "inference_perf", "read"),
    Importer("llm_sizing", "this service's load generator result", "llm_sizing", "read"),
)


class BenchmarkFormatError(Exception):
    """No importer (or more than one) read the text; `tried` holds (format, reason) for each."""

    def __init__(self, message: str, tried: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.message = message
        self.tried = tried

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "tried": [{"format": f, "reason": r} for f, r in self.tried]}


def decode(data: bytes) -> str:
    """The bytes of an uploaded file as text; binary content, oversize files and empty files are refused."""
    if len(data) > MAX_BYTES:
        raise BenchmarkFormatError(f"the file is {len(data):,} bytes; the limit is {MAX_BYTES:,} bytes", [])
    if not data.strip():
        raise BenchmarkFormatError("the file is empty", [])
    encoding = text_encoding(data)  # UTF-16/UTF-32 with a BOM hold NUL bytes and are text all the same
    if encoding == "utf-8" and b"\x00" in data[:4096]:
        raise BenchmarkFormatError("binary content (not a text result file)", [])
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise BenchmarkFormatError(
            f"not {encoding.upper().removesuffix('-SIG')} text (byte {error.start:,})", []
        ) from None
    if "\x00" in text:  # a NUL character cannot be stored (PostgreSQL text and jsonb refuse it)
        raise BenchmarkFormatError("binary content (not a text result file)", [])
    return text


def import_text(text: str) -> tuple[str, list[ImportedRun]]:
    """(format, runs) of a result file's text, or BenchmarkFormatError saying what each importer found. The text
    is parsed as JSON once for all the importers that read JSON; JSON nested deeper than JSON_MAX_DEPTH is
    refused before any importer reads it (a cut file's salvage would otherwise walk every level)."""
    if text.lstrip()[:1] in ("{", "[") and json_depth_exceeds(text) is not None:
        raise BenchmarkFormatError(
            f"the JSON is nested deeper than {JSON_MAX_DEPTH} levels (the limit, JSON_MAX_DEPTH): not a result file", []
        )
    try:
        return _import_text(text)
    finally:
        _parsed.clear()


def _import_text(text: str) -> tuple[str, list[ImportedRun]]:
    accepted: list[tuple[str, list[ImportedRun]]] = []
    tried: list[tuple[str, str]] = []
    for importer in IMPORTERS:
        try:
            runs = importer.read(text)
        except FormatRefusal as refusal:
            tried.append((importer.format, refusal.reason))
            continue
        if not runs:
            tried.append((importer.format, "recognised, but the file holds no run"))
            continue
        accepted.append((importer.format, runs))
    if len(accepted) == 1:
        return accepted[0]
    if accepted:
        names = ", ".join(name for name, _ in accepted)
        raise BenchmarkFormatError(f"more than one format reads this file ({names}); this is a bug to report", tried)
    raise BenchmarkFormatError("no importer reads this file: " + "; ".join(f"{f}: {r}" for f, r in tried), tried)


# ---------------------------------------------------------------------------------------------------------------
# Helpers the importers share


# the JSON of the text being imported, parsed once (importers must not change what they are given)
_parsed: dict[int, tuple[str, Any]] = {}


def load_json(text: str) -> Any:
    """JSON as Python; bare Infinity/NaN (SGLang) read as floats. FormatRefusal when it is not JSON, naming where
    it breaks (a cut file ends inside a value). Within `import_text` the text is parsed once."""
    cached = _parsed.get(id(text))
    if cached is not None and cached[0] is text:
        if isinstance(cached[1], FormatRefusal):
            raise cached[1]
        return cached[1]
    try:
        value = bounded_loads(text)
    except json.JSONDecodeError as error:
        # a string still open at the end ("Unterminated string starting at ...") is a cut file too
        cut = error.pos >= len(text.rstrip()) - 1 or error.msg.startswith("Unterminated string")
        message = error.msg.removesuffix(" at")
        where = "the file is cut short" if cut else f"at line {error.lineno}, column {error.colno}"
        refusal = FormatRefusal(f"not valid JSON ({message}: {where})")
        _parsed[id(text)] = (text, refusal)
        raise refusal from None
    _refuse_nul(text, value)
    _parsed[id(text)] = (text, value)
    return value


def json_lines(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-empty line of a JSON-lines text; FormatRefusal on a line that is not JSON
    (a cut last line says so)."""
    if "\n" not in text.strip():  # one line: the whole text, parsed once for every importer
        yield 1, load_json(text)
        return
    lines = text.splitlines()
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = bounded_loads(line)
        except json.JSONDecodeError as error:
            cut = " (the last line is cut short)" if number - 1 == last else ""
            raise FormatRefusal(f"line {number} is not JSON: {error.msg}{cut}") from None
        _refuse_nul(line, value, line_number=number)
        yield number, value


def _refuse_nul(text: str, value: Any, *, line_number: int | None = None) -> None:
    """BenchmarkFormatError (no importer may store it: PostgreSQL refuses NUL) when a JSON string holds \\u0000;
    the value is walked only when the text holds the escape."""
    if "\\u0000" not in text:
        return
    where = nul_path(value)
    if where is not None:
        line = f"line {line_number}: " if line_number is not None else ""
        raise BenchmarkFormatError(f"{line}{where} holds a NUL character (\\u0000): not a text result file", [])

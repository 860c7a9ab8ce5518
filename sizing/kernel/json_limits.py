"""The limits on JSON and text that the service reads, and the helpers every reader uses (no Django import: the
importers under benchmarks_app/results and sizing/fingerprint call them too).

Python's json module parses nesting recursively: ~1,000 levels (a 2 KB body) raise RecursionError, and code that
walks the parsed value recursively fails earlier. Depth is therefore checked by an iterative scan before parsing.
A NUL character cannot be stored in PostgreSQL text or jsonb ("A string literal cannot contain NUL"), so it is
refused where it comes in, naming the field. Files are decoded by their byte-order mark first: UTF-16 (as
PowerShell and Windows editors write) and UTF-8 with a BOM are text, not binary content.
"""

from __future__ import annotations

import codecs
import json
import re
from itertools import accumulate
from typing import Any

# The limits, in one place.
# Deepest real document read here: a GuideLLM or AIPerf result, ~8 levels; config.json, ~4. 64 leaves room for any
# tool's report and stays far below the ~1,000 levels at which Python's parser and recursive walkers fail.
JSON_MAX_DEPTH = 64
# A JSON request body: the largest legitimate one is a pasted startup log (2,000,000 characters, the bootlog API's
# max_length) with its escapes. Files go as multipart uploads, each with its own limit (SIZING_MAX_*_BYTES).
JSON_MAX_BODY_BYTES = 4 * 1024 * 1024

# A string, closed or running to the end of the text (a cut file), or a bracket; the unrolled form keeps it linear.
_BYTES_STRING = re.compile(rb'"[^"]*"?')
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_DELTA = [1 if byte in b"[{" else -1 if byte in b"]}" else 0 for byte in range(256)]
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


class JsonTooDeep(json.JSONDecodeError):
    """Nesting deeper than the limit; a JSONDecodeError, so every `except json.JSONDecodeError` reader refuses
    it as bad JSON, with a message that names the limit."""

    def __init__(self, doc: str, pos: int, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels (the limit)", doc, pos)
        self.max_depth = max_depth


def json_depth_exceeds(text: str, *, max_depth: int = JSON_MAX_DEPTH) -> int | None:
    """The character offset where `text`'s brackets nest deeper than `max_depth`, or None. Brackets inside strings
    do not count; unbalanced text (a cut file) counts its open brackets. Linear time, no recursion."""
    if text.count("[") + text.count("{") <= max_depth:
        return None
    # fast pass, in C: escapes dropped, then all but quotes and brackets, then the strings; then the deepest prefix
    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    data = _BYTES_STRING.sub(b"", data.translate(None, _NOT_STRUCTURE))
    if max(accumulate(map(_DELTA.__getitem__, data), initial=0)) <= max_depth:
        return None
    # too deep: find where in the text itself (the scan stops there, so a huge deep text costs little)
    depth = 0
    for match in _TOKEN.finditer(text):
        piece = match.group()
        if piece in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        elif piece in "]}":
            depth = max(depth - 1, 0)
    return None  # unreachable: both passes count the same brackets


def check_depth(text: str, *, max_depth: int = JSON_MAX_DEPTH) -> None:
    """JsonTooDeep when `text` nests deeper than `max_depth`."""
    offset = json_depth_exceeds(text, max_depth=max_depth)
    if offset is not None:
        raise JsonTooDeep(text, offset, max_depth)


def loads(text: str | bytes, *, max_depth: int = JSON_MAX_DEPTH, **kwargs: Any) -> Any:
    """json.loads after the depth check: JsonTooDeep (a JSONDecodeError) for nesting deeper than `max_depth`."""
    if isinstance(text, bytes | bytearray):
        text = decode_text(bytes(text))
    check_depth(text, max_depth=max_depth)
    return json.loads(text, **kwargs)


def nul_path(value: Any) -> str | None:
    """Where a NUL character lies in a parsed JSON value (keys or string values), as `a.b[2]`, or None. Iterative:
    the value may be as deep as the depth limit allows."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path or "the body"
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{key}" if path else str(key)
                if "\x00" in str(key):
                    return name.replace("\x00", "\\u0000")
                stack.append((name, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
    return None


# Byte-order marks, longest first (UTF-32's LE mark begins with UTF-16's).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def text_encoding(data: bytes) -> str:
    """The codec for a file's bytes: by its byte-order mark, else UTF-8."""
    for bom, encoding in _BOMS:
        # a UTF-16 LE text whose first character is NUL would read as UTF-32: NUL is refused later anyway
        if data.startswith(bom):
            return encoding
    return "utf-8"


def decode_text(data: bytes) -> str:
    """A file's bytes as text, by its byte-order mark (UTF-32, UTF-16, UTF-8 with BOM), else UTF-8, with the BOM
    removed. UnicodeDecodeError as from bytes.decode."""
    return data.decode(text_encoding(data))


def nul_offset(text: str) -> int | None:
    """The offset of the first NUL character in `text`, or None."""
    position = text.find("\x00")
    return None if position < 0 else position

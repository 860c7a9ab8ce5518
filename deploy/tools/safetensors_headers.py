#!/usr/bin/env python3
"""Read the JSON headers of a model's *.safetensors files and write them to one JSON file for the sizing service.

    python3 safetensors_headers.py MODEL_DIR [-o OUTPUT.json]      (default output: ./safetensors-headers.json)

What it reads: for each *.safetensors file directly in MODEL_DIR, the first 8 bytes (the header length, a
little-endian unsigned 64-bit integer) and the JSON header that follows (tensor names, dtypes, shapes and byte
offsets). It never reads tensor data, so no weights leave your site. It also copies model.safetensors.index.json
and config.json when they are present (small JSON files). When the index is present, only the files it names are
read (a directory may also hold e.g. a consolidated.safetensors with the same weights).

What it writes: OUTPUT.json only, and only when every file was read. Nothing else, no network.
Exit status: 0 on success, 2 when no file could be described (no *.safetensors files, a corrupt header, a header
length over 100,000,000 bytes - the limit safetensors itself enforces - or a file the index names but is missing).

Python 3.8 or newer, standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from typing import Any, BinaryIO

FORMAT = "safetensors-headers/1"
MAX_HEADER_BYTES = 100_000_000  # safetensors refuses longer headers (MAX_HEADER_SIZE)
MAX_JSON_FILE_BYTES = 100_000_000  # index and config are a few MB at most
LENGTH_PREFIX_BYTES = 8  # u64, little-endian
INDEX_NAME = "model.safetensors.index.json"
CONFIG_NAME = "config.json"
EXIT_FAILED = 2


class HeaderError(Exception):
    """A file this script cannot describe; the message names the file."""


def read_header(handle: BinaryIO, *, name: str, size_bytes: int) -> tuple[int, dict[str, Any]]:
    """Return (header_bytes, header dict) from an open binary file, reading only the length prefix and the header.

    `handle.read` is called at most twice: 8 bytes, then the header's length. The tensor data is never read.
    """
    prefix = handle.read(LENGTH_PREFIX_BYTES)
    if len(prefix) != LENGTH_PREFIX_BYTES:
        raise HeaderError(f"{name}: only {len(prefix)} bytes long, shorter than the 8-byte header length")
    (header_bytes,) = struct.unpack("<Q", prefix)
    if header_bytes > MAX_HEADER_BYTES:
        raise HeaderError(
            f"{name}: header length {header_bytes:,} bytes is over the {MAX_HEADER_BYTES:,}-byte "
            "limit safetensors enforces; refusing this file (corrupt, or not a safetensors file)"
        )
    if LENGTH_PREFIX_BYTES + header_bytes > size_bytes:
        raise HeaderError(
            f"{name}: header length {header_bytes:,} bytes runs past the end of the "
            f"{size_bytes:,}-byte file (corrupt or truncated)"
        )
    raw = handle.read(header_bytes)
    if len(raw) != header_bytes:
        raise HeaderError(f"{name}: could read only {len(raw):,} of its {header_bytes:,} header bytes")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeaderError(f"{name}: the header is not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise HeaderError(f"{name}: the header is JSON but not an object")
    return header_bytes, header


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def describe_file(path: str) -> dict[str, Any]:
    """The entry of one safetensors file in the output: sizes, __metadata__ and tensors as the header states them."""
    name = os.path.basename(path)
    size_bytes = os.stat(path).st_size
    with open(path, "rb") as handle:
        header_bytes, header = read_header(handle, name=name, size_bytes=size_bytes)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise HeaderError(f"{name}: __metadata__ is not an object")
    tensors = {}
    for tensor_name, entry in header.items():
        if not isinstance(entry, dict):
            raise HeaderError(f"{name}: tensor {tensor_name!r} is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str):
            raise HeaderError(f"{name}: tensor {tensor_name!r} has no dtype")
        if not isinstance(shape, list) or not all(_is_count(dim) for dim in shape):
            raise HeaderError(f"{name}: tensor {tensor_name!r} has no valid shape")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(_is_count(o) for o in offsets)
            or offsets[1] < offsets[0]
        ):
            raise HeaderError(f"{name}: tensor {tensor_name!r} has no valid data_offsets [begin, end]")
        tensors[tensor_name] = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
    return {"size_bytes": size_bytes, "header_bytes": header_bytes, "metadata": metadata, "tensors": tensors}


def read_small_json(path: str) -> Any:
    """The parsed content of a small JSON file (index, config), or None when absent."""
    if not os.path.isfile(path):
        return None
    name = os.path.basename(path)
    if os.stat(path).st_size > MAX_JSON_FILE_BYTES:
        raise HeaderError(f"{name}: over {MAX_JSON_FILE_BYTES:,} bytes, not a model's {name}")
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeaderError(f"{name}: not valid JSON ({exc})") from exc


def collect(model_dir: str) -> tuple[dict[str, Any], list[str]]:
    """The output document and the warnings for people, or HeaderError."""
    if not os.path.isdir(model_dir):
        raise HeaderError(f"{model_dir}: not a directory")
    index = read_small_json(os.path.join(model_dir, INDEX_NAME))
    config = read_small_json(os.path.join(model_dir, CONFIG_NAME))
    names = sorted(
        entry
        for entry in os.listdir(model_dir)
        if entry.endswith(".safetensors") and os.path.isfile(os.path.join(model_dir, entry))
    )
    if not names:
        raise HeaderError(
            f"{model_dir}: no *.safetensors files here; run this in the directory that holds the "
            "model's weights (the one with config.json)"
        )
    skipped: dict[str, str] = {}
    if isinstance(index, dict) and isinstance(index.get("weight_map"), dict):
        indexed = {value for value in index["weight_map"].values() if isinstance(value, str)}
        missing = sorted(indexed - set(names))
        if missing:
            raise HeaderError(
                f"{INDEX_NAME} names {len(indexed)} files and {len(missing)} are missing here: "
                f"{', '.join(missing)}; run this in the complete checkpoint directory"
            )
        skipped = {name: f"not named by {INDEX_NAME}" for name in names if name not in indexed}
        names = [name for name in names if name in indexed]
    files = {name: describe_file(os.path.join(model_dir, name)) for name in names}

    warnings: list[str] = []
    for name, entry in files.items():
        data_end = max((t["data_offsets"][1] for t in entry["tensors"].values()), default=0)
        expected = LENGTH_PREFIX_BYTES + entry["header_bytes"] + data_end
        if entry["size_bytes"] < expected:
            warnings.append(
                f"{name} is {entry['size_bytes']:,} bytes but its header describes {expected:,}: "
                "truncated (an incomplete download?)"
            )
    for name, why in skipped.items():
        warnings.append(f"skipped {name}: {why}")
    document = {
        "format": FORMAT,
        "directory_name": os.path.basename(os.path.abspath(model_dir)),
        "files": files,
        "skipped_files": skipped,
        "index": index,
        "config": config,
    }
    return document, warnings


def summary_lines(document: dict[str, Any]) -> list[str]:
    """Files, tensors and bytes per dtype (from data_offsets), largest first."""
    bytes_by_dtype: dict[str, int] = {}
    tensors = 0
    for entry in document["files"].values():
        for tensor in entry["tensors"].values():
            begin, end = tensor["data_offsets"]
            bytes_by_dtype[tensor["dtype"]] = bytes_by_dtype.get(tensor["dtype"], 0) + end - begin
            tensors += 1
    files = len(document["files"])
    lines = [
        f"{files} file{'' if files == 1 else 's'}, {tensors} tensor{'' if tensors == 1 else 's'}, "
        f"{sum(bytes_by_dtype.values()):,} bytes of tensors"
    ]
    for dtype, n_bytes in sorted(bytes_by_dtype.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  {dtype:<8} {n_bytes:>20,} bytes  ({n_bytes / 2**30:.2f} GiB)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write the JSON headers of a model's *.safetensors files (never the weights) to one JSON file."
    )
    parser.add_argument("model_dir", metavar="MODEL_DIR", help="the directory with the model's *.safetensors files")
    parser.add_argument(
        "-o",
        "--output",
        default="safetensors-headers.json",
        help="where to write the JSON (default: ./safetensors-headers.json)",
    )
    args = parser.parse_args(argv)
    try:
        document, warnings = collect(args.model_dir)
    except (HeaderError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return EXIT_FAILED
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    text = json.dumps(document, indent=1) + "\n"
    try:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"wrote {os.path.abspath(args.output)}")
    for line in summary_lines(document):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

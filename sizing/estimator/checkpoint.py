"""Checkpoint facts: what a real checkpoint holds, read from its `model.safetensors.index.json` and, when the
customer runs `deploy/tools/safetensors_headers.py`, from the JSON headers of its `*.safetensors` files.

DESIGN §4: the index's `metadata.total_size` is the checkpoint's exact size; the estimate uses it and shows
the difference from the computed figure. Headers add exact bytes and elements per dtype (no weights leave
the customer's site: the script reads only each file's 8-byte header length and JSON header).

>>> facts = checkpoint_from_index({"metadata": {"total_size": 13476839424}, "weight_map": {
...     "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
...     "model.layers.0.self_attn.rotary_emb.inv_freq": "model-00001-of-00002.safetensors",
...     "lm_head.weight": "model-00002-of-00002.safetensors"}})
>>> facts.total_size_bytes, facts.tensor_count, facts.file_count
(13476839424, 3, 2)
>>> comparison = checkpoint_compare(facts, computed_weight_bytes=13476831232, computed_parameters=6738415616)
>>> comparison["weights"]["difference_bytes"]  # Llama-2-7B: 32 layers x 64 fp32 inv_freq values x 4 bytes
8192
>>> what, why = comparison["weights"]["explanation"].split(": ", 1)
>>> what
'the checkpoint holds 8,192 bytes more than the computed weights'
>>> why
'non-weight buffers such as rotary inv_freq (1 tensor) are stored in it but hold no weights'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.units import GiB, MiB, format_bytes

HEADERS_FORMAT = "safetensors-headers/1"
"""The `format` of the JSON that `deploy/tools/safetensors_headers.py` writes (see `checkpoint_from_headers`)."""

SOURCE_INDEX = "index"
SOURCE_HEADERS = "headers"
SOURCE_INDEX_AND_HEADERS = "index+headers"

# Quantisation recipes recognised from tensor names (and, with headers, dtypes).
HINT_GPTQ_AWQ = "GPTQ/AWQ packed int4"
HINT_MLX = "MLX affine quantised (packed uint32)"
HINT_MXFP4 = "MXFP4"
HINT_NVFP4 = "NVFP4"
HINT_COMPRESSED_PACKED = "compressed-tensors packed int"
HINT_FP8_SCALES = "FP8 scales"
HINT_INT8_SCALES = "INT8 scales"
HINT_BNB_4BIT = "bitsandbytes 4-bit (NF4/FP4)"
HINT_BNB_INT8 = "bitsandbytes INT8"

# Recipes that store several weights in one element (or in sub-byte dtypes): stored elements are not parameters.
PACKED_HINTS: frozenset[str] = frozenset(
    {HINT_GPTQ_AWQ, HINT_MLX, HINT_MXFP4, HINT_NVFP4, HINT_COMPRESSED_PACKED, HINT_BNB_4BIT}
)

# Tensors saved in checkpoints that are buffers, not weights (the estimate counts weights only).
_BUFFER_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("inv_freq", "rotary inv_freq"),
    ("position_ids", "position_ids"),
    (".masked_bias", "attention masked_bias"),
    (".running_mean", "batch-norm running statistics"),
    (".running_var", "batch-norm running statistics"),
    (".num_batches_tracked", "batch-norm running statistics"),
)

_RELATIVE_SMALL = 0.01  # below 1% a difference is small tensors, not whole modules or a different dtype


class SafetensorsDType(Enum):
    """A dtype name of the safetensors format with its size in bits (`.bits`); names as the format spells them."""

    BOOL = ("BOOL", 8)
    U8 = ("U8", 8)
    I8 = ("I8", 8)
    F8_E4M3 = ("F8_E4M3", 8)
    F8_E5M2 = ("F8_E5M2", 8)
    F8_E8M0 = ("F8_E8M0", 8)  # MX block scales
    I16 = ("I16", 16)
    U16 = ("U16", 16)
    F16 = ("F16", 16)
    BF16 = ("BF16", 16)
    I32 = ("I32", 32)
    U32 = ("U32", 32)
    F32 = ("F32", 32)
    I64 = ("I64", 64)
    U64 = ("U64", 64)
    F64 = ("F64", 64)
    C64 = ("C64", 64)  # complex of two F32
    F4 = ("F4", 4)  # E2M1, two per byte
    F6_E2M3 = ("F6_E2M3", 6)
    F6_E3M2 = ("F6_E3M2", 6)

    def __init__(self, spelling: str, bits: int) -> None:
        self.spelling = spelling
        self.bits = bits


_DTYPES_BY_SPELLING: dict[str, SafetensorsDType] = {d.spelling: d for d in SafetensorsDType}


@dataclass(frozen=True, kw_only=True)
class CheckpointFacts:
    """What a checkpoint holds, from its index, its safetensors headers, or both (`source`)."""

    total_size_bytes: int | None  # the index's metadata.total_size; None from headers alone
    tensor_count: int
    file_count: int
    tensors_by_file: dict[str, int]  # file name -> tensors it holds
    bytes_by_dtype: dict[str, int] | None  # safetensors dtype -> bytes of its tensors (headers only)
    elements_by_dtype: dict[str, int] | None  # safetensors dtype -> elements of its tensors (headers only)
    parameters: int | None  # elements of all tensors (headers), else the index's metadata.total_parameters
    quantization_hints: tuple[str, ...]
    buffer_tensor_count: int  # tensors that are buffers, not weights (rotary inv_freq, ...)
    buffer_labels: tuple[str, ...]  # what those buffers are, for explanations
    buffer_bytes: int | None  # their bytes (headers only)
    source: str  # "index" | "headers" | "index+headers"
    warnings: tuple[str, ...]

    @property
    def actual_bytes(self) -> int:
        """The checkpoint's exact size: the index's total_size, else the sum of tensor bytes in the headers."""
        if self.total_size_bytes is not None:
            return self.total_size_bytes
        return sum((self.bytes_by_dtype or {}).values())  # facts from headers always carry bytes per dtype


# --- parsing helpers ----------------------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages people read."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | Decimal):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _index_error(message: str) -> SizingError:
    return SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"index": [message]}})


def _headers_error(message: str) -> SizingError:
    return SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"headers": [message]}})


def _integral(value: Any) -> int | None:
    """`value` as an int when it is a whole number (an int, an integral float, or a string of one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float | str):
        try:
            # Decimal reads "16060522496", "16060522496.0" and 1.6060522496e10 exactly (float() would round)
            number = Decimal(value.strip() if isinstance(value, str) else value)
        except (InvalidOperation, ValueError):
            return None
        if not number.is_finite() or number != number.to_integral_value():
            return None
        return int(number)
    return None


def _byte_count(metadata: Mapping[str, Any], key: str) -> int:
    """A non-negative whole number under `metadata[key]` of an index, or a SizingError naming the key."""
    raw = metadata[key]
    value = _integral(raw)
    if value is None:
        raise _index_error(f"metadata.{key} must be a whole number, got {_json_type(raw)} {raw!r}")
    if value < 0:
        raise _index_error(f"metadata.{key} must not be negative, got {value}")
    return value


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _buffers(names: Iterable[str]) -> tuple[list[str], tuple[str, ...]]:
    """Names of tensors that are buffers, not weights, and the labels of their kinds in first-seen order."""
    found: list[str] = []
    labels: list[str] = []
    for name in names:
        for suffix, label in _BUFFER_SUFFIXES:
            if name.endswith(suffix):
                found.append(name)
                if label not in labels:
                    labels.append(label)
                break
    return found, tuple(labels)


def _quantization_hints(dtype_by_name: Mapping[str, str | None]) -> tuple[str, ...]:
    """Recipes recognised from tensor names; `dtype_by_name` values are None when only the index is known.

    `.scales` alone does not mean GPTQ/AWQ (MLX stores `.scales` and `.biases`), so GPTQ/AWQ needs `.qweight`,
    `.qzeros` or `.g_idx`. A `.weight_scale` beside an I8 `.weight` is INT8 (W8A8), else FP8: the index alone
    cannot tell them apart and says FP8.
    """
    names = list(dtype_by_name)
    hints: list[str] = []

    def any_end(*suffixes: str) -> bool:
        return any(name.endswith(suffixes) for name in names)

    if any_end(".qweight", ".qzeros", ".g_idx"):
        hints.append(HINT_GPTQ_AWQ)
    elif any_end(".scales") and any_end(".biases"):
        hints.append(HINT_MLX)
    if any_end("_blocks") and any_end("_scales"):
        hints.append(HINT_MXFP4)  # gpt-oss experts: <proj>_blocks (U8, two FP4 per byte) + <proj>_scales (E8M0)
    nvfp4 = any_end(".weight_scale_2", ".weight_global_scale")  # ModelOpt / compressed-tensors NVFP4
    if nvfp4:
        hints.append(HINT_NVFP4)
    packed = any_end(".weight_packed")
    if packed and not nvfp4:
        hints.append(HINT_COMPRESSED_PACKED)
    if any_end(".weight_scale_inv"):
        hints.append(HINT_FP8_SCALES)  # block-wise FP8 (DeepSeek-V3 style)
    scaled = [name for name in names if name.endswith(".weight_scale")]
    if scaled and not nvfp4 and not packed:
        int8 = any(dtype_by_name.get(name.removesuffix("_scale")) == SafetensorsDType.I8.spelling for name in scaled)
        hint = HINT_INT8_SCALES if int8 else HINT_FP8_SCALES
        if hint not in hints:
            hints.append(hint)
    if any(".absmax" in name or ".quant_state.bitsandbytes__" in name for name in names):
        hints.append(HINT_BNB_4BIT)
    if any_end(".SCB"):
        hints.append(HINT_BNB_INT8)
    return tuple(hints)


def _packed_warning(hints: tuple[str, ...]) -> list[str]:
    packed = [hint for hint in hints if hint in PACKED_HINTS]
    if not packed:
        return []
    return [
        f"parameters counts stored elements; {', '.join(packed)} store several weights per element, "
        "so it is not the model's parameter count"
    ]


# --- index ---------------------------------------------------------------------------------------------------


def checkpoint_from_index(index: Mapping[str, Any]) -> CheckpointFacts:
    """Read a `model.safetensors.index.json`: its exact size (`metadata.total_size`) and tensor map.

    `total_size` may be an integral float or a string of a whole number (some exporters write those); anything
    else raises SizingError(INVALID_ARGUMENT) with the message under `extra.fields.index`. A
    `metadata.total_parameters` (newer transformers write it) becomes `parameters`.
    """
    if not isinstance(index, Mapping):
        raise _index_error(f"the index must be a JSON object with metadata and weight_map, got {_json_type(index)}")
    if "metadata" not in index or index["metadata"] is None:
        raise _index_error(
            "metadata is missing: a model.safetensors.index.json holds "
            '{"metadata": {"total_size": ...}, "weight_map": {...}}'
        )
    metadata = index["metadata"]
    if not isinstance(metadata, Mapping):
        raise _index_error(f"metadata must be an object, got {_json_type(metadata)}")
    if "total_size" not in metadata or metadata["total_size"] is None:
        raise _index_error("metadata.total_size is missing: it is the checkpoint's size in bytes")
    total_size_bytes = _byte_count(metadata, "total_size")
    parameters = None
    if metadata.get("total_parameters") is not None:
        parameters = _byte_count(metadata, "total_parameters")

    if "weight_map" not in index or index["weight_map"] is None:
        raise _index_error("weight_map is missing: it maps each tensor name to the file that holds it")
    weight_map = index["weight_map"]
    if not isinstance(weight_map, Mapping):
        raise _index_error(f"weight_map must be an object of tensor name to file name, got {_json_type(weight_map)}")
    if not weight_map:
        raise _index_error("weight_map is empty: the index names no tensors")
    tensors_by_file: dict[str, int] = {}
    for name, file_name in weight_map.items():
        if not isinstance(name, str) or not name:
            raise _index_error(f"weight_map keys must be tensor names, got {name!r}")
        if not isinstance(file_name, str) or not file_name:
            raise _index_error(f"weight_map[{name!r}] must be a file name, got {_json_type(file_name)} {file_name!r}")
        tensors_by_file[file_name] = tensors_by_file.get(file_name, 0) + 1

    buffer_names, buffer_labels = _buffers(weight_map)
    return CheckpointFacts(
        total_size_bytes=total_size_bytes,
        tensor_count=len(weight_map),
        file_count=len(tensors_by_file),
        tensors_by_file=dict(sorted(tensors_by_file.items())),
        bytes_by_dtype=None,
        elements_by_dtype=None,
        parameters=parameters,
        quantization_hints=_quantization_hints(dict.fromkeys(weight_map)),
        buffer_tensor_count=len(buffer_names),
        buffer_labels=buffer_labels,
        buffer_bytes=None,
        source=SOURCE_INDEX,
        warnings=(),
    )


# --- headers -------------------------------------------------------------------------------------------------


def _non_negative_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _headers_error(f"{where} must be a whole number, got {_json_type(value)} {value!r}")
    if value < 0:
        raise _headers_error(f"{where} must not be negative, got {value}")
    number: int = value
    return number


@dataclass(frozen=True, kw_only=True)
class _Tensor:
    name: str
    dtype: str
    elements: int
    begin: int
    end: int


def _tensor(file_name: str, name: str, entry: Any) -> _Tensor:
    where = f"{file_name}: tensor {name!r}"
    if not isinstance(entry, Mapping):
        raise _headers_error(f"{where} must be an object with dtype, shape and data_offsets, got {_json_type(entry)}")
    dtype = entry.get("dtype")
    if not isinstance(dtype, str) or not dtype:
        raise _headers_error(f"{where}: dtype must be a name such as BF16, got {_json_type(dtype)} {dtype!r}")
    shape = entry.get("shape")
    if not isinstance(shape, list | tuple):
        raise _headers_error(f"{where}: shape must be an array of dimensions, got {_json_type(shape)} {shape!r}")
    dims = [_non_negative_int(dim, f"{where}: each shape dimension") for dim in shape]
    offsets = entry.get("data_offsets")
    if not isinstance(offsets, list | tuple) or len(offsets) != 2:  # [begin, end]
        raise _headers_error(f"{where}: data_offsets must be [begin, end], got {offsets!r}")
    begin = _non_negative_int(offsets[0], f"{where}: data_offsets begin")
    end = _non_negative_int(offsets[1], f"{where}: data_offsets end")
    if end < begin:
        raise _headers_error(f"{where}: data_offsets end {end} is before begin {begin}")
    return _Tensor(name=name, dtype=dtype, elements=math.prod(dims), begin=begin, end=end)  # [] is a scalar: 1


def _file_tensors(file_name: str, entry: Any) -> tuple[list[_Tensor], list[str]]:
    """The tensors of one file of the headers JSON and the warnings about that file's layout."""
    if not isinstance(entry, Mapping):
        raise _headers_error(
            f"{file_name} must be an object with size_bytes, header_bytes and tensors, got {_json_type(entry)}"
        )
    size_bytes = _non_negative_int(entry.get("size_bytes"), f"{file_name}: size_bytes")
    header_bytes = _non_negative_int(entry.get("header_bytes"), f"{file_name}: header_bytes")
    raw_tensors = entry.get("tensors")
    if not isinstance(raw_tensors, Mapping):
        raise _headers_error(
            f"{file_name}: tensors must be an object of tensor name to dtype, shape and "
            f"data_offsets, got {_json_type(raw_tensors)}"
        )
    tensors = [_tensor(file_name, name, raw) for name, raw in raw_tensors.items() if name != "__metadata__"]

    warnings: list[str] = []
    data_end = max((t.end for t in tensors), default=0)
    expected_size = 8 + header_bytes + data_end  # 8-byte header length, the JSON header, the tensor data
    if size_bytes < expected_size:
        warnings.append(
            f"{file_name} is {size_bytes:,} bytes but its header describes {expected_size:,}: "
            "the file is truncated (an incomplete download?)"
        )
    elif size_bytes > expected_size:
        warnings.append(
            f"{file_name} has {size_bytes - expected_size:,} bytes after its last tensor, "
            "which safetensors loaders refuse"
        )
    cursor = 0
    for tensor in sorted(tensors, key=lambda t: (t.begin, t.end)):
        if tensor.begin != cursor:
            warnings.append(
                f"{file_name}: tensor data_offsets leave gaps or overlap (at {tensor.name!r}, "
                f"offset {tensor.begin:,}, expected {cursor:,})"
            )
            break
        cursor = tensor.end
    return tensors, warnings


def checkpoint_from_headers(headers: Mapping[str, Any]) -> CheckpointFacts:
    """Read the JSON `deploy/tools/safetensors_headers.py` writes: exact bytes and elements per dtype.

    Schema (`format` "safetensors-headers/1")::

        {"format": "safetensors-headers/1",
         "directory_name": "Meta-Llama-3-8B",
         "files": {"model-00001-of-00004.safetensors": {
             "size_bytes": 4976698672,          # the file's size on disk
             "header_bytes": 23496,             # N, the JSON header's length (the file starts with 8 + N bytes)
             "metadata": {"format": "pt"},      # the header's __metadata__ ({} when absent)
             "tensors": {"model.embed_tokens.weight":
                         {"dtype": "BF16", "shape": [128256, 4096], "data_offsets": [0, 1050673152]}}}},
         "skipped_files": {"consolidated.safetensors": "not named by model.safetensors.index.json"},
         "index": {...} or null,                # model.safetensors.index.json as found beside the files
         "config": {...} or null}               # config.json as found beside the files

    Bytes per dtype come from data_offsets (end - begin), elements from shapes. For dtypes of known size the
    two must agree (elements x bits / 8); each disagreement is a warning, and a dtype of unknown size is
    trusted from its offsets, with a warning. `index` and `config` are not read here: pass `headers["index"]`
    to `checkpoint_from_index` and merge the two with `checkpoint_merge`.
    """
    if not isinstance(headers, Mapping):
        raise _headers_error(f"the headers must be a JSON object, got {_json_type(headers)}")
    if headers.get("format") != HEADERS_FORMAT:
        raise _headers_error(
            f"format must be {HEADERS_FORMAT!r} (the JSON deploy/tools/safetensors_headers.py "
            f"writes), got {headers.get('format')!r}"
        )
    files = headers.get("files")
    if not isinstance(files, Mapping):
        raise _headers_error(f"files must be an object of file name to header, got {_json_type(files)}")
    if not files:
        raise _headers_error("files is empty: the headers describe no safetensors file")

    warnings: list[str] = []
    tensors_by_file: dict[str, int] = {}
    bytes_by_dtype: dict[str, int] = {}
    elements_by_dtype: dict[str, int] = {}
    dtype_by_name: dict[str, str | None] = {}
    mismatches: list[str] = []
    unknown: dict[str, int] = {}  # dtype -> tensors
    buffer_bytes = 0
    for file_name in sorted(files):
        tensors, file_warnings = _file_tensors(file_name, files[file_name])
        warnings.extend(file_warnings)
        tensors_by_file[file_name] = len(tensors)
        for tensor in tensors:
            span_bytes = tensor.end - tensor.begin
            bytes_by_dtype[tensor.dtype] = bytes_by_dtype.get(tensor.dtype, 0) + span_bytes
            elements_by_dtype[tensor.dtype] = elements_by_dtype.get(tensor.dtype, 0) + tensor.elements
            if tensor.name in dtype_by_name:
                warnings.append(f"tensor {tensor.name!r} appears in more than one file (again in {file_name})")
            dtype_by_name[tensor.name] = tensor.dtype
            known = _DTYPES_BY_SPELLING.get(tensor.dtype)
            if known is None:
                unknown[tensor.dtype] = unknown.get(tensor.dtype, 0) + 1
                continue
            expected_bits = tensor.elements * known.bits
            if expected_bits % 8 or expected_bits // 8 != span_bytes:  # 8 bits a byte
                expected = f"{expected_bits // 8:,}" if expected_bits % 8 == 0 else f"{expected_bits / 8:,}"
                mismatches.append(
                    f"{file_name}: {tensor.name!r} is {tensor.dtype} with {tensor.elements:,} "
                    f"elements ({expected} bytes) but its data_offsets span {span_bytes:,} bytes"
                )
        file_buffers = set(_buffers(t.name for t in tensors)[0])
        buffer_bytes += sum(t.end - t.begin for t in tensors if t.name in file_buffers)
    warnings.extend(mismatches)
    for dtype, count in sorted(unknown.items()):
        warnings.append(
            f"dtype {dtype!r} ({_plural(count, 'tensor')}) has no known size: its bytes are taken "
            "from data_offsets and its elements from shapes, unchecked"
        )
    skipped = headers.get("skipped_files")
    if isinstance(skipped, Mapping) and skipped:
        warnings.append(
            f"the script skipped {_plural(len(skipped), 'file')}: "
            + "; ".join(f"{name} ({why})" for name, why in sorted(skipped.items()))
        )

    hints = _quantization_hints(dtype_by_name)
    warnings.extend(_packed_warning(hints))
    buffer_names, buffer_labels = _buffers(dtype_by_name)
    return CheckpointFacts(
        total_size_bytes=None,
        tensor_count=sum(tensors_by_file.values()),
        file_count=len(tensors_by_file),
        tensors_by_file=tensors_by_file,
        bytes_by_dtype=_by_size(bytes_by_dtype),
        elements_by_dtype=_by_size(elements_by_dtype),
        parameters=sum(elements_by_dtype.values()),
        quantization_hints=hints,
        buffer_tensor_count=len(buffer_names),
        buffer_labels=buffer_labels,
        buffer_bytes=buffer_bytes,
        source=SOURCE_HEADERS,
        warnings=tuple(warnings),
    )


def _by_size(counts: Mapping[str, int]) -> dict[str, int]:
    """Largest first, then by name: the order people read a per-dtype table in."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


# --- merge and compare ---------------------------------------------------------------------------------------


def checkpoint_merge(index_facts: CheckpointFacts, header_facts: CheckpointFacts) -> CheckpointFacts:
    """Combine an index (the exact size, which files make the checkpoint) with headers (per-dtype detail).

    The index's total_size stays the checkpoint's size; the headers give bytes and elements per dtype. Every
    disagreement (total size, files, tensors per file, parameters) is a warning, never silently resolved.
    """
    if index_facts.source != SOURCE_INDEX or header_facts.source != SOURCE_HEADERS:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=f"checkpoint_merge needs facts from an index and from headers, got {index_facts.source!r} "
            f"and {header_facts.source!r}",
        )
    warnings = [*index_facts.warnings, *header_facts.warnings]

    header_total_bytes = header_facts.actual_bytes
    difference_bytes = header_total_bytes - index_facts.actual_bytes
    if difference_bytes:
        warnings.append(
            f"the index's metadata.total_size is {index_facts.actual_bytes:,} bytes but the safetensors "
            f"headers hold {header_total_bytes:,} bytes of tensors ({abs(difference_bytes):,} "
            f"{'more' if difference_bytes > 0 else 'fewer'}): the size shown is the index's"
        )

    index_files, header_files = set(index_facts.tensors_by_file), set(header_facts.tensors_by_file)
    missing = sorted(index_files - header_files)
    extra = sorted(header_files - index_files)
    if missing:
        warnings.append(
            f"the headers cover {len(index_files) - len(missing)} of the {len(index_files)} files "
            f"the index names; missing: {', '.join(missing)}"
        )
    if extra:
        warnings.append(
            f"the headers include {_plural(len(extra), 'file')} the index does not name: {', '.join(extra)}"
        )
    for file_name in sorted(index_files & header_files):
        in_index, in_header = index_facts.tensors_by_file[file_name], header_facts.tensors_by_file[file_name]
        if in_index != in_header:
            warnings.append(
                f"{file_name}: the index maps {_plural(in_index, 'tensor')} to it, its header holds {in_header:,}"
            )

    parameters = header_facts.parameters
    if index_facts.parameters is not None and index_facts.parameters != parameters:
        warnings.append(
            f"the index's metadata.total_parameters is {index_facts.parameters:,} but the headers "
            f"hold {parameters:,} elements"
        )

    # Header hints saw dtypes too (INT8 vs FP8 scales); index hints only add what files missing from the headers show.
    hints = list(header_facts.quantization_hints)
    for hint in index_facts.quantization_hints:
        if hint not in hints and not (hint == HINT_FP8_SCALES and HINT_INT8_SCALES in hints):
            hints.append(hint)

    return CheckpointFacts(
        total_size_bytes=index_facts.total_size_bytes,
        tensor_count=index_facts.tensor_count,
        file_count=index_facts.file_count,
        tensors_by_file=index_facts.tensors_by_file,
        bytes_by_dtype=header_facts.bytes_by_dtype,
        elements_by_dtype=header_facts.elements_by_dtype,
        parameters=parameters,
        quantization_hints=tuple(hints),
        buffer_tensor_count=max(index_facts.buffer_tensor_count, header_facts.buffer_tensor_count),
        buffer_labels=header_facts.buffer_labels or index_facts.buffer_labels,
        buffer_bytes=header_facts.buffer_bytes,
        source=SOURCE_INDEX_AND_HEADERS,
        warnings=tuple(warnings),
    )


def _human_bytes(n_bytes: int) -> str:
    """` (1.50 GiB)` beside a large byte count, nothing beside a small one."""
    if n_bytes >= GiB:
        return f" ({format_bytes(n_bytes, 'GiB')})"
    if n_bytes >= MiB:
        return f" ({format_bytes(n_bytes, 'MiB')})"
    return ""


def _buffer_reason(facts: CheckpointFacts, *, with_bytes: bool) -> str:
    kinds = ", ".join(facts.buffer_labels)
    numbers = _plural(facts.buffer_tensor_count, "tensor")
    if with_bytes and facts.buffer_bytes is not None:
        numbers += f", {facts.buffer_bytes:,} bytes"
    return f"non-weight buffers such as {kinds} ({numbers})"


def _weights_explanation(facts: CheckpointFacts, difference_bytes: int, relative: float | None) -> str | None:
    if difference_bytes == 0:
        return None
    amount = f"{abs(difference_bytes):,} bytes{_human_bytes(abs(difference_bytes))}"
    packed = [hint for hint in facts.quantization_hints if hint in PACKED_HINTS or hint.endswith("scales")]
    if difference_bytes > 0:
        head = f"the checkpoint holds {amount} more than the computed weights"
        if facts.buffer_tensor_count:
            reason = f"{_buffer_reason(facts, with_bytes=True)} are stored in it but hold no weights"
        elif packed:
            reason = (
                f"the quantisation metadata ({', '.join(packed)}: scales, zero points, group indices) or the "
                "tensors the recipe keeps in 16 bits take more than the chosen weight format assumes"
            )
        elif relative is not None and abs(relative) < _RELATIVE_SMALL:
            reason = "small tensors the estimate does not count, such as biases, extra norms or non-weight buffers"
        else:
            reason = (
                "weights the estimate does not count (an untied output head, a vision tower or a "
                "multi-token-prediction module) or tensors stored in a wider dtype than assumed"
            )
            if facts.bytes_by_dtype:
                reason += "; by dtype it holds " + ", ".join(
                    f"{dtype} {n:,} bytes" for dtype, n in facts.bytes_by_dtype.items()
                )
        return f"{head}: {reason}"
    head = f"the checkpoint holds {amount} fewer than the computed weights"
    if packed:
        reason = (
            f"it is quantised ({', '.join(packed)}) more than the chosen weight format assumes: "
            "choose the format that matches the checkpoint"
        )
    else:
        reason = (
            "the output head may be tied to the embeddings and stored once, the estimate may count "
            "modules this checkpoint omits, or it assumes a wider dtype than the checkpoint's"
        )
    return f"{head}: {reason}"


def _parameters_explanation(facts: CheckpointFacts, difference: int | None) -> str | None:
    if difference is None:
        return (
            "the checkpoint's parameter count is unknown: the safetensors headers "
            "(deploy/tools/safetensors_headers.py) give it"
        )
    if difference == 0:
        return None
    packed = [hint for hint in facts.quantization_hints if hint in PACKED_HINTS]
    if packed:
        return (
            f"the checkpoint stores {abs(difference):,} {'more' if difference > 0 else 'fewer'} elements "
            f"than the computed parameters: {', '.join(packed)} pack several weights into one stored "
            "element and add scales, so stored elements are not parameters; compare bytes instead"
        )
    if difference > 0:
        head = f"the checkpoint holds {difference:,} more elements than the computed parameters"
        if facts.buffer_tensor_count:
            return f"{head}: {_buffer_reason(facts, with_bytes=False)} hold elements that are not parameters"
        return f"{head}: tensors the estimate does not count, such as an untied output head, biases or extra modules"
    return (
        f"the checkpoint holds {-difference:,} fewer elements than the computed parameters: the output head "
        "may be tied to the embeddings and stored once, or the estimate counts modules this checkpoint omits"
    )


def checkpoint_compare(
    facts: CheckpointFacts, *, computed_weight_bytes: int, computed_parameters: int
) -> dict[str, Any]:
    """Actual versus computed weight bytes and parameters, as JSON-ready data for the estimate.

    Differences are actual - computed (positive: the checkpoint holds more); `relative_difference` is that
    difference over the computed figure (None when the computed figure is 0). `explanation` is a plain-English
    likely cause, None when the figures agree. The actual size is the index's total_size, else the headers' sum.
    """
    for name, value in (("computed_weight_bytes", computed_weight_bytes), ("computed_parameters", computed_parameters)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            message = f"{name} must be a non-negative whole number, got {value!r}"
            raise SizingError(
                code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {name: [message]}}
            )

    actual_bytes = facts.actual_bytes
    difference_bytes = actual_bytes - computed_weight_bytes
    relative_bytes = difference_bytes / computed_weight_bytes if computed_weight_bytes else None

    actual_parameters = facts.parameters
    difference_parameters = None if actual_parameters is None else actual_parameters - computed_parameters
    relative_parameters = (
        difference_parameters / computed_parameters
        if difference_parameters is not None and computed_parameters
        else None
    )
    return {
        "source": facts.source,
        "weights": {
            "actual_bytes": actual_bytes,
            "computed_bytes": computed_weight_bytes,
            "difference_bytes": difference_bytes,
            "relative_difference": relative_bytes,
            "explanation": _weights_explanation(facts, difference_bytes, relative_bytes),
        },
        "parameters": {
            "actual": actual_parameters,
            "computed": computed_parameters,
            "difference": difference_parameters,
            "relative_difference": relative_parameters,
            "explanation": _parameters_explanation(facts, difference_parameters),
        },
        "bytes_by_dtype": dict(facts.bytes_by_dtype) if facts.bytes_by_dtype is not None else None,
        "quantization_hints": list(facts.quantization_hints),
        "warnings": list(facts.warnings),
    }

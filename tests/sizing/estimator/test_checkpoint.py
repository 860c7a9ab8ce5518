"""Checkpoint facts (DESIGN §4): the exact size from model.safetensors.index.json, bytes per dtype from the
safetensors headers, and the comparison of both with the computed weights.

Published figures are literals with their source (the tests never read ../shared): Meta-Llama-3-8B's index
total_size 16,060,522,496 bytes; Llama-2-7b-hf's 13,476,839,424 bytes for 6,738,415,616 parameters in FP16.
"""

from __future__ import annotations

import doctest
from dataclasses import replace
from typing import Any

import pytest

from sizing.estimator import checkpoint
from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.checkpoint import (
    CheckpointFacts,
    checkpoint_compare,
    checkpoint_from_headers,
    checkpoint_from_index,
    checkpoint_merge,
)
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.tensors import parameter_count, tensor_inventory
from sizing.estimator.weights import resolve_weight_format, weight_bytes_total
from tests.sizing.estimator.builders import LLAMA2_7B_CONFIG

LLAMA3_8B_TOTAL_SIZE = 16_060_522_496  # meta-llama/Meta-Llama-3-8B model.safetensors.index.json
LLAMA2_7B_TOTAL_SIZE = 13_476_839_424  # meta-llama/Llama-2-7b-hf model.safetensors.index.json
LLAMA2_7B_PARAMETERS = 6_738_415_616  # meta-llama/Llama-2-7b-hf, as published


# --- builders ------------------------------------------------------------------------------------------------


def llama3_8b_index(**metadata: Any) -> dict[str, Any]:
    """A few entries of Meta-Llama-3-8B's index (the real one maps 291 tensors to 4 files)."""
    return {
        "metadata": {"total_size": LLAMA3_8B_TOTAL_SIZE, **metadata},
        "weight_map": {
            "model.embed_tokens.weight": "model-00001-of-00004.safetensors",
            "model.layers.0.self_attn.q_proj.weight": "model-00001-of-00004.safetensors",
            "model.layers.0.mlp.down_proj.weight": "model-00001-of-00004.safetensors",
            "model.layers.10.mlp.up_proj.weight": "model-00002-of-00004.safetensors",
            "model.layers.20.input_layernorm.weight": "model-00003-of-00004.safetensors",
            "model.norm.weight": "model-00004-of-00004.safetensors",
            "lm_head.weight": "model-00004-of-00004.safetensors",
        },
    }


def llama2_7b_tensors() -> list[tuple[str, str, list[int]]]:
    """Every tensor of Llama-2-7b-hf's checkpoint as (name, dtype, shape): FP16 weights and FP32 inv_freq."""
    h, i, v = 4096, 11008, 32000  # hidden, intermediate, vocabulary
    tensors = [("model.embed_tokens.weight", "F16", [v, h])]
    for layer in range(32):
        prefix = f"model.layers.{layer}"
        tensors += [
            (f"{prefix}.self_attn.{proj}.weight", "F16", [h, h]) for proj in ("q_proj", "k_proj", "v_proj", "o_proj")
        ]
        tensors += [
            (f"{prefix}.mlp.gate_proj.weight", "F16", [i, h]),
            (f"{prefix}.mlp.up_proj.weight", "F16", [i, h]),
            (f"{prefix}.mlp.down_proj.weight", "F16", [h, i]),
        ]
        tensors += [
            (f"{prefix}.input_layernorm.weight", "F16", [h]),
            (f"{prefix}.post_attention_layernorm.weight", "F16", [h]),
            (f"{prefix}.self_attn.rotary_emb.inv_freq", "F32", [64]),
        ]  # head_dim 128 / 2
    tensors += [("model.norm.weight", "F16", [h]), ("lm_head.weight", "F16", [v, h])]
    return tensors


def _file_of(name: str) -> str:
    # Two shards; the split after layer 23 is illustrative
    layer = int(name.split(".")[2]) if name.startswith("model.layers.") else None
    if name == "model.embed_tokens.weight" or (layer is not None and layer < 24):
        return "model-00001-of-00002.safetensors"
    return "model-00002-of-00002.safetensors"


def llama2_7b_index() -> dict[str, Any]:
    return {
        "metadata": {"total_size": LLAMA2_7B_TOTAL_SIZE},
        "weight_map": {name: _file_of(name) for name, _, _ in llama2_7b_tensors()},
    }


_ELEMENT_BYTES = {"F16": 2, "BF16": 2, "F32": 4, "I32": 4, "I8": 1, "U8": 1}  # test-side hand values


def header_file(
    tensors: list[tuple[str, str, list[int]]], *, header_bytes: int = 1000, metadata: dict[str, str] | None = None
) -> dict[str, Any]:
    """One file of the headers JSON with contiguous data_offsets in the given order and a consistent size."""
    entries: dict[str, Any] = {}
    cursor = 0
    for name, dtype, shape in tensors:
        elements = 1
        for dim in shape:
            elements *= dim
        end = cursor + elements * _ELEMENT_BYTES[dtype]
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [cursor, end]}
        cursor = end
    return {
        "size_bytes": 8 + header_bytes + cursor,
        "header_bytes": header_bytes,
        "metadata": metadata if metadata is not None else {"format": "pt"},
        "tensors": entries,
    }


def headers_doc(files: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "format": "safetensors-headers/1",
        "directory_name": "model",
        "files": files,
        "skipped_files": {},
        "index": None,
        "config": None,
        **extra,
    }


def llama2_7b_headers() -> dict[str, Any]:
    by_file: dict[str, list[tuple[str, str, list[int]]]] = {}
    for tensor in llama2_7b_tensors():
        by_file.setdefault(_file_of(tensor[0]), []).append(tensor)
    return headers_doc({name: header_file(tensors) for name, tensors in by_file.items()})


def tiny_headers() -> dict[str, Any]:
    """Two files: BF16 embeddings and head, an F32 norm and an F32 rotary inv_freq buffer."""
    first = header_file([("model.embed_tokens.weight", "BF16", [8, 4]), ("model.norm.weight", "F32", [4])])
    second = header_file([("lm_head.weight", "BF16", [8, 4]), ("model.rotary_emb.inv_freq", "F32", [2])])
    first["tensors"]["__metadata__"] = {"format": "pt"}  # a raw header's metadata key is not a tensor
    return headers_doc({"model-00001-of-00002.safetensors": first, "model-00002-of-00002.safetensors": second})


# --- index ---------------------------------------------------------------------------------------------------


def test_index_gives_the_exact_size_tensors_and_files_of_llama3_8b():
    # given
    index = llama3_8b_index()

    # when
    facts = checkpoint_from_index(index)

    # then
    assert facts == CheckpointFacts(
        total_size_bytes=16_060_522_496,
        tensor_count=7,
        file_count=4,
        tensors_by_file={
            "model-00001-of-00004.safetensors": 3,
            "model-00002-of-00004.safetensors": 1,
            "model-00003-of-00004.safetensors": 1,
            "model-00004-of-00004.safetensors": 2,
        },
        bytes_by_dtype=None,
        elements_by_dtype=None,
        parameters=None,
        quantization_hints=(),
        buffer_tensor_count=0,
        buffer_labels=(),
        buffer_bytes=None,
        source="index",
        warnings=(),
    )
    assert facts.actual_bytes == 16_060_522_496


@pytest.mark.parametrize(
    "total_size",
    ["16060522496", " 16060522496 ", 16060522496.0, "16060522496.0", "1.6060522496e10"],
    ids=["string", "string-with-spaces", "integral-float", "string-of-integral-float", "exponent-string"],
)
def test_index_total_size_written_as_a_string_or_float_is_read_when_integral(total_size: Any):
    # given
    index = llama3_8b_index(total_size=total_size)

    # when
    facts = checkpoint_from_index(index)

    # then
    assert facts.total_size_bytes == 16_060_522_496


def test_index_total_parameters_when_present_become_the_parameters():
    # given newer transformers write metadata.total_parameters beside total_size: 16,060,522,496 / 2 bytes
    index = llama3_8b_index(total_parameters=8_030_261_248)

    # when
    facts = checkpoint_from_index(index)

    # then
    assert facts.parameters == 8_030_261_248


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


_VALID = llama3_8b_index()


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ([1, 2], "the index must be a JSON object with metadata and weight_map, got an array"),
        (
            _without(_VALID, "metadata"),
            "metadata is missing: a model.safetensors.index.json holds "
            '{"metadata": {"total_size": ...}, "weight_map": {...}}',
        ),
        ({**_VALID, "metadata": "16060522496"}, "metadata must be an object, got a string"),
        ({**_VALID, "metadata": {}}, "metadata.total_size is missing: it is the checkpoint's size in bytes"),
        (
            {**_VALID, "metadata": {"total_size": None}},
            "metadata.total_size is missing: it is the checkpoint's size in bytes",
        ),
        ({**_VALID, "metadata": {"total_size": 12.5}}, "metadata.total_size must be a whole number, got a number 12.5"),
        (
            {**_VALID, "metadata": {"total_size": "16 GB"}},
            "metadata.total_size must be a whole number, got a string '16 GB'",
        ),
        (
            {**_VALID, "metadata": {"total_size": "NaN"}},
            "metadata.total_size must be a whole number, got a string 'NaN'",
        ),
        (
            {**_VALID, "metadata": {"total_size": True}},
            "metadata.total_size must be a whole number, got a boolean True",
        ),
        ({**_VALID, "metadata": {"total_size": [1]}}, "metadata.total_size must be a whole number, got an array [1]"),
        ({**_VALID, "metadata": {"total_size": -1}}, "metadata.total_size must not be negative, got -1"),
        (
            {**_VALID, "metadata": {"total_size": 1, "total_parameters": "many"}},
            "metadata.total_parameters must be a whole number, got a string 'many'",
        ),
        (_without(_VALID, "weight_map"), "weight_map is missing: it maps each tensor name to the file that holds it"),
        (
            {**_VALID, "weight_map": ["model-00001-of-00004.safetensors"]},
            "weight_map must be an object of tensor name to file name, got an array",
        ),
        ({**_VALID, "weight_map": {}}, "weight_map is empty: the index names no tensors"),
        (
            {**_VALID, "weight_map": {"lm_head.weight": 4}},
            "weight_map['lm_head.weight'] must be a file name, got a number 4",
        ),
        (
            {**_VALID, "weight_map": {"lm_head.weight": ""}},
            "weight_map['lm_head.weight'] must be a file name, got a string ''",
        ),
        ({**_VALID, "weight_map": {7: "model.safetensors"}}, "weight_map keys must be tensor names, got 7"),
    ],
    ids=[
        "not-an-object",
        "no-metadata",
        "metadata-not-object",
        "no-total-size",
        "null-total-size",
        "fractional-total-size",
        "unit-string-total-size",
        "nan-string-total-size",
        "boolean-total-size",
        "array-total-size",
        "negative-total-size",
        "bad-total-parameters",
        "no-weight-map",
        "weight-map-array",
        "empty-weight-map",
        "file-not-a-string",
        "empty-file-name",
        "key-not-a-string",
    ],
)
def test_index_malformations_are_refused_with_the_field_message(index: Any, message: str):
    # given a malformed index

    # when
    with pytest.raises(SizingError) as caught:
        checkpoint_from_index(index)

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.message == message
    assert caught.value.extra == {"fields": {"index": [message]}}


# --- headers -------------------------------------------------------------------------------------------------


def test_headers_give_exact_bytes_and_elements_per_dtype():
    # given embed BF16 8 x 4 = 32 elements x 2 bytes = 64; norm F32 4 x 4 bytes = 16;
    # head BF16 8 x 4 = 64 bytes; inv_freq F32 2 x 4 bytes = 8
    headers = tiny_headers()

    # when
    facts = checkpoint_from_headers(headers)

    # then BF16 64 + 64 = 128 bytes for 32 + 32 = 64 elements; F32 16 + 8 = 24 bytes for 4 + 2 = 6 elements
    assert facts == CheckpointFacts(
        total_size_bytes=None,
        tensor_count=4,
        file_count=2,
        tensors_by_file={"model-00001-of-00002.safetensors": 2, "model-00002-of-00002.safetensors": 2},
        bytes_by_dtype={"BF16": 128, "F32": 24},
        elements_by_dtype={"BF16": 64, "F32": 6},
        parameters=70,
        quantization_hints=(),
        buffer_tensor_count=1,
        buffer_labels=("rotary inv_freq",),
        buffer_bytes=8,
        source="headers",
        warnings=(),
    )
    assert list(facts.bytes_by_dtype or {}) == ["BF16", "F32"]  # largest first
    assert facts.actual_bytes == 152  # 128 + 24


def test_headers_warn_when_data_offsets_disagree_with_dtype_and_shape():
    # given a BF16 4 x 4 tensor: 16 elements x 2 bytes = 32 bytes, but its offsets span 30
    headers = headers_doc(
        {
            "model.safetensors": {
                "size_bytes": 8 + 100 + 30,
                "header_bytes": 100,
                "metadata": {},
                "tensors": {"w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 30]}},
            }
        }
    )

    # when
    facts = checkpoint_from_headers(headers)

    # then the offsets are trusted for bytes, and the disagreement is said
    assert facts.bytes_by_dtype == {"BF16": 30}
    assert facts.elements_by_dtype == {"BF16": 16}
    assert facts.warnings == (
        "model.safetensors: 'w' is BF16 with 16 elements (32 bytes) but its data_offsets span 30 bytes",
    )


def test_headers_check_sub_byte_dtypes_by_their_bits():
    # given an F4 (E2M1) 2 x 16 tensor: 32 elements x 4 bits = 16 bytes; an F6_E2M3 [3] tensor: 18 bits,
    # not a whole number of bytes
    headers = headers_doc(
        {
            "model.safetensors": {
                "size_bytes": 8 + 64 + 19,
                "header_bytes": 64,
                "metadata": {},
                "tensors": {
                    "a": {"dtype": "F4", "shape": [2, 16], "data_offsets": [0, 16]},
                    "b": {"dtype": "F6_E2M3", "shape": [3], "data_offsets": [16, 19]},
                },
            }
        }
    )

    # when
    facts = checkpoint_from_headers(headers)

    # then
    assert facts.bytes_by_dtype == {"F4": 16, "F6_E2M3": 3}
    assert facts.warnings == (
        "model.safetensors: 'b' is F6_E2M3 with 3 elements (2.25 bytes) but its data_offsets span 3 bytes",
    )


def test_headers_trust_the_offsets_of_a_dtype_of_unknown_size_and_say_so():
    # given
    headers = headers_doc(
        {
            "model.safetensors": {
                "size_bytes": 8 + 10 + 48,
                "header_bytes": 10,
                "metadata": {},
                "tensors": {
                    "x": {"dtype": "Q4_K", "shape": [64], "data_offsets": [0, 36]},
                    "y": {"dtype": "Q4_K", "shape": [16], "data_offsets": [36, 48]},
                },
            }
        }
    )

    # when
    facts = checkpoint_from_headers(headers)

    # then 36 + 12 = 48 bytes; 64 + 16 = 80 elements
    assert facts.bytes_by_dtype == {"Q4_K": 48}
    assert facts.elements_by_dtype == {"Q4_K": 80}
    assert facts.warnings == (
        "dtype 'Q4_K' (2 tensors) has no known size: its bytes are taken from data_offsets "
        "and its elements from shapes, unchecked",
    )


def test_headers_warn_about_a_truncated_file_gaps_and_skipped_files():
    # given a header that describes 8 + 100 + 64 = 172 bytes in a 150-byte file, with a 16-byte gap after "a"
    headers = headers_doc(
        {
            "model.safetensors": {
                "size_bytes": 150,
                "header_bytes": 100,
                "metadata": {},
                "tensors": {
                    "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                    "b": {"dtype": "F32", "shape": [8], "data_offsets": [32, 64]},
                },
            }
        },
        skipped_files={"consolidated.safetensors": "not named by model.safetensors.index.json"},
    )

    # when
    facts = checkpoint_from_headers(headers)

    # then
    assert facts.warnings == (
        "model.safetensors is 150 bytes but its header describes 172: the file is truncated (an incomplete download?)",
        "model.safetensors: tensor data_offsets leave gaps or overlap (at 'b', offset 32, expected 16)",
        "the script skipped 1 file: consolidated.safetensors (not named by model.safetensors.index.json)",
    )


def _headers_with(**file_changes: Any) -> dict[str, Any]:
    entry = {
        "size_bytes": 8 + 10 + 8,
        "header_bytes": 10,
        "metadata": {},
        "tensors": {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}},
    }
    return headers_doc({"model.safetensors": {**entry, **file_changes}})


def _tensor_w(**changes: Any) -> dict[str, Any]:
    return _headers_with(tensors={"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], **changes}})


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ("{}", "the headers must be a JSON object, got a string"),
        (
            {**_headers_with(), "format": "gguf"},
            "format must be 'safetensors-headers/1' (the JSON deploy/tools/safetensors_headers.py writes), got 'gguf'",
        ),
        ({**_headers_with(), "files": []}, "files must be an object of file name to header, got an array"),
        ({**_headers_with(), "files": {}}, "files is empty: the headers describe no safetensors file"),
        (
            headers_doc({"model.safetensors": 3}),
            "model.safetensors must be an object with size_bytes, header_bytes and tensors, got a number",
        ),
        (_headers_with(size_bytes="26"), "model.safetensors: size_bytes must be a whole number, got a string '26'"),
        (_headers_with(header_bytes=-1), "model.safetensors: header_bytes must not be negative, got -1"),
        (
            _headers_with(tensors=[]),
            "model.safetensors: tensors must be an object of tensor name to dtype, shape "
            "and data_offsets, got an array",
        ),
        (
            _headers_with(tensors={"w": "F32"}),
            "model.safetensors: tensor 'w' must be an object with dtype, shape and data_offsets, got a string",
        ),
        (_tensor_w(dtype=None), "model.safetensors: tensor 'w': dtype must be a name such as BF16, got null None"),
        (_tensor_w(shape=2), "model.safetensors: tensor 'w': shape must be an array of dimensions, got a number 2"),
        (_tensor_w(shape=[2, -1]), "model.safetensors: tensor 'w': each shape dimension must not be negative, got -1"),
        (
            _tensor_w(data_offsets=[0, 4, 8]),
            "model.safetensors: tensor 'w': data_offsets must be [begin, end], got [0, 4, 8]",
        ),
        (_tensor_w(data_offsets=[8, 0]), "model.safetensors: tensor 'w': data_offsets end 0 is before begin 8"),
        (
            _tensor_w(data_offsets=[0, 8.0]),
            "model.safetensors: tensor 'w': data_offsets end must be a whole number, got a number 8.0",
        ),
    ],
    ids=[
        "not-an-object",
        "wrong-format",
        "files-array",
        "files-empty",
        "file-not-object",
        "size-as-string",
        "negative-header-bytes",
        "tensors-array",
        "tensor-not-object",
        "no-dtype",
        "shape-not-array",
        "negative-dimension",
        "three-offsets",
        "offsets-reversed",
        "float-offset",
    ],
)
def test_headers_malformations_are_refused_with_the_field_message(headers: Any, message: str):
    # given malformed headers

    # when
    with pytest.raises(SizingError) as caught:
        checkpoint_from_headers(headers)

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.message == message
    assert caught.value.extra == {"fields": {"headers": [message]}}


# --- merge ---------------------------------------------------------------------------------------------------


def test_merge_of_llama2_7b_index_and_headers_keeps_the_index_size_and_adds_dtypes():
    # given the full Llama-2-7b-hf tensor list: FP16 6,738,415,616 parameters x 2 bytes = 13,476,831,232 bytes;
    # FP32 32 layers x 64 inv_freq x 4 bytes = 8,192 bytes; together 13,476,839,424 = the index's total_size
    index_facts = checkpoint_from_index(llama2_7b_index())
    header_facts = checkpoint_from_headers(llama2_7b_headers())

    # when
    merged = checkpoint_merge(index_facts, header_facts)

    # then 323 tensors = 1 + 32 x 10 + 2; file 1 holds embed + 24 layers x 10 = 241, file 2 8 x 10 + 2 = 82
    assert merged == CheckpointFacts(
        total_size_bytes=13_476_839_424,
        tensor_count=323,
        file_count=2,
        tensors_by_file={"model-00001-of-00002.safetensors": 241, "model-00002-of-00002.safetensors": 82},
        bytes_by_dtype={"F16": 13_476_831_232, "F32": 8_192},
        elements_by_dtype={"F16": 6_738_415_616, "F32": 2_048},
        parameters=6_738_417_664,  # 6,738,415,616 + 2,048 inv_freq elements
        quantization_hints=(),
        buffer_tensor_count=32,
        buffer_labels=("rotary inv_freq",),
        buffer_bytes=8_192,
        source="index+headers",
        warnings=(),
    )


def test_merge_warns_when_the_index_and_headers_disagree():
    # given an index of 16,060,522,496 bytes over 4 files, headers of 152 bytes over 2 files, one of them shared
    index = {
        "metadata": {"total_size": LLAMA3_8B_TOTAL_SIZE, "total_parameters": 8_030_261_248},
        "weight_map": {
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "lm_head.weight": "model-00003-of-00003.safetensors",
        },
    }
    index_facts = checkpoint_from_index(index)
    header_facts = checkpoint_from_headers(tiny_headers())

    # when
    merged = checkpoint_merge(index_facts, header_facts)

    # then the index's size stays; 16,060,522,496 - 152 = 16,060,522,344 bytes fewer in the headers
    assert merged.total_size_bytes == 16_060_522_496
    assert merged.bytes_by_dtype == {"BF16": 128, "F32": 24}
    assert merged.warnings == (
        "the index's metadata.total_size is 16,060,522,496 bytes but the safetensors headers hold 152 bytes of "
        "tensors (16,060,522,344 fewer): the size shown is the index's",
        "the headers cover 1 of the 2 files the index names; missing: model-00003-of-00003.safetensors",
        "the headers include 1 file the index does not name: model-00002-of-00002.safetensors",
        "model-00001-of-00002.safetensors: the index maps 1 tensor to it, its header holds 2",
        "the index's metadata.total_parameters is 8,030,261,248 but the headers hold 70 elements",
    )


def test_merge_refuses_facts_from_the_wrong_sources():
    # given two index facts
    index_facts = checkpoint_from_index(llama3_8b_index())

    # when
    with pytest.raises(SizingError) as caught:
        checkpoint_merge(index_facts, index_facts)

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.message == (
        "checkpoint_merge needs facts from an index and from headers, got 'index' and 'index'"
    )


# --- compare -------------------------------------------------------------------------------------------------


def test_compare_llama2_7b_index_shows_8192_bytes_of_rotary_buffers():
    # given computed weights 6,738,415,616 parameters x 2 bytes (FP16) = 13,476,831,232 bytes
    facts = checkpoint_from_index(llama2_7b_index())

    # when
    comparison = checkpoint_compare(facts, computed_weight_bytes=13_476_831_232, computed_parameters=6_738_415_616)

    # then 13,476,839,424 - 13,476,831,232 = 8,192 = 32 layers x 64 FP32 inv_freq x 4 bytes
    assert comparison == {
        "source": "index",
        "weights": {
            "actual_bytes": 13_476_839_424,
            "computed_bytes": 13_476_831_232,
            "difference_bytes": 8_192,
            "relative_difference": 8_192 / 13_476_831_232,
            "explanation": "the checkpoint holds 8,192 bytes more than the computed weights: non-weight buffers "
            "such as rotary inv_freq (32 tensors) are stored in it but hold no weights",
        },
        "parameters": {
            "actual": None,
            "computed": 6_738_415_616,
            "difference": None,
            "relative_difference": None,
            "explanation": "the checkpoint's parameter count is unknown: the safetensors headers "
            "(deploy/tools/safetensors_headers.py) give it",
        },
        "bytes_by_dtype": None,
        "quantization_hints": [],
        "warnings": [],
    }


def test_compare_against_the_estimator_for_llama2_7b():
    # given the estimator's own figures for Llama-2-7b-hf's config and the published index
    arch = architecture_from_config(LLAMA2_7B_CONFIG)
    computed_weight_bytes = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))
    computed_parameters = parameter_count(tensor_inventory(arch))
    facts = checkpoint_merge(checkpoint_from_index(llama2_7b_index()), checkpoint_from_headers(llama2_7b_headers()))

    # when
    comparison = checkpoint_compare(
        facts, computed_weight_bytes=computed_weight_bytes, computed_parameters=computed_parameters
    )

    # then 6,738,415,616 x 2 bytes computed; the checkpoint adds 8,192 bytes and 2,048 elements of inv_freq
    assert (computed_weight_bytes, computed_parameters) == (13_476_831_232, 6_738_415_616)
    assert comparison["weights"]["difference_bytes"] == 8_192
    assert comparison["weights"]["explanation"] == (
        "the checkpoint holds 8,192 bytes more than the computed weights: non-weight buffers such as rotary "
        "inv_freq (32 tensors, 8,192 bytes) are stored in it but hold no weights"
    )
    assert comparison["parameters"] == {
        "actual": 6_738_417_664,
        "computed": 6_738_415_616,
        "difference": 2_048,
        "relative_difference": 2_048 / 6_738_415_616,
        "explanation": "the checkpoint holds 2,048 more elements than the computed parameters: non-weight buffers "
        "such as rotary inv_freq (32 tensors) hold elements that are not parameters",
    }
    assert comparison["bytes_by_dtype"] == {"F16": 13_476_831_232, "F32": 8_192}


def test_compare_equal_figures_need_no_explanation():
    # given Meta-Llama-3-8B: 8,030,261,248 parameters x 2 bytes (BF16) = 16,060,522,496 = total_size
    facts = checkpoint_from_index(llama3_8b_index(total_parameters=8_030_261_248))

    # when
    comparison = checkpoint_compare(facts, computed_weight_bytes=16_060_522_496, computed_parameters=8_030_261_248)

    # then
    assert comparison["weights"] == {
        "actual_bytes": 16_060_522_496,
        "computed_bytes": 16_060_522_496,
        "difference_bytes": 0,
        "relative_difference": 0.0,
        "explanation": None,
    }
    assert comparison["parameters"] == {
        "actual": 8_030_261_248,
        "computed": 8_030_261_248,
        "difference": 0,
        "relative_difference": 0.0,
        "explanation": None,
    }


def test_compare_a_smaller_checkpoint_suggests_a_tied_head():
    # given the estimate counted an untied head: 128,256 x 4,096 x 2 bytes = 1,050,673,152 bytes too many
    facts = checkpoint_from_index(llama3_8b_index())

    # when
    comparison = checkpoint_compare(
        facts, computed_weight_bytes=16_060_522_496 + 1_050_673_152, computed_parameters=8_030_261_248
    )

    # then 1,050,673,152 bytes / 2^30 = 0.98 GiB; / 2^20 = 1,002 MiB
    assert comparison["weights"]["difference_bytes"] == -1_050_673_152
    assert comparison["weights"]["explanation"] == (
        "the checkpoint holds 1,050,673,152 bytes (1002.00 MiB) fewer than the computed weights: the output head may "
        "be tied to the embeddings and stored once, the estimate may count modules this checkpoint omits, or it "
        "assumes a wider dtype than the checkpoint's"
    )


def test_compare_a_much_larger_checkpoint_lists_its_dtypes():
    # given headers of 152 bytes (tiny_headers) against 100 computed: 52 bytes more, 52%
    facts = checkpoint_from_headers(tiny_headers())
    facts_without_buffers = replace(facts, buffer_tensor_count=0, buffer_labels=())

    # when
    comparison = checkpoint_compare(facts_without_buffers, computed_weight_bytes=100, computed_parameters=70)

    # then
    assert comparison["weights"]["explanation"] == (
        "the checkpoint holds 52 bytes more than the computed weights: weights the estimate does not count (an "
        "untied output head, a vision tower or a multi-token-prediction module) or tensors stored in a wider dtype "
        "than assumed; by dtype it holds BF16 128 bytes, F32 24 bytes"
    )


def test_compare_a_packed_gptq_checkpoint_says_elements_are_not_parameters():
    # given one GPTQ int4 4096 x 4096 linear, group 128: qweight I32 512 x 4096 (8 weights per int32) = 8,388,608
    # bytes; qzeros I32 32 x 512 = 65,536 bytes; scales F16 32 x 4096 = 262,144 bytes; g_idx I32 4096 = 16,384
    headers = headers_doc(
        {
            "model.safetensors": header_file(
                [
                    ("layer.qweight", "I32", [512, 4096]),
                    ("layer.qzeros", "I32", [32, 512]),
                    ("layer.scales", "F16", [32, 4096]),
                    ("layer.g_idx", "I32", [4096]),
                ]
            )
        }
    )
    facts = checkpoint_from_headers(headers)

    # when computed as 4096 x 4096 = 16,777,216 parameters in 8,732,672 bytes
    comparison = checkpoint_compare(facts, computed_weight_bytes=8_732_672, computed_parameters=16_777_216)

    # then stored 8,388,608 + 65,536 + 262,144 + 16,384 = 8,732,672 bytes;
    # elements 2,097,152 + 16,384 + 131,072 + 4,096 = 2,248,704, 14,528,512 fewer than the parameters
    assert facts.quantization_hints == ("GPTQ/AWQ packed int4",)
    assert facts.warnings == (
        "parameters counts stored elements; GPTQ/AWQ packed int4 store several weights per "
        "element, so it is not the model's parameter count",
    )
    assert comparison["weights"]["difference_bytes"] == 0
    assert comparison["parameters"]["difference"] == -14_528_512
    assert comparison["parameters"]["explanation"] == (
        "the checkpoint stores 14,528,512 fewer elements than the computed parameters: GPTQ/AWQ packed int4 pack "
        "several weights into one stored element and add scales, so stored elements are not parameters; compare "
        "bytes instead"
    )


def test_compare_refuses_negative_computed_figures():
    # given
    facts = checkpoint_from_index(llama3_8b_index())

    # when
    with pytest.raises(SizingError) as caught:
        checkpoint_compare(facts, computed_weight_bytes=-1, computed_parameters=0)

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.extra == {
        "fields": {"computed_weight_bytes": ["computed_weight_bytes must be a non-negative whole number, got -1"]}
    }


# --- quantisation hints --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "hints"),
    [
        (
            [
                "model.layers.0.self_attn.q_proj.qweight",
                "model.layers.0.self_attn.q_proj.qzeros",
                "model.layers.0.self_attn.q_proj.scales",
                "model.layers.0.self_attn.q_proj.g_idx",
            ],
            ("GPTQ/AWQ packed int4",),
        ),
        (
            [
                "model.layers.0.mlp.up_proj.qweight",
                "model.layers.0.mlp.up_proj.qzeros",
                "model.layers.0.mlp.up_proj.scales",
            ],
            ("GPTQ/AWQ packed int4",),
        ),
        (
            [
                "model.layers.0.mlp.up_proj.weight",
                "model.layers.0.mlp.up_proj.scales",
                "model.layers.0.mlp.up_proj.biases",
            ],
            ("MLX affine quantised (packed uint32)",),
        ),
        (
            [
                "model.layers.0.mlp.up_proj.weight",
                "model.layers.0.mlp.up_proj.weight_scale",
                "model.layers.0.mlp.up_proj.input_scale",
            ],
            ("FP8 scales",),
        ),
        (
            ["model.layers.3.mlp.experts.0.up_proj.weight", "model.layers.3.mlp.experts.0.up_proj.weight_scale_inv"],
            ("FP8 scales",),
        ),
        (
            [
                "model.layers.0.mlp.experts.gate_up_proj_blocks",
                "model.layers.0.mlp.experts.gate_up_proj_scales",
                "model.layers.0.mlp.experts.gate_up_proj_bias",
            ],
            ("MXFP4",),
        ),
        (
            [
                "model.layers.0.mlp.down_proj.weight",
                "model.layers.0.mlp.down_proj.weight_scale",
                "model.layers.0.mlp.down_proj.weight_scale_2",
                "model.layers.0.mlp.down_proj.input_scale",
            ],
            ("NVFP4",),
        ),
        (
            [
                "model.layers.0.mlp.down_proj.weight_packed",
                "model.layers.0.mlp.down_proj.weight_scale",
                "model.layers.0.mlp.down_proj.weight_shape",
            ],
            ("compressed-tensors packed int",),
        ),
        (
            [
                "model.layers.0.mlp.down_proj.weight",
                "model.layers.0.mlp.down_proj.weight.absmax",
                "model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4",
            ],
            ("bitsandbytes 4-bit (NF4/FP4)",),
        ),
        (["model.layers.0.mlp.down_proj.weight", "model.layers.0.mlp.down_proj.SCB"], ("bitsandbytes INT8",)),
        (["model.layers.0.mlp.down_proj.weight", "model.norm.weight", "lm_head.weight"], ()),
    ],
    ids=[
        "gptq",
        "awq",
        "mlx",
        "fp8-per-tensor",
        "fp8-block-wise",
        "gpt-oss-mxfp4",
        "modelopt-nvfp4",
        "compressed-tensors-pack",
        "bitsandbytes-nf4",
        "bitsandbytes-int8",
        "plain-16-bit",
    ],
)
def test_quantisation_hints_from_tensor_names_in_the_index(names: list[str], hints: tuple[str, ...]):
    # given
    index = {"metadata": {"total_size": 1}, "weight_map": dict.fromkeys(names, "model.safetensors")}

    # when
    facts = checkpoint_from_index(index)

    # then
    assert facts.quantization_hints == hints


def test_headers_tell_int8_scales_from_fp8_scales_by_the_weight_dtype():
    # given a W8A8 INT8 linear: I8 weight 4 x 4 = 16 bytes, F32 per-channel scale 4 x 1 = 16 bytes
    headers = headers_doc(
        {
            "model.safetensors": header_file(
                [
                    ("model.layers.0.mlp.down_proj.weight", "I8", [4, 4]),
                    ("model.layers.0.mlp.down_proj.weight_scale", "F32", [4, 1]),
                ]
            )
        }
    )
    index = {
        "metadata": {"total_size": 32},
        "weight_map": {
            "model.layers.0.mlp.down_proj.weight": "model.safetensors",
            "model.layers.0.mlp.down_proj.weight_scale": "model.safetensors",
        },
    }

    # when
    header_facts = checkpoint_from_headers(headers)
    merged = checkpoint_merge(checkpoint_from_index(index), header_facts)

    # then the index alone reads FP8; the headers see the I8 weight
    assert checkpoint_from_index(index).quantization_hints == ("FP8 scales",)
    assert header_facts.quantization_hints == ("INT8 scales",)
    assert merged.quantization_hints == ("INT8 scales",)
    assert merged.warnings == ()


def test_module_docstring_example_runs():
    # given / when
    result = doctest.testmod(checkpoint)

    # then
    assert result.failed == 0
    assert result.attempted == 7


@pytest.mark.parametrize(
    ("weight_map", "explanation"),
    [
        (
            {"model.layers.0.self_attn.q_proj.weight": "model.safetensors"},
            "the checkpoint holds 4,096 bytes more than the computed weights: small tensors the estimate does not "
            "count, such as biases, extra norms or non-weight buffers",
        ),
        (
            {
                "model.layers.0.self_attn.q_proj.weight": "model.safetensors",
                "model.layers.0.self_attn.q_proj.weight_scale": "model.safetensors",
            },
            "the checkpoint holds 4,096 bytes more than the computed weights: the quantisation metadata (FP8 scales: "
            "scales, zero points, group indices) or the tensors the recipe keeps in 16 bits take more than the chosen "
            "weight format assumes",
        ),
    ],
    ids=["small-difference", "quantised"],
)
def test_compare_a_slightly_larger_checkpoint_names_small_tensors_or_quantisation_metadata(
    weight_map: dict[str, str],
    explanation: str,
):
    # given 1,000,004,096 bytes in the checkpoint against 1,000,000,000 computed: 4,096 more, 0.0004%
    facts = checkpoint_from_index({"metadata": {"total_size": 1_000_004_096}, "weight_map": weight_map})

    # when
    comparison = checkpoint_compare(facts, computed_weight_bytes=1_000_000_000, computed_parameters=500_000_000)

    # then
    assert comparison["weights"]["explanation"] == explanation

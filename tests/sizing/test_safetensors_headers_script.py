"""deploy/tools/safetensors_headers.py, the script customers run: it reads only the 8-byte header length and the
JSON header of each *.safetensors file and writes one JSON file that `checkpoint_from_headers` reads.

The safetensors files are built here by hand (8-byte little-endian length + JSON header + data), so the test needs
no `safetensors` package.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sizing.estimator.checkpoint import checkpoint_from_headers, checkpoint_from_index, checkpoint_merge

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "tools" / "safetensors_headers.py"


def write_safetensors(
    path: Path,
    tensors: dict[str, tuple[str, list[int], bytes]],
    *,
    metadata: dict[str, str] | None = None,
    data: bytes | None = None,
) -> int:
    """Write a safetensors file; return its header length. `data` replaces the tensor bytes (garbage, truncation)."""
    header: dict[str, Any] = {"__metadata__": metadata} if metadata is not None else {}
    cursor = 0
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [cursor, cursor + len(payload)]}
        cursor += len(payload)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header with spaces to a multiple of 8
    body = data if data is not None else b"".join(payload for _, _, payload in tensors.values())
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)
    return len(raw)


def run_script(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=60,
    )


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


INDEX = {
    "metadata": {"total_size": 56},
    "weight_map": {
        "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
        "model.norm.weight": "model-00001-of-00002.safetensors",
        "lm_head.weight": "model-00002-of-00002.safetensors",
    },
}
CONFIG = {"model_type": "llama", "hidden_size": 4, "vocab_size": 4, "torch_dtype": "bfloat16"}


def tiny_model(model_dir: Path) -> dict[str, int]:
    """A two-shard model with its index and config; returns each file's header length.

    embed BF16 4 x 4 = 16 elements x 2 bytes = 32; norm F32 4 x 4 bytes = 16; head BF16 2 x 2 x 2 bytes = 8
    """
    model_dir.mkdir()
    first = write_safetensors(
        model_dir / "model-00001-of-00002.safetensors",
        {
            "model.embed_tokens.weight": ("BF16", [4, 4], bytes(range(32))),
            "model.norm.weight": ("F32", [4], b"\x00" * 16),
        },
        metadata={"format": "pt"},
    )
    second = write_safetensors(
        model_dir / "model-00002-of-00002.safetensors",
        {
            "lm_head.weight": ("BF16", [2, 2], b"\x01" * 8),
        },
    )
    (model_dir / "model.safetensors.index.json").write_text(json.dumps(INDEX))
    (model_dir / "config.json").write_text(json.dumps(CONFIG))
    return {"model-00001-of-00002.safetensors": first, "model-00002-of-00002.safetensors": second}


def test_script_writes_every_header_the_index_and_config_and_prints_a_summary(tmp_path: Path):
    # given
    model_dir = tmp_path / "tiny-llama"
    header_bytes = tiny_model(model_dir)
    out = tmp_path / "out.json"
    before = tree(tmp_path)

    # when
    result = run_script(model_dir, "-o", out)

    # then
    assert (result.returncode, result.stderr) == (0, "")
    first, second = header_bytes["model-00001-of-00002.safetensors"], header_bytes["model-00002-of-00002.safetensors"]
    assert json.loads(out.read_text()) == {
        "format": "safetensors-headers/1",
        "directory_name": "tiny-llama",
        "files": {
            "model-00001-of-00002.safetensors": {
                "size_bytes": 8 + first + 48,  # 32 + 16 bytes of data
                "header_bytes": first,
                "metadata": {"format": "pt"},
                "tensors": {
                    "model.embed_tokens.weight": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 32]},
                    "model.norm.weight": {"dtype": "F32", "shape": [4], "data_offsets": [32, 48]},
                },
            },
            "model-00002-of-00002.safetensors": {
                "size_bytes": 8 + second + 8,
                "header_bytes": second,
                "metadata": {},
                "tensors": {"lm_head.weight": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}},
            },
        },
        "skipped_files": {},
        "index": INDEX,
        "config": CONFIG,
    }
    # 32 + 8 = 40 BF16 bytes, 16 F32 bytes; 40 / 2^30 GiB rounds to 0.00
    assert result.stdout.splitlines() == [
        f"wrote {out}",
        "2 files, 3 tensors, 56 bytes of tensors",
        "  BF16                       40 bytes  (0.00 GiB)",
        "  F32                        16 bytes  (0.00 GiB)",
    ]
    assert tree(tmp_path) == sorted([*before, "out.json"])  # nothing else written


def test_script_output_reads_as_checkpoint_facts_that_agree_with_the_index(tmp_path: Path):
    # given
    tiny_model(tmp_path / "model")
    out = tmp_path / "headers.json"
    assert run_script(tmp_path / "model", "-o", out).returncode == 0
    document = json.loads(out.read_text())

    # when
    header_facts = checkpoint_from_headers(document)
    merged = checkpoint_merge(checkpoint_from_index(document["index"]), header_facts)

    # then BF16 32 + 8 = 40 bytes for 16 + 4 = 20 elements, F32 16 bytes for 4; 56 bytes = the index's total_size
    assert header_facts.bytes_by_dtype == {"BF16": 40, "F32": 16}
    assert header_facts.elements_by_dtype == {"BF16": 20, "F32": 4}
    assert header_facts.parameters == 24
    assert header_facts.warnings == ()
    assert (merged.source, merged.total_size_bytes, merged.warnings) == ("index+headers", 56, ())


def test_script_writes_to_the_working_directory_by_default(tmp_path: Path):
    # given a single-file model without index or config
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    write_safetensors(model_dir / "model.safetensors", {"w": ("F16", [2], b"\x00" * 4)})
    work = tmp_path / "work"
    work.mkdir()

    # when
    result = run_script(model_dir, cwd=work)

    # then
    assert result.returncode == 0
    assert tree(work) == ["safetensors-headers.json"]
    document = json.loads((work / "safetensors-headers.json").read_text())
    assert (document["index"], document["config"], list(document["files"])) == (None, None, ["model.safetensors"])
    assert result.stdout.splitlines()[:2] == [
        f"wrote {work / 'safetensors-headers.json'}",
        "1 file, 1 tensor, 4 bytes of tensors",
    ]


def test_script_never_reads_tensor_data_garbage_or_missing_data_changes_nothing(tmp_path: Path):
    # given the same header over real data, over garbage, and over data cut short (an interrupted download)
    tensors = {"w": ("F32", [1024], bytes(4096)), "b": ("F32", [4], bytes(16))}
    outputs = {}
    for kind, data in (("real", None), ("garbage", b"\xff" * 4112), ("truncated", b"\x00" * 10)):
        model_dir = tmp_path / kind / "model"
        model_dir.mkdir(parents=True)
        write_safetensors(model_dir / "model.safetensors", tensors, data=data)
        result = run_script(model_dir, "-o", tmp_path / f"{kind}.json")
        outputs[kind] = (result, json.loads((tmp_path / f"{kind}.json").read_text()))

    # when
    real, garbage, truncated = outputs["real"], outputs["garbage"], outputs["truncated"]

    # then the headers are identical but for the file size; a truncated file is reported, not refused
    assert (real[0].returncode, garbage[0].returncode, truncated[0].returncode) == (0, 0, 0)
    assert garbage[1] == real[1]
    header_bytes = real[1]["files"]["model.safetensors"]["header_bytes"]
    assert truncated[1]["files"]["model.safetensors"]["size_bytes"] == 8 + header_bytes + 10
    assert truncated[1]["files"]["model.safetensors"]["tensors"] == real[1]["files"]["model.safetensors"]["tensors"]
    expected = 8 + header_bytes + 4112  # 4096 + 16 bytes of data described
    assert truncated[0].stderr == (
        f"warning: model.safetensors is {8 + header_bytes + 10:,} bytes but its header "
        f"describes {expected:,}: truncated (an incomplete download?)\n"
    )
    assert checkpoint_from_headers(truncated[1]).warnings == (
        f"model.safetensors is {8 + header_bytes + 10:,} bytes but its header describes {expected:,}: the file is "
        "truncated (an incomplete download?)",
    )


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("safetensors_headers", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RecordingReader(io.BytesIO):
    """A file that records how many bytes each read asked for."""

    def __init__(self, content: bytes) -> None:
        super().__init__(content)
        self.requests: list[int] = []

    def read(self, size: int | None = -1, /) -> bytes:
        self.requests.append(-1 if size is None else size)
        return super().read(size)


def test_read_header_reads_the_length_prefix_and_the_header_and_nothing_more(tmp_path: Path):
    # given a file with 1 MiB of tensor data after its header
    path = tmp_path / "model.safetensors"
    header_bytes = write_safetensors(path, {"w": ("U8", [1 << 20], bytes(1 << 20))})
    content = path.read_bytes()
    reader = RecordingReader(content)

    # when
    got_bytes, header = _load_script().read_header(reader, name="model.safetensors", size_bytes=len(content))

    # then two reads: 8 bytes of length, then the header; the position stops where the data starts
    assert reader.requests == [8, header_bytes]
    assert reader.tell() == 8 + header_bytes
    assert got_bytes == header_bytes
    assert header == {"w": {"dtype": "U8", "shape": [1048576], "data_offsets": [0, 1048576]}}


def test_script_skips_files_the_index_does_not_name(tmp_path: Path):
    # given Mistral-style: a consolidated.safetensors beside the indexed shards
    model_dir = tmp_path / "model"
    tiny_model(model_dir)
    write_safetensors(model_dir / "consolidated.safetensors", {"tok_embeddings.weight": ("BF16", [4, 4], bytes(32))})
    out = tmp_path / "out.json"

    # when
    result = run_script(model_dir, "-o", out)

    # then
    document = json.loads(out.read_text())
    assert result.returncode == 0
    assert list(document["files"]) == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert document["skipped_files"] == {"consolidated.safetensors": "not named by model.safetensors.index.json"}
    assert result.stderr == "warning: skipped consolidated.safetensors: not named by model.safetensors.index.json\n"


def test_script_follows_symlinks_as_in_the_hugging_face_cache(tmp_path: Path):
    # given a snapshot directory whose files are links to blobs
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    header_bytes = write_safetensors(blobs / "abc123", {"w": ("BF16", [8], bytes(16))})
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "model.safetensors").symlink_to(blobs / "abc123")
    out = tmp_path / "out.json"

    # when
    result = run_script(snapshot, "-o", out)

    # then
    assert result.returncode == 0
    assert json.loads(out.read_text())["files"]["model.safetensors"]["size_bytes"] == 8 + header_bytes + 16


def _no_safetensors(model_dir: Path) -> str:
    (model_dir / "config.json").write_text("{}")
    (model_dir / "pytorch_model.bin").write_bytes(b"\x80\x02")
    return (
        f"error: {model_dir}: no *.safetensors files here; run this in the directory that holds the model's "
        "weights (the one with config.json)"
    )


def _corrupt_json(model_dir: Path) -> str:
    raw = b'{"w": {"dtype": "F32", '
    (model_dir / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(64))
    return (
        "error: model.safetensors: the header is not valid UTF-8 JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 24 (char 23))"
    )


def _not_an_object(model_dir: Path) -> str:
    raw = b"[1, 2, 3]"
    (model_dir / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw)
    return "error: model.safetensors: the header is JSON but not an object"


def _huge_header(model_dir: Path) -> str:
    # 100,000,001 > safetensors' 100,000,000-byte limit: refused before reading anything more
    (model_dir / "model.safetensors").write_bytes(struct.pack("<Q", 100_000_001) + b"{}" + bytes(64))
    return (
        "error: model.safetensors: header length 100,000,001 bytes is over the 100,000,000-byte limit "
        "safetensors enforces; refusing this file (corrupt, or not a safetensors file)"
    )


def _header_past_end(model_dir: Path) -> str:
    (model_dir / "model.safetensors").write_bytes(struct.pack("<Q", 1000) + b"{}")
    return (
        "error: model.safetensors: header length 1,000 bytes runs past the end of the 10-byte file "
        "(corrupt or truncated)"
    )


def _too_short(model_dir: Path) -> str:
    (model_dir / "model.safetensors").write_bytes(b"\x02\x00")
    return "error: model.safetensors: only 2 bytes long, shorter than the 8-byte header length"


def _bad_offsets(model_dir: Path) -> str:
    raw = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}).encode()
    (model_dir / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw)
    return "error: model.safetensors: tensor 'w' has no valid data_offsets [begin, end]"


def _missing_shard(model_dir: Path) -> str:
    write_safetensors(model_dir / "model-00001-of-00002.safetensors", {"w": ("F32", [2], bytes(8))})
    (model_dir / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "metadata": {"total_size": 16},
                "weight_map": {"w": "model-00001-of-00002.safetensors", "v": "model-00002-of-00002.safetensors"},
            }
        )
    )
    return (
        "error: model.safetensors.index.json names 2 files and 1 are missing here: "
        "model-00002-of-00002.safetensors; run this in the complete checkpoint directory"
    )


def _corrupt_config(model_dir: Path) -> str:
    write_safetensors(model_dir / "model.safetensors", {"w": ("F32", [2], bytes(8))})
    (model_dir / "config.json").write_text("{not json")
    return (
        "error: config.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1))"
    )


@pytest.mark.parametrize(
    "make",
    [
        _no_safetensors,
        _corrupt_json,
        _not_an_object,
        _huge_header,
        _header_past_end,
        _too_short,
        _bad_offsets,
        _missing_shard,
        _corrupt_config,
    ],
    ids=[
        "no-safetensors-files",
        "corrupt-json",
        "header-not-an-object",
        "header-over-100-MB",
        "header-past-end-of-file",
        "shorter-than-8-bytes",
        "reversed-offsets",
        "shard-missing",
        "corrupt-config",
    ],
)
def test_script_refuses_with_exit_2_names_the_file_and_writes_nothing(tmp_path: Path, make):
    # given
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    message = make(model_dir)
    before = tree(tmp_path)
    out = tmp_path / "out.json"

    # when
    result = run_script(model_dir, "-o", out)

    # then
    assert result.returncode == 2
    assert result.stderr == f"{message}\nnothing was written\n"
    assert result.stdout == ""
    assert tree(tmp_path) == before


def test_script_refuses_a_path_that_is_not_a_directory(tmp_path: Path):
    # given
    missing = tmp_path / "no-such-model"

    # when
    result = run_script(missing, "-o", tmp_path / "out.json")

    # then
    assert result.returncode == 2
    assert result.stderr == f"error: {missing}: not a directory\nnothing was written\n"
    assert os.listdir(tmp_path) == []

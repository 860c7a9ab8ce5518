"""Accuracy of the sizing estimator against published figures (not collected by pytest).

Reads ../shared/data/facts.json and ../shared/data/model_configs/*/config.json (beside the project; a fresh
clone has none: the script says so and exits 0), then:

1. for every model in facts.json whose config the estimator supports: parameters, 16-bit weight bytes
   (safetensors metadata.total_size) and BF16 KV bytes per token, published vs computed, relative error;
2. the field's worked examples of facts.json through the idealised engine;
3. for every config in model_configs: supported (parameters, weight format, bytes) or refused with the reason.

Exit status 1 when a supported published figure is off by more than 0.1 % or a worked example disagrees.

    .venv/bin/python tests/benchmarks/estimator_accuracy.py [--shared PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sizing.estimator.architecture import (  # noqa: E402
    Architecture,
    architecture_from_config,
    architecture_from_numbers,
    merge_quant_config,
)
from sizing.estimator.engines import Engine  # noqa: E402
from sizing.estimator.errors import SizingError  # noqa: E402
from sizing.estimator.hardware import GpuSpec  # noqa: E402
from sizing.estimator.kv import kv_bytes_per_token  # noqa: E402
from sizing.estimator.memory import EstimateRequest, estimate_memory  # noqa: E402
from sizing.estimator.tensors import parameter_count, tensor_inventory  # noqa: E402
from sizing.estimator.units import GiB, KiB  # noqa: E402
from sizing.estimator.weights import resolve_weight_format, weight_bytes_total  # noqa: E402

TOLERANCE = 0.001  # 0.1 %
DEFAULT_SHARED = ROOT.parent / "shared" / "data"


def _load_config(folder: Path) -> dict[str, Any]:
    """config.json, with a ModelOpt hf_quant_config.json folded in when the folder has one."""
    config = json.loads((folder / "config.json").read_text())
    quant_file = folder / "hf_quant_config.json"
    if quant_file.exists():
        config = merge_quant_config(config, json.loads(quant_file.read_text()))
    return config


def _bf16_kv_per_token(arch: Architecture) -> int:
    return kv_bytes_per_token(num_layers=arch.num_hidden_layers, kv_heads=arch.num_key_value_heads,
                              head_dim=arch.head_dim, kv_bits=16)


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) if i == 0 or i == 1 else cell.rjust(width)
                     for i, (cell, width) in enumerate(zip(cells, widths, strict=True)))


def published_figures(shared: Path) -> int:
    """Table 1: published vs computed. Returns the number of figures off by more than TOLERANCE."""
    facts = json.loads((shared / "facts.json").read_text())
    widths = [34, 24, 16, 16, 12, 11]
    print("1. Published figures (facts.json) vs the estimator")
    print(_row(["model", "figure", "published", "computed", "difference", "rel. error"], widths))
    print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    off = 0
    for model in facts["models"]:
        repo = model["repo"]
        folder = shared / "model_configs" / repo.replace("/", "--")
        if not (folder / "config.json").exists():
            print(f"{repo}: no config in model_configs/, not checked")
            continue
        try:
            arch = architecture_from_config(_load_config(folder))
        except SizingError as error:
            stated = model.get("parameters") or model.get("parameters_stated", "?")
            stated = f"{stated:,}" if isinstance(stated, int) else str(stated).split(",")[0]
            print(_row([repo, "refused (parameters)", stated, "-", "-", "-"], widths))
            print(f"    {error.code.value}: {error.message}")
            continue
        computed: dict[str, int] = {
            "parameters": parameter_count(tensor_inventory(arch)),
            "safetensors_total_size": weight_bytes_total(arch, resolve_weight_format(arch, "auto")),
            "kv_bytes_per_token_bf16": _bf16_kv_per_token(arch),
        }
        for key, value in computed.items():
            published = model.get(key)
            if not isinstance(published, int):
                continue
            difference = value - published
            relative = abs(difference) / published
            flag = "" if relative <= TOLERANCE else "  <-- off by more than 0.1 %"
            off += relative > TOLERANCE
            print(_row([repo, key, f"{published:,}", f"{value:,}", f"{difference:+,}", f"{relative:.6%}"],
                       widths) + flag)
        if model.get("note"):
            print(f"    note: {model['note']}")
    return off


def worked_examples(shared: Path) -> int:
    """Table 2: the field's worked examples. Returns the number that disagree."""
    facts = json.loads((shared / "facts.json").read_text())
    print("\n2. Worked examples (facts.json) through the idealised engine")
    wrong = 0
    for example in facts.get("worked_examples", []):
        expect = example["expect"]
        kv_bits = example["kv_bytes"] * 8
        per_token = kv_bytes_per_token(num_layers=example["layers"], kv_heads=example["kv_heads"],
                                       head_dim=example["head_dim"], kv_bits=kv_bits)
        got: dict[str, Any] = {"kv_per_token_kib": per_token / KiB}
        if "parameters_billion" in example:
            arch = architecture_from_numbers(parameters=int(example["parameters_billion"] * 10**9),
                                             num_hidden_layers=example["layers"],
                                             num_key_value_heads=example["kv_heads"], head_dim=example["head_dim"])
            gpu = GpuSpec(slug="worked-example", name="worked example",
                          memory_bytes=int(example["gpu_memory_gib"] * GiB))
            result = estimate_memory(EstimateRequest(
                arch=arch, gpu=gpu, engine=Engine.IDEALIZED, tp=example["tensor_parallel"],
                weight_overhead=example["weight_overhead"],
                runtime_reserve_bytes=int(example["runtime_reserve_gib"] * GiB),
                gpu_memory_utilization=example["gpu_utilization_limit"],
                concurrency=example["concurrency"], tokens_per_request=example["average_active_tokens"]))
            got["kv_cluster_gib"] = result.kv_cache_bytes_per_gpu * result.tp / GiB
            got["fits_idealized"] = result.fits
        if "tokens" in example:
            got["kv_per_sequence_mib"] = per_token * example["tokens"] / 2**20
            got["kv_total_gib"] = per_token * example["tokens"] * example["sequences"] / GiB
        mismatches = {key: (value, got.get(key)) for key, value in expect.items() if got.get(key) != value}
        wrong += bool(mismatches)
        status = "ok" if not mismatches else f"MISMATCH (expected, got): {mismatches}"
        print(f"  {example['what']}: {', '.join(f'{k}={v}' for k, v in got.items())}  [{status}]")
    return wrong


def config_survey(shared: Path) -> None:
    """Table 3: every config in model_configs, supported or refused with the reason."""
    print("\n3. Every config in model_configs/")
    for folder in sorted(path for path in (shared / "model_configs").iterdir() if (path / "config.json").exists()):
        config = _load_config(folder)
        name = folder.name.replace("--", "/", 1)
        try:
            arch = architecture_from_config(config)
            fmt = resolve_weight_format(arch, "auto")
            parameters = parameter_count(tensor_inventory(arch))
            total = weight_bytes_total(arch, fmt)
        except SizingError as error:
            print(f"  refused    {name:<42} {error.code.value}: {error.message}")
            continue
        line = (f"  supported  {name:<42} {arch.model_type:<10} {parameters:>16,} parameters  "
                f"{fmt.slug:<10} {total:>17,} bytes  KV {_bf16_kv_per_token(arch):>9,} B/token at 16 bits")
        print(line)
        for warning in arch.warnings:
            print(f"             warning: {warning}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared data folder")
    args = parser.parse_args(argv)
    shared: Path = args.shared
    if not (shared / "facts.json").exists() or not (shared / "model_configs").is_dir():
        print(f"{shared} has no facts.json and model_configs/ (a fresh clone has no ../shared): "
              "nothing to check, skipping the accuracy benchmark.")
        return 0
    off = published_figures(shared)
    wrong = worked_examples(shared)
    config_survey(shared)
    print()
    if off or wrong:
        print(f"FAIL: {off} published figure(s) off by more than 0.1 %, {wrong} worked example(s) wrong")
        return 1
    print("OK: every supported published figure within 0.1 %, every worked example reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Decode throughput: the simulator with default efficiencies against published serving results (not collected
by pytest; `accuracy.py` runs it as its section 6, or run it alone).

Reads ../shared/data/serving_results/*.json (rows: model, GPU, precision, TP, input/output lengths, request count,
load, measured output tokens per second). Each row is simulated as it was run — offline rows queue every request
at time zero — on the catalog GPU, with the memory estimate's KV capacity for the engine's settings. The target:
the median absolute error of output tokens per second under 25 % before any calibration.

Assumptions, printed with the table: FP8 rows use FP8 weights and an FP8 KV cache (NVIDIA's ModelOpt FP8
checkpoints quantise the KV cache too); TensorRT-LLM runs with kv_cache_free_gpu_mem_fraction 0.95, max_num_tokens
8192 and a max batch of 2048; "Llama 3.3 70B" has Llama 3.1 70B's architecture.

    .venv/bin/python tests/benchmarks/serving_accuracy.py [--shared PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from speed import gpu_spec  # noqa: E402

from llm_sizing_loadgen.workload import fixed_profile  # noqa: E402
from sizing.estimator.architecture import architecture_from_config, merge_quant_config  # noqa: E402
from sizing.estimator.engines import Engine  # noqa: E402
from sizing.estimator.errors import SizingError  # noqa: E402
from sizing.estimator.memory import EstimateRequest  # noqa: E402
from sizing.estimator.serving import serving_plan, simulate_plan  # noqa: E402
from sizing.estimator.simulator import LoadKind  # noqa: E402

DEFAULT_SHARED = ROOT.parent / "shared" / "data"
CATALOG = ROOT / "sizing" / "catalog_data" / "gpus.json"
TARGET_MEDIAN_ERROR = 0.25
MAX_REQUESTS = 3000  # per row; the published runs use up to 30,000: the steady-state throughput is the same

# The published model names, to the model_configs/ folder with the same architecture (and why)
MODELS: dict[str, tuple[str, str]] = {
    "Llama 3.1 8B": ("meta-llama--Meta-Llama-3.1-8B", ""),
    "Llama 3.3 70B": ("meta-llama--Meta-Llama-3.1-70B", "Llama 3.3 70B has Llama 3.1 70B's architecture"),
    "Llama 3.1 405B": ("meta-llama--Meta-Llama-3.1-405B", ""),
    "Qwen3-235B-A22B": ("Qwen--Qwen3-235B-A22B-FP8", ""),
    "Llama 4 Scout": ("meta-llama--Llama-4-Scout-17B-16E-Instruct", ""),
    "Llama 4 Maverick": ("meta-llama--Llama-4-Maverick-17B-128E-Instruct", ""),
}
GPUS = {r"H100 SXM": "nvidia-h100-sxm-80gb", r"H200": "nvidia-h200-sxm-141gb", r"B200": "nvidia-b200-sxm-180gb"}
ENGINES = {"tensorrt-llm": Engine.TRTLLM, "vllm": Engine.VLLM, "sglang": Engine.SGLANG}


def _engine(text: str) -> Engine | None:
    lowered = text.lower()
    return next((engine for key, engine in ENGINES.items() if key in lowered), None)


def _gpu(text: str, catalog: dict[str, Any]) -> Any:
    for pattern, slug in GPUS.items():
        if re.search(pattern, text) and slug in catalog:
            return gpu_spec(catalog[slug])
    return None


def simulate_row(row: dict[str, Any], shared: Path, catalog: dict[str, Any]) -> tuple[float | None, str, float]:
    """(simulated output tokens/s, why not / assumptions, seconds taken)."""
    folder, _ = MODELS.get(row["model"], (None, ""))
    if folder is None or not (shared / "model_configs" / folder / "config.json").exists():
        return None, f"no config for {row['model']} in model_configs/", 0.0
    gpu = _gpu(row["gpu"], catalog)
    engine = _engine(row["engine"])
    if gpu is None or engine is None:
        return None, f"GPU {row['gpu']!r} or engine {row['engine']!r} not in the catalog", 0.0
    config = json.loads((shared / "model_configs" / folder / "config.json").read_text())
    quant_file = shared / "model_configs" / folder / "hf_quant_config.json"
    if quant_file.exists():
        config = merge_quant_config(config, json.loads(quant_file.read_text()))
    arch = architecture_from_config(config)
    fp8 = "fp8" in str(row.get("precision", "")).lower()
    weights = "auto" if (fp8 and arch.quantization_config) else ("fp8" if fp8 else "auto")
    kv = "fp8" if fp8 else "auto"
    tp = int(row.get("tensor_parallel_size") or 1)
    pp = int(row.get("pipeline_parallel_size") or 1)
    lengths = int(row["input_len"]) + int(row["output_len"])
    request = EstimateRequest(
        arch=arch,
        gpu=gpu,
        engine=engine,
        gpus=tp * pp,
        tp=tp,
        pp=pp,
        weights=weights,
        kv_dtype=kv,
        max_model_len=max(lengths, 2048),
        max_num_seqs=2048,
        max_num_batched_tokens=8192,
        kv_cache_free_gpu_mem_fraction=0.95,
        detail=False,
    )
    started = time.perf_counter()
    try:
        plan = serving_plan(request)
    except SizingError as error:
        return None, f"{error.code.value}: {error.message}", 0.0
    requests = min(int(row.get("num_requests") or 1000), MAX_REQUESTS)
    profile = fixed_profile(input_tokens=int(row["input_len"]), output_tokens=int(row["output_len"]))
    offline = (
        str(row.get("request_rate", "")).lower() in ("inf", "infinite")
        or "offline" in str(row.get("concurrency", "")).lower()
    )
    if not offline:
        return None, "only offline (infinite-rate) rows are simulated here", 0.0
    result = simulate_plan(plan, profile, load=LoadKind.OFFLINE, requests=requests)
    note = (
        f"weights {plan.memory.weight_format}, KV {plan.memory.kv_dtype}, "
        f"{plan.config.kv_capacity_tokens:,} KV tokens, batch ≤ {plan.config.max_num_seqs}, "
        f"{result.preempted} preemptions"
    )
    return result.output_tokens_per_s, note, time.perf_counter() - started


def serving_section(shared: Path) -> tuple[bool, str]:
    """Print the table; return (target met, one-line summary)."""
    print("\n6. Serving results: simulated vs published output tokens/s (serving_results/, default efficiencies)")
    print("=" * 104)
    folder = shared / "serving_results"
    if not folder.is_dir():
        print("no serving_results/ folder: skipped")
        return True, "serving results: none"
    catalog = {row["slug"]: row for row in json.loads(CATALOG.read_text())}
    errors: list[float] = []
    skipped: list[str] = []
    header = f"{'model':<18} {'GPU x TP':<12} {'in/out':>11} {'published':>10} {'simulated':>10} {'error':>8}  notes"
    print(header)
    print("-" * len(header))
    total_s = 0.0
    for file in sorted(folder.glob("*.json")):
        for row in json.loads(file.read_text()):
            simulated, note, seconds = simulate_row(row, shared, catalog)
            total_s += seconds
            published = float(row["output_throughput_tok_s"])
            gpu = "H100" if "H100" in row["gpu"] else row["gpu"][:6]
            label = (
                f"{row['model']:<18} {gpu} x {row.get('tensor_parallel_size', 1):<4}"
                f" {row['input_len']:>5}/{row['output_len']:<5}"
            )
            if simulated is None:
                skipped.append(f"{row['model']} {row['input_len']}/{row['output_len']}: {note}")
                print(f"{label} {published:>10,.0f} {'-':>10} {'-':>8}  {note}")
                continue
            error = simulated / published - 1
            errors.append(abs(error))
            print(f"{label} {published:>10,.0f} {simulated:>10,.0f} {error:>+8.1%}  {note}")
    if not errors:
        return False, "serving results: nothing could be simulated"
    median = statistics.median(errors)
    ok = median < TARGET_MEDIAN_ERROR
    print(
        f"median absolute error {median:.1%} over {len(errors)} rows (target < {TARGET_MEDIAN_ERROR:.0%}) -> "
        f"{'ok' if ok else 'MISS'}; {len(skipped)} row(s) not simulated; simulations took {total_s:.1f} s"
    )
    return ok, (f"serving throughput median |error| {median:.1%} over {len(errors)} rows ({'pass' if ok else 'MISS'})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args(argv)
    if not args.shared.is_dir():
        print(f"No shared data at {args.shared}: skipping.")
        return 0
    ok, summary = serving_section(args.shared)
    print(f"\nSUMMARY: {summary}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

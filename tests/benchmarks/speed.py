"""Speed of the sizing estimator, in-process (not collected by pytest; standard library and the project only).

(a) One full estimate: `estimate_memory` for Llama-3-8B on an H100 (vLLM defaults), the first call in the process
    (cold caches) reported apart, then the median and 95th percentile wall time over `--calls` calls (≥ 2,000).
    Target: median under 1 ms.
(b) A sweep: every GPU of sizing/catalog_data/gpus.json × 1, 2, 4, 8 GPUs × TP 1, 2, 4, 8 (where it divides the
    GPU count; the other GPUs are replicas) × weights bf16, fp8, int4 × every engine, for Llama-3-8B, Qwen2.5-72B,
    Mixtral-8x7B and DeepSeek-V3 (configs from sizing/catalog_data/models.json). An estimate refused with a
    SizingError (llama.cpp with TP > 1, a layout the heads do not divide) counts as done. The sweep runs
    `--passes` times in one process; target: median estimates per second ≥ 10,000.
(c) The serving simulator: 100,000 requests of the sample profile (its busiest hour) on one H100 replica of
    Llama-3-8B at 80% of its offline saturation rate, in one process (one core). Target: under 10 s.
(d) A configuration search: 1,000 candidate deployments of Llama-3-8B (catalog GPUs × counts × TP × weights ×
    KV dtypes × engines, the first 1,000), each sized and, when it fits, simulated with 200 requests of the
    sample profile at 2 requests/s against TTFT P95 ≤ 2 s and TPOT P95 ≤ 100 ms. Target: under 60 s.

Exit status 1 when a target is missed; the figures are printed either way.

    .venv/bin/python tests/benchmarks/speed.py [--calls N] [--passes N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llm_sizing_loadgen.workload import sample_profile, workload_sample  # noqa: E402
from sizing.estimator.architecture import Architecture, architecture_from_config, merge_quant_config  # noqa: E402
from sizing.estimator.engines import Engine  # noqa: E402
from sizing.estimator.errors import SizingError  # noqa: E402
from sizing.estimator.hardware import GpuSpec  # noqa: E402
from sizing.estimator.memory import EstimateRequest, estimate_memory  # noqa: E402
from sizing.estimator.search import candidates_for, search  # noqa: E402
from sizing.estimator.serving import saturation_rate, serving_plan  # noqa: E402
from sizing.estimator.simulator import LoadKind, Slo, simulate  # noqa: E402
from sizing.estimator.units import MiB  # noqa: E402

CATALOG = ROOT / "sizing" / "catalog_data"
SINGLE_MODEL = "meta-llama/Meta-Llama-3-8B"
SINGLE_GPU = "nvidia-h100-sxm-80gb"
SWEEP_MODELS = (
    "meta-llama/Meta-Llama-3-8B",
    "Qwen/Qwen2.5-72B-Instruct",
    "mistralai/Mixtral-8x7B-v0.1",
    "deepseek-ai/DeepSeek-V3",
)
GPU_COUNTS = (1, 2, 4, 8)
TP_SIZES = (1, 2, 4, 8)
WEIGHT_FORMATS = ("bf16", "fp8", "int4")
MIN_CALLS = 2000
MEDIAN_TARGET_S = 1e-3
RATE_TARGET = 10_000
SIMULATED_REQUESTS = 100_000
SIMULATION_TARGET_S = 10.0
SEARCH_CANDIDATES = 1000
SEARCH_TARGET_S = 60.0


def gpu_spec(row: dict[str, Any]) -> GpuSpec:
    """The estimator's view of a catalog GPU, as the service builds it (nvidia-smi total, else the marketed GB)."""
    mib = row.get("nvidia_smi_memory_mib")
    return GpuSpec(
        slug=row["slug"],
        name=row["name"],
        memory_bytes=mib * MiB if mib else row["marketed_memory_gb"] * 10**9,
        memory_bandwidth_bytes_per_s=int(row.get("memory_bandwidth_gb_s", 0) * 10**9),
        tflops_dense={key: float(value) for key, value in row.get("tflops_dense", {}).items()},
        interconnect=str((row.get("interconnect") or {}).get("kind", "")),
        interconnect_bytes_per_s=int(float((row.get("interconnect") or {}).get("bandwidth_gb_s") or 0) * 10**9),
        pcie_generation=row.get("pcie_generation"),
        price_per_hour_usd=row.get("price_per_hour_usd"),
    )


def load_models(slugs: tuple[str, ...]) -> dict[str, Architecture]:
    rows = {row["slug"]: row for row in json.loads((CATALOG / "models.json").read_text())["models"]}
    missing = [slug for slug in slugs if slug not in rows]
    if missing:
        raise SystemExit(f"models.json lacks {', '.join(missing)}: cannot run the speed benchmark")
    return {
        slug: architecture_from_config(merge_quant_config(rows[slug]["config"], rows[slug].get("quant_config")))
        for slug in slugs
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def _table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    print(
        "  ".join(
            cell.ljust(width) if index == 0 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(headers, widths, strict=True))
        )
    )
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(
            "  ".join(
                cell.ljust(width) if index == 0 else cell.rjust(width)
                for index, (cell, width) in enumerate(zip(row, widths, strict=True))
            )
        )


def single_estimate(arch: Architecture, gpu: GpuSpec, calls: int) -> bool:
    """(a): returns whether the median is under the target."""
    print(f"(a) one full estimate: {SINGLE_MODEL} on {gpu.slug}, vLLM defaults, {calls:,} calls in-process")
    request = EstimateRequest(arch=arch, gpu=gpu)
    clock = time.perf_counter
    start = clock()
    first = estimate_memory(request)  # the first call in the process: every cache is cold
    cold = clock() - start
    times = []
    for _ in range(calls):
        start = clock()
        estimate_memory(request)
        times.append(clock() - start)
    median = statistics.median(times)
    p95 = statistics.quantiles(times, n=100, method="inclusive")[94]
    ok = median < MEDIAN_TARGET_S
    _table(
        ["figure", "time"],
        [
            ["first call (cold caches)", _ms(cold)],
            [f"median of {calls:,} calls", _ms(median)],
            [f"p95 of {calls:,} calls", _ms(p95)],
            ["fastest / slowest", f"{_ms(min(times))} / {_ms(max(times))}"],
        ],
    )
    print(f"result: {first.kv_capacity_tokens:,} KV tokens, fits={first.fits} (a sanity check that the call did work)")
    print(f"target: median < {_ms(MEDIAN_TARGET_S)} -> {'ok' if ok else 'MISS'}")
    return ok


def sweep(archs: dict[str, Architecture], gpus: list[GpuSpec], passes: int) -> bool:
    """(b): returns whether the median rate meets the target."""
    requests = [
        # detail=False: the sweep path solvers and searches use (no formulas, curve points or replica bills)
        EstimateRequest(arch=arch, gpu=gpu, gpus=count, tp=tp, weights=weights, engine=engine, detail=False)
        for arch in archs.values()
        for gpu in gpus
        for count in GPU_COUNTS
        for tp in TP_SIZES
        if count % tp == 0
        for weights in WEIGHT_FORMATS
        for engine in Engine
    ]
    layouts = sum(1 for count in GPU_COUNTS for tp in TP_SIZES if count % tp == 0)
    print(
        f"\n(b) sweep: {len(archs)} models x {len(gpus)} GPUs x {layouts} (GPU count, TP) layouts x "
        f"{len(WEIGHT_FORMATS)} weight formats x {len(Engine)} engines = {len(requests):,} estimates, "
        f"{passes} pass(es)"
    )
    clock = time.perf_counter
    rates: list[float] = []
    errors: Counter[str] = Counter()
    by_group: defaultdict[tuple[str, str], float] = defaultdict(float)
    by_count: Counter[tuple[str, str]] = Counter()
    rows = []
    for index in range(passes):
        errors.clear()
        start = clock()
        for request in requests:
            began = clock()
            try:
                estimate_memory(request)
            except SizingError as error:
                errors[error.code.value] += 1
            key = (request.arch.model_type, request.engine.value)
            by_group[key] += clock() - began
            by_count[key] += 1
        elapsed = clock() - start
        rates.append(len(requests) / elapsed)
        rows.append([f"pass {index + 1}", f"{elapsed:.3f} s", f"{rates[-1]:,.0f}", f"{sum(errors.values()):,}"])
    _table(["pass", "wall time", "estimates/s", "SizingError (counted as done)"], rows)
    print(f"errors by code: {', '.join(f'{code} {count:,}' for code, count in sorted(errors.items())) or 'none'}")

    names = {arch.model_type: slug for slug, arch in archs.items()}
    models = list(dict.fromkeys(model for model, _ in by_group))
    print("\nmean time per estimate by model and engine, over all passes")
    _table(
        ["model", *(engine.value for engine in Engine), "all engines"],
        [
            [
                names.get(model, model),
                *(_ms(by_group[model, engine.value] / by_count[model, engine.value]) for engine in Engine),
                f"{sum(by_count[model, e.value] for e in Engine) / sum(by_group[model, e.value] for e in Engine):,.0f}/s",
            ]
            for model in models
        ],
    )
    median = statistics.median(rates)
    ok = median >= RATE_TARGET
    print(f"target: median {median:,.0f} estimates/s >= {RATE_TARGET:,} -> {'ok' if ok else 'MISS'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=MIN_CALLS, help=f"calls for (a), at least {MIN_CALLS}")
    parser.add_argument("--passes", type=int, default=3, help="sweep passes for (b); the target uses their median")
    args = parser.parse_args(argv)
    calls = max(MIN_CALLS, args.calls)
    passes = max(1, args.passes)

    start = time.perf_counter()
    archs = load_models(tuple(dict.fromkeys((SINGLE_MODEL, *SWEEP_MODELS))))
    parsed = time.perf_counter() - start
    gpus = [gpu_spec(row) for row in json.loads((CATALOG / "gpus.json").read_text())]
    single_gpu = next((gpu for gpu in gpus if gpu.slug == SINGLE_GPU), None)
    if single_gpu is None:
        raise SystemExit(f"gpus.json lacks {SINGLE_GPU}: cannot run the speed benchmark")
    print(f"Python {sys.version.split()[0]}; parsed {len(archs)} catalog configs in {_ms(parsed)} (not timed below)\n")

    single_ok = single_estimate(archs[SINGLE_MODEL], single_gpu, calls)
    sweep_ok = sweep({slug: archs[slug] for slug in SWEEP_MODELS}, gpus, passes)
    simulation_ok = simulation(archs[SINGLE_MODEL], single_gpu)
    search_ok = configuration_search(archs[SINGLE_MODEL], gpus)
    verdicts = {"single estimate": single_ok, "sweep": sweep_ok, "simulation": simulation_ok, "search": search_ok}
    words = ", ".join(f"{name} {'ok' if good else 'MISS'}" for name, good in verdicts.items())
    print(f"\nSUMMARY: {words} -> {'OK' if all(verdicts.values()) else 'FAIL'}")
    return 0 if all(verdicts.values()) else 1


def simulation(arch: Architecture, gpu: GpuSpec) -> bool:
    """(c): returns whether 100,000 requests simulate in under SIMULATION_TARGET_S."""
    plan = serving_plan(EstimateRequest(arch=arch, gpu=gpu, engine=Engine.VLLM, max_model_len=8192))
    profile = sample_profile()
    rate = 0.8 * saturation_rate(plan, profile)
    sample = workload_sample(profile, rate_per_s=rate, requests=SIMULATED_REQUESTS, seed=1)
    started = time.perf_counter()
    result = simulate(model=plan.model, config=plan.config, requests=sample, load=LoadKind.RATE, rate_per_s=rate)
    elapsed = time.perf_counter() - started
    print(
        f"\n(c) simulator: {SIMULATED_REQUESTS:,} requests of the sample profile at {rate:.2f} requests/s on one "
        f"{gpu.name} (vLLM, {plan.config.kv_capacity_tokens:,} KV tokens): {elapsed:.2f} s "
        f"({SIMULATED_REQUESTS / elapsed:,.0f} requests/s simulated); completed {result.completed:,}, "
        f"rejected {result.rejected:,}, preempted {result.preempted:,}, TTFT P95 {result.ttft.p95:,.0f} ms"
    )
    ok = elapsed < SIMULATION_TARGET_S
    print(f"target: < {SIMULATION_TARGET_S:.0f} s -> {'ok' if ok else 'MISS'}")
    return ok


def configuration_search(arch: Architecture, gpus: list[GpuSpec]) -> bool:
    """(d): returns whether SEARCH_CANDIDATES candidates are searched in under SEARCH_TARGET_S."""
    candidates = candidates_for(
        arch,
        gpus=gpus,
        counts=(1, 2, 4, 8),
        tps=(1, 2, 4, 8),
        weights=("bf16", "fp8", "awq-int4"),
        kv_dtypes=("auto", "fp8"),
        engines=(Engine.VLLM, Engine.SGLANG, Engine.TRTLLM),
    )[:SEARCH_CANDIDATES]
    started = time.perf_counter()
    outcomes = search(
        arch,
        candidates,
        sample_profile(),
        rate_per_s=2.0,
        slo=Slo(ttft_s=2.0, tpot_s=0.1),
        requests=200,
        max_model_len=8192,
    )
    elapsed = time.perf_counter() - started
    meeting = sum(1 for o in outcomes if o.meets_slo)
    fitting = sum(1 for o in outcomes if o.fits)
    print(
        f"\n(d) search: {len(candidates):,} candidates in {elapsed:.1f} s ({elapsed / len(candidates) * 1000:.1f} ms "
        f"each): {fitting} fit, {meeting} meet the SLOs; cheapest: "
        f"{outcomes[0].candidate.label() if outcomes and outcomes[0].meets_slo else 'none'}"
    )
    ok = elapsed < SEARCH_TARGET_S and len(candidates) >= SEARCH_CANDIDATES
    print(f"target: {SEARCH_CANDIDATES:,} candidates < {SEARCH_TARGET_S:.0f} s -> {'ok' if ok else 'MISS'}")
    return ok


if __name__ == "__main__":
    sys.exit(main())

"""Serving plans from the shipped catalog files (`sizing/catalog_data/{models,gpus}.json`), without Django: what
`python -m benchmarks_app.simserver`, the tests and the benchmark script build their simulated deployment from.
(`manage.py simserve` goes through the service layer and the database instead, which adds calibrations.)"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from sizing.estimator.architecture import Architecture, architecture_from_config, merge_quant_config
from sizing.estimator.engines import Engine
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest
from sizing.estimator.perf import decode_tokens_per_s, time_to_first_token_s
from sizing.estimator.serving import ServingPlan, serving_plan
from sizing.estimator.units import MiB

CATALOG = Path(__file__).resolve().parents[2] / "sizing" / "catalog_data"


@cache
def _rows(kind: str) -> dict[str, dict[str, Any]]:
    data = json.loads((CATALOG / f"{kind}.json").read_text())
    rows = data["models"] if kind == "models" else data
    return {row["slug"]: row for row in rows}


def catalog_gpu(slug: str) -> GpuSpec:
    """The estimator's view of a catalog GPU, as the service builds it (nvidia-smi total, else the marketed GB; the
    CUDA-visible total, SM count, compute capability and NVSwitch board as the catalog gives them)."""
    rows = _rows("gpus")
    if slug not in rows:
        raise KeyError(f"unknown GPU {slug!r}; the catalog has {', '.join(sorted(rows))}")
    row = rows[slug]
    mib = row.get("nvidia_smi_memory_mib")
    link = row.get("interconnect") or {}
    return GpuSpec(
        slug=row["slug"],
        name=row["name"],
        memory_bytes=mib * MiB if mib else row["marketed_memory_gb"] * 10**9,
        memory_bandwidth_bytes_per_s=int(row.get("memory_bandwidth_gb_s", 0) * 10**9),
        tflops_dense={key: float(value) for key, value in row.get("tflops_dense", {}).items()},
        interconnect=str(link.get("kind", "")),
        interconnect_bytes_per_s=int(float(link.get("bandwidth_gb_s") or 0) * 10**9),
        pcie_generation=row.get("pcie_generation"),
        price_per_hour_usd=row.get("price_per_hour_usd"),
        cuda_total_bytes=row["cuda_total_mib"] * MiB if row.get("cuda_total_mib") else None,
        sm_count=row.get("sm_count"),
        compute_capability=_compute_capability(row.get("compute_capability")),
        nvswitch=bool(row.get("nvswitch")),
    )


def _compute_capability(text: str | None) -> tuple[int, int] | None:
    """ "8.9" -> (8, 9); None for AMD cards."""
    if not text:
        return None
    major, _, minor = str(text).partition(".")
    return int(major), int(minor or 0)


def catalog_arch(slug: str) -> Architecture:
    rows = _rows("models")
    if slug not in rows:
        raise KeyError(f"unknown model {slug!r} (a catalog slug such as meta-llama/Meta-Llama-3-8B)")
    row = rows[slug]
    return architecture_from_config(merge_quant_config(row["config"], row.get("quant_config")))


def catalog_plan(
    *,
    model: str,
    gpu: str,
    gpus: int | None = None,
    tp: int | None = None,
    pp: int = 1,
    engine: str = "vllm",
    weights: str = "auto",
    kv_dtype: str = "auto",
    gpu_memory_utilization: float | None = None,
    max_model_len: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_queue: int | None = None,
) -> ServingPlan:
    """The serving plan of a catalog model on catalog GPUs (raises KeyError or SizingError)."""
    request = EstimateRequest(
        arch=catalog_arch(model),
        gpu=catalog_gpu(gpu),
        gpus=gpus,
        tp=tp,
        pp=pp,
        engine=Engine(engine),
        weights=weights,
        kv_dtype=kv_dtype,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    if gpu_memory_utilization is not None:
        request = replace(request, gpu_memory_utilization=gpu_memory_utilization)
    return serving_plan(request, max_queue=max_queue)


def served_max_model_len(plan: ServingPlan) -> int:
    """The context length the server accepts: the plan's, never more than one replica's KV cache holds (vLLM
    refuses to start otherwise)."""
    length = plan.memory.effective_max_model_len or plan.config.kv_capacity_tokens
    block = plan.config.block_size
    return max(block, min(length, plan.config.kv_capacity_tokens // block * block))


def plan_figures(plan: ServingPlan, *, speedup: float, prompt_tokens: int = 1000, batch: int = 32) -> list[str]:
    """Lines describing the simulated deployment and the latencies the model predicts for it (model time, and
    wall-clock time at this speedup)."""
    config = plan.config
    model = plan.model
    memory = plan.memory
    ttft = time_to_first_token_s(model, prompt_tokens=prompt_tokens, chunk_tokens=config.max_num_batched_tokens)
    itl_1 = 1 / decode_tokens_per_s(model, batch=1, context_tokens=prompt_tokens)
    itl_b = batch / decode_tokens_per_s(model, batch=batch, context_tokens=prompt_tokens)

    def both(seconds: float) -> str:
        if speedup == float("inf"):
            return f"{seconds * 1000:.1f} ms model time (0 on the wall clock: zero-delay)"
        return f"{seconds * 1000:.1f} ms model time, {seconds / speedup * 1000:.2f} ms wall clock"

    return [
        f"deployment: {config.replicas} replica(s) x TP {memory.tp} x PP {memory.pp} on {memory.gpu}, "
        f"{memory.engine}, weights {memory.weight_format}, KV {memory.kv_dtype}",
        f"per replica: {config.kv_capacity_tokens:,} KV tokens in blocks of {config.block_size}, max_num_seqs "
        f"{config.max_num_seqs}, max_num_batched_tokens {config.max_num_batched_tokens}, queue limit "
        f"{config.queue_limit}; max_model_len {served_max_model_len(plan):,}",
        f"predicted on an idle replica: TTFT of a {prompt_tokens}-token prompt {both(ttft)}",
        f"predicted inter-token latency at {prompt_tokens} tokens of context: batch 1 {both(itl_1)}; "
        f"batch {batch} {both(itl_b)}",
    ]

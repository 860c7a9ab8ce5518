"""Measured against estimated: what the performance model predicts for a run's own settings (model, GPU, TP,
engine, load, mean input and output lengths), beside what the run measured, with the error of each figure; and
calibrating the GPU/engine efficiencies from chosen runs (a `calibrate` simulation job)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks_app.models import BenchmarkRun
from sizing.estimator.errors import SizingError, invalid_argument
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Organisation, SimulationJob
from sizing.services.simulations import simulation_job_create, simulation_plan, simulation_profile, simulation_run

COMPARE_MAX_REQUESTS = 1000  # simulated requests per comparison (the run's own count when smaller, at least 50)
COMPARE_MIN_REQUESTS = 50
# (canonical metric, field) pairs compared; throughputs compared as they are
COMPARED = (
    ("ttft_ms", "mean"),
    ("ttft_ms", "p50"),
    ("ttft_ms", "p99"),
    ("tpot_ms", "mean"),
    ("tpot_ms", "p50"),
    ("itl_ms", "mean"),
    ("e2e_ms", "mean"),
    ("e2e_ms", "p99"),
)


def _metric(run: BenchmarkRun, key: str, field: str) -> float | None:
    value = ((run.metrics or {}).get(key) or {}).get(field)
    return float(value) if isinstance(value, int | float) else None


def run_traffic(run: BenchmarkRun) -> dict[str, Any] | None:
    """The run's traffic as the model takes it: mean input and output tokens, the load (concurrency, rate or
    offline) and how many requests; None when the file does not give the lengths."""
    input_tokens = _metric(run, "input_tokens", "mean")
    output_tokens = _metric(run, "output_tokens", "mean")
    if not input_tokens or not output_tokens:
        return None
    load = run.load or {}
    kind = load.get("kind")
    requests = max(COMPARE_MIN_REQUESTS, min(COMPARE_MAX_REQUESTS, (run.completed or 0) + (run.failed or 0)))
    traffic: dict[str, Any] = {
        "input_tokens": round(input_tokens),
        "output_tokens": max(1, round(output_tokens)),
        "requests": requests,
    }
    if kind == "concurrency" and load.get("concurrency"):
        traffic.update(load="concurrency", concurrency=int(load["concurrency"]))
    elif kind == "rate" and load.get("rate"):
        traffic.update(load="rate", rate=float(load["rate"]))
    elif kind == "offline":
        traffic.update(load="offline")
    else:
        return None
    return traffic


def run_missing(run: BenchmarkRun) -> list[str]:
    """What the run still needs before the performance model can be held against it: "model" (a catalog or
    uploaded model), "gpu", "traffic" (mean input and output tokens and a load the file gives)."""
    missing = [name for name, value in (("model", run.model), ("gpu", run.gpu)) if value is None]
    if run_traffic(run) is None:
        missing.append("traffic")
    return missing


def benchmark_run_compare(*, run: BenchmarkRun) -> dict[str, Any]:
    """{"missing": [...]} when the run lacks a catalog model, a GPU or readable traffic; {"error": ...} when the
    model cannot run it; else the rows measured / predicted / error (predicted − measured) / measured."""
    missing = run_missing(run)
    traffic = run_traffic(run)
    if missing or traffic is None:
        return {"missing": missing}
    parameters = {"gpus": run.gpu_count or run.tp or 1, "tp": run.tp, "engine": run.engine or "vllm"}
    try:
        plan = simulation_plan(gpu=run.gpu, model=run.model, parameters=parameters, organisation=run.organisation)
        profile = simulation_profile(input_tokens=traffic["input_tokens"], output_tokens=traffic["output_tokens"])
        predicted = simulation_run(
            plan=plan,
            profile=profile,
            load=traffic["load"],
            rate=traffic.get("rate"),
            concurrency=traffic.get("concurrency"),
            requests=traffic["requests"],
        )
    except SizingError as error:
        return {"error": error.message}
    rows = []
    for key, field in COMPARED:
        measured = _metric(run, key, field)
        estimate = (predicted.get(key) or {}).get(field)
        rows.append(_row(f"{key}.{field}", measured, estimate))
    rows.append(_row("output_tokens_per_s", run.output_tokens_per_s, predicted.get("output_tokens_per_s")))
    rows.append(_row("requests_per_s", run.requests_per_s, predicted.get("requests_per_s")))
    errors = [abs(row["error"]) for row in rows if row["error"] is not None]
    return nonfinite_as_text(
        {
            "traffic": traffic,
            "plan": predicted.get("plan"),
            "rows": rows,
            "median_abs_error": sorted(errors)[len(errors) // 2] if errors else None,
        }
    )


def _row(key: str, measured: float | None, predicted: float | None) -> dict[str, Any]:
    error = (predicted - measured) / measured if measured and predicted is not None else None
    return {"key": key, "measured": measured, "predicted": predicted, "error": error}


def measurement_of(run: BenchmarkRun) -> dict[str, Any]:
    """The run as one measurement of the `calibrate` job (its traffic and its mean TTFT, TPOT and output rate)."""
    traffic = run_traffic(run)
    if traffic is None:
        raise invalid_argument("runs", f"run {run.pk} ({run.name}): no input/output lengths or load to calibrate with")
    return nonfinite_as_text(
        {
            **traffic,
            "label": run.name[:100],
            "output_tokens_per_s": run.output_tokens_per_s,
            "ttft_ms": _metric(run, "ttft_ms", "mean"),
            "tpot_ms": _metric(run, "tpot_ms", "mean"),
        }
    )


def benchmark_runs_calibrate(
    *, organisation: Organisation, user: Any, runs: Sequence[BenchmarkRun], save: bool = False
) -> SimulationJob:
    """A `calibrate` job fitting the efficiencies of the runs' GPU and engine to what they measured (all runs of
    one GPU model and engine, each with a catalog model)."""
    if not runs:
        raise invalid_argument("runs", "choose at least one run")
    first = runs[0]
    for run in runs:
        missing = [name for name in ("model", "gpu") if getattr(run, name) is None]
        if missing:
            raise invalid_argument(
                "runs", f"run {run.pk} ({run.name}) has no {' or '.join(missing)}: set it on the run first"
            )
        if run.gpu_id != first.gpu_id or (run.engine or "vllm") != (first.engine or "vllm"):
            raise invalid_argument("runs", "calibrate runs of one GPU model and one engine at a time")
        if run.model_id != first.model_id:
            raise invalid_argument(
                "runs",
                "calibrate runs of one model at a time (the efficiencies are the "
                "GPU's and engine's; the model fixes the work per token)",
            )
    inputs = {
        "kind": "calibrate",
        "model": first.model.slug,
        "gpu": first.gpu.slug,
        "gpus": first.gpu_count or first.tp or 1,
        "tp": first.tp,
        "engine": first.engine or "vllm",
        "measurements": [measurement_of(run) for run in runs],
        "save": save,
    }
    return simulation_job_create(
        organisation=organisation, user=user, inputs={k: v for k, v in inputs.items() if v is not None}
    )

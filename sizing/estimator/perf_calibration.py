"""Fit a GPU/engine pair's efficiencies to measured benchmark runs, and say how much better the fit is.

A measurement is one run the delivery team made (or imported from `vllm bench serve`, GuideLLM, ...): fixed input
and output lengths, a load (rate, concurrency or offline) and what was measured (output tokens per second, mean
TTFT, mean TPOT). Calibration searches the efficiencies (bandwidth share, MFU, per-step and per-sequence overhead)
that make the simulator reproduce the measurements: it minimises the mean squared log-ratio of simulated to measured
figures by coordinate descent on a shrinking grid, simulating each measurement with the same seed every time.

The result keeps both sets of figures, default and calibrated, with the error of each against every measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from llm_sizing_loadgen.workload import fixed_profile, workload_sample
from sizing.estimator.errors import invalid_argument
from sizing.estimator.perf import Efficiencies, StepModel
from sizing.estimator.simulator import LoadKind, ServingConfig, simulate

# (field, lowest, highest): the search box of each efficiency
BOUNDS: dict[str, tuple[float, float]] = {
    "bandwidth": (0.2, 1.0),
    "mfu": (0.1, 1.0),
    "step_overhead_s": (0.0, 0.02),
    "sequence_overhead_s": (0.0, 0.000_2),
}


@dataclass(frozen=True, kw_only=True)
class Measurement:
    input_tokens: int
    output_tokens: int
    load: LoadKind
    rate_per_s: float | None = None
    concurrency: int | None = None
    requests: int = 200
    output_tokens_per_s: float | None = None
    ttft_ms: float | None = None  # mean
    tpot_ms: float | None = None  # mean
    label: str = ""

    def __post_init__(self) -> None:
        if self.input_tokens < 1 or self.output_tokens < 1:
            raise invalid_argument("measurements", "input and output tokens must be ≥ 1")
        if all(v is None for v in (self.output_tokens_per_s, self.ttft_ms, self.tpot_ms)):
            raise invalid_argument(
                "measurements",
                f"measurement {self.label or self.input_tokens}: nothing measured (give output tokens/s, TTFT or TPOT)",
            )
        if self.load is LoadKind.RATE and not self.rate_per_s:
            raise invalid_argument("measurements", "a rate measurement needs its rate")
        if self.load is LoadKind.CONCURRENCY and not self.concurrency:
            raise invalid_argument("measurements", "a concurrency measurement needs its concurrency")


def _simulated(model: StepModel, config: ServingConfig, m: Measurement) -> dict[str, float | None]:
    requests = workload_sample(
        fixed_profile(input_tokens=m.input_tokens, output_tokens=m.output_tokens),
        rate_per_s=m.rate_per_s if m.load is LoadKind.RATE else None,
        requests=m.requests,
        seed=0,
    )
    result = simulate(
        model=model, config=config, requests=requests, load=m.load, rate_per_s=m.rate_per_s, concurrency=m.concurrency
    )
    return {"output_tokens_per_s": result.output_tokens_per_s, "ttft_ms": result.ttft.mean, "tpot_ms": result.tpot.mean}


def _errors(simulated: dict[str, float | None], m: Measurement) -> dict[str, float]:
    """Relative error (simulated / measured − 1) of every figure the measurement has."""
    out = {}
    for key in ("output_tokens_per_s", "ttft_ms", "tpot_ms"):
        measured, value = getattr(m, key), simulated.get(key)
        if measured and value:
            out[key] = value / measured - 1
    return out


def _loss(model: StepModel, config: ServingConfig, measurements: Sequence[Measurement]) -> float:
    total, count = 0.0, 0
    for m in measurements:
        for error in _errors(_simulated(model, config, m), m).values():
            total += math.log1p(error) ** 2
            count += 1
    return total / count if count else 0.0


@dataclass(frozen=True, kw_only=True)
class Calibration:
    default: Efficiencies
    calibrated: Efficiencies
    default_loss: float
    calibrated_loss: float
    rows: tuple[dict[str, Any], ...]  # per measurement: measured, default and calibrated figures with errors

    def as_dict(self) -> dict[str, Any]:
        def effs(e: Efficiencies) -> dict[str, float]:
            return {
                "mfu": e.mfu,
                "bandwidth": e.bandwidth,
                "link": e.link,
                "step_overhead_s": e.step_overhead_s,
                "sequence_overhead_s": e.sequence_overhead_s,
            }

        return {
            "default": effs(self.default),
            "calibrated": effs(self.calibrated),
            "default_rms_log_error": math.sqrt(self.default_loss),
            "calibrated_rms_log_error": math.sqrt(self.calibrated_loss),
            "rows": list(self.rows),
        }


def perf_calibrate(
    model: StepModel, config: ServingConfig, measurements: Sequence[Measurement], *, rounds: int = 3, grid: int = 5
) -> Calibration:
    """Fit the efficiencies of `model` to the measurements (see the module docstring)."""
    if not measurements:
        raise invalid_argument("measurements", "give at least one measured run to calibrate with")
    default = model.efficiencies
    best = default
    best_loss = default_loss = _loss(model, config, measurements)
    spans = {name: (high - low) for name, (low, high) in BOUNDS.items()}
    for _ in range(rounds):
        for name, (low, high) in BOUNDS.items():
            centre = getattr(best, name)
            half = spans[name] / 2
            values = [min(high, max(low, centre - half + 2 * half * k / (grid - 1))) for k in range(grid)]
            for value in sorted(set(values)):
                if value == getattr(best, name) or (name in ("bandwidth", "mfu") and value <= 0):
                    continue
                trial = replace(best, **{name: value})
                loss = _loss(model.with_efficiencies(trial), config, measurements)
                if loss < best_loss - 1e-12:
                    best, best_loss = trial, loss
            spans[name] /= 2
    rows = []
    calibrated_model = model.with_efficiencies(best)
    for m in measurements:
        before, after = _simulated(model, config, m), _simulated(calibrated_model, config, m)
        rows.append(
            {
                "label": m.label or f"{m.input_tokens}/{m.output_tokens} {m.load.value}",
                "measured": {k: getattr(m, k) for k in ("output_tokens_per_s", "ttft_ms", "tpot_ms")},
                "default": before,
                "calibrated": after,
                "default_error": _errors(before, m),
                "calibrated_error": _errors(after, m),
            }
        )
    return Calibration(
        default=default, calibrated=best, default_loss=default_loss, calibrated_loss=best_loss, rows=tuple(rows)
    )

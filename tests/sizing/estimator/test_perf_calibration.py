"""Calibrating a GPU/engine pair's efficiencies from measured runs."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.errors import SizingError
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.perf import Efficiencies, step_model
from sizing.estimator.perf_calibration import Measurement, _simulated, perf_calibrate
from sizing.estimator.simulator import LoadKind, ServingConfig

LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}
A10 = GpuSpec(
    slug="a10",
    name="A10",
    memory_bytes=24 * 10**9,
    memory_bandwidth_bytes_per_s=600 * 10**9,
    tflops_dense={"bf16": 125, "fp16": 125},
)
MODEL = step_model(
    arch=architecture_from_config(LLAMA3_8B), gpu=A10, weights="bf16", kv_dtype="auto", tp=1, engine="vllm"
)
CONFIG = ServingConfig(kv_capacity_tokens=40_000, max_num_seqs=64, max_num_batched_tokens=4096)
SHAPES = [
    (512, 128, LoadKind.CONCURRENCY, 1),
    (512, 128, LoadKind.CONCURRENCY, 16),
    (2048, 64, LoadKind.CONCURRENCY, 4),
]


def _measure(truth: Efficiencies) -> list[Measurement]:
    """Measurements a 'real' deployment with these efficiencies would produce."""
    measured = []
    for inputs, outputs, load, clients in SHAPES:
        probe = Measurement(
            input_tokens=inputs,
            output_tokens=outputs,
            load=load,
            concurrency=clients,
            requests=64,
            output_tokens_per_s=1.0,
        )
        figures = _simulated(MODEL.with_efficiencies(truth), CONFIG, probe)
        measured.append(
            Measurement(
                input_tokens=inputs,
                output_tokens=outputs,
                load=load,
                concurrency=clients,
                requests=64,
                output_tokens_per_s=figures["output_tokens_per_s"],
                ttft_ms=figures["ttft_ms"],
                tpot_ms=figures["tpot_ms"],
            )
        )
    return measured


def test_calibration_recovers_the_efficiencies_that_produced_the_measurements():
    # given runs of a slower deployment than the defaults: 55% of bandwidth, 30% MFU, 3 ms per step
    truth = Efficiencies(bandwidth=0.55, mfu=0.3, step_overhead_s=0.003, sequence_overhead_s=0.000_01)
    measurements = _measure(truth)

    # when
    calibration = perf_calibrate(MODEL, CONFIG, measurements)

    # then the fit is much closer than the defaults, and close to the truth
    assert calibration.calibrated_loss < calibration.default_loss / 20
    assert calibration.calibrated.bandwidth == pytest.approx(0.55, abs=0.08)
    assert calibration.calibrated.mfu == pytest.approx(0.3, abs=0.1)
    assert all(abs(e) < 0.1 for row in calibration.rows for e in row["calibrated_error"].values())
    assert any(abs(e) > 0.2 for row in calibration.rows for e in row["default_error"].values())


def test_a_measurement_without_figures_is_refused():
    with pytest.raises(SizingError) as caught:
        Measurement(input_tokens=10, output_tokens=10, load=LoadKind.OFFLINE)
    assert "nothing measured" in caught.value.message


def test_calibration_needs_measurements():
    with pytest.raises(SizingError):
        perf_calibrate(MODEL, CONFIG, [])

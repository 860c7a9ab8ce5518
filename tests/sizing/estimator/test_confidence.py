"""The committed peak's confidence (sizing.estimator.confidence): the prediction bound against hand-computed cases,
which measured errors apply to a release, the two methods, and how measured peaks move the bound.

Student-t quantiles from the standard table (one-sided 0.999): t(2) = 22.327, t(3) = 10.215, t(5) = 5.893."""

from __future__ import annotations

import math

import pytest

from sizing.estimator.confidence import (
    ASSUMED_ERROR,
    MEASURED_ERRORS,
    Measurement,
    error_band,
    prediction_bound,
    reserved_confidence,
    simulated_confidence,
    with_measurements,
)

GIB = 1024**3
MIB = 1024**2


def test_the_prediction_bound_is_the_mean_plus_t_times_the_spread_of_a_new_case() -> None:
    # given three errors: |e| mean 0.02, sample standard deviation 0.01 (signs do not matter)
    errors = [0.01, -0.02, 0.03]

    # when
    bound = prediction_bound(errors, 0.999)

    # then 0.02 + 22.327 × 0.01 × √(1 + 1/3)
    assert bound == pytest.approx(0.02 + 22.327 * 0.01 * math.sqrt(4 / 3), rel=1e-4)


def test_one_error_is_its_own_bound_and_none_is_refused() -> None:
    assert prediction_bound([-0.05], 0.999) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="no measured errors"):
        prediction_bound([], 0.999)


def test_a_release_band_with_enough_logs_uses_its_own_and_a_thin_band_uses_the_whole_engine() -> None:
    # given the vLLM logs measured: 0.6.4 and 0.6.5 (two), 0.8.5, 0.8.5, 0.9.2 and 0.19.0 (four)
    releases = sorted(s.release for s in MEASURED_ERRORS["vllm"])
    assert releases == ["0.19.0", "0.6.4", "0.6.5", "0.8.5", "0.8.5", "0.9.2"]

    # when
    v1 = error_band("vllm", "0.11.0")
    v0 = error_band("vllm", "0.6.6")
    newest = error_band("vllm", "0.33.0")

    # then the 0.8–0.19 band has four logs of its own; the others pool all six
    assert (v1.band, v1.n, v1.pooled) == ("0.8–0.19", 4, False)
    assert (v0.band, v0.n, v0.pooled) == ("all", 6, True)
    assert (newest.band, newest.n, newest.pooled) == ("all", 6, True)
    assert v1.max_abs_error == pytest.approx(0.21)


def test_an_engine_without_a_measured_log_is_assumed() -> None:
    band = error_band("sglang", "0.5.2")
    assert band.assumed
    assert band.n == 0
    assert band.bound(0.999) == ASSUMED_ERROR


def test_a_reserving_engine_commits_its_required_memory_plus_a_margin_on_what_lives_outside_its_budget() -> None:
    # given 20 GiB of budget and 0.5 GiB outside it on vLLM 0.11 (four logs: |e| 0.21, 0.0542, 0.0184, 0.0036)
    magnitudes = [0.21, 0.0542, 0.0184, 0.0036]
    mean = sum(magnitudes) / 4
    sd = math.sqrt(sum((m - mean) ** 2 for m in magnitudes) / 3)
    q = mean + 10.215 * sd * math.sqrt(1 + 1 / 4)

    # when
    confidence = reserved_confidence(
        engine="vllm", release="0.11.0", required_bytes=20 * GIB + GIB // 2, budget_bytes=20 * GIB, kv_risk=0.01
    )

    # then
    assert confidence.method == "reserved_budget"
    assert confidence.outside_bytes == GIB // 2
    assert confidence.relative_margin == pytest.approx(q, rel=1e-3)
    assert confidence.margin_bytes == pytest.approx(q * GIB / 2, rel=1e-3)
    assert confidence.peak_bytes == 20 * GIB + GIB // 2 + confidence.margin_bytes
    assert confidence.kv_risk == 0.01


def test_nothing_outside_the_budget_means_no_margin() -> None:
    confidence = reserved_confidence(
        engine="vllm", release="0.20.0", required_bytes=30 * GIB, budget_bytes=30 * GIB, kv_risk=None
    )
    assert confidence.margin_bytes == 0
    assert confidence.peak_bytes == 30 * GIB


def test_a_growing_engine_takes_the_percentile_of_its_simulated_demand() -> None:
    # given 2,000 samples 1 … 2,000 MiB of KV demand over 10 GiB that does not depend on the load
    samples = [float(i * MIB) for i in range(1, 2001)]

    # when
    confidence = simulated_confidence(fixed_bytes=10 * GIB, kv_demand_bytes=samples, kv_risk=None)

    # then numpy's linear percentile: rank 0.999 × 1,999 = 1,997.001 between 1,998 and 1,999 MiB
    assert not confidence.percentile_is_max
    assert confidence.samples == 2000
    assert confidence.peak_bytes == 10 * GIB + math.ceil((1998 + 0.001) * MIB)


def test_too_few_samples_for_the_percentile_give_the_largest_and_say_so() -> None:
    confidence = simulated_confidence(fixed_bytes=GIB, kv_demand_bytes=[1.0 * MIB, 3.0 * MIB, 2.0 * MIB], kv_risk=None)
    assert confidence.percentile_is_max
    assert confidence.peak_bytes == GIB + 3 * MIB


def _model() -> object:
    return reserved_confidence(
        engine="vllm", release="0.11.0", required_bytes=20 * GIB + GIB // 2, budget_bytes=20 * GIB, kv_risk=None
    )


def test_a_measured_peak_above_the_bound_raises_it_to_that_peak_plus_its_tolerance() -> None:
    # given
    model = _model()
    above = model.peak_bytes + 100 * MIB

    # when
    moved = with_measurements(
        model, [Measurement(kind="load_test", name="pulse", peak_bytes=above, tolerance_bytes=MIB)]
    )

    # then
    assert moved.peak_bytes == above + MIB
    assert [e.effect for e in moved.effects] == ["raised"]


def test_72_hours_of_monitoring_inside_the_bound_tighten_it_but_never_below_the_base() -> None:
    # given a log of 72 h peaking 10 MiB over the base, and a load test below it
    model = _model()
    log = Measurement(
        kind="memory_log", name="72 h", peak_bytes=model.base_bytes + 10 * MIB, tolerance_bytes=MIB, hours=72.0
    )
    test = Measurement(kind="load_test", name="pulse", peak_bytes=model.base_bytes, tolerance_bytes=MIB)

    # when
    moved = with_measurements(model, [log, test])
    short = with_measurements(
        model, [Measurement(kind="memory_log", name="1 h", peak_bytes=model.base_bytes, tolerance_bytes=MIB, hours=1.0)]
    )

    # then the bound is the highest measured peak plus its tolerance
    assert moved.peak_bytes == model.base_bytes + 11 * MIB
    assert {e.measurement.name: e.effect for e in moved.effects} == {"72 h": "tightened", "pulse": "confirmed"}
    # and an hour of monitoring only confirms
    assert short.peak_bytes == model.peak_bytes
    assert [e.effect for e in short.effects] == ["confirmed"]


def test_no_measurement_leaves_the_model_as_it_is() -> None:
    model = _model()
    assert with_measurements(model, []) == model

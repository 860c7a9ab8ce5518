"""Workload profiles: length distributions, arrival patterns, the sample profile's day, the JSON form and fitting a
profile to a request log. Pure: no database."""

from __future__ import annotations

import numpy as np
import pytest

from llm_sizing_loadgen.workload import (
    ArrivalKind,
    ArrivalPattern,
    LengthDistribution,
    LengthKind,
    LoggedRequest,
    RequestClass,
    WorkloadProfile,
    arrival_times,
    profile_fit,
    profile_from_dict,
    profile_to_dict,
    sample_profile,
    workload_sample,
)
from sizing.estimator.errors import SizingError, SizingErrorCode

N = 200_000  # draws for the sampling means: standard errors well under the tolerances below


def _lengths(kind: LengthKind = LengthKind.NORMAL, **overrides) -> LengthDistribution:
    return LengthDistribution(kind=kind, **{"mean": 500, "std": 100, **overrides})


def _request_class(name: str = "chat", **overrides) -> RequestClass:
    defaults = {"share": 1.0, "input": _lengths(), "output": _lengths(mean=200, std=50)}
    return RequestClass(name=name, **{**defaults, **overrides})


def _profile_dict(**class_overrides) -> dict:
    """The JSON form of a one-class profile, with the class's keys overridden."""
    request_class = {
        "name": "chat",
        "share": 1.0,
        "input": {"kind": "normal", "mean": 500, "std": 100},
        "output": {"kind": "fixed", "mean": 200},
        **class_overrides,
    }
    return {"name": "test", "classes": [request_class]}


# ---------------------------------------------------------------- length distributions


def test_fixed_lengths_are_all_the_stated_length():
    # when
    lengths = _lengths(LengthKind.FIXED, mean=128, std=0).sample(np.random.default_rng(0), 1000)
    # then
    assert lengths.dtype == np.int64
    assert set(lengths.tolist()) == {128}


@pytest.mark.parametrize(
    ("distribution", "tolerance_tokens"),
    [
        (LengthDistribution(kind=LengthKind.NORMAL, mean=500, std=100), 1.0),  # standard error 100/√200,000 ≈ 0.22
        (LengthDistribution(kind=LengthKind.LOGNORMAL, mean=2048, std=890), 10.0),  # standard error ≈ 2
        # bins 1–100 (weight 1, mean 50.5) and 101–300 (weight 3, mean 200.5): (50.5 + 3 × 200.5) / 4 = 163
        (LengthDistribution(kind=LengthKind.EMPIRICAL, bins=((1, 100, 1.0), (101, 300, 3.0))), 1.0),
    ],
    ids=["normal 500 σ 100", "lognormal 2048 σ 890", "empirical two bins"],
)
def test_sampled_lengths_average_to_the_expected_length(distribution, tolerance_tokens):
    # when
    lengths = distribution.sample(np.random.default_rng(0), N)
    # then
    assert abs(lengths.mean() - distribution.expected()) < tolerance_tokens


def test_empirical_expected_length_is_the_weighted_mean_of_the_bins():
    # given bins 1–100 (weight 1) and 101–300 (weight 3): (50.5 × 1 + 200.5 × 3) / 4 = 163
    distribution = LengthDistribution(kind=LengthKind.EMPIRICAL, bins=((1, 100, 1.0), (101, 300, 3.0)))
    # when
    lengths = distribution.sample(np.random.default_rng(0), N)
    # then
    assert distribution.expected() == 163.0
    assert (lengths.min(), lengths.max()) == (1, 300)


def test_lognormal_standard_deviation_is_the_stated_one():
    # when
    lengths = _lengths(LengthKind.LOGNORMAL, mean=2048, std=890).sample(np.random.default_rng(0), N)
    # then: within 2% of 890
    assert abs(lengths.std() - 890) < 0.02 * 890


def test_lengths_are_clipped_to_minimum_and_maximum():
    # given a normal far wider than its bounds
    distribution = _lengths(mean=100, std=200, minimum=8, maximum=256)
    # when
    lengths = distribution.sample(np.random.default_rng(0), N)
    # then: P(X < 8) = Φ(−0.46) ≈ 32% land on the minimum, P(X > 256) = 1 − Φ(0.78) ≈ 22% on the maximum
    assert (lengths.min(), lengths.max()) == (8, 256)
    assert 0.30 < np.mean(lengths == 8) < 0.34
    assert 0.20 < np.mean(lengths == 256) < 0.24


# ---------------------------------------------------------------- sampling a profile


def test_the_same_seed_draws_the_same_requests():
    # given
    profile = sample_profile()
    # when
    first = workload_sample(profile, rate_per_s=4.0, requests=2000, seed=7)
    again = workload_sample(profile, rate_per_s=4.0, requests=2000, seed=7)
    other = workload_sample(profile, rate_per_s=4.0, requests=2000, seed=8)
    # then
    for name in ("arrival_s", "input_tokens", "output_tokens", "prefix_tokens", "class_index"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    assert not np.array_equal(first.input_tokens, other.input_tokens)


def test_a_sample_at_the_busiest_hour_follows_its_mix():
    # given the sample profile at 10:00: Q&A 13/73 ≈ 17.8%, reports 60/73 ≈ 82.2%, archive none
    # when
    requests = workload_sample(sample_profile(), rate_per_s=4.0, requests=50_000, seed=1)
    # then
    shares = np.bincount(requests.class_index, minlength=3) / len(requests)
    assert abs(shares[0] - 13 / 73) < 0.01
    assert abs(shares[1] - 60 / 73) < 0.01
    assert shares[2] == 0.0
    assert requests.class_names == ("Real-time Q&A", "Report generation", "Archive analysis")


def test_a_shared_prefix_comes_on_top_of_the_input():
    # given a class with a 1000-token system prompt and 500-token fixed questions
    profile = WorkloadProfile(
        name="rag",
        classes=(_request_class(input=_lengths(LengthKind.FIXED, mean=500, std=0), shared_prefix_tokens=1000),),
    )
    # when
    requests = workload_sample(profile, rate_per_s=None, requests=10, seed=0)
    # then
    assert set(requests.input_tokens.tolist()) == {1500}
    assert set(requests.prefix_tokens.tolist()) == {1000}


# ---------------------------------------------------------------- arrivals


def test_poisson_arrivals_come_at_the_rate_with_poisson_counts():
    # when 100,000 requests at 4 per second
    times = arrival_times(
        ArrivalPattern(kind=ArrivalKind.POISSON), rate_per_s=4.0, requests=100_000, rng=np.random.default_rng(0)
    )
    # then: ≈ 25,000 s in all, and per-second counts with variance ≈ mean ≈ 4
    assert abs(len(times) / times[-1] - 4.0) < 0.04
    counts = np.bincount(times.astype(np.int64))[:-1]  # whole seconds only
    assert abs(counts.mean() - 4.0) < 0.05
    assert 0.95 < counts.var() / counts.mean() < 1.05


def test_constant_arrivals_are_evenly_spaced():
    # when 5 requests at 2 per second
    times = arrival_times(
        ArrivalPattern(kind=ArrivalKind.CONSTANT), rate_per_s=2.0, requests=5, rng=np.random.default_rng(0)
    )
    # then: one every 0.5 s from 0
    assert times.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_a_burst_adds_its_requests_inside_its_window():
    # given 150 requests at 1 per second, of which 50 burst within 10 s from 30 s
    burst = ArrivalPattern(kind=ArrivalKind.BURST, burst_requests=50, burst_window_s=10.0, burst_at_s=30.0)
    # when
    times = arrival_times(burst, rate_per_s=1.0, requests=150, rng=np.random.default_rng(3))
    base = arrival_times(ArrivalPattern(), rate_per_s=1.0, requests=100, rng=np.random.default_rng(3))

    # then: the 100 Poisson arrivals are those of the same seed, plus exactly 50 in [30 s, 40 s)
    def in_window(values: np.ndarray) -> int:
        return int(np.sum((values >= 30.0) & (values < 40.0)))

    assert len(times) == 150
    assert in_window(times) == in_window(base) + 50
    assert np.all(np.diff(times) >= 0)


def test_a_burst_larger_than_the_run_keeps_one_poisson_arrival():
    # when a burst of 500 is asked of a run of 10 requests
    burst = ArrivalPattern(kind=ArrivalKind.BURST, burst_requests=500, burst_window_s=5.0)
    times = arrival_times(burst, rate_per_s=1.0, requests=10, rng=np.random.default_rng(0))
    # then: 9 burst requests in [0, 5) and one Poisson arrival
    assert len(times) == 10
    assert int(np.sum(times < 5.0)) >= 9


def test_offline_requests_all_arrive_at_once():
    times = arrival_times(ArrivalPattern(), rate_per_s=None, requests=4, rng=np.random.default_rng(0))
    assert times.tolist() == [0.0, 0.0, 0.0, 0.0]


# ---------------------------------------------------------------- the sample profile's day


def test_the_sample_profiles_busiest_hour_is_10():
    # given Q&A 65% over 24 h = 0.65/24 ≈ 0.0271 of the day per hour, reports 25% over 10–12 = 0.125 per hour,
    # archive 10% over 14–16 = 0.05 per hour
    profile = sample_profile()
    # when
    curve = profile.daily_curve()
    # then: 10:00 and 11:00 carry 0.65/24 + 0.125 ≈ 0.1521 each; the first of equals is 10
    assert profile.busiest_hour() == 10
    assert curve[10] == pytest.approx(0.65 / 24 + 0.125)
    assert curve[11] == pytest.approx(curve[10])
    assert curve[14] == pytest.approx(0.65 / 24 + 0.05)
    assert curve[3] == pytest.approx(0.65 / 24)
    assert curve.sum() == pytest.approx(1.0)


def test_the_mix_at_10_is_13_73_qa_and_60_73_reports():
    # given at 10:00 Q&A 0.65/24 and reports 0.125 of the day's requests:
    # Q&A (0.65/24) / (0.65/24 + 0.125) = 0.65 / 3.65 = 13/73 ≈ 0.178; reports 3/3.65 = 60/73 ≈ 0.822
    # when
    mix = sample_profile().mix_at(10)
    # then
    assert mix.tolist() == pytest.approx([13 / 73, 60 / 73, 0.0], rel=1e-12)
    assert sample_profile().mix_at().tolist() == pytest.approx(mix.tolist())  # the busiest hour by default


def test_the_mix_at_14_and_at_night():
    # given at 14:00 Q&A 0.65/24 and archive 0.05: 0.65 / (0.65 + 1.2) = 13/37
    # when
    afternoon = sample_profile().mix_at(14)
    night = sample_profile().mix_at(3)
    # then
    assert afternoon.tolist() == pytest.approx([13 / 37, 0.0, 24 / 37], rel=1e-12)
    assert night.tolist() == [1.0, 0.0, 0.0]


# ---------------------------------------------------------------- the JSON form


def test_the_json_form_round_trips():
    # given
    profile = sample_profile()
    # when
    again = profile_from_dict(profile_to_dict(profile))
    # then
    assert again == profile


def _error_of(data) -> SizingError:
    with pytest.raises(SizingError) as caught:
        profile_from_dict(data)
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    return caught.value


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "empty"}, "classes", "a profile needs a non-empty list of request classes"),
        ([1, 2], "profile", "a profile must be a JSON object"),
        (_profile_dict(share=0), "classes[0]", "classes[0]: class 'chat': share must be > 0"),
        (_profile_dict(name=" "), "classes[0]", "classes[0]: a request class needs a name"),
        (
            _profile_dict(input={"kind": "gaussian", "mean": 5}),
            "classes[0]",
            "classes[0].input.kind must be one of fixed, normal, lognormal, empirical",
        ),
        (
            _profile_dict(input={"kind": "normal", "mean": "abc"}),
            "classes[0]",
            "classes[0].input: numbers expected (mean, std, minimum, maximum, bins as [low, high, weight])",
        ),
        (
            _profile_dict(input={"kind": "normal", "mean": 100, "maximum": 1e400}),
            "classes[0]",
            "classes[0].input: numbers expected (mean, std, minimum, maximum, bins as [low, high, weight])",
        ),
        (
            _profile_dict(output={"kind": "normal", "mean": 0.5}),
            "classes[0]",
            "classes[0].output: mean length 0.5 must be ≥ 1 token",
        ),
        (
            _profile_dict(output={"kind": "normal", "mean": 100, "minimum": 50, "maximum": 10}),
            "classes[0]",
            "classes[0].output: maximum 10 is below minimum 50",
        ),
        (
            _profile_dict(output={"kind": "empirical", "bins": [[10, 5, 1]]}),
            "classes[0]",
            "classes[0].output: bin (10, 5, 1.0): need 1 ≤ low ≤ high and weight ≥ 0",
        ),
        (
            _profile_dict(windows=[[12, 10]]),
            "classes[0]",
            "classes[0]: class 'chat': window 12–10 must satisfy 0 ≤ start < end ≤ 24",
        ),
        (
            _profile_dict(windows=[10]),
            "classes[0]",
            "classes[0]: share, shared_prefix_tokens and windows ([start, end] hours) must be numbers",
        ),
        (_profile_dict(shared_prefix_tokens=-1), "classes[0]", "classes[0]: shared_prefix_tokens must be ≥ 0"),
        (
            {**_profile_dict(), "arrival": {"kind": "storm"}},
            "arrival",
            "arrival.kind must be one of poisson, constant, burst; burst numbers must be numbers",
        ),
        (
            {**_profile_dict(), "arrival": {"kind": "burst", "burst_requests": [5]}},
            "arrival",
            "arrival.kind must be one of poisson, constant, burst; burst numbers must be numbers",
        ),
        (
            {**_profile_dict(), "arrival": {"kind": "burst", "burst_requests": -5}},
            "burst_requests",
            "burst_requests must be ≥ 0",
        ),
        (
            {"classes": [_profile_dict()["classes"][0], _profile_dict()["classes"][0]]},
            "classes",
            "request class names must be unique",
        ),
    ],
    ids=[
        "no classes",
        "not an object",
        "zero share",
        "blank name",
        "unknown length kind",
        "mean not a number",
        "maximum overflows",
        "mean below one token",
        "maximum below minimum",
        "empirical bin reversed",
        "window reversed",
        "window not a pair",
        "negative prefix",
        "unknown arrival kind",
        "burst not a number",
        "negative burst",
        "duplicate class names",
    ],
)
def test_profile_from_dict_errors_name_the_field(data, field, message):
    # when
    error = _error_of(data)
    # then
    assert error.message == message
    assert error.extra == {"fields": {field: [message]}}


# ---------------------------------------------------------------- fitting a profile to a log


def _synthetic_log(seed: int = 11) -> list[LoggedRequest]:
    """A week of 20,000 requests: 80% chat all day (input normal 300 σ 60, output normal 200 σ 50) and 20% batch
    jobs 10:00–12:00 (input lognormal 4000 σ 1500, output normal 800 σ 100)."""
    rng = np.random.default_rng(seed)
    chat = LengthDistribution(kind=LengthKind.NORMAL, mean=300, std=60)
    chat_out = LengthDistribution(kind=LengthKind.NORMAL, mean=200, std=50)
    batch = LengthDistribution(kind=LengthKind.LOGNORMAL, mean=4000, std=1500)
    batch_out = LengthDistribution(kind=LengthKind.NORMAL, mean=800, std=100)
    rows = []
    for name, count, inputs, outputs, hours in (
        ("chat", 16_000, chat, chat_out, (0, 24)),
        ("batch", 4_000, batch, batch_out, (10, 12)),
    ):
        days = rng.integers(0, 7, count)
        seconds = rng.uniform(hours[0] * 3600, hours[1] * 3600, count)
        for day, second, input_tokens, output_tokens in zip(
            days, seconds, inputs.sample(rng, count), outputs.sample(rng, count), strict=True
        ):
            rows.append(
                LoggedRequest(
                    timestamp_s=float(day * 86_400 + second),
                    input_tokens=int(input_tokens),
                    output_tokens=int(output_tokens),
                    request_class=name,
                    hour=int(second // 3600),
                )
            )
    return rows


def test_profile_fit_recovers_the_classes_of_a_synthetic_log():
    # given
    log = _synthetic_log()
    # when
    fit = profile_fit(log, name="fitted")
    # then: classes in name order, shares 20% / 80%, batch only 10:00–12:00, chat all day
    batch, chat = fit.profile.classes
    assert (batch.name, chat.name) == ("batch", "chat")
    assert (batch.share, chat.share) == (0.2, 0.8)
    assert (batch.windows, chat.windows) == (((10, 12),), ())
    # lengths within 2% (means) and 5% (standard deviations) of the generating parameters
    for request_class, side, mean, std in (
        (chat, "input", 300, 60),
        (chat, "output", 200, 50),
        (batch, "input", 4000, 1500),
        (batch, "output", 800, 100),
    ):
        distribution = getattr(request_class, side)
        assert abs(distribution.mean - mean) < 0.02 * mean, (request_class.name, side)
        assert abs(distribution.std - std) < 0.05 * std, (request_class.name, side)
    # the skewed batch prompts are recognised as lognormal, and the fit is close (KS distance under 0.05)
    assert batch.input.kind is LengthKind.LOGNORMAL
    assert fit.classes["batch"]["input"].ks_statistic < 0.05
    assert fit.classes["chat"]["input"].ks_statistic < 0.05
    # the report: data and fitted percentiles agree within 5%, the histograms are shares of requests
    chat_input = fit.classes["chat"]["input"]
    for key in ("p50", "p90", "p99"):
        assert abs(chat_input.fitted_percentiles[key] - chat_input.data_percentiles[key]) < (
            0.05 * chat_input.data_percentiles[key]
        ), key
    assert len(chat_input.histogram["edges"]) == 31
    assert sum(chat_input.histogram["data"]) == pytest.approx(1.0)
    assert sum(chat_input.histogram["fitted"]) == pytest.approx(1.0)
    # the day: 20,000 requests; 10:00 and 11:00 each hold 1/24 of chat plus half of batch
    assert fit.requests == 20_000
    assert sum(fit.hourly_requests) == 20_000
    assert fit.profile.busiest_hour() in (10, 11)
    assert 2_500 < fit.hourly_requests[10] < 2_900  # 16,000 / 24 + 4,000 / 2 ≈ 2,667


def test_profile_fit_sees_poisson_arrivals_as_dispersion_about_1():
    # given 20,000 Poisson arrivals at 0.5 per second (≈ 667 minutes of ≈ 30 requests)
    times = arrival_times(ArrivalPattern(), rate_per_s=0.5, requests=20_000, rng=np.random.default_rng(5))
    log = [LoggedRequest(timestamp_s=float(t), input_tokens=100, output_tokens=50) for t in times]
    # when
    fit = profile_fit(log)
    # then
    assert 0.85 < fit.dispersion_index < 1.15
    assert abs(fit.mean_rate_per_s - 0.5) < 0.01
    assert fit.profile.classes[0].name == "default"
    assert fit.profile.classes[0].input.kind is LengthKind.FIXED


def test_profile_fit_sees_bursts_as_a_large_dispersion():
    # given 2,000 requests spread over 100 minutes plus 2,000 in one minute
    rng = np.random.default_rng(2)
    times = np.concatenate([rng.uniform(0, 6000, 2000), rng.uniform(3000, 3060, 2000)])
    log = [LoggedRequest(timestamp_s=float(t), input_tokens=100, output_tokens=50) for t in times]
    # when
    fit = profile_fit(log)
    # then: one minute of ≈ 2,020 among minutes of ≈ 20
    assert fit.dispersion_index > 100


def test_profile_fit_survives_a_stray_timestamp_years_away():
    # given two requests a minute apart and one 30 years later (a misread epoch): 16 million empty minutes
    log = [LoggedRequest(timestamp_s=t, input_tokens=100, output_tokens=50) for t in (0.0, 60.0, 30 * 365 * 86_400.0)]
    # when
    fit = profile_fit(log)
    # then: variance/mean of 1, 1, 0, …, 0, 1 over 15,768,001 minutes ≈ 1
    assert fit.requests == 3
    assert fit.dispersion_index == pytest.approx(1.0, abs=1e-6)


def test_profile_fit_needs_two_requests():
    # when
    with pytest.raises(SizingError) as caught:
        profile_fit([LoggedRequest(timestamp_s=0.0, input_tokens=1, output_tokens=1)])
    # then
    assert caught.value.extra == {"fields": {"file": ["the log needs at least 2 requests to fit a profile"]}}

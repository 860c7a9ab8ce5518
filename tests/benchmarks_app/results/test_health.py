"""The memory analysis and the 72-hour health verdict on the timeline fixtures (make_fixtures.py: T0 =
2026-11-30 13:41:02.123 UTC, 5-minute samples, H100 80GB with 81,559 MiB). The commitment in these tests is
75,000 MiB per GPU = 78,643,200,000 bytes."""

from __future__ import annotations

import doctest
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks_app.results import health as health_module
from benchmarks_app.results.health import (
    BreakerEvent,
    BreakerLogError,
    Verdict,
    bucket_medians,
    climb,
    coverage_hours,
    health_verdict,
    kv_summary,
    memory_analysis,
    memory_ooms,
    memory_restarts,
    parse_breaker_events,
    theil_sen,
    verdict_requirements,
)
from benchmarks_app.results.timeline import (
    MIB,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    iso_utc,
    merge_timelines,
    parse_timeline,
    utc_offset,
)
from tests.benchmarks_app.results.fixtures.timeline import make_fixtures

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "timeline"
COMMITTED = 75_000 * MIB  # 78,643,200,000 bytes
CHECK_CODES = ["coverage", "no_oom", "no_restart", "no_sustained_climb", "peak_within_commitment"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def timeline_of(name: str) -> MemoryTimeline:
    return parse_timeline(fixture(name))


def checks_by_code(result: dict) -> dict[str, dict]:
    return {check["code"]: check for check in result["checks"]}


def first_hours(timeline: MemoryTimeline, hours: float) -> MemoryTimeline:
    """The timeline cut to its first `hours` hours."""
    start = timeline.start_s
    assert start is not None
    return replace(
        timeline,
        gpus=tuple(
            replace(g, samples=tuple(s for s in g.samples if s.time_s is not None and s.time_s - start <= hours * 3600))
            for g in timeline.gpus
        ),
    )


# ---------------------------------------------------------------------------------------------------------------
# Verdicts on the 72-hour logs


def test_healthy_plateau_passes() -> None:
    # given 72 h on two GPUs, flat at 71,000 / 70,500 MiB with two spikes (72,512 and 71,808 MiB)
    # when the verdict is asked against 75,000 MiB per GPU
    result = health_verdict(timeline_of("healthy_2gpu_72h.csv"), committed_bytes_per_gpu=COMMITTED)

    # then every check passes
    assert result["verdict"] == "pass"
    assert result["first_violation"] is None
    assert result["coverage_hours"] == 72.0
    checks = checks_by_code(result)
    assert list(checks) == CHECK_CODES
    assert all(check["passed"] is True for check in checks.values())
    peak = checks["peak_within_commitment"]
    # 72,512 MiB = 76,034,342,912 bytes; headroom 78,643,200,000 − 76,034,342,912 = 2,608,857,088 (2,488 MiB)
    assert peak["extra"]["max_peak_bytes"] == 76_034_342_912
    assert peak["extra"]["headroom_bytes"] == 2_608_857_088
    assert peak["message"] == (
        "The highest peak, 72512 MiB on GPU 0 at 2026-12-02T15:41:02.123Z, stays within the "
        "commitment of 75000 MiB per GPU (2488 MiB to spare, judged within the gauge's step "
        "of 1 MiB)."
    )
    assert (peak["extra"]["reason"], peak["extra"]["tolerance_bytes"]) == ("within_commitment", 1_048_576)
    assert result["figures"]["peak_bytes"] == result["peak_bytes"] == 76_034_342_912
    assert result["tolerance_bytes"] == 1_048_576
    assert [g["peak_bytes"] for g in peak["extra"]["gpus"]] == [76_034_342_912, 75_296_145_408]
    # the engine's start (3 MiB, then 71,000) is the launch, not a restart
    assert checks["no_restart"]["message"] == "No server restart."
    for gpu in checks["no_sustained_climb"]["extra"]["gpus"]:
        assert gpu["judged"] is True
        assert gpu["sustained"] is False
        assert gpu["buckets"] == 73  # hours 0..71 plus the last sample at exactly 72 h
        assert gpu["slope_low_bytes_per_hour"] <= 0 <= gpu["slope_high_bytes_per_hour"]


def test_slow_leak_fails_as_a_sustained_climb_with_the_generator_slope() -> None:
    """The generator adds 40 MiB/h to GPU 0 plus uniform noise in [-64, 64] MiB on 12 samples an hour.

    Tolerance: the median of 12 uniform(−A, A) values has a standard deviation of about A/√12 = 64/3.46 = 18.5 MiB
    (1/(2·f(0)·√n) with f(0) = 1/(2A)); Theil–Sen over 73 hourly medians spread over 72 h (standard deviation of the
    hours 72/√12 = 20.8 h) has a slope error of about 18.5 / (√73 × 20.8) × 1.1 (its efficiency against least
    squares) = 0.11 MiB/h. A tolerance of 0.5 MiB/h is ≈ 4.5 standard errors; integer MiB rounding adds < 0.01.
    """
    # given the leak log
    result = health_verdict(timeline_of("leak_2gpu_72h.csv"), committed_bytes_per_gpu=COMMITTED)

    # then the verdict fails on the climb alone
    assert result["verdict"] == "fail"
    checks = checks_by_code(result)
    assert [code for code, check in checks.items() if check["passed"] is False] == ["no_sustained_climb"]
    gpu0, gpu1 = checks["no_sustained_climb"]["extra"]["gpus"]
    slope_mib = gpu0["slope_bytes_per_hour"] / MIB
    assert abs(slope_mib - make_fixtures.LEAK_MIB_PER_HOUR) <= 0.5
    assert gpu0["slope_low_bytes_per_hour"] / MIB <= 40 <= gpu0["slope_high_bytes_per_hour"] / MIB
    assert gpu0["sustained"] is True
    assert gpu0["limit_source"] == "commitment"
    assert gpu0["limit_bytes"] == COMMITTED
    # fitted end level ≈ 71,000 + 40 × 72 = 73,880 MiB: (75,000 − 73,880) / 40 = 28 h to the commitment
    assert abs(gpu0["level_end_bytes"] / MIB - 73_880) <= 40
    assert abs(gpu0["hours_to_limit"] - 28) <= 1.5
    assert gpu1["sustained"] is False
    # first violation: the end of the first 24 hourly buckets (the test's minimum), i.e. the sample at T0 + 23 h 55
    assert gpu0["detected_at"] == "2026-12-01T13:36:02.123Z"
    assert result["first_violation"] == "2026-12-01T13:36:02.123Z"
    # and the peak itself is still within the commitment
    assert checks["peak_within_commitment"]["passed"] is True


def test_leak_without_a_commitment_projects_to_the_card_total() -> None:
    # given the leak and no commitment: the limit is the card's 81,559 MiB, (81,559 − 73,880) / 40 ≈ 192 h away
    gpu0 = make_leak_gpu0()

    # when the climb is tested with the default 720 h horizon, then with a 100 h one
    default = climb(gpu0)
    short = climb(gpu0, horizon_hours=100)

    # then 192 h is within 720 h (sustained) but not within 100 h (a significant, not sustained, rise)
    assert default.limit_source == "total"
    assert abs(default.hours_to_limit - 192) <= 3
    assert default.sustained is True
    assert short.sustained is False
    assert short.reason.startswith("significant rise, but the total is 19")


def make_leak_gpu0() -> GpuSeries:
    return timeline_of("leak_2gpu_72h.csv").gpu("0")


def test_leak_verdict_without_commitment_still_fails_on_the_climb() -> None:
    result = health_verdict(timeline_of("leak_2gpu_72h.csv"), committed_bytes_per_gpu=None)
    checks = checks_by_code(result)
    assert result["verdict"] == "fail"
    assert checks["peak_within_commitment"]["passed"] is None
    assert checks["no_sustained_climb"]["passed"] is False


def test_oom_and_restart_fail_with_the_first_violating_time() -> None:
    # given the log with GPU 0 ramping to 81,200 MiB, the server dying and restarting, and the engine/kernel log
    result = health_verdict(
        timeline_of("oom_restart_2gpu_72h.csv"),
        committed_bytes_per_gpu=COMMITTED,
        events_text=fixture("oom_events.log"),
    )

    # then it fails; the first violation is the ramp crossing 75,000 MiB (77,000 MiB at i = 357, T0 + 29 h 45)
    assert result["verdict"] == "fail"
    assert result["first_violation"] == "2026-12-01T19:26:02.123Z"
    checks = checks_by_code(result)
    assert checks["peak_within_commitment"]["extra"]["first_violation"] == "2026-12-01T19:26:02.123Z"
    assert checks["peak_within_commitment"]["extra"]["max_peak_bytes"] == 81_200 * MIB
    # the OOM: full (81,200 of 81,559 MiB = 99.56 %) at i = 360 (T0 + 30 h), 0 MiB at the next sample
    oom = checks["no_oom"]
    assert oom["passed"] is False
    assert oom["extra"]["first_violation"] == "2026-12-01T19:41:02.123Z"
    assert [(e["gpu"], e["time"], e["before_bytes"], e["after_bytes"]) for e in oom["extra"]["memory_ooms"]] == [
        ("0", "2026-12-01T19:41:02.123Z", 81_200 * MIB, 0)
    ]
    assert [(e["kind"], e["code"], e["time"]) for e in oom["extra"]["logged"]] == [
        ("oom", None, "2026-12-01T19:41:03Z"),
        ("xid", 31, "2026-12-01T19:41:05Z"),
    ]
    # the restart: both GPUs at 0 MiB from i = 361 (T0 + 30 h 05), back on the plateau at i = 365
    restart = checks["no_restart"]
    assert restart["passed"] is False
    assert restart["extra"]["first_violation"] == "2026-12-01T19:46:02.123Z"
    assert [(e["gpu"], e["kind"], e["time"]) for e in restart["extra"]["memory"]] == [
        ("0", "restart", "2026-12-01T19:46:02.123Z"),
        ("1", "restart", "2026-12-01T19:46:02.123Z"),
    ]
    # and no climb: the restart's three near-zero samples do not move the hourly medians
    assert checks["no_sustained_climb"]["passed"] is True


def test_oom_is_seen_in_memory_without_any_event_log() -> None:
    result = health_verdict(timeline_of("oom_restart_2gpu_72h.csv"), committed_bytes_per_gpu=85_000 * MIB)
    checks = checks_by_code(result)
    assert checks["peak_within_commitment"]["passed"] is True
    assert checks["no_oom"]["passed"] is False
    assert checks["no_oom"]["extra"]["logged"] == []
    assert result["first_violation"] == "2026-12-01T19:41:02.123Z"


def test_a_log_shorter_than_required_is_insufficient() -> None:
    # given the first 48 h of the healthy log
    short = first_hours(timeline_of("healthy_2gpu_72h.csv"), 48)

    # when the 72-hour verdict is asked
    result = health_verdict(short, committed_bytes_per_gpu=COMMITTED)

    # then nothing failed, but 48 h is not 72 h
    assert result["verdict"] == "insufficient"
    assert result["coverage_hours"] == 48.0
    assert result["first_violation"] is None
    coverage = checks_by_code(result)["coverage"]
    assert coverage["passed"] is False
    assert coverage["message"] == "The log covers 48 h; the verdict needs 72 h of monitoring."
    # and with hours_required=48 the same log passes
    assert health_verdict(short, committed_bytes_per_gpu=COMMITTED, hours_required=48)["verdict"] == "pass"


def test_a_violation_in_a_short_log_is_still_a_fail() -> None:
    short = first_hours(timeline_of("oom_restart_2gpu_72h.csv"), 36)
    result = health_verdict(short, committed_bytes_per_gpu=COMMITTED)
    assert result["coverage_hours"] == 36.0
    assert result["verdict"] == "fail"


def test_too_few_hours_for_the_climb_test_cannot_pass() -> None:
    # given 12 h of a flat log and a requirement of 12 h
    short = first_hours(timeline_of("healthy_2gpu_72h.csv"), 12)
    result = health_verdict(short, committed_bytes_per_gpu=COMMITTED, hours_required=12)

    # then the climb cannot be judged (24 hourly buckets needed), so the verdict is insufficient
    climb_check = checks_by_code(result)["no_sustained_climb"]
    assert climb_check["passed"] is None
    assert result["verdict"] == "insufficient"
    assert climb_check["message"] == (
        "Too little data to judge a climb: GPU 0: 13 hourly bucket(s) of data; the "
        "climb test needs 24; GPU 1: 13 hourly bucket(s) of data; the climb test "
        "needs 24."
    )


def test_an_undated_scrape_is_insufficient() -> None:
    timeline = parse_timeline('DCGM_FI_DEV_FB_USED{gpu="0"} 71000\nDCGM_FI_DEV_FB_FREE{gpu="0"} 10559\n')
    result = health_verdict(timeline, committed_bytes_per_gpu=COMMITTED)
    assert result["coverage_hours"] == 0.0
    assert result["verdict"] == "insufficient"
    assert checks_by_code(result)["peak_within_commitment"]["passed"] is True


# ---------------------------------------------------------------------------------------------------------------
# Circuit breaker


def test_breaker_reaction_over_two_seconds_fails() -> None:
    # given trips at T0 + 1 h, 2 h, 3 h acted on after 0.8 s, 3.5 s and 1.9 s
    result = health_verdict(
        timeline_of("healthy_2gpu_72h.csv"),
        committed_bytes_per_gpu=COMMITTED,
        breaker_events=fixture("breaker_events.jsonl"),
    )

    # then the 3.5 s reaction fails the check, at the time of its trip
    assert result["verdict"] == "fail"
    assert result["first_violation"] == "2026-11-30T15:41:02.123Z"
    breaker = checks_by_code(result)["breaker_reaction"]
    assert [r["reaction_s"] for r in breaker["extra"]["reactions"]] == [0.8, 3.5, 1.9]
    assert breaker["extra"]["slowest_reaction_s"] == 3.5
    assert breaker["message"] == (
        "1 of 3 trip(s) not acted on within 2 s: trip at 2026-11-30T15:41:02.123Z acted on after 3.5 s."
    )


def test_breaker_reactions_within_two_seconds_pass() -> None:
    result = health_verdict(
        timeline_of("healthy_2gpu_72h.csv"),
        committed_bytes_per_gpu=COMMITTED,
        breaker_events=fixture("breaker_events_ok.jsonl"),
    )
    breaker = checks_by_code(result)["breaker_reaction"]
    assert result["verdict"] == "pass"
    assert breaker["message"] == "All 3 trip(s) were acted on within 2 s (slowest 1.9 s)."


def test_a_trip_never_acted_on_fails_and_no_events_means_no_check() -> None:
    # given a trip that recovers without any shed
    events = [
        BreakerEvent(time_s=make_fixtures.T0.timestamp() + 60, kind="trip", breaker="kv"),
        BreakerEvent(time_s=make_fixtures.T0.timestamp() + 90, kind="recover", breaker="kv"),
    ]
    timeline = timeline_of("healthy_2gpu_72h.csv")

    # when the verdict is asked with these events, and with none
    with_events = health_verdict(timeline, committed_bytes_per_gpu=COMMITTED, breaker_events=events)
    without = health_verdict(timeline, committed_bytes_per_gpu=COMMITTED)

    # then the trip fails; without a breaker log the check is not made
    assert checks_by_code(with_events)["breaker_reaction"]["message"] == (
        "1 of 1 trip(s) not acted on within 2 s: trip at 2026-11-30T13:42:02.123Z never acted on."
    )
    assert "breaker_reaction" not in checks_by_code(without)


def test_a_broken_breaker_log_is_refused_with_the_line() -> None:
    with pytest.raises(BreakerLogError, match="breaker log line 2: 'kind' must be one of trip, shed, recover"):
        parse_breaker_events('{"time": 0, "kind": "trip"}\n{"time": 1, "kind": "open"}\n')


# ---------------------------------------------------------------------------------------------------------------
# KV cache and preemptions


def test_kv_summary_of_the_vllm_scrapes() -> None:
    # given 20 vLLM scrapes 15 s apart (make_fixtures.VLLM_*)
    (server,) = timeline_of("vllm_scrapes.prom").servers

    # when summarised
    summary = kv_summary(server)

    # then: peak 1.0 at scrape 10 (T0 + 150 s); p95 (linear) of the 20 values = sorted[18] + 0.05 × (sorted[19] −
    # sorted[18]) = 0.99 + 0.05 × 0.01 = 0.9905; seven scrapes ≥ 0.90 (k = 6..12) held 15 s each = 105 s;
    # preemptions 0 → 3 → 5, then the restart resets the counter: 5; waiting peak 20, mean 60 / 20 = 3.0
    assert summary.kv_peak == 1.0
    assert iso_utc(summary.kv_peak_at_s) == "2026-11-30T13:43:32Z"
    assert summary.kv_p95 == pytest.approx(0.9905)
    assert summary.seconds_above_high == 105.0
    assert summary.preemptions == 5.0
    assert iso_utc(summary.first_preemption_s) == "2026-11-30T13:43:32Z"
    assert summary.waiting_peak == 20.0
    assert summary.waiting_mean == 3.0
    assert summary.running_peak == 64.0


def test_kv_headroom_fails_when_the_cache_fills_and_restart_shows_from_counters() -> None:
    # given the healthy nvidia-smi log merged with the vLLM scrapes (KV 100 %, 5 preemptions, one restart)
    merged = merge_timelines(timeline_of("healthy_2gpu_72h.csv"), timeline_of("vllm_scrapes.prom"))

    # when the verdict is asked
    result = health_verdict(merged, committed_bytes_per_gpu=COMMITTED)

    # then the KV check and the restart check fail; the first violation is the full cache at T0 + 150 s
    checks = checks_by_code(result)
    assert list(checks) == [*CHECK_CODES, "kv_headroom"]
    assert checks["kv_headroom"]["passed"] is False
    assert checks["kv_headroom"]["message"] == (
        "KV-cache usage reached 100 % (engine=0 model_name=meta-llama/"
        "Llama-3.1-70B-Instruct); 5 preemption(s), first at "
        "2026-11-30T13:43:32Z."
    )
    assert checks["no_restart"]["passed"] is False
    assert checks["no_restart"]["extra"]["first_violation"] == "2026-11-30T13:44:47Z"
    assert result["first_violation"] == "2026-11-30T13:43:32Z"


def test_preemptions_beyond_the_promised_concurrency_are_reported_not_failed() -> None:
    # given KV below 100 % and 4 preemptions, all while 80 requests ran
    base = make_fixtures.T0.timestamp()
    server = ServerSeries(
        engine="vllm",
        instance="engine=0",
        samples=tuple(
            ServerSample(time_s=base + 15 * k, kv_cache_usage=kv, requests_running=running, preemptions_total=p)
            for k, (kv, running, p) in enumerate(((0.5, 40, 0), (0.97, 80, 4), (0.6, 40, 4)))
        ),
    )
    timeline = MemoryTimeline(format="prometheus_scrapes", servers=(server,))

    # when the promise is 64 concurrent requests, and when it is 100
    within = kv_summary(server, promised_concurrency=64)
    beyond = kv_summary(server, promised_concurrency=100)
    check = checks_by_code(
        health_verdict(timeline, committed_bytes_per_gpu=COMMITTED, promised_concurrency=64, hours_required=0)
    )["kv_headroom"]

    # then at 64 the preemptions happened beyond the promise (reported), at 100 they count
    assert (within.preemptions, within.preemptions_beyond_promise) == (4.0, 4.0)
    assert (beyond.preemptions, beyond.preemptions_beyond_promise) == (4.0, 0.0)
    assert check["passed"] is True
    assert check["message"] == "KV-cache usage peaked at 97.0%, with no preemption within the promised concurrency."


def test_aggregate_server_figures_feed_the_kv_check() -> None:
    timeline = parse_timeline(
        '{"aiperf_version": "0.13.0", "metrics_phase": "profiling", "summary": {"start_time": "2026-01-01T00:00:00", '
        '"end_time": "2026-01-01T00:05:00"}, "metrics": {"vllm:kv_cache_usage_perc": {"type": "gauge", "series": '
        '[{"labels": {"engine": "0"}, "stats": {"max": 0.0094, "p95": 0.009}}]}, "vllm:num_preemptions": {"type": '
        '"counter", "series": [{"labels": {"engine": "0"}, "stats": {"total": 0.0}}]}}}'
    )
    result = health_verdict(timeline, committed_bytes_per_gpu=COMMITTED)
    kv = checks_by_code(result)["kv_headroom"]
    assert kv["passed"] is True
    assert kv["extra"]["servers"][0]["kv_peak"] == 0.0094
    assert kv["extra"]["servers"][0]["source"] == "aggregate"
    assert result["verdict"] == "insufficient"  # no GPU series, 5 minutes


# ---------------------------------------------------------------------------------------------------------------
# The pieces


def test_theil_sen_hand_checked() -> None:
    # given x = 0..3, y = 0, 1, 2, 10: pairwise slopes 1, 1, 10/3, 1, 4.5, 8 → sorted 1, 1, 1, 3.33, 4.5, 8
    fit = theil_sen([0, 1, 2, 3], [0, 1, 2, 10])

    # then the slope is their median (1 + 10/3) / 2 = 2.1667; Sen's interval: σ² = 4·3·13/18 = 8.667, z·σ = 5.77,
    # ranks round((6 − 5.77)/2) − 1 → 0 (clipped) and round((6 + 5.77)/2) = 6 → 5 (clipped): [1, 8]
    assert fit.slope == pytest.approx(13 / 6)
    assert (fit.low, fit.high) == (1.0, 8.0)
    # intercept: the median of y − slope·x = 0, −1.1667, −2.3333, 3.5 → (−1.1667 + 0) / 2
    assert fit.intercept == pytest.approx(-7 / 12)


def test_theil_sen_ignores_a_step_and_outliers() -> None:
    # given a flat line at 100 with one step of +50 in the first 3 of 48 points and two wild outliers
    y = [150.0 if i < 3 else 100.0 for i in range(48)]
    y[20], y[30] = 1000.0, -1000.0
    fit = theil_sen(list(range(48)), y)
    assert fit.slope == 0.0
    assert fit.low <= 0.0 <= fit.high


def test_bucket_medians_use_hourly_buckets_from_the_first_sample() -> None:
    samples = [
        GpuSample(time_s=float(t), memory_used_bytes=m)
        for t, m in ((0, 10), (1200, 30), (2400, 20), (3600, 7), (7300, 8))
    ]
    assert bucket_medians(samples) == [(1200.0, 20.0, 2400.0), (3600.0, 7.0, 3600.0), (7300.0, 8.0, 7300.0)]


def test_memory_restart_that_never_comes_back_is_down() -> None:
    series = GpuSeries(
        gpu="3",
        samples=tuple(
            GpuSample(time_s=60.0 * i, memory_used_bytes=m * MIB)
            for i, m in enumerate((70_000, 70_100, 70_050, 400, 400, 410))
        ),
    )
    (event,) = memory_restarts(series)
    assert (event.kind, event.time_s) == ("down", 180.0)
    assert event.message == (
        "GPU 3: memory fell from 70050 MiB to 400 MiB at 1970-01-01T00:03:00Z and did not come "
        "back before the log ends: the server went down"
    )


def test_memory_full_without_a_drop_is_not_an_oom() -> None:
    # given a card sitting at 99.5 % (an engine budgeted at 0.98 plus non-torch memory), never falling
    series = GpuSeries(
        gpu="0",
        samples=tuple(GpuSample(time_s=60.0 * i, memory_used_bytes=995, memory_total_bytes=1000) for i in range(10)),
    )
    assert memory_ooms(series) == []


def test_coverage_counts_gaps_only_up_to_three_sampling_intervals() -> None:
    # given 5-minute samples over 1 h, then a 3-hour hole, then 1 h more
    times = [300.0 * i for i in range(13)] + [3600.0 * 4 + 300.0 * i for i in range(13)]
    series = GpuSeries(gpu="0", samples=tuple(GpuSample(time_s=t, memory_used_bytes=1) for t in times))

    # then covered = 1 h + 15 min (the hole counts 3 × 5 min) + 1 h = 2.25 h
    assert coverage_hours(MemoryTimeline(format="nvidia_smi_csv", gpus=(series,))) == 2.25


def test_memory_analysis_shape() -> None:
    analysis = memory_analysis(
        timeline_of("oom_restart_2gpu_72h.csv"),
        committed_bytes_per_gpu=COMMITTED,
        events_text=fixture("oom_events.log"),
    )
    assert set(analysis) == {"start", "end", "coverage_hours", "gpus", "servers", "events", "restart_events"}
    gpu0 = analysis["gpus"][0]
    assert set(gpu0) == {
        "gpu",
        "name",
        "peak_bytes",
        "peak_at",
        "total_bytes",
        "committed_bytes",
        "headroom_bytes",
        "climb",
        "ooms",
        "restarts",
    }
    assert gpu0["peak_bytes"] == 81_200 * MIB
    assert gpu0["peak_at"] == "2026-12-01T19:41:02.123Z"
    assert gpu0["headroom_bytes"] == (75_000 - 81_200) * MIB
    assert [e["kind"] for e in analysis["events"]] == ["oom", "xid"]


def test_verdict_values_are_stable() -> None:
    assert [v.value for v in Verdict] == ["pass", "fail", "insufficient"]


def test_docstring_examples_hold() -> None:
    results = doctest.testmod(health_module)
    assert results.attempted > 10
    assert results.failed == 0


# ---------------------------------------------------------------------------------------------------------------
# Issue 20: one zone for every time of a log, restarts per event, the peak within the gauge's step, what a pass needs

SMI_HEADER = "timestamp, index, memory.used [MiB], memory.total [MiB]\n"


def _smi_log(rows: list[tuple[str, int, int]]) -> str:
    return SMI_HEADER + "".join(f"{stamp}, {index}, {used} MiB, 81559 MiB\n" for stamp, index, used in rows)


def test_the_events_log_is_read_in_the_zone_of_the_samples() -> None:
    # given: nvidia-smi's local times in UTC+08:00 (21:41 local = 13:41 UTC) and a vLLM OOM line at 21:45 local
    times = [f"2026/11/30 21:{41 + i:02d}:00.000" for i in range(6)]
    log = _smi_log([(t, 0, 70_000) for t in times])
    zone = utc_offset(480)
    events = "ERROR 11-30 21:45:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory.\n"

    # when: the log and its events log are read in the same zone
    timeline = parse_timeline(log, tz=zone)
    result = health_verdict(
        timeline, committed_bytes_per_gpu=COMMITTED, hours_required=1, events_text=events, events_tz=zone
    )
    analysis = memory_analysis(timeline, committed_bytes_per_gpu=COMMITTED, events_text=events, events_tz=zone)

    # then: the samples start at 13:41 UTC and the OOM sits at 13:45 UTC, among them (not 8 h later)
    assert iso_utc(timeline.start_s) == "2026-11-30T13:41:00Z"
    oom = checks_by_code(result)["no_oom"]
    assert oom["passed"] is False
    assert oom["extra"]["first_violation"] == "2026-11-30T13:45:00Z"
    assert [e["time"] for e in analysis["events"]] == ["2026-11-30T13:45:00Z"]


def test_breaker_times_without_a_zone_take_the_logs_zone() -> None:
    # given: a trip and its shed at 21:41 local time in UTC+08:00, written without a zone
    text = '{"time": "2026-11-30T21:41:02", "kind": "trip"}\n{"time": "2026-11-30T21:41:03+08:00", "kind": "shed"}\n'

    # when
    events = parse_breaker_events(text, tz=utc_offset(480))

    # then: both at 13:41 UTC, one second apart
    assert [iso_utc(e.time_s) for e in events] == ["2026-11-30T13:41:02Z", "2026-11-30T13:41:03Z"]


def test_one_restart_on_two_gpus_at_the_same_time_is_one_restart() -> None:
    # given: two GPUs logged every minute, both fall to 300 MiB at 13:45 and come back at 13:47
    rows = []
    for minute in range(10):
        used = 300 if minute in (4, 5) else 70_000
        for gpu in (0, 1):
            rows.append((f"2026/11/30 13:{41 + minute:02d}:00.000", gpu, used))
    timeline = parse_timeline(_smi_log(rows))

    # when
    result = health_verdict(timeline, committed_bytes_per_gpu=COMMITTED, hours_required=1)

    # then: each GPU shows the fall, but it is one restart
    restart = checks_by_code(result)["no_restart"]
    assert restart["passed"] is False
    assert len(restart["extra"]["memory"]) == 2
    assert restart["extra"]["count"] == 1
    assert restart["extra"]["events"][0]["gpus"] == ["0", "1"]
    assert restart["extra"]["events"][0]["time"] == "2026-11-30T13:45:00Z"
    assert result["figures"]["restarts"] == 1
    assert restart["message"].startswith("1 restart(s) or outage(s)")


def test_two_restarts_an_hour_apart_are_two() -> None:
    # given: one GPU sampled every 5 minutes, falling at 13:51 and again at 14:51
    rows = []
    for step in range(30):
        used = 300 if step in (2, 14) else 70_000
        hour, minute = divmod(41 + 5 * step, 60)
        rows.append((f"2026/11/30 {13 + hour:02d}:{minute:02d}:00.000", 0, used))

    # when
    result = health_verdict(parse_timeline(_smi_log(rows)), committed_bytes_per_gpu=COMMITTED, hours_required=1)

    # then
    assert checks_by_code(result)["no_restart"]["extra"]["count"] == 2


@pytest.mark.parametrize(
    ("used_mib", "passed", "reason"),
    [(75_000, True, "within_commitment"), (75_001, True, "within_resolution"), (75_002, False, "above_commitment")],
    ids=["equal", "one-mib-over", "two-mib-over"],
)
def test_the_peak_is_judged_within_the_gauges_mib(used_mib: int, passed: bool, reason: str) -> None:
    # given: nvidia-smi reads whole MiB; the commitment is 75,000 MiB
    rows = [(f"2026/11/30 13:{41 + i:02d}:00.000", 0, used_mib if i == 3 else 70_000) for i in range(6)]

    # when
    result = health_verdict(parse_timeline(_smi_log(rows)), committed_bytes_per_gpu=COMMITTED, hours_required=1)

    # then
    peak = checks_by_code(result)["peak_within_commitment"]
    assert (peak["passed"], peak["extra"]["reason"]) == (passed, reason)
    assert (result["figures"]["peak_bytes"], result["figures"]["tolerance_bytes"]) == (used_mib * MIB, MIB)


def test_a_one_hour_requirement_says_the_climb_test_needs_24_hours() -> None:
    # given: one hour of clean samples, with 1 h required
    rows = [(f"2026/11/30 {13 + (41 + i) // 60:02d}:{(41 + i) % 60:02d}:00.000", 0, 70_000) for i in range(61)]

    # when
    result = health_verdict(parse_timeline(_smi_log(rows)), committed_bytes_per_gpu=COMMITTED, hours_required=1)

    # then: insufficient, and the verdict says why before anyone reads the checks
    assert result["verdict"] == "insufficient"
    assert checks_by_code(result)["coverage"]["passed"] is True
    assert checks_by_code(result)["no_sustained_climb"]["passed"] is None
    assert result["requirements"] == {
        "hours_required": 1,
        "climb_bucket_s": 3600.0,
        "climb_min_buckets": 24,
        "climb_min_hours": 24.0,
        "hours_for_pass": 24.0,
        "climb_limits_pass": True,
        "notes": ["hours_below_climb_minimum"],
    }


def test_72_hours_required_covers_the_climb_test() -> None:
    # given / when
    needs = verdict_requirements(hours_required=72)

    # then
    assert (needs["hours_for_pass"], needs["climb_limits_pass"], needs["notes"]) == (72.0, False, [])

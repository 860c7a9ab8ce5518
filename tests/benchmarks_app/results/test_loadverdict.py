"""The memory verdict of a load test (METRICS.md): GPU peak against the budget, KV below 100 %, no preemption, no
OOM/XID, no restart, each unknown when its metric is missing; the first violating time slice. Times are POSIX
seconds from T0 = 2027-01-15T08:00:00Z; samples one second apart unless said otherwise. No database."""

from __future__ import annotations

import doctest
import json
from collections.abc import Sequence
from typing import Any

import pytest

from benchmarks_app.results import loadverdict as loadverdict_module
from benchmarks_app.results.loadverdict import CheckCode, load_memory_verdict
from benchmarks_app.results.timeline import (
    MIB,
    EventKind,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    TimelineEvent,
    parse_prometheus_scrapes,
)
from sizing.estimator.units import GiB

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z
CODES = ["peak_within_commitment", "kv_below_full", "no_preemption", "no_oom", "no_restart"]


def server(*rows: dict[str, Any], instance: str = "engine=0", start: float = T0) -> ServerSeries:
    """A vLLM series: one sample per row, one second apart from `start`."""
    return ServerSeries(
        engine="vllm",
        instance=instance,
        samples=tuple(ServerSample(time_s=start + i, **row) for i, row in enumerate(rows)),
    )


def gpu(used_gib: Sequence[float], *, name: str = "0", start: float = T0, total_gib: float = 80.0) -> GpuSeries:
    return GpuSeries(
        gpu=name,
        samples=tuple(
            GpuSample(time_s=start + i, memory_used_bytes=int(u * GiB), memory_total_bytes=int(total_gib * GiB))
            for i, u in enumerate(used_gib)
        ),
    )


def timeline(
    *, gpus: Sequence[GpuSeries] = (), servers: Sequence[ServerSeries] = (), events: Sequence[TimelineEvent] = ()
) -> MemoryTimeline:
    return MemoryTimeline(format="prometheus_scrapes", gpus=tuple(gpus), servers=tuple(servers), events=tuple(events))


def check(result: dict[str, Any], code: CheckCode) -> dict[str, Any]:
    return next(c for c in result["checks"] if c["code"] == code.value)


def calm(n: int = 5, **extra: Any) -> list[dict[str, Any]]:
    """`n` quiet scrapes: KV at 50 %, 8 running, none waiting, counters flat."""
    return [
        {
            "kv_cache_usage": 0.5,
            "requests_running": 8.0,
            "requests_waiting": 0.0,
            "preemptions_total": 0.0,
            "generation_tokens_total": 1000.0 * (i + 1),
            **extra,
        }
        for i in range(n)
    ]


def test_a_clean_run_passes_every_check() -> None:
    # given: GPU at 70 GiB under a 75 GiB budget, quiet server
    line = timeline(gpus=[gpu([70.0, 70.5, 70.25, 70.0, 70.0])], servers=[server(*calm())])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=8)

    # then
    assert result["verdict"] == "pass"
    assert [(c["code"], c["verdict"]) for c in result["checks"]] == [(code, "pass") for code in CODES]
    assert result["unverified"] == []
    assert result["first_violation"] is None
    assert result["figures"]["gpu_peak_bytes"] == int(70.5 * GiB)
    # 70.5 GiB = 72,192 MiB; 75 GiB = 76,800 MiB: 4,608 MiB to spare
    assert check(result, CheckCode.PEAK_WITHIN_COMMITMENT)["detail"] == (
        "GPU memory peaked at 70.50 GiB (72,192 MiB) on GPU 0 at 2027-01-15T08:00:01Z, within the committed "
        "75.00 GiB (76,800 MiB) per GPU: 4,608 MiB to spare, judged within the gauge's step of 1 MiB."
    )
    assert result["figures"]["tolerance_bytes"] == 1_048_576


def test_kv_reaching_full_fails_at_its_first_time_slice() -> None:
    # given: KV 0.5, 0.8, 0.95, 1.0, 0.9 at T0 .. T0+4
    rows = [{**row, "kv_cache_usage": kv} for row, kv in zip(calm(), (0.5, 0.8, 0.95, 1.0, 0.9), strict=True)]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=None
    )

    # then
    assert result["verdict"] == "fail"
    assert result["first_violation"] == {
        "time_s": T0 + 3,
        "time": "2027-01-15T08:00:03Z",
        "check": "kv_below_full",
        "value": 1.0,
        "detail": "KV-cache usage reached 100.0% at 2027-01-15T08:00:03Z (engine=0): the cache was full.",
    }
    kv = check(result, CheckCode.KV_BELOW_FULL)
    assert (kv["verdict"], kv["first_violation_s"], kv["value"]) == ("fail", T0 + 3, 1.0)
    # p95 by linear interpolation over [0.5, 0.8, 0.9, 0.95, 1.0]: rank 3.8 → 0.95 + 0.8 × 0.05 = 0.99;
    # at ≥ 90 %: 0.95 held 1 s and 1.0 held 1 s (the last sample, 0.9 at T0+4, holds for nothing)
    figures = result["figures"]
    assert (figures["kv_peak"], figures["kv_p95"], figures["kv_seconds_above_90"]) == (1.0, pytest.approx(0.99), 2.0)


def test_kv_just_below_full_passes() -> None:
    # given
    rows = [{**row, "kv_cache_usage": kv} for row, kv in zip(calm(3), (0.5, 0.999, 0.7), strict=True)]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=None
    )

    # then
    kv = check(result, CheckCode.KV_BELOW_FULL)
    assert (kv["verdict"], kv["detail"]) == ("pass", "KV-cache usage peaked at 99.9%, below 100 %.")


def test_a_preemption_in_the_window_fails() -> None:
    # given: the counter is 3 from before the window (T0 − 10 s), then 3, 3, 5, 5
    before = server({"preemptions_total": 0.0}, start=T0 - 20)
    rows = [{**row, "preemptions_total": p} for row, p in zip(calm(4), (3.0, 3.0, 5.0, 5.0), strict=True)]
    series = ServerSeries(engine="vllm", instance="engine=0", samples=before.samples + server(*rows).samples)

    # when
    result = load_memory_verdict(
        timeline(servers=[series]), committed_bytes_per_gpu=None, promised_concurrency=8, window=(T0, T0 + 3)
    )

    # then: the increase 0 → 3 happened before the window and is not counted; 3 → 5 ends at T0 + 2
    preemption = check(result, CheckCode.NO_PREEMPTION)
    assert (preemption["verdict"], preemption["value"], preemption["first_violation_s"]) == ("fail", 2.0, T0 + 2)
    assert preemption["detail"] == "2 preemption(s) in the window, the first counted at 2027-01-15T08:00:02Z."
    assert result["first_violation"]["check"] == "no_preemption"
    assert result["figures"]["preemptions"] == 2.0


def test_preemptions_beyond_the_promised_concurrency_are_reported_not_failed() -> None:
    # given: 12 requests running while the counter rose, 8 promised
    rows = [
        {**row, "preemptions_total": p} for row, p in zip(calm(3, requests_running=12.0), (0.0, 2.0, 2.0), strict=True)
    ]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=8
    )

    # then
    preemption = check(result, CheckCode.NO_PREEMPTION)
    assert (preemption["verdict"], preemption["value"]) == ("pass", 0.0)
    assert preemption["detail"] == (
        "No preemption at or below the promised 8 running requests (2 more while over the "
        "promised 8 running requests, reported, not failed)."
    )
    assert (result["figures"]["preemptions"], result["figures"]["preemptions_beyond_promise"]) == (2.0, 2.0)


@pytest.mark.parametrize(
    ("allow", "verdict", "restart_verdict"),
    [(False, "fail", "fail"), (True, "pass", "pass")],
    ids=["restart-not-allowed", "restart-allowed-in-failure-injection"],
)
def test_a_counter_reset_is_a_restart(allow: bool, verdict: str, restart_verdict: str) -> None:
    # given: generation tokens 1000, 2000, 50 (reset at T0 + 2), 1050
    rows = [
        {**row, "generation_tokens_total": g} for row, g in zip(calm(4), (1000.0, 2000.0, 50.0, 1050.0), strict=True)
    ]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=8, allow_restarts=allow
    )

    # then: reported either way
    restart = check(result, CheckCode.NO_RESTART)
    assert (result["verdict"], restart["verdict"], restart["value"]) == (verdict, restart_verdict, 1)
    assert (result["figures"]["restarts"], result["figures"]["restarts_allowed"]) == (1, allow)
    message = "vllm engine=0: restarted (generation_tokens_total fell from 2000 to 50)"
    if allow:
        assert restart["detail"] == (
            "1 server restart(s), allowed in this run (failure injection), the first at "
            f"2027-01-15T08:00:02Z: {message}."
        )
        assert result["first_violation"] is None
    else:
        assert restart["detail"] == f"1 server restart(s), the first at 2027-01-15T08:00:02Z: {message}."
        assert result["first_violation"]["time_s"] == T0 + 2
        assert result["first_violation"]["check"] == "no_restart"


def test_a_new_process_start_time_is_a_restart() -> None:
    # given
    rows = [
        {**row, "process_start_time_s": start}
        for row, start in zip(calm(3), (T0 - 600, T0 - 600, T0 + 1.5), strict=True)
    ]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=None
    )

    # then
    restart = check(result, CheckCode.NO_RESTART)
    assert (restart["verdict"], restart["first_violation_s"]) == ("fail", T0 + 2)


def test_a_restart_in_parsed_scrapes_is_counted_once() -> None:
    # given: the parser already records the counter reset as an event; the verdict must not count it twice
    text = "".join(
        f"# scrape 2027-01-15T08:00:0{i}Z\n"
        f'vllm:kv_cache_usage_perc{{engine="0",model_name="m"}} {kv}\n'
        f'vllm:num_requests_running{{engine="0",model_name="m"}} 8\n'
        f'vllm:num_requests_waiting{{engine="0",model_name="m"}} {waiting}\n'
        f'vllm:num_preemptions_total{{engine="0",model_name="m"}} 0\n'
        f'vllm:generation_tokens_total{{engine="0",model_name="m"}} {tokens}\n'
        for i, (kv, waiting, tokens) in enumerate(((0.42, 0, 1000), (0.61, 2, 2000), (0.05, 0, 40), (0.33, 1, 900)))
    )
    parsed = parse_prometheus_scrapes(text)
    assert [e.kind for e in parsed.events] == ["restart"]

    # when
    result = load_memory_verdict(parsed, committed_bytes_per_gpu=None, promised_concurrency=8)

    # then
    assert check(result, CheckCode.NO_RESTART)["value"] == 1
    assert result["first_violation"]["time_s"] == T0 + 2
    assert result["figures"]["kv_peak"] == 0.61
    assert (result["figures"]["waiting_peak"], result["figures"]["waiting_mean"]) == (2.0, 0.75)


def test_gpu_memory_above_the_budget_fails_at_the_first_sample_over_it() -> None:
    # given: 70, 74, 76, 75.5 GiB against 75 GiB; a second GPU stays at 60 GiB
    line = timeline(gpus=[gpu([70.0, 74.0, 76.0, 75.5]), gpu([60.0] * 4, name="1")], servers=[server(*calm(4))])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=8)

    # then
    peak = check(result, CheckCode.PEAK_WITHIN_COMMITMENT)
    assert (peak["verdict"], peak["first_violation_s"], peak["value"]) == ("fail", T0 + 2, 76 * GiB)
    assert result["first_violation"]["value"] == 76 * GiB
    # 76 GiB = 77,824 MiB, 1,024 MiB over 76,800 MiB: far beyond the gauge's 1 MiB step
    assert peak["detail"] == (
        "GPU memory went above the committed 75.00 GiB (76,800 MiB) per GPU by more than the "
        "gauge's step of 1 MiB on GPU 0: first 77,824 MiB on GPU 0 at 2027-01-15T08:00:02Z, "
        "1,024 MiB over; the peak was 76.00 GiB on GPU 0."
    )
    assert (peak["reason"], peak["extra"]["first_violation_bytes"], peak["extra"]["tolerance_bytes"]) == (
        "above_commitment",
        76 * GiB,
        MIB,
    )
    assert [g["peak_bytes"] for g in result["figures"]["gpus"]] == [76 * GiB, 60 * GiB]


def test_the_earliest_violation_is_named_first() -> None:
    # given: GPU over the budget at T0 + 3, KV full at T0 + 1
    rows = [{**row, "kv_cache_usage": kv} for row, kv in zip(calm(4), (0.5, 1.0, 0.6, 0.6), strict=True)]
    line = timeline(gpus=[gpu([70.0, 70.0, 70.0, 80.0])], servers=[server(*rows)])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=8)

    # then
    assert [c["code"] for c in result["checks"] if c["verdict"] == "fail"] == [
        "peak_within_commitment",
        "kv_below_full",
    ]
    assert (result["first_violation"]["check"], result["first_violation"]["time_s"]) == ("kv_below_full", T0 + 1)


def test_without_a_budget_the_gpu_check_is_unknown_but_the_peak_is_reported() -> None:
    # when
    result = load_memory_verdict(
        timeline(gpus=[gpu([70.0, 71.0])], servers=[server(*calm(2))]),
        committed_bytes_per_gpu=None,
        promised_concurrency=8,
    )

    # then
    peak = check(result, CheckCode.PEAK_WITHIN_COMMITMENT)
    assert (peak["verdict"], peak["value"]) == ("unknown", 71 * GiB)
    assert result["unverified"] == ["peak_within_commitment"]
    assert result["verdict"] == "pass"


@pytest.mark.parametrize(("kind", "code"), [(EventKind.XID, 79), (EventKind.OOM, None)], ids=["xid", "oom-line"])
def test_an_oom_or_xid_event_in_the_window_fails(kind: EventKind, code: int | None) -> None:
    # given: an event at T0 + 3, and one before the window that does not count
    events = [
        TimelineEvent(time_s=T0 - 100, kind=kind.value, message="earlier", gpu="0", code=code),
        TimelineEvent(time_s=T0 + 3, kind=kind.value, message="now", gpu="0", code=code),
    ]
    line = timeline(gpus=[gpu([70.0] * 5)], events=events)

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=None, window=(T0, T0 + 4))

    # then
    oom = check(result, CheckCode.NO_OOM)
    assert (oom["verdict"], oom["value"], oom["first_violation_s"]) == ("fail", 1, T0 + 3)
    named = "XID 79 on GPU 0" if kind is EventKind.XID else "OOM error on GPU 0"
    assert oom["detail"] == f"1 out-of-memory/XID event(s): {named} at 2027-01-15T08:00:03Z."


def test_an_oom_seen_in_the_memory_shape_fails() -> None:
    # given: memory full (≥ 99 % of 80 GiB), then down by more than 5 % of the card
    line = timeline(gpus=[gpu([70.0, 79.5, 79.6, 10.0, 70.0])])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=None, promised_concurrency=None)

    # then
    oom = check(result, CheckCode.NO_OOM)
    assert (oom["verdict"], oom["first_violation_s"]) == ("fail", T0 + 2)


def test_the_window_keeps_violations_outside_it_out() -> None:
    # given: KV full at T0 + 1 only; the window starts at T0 + 2
    rows = [{**row, "kv_cache_usage": kv} for row, kv in zip(calm(5), (0.5, 1.0, 0.6, 0.6, 0.6), strict=True)]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]),
        committed_bytes_per_gpu=None,
        promised_concurrency=None,
        window=(T0 + 2, T0 + 4),
    )

    # then
    assert check(result, CheckCode.KV_BELOW_FULL)["verdict"] == "pass"
    assert result["figures"]["kv_peak"] == 0.6
    assert result["figures"]["window"] == {"start_s": T0 + 2, "end_s": T0 + 4}


@pytest.mark.parametrize(
    "line",
    [None, timeline(), MemoryTimeline(format="nvidia_smi_csv")],
    ids=["no-timeline", "empty-timeline", "empty-nvidia-smi-log"],
)
def test_nothing_measured_is_unknown(line: MemoryTimeline | None) -> None:
    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=8)

    # then
    assert result["verdict"] == "unknown"
    assert result["unverified"] == CODES
    assert result["first_violation"] is None
    figures = result["figures"]
    assert (figures["kv_peak"], figures["preemptions"], figures["waiting_peak"], figures["restarts"]) == (
        None,
        None,
        None,
        None,
    )


def test_missing_metrics_are_unknown_never_zero() -> None:
    # given: a server exporting only its queue (no KV usage, no counters)
    rows = [{"requests_running": 8.0, "requests_waiting": w} for w in (0.0, 3.0, 1.0)]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=75 * GiB, promised_concurrency=8
    )

    # then: the queue is reported, but nothing of the verdict was measured
    assert result["verdict"] == "unknown"
    assert [c["verdict"] for c in result["checks"]] == ["unknown"] * 5
    assert (result["figures"]["preemptions"], result["figures"]["kv_peak"]) == (None, None)
    assert (result["figures"]["waiting_peak"], result["figures"]["waiting_mean"]) == (3.0, pytest.approx(4 / 3))
    assert check(result, CheckCode.NO_PREEMPTION)["detail"] == (
        "No preemption counter in the window: preemptions were not measured."
    )


def test_kv_without_a_preemption_counter_leaves_preemptions_unknown() -> None:
    # given
    rows = [{"kv_cache_usage": 0.5}, {"kv_cache_usage": 0.6}]

    # when
    result = load_memory_verdict(
        timeline(servers=[server(*rows)]), committed_bytes_per_gpu=None, promised_concurrency=None
    )

    # then
    assert [c["verdict"] for c in result["checks"]] == ["unknown", "pass", "unknown", "unknown", "unknown"]
    assert result["verdict"] == "pass"
    assert result["figures"]["preemptions"] is None


def test_queue_figures_add_the_servers_at_each_scrape() -> None:
    # given: two engines scraped at the same times
    first = server(*[{"requests_running": r, "requests_waiting": w} for r, w in ((4.0, 0.0), (6.0, 2.0))])
    second = server(
        *[{"requests_running": r, "requests_waiting": w} for r, w in ((3.0, 1.0), (5.0, 4.0))], instance="engine=1"
    )

    # when
    result = load_memory_verdict(
        timeline(servers=[first, second]), committed_bytes_per_gpu=None, promised_concurrency=16
    )

    # then: waiting 1, 6 → peak 6, mean 3.5; running 7, 11; in system 8, 17 ≥ 16
    figures = result["figures"]
    assert (figures["waiting_peak"], figures["waiting_mean"], figures["running_peak"]) == (6.0, 3.5, 11.0)
    assert (figures["in_system_peak"], figures["concurrency_reached"]) == (17.0, True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"window": (T0 + 5, T0)},
            "window: (1800000005.0, 1800000000.0) must be finite POSIX seconds with start ≤ end",
        ),
        ({"committed_bytes_per_gpu": 0}, "committed_bytes_per_gpu: must be ≥ 1 byte (got 0)"),
        ({"promised_concurrency": 0}, "promised_concurrency: must be ≥ 1 request (got 0)"),
    ],
    ids=["window-backwards", "budget-0", "promise-0"],
)
def test_bad_arguments_are_refused(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"committed_bytes_per_gpu": None, "promised_concurrency": None, **options}
    with pytest.raises(ValueError) as caught:
        load_memory_verdict(timeline(), **arguments)
    assert str(caught.value) == message


def test_the_result_is_json_safe() -> None:
    # given
    line = timeline(gpus=[gpu([70.0, 76.0])], servers=[server(*calm(2))])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=75 * GiB, promised_concurrency=8)

    # then
    assert json.loads(json.dumps(result, allow_nan=False)) == result


@pytest.mark.parametrize(
    ("used_mib", "verdict", "reason"),
    [
        (74_999, "pass", "within_commitment"),
        (75_000, "pass", "within_commitment"),
        (75_001, "pass", "within_resolution"),
        (75_002, "fail", "above_commitment"),
    ],
    ids=["below", "at-the-budget", "one-mib-over-inside-the-gauge-step", "two-mib-over"],
)
def test_the_budget_is_judged_within_the_gauge_step(used_mib: int, verdict: str, reason: str) -> None:
    # given: a budget of 75,000 MiB = 78,643,200,000 bytes and a DCGM-like gauge that reads whole MiB
    line = timeline(gpus=[GpuSeries(gpu="0", samples=(GpuSample(time_s=T0, memory_used_bytes=used_mib * MIB),))])

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=78_643_200_000, promised_concurrency=None)

    # then: a reading fails only when more than one 1 MiB step above the budget
    peak = check(result, CheckCode.PEAK_WITHIN_COMMITMENT)
    assert (peak["verdict"], peak["reason"]) == (verdict, reason)
    assert (result["figures"]["gpu_peak_bytes"], result["figures"]["tolerance_bytes"]) == (used_mib * MIB, MIB)
    assert result["figures"]["committed_bytes_per_gpu"] == 78_643_200_000


def test_a_commitment_between_two_mib_readings_passes_at_the_reading_above_it() -> None:
    # given: the demo's commitment, 21,766,298,664 bytes = 20,757.96 MiB, and the simulator's DCGM gauge reading
    # 20,758 MiB = 21,766,340,608 bytes (41,944 bytes above it: the gauge cannot show less than a MiB)
    line = timeline(
        gpus=[
            GpuSeries(
                gpu="0", samples=tuple(GpuSample(time_s=T0 + i, memory_used_bytes=20_758 * MIB) for i in range(3))
            )
        ]
    )

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=21_766_298_664, promised_concurrency=None)

    # then
    peak = check(result, CheckCode.PEAK_WITHIN_COMMITMENT)
    assert (peak["verdict"], peak["reason"]) == ("pass", "within_resolution")
    assert peak["extra"]["spare_bytes"] == 21_766_298_664 - 21_766_340_608
    assert "less than the gauge's step of 1 MiB" in peak["detail"]


def test_a_deliberately_over_committed_run_fails_at_its_first_sample_over() -> None:
    # given: the engine holds 20,758 MiB from the first scrape; the commitment says 18 GiB (18,432 MiB)
    line = timeline(
        gpus=[
            GpuSeries(
                gpu="0", samples=tuple(GpuSample(time_s=T0 + i, memory_used_bytes=20_758 * MIB) for i in range(3))
            )
        ]
    )

    # when
    result = load_memory_verdict(line, committed_bytes_per_gpu=18 * GiB, promised_concurrency=None)

    # then: the first violation is the first scrape, with its value
    assert result["verdict"] == "fail"
    assert result["first_violation"]["check"] == "peak_within_commitment"
    assert (result["first_violation"]["time_s"], result["first_violation"]["value"]) == (T0, 20_758 * MIB)
    peak = check(result, CheckCode.PEAK_WITHIN_COMMITMENT)
    assert peak["extra"]["over_bytes"] == (20_758 - 18_432) * MIB


def test_an_aiperf_gauge_in_hundredths_of_a_gb_is_judged_within_10_mb() -> None:
    # given: AIPerf's GB with two decimals, 20.00 GB = 20,000,000,000 bytes against a 19,995,000,000-byte budget
    # (5 MB below the reading: inside AIPerf's 10 MB step)
    series = GpuSeries(
        gpu="0", resolution_bytes=10_000_000, samples=(GpuSample(time_s=T0, memory_used_bytes=20_000_000_000),)
    )

    # when
    inside = load_memory_verdict(
        timeline(gpus=[series]), committed_bytes_per_gpu=19_995_000_000, promised_concurrency=None
    )
    beyond = load_memory_verdict(
        timeline(gpus=[series]), committed_bytes_per_gpu=19_989_999_999, promised_concurrency=None
    )

    # then
    assert check(inside, CheckCode.PEAK_WITHIN_COMMITMENT)["verdict"] == "pass"
    assert check(beyond, CheckCode.PEAK_WITHIN_COMMITMENT)["verdict"] == "fail"
    assert inside["figures"]["tolerance_bytes"] == 10_000_000


def test_docstring_examples_hold() -> None:
    results = doctest.testmod(loadverdict_module)
    assert results.attempted >= 4
    assert results.failed == 0

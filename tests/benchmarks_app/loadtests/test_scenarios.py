"""The scenario suites (pulse, long tail, failure): the plans they build and the pass/fail judgement of a run,
with hand-made request sequences (send times on the records' start_s clock, in seconds). No database."""

from __future__ import annotations

import doctest
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks_app.loadtests import scenarios as scenarios_module
from benchmarks_app.loadtests.scenarios import (
    INCOMPLETE,
    OK,
    OPEN_LOOP_KINDS,
    RECOVERY_RUN,
    SCENARIOS,
    CriterionCode,
    SuiteVerdict,
    judge,
    recovery,
    scenario_criteria,
    scenario_plan,
)
from benchmarks_app.results.run import ImportedRun, LoadKind, LoadPattern, RequestRecord, RequestStatus
from llm_sizing_loadgen.plan import (
    EndpointSpec,
    FaultKind,
    FaultSpec,
    LoadMode,
    MetricsSpec,
    PlanError,
    RequestSpec,
    plan_from_dict,
)
from llm_sizing_loadgen.workload import LengthKind, sample_profile, workload_sample

ENDPOINT = EndpointSpec(base_url="http://gpu-1:8000", model="llama")


def kill_fault(**overrides: Any) -> FaultSpec:
    values: dict[str, Any] = {
        "at_s": 0.0,
        "kind": FaultKind.HTTP,
        "url": "http://gpu-1:8000/control",
        "body": {"action": "kill_replica", "replica": 0},
        "label": "kill replica 0",
    }
    values.update(overrides)
    return FaultSpec(**values)


def ok(
    start_s: float,
    *,
    ttft_ms: float = 100.0,
    e2e_ms: float = 500.0,
    ttft_sched_ms: float | None = None,
    tpot_ms: float | None = 10.0,
) -> RequestRecord:
    return RequestRecord(
        status="ok",
        start_s=start_s,
        ttft_ms=ttft_ms,
        ttft_sched_ms=ttft_sched_ms,
        e2e_ms=e2e_ms,
        tpot_ms=tpot_ms,
        output_tokens=128,
    )


def error(start_s: float, *, e2e_ms: float | None = 50.0) -> RequestRecord:
    return RequestRecord(status="error", error="http_error(503)", start_s=start_s, e2e_ms=e2e_ms)


def incomplete(start_s: float) -> RequestRecord:
    return RequestRecord(status="incomplete", start_s=start_s, ttft_ms=100.0)


def run_of(
    records: Sequence[RequestRecord],
    *,
    kind: str = "pulse",
    criteria: dict[str, Any] | None = None,
    faults: Sequence[dict[str, Any]] = (),
    load: LoadPattern | None = None,
    reported: dict[str, Any] | None = None,
) -> ImportedRun:
    return ImportedRun(
        format="llm_sizing",
        tool="llm_sizing",
        requests=tuple(records),
        load=load or LoadPattern(kind="concurrency", concurrency=32),
        faults=tuple(faults),
        scenario={"kind": kind, "peak_concurrency": 64, "criteria": criteria or {}},
        reported=reported or {},
    )


def steady(start: float, count: int, step: float = 1.0) -> list[RequestRecord]:
    """`count` ok requests sent every `step` seconds from `start`."""
    return [ok(start + step * i) for i in range(count)]


def criterion(result: dict[str, Any], code: CriterionCode) -> dict[str, Any]:
    return next(c for c in result["criteria"] if c["code"] == code.value)


FAULT_AT_50 = {
    "t_s": 50.0,
    "label": "kill replica 0",
    "kind": "http",
    "ok": True,
    "detail": "HTTP 200",
    "duration_s": 0.01,
}


# ---------------------------------------------------------------------------------------------------------------
# Plans


@pytest.mark.parametrize(
    ("peak", "clients"), [(1, 1), (2, 1), (9, 5), (64, 32)], ids=["peak-1", "peak-2", "peak-9-rounds-up", "peak-64"]
)
def test_pulse_runs_half_the_peak_rounded_up_within_a_ramp_then_holds(peak: int, clients: int) -> None:
    # when: scaled to 5 %: ramp 10 s × 0.05 = 0.5 s, hold 180 s × 0.05 = 9 s
    plan = scenario_plan("pulse", endpoint=ENDPOINT, peak_concurrency=peak, scale=0.05)

    # then
    assert (plan.load.mode, plan.load.concurrency) == (LoadMode.CLOSED, clients)
    assert plan.load.ramp_up_s == pytest.approx(0.5)
    assert plan.warmup_s == pytest.approx(0.5)
    assert plan.bounds.max_duration_s == pytest.approx(9.5)
    assert plan.bounds.max_requests is None
    assert plan.faults == ()
    assert plan.scenario is not None
    assert (plan.scenario.kind, plan.scenario.peak_concurrency) == ("pulse", peak)
    assert dict(plan.scenario.criteria) == {"attainment": 0.99, "max_error_rate": 0.0}
    assert plan.requests.fixed is True
    only = plan.requests.profile.classes[0]
    assert (only.input.mean, only.output.mean) == (512, 128)


def test_pulse_at_full_scale_holds_three_minutes_and_takes_the_given_duration() -> None:
    # when
    real = scenario_plan("pulse", endpoint=ENDPOINT, peak_concurrency=40)
    shorter = scenario_plan("pulse", endpoint=ENDPOINT, peak_concurrency=40, duration_s=60, scale=0.5)

    # then: 10 + 180 s; (10 + 60) × 0.5 s
    assert (real.load.ramp_up_s, real.bounds.max_duration_s, real.load.concurrency) == (10.0, 190.0, 20)
    assert (shorter.load.ramp_up_s, shorter.bounds.max_duration_s) == (5.0, 35.0)


@pytest.mark.parametrize("kind", ["pulse", "long_tail", "failure"])
def test_the_plan_reads_back_through_the_plan_validator(kind: str) -> None:
    # given: everything a suite carries (metrics, the fault, the scenario with its criteria)
    plan = scenario_plan(
        kind,
        endpoint=ENDPOINT,
        peak_concurrency=30,
        scale=0.05,
        max_requests=500,
        seed=3,
        fault=kill_fault() if kind == "failure" else None,
        criteria={"ttft_ms": 2000},
        metrics=MetricsSpec(url="http://gpu-1:8000/metrics", interval_s=0.5),
    )

    # when
    again = plan_from_dict(plan.to_dict())

    # then
    assert again == plan


@pytest.mark.parametrize(
    ("peak", "clients"),
    [(1, 1), (10, 1), (25, 3), (100, 10)],
    ids=["peak-1", "peak-10", "peak-25-rounds-up", "peak-100"],
)
def test_long_tail_runs_a_tenth_of_the_peak_for_ten_minutes(peak: int, clients: int) -> None:
    # when: hold 600 s × 0.05 = 30 s after a 0.5 s ramp
    plan = scenario_plan("long_tail", endpoint=ENDPOINT, peak_concurrency=peak, scale=0.05)

    # then
    assert plan.load.concurrency == clients
    assert plan.bounds.max_duration_s == pytest.approx(30.5)
    assert plan.warmup_s == pytest.approx(0.5)


def test_long_tail_sends_ten_percent_of_requests_with_4096_input_tokens() -> None:
    # when
    plan = scenario_plan("long_tail", endpoint=ENDPOINT, peak_concurrency=40)

    # then: the base class keeps 90 %, the long class has the same output length
    profile = plan.requests.profile
    assert plan.requests.fixed is False
    assert [(c.name, c.share, c.input.kind, c.input.mean, c.output.mean) for c in profile.classes] == [
        ("512/128", 0.9, LengthKind.FIXED, 512, 128),
        ("Long input (4096 tokens)", 0.1, LengthKind.FIXED, 4096, 128),
    ]
    assert profile.mix_at().tolist() == pytest.approx([0.9, 0.1])
    drawn = workload_sample(profile, rate_per_s=None, requests=10_000, seed=plan.seed)
    long_share = float(np.mean(drawn.input_tokens == 4096))
    assert 0.09 < long_share < 0.11
    assert set(drawn.output_tokens.tolist()) == {128}


def test_long_tail_of_a_profile_keeps_its_mix_at_the_hour() -> None:
    # given: at 10:00 the sample profile is Q&A (0.65 / 24 per hour) and reports (0.25 / 2 per hour); archive is off
    spec = RequestSpec(profile=sample_profile(), fixed=False, hour=10)
    qa = (0.65 / 24) / (0.65 / 24 + 0.25 / 2)  # 0.178082...

    # when
    plan = scenario_plan("long_tail", endpoint=ENDPOINT, peak_concurrency=40, requests=spec)

    # then: 90 % of the mix, the long class's output from the most frequent class (reports: normal, mean 1024)
    classes = plan.requests.profile.classes
    assert [c.name for c in classes] == ["Real-time Q&A", "Report generation", "Long input (4096 tokens)"]
    assert [c.share for c in classes] == pytest.approx([0.9 * qa, 0.9 * (1 - qa), 0.1])
    assert all(c.windows == () for c in classes)
    assert (classes[2].output.kind, classes[2].output.mean) == (LengthKind.NORMAL, 1024)
    assert plan.requests.hour is None


def test_failure_injects_the_fault_one_third_into_the_hold() -> None:
    # when: ramp 0.5 s, hold 120 × 0.05 = 6 s, fault at 0.5 + 6 / 3 = 2.5 s
    plan = scenario_plan(
        "failure",
        endpoint=ENDPOINT,
        peak_concurrency=10,
        scale=0.05,
        fault=kill_fault(),
        metrics=MetricsSpec(url="http://gpu-1:8000/metrics"),
    )

    # then
    assert (plan.load.concurrency, plan.load.mode) == (5, LoadMode.CLOSED)
    assert plan.bounds.max_duration_s == pytest.approx(6.5)
    assert len(plan.faults) == 1
    assert plan.faults[0].at_s == pytest.approx(2.5)
    assert (plan.faults[0].label, plan.faults[0].url) == ("kill replica 0", "http://gpu-1:8000/control")
    assert plan.metrics == MetricsSpec(url="http://gpu-1:8000/metrics")
    assert plan.scenario is not None
    assert dict(plan.scenario.criteria) == {"attainment": 0.99, "recovery_s": 30.0}


def test_failure_fault_time_follows_the_given_fraction() -> None:
    # when: 10 + 0.5 × 120 = 70 s
    plan = scenario_plan(
        "failure", endpoint=ENDPOINT, peak_concurrency=10, fault=kill_fault(at_s=999.0), fault_at_fraction=0.5
    )

    # then
    assert plan.faults[0].at_s == 70.0


def test_criteria_override_the_defaults() -> None:
    # when
    plan = scenario_plan("pulse", endpoint=ENDPOINT, peak_concurrency=8, criteria={"ttft_ms": 2000, "attainment": 0.95})

    # then
    assert plan.scenario is not None
    assert dict(plan.scenario.criteria) == {"attainment": 0.95, "max_error_rate": 0.0, "ttft_ms": 2000.0}


@pytest.mark.parametrize(
    ("kind", "options", "expected"),
    [
        ("spike", {}, [("scenario.kind", "unknown scenario 'spike' (known: pulse, long_tail, failure)")]),
        ("pulse", {"peak_concurrency": 0}, [("scenario.peak_concurrency", "must be a whole number ≥ 1 (got 0)")]),
        ("pulse", {"scale": 0}, [("scale", "must be a number > 0 (got 0); 1 runs the suite's real durations")]),
        ("pulse", {"duration_s": -5}, [("duration_s", "the held part must be > 0 seconds (got -5)")]),
        (
            "failure",
            {},
            [
                (
                    "faults",
                    "the failure suite needs the fault to inject (a FaultSpec: our simulator's control "
                    "call or an operator's command)",
                )
            ],
        ),
        ("pulse", {"fault": kill_fault()}, [("faults", "only the failure suite injects a fault (this is pulse)")]),
        (
            "failure",
            {"fault": kill_fault(), "fault_at_fraction": 1.0},
            [("fault_at_fraction", "a fraction of the held part, in (0, 1) (got 1.0)")],
        ),
        (
            "failure",
            {"fault": kill_fault(kind=FaultKind.COMMAND, url=None)},
            [("faults[0].argv", "a command fault needs its argv")],
        ),
        (
            "pulse",
            {"criteria": {"atainment": 0.9}},
            [("scenario.criteria.atainment", "unknown criterion (did you mean 'attainment'?)")],
        ),
        (
            "pulse",
            {"criteria": {"attainment": 1.5}},
            [("scenario.criteria.attainment", "a share of the requests, in (0, 1] (got 1.5; 0.99 is 99%)")],
        ),
        (
            "long_tail",
            {"peak_concurrency": 0, "scale": -1, "criteria": {"ttft_ms": 0}},
            [
                ("scenario.peak_concurrency", "must be a whole number ≥ 1 (got 0)"),
                ("scale", "must be a number > 0 (got -1); 1 runs the suite's real durations"),
                ("scenario.criteria.ttft_ms", "must be > 0 (got 0)"),
            ],
        ),
    ],
    ids=[
        "unknown-kind",
        "peak-0",
        "scale-0",
        "negative-duration",
        "failure-without-fault",
        "fault-on-pulse",
        "fraction-1",
        "command-without-argv",
        "misspelt-criterion",
        "attainment-over-1",
        "all-problems-at-once",
    ],
)
def test_bad_input_is_refused_with_every_problem(
    kind: str, options: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    # given
    arguments: dict[str, Any] = {"endpoint": ENDPOINT, "peak_concurrency": 8, **options}

    # when
    with pytest.raises(PlanError) as caught:
        scenario_plan(kind, **arguments)

    # then
    assert caught.value.problems == expected
    assert isinstance(caught.value, ValueError)


def test_scenarios_describe_each_suite_in_words() -> None:
    assert list(SCENARIOS) == ["pulse", "long_tail", "failure"]
    assert "50% of the peak concurrency arrives within 10 s" in SCENARIOS["pulse"]
    assert "4096 input tokens" in SCENARIOS["long_tail"]
    assert "within 30 s" in SCENARIOS["failure"]


def test_criterion_codes_are_stable() -> None:
    assert [c.value for c in CriterionCode] == [
        "client_fidelity",
        "fault_injected",
        "slo_attainment",
        "error_rate",
        "recovery_time",
        "memory",
    ]
    assert [v.value for v in SuiteVerdict] == ["pass", "fail", "invalid"]


def test_the_spelt_out_statuses_are_the_importers() -> None:
    assert (OK, INCOMPLETE) == (RequestStatus.OK.value, RequestStatus.INCOMPLETE.value)
    assert OPEN_LOOP_KINDS == (LoadKind.RATE.value, LoadKind.OFFLINE.value)


def test_plans_are_built_without_sizing_benchmarks_or_django() -> None:
    # given: a process where benchmarks_app.results and Django cannot be imported (building a plan is pure)
    script = (
        "import sys\n"
        "sys.modules['benchmarks_app.results'] = None\n"
        "sys.modules['django'] = None\n"
        "from llm_sizing_loadgen.plan import EndpointSpec\n"
        "from benchmarks_app.loadtests.scenarios import scenario_plan\n"
        "plan = scenario_plan('pulse', endpoint=EndpointSpec(base_url='http://h:1', model='m'), "
        "peak_concurrency=4)\n"
        "print(plan.load.concurrency)\n"
    )

    # when
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=Path(__file__).resolve().parents[3],
    )

    # then
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr


def test_docstring_examples_hold() -> None:
    results = doctest.testmod(scenarios_module)
    assert results.attempted >= 8
    assert results.failed == 0


# ---------------------------------------------------------------------------------------------------------------
# Judging pulse and long tail


@pytest.mark.parametrize(
    ("misses", "verdict", "attainment"),
    [(1, "pass", 0.99), (2, "fail", 0.98)],
    ids=["99-of-100-passes", "98-of-100-fails"],
)
def test_attainment_on_the_boundary(misses: int, verdict: str, attainment: float) -> None:
    # given: 100 ok requests, TTFT SLO 200 ms; one sits exactly on it (met: ≤), `misses` are at 201 ms
    records = [ok(i * 0.5, ttft_ms=150.0) for i in range(100)]
    records[0] = ok(0.0, ttft_ms=200.0)
    for index in range(1, 1 + misses):
        records[index] = ok(index * 0.5, ttft_ms=201.0)

    # when
    result = judge(
        run_of(records), slo={"ttft_ms": 200}, memory={"verdict": "pass", "unverified": []}, fidelity_valid=True
    )

    # then
    slo = criterion(result, CriterionCode.SLO_ATTAINMENT)
    assert (slo["verdict"], slo["measured"], slo["limit"]) == (verdict, attainment, 0.99)
    assert result["verdict"] == verdict
    assert result["figures"]["good"] == 100 - misses
    assert slo["detail"] == (
        f"{100 - misses} of 100 requests in the measurement window ({attainment:.2%}) met every "
        "SLO (TTFT ≤ 200 ms); at least 99.00% required (99 requests); errors count as misses."
    )


def test_an_error_is_a_miss_and_fails_the_zero_error_rate() -> None:
    # given: 99 ok and 1 error, no latency SLO
    records = [*steady(0.0, 99), error(99.0)]

    # when
    result = judge(run_of(records, kind="long_tail"), memory=None, fidelity_valid=True)

    # then: 99 % attainment passes, but the pulse and long tail allow no error
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["verdict"] == "pass"
    rate = criterion(result, CriterionCode.ERROR_RATE)
    assert (rate["verdict"], rate["measured"], rate["limit"]) == ("fail", 0.01, 0.0)
    assert rate["detail"] == (
        "1 of 100 requests in the measurement window failed (1.00%); at most 0.00% allowed (0 requests)."
    )
    assert result["verdict"] == "fail"
    assert result["summary"] == (
        "Long tail: FAIL (error rate failed). The memory part is unverified: the memory verdict was not measured."
    )
    assert (result["figures"]["errors"], result["figures"]["requests"]) == (1, 100)


def test_incomplete_requests_are_left_out_of_both_sides() -> None:
    # given: 99 ok, one miss and five cut by the end of the run
    records = [*steady(0.0, 99), ok(99.0, e2e_ms=9000.0), *(incomplete(100.0 + i) for i in range(5))]

    # when
    result = judge(run_of(records), slo={"e2e_ms": 1000}, fidelity_valid=True)

    # then: 99 of 100, not 99 of 105
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["measured"] == 0.99
    assert (result["figures"]["requests"], result["figures"]["incomplete"]) == (100, 5)
    assert result["verdict"] == "pass"


def test_an_open_loop_is_judged_on_ttft_sched() -> None:
    # given: TTFT 100 ms but 300 ms after the scheduled send (client queueing)
    records = [ok(i * 0.1, ttft_ms=100.0, ttft_sched_ms=300.0) for i in range(50)]
    open_loop = run_of(records, load=LoadPattern(kind="rate", rate=10.0))
    closed_loop = run_of(records)

    # when
    open_result = judge(open_loop, slo={"ttft_ms": 200}, fidelity_valid=True)
    closed_result = judge(closed_loop, slo={"ttft_ms": 200}, fidelity_valid=True)

    # then
    assert (open_result["verdict"], open_result["figures"]["ttft_basis"]) == ("fail", "ttft_sched_ms")
    assert criterion(open_result, CriterionCode.SLO_ATTAINMENT)["measured"] == 0.0
    assert (closed_result["verdict"], closed_result["figures"]["ttft_basis"]) == ("pass", "ttft_ms")


def test_a_tpot_the_record_lacks_is_undefined_not_a_miss_but_a_missing_e2e_is() -> None:
    # given: one-event outputs have no TPOT; one ok record lost its E2E
    records = [ok(float(i), tpot_ms=None) for i in range(9)]
    records[0] = replace(records[0], output_tokens=1)
    records.append(replace(ok(9.0), e2e_ms=None))

    # when
    result = judge(
        run_of(records, criteria={"attainment": 0.9}), slo={"tpot_ms": 50, "e2e_ms": 1000}, fidelity_valid=True
    )

    # then: 9 of 10, against the scenario's 0.9 (the SLO argument leaves the other criteria alone)
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["measured"] == 0.9
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["limit"] == 0.9
    assert result["verdict"] == "pass"


def test_the_slo_argument_overrides_the_scenario_criteria() -> None:
    # given: the scenario asks TTFT ≤ 50 ms, the caller 200 ms
    records = steady(0.0, 10)

    # when
    result = judge(run_of(records, criteria={"ttft_ms": 50}), slo={"ttft_ms": 200}, fidelity_valid=True)

    # then
    assert result["figures"]["slo"] == {"ttft_ms": 200.0}
    assert result["verdict"] == "pass"


def test_invalid_client_fidelity_makes_the_suite_invalid() -> None:
    # given: otherwise a clean run
    records = steady(0.0, 20)

    # when
    result = judge(run_of(records), fidelity_valid=False, memory={"verdict": "pass", "unverified": []})

    # then
    assert result["verdict"] == "invalid"
    assert criterion(result, CriterionCode.CLIENT_FIDELITY)["verdict"] == "fail"
    assert result["summary"] == (
        "Pulse: INVALID, not a server result: the client could not keep up with the load (client fidelity invalid)."
    )


@pytest.mark.parametrize(
    ("valid", "verdict", "fidelity"),
    [(False, "invalid", "fail"), (True, "pass", "pass")],
    ids=["invalid-in-summary", "valid-in-summary"],
)
def test_client_fidelity_is_read_from_the_generator_summary(valid: bool, verdict: str, fidelity: str) -> None:
    # given
    run = run_of(steady(0.0, 20), reported={"client_fidelity": {"valid": valid, "reasons": []}})

    # when
    result = judge(run)

    # then
    assert result["verdict"] == verdict
    assert criterion(result, CriterionCode.CLIENT_FIDELITY)["verdict"] == fidelity


def test_unknown_fidelity_is_reported_and_does_not_decide() -> None:
    # when
    result = judge(run_of(steady(0.0, 20)), memory={"verdict": "pass", "unverified": []})

    # then
    assert criterion(result, CriterionCode.CLIENT_FIDELITY)["verdict"] == "unknown"
    assert result["verdict"] == "pass"


@pytest.mark.parametrize(
    ("memory", "verdict", "memory_verdict", "unverified_said"),
    [
        (
            {"verdict": "fail", "unverified": [], "first_violation": {"detail": "KV-cache usage reached 100.0%."}},
            "fail",
            "fail",
            False,
        ),
        ({"verdict": "unknown", "unverified": ["peak_within_commitment"]}, "pass", "unknown", True),
        (None, "pass", "unknown", True),
        ({"verdict": "pass", "unverified": ["peak_within_commitment"]}, "pass", "pass", False),
    ],
    ids=["memory-fail-fails", "memory-unknown-unverified", "memory-none-unverified", "memory-pass"],
)
def test_the_memory_verdict(
    memory: dict[str, Any] | None, verdict: str, memory_verdict: str, unverified_said: bool
) -> None:
    # when
    result = judge(run_of(steady(0.0, 20)), memory=memory, fidelity_valid=True)

    # then
    part = criterion(result, CriterionCode.MEMORY)
    assert (result["verdict"], part["verdict"]) == (verdict, memory_verdict)
    assert ("The memory part is unverified" in result["summary"]) is unverified_said
    assert result["memory"] == memory


def test_memory_failure_detail_names_the_first_violation() -> None:
    # when
    result = judge(
        run_of(steady(0.0, 20)),
        fidelity_valid=True,
        memory={"verdict": "fail", "first_violation": {"detail": "KV-cache usage reached 100.0%."}},
    )

    # then
    assert criterion(result, CriterionCode.MEMORY)["detail"] == (
        "The memory verdict failed: KV-cache usage reached 100.0%."
    )
    assert result["summary"] == "Pulse: FAIL (memory failed)."


def test_a_run_without_requests_is_invalid() -> None:
    # when
    result = judge(run_of([incomplete(1.0)]), fidelity_valid=True)

    # then
    assert result["verdict"] == "invalid"
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["verdict"] == "unknown"


def test_bad_slo_keys_are_refused() -> None:
    with pytest.raises(PlanError) as caught:
        judge(run_of(steady(0.0, 5)), slo={"ttft_p99_ms": 100})
    assert caught.value.problems == [("slo.ttft_p99_ms", "unknown SLO (known: ttft_ms, tpot_ms, e2e_ms)")]


def test_a_run_without_a_scenario_is_judged_as_custom() -> None:
    # given
    run = replace(run_of([*steady(0.0, 98), error(98.0), error(99.0)]), scenario=None)

    # when
    result = judge(run, fidelity_valid=True)

    # then: attainment 0.99 by default, no error-rate criterion
    assert result["scenario"] == "custom"
    assert [c["code"] for c in result["criteria"]] == ["client_fidelity", "slo_attainment", "memory"]
    assert result["verdict"] == "fail"


def test_scenario_criteria_defaults() -> None:
    assert scenario_criteria("pulse") == {"attainment": 0.99, "max_error_rate": 0.0}
    assert scenario_criteria("long_tail") == {"attainment": 0.99, "max_error_rate": 0.0}
    assert scenario_criteria("failure") == {"attainment": 0.99, "recovery_s": 30.0}
    assert scenario_criteria("custom") == {"attainment": 0.99}


# ---------------------------------------------------------------------------------------------------------------
# Recovery after a fault


def outage_with_a_straggler() -> list[RequestRecord]:
    """Fault at 50 s. 20 ok requests sent 30–49 s (each ends 0.5 s later); 2 casualties sent before the fault and
    killed in flight; after it: errors at 50.5, 51.5, 52.5, a lucky success at 53.5, an error at 54.5, 15 ok from
    55.5 to 69.5, one straggler error at 70.5, 19 ok from 71.5 to 89.5."""
    return [
        *steady(30.0, 20),
        error(48.25, e2e_ms=3000.0),
        error(48.75, e2e_ms=3000.0),
        error(50.5),
        error(51.5),
        error(52.5),
        ok(53.5),
        error(54.5),
        *steady(55.5, 15),
        error(70.5),
        *steady(71.5, 19),
    ]


def test_recovery_is_not_hidden_by_one_late_straggler() -> None:
    # when
    result = recovery(outage_with_a_straggler(), fault_s=50.0)

    # then: recovered at 55.5 s (10+ ok in a row; afterwards 1 failure in 35 requests, max(1, ⌊0.35⌋) = 1 allowed),
    # not at 71.5 s after the straggler
    assert (result.recovered, result.recovery_s) == (True, 5.5)
    assert (result.requests_after, result.errors_after) == (40, 5)


def test_failure_suite_judges_attainment_outside_the_outage() -> None:
    # given
    run = run_of(
        outage_with_a_straggler(), kind="failure", criteria={"attainment": 0.98, "recovery_s": 10}, faults=[FAULT_AT_50]
    )

    # when
    result = judge(run, fidelity_valid=True, memory={"verdict": "pass", "unverified": []})

    # then: the outage is [50, 55.5]; left out: the 2 casualties (in flight at 50 s) and the 6 requests sent in it.
    # Judged: 20 before + 14 + the straggler + 19 = 54, of which 53 good; ⌈0.98 × 54⌉ = 53 needed
    figures = result["figures"]
    assert (figures["recovery_s"], figures["recovered"]) == (5.5, True)
    assert (figures["requests"], figures["excluded_requests"], figures["judged_requests"]) == (62, 8, 54)
    assert (figures["errors"], figures["errors_after_fault"], figures["errors_in_outage"]) == (7, 5, 6)
    assert criterion(result, CriterionCode.SLO_ATTAINMENT)["measured"] == round(53 / 54, 6)
    recovery_time = criterion(result, CriterionCode.RECOVERY_TIME)
    assert (recovery_time["verdict"], recovery_time["measured"], recovery_time["limit"]) == ("pass", 5.5, 10.0)
    assert recovery_time["detail"] == (
        "Requests succeeded again 5.5 s after the fault (kill replica 0) at 50.0 s "
        "after the measurement window's first request (10 in a row from then on, and "
        "5 of 40 requests sent after the fault failed)"
        "; recovery within 10 s required."
    )
    assert [c["code"] for c in result["criteria"]] == [
        "client_fidelity",
        "fault_injected",
        "slo_attainment",
        "recovery_time",
        "memory",
    ]
    assert result["verdict"] == "pass"


def test_a_slow_recovery_fails_the_suite() -> None:
    # given: the same run with a 5 s promise
    run = run_of(
        outage_with_a_straggler(), kind="failure", criteria={"attainment": 0.98, "recovery_s": 5}, faults=[FAULT_AT_50]
    )

    # when
    result = judge(run, fidelity_valid=True)

    # then
    assert criterion(result, CriterionCode.RECOVERY_TIME)["verdict"] == "fail"
    assert result["verdict"] == "fail"


def test_an_endpoint_that_keeps_failing_is_never_recovered() -> None:
    # given: after the fault every other request fails (a load balancer still routing to the dead worker)
    records = [*steady(30.0, 20), *((ok if i % 2 else error)(50.5 + i) for i in range(40))]
    run = run_of(records, kind="failure", faults=[FAULT_AT_50])

    # when
    result = judge(run, fidelity_valid=True)

    # then
    assert recovery(records, fault_s=50.0).recovered is False
    part = criterion(result, CriterionCode.RECOVERY_TIME)
    assert (part["verdict"], part["measured"]) == ("fail", None)
    assert part["detail"] == (
        "The endpoint had not recovered when the run ended: after the fault (kill replica 0) at "
        "50.0 s after the measurement window's first request, 20 of 40 requests sent failed and "
        "no 10 in a row succeeded for good; recovery "
        "within 30 s required."
    )
    assert (result["figures"]["recovered"], result["figures"]["recovery_s"]) == (False, None)
    # only the 20 requests that ended before the fault are judged
    assert result["figures"]["judged_requests"] == 20
    assert result["verdict"] == "fail"


def test_a_relapse_after_a_good_stretch_is_not_a_recovery() -> None:
    # given: 12 ok then 5 errors until the end
    records = [*(ok(50.5 + i) for i in range(12)), *(error(62.5 + i) for i in range(5))]

    # when
    result = recovery(records, fault_s=50.0)

    # then
    assert (result.recovered, result.recovery_s, result.errors_after) == (False, None, 5)


def test_a_single_error_at_the_very_end_is_forgiven() -> None:
    # given: errors, then exactly RECOVERY_RUN ok requests, then one error
    records = [error(50.5), error(51.5), *(ok(52.5 + i) for i in range(RECOVERY_RUN)), error(62.5)]

    # when
    result = recovery(records, fault_s=50.0)

    # then
    assert (result.recovered, result.recovery_s) == (True, 2.5)


@pytest.mark.parametrize(
    "records",
    [[], [ok(50.5 + i) for i in range(RECOVERY_RUN - 1)]],
    ids=["nothing-after-the-fault", "too-few-successes-to-confirm"],
)
def test_without_enough_requests_after_the_fault_there_is_no_recovery(records: list[RequestRecord]) -> None:
    assert recovery([ok(10.0), *records], fault_s=50.0).recovered is False


def test_each_fault_is_measured_up_to_the_next() -> None:
    # given: faults at 10 s and 30 s; back after 2.5 s, then after 3.5 s
    records = [error(10.5), error(11.5), *steady(12.5, 17), error(30.5), error(31.5), error(32.5), *steady(33.5, 17)]
    faults = [{**FAULT_AT_50, "t_s": 10.0, "label": "kill 0"}, {**FAULT_AT_50, "t_s": 30.0, "label": "kill 1"}]

    # when
    result = judge(run_of(records, kind="failure", faults=faults), fidelity_valid=True)

    # then: without the bound at 30 s the first fault's tail would hold the second's 3 errors
    assert [f["recovery_s"] for f in result["figures"]["faults"]] == [2.5, 3.5]
    assert result["figures"]["recovery_s"] == 3.5
    slowest = criterion(result, CriterionCode.RECOVERY_TIME)
    assert (slowest["measured"], slowest["verdict"]) == (3.5, "pass")
    assert slowest["detail"].startswith("Requests succeeded again 3.5 s after the fault (kill 1) at 30.0 s")


@pytest.mark.parametrize(
    "faults",
    [[], [{**FAULT_AT_50, "ok": False, "detail": "connection refused"}]],
    ids=["no-fault-recorded", "injection-failed"],
)
def test_a_failure_run_without_an_injected_fault_is_invalid(faults: list[dict[str, Any]]) -> None:
    # when
    result = judge(run_of(steady(0.0, 30), kind="failure", faults=faults), fidelity_valid=True)

    # then
    assert result["verdict"] == "invalid"
    assert criterion(result, CriterionCode.FAULT_INJECTED)["verdict"] == "fail"
    assert "the failure was not injected" in result["summary"]


def test_a_faults_time_is_said_on_the_tests_own_clock_when_the_result_gives_it() -> None:
    from benchmarks_app.loadtests.scenarios import _test_time

    assert _test_time({"t_s": 19.8, "run_t_s": 25.0}) == "25.0 s into the test"
    assert _test_time({"t_s": 19.8}) == "19.8 s after the measurement window's first request"


def test_the_suite_figures_carry_the_memory_peak_and_its_tolerance() -> None:
    # given: a memory verdict whose GPU peak (20,757 MiB) was judged within DCGM's 1 MiB step
    memory = {
        "verdict": "pass",
        "unverified": [],
        "figures": {
            "gpu_peak_bytes": 20_757 * 1_048_576,
            "committed_bytes_per_gpu": 21_766_298_664,
            "tolerance_bytes": 1_048_576,
        },
    }

    # when
    result = judge(run_of(steady(0.0, 20)), memory=memory, fidelity_valid=True)
    unmeasured = judge(run_of(steady(0.0, 20)), memory=None, fidelity_valid=True)

    # then
    figures = result["figures"]
    assert (figures["gpu_peak_bytes"], figures["committed_bytes_per_gpu"], figures["tolerance_bytes"]) == (
        21_765_292_032,
        21_766_298_664,
        1_048_576,
    )
    assert (unmeasured["figures"]["gpu_peak_bytes"], unmeasured["figures"]["tolerance_bytes"]) == (None, None)


def test_a_casualty_without_an_e2e_is_in_flight_until_its_last_event() -> None:
    # given: the straggler run, but its two casualties written as an older generator wrote failed requests: no E2E,
    # only the events they had (sent at 48.25 s and 48.75 s, first token 300 ms later, then 20 gaps of 100 ms: their
    # last events at 48.25 + 0.3 + 2.0 = 50.55 s and 51.05 s, after the fault at 50 s)
    records = [r for r in outage_with_a_straggler() if not (r.status == "error" and r.start_s in (48.25, 48.75))]
    casualties = [
        RequestRecord(
            status="error", error="http_error(503)", start_s=start, e2e_ms=None, ttft_ms=300.0, itl_ms=(100.0,) * 20
        )
        for start in (48.25, 48.75)
    ]
    run = run_of(
        [*records, *casualties], kind="failure", criteria={"attainment": 0.98, "recovery_s": 10}, faults=[FAULT_AT_50]
    )

    # when
    result = judge(run, fidelity_valid=True, memory={"verdict": "pass", "unverified": []})

    # then: they are left out as in flight during the outage, as when their E2E is known: 54 judged, 53 good
    figures = result["figures"]
    assert (figures["excluded_requests"], figures["judged_requests"], figures["good"]) == (8, 54, 53)
    assert result["verdict"] == "pass"


def test_the_english_texts_name_checks_in_words_not_codes() -> None:
    # given: a memory verdict that passed without a GPU series, and a run that misses its SLOs
    memory = {"verdict": "pass", "unverified": ["peak_within_commitment", "no_oom"]}
    slow = [ok(float(i), ttft_ms=9000.0) for i in range(20)]

    # when
    passed = judge(run_of(steady(0.0, 20)), memory=memory, fidelity_valid=True)
    failed = judge(run_of(slow), slo={"ttft_ms": 1000.0}, memory=memory, fidelity_valid=True)

    # then
    assert criterion(passed, CriterionCode.MEMORY)["detail"] == (
        "The memory verdict passed (not measured: the GPU memory peak against the commitment, out-of-memory and XID "
        "events)."
    )
    assert failed["summary"] == "Pulse: FAIL (SLO attainment failed)."

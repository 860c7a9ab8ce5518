"""The field's load-test scenarios as plan builders, and their pass/fail judgement (DESIGN.md §11; METRICS.md).

Three suites give the memory commitment its evidence:

- **pulse**: 50 % of the peak concurrency (rounded up, at least 1 client) arriving within 10 s (a closed loop whose
  clients start evenly over a 10 s ramp), then held for 180 s. Passes when at least 99 % of the requests in the
  measurement window meet the SLOs, none fails, and the memory verdict does not fail.
- **long_tail**: 10 % of the peak concurrency (rounded up, at least 1) for 600 s after a 10 s ramp, with 10 % of the
  requests carrying 4096 input tokens (the given requests keep 90 % of the mix). Same criteria as the pulse.
- **failure**: 50 % of the peak concurrency for 120 s after a 10 s ramp, with one fault (a worker killed: the
  caller's `FaultSpec`, our simulator's control call or an operator's command) injected one third into the held
  part. Errors are expected after the fault: passes when the endpoint recovers within 30 s and at least 99 % of the
  requests outside the outage meet the SLOs, and the memory verdict does not fail (restarts are allowed there).

Every duration (ramp, hold, the fault's time) is multiplied by `scale` (e.g. 0.05 in tests); the warm-up is the
ramp, so the measurement window is the held part. The plan records the scenario (`ScenarioSpec`) with its
criteria, defaults filled in, so a result file can be judged on its own.

Criteria (keys of `ScenarioSpec.criteria`): ``attainment`` (the share of requests that must be good, default 0.99),
``max_error_rate`` (pulse and long tail: 0; the failure suite applies it only when given, to the requests outside
the outage), ``recovery_s`` (failure: 30 s; not scaled, it is the deployment's promise), and the SLOs ``ttft_ms``,
``tpot_ms``, ``e2e_ms`` (each optional).

Judging (`judge`), by METRICS.md's goodput rules over the run's requests (an importer keeps those sent inside the
measurement window): a request is *good* when its status is ok and it meets every given SLO; errors count as misses;
``incomplete`` requests (cut by the end of the run) are left out of both sides. The TTFT SLO is checked against
TTFT_sched for an open loop (rate or offline; TTFT where a record lacks it) and TTFT for a closed loop; a TPOT the
record lacks (one event, or one token) is undefined and cannot miss; a TTFT or E2E an ok record lacks counts as a
miss.

Time to recover (failure suite), per fault at `t_f` on the requests' send-time clock: take the requests sent at or
after `t_f` (and before the next fault), incomplete ones left out, in order of send time. The endpoint recovered at
the first of them, `r`, such that (1) `r` and the next ``RECOVERY_RUN - 1`` requests all succeeded (status ok), and
(2) of the `m` requests sent from `r` to the end, at most ``max(1, ⌊(1 − attainment) · m⌋)`` failed. The time to
recover is ``send time of r − t_f``; when no request qualifies the endpoint is *not recovered* (the run ended
first). (1) keeps a still-failing endpoint from being called recovered by a lucky success, or by every other
request succeeding behind a load balancer that still routes to the dead worker; (2) keeps a later relapse from
being forgiven, while one late straggler (a single error after the recovery) never hides it. Requests sent before
`t_f` that fail because of the fault are casualties, not signs of a slow recovery: they do not count in (1) or (2).
The outage is ``[t_f, t_f + time to recover]`` (to the end of the run when not recovered); attainment and the error
rate are judged on the requests that were not in flight during it (sent after it ended, or ended before it began;
a failed request ends when its failure was seen, which our generator records as its E2E; a record without an E2E
ends at its last event, else at its send time).

>>> plan = scenario_plan("pulse", endpoint=EndpointSpec(base_url="http://gpu-1:8000", model="m"),
...                      peak_concurrency=9, scale=0.1)
>>> plan.load.concurrency, plan.load.ramp_up_s, plan.bounds.max_duration_s, plan.warmup_s
(5, 1.0, 19.0, 1.0)
>>> dict(plan.scenario.criteria)
{'attainment': 0.99, 'max_error_rate': 0.0}
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from llm_sizing_loadgen.plan import (
    Bounds,
    EndpointSpec,
    FaultKind,
    FaultSpec,
    LoadMode,
    LoadSpec,
    MetricsSpec,
    PlanError,
    RequestSpec,
    ScenarioSpec,
    TestPlan,
)
from llm_sizing_loadgen.workload import LengthDistribution, LengthKind, RequestClass, WorkloadProfile, fixed_profile

if TYPE_CHECKING:  # building a plan needs no importer: only judging reads imported runs
    from benchmarks_app.results.run import ImportedRun, RequestRecord

RAMP_S = 10.0  # every suite's clients start evenly over this (the pulse's "within 10 s")
LONG_TAIL_INPUT_TOKENS = 4096
LONG_TAIL_SHARE = 0.10  # of the requests
DEFAULT_INPUT_TOKENS = 512
DEFAULT_OUTPUT_TOKENS = 128
FAULT_AT_FRACTION = 1 / 3  # of the held part
ERROR_PAUSE_S = 1.0  # × scale: a client whose request failed waits this long (as real clients back off), so an
# outage is measured as errors and a recovery time, not turned into a storm of instant failures that swamps the client
RECOVERY_RUN = 10  # consecutive successes that confirm a recovery
SLO_KEYS = ("ttft_ms", "tpot_ms", "e2e_ms")
# benchmarks_app.results.run's RequestStatus and LoadKind values, spelt out for the same reason as the TYPE_CHECKING import
OK = "ok"
INCOMPLETE = "incomplete"
OPEN_LOOP_KINDS = ("rate", "offline")


class ScenarioKind(StrEnum):
    PULSE = "pulse"
    LONG_TAIL = "long_tail"
    FAILURE = "failure"
    CUSTOM = "custom"  # a plan written by hand: judged on the criteria it carries


@dataclass(frozen=True, kw_only=True)
class ScenarioShape:
    """One suite's load: `concurrency_fraction` of the peak (rounded up, ≥ 1), a `ramp_s` ramp, a `hold_s` hold."""

    concurrency_fraction: float
    hold_s: float
    criteria: Mapping[str, float]
    description: str
    ramp_s: float = RAMP_S


SHAPES: Mapping[ScenarioKind, ScenarioShape] = {
    ScenarioKind.PULSE: ScenarioShape(
        concurrency_fraction=0.5,
        hold_s=180.0,
        criteria={"attainment": 0.99, "max_error_rate": 0.0},
        description="Pulse: 50% of the peak concurrency arrives within 10 s and is held for 3 minutes. Passes when "
        "at least 99% of the requests meet the SLOs, none fails, and GPU memory, KV cache, preemptions, "
        "OOM and restarts stay clean.",
    ),
    ScenarioKind.LONG_TAIL: ScenarioShape(
        concurrency_fraction=0.1,
        hold_s=600.0,
        criteria={"attainment": 0.99, "max_error_rate": 0.0},
        description="Long tail: 10% of the peak concurrency for 10 minutes, with 10% of the requests carrying 4096 "
        "input tokens. Passes when at least 99% of the requests meet the SLOs, none fails, and the "
        "memory verdict does not fail.",
    ),
    ScenarioKind.FAILURE: ScenarioShape(
        concurrency_fraction=0.5,
        hold_s=120.0,
        criteria={"attainment": 0.99, "recovery_s": 30.0},
        description="Failure: 50% of the peak concurrency for 2 minutes, with a worker killed one third of the way "
        "in. Passes when requests succeed again within 30 s of the fault and at least 99% of the "
        "requests outside the outage meet the SLOs.",
    ),
}

SCENARIOS: Mapping[str, str] = {kind.value: shape.description for kind, shape in SHAPES.items()}

CRITERIA_KEYS = ("attainment", "max_error_rate", "recovery_s", *SLO_KEYS)


class CriterionCode(StrEnum):
    CLIENT_FIDELITY = "client_fidelity"
    FAULT_INJECTED = "fault_injected"
    SLO_ATTAINMENT = "slo_attainment"
    ERROR_RATE = "error_rate"
    RECOVERY_TIME = "recovery_time"
    MEMORY = "memory"


class SuiteVerdict(StrEnum):
    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    INVALID = "invalid"  # not a server result: the client could not keep up, or the fault was not injected


# ---------------------------------------------------------------------------------------------------------------
# Building plans


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def scenario_criteria(
    kind: str, given: Mapping[str, Any] | None = None, *, path: str = "scenario.criteria"
) -> dict[str, float]:
    """The suite's default criteria updated by `given`, each checked; PlanError listing every problem.

    >>> scenario_criteria("failure", {"ttft_ms": 2000})
    {'attainment': 0.99, 'recovery_s': 30.0, 'ttft_ms': 2000.0}
    """
    problems: list[tuple[str, str]] = []
    try:
        defaults = dict(SHAPES[ScenarioKind(kind)].criteria) if kind != ScenarioKind.CUSTOM else {"attainment": 0.99}
    except ValueError:
        raise PlanError(
            [("scenario.kind", f"unknown scenario {kind!r} (known: {', '.join(k.value for k in ScenarioKind)})")]
        ) from None
    result = dict(defaults)
    for key, raw in (given or {}).items():
        where = f"{path}.{key}"
        if key not in CRITERIA_KEYS:
            close = difflib.get_close_matches(str(key), CRITERIA_KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(CRITERIA_KEYS)})"
            problems.append((where, f"unknown criterion{hint}"))
            continue
        if raw is None:
            continue
        value = _number(raw)
        if value is None:
            problems.append((where, f"must be a number (got {raw!r})"))
        elif key == "attainment" and not 0 < value <= 1:
            problems.append((where, f"a share of the requests, in (0, 1] (got {value:g}; 0.99 is 99%)"))
        elif key == "max_error_rate" and not 0 <= value <= 1:
            problems.append((where, f"a share of the requests, in [0, 1] (got {value:g})"))
        elif key not in ("attainment", "max_error_rate") and value <= 0:
            problems.append((where, f"must be > 0 (got {value:g})"))
        else:
            result[key] = value
    if problems:
        raise PlanError(problems)
    return result


def long_tail_requests(requests: RequestSpec) -> RequestSpec:
    """The long-tail mix: the given requests at 90 % (a profile's classes keep their mix at the plan's hour, their
    time windows dropped) and a class of 4096 input tokens at 10 %, whose output follows the given requests' (of
    a profile: its most frequent class's).

    >>> spec = long_tail_requests(RequestSpec(profile=fixed_profile(input_tokens=512, output_tokens=128), fixed=True))
    >>> [(c.name, c.share, c.input.mean, c.output.mean) for c in spec.profile.classes]
    [('512/128', 0.9, 512, 128), ('Long input (4096 tokens)', 0.1, 4096, 128)]
    """
    base = requests.profile
    mix = base.mix_at(requests.hour)
    kept = [
        replace(cls, share=(1 - LONG_TAIL_SHARE) * float(share), windows=())
        for cls, share in zip(base.classes, mix, strict=True)
        if share > 0
    ]
    dominant = base.classes[int(mix.argmax())]
    name = f"Long input ({LONG_TAIL_INPUT_TOKENS} tokens)"
    while name in {cls.name for cls in kept}:
        name += "*"
    long_class = RequestClass(
        name=name,
        share=LONG_TAIL_SHARE,
        output=dominant.output,
        input=LengthDistribution(kind=LengthKind.FIXED, mean=LONG_TAIL_INPUT_TOKENS),
    )
    profile = WorkloadProfile(
        name=f"{base.name}, {LONG_TAIL_SHARE:.0%} at {LONG_TAIL_INPUT_TOKENS} input tokens",
        classes=(*kept, long_class),
        arrival=base.arrival,
        description=f"Long-tail scenario: {1 - LONG_TAIL_SHARE:.0%} of the requests as in {base.name!r}, "
        f"{LONG_TAIL_SHARE:.0%} with {LONG_TAIL_INPUT_TOKENS} input tokens.",
    )
    return RequestSpec(profile=profile, fixed=False, hour=None, truncation_tolerance=requests.truncation_tolerance)


def scenario_plan(
    kind: str,
    *,
    endpoint: EndpointSpec,
    peak_concurrency: int,
    requests: RequestSpec | None = None,
    duration_s: float | None = None,
    scale: float = 1.0,
    fault: FaultSpec | None = None,
    fault_at_fraction: float | None = None,
    metrics: MetricsSpec | None = None,
    criteria: Mapping[str, Any] | None = None,
    seed: int = 0,
    name: str = "",
    max_requests: int | None = None,
) -> TestPlan:
    """The plan of one suite (shapes in the module docstring).

    `peak_concurrency` is the deployment's promised peak; `requests` default to 512 input / 128 output tokens;
    `duration_s` is the held part (default: 180 s pulse, 600 s long tail, 120 s failure); `scale` multiplies the
    ramp, the hold and the fault's time. The failure suite needs `fault`: its `at_s` is replaced by
    ``(ramp + fault_at_fraction × hold) × scale`` (default fraction 1/3). `criteria` override the suite's defaults
    (`scenario_criteria`). PlanError (a ValueError) listing every problem: unknown kind, peak below 1, scale or
    duration not > 0, a failure suite without a fault, a fault for another suite, a fraction outside (0, 1), an
    unknown criterion.
    """
    problems: list[tuple[str, str]] = []
    try:
        scenario = ScenarioKind(kind)
    except ValueError:
        scenario = None
    if scenario is None or scenario is ScenarioKind.CUSTOM:
        known = ", ".join(k.value for k in SHAPES)
        raise PlanError([("scenario.kind", f"unknown scenario {kind!r} (known: {known})")])
    shape = SHAPES[scenario]
    if isinstance(peak_concurrency, bool) or not isinstance(peak_concurrency, int) or peak_concurrency < 1:
        problems.append(("scenario.peak_concurrency", f"must be a whole number ≥ 1 (got {peak_concurrency!r})"))
    scale_value = _number(scale)
    if scale_value is None or scale_value <= 0:
        problems.append(("scale", f"must be a number > 0 (got {scale!r}); 1 runs the suite's real durations"))
    if duration_s is not None and ((_number(duration_s) or 0) <= 0):
        problems.append(("duration_s", f"the held part must be > 0 seconds (got {duration_s!r})"))
    if max_requests is not None and (
        isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 1
    ):
        problems.append(("bounds.max_requests", f"must be a whole number ≥ 1 (got {max_requests!r})"))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(("seed", f"must be a whole number ≥ 0 (got {seed!r})"))
    if scenario is ScenarioKind.FAILURE:
        if fault is None:
            problems.append(
                (
                    "faults",
                    "the failure suite needs the fault to inject (a FaultSpec: our simulator's "
                    "control call or an operator's command)",
                )
            )
        elif fault.kind is FaultKind.HTTP and not fault.url:
            problems.append(("faults[0].url", "an HTTP fault needs the URL to call"))
        elif fault.kind is FaultKind.COMMAND and not fault.argv:
            problems.append(("faults[0].argv", "a command fault needs its argv"))
        fraction = FAULT_AT_FRACTION if fault_at_fraction is None else _number(fault_at_fraction)
        if fraction is None or not 0 < fraction < 1:
            problems.append(
                ("fault_at_fraction", f"a fraction of the held part, in (0, 1) (got {fault_at_fraction!r})")
            )
    else:
        fraction = None
        if fault is not None:
            problems.append(("faults", f"only the failure suite injects a fault (this is {scenario.value})"))
        if fault_at_fraction is not None:
            problems.append(("fault_at_fraction", f"only for the failure suite (this is {scenario.value})"))
    try:
        filled = scenario_criteria(scenario.value, criteria)
    except PlanError as error:
        problems += error.problems
    if problems:
        raise PlanError(problems)
    assert scale_value is not None  # noqa: S101 - checked above

    concurrency = max(1, math.ceil(shape.concurrency_fraction * peak_concurrency))
    ramp = shape.ramp_s * scale_value
    hold = (shape.hold_s if duration_s is None else float(duration_s)) * scale_value
    faults: tuple[FaultSpec, ...] = ()
    if fault is not None and fraction is not None:
        faults = (replace(fault, at_s=ramp + fraction * hold),)
    spec = requests or RequestSpec(
        profile=fixed_profile(input_tokens=DEFAULT_INPUT_TOKENS, output_tokens=DEFAULT_OUTPUT_TOKENS), fixed=True
    )
    if scenario is ScenarioKind.LONG_TAIL:
        spec = long_tail_requests(spec)
    title = name.strip() or (
        f"{scenario.value}: {shape.concurrency_fraction:.0%} of peak {peak_concurrency} "
        f"({concurrency} clients), {hold:g} s held"
    )
    return TestPlan(
        endpoint=endpoint,
        load=LoadSpec(
            mode=LoadMode.CLOSED, concurrency=concurrency, ramp_up_s=ramp, error_pause_s=round(ERROR_PAUSE_S * scale, 6)
        ),
        requests=spec,
        bounds=Bounds(max_requests=max_requests, max_duration_s=ramp + hold),
        name=title,
        warmup_s=ramp,
        seed=seed,
        metrics=metrics,
        faults=faults,
        scenario=ScenarioSpec(kind=scenario.value, peak_concurrency=peak_concurrency, criteria=filled),
    )


# ---------------------------------------------------------------------------------------------------------------
# Judging a run


@dataclass(frozen=True, kw_only=True)
class Recovery:
    """How the endpoint came back after one fault (definition in the module docstring)."""

    fault_s: float
    recovered: bool
    recovery_s: float | None  # send time of the first request of the recovery − the fault; None: not recovered
    requests_after: int  # sent after the fault (before the next one), incomplete ones left out
    errors_after: int
    outage_end_s: float | None  # fault + recovery; not recovered: the last request's send time (None: no request)


def recovery(
    records: Sequence[RequestRecord], *, fault_s: float, attainment: float = 0.99, until_s: float | None = None
) -> Recovery:
    """The time to recover after a fault at `fault_s` (the records' `start_s` clock), over the requests sent in
    [fault_s, until_s) (until_s: the next fault, or None).

    >>> from benchmarks_app.results.run import RequestRecord
    >>> ok, error = RequestRecord(status="ok"), RequestRecord(status="error")
    >>> sent = [replace(error, start_s=10.0 + i) for i in range(3)]
    >>> sent += [replace(ok, start_s=13.0 + i) for i in range(12)]
    >>> result = recovery(sent, fault_s=9.5)
    >>> result.recovered, result.recovery_s, result.errors_after
    (True, 3.5, 3)
    """
    after = sorted(
        (
            r
            for r in records
            if r.start_s is not None
            and r.start_s >= fault_s
            and (until_s is None or r.start_s < until_s)
            and r.status != INCOMPLETE
        ),
        key=lambda r: r.start_s or 0.0,
    )
    failed = [r.status != OK for r in after]
    count = len(after)
    # failures from each position to the end
    tail_failures = [0] * (count + 1)
    for index in range(count - 1, -1, -1):
        tail_failures[index] = tail_failures[index + 1] + failed[index]
    streak = 0  # successes in a row from each position on
    streaks = [0] * count
    for index in range(count - 1, -1, -1):
        streak = 0 if failed[index] else streak + 1
        streaks[index] = streak
    for index in range(count):
        remaining = count - index
        allowed = max(1, math.floor((1 - attainment) * remaining + 1e-9))
        if streaks[index] >= RECOVERY_RUN and tail_failures[index] <= allowed:
            start = after[index].start_s or 0.0
            return Recovery(
                fault_s=fault_s,
                recovered=True,
                recovery_s=round(start - fault_s, 6),
                requests_after=count,
                errors_after=sum(failed),
                outage_end_s=start,
            )
    last = after[-1].start_s if after else None
    return Recovery(
        fault_s=fault_s,
        recovered=False,
        recovery_s=None,
        requests_after=count,
        errors_after=sum(failed),
        outage_end_s=last,
    )


def _in_flight(record: RequestRecord, start: float, end: float | None) -> bool:
    """Whether the request was in flight at some moment of [start, end] (end None: to the end of the run); a
    record without a send time cannot be shown to be outside: it counts as in flight. Its end is its E2E (our
    generator records one for failed requests too: the moment the failure was seen); without one, its last event
    (TTFT plus the inter-chunk gaps), when it had any: it was in flight at least until then."""
    if record.start_s is None:
        return True
    sent = record.start_s
    if record.e2e_ms is not None:
        lasted_ms = record.e2e_ms
    else:
        lasted_ms = (record.ttft_ms or 0.0) + sum(record.itl_ms or ()) if record.ttft_ms is not None else 0.0
    finished = sent + lasted_ms / 1000
    return finished >= start and (end is None or sent <= end)


def _slo_text(slo: Mapping[str, float], ttft_basis: str) -> str:
    names = {"ttft_ms": "TTFT_sched" if ttft_basis == "ttft_sched_ms" else "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E"}
    return ", ".join(f"{names[key]} ≤ {value:g} ms" for key, value in slo.items())


def _good(record: RequestRecord, slo: Mapping[str, float], open_loop: bool) -> bool:
    if record.status != OK:
        return False
    for key, limit in slo.items():
        if key == "ttft_ms":
            value = record.ttft_sched_ms if open_loop and record.ttft_sched_ms is not None else record.ttft_ms
        elif key == "tpot_ms":
            from benchmarks_app.results.run import request_tpot_ms  # here, not at the top: see the TYPE_CHECKING import

            value = request_tpot_ms(record)
            if value is None:
                continue  # undefined: the output came in one event (METRICS.md)
        else:
            value = record.e2e_ms
        if value is None or value > limit:
            return False
    return True


def _criterion(code: CriterionCode, verdict: str, measured: Any, limit: Any, detail: str) -> dict[str, Any]:
    return {"code": code.value, "verdict": verdict, "measured": measured, "limit": limit, "detail": detail}


def _share(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 6) if denominator else 0.0


def _fidelity(run: ImportedRun, given: bool | None) -> bool | None:
    if given is not None:
        return given
    fidelity = run.reported.get("client_fidelity") if isinstance(run.reported, Mapping) else None
    valid = fidelity.get("valid") if isinstance(fidelity, Mapping) else None
    return valid if isinstance(valid, bool) else None


def _faults(run: ImportedRun) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(injected faults with a time, in time order; faults whose injection failed)."""
    injected, failed = [], []
    for fault in run.faults:
        if fault.get("ok") is False or _number(fault.get("t_s")) is None:
            failed.append(fault)  # not injected, or not placed in time: either way not measurable
        else:
            injected.append(fault)
    return sorted(injected, key=lambda f: float(f["t_s"])), failed


def judge(
    run: ImportedRun,
    *,
    slo: Mapping[str, float] | None = None,
    memory: Mapping[str, Any] | None = None,
    fidelity_valid: bool | None = None,
) -> dict[str, Any]:
    """Pass or fail of the run's scenario (`run.scenario`; a run without one is judged as "custom" on the criteria
    it carries, attainment 0.99 by default). Rules and the time to recover are in the module docstring.

    `slo` ({"ttft_ms", "tpot_ms", "e2e_ms"}, each optional, milliseconds) overrides the SLOs the scenario's criteria
    carry; `memory` is `benchmarks_app.results.loadverdict.load_memory_verdict`'s result (None: not measured);
    `fidelity_valid` is the run's client fidelity (None: read from the generator's summary in `run.reported`,
    else unknown).

    The suite is **invalid** when the client fidelity is invalid (the client could not send the load: not a server
    result), when a failure suite's fault was not injected, or when no request was measured; else **fail** when a
    criterion fails (a memory verdict "fail" included); else **pass**. A memory verdict "unknown" (or none) is
    reported as not measured and neither passes nor fails the suite, but the summary says the memory part is
    unverified.

    Returns ``{"scenario", "verdict": "pass" | "fail" | "invalid", "summary" (English), "criteria": [{"code",
    "verdict": "pass" | "fail" | "unknown", "measured", "limit", "detail"}], "figures": {...}, "memory"}``;
    ``figures`` repeats the memory verdict's ``gpu_peak_bytes`` (the highest per-GPU peak, bytes, None when not
    measured), ``committed_bytes_per_gpu`` and ``tolerance_bytes`` (the gauge's step the peak was judged within).
    Criterion codes, in order: ``client_fidelity``, ``fault_injected`` (failure), ``slo_attainment``,
    ``error_rate`` (when a max_error_rate applies), ``recovery_time`` (failure), ``memory``. PlanError (a
    ValueError) for an unknown scenario kind, SLO key or criterion.
    """
    recorded = run.scenario or {}
    kind = str(recorded.get("kind") or ScenarioKind.CUSTOM.value)
    criteria = scenario_criteria(kind, recorded.get("criteria") or {})
    for key, value in (slo or {}).items():
        if key not in SLO_KEYS:
            raise PlanError([(f"slo.{key}", f"unknown SLO (known: {', '.join(SLO_KEYS)})")])
        if value is not None:
            criteria[key] = scenario_criteria(kind, {key: value}, path="slo")[key]
    slos = {key: criteria[key] for key in SLO_KEYS if key in criteria}
    attainment_limit = criteria["attainment"]
    open_loop = run.load.kind in OPEN_LOOP_KINDS
    ttft_basis = "ttft_sched_ms" if open_loop else "ttft_ms"
    records = list(run.requests)
    measured = [r for r in records if r.status != INCOMPLETE]
    criteria_out: list[dict[str, Any]] = []
    invalid_reasons: list[str] = []
    figures: dict[str, Any] = {
        "requests": len(measured),
        "incomplete": len(records) - len(measured),
        "ok": sum(1 for r in measured if r.status == OK),
        "errors": sum(1 for r in measured if r.status != OK),
        "slo": slos,
        "ttft_basis": ttft_basis,
        "concurrency": run.load.concurrency,
        "peak_concurrency": recorded.get("peak_concurrency"),
        "recovery_s": None,
    }
    # the memory figures a report reads beside the suite's (None when memory was not measured)
    memory_figures = (memory or {}).get("figures") if isinstance((memory or {}).get("figures"), Mapping) else {}
    figures.update(
        {key: memory_figures.get(key) for key in ("gpu_peak_bytes", "committed_bytes_per_gpu", "tolerance_bytes")}
    )

    criteria_out.append(_fidelity_criterion(_fidelity(run, fidelity_valid), invalid_reasons))
    judged = measured
    if kind == ScenarioKind.FAILURE:
        judged = _outage(run, measured, attainment_limit, figures, criteria_out, invalid_reasons)
    scope = " outside the outage" if kind == ScenarioKind.FAILURE else " in the measurement window"
    criteria_out += _attainment_criteria(
        judged, criteria, open_loop=open_loop, scope=scope, figures=figures, invalid_reasons=invalid_reasons
    )
    if kind == ScenarioKind.FAILURE and figures.get("faults"):
        criteria_out.append(_recovery_criterion(figures["faults"], criteria["recovery_s"]))
    criteria_out.append(_memory_criterion(memory))

    if invalid_reasons:
        verdict_out = SuiteVerdict.INVALID
    elif any(c["verdict"] == "fail" for c in criteria_out):
        verdict_out = SuiteVerdict.FAIL
    else:
        verdict_out = SuiteVerdict.PASS
    return {
        "scenario": kind,
        "verdict": verdict_out.value,
        "summary": _summary(kind, verdict_out, criteria_out, invalid_reasons),
        "criteria": criteria_out,
        "figures": figures,
        "memory": dict(memory) if memory else None,
    }


def _fidelity_criterion(fidelity: bool | None, invalid_reasons: list[str]) -> dict[str, Any]:
    if fidelity is False:
        invalid_reasons.append("the client could not keep up with the load (client fidelity invalid)")
        return _criterion(
            CriterionCode.CLIENT_FIDELITY,
            "fail",
            False,
            True,
            "The client fidelity is invalid: the generator did not send the load it was asked to, so "
            "this is not a measurement of the server.",
        )
    if fidelity is None:
        return _criterion(
            CriterionCode.CLIENT_FIDELITY, "unknown", None, True, "The client fidelity is not known for this run."
        )
    return _criterion(
        CriterionCode.CLIENT_FIDELITY,
        "pass",
        True,
        True,
        "The client sent the load it was asked to (schedule lag p99 within 10 ms and at least 95% "
        "of the offered rate).",
    )


def _outage(
    run: ImportedRun,
    measured: list[RequestRecord],
    attainment: float,
    figures: dict[str, Any],
    criteria_out: list[dict[str, Any]],
    invalid_reasons: list[str],
) -> list[RequestRecord]:
    """The failure suite's faults and recoveries (into `figures`, `criteria_out`); returns the requests to judge:
    those not in flight during an outage."""
    injected, not_injected = _faults(run)
    if not injected:
        detail = next((str(f.get("detail")) for f in not_injected if f.get("detail")), "")
        why = (
            f"{len(not_injected)} fault injection(s) failed" + (f": {detail}" if detail else "")
            if not_injected
            else "the run records no fault"
        )
        invalid_reasons.append(f"the failure was not injected ({why})")
        criteria_out.append(
            _criterion(
                CriterionCode.FAULT_INJECTED,
                "fail",
                0,
                1,
                f"No fault was injected ({why}): the run does not test a failure.",
            )
        )
    else:
        more = f"; {len(not_injected)} more failed to inject" if not_injected else ""
        criteria_out.append(
            _criterion(
                CriterionCode.FAULT_INJECTED,
                "pass",
                len(injected),
                1,
                f"{len(injected)} fault(s) injected, the first ({injected[0].get('label') or 'unnamed'}) at "
                f"{_test_time(injected[0])}{more}.",
            )
        )
    recoveries = []
    for index, fault in enumerate(injected):
        until = float(injected[index + 1]["t_s"]) if index + 1 < len(injected) else None
        recoveries.append(
            (fault, recovery(measured, fault_s=float(fault["t_s"]), attainment=attainment, until_s=until))
        )
    outages = [
        (rec.fault_s, rec.fault_s + rec.recovery_s if rec.recovery_s is not None else None) for _, rec in recoveries
    ]
    affected = [any(_in_flight(r, start, end) for start, end in outages) for r in measured]
    first_fault = float(injected[0]["t_s"]) if injected else None
    figures["faults"] = [
        {
            "t_s": rec.fault_s,
            "run_t_s": _number(fault.get("run_t_s")),
            "label": fault.get("label"),
            "recovered": rec.recovered,
            "recovery_s": rec.recovery_s,
            "requests_after": rec.requests_after,
            "errors_after": rec.errors_after,
        }
        for fault, rec in recoveries
    ]
    figures["recovered"] = all(rec.recovered for _, rec in recoveries) if recoveries else None
    figures["recovery_s"] = (
        max(rec.recovery_s for _, rec in recoveries if rec.recovery_s is not None)
        if recoveries and figures["recovered"]
        else None
    )
    figures["errors_after_fault"] = sum(
        1
        for r in measured
        if first_fault is not None and r.start_s is not None and r.start_s >= first_fault and r.status != OK
    )
    figures["excluded_requests"] = sum(affected)
    figures["errors_in_outage"] = sum(1 for r, hit in zip(measured, affected, strict=True) if hit and r.status != OK)
    return [r for r, hit in zip(measured, affected, strict=True) if not hit]


def _attainment_criteria(
    judged: list[RequestRecord],
    criteria: Mapping[str, float],
    *,
    open_loop: bool,
    scope: str,
    figures: dict[str, Any],
    invalid_reasons: list[str],
) -> list[dict[str, Any]]:
    """SLO attainment (and the error rate when a max_error_rate applies) over the judged requests."""
    slos = {key: criteria[key] for key in SLO_KEYS if key in criteria}
    limit = criteria["attainment"]
    good = sum(1 for r in judged if _good(r, slos, open_loop))
    errors = sum(1 for r in judged if r.status != OK)
    attainment = _share(good, len(judged)) if judged else None
    error_rate = _share(errors, len(judged)) if judged else None
    figures.update(
        judged_requests=len(judged), good=good, attainment=attainment, judged_errors=errors, error_rate=error_rate
    )
    out = []
    if not judged:
        invalid_reasons.append(f"no request was measured{scope}")
        out.append(
            _criterion(
                CriterionCode.SLO_ATTAINMENT,
                "unknown",
                None,
                limit,
                f"No request finished{scope}: the SLO attainment was not measured.",
            )
        )
    else:
        needed = math.ceil(limit * len(judged) - 1e-9)
        what = (
            f"met every SLO ({_slo_text(slos, figures['ttft_basis'])})" if slos else "succeeded (no latency SLO given)"
        )
        out.append(
            _criterion(
                CriterionCode.SLO_ATTAINMENT,
                "pass" if good >= needed else "fail",
                attainment,
                limit,
                f"{good} of {len(judged)} requests{scope} ({attainment:.2%}) {what}; at least {limit:.2%} required "
                f"({needed} requests); errors count as misses.",
            )
        )
    if "max_error_rate" in criteria:
        most = criteria["max_error_rate"]
        if not judged:
            out.append(
                _criterion(
                    CriterionCode.ERROR_RATE,
                    "unknown",
                    None,
                    most,
                    f"No request finished{scope}: the error rate was not measured.",
                )
            )
        else:
            allowed = math.floor(most * len(judged) + 1e-9)
            out.append(
                _criterion(
                    CriterionCode.ERROR_RATE,
                    "pass" if errors <= allowed else "fail",
                    error_rate,
                    most,
                    f"{errors} of {len(judged)} requests{scope} failed ({error_rate:.2%}); at most {most:.2%} allowed "
                    f"({allowed} requests).",
                )
            )
    return out


def _test_time(fault: Mapping[str, Any]) -> str:
    """When a fault happened, in words: on the test's own clock when the result gives it (`run_t_s`), else on the
    requests' clock (seconds after the first request of the measurement window)."""
    run_t = _number(fault.get("run_t_s"))
    if run_t is not None:
        return f"{run_t:.1f} s into the test"
    return f"{float(fault['t_s']):.1f} s after the measurement window's first request"


def _recovery_criterion(faults: list[dict[str, Any]], limit: float) -> dict[str, Any]:
    """The slowest recovery (a fault never recovered from first) against the limit."""
    stuck = [item for item in faults if not item["recovered"]]
    slowest = stuck[0] if stuck else max(faults, key=lambda item: item["recovery_s"])
    label = f" ({slowest['label']})" if slowest.get("label") else ""
    if slowest["recovered"]:
        return _criterion(
            CriterionCode.RECOVERY_TIME,
            "pass" if slowest["recovery_s"] <= limit else "fail",
            slowest["recovery_s"],
            limit,
            f"Requests succeeded again {slowest['recovery_s']:.1f} s after the fault{label} at "
            f"{_test_time(slowest)} ({RECOVERY_RUN} in a row from then on, and {slowest['errors_after']} of "
            f"{slowest['requests_after']} requests sent after the fault failed); recovery within {limit:g} s "
            "required.",
        )
    return _criterion(
        CriterionCode.RECOVERY_TIME,
        "fail",
        None,
        limit,
        f"The endpoint had not recovered when the run ended: after the fault{label} at {_test_time(slowest)}, "
        f"{slowest['errors_after']} of {slowest['requests_after']} requests sent failed and no {RECOVERY_RUN} in a "
        f"row succeeded for good; recovery within {limit:g} s required.",
    )


def _memory_criterion(memory: Mapping[str, Any] | None) -> dict[str, Any]:
    verdict = memory.get("verdict") if memory else None
    if memory is None or verdict not in ("pass", "fail"):
        return _criterion(
            CriterionCode.MEMORY,
            "unknown",
            verdict,
            "pass",
            "The memory verdict was not measured (no metrics scraped, or none read).",
        )
    if verdict == "fail":
        first = memory.get("first_violation") or {}
        return _criterion(
            CriterionCode.MEMORY,
            "fail",
            "fail",
            "pass",
            "The memory verdict failed: " + str(first.get("detail") or "a memory check failed."),
        )
    unverified = list(memory.get("unverified") or [])
    words = [MEMORY_CHECK_WORDS.get(str(code), str(code).replace("_", " ")) for code in unverified]
    return _criterion(
        CriterionCode.MEMORY,
        "pass",
        "pass",
        "pass",
        "The memory verdict passed" + (f" (not measured: {', '.join(words)})" if words else "") + ".",
    )


# the memory verdict's checks (benchmarks_app.results.loadverdict.CheckCode) and the suite's criteria, in words: the
# English texts name them so, never by code (the codes stay in the JSON for pages and reports to word)
MEMORY_CHECK_WORDS = {
    "peak_within_commitment": "the GPU memory peak against the commitment",
    "kv_below_full": "the KV-cache usage",
    "no_preemption": "preemptions",
    "no_oom": "out-of-memory and XID events",
    "no_restart": "server restarts",
}
CRITERION_WORDS = {
    "client_fidelity": "client fidelity",
    "fault_injected": "fault injection",
    "slo_attainment": "SLO attainment",
    "error_rate": "error rate",
    "recovery_time": "recovery time",
    "memory": "memory",
}


def _summary(kind: str, verdict: SuiteVerdict, criteria: Sequence[Mapping[str, Any]], invalid: Sequence[str]) -> str:
    title = kind.replace("_", " ").capitalize()
    if verdict is SuiteVerdict.INVALID:
        text = f"{title}: INVALID, not a server result: " + "; ".join(invalid) + "."
    else:
        failed = [
            CRITERION_WORDS.get(c["code"], c["code"].replace("_", " ")) for c in criteria if c["verdict"] == "fail"
        ]
        text = f"{title}: {verdict.value.upper()}" + (f" ({', '.join(failed)} failed)." if failed else ".")
    memory = next(c for c in criteria if c["code"] == CriterionCode.MEMORY.value)
    if memory["verdict"] == "unknown":
        text += " The memory part is unverified: the memory verdict was not measured."
    return text

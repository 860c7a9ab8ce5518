"""The test plan: defaults, the JSON round trip, every problem reported with its path, and the JSON Schema kept in
step with the validator (docs/loadgen-plan.schema.json). No database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from llm_sizing_loadgen.plan import (
    Api,
    FaultKind,
    LoadMode,
    MetricsSpec,
    PlanError,
    ScenarioSpec,
    SweepKind,
    plan_from_dict,
    plan_from_json,
    plan_load,
)
from llm_sizing_loadgen.schemas import PlanDocument, plan_schema
from llm_sizing_loadgen.workload import ArrivalKind

PLAN_SCHEMA = plan_schema()  # written from the pydantic models (llm_sizing_loadgen.schemas)
ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "loadgen-plan.schema.json"


def _plan(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "endpoint": {"base_url": "http://10.0.0.5:8000", "model": "llama"},
        "load": {"concurrency": 8},
        "requests": {"input_tokens": 512, "output_tokens": 128},
        "bounds": {"max_requests": 100},
    }
    data.update(overrides)
    return data


def _problems(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(PlanError) as caught:
        plan_from_dict(data)
    return caught.value.problems


PROFILE = {
    "name": "mix",
    "classes": [
        {
            "name": "chat",
            "share": 0.8,
            "input": {"kind": "normal", "mean": 200, "std": 50},
            "output": {"kind": "fixed", "mean": 100},
        },
        {
            "name": "rag",
            "share": 0.2,
            "shared_prefix_tokens": 1000,
            "input": {"kind": "fixed", "mean": 3000},
            "output": {"kind": "fixed", "mean": 300},
        },
    ],
    "arrival": {"kind": "burst", "burst_requests": 40, "burst_window_s": 5},
}


def test_a_minimal_plan_gets_its_defaults() -> None:
    # when
    plan = plan_from_dict(_plan(load={"concurrency": 8, "ramp_up_s": 30}))

    # then
    assert plan.endpoint.api is Api.COMPLETIONS
    assert plan.endpoint.url == "http://10.0.0.5:8000/v1/completions"
    assert plan.endpoint.kind == "openai-completions"
    assert (plan.load.mode, plan.load.concurrency, plan.load.rate) == (LoadMode.CLOSED, 8, None)
    assert plan.warmup_s == 30.0  # the ramp-up is left out of the window by default
    assert (plan.cooldown_s, plan.stream, plan.ignore_eos, plan.continuous_usage_stats) == (0.0, True, True, True)
    assert (plan.timeouts.connect_s, plan.timeouts.ttft_s, plan.timeouts.stream_s) == (10.0, 300.0, 60.0)
    assert plan.requests.fixed
    assert plan.requests.profile.classes[0].input.mean == 512
    assert plan.points() == [("", plan)]


def test_the_json_form_reads_back_to_an_equal_plan() -> None:
    # given
    plan = plan_from_dict(
        _plan(
            name="pulse",
            endpoint={
                "base_url": "https://llm.corp/v1",
                "api": "chat",
                "model": "qwen",
                "api_key_env": "LLM_KEY",
                "engine": "vllm 0.11.0",
            },
            load={"mode": "open", "rate": 12.5, "concurrency": 64, "ramp_up_s": 5},
            requests={"profile": PROFILE, "hour": 10},
            bounds={"max_requests": 500, "max_duration_s": 120},
            warmup_s=10,
            cooldown_s=5,
            stream=True,
            ignore_eos=False,
            min_tokens=8,
            timeout_s={"connect": 3, "ttft": 60, "stream": 20},
            seed=42,
            sweep={"rate": [5, 10.5]},
            extra_body={"temperature": 0},
        )
    )

    # when
    again = plan_from_dict(json.loads(json.dumps(plan.to_dict())))

    # then
    assert again == plan
    assert plan.endpoint.url == "https://llm.corp/v1/chat/completions"
    assert plan.load.arrival is ArrivalKind.BURST
    assert plan.load.burst_requests == 40
    assert plan.sweep is not None
    assert plan.sweep.kind is SweepKind.RATE


def test_sweep_points_override_the_load() -> None:
    # given
    plan = plan_from_dict(_plan(load={"mode": "closed"}, sweep={"concurrency": [1, 4, 16]}))

    # when
    points = plan.points()

    # then
    assert [(label, point.load.concurrency, point.sweep) for label, point in points] == [
        ("concurrency-1", 1, None),
        ("concurrency-4", 4, None),
        ("concurrency-16", 16, None),
    ]


def test_every_problem_is_reported_with_its_path() -> None:
    # when
    problems = _problems(
        {
            "endpoint": {"base_url": "10.0.0.5:8000", "model": "", "api": "grpc", "api_key": "sk-123"},
            "load": {"mode": "open", "rate": -2, "concurency": 3},
            "requests": {"input_tokens": 0},
            "bounds": {},
            "timeout_s": {"ttft": "long"},
            "extra_body": {"stream": False},
            "version": 2,
        }
    )

    # then
    assert problems == [
        ("version", "this generator reads version 1 (got 2)"),
        (
            "endpoint.api_key",
            "never put the key in a plan: set api_key_env to the NAME of an environment variable that holds it",
        ),
        ("endpoint.base_url", "must be an http:// or https:// URL (got '10.0.0.5:8000')"),
        ("endpoint.model", "must be a non-empty text (got '')"),
        ("endpoint.api", "must be one of 'completions', 'chat' (got 'grpc')"),
        ("requests.input_tokens", "must be ≥ 1 (got 0)"),
        ("requests.output_tokens", "is required (or give a profile instead)"),
        ("load.concurency", "unknown field (did you mean 'concurrency'?)"),
        ("load.rate", "must be > 0 (got -2)"),
        ("bounds", "give max_requests, max_duration_s or both: a run needs a hard bound"),
        ("timeout_s.ttft", "must be a number (got 'long')"),
        ("extra_body.stream", "is set by the generator from the plan; it cannot be overridden"),
    ]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param(
            {"load": {"mode": "closed", "rate": 5, "concurrency": 2}},
            [("load.rate", "only for an open loop (mode 'open'); a closed loop has no rate")],
            id="closed-rate",
        ),
        pytest.param(
            {"load": {"mode": "closed"}},
            [("load.concurrency", "a closed loop needs its number of clients")],
            id="closed-no-clients",
        ),
        pytest.param(
            {"load": {"mode": "open"}},
            [("load.rate", "an open loop needs its rate (requests per second)")],
            id="open-no-rate",
        ),
        pytest.param(
            {"load": {"rate": 2, "arrival": "burst"}},
            [("load.burst_requests", "a burst arrival needs burst_requests ≥ 1")],
            id="burst-empty",
        ),
        pytest.param(
            {"load": {"rate": 2, "burst_requests": 5}},
            [("load.burst_requests", "only with arrival 'burst'")],
            id="burst-without-burst",
        ),
        pytest.param(
            {"load": {"mode": "closed", "concurrency": 2}, "sweep": {"rate": [1, 2]}},
            [("sweep.rate", "a rate sweep needs an open loop (load.mode 'open')")],
            id="rate-sweep-closed",
        ),
        pytest.param(
            {"sweep": {"concurrency": [1, 0, 2.5]}},
            [
                ("sweep.concurrency[1]", "must be ≥ 1 (got 0)"),
                ("sweep.concurrency[2]", "must be a whole number (got 2.5)"),
            ],
            id="sweep-items",
        ),
        pytest.param(
            {"sweep": {"concurrency": [1], "rate": [2]}},
            [("sweep", "give exactly one of 'concurrency' (a list of clients) or 'rate' (a list of requests/s)")],
            id="sweep-both",
        ),
        pytest.param(
            {"requests": {"input_tokens": 1, "output_tokens": 1, "profile": PROFILE}},
            [("requests", "give either input_tokens and output_tokens, or a profile, not both")],
            id="fixed-and-profile",
        ),
        pytest.param(
            {"requests": {"profile": {"classes": []}}},
            [("requests.profile.classes", "a profile needs a non-empty list of request classes")],
            id="profile-empty",
        ),
        pytest.param(
            {
                "requests": {
                    "profile": {
                        "classes": [
                            {
                                "name": "a",
                                "share": 1,
                                "input": {"kind": "fixed", "mean": 0},
                                "output": {"kind": "fixed", "mean": 5},
                            }
                        ]
                    }
                }
            },
            [("requests.profile", "classes[0].input: mean length 0.0 must be ≥ 1 token")],
            id="profile-class",
        ),
        pytest.param(
            {"requests": {"input_tokens": 5, "output_tokens": 5, "hour": 3}},
            [("requests.hour", "only for a profile (a mix of classes by hour)")],
            id="hour-without-profile",
        ),
        pytest.param(
            {"bounds": {"max_duration_s": 10}, "warmup_s": 6, "cooldown_s": 4},
            [("warmup_s", "warm-up (6 s) plus cool-down (4 s) leave no measurement window in max_duration_s (10 s)")],
            id="no-window",
        ),
        pytest.param(
            {"endpoint": {"base_url": "http://h", "model": "m", "api_key_env": "sk-abc123"}},
            [
                (
                    "endpoint.api_key_env",
                    "must be an environment variable NAME like LLM_API_KEY (got "
                    "'sk-abc123'); the key itself never goes in the plan",
                )
            ],
            id="key-in-env-name",
        ),
        pytest.param(
            {"format": "something-else"},
            [("format", "must be 'llm-sizing-loadgen-plan' (got 'something-else')")],
            id="format",
        ),
        pytest.param({"stream": "yes"}, [("stream", "must be true or false (got 'yes')")], id="stream-text"),
    ],
)
def test_plan_problems(overrides: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    # when / then
    assert _problems(_plan(**overrides)) == expected


def test_not_an_object_and_not_json() -> None:
    # when / then
    assert _problems([1, 2]) == [("", "must be an object (got a list)")]
    with pytest.raises(PlanError, match=r"not valid JSON: Expecting ',' delimiter at line 1, column 17"):
        plan_from_json('{"endpoint": {} "load": 1}')
    with pytest.raises(PlanError, match="cannot read"):
        plan_load("/nonexistent/plan.json")


def test_the_docs_schema_is_the_code_schema() -> None:
    # then: `python -m llm_sizing_loadgen schema > docs/loadgen-plan.schema.json` keeps them equal
    assert json.loads(SCHEMA_FILE.read_text()) == PLAN_SCHEMA
    Draft202012Validator.check_schema(PLAN_SCHEMA)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(_plan(), id="minimal"),
        pytest.param(
            _plan(
                load={"mode": "open", "rate": 3, "arrival": "burst", "burst_requests": 5},
                requests={"profile": PROFILE},
                sweep={"rate": [1, 2]},
                extra_body={"top_p": 0.9},
                timeout_s={"ttft": 30},
                format="llm-sizing-loadgen-plan",
                version=1,
            ),
            id="full",
        ),
    ],
)
def test_plans_the_validator_accepts_fit_the_schema(data: dict[str, Any]) -> None:
    # when
    plan_from_dict(data)

    # then: the schema and the pydantic model it is written from accept the plan and its normal form
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(data)) == []
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(plan_from_dict(data).to_dict())) == []
    PlanDocument.model_validate(data)
    PlanDocument.model_validate(plan_from_dict(data).to_dict())


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"endpoint": {"base_url": "http://h", "model": "m", "api_key": "sk"}}, id="api-key"),
        pytest.param({"load": {"mode": "closed", "concurrency": 2, "rate": 1}}, id="closed-rate"),
        pytest.param({"requests": {"input_tokens": 1}}, id="half-fixed"),
        pytest.param({"bounds": {}}, id="no-bound"),
        pytest.param({"sweep": {"concurrency": [1], "rate": [1]}}, id="two-sweeps"),
        pytest.param({"extra_body": {"model": "other"}}, id="reserved-body-key"),
        pytest.param({"unknown": 1}, id="unknown-field"),
    ],
)
def test_plans_the_validator_refuses_the_schema_refuses_too(overrides: dict[str, Any]) -> None:
    # given
    data = _plan(**overrides)

    # when / then
    with pytest.raises(PlanError):
        plan_from_dict(data)
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(data)) != []


def test_the_documented_examples_are_valid_plans() -> None:
    # given: the JSON blocks of docs/loadgen-plan.md
    text = (ROOT / "docs" / "loadgen-plan.md").read_text()
    blocks = [block.split("```", 1)[0] for block in text.split("```json\n")[1:]]

    # when
    plans = [plan_from_dict(json.loads(block)) for block in blocks]

    # then
    assert len(plans) == 2
    assert [list(Draft202012Validator(PLAN_SCHEMA).iter_errors(json.loads(block))) for block in blocks] == [[], []]
    assert plans[0].warmup_s == 30.0
    assert [label for label, _ in plans[1].points()] == ["rate-2", "rate-4", "rate-8"]


# ---------------------------------------------------------------------------------------------------------------
# Server metrics, faults and the scenario (issue 7)

FAILURE_BLOCKS: dict[str, Any] = {
    "metrics": {"url": "http://10.0.0.5:8000/metrics", "interval_s": 0.5, "engine": "vllm"},
    "faults": [
        {
            "at_s": 30,
            "http": {
                "url": "http://10.0.0.5:8001/control",
                "method": "POST",
                "body": {"action": "kill_replica", "replica": 0, "seconds": 10},
            },
            "label": "kill replica 0 for 10 s",
        },
        {"at_s": 45.5, "command": ["kubectl", "delete", "pod", "llm-0"], "timeout_s": 20},
    ],
    "scenario": {
        "kind": "failure",
        "peak_concurrency": 32,
        "criteria": {"ttft_ms": 2000, "attainment": 0.99, "recovery_s": 30, "strict": True},
    },
}


def test_metrics_faults_and_a_scenario_are_read_and_round_trip() -> None:
    # given
    data = _plan(bounds={"max_duration_s": 120}, **FAILURE_BLOCKS)

    # when
    plan = plan_from_dict(data)
    again = plan_from_dict(json.loads(json.dumps(plan.to_dict())))

    # then
    assert plan.metrics == MetricsSpec(url="http://10.0.0.5:8000/metrics", interval_s=0.5, engine="vllm")
    http, command = plan.faults
    assert (http.kind, http.at_s, http.method, http.url, http.label) == (
        FaultKind.HTTP,
        30.0,
        "POST",
        "http://10.0.0.5:8001/control",
        "kill replica 0 for 10 s",
    )
    assert http.body == {"action": "kill_replica", "replica": 0, "seconds": 10}
    assert (command.kind, command.argv, command.timeout_s, command.description) == (
        FaultKind.COMMAND,
        ("kubectl", "delete", "pod", "llm-0"),
        20.0,
        "kubectl delete pod llm-0",
    )
    assert plan.scenario == ScenarioSpec(
        kind="failure",
        peak_concurrency=32,
        criteria={"ttft_ms": 2000, "attainment": 0.99, "recovery_s": 30, "strict": True},
    )
    assert again == plan
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(data)) == []
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(plan.to_dict())) == []


def test_a_plan_without_the_new_blocks_writes_none_of_them() -> None:
    # when
    data = plan_from_dict(_plan()).to_dict()

    # then
    assert {"metrics", "faults", "scenario"} & set(data) == set()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param(
            {"metrics": {"interval_s": 0.1, "engine": "ollama"}},
            [
                ("metrics.url", "is required"),
                ("metrics.interval_s", "must be between 0.2 and 60 seconds (got 0.1)"),
                ("metrics.engine", "must be one of 'vllm', 'sglang', 'tgi', 'trtllm' (got 'ollama')"),
            ],
            id="metrics",
        ),
        pytest.param(
            {"metrics": {"url": "10.0.0.5:8000/metrics", "interval": 1}},
            [
                ("metrics.interval", "unknown field (did you mean 'interval_s'?)"),
                ("metrics.url", "must be an http:// or https:// URL (got '10.0.0.5:8000/metrics')"),
            ],
            id="metrics-url",
        ),
        pytest.param({"faults": {"at_s": 1}}, [("faults", "must be a list (got an object)")], id="faults-object"),
        pytest.param(
            {"faults": [{"at_s": 1, "command": ["x"]}] * 17}, [("faults", "at most 16 faults (got 17)")], id="too-many"
        ),
        pytest.param(
            {"faults": [{"at_s": 150, "command": ["x"]}]},
            [("faults[0].at_s", "must be before bounds.max_duration_s (120 s; got 150)")],
            id="after-the-end",
        ),
        pytest.param(
            {"faults": [{"at_s": -1, "http": {"url": "http://a/control"}, "command": ["x"]}]},
            [
                ("faults[0].at_s", "must be ≥ 0 (got -1)"),
                ("faults[0]", "give exactly one of 'http' (an HTTP call) or 'command' (argv, run without a shell)"),
            ],
            id="both-kinds",
        ),
        pytest.param(
            {"faults": [{"label": 7}]},
            [
                ("faults[0].at_s", "is required"),
                ("faults[0].label", "must be a text (got a number)"),
                ("faults[0]", "give exactly one of 'http' (an HTTP call) or 'command' (argv, run without a shell)"),
            ],
            id="neither-kind",
        ),
        pytest.param(
            {"faults": [{"at_s": 1, "http": {"url": "ftp://a", "method": "BREW", "body": [1]}}]},
            [
                ("faults[0].http.url", "must be an http:// or https:// URL (got 'ftp://a')"),
                ("faults[0].http.method", "must be one of GET, POST, PUT, PATCH, DELETE (got 'BREW')"),
                ("faults[0].http.body", "must be an object, sent as JSON (got a list)"),
            ],
            id="http",
        ),
        pytest.param(
            {"faults": [{"at_s": 1, "command": []}, {"at_s": 2, "command": [" ", 3], "timeout_s": 0}]},
            [
                ("faults[0].command", "must be a non-empty list of arguments, the program first (got an empty list)"),
                ("faults[1].timeout_s", "must be > 0 (got 0)"),
                ("faults[1].command[0]", "must name the program to run (got an empty text)"),
                ("faults[1].command[1]", "must be a text (got 3)"),
            ],
            id="command",
        ),
        pytest.param(
            {"scenario": {"kind": "soak", "peak_concurrency": 0, "criteria": {"ttft_ms": "fast"}}},
            [
                ("scenario.kind", "must be one of 'pulse', 'long_tail', 'failure', 'custom' (got 'soak')"),
                ("scenario.peak_concurrency", "must be ≥ 1 (got 0)"),
                ("scenario.criteria.ttft_ms", "must be a number or a boolean (got 'fast')"),
            ],
            id="scenario",
        ),
        pytest.param(
            {"scenario": {"criteria": [1]}},
            [
                ("scenario.kind", "is required"),
                ("scenario.criteria", "must be an object of numbers and booleans (got a list)"),
            ],
            id="scenario-shape",
        ),
    ],
)
def test_metrics_fault_and_scenario_problems(overrides: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    # given
    data = _plan(bounds={"max_duration_s": 120}, **overrides)

    # when / then: the schema refuses them too, but for the fault after the end (it cannot compare two fields)
    assert _problems(data) == expected
    schema_errors = list(Draft202012Validator(PLAN_SCHEMA).iter_errors(data))
    assert (schema_errors == []) == (expected[0][1].startswith("must be before bounds.max_duration_s"))


def test_the_failure_example_of_the_docs_is_a_valid_plan() -> None:
    # given: the example with server metrics, faults and a scenario (a ```jsonc block of docs/loadgen-plan.md)
    text = (ROOT / "docs" / "loadgen-plan.md").read_text()
    [block] = [block.split("```", 1)[0] for block in text.split("```jsonc\n")[1:]]

    # when
    plan = plan_from_dict(json.loads(block))

    # then
    assert list(Draft202012Validator(PLAN_SCHEMA).iter_errors(json.loads(block))) == []
    assert plan.metrics is not None
    assert [fault.kind for fault in plan.faults] == [FaultKind.HTTP, FaultKind.COMMAND]
    assert plan.scenario is not None
    assert plan.scenario.kind == "failure"


def test_the_plan_module_examples_hold() -> None:
    # when
    import doctest

    from llm_sizing_loadgen import plan as plan_module

    result = doctest.testmod(plan_module)

    # then
    assert (result.failed, result.attempted > 0) == (0, True)

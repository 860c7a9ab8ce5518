"""The test plan: what to send, to which endpoint, how fast and for how long; read from JSON with precise errors.

The JSON form is documented in `docs/loadgen-plan.md` and its JSON Schema (`schemas.plan_schema()`, written from
pydantic models to `docs/loadgen-plan.schema.json`). `plan_from_dict` checks every field and reports *all* problems
at once, each with its path (`load.rate: must be > 0 (got -2)`), as a `PlanError`.

Rules a reader of a plan must know:

- The API key never appears in a plan: `endpoint.api_key_env` names the environment variable that holds it.
- `load.mode` "closed" runs `concurrency` clients back to back; "open" sends at `rate` requests/s by an arrival
  process (poisson, constant, or burst: Poisson plus `burst_requests` extra requests within `burst_window_s` from
  `burst_at_s`), optionally capped at `concurrency` requests in flight (a capped request waits, and the wait shows in
  the schedule lag). Without `load.arrival`, the workload profile's own arrival pattern is used, else Poisson.
- `bounds` are hard: no more than `max_requests` are sent; at `max_duration_s` the run stops and requests still in
  flight are recorded as `incomplete_at_end`. At least one bound is required.
- The measurement window starts `warmup_s` after the start (default: `load.ramp_up_s`) and ends `cooldown_s` before
  the generator stopped sending.
- `sweep` runs the plan once per listed concurrency (closed loop) or rate (open loop): one result per point.
- `metrics` scrapes the server's Prometheus endpoint every `interval_s` (0.2–60 s) during the run; `faults` (at most
  16) are injected at their `at_s` (an HTTP call, or a command run without a shell: the operator's own plan on their
  own machine); `scenario` says what the run is for and is copied into the result.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from llm_sizing_loadgen.errors import SizingError
from llm_sizing_loadgen.workload import (
    ArrivalKind,
    WorkloadProfile,
    fixed_profile,
    profile_from_dict,
    profile_to_dict,
)

PLAN_FORMAT = "llm-sizing-loadgen-plan"
PLAN_VERSION = 1
MAX_SWEEP_POINTS = 64
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_BODY_KEYS = ("model", "prompt", "messages", "stream", "stream_options", "max_tokens")
METRICS_ENGINES = ("vllm", "sglang", "tgi", "trtllm")  # whose metric names the scrapes are read with
SCENARIO_KINDS = ("pulse", "long_tail", "failure", "custom")
FAULT_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MIN_SCRAPE_INTERVAL_S = 0.2  # faster scrapes would cost the server and the client more than they show
MAX_SCRAPE_INTERVAL_S = 60.0  # METRICS.md wants ≤ 1 s; a minute is the coarsest that still makes a timeline
MAX_FAULTS = 16
MAX_FAULT_TIMEOUT_S = 3600.0
URL = re.compile(r"^https?://[^/\s]+")

E = TypeVar("E", bound=StrEnum)


class Api(StrEnum):
    COMPLETIONS = "completions"  # POST {base}/v1/completions with a prompt
    CHAT = "chat"  # POST {base}/v1/chat/completions with one user message


class LoadMode(StrEnum):
    CLOSED = "closed"  # `concurrency` clients, each sending its next request when the last one ends
    OPEN = "open"  # requests sent at scheduled times, whatever the server does


class SweepKind(StrEnum):
    CONCURRENCY = "concurrency"
    RATE = "rate"


class PlanError(ValueError):
    """A plan that cannot run: every problem found, each as (path, message)."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" if path else message for path, message in self.problems))


@dataclass(frozen=True, kw_only=True)
class EndpointSpec:
    base_url: str  # e.g. http://10.0.0.5:8000 or http://10.0.0.5:8000/v1
    model: str
    api: Api = Api.COMPLETIONS
    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    engine: str | None = None  # recorded in the result (e.g. "vllm 0.11.0"); changes nothing sent
    tls_verify: bool = True  # https: check the server's certificate
    ca_file: str | None = None  # https: a PEM bundle of the CAs to trust (an internal CA), instead of certifi's

    @property
    def path(self) -> str:
        """The request path: `/v1/...` is added unless the base URL already ends in `/v1`."""
        suffix = "completions" if self.api is Api.COMPLETIONS else "chat/completions"
        return f"/{suffix}" if self.base_url.rstrip("/").endswith("/v1") else f"/v1/{suffix}"

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + self.path

    @property
    def kind(self) -> str:
        """The result format's endpoint kind."""
        return "openai-completions" if self.api is Api.COMPLETIONS else "openai-chat"


@dataclass(frozen=True, kw_only=True)
class LoadSpec:
    mode: LoadMode
    concurrency: int | None = None  # closed: clients; open: cap on requests in flight (None: no cap)
    rate: float | None = None  # open: offered requests per second
    arrival: ArrivalKind = ArrivalKind.POISSON
    burst_requests: int = 0
    burst_window_s: float = 10.0
    burst_at_s: float = 0.0
    ramp_up_s: float = 0.0  # closed: clients start evenly over it; open: the rate rises linearly from 0 over it
    error_pause_s: float = 0.0  # closed: a client whose request failed waits this long before its next one


@dataclass(frozen=True, kw_only=True)
class RequestSpec:
    profile: WorkloadProfile  # fixed lengths are a one-class profile
    fixed: bool  # given as input_tokens/output_tokens rather than a profile
    hour: int | None = None  # the profile's mix at this hour (default: its busiest)
    truncation_tolerance: float = 0.2  # truncated_prompt when N_in < N_in_sent × (1 − this) (and 8 tokens fewer)


@dataclass(frozen=True, kw_only=True)
class Bounds:
    max_requests: int | None = None
    max_duration_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Per phase: `connect` (TCP/TLS connect), `ttft` (from the send to the first content event), `stream` (the
    longest silence allowed between two events after the first content event)."""

    connect_s: float = 10.0
    ttft_s: float = 300.0
    stream_s: float = 60.0


@dataclass(frozen=True, kw_only=True)
class Sweep:
    kind: SweepKind
    values: tuple[float, ...]


class FaultKind(StrEnum):
    HTTP = "http"  # an HTTP request, e.g. our simulator's POST {base}/control {"action": "kill_replica", ...}
    COMMAND = "command"  # an operator-supplied command (argv, no shell), e.g. a `kubectl delete pod ...`


@dataclass(frozen=True, kw_only=True)
class MetricsSpec:
    """The endpoint's Prometheus metrics, scraped during the run into a timeline (`url` e.g.
    http://10.0.0.5:8000/metrics; `interval_s` between 0.2 and 60 s; `engine` says which metric names to expect:
    vllm, sglang, tgi, trtllm, or None for whatever is found). Recorded in the result; the scrapes keep only the
    lines of the metrics a timeline reads, whatever the engine.

    >>> MetricsSpec(url="http://10.0.0.5:8000/metrics").interval_s
    1.0
    """

    url: str
    interval_s: float = 1.0
    engine: str | None = None


@dataclass(frozen=True, kw_only=True)
class FaultSpec:
    """A failure injected `at_s` seconds after the run's start: an HTTP call (`method`, `url`, optional JSON `body`)
    or a command (`argv`, run without a shell, bounded by `timeout_s`)."""

    at_s: float
    kind: FaultKind
    url: str | None = None
    method: str = "POST"
    body: Mapping[str, Any] | None = None
    argv: tuple[str, ...] = ()
    timeout_s: float = 60.0
    label: str = ""  # in words, for the result ("kill replica 0 for 10 s")

    @property
    def description(self) -> str:
        """The label, else what the fault does in words (an URL without its user:password part).

        >>> FaultSpec(at_s=1, kind=FaultKind.HTTP, url="http://u:p@sim:8001/control").description
        'POST http://sim:8001/control'
        >>> FaultSpec(at_s=1, kind=FaultKind.COMMAND, argv=("kubectl", "delete", "pod", "x")).description
        'kubectl delete pod x'
        """
        if self.label:
            return self.label
        if self.kind is FaultKind.HTTP:
            return f"{self.method} {re.sub(r'//[^/@]*@', '//', self.url or '')}"
        return " ".join(self.argv)[:200]

    def to_dict(self) -> dict[str, Any]:
        """The fault's JSON form in a plan."""
        data: dict[str, Any] = {"at_s": self.at_s}
        if self.kind is FaultKind.HTTP:
            http: dict[str, Any] = {"url": self.url, "method": self.method}
            if self.body is not None:
                http["body"] = dict(self.body)
            data["http"] = http
        else:
            data["command"] = list(self.argv)
        data["timeout_s"] = self.timeout_s
        if self.label:
            data["label"] = self.label
        return data


@dataclass(frozen=True, kw_only=True)
class ScenarioSpec:
    """What the run is for, kept in the result so the verdict can be computed from the file alone: `kind` pulse,
    long_tail, failure or custom; `peak_concurrency` the deployment's promised peak; `criteria` the pass/fail
    thresholds (e.g. {"ttft_ms": 2000, "tpot_ms": 100, "attainment": 0.99, "recovery_s": 30})."""

    kind: str
    peak_concurrency: int | None = None
    criteria: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TestPlan:
    """A validated plan (see the module docstring for the rules)."""

    __test__ = False  # not a pytest test class despite its name

    endpoint: EndpointSpec
    load: LoadSpec
    requests: RequestSpec
    bounds: Bounds
    name: str = ""
    warmup_s: float = 0.0
    cooldown_s: float = 0.0
    stream: bool = True
    ignore_eos: bool = True
    min_tokens: int | None = None
    continuous_usage_stats: bool = True
    timeouts: Timeouts = field(default_factory=Timeouts)
    seed: int = 0
    sweep: Sweep | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    metrics: MetricsSpec | None = None  # scraped during the run (a sharded run: by one shard only)
    faults: tuple[FaultSpec, ...] = ()  # injected during the run (a sharded run: by one shard only)
    scenario: ScenarioSpec | None = None

    def points(self) -> list[tuple[str, TestPlan]]:
        """(label, plan without sweep) for each sweep point; the plan itself (label "") when there is no sweep."""
        if self.sweep is None:
            return [("", self)]
        points = []
        for value in self.sweep.values:
            if self.sweep.kind is SweepKind.CONCURRENCY:
                load = replace(self.load, concurrency=int(value))
                label = f"concurrency-{int(value)}"
            else:
                load = replace(self.load, rate=float(value))
                label = f"rate-{value:g}"
            points.append((label, replace(self, load=load, sweep=None)))
        return points

    def to_dict(self) -> dict[str, Any]:
        """The plan's JSON form, defaults filled in (it reads back to an equal plan)."""
        load: dict[str, Any] = {"mode": self.load.mode.value, "ramp_up_s": self.load.ramp_up_s}
        if self.load.error_pause_s:
            load["error_pause_s"] = self.load.error_pause_s
        if self.load.concurrency is not None:
            load["concurrency"] = self.load.concurrency
        if self.load.mode is LoadMode.OPEN:
            if self.load.rate is not None:
                load["rate"] = self.load.rate
            load["arrival"] = self.load.arrival.value
            if self.load.arrival is ArrivalKind.BURST:
                load.update(
                    burst_requests=self.load.burst_requests,
                    burst_window_s=self.load.burst_window_s,
                    burst_at_s=self.load.burst_at_s,
                )
        requests: dict[str, Any]
        if self.requests.fixed:
            cls = self.requests.profile.classes[0]
            requests = {"input_tokens": round(cls.input.mean), "output_tokens": round(cls.output.mean)}
        else:
            requests = {"profile": profile_to_dict(self.requests.profile)}
            if self.requests.hour is not None:
                requests["hour"] = self.requests.hour
        requests["truncation_tolerance"] = self.requests.truncation_tolerance
        endpoint: dict[str, Any] = {
            "base_url": self.endpoint.base_url,
            "api": self.endpoint.api.value,
            "model": self.endpoint.model,
        }
        if self.endpoint.api_key_env:
            endpoint["api_key_env"] = self.endpoint.api_key_env
        if self.endpoint.engine:
            endpoint["engine"] = self.endpoint.engine
        if not self.endpoint.tls_verify:
            endpoint["tls_verify"] = False
        if self.endpoint.ca_file:
            endpoint["ca_file"] = self.endpoint.ca_file
        bounds = {
            key: value
            for key, value in (
                ("max_requests", self.bounds.max_requests),
                ("max_duration_s", self.bounds.max_duration_s),
            )
            if value is not None
        }
        data: dict[str, Any] = {
            "format": PLAN_FORMAT,
            "version": PLAN_VERSION,
            "name": self.name,
            "endpoint": endpoint,
            "load": load,
            "requests": requests,
            "bounds": bounds,
            "warmup_s": self.warmup_s,
            "cooldown_s": self.cooldown_s,
            "stream": self.stream,
            "ignore_eos": self.ignore_eos,
            "min_tokens": self.min_tokens,
            "continuous_usage_stats": self.continuous_usage_stats,
            "timeout_s": {
                "connect": self.timeouts.connect_s,
                "ttft": self.timeouts.ttft_s,
                "stream": self.timeouts.stream_s,
            },
            "seed": self.seed,
            "extra_body": dict(self.extra_body),
        }
        if self.sweep is not None:
            values = [int(v) if self.sweep.kind is SweepKind.CONCURRENCY else v for v in self.sweep.values]
            data["sweep"] = {self.sweep.kind.value: values}
        if self.metrics is not None:
            metrics: dict[str, Any] = {"url": self.metrics.url, "interval_s": self.metrics.interval_s}
            if self.metrics.engine:
                metrics["engine"] = self.metrics.engine
            data["metrics"] = metrics
        if self.faults:
            data["faults"] = [fault.to_dict() for fault in self.faults]
        if self.scenario is not None:
            scenario: dict[str, Any] = {"kind": self.scenario.kind}
            if self.scenario.peak_concurrency is not None:
                scenario["peak_concurrency"] = self.scenario.peak_concurrency
            scenario["criteria"] = dict(self.scenario.criteria)
            data["scenario"] = scenario
        return data


# ---------------------------------------------------------------------------------------------------------------
# Reading: every field checked, all problems collected with their paths


class _Reader:
    """Typed reads of JSON values that record a (path, message) problem instead of raising."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append((path, message))

    def obj(self, data: Any, path: str, allowed: Sequence[str], required: Sequence[str] = ()) -> Mapping[str, Any]:
        """The object at `path` ({} after a problem); unknown keys and missing required keys are problems."""
        if not isinstance(data, Mapping):
            self.fail(path, f"must be an object (got {_kind(data)})")
            return {}
        for key in data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(allowed)})"
                self.fail(_join(path, str(key)), f"unknown field{hint}")
        for key in required:
            if key not in data:
                self.fail(_join(path, key), "is required")
        return data

    def integer(
        self, data: Mapping[str, Any], key: str, path: str, *, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        value = data.get(key)
        where = _join(path, key)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            self.fail(where, f"must be a whole number (got {value!r})")
            return None
        number = int(value)
        if minimum is not None and number < minimum:
            self.fail(where, f"must be ≥ {minimum} (got {number})")
            return None
        if maximum is not None and number > maximum:
            self.fail(where, f"must be ≤ {maximum} (got {number})")
            return None
        return number

    def number(
        self, data: Mapping[str, Any], key: str, path: str, *, minimum: float | None = None, positive: bool = False
    ) -> float | None:
        value = data.get(key)
        where = _join(path, key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(where, f"must be a number (got {value!r})")
            return None
        number = float(value)
        if positive and number <= 0:
            self.fail(where, f"must be > 0 (got {number:g})")
            return None
        if minimum is not None and number < minimum:
            self.fail(where, f"must be ≥ {minimum:g} (got {number:g})")
            return None
        return number

    def text(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail(_join(path, key), f"must be a non-empty text (got {value!r})")
            return None
        return value.strip()

    def boolean(self, data: Mapping[str, Any], key: str, path: str, default: bool) -> bool:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(_join(path, key), f"must be true or false (got {value!r})")
            return default
        return value

    def choice(self, data: Mapping[str, Any], key: str, path: str, enum: type[E]) -> E | None:
        value = data.get(key)
        if value is None:
            return None
        try:
            return enum(value)
        except ValueError:
            self.fail(_join(path, key), f"must be one of {', '.join(repr(e.value) for e in enum)} (got {value!r})")
            return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


TOP_KEYS = (
    "format",
    "version",
    "name",
    "endpoint",
    "load",
    "requests",
    "bounds",
    "warmup_s",
    "cooldown_s",
    "stream",
    "ignore_eos",
    "min_tokens",
    "continuous_usage_stats",
    "timeout_s",
    "seed",
    "sweep",
    "extra_body",
    "metrics",
    "faults",
    "scenario",
    "$schema",
    "description",
)
METRICS_KEYS = ("url", "interval_s", "engine")
FAULT_KEYS = ("at_s", "http", "command", "timeout_s", "label")
FAULT_HTTP_KEYS = ("url", "method", "body")
SCENARIO_KEYS = ("kind", "peak_concurrency", "criteria")
ENDPOINT_KEYS = ("base_url", "api", "model", "api_key_env", "engine", "tls_verify", "ca_file")
LOAD_KEYS = (
    "mode",
    "concurrency",
    "rate",
    "arrival",
    "burst_requests",
    "burst_window_s",
    "burst_at_s",
    "ramp_up_s",
    "error_pause_s",
)
OPEN_ONLY_KEYS = ("rate", "arrival", "burst_requests", "burst_window_s", "burst_at_s")
REQUEST_KEYS = ("input_tokens", "output_tokens", "profile", "hour", "truncation_tolerance")
BOUND_KEYS = ("max_requests", "max_duration_s")
TIMEOUT_KEYS = ("connect", "ttft", "stream")


def plan_from_dict(data: Any) -> TestPlan:
    """A validated plan from its JSON form; PlanError listing every problem with its path."""
    reader = _Reader()
    top = reader.obj(data, "", TOP_KEYS, required=("endpoint", "load", "requests", "bounds"))
    if not isinstance(data, Mapping):
        raise PlanError(reader.problems)
    if "format" in top and top["format"] != PLAN_FORMAT:
        reader.fail("format", f"must be '{PLAN_FORMAT}' (got {top['format']!r})")
    if "version" in top and (top["version"] != PLAN_VERSION or isinstance(top["version"], bool)):
        reader.fail("version", f"this generator reads version {PLAN_VERSION} (got {top['version']!r})")
    name = top.get("name") or ""
    if not isinstance(name, str):
        reader.fail("name", f"must be a text (got {_kind(name)})")
        name = ""

    endpoint = _endpoint(reader, top.get("endpoint", {}))
    sweep = _sweep(reader, top.get("sweep"))
    requests = _requests(reader, top.get("requests", {}))
    load = _load(reader, top.get("load", {}), sweep, requests)
    bounds = _bounds(reader, top.get("bounds", {}))

    ramp = load.ramp_up_s if load else 0.0
    warmup = reader.number(top, "warmup_s", "", minimum=0)
    cooldown = reader.number(top, "cooldown_s", "", minimum=0) or 0.0
    warmup = ramp if warmup is None else warmup
    if bounds and bounds.max_duration_s is not None and warmup + cooldown >= bounds.max_duration_s:
        reader.fail(
            "warmup_s",
            f"warm-up ({warmup:g} s) plus cool-down ({cooldown:g} s) leave no measurement window "
            f"in max_duration_s ({bounds.max_duration_s:g} s)",
        )
    stream = reader.boolean(top, "stream", "", True)
    ignore_eos = reader.boolean(top, "ignore_eos", "", True)
    min_tokens = reader.integer(top, "min_tokens", "", minimum=0)
    continuous = reader.boolean(top, "continuous_usage_stats", "", True)
    timeouts = _timeouts(reader, top.get("timeout_s", {}))
    seed = reader.integer(top, "seed", "", minimum=0) or 0
    extra = top.get("extra_body") or {}
    if not isinstance(extra, Mapping):
        reader.fail("extra_body", f"must be an object (got {_kind(extra)})")
        extra = {}
    for key in extra:
        if key in RESERVED_BODY_KEYS:
            reader.fail(f"extra_body.{key}", "is set by the generator from the plan; it cannot be overridden")

    metrics = _metrics(reader, top.get("metrics"))
    faults = _faults(reader, top.get("faults"), bounds)
    scenario = _scenario(reader, top.get("scenario"))

    if reader.problems or endpoint is None or load is None or requests is None or bounds is None:
        raise PlanError(reader.problems or [("", "the plan is incomplete")])
    return TestPlan(
        endpoint=endpoint,
        load=load,
        requests=requests,
        bounds=bounds,
        name=name.strip(),
        warmup_s=warmup,
        cooldown_s=cooldown,
        stream=stream,
        ignore_eos=ignore_eos,
        min_tokens=min_tokens,
        continuous_usage_stats=continuous,
        timeouts=timeouts,
        seed=seed,
        sweep=sweep,
        extra_body=json.loads(json.dumps(extra)),
        metrics=metrics,
        faults=faults,
        scenario=scenario,
    )


def _endpoint(reader: _Reader, data: Any) -> EndpointSpec | None:
    before = len(reader.problems)
    if isinstance(data, Mapping) and "api_key" in data:
        reader.fail(
            "endpoint.api_key",
            "never put the key in a plan: set api_key_env to the NAME of an environment variable that holds it",
        )
        data = {key: value for key, value in data.items() if key != "api_key"}
    obj = reader.obj(data, "endpoint", ENDPOINT_KEYS, required=("base_url", "model"))
    base_url = reader.text(obj, "base_url", "endpoint")
    if base_url is not None and not re.match(r"^https?://[^/\s]+", base_url):
        reader.fail("endpoint.base_url", f"must be an http:// or https:// URL (got {base_url!r})")
    model = reader.text(obj, "model", "endpoint")
    api = reader.choice(obj, "api", "endpoint", Api) or Api.COMPLETIONS
    key_env = reader.text(obj, "api_key_env", "endpoint")
    if key_env is not None and not ENV_NAME.match(key_env):
        reader.fail(
            "endpoint.api_key_env",
            f"must be an environment variable NAME like LLM_API_KEY (got {key_env!r})"
            "; the key itself never goes in the plan",
        )
    engine = reader.text(obj, "engine", "endpoint")
    tls_verify = reader.boolean(obj, "tls_verify", "endpoint", True)
    ca_file = reader.text(obj, "ca_file", "endpoint")  # a path on the machine that runs the plan: checked there
    if len(reader.problems) > before or base_url is None or model is None:
        return None
    return EndpointSpec(
        base_url=base_url,
        model=model,
        api=api,
        api_key_env=key_env,
        engine=engine,
        tls_verify=tls_verify,
        ca_file=ca_file,
    )


def _sweep(reader: _Reader, data: Any) -> Sweep | None:
    if data is None:
        return None
    obj = reader.obj(data, "sweep", ("concurrency", "rate"))
    kinds = [kind for kind in SweepKind if kind.value in obj]
    if len(kinds) != 1:
        if isinstance(data, Mapping):
            reader.fail(
                "sweep", "give exactly one of 'concurrency' (a list of clients) or 'rate' (a list of requests/s)"
            )
        return None
    kind = kinds[0]
    values = obj[kind.value]
    path = f"sweep.{kind.value}"
    if not isinstance(values, list) or not values:
        reader.fail(path, f"must be a non-empty list (got {_kind(values)})")
        return None
    if len(values) > MAX_SWEEP_POINTS:
        reader.fail(path, f"at most {MAX_SWEEP_POINTS} points (got {len(values)})")
        return None
    checked: list[float] = []
    for index, value in enumerate(values):
        item = {"v": value}
        number: float | None
        if kind is SweepKind.CONCURRENCY:
            whole = reader.integer(item, "v", "", minimum=1)
            number = float(whole) if whole is not None else None
        else:
            number = reader.number(item, "v", "", positive=True)
        if number is None:
            # re-label the problem just recorded with the item's path
            _, message = reader.problems.pop()
            reader.fail(f"{path}[{index}]", message)
        else:
            checked.append(number)
    if len(checked) != len(values):
        return None
    return Sweep(kind=kind, values=tuple(checked))


def _requests(reader: _Reader, data: Any) -> RequestSpec | None:
    before = len(reader.problems)
    obj = reader.obj(data, "requests", REQUEST_KEYS)
    tolerance = reader.number(obj, "truncation_tolerance", "requests", minimum=0)
    if tolerance is not None and tolerance >= 1:
        reader.fail("requests.truncation_tolerance", f"a fraction of the prompt, below 1 (got {tolerance:g})")
    tolerance = 0.2 if tolerance is None else tolerance
    hour = reader.integer(obj, "hour", "requests", minimum=0, maximum=23)
    has_fixed = "input_tokens" in obj or "output_tokens" in obj
    if "profile" in obj and has_fixed:
        reader.fail("requests", "give either input_tokens and output_tokens, or a profile, not both")
        return None
    if "profile" in obj:
        raw = obj["profile"]
        if not isinstance(raw, Mapping):
            reader.fail("requests.profile", f"must be an object (got {_kind(raw)})")
            return None
        try:
            profile = profile_from_dict(raw)
            profile.mix_at(hour)  # a mix must exist at the chosen hour
        except SizingError as error:
            field_name = next(iter(error.extra.get("fields") or {}), "")
            where = "requests.profile" + (
                f".{field_name}" if field_name and not error.message.startswith(field_name) else ""
            )
            reader.fail(where, error.message)
            return None
        if len(reader.problems) > before:
            return None
        return RequestSpec(profile=profile, fixed=False, hour=hour, truncation_tolerance=tolerance)
    if not isinstance(data, Mapping):
        return None
    if hour is not None:
        reader.fail("requests.hour", "only for a profile (a mix of classes by hour)")
    input_tokens = reader.integer(obj, "input_tokens", "requests", minimum=1)
    output_tokens = reader.integer(obj, "output_tokens", "requests", minimum=1)
    for key in ("input_tokens", "output_tokens"):
        if key not in obj:
            reader.fail(f"requests.{key}", "is required (or give a profile instead)")
    if len(reader.problems) > before or input_tokens is None or output_tokens is None:
        return None
    return RequestSpec(
        profile=fixed_profile(input_tokens=input_tokens, output_tokens=output_tokens),
        fixed=True,
        truncation_tolerance=tolerance,
    )


def _load(reader: _Reader, data: Any, sweep: Sweep | None, requests: RequestSpec | None) -> LoadSpec | None:
    before = len(reader.problems)
    obj = reader.obj(data, "load", LOAD_KEYS)
    mode = reader.choice(obj, "mode", "load", LoadMode)
    if mode is None and "mode" not in obj:
        rate_given = "rate" in obj or (sweep is not None and sweep.kind is SweepKind.RATE)
        mode = LoadMode.OPEN if rate_given else LoadMode.CLOSED
    concurrency = reader.integer(obj, "concurrency", "load", minimum=1)
    rate = reader.number(obj, "rate", "load", positive=True)
    arrival = reader.choice(obj, "arrival", "load", ArrivalKind)
    burst_requests = reader.integer(obj, "burst_requests", "load", minimum=0)
    burst_window = reader.number(obj, "burst_window_s", "load", positive=True)
    burst_at = reader.number(obj, "burst_at_s", "load", minimum=0)
    ramp = reader.number(obj, "ramp_up_s", "load", minimum=0) or 0.0
    error_pause = reader.number(obj, "error_pause_s", "load", minimum=0) or 0.0
    if error_pause and mode is LoadMode.OPEN:
        reader.fail("load.error_pause_s", "only for a closed loop: an open loop sends on its schedule whatever happens")
    if mode is None:
        return None
    if mode is LoadMode.CLOSED:
        for key in OPEN_ONLY_KEYS:
            if key in obj:
                reader.fail(f"load.{key}", "only for an open loop (mode 'open'); a closed loop has no rate")
        if sweep is not None and sweep.kind is SweepKind.RATE:
            reader.fail("sweep.rate", "a rate sweep needs an open loop (load.mode 'open')")
        elif concurrency is None and sweep is None and "concurrency" not in obj:
            reader.fail("load.concurrency", "a closed loop needs its number of clients")
    else:
        if sweep is not None and sweep.kind is SweepKind.CONCURRENCY:
            reader.fail("sweep.concurrency", "a concurrency sweep needs a closed loop (load.mode 'closed')")
        elif rate is None and sweep is None and "rate" not in obj:
            reader.fail("load.rate", "an open loop needs its rate (requests per second)")
    pattern = requests.profile.arrival if requests is not None else None
    if arrival is None:
        # the profile's own arrival pattern, unless the load names one
        arrival = pattern.kind if pattern is not None and mode is LoadMode.OPEN else ArrivalKind.POISSON
        if pattern is not None and arrival is ArrivalKind.BURST:
            burst_requests = pattern.burst_requests if burst_requests is None else burst_requests
            burst_window = pattern.burst_window_s if burst_window is None else burst_window
            burst_at = pattern.burst_at_s if burst_at is None else burst_at
    if arrival is ArrivalKind.BURST and not burst_requests and mode is LoadMode.OPEN:
        reader.fail("load.burst_requests", "a burst arrival needs burst_requests ≥ 1")
    elif arrival is not ArrivalKind.BURST:
        for key in ("burst_requests", "burst_window_s", "burst_at_s"):
            if key in obj and mode is LoadMode.OPEN:
                reader.fail(f"load.{key}", "only with arrival 'burst'")
    if len(reader.problems) > before:
        return None
    return LoadSpec(
        mode=mode,
        concurrency=concurrency,
        rate=rate,
        arrival=arrival,
        burst_requests=burst_requests or 0,
        burst_window_s=burst_window or 10.0,
        burst_at_s=burst_at or 0.0,
        ramp_up_s=ramp,
        error_pause_s=error_pause,
    )


def _bounds(reader: _Reader, data: Any) -> Bounds | None:
    before = len(reader.problems)
    obj = reader.obj(data, "bounds", BOUND_KEYS)
    max_requests = reader.integer(obj, "max_requests", "bounds", minimum=1)
    max_duration = reader.number(obj, "max_duration_s", "bounds", positive=True)
    if isinstance(data, Mapping) and "max_requests" not in obj and "max_duration_s" not in obj:
        reader.fail("bounds", "give max_requests, max_duration_s or both: a run needs a hard bound")
    if len(reader.problems) > before:
        return None
    return Bounds(max_requests=max_requests, max_duration_s=max_duration)


def _timeouts(reader: _Reader, data: Any) -> Timeouts:
    obj = reader.obj(data, "timeout_s", TIMEOUT_KEYS)
    default = Timeouts()
    connect = reader.number(obj, "connect", "timeout_s", positive=True)
    ttft = reader.number(obj, "ttft", "timeout_s", positive=True)
    stream = reader.number(obj, "stream", "timeout_s", positive=True)
    return Timeouts(
        connect_s=connect or default.connect_s, ttft_s=ttft or default.ttft_s, stream_s=stream or default.stream_s
    )


def _url(reader: _Reader, data: Mapping[str, Any], key: str, path: str) -> str | None:
    url = reader.text(data, key, path)
    if url is not None and not URL.match(url):
        reader.fail(_join(path, key), f"must be an http:// or https:// URL (got {url!r})")
        return None
    return url


def _metrics(reader: _Reader, data: Any) -> MetricsSpec | None:
    if data is None:
        return None
    before = len(reader.problems)
    obj = reader.obj(data, "metrics", METRICS_KEYS, required=("url",))
    url = _url(reader, obj, "url", "metrics")
    interval = reader.number(obj, "interval_s", "metrics", positive=True)
    if interval is not None and not MIN_SCRAPE_INTERVAL_S <= interval <= MAX_SCRAPE_INTERVAL_S:
        reader.fail(
            "metrics.interval_s",
            f"must be between {MIN_SCRAPE_INTERVAL_S:g} and {MAX_SCRAPE_INTERVAL_S:g} seconds (got {interval:g})",
        )
    engine = obj.get("engine")
    if engine is not None and engine not in METRICS_ENGINES:
        reader.fail("metrics.engine", f"must be one of {', '.join(repr(e) for e in METRICS_ENGINES)} (got {engine!r})")
    if len(reader.problems) > before or url is None:
        return None
    return MetricsSpec(url=url, interval_s=interval if interval is not None else 1.0, engine=engine)


def _faults(reader: _Reader, data: Any, bounds: Bounds | None) -> tuple[FaultSpec, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        reader.fail("faults", f"must be a list (got {_kind(data)})")
        return ()
    if len(data) > MAX_FAULTS:
        reader.fail("faults", f"at most {MAX_FAULTS} faults (got {len(data)})")
        return ()
    duration = bounds.max_duration_s if bounds is not None else None
    found = [_fault(reader, item, f"faults[{index}]", duration) for index, item in enumerate(data)]
    return tuple(fault for fault in found if fault is not None)


def _fault(reader: _Reader, data: Any, path: str, duration: float | None) -> FaultSpec | None:
    before = len(reader.problems)
    obj = reader.obj(data, path, FAULT_KEYS, required=("at_s",))
    at_s = reader.number(obj, "at_s", path, minimum=0)
    if at_s is not None and duration is not None and at_s >= duration:
        reader.fail(_join(path, "at_s"), f"must be before bounds.max_duration_s ({duration:g} s; got {at_s:g})")
    timeout = reader.number(obj, "timeout_s", path, positive=True)
    if timeout is not None and timeout > MAX_FAULT_TIMEOUT_S:
        reader.fail(_join(path, "timeout_s"), f"must be ≤ {MAX_FAULT_TIMEOUT_S:g} (got {timeout:g})")
    label = obj.get("label") or ""
    if not isinstance(label, str):
        reader.fail(_join(path, "label"), f"must be a text (got {_kind(label)})")
        label = ""
    kinds = [key for key in ("http", "command") if key in obj]
    if isinstance(data, Mapping) and len(kinds) != 1:
        reader.fail(path, "give exactly one of 'http' (an HTTP call) or 'command' (argv, run without a shell)")
    spec: dict[str, Any] = {}
    if kinds == ["http"]:
        where = _join(path, "http")
        http = reader.obj(obj["http"], where, FAULT_HTTP_KEYS, required=("url",))
        url = _url(reader, http, "url", where)
        method = http.get("method", "POST")
        if not isinstance(method, str) or method.upper() not in FAULT_METHODS:
            reader.fail(_join(where, "method"), f"must be one of {', '.join(FAULT_METHODS)} (got {method!r})")
            method = "POST"
        body = http.get("body")
        if body is not None and not isinstance(body, Mapping):
            reader.fail(_join(where, "body"), f"must be an object, sent as JSON (got {_kind(body)})")
            body = None
        spec = {
            "kind": FaultKind.HTTP,
            "url": url,
            "method": method.upper(),
            "body": json.loads(json.dumps(body)) if body is not None else None,
        }
    elif kinds == ["command"]:
        argv = obj["command"]
        where = _join(path, "command")
        if not isinstance(argv, list) or not argv:
            got = "an empty list" if argv == [] else _kind(argv)
            reader.fail(where, f"must be a non-empty list of arguments, the program first (got {got})")
        else:
            for index, arg in enumerate(argv):
                if not isinstance(arg, str):
                    reader.fail(f"{where}[{index}]", f"must be a text (got {arg!r})")
                elif index == 0 and not arg.strip():
                    reader.fail(f"{where}[0]", "must name the program to run (got an empty text)")
        spec = {"kind": FaultKind.COMMAND, "argv": tuple(argv) if isinstance(argv, list) else ()}
    if len(reader.problems) > before or at_s is None:
        return None
    return FaultSpec(at_s=at_s, timeout_s=timeout if timeout is not None else 60.0, label=label.strip(), **spec)


def _scenario(reader: _Reader, data: Any) -> ScenarioSpec | None:
    if data is None:
        return None
    before = len(reader.problems)
    obj = reader.obj(data, "scenario", SCENARIO_KEYS, required=("kind",))
    kind = obj.get("kind")
    if "kind" in obj and kind not in SCENARIO_KINDS:
        reader.fail("scenario.kind", f"must be one of {', '.join(repr(k) for k in SCENARIO_KINDS)} (got {kind!r})")
    peak = reader.integer(obj, "peak_concurrency", "scenario", minimum=1)
    criteria = obj.get("criteria") or {}
    if not isinstance(criteria, Mapping):
        reader.fail("scenario.criteria", f"must be an object of numbers and booleans (got {_kind(criteria)})")
        criteria = {}
    for key, value in criteria.items():
        if isinstance(value, bool):
            continue
        if not isinstance(value, int | float) or not math.isfinite(value):
            reader.fail(f"scenario.criteria.{key}", f"must be a number or a boolean (got {value!r})")
    if len(reader.problems) > before or not isinstance(kind, str):
        return None
    return ScenarioSpec(kind=kind, peak_concurrency=peak, criteria=dict(criteria))


def plan_from_json(text: str) -> TestPlan:
    """A plan from JSON text; PlanError naming the line and column of a syntax error."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanError([("", f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}")]) from None
    return plan_from_dict(data)


def plan_load(path: str | Path) -> TestPlan:
    """A plan from a JSON file; PlanError when it cannot be read or does not fit."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PlanError([("", f"cannot read {path}: {error}")]) from None
    return plan_from_json(text)

"""The plan and result documents as pydantic (v2) models, and the JSON Schemas written from them into `docs/`.

`docs/loadgen-plan.schema.json` is `plan_schema()` and `docs/loadgen-result.schema.json` is `result_schema()`; one
command writes both (`python -m llm_sizing_loadgen.schemas docs`, or `make loadgen-schemas`; `python -m
llm_sizing_loadgen schema [plan|result]` prints one), and a test fails when a committed file and its models disagree.

The plan: `plan.plan_from_dict` stays the authority for a plan's *messages* (every problem at once, with the field's
path and a suggestion); these models describe the same rules for editors and other tools, and a test keeps the two in
step (what one accepts the other accepts).

The result (`docs/loadgen-result.md`): `ResultDocument` is the one definition of the file the load generator writes.
`result.result_document` validates every document it builds with it before it is written, and a reader (the
service's importer of the format, an export of a stored run) can validate a file with `ResultDocument.model_validate`
(strict: a number is never a string or a boolean). Its fields are declared in the order the writer writes them.

Rules one field cannot state (closed loops take no rate; fixed lengths or a profile; an HTTP call or a command; a
scrape's text or its error) are written as JSON Schema beside the model (`json_schema_extra`), since pydantic writes
no `if`/`oneOf` itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.json_schema import GenerateJsonSchema

PLAN_ID = "https://llm-sizing.example/schemas/loadgen-plan/v1.json"
PLAN_FILE = "loadgen-plan.schema.json"
RESULT_ID = "https://llm-sizing.example/schemas/loadgen-result/v1.json"
RESULT_FILE = "loadgen-result.schema.json"
URL_PATTERN = "^https?://[^/\\s]+"

SchemaUpdate = Callable[[dict[str, Any]], None]
MetricsEngine = Literal["vllm", "sglang", "tgi", "trtllm"]  # whose metric names a scrape expects (plan and result)


def _no_default(schema: dict[str, Any]) -> None:
    """An optional field with no default of its own (the validator fills it in): the schema states none."""
    schema.pop("default", None)


def _absent(*, description: str | None = None, schema_update: SchemaUpdate = _no_default, **constraints: Any) -> Any:
    """A field that may be left out (never null), with its constraints; `schema_update` edits its JSON Schema (it
    must drop the default, as `_no_default` does)."""
    return Field(None, description=description, json_schema_extra=schema_update, **constraints)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Api(StrEnum):
    COMPLETIONS = "completions"
    CHAT = "chat"


class Endpoint(_Strict):
    base_url: str = Field(pattern=URL_PATTERN, description="http(s)://host:port, with or without a trailing /v1.")
    api: Api = Field(
        Api.COMPLETIONS, description="/v1/completions (prompt) or /v1/chat/completions (one user message)."
    )
    model: str = Field(min_length=1, pattern="\\S", description="The served model name sent in each request.")
    api_key_env: str = _absent(
        pattern="^[A-Za-z_][A-Za-z0-9_]*$",
        description="The NAME of the environment variable holding the API key (sent as a "
        "Bearer token). The key itself never goes in a plan.",
    )
    engine: str = _absent(
        min_length=1, description="The serving engine and version, recorded in the result (e.g. vllm 0.11.0)."
    )
    tls_verify: bool = Field(True, description="https: check the server's certificate.")
    ca_file: str = _absent(min_length=1, description="https: a PEM file of the CAs to trust (an internal CA).")


_OPEN_ONLY = ("rate", "arrival", "burst_requests", "burst_window_s", "burst_at_s")


class Load(_Strict):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"mode": {"const": "closed"}}, "required": ["mode"]},
                    "then": {"not": {"anyOf": [{"required": [key]} for key in _OPEN_ONLY]}},
                },
                {
                    "if": {"properties": {"mode": {"const": "open"}}, "required": ["mode"]},
                    "then": {"not": {"required": ["error_pause_s"]}},
                },
            ]
        },
    )

    mode: Literal["closed", "open"] = _absent(
        description="closed: `concurrency` clients back to back; open: `rate` "
        "requests/s by the arrival process. Default: open when a "
        "rate is given, else closed."
    )
    concurrency: int = _absent(ge=1, description="closed: the number of clients; open: a cap on requests in flight.")
    rate: float = _absent(gt=0, description="open: offered requests per second.")
    arrival: Literal["poisson", "constant", "burst"] = _absent(
        description="open: the arrival process; burst = Poisson plus burst_requests extra requests uniform in "
        "[burst_at_s, burst_at_s + burst_window_s]. Default: the profile's arrival, else poisson."
    )
    burst_requests: int = _absent(ge=0)
    burst_window_s: float = _absent(gt=0)
    burst_at_s: float = _absent(ge=0)
    ramp_up_s: float = _absent(
        ge=0, description="closed: clients start evenly over it; open: the rate rises linearly from 0 over it."
    )
    error_pause_s: float = _absent(
        ge=0,
        description="closed only: a client whose request failed waits this long "
        "before its next one (as real clients back off), so an outage "
        "is not a request storm.",
    )


class Length(BaseModel):
    """A token length distribution (llm_sizing_loadgen.workload.LengthDistribution)."""

    kind: Literal["fixed", "normal", "lognormal", "empirical"]
    mean: float = _absent(ge=1)
    std: float = _absent(ge=0)
    minimum: int = _absent(ge=1)
    maximum: Annotated[int, Field(ge=1)] | None = _absent()
    bins: list[tuple[Annotated[int, Field(ge=1)], Annotated[int, Field(ge=1)], Annotated[float, Field(ge=0)]]] = (
        _absent()
    )


class RequestClass(BaseModel):
    name: str = Field(min_length=1)
    share: float = Field(gt=0)
    input: Length
    output: Length
    shared_prefix_tokens: int = _absent(ge=0)
    windows: list[Annotated[list[Annotated[int, Field(ge=0, le=24)]], Field(min_length=2, max_length=2)]] = _absent()


class ProfileArrival(BaseModel):
    kind: Literal["poisson", "constant", "burst"] = _absent()
    burst_requests: int = _absent(ge=0)
    burst_window_s: float = _absent(gt=0)
    burst_at_s: float = _absent(ge=0)


class Profile(BaseModel):
    """A workload profile (llm_sizing_loadgen.workload.profile_from_dict): request classes with shares and length
    distributions."""

    name: str = _absent()
    description: str = _absent()
    classes: list[RequestClass] = Field(min_length=1)
    arrival: ProfileArrival = _absent()


class Requests(_Strict):
    """Fixed lengths (input_tokens and output_tokens) or a workload profile."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": ["input_tokens", "output_tokens"], "not": {"required": ["profile"]}},
                {
                    "required": ["profile"],
                    "not": {"anyOf": [{"required": ["input_tokens"]}, {"required": ["output_tokens"]}]},
                },
            ]
        },
    )

    input_tokens: int = _absent(ge=1)
    output_tokens: int = _absent(ge=1, description="Sent as max_tokens; enforced with ignore_eos / min_tokens.")
    profile: Profile = _absent()
    hour: int = _absent(ge=0, le=23, description="A profile's mix at this hour (default: its busiest).")
    truncation_tolerance: float = Field(
        0.2,
        ge=0,
        lt=1,
        description="truncated_prompt when usage.prompt_tokens is "
        "below the sent count by more than this "
        "fraction (and 8 tokens).",
    )


class Bounds(_Strict):
    """Hard bounds: at least one."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    max_requests: int = _absent(ge=1)
    max_duration_s: float = _absent(
        gt=0, description="At this time the run stops; requests in flight are recorded as incomplete_at_end."
    )


class Timeouts(_Strict):
    connect: float = Field(10, gt=0)
    ttft: float = Field(300, gt=0, description="From the send to the first content event.")
    stream: float = Field(60, gt=0, description="The longest silence after the first content event.")


class Sweep(_Strict):
    """One run per point: a list of concurrencies (closed loop) or of rates (open loop)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1, "maxProperties": 1})

    concurrency: list[Annotated[int, Field(ge=1)]] = _absent(min_length=1, max_length=64)
    rate: list[Annotated[float, Field(gt=0)]] = _absent(min_length=1, max_length=64)


RESERVED_BODY_KEYS = ("model", "prompt", "messages", "stream", "stream_options", "max_tokens")


class Metrics(_Strict):
    """The server's Prometheus endpoint, scraped during the run into a timeline (KV-cache usage, running and waiting
    requests, GPU memory); written to the result's server_metrics."""

    url: str = Field(pattern=URL_PATTERN, description="e.g. http://10.0.0.5:8000/metrics")
    interval_s: float = Field(
        1,
        ge=0.2,
        le=60,
        description="Seconds between scrapes (the first at the start, the last right after the run stops).",
    )
    engine: MetricsEngine = _absent(description="Whose metric names to expect (recorded; every known name is kept).")


class HttpFault(_Strict):
    url: str = Field(pattern=URL_PATTERN)
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    body: dict[str, Any] = _absent(description="Sent as JSON.")


def _command_schema(schema: dict[str, Any]) -> None:
    _no_default(schema)
    schema["prefixItems"] = [{"type": "string", "minLength": 1, "pattern": "\\S"}]


class Fault(_Strict):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"oneOf": [{"required": ["http"]}, {"required": ["command"]}]}
    )

    at_s: float = Field(ge=0, description="Seconds after the start (below bounds.max_duration_s).")
    http: HttpFault = _absent()
    command: list[str] = _absent(
        min_length=1,
        schema_update=_command_schema,
        description="The program and its arguments (no shell); stdout and stderr are kept (2,000 characters each).",
    )
    timeout_s: float = Field(
        60, gt=0, le=3600, description="The HTTP call's timeout; a command still running is killed."
    )
    label: str = _absent(description="In words, for the result.")


class Scenario(_Strict):
    """What the run is for, copied into the result so a verdict can be computed from it."""

    kind: Literal["pulse", "long_tail", "failure", "custom"]
    peak_concurrency: int = _absent(ge=1, description="The deployment's promised peak concurrency.")
    criteria: dict[str, float | bool] = _absent(
        description='Pass/fail thresholds, e.g. {"ttft_ms": 2000, "attainment": 0.99, "recovery_s": 30}.'
    )


def _extra_body_schema(schema: dict[str, Any]) -> None:
    _no_default(schema)
    schema["not"] = {"anyOf": [{"required": [key]} for key in RESERVED_BODY_KEYS]}


class PlanDocument(_Strict):
    """What the load generator sends, to which endpoint, how fast and for how long. Run it with `python -m
    llm_sizing_loadgen run plan.json --out result.json`. See docs/loadgen-plan.md."""

    model_config = ConfigDict(
        extra="forbid", title="llm-sizing load generator test plan, version 1", populate_by_name=True
    )

    schema_: str = _absent(alias="$schema")
    format: Literal["llm-sizing-loadgen-plan"] = _absent()
    version: Literal[1] = _absent()
    name: str = _absent(description="A label for people; copied into the result's settings.")
    description: str = _absent()
    endpoint: Endpoint
    load: Load
    requests: Requests
    bounds: Bounds
    warmup_s: float = _absent(ge=0, description="The measurement window starts here (default: ramp_up_s).")
    cooldown_s: float = Field(0, ge=0, description="The window ends this long before the generator stopped sending.")
    stream: bool = True
    ignore_eos: bool = Field(
        True,
        description="Send ignore_eos: true (vLLM, SGLang, TensorRT-LLM) so every request "
        "produces output_tokens; an earlier stop is short_output.",
    )
    min_tokens: Annotated[int, Field(ge=0)] | None = _absent(
        description="Send min_tokens (capped at the request's output tokens)."
    )
    continuous_usage_stats: bool = Field(
        True, description="Ask for running usage on every event (vLLM, SGLang): the tokens per event."
    )
    timeout_s: Timeouts = _absent()
    seed: int = Field(0, ge=0)
    sweep: Sweep = _absent()
    extra_body: dict[str, Any] = _absent(
        schema_update=_extra_body_schema,
        description="Merged into every request body (e.g. temperature); cannot set "
        "model, prompt, messages, stream, stream_options or max_tokens.",
    )
    metrics: Metrics = _absent()
    faults: list[Fault] = _absent(
        max_length=16,
        description="Failures injected during the run, each at its at_s: an "
        "HTTP call or a command (argv, run without a shell). A "
        "fault whose time comes after the run stopped is "
        "skipped.",
    )
    scenario: Scenario = _absent()


# ---------------------------------------------------------------------------------------------------------------
# The result (docs/loadgen-result.md)

RESULT_FORMAT = "llm-sizing-loadgen-result"  # ResultDocument.format
RESULT_VERSION = 1  # ResultDocument.version
RequestStatusName = Literal[
    "ok", "http_error", "timeout", "client_cancel", "truncated_prompt", "short_output", "incomplete_at_end"
]  # METRICS.md's request statuses (llm_sizing_loadgen.client.Status)
DATE_TIME_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$"

T = TypeVar("T")


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("may be left out, but not null")
    return value


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


# A field that may be left out but is never null: typed `X | None` (None when it was left out); null is refused
Omittable = Annotated[T | None, BeforeValidator(_not_null)]
Ms = Annotated[float, Field(ge=0)] | None  # a latency in milliseconds, null when it was not measured
Count = Annotated[int, Field(ge=0)] | None  # a token count, null when unknown
DateTime = Annotated[str, Field(pattern=DATE_TIME_PATTERN, json_schema_extra={"format": "date-time"})]


def _omitted_not_null(schema: dict[str, Any]) -> None:
    """The schema of an `Omittable` field: its type without the null branch and without a default."""
    schema.pop("default", None)
    branches = [branch for branch in schema.pop("anyOf", []) if branch != {"type": "null"}]
    if len(branches) == 1:
        rest = dict(schema)
        schema.clear()
        schema.update({**branches[0], **rest})
    elif branches:  # pragma: no cover - no Omittable field is a union
        schema["anyOf"] = branches


def _omitted(*, description: str | None = None, **constraints: Any) -> Any:
    """An `Omittable` field: may be left out (read as None), never null."""
    return Field(None, description=description, json_schema_extra=_omitted_not_null, **constraints)


class _Wire(BaseModel):
    """A block of the result: no other keys, and no conversions (a number is never a string or a boolean)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ResultTool(_Wire):
    """The program that wrote the file."""

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)


class ResultSource(BaseModel):
    """Set by an export of a stored run (the service's benchmark export): the tool, version, format, label and name
    of the file the run was imported from, the deployment it ran on, and notes on values filled by convention.
    Absent in a load generator's own result."""

    model_config = ConfigDict(extra="allow", strict=True)

    tool: str | None = None
    tool_version: str | None = None
    format: str | None = None
    label: str | None = None
    name: str | None = None
    deployment: dict[str, Any] | None = None
    notes: Omittable[list[str]] = _omitted()


class ResultLoad(_Wire):
    """How the load was offered: at a rate (open loop), by a number of clients (closed loop), or all at once."""

    kind: Literal["rate", "concurrency", "offline"]
    rate: Annotated[float, Field(gt=0)] | None = Field(None, description="Offered requests per second (open loop).")
    concurrency: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Clients (closed loop), or the open loop's cap."
    )
    arrival: Literal["poisson", "constant", "gamma"] | None = Field(
        None, description="The open loop's arrival process (null for a burst, or when unknown)."
    )
    burstiness: Annotated[float, Field(gt=0)] | None = None


class ResultEndpoint(_Wire):
    kind: str = Field(min_length=1, description="The API spoken, e.g. openai-chat, openai-completions.")
    model: str = Field(min_length=1, description="The served model name sent in the requests.")
    engine: str | None = Field(None, description="The serving engine and version where known, e.g. vllm 0.11.0.")


class ResultWindow(_Wire):
    """The measurement window [W_start, W_end] on the run's clock, after warm-up and before cool-down; requests are
    chosen by t_send_s."""

    start_s: float = Field(ge=0)
    end_s: float = Field(ge=0)


class ResultRun(_Wire):
    started_at: DateTime = Field(
        description="Wall-clock anchor (ISO 8601 with a zone, written in UTC) of t = 0 on the run's monotonic clock."
    )
    duration_s: float = Field(ge=0, description="From t = 0 to the last request's end.")
    load: ResultLoad
    endpoint: ResultEndpoint
    settings: Omittable[dict[str, Any]] = _omitted(
        description="The generator's run arguments as given (dataset, lengths, ignore_eos, seed, warm-up, ...)."
    )
    window: ResultWindow


class ResultRequest(_Wire):
    """One request sent, whatever its status: METRICS.md's timings (t = 0 is the run's start) and the server's token
    counts. A request that failed keeps what was measured before the failure."""

    id: Omittable[str | int] = _omitted()
    status: RequestStatusName = Field(
        description="METRICS.md's request status. incomplete_at_end: cut by the end of the run, neither a success "
        "nor an error."
    )
    error: str | None = None
    http_status: Annotated[int, Field(ge=100, le=599)] | None = None
    timeout_phase: Literal["connect", "ttft", "stream"] | None = None
    t_sched_s: float = Field(description="Scheduled send time (the arrival process), seconds from t = 0.")
    t_send_s: float = Field(description="Immediately before writing the HTTP request, seconds from t = 0.")
    ttft_ms: Ms = Field(description="t_c1 − t_send: the first event carrying a generated token.")
    ttft_sched_ms: Ms = Field(None, description="t_c1 − t_sched, coordinated-omission aware.")
    e2e_ms: Ms = Field(description="t_end − t_send: stream closed or final usage event.")
    itl_ms: list[Annotated[float, Field(ge=0)]] = Field(
        description="Inter-chunk gaps g_k = t_ck − t_c(k−1), k ≥ 2, in order (C − 1 values)."
    )
    input_tokens: Count = Field(description="usage.prompt_tokens (authoritative).")
    input_tokens_sent: Count = Field(None, description="The client's count of the prompt, for the truncation audit.")
    output_tokens: Count = Field(description="usage.completion_tokens (authoritative).")
    output_tokens_source: Literal["usage", "tokenizer"] | None = Field(
        None, description="tokenizer: the served model's tokenizer counted the text (no usage)."
    )
    cached_tokens: Count = Field(None, description="usage.prompt_tokens_details.cached_tokens.")
    finish_reason: str | None = None
    chunk_tokens: list[Annotated[int, Field(ge=0)]] | None = Field(
        None,
        description="n_1 … n_C, tokens per content event from continuous usage stats (C values); absent when unknown.",
    )


class ResultScrape(_Wire):
    """One GET of the server's metrics: its kept exposition lines (`text`) or why it failed (`error`)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"oneOf": [{"required": ["text"]}, {"required": ["error"]}]}
    )

    t_s: float = Field(description="When the GET was sent, seconds from t = 0 (the requests' t_send_s clock).")
    time: DateTime = Field(description="The same moment on the wall clock (ISO 8601, UTC): run.started_at + t_s.")
    error: Omittable[Annotated[str, Field(min_length=1)]] = _omitted(
        description="Why the scrape failed: connection refused, a non-200 status, no answer in time."
    )
    text: Omittable[str] = _omitted(
        description="The kept exposition lines (empty when the answer held none of the metrics read)."
    )

    @model_validator(mode="after")
    def _text_or_error(self) -> Self:
        if (self.text is None) == (self.error is None):
            raise ValueError("a scrape has either text or error")
        return self


class ResultServerMetrics(_Wire):
    """The server's Prometheus endpoint scraped during the run (only when the plan asked for it). Each scrape keeps
    only the exposition lines of the metrics a memory timeline reads (vLLM, SGLang, TGI, TensorRT-LLM, DCGM); a
    failed scrape keeps its error and is a gap, never zeros."""

    url: str = Field(min_length=1)
    interval_s: float = Field(gt=0)
    engine: MetricsEngine | None = None
    scrapes: list[ResultScrape]


class ResultFault(_Wire):
    """One fault the plan injected."""

    t_s: float = Field(ge=0, description="When it started, seconds from t = 0 (its planned time when skipped).")
    label: str
    kind: Literal["http", "command"]
    ok: bool = Field(description="http: a 2xx answer; command: exit status 0.")
    detail: str = Field(
        description="The status and answer, or the exit status with stdout and stderr (2,000 characters each), or why "
        "it was skipped or killed."
    )
    duration_s: float = Field(ge=0)
    skipped: Omittable[bool] = _omitted(description="The run stopped before the fault's time: it was not executed.")


class ResultScenario(_Wire):
    """What the run is for, as the plan gave it: the kind, the promised peak concurrency and the pass/fail
    criteria."""

    kind: str = Field(min_length=1, description="pulse, long_tail, failure or custom.")
    peak_concurrency: Annotated[int, Field(ge=1)] | None = None
    criteria: Omittable[dict[str, float | bool]] = _omitted()


class ResultDocument(_Wire):
    """One benchmark run written by this service's load generator. Every field follows docs/METRICS (the canonical
    metric definitions): times on one monotonic clock, in seconds from the run's start (t = 0) for instants and in
    milliseconds for latencies; token counts from the server's usage."""

    model_config = ConfigDict(extra="forbid", strict=True, title="llm-sizing load generator result, version 1")

    format: Literal["llm-sizing-loadgen-result"]
    version: Annotated[Literal[1], BeforeValidator(_not_bool)]  # a Literal takes True for 1; JSON Schema does not
    tool: ResultTool
    source: Omittable[ResultSource] = _omitted()
    run: ResultRun
    requests: list[ResultRequest]
    summary: Omittable[dict[str, Any]] = _omitted(
        description="What the generator computed itself (optional); an importer recomputes everything from the "
        "requests and keeps this as reported."
    )
    server_metrics: Omittable[ResultServerMetrics] = _omitted()
    faults: Omittable[list[ResultFault]] = _omitted(
        description="One event per fault the plan injected, in time order (a fault due after the run stopped is "
        "skipped: ok false, skipped true)."
    )
    scenario: Omittable[ResultScenario] = _omitted()


# ---------------------------------------------------------------------------------------------------------------
# The JSON Schemas


class _Generator(GenerateJsonSchema):
    """Draft 2020-12 with no per-field titles (the descriptions say it)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _document_schema(model: type[BaseModel], schema_id: str) -> dict[str, Any]:
    document = model.model_json_schema(by_alias=True, schema_generator=_Generator, mode="validation")
    return {"$schema": _Generator.schema_dialect, "$id": schema_id, **document}


def plan_schema() -> dict[str, Any]:
    """The plan's JSON Schema, as committed in docs/loadgen-plan.schema.json."""
    return _document_schema(PlanDocument, PLAN_ID)


def result_schema() -> dict[str, Any]:
    """The result's JSON Schema, as committed in docs/loadgen-result.schema.json."""
    return _document_schema(ResultDocument, RESULT_ID)


def schema_files() -> dict[str, dict[str, Any]]:
    """File name in docs/ → its JSON Schema."""
    return {PLAN_FILE: plan_schema(), RESULT_FILE: result_schema()}


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write every schema into the folder argv[0] (docs/)."""
    [folder] = argv
    for name, schema in schema_files().items():
        (Path(folder) / name).write_text(schema_text(schema), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

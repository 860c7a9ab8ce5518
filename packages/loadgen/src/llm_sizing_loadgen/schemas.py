"""The plan document as pydantic (v2) models, and the JSON Schemas written from them into `docs/`.

`docs/loadgen-plan.schema.json` is `plan_schema()` (`python -m llm_sizing_loadgen.schemas docs`, or
`make loadgen-schemas`; `python -m llm_sizing_loadgen schema` prints it); a test fails when the committed file and
the models disagree. `plan.plan_from_dict` stays the authority for a plan's *messages* (every problem at once, with
the field's path and a suggestion); these models describe the same rules for editors and other tools, and a test
keeps the two in step (what one accepts the other accepts).

Rules one field cannot state (closed loops take no rate; fixed lengths or a profile; an HTTP call or a command)
are written as JSON Schema beside the model (`json_schema_extra`), since pydantic writes no `if`/`oneOf` itself.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

PLAN_ID = "https://llm-sizing.example/schemas/loadgen-plan/v1.json"
PLAN_FILE = "loadgen-plan.schema.json"
URL_PATTERN = "^https?://[^/\\s]+"


def _no_default(schema: dict[str, Any]) -> None:
    """An optional field with no default of its own (the validator fills it in): the schema states none."""
    schema.pop("default", None)


def _absent(*, description: str | None = None, **constraints: Any) -> Any:
    """A field that may be left out (never null), with its constraints."""
    return Field(None, description=description, json_schema_extra=_no_default, **constraints)


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
    engine: Literal["vllm", "sglang", "tgi", "trtllm"] = _absent(
        description="Whose metric names to expect (recorded; every known name is kept)."
    )


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
    command: list[str] = Field(
        None,
        min_length=1,
        json_schema_extra=_command_schema,
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

    schema_: str = Field(None, alias="$schema", json_schema_extra=_no_default)
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
    extra_body: dict[str, Any] = Field(
        None,
        json_schema_extra=_extra_body_schema,
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


class _Generator(GenerateJsonSchema):
    """Draft 2020-12 with no per-field titles (the descriptions say it)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: Any, mode: Any = "validation") -> JsonSchemaValue:
        document = super().generate(schema, mode=mode)
        return {"$schema": self.schema_dialect, "$id": PLAN_ID, **document}


def plan_schema() -> dict[str, Any]:
    """The plan's JSON Schema, as committed in docs/loadgen-plan.schema.json."""
    return PlanDocument.model_json_schema(by_alias=True, schema_generator=_Generator, mode="validation")


def schema_files() -> dict[str, dict[str, Any]]:
    """File name in docs/ → its JSON Schema."""
    return {PLAN_FILE: plan_schema()}


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

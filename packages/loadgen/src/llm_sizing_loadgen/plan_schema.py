"""The JSON Schema of a test plan (`docs/loadgen-plan.schema.json` is this dict, written by
`python -m llm_sizing_loadgen schema`). `plan.plan_from_dict` is the authority and gives the precise errors;
the schema describes the same rules for editors and other tools (a test keeps the two in step)."""

from __future__ import annotations

from typing import Any

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_NON_NEGATIVE = {"type": "number", "minimum": 0}
_URL = {"type": "string", "pattern": "^https?://[^/\\s]+"}
_LENGTH = {
    "type": "object",
    "description": "A token length distribution (llm_sizing_loadgen.workload.LengthDistribution).",
    "required": ["kind"],
    "properties": {
        "kind": {"enum": ["fixed", "normal", "lognormal", "empirical"]},
        "mean": {"type": "number", "minimum": 1},
        "std": {"type": "number", "minimum": 0},
        "minimum": {"type": "integer", "minimum": 1},
        "maximum": {"type": ["integer", "null"], "minimum": 1},
        "bins": {"type": "array", "items": {"type": "array", "prefixItems": [
            {"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 1}, {"type": "number", "minimum": 0}],
            "minItems": 3, "maxItems": 3}},
    },
}

PLAN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://llm-sizing.example/schemas/loadgen-plan/v1.json",
    "title": "llm-sizing load generator test plan, version 1",
    "description": "What the load generator sends, to which endpoint, how fast and for how long. Run it with "
                   "`python -m llm_sizing_loadgen run plan.json --out result.json`. See docs/loadgen-plan.md.",
    "type": "object",
    "required": ["endpoint", "load", "requests", "bounds"],
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "format": {"const": "llm-sizing-loadgen-plan"},
        "version": {"const": 1},
        "name": {"type": "string", "description": "A label for people; copied into the result's settings."},
        "description": {"type": "string"},
        "endpoint": {
            "type": "object",
            "required": ["base_url", "model"],
            "additionalProperties": False,
            "properties": {
                "base_url": {"type": "string", "pattern": "^https?://[^/\\s]+",
                             "description": "http(s)://host:port, with or without a trailing /v1."},
                "api": {"enum": ["completions", "chat"], "default": "completions",
                        "description": "/v1/completions (prompt) or /v1/chat/completions (one user message)."},
                "model": {"type": "string", "minLength": 1, "pattern": "\\S",
                          "description": "The served model name sent in each request."},
                "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                                "description": "The NAME of the environment variable holding the API key (sent as "
                                               "a Bearer token). The key itself never goes in a plan."},
                "engine": {"type": "string", "minLength": 1,
                           "description": "The serving engine and version, recorded in the result (e.g. vllm "
                                          "0.11.0)."},
                "tls_verify": {"type": "boolean", "default": True,
                               "description": "https: check the server's certificate."},
                "ca_file": {"type": "string", "minLength": 1,
                            "description": "https: a PEM file of the CAs to trust (an internal CA)."},
            },
        },
        "load": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mode": {"enum": ["closed", "open"],
                         "description": "closed: `concurrency` clients back to back; open: `rate` requests/s by "
                                        "the arrival process. Default: open when a rate is given, else closed."},
                "concurrency": {"type": "integer", "minimum": 1,
                                "description": "closed: the number of clients; open: a cap on requests in flight."},
                "rate": {**_POSITIVE, "description": "open: offered requests per second."},
                "arrival": {"enum": ["poisson", "constant", "burst"],
                            "description": "open: the arrival process; burst = Poisson plus burst_requests extra "
                                           "requests uniform in [burst_at_s, burst_at_s + burst_window_s]. Default: "
                                           "the profile's arrival, else poisson."},
                "burst_requests": {"type": "integer", "minimum": 0},
                "burst_window_s": _POSITIVE,
                "burst_at_s": _NON_NEGATIVE,
                "ramp_up_s": {**_NON_NEGATIVE, "description": "closed: clients start evenly over it; open: the "
                                                              "rate rises linearly from 0 over it."},
                "error_pause_s": {**_NON_NEGATIVE, "description": "closed only: a client whose request failed waits "
                                                                  "this long before its next one (as real clients "
                                                                  "back off), so an outage is not a request storm."},
            },
            "allOf": [
                {"if": {"properties": {"mode": {"const": "closed"}}, "required": ["mode"]},
                 "then": {"not": {"anyOf": [{"required": [key]} for key in
                                            ("rate", "arrival", "burst_requests", "burst_window_s", "burst_at_s")]}}},
                {"if": {"properties": {"mode": {"const": "open"}}, "required": ["mode"]},
                 "then": {"not": {"required": ["error_pause_s"]}}},
            ],
        },
        "requests": {
            "type": "object",
            "additionalProperties": False,
            "description": "Fixed lengths (input_tokens and output_tokens) or a workload profile.",
            "properties": {
                "input_tokens": {"type": "integer", "minimum": 1},
                "output_tokens": {"type": "integer", "minimum": 1,
                                  "description": "Sent as max_tokens; enforced with ignore_eos / min_tokens."},
                "profile": {
                    "type": "object",
                    "description": "A workload profile (llm_sizing_loadgen.workload.profile_from_dict): request "
                                   "classes with shares and length distributions.",
                    "required": ["classes"],
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "classes": {"type": "array", "minItems": 1, "items": {
                            "type": "object",
                            "required": ["name", "share", "input", "output"],
                            "properties": {
                                "name": {"type": "string", "minLength": 1},
                                "share": _POSITIVE,
                                "input": _LENGTH,
                                "output": _LENGTH,
                                "shared_prefix_tokens": {"type": "integer", "minimum": 0},
                                "windows": {"type": "array", "items": {"type": "array", "minItems": 2,
                                                                       "maxItems": 2,
                                                                       "items": {"type": "integer", "minimum": 0,
                                                                                 "maximum": 24}}},
                            },
                        }},
                        "arrival": {"type": "object", "properties": {
                            "kind": {"enum": ["poisson", "constant", "burst"]},
                            "burst_requests": {"type": "integer", "minimum": 0},
                            "burst_window_s": _POSITIVE,
                            "burst_at_s": _NON_NEGATIVE,
                        }},
                    },
                },
                "hour": {"type": "integer", "minimum": 0, "maximum": 23,
                         "description": "A profile's mix at this hour (default: its busiest)."},
                "truncation_tolerance": {"type": "number", "minimum": 0, "exclusiveMaximum": 1, "default": 0.2,
                                         "description": "truncated_prompt when usage.prompt_tokens is below the "
                                                        "sent count by more than this fraction (and 8 tokens)."},
            },
            "oneOf": [
                {"required": ["input_tokens", "output_tokens"], "not": {"required": ["profile"]}},
                {"required": ["profile"], "not": {"anyOf": [{"required": ["input_tokens"]},
                                                            {"required": ["output_tokens"]}]}},
            ],
        },
        "bounds": {
            "type": "object",
            "additionalProperties": False,
            "description": "Hard bounds: at least one.",
            "minProperties": 1,
            "properties": {
                "max_requests": {"type": "integer", "minimum": 1},
                "max_duration_s": {**_POSITIVE, "description": "At this time the run stops; requests in flight "
                                                               "are recorded as incomplete_at_end."},
            },
        },
        "warmup_s": {**_NON_NEGATIVE, "description": "The measurement window starts here (default: ramp_up_s)."},
        "cooldown_s": {**_NON_NEGATIVE, "default": 0,
                       "description": "The window ends this long before the generator stopped sending."},
        "stream": {"type": "boolean", "default": True},
        "ignore_eos": {"type": "boolean", "default": True,
                       "description": "Send ignore_eos: true (vLLM, SGLang, TensorRT-LLM) so every request produces "
                                      "output_tokens; an earlier stop is short_output."},
        "min_tokens": {"type": ["integer", "null"], "minimum": 0,
                       "description": "Send min_tokens (capped at the request's output tokens)."},
        "continuous_usage_stats": {"type": "boolean", "default": True,
                                   "description": "Ask for running usage on every event (vLLM, SGLang): the "
                                                  "tokens per event."},
        "timeout_s": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "connect": {**_POSITIVE, "default": 10},
                "ttft": {**_POSITIVE, "default": 300,
                         "description": "From the send to the first content event."},
                "stream": {**_POSITIVE, "default": 60,
                           "description": "The longest silence after the first content event."},
            },
        },
        "seed": {"type": "integer", "minimum": 0, "default": 0},
        "sweep": {
            "type": "object",
            "additionalProperties": False,
            "description": "One run per point: a list of concurrencies (closed loop) or of rates (open loop).",
            "minProperties": 1,
            "maxProperties": 1,
            "properties": {
                "concurrency": {"type": "array", "minItems": 1, "maxItems": 64,
                                "items": {"type": "integer", "minimum": 1}},
                "rate": {"type": "array", "minItems": 1, "maxItems": 64, "items": _POSITIVE},
            },
        },
        "extra_body": {
            "type": "object",
            "description": "Merged into every request body (e.g. temperature); cannot set model, prompt, messages, "
                           "stream, stream_options or max_tokens.",
            "not": {"anyOf": [{"required": [key]} for key in
                              ("model", "prompt", "messages", "stream", "stream_options", "max_tokens")]},
        },
        "metrics": {
            "type": "object",
            "additionalProperties": False,
            "required": ["url"],
            "description": "The server's Prometheus endpoint, scraped during the run into a timeline (KV-cache "
                           "usage, running and waiting requests, GPU memory); written to the result's "
                           "server_metrics.",
            "properties": {
                "url": {**_URL, "description": "e.g. http://10.0.0.5:8000/metrics"},
                "interval_s": {"type": "number", "minimum": 0.2, "maximum": 60, "default": 1,
                               "description": "Seconds between scrapes (the first at the start, the last right "
                                              "after the run stops)."},
                "engine": {"enum": ["vllm", "sglang", "tgi", "trtllm"],
                           "description": "Whose metric names to expect (recorded; every known name is kept)."},
            },
        },
        "faults": {
            "type": "array",
            "maxItems": 16,
            "description": "Failures injected during the run, each at its at_s: an HTTP call or a command (argv, "
                           "run without a shell). A fault whose time comes after the run stopped is skipped.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["at_s"],
                "properties": {
                    "at_s": {**_NON_NEGATIVE, "description": "Seconds after the start (below "
                                                             "bounds.max_duration_s)."},
                    "http": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["url"],
                        "properties": {
                            "url": _URL,
                            "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE"], "default": "POST"},
                            "body": {"type": "object", "description": "Sent as JSON."},
                        },
                    },
                    "command": {"type": "array", "minItems": 1, "items": {"type": "string"},
                                "prefixItems": [{"type": "string", "minLength": 1, "pattern": "\\S"}],
                                "description": "The program and its arguments (no shell); stdout and stderr are "
                                               "kept (2,000 characters each)."},
                    "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600, "default": 60,
                                  "description": "The HTTP call's timeout; a command still running is killed."},
                    "label": {"type": "string", "description": "In words, for the result."},
                },
                "oneOf": [{"required": ["http"]}, {"required": ["command"]}],
            },
        },
        "scenario": {
            "type": "object",
            "additionalProperties": False,
            "required": ["kind"],
            "description": "What the run is for, copied into the result so a verdict can be computed from it.",
            "properties": {
                "kind": {"enum": ["pulse", "long_tail", "failure", "custom"]},
                "peak_concurrency": {"type": "integer", "minimum": 1,
                                     "description": "The deployment's promised peak concurrency."},
                "criteria": {"type": "object", "additionalProperties": {"type": ["number", "boolean"]},
                             "description": "Pass/fail thresholds, e.g. {\"ttft_ms\": 2000, \"attainment\": "
                                            "0.99, \"recovery_s\": 30}."},
            },
        },
    },
}

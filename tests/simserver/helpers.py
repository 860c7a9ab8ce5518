"""Helpers shared by the simulator tests."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from sizing.estimator.serving import ServingPlan

MODEL = "meta-llama/Meta-Llama-3-8B"
L4 = "nvidia-l4-24gb"
H100 = "nvidia-h100-sxm-80gb"


def with_config(plan: ServingPlan, **changes: Any) -> ServingPlan:
    """The plan with some scheduler limits changed (a small KV cache, few sequences...)."""
    return replace(plan, config=replace(plan.config, **changes))


def sse_events(text: str) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded ("[DONE]" kept as the string)."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        block = block.strip()
        if not block:
            continue
        assert block.startswith("data: "), block
        payload = block[len("data: "):]
        events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def metric_value(text: str, series: str) -> float:
    """The value of one exposition line, e.g. 'vllm:num_requests_running{model_name="m",engine="0"}'."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} not in the metrics")

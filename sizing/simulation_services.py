"""Services for latency and throughput: simulate a deployment at a load, sweep loads, find the largest load
meeting SLOs. Thin wrappers: the numbers come from `sizing.estimator.serving`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sizing.estimator.serving import (
    ServingPlan,
    load_sweep,
    max_rate_meeting_slo,
    serving_plan,
    simulate_plan,
)
from sizing.estimator.simulator import LoadKind, Slo
from sizing.estimator.workload import WorkloadProfile, fixed_profile, profile_from_dict
from sizing.models import Gpu, LlmModel
from sizing.services import estimate_request_build, json_safe

SIMULATION_DEFAULT_REQUESTS = 1000
SIMULATION_MAX_REQUESTS = 200_000


def simulation_profile(*, profile: Mapping[str, Any] | None = None, input_tokens: int | None = None,
                       output_tokens: int | None = None) -> WorkloadProfile:
    """The traffic to simulate: a stored/uploaded profile's JSON, or fixed input/output lengths."""
    if profile is not None:
        return profile_from_dict(profile)
    if input_tokens is None or output_tokens is None:
        from sizing.estimator.errors import SizingError, SizingErrorCode

        message = "give a profile, or both input_tokens and output_tokens"
        raise SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message,
                          extra={"fields": {"profile": [message]}})
    return fixed_profile(input_tokens=input_tokens, output_tokens=output_tokens)


def simulation_plan(*, gpu: Gpu, parameters: Mapping[str, Any], model: LlmModel | None = None,
                    config: Mapping[str, Any] | None = None, max_queue: int | None = None,
                    link: str | None = None) -> ServingPlan:
    request = estimate_request_build(gpu=gpu, parameters=parameters, model=model, config=config)
    return serving_plan(request, max_queue=max_queue, link=link)


def slo_from(data: Mapping[str, Any] | None) -> Slo | None:
    """SLOs from seconds (`ttft_s`, `tpot_s`, `e2e_s`, `percentile`); None when none is given."""
    if not data:
        return None
    values = {key: data.get(key) for key in ("ttft_s", "tpot_s", "e2e_s")}
    if all(value is None for value in values.values()):
        return None
    return Slo(**values, percentile=int(data.get("percentile") or 95))


def simulation_run(*, plan: ServingPlan, profile: WorkloadProfile, load: str, rate: float | None = None,
                   concurrency: int | None = None, requests: int = SIMULATION_DEFAULT_REQUESTS, seed: int = 0,
                   hour: int | None = None, slo: Slo | None = None) -> dict[str, Any]:
    """One simulation as JSON: the CLI contract's keys, the timeline, histograms and the plan it ran."""
    result = simulate_plan(plan, profile, load=LoadKind(load), rate_per_s=rate, concurrency=concurrency,
                           requests=requests, seed=seed, hour=hour, slo=slo)
    payload = result.as_dict()
    payload["plan"] = plan.describe()
    payload["profile"] = profile.name
    payload["seed"] = seed
    return json_safe(payload)


def simulation_sweep(*, plan: ServingPlan, profile: WorkloadProfile, kind: str = "rate",
                     loads: list[float] | None = None, points: int = 8, requests: int = SIMULATION_DEFAULT_REQUESTS,
                     seed: int = 0, hour: int | None = None, slo: Slo | None = None) -> dict[str, Any]:
    sweep = load_sweep(plan, profile, kind=LoadKind(kind), loads=loads, points=points, requests=requests, seed=seed,
                       hour=hour, slo=slo)
    payload = sweep.as_dict()
    payload["plan"] = plan.describe()
    payload["slo"] = slo.as_dict() if slo else None
    return json_safe(payload)


def simulation_slo_search(*, plan: ServingPlan, profile: WorkloadProfile, slo: Slo,
                          requests: int = SIMULATION_DEFAULT_REQUESTS, seed: int = 0,
                          hour: int | None = None) -> dict[str, Any]:
    search = max_rate_meeting_slo(plan, profile, slo, requests=requests, seed=seed, hour=hour)
    payload = search.as_dict()
    payload["plan"] = plan.describe()
    payload["slo"] = slo.as_dict()
    return json_safe(payload)

"""Quotes for sales tooling: a model, the customer's traffic, SLOs and the GPU types allowed in; the cheapest
deployments that fit and meet every SLO out, with their cost per hour and per million tokens.

A quote is a deployment search (`sizing.estimator.search`, run by the simulations worker as a `SimulationJob` of
kind "quote"): every allowed GPU type × count 1..max_gpus × TP (a power of two dividing the count and the heads) ×
weight format × engine is sized and, when it fits, simulated briefly at the rate. This module turns the request
into the search's inputs (`quote_create`) and reads the ranked outcomes as a quote (`quote_result`): the offers
(one per GPU type, count, engine and format: its best TP layout), the cheapest rejected deployments with the reason
they fail, the inputs and the assumptions. Prices are the catalog's list prices, USD per GPU-hour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse

from llm_sizing_loadgen.workload import WorkloadProfile, profile_from_dict
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, invalid_argument
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.estimator.search import SECONDS_PER_HOUR, Candidate
from sizing.estimator.serving import serving_plan, simulate_plan
from sizing.estimator.simulator import LoadKind
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Gpu, Organisation, SimulationJob
from sizing.selectors.estimates import gpu_get
from sizing.selectors.workloads import workload_profile_get_for_organisation
from sizing.services.estimates import estimate_request_build, gpu_spec
from sizing.services.simulations import (
    SEARCH_DEFAULT_REQUESTS,
    job_context,
    search_arguments,
    search_result_extra_register,
    simulation_job_publish_failed,
    simulation_job_validate,
    simulation_jobs_at_once_check,
    simulation_profile,
)
from sizing.tasks import quote_run_task

QUOTE_DEFAULT_MAX_GPUS = 8
QUOTE_MAX_GPUS = 64
QUOTE_DEFAULT_TOP = 3
QUOTE_MAX_TOP = 10
QUOTE_REJECTED_SHOWN = 5  # the cheapest rejected deployments shown (plus the cheapest of each GPU type with no offer)
QUOTE_TPS = (1, 2, 4, 8, 16, 32, 64)
QUOTE_DEFAULT_ENGINES = ("vllm",)
QUOTE_DEFAULT_WEIGHTS = ("auto",)
GIB = 2**30
PRICES_ASSUMPTION = (
    "List prices from the GPU catalog, in USD per GPU-hour: no discounts, no host, network, storage or staff costs."
)


# ---------------------------------------------------------------------------------------------------------------
# Reads


def quote_list_for_organisation(*, organisation: Organisation) -> QuerySet[SimulationJob]:
    """The organisation's quotes, newest first."""
    return SimulationJob.objects.filter(organisation=organisation, kind=SimulationJob.Kind.QUOTE).order_by(
        "-created_at", "-pk"
    )


def quote_get_for_organisation(*, organisation: Organisation, quote_id: int) -> SimulationJob | None:
    """The organisation's quote, or None for another organisation's (the API answers 404)."""
    return quote_list_for_organisation(organisation=organisation).filter(pk=quote_id).first()


# ---------------------------------------------------------------------------------------------------------------
# Traffic and prices


def mean_lengths(profile: WorkloadProfile, *, hour: int | None = None) -> tuple[float, float]:
    """The mean input tokens (a shared prefix included) and output tokens of a request of the profile's mix at
    `hour` (default: its busiest, the hour the search simulates)."""
    mix = profile.mix_at(hour)
    pairs = list(zip(mix, profile.classes, strict=True))
    mean_in = sum(share * (c.input.expected() + c.shared_prefix_tokens) for share, c in pairs)
    mean_out = sum(share * c.output.expected() for share, c in pairs)
    return float(mean_in), float(mean_out)


def cost_per_million_tokens(
    *, cost_per_hour_usd: float | None, rate_per_s: float, mean_input_tokens: float, mean_output_tokens: float
) -> float | None:
    """USD per million tokens, input and output counted alike, at the quoted load:

        tokens per hour = rate (requests/s) × 3600 × (mean input tokens + mean output tokens)
        cost per million tokens = cost per hour ÷ (tokens per hour ÷ 1e6)

    For example 2 × L40S at $0.86 per GPU-hour = $1.72/h, at 2 requests/s of 1000 input and 200 output tokens:
    2 × 3600 × 1200 = 8,640,000 tokens per hour, so $1.72 ÷ 8.64 = $0.199 per million tokens.

    >>> round(cost_per_million_tokens(cost_per_hour_usd=1.72, rate_per_s=2, mean_input_tokens=1000,
    ...                               mean_output_tokens=200), 4)
    0.1991
    """
    tokens_per_hour = rate_per_s * SECONDS_PER_HOUR * (mean_input_tokens + mean_output_tokens)
    if cost_per_hour_usd is None or tokens_per_hour <= 0:
        return None
    return cost_per_hour_usd / (tokens_per_hour / 1e6)


def _allowed_gpus(slugs: list[str] | None) -> list[Gpu]:
    """The GPU types to consider: those named (each known and priced), else every catalog GPU with a price."""
    if not slugs:
        gpus = list(Gpu.objects.filter(price_per_hour_usd__isnull=False).order_by("vendor", "slug"))
        if not gpus:
            raise invalid_argument("gpus", "no GPU in the catalog has a list price, so none can be ranked by cost")
        return gpus
    gpus, seen = [], set()
    for slug in slugs:
        if slug in seen:
            continue
        seen.add(slug)
        gpu = gpu_get(slug=str(slug))
        if gpu is None:
            raise invalid_argument("gpus", f"unknown GPU {slug!r}; see GET /api/v1/gpus/")
        if gpu.price_per_hour_usd is None:
            raise invalid_argument(
                "gpus",
                f"{gpu.name} ({slug}) has no list price in the catalog, so it cannot be "
                "ranked by cost: leave it out, or have its price set in the catalog",
            )
        gpus.append(gpu)
    return gpus


# ---------------------------------------------------------------------------------------------------------------
# Create


def quote_create(*, organisation: Organisation, user: Any, inputs: Mapping[str, Any]) -> SimulationJob:
    """Validate a quote request, store it as a deployment-search job of kind "quote" and queue it.

    `inputs`: `model` (slug); the traffic: `profile` (a workload profile id of the organisation or a shipped sample)
    or `input_tokens` and `output_tokens`, and `rate` (requests per second); `slo` ({ttft_s, tpot_s, e2e_s,
    percentile}, at least one limit); optional `gpus` (allowed GPU slugs; default every catalog GPU with a price),
    `max_gpus` (8), `engines` (["vllm"]), `weights` (["auto"]), `top` (3, at most 10), `requests` (simulated per
    candidate, 300), `max_model_len`. A mistake is a SizingError naming the field (a 400)."""
    model = str(inputs.get("model") or "")
    if not model:
        raise invalid_argument("model", "give the model (a slug from GET /api/v1/models/)")
    if inputs.get("concurrency") is not None:
        raise invalid_argument(
            "concurrency",
            "a quote simulates requests arriving at a rate (open loop); give rate "
            "in requests per second instead of a concurrency",
        )
    rate = inputs.get("rate")
    if rate is None or float(rate) <= 0:
        raise invalid_argument("rate", "give the load: rate, in requests per second (> 0)")
    rate = float(rate)
    slo = dict(inputs.get("slo") or {})
    if all(slo.get(key) is None for key in ("ttft_s", "tpot_s", "e2e_s")):
        raise invalid_argument("slo", "give at least one SLO limit: ttft_s, tpot_s or e2e_s (seconds)")
    slo["percentile"] = int(slo.get("percentile") or 95)
    max_gpus = int(inputs.get("max_gpus") or QUOTE_DEFAULT_MAX_GPUS)
    if not 1 <= max_gpus <= QUOTE_MAX_GPUS:
        raise invalid_argument("max_gpus", f"max_gpus must be between 1 and {QUOTE_MAX_GPUS}")
    top = int(inputs.get("top") or QUOTE_DEFAULT_TOP)
    if not 1 <= top <= QUOTE_MAX_TOP:
        raise invalid_argument("top", f"top must be between 1 and {QUOTE_MAX_TOP}")
    engines = list(dict.fromkeys(inputs.get("engines") or QUOTE_DEFAULT_ENGINES))
    for engine in engines:
        try:
            Engine(engine)
        except ValueError:
            raise invalid_argument("engines", f"unknown engine {engine!r}") from None
    weights = list(dict.fromkeys(inputs.get("weights") or QUOTE_DEFAULT_WEIGHTS))
    requests = int(inputs.get("requests") or SEARCH_DEFAULT_REQUESTS)
    gpus = _allowed_gpus(list(inputs.get("gpus") or []))

    traffic: dict[str, Any] = {"rate_per_s": rate}
    job_inputs: dict[str, Any] = {
        "kind": SimulationJob.Kind.QUOTE.value,
        "model": model,
        "gpu": gpus[0].slug,
        "rate": rate,
        "slo": slo,
        "engine": engines[0],
        "seed": 0,
    }
    has_lengths = inputs.get("input_tokens") is not None or inputs.get("output_tokens") is not None
    if inputs.get("profile") is not None:
        if has_lengths:
            raise invalid_argument(
                "profile", "give either a workload profile or input_tokens and output_tokens, not both"
            )
        row = workload_profile_get_for_organisation(
            organisation=organisation, workload_profile_id=int(inputs["profile"])
        )
        if row is None:
            raise invalid_argument(
                "profile", f"unknown workload profile {inputs['profile']}; see GET /api/v1/workloads/"
            )
        job_inputs["profile_json"] = row.profile  # a snapshot: the quote stays what it was if the profile changes
        profile = profile_from_dict(row.profile)
        traffic.update(kind="profile", profile=row.pk, profile_name=row.name)
    else:
        if inputs.get("input_tokens") is None or inputs.get("output_tokens") is None:
            field = (
                "output_tokens"
                if inputs.get("input_tokens") is not None
                else ("input_tokens" if inputs.get("output_tokens") is not None else "profile")
            )
            raise invalid_argument(
                field, "give the traffic: a workload profile, or input_tokens and output_tokens (tokens per request)"
            )
        job_inputs["input_tokens"] = int(inputs["input_tokens"])
        job_inputs["output_tokens"] = int(inputs["output_tokens"])
        profile = simulation_profile(input_tokens=job_inputs["input_tokens"], output_tokens=job_inputs["output_tokens"])
        traffic.update(kind="lengths", profile=None, profile_name=None)
    hour = profile.busiest_hour()
    mean_in, mean_out = mean_lengths(profile, hour=None)
    traffic.update(
        hour=hour,
        mean_input_tokens=mean_in,
        mean_output_tokens=mean_out,
        tokens_per_hour=rate * SECONDS_PER_HOUR * (mean_in + mean_out),
    )
    if inputs.get("max_model_len") is not None:
        job_inputs["max_model_len"] = int(inputs["max_model_len"])
    job_inputs["search"] = {
        "gpus": [gpu.slug for gpu in gpus],
        "counts": list(range(1, max_gpus + 1)),
        "tps": [tp for tp in QUOTE_TPS if tp <= max_gpus],
        "weights": weights,
        "engines": engines,
        "requests": requests,
    }
    echo = {
        key: inputs.get(key)
        for key in ("model", "profile", "input_tokens", "output_tokens", "rate", "max_model_len")
        if inputs.get(key) is not None
    }
    echo.update(
        slo=slo,
        gpus=[gpu.slug for gpu in gpus],
        max_gpus=max_gpus,
        engines=engines,
        weights=weights,
        top=top,
        requests=requests,
    )
    job_inputs["quote"] = echo
    job_inputs["traffic"] = traffic
    job_inputs["prices"] = {gpu.slug: float(gpu.price_per_hour_usd) for gpu in gpus}

    try:
        simulation_job_validate(organisation=organisation, inputs={**job_inputs, "kind": "search"})
    except SizingError as error:
        fields = (error.extra or {}).get("fields") or {}
        if "search" in fields:  # the search's own words for a quote's fields
            raise invalid_argument("max_gpus", error.message) from None
        raise
    with transaction.atomic():
        simulation_jobs_at_once_check(organisation=organisation, quote=True)
        job = SimulationJob.objects.create(
            organisation=organisation,
            created_by=user if user and user.pk else None,
            kind=SimulationJob.Kind.QUOTE,
            inputs=nonfinite_as_text(job_inputs),
        )
        job_id = job.pk
        job_publish_on_commit(
            kind="quote",
            job_id=job_id,
            publish=lambda: _enqueue(job_id),
            fail=lambda error: simulation_job_publish_failed(job_id=job_id, error=error),
        )
    return job


def _enqueue(job_id: int) -> None:
    quote_run_task.delay(job_id)  # the quotes queue (sizing.tasks)


# ---------------------------------------------------------------------------------------------------------------
# The worker's part: the offers' latencies at the SLO's percentile


def _deployment_key(outcome: Mapping[str, Any]) -> tuple:
    """What a customer buys: the GPU type and count, engine, weights and KV dtype (TP is how it is laid out)."""
    c = outcome["candidate"]
    return c["gpu"], c["gpus"], c["engine"], c["weights"], c["kv_dtype"], c.get("max_num_seqs")


def _pick_offers(ranked: list[Mapping[str, Any]], top: int) -> list[Mapping[str, Any]]:
    """The first `top` outcomes meeting every SLO, in the search's ranking, one per deployment (its best layout)."""
    offers, seen = [], set()
    for outcome in ranked:
        if not outcome["meets_slo"] or outcome.get("cost_per_hour_usd") is None:
            continue
        key = _deployment_key(outcome)
        if key in seen:
            continue
        seen.add(key)
        offers.append(outcome)
        if len(offers) == top:
            break
    return offers


def quote_offer_latencies(job: SimulationJob, ranked: list[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """TTFT, TPOT and E2E at the SLO's percentile for each offer, keyed by the candidate's label. The search keeps
    P95 only, so each offer is simulated again exactly as the search did (same requests, seed and rate: the same
    run) and read at the percentile. Called by the worker as it finishes a quote's search."""
    context = job_context(organisation=job.organisation, inputs=job.inputs)
    arguments = search_arguments(job, context)
    arch = estimate_request_build(gpu=context.gpu, model=context.model, parameters=context.parameters).arch
    slo = arguments["slo"]
    out = {}
    for outcome in _pick_offers(ranked, int(job.inputs.get("quote", {}).get("top") or QUOTE_DEFAULT_TOP)):
        c = outcome["candidate"]
        gpu = gpu_get(slug=c["gpu"])
        if gpu is None:
            continue
        candidate = Candidate(
            gpu=gpu_spec(gpu),
            gpus=c["gpus"],
            tp=c["tp"],
            weights=c["weights"],
            kv_dtype=c["kv_dtype"],
            engine=Engine(c["engine"]),
            max_num_seqs=c.get("max_num_seqs"),
        )
        request = EstimateRequest(
            arch=arch,
            gpu=candidate.gpu,
            gpus=candidate.gpus,
            tp=candidate.tp,
            weights=candidate.weights,
            kv_dtype=candidate.kv_dtype,
            engine=candidate.engine,
            max_num_seqs=candidate.max_num_seqs,
            max_model_len=arguments["max_model_len"],
            detail=False,
        )
        memory = estimate_memory(request)
        plan = serving_plan(request, memory=memory)
        result = simulate_plan(
            plan,
            arguments["profile"],
            load=LoadKind.RATE,
            rate_per_s=arguments["rate_per_s"],
            requests=arguments["requests"],
            seed=arguments["seed"],
            hour=arguments["hour"],
            slo=slo,
        )
        q = slo.percentile
        out[c["label"]] = {
            "percentile": q,
            "ttft_ms": result.ttft.at(q),
            "tpot_ms": result.tpot.at(q),
            "e2e_ms": result.e2e.at(q),
        }
    return out


# ---------------------------------------------------------------------------------------------------------------
# Read a quote


def quote_url(job: SimulationJob) -> str:
    return reverse("quotes:quote-detail", kwargs={"quote_id": job.pk})


def _gib(value: int | None) -> float | None:
    return round(value / GIB, 2) if value is not None else None


def _usd(value: float | None) -> float | None:
    """A price × a count without the float noise (1.0499999999999998 → 1.05)."""
    return round(value, 6) if value is not None else None


def _deployment(outcome: Mapping[str, Any]) -> dict[str, Any]:
    c = outcome["candidate"]
    return {
        "gpu": c["gpu"],
        "gpu_name": c["gpu_name"],
        "gpus": c["gpus"],
        "tp": c["tp"],
        "replicas": c["replicas"],
        "engine": c["engine"],
        "weights": c["weights"],
        "kv_dtype": c["kv_dtype"],
        "max_num_seqs": c.get("max_num_seqs"),
        "label": c["label"],
        "cost_per_hour_usd": _usd(outcome["cost_per_hour_usd"]),
    }


def _offers(result: Mapping[str, Any], inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    traffic = inputs.get("traffic") or {}
    top = int((inputs.get("quote") or {}).get("top") or QUOTE_DEFAULT_TOP)
    percentile = int((inputs.get("slo") or {}).get("percentile") or 95)
    latencies = result.get("latencies") or {}
    offers = []
    for rank, outcome in enumerate(_pick_offers(result["outcomes"], top), start=1):
        at = latencies.get(outcome["candidate"]["label"]) or {}
        offers.append(
            {
                "rank": rank,
                **_deployment(outcome),
                "price_per_gpu_hour_usd": _usd(outcome["cost_per_hour_usd"] / outcome["candidate"]["gpus"]),
                "cost_per_million_output_tokens_usd": outcome["cost_per_million_output_tokens_usd"],
                "cost_per_million_tokens_usd": cost_per_million_tokens(
                    cost_per_hour_usd=outcome["cost_per_hour_usd"],
                    rate_per_s=float(traffic.get("rate_per_s") or 0),
                    mean_input_tokens=float(traffic.get("mean_input_tokens") or 0),
                    mean_output_tokens=float(traffic.get("mean_output_tokens") or 0),
                ),
                "percentile": percentile,
                "ttft_ms": at.get("ttft_ms"),
                "tpot_ms": at.get("tpot_ms"),
                "e2e_ms": at.get("e2e_ms"),
                "output_tokens_per_s": outcome["output_tokens_per_s"],
                "kv_capacity_tokens": outcome["kv_capacity_tokens"],
                "memory_per_gpu_bytes": outcome["required_bytes_per_gpu"],
                "memory_per_gpu_gib": _gib(outcome["required_bytes_per_gpu"]),
            }
        )
    return offers


def _rejected(result: Mapping[str, Any], offers: list[dict[str, Any]]) -> list[dict]:
    """The cheapest deployments not offered, cheapest first, each with the reason: for every GPU type its cheapest
    deployment failing each way (does not fit, misses an SLO, rejects requests), the cheapest QUOTE_REJECTED_SHOWN
    of those, then the cheapest of every other allowed GPU type that has no offer at all."""
    infinity = float("inf")
    failed = sorted(
        (o for o in result["outcomes"] if not o["meets_slo"]),
        key=lambda o: (
            o["cost_per_hour_usd"] if o["cost_per_hour_usd"] is not None else infinity,
            0 if o["fits"] else 1,
            o["candidate"]["gpus"],
            o["candidate"]["label"],
        ),
    )
    picked, seen = [], set()
    for outcome in failed:
        key = (outcome["candidate"]["gpu"], (outcome.get("verdict") or {}).get("code"))
        if key not in seen:
            seen.add(key)
            picked.append(outcome)
    shown = picked[:QUOTE_REJECTED_SHOWN]
    offered_gpus = {offer["gpu"] for offer in offers}
    shown_gpus = {o["candidate"]["gpu"] for o in shown}
    for outcome in picked[QUOTE_REJECTED_SHOWN:]:
        gpu = outcome["candidate"]["gpu"]
        if gpu not in offered_gpus and gpu not in shown_gpus:
            shown.append(outcome)
            shown_gpus.add(gpu)
    best = offers[0]["cost_per_hour_usd"] if offers else None
    return [
        {
            **_deployment(o),
            "fits": o["fits"],
            "reason": o["reason"],
            "verdict": o.get("verdict"),
            "cheaper_than_best_offer": best is not None
            and o["cost_per_hour_usd"] is not None
            and o["cost_per_hour_usd"] < best,
            "memory_per_gpu_bytes": o.get("required_bytes_per_gpu"),
            "memory_per_gpu_gib": _gib(o.get("required_bytes_per_gpu")),
        }
        for o in shown
    ]


def quote_assumptions(job: SimulationJob) -> dict[str, Any]:
    inputs = job.inputs
    search = inputs.get("search") or {}
    return {
        "prices": PRICES_ASSUMPTION,
        "currency": "USD",
        "price_unit": "per GPU-hour",
        "gpu_prices_usd_per_hour": inputs.get("prices") or {},
        "requests_simulated": int(search.get("requests") or SEARCH_DEFAULT_REQUESTS),
        "traffic": inputs.get("traffic") or {},
        "slo": inputs.get("slo") or {},
        "gpu_counts": search.get("counts") or [],
        "tps": search.get("tps") or [],
        "cost_per_million_tokens": "cost per hour ÷ (rate × 3600 × (mean input + mean output tokens) ÷ 1e6)",
    }


def quote_result(job: SimulationJob) -> dict[str, Any]:
    """The quote as the API answers it: status and progress; when done the offers (cheapest first), the cheapest
    rejected deployments with their reasons, and the summary; always the inputs and the assumptions."""
    answer: dict[str, Any] = {
        "id": job.pk,
        "url": quote_url(job),
        "status": job.status,
        "progress": job.progress,
        "progress_message": job.progress_message,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "inputs": job.inputs.get("quote") or {},
        "error": job.error,
        "offers": None,
        "rejected": None,
        "summary": None,
        "assumptions": quote_assumptions(job),
    }
    result = job.result
    if job.status == SimulationJob.Status.DONE and isinstance(result, dict) and "outcomes" in result:
        offers = _offers(result, job.inputs)
        answer.update(
            offers=offers,
            rejected=_rejected(result, offers),
            summary={
                "candidates": result["candidates"],
                "meeting_slo": result["meeting_slo"],
                "fitting": result["fitting"],
                "offers": len(offers),
            },
        )
    return answer


def quote_summary(job: SimulationJob) -> dict[str, Any]:
    """A quote in a list: its state, inputs and the cheapest offer (when done)."""
    answer = quote_result(job)
    offers = answer.pop("offers") or []
    for key in ("rejected", "assumptions", "started_at"):
        answer.pop(key)
    answer["cheapest"] = offers[0] if offers else None
    return answer


search_result_extra_register(
    SimulationJob.Kind.QUOTE, "latencies", quote_offer_latencies
)  # a quote's search ends with them

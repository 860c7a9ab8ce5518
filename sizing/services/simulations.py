"""Services for latency and throughput: simulate a deployment at a load, sweep loads, find the largest load
meeting SLOs. Thin wrappers: the numbers come from `sizing.estimator.serving`."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from llm_sizing_loadgen.workload import WorkloadProfile, fixed_profile, profile_from_dict
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode, invalid_argument
from sizing.estimator.memory import estimate_memory
from sizing.estimator.perf import Efficiencies
from sizing.estimator.perf_calibration import Measurement, perf_calibrate
from sizing.estimator.search import Candidate, candidates_for, evaluate_candidates, outcome_sort_key
from sizing.estimator.serving import (
    ServingPlan,
    load_sweep,
    max_rate_meeting_slo,
    serving_plan,
    simulate_plan,
    slo_verdict,
)
from sizing.estimator.simulator import LoadKind, Slo
from sizing.kernel.job_budgets import JobKind, context_tokens_check, running_jobs_check, simulated_tokens_check
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Gpu, LlmModel, Organisation, PerfCalibration, SimulationJob, SimulationJobPart
from sizing.selectors.deployments import fingerprint_get_for_organisation
from sizing.selectors.estimates import calibration_latest, gpu_get, model_get_for_organisation
from sizing.selectors.simulations import perf_calibration_latest
from sizing.selectors.workloads import workload_profile_get_for_organisation
from sizing.services.deployments import fingerprint_parameters
from sizing.services.estimates import ESTIMATE_PARAMETERS, estimate_request_build, gpu_spec
from sizing.tasks import simulation_job_run_task, simulation_search_part_task

logger = logging.getLogger(__name__)

SIMULATION_DEFAULT_REQUESTS = 1000
SIMULATION_MAX_REQUESTS = 200_000
SEARCH_DEFAULT_REQUESTS = 300  # a short simulation per candidate
SEARCH_MAX_CANDIDATES = 5000
SLO_SEARCH_MAX_PROBES = 12  # simulations an SLO search runs at most (max_rate_meeting_slo's max_probes)


def simulation_profile(
    *, profile: Mapping[str, Any] | None = None, input_tokens: int | None = None, output_tokens: int | None = None
) -> WorkloadProfile:
    """The traffic to simulate: a stored/uploaded profile's JSON, or fixed input/output lengths."""
    if profile is not None:
        return profile_from_dict(profile)
    if input_tokens is None or output_tokens is None:
        message = "give a profile, or both input_tokens and output_tokens"
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"profile": [message]}}
        )
    return fixed_profile(input_tokens=input_tokens, output_tokens=output_tokens)


def simulation_plan(
    *,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
    max_queue: int | None = None,
    link: str | None = None,
    link_bytes_per_s: float | None = None,
    organisation: Organisation | None = None,
    use_calibration: bool = True,
) -> ServingPlan:
    """The serving plan; with an organisation, the newest saved efficiencies of this GPU and engine apply."""
    request = estimate_request_build(gpu=gpu, parameters=parameters, model=model, config=config)
    calibration = None
    memory_source = "estimated"
    if organisation is not None and use_calibration:
        calibration = perf_calibration_latest(organisation=organisation, gpu=gpu, engine=request.engine.value)
        if model is not None:
            # the boot-log terms saved for this model, GPU, engine and TP, as estimates/quick applies them
            applied = calibration_latest(
                organisation=organisation,
                model=model,
                gpu=gpu,
                engine=request.engine.value,
                tp=estimate_memory(replace(request, detail=False)).tp,
            )
            if applied is not None:
                terms = {k: v for k, v in applied.terms.items() if getattr(request, k, None) is None}
                request = replace(request, **terms)
                memory_source = f"calibrated from a boot log saved on {applied.created_at:%Y-%m-%d}"
    efficiencies = Efficiencies(**calibration.efficiencies) if calibration else None
    plan = serving_plan(
        request, max_queue=max_queue, link=link, link_bytes_per_s=link_bytes_per_s, efficiencies=efficiencies
    )
    source = (
        f"calibrated from {calibration.measurements} measured run(s) on {calibration.created_at:%Y-%m-%d}"
        if calibration
        else "engine defaults"
    )
    return replace(plan, efficiencies_source=source, memory_source=memory_source)


def slo_from(data: Mapping[str, Any] | None) -> Slo | None:
    """SLOs from seconds (`ttft_s`, `tpot_s`, `e2e_s`, `percentile`); None when none is given."""
    if not data:
        return None
    values = {key: data.get(key) for key in ("ttft_s", "tpot_s", "e2e_s")}
    if all(value is None for value in values.values()):
        return None
    return Slo(**values, percentile=int(data.get("percentile") or 95))


def simulation_run(
    *,
    plan: ServingPlan,
    profile: WorkloadProfile,
    load: str,
    rate: float | None = None,
    concurrency: int | None = None,
    requests: int = SIMULATION_DEFAULT_REQUESTS,
    seed: int = 0,
    hour: int | None = None,
    slo: Slo | None = None,
    progress: Callable[[int, int], None] | None = None,
    timeline_points: int = 300,
) -> dict[str, Any]:
    """One simulation as JSON: the CLI contract's keys, the timeline (`timeline_points` buckets), histograms and the
    plan it ran."""
    result = simulate_plan(
        plan,
        profile,
        load=LoadKind(load),
        rate_per_s=rate,
        concurrency=concurrency,
        requests=requests,
        seed=seed,
        hour=hour,
        slo=slo,
        progress=progress,
        timeline_points=timeline_points,
    )
    payload = result.as_dict()
    payload["verdict"] = slo_verdict(result, slo) if slo else None
    payload["plan"] = plan.describe()
    payload["profile"] = profile.name
    payload["seed"] = seed
    return nonfinite_as_text(payload)


def simulation_sweep(
    *,
    plan: ServingPlan,
    profile: WorkloadProfile,
    kind: str = "rate",
    loads: list[float] | None = None,
    points: int = 8,
    requests: int = SIMULATION_DEFAULT_REQUESTS,
    seed: int = 0,
    hour: int | None = None,
    slo: Slo | None = None,
) -> dict[str, Any]:
    sweep = load_sweep(
        plan, profile, kind=LoadKind(kind), loads=loads, points=points, requests=requests, seed=seed, hour=hour, slo=slo
    )
    payload = sweep.as_dict()
    payload["plan"] = plan.describe()
    payload["slo"] = slo.as_dict() if slo else None
    return nonfinite_as_text(payload)


def simulation_slo_search(
    *,
    plan: ServingPlan,
    profile: WorkloadProfile,
    slo: Slo,
    requests: int = SIMULATION_DEFAULT_REQUESTS,
    seed: int = 0,
    hour: int | None = None,
) -> dict[str, Any]:
    search = max_rate_meeting_slo(plan, profile, slo, requests=requests, seed=seed, hour=hour)
    payload = search.as_dict()
    payload["plan"] = plan.describe()
    payload["slo"] = slo.as_dict()
    return nonfinite_as_text(payload)


# ---------------------------------------------------------------------------------------------------------------
# Jobs: simulations, sweeps, SLO searches, deployment searches and calibrations run by a worker


SIMULATION_KINDS = ("simulate", "sweep", "slo_search", "search", "calibrate")
PROGRESS_INTERVAL_S = 0.5  # progress is written at most this often
# Parameters of the memory estimate a job may set (concurrency and output_tokens describe traffic here)
JOB_ESTIMATE_PARAMETERS = tuple(k for k in ESTIMATE_PARAMETERS if k not in ("concurrency", "output_tokens"))


@dataclass(frozen=True)
class _JobContext:
    """What a job's inputs resolve to, for one organisation."""

    model: LlmModel
    gpu: Gpu
    profile: WorkloadProfile
    parameters: dict[str, Any]
    slo: Slo | None
    link: str | None = None  # the TP link: given, or measured by a fingerprint
    link_bytes_per_s: float | None = None
    environment: dict[str, Any] | None = None  # the measured machine the job runs on (a fingerprint)


def job_context(*, organisation: Organisation, inputs: Mapping[str, Any]) -> _JobContext:
    model = model_get_for_organisation(organisation=organisation, slug=str(inputs.get("model", "")))
    if model is None:
        raise invalid_argument("model", f"unknown model {inputs.get('model')!r}; see GET /api/v1/models/")
    gpu = gpu_get(slug=str(inputs.get("gpu", "")))
    if gpu is None:
        raise invalid_argument("gpu", f"unknown GPU {inputs.get('gpu')!r}; see GET /api/v1/gpus/")
    profile_id = inputs.get("profile")
    if profile_id is not None:
        row = workload_profile_get_for_organisation(organisation=organisation, workload_profile_id=int(profile_id))
        if row is None:
            raise invalid_argument("profile", f"unknown workload profile {profile_id}; see GET /api/v1/workloads/")
        profile = profile_from_dict(row.profile)
    elif inputs.get("kind") == "calibrate" and not inputs.get("profile_json") and not inputs.get("input_tokens"):
        measured = (inputs.get("measurements") or [{}])[0]  # not simulated: each run uses its own lengths
        profile = fixed_profile(
            input_tokens=int(measured.get("input_tokens") or 1), output_tokens=int(measured.get("output_tokens") or 1)
        )
    else:
        profile = simulation_profile(
            profile=inputs.get("profile_json"),
            input_tokens=inputs.get("input_tokens"),
            output_tokens=inputs.get("output_tokens"),
        )
    parameters = {key: inputs.get(key) for key in JOB_ESTIMATE_PARAMETERS}
    parameters["engine"] = inputs.get("engine") or "vllm"
    link, link_bytes_per_s, environment = inputs.get("link"), None, None
    if inputs.get("fingerprint") is not None:
        fingerprint = fingerprint_get_for_organisation(
            organisation=organisation, fingerprint_id=int(inputs["fingerprint"])
        )
        if fingerprint is None:
            raise invalid_argument(
                "fingerprint", f"unknown fingerprint {inputs['fingerprint']}; see GET /api/v1/fingerprints/"
            )
        tp = estimate_memory(
            replace(estimate_request_build(gpu=gpu, model=model, parameters=parameters), detail=False)
        ).tp
        parameters, measured = fingerprint_parameters(fingerprint=fingerprint, parameters=parameters, tp=tp)
        if link is None and measured.link is not None:
            link, link_bytes_per_s = measured.link, measured.link_bytes_per_s
        environment = {"fingerprint": fingerprint.pk, "host": fingerprint.host, **measured.as_dict()}
    return _JobContext(
        model=model,
        gpu=gpu,
        profile=profile,
        parameters=parameters,
        slo=slo_from(inputs.get("slo")),
        link=link,
        link_bytes_per_s=link_bytes_per_s,
        environment=environment,
    )


def _search_candidates(*, context: _JobContext, inputs: Mapping[str, Any]) -> list[Candidate]:
    spec = inputs.get("search") or {}
    slugs = spec.get("gpus") or [context.gpu.slug]
    gpus = []
    for slug in slugs:
        gpu = gpu_get(slug=slug)
        if gpu is None:
            raise invalid_argument("search", f"unknown GPU {slug!r} in search.gpus")
        gpus.append(gpu_spec(gpu))
    arch = estimate_request_build(gpu=context.gpu, model=context.model, parameters=context.parameters).arch
    return candidates_for(
        arch,
        gpus=gpus,
        counts=spec.get("counts") or (1, 2, 4, 8),
        tps=spec.get("tps") or (1, 2, 4, 8),
        weights=spec.get("weights") or ("auto",),
        kv_dtypes=spec.get("kv_dtypes") or ("auto",),
        engines=[Engine(e) for e in (spec.get("engines") or ("vllm",))],
        max_num_seqs=spec.get("max_num_seqs") or (None,),
    )


def simulation_job_validate(*, organisation: Organisation, inputs: Mapping[str, Any]) -> None:
    """Check a job's inputs before it is queued, so a mistake is a 400 now and not a failed job later."""
    kind = inputs.get("kind")
    if kind not in SIMULATION_KINDS:
        raise invalid_argument("kind", f"kind must be one of {', '.join(SIMULATION_KINDS)}")
    if kind == "search" and inputs.get("fingerprint") is not None:
        raise invalid_argument(
            "fingerprint",
            "a deployment search compares GPU models and counts; a fingerprint "
            "describes one machine: simulate on it instead",
        )
    context = job_context(organisation=organisation, inputs=inputs)
    _lengths_check(context=context, inputs=inputs)
    if kind == "search":
        if not inputs.get("rate"):
            raise invalid_argument("rate", "a deployment search needs the load: rate (requests per second)")
        if context.slo is None:
            raise invalid_argument("slo", "a deployment search needs at least one SLO (ttft_s, tpot_s or e2e_s)")
        candidates = _search_candidates(context=context, inputs=inputs)
        if not candidates:
            raise invalid_argument(
                "search", "no candidate deployment: no TP size divides both a GPU count and the model's attention heads"
            )
        if len(candidates) > SEARCH_MAX_CANDIDATES:
            raise invalid_argument(
                "search", f"{len(candidates)} candidates; at most {SEARCH_MAX_CANDIDATES} per search"
            )
        simulated_tokens_check(
            runs=len(candidates),
            tokens_per_request=_mean_request_tokens(context.profile),
            requests=int((inputs.get("search") or {}).get("requests") or SEARCH_DEFAULT_REQUESTS),
        )
        return
    plan = simulation_plan(
        gpu=context.gpu,
        model=context.model,
        parameters=context.parameters,
        max_queue=inputs.get("max_queue"),
        link=context.link,
        link_bytes_per_s=context.link_bytes_per_s,
    )
    if kind == "simulate":
        load = inputs.get("load") or "rate"
        if load == "rate" and not inputs.get("rate"):
            raise invalid_argument("rate", "give the rate (requests per second), or load concurrency or offline")
        if load == "concurrency" and not inputs.get("concurrency"):
            raise invalid_argument("concurrency", "give the concurrency (clients) of the closed loop")
    elif kind == "slo_search" and context.slo is None:
        raise invalid_argument("slo", "give at least one SLO (ttft_s, tpot_s or e2e_s) to search the load for")
    elif kind == "calibrate":
        _measurements(inputs)
    if kind in ("simulate", "sweep", "slo_search"):
        sweep = inputs.get("sweep") or {}
        runs = {
            "simulate": 1,
            "sweep": len(sweep.get("loads") or []) or int(sweep.get("points") or 8),
            "slo_search": SLO_SEARCH_MAX_PROBES,
        }[kind]
        simulated_tokens_check(
            runs=runs,
            requests=int(inputs.get("requests") or SIMULATION_DEFAULT_REQUESTS),
            tokens_per_request=_mean_request_tokens(context.profile),
        )
    del plan


def _mean_request_tokens(profile: WorkloadProfile) -> float:
    """Input (a shared prefix included) plus output tokens of the profile's mean request at its busiest hour."""
    pairs = zip(profile.mix_at(None), profile.classes, strict=True)
    return float(sum(share * (c.input.expected() + c.shared_prefix_tokens + c.output.expected()) for share, c in pairs))


def _lengths_check(*, context: _JobContext, inputs: Mapping[str, Any]) -> None:
    """Hold the job's request lengths to the model's context: the plan's max_model_len when given, else the
    model's max_position_embeddings (a 400 naming the field and the limit)."""
    max_model_len = context.parameters.get("max_model_len")
    if max_model_len:
        limit, source = int(max_model_len), "max_model_len"
    else:
        arch = estimate_request_build(gpu=context.gpu, model=context.model, parameters=context.parameters).arch
        limit, source = arch.max_position_embeddings, f"max_position_embeddings of {context.model.slug}"
    if inputs.get("input_tokens") is not None and inputs.get("output_tokens") is not None:
        context_tokens_check(
            input_tokens=int(inputs["input_tokens"]),
            output_tokens=int(inputs["output_tokens"]),
            context_tokens=limit,
            source=source,
        )
    elif inputs.get("profile") is not None or inputs.get("profile_json") is not None:
        for c in context.profile.classes:  # a class's mean request must fit (longer samples are refused in the run)
            mean_in = round(c.input.expected()) + c.shared_prefix_tokens
            try:
                context_tokens_check(
                    input_tokens=mean_in, output_tokens=round(c.output.expected()), context_tokens=limit, source=source
                )
            except SizingError as error:
                raise invalid_argument("profile", f"request class {c.name!r}: {error.message}") from None
    for index, item in enumerate(inputs.get("measurements") or []):
        try:
            context_tokens_check(
                input_tokens=int(item.get("input_tokens") or 0),
                output_tokens=int(item.get("output_tokens") or 0),
                context_tokens=limit,
                source=source,
            )
        except SizingError as error:
            raise invalid_argument("measurements", f"measurements[{index}]: {error.message}") from None
        except (TypeError, ValueError):
            continue  # _measurements says what is wrong with it


def _measurements(inputs: Mapping[str, Any]) -> list[Measurement]:
    raw = inputs.get("measurements") or []
    if not raw:
        raise invalid_argument("measurements", "give at least one measured run to calibrate with")
    out = []
    for index, item in enumerate(raw):
        try:
            out.append(
                Measurement(
                    input_tokens=int(item["input_tokens"]),
                    output_tokens=int(item["output_tokens"]),
                    load=LoadKind(item.get("load", "concurrency")),
                    rate_per_s=item.get("rate"),
                    concurrency=item.get("concurrency"),
                    requests=int(item.get("requests") or 200),
                    output_tokens_per_s=item.get("output_tokens_per_s"),
                    ttft_ms=item.get("ttft_ms"),
                    tpot_ms=item.get("tpot_ms"),
                    label=str(item.get("label") or ""),
                )
            )
        except (KeyError, TypeError, ValueError) as error:
            raise invalid_argument("measurements", f"measurements[{index}]: {error}") from None
        except SizingError as error:
            raise invalid_argument("measurements", f"measurements[{index}]: {error.message}") from None
    return out


def simulation_job_create(*, organisation: Organisation, user: Any, inputs: Mapping[str, Any]) -> SimulationJob:
    """Validate, store and queue a job; the worker picks it up once the transaction commits."""
    simulation_job_validate(organisation=organisation, inputs=inputs)
    with transaction.atomic():
        simulation_jobs_at_once_check(organisation=organisation, quote=False)
        job = SimulationJob.objects.create(
            organisation=organisation,
            created_by=user if user and user.pk else None,
            kind=inputs["kind"],
            inputs=nonfinite_as_text(dict(inputs)),
        )
        job_id = job.pk
        job_publish_on_commit(
            kind=job.kind,
            job_id=job_id,
            publish=lambda: _enqueue_run(job_id),
            fail=lambda error: simulation_job_publish_failed(job_id=job_id, error=error),
        )
    return job


def simulation_jobs_at_once_check(*, organisation: Organisation, quote: bool) -> None:
    """Refuse (429) a new job when the organisation has its most quotes, or other simulation jobs, queued or
    running (sizing.kernel.job_budgets.RUNNING_JOBS_MAX). Call inside the transaction that creates the job: the
    organisation's row is locked, so two requests at once cannot both take the last place."""
    Organisation.objects.select_for_update().filter(pk=organisation.pk).first()
    jobs = SimulationJob.objects.filter(
        organisation=organisation, status__in=(SimulationJob.Status.QUEUED, SimulationJob.Status.RUNNING)
    )
    if quote:
        running_jobs_check(
            kind=JobKind.QUOTE, running=jobs.filter(kind=SimulationJob.Kind.QUOTE).count(), what="quotes"
        )
    else:
        running_jobs_check(
            kind=JobKind.SIMULATION, what="simulation jobs", running=jobs.exclude(kind=SimulationJob.Kind.QUOTE).count()
        )


def _enqueue_run(job_id: int) -> None:
    simulation_job_run_task.delay(job_id)


def simulation_job_publish_failed(*, job_id: int, error: dict[str, Any]) -> None:
    """Mark a queued job failed: the broker did not take its message (sizing/kernel/jobs.py)."""
    SimulationJob.objects.filter(pk=job_id, status=SimulationJob.Status.QUEUED).update(
        status=SimulationJob.Status.FAILED, error=error, progress_message="", finished_at=timezone.now()
    )


class _Progress:
    """Writes a job's progress, at most every PROGRESS_INTERVAL_S."""

    def __init__(self, job_id: int, what: str) -> None:
        self.job_id, self.what, self.last = job_id, what, 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_INTERVAL_S and done < total:
            return
        self.last = now
        SimulationJob.objects.filter(pk=self.job_id).update(
            progress=min(1.0, done / total) if total else 0.0, progress_message=f"{self.what}: {done}/{total}"
        )


def _finish(job_id: int, *, result: Any = None, error: Mapping[str, Any] | None = None) -> None:
    SimulationJob.objects.filter(pk=job_id).update(
        status=SimulationJob.Status.FAILED if error else SimulationJob.Status.DONE,
        result=nonfinite_as_text(result) if result is not None else None,
        error=error,
        progress=1.0,
        progress_message="" if error else "done",
        finished_at=timezone.now(),
    )


def simulation_job_run(*, job_id: int) -> None:
    """Run a queued job (idempotent: a job already started or finished is left alone)."""
    claimed = SimulationJob.objects.filter(pk=job_id, status=SimulationJob.Status.QUEUED).update(
        status=SimulationJob.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return
    job = SimulationJob.objects.select_related("organisation").get(pk=job_id)
    try:
        result = _run(job)
    except SizingError as error:
        _finish(
            job_id, error={"code": error.code.value, "message": error.message, "extra": nonfinite_as_text(error.extra)}
        )
        return
    except SoftTimeLimitExceeded:
        raise  # over its time budget: the task marks the job failed with the budget (sizing.kernel.job_budgets)
    except Exception:
        logger.exception("simulation job %s failed", job_id)
        _finish(
            job_id,
            error={
                "code": "internal_error",
                "message": "the job failed unexpectedly; the error is in the worker's log",
                "extra": {},
            },
        )
        return
    if result is not None:  # a fanned-out search finishes when its last part does
        _finish(job_id, result=result)


def _run(job: SimulationJob) -> Any:
    context = job_context(organisation=job.organisation, inputs=job.inputs)
    result = _run_kind(job, context)
    if isinstance(result, dict) and context.environment is not None:
        result["environment"] = nonfinite_as_text(context.environment)
    return result


def _run_kind(job: SimulationJob, context: _JobContext) -> Any:
    inputs = job.inputs
    requests = int(inputs.get("requests") or SIMULATION_DEFAULT_REQUESTS)
    seed, hour = int(inputs.get("seed") or 0), inputs.get("hour")
    if job.kind in ("search", SimulationJob.Kind.QUOTE):  # a quote is a deployment search, read for sales
        return _search_start(job, context)
    plan = simulation_plan(
        gpu=context.gpu,
        model=context.model,
        parameters=context.parameters,
        max_queue=inputs.get("max_queue"),
        link=context.link,
        link_bytes_per_s=context.link_bytes_per_s,
        organisation=job.organisation,
        use_calibration=job.kind != "calibrate" and inputs.get("use_calibration", True),
    )
    if job.kind == "simulate":
        return simulation_run(
            plan=plan,
            profile=context.profile,
            load=inputs.get("load") or "rate",
            rate=inputs.get("rate"),
            concurrency=inputs.get("concurrency"),
            requests=requests,
            seed=seed,
            hour=hour,
            slo=context.slo,
            progress=_Progress(job.pk, "requests done"),
        )
    if job.kind == "sweep":
        spec = inputs.get("sweep") or {}
        sweep = load_sweep(
            plan,
            context.profile,
            kind=LoadKind(spec.get("kind") or "rate"),
            loads=spec.get("loads"),
            points=int(spec.get("points") or 8),
            requests=requests,
            seed=seed,
            hour=hour,
            slo=context.slo,
            progress=_Progress(job.pk, "load"),
        )
        payload = sweep.as_dict()
        payload.update(plan=plan.describe(), slo=context.slo.as_dict() if context.slo else None)
        return payload
    if job.kind == "slo_search":
        if context.slo is None:
            raise invalid_argument("slo", "give at least one SLO (ttft_s, tpot_s or e2e_s) to search the load for")
        search = max_rate_meeting_slo(
            plan,
            context.profile,
            context.slo,
            requests=requests,
            seed=seed,
            hour=hour,
            progress=_Progress(job.pk, "probe"),
        )
        payload = search.as_dict()
        payload.update(plan=plan.describe(), slo=context.slo.as_dict())
        return payload
    measurements = _measurements(inputs)
    calibration = perf_calibrate(plan.model, plan.config, measurements)
    payload = calibration.as_dict()
    payload["plan"] = plan.describe()
    payload["saved"] = False
    if inputs.get("save"):
        PerfCalibration.objects.create(
            organisation=job.organisation,
            gpu=context.gpu,
            engine=plan.memory.engine,
            efficiencies=payload["calibrated"],
            default_rms_log_error=payload["default_rms_log_error"],
            calibrated_rms_log_error=payload["calibrated_rms_log_error"],
            measurements=len(measurements),
            job=job,
        )
        payload["saved"] = True
    return payload


def _search_fanout(parts: int) -> bool:
    mode = settings.SIZING_SEARCH_FANOUT
    if mode == "never" or parts < 2:
        return False
    if mode == "always":
        return True
    from celery import current_app as app  # deploy.celery's app: the default one in every thread

    try:
        replies = app.control.inspect(timeout=1.0).ping() or {}
    except Exception:  # a broker without remote control (the filesystem broker): run here
        return False
    return len(replies) > 1


def search_arguments(job: SimulationJob, context: _JobContext) -> dict[str, Any]:
    inputs = job.inputs
    return {
        "profile": context.profile,
        "rate_per_s": float(inputs["rate"]),
        "slo": context.slo,
        "requests": int((inputs.get("search") or {}).get("requests") or SEARCH_DEFAULT_REQUESTS),
        "seed": int(inputs.get("seed") or 0),
        "hour": inputs.get("hour"),
        "max_model_len": inputs.get("max_model_len"),
    }


def _search_start(job: SimulationJob, context: _JobContext) -> Any:
    candidates = _search_candidates(context=context, inputs=job.inputs)
    arch = estimate_request_build(gpu=context.gpu, model=context.model, parameters=context.parameters).arch
    chunk = settings.SIZING_SEARCH_CHUNK
    parts = -(-len(candidates) // chunk)
    if not _search_fanout(parts):
        outcomes = evaluate_candidates(
            arch, candidates, progress=_Progress(job.pk, "candidate"), **search_arguments(job, context)
        )
        return _search_result(job, [o.as_dict() for o in outcomes])
    SimulationJob.objects.filter(pk=job.pk).update(parts_total=parts, progress_message=f"0/{parts} parts")

    for index in range(parts):
        simulation_search_part_task.delay(job.pk, index)
    return None


def simulation_search_part(*, job_id: int, index: int) -> None:
    """Evaluate one chunk of a fanned-out search; the last chunk to finish ranks them all and ends the job."""
    job = SimulationJob.objects.select_related("organisation").get(pk=job_id)
    if job.status != SimulationJob.Status.RUNNING or job.parts.filter(index=index).exists():
        return
    try:
        context = job_context(organisation=job.organisation, inputs=job.inputs)
        candidates = _search_candidates(context=context, inputs=job.inputs)
        arch = estimate_request_build(gpu=context.gpu, model=context.model, parameters=context.parameters).arch
        chunk = settings.SIZING_SEARCH_CHUNK
        outcomes = evaluate_candidates(
            arch, candidates[index * chunk : (index + 1) * chunk], **search_arguments(job, context)
        )
    except SizingError as error:
        _finish(
            job_id, error={"code": error.code.value, "message": error.message, "extra": nonfinite_as_text(error.extra)}
        )
        return
    with transaction.atomic():
        locked = SimulationJob.objects.select_for_update().get(pk=job_id)
        SimulationJobPart.objects.get_or_create(
            job=locked, index=index, defaults={"outcomes": nonfinite_as_text([o.as_dict() for o in outcomes])}
        )
        done = locked.parts.count()
        if locked.status != SimulationJob.Status.RUNNING:
            return
        if done < locked.parts_total:
            SimulationJob.objects.filter(pk=job_id).update(
                progress=done / locked.parts_total, progress_message=f"{done}/{locked.parts_total} parts"
            )
            return
        merged = [o for part in locked.parts.order_by("index") for o in part.outcomes]
        _finish(job_id, result=_search_result(locked, merged))


def _search_result(job: SimulationJob, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    ranked = sorted(outcomes, key=outcome_sort_key)
    result = {
        "rate": job.inputs.get("rate"),
        "slo": job.inputs.get("slo"),
        "candidates": len(ranked),
        "meeting_slo": sum(1 for o in ranked if o["meets_slo"]),
        "fitting": sum(1 for o in ranked if o["fits"]),
        "parts": job.parts_total or 1,
        "outcomes": ranked,
    }
    for key, extra in SEARCH_RESULT_EXTRAS.get(job.kind, ()):
        result[key] = extra(job, ranked)
    return result


# What a kind of search adds to its result once every candidate is ranked, registered by the module that owns the kind
# (sizing.services.quotes adds a quote's offer latencies; SizingConfig.ready imports it in every process), so that
# this module never imports the modules built on it.
SearchResultExtra = Callable[[SimulationJob, list[dict[str, Any]]], Any]
SEARCH_RESULT_EXTRAS: dict[str, list[tuple[str, SearchResultExtra]]] = {}


def search_result_extra_register(kind: str, key: str, extra: SearchResultExtra) -> None:
    """Add `extra(job, ranked)` under `key` to the result of every finished search of `kind` (once per key)."""
    extras = SEARCH_RESULT_EXTRAS.setdefault(kind, [])
    if all(existing != key for existing, _ in extras):
        extras.append((key, extra))

"""Load tests launched from the service (issue 7, parts 3–5): a scenario suite against a registered endpoint, run by
Celery workers on the `loadtests` queue, streamed into a benchmark run, judged against the deployment's SLOs and
memory commitment.

The life of a test:

1. `loadtest_create` checks the request (the endpoint must be one the organisation registered: load tests reach
   nothing else), builds the plan from the scenario (`benchmarks_app.loadtests.scenarios`), and saves the job, its
   shards and an empty benchmark run ("measuring") in one transaction; after the commit the shards are sent as a
   Celery group, one task per shard, with a common start time a few seconds ahead.
2. Each shard (`loadtest_shard_run`, a worker's part) waits for the common start, drives its share of the load
   (`benchmarks_app.loadtests.shard.shard_plan`) and, from a writer thread, stores every finished request into the run
   twice a second, beats its heartbeat, publishes its progress and watches for a cancel. Its result document is
   kept when it ends.
3. The last shard to end merges the shards' documents (`merge_documents`), re-imports the whole through our result
   importer (the same path an air-gapped agent's upload takes, so both give the same figures), replaces the streamed
   rows with the final ones, and judges the run: the memory verdict from the scraped metrics and the scenario's
   pass/fail (`load_memory_verdict`, `judge`).
4. A worker that dies stops beating; `loadtest_reap` (called whenever jobs are read, and by the periodic task) marks
   its shard failed after `LOADTEST_HEARTBEAT_TIMEOUT_S` and ends the job as failed with the reason, keeping the
   requests already stored and their figures. A job is never left "running".

Why a group and not a chord: a chord's callback needs a result backend and never runs when a worker dies mid-task,
which is exactly the case a load test must survive; the last shard to end (under a row lock) does the merge instead,
and the reaper covers the shards that never end.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import queue
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from benchmarks_app.loadtests.scenarios import scenario_plan
from benchmarks_app.loadtests.shard import merge_documents, shard_plan
from benchmarks_app.models import BenchmarkFile, BenchmarkRequest, BenchmarkRun, Endpoint, LoadTest, LoadTestShard
from benchmarks_app.results.analysis import run_distributions
from benchmarks_app.results.formats import llm_sizing
from benchmarks_app.results.run import RequestRecord, metrics_from_requests
from benchmarks_app.services.endpoints import endpoint_api_key
from benchmarks_app.services.runs import record_row, requests_store, run_fields, run_verdict, server_series
from benchmarks_app.tasks import loadtest_shard_task
from llm_sizing_loadgen.client import RequestResult
from llm_sizing_loadgen.plan import (
    Api,
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
    plan_from_dict,
)
from llm_sizing_loadgen.result import request_entry, result_document, result_json
from llm_sizing_loadgen.runner import LoadRunner, Progress
from llm_sizing_loadgen.workload import fixed_profile, profile_from_dict
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.job_budgets import JobKind, over_budget_message
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Deployment, Organisation, WorkloadProfile

logger = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.5  # the writer thread stores requests and beats this often
DEFAULT_INPUT_TOKENS = 512
DEFAULT_OUTPUT_TOKENS = 128
SIMULATOR_KILL_S = 10.0  # the simulator's replica comes back after this long (scaled with the test)
NAME_MAX_LENGTH = 255


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


def _number(
    data: Mapping[str, Any],
    key: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    integer: bool = False,
) -> float | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _invalid(key, f"{key} must be a number (got {value!r})") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise _invalid(key, f"{key} must be a number (got {value!r})")
    if integer and number != int(number):
        raise _invalid(key, f"{key} must be a whole number (got {value!r})")
    if minimum is not None and number < minimum:
        raise _invalid(key, f"{key} must be at least {minimum:g} (got {number:g})")
    if maximum is not None and number > maximum:
        raise _invalid(key, f"{key} must be at most {maximum:g} (got {number:g})")
    return int(number) if integer else number


# ---------------------------------------------------------------------------------------------------------------
# Building the plan


def endpoint_spec(endpoint: Endpoint, *, api: Api = Api.COMPLETIONS) -> EndpointSpec:
    return EndpointSpec(
        base_url=endpoint.base_url, model=endpoint.model_name, api=api, engine=endpoint.get_kind_display()
    )


def endpoint_metrics(endpoint: Endpoint) -> MetricsSpec | None:
    """The endpoint's Prometheus metrics (the simulator serves them beside its API)."""
    url = endpoint.metrics_url or (
        endpoint.base_url.rstrip("/") + "/metrics" if endpoint.kind == Endpoint.Kind.SIMULATOR else ""
    )
    engine = (
        endpoint.kind
        if endpoint.kind in ("vllm", "sglang", "tgi", "trtllm")
        else ("vllm" if endpoint.kind == Endpoint.Kind.SIMULATOR else None)
    )
    return MetricsSpec(url=url, interval_s=1.0, engine=engine) if url else None


def endpoint_fault(endpoint: Endpoint, *, scale: float) -> FaultSpec:
    """The failure a failure-injection test causes: on the bundled simulator, one replica killed through its control
    endpoint (back after SIMULATOR_KILL_S × scale); elsewhere, the operator's command registered on the endpoint."""
    if endpoint.kind == Endpoint.Kind.SIMULATOR:
        seconds = max(1.0, SIMULATOR_KILL_S * scale)
        return FaultSpec(
            at_s=0.0,
            kind=FaultKind.HTTP,
            url=endpoint.base_url.rstrip("/") + "/control",
            method="POST",
            body={"action": "kill_replica", "replica": 0, "seconds": seconds},
            label=f"simulator: replica 0 killed for {seconds:g} s",
        )
    if not endpoint.failure_command:
        raise _invalid(
            "scenario",
            f"a failure-injection test needs a way to cause the failure: an admin registers "
            f"the command that kills a worker or drops a replica on endpoint "
            f"{endpoint.name!r} (its failure command)",
        )
    argv = tuple(str(part) for part in endpoint.failure_command)
    return FaultSpec(at_s=0.0, kind=FaultKind.COMMAND, argv=argv, timeout_s=60.0, label=f"operator command: {argv[0]}")


def deployment_defaults(deployment: Deployment | None, *, tokens_per_request: float) -> dict[str, Any]:
    """What a deployment promises, as a load test's defaults: its SLOs, the memory per GPU it commits to, and the
    peak concurrency its KV cache holds at this traffic (`kv_capacity_tokens` over the mean input + output tokens per
    request: more requests than that at once and the engine must queue or preempt)."""
    if deployment is None:
        return {}
    from sizing.services.deployments import deployment_commitment

    found: dict[str, Any] = {"slo": dict(deployment.slo or {}), **deployment_commitment(deployment=deployment)}
    capacity = found.get("kv_capacity_tokens")
    if capacity and tokens_per_request > 0:
        found["peak_concurrency"] = max(1, math.floor(capacity / tokens_per_request))
        found["peak_concurrency_source"] = (
            f"the estimate's KV cache holds {capacity:,} tokens; at {tokens_per_request:,.0f} tokens per request "
            f"(input + output) that is {found['peak_concurrency']:,} requests at once"
        )
    return found


def tokens_per_request(spec: RequestSpec) -> float:
    """Mean input + output tokens of the test's requests (the profile's classes weighted by their shares)."""
    profile = spec.profile
    total = sum(cls.share for cls in profile.classes) or 1.0
    return sum(cls.share * (cls.input.mean + cls.output.mean) for cls in profile.classes) / total


def requests_spec(organisation: Organisation, data: Mapping[str, Any]) -> RequestSpec:
    workload_id = _number(data, "workload", minimum=1, maximum=2**63 - 1, integer=True)
    if workload_id is not None:
        workload_id = int(workload_id)
        row = (
            WorkloadProfile.objects.filter(pk=workload_id, organisation=organisation).first()
            or WorkloadProfile.objects.filter(pk=workload_id, organisation__isnull=True).first()
        )
        if row is None:
            raise _invalid("workload", f"no workload profile {workload_id}")
        return RequestSpec(profile=profile_from_dict(row.profile), fixed=False)
    input_tokens = _number(data, "input_tokens", minimum=1, maximum=1_000_000, integer=True)
    output_tokens = _number(data, "output_tokens", minimum=1, maximum=100_000, integer=True)
    return RequestSpec(
        profile=fixed_profile(
            input_tokens=int(input_tokens or DEFAULT_INPUT_TOKENS),
            output_tokens=int(output_tokens or DEFAULT_OUTPUT_TOKENS),
        ),
        fixed=True,
    )


def _custom_plan(
    data: Mapping[str, Any],
    *,
    endpoint: EndpointSpec,
    requests: RequestSpec,
    metrics: MetricsSpec | None,
    criteria: Mapping[str, Any],
    peak: int | None,
) -> TestPlan:
    concurrency = _number(data, "concurrency", minimum=1, maximum=100_000, integer=True)
    rate = _number(data, "rate", minimum=0.001, maximum=100_000)
    if (concurrency is None) == (rate is None) and rate is None:
        raise _invalid("concurrency", "a custom load needs a concurrency (closed loop) or a rate (open loop)")
    duration = _number(data, "duration_s", minimum=1, maximum=settings.LOADTEST_MAX_DURATION_S)
    max_requests = _number(data, "max_requests", minimum=1, maximum=10_000_000, integer=True)
    if duration is None and max_requests is None:
        raise _invalid("duration_s", "a custom load needs a duration or a number of requests")
    ramp = _number(data, "ramp_up_s", minimum=0, maximum=3600) or 0.0
    if rate is not None:
        load = LoadSpec(
            mode=LoadMode.OPEN, rate=rate, concurrency=int(concurrency) if concurrency else None, ramp_up_s=ramp
        )
    else:
        load = LoadSpec(mode=LoadMode.CLOSED, concurrency=int(concurrency or 1), ramp_up_s=ramp)
    return TestPlan(
        endpoint=endpoint,
        load=load,
        requests=requests,
        bounds=Bounds(max_requests=int(max_requests) if max_requests else None, max_duration_s=duration),
        warmup_s=ramp,
        metrics=metrics,
        scenario=ScenarioSpec(kind="custom", peak_concurrency=peak, criteria=dict(criteria)),
    )


def loadtest_plan(
    *,
    organisation: Organisation,
    endpoint: Endpoint,
    scenario: str,
    data: Mapping[str, Any],
    peak_concurrency: int | None,
    slo: Mapping[str, float],
) -> TestPlan:
    """The plan a scenario makes for this endpoint (the API key is never in it)."""
    api = Api.CHAT if data.get("api") == "chat" else Api.COMPLETIONS
    spec = endpoint_spec(endpoint, api=api)
    requests = requests_spec(organisation, data)
    metrics = endpoint_metrics(endpoint)
    scale = _number(data, "scale", minimum=0.001, maximum=1.0) or 1.0
    criteria: dict[str, Any] = {key: value for key, value in slo.items()}
    attainment = _number(data, "attainment", minimum=0.5, maximum=1.0)
    if attainment is not None:
        criteria["attainment"] = attainment
    recovery = _number(data, "recovery_s", minimum=1, maximum=3600)
    if recovery is not None:
        criteria["recovery_s"] = recovery
    if scenario == LoadTest.Scenario.CUSTOM:
        plan = _custom_plan(
            data, endpoint=spec, requests=requests, metrics=metrics, criteria=criteria, peak=peak_concurrency
        )
    else:
        if peak_concurrency is None:
            raise _invalid(
                "peak_concurrency",
                "give the deployment's peak concurrency (the scenarios load a share "
                "of it), or choose a deployment whose estimate gives it",
            )
        fault = endpoint_fault(endpoint, scale=scale) if scenario == LoadTest.Scenario.FAILURE else None
        duration = _number(data, "duration_s", minimum=1, maximum=settings.LOADTEST_MAX_DURATION_S)
        max_requests = _number(data, "max_requests", minimum=1, maximum=10_000_000, integer=True)
        try:
            plan = scenario_plan(
                scenario,
                endpoint=spec,
                peak_concurrency=peak_concurrency,
                requests=requests,
                duration_s=duration,
                scale=scale,
                fault=fault,
                metrics=metrics,
                criteria=criteria,
                seed=int(_number(data, "seed", minimum=0, integer=True) or 0),
                max_requests=int(max_requests) if max_requests else None,
            )
        except PlanError as error:
            path, message = error.problems[0] if error.problems else ("", str(error))
            raise _invalid("scenario", f"{path}: {message}" if path else message) from None
        except ValueError as error:
            raise _invalid("scenario", str(error)) from None
    total = plan.bounds.max_duration_s
    if total is not None and total > settings.LOADTEST_MAX_DURATION_S:
        raise _invalid(
            "duration_s", f"the test would last {total:g} s; the limit is {settings.LOADTEST_MAX_DURATION_S:g} s"
        )
    return plan


# ---------------------------------------------------------------------------------------------------------------
# Creating, cancelling


def loadtest_create(*, organisation: Organisation, user: Any, data: Mapping[str, Any]) -> LoadTest:
    """A new load test of the organisation, queued: `data` holds endpoint (id), scenario, and optionally deployment
    (id), name, peak_concurrency, slo, committed_bytes_per_gpu, workers, scale, duration_s, max_requests,
    input_tokens/output_tokens or workload (id), api, attainment, recovery_s; custom loads concurrency or rate."""
    endpoint = Endpoint.objects.filter(pk=data.get("endpoint"), organisation=organisation).first()
    if endpoint is None:
        raise _invalid(
            "endpoint",
            f"no endpoint {data.get('endpoint')!r} is registered in your organisation: load "
            "tests reach registered endpoints only",
        )
    scenario = str(data.get("scenario") or "")
    if scenario not in LoadTest.Scenario.values:
        raise _invalid("scenario", f"scenario must be one of {', '.join(LoadTest.Scenario.values)}")
    deployment = None
    if data.get("deployment") not in (None, ""):
        deployment = Deployment.objects.filter(pk=data.get("deployment"), organisation=organisation).first()
        if deployment is None:
            raise _invalid("deployment", f"no deployment {data.get('deployment')!r}")
    defaults = deployment_defaults(deployment, tokens_per_request=tokens_per_request(requests_spec(organisation, data)))
    peak = _number(data, "peak_concurrency", minimum=1, maximum=1_000_000, integer=True)
    peak = int(peak) if peak is not None else defaults.get("peak_concurrency")
    slo = data.get("slo")
    if slo in (None, "", {}):
        slo = defaults.get("slo") or {}
    if not isinstance(slo, Mapping):
        raise _invalid("slo", "SLOs are an object: {ttft_ms, tpot_ms, e2e_ms}, each optional")
    slo_clean: dict[str, float] = {}
    for key, value in slo.items():
        if key not in ("ttft_ms", "tpot_ms", "e2e_ms"):
            raise _invalid("slo", f"unknown SLO {key}; use ttft_ms, tpot_ms, e2e_ms")
        number = _number({key: value}, key, minimum=0.001)
        if number is not None:
            slo_clean[key] = number
    committed = _number(data, "committed_bytes_per_gpu", minimum=1, integer=True)
    committed = int(committed) if committed is not None else defaults.get("committed_bytes_per_gpu")
    workers = int(_number(data, "workers", minimum=1, maximum=settings.LOADTEST_MAX_WORKERS, integer=True) or 1)
    plan = loadtest_plan(
        organisation=organisation, endpoint=endpoint, scenario=scenario, data=data, peak_concurrency=peak, slo=slo_clean
    )
    try:
        for index in range(workers):
            shard_plan(plan, index, workers)
    except PlanError as error:
        raise _invalid("workers", error.problems[0][1] if error.problems else str(error)) from None
    name = str(data.get("name") or "").strip() or (
        f"{LoadTest.Scenario(scenario).label} · {endpoint.name} · {timezone.now():%Y-%m-%d %H:%M}"
    )
    with transaction.atomic():
        run = BenchmarkRun.objects.create(
            organisation=organisation,
            created_by=user,
            name=str(name)[:NAME_MAX_LENGTH],
            deployment=deployment,
            model=deployment.model if deployment else None,
            model_name=endpoint.model_name[:255],
            gpu=deployment.gpu if deployment else None,
            gpu_count=deployment.gpu_count if deployment else None,
            tp=deployment.tp if deployment else None,
            engine=endpoint.kind if endpoint.kind != "openai" else "",
            format=llm_sizing.FORMAT,
            tool="llm_sizing",
            label=str(scenario),
            backend=endpoint.get_kind_display(),
            status=BenchmarkRun.Status.RUNNING,
            progress=0.0,
            progress_message="queued",
        )
        job = LoadTest.objects.create(
            organisation=organisation,
            created_by=user,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            deployment=deployment,
            name=str(name)[:NAME_MAX_LENGTH],
            scenario=scenario,
            plan=nonfinite_as_text(plan.to_dict()),
            workers=workers,
            peak_concurrency=peak,
            slo=slo_clean,
            committed_bytes_per_gpu=committed,
            run=run,
        )
        LoadTestShard.objects.bulk_create([LoadTestShard(job=job, index=index) for index in range(workers)])
        job_id = job.pk
        job_publish_on_commit(
            kind="load_test",
            job_id=job_id,
            publish=lambda: loadtest_dispatch(job_id=job_id),
            fail=lambda error: loadtest_publish_failed(job_id=job_id, error=error),
        )
    return job


def loadtest_publish_failed(*, job_id: int, error: dict[str, Any]) -> None:
    """End a queued test as failed, its shards and its run with it: the broker did not take its shards."""
    now = timezone.now()
    with transaction.atomic():
        if not LoadTest.objects.filter(pk=job_id, status=LoadTest.Status.QUEUED).update(
            status=LoadTest.Status.FAILED, error=error, finished_at=now
        ):
            return
        LoadTestShard.objects.filter(job_id=job_id, status=LoadTestShard.Status.QUEUED).update(
            status=LoadTestShard.Status.FAILED, error=error["message"]
        )
        BenchmarkRun.objects.filter(
            pk__in=LoadTest.objects.filter(pk=job_id).values("run_id"), status=BenchmarkRun.Status.RUNNING
        ).update(status=BenchmarkRun.Status.FAILED, error=error, progress_message="", finished_at=now)


def loadtest_dispatch(*, job_id: int) -> None:
    """Send the job's shards to the `loadtests` queue as one Celery group, with a common start a little ahead."""
    from celery import group

    job = LoadTest.objects.get(pk=job_id)
    lead = settings.LOADTEST_START_LEAD_S * (1 if job.workers == 1 else 2)
    LoadTest.objects.filter(pk=job_id).update(start_at=timezone.now() + timedelta(seconds=lead))
    group(loadtest_shard_task.si(job_id, index) for index in range(job.workers)).apply_async()


def loadtest_cancel(*, job: LoadTest) -> LoadTest:
    """Stop a test: a queued one ends at once; a running one stops within a second, keeping what was measured (its
    shards see the flag, cut their requests in flight and end as cancelled). A finished one is left as it is."""
    with transaction.atomic():
        locked = LoadTest.objects.select_for_update().get(pk=job.pk)
        if locked.status in LoadTest.FINAL:
            return locked
        locked.cancel_requested = True
        locked.save(update_fields=["cancel_requested"])
        if locked.status == LoadTest.Status.QUEUED:
            locked.shards.filter(status=LoadTestShard.Status.QUEUED).update(status=LoadTestShard.Status.CANCELLED)
            _finalise(locked)
    return LoadTest.objects.get(pk=job.pk)


def loadtest_delete(*, job: LoadTest) -> None:
    """Delete a finished test and its benchmark run."""
    if job.status not in LoadTest.FINAL:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="cancel the test before deleting it",
            extra={"fields": {"status": ["the test is still " + job.status]}},
        )
    with transaction.atomic():
        if job.run_id:
            BenchmarkRun.objects.filter(pk=job.run_id).delete()
        job.delete()


# ---------------------------------------------------------------------------------------------------------------
# The worker's part


class _ShardWriter(threading.Thread):
    """Stores the shard's finished requests into the run every FLUSH_INTERVAL_S, beats its heartbeat, publishes the
    progress and passes a cancel on to the runner. Runs beside the event loop, with its own database connection."""

    def __init__(
        self, *, job_id: int, shard_id: int, run_id: int | None, index: int, count: int, anchor_ns: int, offset_s: float
    ) -> None:
        super().__init__(name=f"loadtest-{job_id}-{index}", daemon=True)
        self.job_id, self.shard_id, self.run_id = job_id, shard_id, run_id
        self.index, self.count = index, count
        self.anchor_ns, self.offset_s = anchor_ns, offset_s
        self.finished: queue.SimpleQueue[RequestResult] = queue.SimpleQueue()
        self.progress: Progress | None = None
        self.runner: LoadRunner | None = None
        self.cancelled = False
        self._halt = threading.Event()

    def on_request(self, record: RequestResult) -> None:
        self.finished.put(record)

    def on_progress(self, progress: Progress) -> None:
        self.progress = progress

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=60)

    def run(self) -> None:
        try:
            while not self._halt.wait(FLUSH_INTERVAL_S):
                self._flush()
            self._flush()
        finally:
            connection.close()

    def _flush(self) -> None:
        records: list[RequestResult] = []
        while True:
            try:
                records.append(self.finished.get_nowait())
            except queue.Empty:
                break
        try:
            rows = [self._row(record) for record in records]
            if rows and self.run_id is not None:
                BenchmarkRequest.objects.bulk_create(rows, batch_size=1000)
            update: dict[str, Any] = {"heartbeat_at": timezone.now(), "stored": F("stored") + len(rows)}
            if self.progress is not None:
                update["progress"] = _progress_dict(self.progress)
            LoadTestShard.objects.filter(pk=self.shard_id).update(**update)
            if not self.cancelled and LoadTest.objects.filter(pk=self.job_id, cancel_requested=True).exists():
                self.cancelled = True
                if self.runner is not None:
                    self.runner.cancel()
        except Exception:  # the database may be away for a moment: the next flush tries again
            logger.exception("load test %s shard %s: storing progress failed", self.job_id, self.index)
            for record in records:
                self.finished.put(record)

    def _row(self, record: RequestResult) -> BenchmarkRequest:
        """The request as a stored row: times on the test's common clock, the index unique across shards."""
        parsed = llm_sizing.record_from_entry(request_entry(record, self.anchor_ns), origin=-self.offset_s)
        row = record_row(None, record.index * self.count + self.index, parsed)
        row.run_id = self.run_id
        return row


def _progress_dict(progress: Progress) -> dict[str, Any]:
    return nonfinite_as_text(
        {
            "elapsed_s": round(progress.elapsed_s, 3),
            "sent": progress.sent,
            "done": progress.done,
            "ok": progress.ok,
            "failed": progress.failed,
            "in_flight": progress.in_flight,
            "rate_per_s": round(progress.rate_per_s, 3),
            "ttft_p50_ms": progress.ttft_p50_ms,
            "ttft_p99_ms": progress.ttft_p99_ms,
            "tpot_p50_ms": progress.tpot_p50_ms,
            "tpot_p99_ms": progress.tpot_p99_ms,
            "fraction": progress.fraction,
        }
    )


def _claim(job_id: int, index: int) -> tuple[LoadTest, LoadTestShard] | None:
    """Mark the shard running (once: a redelivered task finds it taken and stops)."""
    with transaction.atomic():
        job = LoadTest.objects.select_for_update(of=("self",)).select_related("endpoint").filter(pk=job_id).first()
        if job is None:
            return None
        shard = LoadTestShard.objects.select_for_update().filter(job=job, index=index).first()
        if shard is None or shard.status != LoadTestShard.Status.QUEUED:
            return None
        now = timezone.now()
        if job.status in LoadTest.FINAL or job.cancel_requested:
            shard.status = LoadTestShard.Status.CANCELLED
            shard.save(update_fields=["status"])
            return None
        shard.status = LoadTestShard.Status.RUNNING
        shard.worker = socket.gethostname()[:255]
        shard.heartbeat_at = now
        shard.save(update_fields=["status", "worker", "heartbeat_at"])
        if job.status == LoadTest.Status.QUEUED:
            job.status = LoadTest.Status.RUNNING
            job.started_at = now
            job.save(update_fields=["status", "started_at"])
            BenchmarkRun.objects.filter(pk=job.run_id).update(progress_message="measuring")
        return job, shard


def loadtest_shard_run(*, job_id: int, index: int) -> None:
    """Run one shard of a load test to its end (the `loadtests` worker's part). Never raises: whatever happens, the
    shard ends done, cancelled or failed with the reason, and the last shard to end finishes the job."""
    claimed = _claim(job_id, index)
    if claimed is None:
        return
    job, shard = claimed
    status, document, error = LoadTestShard.Status.FAILED, None, ""
    started_at = None
    try:
        endpoint = job.endpoint
        if endpoint is None:
            raise RuntimeError("the endpoint was deleted before the test started")
        plan = shard_plan(plan_from_dict(job.plan), index, job.workers)
        api_key = endpoint_api_key(endpoint)
        start_at = job.start_at or timezone.now()
        wait_s = (start_at - timezone.now()).total_seconds()
        if job.workers > 1 and wait_s < -settings.LOADTEST_LATE_START_S:
            raise RuntimeError(
                f"this shard started {-wait_s:.0f} s after the common start: there were not "
                f"{job.workers} free workers on the loadtests queue; run fewer workers or add some"
            )
        if wait_s > 0:
            time.sleep(min(wait_s, settings.LOADTEST_START_LEAD_S * 4))
        started_at = timezone.now()
        offset_s = (started_at - start_at).total_seconds() if job.workers > 1 else 0.0
        LoadTestShard.objects.filter(pk=shard.pk).update(started_at=started_at)
        writer = _ShardWriter(
            job_id=job.pk,
            shard_id=shard.pk,
            run_id=job.run_id,
            index=index,
            count=job.workers,
            anchor_ns=time.perf_counter_ns(),
            offset_s=offset_s,
        )
        runner = LoadRunner(plan, api_key=api_key, on_progress=writer.on_progress, on_request=writer.on_request)
        writer.runner = runner
        writer.start()
        try:
            outcome = asyncio.run(runner.run())
        finally:
            writer.stop()
        document = result_document(outcome)
        status = LoadTestShard.Status.CANCELLED if outcome.stop_reason == "cancelled" else LoadTestShard.Status.DONE
    except SoftTimeLimitExceeded:  # over its time budget (sizing.kernel.job_budgets): what was measured is kept
        error = over_budget_message(JobKind.LOADTEST_SHARD)
    except Exception as exc:  # the shard must end, with the reason
        logger.exception("load test %s shard %s failed", job_id, index)
        error = str(exc) or type(exc).__name__
    _shard_end(job_id, index, status=status, document=document, error=error, started_at=started_at)


def _shard_end(
    job_id: int, index: int, *, status: str, document: dict[str, Any] | None, error: str, started_at: datetime | None
) -> None:
    with transaction.atomic():
        job = LoadTest.objects.select_for_update().get(pk=job_id)
        updated = LoadTestShard.objects.filter(job=job, index=index, status=LoadTestShard.Status.RUNNING).update(
            status=status,
            result=result_json(document) if document is not None else "",
            error=error[:4000],
            heartbeat_at=timezone.now(),
        )
        if not updated:
            return  # the reaper already gave up on this shard
        if status == LoadTestShard.Status.FAILED and not job.cancel_requested:
            # the other shards stop too: the test cannot be what was asked any more
            LoadTest.objects.filter(pk=job_id).update(cancel_requested=True)
            job.cancel_requested = True
        if job.status not in LoadTest.FINAL and not job.shards.exclude(status__in=LoadTestShard.FINAL).exists():
            _finalise(job)


# ---------------------------------------------------------------------------------------------------------------
# Finishing: merge, import, judge


def _finalise(job: LoadTest) -> None:
    """End the job (called under its row lock once every shard has ended): the run's figures, the verdict, the
    status. Never raises: a failure to merge ends the job failed with the reason."""
    shards = list(job.shards.order_by("index"))
    failures = [
        f"shard {shard.index + 1}: {shard.error}" for shard in shards if shard.status == LoadTestShard.Status.FAILED
    ]
    run = BenchmarkRun.objects.filter(pk=job.run_id).first()
    verdict: dict[str, Any] = {}
    error: dict[str, Any] | None = None
    try:
        if run is not None:
            if shards and all(shard.result for shard in shards):
                verdict = _import_merged(job, run, shards)
            else:
                _figures_from_rows(run)
    except Exception as exc:
        logger.exception("finishing load test %s failed", job.pk)
        failures.append(f"merging the results failed: {exc}")
    if failures:
        status = LoadTest.Status.FAILED
        error = {"code": "load_test_failed", "message": "; ".join(failures), "extra": {}}
    elif job.cancel_requested:
        status = LoadTest.Status.CANCELLED
    else:
        status = LoadTest.Status.DONE
    if verdict and status != LoadTest.Status.DONE:
        verdict = {**verdict, "partial": True}  # judged over what was measured before the test stopped
    now = timezone.now()
    LoadTest.objects.filter(pk=job.pk).update(
        status=status, verdict=nonfinite_as_text(verdict), error=error, finished_at=now
    )
    if run is not None:
        message = {
            LoadTest.Status.DONE: "measured",
            LoadTest.Status.CANCELLED: "cancelled: what was measured is kept",
            LoadTest.Status.FAILED: "failed: what was measured is kept",
        }[status]
        BenchmarkRun.objects.filter(pk=run.pk).update(
            status=BenchmarkRun.Status.FAILED if status == LoadTest.Status.FAILED else BenchmarkRun.Status.DONE,
            progress=1.0,
            progress_message=message,
            finished_at=now,
            error=error,
            verdict=nonfinite_as_text(verdict),
        )
    job.status = status


def _import_merged(job: LoadTest, run: BenchmarkRun, shards: Sequence[LoadTestShard]) -> dict[str, Any]:
    documents = [json.loads(shard.result) for shard in shards]
    start = (
        job.start_at
        if job.workers > 1 and job.start_at
        else min((shard.started_at for shard in shards if shard.started_at), default=None)
    )
    offsets = [
        ((shard.started_at - start).total_seconds() if start and shard.started_at and job.workers > 1 else 0.0)
        for shard in shards
    ]
    started_at = (
        (start or timezone.now()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if job.workers > 1
        else documents[0]["run"]["started_at"]
    )
    merged = merge_documents(documents, offsets_s=offsets, started_at=started_at, plan=job.plan)
    text = result_json(merged)
    (imported,) = llm_sizing.read(text)
    stored = BenchmarkFile.objects.create(
        organisation=job.organisation,
        name=f"load-test-{job.pk}.json",
        format=llm_sizing.FORMAT,
        size_bytes=len(text.encode()),
        sha256=_sha256(text),
        content=text,
        uploaded_by=job.created_by,
    )
    fields = run_fields(imported)
    fields.pop("model_name", None)
    BenchmarkRequest.objects.filter(run=run).delete()
    for _ in requests_store(run, imported.requests):
        pass
    fidelity = ((merged.get("summary") or {}).get("client_fidelity") or {}).get("valid")
    verdict = run_verdict(
        imported,
        slo=job.slo or {},
        committed_bytes_per_gpu=job.committed_bytes_per_gpu,
        peak_concurrency=job.peak_concurrency,
        fidelity_valid=fidelity,
    )
    BenchmarkRun.objects.filter(pk=run.pk).update(file=stored, server_series=server_series(imported.timeline), **fields)
    return verdict


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _figures_from_rows(run: BenchmarkRun) -> None:
    """The run's figures from the requests stored so far (a test that did not end cleanly: no merged document)."""
    records = [
        RequestRecord(
            status=row.status,
            error=row.error or None,
            start_s=row.start_s,
            ttft_ms=row.ttft_ms,
            ttft_sched_ms=row.ttft_sched_ms,
            e2e_ms=row.e2e_ms,
            tpot_ms=row.tpot_ms,
            itl_ms=tuple(row.itl_ms or ()),
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
        )
        for row in BenchmarkRequest.objects.filter(run=run).order_by("start_s", "index")
    ]
    completed = sum(1 for record in records if record.status == "ok")
    incomplete = sum(1 for record in records if record.status == "incomplete")
    notes = [
        *(run.notes or []),
        f"The test did not end cleanly: these figures are over the {len(records):,} request(s) stored before "
        "it stopped (no measurement window, no throughputs).",
    ]
    BenchmarkRun.objects.filter(pk=run.pk).update(
        completed=completed,
        incomplete=incomplete,
        failed=len(records) - completed - incomplete,
        request_count=len(records),
        notes=notes,
        metrics=nonfinite_as_text({key: stat.as_dict() for key, stat in metrics_from_requests(records).items()}),
        distributions=nonfinite_as_text(run_distributions(records)),
    )


# ---------------------------------------------------------------------------------------------------------------
# Workers that die


def loadtest_reap(*, now: datetime | None = None) -> int:
    """End the jobs whose workers are gone: a running shard whose heartbeat is older than
    LOADTEST_HEARTBEAT_TIMEOUT_S, or a shard no worker took within LOADTEST_QUEUE_TIMEOUT_S of the start, is failed
    with the reason; a job whose shards have all ended is finished (failed, with what was measured). Returns the
    number of jobs ended."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.LOADTEST_HEARTBEAT_TIMEOUT_S)
    unclaimed = now - timedelta(seconds=settings.LOADTEST_QUEUE_TIMEOUT_S)
    candidates = (
        LoadTest.objects.filter(status__in=(LoadTest.Status.QUEUED, LoadTest.Status.RUNNING))
        .filter(shards__status__in=(LoadTestShard.Status.QUEUED, LoadTestShard.Status.RUNNING))
        .distinct()
    )
    ended = 0
    for job_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            job = LoadTest.objects.select_for_update().get(pk=job_id)
            if job.status in LoadTest.FINAL:
                continue
            lost = job.shards.filter(status=LoadTestShard.Status.RUNNING, heartbeat_at__lt=stale)
            started = job.start_at or job.created_at
            never = job.shards.filter(status=LoadTestShard.Status.QUEUED) if started < unclaimed else job.shards.none()
            changed = 0
            for shard in lost:
                seconds = (now - shard.heartbeat_at).total_seconds() if shard.heartbeat_at else 0
                changed += LoadTestShard.objects.filter(pk=shard.pk, status=LoadTestShard.Status.RUNNING).update(
                    status=LoadTestShard.Status.FAILED,
                    error=f"the worker running it ({shard.worker or 'unknown'}) was lost: no heartbeat for "
                    f"{seconds:.0f} s",
                )
            changed += never.update(
                status=LoadTestShard.Status.FAILED,
                error="no worker on the loadtests queue took it: start a worker with `-Q loadtests`",
            )
            if not changed:
                continue
            LoadTest.objects.filter(pk=job_id).update(cancel_requested=True)
            job.cancel_requested = True
            if not job.shards.exclude(status__in=LoadTestShard.FINAL).exists():
                _finalise(job)
                ended += 1
    return ended

"""The report's content, gathered from what the service holds about a deployment (issue 8, part 2): its plan and
estimate, the newest fingerprint of each of its machines, its load tests and its monitoring logs. The content is a
JSON-safe snapshot stored with the version, so a signed version renders the same forever (`reports.document`
documents the shape).

What the commitment says, and from where:

- **Peak per card** (commitment 1): the estimate's required memory per GPU. For engines that reserve their memory at
  start (vLLM, SGLang, TensorRT-LLM) it is their budget (`--gpu-memory-utilization` × the card) plus what lives
  outside it (CUDA graphs, non-torch memory) — it is there from the first second, whatever the load; for engines that
  grow on demand, the estimate's demand at its stated concurrency (DESIGN §11).
- **KV overflow probability**: the share of time the KV demand exceeds the cache, from the performance simulator
  over the deployment's workload at its rate (2,000 requests); None when the deployment names no workload or rate.
- **Protection** (commitment 2): the engine budget flag; input and output limits at the 99.9th percentile of the
  workload's longest class, within max_model_len (max_model_len without a workload); per-tenant concurrency and the
  bounded queue from the KV capacity; the breaker on KV-cache usage for engines that reserve (above 95 % for 5 s:
  refuse new requests, recover within 30 s), on GPU memory for the others; the exact configuration to apply.
- **Missing**: what a commitment should rest on and the service does not hold yet (no fingerprint, no load test of
  each scenario passed, no monitoring log, a plan's release newer than the rules modelled) — listed in the report,
  never hidden.
- **Release**: the engine release the commitment holds for (the plan's `engine_version`, "latest" being the newest
  release modelled when the content is gathered), how it is installed (pip or the official image) and the line that
  installs exactly it; the configuration to apply starts with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from django.utils import timezone
from django.utils.translation import get_language, gettext_lazy, override
from django.utils.translation import gettext as _

from benchmarks_app.models import LoadTest, MemoryLog
from llm_sizing_loadgen.workload import profile_from_dict
from reports.models import Report
from reports.selectors.health_reports import latest_health_report
from sizing.estimator.confidence import (
    PROBABILITY,
    Measurement,
    reserved_confidence,
    simulated_confidence,
    with_measurements,
)
from sizing.estimator.errors import SizingError
from sizing.estimator.versions import parse_version
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Deployment
from sizing.services.deployments import deployment_release, estimate_parameters, fingerprint_report
from sizing.services.estimates import estimate_report
from sizing.services.simulations import simulation_plan, simulation_run
from sizing.texts.findings import finding_text

RESERVING_ENGINES = ("vllm", "sglang", "trtllm")
GIB = 1024**3
SIMULATED_REQUESTS = 2000
PEAK_SAMPLES = 2000  # KV timeline buckets (each its maximum) for an engine that grows on demand: ≥ 1,000 for 99.9 %
LIMIT_SAMPLES = 20_000  # lengths drawn per class for the request limits
BREAKER_KV = {
    "metric": "vllm:kv_cache_usage_perc",
    "threshold": 0.95,
    "for_s": 5.0,
    "action": "refuse new requests (HTTP 503) until it falls below the threshold",
    "recover_within_s": 30.0,
}
SCENARIOS_NEEDED = ("pulse", "long_tail", "failure")
GAUGE_RESOLUTION_BYTES = 1024**2  # nvidia-smi and DCGM report MiB: a measured peak's tolerance when none is stated
SCENARIO_WORDS = {
    "pulse": gettext_lazy("pulse"),
    "long_tail": gettext_lazy("long-tail"),
    "failure": gettext_lazy("failure-injection"),
}
BILL_LABELS = {
    "weights": gettext_lazy("Weights"),
    "kv_cache": gettext_lazy("KV cache"),
    "activations": gettext_lazy("Activations"),
    "runtime": gettext_lazy("Runtime (non-torch)"),
    "cuda_graphs": gettext_lazy("CUDA graphs"),
}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def _machines(deployment: Deployment, language: str) -> list[dict[str, Any]]:
    """The deployment's chosen machines (each a host with one fingerprint version), never "the latest upload"."""
    from sizing.selectors.deployments import chosen_machines, fingerprint_versions

    machines = []
    with override(language):
        for fingerprint in chosen_machines(deployment):
            report = fingerprint_report(fingerprint=fingerprint)
            facts = report["facts"]
            versions = [f.pk for f in fingerprint_versions(fingerprint=fingerprint)]
            machines.append(
                {
                    "id": fingerprint.pk,
                    "host": fingerprint.host,
                    "version": versions.index(fingerprint.pk) + 1 if fingerprint.pk in versions else 1,
                    "captured_at": _iso(fingerprint.captured_at),
                    "gpus": [
                        {
                            "index": gpu.get("index") if gpu.get("index") is not None else i,
                            "name": gpu.get("name") or "?",
                            "memory_bytes": gpu.get("memory_total_bytes") or 0,
                            "uuid": gpu.get("uuid"),
                        }
                        for i, gpu in enumerate(facts.get("gpus") or [])
                    ],
                    "driver": facts.get("driver_version"),
                    "cuda": facts.get("cuda_version"),
                    "findings": [
                        {
                            "code": str(f.get("code")),
                            "severity": str(f.get("severity") or "info"),
                            "text": finding_text(f),
                        }
                        for f in report["findings"]
                    ],
                }
            )
    return machines


def _hardware(machines: list[dict[str, Any]]) -> dict[str, Any]:
    """The first chosen machine in the shape of versions before issue 20 (`machines` holds them all)."""
    if not machines:
        return {"measured": False}
    first = machines[0]
    return {
        "measured": True,
        "host": first["host"],
        "captured_at": first["captured_at"],
        "gpus": [{k: v for k, v in gpu.items() if k != "uuid"} for gpu in first["gpus"]],
        "driver": first["driver"],
        "cuda": first["cuda"],
        "findings": first["findings"],
    }


def _load_tests(deployment: Deployment) -> list[dict[str, Any]]:
    tests = []
    for job in (
        LoadTest.objects.filter(deployment=deployment, status__in=LoadTest.FINAL)
        .select_related("run")
        .order_by("-finished_at", "-pk")[:20]
    ):
        verdict = job.verdict or {}
        figures = verdict.get("figures") or {}
        metrics = job.run.metrics if job.run else {}
        tests.append(
            {
                "name": job.name,
                "scenario": job.scenario,
                "verdict": verdict.get("verdict") or "invalid",
                "partial": bool(verdict.get("partial")) or job.status != LoadTest.Status.DONE,
                "finished_at": _iso(job.finished_at),
                "figures": {
                    "requests": figures.get("requests") or 0,
                    "errors": figures.get("errors") or 0,
                    "attainment": figures.get("attainment"),
                    "recovery_s": figures.get("recovery_s"),
                    "gpu_peak_bytes": figures.get("gpu_peak_bytes"),
                    "tolerance_bytes": figures.get("tolerance_bytes"),
                    "committed_bytes_per_gpu": figures.get("committed_bytes_per_gpu"),
                    "ttft_p99_ms": (metrics.get("ttft_ms") or {}).get("p99"),
                    "tpot_p99_ms": (metrics.get("tpot_ms") or {}).get("p99"),
                },
                # the numbers each criterion carries (the document words them in the report's language)
                "criteria": [
                    {
                        "code": str(c.get("code")),
                        "verdict": str(c.get("verdict")),
                        "detail": str(c.get("detail")),
                        **{key: c[key] for key in ("measured", "limit", "value", "extra") if key in c},
                    }
                    for c in verdict.get("criteria") or []
                ],
            }
        )
    return tests


def _monitoring(deployment: Deployment) -> dict[str, Any] | None:
    log = MemoryLog.objects.filter(deployment=deployment).order_by("-created_at", "-pk").first()
    if log is None:
        return None
    verdict = log.verdict or {}
    peak = verdict.get("peak_bytes")
    tolerance = verdict.get("tolerance_bytes")
    return {
        "name": log.name,
        "verdict": str(verdict.get("verdict") or "insufficient"),
        "hours": float(verdict.get("hours") or (log.analysis or {}).get("coverage_hours") or 0.0),
        "detail": str(verdict.get("summary") or verdict.get("detail") or ""),
        "peak_bytes": int(peak) if isinstance(peak, int | float) else None,
        "tolerance_bytes": int(tolerance) if isinstance(tolerance, int | float) else GAUGE_RESOLUTION_BYTES,
    }


def _overflow(
    deployment: Deployment, parameters: Mapping[str, Any], *, timeline_points: int = 300
) -> tuple[dict[str, Any] | None, str]:
    """The simulation at the deployment's load (its KV overflow probability and its KV timeline in
    `timeline_points` buckets), and the load in words."""
    if deployment.workload is None or not deployment.rate_per_s:
        return None, _("not simulated: the deployment names no workload profile and rate")
    profile = profile_from_dict(deployment.workload.profile)
    plan = simulation_plan(
        gpu=deployment.gpu, model=deployment.model, parameters=parameters, organisation=deployment.organisation
    )
    result = simulation_run(
        plan=plan,
        profile=profile,
        load="rate",
        rate=deployment.rate_per_s,
        requests=SIMULATED_REQUESTS,
        timeline_points=timeline_points,
    )
    load = _("%(rate)s requests/s of the workload “%(name)s” (%(requests)s simulated requests)") % {
        "rate": f"{deployment.rate_per_s:g}",
        "name": deployment.workload.name,
        "requests": f"{SIMULATED_REQUESTS:,}",
    }
    return result, load


def _mean_tokens_per_request(deployment: Deployment) -> float | None:
    """Mean input + output tokens per request of the deployment's workload (classes weighted by their shares), the
    rule the load tests' peak concurrency uses (benchmarks_app.services.loadtests.tokens_per_request)."""
    if deployment.workload is None:
        return None
    profile = profile_from_dict(deployment.workload.profile)
    total = sum(c.share for c in profile.classes) or 1.0
    return sum(c.share * (c.input.expected() + c.output.expected()) for c in profile.classes) / total


def _limits(deployment: Deployment, estimate: Mapping[str, Any]) -> dict[str, Any]:
    max_len = int(estimate.get("effective_max_model_len") or deployment.max_model_len or 0) or None
    max_input = max_output = None
    if deployment.workload is not None:  # the 99.9th percentile of the workload's longest class (a fixed seed)
        profile = profile_from_dict(deployment.workload.profile)
        rng = np.random.default_rng(0)
        max_input = max(
            math.ceil(float(np.percentile(c.input.sample(rng, LIMIT_SAMPLES), 99.9))) for c in profile.classes
        )
        max_output = max(
            math.ceil(float(np.percentile(c.output.sample(rng, LIMIT_SAMPLES), 99.9))) for c in profile.classes
        )
    if max_len:
        max_input = min(max_input or max_len, max_len)
        max_output = min(max_output or max_len, max_len)
    return {"max_model_len": max_len, "max_input_tokens": max_input, "max_output_tokens": max_output}


def report_content(*, report: Report, number: int, changes: list[str], author: str) -> dict[str, Any]:
    """The content of version `number` of `report`, gathered now (see the module docstring), its sentences in the
    report's language."""
    with override(report.language):
        return _report_content(report=report, number=number, changes=changes, author=author)


def _report_content(*, report: Report, number: int, changes: list[str], author: str) -> dict[str, Any]:
    deployment = report.deployment
    language = report.language
    content: dict[str, Any] = {
        "language": language,
        "report": {
            "id": report.pk,
            "version": number,
            "title": report.title,
            "created_at": timezone.now().isoformat(),
            "changes": changes,
            "status": "draft",
        },
        "organisation": {"name": report.organisation.name},
        "customer": {"name": deployment.customer or deployment.name},
        "deployment": {
            "id": deployment.pk,
            "name": deployment.name,
            "model": {
                "slug": deployment.model.slug if deployment.model else "",
                "parameters": deployment.model.parameters_total if deployment.model else None,
            },
            "gpu": (
                {"name": deployment.gpu.name, "memory_bytes": deployment.gpu.memory_bytes} if deployment.gpu else None
            ),
            "gpu_count": deployment.gpu_count,
            "tp": deployment.tp or 1,
            "engine": deployment.engine,
            "max_model_len": deployment.max_model_len,
            "slo": dict(deployment.slo or {}),
            "workload": {"name": deployment.workload.name, "rate_per_s": deployment.rate_per_s}
            if deployment.workload
            else None,
        },
        "signature": {"author": author, "reviewer": None, "approver": None, "signer": None, "signed_at": None},
        "assumptions": [
            _(
                "The figures hold for the hardware, driver, CUDA, engine version and launch arguments stated here; "
                "any change to them makes a new version of this report."
            ),
            _("Memory is in bytes, shown in GiB (1 GiB = 1,073,741,824 bytes) and GB (1,000,000,000 bytes)."),
            _(
                "The latency figures of the load tests were measured against the endpoint named in each test, from "
                "the load generator's host."
            ),
        ],
        "exclusions": [
            _("Other processes on the GPUs than the serving engine, and memory they take after the engine started."),
            _("Requests beyond the limits of commitment 2 (they are refused, not served)."),
            _("Driver or hardware faults (XID errors) not caused by memory pressure."),
        ],
    }
    checklist = _Checklist()
    machines = _machines(deployment, language)
    content["machines"] = machines
    content["hardware"] = _hardware(machines)
    if machines:
        checklist.add(
            "machines",
            DONE,
            _("%(count)s chosen: %(hosts)s")
            % {"count": len(machines), "hosts": ", ".join(f"{m['host']} v{m['version']}" for m in machines)},
        )
        contradictions = _contradictions(deployment)
        if contradictions:
            checklist.add("machines_match", FAILED, " ".join(c["text"] for c in contradictions))
        else:
            checklist.add("machines_match", DONE, _("The measured machines match the plan."))
    else:
        checklist.add(
            "machines",
            MISSING,
            _(
                "No machine of the customer is chosen for this deployment: the "
                "hardware, driver and CUDA are the plan's, not measured."
            ),
        )
        checklist.add("machines_match", MISSING, _("Nothing measured to compare the plan with."))
    estimate: dict[str, Any] | None = None
    parameters: dict[str, Any] = {}
    if deployment.model is None or deployment.gpu is None:
        checklist.add("plan", MISSING, _("The deployment names no model or GPU: there is no memory estimate."))
    else:
        parameters = estimate_parameters(deployment)
        try:
            estimate = estimate_report(
                gpu=deployment.gpu, model=deployment.model, parameters=parameters, organisation=deployment.organisation
            )
            checklist.add(
                "plan",
                DONE,
                _("Estimated for %(model)s on %(gpu)s.") % {"model": deployment.model.slug, "gpu": deployment.gpu.name},
            )
        except SizingError as error:
            checklist.add("plan", FAILED, _("The plan cannot be estimated: %(reason)s") % {"reason": error.message})
    engine = deployment.engine or "vllm"
    reserves = engine in RESERVING_ENGINES
    # the engine release the commitment holds for (the estimate's, else the plan's resolved now)
    release = deployment_release(deployment=deployment, estimate=estimate)
    launch = release.pop("launch")
    content["release"] = release
    requested = parse_version(release["requested"])
    if requested is not None and release["version"] and str(requested) != release["version"]:
        checklist.add(
            "release",
            FAILED,
            _(
                "The plan names %(engine)s %(requested)s, newer than the newest release modelled: the figures follow "
                "the rules of %(version)s; check the boot log of %(requested)s before relying on them."
            )
            % {"engine": release["label"], "requested": release["requested"], "version": release["version"]},
        )
    else:
        checklist.add(
            "release",
            DONE,
            _("%(engine)s %(version)s is a release whose memory rules are modelled.")
            % {"engine": release["label"], "version": release["version"] or release["requested"]},
        )
    tests = _load_tests(deployment)
    monitoring = _monitoring(deployment)
    health = _health(deployment)
    simulation: dict[str, Any] | None = None
    if estimate is not None:
        bill = estimate.get("memory_per_gpu") or {}
        content["launch_args"] = [part for arg in estimate.get("launch_args") or () for part in str(arg).split(" ", 1)]
        content["memory"] = {
            "per_gpu": [
                {"key": key, "label": str(BILL_LABELS.get(key, key.replace("_", " "))), "bytes": int(value)}
                for key, value in bill.items()
            ],
            "capacity_bytes_per_gpu": int(estimate["capacity_bytes_per_gpu"]),
            "budget_bytes_per_gpu": int(estimate["budget_bytes_per_gpu"]),
            "required_bytes_per_gpu": int(estimate["required_bytes_per_gpu"]),
            "kv_cache_bytes_per_gpu": int(estimate["kv_cache_bytes_per_gpu"]),
            "kv_capacity_tokens": int(estimate["kv_capacity_tokens"]),
            "engine_reserves": reserves,
        }
        try:
            # an engine that grows on demand takes its peak from the KV timeline: enough buckets for the percentile
            simulation, load = _overflow(deployment, parameters, timeline_points=300 if reserves else PEAK_SAMPLES)
        except SizingError as error:
            simulation, load = None, _("not simulated: %(reason)s") % {"reason": error.message}
            checklist.add("workload", FAILED, load)
        probability = float(simulation["kv_overflow_probability"]) if simulation is not None else None
        if simulation is not None:
            checklist.add("workload", DONE, load)
        elif not any(item["code"] == "workload" for item in checklist.items):
            checklist.add(
                "workload", MISSING, _("No KV overflow probability: give the deployment its workload profile and rate.")
            )
        basis = (
            _(
                "The engine reserves its memory when it starts: its budget (--gpu-memory-utilization × the "
                "card) plus what lives outside it (CUDA graphs, non-torch memory) is held from the first second "
                "whatever the load, so this is the peak per card; under load the risk moves to the KV cache "
                "(preemption and queueing), which commitment 2 guards."
            )
            if reserves
            else _(
                "The engine grows its memory on demand: this is the estimate's peak at its stated concurrency; "
                "the breaker of commitment 2 watches GPU memory itself."
            )
        )
        confidence = _confidence(
            engine=engine,
            release=release["version"] or None,
            estimate=estimate,
            reserves=reserves,
            simulation=simulation,
            probability=probability,
            measurements=_measurements(tests, monitoring, health),
        )
        content["confidence"] = confidence
        capacity_bytes = int(estimate["capacity_bytes_per_gpu"])
        fit_values = {"peak": _gib(confidence["peak_bytes_per_gpu"]), "capacity": _gib(capacity_bytes)}
        if confidence["peak_bytes_per_gpu"] <= capacity_bytes:
            checklist.add("peak_fits", DONE, _("%(peak)s committed per GPU of the card's %(capacity)s.") % fit_values)
        else:
            checklist.add(
                "peak_fits",
                FAILED,
                _(
                    "The committed peak of %(peak)s per GPU, with its margin, is above the card's %(capacity)s: lower "
                    "the engine's budget or choose a larger card."
                )
                % fit_values,
            )
        content["commitment"] = {
            "peak_bytes_per_gpu": confidence["peak_bytes_per_gpu"],
            "estimated_bytes_per_gpu": int(estimate["required_bytes_per_gpu"]),
            "confidence": confidence["probability"],
            "kv_overflow_probability": probability,
            "load": load,
            "basis": basis,
        }
        if confidence.get("assumed"):
            content["assumptions"].append(confidence["method_text"])
        limits = _limits(deployment, estimate)
        capacity = int(estimate["kv_capacity_tokens"])
        mean_tokens = _mean_tokens_per_request(deployment)
        # the requests the KV cache holds at once at the workload's mean request (the load tests' peak concurrency);
        # without a workload, at the longest request the limits allow
        per_request = mean_tokens or ((limits["max_input_tokens"] or 0) + (limits["max_output_tokens"] or 0))
        concurrency = max(1, math.floor(capacity / per_request)) if per_request else None
        budget_flag = next(
            (
                str(arg)
                for arg in estimate.get("launch_args") or ()
                if "memory-utilization" in str(arg) or "mem-fraction" in str(arg)
            ),
            _("the engine's memory limit (no flag: it grows on demand)"),
        )
        breaker = BREAKER_KV if reserves else {**BREAKER_KV, "metric": "DCGM_FI_DEV_FB_USED / FB_TOTAL"}
        config_lines = [
            *launch,
            "",
            "# request limits (gateway)",
            f"max_input_tokens: {limits['max_input_tokens']}",
            f"max_output_tokens: {limits['max_output_tokens']}",
            f"per_tenant_concurrency: {concurrency}",
            f"queue_limit: {concurrency}",
            "request_timeout_s: 300",
            "",
            "# circuit breaker (alert rule)",
            f"alert: {breaker['metric']} > {breaker['threshold']} for {breaker['for_s']:g}s -> {breaker['action']}",
        ]
        content["protection"] = {
            "engine_budget": budget_flag,
            "max_input_tokens": limits["max_input_tokens"],
            "max_output_tokens": limits["max_output_tokens"],
            "per_tenant_concurrency": concurrency,
            "queue_limit": concurrency,
            "concurrency_basis": _concurrency_basis(capacity, per_request, concurrency, mean=mean_tokens is not None),
            "request_timeout_s": 300.0,
            "breaker": breaker,
            "config": "\n".join(config_lines),
        }
    elif not any(item["code"] == "workload" for item in checklist.items):
        checklist.add("workload", MISSING, _("Nothing to simulate without a memory estimate."))
    content["fallback"] = [
        _(
            "If the breaker trips: new requests are refused with HTTP 503 and a Retry-After header while the running "
            "ones finish; clients retry with backoff."
        ),
        _(
            "If the KV cache stays above the threshold for more than the recovery time: shed the lowest-priority "
            "tenant and page the on-call engineer."
        ),
        _(
            "If an engine process dies: the orchestrator restarts it (the failure-injection test measured the "
            "recovery); requests in flight are lost and must be retried by the client."
        ),
        _("If the load grows past the committed rate: add a replica (the same GPUs and flags) before raising limits."),
    ]
    for scenario in SCENARIOS_NEEDED:
        checklist.add(f"load_test_{scenario}", *_scenario_state(tests, scenario))
    checklist.add("monitoring", *_monitoring_state(monitoring, health))
    content["acceptance"] = _acceptance(health)
    content["evidence"] = {
        "estimate": {
            "source": _("the %(engine)s memory model of this service, with the organisation's calibrations")
            % {"engine": engine},
            "computed_at": timezone.now().isoformat(),
        },
        "fingerprints": [
            {"host": m["host"], "captured_at": m["captured_at"], "findings": m["findings"]} for m in machines
        ],
        "load_tests": tests,
        "monitoring": monitoring,
    }
    content.setdefault("launch_args", [])
    content["checklist"] = checklist.items
    content["missing"] = [item["detail"] for item in checklist.items if item["state"] != DONE]
    return nonfinite_as_text(content)


DONE, FAILED, MISSING, WAIVED = "done", "failed", "missing", "waived"
CHECKLIST_TEXTS = {
    "machines": gettext_lazy("The customer's machines chosen (each a host with its fingerprint version)"),
    "machines_match": gettext_lazy("The measured machines match the plan (GPU, count, interconnect, whole cards)"),
    "plan": gettext_lazy("The plan names the model and the GPU, and is estimated"),
    "release": gettext_lazy("The engine release is one whose memory rules are modelled"),
    "peak_fits": gettext_lazy("The committed peak, with its margin, fits the card's memory"),
    "workload": gettext_lazy("The workload profile and the rate (for the KV overflow probability)"),
    "monitoring": gettext_lazy("Post-launch monitoring passed (72 hours: no OOM, no sustained climb)"),
}


class _Checklist:
    """The version's evidence checklist as it stood: [{code, text, state, detail}] in the report's language."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, code: str, state: str, detail: str) -> None:
        scenario = code.removeprefix("load_test_") if code.startswith("load_test_") else None
        text = (
            _("A passed load test of the %(scenario)s scenario") % {"scenario": SCENARIO_WORDS[scenario]}
            if scenario
            else str(CHECKLIST_TEXTS[code])
        )
        self.items.append({"code": code, "text": text, "state": state, "detail": str(detail)})


def _contradictions(deployment: Deployment) -> list[dict[str, Any]]:
    from sizing.selectors.deployments import chosen_machines
    from sizing.services.machine_checks import machine_contradictions

    return machine_contradictions(deployment, chosen_machines(deployment))


def _scenario_state(tests: list[dict[str, Any]], scenario: str) -> tuple[str, str]:
    """done with a full passed test; failed when the scenario was tested and none passed (the newest says how);
    missing when never tested."""
    words = SCENARIO_WORDS[scenario]
    mine = [t for t in tests if t["scenario"] == scenario]
    passed = [t for t in mine if t["verdict"] == "pass" and not t["partial"]]
    if passed:
        return DONE, _("“%(name)s” passed.") % {"name": passed[0]["name"]}
    if mine:
        newest = mine[0]
        why = (
            _("stopped before the end")
            if newest["partial"] and newest["verdict"] == "pass"
            else _("verdict: %(verdict)s") % {"verdict": VERDICT_WORDS.get(newest["verdict"], newest["verdict"])}
        )
        return FAILED, _("No passed load test of the %(scenario)s scenario: the newest, “%(name)s”, %(why)s.") % {
            "scenario": words,
            "name": newest["name"],
            "why": why,
        }
    return MISSING, _("No passed load test of the %(scenario)s scenario.") % {"scenario": words}


VERDICT_WORDS = {
    "pass": gettext_lazy("passed"),
    "fail": gettext_lazy("failed"),
    "invalid": gettext_lazy("invalid"),
    "insufficient": gettext_lazy("insufficient"),
}


def _monitoring_state(monitoring: dict[str, Any] | None, health: dict[str, Any] | None) -> tuple[str, str]:
    """The memory health report of a 72-hour sentinel when there is one, else the newest memory log: done on a
    pass, failed on a fail, missing when there is none or it is insufficient (too short to judge)."""
    if health is not None:
        if health["verdict"] == "pass":
            return DONE, _("The memory health report of %(hours)s h passed.") % {
                "hours": f"{health['coverage_hours']:.1f}"
            }
        return FAILED, _("The memory health report of %(hours)s h failed: %(why)s") % {
            "hours": f"{health['coverage_hours']:.1f}",
            "why": health["failed"] or _("see the report"),
        }
    if monitoring is None:
        return MISSING, _("No post-launch monitoring log yet (72 hours of sampling: no OOM, no sustained climb).")
    if monitoring["verdict"] == "pass":
        return DONE, _("The monitoring log “%(name)s” passed (%(hours)s h).") % {
            "name": monitoring["name"],
            "hours": f"{monitoring['hours']:.1f}",
        }
    if monitoring["verdict"] == "fail":
        return FAILED, _("The monitoring log “%(name)s” failed: %(why)s") % {
            "name": monitoring["name"],
            "why": monitoring["detail"] or _("see the log"),
        }
    return MISSING, _("The monitoring log “%(name)s” covers %(hours)s h: too little to judge.") % {
        "name": monitoring["name"],
        "hours": f"{monitoring['hours']:.1f}",
    }


def _health(deployment: Deployment) -> dict[str, Any] | None:
    """The newest memory health report of the deployment's 72-hour sentinel (reports.services.health_reports)."""
    report = latest_health_report(deployment)
    if report is None:
        return None
    criteria = list(report.criteria or [])
    failed = "; ".join(str(c.get("text") or c.get("code")) for c in criteria if c.get("verdict") != "pass")
    peak = getattr(report, "peak_bytes", None)
    return {
        "id": report.pk,
        "verdict": str(report.verdict),
        "sha256": report.sha256,
        "signed_at": _iso(report.signed_at),
        "coverage_hours": float(report.coverage_hours or 0.0),
        "failed": failed,
        "peak_bytes": int(peak) if isinstance(peak, int | float) else None,
    }


def _acceptance(health: dict[str, Any] | None) -> dict[str, Any]:
    if health is None:
        return {
            "health_report": None,
            "text": _(
                "Final acceptance follows the memory health report of the 72-hour sentinel after go-live; none is "
                "imported yet."
            ),
        }
    words = VERDICT_WORDS.get(health["verdict"], health["verdict"])
    return {
        "health_report": {k: health[k] for k in ("id", "verdict", "sha256", "signed_at", "coverage_hours")},
        "text": _("Final acceptance rests on memory health report %(id)s (%(hours)s h, %(verdict)s, SHA-256 %(sha)s).")
        % {
            "id": health["id"],
            "hours": f"{health['coverage_hours']:.1f}",
            "verdict": words,
            "sha": health["sha256"][:16],
        },
    }


def _measurements(
    tests: list[dict[str, Any]], monitoring: dict[str, Any] | None, health: dict[str, Any] | None
) -> list[Measurement]:
    found = []
    for test in tests:
        figures = test["figures"]
        if isinstance(figures.get("gpu_peak_bytes"), int | float) and not test["partial"]:
            found.append(
                Measurement(
                    kind="load_test",
                    name=test["name"],
                    peak_bytes=int(figures["gpu_peak_bytes"]),
                    tolerance_bytes=int(figures.get("tolerance_bytes") or GAUGE_RESOLUTION_BYTES),
                )
            )
    if monitoring is not None and monitoring.get("peak_bytes") is not None:
        found.append(
            Measurement(
                kind="memory_log",
                name=monitoring["name"],
                peak_bytes=monitoring["peak_bytes"],
                tolerance_bytes=monitoring["tolerance_bytes"],
                hours=monitoring["hours"],
            )
        )
    if health is not None and health.get("peak_bytes") is not None:
        found.append(
            Measurement(
                kind="sentinel",
                name=_("memory health report %(id)s") % {"id": health["id"]},
                peak_bytes=health["peak_bytes"],
                tolerance_bytes=GAUGE_RESOLUTION_BYTES,
                hours=health["coverage_hours"],
            )
        )
    return found


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / GIB:,.2f} GiB"


def _confidence(
    *,
    engine: str,
    release: str | None,
    estimate: Mapping[str, Any],
    reserves: bool,
    simulation: Mapping[str, Any] | None,
    probability: float | None,
    measurements: list[Measurement],
) -> dict[str, Any]:
    """The committed peak per GPU with its probability and method (sizing.estimator.confidence), in words."""
    required = int(estimate["required_bytes_per_gpu"])
    percent = f"{PROBABILITY:.1%}"
    assumed = False
    parts: list[str] = []
    if reserves:
        model = reserved_confidence(
            engine=engine,
            release=release,
            required_bytes=required,
            budget_bytes=int(estimate["budget_bytes_per_gpu"]),
            kv_risk=probability,
        )
        errors = model.errors
        values = {
            "budget": _gib(estimate["budget_bytes_per_gpu"]),
            "outside": _gib(model.outside_bytes),
            "q": f"{(model.relative_margin or 0.0):.1%}",
            "margin": _gib(model.margin_bytes),
            "percent": percent,
            "engine": engine,
            "n": errors.n if errors else 0,
            "band": errors.band if errors else "",
            "dof": max(0, (errors.n if errors else 0) - 1),
        }
        if model.outside_bytes == 0:
            parts.append(
                _(
                    "The engine reserves its budget when it starts (%(budget)s per GPU, held by its own flag) "
                    "and in this release nothing the estimate counts lives outside it, so no margin is "
                    "added: the engine itself holds the peak to its budget"
                )
                % values
            )
        else:
            parts.append(
                _(
                    "The engine reserves its budget when it starts (%(budget)s per GPU, held by its own "
                    "flag); what lives outside it is estimated at %(outside)s, with a margin of %(q)s of "
                    "that (%(margin)s)"
                )
                % values
            )
            if errors is None or errors.assumed:
                assumed = True
                parts.append(
                    _(
                        "No boot log of %(engine)s has been measured against this service's estimate yet: "
                        "the margin is assumed, not measured"
                    )
                    % values
                )
            elif errors.pooled:
                parts.append(
                    _(
                        "The margin is the one-sided %(percent)s prediction bound of this service's error "
                        "against all %(n)s real boot logs of %(engine)s measured (fewer than 3 in this "
                        "release's band; Student's t with %(dof)s degrees of freedom)"
                    )
                    % values
                )
            else:
                parts.append(
                    _(
                        "The margin is the one-sided %(percent)s prediction bound of this service's error "
                        "against %(n)s real boot logs of %(engine)s %(band)s (Student's t with %(dof)s "
                        "degrees of freedom)"
                    )
                    % values
                )
    else:
        kv_bytes = int(estimate["kv_cache_bytes_per_gpu"])
        fractions = list((simulation or {}).get("timeline", {}).get("kv_used_fraction") or [])
        if fractions:
            model = simulated_confidence(
                fixed_bytes=required - kv_bytes, kv_demand_bytes=[f * kv_bytes for f in fractions], kv_risk=probability
            )
            values = {"percent": percent, "n": f"{model.samples:,}"}
            parts.append(
                _(
                    "The engine grows its memory on demand: the peak is the largest of %(n)s samples of the "
                    "simulated memory demand (fewer than the %(percent)s percentile needs)"
                )
                % values
                if model.percentile_is_max
                else _(
                    "The engine grows its memory on demand: the peak is the %(percent)s percentile of %(n)s "
                    "samples of the simulated memory demand (each the largest of its stretch of the "
                    "simulated time)"
                )
                % values
            )
        else:
            model = simulated_confidence(
                fixed_bytes=required - kv_bytes, kv_demand_bytes=[float(kv_bytes)], kv_risk=None
            )
            assumed = True
            parts.append(
                _(
                    "The engine grows its memory on demand; without a simulation of the workload the peak is "
                    "the estimate's demand at its stated concurrency, with no computed confidence"
                )
            )
    if probability is not None:
        parts.append(
            _(
                "At the stated load the KV demand exceeds the cache %(p)s of the time (simulated): that is "
                "the risk of queueing and preemption, not of running out of memory"
            )
            % {"p": f"{probability:.2%}"}
        )
    text = _sentences(parts)
    moved = with_measurements(model, measurements)
    effects = []
    for effect in moved.effects:
        m = effect.measurement
        values = {
            "name": m.name,
            "peak": _gib(m.peak_bytes),
            "bound": _gib(effect.bound_bytes),
            "hours": f"{m.hours:.1f}",
        }
        effects.append(
            {
                "kind": m.kind,
                "name": m.name,
                "peak_bytes": m.peak_bytes,
                "effect": effect.effect,
                "text": {
                    "raised": _(
                        "measured %(peak)s, above the model's bound: the committed peak is raised to %(bound)s"
                    ),
                    "tightened": _(
                        "watched %(hours)s h with a peak of %(peak)s: the margin is "
                        "tightened, the committed peak is %(bound)s"
                    ),
                    "confirmed": _("measured %(peak)s, within the bound"),
                }[effect.effect]
                % values,
            }
        )
    errors = getattr(moved, "errors", None)
    return {
        "peak_bytes_per_gpu": moved.peak_bytes,
        "probability": None if assumed and not reserves else PROBABILITY,
        "method": moved.method,
        "method_text": text,
        "base_bytes_per_gpu": moved.base_bytes,
        "margin_bytes_per_gpu": moved.margin_bytes,
        "model_peak_bytes_per_gpu": model.peak_bytes,
        "kv_risk": probability,
        "samples": moved.samples,
        "assumed": assumed,
        "error_band": (
            {
                "engine": errors.engine,
                "band": errors.band,
                "n": errors.n,
                "max_abs_error": errors.max_abs_error,
                "pooled": errors.pooled,
            }
            if errors is not None and not errors.assumed
            else None
        ),
        "evidence": [
            {"kind": e["kind"], "name": e["name"], "effect": e["text"], "moved": e["effect"]} for e in effects
        ],
    }


def _sentences(parts: list[str]) -> str:
    """Sentences (written without their full stop) as one paragraph in the active language."""
    if (get_language() or "en").startswith("zh"):
        return "".join(f"{part}。" for part in parts)
    return " ".join(f"{part}." for part in parts)


def _concurrency_basis(capacity: int, per_request: float | None, concurrency: int | None, *, mean: bool) -> str:
    if not per_request or concurrency is None:
        return _("not set: no request length is known")
    values = {"capacity": f"{capacity:,}", "tokens": f"{per_request:,.0f}", "n": f"{concurrency:,}"}
    if mean:
        return (
            _(
                "the KV cache holds %(capacity)s tokens; at the workload's mean of %(tokens)s tokens per request "
                "(input + output) that is %(n)s requests at once"
            )
            % values
        )
    return (
        _(
            "the KV cache holds %(capacity)s tokens; at the longest request the limits allow (%(tokens)s tokens) "
            "that is %(n)s requests at once"
        )
        % values
    )


CHANGE_SECTIONS = {
    "deployment": gettext_lazy("the deployment's plan"),
    "hardware": gettext_lazy("the measured hardware"),
    "memory": gettext_lazy("the memory bill"),
    "commitment": gettext_lazy("commitment 1 (peak and KV overflow)"),
    "protection": gettext_lazy("commitment 2 (protection)"),
    "fallback": gettext_lazy("commitment 3 (fallback)"),
    "evidence": gettext_lazy("the evidence"),
    "missing": gettext_lazy("the missing evidence"),
    "assumptions": gettext_lazy("the assumptions"),
    "exclusions": gettext_lazy("the exclusions"),
    "launch_args": gettext_lazy("the launch arguments"),
    "customer": gettext_lazy("the customer"),
    "release": gettext_lazy("the engine release"),
}


def content_changes(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[str]:
    """What changed from the previous version's content, in words in the content's language (the sections whose
    content differs)."""
    if before is None:
        return []
    changed = []
    with override(str(after.get("language") or "en")):
        for key, words in CHANGE_SECTIONS.items():
            a, b = dict(before).get(key), after.get(key)
            if key == "evidence" and isinstance(a, Mapping) and isinstance(b, Mapping):
                a = {k: v for k, v in a.items() if k != "estimate"}  # its computed_at always differs
                b = {k: v for k, v in b.items() if k != "estimate"}
            if a != b:
                changed.append(_("Changed: %(what)s.") % {"what": words})
        return changed or [_("No change in content: re-issued.")]

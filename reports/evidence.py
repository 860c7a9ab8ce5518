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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, override

from benchmarks_app.models import LoadTest, MemoryLog
from reports.models import Report
from sizing.deployment_services import _estimate_parameters, deployment_release, fingerprint_report
from sizing.estimator.errors import SizingError
from sizing.estimator.versions import parse_version
from sizing.estimator.workload import profile_from_dict
from sizing.finding_text import finding_text
from sizing.models import Deployment, Fingerprint
from sizing.services import estimate_report, json_safe
from sizing.simulation_services import simulation_plan, simulation_run

RESERVING_ENGINES = ("vllm", "sglang", "trtllm")
SIMULATED_REQUESTS = 2000
LIMIT_SAMPLES = 20_000  # lengths drawn per class for the request limits
BREAKER_KV = {"metric": "vllm:kv_cache_usage_perc", "threshold": 0.95, "for_s": 5.0,
              "action": "refuse new requests (HTTP 503) until it falls below the threshold", "recover_within_s": 30.0}
SCENARIOS_NEEDED = ("pulse", "long_tail", "failure")
SCENARIO_WORDS = {"pulse": gettext_lazy("pulse"), "long_tail": gettext_lazy("long-tail"),
                  "failure": gettext_lazy("failure-injection")}
BILL_LABELS = {"weights": gettext_lazy("Weights"), "kv_cache": gettext_lazy("KV cache"),
               "activations": gettext_lazy("Activations"), "runtime": gettext_lazy("Runtime (non-torch)"),
               "cuda_graphs": gettext_lazy("CUDA graphs")}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def _hardware(deployment: Deployment, language: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The newest fingerprint of each host: the report's hardware section (the newest of all) and the evidence."""
    newest: dict[str, Fingerprint] = {}
    for fingerprint in Fingerprint.objects.filter(deployment=deployment).order_by("-captured_at", "-pk"):
        newest.setdefault(fingerprint.host, fingerprint)
    evidence = []
    hardware: dict[str, Any] = {"measured": False}
    with override(language):
        for index, fingerprint in enumerate(sorted(newest.values(), key=lambda f: f.captured_at, reverse=True)):
            report = fingerprint_report(fingerprint=fingerprint)
            findings = [{"code": str(f.get("code")), "severity": str(f.get("severity") or "info"),
                         "text": finding_text(f)} for f in report["findings"]]
            evidence.append({"host": fingerprint.host, "captured_at": _iso(fingerprint.captured_at),
                             "findings": findings})
            if index == 0:
                facts = report["facts"]
                hardware = {
                    "measured": True, "host": fingerprint.host, "captured_at": _iso(fingerprint.captured_at),
                    "gpus": [{"index": gpu.get("index") if gpu.get("index") is not None else i,
                              "name": gpu.get("name") or "?", "memory_bytes": gpu.get("memory_total_bytes") or 0}
                             for i, gpu in enumerate(facts.get("gpus") or [])],
                    "driver": facts.get("driver_version"), "cuda": facts.get("cuda_version"), "findings": findings,
                }
    return hardware, evidence


def _load_tests(deployment: Deployment) -> list[dict[str, Any]]:
    tests = []
    for job in LoadTest.objects.filter(deployment=deployment, status__in=LoadTest.FINAL).select_related("run") \
            .order_by("-finished_at", "-pk")[:20]:
        verdict = job.verdict or {}
        figures = verdict.get("figures") or {}
        metrics = job.run.metrics if job.run else {}
        tests.append({
            "name": job.name, "scenario": job.scenario, "verdict": verdict.get("verdict") or "invalid",
            "partial": bool(verdict.get("partial")) or job.status != LoadTest.Status.DONE,
            "finished_at": _iso(job.finished_at),
            "figures": {"requests": figures.get("requests") or 0, "errors": figures.get("errors") or 0,
                        "attainment": figures.get("attainment"), "recovery_s": figures.get("recovery_s"),
                        "ttft_p99_ms": (metrics.get("ttft_ms") or {}).get("p99"),
                        "tpot_p99_ms": (metrics.get("tpot_ms") or {}).get("p99")},
            "criteria": [{"code": str(c.get("code")), "verdict": str(c.get("verdict")), "detail": str(c.get("detail"))}
                         for c in verdict.get("criteria") or []],
        })
    return tests


def _monitoring(deployment: Deployment) -> dict[str, Any] | None:
    log = MemoryLog.objects.filter(deployment=deployment).order_by("-created_at", "-pk").first()
    if log is None:
        return None
    verdict = log.verdict or {}
    return {"name": log.name, "verdict": str(verdict.get("verdict") or "insufficient"),
            "hours": float(verdict.get("hours") or (log.analysis or {}).get("coverage_hours") or 0.0),
            "detail": str(verdict.get("summary") or verdict.get("detail") or "")}


def _overflow(deployment: Deployment, parameters: Mapping[str, Any]) -> tuple[float | None, str]:
    """The KV overflow probability at the deployment's load, and the load in words."""
    if deployment.workload is None or not deployment.rate_per_s:
        return None, _("not simulated: the deployment names no workload profile and rate")
    profile = profile_from_dict(deployment.workload.profile)
    plan = simulation_plan(gpu=deployment.gpu, model=deployment.model, parameters=parameters,
                           organisation=deployment.organisation)
    result = simulation_run(plan=plan, profile=profile, load="rate", rate=deployment.rate_per_s,
                            requests=SIMULATED_REQUESTS)
    load = _("%(rate)s requests/s of the workload “%(name)s” (%(requests)s simulated requests)") % {
        "rate": f"{deployment.rate_per_s:g}", "name": deployment.workload.name, "requests": f"{SIMULATED_REQUESTS:,}"}
    return float(result["kv_overflow_probability"]), load


def _limits(deployment: Deployment, estimate: Mapping[str, Any]) -> dict[str, Any]:
    max_len = int(estimate.get("effective_max_model_len") or deployment.max_model_len or 0) or None
    max_input = max_output = None
    if deployment.workload is not None:  # the 99.9th percentile of the workload's longest class (a fixed seed)
        profile = profile_from_dict(deployment.workload.profile)
        rng = np.random.default_rng(0)
        max_input = max(math.ceil(float(np.percentile(c.input.sample(rng, LIMIT_SAMPLES), 99.9)))
                        for c in profile.classes)
        max_output = max(math.ceil(float(np.percentile(c.output.sample(rng, LIMIT_SAMPLES), 99.9)))
                         for c in profile.classes)
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
    missing: list[str] = []
    content: dict[str, Any] = {
        "language": language,
        "report": {"id": report.pk, "version": number, "title": report.title, "created_at": timezone.now().isoformat(),
                   "changes": changes, "status": "draft"},
        "organisation": {"name": report.organisation.name},
        "customer": {"name": deployment.customer or deployment.name},
        "deployment": {
            "id": deployment.pk, "name": deployment.name,
            "model": {"slug": deployment.model.slug if deployment.model else "",
                      "parameters": deployment.model.parameters_total if deployment.model else None},
            "gpu": ({"name": deployment.gpu.name, "memory_bytes": deployment.gpu.memory_bytes}
                    if deployment.gpu else None),
            "gpu_count": deployment.gpu_count, "tp": deployment.tp or 1, "engine": deployment.engine,
            "max_model_len": deployment.max_model_len, "slo": dict(deployment.slo or {}),
            "workload": {"name": deployment.workload.name, "rate_per_s": deployment.rate_per_s}
            if deployment.workload else None,
        },
        "signature": {"author": author, "reviewer": None, "approver": None, "signer": None, "signed_at": None},
        "assumptions": [
            _("The figures hold for the hardware, driver, CUDA, engine version and launch arguments stated here; "
              "any change to them makes a new version of this report."),
            _("Memory is in bytes, shown in GiB (1 GiB = 1,073,741,824 bytes) and GB (1,000,000,000 bytes)."),
            _("The latency figures of the load tests were measured against the endpoint named in each test, from "
              "the load generator's host."),
        ],
        "exclusions": [
            _("Other processes on the GPUs than the serving engine, and memory they take after the engine started."),
            _("Requests beyond the limits of commitment 2 (they are refused, not served)."),
            _("Driver or hardware faults (XID errors) not caused by memory pressure."),
        ],
    }
    hardware, fingerprints = _hardware(deployment, language)
    content["hardware"] = hardware
    if not hardware["measured"]:
        missing.append(_("No fingerprint of the customer's machines: the hardware, driver and CUDA are the "
                         "plan's, not measured."))
    estimate: dict[str, Any] | None = None
    parameters: dict[str, Any] = {}
    if deployment.model is None or deployment.gpu is None:
        missing.append(_("The deployment names no model or GPU: there is no memory estimate."))
    else:
        parameters = _estimate_parameters(deployment)
        try:
            estimate = estimate_report(gpu=deployment.gpu, model=deployment.model, parameters=parameters,
                                       organisation=deployment.organisation)
        except SizingError as error:
            missing.append(_("The plan cannot be estimated: %(reason)s") % {"reason": error.message})
    engine = deployment.engine or "vllm"
    reserves = engine in RESERVING_ENGINES
    # the engine release the commitment holds for (the estimate's, else the plan's resolved now)
    release = deployment_release(deployment=deployment, estimate=estimate)
    launch = release.pop("launch")
    content["release"] = release
    requested = parse_version(release["requested"])
    if requested is not None and release["version"] and str(requested) != release["version"]:
        missing.append(_("The plan names %(engine)s %(requested)s, newer than the newest release modelled: the "
                         "figures follow the rules of %(version)s; check the boot log of %(requested)s before "
                         "relying on them.") % {"engine": release["label"], "requested": release["requested"],
                                                "version": release["version"]})
    if estimate is not None:
        bill = estimate.get("memory_per_gpu") or {}
        content["launch_args"] = [part for arg in estimate.get("launch_args") or () for part in str(arg).split(" ", 1)]
        content["memory"] = {
            "per_gpu": [{"key": key, "label": str(BILL_LABELS.get(key, key.replace("_", " "))), "bytes": int(value)}
                        for key, value in bill.items()],
            "capacity_bytes_per_gpu": int(estimate["capacity_bytes_per_gpu"]),
            "budget_bytes_per_gpu": int(estimate["budget_bytes_per_gpu"]),
            "required_bytes_per_gpu": int(estimate["required_bytes_per_gpu"]),
            "kv_cache_bytes_per_gpu": int(estimate["kv_cache_bytes_per_gpu"]),
            "kv_capacity_tokens": int(estimate["kv_capacity_tokens"]), "engine_reserves": reserves,
        }
        try:
            probability, load = _overflow(deployment, parameters)
        except SizingError as error:
            probability, load = None, _("not simulated: %(reason)s") % {"reason": error.message}
        if probability is None:
            missing.append(_("No KV overflow probability: give the deployment its workload profile and rate."))
        basis = (_("The engine reserves its memory when it starts: its budget (--gpu-memory-utilization × the "
                   "card) plus what lives outside it (CUDA graphs, non-torch memory) is held from the first second "
                   "whatever the load, so this is the peak per card; under load the risk moves to the KV cache "
                   "(preemption and queueing), which commitment 2 guards.") if reserves else
                 _("The engine grows its memory on demand: this is the estimate's peak at its stated concurrency; "
                   "the breaker of commitment 2 watches GPU memory itself."))
        content["commitment"] = {"peak_bytes_per_gpu": int(estimate["required_bytes_per_gpu"]),
                                 "kv_overflow_probability": probability, "load": load, "basis": basis}
        limits = _limits(deployment, estimate)
        capacity = int(estimate["kv_capacity_tokens"])
        per_request = (limits["max_input_tokens"] or 0) + (limits["max_output_tokens"] or 0)
        concurrency = max(1, capacity // per_request) if per_request else None
        budget_flag = next((str(arg) for arg in estimate.get("launch_args") or ()
                            if "memory-utilization" in str(arg) or "mem-fraction" in str(arg)),
                           "the engine's memory limit (no flag: it grows on demand)")
        breaker = BREAKER_KV if reserves else {**BREAKER_KV, "metric": "DCGM_FI_DEV_FB_USED / FB_TOTAL"}
        config_lines = [*launch, "", "# request limits (gateway)",
                        f"max_input_tokens: {limits['max_input_tokens']}",
                        f"max_output_tokens: {limits['max_output_tokens']}",
                        f"per_tenant_concurrency: {concurrency}", f"queue_limit: {concurrency}",
                        "request_timeout_s: 300", "", "# circuit breaker (alert rule)",
                        f"alert: {breaker['metric']} > {breaker['threshold']} for {breaker['for_s']:g}s "
                        f"-> {breaker['action']}"]
        content["protection"] = {"engine_budget": budget_flag, "max_input_tokens": limits["max_input_tokens"],
                                 "max_output_tokens": limits["max_output_tokens"],
                                 "per_tenant_concurrency": concurrency, "queue_limit": concurrency,
                                 "request_timeout_s": 300.0, "breaker": breaker, "config": "\n".join(config_lines)}
    content["fallback"] = [
        _("If the breaker trips: new requests are refused with HTTP 503 and a Retry-After header while the running "
          "ones finish; clients retry with backoff."),
        _("If the KV cache stays above the threshold for more than the recovery time: shed the lowest-priority "
          "tenant and page the on-call engineer."),
        _("If an engine process dies: the orchestrator restarts it (the failure-injection test measured the "
          "recovery); requests in flight are lost and must be retried by the client."),
        _("If the load grows past the committed rate: add a replica (the same GPUs and flags) before raising "
          "limits."),
    ]
    tests = _load_tests(deployment)
    for scenario in SCENARIOS_NEEDED:
        if not any(t["scenario"] == scenario and t["verdict"] == "pass" and not t["partial"] for t in tests):
            missing.append(_("No passed load test of the %(scenario)s scenario.") % {
                "scenario": SCENARIO_WORDS[scenario]})
    monitoring = _monitoring(deployment)
    if monitoring is None:
        missing.append(_("No post-launch monitoring log yet (72 hours of sampling: no OOM, no sustained climb)."))
    content["evidence"] = {
        "estimate": {"source": f"{engine} memory model of this service, with the organisation's calibrations",
                     "computed_at": timezone.now().isoformat()},
        "fingerprints": fingerprints, "load_tests": tests, "monitoring": monitoring,
    }
    content.setdefault("launch_args", [])
    content["missing"] = missing
    return json_safe(content)


CHANGE_SECTIONS = {
    "deployment": gettext_lazy("the deployment's plan"), "hardware": gettext_lazy("the measured hardware"),
    "memory": gettext_lazy("the memory bill"), "commitment": gettext_lazy("commitment 1 (peak and KV overflow)"),
    "protection": gettext_lazy("commitment 2 (protection)"), "fallback": gettext_lazy("commitment 3 (fallback)"),
    "evidence": gettext_lazy("the evidence"), "missing": gettext_lazy("the missing evidence"),
    "assumptions": gettext_lazy("the assumptions"), "exclusions": gettext_lazy("the exclusions"),
    "launch_args": gettext_lazy("the launch arguments"), "customer": gettext_lazy("the customer"),
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

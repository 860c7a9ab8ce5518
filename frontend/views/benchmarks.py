"""Server-rendered pages of benchmark runs: the list with its filters, the upload of a result file (refused with every
format's reason and nothing stored), a run's metrics, notes, failures, latency distributions, goodput and measured
versus estimated, a sweep's curves with the knee, and two runs side by side. Every read is scoped to the user's
organisation (another organisation's id is a 404); the writes go through benchmarks_app's services. The page script
(benchmarks.js) draws the charts, polls importing runs, tries other SLOs, sets the run's links and calibrates."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models.fields.json import KeyTransform
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View

from benchmarks_app.models import BenchmarkRun, BenchmarkSeries, LoadTest
from benchmarks_app.results.analysis import KNEE_THROUGHPUT_SHARE
from benchmarks_app.results.detect import IMPORTERS, MAX_BYTES
from benchmarks_app.results.run import METRIC_KEYS
from benchmarks_app.selectors.loadtests import loadtest_list_for_organisation
from benchmarks_app.selectors.runs import (
    benchmark_run_get_for_organisation,
    benchmark_run_list_for_organisation,
    benchmark_series_get_for_organisation,
)
from benchmarks_app.services.analysis import benchmark_run_goodput, benchmark_series_report, run_slo
from benchmarks_app.services.comparisons import run_missing
from benchmarks_app.services.runs import benchmark_import, benchmark_run_delete
from benchmarks_app.tasks import benchmark_requests_store_task
from frontend.forms import OrganisationRowsForm
from frontend.presenters.labels import engine_name_map, metric_labels, page_labels
from frontend.views.estimates import engine_label_map, gpu_options, model_option_groups
from frontend.views.memory_logs import gib, time_text
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.models import Organisation
from sizing.selectors.deployments import deployment_list_for_organisation
from sizing.services.estimates import organisation_for_user
from sizing.texts.findings import NO_VALUE

MIB = 2**20
LIST_LIMIT = 500  # runs the list shows (newest first), as the API
PERCENTILE_FIELDS = ("p50", "p90", "p95", "p99")
STAT_FIELDS = ("mean", *PERCENTILE_FIELDS)
SLO_FIELDS = ("ttft_ms", "tpot_ms", "e2e_ms")
CDF_KEYS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")
FILTERS = ("deployment", "model", "gpu", "engine", "tool")
LIST_DEFERRED = ("distributions", "reported", "settings", "notes", "error")  # not shown in the list: left unread
LOWER_IS_BETTER = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "ntpot_ms", "failed", "incomplete"}
HIGHER_IS_BETTER = {"output_tokens_per_s", "requests_per_s", "total_tokens_per_s", "completed"}
TOOL_NAMES = {
    "vllm": "vLLM bench serve",
    "sglang": "SGLang bench_serving",
    "guidellm": "GuideLLM",
    "aiperf": "AIPerf",
    "genai_perf": "GenAI-Perf",
    "llmperf": "llmperf",
    "inference_perf": "inference-perf",
    "llm_sizing": "llm-sizing loadgen",
}


# ---------------------------------------------------------------------------------------------------------------
# Words and numbers


def _metric_label(key: str) -> str:
    return metric_labels().get(key, (key, key))[0]


def number_text(value: Any, unit: str = "") -> str:
    """Milliseconds with two decimals below 10, one below 1,000, none above; tokens and counts whole where whole."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return NO_VALUE
    if isinstance(value, float) and not math.isfinite(value):
        return "∞" if value > 0 else NO_VALUE
    magnitude = abs(value)
    if unit == "ms":
        decimals = 2 if magnitude < 10 else 1 if magnitude < 1000 else 0
    elif float(value).is_integer():
        decimals = 0
    else:
        decimals = 2 if magnitude < 10 else 1 if magnitude < 1000 else 0
    return f"{value:,.{decimals}f}"


def _signed(value: Any, unit: str = "") -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return NO_VALUE
    if value == 0:
        return "0"
    return ("+" if value > 0 else "−") + number_text(abs(value), unit)


def _share(value: Any, *, signed: bool = False) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return NO_VALUE
    text = f"{abs(value) * 100:,.1f}%"
    if not signed or value == 0:
        return text if value >= 0 else "−" + text
    return ("+" if value > 0 else "−") + text


def _unit(key: str) -> str:
    return "ms" if key.endswith("_ms") else "tokens" if key.endswith("_tokens") else ""


def load_text(load: Mapping[str, Any] | None) -> str:
    """The run's load in words: "16 concurrent clients", "4 requests/s", "offline (all at once)"."""
    load = load or {}
    kind = load.get("kind")
    if kind == "concurrency" and load.get("concurrency") is not None:
        return ngettext("%(count)s concurrent client", "%(count)s concurrent clients", int(load["concurrency"])) % {
            "count": number_text(load["concurrency"])
        }
    if kind == "rate" and load.get("rate") is not None:
        text = _("%(rate)s requests/s") % {"rate": number_text(load["rate"])}
        if load.get("concurrency"):
            text += " · " + _("at most %(count)s at once") % {"count": number_text(load["concurrency"])}
        return text
    if kind == "offline":
        return _("offline (all at once)")
    return NO_VALUE


def _tool_text(run: BenchmarkRun) -> str:
    name = TOOL_NAMES.get(run.tool, run.tool)
    return f"{name} {run.tool_version}" if run.tool_version else name


def _gpu_text(run: BenchmarkRun) -> str:
    if run.gpu is None:
        return f"? × {run.gpu_count}" if run.gpu_count else NO_VALUE
    return f"{run.gpu.name} × {run.gpu_count}" if run.gpu_count else run.gpu.name


def _model_text(run: BenchmarkRun) -> str:
    return run.model.slug if run.model else (run.model_name or NO_VALUE)


def _engine_text(run: BenchmarkRun) -> str:
    if not run.engine:
        return NO_VALUE
    name = engine_name_map().get(run.engine, run.engine)
    return f"{name} {run.engine_version}" if run.engine_version else name


def _metric(run: BenchmarkRun, key: str, field: str) -> Any:
    return ((run.metrics or {}).get(key) or {}).get(field)


def _insufficient(run: BenchmarkRun, key: str, field: str) -> bool:
    return field in (((run.metrics or {}).get(key) or {}).get("insufficient") or [])


def status_label(status: str) -> str:
    return {"importing": _("Importing"), "running": _("Measuring"), "done": _("Done"), "failed": _("Failed")}.get(
        status, status
    )


def source_label(source: Any) -> str:
    return {"recomputed": _("recomputed"), "reported": _("as reported by the tool")}.get(str(source), str(source))


def source_title(source: Any) -> str:
    return {
        "recomputed": _("Recomputed from the file's per-request records, by this service's definitions"),
        "reported": _("Copied from the tool's own summary: the file has no per-request records to recompute it from"),
    }.get(str(source), str(source))


# ---------------------------------------------------------------------------------------------------------------
# A load test's verdict (BenchmarkRun.verdict, LoadTest.verdict: benchmarks_app.loadtests.scenarios.judge)


def verdict_label(verdict: Any) -> str:
    return {"pass": _("Pass"), "fail": _("Fail"), "invalid": _("Invalid"), "unknown": _("Not measured")}.get(
        str(verdict), str(verdict)
    )


def criterion_label(code: Any) -> str:
    return {
        "client_fidelity": _("Client fidelity"),
        "fault_injected": _("Failure injected"),
        "slo_attainment": _("SLO attainment"),
        "error_rate": _("Error rate"),
        "recovery_time": _("Time to recover"),
        "memory": _("Memory verdict"),
    }.get(str(code), str(code))


def memory_check_label(code: Any) -> str:
    return {
        "peak_within_commitment": _("Peak within the commitment"),
        "kv_below_full": _("KV cache never full"),
        "no_preemption": _("No preemption"),
        "no_oom": _("No out-of-memory event"),
        "no_restart": _("No restart"),
    }.get(str(code), str(code))


def _state_label(state: Any) -> str:
    return {"pass": _("Passed"), "fail": _("Failed")}.get(str(state), _("Not measured"))


def _seconds(value: Any) -> str:
    return (
        _("%(value)s s") % {"value": number_text(value)}
        if isinstance(value, int | float) and not isinstance(value, bool)
        else NO_VALUE
    )


def _criterion_figures(criterion: Mapping[str, Any]) -> tuple[str, str]:
    """The criterion's measured value and its limit, with their units."""
    code, measured, limit = criterion.get("code"), criterion.get("measured"), criterion.get("limit")
    if code in ("slo_attainment", "error_rate"):
        sign = "≥" if code == "slo_attainment" else "≤"
        return _share(measured), f"{sign} {_share(limit)}" if _share(limit) != NO_VALUE else NO_VALUE
    if code == "recovery_time":
        measured_text = (
            _seconds(measured)
            if measured is not None
            else (_("not recovered") if criterion.get("verdict") == "fail" else NO_VALUE)
        )
        return measured_text, f"≤ {_seconds(limit)}"
    if code == "fault_injected":
        return number_text(measured), f"≥ {number_text(limit)}"
    if code == "client_fidelity":
        words = {True: _("valid"), False: _("invalid")}
        return words.get(measured, NO_VALUE) if isinstance(measured, bool) else NO_VALUE, _("valid")
    if code == "memory":
        return verdict_label(measured) if measured else NO_VALUE, verdict_label("pass")
    return number_text(measured), number_text(limit)


def _criterion_text(criterion: Mapping[str, Any], figures: Mapping[str, Any], scenario: str) -> str:
    """The criterion in words, built from its code and the verdict's figures (KeyError/TypeError when a figure the
    words need is missing: the caller falls back to the English detail)."""
    code, state = criterion["code"], criterion["verdict"]
    outage = scenario == "failure"
    if code == "client_fidelity":
        return {
            "pass": _("The client sent the load it was asked to"),
            "fail": _("The client could not send the load it was asked to: this is not a measurement of the server"),
            "unknown": _("The client fidelity is not known for this run"),
        }[state]
    if code == "fault_injected":
        if state != "pass":
            return _("No failure was injected: the test does not test a failure")
        faults = figures.get("faults") or []
        count = int(criterion["measured"])
        return ngettext(
            "%(count)s failure injected, the first at %(time)s s",
            "%(count)s failures injected, the first at %(time)s s",
            count,
        ) % {"count": count, "time": number_text(float(faults[0]["t_s"]))}
    if code in ("slo_attainment", "error_rate") and state == "unknown":
        return (
            _("No request finished outside the outage: not measured")
            if outage
            else _("No request finished in the measurement window: not measured")
        )
    if code == "slo_attainment":
        values = {
            "good": number_text(int(figures["good"])),
            "requests": number_text(int(figures["judged_requests"])),
            "share": _share(criterion["measured"]),
            "limit": _share(criterion["limit"]),
        }
        if outage:
            return (
                _(
                    "%(good)s of %(requests)s requests outside the outage met every SLO (%(share)s); at least "
                    "%(limit)s required, errors counting as misses"
                )
                % values
            )
        return (
            _(
                "%(good)s of %(requests)s requests in the measurement window met every SLO (%(share)s); at least "
                "%(limit)s required, errors counting as misses"
            )
            % values
        )
    if code == "error_rate":
        values = {
            "errors": number_text(int(figures["judged_errors"])),
            "requests": number_text(int(figures["judged_requests"])),
            "share": _share(criterion["measured"]),
            "limit": _share(criterion["limit"]),
        }
        if outage:
            return (
                _(
                    "%(errors)s of %(requests)s requests outside the outage failed (%(share)s); at most %(limit)s "
                    "allowed"
                )
                % values
            )
        return (
            _(
                "%(errors)s of %(requests)s requests in the measurement window failed (%(share)s); at most "
                "%(limit)s allowed"
            )
            % values
        )
    if code == "recovery_time":
        limit = number_text(float(criterion["limit"]))
        if criterion.get("measured") is None:
            return _("The endpoint had not recovered when the test ended; recovery within %(limit)s s required") % {
                "limit": limit
            }
        return _("Requests succeeded again %(seconds)s s after the failure; recovery within %(limit)s s required") % {
            "seconds": number_text(float(criterion["measured"])),
            "limit": limit,
        }
    if code == "memory":
        return {
            "pass": _("The memory checks passed"),
            "fail": _("A memory check failed: see the memory checks"),
            "unknown": _("The memory was not measured: no metrics were scraped, or none could be read"),
        }[state]
    raise KeyError(code)


def _memory_check_text(check: Mapping[str, Any], figures: Mapping[str, Any]) -> str:
    """A memory check in words where its figures allow; KeyError otherwise (the caller shows the English detail)."""
    code, state, value = check["code"], check["verdict"], check.get("value")
    if state == "fail":
        raise KeyError(code)  # the violation's details are in the English detail
    if code == "peak_within_commitment":
        if state == "unknown":
            return _("No GPU memory was scraped, or no commitment was given: not judged")
        return _("The GPU memory peaked at %(peak)s, within the commitment of %(committed)s per GPU") % {
            "peak": gib(figures["gpu_peak_bytes"]),
            "committed": gib(figures["committed_bytes_per_gpu"]),
        }
    if code == "kv_below_full":
        if state == "unknown":
            return _("No KV-cache usage was scraped")
        return _("KV-cache usage peaked at %(peak)s") % {"peak": _share(figures["kv_peak"])}
    if code == "no_preemption":
        return _("No preemption counter was scraped") if state == "unknown" else _("No preemption")
    if code == "no_oom":
        return (
            _("Nothing could have shown an out-of-memory event: no GPU memory series and no events")
            if state == "unknown"
            else _("No out-of-memory event and no XID error")
        )
    if code == "no_restart":
        if state == "unknown":
            return _("Too few server samples to see a restart")
        if isinstance(value, int | float) and value:
            count = int(value)
            return ngettext(
                "%(count)s restart, allowed in a failure-injection test",
                "%(count)s restarts, allowed in a failure-injection test",
                count,
            ) % {"count": count}
        return _("No server restart")
    raise KeyError(code)


def _posix_time(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return NO_VALUE
    return time_text(datetime.fromtimestamp(value, tz=UTC).isoformat())


def slo_summary(slo: Mapping[str, Any]) -> str:
    parts = [
        f"{_metric_label(key)} ≤ {number_text(slo[key])} ms"
        for key in SLO_FIELDS
        if isinstance(slo.get(key), int | float)
    ]
    return ", ".join(parts)


def run_verdict_context(verdict: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A load test's verdict for the page (partials/loadtest_verdict.html): the overall badge and summary, each
    criterion with its measured value against its limit (units shown) in words, and the memory verdict's checks.
    The criteria are worded from their codes in the active language; where a figure is missing, the judge's English
    detail is shown instead (marked lang="en"). None when there is no verdict."""
    if not verdict or not isinstance(verdict, Mapping):
        return None
    overall = str(verdict.get("verdict") or "")
    scenario = str(verdict.get("scenario") or "")
    figures = verdict.get("figures") if isinstance(verdict.get("figures"), Mapping) else {}
    rows = []
    for criterion in verdict.get("criteria") or []:
        state = str(criterion.get("verdict") or "unknown")
        try:
            text, translated = _criterion_text(criterion, figures, scenario), True
        except (KeyError, TypeError, ValueError, IndexError):
            text, translated = str(criterion.get("detail") or ""), False
        measured, limit = _criterion_figures(criterion)
        rows.append(
            {
                "code": criterion.get("code"),
                "label": criterion_label(criterion.get("code")),
                "state": state,
                "status": _state_label(state),
                "symbol": {"pass": "✓", "fail": "✕"}.get(state, "—"),
                "measured": measured,
                "limit": limit,
                "text": text,
                "translated": translated,
                "detail": str(criterion.get("detail") or ""),
            }
        )
    failed = [row["label"] for row in rows if row["state"] == "fail"]
    summary = {
        "pass": _("Every criterion passed"),
        "fail": _("Failed: %(criteria)s") % {"criteria": ", ".join(failed)},
        "invalid": _(
            "Invalid: this is not a measurement of the server (the client could not send the load, "
            "the failure was not injected, or no request was measured)"
        ),
    }.get(overall, "")
    memory = verdict.get("memory") if isinstance(verdict.get("memory"), Mapping) else None
    memory_context = None
    if memory:
        memory_figures = memory.get("figures") if isinstance(memory.get("figures"), Mapping) else {}
        checks = []
        for check in memory.get("checks") or []:
            state = str(check.get("verdict") or "unknown")
            try:
                text, translated = _memory_check_text(check, memory_figures), True
            except (KeyError, TypeError, ValueError):
                text, translated = str(check.get("detail") or ""), False
            checks.append(
                {
                    "code": check.get("code"),
                    "label": memory_check_label(check.get("code")),
                    "state": state,
                    "status": _state_label(state),
                    "symbol": {"pass": "✓", "fail": "✕"}.get(state, "—"),
                    "text": text,
                    "translated": translated,
                    "first_violation": _posix_time(check.get("first_violation_s")) if state == "fail" else NO_VALUE,
                }
            )
        memory_context = {
            "verdict": str(memory.get("verdict") or "unknown"),
            "label": verdict_label(memory.get("verdict")),
            "checks": checks,
            "figures": [
                (label, value)
                for label, value in (
                    (_("KV-cache usage peak"), _share(memory_figures.get("kv_peak"))),
                    (_("KV-cache usage P95"), _share(memory_figures.get("kv_p95"))),
                    (_("Seconds at 90% KV-cache usage or more"), _seconds(memory_figures.get("kv_seconds_above_90"))),
                    (_("Preemptions"), number_text(memory_figures.get("preemptions"))),
                    (_("Running requests, peak"), number_text(memory_figures.get("running_peak"))),
                    (_("Waiting requests, peak"), number_text(memory_figures.get("waiting_peak"))),
                    (_("GPU memory peak"), gib(memory_figures.get("gpu_peak_bytes"))),
                    (_("Committed memory per GPU"), gib(memory_figures.get("committed_bytes_per_gpu"))),
                )
                if value != NO_VALUE
            ],
        }
    slo = figures.get("slo") if isinstance(figures.get("slo"), Mapping) else {}
    counts = [
        (label, value)
        for label, value in (
            (_("Requests judged"), number_text(figures.get("judged_requests"))),
            (_("Met every SLO"), number_text(figures.get("good"))),
            (_("Errors"), number_text(figures.get("judged_errors"))),
            (_("Incomplete (cut by the test's end, left out)"), number_text(figures.get("incomplete"))),
            (_("In flight during the outage (left out)"), number_text(figures.get("excluded_requests"))),
            (_("Time to recover"), _seconds(figures.get("recovery_s"))),
        )
        if value != NO_VALUE
    ]
    return {
        "verdict": overall,
        "label": verdict_label(overall),
        "summary": summary,
        "scenario": scenario,
        "partial": bool(verdict.get("partial")),
        "criteria": rows,
        "memory": memory_context,
        "memory_unverified": memory_context is None or memory_context["verdict"] == "unknown",
        "slo_text": slo_summary(slo),
        "counts": counts,
        "ttft_basis": _("TTFT from the scheduled send time (open loop)")
        if figures.get("ttft_basis") == "ttft_sched_ms"
        else "",
    }


def server_series_has_samples(series: Mapping[str, Any] | None) -> bool:
    """Whether a run's scraped server series (BenchmarkRun.server_series) has a sample to draw."""
    servers = (series or {}).get("servers") if isinstance(series, Mapping) else None
    return any(isinstance(server, Mapping) and server.get("samples") for server in servers or [])


# ---------------------------------------------------------------------------------------------------------------
# The strings benchmarks.js shows


# ---------------------------------------------------------------------------------------------------------------
# Shared pieces


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _run_or_404(request: HttpRequest, run_id: int) -> BenchmarkRun:
    run = benchmark_run_get_for_organisation(organisation=_organisation(request), run_id=run_id)
    if run is None:
        raise Http404(_("No such benchmark run"))
    return run


def _series_or_404(request: HttpRequest, series_id: int) -> BenchmarkSeries:
    series = benchmark_series_get_for_organisation(organisation=_organisation(request), series_id=series_id)
    if series is None:
        raise Http404(_("No such benchmark series"))
    return series


def _mib_text(value: int) -> str:
    return f"{value / MIB:,.1f}".removesuffix(".0")


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _cell(run: BenchmarkRun, key: str, field: str) -> dict[str, Any]:
    value = _metric(run, key, field)
    return {"text": number_text(value, _unit(key)), "insufficient": _insufficient(run, key, field)}


def _status_counts(run: BenchmarkRun) -> dict[str, Any]:
    """Completed, failed and incomplete (cut by the run's end) requests: the file's counts, else those of the
    per-request records (the list's rows carry these as `record_counts`, their distributions left unread)."""
    if hasattr(run, "record_counts"):
        counts = run.record_counts if isinstance(run.record_counts, dict) else {}
    else:
        counts = (run.distributions or {}).get("status_counts") or {}
    completed = run.completed if run.completed is not None else counts.get("ok")
    failed = run.failed if run.failed is not None else counts.get("error")
    incomplete = run.incomplete if run.incomplete is not None else counts.get("incomplete")
    total = sum(v for v in (completed, failed, incomplete) if isinstance(v, int))
    return {
        "completed": completed,
        "failed": failed,
        "incomplete": incomplete,
        "total": total,
        "failed_share": _share(failed / total) if failed and total else None,
        "incomplete_share": _share(incomplete / total) if incomplete and total else None,
        "records": counts,
    }


# ---------------------------------------------------------------------------------------------------------------
# Upload


class BenchmarkUploadForm(OrganisationRowsForm):
    file = forms.FileField(allow_empty_file=True, label=gettext_lazy("Result file"))
    deployment = forms.IntegerField(min_value=1, required=False, label=gettext_lazy("Deployment"))
    model = forms.CharField(max_length=200, required=False, label=gettext_lazy("Model"))
    gpu = forms.CharField(max_length=80, required=False, label=gettext_lazy("GPU"))
    gpu_count = forms.IntegerField(min_value=1, max_value=1024, required=False, label=gettext_lazy("GPU count"))
    tp = forms.IntegerField(min_value=1, max_value=64, required=False, label=gettext_lazy("TP"))
    engine = forms.ChoiceField(
        choices=[("", "—"), *((e, e) for e in ENGINE_CHOICES)], required=False, label=gettext_lazy("Engine")
    )
    engine_version = forms.CharField(max_length=60, required=False, label=gettext_lazy("Engine version"))


_REFUSALS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (
        re.compile(r"^(?P<name>.*?): no importer reads this file: "),
        lambda m: _("%(name)s: no format reads this file. What each format found:") % m,
    ),
    (re.compile(r"^(?P<name>.*?): the file is empty$"), lambda m: _("%(name)s: the file is empty") % m),
    (
        re.compile(r"^(?P<name>.*?): binary content \(not a text result file\)$"),
        lambda m: _("%(name)s: binary content, not a text result file") % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): not UTF-8 text \(byte (?P<byte>[\d,]+)\)$"),
        lambda m: _("%(name)s: not UTF-8 text (at byte %(byte)s)") % m,
    ),
)


def upload_refusal(error: SizingError, name: str) -> dict[str, Any]:
    """A refused upload for the page: the reason in the active language where its words are known here (the
    formats' own reasons stay in English), and each format tried with its reason."""
    extra = error.extra or {}
    descriptions = {importer.format: importer.description for importer in IMPORTERS}
    tried = [
        {
            "format": item.get("format"),
            "description": descriptions.get(item.get("format"), ""),
            "reason": item.get("reason"),
        }
        for item in extra.get("tried") or []
    ]
    message = error.message
    translated = None
    if isinstance(extra.get("size_bytes"), int) and isinstance(extra.get("limit_bytes"), int):
        translated = _(
            "%(name)s: the file is %(size)s bytes; the limit is %(limit)s bytes (%(limit_mib)s MiB): split "
            "the run, or upload the summary without per-request details"
        ) % {
            "name": name,
            "size": f"{extra['size_bytes']:,}",
            "limit": f"{extra['limit_bytes']:,}",
            "limit_mib": _mib_text(extra["limit_bytes"]),
        }
    else:
        for pattern, words in _REFUSALS:
            match = pattern.match(message)
            if match:
                translated = str(words(match.groupdict()))
                break
    return {"message": translated or message, "translated": translated is not None, "original": message, "tried": tried}


def _oversize_error(name: str, size: int) -> SizingError:
    message = (
        f"{name}: the file is {size:,} bytes; the limit is {MAX_BYTES:,} bytes (50 MiB): split the run, or "
        "upload the summary without per-request details"
    )
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=message,
        extra={"size_bytes": size, "limit_bytes": MAX_BYTES, "fields": {"file": [message]}},
    )


# ---------------------------------------------------------------------------------------------------------------
# /benchmarks/


def _filter_values(request: HttpRequest) -> dict[str, str]:
    return {key: request.GET.get(key, "").strip() for key in FILTERS}


def _filter_choices(organisation: Organisation) -> dict[str, list[dict[str, str]]]:
    """The values the filters offer: the organisation's deployments, and the models, GPUs, engines and tools its
    runs name."""
    runs = benchmark_run_list_for_organisation(organisation=organisation)
    models = sorted({slug for slug in runs.exclude(model=None).values_list("model__slug", flat=True)})
    gpus = dict(runs.exclude(gpu=None).values_list("gpu__slug", "gpu__name").distinct())
    engines = sorted({e for e in runs.values_list("engine", flat=True).distinct() if e})
    tools = sorted({t for t in runs.values_list("tool", flat=True).distinct() if t})
    engine_labels = engine_label_map()
    return {
        "deployment": [
            {"value": str(d.pk), "label": d.name} for d in deployment_list_for_organisation(organisation=organisation)
        ],
        "model": [{"value": slug, "label": slug} for slug in models],
        "gpu": [{"value": slug, "label": name} for slug, name in sorted(gpus.items(), key=lambda item: item[1])],
        "engine": [{"value": e, "label": engine_labels.get(e, e)} for e in engines],
        "tool": [{"value": t, "label": TOOL_NAMES.get(t, t)} for t in tools],
    }


def _list_row(run: BenchmarkRun) -> dict[str, Any]:
    counts = _status_counts(run)
    return {
        "run": run,
        "tool": _tool_text(run),
        "model": _model_text(run),
        "gpu": _gpu_text(run),
        "engine": _engine_text(run),
        "load": load_text(run.load),
        "counts": counts,
        "ttft_p50": _cell(run, "ttft_ms", "p50"),
        "ttft_p99": _cell(run, "ttft_ms", "p99"),
        "tpot_p50": _cell(run, "tpot_ms", "p50"),
        "output_tokens_per_s": number_text(run.output_tokens_per_s),
        "status_label": status_label(run.status),
        "progress_percent": round((run.progress or 0) * 100),
    }


class BenchmarkListPageView(LoginRequiredMixin, View):
    """GET: the runs with their filters, the upload form, compare and calibrate. POST: upload a result file (the
    first run's page, or the series' when the file holds several; a refusal: this page, status 400, nothing
    stored)."""

    template_name = "frontend/benchmarks.html"

    def _render(
        self,
        request: HttpRequest,
        *,
        form: BenchmarkUploadForm | None = None,
        refusal: dict[str, Any] | None = None,
        status: int = 200,
    ) -> HttpResponse:
        organisation = _organisation(request)
        filters = _filter_values(request)
        deployment = int(filters["deployment"]) if filters["deployment"].isdigit() else None
        rows = (
            benchmark_run_list_for_organisation(
                organisation=organisation,
                deployment=deployment,
                model=filters["model"] or None,
                gpu=filters["gpu"] or None,
                engine=filters["engine"] or None,
                tool=filters["tool"] or None,
            )
            .defer(*LIST_DEFERRED)
            .annotate(record_counts=KeyTransform("status_counts", "distributions"))
        )
        runs = list(rows[: LIST_LIMIT + 1])
        catalog, own, _supported = model_option_groups(request.user)
        form = form or BenchmarkUploadForm(organisation=organisation)
        engine_labels = engine_label_map()
        context = {
            "rows": [_list_row(run) for run in runs[:LIST_LIMIT]],
            "truncated": len(runs) > LIST_LIMIT,
            "list_limit": LIST_LIMIT,
            "filters": filters,
            "filtered": any(filters.values()),
            "choices": _filter_choices(organisation),
            "form": form,
            "refusal": refusal,
            "max_upload_mib": _mib_text(MAX_BYTES),
            "catalog_models": catalog,
            "own_models": own,
            "gpus": gpu_options(),
            "deployments": list(deployment_list_for_organisation(organisation=organisation)),
            "engine_choices": [{"value": e, "label": engine_labels.get(e, e)} for e in ENGINE_CHOICES],
            "form_values": {key: form[key].value() or "" for key in ("deployment", "model", "gpu", "engine")},
            "importing": any(run.status == BenchmarkRun.Status.IMPORTING for run in runs),
            "labels": page_labels(),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        organisation = _organisation(request)
        form = BenchmarkUploadForm(request.POST, request.FILES, organisation=organisation)
        refusal = None
        if form.is_valid():
            values = form.cleaned_data
            upload = values["file"]
            name = str(upload.name)
            try:
                if upload.size > MAX_BYTES:  # before reading it
                    raise _oversize_error(name, upload.size)
                runs = benchmark_import(
                    organisation=organisation,
                    user=request.user,
                    name=name,
                    data=upload.read(MAX_BYTES + 1),
                    deployment=values["deployment"],
                    model=values["model"],
                    gpu=values["gpu"],
                    gpu_count=values["gpu_count"],
                    tp=values["tp"],
                    engine=values["engine"] or "",
                    engine_version=values["engine_version"] or "",
                    store_requests=benchmark_requests_store_task.delay,
                )
            except SizingError as error:
                refusal = upload_refusal(error, name)
            else:
                messages.success(
                    request,
                    ngettext("%(count)s run imported from %(name)s", "%(count)s runs imported from %(name)s", len(runs))
                    % {"count": len(runs), "name": name},
                )
                if len(runs) > 1 and runs[0].series_id:
                    return HttpResponseRedirect(reverse("frontend:benchmark-series", args=[runs[0].series_id]))
                return HttpResponseRedirect(reverse("frontend:benchmark", args=[runs[0].pk]))
        return self._render(request, form=form, refusal=refusal, status=400)


# ---------------------------------------------------------------------------------------------------------------
# /benchmarks/<id>/


def _metric_rows(run: BenchmarkRun) -> list[dict[str, Any]]:
    """The canonical metrics in METRICS.md's order (any other key after), each with its percentiles, n and source;
    a percentile from too few samples is marked."""
    metrics = run.metrics or {}
    keys = [key for key in METRIC_KEYS if key in metrics] + sorted(set(metrics) - set(METRIC_KEYS))
    labels = metric_labels()
    rows = []
    for key in keys:
        stat = metrics.get(key) or {}
        unit = _unit(key)
        short, title = labels.get(key, (key, key))
        rows.append(
            {
                "key": key,
                "label": short,
                "title": title,
                "unit": _("ms") if unit == "ms" else _("tokens") if unit == "tokens" else "",
                "cells": [
                    {
                        "field": field,
                        "text": number_text(stat.get(field), unit),
                        "insufficient": field in (stat.get("insufficient") or []),
                    }
                    for field in STAT_FIELDS
                ],
                "n": number_text(stat.get("n")),
                "n_value": stat.get("n"),
                "source": stat.get("source"),
                "source_label": source_label(stat.get("source")),
                "source_title": source_title(stat.get("source")),
                "range": f"{number_text(stat.get('min'), unit)} – {number_text(stat.get('max'), unit)}"
                if stat.get("min") is not None
                else NO_VALUE,
            }
        )
    return rows


def _goodput_context(run: BenchmarkRun, slo: Mapping[str, float]) -> dict[str, Any] | None:
    goodput = benchmark_run_goodput(run=run, slo=slo)
    if goodput is None:
        return None
    return {
        **goodput,
        "attainment_text": _share(goodput.get("attainment")),
        "rate_text": number_text(goodput.get("goodput_requests_per_s")),
    }


def compare_missing(run: BenchmarkRun) -> list[str]:
    """What the run lacks for measured versus estimated (the model, the GPU, readable traffic)."""
    return run_missing(run)


def _missing_words(missing: Iterable[str]) -> list[str]:
    words = {
        "model": _("the model (a catalog model or one of your uploads)"),
        "gpu": _("the GPU"),
        "traffic": _(
            "the traffic (the file gives no mean input and output lengths, or no load), which cannot be set here"
        ),
    }
    return [words.get(item, item) for item in missing]


def _facts(run: BenchmarkRun) -> list[tuple[str, str]]:
    """What the run is, where it ran, its load and throughputs; the facts a file may not give are left out when it
    does not (what the run ran on is always shown: a dash says it is not set)."""
    always = {_("Model"), _("GPU"), _("TP"), _("Engine"), _("Load")}
    facts = [
        (_("Tool"), _tool_text(run)),
        (_("Format"), run.format or NO_VALUE),
        (_("File"), run.file.name if run.file_id and run.file else NO_VALUE),
        (_("Model"), _model_fact(run)),
        (_("GPU"), _gpu_text(run)),
        (_("TP"), str(run.tp) if run.tp else NO_VALUE),
        (_("Engine"), _engine_text(run)),
        (_("Backend the tool called"), run.backend or NO_VALUE),
        (_("Load"), load_text(run.load)),
        (_("Started"), run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC") if run.started_at else NO_VALUE),
        (_("Duration"), _("%(value)s s") % {"value": number_text(run.duration_s)} if run.duration_s else NO_VALUE),
        (
            _("Output throughput"),
            _("%(value)s tokens/s") % {"value": number_text(run.output_tokens_per_s)}
            if run.output_tokens_per_s is not None
            else NO_VALUE,
        ),
        (
            _("Request throughput"),
            _("%(value)s requests/s") % {"value": number_text(run.requests_per_s)}
            if run.requests_per_s is not None
            else NO_VALUE,
        ),
        (
            _("Total token throughput"),
            _("%(value)s tokens/s") % {"value": number_text(run.total_tokens_per_s)}
            if run.total_tokens_per_s is not None
            else NO_VALUE,
        ),
        (_("Per-request records"), number_text(run.request_count)),
        (
            _("Imported"),
            run.created_at.strftime("%Y-%m-%d %H:%M")
            + (f" · {run.created_by.get_username()}" if run.created_by else ""),
        ),
    ]
    return [(label, value) for label, value in facts if value != NO_VALUE or label in always]


def _model_fact(run: BenchmarkRun) -> str:
    if run.model is None:
        return _("%(name)s (not matched to a known model)") % {"name": run.model_name} if run.model_name else NO_VALUE
    if run.model_name and run.model_name != run.model.slug:
        return f"{run.model.slug} ({run.model_name})"
    return run.model.slug


def _links_initial(run: BenchmarkRun) -> dict[str, Any]:
    return {
        "deployment": run.deployment_id or "",
        "model": run.model.slug if run.model else "",
        "gpu": run.gpu.slug if run.gpu else "",
        "gpu_count": run.gpu_count or "",
        "tp": run.tp or "",
        "engine": run.engine or "",
    }


def _run_load_test(organisation: Organisation, run: BenchmarkRun) -> LoadTest | None:
    """The load test that measures (or measured) into the run, if one did."""
    if run.tool != "llm_sizing":
        return None
    return loadtest_list_for_organisation(organisation=organisation).filter(run=run).first()


class BenchmarkDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/benchmark_detail.html"

    def get(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = _run_or_404(request, run_id)
        organisation = _organisation(request)
        has_server_series = server_series_has_samples(run.server_series)
        slo = run_slo(run)
        missing = compare_missing(run)
        distributions = run.distributions or {}
        catalog, own, _supported = model_option_groups(request.user)
        engine_labels = engine_label_map()
        context = {
            "run": run,
            "facts": _facts(run),
            "counts": _status_counts(run),
            "metric_rows": _metric_rows(run),
            "notes": list(run.notes or []),
            "status_label": status_label(run.status),
            "progress_percent": round((run.progress or 0) * 100),
            "has_distributions": any((distributions.get(key) or {}).get("n") for key in CDF_KEYS),
            "chart_data": {
                "distributions": {key: distributions.get(key) for key in CDF_KEYS},
                "slo": slo,
                "status": run.status,
                "run_url": reverse("benchmarks:benchmark-run-detail", args=[run.pk]),
                "analysis_url": reverse("benchmarks:benchmark-run-analysis", args=[run.pk]),
                "links_url": reverse("benchmarks:benchmark-run-links", args=[run.pk]),
                "compare_pending": not missing,
                "server_series": run.server_series if has_server_series else None,
            },
            "verdict": run_verdict_context(run.verdict),
            "has_server_series": has_server_series,
            "load_test": _run_load_test(organisation, run),
            "slo": slo,
            "slo_source": _("the deployment %(name)s") % {"name": run.deployment.name}
            if run.deployment and slo
            else "",
            "slo_rows": [(key, _metric_label(key), slo.get(key)) for key in SLO_FIELDS],
            "goodput": _goodput_context(run, slo),
            "missing": missing,
            "missing_items": list(zip(missing, _missing_words(missing), strict=True)),
            "links": _links_initial(run),
            "catalog_models": catalog,
            "own_models": own,
            "gpus": gpu_options(),
            "deployments": list(deployment_list_for_organisation(organisation=organisation)),
            "engine_choices": [{"value": e, "label": engine_labels.get(e, e)} for e in ENGINE_CHOICES],
            "reported_json": _json(run.reported or {}),
            "settings_json": _json(run.settings or {}),
            "requests_url": reverse("benchmarks:benchmark-run-detail", args=[run.pk]) + "?requests_page=0",
            "labels": page_labels(),
        }
        return render(request, self.template_name, context)


class BenchmarkDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = _run_or_404(request, run_id)
        name = run.name
        benchmark_run_delete(run=run)
        messages.success(request, _("Run %(name)s deleted") % {"name": name})
        return HttpResponseRedirect(reverse("frontend:benchmarks"))


# ---------------------------------------------------------------------------------------------------------------
# /benchmarks/series/<id>/


def knee_text(report: Mapping[str, Any]) -> str:
    """The knee in words: where the throughput stops following the load."""
    axis, knee = report.get("axis"), report.get("knee")
    points = report.get("points") or []
    if axis == "index":
        return _("The runs of this series share no load axis (concurrency or rate): there is no knee to mark")
    if knee is None:
        return _("Too few runs with a throughput (fewer than three) to find a knee")
    point = next((p for p in points if p.get("x") == knee), {})
    load = (
        _("%(rate)s requests/s achieved") % {"rate": number_text(knee)}
        if axis == "achieved_rate"
        else load_text({"kind": axis, axis: knee})
    )
    best = max((p.get("output_tokens_per_s") or 0 for p in points), default=0)
    return _(
        "The knee is at %(load)s: the output throughput reaches %(share)s of the series' best there (%(tokens)s "
        "of %(best)s tokens/s); more load beyond it mostly adds latency"
    ) % {
        "load": load,
        "share": f"{KNEE_THROUGHPUT_SHARE * 100:.0f}%",
        "tokens": number_text(point.get("output_tokens_per_s")),
        "best": number_text(best),
    }


class BenchmarkSeriesPageView(LoginRequiredMixin, View):
    template_name = "frontend/benchmark_series.html"

    def get(self, request: HttpRequest, series_id: int) -> HttpResponse:
        series = _series_or_404(request, series_id)
        report = benchmark_series_report(series=series)
        axis = report["axis"]
        runs = {run.pk: run for run in series.runs.all()}
        rows = []
        for point in report["points"]:
            run = runs.get(point.get("run"))
            rows.append(
                {
                    "point": point,
                    "run": run,
                    "is_knee": report.get("knee") is not None and point["x"] == report["knee"],
                    "x": number_text(point["x"]) if axis != "index" else str(point["x"]),
                    "output_tokens_per_s": number_text(point.get("output_tokens_per_s")),
                    "requests_per_s": number_text(point.get("requests_per_s")),
                    **{
                        key: number_text(point.get(key), "ms")
                        for key in ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "e2e_p50_ms")
                    },
                    "failed": point.get("failed"),
                    "status_label": status_label(run.status) if run else "",
                }
            )
        first = next(iter(runs.values()), None)
        context = {
            "series": series,
            "report": report,
            "rows": rows,
            "knee_text": knee_text(report),
            "axis_label": {
                "concurrency": _("Concurrent clients"),
                "rate": _("Request rate (requests/s)"),
                "achieved_rate": _("Achieved request rate (requests/s)"),
                "index": _("Run in the series"),
            }.get(axis, axis),
            "first": first,
            "tool": _tool_text(first) if first else NO_VALUE,
            "model": _model_text(first) if first else NO_VALUE,
            "gpu": _gpu_text(first) if first else NO_VALUE,
            "failed_total": sum(p.get("failed") or 0 for p in report["points"]),
            "chart_data": report,
            "labels": page_labels(),
        }
        return render(request, self.template_name, context)


# ---------------------------------------------------------------------------------------------------------------
# /benchmarks/compare?a=<id>&b=<id>


def _difference(key: str, a: Any, b: Any, unit: str) -> dict[str, Any]:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    if not numbers:
        return {
            "a": number_text(a, unit),
            "b": number_text(b, unit),
            "delta": NO_VALUE,
            "percent": NO_VALUE,
            "class": "",
        }
    delta = b - a
    percent = delta / a if a else None
    verdict = ""
    if delta and key in LOWER_IS_BETTER:
        verdict = "is-worse" if delta > 0 else "is-better"
    elif delta and key in HIGHER_IS_BETTER:
        verdict = "is-better" if delta > 0 else "is-worse"
    return {
        "a": number_text(a, unit),
        "b": number_text(b, unit),
        "delta": _signed(delta, unit),
        "percent": _share(percent, signed=True) if percent is not None else NO_VALUE,
        "class": verdict,
    }


def compare_rows(a: BenchmarkRun, b: BenchmarkRun) -> dict[str, list[dict[str, Any]]]:
    """Counts and throughputs (`counts`) and every canonical metric (`metrics`) of both runs with b − a and
    (b − a) / a."""
    counts_a, counts_b = _status_counts(a), _status_counts(b)
    counts = [
        {"key": key, "label": label, **_difference(key, counts_a[key], counts_b[key], "")}
        for key, label in (
            ("completed", _("Completed")),
            ("failed", _("Failed")),
            ("incomplete", _("Incomplete (cut by the run's end)")),
        )
    ]
    counts.append(
        {
            "key": "request_count",
            "label": _("Per-request records"),
            **_difference("request_count", a.request_count, b.request_count, ""),
        }
    )
    counts.append(
        {"key": "duration_s", "label": _("Duration (s)"), **_difference("duration_s", a.duration_s, b.duration_s, "")}
    )
    throughputs = [
        {"key": key, "label": label, **_difference(key, getattr(a, key), getattr(b, key), "")}
        for key, label in (
            ("output_tokens_per_s", _("Output tokens/s")),
            ("requests_per_s", _("Requests/s")),
            ("total_tokens_per_s", _("Total tokens/s")),
        )
    ]
    keys = [key for key in METRIC_KEYS if key in (a.metrics or {}) or key in (b.metrics or {})]
    keys += sorted((set(a.metrics or {}) | set(b.metrics or {})) - set(METRIC_KEYS))
    metrics = []
    for key in keys:
        unit = _unit(key)
        for index, field in enumerate((*STAT_FIELDS, "n")):
            # the sample count is neither better nor worse
            row = _difference(
                key if field != "n" else "n",
                _metric(a, key, field),
                _metric(b, key, field),
                unit if field != "n" else "",
            )
            if row["a"] == NO_VALUE and row["b"] == NO_VALUE:
                continue
            metrics.append(
                {
                    "key": key,
                    "field": field,
                    "first": index == 0,
                    "label": _metric_label(key),
                    "field_label": _("mean") if field == "mean" else "n" if field == "n" else field.upper(),
                    "a_insufficient": _insufficient(a, key, field),
                    "b_insufficient": _insufficient(b, key, field),
                    "unit": _("ms") if unit == "ms" else "",
                    **row,
                }
            )
    throughputs[0]["group"] = True
    return {"counts": counts + throughputs, "metrics": metrics}


def _run_side(run: BenchmarkRun) -> dict[str, Any]:
    return {
        "run": run,
        "tool": _tool_text(run),
        "model": _model_text(run),
        "gpu": _gpu_text(run),
        "engine": _engine_text(run),
        "load": load_text(run.load),
    }


class BenchmarkComparePageView(LoginRequiredMixin, View):
    template_name = "frontend/benchmark_compare.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        organisation = _organisation(request)
        choices = [
            {"id": run.pk, "label": f"{run.name} · {_tool_text(run)} · {load_text(run.load)}"}
            for run in benchmark_run_list_for_organisation(organisation=organisation)
            .select_related(None)
            .only("pk", "name", "tool", "tool_version", "load")[:LIST_LIMIT]
        ]
        ids = {"a": request.GET.get("a", "").strip(), "b": request.GET.get("b", "").strip()}
        picked = [value.strip() for value in request.GET.getlist("run") if value.strip()]
        if picked and not ids["a"] and not ids["b"]:
            if len(picked) == 2:  # the list's checkboxes: the older run (the smaller id) is A
                first, second = sorted(
                    picked, key=lambda value: (not value.isdigit(), int(value) if value.isdigit() else 0, value)
                )
                ids = {"a": first, "b": second}
            else:
                ids = {"a": "", "b": ""}
        context: dict[str, Any] = {"choices": choices, "problems": [], "labels": page_labels()}
        found: dict[str, BenchmarkRun] = {}
        status = 200
        for key, words in (("a", _("Run A")), ("b", _("Run B"))):
            raw = ids[key]
            context[f"choice_{key}"] = int(raw) if raw.isdigit() else None
            if not raw:
                continue
            run = (
                benchmark_run_get_for_organisation(organisation=organisation, run_id=int(raw))
                if raw.isdigit()
                else None
            )
            if run is None:
                context["problems"].append(
                    _("%(side)s: there is no benchmark run %(id)s in your organisation") % {"side": words, "id": raw}
                )
                status = 404
            else:
                found[key] = run
        if context["choice_b"] is None and choices:
            context["choice_b"] = choices[0]["id"]
        if context["choice_a"] is None and len(choices) > 1:
            context["choice_a"] = choices[1]["id"]
        if context["problems"]:
            return render(request, self.template_name, context, status=status)
        if len(found) < 2:
            if found or request.GET:
                context["problems"].append(_("Choose two runs to compare"))
                status = 400
            return render(request, self.template_name, context, status=status)
        a, b = found["a"], found["b"]
        context.update(
            {
                "a": _run_side(a),
                "b": _run_side(b),
                **compare_rows(a, b),
                "chart_data": {
                    "a": {"name": a.name, "distributions": {k: (a.distributions or {}).get(k) for k in CDF_KEYS}},
                    "b": {"name": b.name, "distributions": {k: (b.distributions or {}).get(k) for k in CDF_KEYS}},
                },
                "has_distributions": any(
                    ((run.distributions or {}).get(k) or {}).get("n") for run in (a, b) for k in CDF_KEYS
                ),
            }
        )
        return render(request, self.template_name, context)

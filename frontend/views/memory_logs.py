"""Server-rendered pages of GPU memory timelines (issue 6, parts 5 and 6): the organisation's monitoring logs with
their health verdicts and the upload (refused with its reason under its field, nothing stored), and a log's verdict
with each check in the user's language, the per-GPU peaks, climbs, OOMs and restarts, the KV-cache pressure and the
notes. Every read is scoped to the user's organisation (another organisation's id is a 404); the writes go through
benchmarks_app's memory services. The page script (memory.js) draws the timelines.

The backend writes each check's message in English, with a stable `code` and the numbers behind the words in
`extra` (benchmarks_app.results.health). Here each code has gettext templates built from `extra`, as sizing/texts/findings.py
does for findings; a code not known here or an `extra` without a number the words need falls back to the English
message (marked lang="en" on the page)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.db.models.fields.json import KeyTransform
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View

from benchmarks_app.models import MemoryLog
from benchmarks_app.results.detect import MAX_BYTES
from benchmarks_app.results.health import verdict_requirements
from benchmarks_app.services.memory_logs import TEXT_MAX_BYTES, memory_log_delete, memory_log_import
from frontend.forms import OrganisationRowsForm
from frontend.presenters.labels import page_labels
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.models import Organisation
from sizing.selectors.deployments import deployment_list_for_organisation
from sizing.services.estimates import organisation_for_user
from sizing.texts.findings import NO_VALUE

MIB = 2**20
GIB = 2**30
LIST_LIMIT = 200  # logs the list shows (newest first), as the API
HOURS_REQUIRED = 72
EVENTS_LIMIT = 100  # events of the logs listed on a log's page
SMI_COMMAND = (
    "nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu --format=csv -l 5 > gpu-memory.csv"
)
# The zones in use, in minutes east of UTC (nvidia-smi writes the host's local time with no zone).
UTC_OFFSETS = (
    -720,
    -660,
    -600,
    -570,
    -540,
    -480,
    -420,
    -360,
    -300,
    -240,
    -210,
    -180,
    -120,
    -60,
    0,
    60,
    120,
    180,
    210,
    240,
    270,
    300,
    330,
    345,
    360,
    390,
    420,
    480,
    525,
    540,
    570,
    600,
    630,
    660,
    720,
    765,
    780,
    840,
)
FORMAT_NAMES = {
    "nvidia_smi_csv": "nvidia-smi CSV",
    "prometheus_scrapes": "Prometheus (DCGM, vLLM, SGLang)",
    "aiperf_gpu_telemetry": "AIPerf GPU telemetry",
    "aiperf_server_metrics": "AIPerf server metrics",
}
LIST_DEFERRED = ("content", "events_text", "breaker_text", "analysis", "series", "verdict")
DETAIL_DEFERRED = ("content", "events_text", "breaker_text")


# ---------------------------------------------------------------------------------------------------------------
# Numbers and times


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _minus(text: str) -> str:
    return "−" + text[1:] if text.startswith("-") else text


def gib_number(value: Any, decimals: int = 2) -> str:
    """Bytes as a GiB number: 78643200000 → "73.24"."""
    if not _is_number(value):
        return NO_VALUE
    text = f"{value / GIB:,.{decimals}f}"
    return _minus("0.00" if text == "-0.00" else text)


def gib(value: Any) -> str:
    """Bytes in GiB: 76034342912 → "70.81 GiB" (a dash for no value)."""
    return _("%(value)s GiB") % {"value": gib_number(value)} if _is_number(value) else NO_VALUE


def mib(value: Any) -> str:
    """Bytes in MiB, whole when whole: 1048576 → "1 MiB", 1006632 → "0.96 MiB"."""
    if not _is_number(value):
        return NO_VALUE
    number = value / MIB
    text = f"{number:,.0f}" if float(number).is_integer() else f"{number:,.2f}"
    return _("%(value)s MiB") % {"value": _minus(text)}


def mib_per_hour(value: Any) -> str:
    """A slope in bytes per hour as MiB/h with one decimal (never "−0.0")."""
    if not _is_number(value):
        return NO_VALUE
    text = f"{value / MIB:,.1f}"
    return _("%(value)s MiB/h") % {"value": "0.0" if text == "-0.0" else _minus(text)}


def hours_number(value: Any) -> str:
    """Hours as the backend writes them (`:g`, thousands grouped): 72.0 → "72", 0.079 → "0.079"."""
    if not _is_number(value):
        return NO_VALUE
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def whole_hours(value: Any) -> str:
    """Hours to a limit, whole: 28.08 → "28"."""
    return f"{value:,.0f}" if _is_number(value) else NO_VALUE


def seconds_number(value: Any) -> str:
    return f"{value:g}" if _is_number(value) else NO_VALUE


def share(value: Any) -> str:
    return f"{value * 100:.1f}%" if _is_number(value) else NO_VALUE


def time_text(value: Any) -> str:
    """An ISO 8601 UTC time as "2026-12-01 19:26:02 UTC" (a dash for none; other text as it is)."""
    if not value:
        return NO_VALUE
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def offset_text(minutes: int) -> str:
    """Minutes east of UTC as "UTC+08:00" ("UTC" for 0)."""
    if not minutes:
        return "UTC"
    sign = "+" if minutes > 0 else "−"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _join(parts: Sequence[str]) -> str:
    """Phrases one after the other, separated as the language separates clauses."""
    text = ""
    for part in parts:
        text = part if not text else _("%(first)s; %(second)s") % {"first": text, "second": part}
    return text


def _gpu(value: Any) -> str:
    return _("GPU %(gpu)s") % {"gpu": value}


# ---------------------------------------------------------------------------------------------------------------
# Words of the verdict and its checks


def verdict_label(verdict: Any) -> str:
    return {"pass": _("Pass"), "fail": _("Fail"), "insufficient": _("Insufficient")}.get(str(verdict), str(verdict))


def verdict_summary(verdict: Any) -> str:
    return {
        "pass": _("Every check passed over the hours required: the deployment stayed within its commitment"),
        "fail": _("At least one check failed: the deployment did not hold its commitment"),
        "insufficient": _(
            "No check failed, but the log cannot prove health: too few hours, no commitment, or a "
            "check that could not be judged"
        ),
    }.get(str(verdict), "")


def check_label(check: Mapping[str, Any]) -> str:
    code = str(check.get("code"))
    labels = {
        "coverage": _("Monitoring coverage"),
        "no_oom": _("No out-of-memory event"),
        "no_restart": _("No restart"),
        "no_sustained_climb": _("No sustained memory climb"),
        "peak_within_commitment": _("Peak within the commitment"),
        "kv_headroom": _("KV-cache headroom"),
        "breaker_reaction": _("Circuit-breaker reaction"),
    }
    return labels.get(code, code)


def status_label(passed: Any) -> str:
    return {True: _("Passed"), False: _("Failed")}.get(passed, _("Could not be judged"))


def _coverage(passed: bool | None, e: Mapping[str, Any]) -> str:
    values = {"hours": hours_number(e["coverage_hours"]), "required": hours_number(e["hours_required"])}
    if passed:
        return _("The log covers %(hours)s h of the %(required)s h required") % values
    if e.get("start") is None:
        return (
            _("The log carries no times, so no monitored hours; the verdict needs %(required)s h of monitoring")
            % values
        )
    return _("The log covers %(hours)s h; the verdict needs %(required)s h of monitoring") % values


def _no_oom(passed: bool | None, e: Mapping[str, Any]) -> str:
    smi = len(e.get("smi_errors") or [])
    note = (
        ngettext(
            "nvidia-smi reported %(count)s error instead of samples",
            "nvidia-smi reported %(count)s errors instead of samples",
            smi,
        )
        % {"count": smi}
        if smi
        else ""
    )
    if passed:
        return _join([_("No out-of-memory event and no XID error"), *([note] if note else [])])
    ooms, logged = list(e["memory_ooms"]), list(e["logged"])
    parts = [
        _("GPU %(gpu)s full (%(before)s) at %(time)s, then down to %(after)s")
        % {
            "gpu": o["gpu"],
            "before": gib(o["before_bytes"]),
            "time": time_text(o["time"]),
            "after": gib(o["after_bytes"] or 0),
        }
        for o in ooms[:3]
    ]
    parts += [
        (_("XID %(code)s at %(time)s") if item["kind"] == "xid" else _("out-of-memory error at %(time)s"))
        % {"code": item.get("code"), "time": time_text(item["time"])}
        for item in logged[:3]
    ]
    count = len(ooms) + len(logged)
    text = ngettext(
        "%(count)s out-of-memory or XID event: %(events)s", "%(count)s out-of-memory or XID events: %(events)s", count
    ) % {"count": count, "events": _join(parts)}
    return _join([text, *([note] if note else [])])


def _restart_event(event: Mapping[str, Any]) -> str:
    values = {"time": time_text(event.get("time")), "gpus": ", ".join(str(g) for g in event.get("gpus") or [])}
    if event.get("kind") == "down":
        if values["gpus"]:
            return (
                _("the server went down at %(time)s (GPU %(gpus)s) and did not come back before the log ends") % values
            )
        return _("the server went down at %(time)s and did not come back before the log ends") % values
    if values["gpus"]:
        return _("a restart at %(time)s (GPU %(gpus)s)") % values
    return _("a restart at %(time)s, reported by the log") % values


def _no_restart(passed: bool | None, e: Mapping[str, Any]) -> str:
    if passed:
        return _("No server restart")
    if isinstance(e.get("events"), list) and e["events"]:  # one per restart, however many GPUs showed it
        events = list(e["events"])
        return ngettext(
            "%(count)s restart or outage, counted once however many GPUs showed it: %(events)s",
            "%(count)s restarts or outages, each counted once however many GPUs showed it: %(events)s",
            len(events),
        ) % {"count": len(events), "events": _join([_restart_event(v) for v in events[:3]])}
    seen, logged = list(e["memory"]), list(e["logged"])
    parts = []
    for reported, event in [*((False, e) for e in seen), *((True, e) for e in logged)][:3]:
        values = {
            "gpu": event.get("gpu"),
            "before": gib(event.get("before_bytes")),
            "after": gib(event.get("after_bytes") or 0),
            "time": time_text(event.get("time")),
        }
        if reported:
            parts.append(_("a restart reported by the log at %(time)s") % values)
        elif event.get("kind") == "down":
            parts.append(
                _(
                    "GPU %(gpu)s: memory fell from %(before)s to %(after)s at %(time)s and did not come back "
                    "before the log ends: the server went down"
                )
                % values
            )
        else:
            parts.append(
                _(
                    "GPU %(gpu)s: memory fell from %(before)s to %(after)s at %(time)s and came back: the "
                    "server restarted"
                )
                % values
            )
    count = len(seen) + len(logged)
    return ngettext("%(count)s restart or outage: %(events)s", "%(count)s restarts or outages: %(events)s", count) % {
        "count": count,
        "events": _join(parts),
    }


def _limit_words(source: Any) -> str:
    return {"commitment": _("the commitment"), "total": _("the card's total memory")}.get(str(source), str(source))


def _needed_buckets(e: Mapping[str, Any]) -> int:
    return max(2, math.ceil(float(e["min_hours"]) * 3600 / float(e["bucket_s"])))


def _no_sustained_climb(passed: bool | None, e: Mapping[str, Any]) -> str:
    climbs = list(e["gpus"])
    confidence = f"{float(e['confidence']) * 100:g}%"
    if passed is False:
        parts = []
        for c in (c for c in climbs if c["sustained"]):
            values = {
                "gpu": c["gpu"],
                "slope": mib_per_hour(c["slope_bytes_per_hour"]),
                "confidence": confidence,
                "low": mib_per_hour(c["slope_low_bytes_per_hour"]),
                "high": mib_per_hour(c["slope_high_bytes_per_hour"]),
                "time": time_text(c["detected_at"]),
                "limit": _limit_words(c.get("limit_source")),
                "hours": whole_hours(c.get("hours_to_limit")),
            }
            if c.get("hours_to_limit") is None:
                parts.append(
                    _(
                        "GPU %(gpu)s rises %(slope)s (%(confidence)s CI %(low)s to %(high)s), proven by "
                        "%(time)s; neither the commitment nor the card's total is known"
                    )
                    % values
                )
            else:
                parts.append(
                    _(
                        "GPU %(gpu)s rises %(slope)s (%(confidence)s CI %(low)s to %(high)s) and reaches "
                        "%(limit)s in %(hours)s h, proven by %(time)s"
                    )
                    % values
                )
        return _("Sustained memory climb: %(gpus)s") % {"gpus": _join(parts)}
    if passed is None:
        if not climbs:
            return _("The log has no GPU memory series: a climb cannot be judged")
        needed = _needed_buckets(e)
        parts = [
            _("GPU %(gpu)s has %(buckets)s of the %(needed)s hourly buckets the test needs")
            % {"gpu": c["gpu"], "buckets": c["buckets"], "needed": needed}
            for c in climbs
            if not c["judged"]
        ]
        return _("Too little data to judge a climb: %(gpus)s") % {"gpus": _join(parts)}
    steepest = max(climbs, key=lambda c: c.get("slope_bytes_per_hour") or 0.0)
    if (steepest.get("slope_low_bytes_per_hour") or 0.0) <= 0:
        reason = _("no significant rise")
    else:
        reason = _("a significant rise, but %(limit)s is %(hours)s h away, beyond the %(horizon)s h horizon") % {
            "limit": _limit_words(steepest.get("limit_source")),
            "hours": whole_hours(steepest["hours_to_limit"]),
            "horizon": hours_number(e["horizon_hours"]),
        }
    return _("No sustained climb; the steepest slope is %(slope)s on GPU %(gpu)s (%(reason)s)") % {
        "slope": mib_per_hour(steepest.get("slope_bytes_per_hour") or 0.0),
        "gpu": steepest["gpu"],
        "reason": reason,
    }


def _peak_within_commitment(passed: bool | None, e: Mapping[str, Any]) -> str:
    peaks, committed = list(e["gpus"]), e.get("committed_bytes_per_gpu")
    if passed is None:
        if not peaks:
            return _("The log has no GPU memory series: the peak cannot be compared with the commitment")
        return _("No committed figure per GPU was given: the peak cannot be judged")
    tolerance = e.get("tolerance_bytes")
    step = mib(tolerance) if _is_number(tolerance) else None
    if passed:
        highest = max(peaks, key=lambda p: p["peak_bytes"])
        values = {
            "peak": gib(highest["peak_bytes"]),
            "gpu": highest["gpu"],
            "time": time_text(highest["peak_at"]),
            "committed": gib(committed),
            "spare": mib(committed - highest["peak_bytes"]),
            "above": mib(highest["peak_bytes"] - committed),
            "step": step,
        }
        if step is None:
            return (
                _(
                    "The highest peak, %(peak)s on GPU %(gpu)s at %(time)s, stays within the commitment of "
                    "%(committed)s per GPU (%(spare)s to spare)"
                )
                % values
            )
        if highest["peak_bytes"] > committed:
            return (
                _(
                    "The highest peak, %(peak)s on GPU %(gpu)s at %(time)s, is %(above)s above the commitment of "
                    "%(committed)s per GPU: less than the gauge's step of %(step)s, which cannot tell it from the "
                    "commitment, so it passes"
                )
                % values
            )
        return (
            _(
                "The highest peak, %(peak)s on GPU %(gpu)s at %(time)s, stays within the commitment of "
                "%(committed)s per GPU (%(spare)s to spare, judged within the gauge's step of %(step)s)"
            )
            % values
        )
    limit = committed + (tolerance if _is_number(tolerance) else 0)
    over = [p for p in peaks if p["peak_bytes"] > limit]
    names = ", ".join(
        _("GPU %(gpu)s (%(peak)s at %(time)s)")
        % {"gpu": p["gpu"], "peak": gib(p["peak_bytes"]), "time": time_text(p["peak_at"])}
        for p in over
    )
    values = {"committed": gib(committed), "gpus": names, "time": time_text(e["first_violation"]), "step": step}
    if step is None:
        return _("Memory went above the commitment of %(committed)s per GPU on %(gpus)s; first at %(time)s") % values
    return (
        _(
            "Memory went above the commitment of %(committed)s per GPU by more than the gauge's step of %(step)s "
            "on %(gpus)s; first at %(time)s"
        )
        % values
    )


def _kv_headroom(passed: bool | None, e: Mapping[str, Any]) -> str:
    servers = list(e["servers"])
    promised = e.get("promised_concurrency") is not None
    if passed:
        peak = max((s["kv_peak"] for s in servers if s.get("kv_peak") is not None), default=None)
        if peak is None:
            return _("KV-cache usage unknown, with no preemption")
        if promised:
            return _("KV-cache usage peaked at %(peak)s, with no preemption within the promised concurrency") % {
                "peak": share(peak)
            }
        return _("KV-cache usage peaked at %(peak)s, with no preemption") % {"peak": share(peak)}
    full = [s for s in servers if s.get("kv_peak") is not None and s["kv_peak"] >= 1.0]
    preemptions = sum((s.get("preemptions") or 0) - (s.get("preemptions_beyond_promise") or 0) for s in servers)
    parts = []
    if full:
        parts.append(
            _("KV-cache usage reached %(full)s (%(servers)s)")
            % {"full": share(1.0), "servers": ", ".join(s.get("instance") or s.get("engine") for s in full)}
        )
    if preemptions > 0:
        count = int(preemptions) if float(preemptions).is_integer() else preemptions
        parts.append(
            ngettext("%(count)s preemption", "%(count)s preemptions", int(preemptions)) % {"count": f"{count:g}"}
        )
    if not parts:
        raise ValueError("a failed KV check without a full cache or a preemption")
    text = _join(parts)
    if e.get("first_violation"):
        return _("%(problems)s, first at %(time)s") % {"problems": text, "time": time_text(e["first_violation"])}
    return text


def _breaker_reaction(passed: bool | None, e: Mapping[str, Any]) -> str:
    reactions, limit = list(e["reactions"]), seconds_number(e["max_reaction_s"])
    if passed and not reactions:
        return _("The circuit breaker never tripped")
    if passed:
        return ngettext(
            "The %(count)s trip was acted on within %(limit)s s (slowest %(slowest)s s)",
            "All %(count)s trips were acted on within %(limit)s s (slowest %(slowest)s s)",
            len(reactions),
        ) % {"count": len(reactions), "limit": limit, "slowest": seconds_number(e["slowest_reaction_s"])}
    late = [r for r in reactions if not r["passed"]]
    parts = [
        (
            _("trip at %(time)s acted on after %(seconds)s s")
            if r.get("reaction_s") is not None
            else _("trip at %(time)s never acted on")
        )
        % {"time": time_text(r["trip"]), "seconds": seconds_number(r.get("reaction_s"))}
        for r in late[:3]
    ]
    return ngettext(
        "%(late)s of %(count)s trip not acted on within %(limit)s s: %(trips)s",
        "%(late)s of %(count)s trips not acted on within %(limit)s s: %(trips)s",
        len(reactions),
    ) % {"late": len(late), "count": len(reactions), "limit": limit, "trips": _join(parts)}


CHECKS: dict[str, Callable[[bool | None, Mapping[str, Any]], str]] = {
    "coverage": _coverage,
    "no_oom": _no_oom,
    "no_restart": _no_restart,
    "no_sustained_climb": _no_sustained_climb,
    "peak_within_commitment": _peak_within_commitment,
    "kv_headroom": _kv_headroom,
    "breaker_reaction": _breaker_reaction,
}


def check_text(check: Mapping[str, Any]) -> tuple[str, bool]:
    """(the check's message in the active language, True) or (its English `message`, False) when the code is not
    known here or its `extra` lacks a number the words need."""
    fallback = str(check.get("message") or check.get("code") or "")
    build = CHECKS.get(str(check.get("code")))
    extra = check.get("extra")
    passed = check.get("passed")
    if build is None or not isinstance(extra, Mapping) or passed not in (True, False, None):
        return fallback, False
    try:
        return build(passed, extra), True
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
        return fallback, False


def check_rows(verdict: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for check in verdict.get("checks") or []:
        text, translated = check_text(check)
        passed = check.get("passed")
        extra = check.get("extra") if isinstance(check.get("extra"), Mapping) else {}
        rows.append(
            {
                "code": check.get("code"),
                "label": check_label(check),
                "text": text,
                "translated": translated,
                "passed": passed,
                "state": {True: "pass", False: "fail"}.get(passed, "unknown"),
                "symbol": {True: "✓", False: "✕"}.get(passed, "—"),
                "status": status_label(passed),
                "first_violation": time_text(extra.get("first_violation"))
                if passed is False and extra.get("first_violation")
                else "",
            }
        )
    return rows


def requirements_text(requirements: Mapping[str, Any] | None) -> str:
    """What a pass needs, in words, when the climb test asks for more hours than required ("" otherwise)."""
    if not isinstance(requirements, Mapping) or not requirements.get("climb_limits_pass"):
        return ""
    return _(
        "A pass needs at least %(hours)s h of data: the climb test fits %(buckets)s hourly buckets, more than "
        "the %(required)s h required, so a shorter log can only be insufficient"
    ) % {
        "hours": hours_number(requirements.get("hours_for_pass")),
        "buckets": requirements.get("climb_min_buckets"),
        "required": hours_number(requirements.get("hours_required")),
    }


def upload_requirements_text() -> str:
    """What a verdict needs, for the upload form (before the upload)."""
    needs = verdict_requirements(hours_required=HOURS_REQUIRED)
    return _(
        "A pass needs the hours of monitoring required (%(default)s h unless you change it), a committed figure "
        "per GPU, and at least %(buckets)s hourly buckets of data for the climb test: with fewer than "
        "%(climb)s h required, a log shorter than %(climb)s h can only be insufficient"
    ) % {
        "default": hours_number(float(HOURS_REQUIRED)),
        "buckets": needs["climb_min_buckets"],
        "climb": hours_number(needs["climb_min_hours"]),
    }


def event_label(kind: Any) -> str:
    return {
        "oom": _("Out-of-memory error"),
        "xid": _("XID error"),
        "restart": _("Restart"),
        "smi_error": _("nvidia-smi error"),
    }.get(str(kind), str(kind))


# ---------------------------------------------------------------------------------------------------------------
# The strings memory.js shows


# ---------------------------------------------------------------------------------------------------------------
# Shared pieces


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _logs(organisation: Organisation) -> QuerySet[MemoryLog]:
    return MemoryLog.objects.filter(organisation=organisation).select_related("deployment", "created_by")


def _log_or_404(request: HttpRequest, log_id: int) -> MemoryLog:
    log = (
        _logs(_organisation(request))
        .defer(*DETAIL_DEFERRED)
        .annotate(
            has_events=ExpressionWrapper(~Q(events_text=""), output_field=BooleanField()),
            has_breaker=ExpressionWrapper(~Q(breaker_text=""), output_field=BooleanField()),
        )
        .filter(pk=log_id)
        .first()
    )
    if log is None:
        raise Http404(_("No such memory log"))
    return log


def _mib_text(value: int) -> str:
    return f"{value / MIB:,.1f}".removesuffix(".0")


def _format_name(value: str) -> str:
    return FORMAT_NAMES.get(value, value or NO_VALUE)


# ---------------------------------------------------------------------------------------------------------------
# Upload


class MemoryLogUploadForm(OrganisationRowsForm):
    file = forms.FileField(allow_empty_file=True, label=gettext_lazy("Monitoring log"))
    events = forms.FileField(allow_empty_file=True, required=False, label=gettext_lazy("Engine or kernel events log"))
    breaker = forms.FileField(allow_empty_file=True, required=False, label=gettext_lazy("Circuit-breaker events log"))
    deployment = forms.IntegerField(min_value=1, required=False, label=gettext_lazy("Deployment"))
    committed_gib_per_gpu = forms.FloatField(
        min_value=0.1, max_value=4096, required=False, label=gettext_lazy("Committed memory per GPU (GiB)")
    )
    hours_required = forms.IntegerField(
        min_value=1, max_value=24 * 90, required=False, label=gettext_lazy("Hours of monitoring required")
    )
    utc_offset_minutes = forms.TypedChoiceField(
        choices=[(m, offset_text(m)) for m in UTC_OFFSETS],
        coerce=int,
        required=False,
        empty_value=0,
        label=gettext_lazy("Zone of the logs' times"),
    )


_NAMES = {"events log": gettext_lazy("events log"), "breaker log": gettext_lazy("breaker log")}
_REFUSALS: tuple[tuple[re.Pattern[str], Callable[[dict[str, str]], str]], ...] = (
    (re.compile(r"^(?P<name>.*?): the file is empty$"), lambda m: _("%(name)s: the file is empty") % m),
    (
        re.compile(r"^(?P<name>.*?): binary content(?: \(not a text result file\)|, not a text monitoring log)$"),
        lambda m: _("%(name)s: binary content, not a text monitoring log") % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): not UTF-8 text \(byte (?P<byte>[\d,]+)\)$"),
        lambda m: _("%(name)s: not UTF-8 text (at byte %(byte)s)") % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): a benchmark result(?: \(cut short: not valid JSON\))?, not a monitoring log"),
        lambda m: _(
            "%(name)s: a benchmark result, not a monitoring log: import it as a benchmark run on the Benchmarks page"
        )
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): a circuit-breaker events log, not a monitoring log"),
        lambda m: _(
            "%(name)s: a circuit-breaker events log, not a monitoring log: upload it as the circuit-breaker "
            "events log, beside the monitoring log"
        )
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): a log of OOM/XID events, not a memory timeline"),
        lambda m: _(
            "%(name)s: a log of out-of-memory and XID events, not a memory timeline: upload it as the engine "
            "or kernel events log, beside the monitoring log"
        )
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): an nvidia-smi (?:-q -x XML report|-q report|table) \(a one-off snapshot\)"),
        lambda m: _(
            "%(name)s: a one-off nvidia-smi snapshot, not a monitoring log: log the memory over time with the "
            "command above, or add the snapshot to a deployment as a hardware fingerprint"
        )
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): (?:rocm-smi|amd-smi|rocm-smi / amd-smi) (?:output|JSON): AMD monitoring logs"),
        lambda m: _("%(name)s: AMD monitoring logs are not read yet; log nvidia-smi --query-gpu CSV or DCGM scrapes")
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): not a monitoring log read here: "),
        lambda m: _(
            "%(name)s: not a monitoring log read here: expected nvidia-smi --query-gpu CSV (with a timestamp "
            "column), Prometheus scrapes (DCGM, vLLM, SGLang), AIPerf GPU telemetry JSONL or AIPerf "
            "server-metrics JSON"
        )
        % m,
    ),
    (
        re.compile(r"^(?P<name>.*?): JSON that is none of the monitoring formats read here"),
        lambda m: _(
            "%(name)s: JSON, but none of the monitoring formats read here (nvidia-smi CSV, Prometheus "
            "scrapes, AIPerf GPU telemetry JSONL, AIPerf server-metrics JSON)"
        )
        % m,
    ),
)
_SIZE = re.compile(r"^(?P<name>.*?): the file is [\d,]+ bytes; the limit is [\d,]+ bytes")


def upload_refusal(error: SizingError) -> dict[str, Any]:
    """A refused upload for the page: the field it concerns (file, events or breaker; None for none of them) and
    the reason, in the active language where its words are known here (else the backend's English)."""
    extra = error.extra or {}
    fields = extra.get("fields") if isinstance(extra.get("fields"), Mapping) else {}
    field = next((name for name in fields if name in ("file", "events", "breaker")), None)
    message = error.message
    translated = None
    size = _SIZE.match(message)
    if size and _is_number(extra.get("size_bytes")) and _is_number(extra.get("limit_bytes")):
        translated = _("%(name)s: the file is %(size)s bytes; the limit is %(limit)s bytes (%(limit_mib)s MiB)") % {
            "name": _NAMES.get(size["name"], size["name"]),
            "size": f"{extra['size_bytes']:,}",
            "limit": f"{extra['limit_bytes']:,}",
            "limit_mib": _mib_text(extra["limit_bytes"]),
        }
    else:
        for pattern, words in _REFUSALS:
            match = pattern.match(message)
            if match:
                values = match.groupdict()
                values["name"] = str(_NAMES.get(values["name"], values["name"]))
                translated = words(values)
                break
    return {"field": field, "message": translated or message, "translated": translated is not None, "original": message}


def _oversize_error(name: str, size: int) -> SizingError:
    message = f"{name}: the file is {size:,} bytes; the limit is {MAX_BYTES:,} bytes (50 MiB)"
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=message,
        extra={"size_bytes": size, "limit_bytes": MAX_BYTES, "fields": {"file": [message]}},
    )


# ---------------------------------------------------------------------------------------------------------------
# /memory/


def _list_row(log: MemoryLog) -> dict[str, Any]:
    verdict = getattr(log, "verdict_value", None)
    coverage = getattr(log, "coverage_value", None)
    return {
        "log": log,
        "verdict": verdict or "insufficient",
        "verdict_label": verdict_label(verdict or "insufficient"),
        "coverage": hours_number(coverage),
        "format": _format_name(log.format),
        "committed": gib_number(log.committed_bytes_per_gpu) if log.committed_bytes_per_gpu else NO_VALUE,
        "first_violation": time_text(getattr(log, "first_violation_value", None)),
    }


class MemoryLogListPageView(LoginRequiredMixin, View):
    """GET: the logs with their verdicts and the upload form. POST: upload a monitoring log (its page; a refusal:
    this page, status 400, the reason under its field, nothing stored)."""

    template_name = "frontend/memory_logs.html"

    def _render(
        self,
        request: HttpRequest,
        *,
        form: MemoryLogUploadForm | None = None,
        refusal: dict[str, Any] | None = None,
        status: int = 200,
    ) -> HttpResponse:
        organisation = _organisation(request)
        rows = (
            _logs(organisation)
            .defer(*LIST_DEFERRED)
            .annotate(
                verdict_value=KeyTransform("verdict", "verdict"),
                coverage_value=KeyTransform("coverage_hours", "verdict"),
                first_violation_value=KeyTransform("first_violation", "verdict"),
            )
        )
        logs = list(rows[: LIST_LIMIT + 1])
        form = form or MemoryLogUploadForm(organisation=organisation)
        errors: dict[str, list[dict[str, Any]]] = {
            "general" if name == "__all__" else name: [{"text": str(text), "english": False} for text in texts]
            for name, texts in form.errors.items()
        }
        if refusal is not None:
            errors.setdefault(refusal["field"] or "general", []).append(
                {"text": refusal["message"], "english": not refusal["translated"]}
            )
        committed = form["committed_gib_per_gpu"].value()
        hours = form["hours_required"].value()
        offset = form["utc_offset_minutes"].value()
        context = {
            "rows": [_list_row(log) for log in logs[:LIST_LIMIT]],
            "truncated": len(logs) > LIST_LIMIT,
            "list_limit": LIST_LIMIT,
            "form": form,
            "errors": errors,
            "refused": bool(errors),
            "max_upload_mib": _mib_text(MAX_BYTES),
            "max_upload_bytes": MAX_BYTES,
            "max_text_mib": _mib_text(TEXT_MAX_BYTES),
            "smi_command": SMI_COMMAND,
            "deployments": list(deployment_list_for_organisation(organisation=organisation)),
            "form_values": {
                "deployment": str(form["deployment"].value() or ""),
                "committed": "" if committed is None else str(committed),
                "hours": str(HOURS_REQUIRED) if hours in (None, "") else str(hours),
                "offset": str(offset or 0),
            },
            "offsets": [{"value": str(m), "label": offset_text(m)} for m in UTC_OFFSETS],
            "requirements_text": upload_requirements_text(),
            "labels": page_labels(),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        organisation = _organisation(request)
        form = MemoryLogUploadForm(request.POST, request.FILES, organisation=organisation)
        refusal = None
        if form.is_valid():
            values = form.cleaned_data
            upload = values["file"]
            name = str(upload.name)
            committed = values.get("committed_gib_per_gpu")
            try:
                if upload.size > MAX_BYTES:  # before reading it
                    raise _oversize_error(name, upload.size)
                log = memory_log_import(
                    organisation=organisation,
                    user=request.user,
                    name=name,
                    data=upload.read(MAX_BYTES + 1),
                    deployment=values["deployment"],
                    committed_bytes_per_gpu=round(committed * GIB) if committed else None,
                    hours_required=values.get("hours_required") or HOURS_REQUIRED,
                    utc_offset_minutes=values.get("utc_offset_minutes") or 0,
                    events=values["events"].read(TEXT_MAX_BYTES + 1) if values.get("events") else None,
                    breaker=values["breaker"].read(TEXT_MAX_BYTES + 1) if values.get("breaker") else None,
                )
            except SizingError as error:
                refusal = upload_refusal(error)
            else:
                verdict = (log.verdict or {}).get("verdict")
                announce = {"pass": messages.success, "fail": messages.error}.get(str(verdict), messages.warning)
                announce(
                    request,
                    _("Log %(name)s imported: %(verdict)s")
                    % {"name": name, "verdict": verdict_label(verdict or "insufficient")},
                )
                return HttpResponseRedirect(reverse("frontend:memory-log", args=[log.pk]))
        return self._render(request, form=form, refusal=refusal, status=400)


# ---------------------------------------------------------------------------------------------------------------
# /memory/<id>/


def _climb_cells(climb: Mapping[str, Any]) -> dict[str, Any]:
    if not climb.get("judged"):
        return {
            "slope": NO_VALUE,
            "interval": "",
            "hours_to_limit": NO_VALUE,
            "sustained": False,
            "title": _("%(buckets)s hourly buckets of data: too few to judge a climb")
            % {"buckets": climb.get("buckets", 0)},
        }
    hours = climb.get("hours_to_limit")
    return {
        "slope": mib_per_hour(climb.get("slope_bytes_per_hour")),
        "interval": _("%(low)s to %(high)s")
        % {
            "low": mib_per_hour(climb.get("slope_low_bytes_per_hour")),
            "high": mib_per_hour(climb.get("slope_high_bytes_per_hour")),
        },
        "hours_to_limit": _("%(hours)s h to %(limit)s")
        % {"hours": whole_hours(hours), "limit": _limit_words(climb.get("limit_source"))}
        if _is_number(hours)
        else NO_VALUE,
        "sustained": bool(climb.get("sustained")),
        "title": "",
        "detected_at": time_text(climb.get("detected_at")) if climb.get("detected_at") else "",
    }


def gpu_rows(analysis: Mapping[str, Any], *, tolerance_bytes: Any = None) -> list[dict[str, Any]]:
    """One row per GPU: peak and when, total, commitment, headroom (marked over only beyond the gauge's step
    `tolerance_bytes`), climb, OOMs and restarts."""
    tolerance = tolerance_bytes if _is_number(tolerance_bytes) else 0
    rows = []
    for gpu in analysis.get("gpus") or []:
        headroom = gpu.get("headroom_bytes")
        rows.append(
            {
                "gpu": gpu.get("gpu"),
                "name": gpu.get("name") or "",
                "peak": gib_number(gpu.get("peak_bytes")),
                "peak_at": time_text(gpu.get("peak_at")),
                "total": gib_number(gpu.get("total_bytes")),
                "committed": gib_number(gpu.get("committed_bytes")),
                "headroom": gib_number(headroom),
                "over": _is_number(headroom) and headroom < -tolerance,
                "climb": _climb_cells(gpu.get("climb") or {}),
                "ooms": len(gpu.get("ooms") or []),
                "restarts": len([e for e in gpu.get("restarts") or [] if e.get("kind") == "restart"]),
                "downs": len([e for e in gpu.get("restarts") or [] if e.get("kind") == "down"]),
            }
        )
    return rows


def server_rows(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per engine series: KV-cache peak and P95, time at or above 90 %, preemptions, queue."""
    rows = []
    for server in analysis.get("servers") or []:
        above = server.get("seconds_above_high")
        rows.append(
            {
                "engine": server.get("engine") or "",
                "instance": server.get("instance") or "",
                "kv_peak": share(server.get("kv_peak")),
                "kv_peak_at": time_text(server.get("kv_peak_at")) if server.get("kv_peak_at") else "",
                "full": _is_number(server.get("kv_peak")) and server["kv_peak"] >= 1.0,
                "kv_p95": share(server.get("kv_p95")),
                "above_high": _("%(value)s min") % {"value": f"{above / 60:,.1f}"} if _is_number(above) else NO_VALUE,
                "preemptions": f"{server['preemptions']:g}" if _is_number(server.get("preemptions")) else NO_VALUE,
                "waiting_peak": f"{server['waiting_peak']:g}" if _is_number(server.get("waiting_peak")) else NO_VALUE,
                "running_peak": f"{server['running_peak']:g}" if _is_number(server.get("running_peak")) else NO_VALUE,
            }
        )
    return rows


def chart_markers(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events the memory chart marks: OOMs and restarts seen in memory (at the GPU's level then), and those the
    logs report (`bytes` None: drawn at the top)."""
    markers = []
    for gpu in analysis.get("gpus") or []:
        for event in gpu.get("ooms") or []:
            markers.append(
                {
                    "kind": "oom",
                    "gpu": gpu.get("gpu"),
                    "time": event.get("time"),
                    "bytes": event.get("before_bytes"),
                    "text": _("GPU %(gpu)s full (%(before)s), then down to %(after)s")
                    % {
                        "gpu": gpu.get("gpu"),
                        "before": gib(event.get("before_bytes")),
                        "after": gib(event.get("after_bytes") or 0),
                    },
                }
            )
        for event in gpu.get("restarts") or []:
            kind = "down" if event.get("kind") == "down" else "restart"
            markers.append(
                {
                    "kind": kind,
                    "gpu": gpu.get("gpu"),
                    "time": event.get("time"),
                    "bytes": event.get("after_bytes"),
                    "text": _("GPU %(gpu)s: memory fell from %(before)s to %(after)s")
                    % {
                        "gpu": gpu.get("gpu"),
                        "before": gib(event.get("before_bytes")),
                        "after": gib(event.get("after_bytes") or 0),
                    },
                }
            )
    kinds = {"oom": "oom_logged", "xid": "xid", "restart": "restart_logged"}
    for event in analysis.get("events") or []:
        if event.get("kind") in kinds and event.get("time"):
            markers.append(
                {
                    "kind": kinds[event["kind"]],
                    "gpu": event.get("gpu"),
                    "time": event["time"],
                    "bytes": None,
                    "text": (
                        _("XID %(code)s") % {"code": event.get("code")}
                        if event["kind"] == "xid"
                        else event_label(event["kind"])
                    ),
                }
            )
    return markers


def _facts(log: MemoryLog, analysis: Mapping[str, Any]) -> list[tuple[str, str]]:
    start, end = analysis.get("start"), analysis.get("end")
    return [
        (_("File"), log.name),
        (_("Format"), _format_name(log.format)),
        (_("Size"), _("%(value)s MiB") % {"value": f"{log.size_bytes / MIB:,.2f}"}),
        (_("Period"), f"{time_text(start)} – {time_text(end)}" if start and end else NO_VALUE),
        (
            _("Hours covered"),
            _("%(hours)s h of the %(required)s h required")
            % {"hours": hours_number(analysis.get("coverage_hours")), "required": hours_number(log.hours_required)},
        ),
        (
            _("Committed memory per GPU"),
            gib(log.committed_bytes_per_gpu) if log.committed_bytes_per_gpu else _("not given"),
        ),
        (
            _("Zone of the logs' times"),
            _(
                "%(zone)s: times written without a zone (nvidia-smi, the events and "
                "breaker logs) were read in it; shown here in UTC"
            )
            % {"zone": offset_text(log.utc_offset_minutes)},
        ),
        (_("Engine or kernel events log"), _("given") if getattr(log, "has_events", False) else _("not given")),
        (_("Circuit-breaker events log"), _("given") if getattr(log, "has_breaker", False) else _("not given")),
        (
            _("Imported"),
            log.created_at.strftime("%Y-%m-%d %H:%M")
            + (f" · {log.created_by.get_username()}" if log.created_by else ""),
        ),
    ]


class MemoryLogDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/memory_log_detail.html"

    def get(self, request: HttpRequest, log_id: int) -> HttpResponse:
        log = _log_or_404(request, log_id)
        analysis = log.analysis or {}
        verdict = log.verdict or {}
        series = log.series or {}
        value = verdict.get("verdict") or "insufficient"
        gpus = series.get("gpus") or []
        servers = [s for s in series.get("servers") or [] if s.get("t")]
        events = analysis.get("events") or []
        context = {
            "log": log,
            "facts": _facts(log, analysis),
            "verdict": value,
            "verdict_label": verdict_label(value),
            "verdict_summary": verdict_summary(value),
            "first_violation": time_text(verdict.get("first_violation")) if verdict.get("first_violation") else "",
            "coverage": hours_number(verdict.get("coverage_hours")),
            "requirements": requirements_text(verdict.get("requirements")),
            "zone": offset_text(log.utc_offset_minutes),
            "checks": check_rows(verdict),
            "gpu_rows": gpu_rows(analysis, tolerance_bytes=(verdict.get("figures") or {}).get("tolerance_bytes")),
            "server_rows": server_rows(analysis),
            "events": [
                {
                    "time": time_text(e.get("time")),
                    "kind": e.get("kind"),
                    "label": event_label(e.get("kind")),
                    "gpu": e.get("gpu") or "",
                    "message": e.get("message") or "",
                }
                for e in events[:EVENTS_LIMIT]
            ],
            "events_more": max(0, len(events) - EVENTS_LIMIT),
            "notes": list(series.get("notes") or []),
            "truncated": bool(series.get("truncated")),
            "has_gpus": bool(gpus),
            "has_servers": bool(servers),
            "api_url": reverse("benchmarks:memory-log-detail", args=[log.pk]) + "?format=json",  # not DRF's HTML
            "chart_data": {
                "gpus": gpus,
                "servers": servers,
                "committed_bytes": log.committed_bytes_per_gpu,
                "start": analysis.get("start"),
                "end": analysis.get("end"),
                "markers": chart_markers(analysis),
                "climbs": [
                    {"gpu": g.get("gpu"), "detected_at": (g.get("climb") or {}).get("detected_at")}
                    for g in analysis.get("gpus") or []
                    if (g.get("climb") or {}).get("detected_at")
                ],
            },
            "labels": page_labels(),
        }
        return render(request, self.template_name, context)


class MemoryLogDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, log_id: int) -> HttpResponse:
        log = _log_or_404(request, log_id)
        name = log.name
        memory_log_delete(log=log)
        messages.success(request, _("Log %(name)s deleted") % {"name": name})
        return HttpResponseRedirect(reverse("frontend:memory-logs"))

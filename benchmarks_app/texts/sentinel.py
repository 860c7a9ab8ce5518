"""The memory health criteria in words, in the report's language: a title and a sentence per criterion built from
its evidence (benchmarks_app.results.sentinel), with the numbers rounded and their units (GiB to 2 decimals, seconds to
1 decimal, percentages), and no internal code. The page and the PDF show these."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from django.utils.translation import get_language, override
from django.utils.translation import gettext as _

from sizing.estimator.units import format_bytes

CHINA_STANDARD_TIME = timezone(timedelta(hours=8))  # as the commitment's PDF: Chinese reports in UTC+08:00


def moment(iso: str | None, *, seconds_shown: bool = True) -> str:
    """An ISO 8601 time in the active language's zone, as the commitment's PDF shows times: UTC+08:00 in Chinese
    ("2026-11-30 21:41:02 UTC+08:00"), UTC otherwise ("2026-11-30 13:41:02 UTC")."""
    if not iso:
        return "—"
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    chinese = (get_language() or "en").startswith("zh")
    zone, name = (CHINA_STANDARD_TIME, "UTC+08:00") if chinese else (UTC, "UTC")
    return when.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S" if seconds_shown else "%Y-%m-%d %H:%M") + f" {name}"


def seconds(value: float | None) -> str:
    return "—" if value is None else _("%(value)s s") % {"value": f"{value:,.1f}"}


def hours(value: float | None) -> str:
    return "—" if value is None else _("%(value)s h") % {"value": f"{value:,.1f}"}


def percent(fraction: float | None) -> str:
    return "—" if fraction is None else f"{fraction:.1%}"


def gib(n_bytes: float | None) -> str:
    return "—" if n_bytes is None else format_bytes(n_bytes, "GiB", 2)


def mib_per_hour(value: float | None) -> str:
    return "—" if value is None else _("%(value)s MiB/h") % {"value": f"{value + 0.0:,.1f}"}


def _limit_word(source: str | None) -> str:
    return _("the commitment") if source == "commitment" else _("the card's capacity")


def _coverage(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("72 hours watched")
    numbers = {
        "hours": hours(e["coverage_hours"]),
        "required": hours(e["hours_required"]),
        "interval": seconds(e["interval_s"]),
        "limit": seconds(e["interval_limit_s"]),
    }
    if passed:
        text = _("%(hours)s watched (%(required)s required), a sample every %(interval)s") % numbers
    else:
        text = (
            _(
                "%(hours)s watched, a sample every %(interval)s; a pass needs %(required)s with a sample at least "
                "every %(limit)s"
            )
            % numbers
        )
    if e.get("max_interval_s") and e["max_interval_s"] > e["interval_s"]:
        text += _("; thinned to one sample every %(interval)s to stay within the file's size cap") % {
            "interval": seconds(e["max_interval_s"])
        }
    if e.get("resumes"):
        text += _("; resumed %(count)s time(s) after a stop (%(gap)s not watched)") % {
            "count": e["resumes"],
            "gap": seconds(e.get("resume_gaps_s")),
        }
    return title, text


def _oom(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("No out-of-memory event")
    if passed:
        return title, _("No out-of-memory or XID error in the engine log, and no card ran out of GPU memory")
    events = e.get("events") or [{}]
    first = events[0]
    return title, _("%(count)s out-of-memory or XID event(s); the first at %(time)s: %(detail)s") % {
        "count": e["logged"] + e["in_memory"],
        "time": moment(first.get("time")),
        "detail": str(first.get("detail") or "")[:160],
    }


def _climb(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("No sustained climb of GPU memory")
    gpus = e.get("gpus") or []
    sustained = [g for g in gpus if g.get("sustained")]
    if sustained:
        worst = max(sustained, key=lambda g: g.get("slope_mib_per_h") or 0.0)
        return title, _(
            "GPU %(gpu)s climbs %(slope)s (95%% interval %(low)s to %(high)s) and would reach "
            "%(limit)s (%(limit_size)s) in %(hours)s"
        ) % {
            "gpu": worst["gpu"],
            "slope": mib_per_hour(worst.get("slope_mib_per_h")),
            "low": mib_per_hour(worst.get("slope_low_mib_per_h")),
            "high": mib_per_hour(worst.get("slope_high_mib_per_h")),
            "limit": _limit_word(worst.get("limit_source")),
            "limit_size": gib(worst.get("limit_bytes")),
            "hours": hours(worst.get("hours_to_limit")),
        }
    if not passed or not gpus:
        return title, _("Too little data to judge a climb: the test needs 24 hourly buckets")
    steepest = max(gpus, key=lambda g: g.get("slope_mib_per_h") or 0.0)
    return title, _(
        "The steepest slope is %(slope)s on GPU %(gpu)s (95%% interval %(low)s to %(high)s): no "
        "significant rise that would reach the limit within 720 h"
    ) % {
        "slope": mib_per_hour(steepest.get("slope_mib_per_h")),
        "gpu": steepest["gpu"],
        "low": mib_per_hour(steepest.get("slope_low_mib_per_h")),
        "high": mib_per_hour(steepest.get("slope_high_mib_per_h")),
    }


def _breaker(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("Circuit breaker response")
    numbers = {
        "threshold": percent(e["threshold"]),
        "for": seconds(e["for_s"]),
        "trip_bound": seconds(e["trip_within_s"]),
        "recovery_bound": seconds(e["recover_within_s"]),
        "peak": percent(e.get("kv_peak")),
        "count": e.get("episodes_total", 0),
    }
    if not e.get("kv_readings"):
        return title, _(
            "The file has no KV cache figures, so the breaker cannot be judged: run the sentinel with --metrics-url"
        )
    episodes = e.get("episodes") or []
    if not episodes:
        return title, _(
            "KV cache usage never stayed above %(threshold)s for %(for)s (peak %(peak)s): the breaker was not needed"
        ) % numbers
    if not e.get("breaker_watched"):
        return title, _(
            "KV cache usage stayed above %(threshold)s for %(for)s %(count)s time(s), but the sentinel "
            "watched no breaker log line (--breaker-trip-pattern)"
        ) % numbers
    if passed:
        return title, _(
            "%(count)s time(s) above %(threshold)s for %(for)s: the breaker tripped at most %(trip)s "
            "after the first reading above (bound %(trip_bound)s) and recovered at most %(recovery)s "
            "after usage fell back (bound %(recovery_bound)s)"
        ) % {**numbers, "trip": seconds(e.get("slowest_trip_s")), "recovery": seconds(e.get("slowest_recovery_s"))}
    failed = [x for x in episodes if not x.get("passed")]
    first = failed[0] if failed else episodes[0]
    return title, _(
        "%(failed)s of %(count)s breaker response(s) out of bounds; the first at %(time)s: trip after "
        "%(trip)s (bound %(trip_bound)s), recovery after %(recovery)s (bound %(recovery_bound)s)"
    ) % {
        **numbers,
        "failed": len(failed),
        "time": moment(first.get("above_at")),
        "trip": seconds(first.get("trip_after_s")) if first.get("trip_after_s") is not None else _("no trip"),
        "recovery": seconds(first.get("recovered_after_s"))
        if first.get("recovered_after_s") is not None
        else _("no recovery"),
    }


def _failure(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("Injected failure recovered")
    outages = e.get("outages") or []
    bound = seconds(e["recovery_within_s"])
    if not outages:
        return title, _("No engine restart in the 72 hours: the failure (stopping the engine once) was not injected")
    if passed:
        return title, _("%(count)s engine restart(s), each serving again within %(bound)s (slowest %(slowest)s)") % {
            "count": e["outages_total"],
            "bound": bound,
            "slowest": seconds(e.get("slowest_recovery_s")),
        }
    late = [o for o in outages if o.get("recovery_s") is None or o["recovery_s"] > e["recovery_within_s"]]
    first = late[0] if late else outages[0]
    if first.get("recovery_s") is None:
        return title, _(
            "The engine stopped at %(time)s and did not serve again before the file ends (bound %(bound)s)"
        ) % {"time": moment(first.get("began_at")), "bound": bound}
    return title, _("The engine stopped at %(time)s and served again after %(after)s (bound %(bound)s)") % {
        "time": moment(first.get("began_at")),
        "after": seconds(first.get("recovery_s")),
        "bound": bound,
    }


def _peak(e: Mapping[str, Any], passed: bool) -> tuple[str, str]:
    title = _("Peak within the commitment")
    numbers = {
        "peak": gib(e.get("peak_bytes")),
        "gpu": e.get("peak_gpu"),
        "committed": gib(e.get("committed_bytes_per_gpu")),
        "tolerance": "1 MiB",
    }
    if e.get("peak_bytes") is None:
        return title, _("The file has no GPU memory reading")
    if e.get("committed_bytes_per_gpu") is None:
        return title, _(
            "The highest peak is %(peak)s on GPU %(gpu)s, but no signed memory commitment holds it: "
            "sign the commitment first"
        ) % numbers
    if passed:
        return title, _(
            "The highest peak, %(peak)s on GPU %(gpu)s, is within the committed %(committed)s per GPU "
            "(a reading counts as above only beyond the gauge's step of %(tolerance)s)"
        ) % numbers
    return title, _("GPU %(gpu)s peaked at %(peak)s, above the committed %(committed)s per GPU") % numbers


TEXTS = {
    "coverage": _coverage,
    "no_oom": _oom,
    "no_sustained_climb": _climb,
    "breaker_response": _breaker,
    "failure_recovered": _failure,
    "peak_within_commitment": _peak,
}


def criteria_in_words(criteria: list[Mapping[str, Any]], *, language: str) -> list[dict[str, Any]]:
    """Each criterion ({code, verdict, evidence, message}) with its `title` and `text` in `language`."""
    found = []
    with override(language):
        for criterion in criteria:
            words = TEXTS[criterion["code"]]
            title, text = words(criterion["evidence"], criterion["verdict"] == "pass")
            found.append({**criterion, "title": title, "text": text})
    return found

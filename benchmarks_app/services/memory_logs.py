"""Monitoring logs of a deployment's GPUs: read (a log no parser reads is a 400 with the reason, nothing stored),
analyse (peaks, climb, OOMs, restarts, KV) and judge against the commitment (the health verdict of the first days
after launch), kept with a thinned copy of the series for charts."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import transaction

from benchmarks_app.models import MemoryLog
from benchmarks_app.results.detect import MAX_BYTES, BenchmarkFormatError, decode
from benchmarks_app.results.health import BreakerLogError, health_verdict, memory_analysis, parse_breaker_events
from benchmarks_app.results.timeline import MemoryTimeline, TimelineRefusal, iso_utc, parse_timeline, utc_offset
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.kernel.uploads import upload_size_check
from sizing.models import Deployment, Organisation

CHART_POINTS = 1500  # per GPU: a 72-hour log every 5 s is 52,000 samples; the chart needs far fewer
TEXT_MAX_BYTES = 8 * 2**20  # the events and breaker logs that come with it


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


def _text(field: str, name: str, data: bytes | None, limit: int) -> str:
    if not data:
        return ""
    upload_size_check(len(data), limit_bytes=limit, field=field, name=name)
    try:
        return decode(data)
    except BenchmarkFormatError as error:
        raise _invalid(field, f"{name}: {error.message}") from None


def thin_series(timeline: MemoryTimeline, *, points: int = CHART_POINTS) -> dict[str, Any]:
    """Each GPU's (time, used bytes) and each engine's KV usage, every n-th sample so at most `points` remain
    (the peak sample always kept, so the chart shows the true peak)."""
    gpus = []
    for series in timeline.gpus:
        samples = [s for s in series.samples if s.time_s is not None]
        if not samples:
            continue
        step = max(1, -(-len(samples) // points))
        kept = samples[::step]
        peak = max(samples, key=lambda s: s.memory_used_bytes or 0)
        if peak not in kept:
            kept = sorted([*kept, peak], key=lambda s: s.time_s)
        gpus.append(
            {
                "gpu": series.gpu,
                "name": series.name,
                "total_bytes": series.total_bytes,
                "t": [iso_utc(s.time_s) for s in kept],
                "used_bytes": [s.memory_used_bytes for s in kept],
            }
        )
    servers = []
    for server in timeline.servers:
        samples = [s for s in server.samples if s.time_s is not None and s.kv_cache_usage is not None]
        step = max(1, -(-len(samples) // points))
        servers.append(
            {
                "engine": server.engine,
                "instance": server.instance,
                "t": [iso_utc(s.time_s) for s in samples[::step]],
                "kv_cache_usage": [s.kv_cache_usage for s in samples[::step]],
            }
        )
    return {"gpus": gpus, "servers": servers}


@transaction.atomic
def memory_log_import(
    *,
    organisation: Organisation,
    user: Any,
    name: str,
    data: bytes,
    deployment: Deployment | None = None,
    committed_bytes_per_gpu: int | None = None,
    hours_required: int = 72,
    utc_offset_minutes: int = 0,
    events: bytes | None = None,
    breaker: bytes | None = None,
) -> MemoryLog:
    """Read, analyse, judge and keep a monitoring log; a SizingError (400) with nothing stored when any of the
    files cannot be read. `utc_offset_minutes` is the zone of every time the files write without one (nvidia-smi's
    samples, the engine log's OOM lines, the breaker log's trips): all are read in it and kept in UTC."""
    upload_size_check(len(data), limit_bytes=MAX_BYTES, field="file", name=name, note="(50 MiB)")
    text = _text("file", name, data, MAX_BYTES)
    events_text = _text("events", "events log", events, TEXT_MAX_BYTES)
    breaker_text = _text("breaker", "breaker log", breaker, TEXT_MAX_BYTES)
    zone = utc_offset(utc_offset_minutes)  # one zone for every time written without one, in all three files
    try:
        timeline = parse_timeline(text, tz=zone)
    except TimelineRefusal as refusal:
        raise _invalid("file", f"{name}: {refusal.reason}") from None
    breaker_events = None
    if breaker_text:
        try:
            breaker_events = parse_breaker_events(breaker_text, tz=zone)
        except BreakerLogError as error:
            raise _invalid("breaker", f"breaker log: {error}") from None
    analysis = memory_analysis(
        timeline, committed_bytes_per_gpu=committed_bytes_per_gpu, events_text=events_text or None, events_tz=zone
    )
    verdict = health_verdict(
        timeline,
        committed_bytes_per_gpu=committed_bytes_per_gpu,
        hours_required=hours_required,
        breaker_events=breaker_events,
        events_text=events_text or None,
        events_tz=zone,
    )
    verdict["zone"] = {"utc_offset_minutes": utc_offset_minutes}
    return MemoryLog.objects.create(
        organisation=organisation,
        deployment=deployment,
        name=name[:255],
        format=timeline.format,
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        content=text,
        events_text=events_text,
        breaker_text=breaker_text,
        committed_bytes_per_gpu=committed_bytes_per_gpu,
        hours_required=hours_required,
        utc_offset_minutes=utc_offset_minutes,
        analysis=nonfinite_as_text(analysis),
        verdict=nonfinite_as_text(verdict),
        series=nonfinite_as_text(
            {**thin_series(timeline), "notes": list(timeline.notes), "truncated": timeline.truncated}
        ),
        created_by=user,
    )


def memory_log_delete(*, log: MemoryLog) -> None:
    log.delete()

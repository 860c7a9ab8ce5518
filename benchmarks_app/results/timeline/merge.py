"""One timeline of several logs of one deployment, and a timeline with more events. Pure Python."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from benchmarks_app.results.timeline.common import (
    GpuSeries,
    MemoryTimeline,
    ServerSeries,
    TimelineEvent,
    TimelineFormat,
    natural_key,
    time_sorted,
)


def merge_timelines(*timelines: MemoryTimeline) -> MemoryTimeline:
    """One timeline of several logs of the same deployment (e.g. nvidia-smi and vLLM scrapes). Series of the same
    GPU id (and host) or the same server instance are joined and re-sorted by time; everything else is kept.

    >>> a = MemoryTimeline(format="nvidia_smi_csv", sources=("nvidia_smi",),
    ...                    gpus=(GpuSeries(gpu="0", samples=(GpuSample(time_s=60.0, memory_used_bytes=2),)),))
    >>> b = MemoryTimeline(format="nvidia_smi_csv", sources=("nvidia_smi",),
    ...                    gpus=(GpuSeries(gpu="0", samples=(GpuSample(time_s=0.0, memory_used_bytes=1),)),))
    >>> [s.time_s for s in merge_timelines(a, b).gpus[0].samples]
    [0.0, 60.0]
    """
    if len(timelines) == 1:
        return timelines[0]
    gpus: dict[tuple[str, str | None], GpuSeries] = {}
    servers: dict[tuple[str, str], ServerSeries] = {}
    for timeline in timelines:
        for series in timeline.gpus:
            key = (series.gpu, series.host)
            if key in gpus:
                held = gpus[key]
                gpus[key] = replace(
                    held,
                    name=held.name or series.name,
                    uuid=held.uuid or series.uuid,
                    pci_bus_id=held.pci_bus_id or series.pci_bus_id,
                    samples=time_sorted([*held.samples, *series.samples]),
                    resolution_bytes=max(held.resolution_bytes, series.resolution_bytes),
                )
            else:
                gpus[key] = series
        for server in timeline.servers:
            key2 = (server.engine, server.instance)
            if key2 in servers:
                servers[key2] = replace(servers[key2], samples=time_sorted([*servers[key2].samples, *server.samples]))
            else:
                servers[key2] = server
    formats = {t.format for t in timelines}
    return MemoryTimeline(
        format=formats.pop() if len(formats) == 1 else TimelineFormat.MERGED.value,
        sources=tuple(sorted({s for t in timelines for s in t.sources})),
        gpus=tuple(sorted(gpus.values(), key=lambda g: (natural_key(g.gpu), g.host or ""))),
        servers=tuple(servers.values()),
        server_stats=tuple(s for t in timelines for s in t.server_stats),
        events=tuple(sorted((e for t in timelines for e in t.events), key=lambda e: e.time_s or 0.0)),
        truncated=any(t.truncated for t in timelines),
        notes=tuple(n for t in timelines for n in t.notes),
    )


def with_events(timeline: MemoryTimeline, events: Iterable[TimelineEvent]) -> MemoryTimeline:
    """The timeline with more events (e.g. from `parse_event_log`), in time order."""
    joined = [*timeline.events, *events]
    return replace(timeline, events=tuple(sorted(joined, key=lambda e: e.time_s or 0.0)))

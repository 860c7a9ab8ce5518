"""OOM and XID events from a log's text (the kernel log, journalctl, the engine's own log), to join a timeline with
`merge.with_events`. Pure Python.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

from benchmarks_app.results.timeline.common import EventKind, TimelineEvent, try_time

_XID = re.compile(r"\bXid\b\s*(?:\((?:PCI:)?([^)]*)\))?\s*:?\s*(\d+)", re.IGNORECASE)
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|cudaErrorMemoryAllocation")
_MONTHS = {
    m: i
    for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)
}
_LINE_TIMES = (
    re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"),
    re.compile(r"(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)"),
    re.compile(r"\[\w{3} (\w{3}) +(\d+) (\d{2}:\d{2}:\d{2}) (\d{4})\]"),  # dmesg -T
    re.compile(r"^(\w{3}) +(\d+) (\d{2}:\d{2}:\d{2})\b"),  # syslog / journalctl: no year
    re.compile(r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d{2})-(\d{2}) (\d{2}:\d{2}:\d{2})"),  # vLLM: no year
)
EVENT_DEDUP_S = 60.0  # lines of one error (a traceback, several workers) within a minute count as one event


def _line_time(line: str, *, year: int | None, tz: tzinfo) -> float | None:
    for index, pattern in enumerate(_LINE_TIMES):
        match = pattern.search(line)
        if not match:
            continue
        if index < 2:
            return try_time(match.group(1).replace(",", "."), tz=tz)
        if index == 2:
            month, day, clock, year_text = match.groups()
            if month not in _MONTHS:
                continue
            return _at(int(year_text), _MONTHS[month], int(day), clock, tz)
        if year is None:
            continue
        if index == 3:
            month, day, clock = match.groups()
            if month not in _MONTHS:
                continue
            return _at(year, _MONTHS[month], int(day), clock, tz)
        month_text, day, clock = match.groups()
        return _at(year, int(month_text), int(day), clock, tz)
    return None


def _at(year: int, month: int, day: int, clock: str, tz: tzinfo) -> float | None:
    hours, minutes, seconds = (int(p) for p in clock.split(":"))
    try:
        return datetime(year, month, day, hours, minutes, seconds, tzinfo=tz).timestamp()
    except ValueError:
        return None


def parse_event_log(text: str, *, year: int | None = None, tz: tzinfo = UTC) -> tuple[TimelineEvent, ...]:
    """OOM and XID events in a log text (engine logs, ``dmesg -T``, ``journalctl -k``, syslog).

    OOM: a line with "CUDA out of memory", "OutOfMemoryError" (``torch.OutOfMemoryError``,
    ``torch.cuda.OutOfMemoryError``), "CUDA error: out of memory" or "cudaErrorMemoryAllocation". XID: an
    ``NVRM: Xid (PCI:0000:19:00): 79, ...`` line (the PCI address is kept as the event's `gpu`). The time is the
    line's own (ISO 8601, ``2026/11/30 13:41:02``, ``[Mon Nov 30 13:41:02 2026]``; syslog's and vLLM's year-less
    ``Nov 30 13:41:02`` / ``11-30 13:41:02`` take `year`), else the last time seen above it (a traceback line).
    Lines of one error within `EVENT_DEDUP_S` seconds make one event.

    >>> events = parse_event_log('''ERROR 11-30 13:41:02 [core.py:700] EngineCore failed
    ... torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
    ... [Mon Nov 30 13:41:05 2026] NVRM: Xid (PCI:0000:19:00): 79, pid=1234, GPU has fallen off the bus.''', year=2026)
    >>> [(e.kind, e.code, iso_utc(e.time_s)) for e in events]
    [('oom', None, '2026-11-30T13:41:02Z'), ('xid', 79, '2026-11-30T13:41:05Z')]
    """
    events: list[TimelineEvent] = []
    last_time: float | None = None
    for line in text.splitlines():
        when = _line_time(line, year=year, tz=tz)
        if when is not None:
            last_time = when
        xid = _XID.search(line) if "xid" in line.lower() else None
        if xid:
            code = int(xid.group(2))
            gpu = xid.group(1).strip() if xid.group(1) else None
            event = TimelineEvent(
                time_s=last_time, kind=EventKind.XID.value, code=code, gpu=gpu, message=line.strip()[:300]
            )
        elif _OOM.search(line):
            event = TimelineEvent(time_s=last_time, kind=EventKind.OOM.value, message=line.strip()[:300])
        else:
            continue
        if any(
            e.kind == event.kind and e.code == event.code and e.gpu == event.gpu and _close(e.time_s, event.time_s)
            for e in events
        ):
            continue
        events.append(event)
    return tuple(events)


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= EVENT_DEDUP_S

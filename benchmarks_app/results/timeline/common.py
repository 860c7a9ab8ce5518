"""What every source of a memory timeline shares (the package docstring says what a timeline is): the units, the
formats and event kinds, the refusal, the `MemoryTimeline` dataclasses, and the readers of times. Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import StrEnum
from typing import Any

from benchmarks_app.results.run import FormatRefusal

MIB = 1_048_576  # bytes in a MiB: nvidia-smi and DCGM report memory in MiB
GB = 1_000_000_000  # bytes in a GB: AIPerf converts DCGM's MiB to decimal GB (MiB × 1.048576e-3)


class TimelineFormat(StrEnum):
    NVIDIA_SMI_CSV = "nvidia_smi_csv"
    PROMETHEUS_SCRAPES = "prometheus_scrapes"
    AIPERF_GPU_TELEMETRY = "aiperf_gpu_telemetry"
    AIPERF_SERVER_METRICS = "aiperf_server_metrics"
    MERGED = "merged"


class EventKind(StrEnum):
    OOM = "oom"  # an out-of-memory error (log line, or memory full then a drop: see health.py)
    XID = "xid"  # an NVIDIA XID error (DCGM_FI_DEV_XID_ERRORS, or an NVRM line of the kernel log)
    SMI_ERROR = "smi_error"  # nvidia-smi printed an error instead of a sample (e.g. "GPU is lost")
    RESTART = "restart"  # a server restart seen in the log itself (Prometheus counter reset, new process start)


class TimelineRefusal(FormatRefusal):
    """The text is not a monitoring log this module reads; `reason` says why, in words a person can act on."""


# ---------------------------------------------------------------------------------------------------------------
# The timeline


@dataclass(frozen=True, kw_only=True)
class GpuSample:
    """One reading of one GPU. `time_s` is POSIX seconds (UTC); None only for an undated Prometheus scrape.

    >>> GpuSample(time_s=0.0, memory_used_bytes=2 * MIB, memory_total_bytes=8 * MIB).memory_used_fraction
    0.25
    """

    time_s: float | None
    memory_used_bytes: int | None
    memory_total_bytes: int | None = None
    utilization_pct: float | None = None  # 0–100
    power_w: float | None = None
    temperature_c: float | None = None

    @property
    def memory_used_fraction(self) -> float | None:
        if self.memory_used_bytes is None or not self.memory_total_bytes:
            return None
        return self.memory_used_bytes / self.memory_total_bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": iso_utc(self.time_s),
            "memory_used_bytes": self.memory_used_bytes,
            "memory_total_bytes": self.memory_total_bytes,
            "utilization_pct": self.utilization_pct,
            "power_w": self.power_w,
            "temperature_c": self.temperature_c,
        }


@dataclass(frozen=True, kw_only=True)
class GpuSeries:
    """The samples of one GPU, in time order. `gpu` is the index as the log gives it ("0"), prefixed by the host
    ("node-1/0") when the log covers several hosts.

    >>> series = GpuSeries(gpu="0", samples=(GpuSample(time_s=0.0, memory_used_bytes=5),
    ...                                      GpuSample(time_s=60.0, memory_used_bytes=7)))
    >>> series.peak_bytes, series.dated
    (7, True)
    """

    gpu: str
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    host: str | None = None
    samples: tuple[GpuSample, ...] = ()
    # the gauge's step: nvidia-smi, NVML and DCGM's FB_USED report whole MiB; AIPerf's GB with two decimals step
    # by 10 MB (`gauge_resolution_bytes`). A reading within one step of a figure cannot be told from it.
    resolution_bytes: int = MIB

    @property
    def peak_bytes(self) -> int | None:
        values = [s.memory_used_bytes for s in self.samples if s.memory_used_bytes is not None]
        return max(values) if values else None

    @property
    def total_bytes(self) -> int | None:
        """The card's total as the log reports it (the largest reported, should it vary)."""
        values = [s.memory_total_bytes for s in self.samples if s.memory_total_bytes]
        return max(values) if values else None

    @property
    def dated(self) -> bool:
        return bool(self.samples) and all(s.time_s is not None for s in self.samples)

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "name": self.name,
            "uuid": self.uuid,
            "pci_bus_id": self.pci_bus_id,
            "host": self.host,
            "peak_bytes": self.peak_bytes,
            "total_bytes": self.total_bytes,
            "resolution_bytes": self.resolution_bytes,
            "samples": [s.as_dict() for s in self.samples],
        }


@dataclass(frozen=True, kw_only=True)
class ServerSample:
    """One scrape of one inference server. Missing metrics are None (unknown, not zero).

    `kv_cache_usage` is a fraction (vLLM ``kv_cache_usage_perc`` is 0–1 despite its name; SGLang
    ``token_usage`` too); `preemptions_total` and `generation_tokens_total` are the engine's counters as scraped
    (a decrease means the server restarted); `process_start_time_s` is ``process_start_time_seconds``.
    """

    time_s: float | None
    kv_cache_usage: float | None = None
    requests_running: float | None = None
    requests_waiting: float | None = None
    preemptions_total: float | None = None
    generation_tokens_total: float | None = None
    process_start_time_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": iso_utc(self.time_s),
            "kv_cache_usage": self.kv_cache_usage,
            "requests_running": self.requests_running,
            "requests_waiting": self.requests_waiting,
            "preemptions_total": self.preemptions_total,
            "generation_tokens_total": self.generation_tokens_total,
            "process_start_time": iso_utc(self.process_start_time_s),
        }


@dataclass(frozen=True, kw_only=True)
class ServerSeries:
    """The scrapes of one engine instance: `engine` is "vllm", "sglang", "tgi" or "trtllm"; `instance` its labels in
    words
    ("engine=0 model_name=opt-125m-tp2")."""

    engine: str
    instance: str
    samples: tuple[ServerSample, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "instance": self.instance, "samples": [s.as_dict() for s in self.samples]}


@dataclass(frozen=True, kw_only=True)
class ServerStats:
    """Aggregate figures of one server metric over a window (AIPerf's server-metrics export): `stats` as the tool
    wrote them (gauges: avg/min/max/std/pXX; counters: total (the delta) and rate)."""

    engine: str
    metric: str  # canonical: "kv_cache_usage", "requests_running", "requests_waiting", "preemptions"
    source_metric: str  # the name in the file, e.g. "vllm:kv_cache_usage_perc"
    instance: str
    stats: Mapping[str, float]
    start_s: float | None = None
    end_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "metric": self.metric,
            "source_metric": self.source_metric,
            "instance": self.instance,
            "stats": dict(self.stats),
            "start": iso_utc(self.start_s),
            "end": iso_utc(self.end_s),
        }


@dataclass(frozen=True, kw_only=True)
class TimelineEvent:
    """Something the log reports at a time: an XID, an OOM error line, an nvidia-smi error, a restart."""

    time_s: float | None
    kind: str  # an EventKind value
    message: str
    gpu: str | None = None
    code: int | None = None  # the XID number for kind "xid"

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": iso_utc(self.time_s),
            "kind": self.kind,
            "message": self.message,
            "gpu": self.gpu,
            "code": self.code,
        }


@dataclass(frozen=True, kw_only=True)
class MemoryTimeline:
    """Everything one monitoring log says about GPU memory and the server over time.

    `sources` names what the log held ("nvidia_smi", "dcgm", "vllm", "sglang", "aiperf"); `truncated` is True when
    the log was cut at its end (what was complete is kept; `notes` say what was left out).
    """

    format: str
    sources: tuple[str, ...] = ()
    gpus: tuple[GpuSeries, ...] = ()
    servers: tuple[ServerSeries, ...] = ()
    server_stats: tuple[ServerStats, ...] = ()
    events: tuple[TimelineEvent, ...] = ()
    truncated: bool = False
    notes: tuple[str, ...] = ()

    @property
    def start_s(self) -> float | None:
        times = list(self._times())
        return min(times) if times else None

    @property
    def end_s(self) -> float | None:
        times = list(self._times())
        return max(times) if times else None

    def _times(self) -> Iterable[float]:
        for series in self.gpus:
            yield from (s.time_s for s in series.samples if s.time_s is not None)
        for server in self.servers:
            yield from (s.time_s for s in server.samples if s.time_s is not None)
        for stats in self.server_stats:
            yield from (t for t in (stats.start_s, stats.end_s) if t is not None)

    def gpu(self, gpu: str) -> GpuSeries:
        """The series of one GPU by its id; KeyError when the log has none."""
        for series in self.gpus:
            if series.gpu == gpu:
                return series
        raise KeyError(gpu)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "sources": list(self.sources),
            "start": iso_utc(self.start_s),
            "end": iso_utc(self.end_s),
            "truncated": self.truncated,
            "notes": list(self.notes),
            "gpus": [g.as_dict() for g in self.gpus],
            "servers": [s.as_dict() for s in self.servers],
            "server_stats": [s.as_dict() for s in self.server_stats],
            "events": [e.as_dict() for e in self.events],
        }


def gauge_resolution_bytes(series: Iterable[GpuSeries]) -> int:
    """The coarsest gauge step of the series (`GpuSeries.resolution_bytes`; 1 MiB when there is none): how far a
    reading may lie from the memory it stands for, so the tolerance a peak is compared with a figure at."""
    return max((s.resolution_bytes for s in series), default=MIB)


def natural_key(key: str) -> tuple[int, str]:
    tail = key.rsplit("/", 1)[-1]
    return (int(tail), key) if tail.isdigit() else (1 << 30, key)


def time_sorted(rows: list[Any]) -> tuple[Any, ...]:
    if all(r.time_s is not None for r in rows):
        return tuple(sorted(rows, key=lambda r: r.time_s))
    return tuple(rows)  # undated scrapes keep the file's order


# ---------------------------------------------------------------------------------------------------------------
# Times


def iso_utc(time_s: float | None) -> str | None:
    """POSIX seconds as ISO 8601 UTC, milliseconds only when there are any; None stays None.

    >>> iso_utc(0.0), iso_utc(1.5)
    ('1970-01-01T00:00:00Z', '1970-01-01T00:00:01.500Z')
    """
    if time_s is None:
        return None
    moment = datetime.fromtimestamp(round(time_s, 3), UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond // 1000:03d}"
    return text + "Z"


_TIME_FORMATS = (
    "%Y/%m/%d %H:%M:%S.%f",
    "%Y/%m/%d %H:%M:%S",
    "%Y-%m-%d %H:%M:%S.%f",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%dT%H:%M:%S",
    "%a %b %d %H:%M:%S %Y",
)
_EPOCH = re.compile(r"^\d{9,10}(\.\d+)?$|^\d{12,13}$|^\d{18,19}$")


def parse_time(text: str, *, tz: tzinfo = UTC) -> float:
    """POSIX seconds of a time as logs write it: ISO 8601 (with or without a zone), nvidia-smi's
    ``2026/11/30 13:41:02.123``, ``date``'s ``Mon Nov 30 13:41:02 2026``, or POSIX seconds, milliseconds or
    nanoseconds. A time without a zone is in `tz`. ValueError when it is none of these.

    >>> parse_time("2026/11/30 13:41:02.123") == parse_time("2026-11-30T13:41:02.123Z")
    True
    >>> parse_time("1764510062")
    1764510062.0
    """
    value = text.strip()
    if _EPOCH.match(value):
        number = float(value)
        if number > 1e17:  # nanoseconds
            return number / 1e9
        return number / 1000 if number > 1e11 else number
    value = re.sub(r"^(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d) (?:UTC|GMT) (\d{4})$", r"\1 \2", value)  # date(1)
    iso = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    iso = re.sub(r" (?:UTC|GMT)$", "+00:00", iso)
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        moment = None
    if moment is None:
        for pattern in _TIME_FORMATS:
            try:
                moment = datetime.strptime(value, pattern).replace(tzinfo=tz)
                break
            except ValueError:
                continue
    if moment is None:
        raise ValueError(f"not a time: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.timestamp()


def try_time(text: str, *, tz: tzinfo = UTC) -> float | None:
    try:
        return parse_time(text, tz=tz)
    except ValueError:
        return None


def utc_offset(minutes: int) -> tzinfo:
    """A fixed zone for `tz=` (nvidia-smi logs the host's local time): ``utc_offset(60)`` is UTC+01:00.

    >>> parse_time("2026/11/30 14:41:02", tz=utc_offset(60)) == parse_time("2026-11-30T13:41:02Z")
    True
    """
    return timezone(timedelta(minutes=minutes))

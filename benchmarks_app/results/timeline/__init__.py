"""GPU memory timelines from monitoring logs: `nvidia-smi` CSV, DCGM and vLLM/SGLang/TGI/TensorRT-LLM Prometheus
scrapes, AIPerf
telemetry exports; one `MemoryTimeline` whatever wrote the log (issue 6, part 5). Pure Python, no Django.

A timeline holds, per GPU, a series of samples (time, memory used, memory total, utilisation, and power/temperature
where the log has them); per inference server (vLLM engine, SGLang rank, TGI, TensorRT-LLM), a series of KV-cache
usage, running and
waiting requests, and the preemption counter; aggregate-only server figures (AIPerf's server-metrics export); and
events (XID errors from DCGM; OOM/XID lines from a log text via `parse_event_log`).

Units: bytes (`int`, MiB × 1,048,576; AIPerf's GB × 1,000,000,000; each GPU series keeps its gauge's step in
`resolution_bytes`: 1 MiB for nvidia-smi and DCGM, 10 MB for AIPerf's two decimals), times as POSIX seconds
(`float`, UTC),
utilisation in percent (0–100), KV-cache usage as a fraction (0–1, as the engines export it). `as_dict()` writes
times as ISO 8601 UTC strings.

Accepted formats (`parse_timeline` detects which; each parser may also be called on its own):

- ``nvidia_smi_csv``: ``nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu
  --format=csv -l N`` and any wider query that keeps ``timestamp`` and ``memory.used`` (name, pci.bus_id, uuid,
  memory.free/reserved, temperature.gpu, power.draw...); with units in the values ("841 MiB") or ``nounits``; with
  ``noheader`` (columns then default to the issue's query, or ``columns=`` names them); header lines repeated when
  the log restarts or is appended to; several GPUs interleaved; ``[N/A]`` values; a last line cut mid-way (kept
  out, said so); nvidia-smi's own error lines in the middle ("Unable to determine the device handle...") become
  ``smi_error`` events. nvidia-smi writes the host's local time with no zone: `tz` says which (UTC by default).
- ``prometheus_scrapes``: Prometheus text expositions of the DCGM exporter (``DCGM_FI_DEV_FB_USED``/``FB_FREE``/
  ``FB_RESERVED``/``FB_TOTAL``, ``GPU_UTIL``, ``POWER_USAGE``, ``GPU_TEMP``, ``XID_ERRORS``, per ``gpu`` label,
  MiB), of vLLM (``vllm:kv_cache_usage_perc`` or the older ``vllm:gpu_cache_usage_perc``,
  ``vllm:num_requests_running``/``waiting``, ``vllm:num_preemptions_total``, ``vllm:generation_tokens_total``) and
  of SGLang (``sglang:token_usage``, ``sglang:num_running_reqs``, ``sglang:num_queue_reqs``), of TGI
  (``tgi_queue_size`` waiting, ``tgi_batch_current_size`` running; TGI exports no KV-cache gauge, so its KV usage is
  unknown) and of TensorRT-LLM (``trtllm-serve``'s ``trtllm_kv_cache_utilization``, ``trtllm_num_requests_running``/
  ``waiting``, ``trtllm_generation_tokens_total``, ``trtllm_kv_cache_used_blocks``/``max_blocks``; the Triton
  backend's ``nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"|"max"|"fraction"}`` and
  ``nv_trt_llm_request_metrics{request_type="active"|"waiting"}``), several scrapes
  concatenated. The time of each scrape comes from, in this order: a marker line before it, ``# scrape <time>``
  (also ``# time <time>`` / ``# timestamp <time>``), or a line holding only a time (what ``date -u +%FT%TZ`` or
  ``date +%s`` writes in a ``while`` loop around ``curl``); the exposition's own sample timestamps (milliseconds);
  else the scrape is undated (a single pasted scrape: peaks are read, no time series). Without markers, a series
  seen twice starts a new scrape. Also JSON lines ``{"time": <ISO 8601 or POSIX seconds>, "text": <exposition>}``
  (``timestamp``/``body`` accepted as the keys' aliases).
- ``aiperf_gpu_telemetry``: AIPerf's ``gpu_telemetry_export.jsonl``, one line per GPU per scrape with
  ``timestamp_ns`` and ``telemetry_data.nvidia_memory_used`` in GB (1e9 bytes; older AIPerf spells it
  ``gpu_memory_used``, and ``total_gpu_memory`` the total).
- ``aiperf_server_metrics``: AIPerf's ``server_metrics_export.json``: aggregate statistics per metric over the
  profiling phase (no time series), kept as `ServerStats`.

Refused, with the reason (`TimelineRefusal.reason`): benchmark result files ("a benchmark result, not a monitoring
log: import it as a benchmark run"), nvidia-smi tables, ``-q`` and XML reports and query snapshots without a
``timestamp`` column (hardware fingerprints), logs without memory figures, rocm-smi output, circuit-breaker event
logs and OOM/XID log texts (inputs of the health verdict, not timelines), Prometheus text without any metric read
here, empty and binary text.

>>> log = '''timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]
... 2026/11/30 13:41:02.123, 0, 71000 MiB, 81559 MiB, 35 %
... 2026/11/30 13:46:02.123, 0, 71040 MiB, 81559 MiB, 40 %
... 2026/11/30 13:51:02.1'''
>>> timeline = parse_timeline(log)
>>> timeline.format, timeline.truncated, len(timeline.gpus[0].samples)
('nvidia_smi_csv', True, 2)
>>> timeline.gpus[0].samples[1].memory_used_bytes == 71040 * MIB
True
>>> iso_utc(timeline.gpus[0].samples[0].time_s)
'2026-11-30T13:41:02.123Z'
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import StrEnum
from typing import Any

from benchmarks_app.results.run import FormatRefusal
from sizing.kernel.json_limits import loads as bounded_loads

MIB = 1_048_576  # bytes in a MiB: nvidia-smi and DCGM report memory in MiB
GB = 1_000_000_000  # bytes in a GB: AIPerf converts DCGM's MiB to decimal GB (MiB × 1.048576e-3)

DEFAULT_SMI_COLUMNS = ("timestamp", "index", "memory.used", "memory.total", "utilization.gpu")


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


def _try_time(text: str, *, tz: tzinfo = UTC) -> float | None:
    try:
        return parse_time(text, tz=tz)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------------------------
# Detection and refusals


_BENCHMARK_KEYS = {
    "mean_ttft_ms",
    "median_ttft_ms",
    "request_throughput",
    "output_throughput",
    "mean_tpot_ms",
    "mean_e2el_ms",
    "benchmarks",
    "time_to_first_token",
    "inter_token_latency",
    "request_latency",
    "results_ttft_s_mean",
    "results_number_output_tokens_mean",
    "load_summary",
    "successes",
    "ttft_s",
    "error_code",
}


def _benchmark_refusal(value: Any) -> TimelineRefusal | None:
    candidates = value if isinstance(value, list) else [value]
    for item in candidates[:3]:
        if not isinstance(item, dict):
            continue
        keys = set(item)
        metrics = item.get("metrics")
        if isinstance(metrics, dict) and any("time_to_first_token" in str(k) for k in metrics):
            keys.add("time_to_first_token")
        if keys & _BENCHMARK_KEYS or any(k.startswith("results_") for k in keys):
            return TimelineRefusal("a benchmark result, not a monitoring log: import it as a benchmark run")
    return None


def _first_json_value(text: str) -> Any:
    """The whole text as JSON, else its first non-empty line as JSON; None when neither is JSON."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return bounded_loads(stripped)
    except json.JSONDecodeError:
        pass
    for line in stripped.splitlines():
        if line.strip():
            try:
                return bounded_loads(line)
            except json.JSONDecodeError:
                return None
    return None


def detect_timeline_format(text: str) -> str:
    """The `TimelineFormat` of a monitoring log's text, or TimelineRefusal naming what the text is instead.

    >>> detect_timeline_format("timestamp, index, memory.used [MiB]\\n2026/11/30 13:41:02.123, 0, 71000 MiB\\n")
    'nvidia_smi_csv'
    >>> try:
    ...     detect_timeline_format('{"mean_ttft_ms": 42.6, "completed": 6}')
    ... except TimelineRefusal as refusal:
    ...     print(refusal.reason)
    a benchmark result, not a monitoring log: import it as a benchmark run
    """
    stripped = text.strip()
    if not stripped:
        raise TimelineRefusal("the file is empty")
    if "\x00" in stripped[:4096]:
        raise TimelineRefusal("binary content, not a text monitoring log")
    value = _first_json_value(stripped)
    if value is not None:
        if isinstance(value, dict):
            if "telemetry_data" in value and ("timestamp_ns" in value or "timestamp" in value):
                return TimelineFormat.AIPERF_GPU_TELEMETRY.value
            if isinstance(value.get("metrics"), dict) and (
                "metrics_phase" in value or "endpoints_configured" in str(value.get("summary"))[:2000]
            ):
                return TimelineFormat.AIPERF_SERVER_METRICS.value
        refusal = _benchmark_refusal(value)
        if refusal:
            raise refusal
        if isinstance(value, dict):
            if _scrape_record(value) is not None:
                return TimelineFormat.PROMETHEUS_SCRAPES.value
            if value.get("kind") in ("trip", "shed", "recover"):
                raise TimelineRefusal(
                    "a circuit-breaker events log, not a monitoring log: give it to the health "
                    "verdict as breaker_events"
                )
            if "gpu_util" in value or "amd_smi" in str(value)[:200] or any("card" in str(k) for k in value):
                raise TimelineRefusal(
                    "rocm-smi / amd-smi JSON: AMD monitoring logs are not read yet; log "
                    "nvidia-smi --query-gpu CSV or DCGM scrapes"
                )
        if (
            isinstance(value, list)
            and value
            and isinstance(value[0], dict)
            and ("bdf" in value[0] or "asic" in value[0] or "link_metrics" in value[0])
        ):
            raise TimelineRefusal(
                "amd-smi JSON: AMD monitoring logs are not read yet; log nvidia-smi --query-gpu CSV or DCGM scrapes"
            )
        raise TimelineRefusal(
            "JSON that is none of the monitoring formats read here (nvidia-smi CSV, Prometheus "
            "scrapes, AIPerf GPU telemetry JSONL, AIPerf server-metrics JSON)"
        )
    head = stripped[:8192]
    if head.startswith(("{", "[")) and re.search(
        r'"(?:benchmarks|mean_ttft_ms|time_to_first_token|results_ttft_s_'
        r'mean)"',
        head,
    ):
        raise TimelineRefusal(
            "a benchmark result (cut short: not valid JSON), not a monitoring log: import it as a benchmark run"
        )
    if head.startswith("<?xml") or "<nvidia_smi_log" in head:
        raise TimelineRefusal(
            "an nvidia-smi -q -x XML report (a one-off snapshot), not a monitoring log: import it "
            "as a hardware fingerprint"
        )
    if "NVSMI LOG" in head or re.search(r"^\s*Attached GPUs\s*:", head, re.MULTILINE):
        raise TimelineRefusal(
            "an nvidia-smi -q report (a one-off snapshot), not a monitoring log: import it as a hardware fingerprint"
        )
    if re.search(r"NVIDIA-SMI \d", head) and "+---" in head:
        raise TimelineRefusal(
            "an nvidia-smi table (a one-off snapshot), not a monitoring log: import it as a "
            "hardware fingerprint, or log with nvidia-smi --query-gpu=timestamp,index,memory.used,"
            "memory.total,utilization.gpu --format=csv -l 60"
        )
    if "ROCm System Management Interface" in head or "rocm-smi" in head.lower():
        raise TimelineRefusal(
            "rocm-smi output: AMD monitoring logs are not read yet; log nvidia-smi --query-gpu CSV or DCGM scrapes"
        )
    if (
        re.search(r"^Metric,(?:avg|Value)", head, re.MULTILINE)
        or re.search(r"^Run Info,.*Time to First Token", head)
        or re.search(r"^(?:Benchmark|Rate|Concurrency),", head)
    ):
        raise TimelineRefusal("a benchmark result, not a monitoring log: import it as a benchmark run")
    if _looks_like_prometheus(stripped):
        return TimelineFormat.PROMETHEUS_SCRAPES.value
    if _looks_like_smi_csv(stripped):
        return TimelineFormat.NVIDIA_SMI_CSV.value
    if re.search(r"CUDA out of memory|OutOfMemoryError|NVRM: Xid", stripped):
        raise TimelineRefusal(
            "a log of OOM/XID events, not a memory timeline: give it to the health verdict as events_text"
        )
    raise TimelineRefusal(
        "not a monitoring log read here: expected nvidia-smi --query-gpu CSV (with a timestamp "
        "column), Prometheus scrapes (DCGM, vLLM, SGLang), AIPerf GPU telemetry JSONL or AIPerf "
        "server-metrics JSON"
    )


def parse_timeline(text: str, *, tz: tzinfo = UTC, columns: Sequence[str] | None = None) -> MemoryTimeline:
    """The timeline of a monitoring log in any accepted format (see the module docstring); TimelineRefusal with the
    reason otherwise. `tz` is the zone of times written without one (nvidia-smi's); `columns` names the
    ``--query-gpu`` fields of a ``noheader`` nvidia-smi log.

    >>> text = '# scrape 2026-11-30T13:41:02Z\\nvllm:kv_cache_usage_perc{engine="0"} 0.5\\n'
    >>> server = parse_timeline(text).servers[0]
    >>> server.engine, server.instance, server.samples[0].kv_cache_usage, iso_utc(server.samples[0].time_s)
    ('vllm', 'engine=0', 0.5, '2026-11-30T13:41:02Z')
    """
    found = detect_timeline_format(text)
    if found == TimelineFormat.NVIDIA_SMI_CSV.value:
        return parse_nvidia_smi_csv(text, tz=tz, columns=columns)
    if found == TimelineFormat.PROMETHEUS_SCRAPES.value:
        return parse_prometheus_scrapes(text, tz=tz)
    if found == TimelineFormat.AIPERF_GPU_TELEMETRY.value:
        return parse_aiperf_gpu_telemetry(text)
    return parse_aiperf_server_metrics(text)


# ---------------------------------------------------------------------------------------------------------------
# nvidia-smi --query-gpu CSV


_SMI_ERROR = re.compile(
    r"Unable to determine|GPU is lost|No devices were found|Failed to initialize NVML|"
    r"NVIDIA-SMI has failed|Unknown Error|driver",
    re.IGNORECASE,
)
_HEADER_UNIT = re.compile(r"\s*\[([^\]]*)\]\s*$")
_NA = {
    "",
    "[N/A]",
    "N/A",
    "[Not Supported]",
    "Not Supported",
    "[Unknown Error]",
    "[GPU is lost]",
    "[Insufficient Permissions]",
    "[Requested functionality has been deprecated]",
}
# column aliases: nvidia-smi accepts several names for some fields
_SMI_ALIASES = {
    "gpu_name": "name",
    "gpu_bus_id": "pci.bus_id",
    "gpu_uuid": "uuid",
    "power.draw.instant": "power.draw",
    "power.draw.average": "power.draw",
    "temperature.gpu": "temperature.gpu",
}


def _smi_header(line: str) -> tuple[list[str], dict[str, str]] | None:
    """(field names, unit per field) of an nvidia-smi CSV header line, or None when the line is not one."""
    if line[:1].isdigit():  # a sample: a header starts with a field name
        return None
    cells = _cells(line)
    bare = [c.split(" [")[0].strip() for c in cells]
    if not cells or ("timestamp" not in bare and not any(c in ("memory.used", "index", "name", "uuid") for c in bare)):
        return None
    names: list[str] = []
    units: dict[str, str] = {}
    for cell in cells:
        unit_match = _HEADER_UNIT.search(cell)
        name = _HEADER_UNIT.sub("", cell).strip() if unit_match else cell
        if not re.fullmatch(r"[a-z_][a-z0-9_.]*", name):
            return None
        name = _SMI_ALIASES.get(name, name)
        names.append(name)
        if unit_match:
            units[name] = unit_match.group(1)
    return names, units


def _cells(line: str) -> list[str]:
    if '"' in line:
        return [c.strip() for c in next(csv.reader([line]))]
    return [c.strip() for c in line.split(",")]


_SMI_TIME = re.compile(r"(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


def _smi_time(text: str, tz: tzinfo) -> float:
    """nvidia-smi's ``2026/11/30 13:41:02.123`` quickly (a million lines in a 3-day log of 8 GPUs every second);
    any other form through `parse_time`."""
    match = _SMI_TIME.fullmatch(text)
    if not match:
        return parse_time(text, tz=tz)
    year, month, day, hour, minute, second, fraction = match.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz).timestamp()


def _looks_like_smi_csv(text: str) -> bool:
    """A header line or a dated sample line among the first five lines (nvidia-smi may print an error first)."""
    for line in [line for line in text.splitlines() if line.strip()][:5]:
        if _smi_header(line):
            return True
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 3 and re.match(r"^\d{4}[/-]", cells[0]) and _try_time(cells[0]) is not None:
            return True
    return False


_MEMORY_UNITS = {"MiB": MIB, "GiB": 1024 * MIB, "KiB": 1024, "B": 1, "MB": 1_000_000, "GB": GB}


_SMI_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)\s*([A-Za-z%]+)?")


def _smi_number(cell: str) -> tuple[float | None, str | None]:
    """(number, unit written after it) of a cell like "841 MiB", "22 %", "[N/A]"; (None, None) when N/A."""
    value = cell.strip()
    number, _, unit = value.partition(" ")
    if unit.isalpha() or unit == "%" or not unit:  # the common "841 MiB", "22 %", "841" quickly
        try:
            parsed = float(number)
        except ValueError:
            pass
        else:
            return (parsed, unit or None) if math.isfinite(parsed) else (None, None)
    if value in _NA or value.startswith("[") or value.upper() == "N/A":
        return None, None
    match = _SMI_NUMBER.fullmatch(value)
    if not match:
        raise ValueError(value)
    return float(match.group(1)), match.group(2)


def _smi_bytes(cell: str, header_unit: str | None) -> int | None:
    number, unit = _smi_number(cell)
    if number is None:
        return None
    factor = _MEMORY_UNITS.get(unit or header_unit or "MiB")
    if factor is None:
        raise ValueError(cell)
    return round(number * factor)


def parse_nvidia_smi_csv(text: str, *, tz: tzinfo = UTC, columns: Sequence[str] | None = None) -> MemoryTimeline:
    """The timeline of an ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N`` log.

    Memory in MiB (or the unit written in the header or after the value); `memory_total_bytes` is
    ``memory.total``, else ``memory.used + memory.free (+ memory.reserved)`` (noted: without ``memory.reserved`` that
    is a little below the card's total). GPUs are told apart by ``index``, else ``pci.bus_id``, else ``uuid``.

    >>> timeline = parse_nvidia_smi_csv("2026/11/30 13:41:02.123, 1, 71000, 81559, 35\\n")
    >>> timeline.gpus[0].gpu, timeline.gpus[0].samples[0].memory_total_bytes == 81559 * MIB
    ('1', True)
    """
    lines = text.splitlines()
    content = [i for i, line in enumerate(lines) if line.strip()]
    if not content:
        raise TimelineRefusal("the file is empty")
    last_index = content[-1]
    names: list[str] | None = None
    units: dict[str, str] = {}
    headers = 0
    header_sets: set[tuple[str, ...]] = set()
    rows: dict[str, list[GpuSample]] = {}
    identity: dict[str, dict[str, str | None]] = {}
    events: list[TimelineEvent] = []
    notes: list[str] = []
    skipped: list[int] = []
    truncated = False
    last_time: float | None = None
    times: dict[str, float] = {}  # the GPUs of one sample share its timestamp
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        header = _smi_header(line)
        if header:
            names, units = header
            headers += 1
            header_sets.add(tuple(names))
            continue
        cells = _cells(line)
        is_last = number - 1 == last_index
        if len(cells) < 3 and _SMI_ERROR.search(line):
            events.append(TimelineEvent(time_s=last_time, kind=EventKind.SMI_ERROR.value, message=line.strip()))
            continue
        if names is None:
            names = list(columns or DEFAULT_SMI_COLUMNS)
            if len(cells) != len(names) and not is_last:
                raise TimelineRefusal(
                    f"an nvidia-smi CSV without a header line has {len(cells)} columns; without a header the columns "
                    f"must be {','.join(DEFAULT_SMI_COLUMNS)} (or name them with columns=)"
                )
            notes.append("no header line: columns read as " + ",".join(names))
        if "timestamp" not in names:
            raise TimelineRefusal(
                "an nvidia-smi query without a timestamp column (a one-off snapshot), not a "
                "monitoring log: add timestamp to --query-gpu, or import it as a hardware "
                "fingerprint"
            )
        if "memory.used" not in names:
            raise TimelineRefusal(
                f"an nvidia-smi log without memory.used (columns: {', '.join(names)}): a memory "
                "timeline needs --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu"
            )
        try:
            if len(cells) != len(names):
                raise ValueError("columns")
            record = dict(zip(names, cells, strict=True))
            stamp = record["timestamp"]
            time_s = times.get(stamp)
            if time_s is None:
                time_s = times[stamp] = _smi_time(stamp, tz)
            used = _smi_bytes(record["memory.used"], units.get("memory.used"))
            total = _smi_bytes(record["memory.total"], units.get("memory.total")) if "memory.total" in record else None
            if total is None and used is not None and "memory.free" in record:
                free = _smi_bytes(record["memory.free"], units.get("memory.free"))
                reserved = (
                    _smi_bytes(record["memory.reserved"], units.get("memory.reserved"))
                    if "memory.reserved" in record
                    else None
                )
                if free is not None:
                    total = used + free + (reserved or 0)
            utilization = _smi_number(record["utilization.gpu"])[0] if "utilization.gpu" in record else None
            power = _smi_number(record["power.draw"])[0] if "power.draw" in record else None
            temperature = _smi_number(record["temperature.gpu"])[0] if "temperature.gpu" in record else None
        except (ValueError, KeyError):
            if is_last:
                truncated = True
                notes.append(
                    f"the last line ({number}) is cut short: it was left out, the complete samples before it are kept"
                )
                continue
            skipped.append(number)
            continue
        key = record.get("index") or record.get("pci.bus_id") or record.get("uuid") or "0"
        info = identity.setdefault(key, {"name": None, "uuid": None, "pci_bus_id": None})
        for field_name, column in (("name", "name"), ("uuid", "uuid"), ("pci_bus_id", "pci.bus_id")):
            if record.get(column) and record[column] not in _NA:
                info[field_name] = record[column]
        rows.setdefault(key, []).append(
            GpuSample(
                time_s=time_s,
                memory_used_bytes=used,
                memory_total_bytes=total,
                utilization_pct=utilization,
                power_w=power,
                temperature_c=temperature,
            )
        )
        last_time = time_s
    sample_count = sum(len(v) for v in rows.values())
    if skipped and len(skipped) > max(3, sample_count // 10):
        raise TimelineRefusal(
            f"{len(skipped)} lines could not be read as nvidia-smi samples (first: line "
            f"{skipped[0]}): not an nvidia-smi --query-gpu CSV log"
        )
    if skipped:
        notes.append(f"{len(skipped)} unreadable line(s) left out: {', '.join(map(str, skipped[:10]))}")
    if not sample_count:
        raise TimelineRefusal("an nvidia-smi CSV header without any complete sample")
    if headers > 1:
        notes.append(f"the header line appears {headers} times (the log was restarted or appended to)")
    if len(header_sets) > 1:
        notes.append("the queried columns change along the log; each part is read with its own header")
    if names and "memory.total" not in names and "memory.free" in names:
        notes.append(
            "memory total = memory.used + memory.free"
            + (
                " + memory.reserved"
                if "memory.reserved" in names
                else " (memory.reserved not logged: a little below the card's total)"
            )
        )
    gpus = []
    for key, samples in sorted(rows.items(), key=lambda item: _natural_key(item[0])):
        ordered = sorted(samples, key=lambda s: s.time_s or 0.0)
        if ordered != samples:
            notes.append(f"GPU {key}: samples out of time order were sorted")
        info = identity[key]
        gpus.append(
            GpuSeries(
                gpu=key, name=info["name"], uuid=info["uuid"], pci_bus_id=info["pci_bus_id"], samples=tuple(ordered)
            )
        )
    return MemoryTimeline(
        format=TimelineFormat.NVIDIA_SMI_CSV.value,
        sources=("nvidia_smi",),
        gpus=tuple(gpus),
        events=tuple(events),
        truncated=truncated,
        notes=tuple(notes),
    )


def _natural_key(key: str) -> tuple[int, str]:
    tail = key.rsplit("/", 1)[-1]
    return (int(tail), key) if tail.isdigit() else (1 << 30, key)


# ---------------------------------------------------------------------------------------------------------------
# Prometheus text exposition (DCGM exporter, vLLM, SGLang, TGI, TensorRT-LLM), several scrapes


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_MARKER = re.compile(r"^#\s*(?:scrape|time|timestamp)\s*[:=]?\s*(\S.*?)\s*$", re.IGNORECASE)
_BARE_TIME = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?|\d{10}(?:\.\d+)?|"
    r"\w{3} \w{3} +\d+ \d{2}:\d{2}:\d{2}(?: \w+)? \d{4})$"
)

_KV_USED_BLOCKS = "kv_used_blocks"  # TensorRT-LLM: KV usage = used / max blocks when no fraction is exported
_KV_MAX_BLOCKS = "kv_max_blocks"
_DCGM = {
    "DCGM_FI_DEV_FB_USED": "used",
    "DCGM_FI_DEV_FB_FREE": "free",
    "DCGM_FI_DEV_FB_RESERVED": "reserved",
    "DCGM_FI_DEV_FB_TOTAL": "total",
    "DCGM_FI_DEV_GPU_UTIL": "util",
    "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_GPU_TEMP": "temp",
    "DCGM_FI_DEV_XID_ERRORS": "xid",
}
_SERVER = {
    "vllm:kv_cache_usage_perc": ("vllm", "kv_cache_usage"),
    "vllm:gpu_cache_usage_perc": ("vllm", "kv_cache_usage"),  # vLLM before 0.10 (V0 engine)
    "vllm:num_requests_running": ("vllm", "requests_running"),
    "vllm:num_requests_waiting": ("vllm", "requests_waiting"),
    "vllm:num_preemptions_total": ("vllm", "preemptions_total"),
    "vllm:num_preemptions": ("vllm", "preemptions_total"),  # OpenMetrics family name without the suffix
    "vllm:generation_tokens_total": ("vllm", "generation_tokens_total"),
    "sglang:token_usage": ("sglang", "kv_cache_usage"),
    "sglang:num_running_reqs": ("sglang", "requests_running"),
    "sglang:num_queue_reqs": ("sglang", "requests_waiting"),
    # TGI (text-generation-inference's router, docs/source/reference/metrics.md): no KV-cache gauge at all
    "tgi_queue_size": ("tgi", "requests_waiting"),
    "tgi_batch_current_size": ("tgi", "requests_running"),
    # trtllm-serve's Prometheus endpoint (/prometheus/metrics; tensorrt_llm/metrics/collector.py): utilisation is
    # used / max KV blocks, running the executor's active requests, waiting its queued ones
    "trtllm_kv_cache_utilization": ("trtllm", "kv_cache_usage"),
    "trtllm_num_requests_running": ("trtllm", "requests_running"),
    "trtllm_num_requests_waiting": ("trtllm", "requests_waiting"),
    "trtllm_generation_tokens_total": ("trtllm", "generation_tokens_total"),
    "trtllm_kv_cache_used_blocks": ("trtllm", _KV_USED_BLOCKS),
    "trtllm_kv_cache_max_blocks": ("trtllm", _KV_MAX_BLOCKS),
}
# families that carry several figures, told apart by one label: (engine, the label, label value → figure). The
# Triton TensorRT-LLM backend's custom metrics (inflight_batcher_llm/src/custom_metrics_reporter); older backends
# export only used and max blocks and no waiting count, newer ones also the fraction and the waiting requests.
_SERVER_LABELLED = {
    "nv_trt_llm_kv_cache_block_metrics": (
        "trtllm",
        "kv_cache_block_type",
        {"fraction": "kv_cache_usage", "used": _KV_USED_BLOCKS, "max": _KV_MAX_BLOCKS},
    ),
    "nv_trt_llm_request_metrics": (
        "trtllm",
        "request_type",
        {"active": "requests_running", "waiting": "requests_waiting"},
    ),
}
_SERVER_LABELS_IGNORED = {"le", "quantile", "finished_reason", "reason", "kv_cache_block_type", "request_type"}


def _server_metric(name: str, labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(engine, figure) of a sample a server timeline reads, else None.

    >>> _server_metric("nv_trt_llm_request_metrics", {"request_type": "waiting", "model": "tensorrt_llm"})
    ('trtllm', 'requests_waiting')
    >>> _server_metric("nv_trt_llm_request_metrics", {"request_type": "max"}) is None
    True
    """
    found = _SERVER.get(name)
    if found is not None:
        return found
    family = _SERVER_LABELLED.get(name)
    if family is None:
        return None
    engine, label, figures = family
    figure = figures.get(labels.get(label, ""))
    return (engine, figure) if figure is not None else None


@dataclass
class _Scrape:
    time_s: float | None
    samples: list[tuple[str, dict[str, str], float, float | None]] = field(default_factory=list)


def _labels(text: str | None) -> dict[str, str] | None:
    if not text:
        return {}
    inner = text[1:-1]
    found: dict[str, str] = {}
    position = 0
    while position < len(inner):
        match = _LABEL.match(inner, position)
        if not match:
            return None if inner[position:].strip() else found
        found[match.group(1)] = match.group(2).replace('\\"', '"').replace("\\\\", "\\")
        position = match.end()
    return found


def _prom_value(text: str) -> float | None:
    lowered = text.lower()
    if lowered in ("nan", "+inf", "inf", "-inf"):
        return None
    return float(text)


def _looks_like_prometheus(text: str) -> bool:
    for line in text.splitlines()[:400]:
        stripped = line.strip()
        if stripped.startswith(("# TYPE ", "# HELP ")):
            return True
        match = _SAMPLE.match(stripped)
        if match and (
            match.group(1) in _DCGM
            or match.group(1) in _SERVER
            or match.group(1) in _SERVER_LABELLED
            or match.group(1).startswith(("vllm:", "sglang:", "DCGM_FI_", "tgi_", "trtllm_", "nv_trt_llm_"))
        ):
            return True
    return False


def _scrape_record(value: Any, *, tz: tzinfo = UTC) -> tuple[float, str] | None:
    """(POSIX seconds, exposition) of a JSON-lines scrape record; a time without a zone is in `tz`."""
    if not isinstance(value, dict):
        return None
    when = value.get("time", value.get("timestamp"))
    body = value.get("text", value.get("body"))
    if when is None or not isinstance(body, str):
        return None
    try:
        return (float(when) if isinstance(when, int | float) else parse_time(str(when), tz=tz)), body
    except ValueError:
        return None


def _split_scrapes(text: str, *, tz: tzinfo) -> tuple[list[_Scrape], bool, list[str]]:
    """The scrapes of a text (marker-line or JSON-lines layout), whether the text was cut at its end, and notes."""
    notes: list[str] = []
    stripped = text.strip()
    lines = stripped.splitlines()
    if stripped.startswith("{"):
        scrapes: list[_Scrape] = []
        truncated = False
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = _scrape_record(bounded_loads(line), tz=tz)
            except json.JSONDecodeError:
                record = None
                if number == len(lines):
                    truncated = True
                    notes.append(f"the last line ({number}) is cut short: that scrape was left out")
                    continue
            if record is None:
                raise TimelineRefusal(f"line {number} is not a {{time, text}} scrape record")
            scrape = _Scrape(time_s=record[0])
            cut = _fill_scrape(scrape, record[1].splitlines())
            if cut:
                raise TimelineRefusal(f"line {number}: the scrape text holds an unreadable line: {cut!r}")
            scrapes.append(scrape)
        return scrapes, truncated, notes
    scrapes = []
    current = _Scrape(time_s=None)
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    repeated = False
    cut_line: str | None = None
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        stripped_line = line.strip()
        if not stripped_line:
            continue
        marker = _MARKER.match(stripped_line)
        when = (
            _try_time(marker.group(1), tz=tz)
            if marker
            else (_try_time(stripped_line, tz=tz) if _BARE_TIME.match(stripped_line) else None)
        )
        if when is not None:
            scrapes.append(current)
            current, seen = _Scrape(time_s=when), set()
            continue
        if stripped_line.startswith("#"):
            continue
        match = _SAMPLE.match(stripped_line)
        labels = _labels(match.group(2)) if match else None
        value: float | None = None
        try:
            value = _prom_value(match.group(3)) if match and labels is not None else None
            readable = match is not None and labels is not None
        except ValueError:
            readable = False
        if not readable:
            if index == last:
                cut_line = stripped_line
                continue
            raise TimelineRefusal(f"line {index + 1} is not a Prometheus sample: {stripped_line[:80]!r}")
        assert match is not None  # noqa: S101 - readable
        assert labels is not None  # noqa: S101 - readable
        key = (match.group(1), tuple(sorted(labels.items())))
        if key in seen:
            # a series seen twice: a new scrape begins (logs without markers, or with sample timestamps)
            repeated = repeated or current.time_s is not None
            scrapes.append(current)
            current, seen = _Scrape(time_s=None), set()
        seen.add(key)
        if value is not None:
            stamp = float(match.group(4)) / 1000 if match.group(4) else None
            current.samples.append((match.group(1), labels, value, stamp))
    scrapes.append(current)
    if repeated:
        notes.append("a series repeats inside one marked scrape: the rest was read as a new, undated scrape")
    truncated = cut_line is not None
    if truncated:
        notes.append(f"the last line is cut short ({cut_line[:60]!r}): it was left out")
    return [s for s in scrapes if s.samples], truncated, notes


def _fill_scrape(scrape: _Scrape, lines: list[str]) -> str | None:
    """Add the sample lines to the scrape; the first unreadable line, or None."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _SAMPLE.match(stripped)
        labels = _labels(match.group(2)) if match else None
        if not match or labels is None:
            return stripped
        try:
            value = _prom_value(match.group(3))
        except ValueError:
            return stripped
        if value is None:
            continue
        stamp = float(match.group(4)) / 1000 if match.group(4) else None
        scrape.samples.append((match.group(1), labels, value, stamp))
    return None


def _server_instance(labels: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in _SERVER_LABELS_IGNORED)


def parse_prometheus_scrapes(text: str, *, tz: tzinfo = UTC) -> MemoryTimeline:
    """The timeline of Prometheus scrapes of the DCGM exporter, vLLM, SGLang, TGI and/or TensorRT-LLM (layouts in
    the module docstring). DCGM memory is MiB; the total is ``FB_TOTAL`` when exported, else ``FB_USED + FB_FREE (+
    FB_RESERVED)``; a MIG instance (``GPU_I_ID`` label) is its own series ("0:mig1"). A change of
    ``DCGM_FI_DEV_XID_ERRORS`` (the last XID seen, held) to a non-zero value is an XID event, including a non-zero
    value at the first scrape (an XID at or before the log's start); a decrease of a server counter or a new
    ``process_start_time_seconds`` is a restart event. Several hosts (``Hostname``) make GPU ids "host/0".

    >>> scrapes = '''# scrape 2026-11-30T13:41:02Z
    ... DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 71000
    ... DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 10559
    ... # scrape 2026-11-30T13:42:02Z
    ... DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 71100
    ... DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 10459
    ... '''
    >>> series = parse_prometheus_scrapes(scrapes).gpus[0]
    >>> series.peak_bytes == 71100 * MIB, series.total_bytes == 81559 * MIB, series.uuid
    (True, True, 'GPU-a')
    """
    scrapes, truncated, notes = _split_scrapes(text, tz=tz)
    return _scrapes_timeline(scrapes, truncated=truncated, notes=notes)


def parse_scrape_records(records: Iterable[tuple[float | None, str]]) -> MemoryTimeline:
    """The timeline of scrapes given one by one as (POSIX seconds, exposition text): what our load generator's
    result holds in `server_metrics.scrapes`. An empty text is a scrape that found none of the metrics read here.
    TimelineRefusal names the record (0-based) holding an unreadable line, or says that no record holds any metric
    read here.

    >>> timeline = parse_scrape_records([(0.0, 'tgi_queue_size 3\\ntgi_batch_current_size 8\\n'), (1.0, '')])
    >>> sample = timeline.servers[0].samples[0]
    >>> timeline.servers[0].engine, sample.requests_waiting, sample.requests_running, sample.kv_cache_usage
    ('tgi', 3.0, 8.0, None)
    """
    scrapes: list[_Scrape] = []
    for index, (time_s, text) in enumerate(records):
        scrape = _Scrape(time_s=time_s)
        cut = _fill_scrape(scrape, text.splitlines())
        if cut:
            raise TimelineRefusal(f"scrape {index}: an unreadable line: {cut[:80]!r}")
        if scrape.samples:
            scrapes.append(scrape)
    return _scrapes_timeline(scrapes, truncated=False, notes=[])


def _scrapes_timeline(scrapes: list[_Scrape], *, truncated: bool, notes: list[str]) -> MemoryTimeline:
    """The timeline of split scrapes (see `parse_prometheus_scrapes`)."""
    # sample timestamps stand in for missing scrape times
    expanded: list[_Scrape] = []
    for scrape in scrapes:
        stamps = sorted({s[3] for s in scrape.samples if s[3] is not None})
        if scrape.time_s is None and len(stamps) > 1:
            by_stamp: dict[float | None, _Scrape] = {}
            for sample in scrape.samples:
                by_stamp.setdefault(sample[3], _Scrape(time_s=sample[3])).samples.append(sample)
            expanded.extend(by_stamp[k] for k in sorted(by_stamp, key=lambda t: t if t is not None else -1.0))
            continue
        if scrape.time_s is None and stamps:
            scrape.time_s = stamps[0]
        expanded.append(scrape)
    scrapes = expanded
    hosts = {labels.get("Hostname") for scrape in scrapes for name, labels, _, _ in scrape.samples if name in _DCGM}
    multi_host = len(hosts - {None}) > 1
    gpu_rows: dict[str, list[GpuSample]] = {}
    gpu_info: dict[str, dict[str, str | None]] = {}
    server_rows: dict[tuple[str, str], list[ServerSample]] = {}
    events: list[TimelineEvent] = []
    last_xid: dict[str, float] = {}
    sources: set[str] = set()
    known = False
    for scrape in scrapes:
        per_gpu: dict[str, dict[str, float]] = {}
        per_server: dict[tuple[str, str], dict[str, float]] = {}
        process_start: float | None = None
        for name, labels, value, _ in scrape.samples:
            if name in _DCGM:
                known = True
                sources.add("dcgm")
                gpu = labels.get("gpu", labels.get("minor_number", "0"))
                if labels.get("GPU_I_ID"):  # a MIG instance: its own memory
                    gpu = f"{gpu}:mig{labels['GPU_I_ID']}"
                key = f"{labels.get('Hostname')}/{gpu}" if multi_host else gpu
                per_gpu.setdefault(key, {})[_DCGM[name]] = value
                info = gpu_info.setdefault(key, {"name": None, "uuid": None, "pci_bus_id": None, "host": None})
                info["name"] = labels.get("modelName") or info["name"]
                info["uuid"] = labels.get("UUID") or info["uuid"]
                info["pci_bus_id"] = labels.get("pci_bus_id") or info["pci_bus_id"]
                info["host"] = labels.get("Hostname") or info["host"]
            elif (found := _server_metric(name, labels)) is not None:
                known = True
                engine, metric = found
                sources.add(engine)
                bucket = per_server.setdefault((engine, _server_instance(labels)), {})
                # counters split by a label (none of those read here today) are summed
                bucket[metric] = bucket.get(metric, 0.0) + value if metric.endswith("_total") else value
            elif name == "process_start_time_seconds":
                process_start = value
        for key, values in per_gpu.items():
            used = values.get("used")
            total = values.get("total")
            if total is None and used is not None and "free" in values:
                total = used + values["free"] + values.get("reserved", 0.0)
            gpu_rows.setdefault(key, []).append(
                GpuSample(
                    time_s=scrape.time_s,
                    memory_used_bytes=round(used * MIB) if used is not None else None,
                    memory_total_bytes=round(total * MIB) if total is not None else None,
                    utilization_pct=values.get("util"),
                    power_w=values.get("power"),
                    temperature_c=values.get("temp"),
                )
            )
            xid = values.get("xid")
            if xid is not None and xid != last_xid.get(key, 0.0) and xid > 0:
                events.append(
                    TimelineEvent(
                        time_s=scrape.time_s,
                        kind=EventKind.XID.value,
                        gpu=key,
                        code=int(xid),
                        message=f"XID {int(xid)} on GPU {key} (DCGM_FI_DEV_XID_ERRORS)",
                    )
                )
            if xid is not None:
                last_xid[key] = xid
        for key, values in per_server.items():
            used, most = values.get(_KV_USED_BLOCKS), values.get(_KV_MAX_BLOCKS)
            if used is not None and most:
                # TensorRT-LLM: the exact fraction (an older Triton backend's gauges are whole numbers)
                values["kv_cache_usage"] = used / most
            if not values.keys() - {_KV_USED_BLOCKS, _KV_MAX_BLOCKS}:
                continue  # blocks without their total tell nothing
            server_rows.setdefault(key, []).append(
                ServerSample(
                    time_s=scrape.time_s,
                    kv_cache_usage=values.get("kv_cache_usage"),
                    requests_running=values.get("requests_running"),
                    requests_waiting=values.get("requests_waiting"),
                    preemptions_total=values.get("preemptions_total"),
                    generation_tokens_total=values.get("generation_tokens_total"),
                    process_start_time_s=process_start if len(per_server) == 1 else None,
                )
            )
    if not known:
        raise TimelineRefusal(
            "Prometheus text without any metric a memory timeline reads (DCGM_FI_DEV_FB_USED, "
            "vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc, vllm:num_requests_running, "
            "sglang:token_usage, ...)"
        )
    undated = sum(1 for s in scrapes if s.time_s is None)
    if undated:
        notes.append(
            f"{undated} scrape(s) carry no time: peaks are read, but they make no time series (precede "
            "each scrape with '# scrape <ISO 8601 time>')"
        )
    gpus = tuple(
        GpuSeries(gpu=key, samples=_time_sorted(rows), **gpu_info[key])
        for key, rows in sorted(gpu_rows.items(), key=lambda item: _natural_key(item[0]))
    )
    servers = tuple(
        ServerSeries(engine=engine, instance=instance, samples=_time_sorted(rows))
        for (engine, instance), rows in sorted(server_rows.items())
    )
    for server in servers:
        events.extend(counter_restarts(server))
    return MemoryTimeline(
        format=TimelineFormat.PROMETHEUS_SCRAPES.value,
        sources=tuple(sorted(sources)),
        gpus=gpus,
        servers=servers,
        events=tuple(sorted(events, key=lambda e: e.time_s or 0.0)),
        truncated=truncated,
        notes=tuple(notes),
    )


def _time_sorted(rows: list[Any]) -> tuple[Any, ...]:
    if all(r.time_s is not None for r in rows):
        return tuple(sorted(rows, key=lambda r: r.time_s))
    return tuple(rows)  # undated scrapes keep the file's order


def counter_restarts(server: ServerSeries) -> list[TimelineEvent]:
    """Restart events of one server: a counter that goes down, or a new process start time."""
    found: list[TimelineEvent] = []
    previous: ServerSample | None = None
    for sample in server.samples:
        if previous is not None:
            reasons = []
            for name in ("generation_tokens_total", "preemptions_total"):
                before, now = getattr(previous, name), getattr(sample, name)
                if before is not None and now is not None and now < before:
                    reasons.append(f"{name} fell from {before:g} to {now:g}")
            if (
                previous.process_start_time_s is not None
                and sample.process_start_time_s is not None
                and sample.process_start_time_s != previous.process_start_time_s
            ):
                reasons.append("process_start_time_seconds changed")
            if reasons:
                found.append(
                    TimelineEvent(
                        time_s=sample.time_s,
                        kind=EventKind.RESTART.value,
                        message=f"{server.engine} {server.instance}: restarted (" + "; ".join(reasons) + ")",
                    )
                )
        previous = sample
    return found


# ---------------------------------------------------------------------------------------------------------------
# AIPerf exports


_AIPERF_USED = ("nvidia_memory_used", "gpu_memory_used", "amd_memory_used")
_AIPERF_TOTAL = ("nvidia_memory_total", "total_gpu_memory", "amd_memory_total")
_AIPERF_UTIL = ("nvidia_gpu_utilization", "gpu_utilization", "amd_gfx_activity")
_AIPERF_POWER = ("nvidia_power_usage", "gpu_power_usage", "amd_power")
_AIPERF_TEMP = ("nvidia_temperature", "gpu_temperature", "amd_temperature")


def _raw_first(data: Mapping[str, Any], names: Sequence[str]) -> Any:
    return next((data[name] for name in names if data.get(name) is not None), None)


def _decimals(value: Any) -> int:
    """Decimals a reading is written with: 71.42 → 2, 71.0 → 0; 9 for a computed one (an exponent, or more than
    9 decimals: no rounding of the gauge's to undo).

    >>> _decimals(71.42), _decimals(71.0), _decimals(71), _decimals(71.42399978637695)
    (2, 0, 0, 9)
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    text = repr(float(value))
    if "e" in text or "E" in text:
        return 9
    return min(9, len(text.partition(".")[2].rstrip("0")))


def gauge_resolution_bytes(series: Iterable[GpuSeries]) -> int:
    """The coarsest gauge step of the series (`GpuSeries.resolution_bytes`; 1 MiB when there is none): how far a
    reading may lie from the memory it stands for, so the tolerance a peak is compared with a figure at."""
    return max((s.resolution_bytes for s in series), default=MIB)


def _first(data: Mapping[str, Any], names: Sequence[str]) -> float | None:
    for name in names:
        value = data.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def parse_aiperf_gpu_telemetry(text: str) -> MemoryTimeline:
    """The timeline of AIPerf's ``gpu_telemetry_export.jsonl`` (one line per GPU per scrape; memory in GB of 1e9
    bytes, so resolution is 10 MB where AIPerf rounds to two decimals).

    >>> line = ('{"gpu_index": 0, "timestamp_ns": 1767225600000000000, "gpu_model_name": "NVIDIA H100 80GB HBM3", '
    ...         '"telemetry_data": {"nvidia_memory_used": 71.42, "nvidia_gpu_utilization": 62.0}}')
    >>> sample = parse_aiperf_gpu_telemetry(line).gpus[0].samples[0]
    >>> sample.memory_used_bytes, iso_utc(sample.time_s)
    (71420000000, '2026-01-01T00:00:00Z')
    """
    lines = text.strip().splitlines()
    rows: dict[str, list[GpuSample]] = {}
    info: dict[str, dict[str, str | None]] = {}
    notes: list[str] = []
    truncated = False
    hosts = set()
    records: list[tuple[int, dict[str, Any]]] = []
    steps: dict[str, int] = {}  # per GPU, the most decimals a memory reading carries
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = bounded_loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                truncated = True
                notes.append(f"the last line ({number}) is cut short: it was left out")
                continue
            raise TimelineRefusal(f"line {number} is not JSON: not an AIPerf GPU telemetry export") from None
        if not isinstance(record, dict) or not isinstance(record.get("telemetry_data"), dict):
            raise TimelineRefusal(f"line {number} has no telemetry_data: not an AIPerf GPU telemetry export")
        records.append((number, record))
        hosts.add(record.get("hostname"))
    multi_host = len(hosts - {None}) > 1
    for number, record in records:
        data = record["telemetry_data"]
        if "timestamp_ns" in record:
            time_s = float(record["timestamp_ns"]) / 1e9
        else:
            try:
                time_s = parse_time(str(record.get("timestamp")))
            except ValueError:
                raise TimelineRefusal(f"line {number}: no readable timestamp_ns") from None
        index = str(record.get("gpu_index", record.get("gpu_uuid", "0")))
        key = f"{record.get('hostname')}/{index}" if multi_host else index
        used = _first(data, _AIPERF_USED)
        total = _first(data, _AIPERF_TOTAL)
        if used is not None:
            steps[key] = max(steps.get(key, 0), _decimals(_raw_first(data, _AIPERF_USED)))
        rows.setdefault(key, []).append(
            GpuSample(
                time_s=time_s,
                memory_used_bytes=round(used * GB) if used is not None else None,
                memory_total_bytes=round(total * GB) if total is not None else None,
                utilization_pct=_first(data, _AIPERF_UTIL),
                power_w=_first(data, _AIPERF_POWER),
                temperature_c=_first(data, _AIPERF_TEMP),
            )
        )
        info[key] = {
            "name": record.get("gpu_model_name"),
            "uuid": record.get("gpu_uuid"),
            "pci_bus_id": record.get("pci_bus_id"),
            "host": record.get("hostname"),
        }
    if not rows:
        raise TimelineRefusal("an AIPerf GPU telemetry export without any sample")
    if all(s.memory_used_bytes is None for samples in rows.values() for s in samples):
        raise TimelineRefusal("an AIPerf GPU telemetry export without memory figures (nvidia_memory_used)")
    notes.append("memory in GB as AIPerf writes it (1 GB = 1,000,000,000 bytes, two decimals: ±5 MB)")
    gpus = tuple(
        GpuSeries(
            gpu=key,
            samples=_time_sorted(samples),
            resolution_bytes=max(MIB, round(GB / 10 ** steps.get(key, 0))),
            **info[key],
        )
        for key, samples in sorted(rows.items(), key=lambda item: _natural_key(item[0]))
    )
    return MemoryTimeline(
        format=TimelineFormat.AIPERF_GPU_TELEMETRY.value,
        sources=("aiperf",),
        gpus=gpus,
        truncated=truncated,
        notes=tuple(notes),
    )


_AIPERF_SERVER = {
    "vllm:kv_cache_usage_perc": ("vllm", "kv_cache_usage"),
    "vllm:gpu_cache_usage_perc": ("vllm", "kv_cache_usage"),
    "vllm:num_requests_running": ("vllm", "requests_running"),
    "vllm:num_requests_waiting": ("vllm", "requests_waiting"),
    "vllm:num_preemptions": ("vllm", "preemptions"),
    "vllm:num_preemptions_total": ("vllm", "preemptions"),
    "sglang:token_usage": ("sglang", "kv_cache_usage"),
    "sglang:num_running_reqs": ("sglang", "requests_running"),
    "sglang:num_queue_reqs": ("sglang", "requests_waiting"),
}


def parse_aiperf_server_metrics(text: str) -> MemoryTimeline:
    """The aggregate server figures of AIPerf's ``server_metrics_export.json`` (KV-cache usage, running/waiting
    requests, preemptions) as `ServerStats`; the export has no time series, so the timeline has no samples.

    >>> export = ('{"aiperf_version": "0.13.0", "metrics_phase": "profiling", "summary": {"start_time": '
    ...           '"2026-01-01T00:00:00", "end_time": "2026-01-01T00:05:00"}, "metrics": {"vllm:kv_cache_usage_perc": '
    ...           '{"type": "gauge", "series": [{"labels": {"engine": "0"}, "stats": {"max": 0.0094}}]}}}')
    >>> stats = parse_aiperf_server_metrics(export).server_stats[0]
    >>> stats.metric, stats.stats["max"], iso_utc(stats.end_s)
    ('kv_cache_usage', 0.0094, '2026-01-01T00:05:00Z')
    """
    try:
        data = bounded_loads(text)
    except json.JSONDecodeError:
        raise TimelineRefusal("not valid JSON: an AIPerf server-metrics export is one JSON object") from None
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise TimelineRefusal("no 'metrics' object: not an AIPerf server-metrics export")
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    start = _try_time(str(summary.get("start_time"))) if summary.get("start_time") else None
    end = _try_time(str(summary.get("end_time"))) if summary.get("end_time") else None
    found: list[ServerStats] = []
    for name, metric in data["metrics"].items():
        if name not in _AIPERF_SERVER or not isinstance(metric, dict):
            continue
        engine, canonical = _AIPERF_SERVER[name]
        for series in metric.get("series") or []:
            stats = {
                k: float(v)
                for k, v in (series.get("stats") or {}).items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
            found.append(
                ServerStats(
                    engine=engine,
                    metric=canonical,
                    source_metric=name,
                    instance=_server_instance(series.get("labels") or {}),
                    stats=stats,
                    start_s=start,
                    end_s=end,
                )
            )
    if not found:
        raise TimelineRefusal("an AIPerf server-metrics export without KV-cache, request or preemption metrics")
    return MemoryTimeline(
        format=TimelineFormat.AIPERF_SERVER_METRICS.value,
        sources=tuple(sorted({"aiperf", *(s.engine for s in found)})),
        server_stats=tuple(found),
        notes=("aggregate figures over the profiling phase only: no time series",),
    )


# ---------------------------------------------------------------------------------------------------------------
# Event logs (OOM and XID lines) and merging


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
            return _try_time(match.group(1).replace(",", "."), tz=tz)
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
                    samples=_time_sorted([*held.samples, *series.samples]),
                    resolution_bytes=max(held.resolution_bytes, series.resolution_bytes),
                )
            else:
                gpus[key] = series
        for server in timeline.servers:
            key2 = (server.engine, server.instance)
            if key2 in servers:
                servers[key2] = replace(servers[key2], samples=_time_sorted([*servers[key2].samples, *server.samples]))
            else:
                servers[key2] = server
    formats = {t.format for t in timelines}
    return MemoryTimeline(
        format=formats.pop() if len(formats) == 1 else TimelineFormat.MERGED.value,
        sources=tuple(sorted({s for t in timelines for s in t.sources})),
        gpus=tuple(sorted(gpus.values(), key=lambda g: (_natural_key(g.gpu), g.host or ""))),
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


def utc_offset(minutes: int) -> tzinfo:
    """A fixed zone for `tz=` (nvidia-smi logs the host's local time): ``utc_offset(60)`` is UTC+01:00.

    >>> parse_time("2026/11/30 14:41:02", tz=utc_offset(60)) == parse_time("2026-11-30T13:41:02Z")
    True
    """
    return timezone(timedelta(minutes=minutes))

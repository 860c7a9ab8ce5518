"""GPU memory timelines and server statistics from AIPerf's exports: ``gpu_telemetry_export.jsonl`` (a time series
per GPU) and ``server_metrics_export.json`` (aggregates over the profiling phase). Pure Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks_app.results.timeline.common import (
    GB,
    MIB,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerStats,
    TimelineFormat,
    TimelineRefusal,
    natural_key,
    parse_time,
    time_sorted,
    try_time,
)
from benchmarks_app.results.timeline.servers import server_instance
from sizing.kernel.json_limits import loads as bounded_loads

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
            samples=time_sorted(samples),
            resolution_bytes=max(MIB, round(GB / 10 ** steps.get(key, 0))),
            **info[key],
        )
        for key, samples in sorted(rows.items(), key=lambda item: natural_key(item[0]))
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
    start = try_time(str(summary.get("start_time"))) if summary.get("start_time") else None
    end = try_time(str(summary.get("end_time"))) if summary.get("end_time") else None
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
                    instance=server_instance(series.get("labels") or {}),
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

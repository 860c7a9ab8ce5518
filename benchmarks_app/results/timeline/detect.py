"""Which format a monitoring log's text is in, or why it is none read here (`TimelineRefusal`), and the parser of
any accepted format, `parse_timeline`. Pure Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, tzinfo
from typing import Any

from benchmarks_app.results.timeline.aiperf import parse_aiperf_gpu_telemetry, parse_aiperf_server_metrics
from benchmarks_app.results.timeline.common import MemoryTimeline, TimelineFormat, TimelineRefusal
from benchmarks_app.results.timeline.nvidia_smi import looks_like_smi_csv, parse_nvidia_smi_csv
from benchmarks_app.results.timeline.prometheus import looks_like_prometheus, parse_prometheus_scrapes, scrape_record
from sizing.kernel.json_limits import loads as bounded_loads

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
            if scrape_record(value) is not None:
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
    if looks_like_prometheus(stripped):
        return TimelineFormat.PROMETHEUS_SCRAPES.value
    if looks_like_smi_csv(stripped):
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

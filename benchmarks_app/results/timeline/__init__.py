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

from benchmarks_app.results.timeline.aiperf import parse_aiperf_gpu_telemetry, parse_aiperf_server_metrics
from benchmarks_app.results.timeline.common import (
    GB,
    MIB,
    EventKind,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    ServerSample,
    ServerSeries,
    ServerStats,
    TimelineEvent,
    TimelineFormat,
    TimelineRefusal,
    gauge_resolution_bytes,
    iso_utc,
    parse_time,
    utc_offset,
)
from benchmarks_app.results.timeline.dcgm import DCGM as DCGM  # the load generator's test reads the metric names
from benchmarks_app.results.timeline.detect import detect_timeline_format, parse_timeline
from benchmarks_app.results.timeline.events import EVENT_DEDUP_S, parse_event_log
from benchmarks_app.results.timeline.merge import merge_timelines, with_events
from benchmarks_app.results.timeline.nvidia_smi import DEFAULT_SMI_COLUMNS, parse_nvidia_smi_csv
from benchmarks_app.results.timeline.prometheus import parse_prometheus_scrapes, parse_scrape_records
from benchmarks_app.results.timeline.servers import SERVER as SERVER
from benchmarks_app.results.timeline.servers import SERVER_LABELLED as SERVER_LABELLED
from benchmarks_app.results.timeline.servers import counter_restarts

__all__ = [
    "DEFAULT_SMI_COLUMNS",
    "EVENT_DEDUP_S",
    "GB",
    "MIB",
    "EventKind",
    "GpuSample",
    "GpuSeries",
    "MemoryTimeline",
    "ServerSample",
    "ServerSeries",
    "ServerStats",
    "TimelineEvent",
    "TimelineFormat",
    "TimelineRefusal",
    "counter_restarts",
    "detect_timeline_format",
    "gauge_resolution_bytes",
    "iso_utc",
    "merge_timelines",
    "parse_aiperf_gpu_telemetry",
    "parse_aiperf_server_metrics",
    "parse_event_log",
    "parse_nvidia_smi_csv",
    "parse_prometheus_scrapes",
    "parse_scrape_records",
    "parse_time",
    "parse_timeline",
    "utc_offset",
    "with_events",
]

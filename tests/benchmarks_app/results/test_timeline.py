"""Monitoring logs into one MemoryTimeline: nvidia-smi CSV, DCGM/vLLM/SGLang Prometheus scrapes, AIPerf exports,
OOM/XID event logs, and the refusals. Fixtures: tests/benchmarks_app/results/fixtures/timeline (make_fixtures.py says
how each was built; the numbers below follow from its constants: T0 = 2026-11-30 13:41:02.123 UTC, 5-minute
samples, H100 80GB with memory.total 81,559 MiB = 85,520,809,984 bytes)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from datetime import UTC
from pathlib import Path

import pytest

from benchmarks_app.results import timeline as timeline_module
from benchmarks_app.results.run import FormatRefusal
from benchmarks_app.results.timeline import (
    MIB,
    GpuSample,
    GpuSeries,
    MemoryTimeline,
    TimelineRefusal,
    detect_timeline_format,
    iso_utc,
    merge_timelines,
    parse_aiperf_gpu_telemetry,
    parse_aiperf_server_metrics,
    parse_event_log,
    parse_nvidia_smi_csv,
    parse_time,
    parse_timeline,
    utc_offset,
    with_events,
)
from tests.benchmarks_app.results.fixtures.timeline import make_fixtures

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "timeline"
TOTAL_BYTES = 81_559 * MIB  # 85,520,809,984


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_fixtures_are_what_the_generator_writes() -> None:
    # given the committed fixtures and their generator
    # when each is rebuilt
    # then the committed file is byte for byte the generator's output (the fixtures are reproducible)
    for name, build in make_fixtures.FIXTURES.items():
        assert (FIXTURES / name).read_text() == build(), name


def test_healthy_72h_log_gives_two_gpus_and_their_hand_checked_peaks() -> None:
    # given 72 h of nvidia-smi -l 300 on two GPUs: 865 samples each (both ends included)
    # when it is parsed
    timeline = parse_timeline(fixture("healthy_2gpu_72h.csv"))

    # then both series are complete, in time order, with the spikes the generator placed as peaks
    assert timeline.format == "nvidia_smi_csv"
    assert timeline.sources == ("nvidia_smi",)
    assert timeline.truncated is False
    assert timeline.notes == ()
    assert [g.gpu for g in timeline.gpus] == ["0", "1"]
    gpu0, gpu1 = timeline.gpus
    assert len(gpu0.samples) == 865
    assert len(gpu1.samples) == 865
    assert iso_utc(timeline.start_s) == "2026-11-30T13:41:02.123Z"
    assert iso_utc(timeline.end_s) == "2026-12-03T13:41:02.123Z"  # T0 + 72 h
    assert gpu0.samples[0].memory_used_bytes == 3 * MIB  # the engine not yet started: 3,145,728 bytes
    # GPU 0: 72,512 MiB × 1,048,576 = 76,034,342,912 bytes at i = 600 (T0 + 50 h)
    assert gpu0.peak_bytes == 76_034_342_912
    assert iso_utc(max(gpu0.samples, key=lambda s: s.memory_used_bytes or 0).time_s) == "2026-12-02T15:41:02.123Z"
    # GPU 1: 71,808 MiB × 1,048,576 = 75,296,145,408 bytes at i = 300 (T0 + 25 h)
    assert gpu1.peak_bytes == 75_296_145_408
    assert gpu0.total_bytes == TOTAL_BYTES
    assert gpu1.total_bytes == 85_520_809_984
    assert all(0 <= (s.utilization_pct or 0) <= 100 for s in gpu0.samples)


def test_noheader_nounits_log_reads_the_issue_query_columns() -> None:
    # given the leak log written with --format=csv,noheader,nounits
    # when it is parsed
    timeline = parse_timeline(fixture("leak_2gpu_72h.csv"))

    # then the columns are the issue's query, and each value is MiB
    assert timeline.notes == (
        "no header line: columns read as timestamp,index,memory.used,memory.total,utilization.gpu",
    )
    gpu0 = timeline.gpu("0")
    assert len(gpu0.samples) == 865
    assert gpu0.samples[0].memory_total_bytes == TOTAL_BYTES
    # the last GPU 0 sample: 71,000 + 40 × 72 = 73,880 MiB ± 64 MiB of noise
    assert 73_816 * MIB <= gpu0.samples[-1].memory_used_bytes <= 73_944 * MIB


def test_noheader_log_with_other_columns_is_refused_unless_named() -> None:
    # given a noheader log of a narrower query
    text = "2026/11/30 13:41:02.123, 0, 71000\n2026/11/30 13:46:02.123, 0, 71010\n"

    # when it is parsed without, then with, the column names
    with pytest.raises(TimelineRefusal) as refusal:
        parse_nvidia_smi_csv(text)
    timeline = parse_nvidia_smi_csv(text, columns=("timestamp", "index", "memory.used"))

    # then the refusal says which columns were expected; named columns read
    assert refusal.value.reason == (
        "an nvidia-smi CSV without a header line has 3 columns; without a header the "
        "columns must be timestamp,index,memory.used,memory.total,utilization.gpu (or "
        "name them with columns=)"
    )
    assert timeline.gpu("0").peak_bytes == 71_010 * MIB


def test_a_line_cut_at_the_end_keeps_the_complete_samples_and_says_so() -> None:
    # given a log whose logger was killed mid-line ("2026/11/30 13:47:02.123, 0, 710")
    # when it is parsed
    timeline = parse_timeline(fixture("cut_last_line.csv"))

    # then the six complete samples per GPU are kept, the cut line is not, and the timeline says so
    assert timeline.truncated is True
    assert timeline.notes == (
        "the last line (14) is cut short: it was left out, the complete samples before it are kept",
    )
    assert [len(g.samples) for g in timeline.gpus] == [6, 6]
    assert timeline.gpu("0").peak_bytes == 71_050 * MIB  # 71,000 + 10 × 5


def test_repeated_headers_wide_query_and_an_nvidia_smi_error_line() -> None:
    # given the wide query (name, pci.bus_id, memory.free, temperature, power) restarted twice, with an error line
    # when it is parsed
    timeline = parse_timeline(fixture("repeated_header.csv"))

    # then every part is read with its header, the identity columns are kept, total = used + free
    assert timeline.notes == (
        "the header line appears 3 times (the log was restarted or appended to)",
        "memory total = memory.used + memory.free (memory.reserved not logged: a little below the card's total)",
    )
    gpu1 = timeline.gpu("1")
    assert gpu1.name == "NVIDIA H100 80GB HBM3"
    assert gpu1.pci_bus_id == "00000000:3B:00.0"
    assert len(gpu1.samples) == 6
    assert gpu1.samples[0].memory_used_bytes == 70_001 * MIB
    assert gpu1.samples[0].memory_total_bytes == TOTAL_BYTES  # 70,001 + 11,558
    assert gpu1.samples[0].temperature_c == 61.0
    assert gpu1.samples[0].power_w == 300.5
    assert gpu1.samples[3].power_w is None  # [N/A]
    # and nvidia-smi's error line is an event at the time of the sample before it
    assert [(e.kind, iso_utc(e.time_s)) for e in timeline.events] == [("smi_error", "2026-11-30T13:44:02.123Z")]


def test_header_repeated_when_the_log_restarts_with_the_server() -> None:
    # given the OOM log, whose logging loop restarted with the server at i = 364
    timeline = parse_timeline(fixture("oom_restart_2gpu_72h.csv"))

    # then both parts make one series per GPU, and the repeat is noted
    assert timeline.notes == ("the header line appears 2 times (the log was restarted or appended to)",)
    assert [len(g.samples) for g in timeline.gpus] == [865, 865]
    assert timeline.gpu("0").peak_bytes == 81_200 * MIB


def test_nvidia_smi_local_time_with_a_zone() -> None:
    # given a log written on a host at UTC+01:00
    text = "timestamp, index, memory.used [MiB]\n2026/11/30 14:41:02.123, 0, 100 MiB\n"

    # when it is read in that zone
    timeline = parse_timeline(text, tz=utc_offset(60))

    # then the time is stored in UTC
    assert iso_utc(timeline.gpus[0].samples[0].time_s) == "2026-11-30T13:41:02.123Z"


def test_dcgm_scrapes_with_scrape_markers() -> None:
    # given 13 DCGM exporter scrapes, 5 minutes apart, each preceded by '# scrape <ISO 8601>'
    timeline = parse_timeline(fixture("dcgm_scrapes.prom"))

    # then each GPU has 13 samples, the total is FB_USED + FB_FREE + FB_RESERVED, identity from the labels
    assert timeline.format == "prometheus_scrapes"
    assert timeline.sources == ("dcgm",)
    gpu0, gpu1 = timeline.gpus
    assert [len(gpu0.samples), len(gpu1.samples)] == [13, 13]
    assert gpu0.total_bytes == TOTAL_BYTES
    assert gpu0.uuid == "GPU-5b1f3c7e-0000-4000-8000-000000000000"
    assert gpu0.host == "gpu-node-01"
    assert gpu0.name == "NVIDIA H100 80GB HBM3"
    # GPU 0: 71,000 + 10 × 12 = 71,120 MiB = 74,574,725,120 bytes at the last scrape (T0 + 60 min)
    assert gpu0.peak_bytes == 74_574_725_120
    assert iso_utc(gpu0.samples[-1].time_s) == "2026-11-30T14:41:02.123Z"
    # GPU 1: 70,900 MiB = 74,344,038,400 bytes at scrape 6
    assert gpu1.peak_bytes == 74_344_038_400
    assert gpu0.samples[0].utilization_pct == 40.0
    assert gpu0.samples[0].power_w == 350.25
    # and the XID gauge turning 43 on GPU 1 at scrape 9 (T0 + 45 min) is one event, not one per scrape
    assert [(e.kind, e.gpu, e.code, iso_utc(e.time_s)) for e in timeline.events] == [
        ("xid", "1", 43, "2026-11-30T14:26:02.123Z")
    ]


def test_dcgm_scrapes_as_json_lines_with_a_cut_last_line() -> None:
    # given three {time, text} records, the third cut mid-way
    timeline = parse_timeline(fixture("dcgm_scrapes.jsonl"))

    # then the two complete scrapes are kept and the timeline says it was cut
    assert timeline.truncated is True
    assert timeline.notes == ("the last line (3) is cut short: that scrape was left out",)
    assert [len(g.samples) for g in timeline.gpus] == [2, 2]
    assert iso_utc(timeline.end_s) == "2026-11-30T13:46:02.123Z"


def test_vllm_scrapes_with_bare_time_lines() -> None:
    # given 20 vLLM /metrics scrapes 15 s apart, each after a bare `date -u +%FT%TZ` line; a restart before 15
    timeline = parse_timeline(fixture("vllm_scrapes.prom"))

    # then one server series with KV usage, requests, counters; histograms are ignored
    assert timeline.sources == ("vllm",)
    assert timeline.gpus == ()
    (server,) = timeline.servers
    assert server.engine == "vllm"
    assert server.instance == "engine=0 model_name=meta-llama/Llama-3.1-70B-Instruct"
    assert [s.kv_cache_usage for s in server.samples] == list(make_fixtures.VLLM_KV)
    assert server.samples[10].requests_running == 64.0
    assert server.samples[10].requests_waiting == 20.0
    assert server.samples[11].preemptions_total == 5.0
    assert iso_utc(server.samples[0].time_s) == "2026-11-30T13:41:02Z"
    # and the restart shows as counters falling and a new process start time, at scrape 15 (T0 + 225 s)
    (restart,) = timeline.events
    assert restart.kind == "restart"
    assert iso_utc(restart.time_s) == "2026-11-30T13:44:47Z"
    assert restart.message == (
        "vllm engine=0 model_name=meta-llama/Llama-3.1-70B-Instruct: restarted "
        "(generation_tokens_total fell from 64000 to 1000; preemptions_total fell from 5 to 0; "
        "process_start_time_seconds changed)"
    )


def test_sglang_scrapes_timed_by_their_sample_timestamps() -> None:
    # given four SGLang scrapes without markers, each sample carrying its millisecond timestamp
    timeline = parse_timeline(fixture("sglang_scrapes.prom"))

    # then each scrape is timed by its samples
    (server,) = timeline.servers
    assert server.engine == "sglang"
    assert [s.kv_cache_usage for s in server.samples] == [0.21, 0.48, 0.93, 0.35]
    assert [iso_utc(s.time_s) for s in server.samples] == [
        "2026-11-30T13:41:02.123Z",
        "2026-11-30T13:41:32.123Z",
        "2026-11-30T13:42:02.123Z",
        "2026-11-30T13:42:32.123Z",
    ]
    assert [s.requests_waiting for s in server.samples] == [0.0, 1.0, 2.0, 3.0]


def test_a_single_undated_scrape_is_read_without_a_time() -> None:
    # given one pasted vLLM 0.2.x scrape (old metric name gpu_cache_usage_perc), no time anywhere
    text = (
        "# TYPE vllm:gpu_cache_usage_perc gauge\n"
        'vllm:gpu_cache_usage_perc{model_name="/models/mistral-7b"} 0.38849487785658\n'
        "# HELP vllm:num_requests_running Number of requests that is currently running for inference.\n"
    )

    # when it is parsed
    timeline = parse_timeline(text)

    # then the KV usage is read, undated, and the note says how to date scrapes
    (sample,) = timeline.servers[0].samples
    assert sample.time_s is None
    assert sample.kv_cache_usage == 0.38849487785658
    assert timeline.notes == (
        "1 scrape(s) carry no time: peaks are read, but they make no time series (precede "
        "each scrape with '# scrape <ISO 8601 time>')",
    )


def test_aiperf_gpu_telemetry_in_decimal_gb() -> None:
    # given two AIPerf telemetry lines of the shape of ../shared/data/formats/aiperf_gpu_telemetry_export.jsonl
    text = (
        '{"gpu_index": 0, "gpu_uuid": "GPU-a", "gpu_model_name": "NVIDIA H100 80GB HBM3", "pci_bus_id": '
        '"00000000:19:00.0", "hostname": "gpu-node-01", "timestamp_ns": 1767225600000000000, "telemetry_data": '
        '{"nvidia_power_usage": 118.3, "nvidia_gpu_utilization": 0.0, "nvidia_memory_used": 71.42}}\n'
        '{"gpu_index": 0, "gpu_uuid": "GPU-a", "gpu_model_name": "NVIDIA H100 80GB HBM3", "pci_bus_id": '
        '"00000000:19:00.0", "hostname": "gpu-node-01", "timestamp_ns": 1767225600100000000, "telemetry_data": '
        '{"nvidia_power_usage": 402.7, "nvidia_gpu_utilization": 62.0, "nvidia_memory_used": 71.45}}\n'
    )

    # when it is parsed
    timeline = parse_timeline(text)

    # then memory is GB × 10^9 (AIPerf converts DCGM's MiB × 1.048576e-3): 71.45 GB = 71,450,000,000 bytes
    assert timeline.format == "aiperf_gpu_telemetry"
    series = timeline.gpu("0")
    assert series.peak_bytes == 71_450_000_000
    assert series.samples[1].utilization_pct == 62.0
    assert series.samples[1].power_w == 402.7
    assert iso_utc(series.samples[1].time_s) == "2026-01-01T00:00:00.100Z"
    assert parse_aiperf_gpu_telemetry(text) == timeline


def test_aiperf_server_metrics_export_gives_aggregate_figures() -> None:
    # given an AIPerf server-metrics export (aggregates over the profiling phase)
    text = (
        '{"schema_version": "1.1", "aiperf_version": "0.13.0", "summary": {"endpoints_configured": '
        '["http://10.0.0.5:8000/metrics"], "start_time": "2026-01-01T00:00:00.001000", "end_time": '
        '"2026-01-01T00:00:00.353900"}, "metrics_phase": "profiling", "metrics": {"vllm:kv_cache_usage_perc": '
        '{"type": "gauge", "series": [{"labels": {"engine": "0"}, "stats": {"avg": 0.0061, "max": 0.0094, '
        '"p99": 0.0094}}]}, "vllm:num_preemptions": {"type": "counter", "series": [{"labels": {"engine": "0"}, '
        '"stats": {"total": 0.0, "rate": 0.0}}]}, "vllm:time_to_first_token_seconds": {"type": "histogram", '
        '"series": []}}}'
    )

    # when it is parsed
    timeline = parse_timeline(text)

    # then the KV and preemption figures are kept as stats over the window, with no time series
    assert timeline.format == "aiperf_server_metrics"
    assert [(s.metric, dict(s.stats)) for s in timeline.server_stats] == [
        ("kv_cache_usage", {"avg": 0.0061, "max": 0.0094, "p99": 0.0094}),
        ("preemptions", {"total": 0.0, "rate": 0.0}),
    ]
    assert iso_utc(timeline.start_s) == "2026-01-01T00:00:00.001Z"
    assert timeline.servers == ()
    assert parse_aiperf_server_metrics(text) == timeline


def test_event_log_oom_and_xid_lines() -> None:
    # given the engine's and kernel's log around the OOM (vLLM's year-less times, dmesg -T)
    events = parse_event_log(fixture("oom_events.log"), year=2026)

    # then one OOM (two lines within a minute are one event) and one XID with its PCI address
    assert [(e.kind, e.code, e.gpu, iso_utc(e.time_s)) for e in events] == [
        ("oom", None, None, "2026-12-01T19:41:03Z"),
        ("xid", 31, "0000:19:00", "2026-12-01T19:41:05Z"),
    ]


def test_event_log_without_a_year_keeps_year_less_times_unknown() -> None:
    # given a vLLM line (no year) and an ISO-dated line
    text = (
        "ERROR 12-01 19:41:03 [core.py:710] torch.OutOfMemoryError: CUDA out of memory.\n"
        "2026-12-01T20:00:00Z kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
    )

    # when no year is given
    events = parse_event_log(text)

    # then the OOM has no time, the XID has its own
    assert [(e.kind, iso_utc(e.time_s)) for e in events] == [("oom", None), ("xid", "2026-12-01T20:00:00Z")]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(
            '{"date": "20261130-134102", "backend": "vllm", "completed": 6, "mean_ttft_ms": 42.58}',
            "a benchmark result, not a monitoring log: import it as a benchmark run",
            id="vllm-bench",
        ),
        pytest.param(
            '{"benchmarks": [{"type_": "generative_benchmark"}]}',
            "a benchmark result, not a monitoring log: import it as a benchmark run",
            id="guidellm",
        ),
        pytest.param(
            '{"benchmarks": [{"type_": "generative_benchmark", "id_": "f05f',
            "a benchmark result (cut short: not valid JSON), not a monitoring log: import it as a benchmark run",
            id="guidellm-cut",
        ),
        pytest.param(
            '{"results_ttft_s_mean": 0.0426, "results_ttft_s_quantiles_p50": 0.04}',
            "a benchmark result, not a monitoring log: import it as a benchmark run",
            id="llmperf",
        ),
        pytest.param(
            "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\nTime to First Token (ms),42.58\n",
            "a benchmark result, not a monitoring log: import it as a benchmark run",
            id="aiperf-csv",
        ),
        pytest.param(
            "+-----------------------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 555.42.02              Driver Version: 555.42.02      CUDA Version: 12.5     |\n",
            "an nvidia-smi table (a one-off snapshot), not a monitoring log: import it as a hardware "
            "fingerprint, or log with nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,"
            "utilization.gpu --format=csv -l 60",
            id="smi-table",
        ),
        pytest.param(
            "==============NVSMI LOG==============\n\nTimestamp : Mon Nov 30 13:41:02 2026\n",
            "an nvidia-smi -q report (a one-off snapshot), not a monitoring log: import it as a hardware fingerprint",
            id="smi-q",
        ),
        pytest.param(
            '<?xml version="1.0" ?>\n<nvidia_smi_log>\n</nvidia_smi_log>\n',
            "an nvidia-smi -q -x XML report (a one-off snapshot), not a monitoring log: import it as a "
            "hardware fingerprint",
            id="smi-xml",
        ),
        pytest.param(
            "name, uuid, memory.used [MiB], memory.free [MiB]\nTesla P100-PCIE-16GB, GPU-ef1b, 0, 16280",
            "an nvidia-smi query without a timestamp column (a one-off snapshot), not a monitoring log: add "
            "timestamp to --query-gpu, or import it as a hardware fingerprint",
            id="smi-no-timestamp",
        ),
        pytest.param(
            "timestamp, power.draw [W]\n2024/10/30 18:42:33.189, 22.89 W\n",
            "an nvidia-smi log without memory.used (columns: timestamp, power.draw): a memory timeline needs "
            "--query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu",
            id="smi-power-only",
        ),
        pytest.param(
            "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.5\n",
            "Prometheus text without any metric a memory timeline reads (DCGM_FI_DEV_FB_USED, "
            "vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc, vllm:num_requests_running, "
            "sglang:token_usage, ...)",
            id="prometheus-other",
        ),
        pytest.param(
            '{"time": "2026-11-30T13:41:02Z", "kind": "trip"}\n',
            "a circuit-breaker events log, not a monitoring log: give it to the health verdict as breaker_events",
            id="breaker-log",
        ),
        pytest.param(
            "[Tue Dec  1 19:41:05 2026] NVRM: Xid (PCI:0000:19:00): 79, GPU has fallen off the bus.\n",
            "a log of OOM/XID events, not a memory timeline: give it to the health verdict as events_text",
            id="event-log",
        ),
        pytest.param(
            "========================ROCm System Management Interface========================\n",
            "rocm-smi output: AMD monitoring logs are not read yet; log nvidia-smi --query-gpu CSV or DCGM scrapes",
            id="rocm-smi",
        ),
        pytest.param("  \n", "the file is empty", id="empty"),
        pytest.param(
            "hello\nworld\n",
            "not a monitoring log read here: expected nvidia-smi --query-gpu CSV (with a "
            "timestamp column), Prometheus scrapes (DCGM, vLLM, SGLang), AIPerf GPU telemetry JSONL or "
            "AIPerf server-metrics JSON",
            id="prose",
        ),
    ],
)
def test_what_is_not_a_monitoring_log_is_refused_with_the_reason(text: str, reason: str) -> None:
    # given a file that is not a monitoring log read here
    # when it is parsed
    with pytest.raises(TimelineRefusal) as refusal:
        parse_timeline(text)

    # then the reason says what it is and what to do with it
    assert refusal.value.reason == reason
    assert isinstance(refusal.value, FormatRefusal)  # the importers' refusal type, for one 400 path


def test_a_broken_line_inside_a_scrape_is_refused() -> None:
    # given a scrape whose middle line is not a sample
    text = (
        '# scrape 2026-11-30T13:41:02Z\nDCGM_FI_DEV_FB_USED{gpu="0"} 1\nthis is not a sample\nDCGM_FI_DEV_FB_FREE 2\n'
    )

    # when it is parsed
    with pytest.raises(TimelineRefusal) as refusal:
        parse_timeline(text)

    # then the line is named
    assert refusal.value.reason == "line 3 is not a Prometheus sample: 'this is not a sample'"


def test_detect_names_each_format() -> None:
    assert detect_timeline_format(fixture("healthy_2gpu_72h.csv")) == "nvidia_smi_csv"
    assert detect_timeline_format(fixture("leak_2gpu_72h.csv")) == "nvidia_smi_csv"
    assert detect_timeline_format(fixture("dcgm_scrapes.prom")) == "prometheus_scrapes"
    assert detect_timeline_format(fixture("dcgm_scrapes.jsonl")) == "prometheus_scrapes"
    assert detect_timeline_format(fixture("sglang_scrapes.prom")) == "prometheus_scrapes"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026/11/30 13:41:02.123", "2026-11-30T13:41:02.123Z", id="nvidia-smi"),
        pytest.param("2026-11-30T13:41:02Z", "2026-11-30T13:41:02Z", id="iso-z"),
        pytest.param("2026-11-30T14:41:02+01:00", "2026-11-30T13:41:02Z", id="iso-offset"),
        pytest.param("Mon Nov 30 13:41:02 UTC 2026", "2026-11-30T13:41:02Z", id="date"),
        pytest.param("1796046062", "2026-11-30T13:41:02Z", id="posix-s"),
        pytest.param("1796046062123", "2026-11-30T13:41:02.123Z", id="posix-ms"),
        pytest.param("1796046062123000000", "2026-11-30T13:41:02.123Z", id="posix-ns"),
    ],
)
def test_parse_time_reads_the_times_logs_write(text: str, expected: str) -> None:
    assert iso_utc(parse_time(text, tz=UTC)) == expected


def test_merge_joins_logs_of_one_deployment() -> None:
    # given the nvidia-smi log and the vLLM scrapes of the same deployment
    smi = parse_timeline(fixture("healthy_2gpu_72h.csv"))
    scrapes = parse_timeline(fixture("vllm_scrapes.prom"))

    # when they are merged
    merged = merge_timelines(smi, scrapes)

    # then the timeline holds both, and the restart event of the scrapes
    assert merged.format == "merged"
    assert merged.sources == ("nvidia_smi", "vllm")
    assert [g.gpu for g in merged.gpus] == ["0", "1"]
    assert len(merged.servers) == 1
    assert [e.kind for e in merged.events] == ["restart"]


def test_merge_of_two_parts_of_one_gpu_sorts_the_samples() -> None:
    first = MemoryTimeline(
        format="nvidia_smi_csv", gpus=(GpuSeries(gpu="0", samples=(GpuSample(time_s=600.0, memory_used_bytes=2),)),)
    )
    second = MemoryTimeline(
        format="nvidia_smi_csv",
        gpus=(GpuSeries(gpu="0", name="H100", samples=(GpuSample(time_s=0.0, memory_used_bytes=1),)),),
    )
    merged = merge_timelines(first, second)
    assert merged.format == "nvidia_smi_csv"
    assert [s.time_s for s in merged.gpus[0].samples] == [0.0, 600.0]
    assert merged.gpus[0].name == "H100"


def test_with_events_adds_log_events_in_time_order() -> None:
    timeline = parse_timeline(fixture("dcgm_scrapes.prom"))
    joined = with_events(timeline, parse_event_log("2026-11-30T13:50:00Z CUDA out of memory"))
    assert [e.kind for e in joined.events] == ["oom", "xid"]


def test_as_dict_writes_iso_times_and_bytes() -> None:
    # given the cut log
    data = parse_timeline(fixture("cut_last_line.csv")).as_dict()

    # then times are ISO 8601 UTC strings and memory integers of bytes
    assert data["start"] == "2026-11-30T13:41:02.123Z"
    assert data["truncated"] is True
    first = data["gpus"][0]["samples"][0]
    assert first == {
        "time": "2026-11-30T13:41:02.123Z",
        "memory_used_bytes": 71_000 * MIB,
        "memory_total_bytes": TOTAL_BYTES,
        "utilization_pct": first["utilization_pct"],
        "power_w": None,
        "temperature_c": None,
    }
    assert data["gpus"][0]["peak_bytes"] == 74_501_324_800  # 71,050 MiB


def test_a_log_starting_with_an_nvidia_smi_error_line() -> None:
    text = (
        "Failed to initialize NVML: Driver/library version mismatch\n"
        "timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
        "2026/11/30 13:41:02.123, 0, 71000 MiB, 81559 MiB, 35 %\n"
    )
    timeline = parse_timeline(text)
    assert [e.kind for e in timeline.events] == ["smi_error"]
    assert timeline.events[0].time_s is None  # before any sample
    assert timeline.gpu("0").peak_bytes == 71_000 * MIB


def test_docstring_examples_hold() -> None:
    # the package and each of its modules (one per source, the common one, detection and merging)
    modules = [timeline_module] + [
        importlib.import_module(f"{timeline_module.__name__}.{info.name}")
        for info in pkgutil.iter_modules(timeline_module.__path__)
    ]
    # the examples use the package's public names, whichever module they are written in
    public = {name: value for name, value in vars(timeline_module).items() if not name.startswith("__")}
    results = [doctest.testmod(module, extraglobs=public) for module in modules]
    assert sum(r.attempted for r in results) > 10
    assert sum(r.failed for r in results) == 0


# ---------------------------------------------------------------------------------------------------------------
# TGI and TensorRT-LLM expositions, and scrapes given one by one (issue 7)

TGI_SCRAPE = """# HELP tgi_queue_size Current queue size
# TYPE tgi_queue_size gauge
tgi_queue_size 5
# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 12
tgi_batch_current_max_tokens 16384
tgi_request_duration_bucket{le="0.5"} 3
"""
TRTLLM_SERVE_SCRAPE = """# TYPE trtllm_kv_cache_utilization gauge
trtllm_kv_cache_utilization{model_name="llama",engine_type="trtllm"} 0.375
trtllm_num_requests_running{model_name="llama",engine_type="trtllm"} 24
trtllm_num_requests_waiting{model_name="llama",engine_type="trtllm"} 2
trtllm_generation_tokens_total{model_name="llama",engine_type="trtllm"} 91234
trtllm_kv_cache_used_blocks{model_name="llama",engine_type="trtllm"} 960
trtllm_kv_cache_max_blocks{model_name="llama",engine_type="trtllm"} 2560
"""
TRITON_SCRAPE = """# TYPE nv_trt_llm_request_metrics gauge
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="context",version="1"} 1
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="scheduled",version="1"} 7
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="max",version="1"} 512
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="active",version="1"} 8
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="waiting",version="1"} 3
# TYPE nv_trt_llm_kv_cache_block_metrics gauge
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="tokens_per",model="tensorrt_llm",version="1"} 64
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used",model="tensorrt_llm",version="1"} 1560
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="free",model="tensorrt_llm",version="1"} 4680
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max",model="tensorrt_llm",version="1"} 6240
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction",model="tensorrt_llm",version="1"} 0.25
"""


def _one_server(text: str):
    timeline = parse_timeline("# scrape 2026-11-30T13:41:02Z\n" + text)
    [server] = timeline.servers
    [sample] = server.samples
    return timeline, server, sample


def test_tgi_gives_queue_and_batch_but_no_kv_usage() -> None:
    # when
    timeline, server, sample = _one_server(TGI_SCRAPE)

    # then: TGI exports no KV-cache gauge: unknown, not zero
    assert (timeline.format, timeline.sources, server.engine, server.instance) == (
        "prometheus_scrapes",
        ("tgi",),
        "tgi",
        "",
    )
    assert (sample.requests_waiting, sample.requests_running, sample.kv_cache_usage) == (5.0, 12.0, None)
    assert iso_utc(sample.time_s) == "2026-11-30T13:41:02Z"


def test_trtllm_serve_gives_kv_usage_from_its_blocks() -> None:
    # when
    _, server, sample = _one_server(TRTLLM_SERVE_SCRAPE)

    # then: 960 used of 2,560 blocks = 0.375 (the utilisation gauge says the same)
    assert (server.engine, server.instance) == ("trtllm", "engine_type=trtllm model_name=llama")
    assert (
        sample.kv_cache_usage,
        sample.requests_running,
        sample.requests_waiting,
        sample.generation_tokens_total,
    ) == (0.375, 24.0, 2.0, 91234.0)


def test_the_triton_backend_reads_active_waiting_and_used_over_max_blocks() -> None:
    # when
    _, server, sample = _one_server(TRITON_SCRAPE)

    # then: 1,560 used of 6,240 blocks = 0.25; running = the active requests, waiting = the queued ones
    assert (server.engine, server.instance) == ("trtllm", "model=tensorrt_llm version=1")
    assert (sample.kv_cache_usage, sample.requests_running, sample.requests_waiting) == (0.25, 8.0, 3.0)


def test_an_older_triton_backend_without_fraction_nor_waiting() -> None:
    # given: only used and max blocks, and no waiting count (backends before the fraction was exported)
    text = (
        "\n".join(line for line in TRITON_SCRAPE.splitlines() if 'fraction"' not in line and 'waiting"' not in line)
        + "\n"
    )

    # when
    _, _, sample = _one_server(text)

    # then
    assert (sample.kv_cache_usage, sample.requests_running, sample.requests_waiting) == (0.25, 8.0, None)


def test_a_fraction_alone_is_the_kv_usage() -> None:
    # given
    text = 'nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction",model="tensorrt_llm",version="1"} 0.5\n'

    # when
    _, _, sample = _one_server(text)

    # then
    assert sample.kv_cache_usage == 0.5


def test_scrape_records_make_a_timeline_and_name_an_unreadable_one() -> None:
    # given
    good = [
        (1767225600.0, 'vllm:kv_cache_usage_perc{engine="0"} 0.1\n'),
        (1767225601.0, ""),
        (1767225602.0, TGI_SCRAPE),
    ]

    # when
    timeline = timeline_module.parse_scrape_records(good)

    # then: one series per engine; the empty scrape adds nothing
    assert [(s.engine, [(sample.time_s, sample.kv_cache_usage) for sample in s.samples]) for s in timeline.servers] == [
        ("tgi", [(1767225602.0, None)]),
        ("vllm", [(1767225600.0, 0.1)]),
    ]
    with pytest.raises(TimelineRefusal, match=r"^scrape 1: an unreadable line: 'vllm:oops\{ 1'$"):
        timeline_module.parse_scrape_records([(0.0, "vllm:num_requests_running 1\n"), (1.0, "vllm:oops{ 1\n")])
    with pytest.raises(TimelineRefusal, match="without any metric a memory timeline reads"):
        timeline_module.parse_scrape_records([(0.0, "my_metric 1\n")])


def test_tgi_and_trtllm_texts_are_detected_as_prometheus() -> None:
    # then
    assert detect_timeline_format(TGI_SCRAPE.split("\n", 2)[2]) == "prometheus_scrapes"  # without HELP/TYPE
    assert detect_timeline_format("trtllm_num_requests_running 3\n") == "prometheus_scrapes"
    assert detect_timeline_format(TRITON_SCRAPE.split("\n", 1)[1]) == "prometheus_scrapes"


def test_each_gpu_series_keeps_its_gauges_step() -> None:
    # given: nvidia-smi (whole MiB) and AIPerf telemetry in GB with two decimals (steps of 0.01 GB = 10,000,000 B)
    smi = parse_timeline("timestamp, index, memory.used [MiB]\n2026/11/30 13:41:02, 0, 71000 MiB\n")
    aiperf = parse_aiperf_gpu_telemetry(
        '{"gpu_index": 0, "timestamp_ns": 1767225600000000000, "telemetry_data": {"nvidia_memory_used": 71.42}}\n'
        '{"gpu_index": 0, "timestamp_ns": 1767225601000000000, "telemetry_data": {"nvidia_memory_used": 71.5}}\n'
    )

    # when
    merged = merge_timelines(smi, aiperf)

    # then: the coarsest step of a GPU is kept when two logs of it are joined
    assert smi.gpus[0].resolution_bytes == MIB
    assert aiperf.gpus[0].resolution_bytes == 10_000_000
    assert merged.gpus[0].resolution_bytes == 10_000_000


def test_an_aiperf_reading_with_many_decimals_keeps_the_mib_step() -> None:
    # given: a GB figure converted from MiB without rounding (71.42399978637695 GB)
    line = (
        '{"gpu_index": 0, "timestamp_ns": 1767225600000000000, '
        '"telemetry_data": {"nvidia_memory_used": 71.42399978637695}}'
    )

    # when
    series = parse_aiperf_gpu_telemetry(line).gpus[0]

    # then: never finer than the MiB the driver reports
    assert series.resolution_bytes == MIB


def test_json_lines_scrapes_without_a_zone_take_the_logs_zone() -> None:
    # given: a scrape record written with the server's local time (UTC+08:00), no zone
    text = (
        '{"time": "2026-11-30T21:41:02", "text": "DCGM_FI_DEV_FB_USED{gpu=\\"0\\"} 70000\\n"}\n'
        '{"time": "2026-11-30T21:41:07", "text": "DCGM_FI_DEV_FB_USED{gpu=\\"0\\"} 70001\\n"}\n'
    )

    # when
    timeline = parse_timeline(text, tz=utc_offset(480))

    # then: read in that zone, like nvidia-smi's times
    assert iso_utc(timeline.start_s) == "2026-11-30T13:41:02Z"

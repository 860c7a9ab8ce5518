"""The inference servers' figures in a Prometheus scrape (vLLM, SGLang, TGI, TensorRT-LLM: KV-cache usage, running
and waiting requests, counters): which metrics are read, the server instance a sample belongs to, and the restart
events of a server's series. The scrapes themselves are split and read by `prometheus`. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchmarks_app.results.timeline.common import EventKind, ServerSample, ServerSeries, TimelineEvent

_KV_USED_BLOCKS = "kv_used_blocks"  # TensorRT-LLM: KV usage = used / max blocks when no fraction is exported
_KV_MAX_BLOCKS = "kv_max_blocks"
SERVER = {
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
SERVER_LABELLED = {
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


def server_metric(name: str, labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(engine, figure) of a sample a server timeline reads, else None.

    >>> server_metric("nv_trt_llm_request_metrics", {"request_type": "waiting", "model": "tensorrt_llm"})
    ('trtllm', 'requests_waiting')
    >>> server_metric("nv_trt_llm_request_metrics", {"request_type": "max"}) is None
    True
    """
    found = SERVER.get(name)
    if found is not None:
        return found
    family = SERVER_LABELLED.get(name)
    if family is None:
        return None
    engine, label, figures = family
    figure = figures.get(labels.get(label, ""))
    return (engine, figure) if figure is not None else None


def server_instance(labels: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in _SERVER_LABELS_IGNORED)


def server_sample(
    time_s: float | None, values: dict[str, float], process_start_time_s: float | None
) -> ServerSample | None:
    """The sample of one server instance in one scrape, from its figures by `SERVER` figure name; None when it has
    only TensorRT-LLM KV blocks without their total (they tell nothing)."""
    used, most = values.get(_KV_USED_BLOCKS), values.get(_KV_MAX_BLOCKS)
    if used is not None and most:
        # TensorRT-LLM: the exact fraction (an older Triton backend's gauges are whole numbers)
        values["kv_cache_usage"] = used / most
    if not values.keys() - {_KV_USED_BLOCKS, _KV_MAX_BLOCKS}:
        return None
    return ServerSample(
        time_s=time_s,
        kv_cache_usage=values.get("kv_cache_usage"),
        requests_running=values.get("requests_running"),
        requests_waiting=values.get("requests_waiting"),
        preemptions_total=values.get("preemptions_total"),
        generation_tokens_total=values.get("generation_tokens_total"),
        process_start_time_s=process_start_time_s,
    )


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

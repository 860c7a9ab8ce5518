"""Importer of kubernetes-sigs/inference-perf's request-lifecycle reports: `summary_lifecycle_metrics.json` and the
per-stage `stage_N_lifecycle_metrics.json` (one run per file).

What the tool writes (read from inference-perf's `inference_perf/reportgen/base.py`, v0.1 to mid-2026):
`{"benchmark_time_seconds"?, "load_summary": {count, schedule_delay{…}, send_duration?, requested_rate?,
achieved_rate?, concurrency?}, "successes": {count, latency{request_latency, normalized_time_per_output_token,
time_per_output_token, time_to_first_token, inter_token_latency}, throughput{input_tokens_per_sec,
output_tokens_per_sec, total_tokens_per_sec, requests_per_sec}, prompt_len | prompt_tokens, output_len,
output_tokens?, token_count_mismatches?, goodput_metrics?}, "failures": {count, request_latency, prompt_len |
prompt_tokens, by_label?}}`. Each distribution is `{mean, min, max, p0.1, p1, p5, p10, p25, median, p75, p90, p95, p99,
p99.9}` (the oldest files: `p50` for the median); a distribution with no sample is `null`.

Traps handled here:

- **Seconds everywhere** (latencies and schedule delays): converted to milliseconds.
- Percentile keys are `p0.1 … p99.9` and `median` (not `p50`), linear interpolation (numpy).
- `normalized_time_per_output_token` is E2E / output tokens (our NTPOT), *not* TPOT; it holds 0.0 for requests that
  returned no output token, which pulls the distribution down: left out when its minimum is 0.
- Generations differ. Files without `token_count_mismatches` (before April 2026) timed every SSE event, role-only,
  usage-only and `[DONE]` events included, and divided TPOT by the number of events − 1: their TPOT and
  inter-token latency are not METRICS.md's and are left out (kept in `reported`). Newer files time content-bearing
  chunks and divide TPOT by output tokens − 1, as METRICS.md does.
- Newer `inter_token_latency` pools per-*token* gaps: with a tokenizer configured, every token of a chunk gets the
  chunk's arrival time, so multi-token chunks add zero gaps. It equals METRICS.md's pooled inter-chunk gap only when
  every chunk carries one token: mapped when no gap is zero, left out otherwise.
- Output tokens: `output_len` is the client tokenizer's count of the text; `output_tokens` (newer) the server's
  `usage.completion_tokens`, taken where present. TPOT/NTPOT divide by the client count unless the run set
  `use_server_output_tokens`.
- `goodput_metrics` counts only successful requests in its denominator (METRICS.md counts errors as misses).
- `failures.by_label` groups errors ("400 - Context Window", …); a failed request's latency is in
  `failures.request_latency`, apart from the successes'.
- No model, date or tool version is written into the report (they live in the run's config.yaml); the run's length
  is `benchmark_time_seconds` (newer) or count / requests_per_sec.
- A Prometheus report (`summary_prometheus_metrics.json`, server-side metrics in the same outer shape) is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks_app.results.run import (
    FormatRefusal,
    ImportedRun,
    LoadKind,
    LoadPattern,
    Stat,
    finite,
    stat_reported,
)
from sizing.kernel.jsonsafe import nonfinite_as_null

FORMAT = "inference_perf"
MS = 1000.0
SCHEDULE_LAG_LIMIT_MS = 10.0  # METRICS.md: a run is invalid when the schedule lag p99 exceeds 10 ms


def _load_json(text: str) -> Any:
    # imported here, not at the top: `detect` imports every importer module while it loads
    from benchmarks_app.results.detect import load_json

    return load_json(text)


def read(text: str) -> list[ImportedRun]:
    """The run of an inference-perf lifecycle report (summary or one stage)."""
    stripped = text.strip()
    if not stripped:
        raise FormatRefusal("the file is empty")
    if not stripped.startswith("{"):
        raise FormatRefusal("not a JSON object: inference-perf's lifecycle report is one JSON object")
    if '"successes"' not in stripped:
        # said before parsing: a large file of another tool is refused without reading it as JSON
        raise FormatRefusal("a JSON object without inference-perf's 'successes' and 'failures' sections")
    data = _load_json(text)  # the text as given: parsed once for every importer
    if not isinstance(data, dict):
        raise FormatRefusal("not a JSON object: inference-perf's lifecycle report is one JSON object")
    if "successes" not in data or "failures" not in data:
        raise FormatRefusal("a JSON object without inference-perf's 'successes' and 'failures' sections")
    successes, failures = data["successes"], data["failures"]
    load_summary = data.get("load_summary") or {}
    for name, section in (("successes", successes), ("failures", failures), ("load_summary", load_summary)):
        if not isinstance(section, Mapping):
            raise FormatRefusal(f"inference-perf's '{name}' is not an object ({type(section).__name__})")
    if "latency" not in successes and any(key in successes for key in ("kv_cache_usage_percentage", "queue_len")):
        raise FormatRefusal(
            "an inference-perf Prometheus report (server-side metrics), not the request-lifecycle report"
        )
    return [_read_run(data, successes, failures, load_summary)]


def _count(value: Any, name: str) -> int | None:
    if value is None:
        return None
    number = finite(value)
    if number is None or number < 0 or number != int(number):
        raise FormatRefusal(f"inference-perf's '{name}' is not a count of requests ({value!r})")
    return int(number)


def _distribution(section: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise FormatRefusal(f"inference-perf's '{where}.{key}' is not a distribution ({type(value).__name__})")
    return value


def _stat(dist: Mapping[str, Any] | None, *, scale: float, n: int | None) -> Stat | None:
    if dist is None:
        return None
    return stat_reported(
        scale=scale,
        n=n,
        mean=dist.get("mean"),
        p50=dist.get("median", dist.get("p50")),
        p90=dist.get("p90"),
        p95=dist.get("p95"),
        p99=dist.get("p99"),
        min=dist.get("min"),
        max=dist.get("max"),
    )


def _read_run(
    data: Mapping[str, Any], successes: Mapping[str, Any], failures: Mapping[str, Any], load_summary: Mapping[str, Any]
) -> ImportedRun:
    completed = _count(successes.get("count"), "successes.count")
    if completed is None:
        raise FormatRefusal("inference-perf's 'successes' has no request count")
    failed = _count(failures.get("count"), "failures.count")
    latency = successes.get("latency") or {}
    if not isinstance(latency, Mapping):
        raise FormatRefusal(f"inference-perf's 'successes.latency' is not an object ({type(latency).__name__})")
    new_generation = "token_count_mismatches" in successes
    notes = [
        "inference-perf writes seconds: latencies are converted to milliseconds. No per-request data: the "
        "distributions are inference-perf's summary figures, as reported."
    ]
    metrics: dict[str, Stat] = {}

    ttft = _stat(_distribution(latency, "time_to_first_token", "successes.latency"), scale=MS, n=completed)
    if ttft is not None:
        metrics["ttft_ms"] = ttft
    e2e = _stat(_distribution(latency, "request_latency", "successes.latency"), scale=MS, n=completed)
    if e2e is not None:
        metrics["e2e_ms"] = e2e
    tpot_dist = _distribution(latency, "time_per_output_token", "successes.latency")
    itl_dist = _distribution(latency, "inter_token_latency", "successes.latency")
    if new_generation:
        tpot = _stat(tpot_dist, scale=MS, n=completed)
        if tpot is not None:
            metrics["tpot_ms"] = tpot
            notes.append(
                "TPOT is inference-perf's (last chunk − first chunk) / (output tokens − 1) per request, "
                "METRICS.md's TPOT with one token in the first chunk."
            )
        if itl_dist is not None:
            lowest = finite(itl_dist.get("min"))
            if lowest is not None and lowest > 0:
                itl = _stat(itl_dist, scale=MS, n=None)
                if itl is not None:
                    metrics["itl_ms"] = itl
                    notes.append(
                        "inference-perf's inter_token_latency pools per-token gaps; no gap is zero, so every "
                        "chunk carried one token and they are the pooled inter-chunk gaps."
                    )
            else:
                notes.append(
                    "inference-perf's inter_token_latency pools per-token gaps, with zero gaps for the "
                    "tokens that arrived in the same chunk: it is not the pooled inter-chunk gap and is "
                    "left out (kept in reported)."
                )
    else:
        notes.append(
            "This report predates inference-perf's token_count_mismatches (April 2026): it timed every SSE "
            "event, role-only, usage-only and [DONE] events included, so its TPOT (divided by events − 1) "
            "and inter_token_latency are not METRICS.md's and are left out (kept in reported); its TTFT "
            "runs to the first SSE event, which can be a role-only one."
        )
    ntpot_dist = _distribution(latency, "normalized_time_per_output_token", "successes.latency")
    if ntpot_dist is not None:
        lowest = finite(ntpot_dist.get("min"))
        if lowest is not None and lowest <= 0:
            notes.append(
                "normalized_time_per_output_token holds 0 for requests that returned no output token; "
                "NTPOT is left out (kept in reported)."
            )
        else:
            ntpot = _stat(ntpot_dist, scale=MS, n=completed)
            if ntpot is not None:
                metrics["ntpot_ms"] = ntpot
    inputs = _distribution(successes, "prompt_tokens", "successes") or _distribution(
        successes, "prompt_len", "successes"
    )
    stat = _stat(inputs, scale=1.0, n=completed)
    if stat is not None:
        metrics["input_tokens"] = stat
    server_outputs = _distribution(successes, "output_tokens", "successes")
    outputs = server_outputs or _distribution(successes, "output_len", "successes")
    stat = _stat(outputs, scale=1.0, n=completed)
    if stat is not None:
        metrics["output_tokens"] = stat
        if server_outputs is None:
            notes.append(
                "Output tokens are output_len, the client tokenizer's count of the text (this report has "
                "no server-side output_tokens)."
            )
    if completed == 0:
        notes.append("No request succeeded: there are no latency distributions.")

    throughput = successes.get("throughput") or {}
    if not isinstance(throughput, Mapping):
        raise FormatRefusal(f"inference-perf's 'successes.throughput' is not an object ({type(throughput).__name__})")
    requests_per_s = finite(throughput.get("requests_per_sec"))
    duration = finite(data.get("benchmark_time_seconds"))
    if (duration is None or duration <= 0) and requests_per_s and completed:
        duration = completed / requests_per_s
        notes.append("duration_s is successes.count / requests_per_sec (this report has no benchmark_time_seconds).")
    elif duration is not None and duration <= 0:
        duration = None
    notes.append(
        "Throughputs are over the first request's start to the last request's end; output tokens per "
        "second count the client tokenizer's tokens unless the run set use_server_output_tokens."
    )

    load, settings = _load(load_summary, notes)
    _fidelity(load_summary, notes)
    _failures(failures, notes)
    goodput = successes.get("goodput_metrics")
    if isinstance(goodput, Mapping):
        share = finite(goodput.get("goodput_percentage"))
        notes.append(
            f"goodput_metrics ({share:.1f}% good) count only successful requests in the denominator; "
            "METRICS.md counts errors as SLO misses."
            if share is not None
            else "goodput_metrics count only successful requests in the denominator; METRICS.md counts errors "
            "as SLO misses."
        )
    return ImportedRun(
        format=FORMAT,
        tool="inference_perf",
        tool_version=None,
        label=None,
        model=None,
        backend=None,
        started_at=None,
        duration_s=duration,
        load=load,
        settings=settings,
        completed=completed,
        failed=failed,
        incomplete=None,
        metrics=metrics,
        reported=nonfinite_as_null(dict(data)),
        output_tokens_per_s=finite(throughput.get("output_tokens_per_sec")),
        requests_per_s=requests_per_s,
        total_tokens_per_s=finite(throughput.get("total_tokens_per_sec")),
        requests=(),
        notes=tuple(notes),
    )


def _load(load_summary: Mapping[str, Any], notes: list[str]) -> tuple[LoadPattern, dict[str, Any]]:
    rate = finite(load_summary.get("requested_rate"))
    concurrency = finite(load_summary.get("concurrency"))
    settings = {
        key: nonfinite_as_null(load_summary[key])
        for key in ("requested_rate", "concurrency")
        if load_summary.get(key) is not None
    }
    if concurrency is not None and concurrency > 0:
        return LoadPattern(kind=LoadKind.CONCURRENCY.value, rate=rate, concurrency=int(concurrency)), settings
    if rate is not None and rate > 0:
        return LoadPattern(kind=LoadKind.RATE.value, rate=rate), settings
    notes.append(
        "The report names no requested rate or concurrency (a summary over all stages, or a run without "
        "stages): the load pattern is unknown."
    )
    return LoadPattern(), settings


def _fidelity(load_summary: Mapping[str, Any], notes: list[str]) -> None:
    """METRICS.md's client fidelity: the schedule lag (inference-perf's schedule_delay) p99 and achieved/offered."""
    delay = load_summary.get("schedule_delay")
    if isinstance(delay, Mapping):
        lag = finite(delay.get("p99"))
        if lag is not None and lag * MS > SCHEDULE_LAG_LIMIT_MS:
            notes.append(
                f"The schedule lag (load_summary.schedule_delay) p99 is {lag * MS:.1f} ms, over METRICS.md's "
                f"{SCHEDULE_LAG_LIMIT_MS:.0f} ms: the client fell behind its schedule, so the run is not a "
                "valid measurement of the requested load."
            )
    requested, achieved = finite(load_summary.get("requested_rate")), finite(load_summary.get("achieved_rate"))
    if requested and achieved is not None and achieved < 0.95 * requested:
        notes.append(f"The achieved send rate {achieved:.2f}/s is under 95% of the requested {requested:.2f}/s.")


def _failures(failures: Mapping[str, Any], notes: list[str]) -> None:
    labels = failures.get("by_label")
    if not isinstance(labels, Mapping) or not labels:
        return
    parts = []
    for label, entry in labels.items():
        count = entry.get("count") if isinstance(entry, Mapping) else None
        parts.append(f"{label} × {count}" if count is not None else str(label))
    notes.append("Failures by label: " + "; ".join(parts) + ".")

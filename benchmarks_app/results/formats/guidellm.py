"""Importer of GuideLLM results: `benchmarks.json` (every schema generation) and `benchmarks.csv`.

What the tool writes (read from GuideLLM's `src/guidellm/core/` (0.1) and `src/guidellm/benchmark/` (0.2 onwards),
tags v0.1.0 to v0.7.3):

- **0.1** (`GuidanceReport`): `{"benchmarks": [{"benchmarks": [{mode, rate, results[], errors[], concurrencies[]}],
  "args": {...}}]}`. No summary at all: each result keeps `start_time`/`end_time` (epoch s), `first_token_time`
  (seconds *after* the start: a duration, not a timestamp) and `decode_times.data` (every gap between streamed chunks,
  in seconds).
- **0.2–0.3** (no `metadata`): `{"benchmarks": [{type_: "generative_benchmark", args, run_stats, worker,
  request_loader, metrics, start_time, end_time, request_totals, request_samples, requests{successful, errored,
  incomplete}}]}`. Per request: `start_time`, `end_time`, `first_token_time`, `last_token_time` (epoch s), token counts
  and computed fields. Warm-up and cool-down requests are not kept.
- **0.4–0.6** (`metadata.version` 1 from 0.5; absent in 0.4) and **0.7** (`metadata.version` 2, `config` scenario
  instead of `args`): each benchmark has `config` (strategy, constraints, warm-up, backend), `scheduler_state`,
  `scheduler_metrics` (the measurement window), `metrics` (with `request_totals`) and `requests` whose records carry
  `info.timings` (`request_start`, `first_token_iteration`, `last_token_iteration`, `token_iterations`, ...).

Every metric is a StatusDistributionSummary: `successful / errored / incomplete / total` × {mean, median, mode,
variance, std_dev, min, max, count, total_sum, percentiles{p001…p999}, pdf (0.4+) or cumulative_distribution_function
(0.2–0.3)}.

Traps handled here:

- GuideLLM's `time_per_output_token_ms` is not METRICS.md's TPOT: from 0.4 it is (last token − request start) / N_out,
  so it *includes* TTFT; in 0.2–0.3 it is (last token − first token) / N_out (the decode time divided by N_out, not
  N_out − 1). It is never mapped to `tpot_ms`. TPOT is derived where exact: per request as (last token − first token)
  / (N_out − 1), which is GuideLLM's per-request `inter_token_latency_ms`; from a summary only when every successful
  request has the same output length (then the token-weighted ITL distribution is the request-weighted one).
- GuideLLM's `inter_token_latency_ms` distribution is weighted by N_out − 1 and built from per-request *mean* gaps:
  its mean is the pooled per-token gap, its percentiles are not percentiles of gaps. `itl_ms` carries the mean only.
- `request_latency` is in **seconds**, every `*_ms` in milliseconds.
- Errored requests are added to the errored and total distributions (TTFT 0 where no token came): the canonical
  metrics use the successful distributions (or successful requests) only. A run where nothing succeeded still writes
  zero-filled successful summaries: those zeros are not latencies.
- From 0.4 the `requests` lists hold *every* request, warm-up and cool-down included, while the metrics cover the
  measurement window only (a request counts when it ends after the window opens and starts before it closes):
  the same filter is applied here before recomputing. With `--sample-requests` the lists are a sample: then the
  summary is used as reported.
- 0.2–0.3 percentiles have no `p50` (the median is a separate field); a successful request without a streamed token
  has `first_token_time` −1.0 (not a time).
- Streams that carry several tokens per chunk (0.4+: `token_iterations` < `output_tokens`) leave n_1 unknown: TPOT
  then takes the first chunk as one token (METRICS.md's fallback) and the note flags `chunking_unknown`.
- A file cut short is not valid JSON (the real 0.2-era example is the first 2 MiB of a 3.9 MB file, cut inside its
  per-request list, inside a string: json then reports where the string starts, not the end). When the cut lies inside
  the per-request lists of the last benchmark the run made (the profile says how many), every benchmark's summary is
  complete before it: the file is imported from those summaries, with a note; otherwise it is refused, saying where it
  breaks and what is lost.
- `benchmarks.yaml` (GuideLLM can save YAML) is refused with that reason.
- `benchmarks.csv` (0.4+) has three header rows (group, name, unit/stat); its `Percentiles` cells are
  `[min, p0.1, p1, p5, p10, p25, p75, p90, p95, p99, max]` as written by `outputs/csv.py` (no p50: the median has its
  own column), a status column set appears only when that status's total is non-zero, and its times are the local
  time of the machine that ran GuideLLM, with no zone. The 0.2–0.3 CSV has one header row
  (`Successful Time to first token ms [min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99, max]`, ...).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchmarks_app.results.detect import load_json
from benchmarks_app.results.run import (
    FormatRefusal,
    ImportedRun,
    LoadKind,
    LoadPattern,
    RequestRecord,
    RequestStatus,
    Source,
    Stat,
    describe_value,
    metrics_from_requests,
    stat_reported,
)
from sizing.kernel.json_limits import loads as bounded_loads
from sizing.kernel.jsonsafe import nonfinite_as_null

TOOL = "guidellm"
FORMAT_JSON = "guidellm_json"
FORMAT_CSV = "guidellm_csv"

GEN_01 = "0.1"
GEN_02 = "0.2–0.3"
GEN_04 = "0.4–0.6"
GEN_07 = "0.7"
_GENERATION_NAMES = {
    GEN_01: "GuideLLM 0.1 (GuidanceReport)",
    GEN_02: "GuideLLM 0.2–0.3 (no metadata block)",
    GEN_04: "GuideLLM 0.4–0.6 (metadata.version 1, or none in 0.4)",
    GEN_07: "GuideLLM 0.7 (metadata.version 2)",
}
STATUSES = ("successful", "errored", "incomplete", "total")
_SUMMARY_FIELDS = ("mean", "median", "mode", "variance", "std_dev", "min", "max", "count", "total_sum")
# the metrics kept in `reported` (every StatusDistributionSummary of the generative metrics; modality blocks are
# left out: they are mostly nulls)
_SUMMARY_METRICS = (
    "requests_per_second",
    "request_concurrency",
    "request_latency",
    "request_streaming_iterations_count",
    "prompt_token_count",
    "output_token_count",
    "total_token_count",
    "time_to_first_token_ms",
    "time_to_first_output_token_ms",
    "time_per_output_token_ms",
    "inter_token_latency_ms",
    "prompt_tokens_per_second",
    "output_tokens_per_second",
    "tokens_per_second",
    "output_tokens_per_iteration",
    "iter_tokens_per_iteration",
)
_PERCENTILE_KEYS = ("p001", "p01", "p05", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999")
# the order of GuideLLM's CSV `Percentiles` cell (outputs/csv.py, and the 0.2–0.3 column name)
CSV_PERCENTILE_ORDER = ("min", "p001", "p01", "p05", "p10", "p25", "p75", "p90", "p95", "p99", "max")
_EPS = 1e-9

NOTE_TPOT_04 = (
    "GuideLLM's time_per_output_token_ms is (last token − request start) / output tokens: it includes the "
    "time to the first token, so it is not METRICS.md's TPOT; it is kept in `reported` only."
)
NOTE_TPOT_02 = (
    "GuideLLM 0.2–0.3's time_per_output_token_ms is (last token − first token) / output tokens: the decode "
    "time divided by N_out instead of N_out − 1, so it is not METRICS.md's TPOT; it is kept in `reported` "
    "only."
)
NOTE_ITL_MEAN = (
    "itl_ms gives only the mean: GuideLLM's inter_token_latency_ms percentiles are of per-request mean "
    "gaps weighted by output tokens, not of individual gaps, so they are kept in `reported` only."
)
NOTE_SUCCESSFUL = (
    "TTFT, E2E and token counts are taken over successful requests only; GuideLLM also adds errored "
    "requests to its errored and total distributions (with zeros where no token came), which are kept "
    "in `reported`."
)
NOTE_E2E = "e2e_ms is GuideLLM's request_latency (seconds, here in ms), from request start to the end of the stream."
NOTE_THROUGHPUT = (
    "requests_per_s, output_tokens_per_s and total_tokens_per_s are the means of GuideLLM's successful "
    "requests_per_second, output_tokens_per_second and tokens_per_second over its measured window."
)
NOTE_PERCENTILES = (
    "Percentiles are recomputed by linear interpolation; GuideLLM's own (in `reported`) pick sample "
    "values, so p90–p99 may differ slightly."
)
NOTE_NO_SUCCESS = "No request succeeded: no latency or token distribution is given."


# ---------------------------------------------------------------------------------------------------------------
# Small helpers


def _number(value: Any, where: str) -> float | None:
    """A number the file wrote (None for null, NaN, ±Infinity); FormatRefusal for any other type."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatRefusal(f"{where} is {describe_value(value)}, not a number")
    return float(value) if math.isfinite(value) else None


def _count(value: Any, where: str) -> int | None:
    number = _number(value, where)
    if number is None:
        return None
    if number < 0 or abs(number - round(number)) > _EPS:
        raise FormatRefusal(f"{where} is {number!r}, not a count of requests")
    return round(number)


def _object(value: Any, where: str, *, required: bool = True) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise FormatRefusal(
            f"{where} is {describe_value(value)}, not an object" if value is not None else f"{where} is missing"
        )
    return value


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None or timestamp <= 0:
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat().replace("+00:00", "Z")


def _format_rate(rate: float) -> str:
    return f"{rate:.2f}"


def strategy_label_and_load(strategy: Mapping[str, Any]) -> tuple[str | None, LoadPattern]:
    """GuideLLM's own display of a scheduling strategy ("synchronous", "concurrent@8", "constant@4.00",
    "poisson@2.50", "throughput", "throughput@64") and the load pattern it stands for."""
    kind = strategy.get("type_")
    if not isinstance(kind, str):
        return None, LoadPattern()
    cap = strategy.get("max_concurrency")
    cap_int = round(cap) if isinstance(cap, int | float) and not isinstance(cap, bool) and cap > 0 else None
    if kind == "synchronous":
        return "synchronous", LoadPattern(kind=LoadKind.CONCURRENCY.value, concurrency=1)
    if kind == "concurrent":
        streams = strategy.get("streams")
        if isinstance(streams, int | float) and not isinstance(streams, bool) and streams > 0:
            return f"concurrent@{round(streams)}", LoadPattern(
                kind=LoadKind.CONCURRENCY.value, concurrency=round(streams)
            )
        return "concurrent", LoadPattern(kind=LoadKind.CONCURRENCY.value)
    if kind in ("constant", "poisson"):
        rate = strategy.get("rate")
        if isinstance(rate, int | float) and not isinstance(rate, bool) and math.isfinite(rate) and rate > 0:
            return f"{kind}@{_format_rate(rate)}", LoadPattern(
                kind=LoadKind.RATE.value, rate=float(rate), concurrency=cap_int
            )
        return kind, LoadPattern(kind=LoadKind.RATE.value, concurrency=cap_int)
    if kind == "throughput":
        label = f"throughput@{cap_int}" if cap_int else "throughput"
        return label, LoadPattern(kind=LoadKind.OFFLINE.value, concurrency=cap_int)
    return kind, LoadPattern()


def _label_from_display(name: str) -> LoadPattern:
    """The load pattern of a 0.2–0.3 CSV `Name` ("constant@4.00", "concurrent@8", "synchronous", "throughput")."""
    kind, _, value = name.partition("@")
    strategy: dict[str, Any] = {"type_": kind.strip()}
    try:
        number = float(value) if value else None
    except ValueError:
        number = None
    if number is not None:
        strategy["streams" if kind == "concurrent" else "rate"] = number
    return strategy_label_and_load(strategy)[1]


# ---------------------------------------------------------------------------------------------------------------
# StatusDistributionSummary -> Stat


def _status(summary: Any, status: str, where: str) -> dict[str, Any] | None:
    if summary is None:
        return None
    block = _object(summary, where)
    dist = block.get(status)
    if dist is None:
        return None
    return _object(dist, f"{where}.{status}")


def _percentile(dist: Mapping[str, Any], key: str, where: str) -> float | None:
    percentiles = dist.get("percentiles")
    if percentiles is None:
        return None
    percentiles = _object(percentiles, f"{where}.percentiles")
    return _number(percentiles.get(key), f"{where}.percentiles.{key}")


def _stat_from_dist(
    dist: Mapping[str, Any] | None, where: str, *, scale: float = 1.0, n: int | None = None, mean_only: bool = False
) -> Stat | None:
    """A reported Stat from one status of a GuideLLM distribution (None when it holds no sample). The median is
    GuideLLM's `median` (0.2–0.3 percentiles have no p50)."""
    if dist is None:
        return None
    count = _count(dist.get("count"), f"{where}.count")
    if count == 0:
        return None
    n = n if n is not None else count
    mean = _number(dist.get("mean"), f"{where}.mean")
    if mean_only:
        return stat_reported(scale=scale, n=n, mean=mean)
    median = _number(dist.get("median"), f"{where}.median")
    if median is None:
        median = _percentile(dist, "p50", where)
    return stat_reported(
        scale=scale,
        n=n,
        mean=mean,
        p50=median,
        p90=_percentile(dist, "p90", where),
        p95=_percentile(dist, "p95", where),
        p99=_percentile(dist, "p99", where),
        min=_number(dist.get("min"), f"{where}.min"),
        max=_number(dist.get("max"), f"{where}.max"),
        std=_number(dist.get("std_dev"), f"{where}.std_dev"),
    )


def _compact_dist(dist: Any) -> Any:
    if not isinstance(dist, dict):
        return nonfinite_as_null(dist)
    compact = {key: dist.get(key) for key in _SUMMARY_FIELDS if key in dist}
    if isinstance(dist.get("percentiles"), dict):
        compact["percentiles"] = dict(dist["percentiles"])
    return nonfinite_as_null(compact)


def compact_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """GuideLLM's summaries without their pdf / cumulative-distribution arrays and modality blocks."""
    kept: dict[str, Any] = {}
    for name in _SUMMARY_METRICS:
        summary = metrics.get(name)
        if isinstance(summary, dict):
            kept[name] = {status: _compact_dist(summary.get(status)) for status in STATUSES if status in summary}
    if "request_totals" in metrics:
        kept["request_totals"] = nonfinite_as_null(metrics["request_totals"])
    return kept


@dataclass
class _SummaryMapping:
    metrics: dict[str, Stat] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _equal_output_tokens(metrics: Mapping[str, Any], where: str) -> float | None:
    """N when every successful request produced the same number N ≥ 2 of output tokens, else None."""
    dist = _status(metrics.get("output_token_count"), "successful", f"{where}.output_token_count")
    if dist is None:
        return None
    low = _number(dist.get("min"), f"{where}.output_token_count.successful.min")
    high = _number(dist.get("max"), f"{where}.output_token_count.successful.max")
    if low is None or high is None or abs(high - low) > _EPS or low < 2:
        return None
    return low


def _one_token_per_chunk(metrics: Mapping[str, Any], where: str) -> bool | None:
    """True/False when the file says whether each streamed chunk carried one token (0.4+), None when it cannot."""
    dist = _status(metrics.get("output_tokens_per_iteration"), "successful", f"{where}.output_tokens_per_iteration")
    if dist is None or not dist.get("count"):
        return None
    low = _number(dist.get("min"), f"{where}.output_tokens_per_iteration.successful.min")
    high = _number(dist.get("max"), f"{where}.output_tokens_per_iteration.successful.max")
    if low is None or high is None:
        return None
    return abs(low - 1.0) < _EPS and abs(high - 1.0) < _EPS


def map_summary(metrics: Mapping[str, Any], completed: int | None, where: str) -> _SummaryMapping:
    """The canonical metrics from GuideLLM's summaries (as reported), with the notes that say what was derived and
    what was left out."""
    result = _SummaryMapping()
    if not completed:
        result.notes.append(NOTE_NO_SUCCESS)
        return result

    def dist(name: str) -> dict[str, Any] | None:
        return _status(metrics.get(name), "successful", f"{where}.{name}")

    found: dict[str, Stat | None] = {
        "ttft_ms": _stat_from_dist(dist("time_to_first_token_ms"), f"{where}.time_to_first_token_ms.successful"),
        "e2e_ms": _stat_from_dist(dist("request_latency"), f"{where}.request_latency.successful", scale=1000.0),
        "input_tokens": _stat_from_dist(dist("prompt_token_count"), f"{where}.prompt_token_count.successful"),
        "output_tokens": _stat_from_dist(dist("output_token_count"), f"{where}.output_token_count.successful"),
    }
    itl = dist("inter_token_latency_ms")
    itl_where = f"{where}.inter_token_latency_ms.successful"
    one_per_chunk = _one_token_per_chunk(metrics, where)
    if itl is not None and one_per_chunk is not False:
        found["itl_ms"] = _stat_from_dist(itl, itl_where, mean_only=True)
        if found["itl_ms"] is not None:
            result.notes.append(NOTE_ITL_MEAN)
            if one_per_chunk is None:
                result.notes.append(
                    "chunking_unknown: the file does not say how many tokens each streamed chunk "
                    "carried; itl_ms and tpot_ms take one token per chunk (METRICS.md's fallback)."
                )
    elif itl is not None:
        result.notes.append(
            "itl_ms is left out: GuideLLM's inter_token_latency_ms is a per-token gap and the file "
            "shows chunks carrying several tokens, so it is not the inter-chunk gap."
        )
    tokens = _equal_output_tokens(metrics, where)
    if itl is not None and tokens is not None:
        found["tpot_ms"] = _stat_from_dist(itl, itl_where, n=completed)
        result.notes.append(
            f"tpot_ms is GuideLLM's inter_token_latency_ms distribution ((last token − first token) / "
            f"(N_out − 1) per request): every successful request has {tokens:g} output tokens, so its "
            "token weighting equals METRICS.md's request weighting."
        )
        if one_per_chunk is False:
            result.notes.append(
                "chunking_unknown: some streamed chunks carried several tokens; tpot_ms takes the "
                "first chunk as one token (METRICS.md's fallback)."
            )
        e2e = dist("request_latency")
        found["ntpot_ms"] = _stat_from_dist(e2e, f"{where}.request_latency.successful", scale=1000.0 / tokens)
        result.notes.append(
            f"ntpot_ms is request_latency / {tokens:g} (every successful request has that many output tokens)."
        )
    elif itl is not None:
        result.notes.append(
            "tpot_ms and ntpot_ms are left out: output lengths vary, and GuideLLM's summaries weight "
            "per-request figures by output tokens, so the request-averaged values cannot be recovered."
        )
    result.metrics = {key: stat for key, stat in found.items() if stat is not None}
    return result


# ---------------------------------------------------------------------------------------------------------------
# Per-request records


@dataclass
class _Request:
    status: str
    error: str | None = None
    start: float | None = None  # epoch seconds
    end: float | None = None
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    span_ms: float | None = None  # last token − first token
    gaps_ms: tuple[float, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    chunks: int | None = None  # streamed chunks that carried tokens


def _time(value: Any, where: str) -> float | None:
    """A timestamp; GuideLLM 0.2–0.3 writes −1.0 (and older files 0) for 'never happened'."""
    number = _number(value, where)
    return number if number is not None and number > 0 else None


def _request_v02(raw: Any, status: str, where: str) -> _Request:
    record = _object(raw, where)
    start = _time(record.get("start_time"), f"{where}.start_time")
    end = _time(record.get("end_time"), f"{where}.end_time")
    first = _time(record.get("first_token_time"), f"{where}.first_token_time")
    last = _time(record.get("last_token_time"), f"{where}.last_token_time")
    error = record.get("error")
    return _Request(
        status=status,
        error=str(error) if error else None,
        start=start,
        end=end,
        ttft_ms=(first - start) * 1000 if first is not None and start is not None and first >= start else None,
        e2e_ms=(end - start) * 1000 if end is not None and start is not None and end >= start else None,
        span_ms=(last - first) * 1000 if last is not None and first is not None and last >= first else None,
        input_tokens=_count(record.get("prompt_tokens"), f"{where}.prompt_tokens"),
        output_tokens=_count(record.get("output_tokens"), f"{where}.output_tokens"),
    )


def _request_v04(raw: Any, status: str, where: str) -> _Request:
    record = _object(raw, where)
    info = _object(record.get("info"), f"{where}.info", required=False)
    timings = _object(info.get("timings"), f"{where}.info.timings", required=False)
    start = _time(record.get("request_start_time", timings.get("request_start")), f"{where}.request_start_time")
    end = _time(record.get("request_end_time", timings.get("request_end")), f"{where}.request_end_time")
    first = _time(timings.get("first_token_iteration"), f"{where}.info.timings.first_token_iteration")
    last = _time(timings.get("last_token_iteration"), f"{where}.info.timings.last_token_iteration")
    ttft = _number(record.get("time_to_first_token_ms"), f"{where}.time_to_first_token_ms")
    if ttft is None and first is not None and start is not None:
        ttft = (first - start) * 1000
    latency = _number(record.get("request_latency"), f"{where}.request_latency")
    e2e = (
        latency * 1000
        if latency is not None
        else ((end - start) * 1000 if end is not None and start is not None else None)
    )
    error = info.get("error")
    return _Request(
        status=status,
        error=str(error) if error else None,
        start=start,
        end=end,
        ttft_ms=ttft,
        e2e_ms=e2e,
        span_ms=(last - first) * 1000 if last is not None and first is not None and last >= first else None,
        input_tokens=_count(record.get("prompt_tokens"), f"{where}.prompt_tokens"),
        output_tokens=_count(record.get("output_tokens"), f"{where}.output_tokens"),
        chunks=_count(timings.get("token_iterations"), f"{where}.info.timings.token_iterations"),
    )


def _request_v01(raw: Any, status: str, where: str) -> _Request:
    record = _object(raw, where)
    if status != RequestStatus.OK.value:
        message = record.get("message")
        return _Request(status=status, error=str(message) if message else "error")
    start = _time(record.get("start_time"), f"{where}.start_time")
    end = _time(record.get("end_time"), f"{where}.end_time")
    first = _number(record.get("first_token_time"), f"{where}.first_token_time")
    decode = _object(record.get("decode_times"), f"{where}.decode_times", required=False)
    data = decode.get("data", [])
    if not isinstance(data, list):
        raise FormatRefusal(f"{where}.decode_times.data is {describe_value(data)}, not a list of gaps")
    gaps = tuple(
        g * 1000 for i, value in enumerate(data) if (g := _number(value, f"{where}.decode_times.data[{i}]")) is not None
    )
    return _Request(
        status=status,
        start=start,
        end=end,
        ttft_ms=first * 1000 if first is not None and first >= 0 else None,
        e2e_ms=(end - start) * 1000 if end is not None and start is not None and end >= start else None,
        span_ms=sum(gaps) if gaps else None,
        gaps_ms=gaps,
        input_tokens=_count(record.get("prompt_token_count"), f"{where}.prompt_token_count"),
        chunks=len(gaps) + 1 if gaps else None,
    )


def _records(requests: Sequence[_Request]) -> tuple[RequestRecord, ...]:
    starts = [r.start for r in requests if r.start is not None]
    origin = min(starts) if starts else None
    records = []
    for request in requests:
        tpot = None
        if request.span_ms is not None:
            if request.output_tokens is not None and request.output_tokens >= 2:
                tpot = request.span_ms / (request.output_tokens - 1)
            elif request.gaps_ms:
                tpot = request.span_ms / len(request.gaps_ms)
        records.append(
            RequestRecord(
                status=request.status,
                error=request.error,
                start_s=request.start - origin if request.start is not None and origin is not None else None,
                ttft_ms=request.ttft_ms,
                e2e_ms=request.e2e_ms,
                tpot_ms=tpot,
                itl_ms=request.gaps_ms,
                input_tokens=request.input_tokens,
                output_tokens=request.output_tokens,
            )
        )
    return tuple(records)


def _itl_mean(requests: Sequence[_Request]) -> tuple[Stat | None, list[str]]:
    """The pooled inter-chunk gap mean over successful requests, as a mean-only Stat: Σ(last − first token) /
    Σ(chunks − 1), chunks = GuideLLM's token_iterations where recorded, else the output tokens (one per chunk)."""
    span = 0.0
    gaps = 0
    counted = 0
    multi = 0
    unknown = 0
    for request in requests:
        if request.status != RequestStatus.OK.value or request.span_ms is None:
            continue
        chunks = request.chunks
        if chunks is None:
            unknown += 1
            chunks = request.output_tokens
        elif request.output_tokens is not None and chunks != request.output_tokens:
            multi += 1
        if chunks is None or chunks < 2:
            continue
        span += request.span_ms
        gaps += chunks - 1
        counted += 1
    if not gaps:
        return None, []
    notes = [
        "itl_ms gives only the mean gap between streamed chunks (Σ(last − first token) / Σ(chunks − 1)): the "
        "file keeps no individual gaps, so no percentile."
    ]
    if multi:
        notes.append(
            f"chunking_unknown: in {multi} of {counted} successful requests GuideLLM counted fewer streamed "
            "chunks than output tokens (several tokens in a chunk); tpot_ms takes the first chunk as one "
            "token (METRICS.md's fallback), and itl_ms (per chunk) is above GuideLLM's per-token "
            "inter_token_latency_ms."
        )
    elif unknown:
        notes.append(
            "chunking_unknown: the file does not record how many chunks carried the tokens; itl_ms and "
            "tpot_ms take one token per chunk (METRICS.md's fallback)."
        )
    return Stat(mean=span / gaps, n=gaps, source=Source.RECOMPUTED.value), notes


# ---------------------------------------------------------------------------------------------------------------
# One benchmark, whatever the generation


@dataclass
class _Benchmark:
    index: int
    generation: str
    metrics: dict[str, Any] | None  # the StatusDistributionSummaries (None in 0.1)
    totals: dict[str, int | None]
    strategy: dict[str, Any]
    started: float | None
    duration: float | None
    window: tuple[float, float] | None  # the measurement window (0.4+)
    requests: dict[str, list[Any]] | None  # raw per-request lists by status, None when absent
    model: str | None = None
    backend: str | None = None
    tool_version: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    reported_extra: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    label: str | None = None
    load: LoadPattern | None = None


def _totals(block: Any, where: str) -> dict[str, int | None]:
    totals = _object(block, where)
    return {status: _count(totals.get(status), f"{where}.{status}") for status in STATUSES}


def _request_lists(block: Any, where: str) -> dict[str, list[Any]] | None:
    if block is None:
        return None
    lists = _object(block, where)
    found: dict[str, list[Any]] = {}
    for status in ("successful", "errored", "incomplete"):
        items = lists.get(status)
        if items is None:
            found[status] = []
            continue
        if not isinstance(items, list):
            raise FormatRefusal(f"{where}.{status} is {describe_value(items)}, not a list of requests")
        found[status] = items
    return found


_STATUS_OF = {
    "successful": RequestStatus.OK.value,
    "errored": RequestStatus.ERROR.value,
    "incomplete": RequestStatus.INCOMPLETE.value,
}


def _in_window(request: _Request, window: tuple[float, float]) -> bool:
    """GuideLLM's `get_within_range`: the request ends after the window opens and starts before it closes."""
    start, end = window
    if request.end is None or request.end < start:
        return False
    if request.start is not None:
        return request.start <= end
    return request.end <= end


def _run(bench: _Benchmark, fmt: str) -> ImportedRun:
    where = f"benchmarks[{bench.index}]"
    notes = list(bench.notes)
    totals = bench.totals
    completed = totals.get("successful")
    summary = map_summary(bench.metrics, completed, f"{where}.metrics") if bench.metrics is not None else None
    records: tuple[RequestRecord, ...] = ()
    metrics: dict[str, Stat] = summary.metrics if summary else {}
    recomputed = False
    if bench.requests is not None:
        reader = {GEN_01: _request_v01, GEN_02: _request_v02}.get(bench.generation, _request_v04)
        parsed = [
            reader(raw, _STATUS_OF[status], f"{where}.requests.{status}[{i}]")
            for status, items in bench.requests.items()
            for i, raw in enumerate(items)
        ]
        if bench.window is not None:
            kept = [r for r in parsed if _in_window(r, bench.window)]
            if len(kept) < len(parsed):
                notes.append(
                    f"{len(parsed) - len(kept)} of {len(parsed)} recorded requests lie outside GuideLLM's "
                    "measurement window (warm-up, cool-down) and are left out, as GuideLLM's summary does."
                )
            parsed = kept
        counts = {status: sum(1 for r in parsed if r.status == _STATUS_OF[status]) for status in _STATUS_OF}
        complete = bench.metrics is None or all(
            totals.get(status) is None or totals.get(status) == counts[status] for status in _STATUS_OF
        )
        records = _records(parsed)
        if complete:
            recomputed = True
            metrics = metrics_from_requests(records)
            if "itl_ms" not in metrics:  # GuideLLM 0.1 keeps every gap; later versions only first and last token
                itl, itl_notes = _itl_mean(parsed)
                if itl is not None:
                    metrics["itl_ms"] = itl
                notes.extend(itl_notes)
            if "tpot_ms" in metrics:
                notes.append("tpot_ms is recomputed per request as (last token − first token) / (output tokens − 1).")
            if metrics:
                notes.append(NOTE_PERCENTILES)
            elif not any(r.status == RequestStatus.OK.value for r in parsed):
                notes.append(NOTE_NO_SUCCESS)
            if bench.metrics is None:
                completed, failed, incomplete = counts["successful"], counts["errored"], counts["incomplete"]
                totals = {
                    "successful": completed,
                    "errored": failed,
                    "incomplete": incomplete,
                    "total": completed + failed + incomplete,
                }
        else:
            shown = ", ".join(f"{counts[s]} of {totals.get(s)} {s}" for s in _STATUS_OF if totals.get(s))
            notes.append(
                f"The file keeps only a sample of the requests ({shown}); the metrics are GuideLLM's summary "
                "as reported, and the sampled records are kept as they are."
            )
    if summary is not None and not recomputed:
        notes.extend(summary.notes)
    if bench.metrics is not None:
        notes.append(NOTE_TPOT_02 if bench.generation == GEN_02 else NOTE_TPOT_04)
        notes.append(NOTE_SUCCESSFUL)
    if "e2e_ms" in metrics:
        notes.append(
            NOTE_E2E
            if bench.generation != GEN_01
            else "e2e_ms is GuideLLM 0.1's end_time − start_time, from request start to the end of the stream."
        )

    requests_per_s = output_per_s = total_per_s = None
    if bench.metrics is not None:

        def mean_of(name: str) -> float | None:
            dist = _status(bench.metrics.get(name), "successful", f"{where}.metrics.{name}")
            return _number(dist.get("mean"), f"{where}.metrics.{name}.successful.mean") if dist else None

        requests_per_s = mean_of("requests_per_second")
        output_per_s = mean_of("output_tokens_per_second")
        total_per_s = mean_of("tokens_per_second")
        notes.append(NOTE_THROUGHPUT)
    elif bench.duration:
        requests_per_s = (completed or 0) / bench.duration
        notes.append(
            "requests_per_s is recomputed as successful requests / (last end − first start), GuideLLM 0.1's "
            "own completed_request_rate; no token throughput is given (its token counts are chunk counts)."
        )

    label, load = bench.label, bench.load
    if load is None:
        label, load = strategy_label_and_load(bench.strategy)
    reported: dict[str, Any] = {"schema": _GENERATION_NAMES[bench.generation]}
    if bench.metrics is not None:
        reported["request_totals"] = nonfinite_as_null(totals)
        reported["metrics"] = compact_metrics(bench.metrics)
    reported.update(nonfinite_as_null(bench.reported_extra))
    return ImportedRun(
        format=fmt,
        tool=TOOL,
        tool_version=bench.tool_version,
        label=label,
        model=bench.model,
        backend=bench.backend,
        started_at=_iso(bench.started),
        duration_s=bench.duration,
        load=load,
        settings=nonfinite_as_null(bench.settings),
        completed=completed,
        failed=totals.get("errored"),
        incomplete=totals.get("incomplete"),
        metrics=metrics,
        reported=reported,
        output_tokens_per_s=output_per_s,
        requests_per_s=requests_per_s,
        total_tokens_per_s=total_per_s,
        requests=records,
        notes=tuple(dict.fromkeys(notes)),
    )


def _benchmark_v02(raw: dict[str, Any], index: int) -> _Benchmark:
    where = f"benchmarks[{index}]"
    args = _object(raw.get("args"), f"{where}.args")
    worker = _object(raw.get("worker"), f"{where}.worker", required=False)
    metrics = _object(raw.get("metrics"), f"{where}.metrics")
    start = _time(raw.get("start_time"), f"{where}.start_time")
    end = _time(raw.get("end_time"), f"{where}.end_time")
    duration = _number(raw.get("duration"), f"{where}.duration")
    if duration is None and start is not None and end is not None:
        duration = end - start
    return _Benchmark(
        index=index,
        generation=GEN_02,
        metrics=metrics,
        totals=_totals(raw.get("request_totals"), f"{where}.request_totals"),
        strategy=_object(args.get("strategy"), f"{where}.args.strategy", required=False),
        started=start,
        duration=duration,
        window=None,
        requests=_request_lists(raw.get("requests"), f"{where}.requests"),
        model=worker.get("backend_model") if isinstance(worker.get("backend_model"), str) else None,
        backend=worker.get("backend_type") if isinstance(worker.get("backend_type"), str) else None,
        settings={
            "args": args,
            "worker": worker,
            "request_loader": raw.get("request_loader"),
            "extras": raw.get("extras"),
        },
        reported_extra={
            "run_stats": raw.get("run_stats"),
            "start_time": raw.get("start_time"),
            "end_time": raw.get("end_time"),
            "duration": duration,
            "request_samples": raw.get("request_samples"),
        },
    )


def _benchmark_v04(raw: dict[str, Any], index: int, report: Mapping[str, Any], generation: str) -> _Benchmark:
    where = f"benchmarks[{index}]"
    config = _object(raw.get("config"), f"{where}.config")
    scheduler = _object(raw.get("scheduler_metrics"), f"{where}.scheduler_metrics")
    metrics = _object(raw.get("metrics"), f"{where}.metrics")
    start = _time(scheduler.get("measure_start_time"), f"{where}.scheduler_metrics.measure_start_time")
    end = _time(scheduler.get("measure_end_time"), f"{where}.scheduler_metrics.measure_end_time")
    if start is None:
        start = _time(raw.get("start_time"), f"{where}.start_time")
    if end is None:
        end = _time(raw.get("end_time"), f"{where}.end_time")
    backend_config = config.get("backend") if isinstance(config.get("backend"), dict) else {}
    metadata = report.get("metadata") if isinstance(report.get("metadata"), dict) else {}
    args = report.get("args") if isinstance(report.get("args"), dict) else {}
    scenario = report.get("config") if isinstance(report.get("config"), dict) else {}
    spec = scenario.get("spec") if isinstance(scenario.get("spec"), dict) else {}
    spec_backend = spec.get("backend") if isinstance(spec.get("backend"), dict) else {}
    model = backend_config.get("model") or args.get("model") or spec_backend.get("model")
    backend = backend_config.get("kind") or args.get("backend") or spec_backend.get("kind")
    version = metadata.get("guidellm_version")
    settings: dict[str, Any] = {
        key: config.get(key)
        for key in (
            "strategy",
            "constraints",
            "warmup",
            "cooldown",
            "sample_requests",
            "sample_size",
            "prefer_response_metrics",
            "backend",
            "requests",
            "profile",
        )
        if key in config
    }
    if args:
        settings["args"] = args
    if scenario:
        settings["scenario"] = scenario
    return _Benchmark(
        index=index,
        generation=generation,
        metrics=metrics,
        totals=_totals(metrics.get("request_totals"), f"{where}.metrics.request_totals"),
        strategy=_object(config.get("strategy"), f"{where}.config.strategy", required=False),
        started=start,
        duration=end - start
        if start is not None and end is not None
        else _number(raw.get("duration"), f"{where}.duration"),
        window=(start, end) if start is not None and end is not None else None,
        requests=_request_lists(raw.get("requests"), f"{where}.requests"),
        model=model if isinstance(model, str) else None,
        backend=backend if isinstance(backend, str) else None,
        tool_version=version if isinstance(version, str) else None,
        settings=settings,
        reported_extra={
            "scheduler_metrics": scheduler,
            "start_time": raw.get("start_time"),
            "end_time": raw.get("end_time"),
            "duration": raw.get("duration"),
            "warmup_duration": raw.get("warmup_duration"),
            "cooldown_duration": raw.get("cooldown_duration"),
        },
    )


def _benchmarks_v01(data: Mapping[str, Any]) -> list[_Benchmark]:
    found: list[_Benchmark] = []
    for r, report in enumerate(data["benchmarks"]):
        report = _object(report, f"benchmarks[{r}]")
        args = _object(report.get("args"), f"benchmarks[{r}].args", required=False)
        inner = report.get("benchmarks")
        if not isinstance(inner, list):
            raise FormatRefusal(f"benchmarks[{r}].benchmarks is {describe_value(inner)}, not GuideLLM 0.1's list")
        for b, raw in enumerate(inner):
            where = f"benchmarks[{r}].benchmarks[{b}]"
            raw = _object(raw, where)
            results = raw.get("results", [])
            errors = raw.get("errors", [])
            if not isinstance(results, list) or not isinstance(errors, list):
                raise FormatRefusal(f"{where} has no 'results' and 'errors' lists")
            mode = raw.get("mode")
            rate = _number(raw.get("rate"), f"{where}.rate")
            strategy = {"type_": {"asynchronous": "constant"}.get(str(mode), str(mode)), "rate": rate}
            label, load = strategy_label_and_load(strategy)
            if mode == "asynchronous":
                label = f"asynchronous@{_format_rate(rate)}" if rate else "asynchronous"
            starts = [s for x in results if isinstance(x, dict) and (s := finite_time(x.get("start_time")))]
            ends = [e for x in results if isinstance(x, dict) and (e := finite_time(x.get("end_time")))]
            model = args.get("model")
            found.append(
                _Benchmark(
                    index=len(found),
                    generation=GEN_01,
                    metrics=None,
                    totals={
                        "successful": len(results),
                        "errored": len(errors),
                        "incomplete": None,
                        "total": len(results) + len(errors),
                    },
                    strategy=strategy,
                    started=min(starts) if starts else None,
                    duration=max(ends) - min(starts) if starts and ends else None,
                    window=None,
                    requests={"successful": results, "errored": errors, "incomplete": []},
                    model=model if isinstance(model, str) else None,
                    backend=args.get("backend_type") if isinstance(args.get("backend_type"), str) else None,
                    settings={"args": args, "mode": mode, "rate": rate},
                    reported_extra={"mode": mode, "rate": rate, "results": len(results), "errors": len(errors)},
                    notes=[
                        "GuideLLM 0.1 times every streamed chunk, a role-only first chunk included: TTFT is the first "
                        "chunk's arrival, the gaps are between chunks, and its output token count is a chunk count "
                        "(left out of output_tokens, ntpot_ms)."
                    ],
                    label=label,
                    load=load,
                )
            )
    return found


def finite_time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


# ---------------------------------------------------------------------------------------------------------------
# A file cut short


_TOKEN = re.compile(r'(?P<string>"(?:[^"\\]|\\.)*")|(?P<open_string>"(?:[^"\\]|\\.)*\\?\Z)|[{}\[\],:]')


@dataclass(frozen=True)
class _Cut:
    path: tuple[str | int, ...]  # where the cut lies: keys and indexes from the top
    size: int  # bytes in the file

    def where(self) -> str:
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text or "the top-level value"


@dataclass(frozen=True)
class _Scan:
    cut_short: bool  # the text ends inside an object, a list or a string
    prefix: Any = None  # every element complete before the end, closed up (None when none is)
    path: tuple[str | int, ...] = ()  # where the text breaks off


def _scan(text: str) -> _Scan:
    """Whether a text that is not valid JSON ends inside an open structure (a cut file), and if so the value made of
    every element complete before the end, with the path to where it breaks off."""
    stack: list[list[Any]] = []  # [bracket, key or index, expecting a key]
    last: tuple[int, list[list[Any]]] | None = None
    ended_in_string = False
    for match in _TOKEN.finditer(text):
        piece = match.group()
        if match.lastgroup == "open_string":
            ended_in_string = True
            break
        if match.lastgroup == "string":
            if stack and stack[-1][0] == "{" and stack[-1][2]:
                try:
                    stack[-1][1] = bounded_loads(piece)
                except json.JSONDecodeError:
                    return _Scan(cut_short=False)
                stack[-1][2] = False
            continue
        if piece in "{[":
            stack.append([piece, 0 if piece == "[" else None, piece == "{"])
        elif piece in "}]":
            if not stack:
                return _Scan(cut_short=False)
            stack.pop()
        elif piece == "," and stack:
            last = (match.start(), [list(level) for level in stack])
            if stack[-1][0] == "[":
                stack[-1][1] += 1
            else:
                stack[-1][2] = True
    if not stack and not ended_in_string:
        return _Scan(cut_short=False)
    if last is None:
        return _Scan(cut_short=True)
    position, levels = last
    closers = "".join("}" if level[0] == "{" else "]" for level in reversed(levels))
    try:
        value = bounded_loads(text[:position] + closers)
    except json.JSONDecodeError:
        return _Scan(cut_short=True)
    return _Scan(cut_short=True, prefix=value, path=tuple(level[1] for level in levels))


def _salvage(text: str, reason: str) -> tuple[dict[str, Any], _Cut]:
    """The complete part of a cut GuideLLM file, when every benchmark's summary lies before the cut; FormatRefusal
    otherwise, saying where the file breaks off (`reason` is load_json's, kept when the text is not cut but broken).
    load_json's own 'cut short' test misses a cut inside a string (json reports where the string starts), so the cut
    is found here from the brackets left open."""
    scan = _scan(text)
    if not scan.cut_short:
        raise FormatRefusal(reason)
    size = len(text.encode("utf-8"))
    reason = f"not valid JSON: the file is cut short after {size:,} bytes"
    if not isinstance(scan.prefix, dict) or not isinstance(scan.prefix.get("benchmarks"), list):
        raise FormatRefusal(f"{reason}; its complete part holds no GuideLLM 'benchmarks' list")
    data, path = scan.prefix, scan.path
    cut = _Cut(path=path, size=size)
    reason = f"{reason}, inside {cut.where()}"
    benchmarks = data["benchmarks"]
    if len(path) < 4 or path[0] != "benchmarks" or path[2] != "requests" or not isinstance(path[1], int):
        raise FormatRefusal(
            f"{reason}: the cut lies before the benchmarks' summaries are complete, so nothing can be imported"
        )
    index = path[1]
    benchmark = benchmarks[index] if index < len(benchmarks) else None
    if not isinstance(benchmark, dict) or not isinstance(benchmark.get("metrics"), dict):
        raise FormatRefusal(f"{reason}: benchmark {index + 1} has no complete summary before the cut")
    profile: Any = None
    if isinstance(benchmark.get("args"), dict):
        profile = benchmark["args"].get("profile")
    elif isinstance(benchmark.get("config"), dict):
        profile = benchmark["config"].get("profile")
    planned = None
    if isinstance(profile, dict):
        done = profile.get("completed_strategies")
        if isinstance(done, list):
            planned = len(done)
        elif isinstance(done, int) and not isinstance(done, bool):
            planned = done
        if isinstance(profile.get("strategy_types"), list):
            planned = max(planned or 0, len(profile["strategy_types"]))
    if planned is None:
        raise FormatRefusal(
            f"{reason}: the file does not say how many benchmarks the run made, so later ones may be lost"
        )
    if planned > index + 1:
        lost = f"benchmark {planned} is" if planned == index + 2 else f"benchmarks {index + 2}–{planned} are"
        raise FormatRefusal(f"{reason}, in a run of {planned} benchmarks: {lost} lost")
    for benchmark in benchmarks:
        if isinstance(benchmark, dict):
            benchmark["requests"] = None  # incomplete in the cut one; not used in the others either
    return data, cut


def _cut_note(cut: _Cut, data: Mapping[str, Any]) -> str:
    index = cut.path[1]
    benchmark = data["benchmarks"][index]
    totals = benchmark.get("request_totals") or (benchmark.get("metrics") or {}).get("request_totals") or {}
    status = cut.path[3]
    complete = cut.path[4] if len(cut.path) > 4 and isinstance(cut.path[4], int) else 0
    of = f" of {totals[status]}" if isinstance(totals, dict) and isinstance(totals.get(status), int) else ""
    return (
        f"The file is cut short after {cut.size:,} bytes, inside {cut.where()} (request {complete + 1}{of}; "
        f"{complete} complete before the cut). The summary of each of the {len(data['benchmarks'])} benchmark(s) "
        "the run made lies wholly before the cut, so the run is imported from GuideLLM's summaries (as reported); "
        "the per-request records are not used."
    )


# ---------------------------------------------------------------------------------------------------------------
# Entry points


def _generation(data: Mapping[str, Any]) -> str:
    benchmarks = data["benchmarks"]
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and "version" in metadata:
        version = metadata["version"]
        if version == 1:
            return GEN_04
        if version == 2:
            return GEN_07
        raise FormatRefusal(
            f"GuideLLM metadata.version {version!r} is not one this importer reads (1: GuideLLM "
            "0.5–0.6, 2: GuideLLM 0.7)"
        )
    first = benchmarks[0]
    if isinstance(first, dict) and first.get("type_") == "generative_benchmark":
        if "config" in first and "scheduler_metrics" in first:
            return GEN_04
        if "args" in first and "run_stats" in first:
            return GEN_02
        raise FormatRefusal(
            "a GuideLLM benchmark with neither 'config' and 'scheduler_metrics' (0.4+) nor 'args' and "
            "'run_stats' (0.2–0.3)"
        )
    if isinstance(first, dict) and isinstance(first.get("benchmarks"), list) and "args" in first:
        return GEN_01
    raise FormatRefusal(
        "a JSON object with a 'benchmarks' list whose entries are not GuideLLM benchmarks (no type_ "
        "'generative_benchmark')"
    )


_YAML_REPORT = re.compile(r"^(metadata|args|config|benchmarks):\s*$", re.MULTILINE)


def read_json(text: str) -> list[ImportedRun]:
    """Every benchmark of a GuideLLM `benchmarks.json` (any generation) as one run each, labelled with its strategy
    ("constant@4.00", "concurrent@8"); FormatRefusal with the reason when the text is not such a file."""
    cut: _Cut | None = None
    try:
        data = load_json(text)
    except FormatRefusal as refusal:
        if not text.lstrip().startswith("{"):
            if _YAML_REPORT.search(text) and re.search(r"^benchmarks:", text, re.MULTILINE):
                raise FormatRefusal(
                    "YAML, not JSON: GuideLLM's benchmarks.yaml is not read here; save the report as "
                    "benchmarks.json (or benchmarks.csv)"
                ) from None
            raise
        data, cut = _salvage(text, refusal.reason)
    if not isinstance(data, dict):
        raise FormatRefusal(
            f"a JSON {'list' if isinstance(data, list) else type(data).__name__}, not GuideLLM's report object"
        )
    benchmarks = data.get("benchmarks")
    if benchmarks is None:
        raise FormatRefusal("a JSON object without GuideLLM's 'benchmarks' list")
    if not isinstance(benchmarks, list):
        raise FormatRefusal(f"GuideLLM's 'benchmarks' is {describe_value(benchmarks)}, not a list")
    if not benchmarks:
        raise FormatRefusal("GuideLLM's 'benchmarks' list is empty: the report holds no benchmark")
    generation = _generation(data)
    if generation == GEN_01:
        parsed = _benchmarks_v01(data)
    else:
        parsed = []
        for index, raw in enumerate(benchmarks):
            if not isinstance(raw, dict) or raw.get("type_") != "generative_benchmark":
                raise FormatRefusal(
                    f"benchmarks[{index}] is {describe_value(raw)} without type_ 'generative_benchmark'"
                )
            parsed.append(
                _benchmark_v02(raw, index) if generation == GEN_02 else _benchmark_v04(raw, index, data, generation)
            )
    if cut is not None:
        note = _cut_note(cut, data)
        for bench in parsed:
            bench.notes.insert(0, note)
    if not parsed:
        raise FormatRefusal("GuideLLM 0.1 report with no benchmark in it")
    return [_run(bench, FORMAT_JSON) for bench in parsed]


# ---------------------------------------------------------------------------------------------------------------
# CSV

# (group, unit as in "Successful <unit>") -> GuideLLM metric, for the 0.4+ three-row header
_CSV_METRICS = {
    ("Request Latency", "Sec"): "request_latency",
    ("Streaming Iterations", "Count"): "request_streaming_iterations_count",
    ("Time to First Token", "ms"): "time_to_first_token_ms",
    ("Time to First Output Token", "ms"): "time_to_first_output_token_ms",
    ("Time per Output Token", "ms"): "time_per_output_token_ms",
    ("Inter Token Latency", "ms"): "inter_token_latency_ms",
    ("Server Throughput", "Requests/Sec"): "requests_per_second",
    ("Server Throughput", "Concurrency"): "request_concurrency",
    ("Token Metrics", "Input Tokens"): "prompt_token_count",
    ("Token Metrics", "Output Tokens"): "output_token_count",
    ("Token Metrics", "Total Tokens"): "total_token_count",
    ("Token Throughput", "Input Tokens/Sec"): "prompt_tokens_per_second",
    ("Token Throughput", "Output Tokens/Sec"): "output_tokens_per_second",
    ("Token Throughput", "Total Tokens/Sec"): "tokens_per_second",
    ("Token Streaming", "Output Tokens/Iter"): "output_tokens_per_iteration",
    ("Token Streaming", "Iter Tokens/Iter"): "iter_tokens_per_iteration",
}
_CSV_STAT = {"Mean": "mean", "Median": "median", "Std Dev": "std_dev", "Percentiles": "percentiles"}
_V02_PERCENTILE_SUFFIX = "[min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99, max]"
NOTE_CSV = (
    "GuideLLM's CSV holds no per-request data: the figures are its summary as reported; min and max are the "
    "first and last entries of its Percentiles cell ([min, p0.1, p1, p5, p10, p25, p75, p90, p95, p99, max]) "
    "and the median its own column."
)


def _cell_number(text: str, where: str) -> float | None:
    text = text.strip()
    if not text or text.lower() in ("none", "nan", "inf", "-inf", "null"):
        return None
    try:
        number = float(text)
    except ValueError:
        raise FormatRefusal(f"{where} is {describe_value(text)}, not a number") from None
    return number if math.isfinite(number) else None


def _percentile_cell(text: str, where: str) -> dict[str, float | None]:
    """GuideLLM's `[min, p0.1, …, p99, max]` cell (a Python list as text; `nan`/`None` may appear)."""
    cell = text.strip()
    if not cell:
        return {}
    if not (cell.startswith("[") and cell.endswith("]")):
        raise FormatRefusal(f"{where} is {describe_value(cell)}, not GuideLLM's [min, p0.1, …, p99, max] list")
    parts = cell[1:-1].split(",")
    if len(parts) != len(CSV_PERCENTILE_ORDER):
        raise FormatRefusal(
            f"{where} has {len(parts)} values; GuideLLM writes {len(CSV_PERCENTILE_ORDER)} "
            "(min, p0.1, p1, p5, p10, p25, p75, p90, p95, p99, max)"
        )
    return {key: _cell_number(part, where) for key, part in zip(CSV_PERCENTILE_ORDER, parts, strict=True)}


def _dist_from_cells(cells: Mapping[str, str], where: str, count: int | None) -> dict[str, Any]:
    dist: dict[str, Any] = {"count": count}
    for stat, text in cells.items():
        if stat == "percentiles":
            values = _percentile_cell(text, f"{where} Percentiles")
            dist["min"] = values.get("min")
            dist["max"] = values.get("max")
            dist["percentiles"] = {k: v for k, v in values.items() if k not in ("min", "max")}
        else:
            dist[stat] = _cell_number(text, f"{where} {stat}")
    values = [value for key, value in dist.items() if key not in ("count", "percentiles")]
    values += list(dist.get("percentiles", {}).values())
    return dist if any(value is not None for value in values) else {}


@dataclass
class _CsvRow:
    metrics: dict[str, dict[str, dict[str, Any]]]
    totals: dict[str, int | None]
    fields: dict[tuple[str, ...], str]


def _json_cell(text: str | None) -> Any:
    if not text:
        return None
    try:
        return bounded_loads(text)
    except json.JSONDecodeError:
        return text


def _read_csv_v04(rows: list[list[str]]) -> list[ImportedRun]:
    groups, names, units = rows[0], rows[1], rows[2]
    width = max(len(groups), len(names), len(units))
    header = [
        (groups[i] if i < len(groups) else "", names[i] if i < len(names) else "", units[i] if i < len(units) else "")
        for i in range(width)
    ]
    for needed in (("Request Counts", "Successful"), ("Benchmark", "Strategy")):
        if not any(h[:2] == needed for h in header):
            raise FormatRefusal(f"a three-row CSV header without GuideLLM's '{needed[0]} / {needed[1]}' column")
    runs = []
    data_rows = [row for row in rows[3:] if any(cell.strip() for cell in row)]
    if not data_rows:
        raise FormatRefusal("GuideLLM's CSV header with no benchmark row under it")
    for number, row in enumerate(data_rows, start=1):
        where = f"CSV benchmark row {number}"
        if len(row) > width:
            raise FormatRefusal(f"{where} has {len(row)} cells; the header has {width} columns")
        cells = {header[i]: row[i] if i < len(row) else "" for i in range(width)}

        def cell(group: str, name: str, unit: str = "", cells: dict[tuple[str, str, str], str] = cells) -> str:
            return cells.get((group, name, unit), "").strip()

        totals = {
            status: _count(
                _cell_number(
                    cell("Request Counts", status.capitalize()), f"{where} Request Counts {status.capitalize()}"
                ),
                f"{where} Request Counts {status.capitalize()}",
            )
            for status in STATUSES
        }
        metrics: dict[str, Any] = {"request_totals": totals}
        for (group, unit), metric in _CSV_METRICS.items():
            for status in ("successful", "errored", "incomplete"):
                name = f"{status.capitalize()} {unit}"
                stats = {_CSV_STAT[stat]: cell(group, name, stat) for stat in _CSV_STAT if (group, name, stat) in cells}
                if not stats:
                    continue
                count = (
                    totals.get(status) if metric not in ("inter_token_latency_ms", "time_per_output_token_ms") else None
                )
                dist = _dist_from_cells(stats, f"{where} {group} {name}", count)
                if dist:
                    metrics.setdefault(metric, {})[status] = dist
        strategy_type = cell("Benchmark", "Strategy")
        profile = _json_cell(cell("Run Info", "Profile"))
        run_index = _cell_number(cell("Run Info", "Run Index"), f"{where} Run Index")
        strategy: dict[str, Any] = {"type_": strategy_type}
        done = profile.get("completed_strategies") if isinstance(profile, dict) else None
        if isinstance(done, list) and run_index is not None:
            if 0 <= int(run_index) < len(done) and isinstance(done[int(run_index)], dict):
                strategy = done[int(run_index)]
        metadata = _json_cell(cell("Runtime Info", "Metadata"))
        arguments = _json_cell(cell("Runtime Info", "Arguments"))
        backend = _json_cell(cell("Run Info", "Backend"))
        report: dict[str, Any] = {"metadata": metadata if isinstance(metadata, dict) else {}}
        if isinstance(arguments, dict):
            report["config" if "spec" in arguments else "args"] = arguments
        raw = {
            "type_": "generative_benchmark",
            "config": {
                "strategy": strategy,
                "backend": backend if isinstance(backend, dict) else {},
                "profile": profile,
            },
            "scheduler_metrics": {},
            "metrics": metrics,
        }
        bench = _benchmark_v04(raw, number - 1, report, GEN_04)
        bench.started = None
        bench.window = None
        duration = _cell_number(cell("Timings", "Duration", "Sec"), f"{where} Timings Duration")
        bench.duration = duration
        bench.settings = {
            key: value
            for key, value in {
                "strategy": strategy,
                "profile": profile,
                "constraints": _json_cell(cell("Benchmark", "Constraints")),
                "backend": backend,
                "requests": _json_cell(cell("Run Info", "Requests")),
                "arguments": arguments,
            }.items()
            if value is not None
        }
        bench.reported_extra = {
            "start_time_local": cell("Timings", "Start Time") or None,
            "end_time_local": cell("Timings", "End Time") or None,
            "duration": duration,
            "warmup": _cell_number(cell("Timings", "Warmup", "Sec"), f"{where} Warmup"),
            "cooldown": _cell_number(cell("Timings", "Cooldown", "Sec"), f"{where} Cooldown"),
            "run_id": cell("Run Info", "Run ID") or None,
            "id": cell("Benchmark", "ID") or None,
        }
        bench.notes = [
            NOTE_CSV,
            "The CSV's Start Time is the local time of the machine that ran GuideLLM, without a "
            "zone: started_at is left empty (the text is kept in `reported`).",
        ]
        if not bench.tool_version:
            bench.notes.append(
                "The CSV names no GuideLLM version (its Runtime Info column is absent); its layout is "
                "that of GuideLLM 0.4–0.7."
            )
        run = _run(bench, FORMAT_CSV)
        runs.append(run)
    return runs


def _read_csv_v02(rows: list[list[str]]) -> list[ImportedRun]:
    header = [name.strip() for name in rows[0]]
    runs = []
    data_rows = [row for row in rows[1:] if any(cell.strip() for cell in row)]
    if not data_rows:
        raise FormatRefusal("GuideLLM 0.2–0.3 CSV header with no benchmark row under it")
    pattern = re.compile(r"^(Successful|Errored|Incomplete|Total) (.+) (mean|median|std dev|\[min, .*\])$")
    for number, row in enumerate(data_rows, start=1):
        where = f"CSV benchmark row {number}"
        if len(row) != len(header):
            raise FormatRefusal(f"{where} has {len(row)} cells; the header has {len(header)} columns")
        cells = dict(zip(header, row, strict=True))
        totals = {
            status: _count(
                _cell_number(
                    cells.get(f"{status.capitalize()} Requests", ""), f"{where} {status.capitalize()} Requests"
                ),
                f"{where} {status.capitalize()} Requests",
            )
            for status in STATUSES
        }
        grouped: dict[tuple[str, str], dict[str, str]] = {}
        for name, text in cells.items():
            match = pattern.match(name)
            if not match:
                continue
            status, display, stat = match.groups()
            stat_key = {"mean": "mean", "median": "median", "std dev": "std_dev"}.get(stat, "percentiles")
            if stat_key == "percentiles" and stat != _V02_PERCENTILE_SUFFIX:
                raise FormatRefusal(f"CSV column {name!r}: percentiles in an order this importer does not know")
            grouped.setdefault((display.lower().replace(" ", "_"), status.lower()), {})[stat_key] = text
        metrics: dict[str, Any] = {}
        for (metric, status), stats in grouped.items():
            count = totals.get(status) if metric not in ("inter_token_latency_ms", "time_per_output_token_ms") else None
            dist = _dist_from_cells(stats, f"{where} {status} {metric}", count)
            if dist:
                metrics.setdefault(metric, {})[status] = dist
        if "time_to_first_token_ms" not in metrics and "request_latency" not in metrics:
            raise FormatRefusal("a CSV with GuideLLM 0.2–0.3's first columns but no latency column")
        args = _json_cell(cells.get("Args"))
        worker = _json_cell(cells.get("Worker"))
        name = cells.get("Name", "").strip()
        duration = _cell_number(cells.get("Duration", ""), f"{where} Duration")
        bench = _Benchmark(
            index=number - 1,
            generation=GEN_02,
            metrics=metrics,
            totals=totals,
            strategy=args.get("strategy", {}) if isinstance(args, dict) else {},
            started=None,
            duration=duration,
            window=None,
            requests=None,
            model=worker.get("backend_model") if isinstance(worker, dict) else None,
            backend=worker.get("backend_type") if isinstance(worker, dict) else None,
            settings={
                key: value
                for key, value in {
                    "args": args,
                    "worker": worker,
                    "request_loader": _json_cell(cells.get("Request Loader")),
                }.items()
                if value is not None
            },
            reported_extra={
                "start_time_local": cells.get("Start Time") or None,
                "end_time_local": cells.get("End Time") or None,
                "duration": duration,
                "run_id": cells.get("Run Id") or None,
                "id": cells.get("Id") or None,
            },
            notes=[
                NOTE_CSV,
                "The CSV's Start Time is the local time of the machine that ran GuideLLM, without a zone: "
                "started_at is left empty (the text is kept in `reported`).",
            ],
            label=name or None,
            load=_label_from_display(name) if name else None,
        )
        runs.append(_run(bench, FORMAT_CSV))
    return runs


def read_csv(text: str) -> list[ImportedRun]:
    """Every benchmark row of a GuideLLM `benchmarks.csv` as one run (summary figures, as reported); FormatRefusal
    with the reason when the text is not such a file."""
    stripped = text.lstrip()
    if not stripped:
        raise FormatRefusal("an empty CSV table")
    if stripped[0] in "{[":
        raise FormatRefusal("JSON, not a CSV table")
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as error:
        raise FormatRefusal(f"not a readable CSV table ({error})") from None
    while rows and not any(cell.strip() for cell in rows[0]):
        rows.pop(0)
    if not rows:
        raise FormatRefusal("an empty CSV table")
    first = [cell.strip() for cell in rows[0]]
    if first[:4] == ["Type", "Run Id", "Id", "Name"]:
        return _read_csv_v02(rows)
    if len(rows) >= 3 and "Request Counts" in first and any(cell.strip() == "Strategy" for cell in rows[1]):
        if len(rows) < 4:
            raise FormatRefusal("GuideLLM's three-row CSV header with no benchmark row under it")
        return _read_csv_v04(rows)
    if "Request Counts" in first or "Run Info" in first:
        raise FormatRefusal(
            "a CSV whose first row names GuideLLM's column groups but without its three-row header "
            "(group, name, unit) and a benchmark row: the file is cut short"
        )
    return _refuse_csv(first)


def _refuse_csv(first: Sequence[str]) -> list[ImportedRun]:
    shown = ", ".join(cell for cell in first[:4] if cell) or "empty cells"
    raise FormatRefusal(
        f"a table whose first row ({shown}, …) is neither GuideLLM's three-row header (Run Info, "
        "Benchmark, …, Request Counts) nor its 0.2–0.3 header (Type, Run Id, Id, Name, …)"
    )

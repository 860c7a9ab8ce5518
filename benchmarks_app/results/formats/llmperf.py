"""Importer of ray-project/llmperf results: `*_summary.json` and `*_individual_responses.json`.

What the tool writes (read from llmperf's `token_benchmark_ray.py`, `src/llmperf/utils.py`,
`src/llmperf/common_metrics.py` and `src/llmperf/ray_clients/*`, every version since LLMPerfV2, December 2023; the
results `version` is the constant "2023-08-31" throughout, so it does not tell versions apart):

- `*_individual_responses.json`: a JSON list with one flat object per request: `error_code` (null on success),
  `error_msg`, `ttft_s`, `end_to_end_latency_s`, `inter_token_latency_s`, `request_output_throughput_token_per_s`,
  `number_input_tokens`, `number_output_tokens`, `number_total_tokens`. No timestamps, no order guarantee.
- `*_summary.json`: `LLMPerfResults.to_dict()` flattened with "_": `version`, `name`, `model`, `mean_input_tokens`,
  `stddev_input_tokens`, `mean_output_tokens`, `stddev_output_tokens`, `num_concurrent_requests`,
  `additional_sampling_params`, `results_<metric>_quantiles_p25…p99`, `results_<metric>_{mean,min,max,stddev}` for
  inter_token_latency_s, ttft_s, end_to_end_latency_s, request_output_throughput_token_per_s, number_input_tokens and
  number_output_tokens, then `results_num_requests_started`, `results_error_rate`, `results_number_errors`,
  `results_error_code_frequency`, `results_mean_output_throughput_token_per_s`, `results_num_completed_requests`,
  `results_num_completed_requests_per_min`, any `--metadata` pairs, and `timestamp` (when the file was written).

Traps handled here:

- llmperf's "inter_token_latency_s" is (TTFT + every gap) / count: the time to the last content chunk divided by the
  SSE chunk count (newer code) or by the re-tokenised output length (LLMPerfV2 until late 2024). It includes TTFT and
  is neither METRICS.md's ITL nor its TPOT: never mapped (kept in `reported`). Failed records may carry it undivided
  (the −100 records of the public Bedrock leaderboard file: ITL ≈ E2E).
- Output and input token counts come from a fixed client tokenizer (`hf-internal-testing/llama-tokenizer`, with BOS:
  17 for 16 generated tokens) whatever model is served, not the server's `usage`: not mapped to the canonical token
  counts, nor to NTPOT, TPOT or output-token throughput, which would inherit the error (kept in `reported`).
- `_min`/`_max` of the token counts are numpy integers serialised with `default=str`: **strings** ("489").
- The summary's `_stddev` is pandas' sample deviation (n − 1): converted exactly to the population deviation of
  METRICS.md's Stat with n = completed requests.
- A run in which every request failed writes `NaN` (a bare token, not strict JSON) for every statistic.
- `error_code` is the HTTP status, −1 for a client exception, or another code a wrapper chose (−100 "Output too few
  tokens N" in the public leaderboard data, with full timings): all are failures, as llmperf counts them.
- Failed requests keep `ttft_s`/`end_to_end_latency_s` of 0: not latencies.
- `timestamp` is taken when the results are written, at the end of the run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
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
    Stat,
    describe_value,
    finite,
    metrics_from_requests,
    stat_reported,
)
from sizing.kernel.jsonsafe import nonfinite_as_null

TOOL = "llmperf"
FORMAT_SUMMARY = "llmperf_summary"
FORMAT_REQUESTS = "llmperf_requests"

REQUEST_KEYS = (
    "error_code",
    "error_msg",
    "inter_token_latency_s",
    "ttft_s",
    "end_to_end_latency_s",
    "request_output_throughput_token_per_s",
    "number_total_tokens",
    "number_output_tokens",
    "number_input_tokens",
)
# the per-request fields that identify the format (present in every llmperf version)
_REQUIRED_KEYS = ("error_code", "ttft_s", "end_to_end_latency_s", "inter_token_latency_s")
_NUMERIC_KEYS = (
    "inter_token_latency_s",
    "ttft_s",
    "end_to_end_latency_s",
    "request_output_throughput_token_per_s",
    "number_total_tokens",
    "number_output_tokens",
    "number_input_tokens",
)
_SUMMARY_METRICS = (
    "inter_token_latency_s",
    "ttft_s",
    "end_to_end_latency_s",
    "request_output_throughput_token_per_s",
    "number_input_tokens",
    "number_output_tokens",
)
_QUANTILES = ("p25", "p50", "p75", "p90", "p95", "p99")
_RUN_KEYS = (
    "version",
    "name",
    "model",
    "mean_input_tokens",
    "stddev_input_tokens",
    "mean_output_tokens",
    "stddev_output_tokens",
    "num_concurrent_requests",
    "additional_sampling_params",
    "timestamp",
)

NOTE_ITL = (
    "llmperf's inter_token_latency_s is (TTFT + every gap) / count, the time to the last chunk divided by "
    "the chunk count or the re-tokenised output length: it includes TTFT, so it is neither METRICS.md's ITL "
    "nor its TPOT; itl_ms and tpot_ms are left out and the figure is kept in `reported`."
)
NOTE_TOKENS = (
    "llmperf counts tokens with a fixed client tokenizer (hf-internal-testing/llama-tokenizer, BOS "
    "included: 17 for 16 generated tokens) whatever model is served, not the server's usage: input_tokens, "
    "output_tokens, ntpot_ms and output_tokens_per_s are left out; its counts are kept in `reported`."
)
NOTE_E2E = (
    "e2e_ms is llmperf's end_to_end_latency_s (seconds, here in ms), from request start to the end of the stream."
)
NOTE_FAILED = (
    "Failed requests (a non-null error_code: an HTTP status, −1 for a client exception, or a wrapper's own "
    "code) are left out of every distribution, as llmperf does; their 0 latencies are placeholders."
)
NOTE_NO_SUCCESS = "No request succeeded: no latency distribution is given."


def _number(value: Any, where: str) -> float | None:
    """A number as llmperf writes it: a JSON number, NaN (None), or a number in a string (numpy integers are written
    with `default=str`); FormatRefusal for any other value."""
    if value is None:
        return None
    if isinstance(value, bool) or isinstance(value, list | dict):
        raise FormatRefusal(f"{where} is {describe_value(value)}, not a number")
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("nan", "none", "null", ""):
            return None
        number = finite(text)
        if number is None and text.lower().lstrip("+-") not in ("inf", "infinity"):
            raise FormatRefusal(f"{where} is {describe_value(value)}, not a number")
        return number
    return finite(value)


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None or timestamp <= 0:
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat().replace("+00:00", "Z")


def _error_code(value: Any, where: str) -> str | None:
    """llmperf's error code as text (None on success). NaN (pandas' missing value) also means success."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool) or isinstance(value, list | dict):
        raise FormatRefusal(f"{where} is {describe_value(value)}, not an error code")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


# ---------------------------------------------------------------------------------------------------------------
# Per-request file


def _record(raw: Any, index: int) -> tuple[RequestRecord, dict[str, float | None]]:
    where = f"request {index + 1}"
    if not isinstance(raw, dict):
        raise FormatRefusal(f"{where} is {describe_value(raw)}, not llmperf's per-request object")
    missing = [key for key in _REQUIRED_KEYS if key not in raw]
    if missing:
        raise FormatRefusal(f"{where} has no {', '.join(repr(k) for k in missing)}: not an llmperf per-request record")
    values = {key: _number(raw.get(key), f"{where} {key}") for key in _NUMERIC_KEYS}
    code = _error_code(raw.get("error_code"), f"{where} error_code")
    if code is None:
        status, error = RequestStatus.OK.value, None
        ttft = values["ttft_s"]
        e2e = values["end_to_end_latency_s"]
    else:
        message = raw.get("error_msg")
        status = RequestStatus.ERROR.value
        error = f"{code}: {message}" if isinstance(message, str) and message else code
        ttft = e2e = None  # placeholders (0) or the timings of a response llmperf rejected
    record = RequestRecord(
        status=status,
        error=error,
        ttft_ms=ttft * 1000 if ttft is not None else None,
        e2e_ms=e2e * 1000 if e2e is not None else None,
    )
    return record, values


def _pandas_quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _tool_summary(values: list[dict[str, float | None]], ok: list[bool]) -> dict[str, Any]:
    """The tool's own per-metric figures over the successful records, computed as llmperf's `metrics_summary` would
    (pandas: linear quantiles, sample standard deviation), so they can be compared with a matching summary file."""
    summary: dict[str, Any] = {}
    for key in _SUMMARY_METRICS:
        series = [v[key] for v, good in zip(values, ok, strict=True) if good and v[key] is not None]
        if not series:
            continue
        mean = sum(series) / len(series)
        summary[key] = {
            "quantiles": {
                f"p{round(q * 100)}": _pandas_quantile(series, q) for q in (0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
            },
            "mean": mean,
            "min": min(series),
            "max": max(series),
            "stddev": math.sqrt(sum((x - mean) ** 2 for x in series) / (len(series) - 1)) if len(series) > 1 else None,
        }
    return summary


def read_requests(text: str) -> list[ImportedRun]:
    """The run in an llmperf `*_individual_responses.json` (per-request records, recomputed); FormatRefusal with the
    reason when the text is not such a file."""
    data = load_json(text)
    if isinstance(data, dict):
        raise FormatRefusal("a JSON object, not llmperf's list of per-request records")
    if not isinstance(data, list):
        raise FormatRefusal(f"a JSON {describe_value(data)}, not llmperf's list of per-request records")
    if not data:
        raise FormatRefusal("an empty JSON list: no llmperf per-request record")
    if not isinstance(data[0], dict) or not all(key in data[0] for key in _REQUIRED_KEYS):
        raise FormatRefusal(
            "a JSON list whose first entry is not an llmperf per-request record (error_code, ttft_s, "
            "end_to_end_latency_s, inter_token_latency_s)"
        )
    parsed = [_record(raw, index) for index, raw in enumerate(data)]
    records = tuple(record for record, _ in parsed)
    ok = [record.status == RequestStatus.OK.value for record in records]
    completed = sum(ok)
    failed = len(records) - completed
    metrics = metrics_from_requests(records)
    codes: dict[str, int] = {}
    for record in records:
        if record.error is not None:
            code = record.error.split(":", 1)[0]
            codes[code] = codes.get(code, 0) + 1
    extra_keys = sorted({key for raw in data for key in raw if key not in REQUEST_KEYS})
    notes = [NOTE_ITL, NOTE_TOKENS]
    if metrics:
        notes += [NOTE_E2E, "Percentiles are recomputed by linear interpolation, as llmperf's pandas quantiles are."]
    else:
        notes.append(NOTE_NO_SUCCESS)
    if failed:
        notes.append(NOTE_FAILED)
        short = sum(1 for r in records if r.error and "too few tokens" in r.error.lower())
        if short:
            notes.append(
                f"{short} failed requests are 'Output too few tokens' rejections (a code the harness that "
                "wrote the file chose, not llmperf's own): the responses arrived but were shorter than asked "
                "(METRICS.md's short_output); they count as failed, as llmperf counts any error_code."
            )
    notes.append(
        "The per-request file has no timestamps, run length or load settings: started_at, duration_s, the "
        "load pattern and throughputs come only with the matching *_summary.json."
    )
    if extra_keys:
        notes.append(f"Fields beyond llmperf's own are ignored: {', '.join(extra_keys)}.")
    reported = {
        "records": len(records),
        "num_completed_requests": completed,
        "number_errors": failed,
        "error_code_frequency": codes,
        "summary_as_llmperf_computes_it": nonfinite_as_null(_tool_summary([v for _, v in parsed], ok)),
    }
    return [
        ImportedRun(
            format=FORMAT_REQUESTS,
            tool=TOOL,
            completed=completed,
            failed=failed,
            incomplete=None,
            metrics=metrics,
            reported=reported,
            requests=records,
            notes=tuple(notes),
        )
    ]


# ---------------------------------------------------------------------------------------------------------------
# Summary file


def _population_std(sample_std: float | None, n: int | None) -> float | None:
    if sample_std is None or not n:
        return None
    if n == 1:
        return 0.0
    return sample_std * math.sqrt((n - 1) / n)


def _summary_stat(data: Mapping[str, Any], metric: str, n: int | None, scale: float) -> Stat | None:
    prefix = f"results_{metric}"
    figures = {q: _number(data.get(f"{prefix}_quantiles_{q}"), f"{prefix}_quantiles_{q}") for q in _QUANTILES}
    std = _population_std(_number(data.get(f"{prefix}_stddev"), f"{prefix}_stddev"), n)
    return stat_reported(
        scale=scale,
        n=n,
        mean=_number(data.get(f"{prefix}_mean"), f"{prefix}_mean"),
        p50=figures["p50"],
        p90=figures["p90"],
        p95=figures["p95"],
        p99=figures["p99"],
        min=_number(data.get(f"{prefix}_min"), f"{prefix}_min"),
        max=_number(data.get(f"{prefix}_max"), f"{prefix}_max"),
        std=std,
    )


def _count(data: Mapping[str, Any], key: str) -> int | None:
    value = _number(data.get(key), key)
    if value is None:
        return None
    if value < 0 or not float(value).is_integer():
        raise FormatRefusal(f"{key} is {value!r}, not a count of requests")
    return int(value)


def read_summary(text: str) -> list[ImportedRun]:
    """The run in an llmperf `*_summary.json` (the tool's figures, as reported); FormatRefusal with the reason when
    the text is not such a file."""
    data = load_json(text)
    if not isinstance(data, dict):
        raise FormatRefusal(
            f"a JSON {'list' if isinstance(data, list) else describe_value(data)}, not llmperf's "
            "flattened summary object"
        )
    result_keys = [key for key in data if key.startswith("results_")]
    if not any(key.startswith(("results_ttft_s_", "results_end_to_end_latency_s_")) for key in result_keys):
        raise FormatRefusal(
            "a JSON object without llmperf's flattened 'results_ttft_s_…' / 'results_end_to_end_latency_s_…' keys"
        )
    completed = _count(data, "results_num_completed_requests")
    failed = _count(data, "results_number_errors")
    started = _count(data, "results_num_requests_started")
    if completed is None and started is not None and failed is not None:
        completed = started - failed
    notes = [NOTE_ITL, NOTE_TOKENS]
    metrics: dict[str, Stat] = {}
    if completed:
        for metric, key in (("ttft_s", "ttft_ms"), ("end_to_end_latency_s", "e2e_ms")):
            stat = _summary_stat(data, metric, completed, 1000.0)
            if stat is not None:
                metrics[key] = stat
        notes.append(NOTE_E2E)
        notes.append(
            "The standard deviations are converted from llmperf's sample deviation (n − 1) to the population "
            f"deviation, with n = {completed} completed requests."
        )
    else:
        notes.append(NOTE_NO_SUCCESS)
    if failed:
        notes.append(NOTE_FAILED)

    per_min = _number(data.get("results_num_completed_requests_per_min"), "results_num_completed_requests_per_min")
    requests_per_s = per_min / 60 if per_min is not None else None
    duration = completed / requests_per_s if completed and requests_per_s else None
    notes.append(
        "requests_per_s is llmperf's completed requests per minute / 60 (successful requests over the whole "
        "test, from the first send to the last response)."
    )
    timestamp = _number(data.get("timestamp"), "timestamp")
    started_at = None
    if timestamp is not None and duration is not None:
        started_at = _iso(timestamp - duration)
        notes.append(
            "started_at is llmperf's timestamp (taken when the results were written, at the end of the run, "
            "to the second) minus the run length; duration_s is completed requests / request rate, i.e. "
            "llmperf's own end − start."
        )
    elif timestamp is not None:
        notes.append(
            "llmperf's timestamp marks when the results were written (the end of the run); with no completed "
            "request the run length, and so started_at, is unknown."
        )

    clients = _number(data.get("num_concurrent_requests"), "num_concurrent_requests")
    load = (
        LoadPattern(kind=LoadKind.CONCURRENCY.value, concurrency=round(clients))
        if clients and clients > 0
        else LoadPattern()
    )
    if clients:
        notes.append(
            f"llmperf runs a closed loop: {round(clients)} clients, each sending its next request when the "
            "previous one returns."
        )
    settings = {key: data[key] for key in data if not key.startswith("results_") and key not in ("name", "timestamp")}
    model = data.get("model") if isinstance(data.get("model"), str) else None
    name = data.get("name") if isinstance(data.get("name"), str) else None
    version = data.get("version")
    reported = {key: data[key] for key in data if key.startswith("results_")}
    reported.update({key: data[key] for key in ("name", "timestamp", "version") if key in data})
    freq = data.get("results_error_code_frequency")
    if isinstance(freq, str) and freq not in ("{}", ""):
        reported["error_code_frequency_parsed"] = {
            code: int(count) for code, count in re.findall(r"['\"]?(-?\w+)['\"]?\s*:\s*(\d+)", freq)
        }
    return [
        ImportedRun(
            format=FORMAT_SUMMARY,
            tool=TOOL,
            tool_version=str(version) if version is not None else None,
            label=name.removesuffix("_summary") if name else None,
            model=model,
            backend=None,
            started_at=started_at,
            duration_s=duration,
            load=load,
            settings=nonfinite_as_null(settings),
            completed=completed,
            failed=failed,
            incomplete=None,
            metrics=metrics,
            reported=nonfinite_as_null(reported),
            output_tokens_per_s=None,
            requests_per_s=requests_per_s,
            total_tokens_per_s=None,
            notes=tuple(notes),
        )
    ]

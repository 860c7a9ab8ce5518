"""Importer of vLLM's serving benchmark results: `vllm bench serve --save-result [--save-detailed]` and the legacy
`benchmarks/benchmark_serving.py --save-result` files.

What the tool writes (read from vLLM's `vllm/benchmarks/serve.py` and the older `benchmarks/benchmark_serving.py`):
one JSON object per run: the run's arguments (`date`, `endpoint_type`, `backend`, `label`, `model_id`, `tokenizer_id`,
`num_prompts`, `request_rate`, `burstiness`, `max_concurrency`, `ramp_up_*`), any `--metadata KEY=VALUE` pairs merged
in at the top level (as strings), the results (`duration`, `completed`, `failed`, totals, throughputs,
`mean_/median_/std_/pNN_{ttft,tpot,itl,e2el}_ms`) and, with `--save-detailed`, one array entry per request
(`input_lens`, `output_lens`, `ttfts`, `itls`, `latencies`, `start_times`, `queue_times`, `generated_texts`,
`errors`), times in seconds.

Traps handled here:

- `--append-result` (and wrapper scripts, e.g. the llm-d results file) put several objects in one file, one per line;
  a sweep's `run=N.json` is pretty-printed with `indent=4`.
- `request_rate` is the *string* `"inf"` when everything is sent at once; `burstiness` can be a bare `Infinity`.
  `inf` with `max_concurrency` N is a closed loop of N clients; without it, an offline burst.
- Legacy files spell `"request_goodput:"` with a colon and have no `failed` (nor `latencies`, `start_times`):
  failed requests are counted from the non-empty `errors`, and E2E is rebuilt as TTFT + the sum of the gaps.
- A failed request keeps its `input_lens` entry (its prompt may be the very cause: 9200 tokens over an 8192 context)
  but its `ttfts`/`latencies` are `0.0` placeholders and its `output_lens` 0; they are not latencies and are left out.
- `start_times` are `time.perf_counter()` readings, not epoch seconds: kept relative to the first request.
- Without `--save-detailed` the per-request arrays are dropped, except `latencies` and `queue_times` (newer vLLM);
  then the distributions are vLLM's own summary figures, and E2E is recomputed from `latencies` when they agree.
- A run in which every request failed still writes `mean_ttft_ms` etc. as `0.0` (numpy's mean of `[0]`): those zeros
  are not taken as latencies.
- Percentile keys exist only for the `--metric-percentiles` chosen (default 99) and E2E only when
  `--percentile-metrics` names `e2el`; `date` is the client's local time when the file was saved, with no zone.
- `input_lens` are the client's dataset prompt lengths, not the server's `usage.prompt_tokens`.

SGLang's `bench_serving` was adapted from `benchmark_serving.py` and writes the same per-request arrays: its importer
uses `records_from_arrays` and `objects_in` from this module (and `nonfinite_as_null`, as every importer).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks_app.results.run import (
    FormatRefusal,
    ImportedRun,
    LoadKind,
    LoadPattern,
    RequestRecord,
    RequestStatus,
    Stat,
    finite,
    metrics_from_requests,
    stat_from_values,
    stat_reported,
)
from sizing.kernel.jsonsafe import nonfinite_as_null

FORMAT = "vllm_bench_serve"

PER_REQUEST_ARRAYS = (
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "start_times",
    "queue_times",
    "generated_texts",
    "errors",
)
# keys that only SGLang's bench_serving writes: a file with one of them is SGLang's, even where the rest looks alike
SGLANG_KEYS = (
    "total_output_tokens_retokenized",
    "mean_e2e_latency_ms",
    "median_e2e_latency_ms",
    "server_info",
    "accept_length",
    "total_throughput",
)
VLLM_KEYS = (
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "total_token_throughput",
    "mean_e2el_ms",
    "request_goodput",
    "request_goodput:",
    "endpoint_type",
    "burstiness",
    "date",
)
_RESULT_KEYS = frozenset(
    {
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "request_goodput:",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "rtfx",
        "rps_change_events",
        "total_input_sequences",
        "input_sequence_throughput",
        *PER_REQUEST_ARRAYS,
    }
)
_RESULT_PATTERN = re.compile(r"^((mean|median|std|p\d+(\.\d+)?)_\w+_ms|probe_\w+|spec_decode_\w+|diffusion_\w+)$")
# the run arguments vLLM itself writes; any other non-result key came from --metadata KEY=VALUE (or a sweep)
_ARGUMENT_KEYS = frozenset(
    {
        "date",
        "endpoint_type",
        "backend",
        "label",
        "model_id",
        "tokenizer_id",
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "ramp_up_strategy",
        "ramp_up_start_rps",
        "ramp_up_end_rps",
        "best_of",
        "use_beam_search",
    }
)
# vLLM's summary prefix -> canonical metric
_SUMMARY_METRICS = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2el", "e2e_ms"))


# ---------------------------------------------------------------------------------------------------------------
# Helpers shared with the SGLang importer


def _load_json(text: str) -> Any:
    # imported here, not at the top: `detect` imports every importer module while it loads
    from benchmarks_app.results.detect import load_json

    return load_json(text)


def _json_lines(text: str) -> list[tuple[int, Any]]:
    from benchmarks_app.results.detect import json_lines

    return list(json_lines(text))


def objects_in(
    text: str, tool: str, *, markers: Sequence[str] = (), rival: tuple[str, Sequence[str]] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The JSON objects of a result file with where each came from ("line 3", or "" for a whole-file object): one
    object (possibly pretty-printed), or one object per line (appended runs). FormatRefusal when the text is not
    JSON of that shape, or (before parsing a large file for nothing) when it has a `"completed"` key and none of
    the tool's `markers` keys anywhere."""
    stripped = text.strip()
    if not stripped:
        raise FormatRefusal("the file is empty")
    if not stripped.startswith("{"):
        kind = "a JSON array" if stripped.startswith("[") else "not a JSON object"
        raise FormatRefusal(f"{kind}: {tool} writes one JSON object per run (one per line when runs are appended)")
    if '"completed"' not in stripped:
        raise FormatRefusal(f"a JSON object without {tool}'s 'completed' count")
    if markers and not any(f'"{key}"' in stripped for key in markers):
        found = [key for key in (rival[1] if rival else ()) if f'"{key}"' in stripped]
        if rival and found:
            raise FormatRefusal(f"{rival[0]} (it has '{found[0]}'), not {tool}'s")
        raise FormatRefusal(
            f"a JSON object with 'completed' but none of {tool}'s result fields ({', '.join(markers[:4])}, ...)"
        )
    try:
        whole = _load_json(text)  # the text as given: parsed once for every importer
    except FormatRefusal as whole_refusal:
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) < 2:
            raise
        try:
            json_lines_result = [(f"line {number}", value) for number, value in _json_lines(text)]
        except FormatRefusal as lines_refusal:
            # a pretty-printed object cut short fails on its first line ("{"): the whole-file reason says more
            first = lines[0].strip()
            raise (whole_refusal if first in ("{", "{\n") or not first.endswith("}") else lines_refusal) from None
        objects = []
        for where, value in json_lines_result:
            if not isinstance(value, dict):
                raise FormatRefusal(f"{where} is not a JSON object") from None
            objects.append((where, value))
        return objects
    if not isinstance(whole, dict):
        raise FormatRefusal(f"not a JSON object: {tool} writes one JSON object per run")
    return [("", whole)]


def whole_number(value: Any, name: str, where: str) -> int | None:
    """A count the file gives (`completed`, `failed`), or None when absent; FormatRefusal when it is not a whole
    number ("1,234" with a thousands separator reads as 1234)."""
    if value is None:
        return None
    number = finite(value)
    if number is None or number < 0 or number != int(number):
        raise FormatRefusal(f"{_at(where)}'{name}' is not a count of requests ({value!r})")
    return int(number)


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _number_list(obj: Mapping[str, Any], key: str, where: str) -> list[float | None] | None:
    values = obj.get(key)
    if values is None:
        return None
    if not isinstance(values, list):
        raise FormatRefusal(f"{_at(where)}'{key}' is not a list of per-request values")
    out: list[float | None] = []
    append = out.append
    for index, value in enumerate(values):
        kind = type(value)  # the common cases first: a 100,000-request file has half a million of these
        if kind is float:
            append(value if math.isfinite(value) else None)
        elif kind is int:
            append(float(value))
        elif value is None:
            append(None)
        elif isinstance(value, bool) or finite(value) is None:
            raise FormatRefusal(f"{_at(where)}{key}[{index}] is not a number ({value!r})")
        else:
            append(finite(value))  # a number written as text, e.g. with a thousands separator
    return out


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _gap_lists(obj: Mapping[str, Any], key: str, where: str) -> list[list[float]] | None:
    values = obj.get(key)
    if values is None:
        return None
    if not isinstance(values, list):
        raise FormatRefusal(f"{_at(where)}'{key}' is not a list of per-request gap lists")
    out: list[list[float]] = []
    for index, gaps in enumerate(values):
        if gaps is None:
            out.append([])
            continue
        if not isinstance(gaps, list):
            raise FormatRefusal(f"{_at(where)}{key}[{index}] is not a list of gaps ({gaps!r})")
        # fast path: every gap a plain number (millions of them in a large file); else check one by one
        if all(type(gap) is float or type(gap) is int for gap in gaps):
            row = [float(gap) for gap in gaps]
            if math.isfinite(sum(row)):
                out.append(row)
                continue
        row = []
        for gap in gaps:
            number = finite(gap)
            if number is None or isinstance(gap, bool):
                raise FormatRefusal(f"{_at(where)}{key}[{index}] holds a gap that is not a number ({gap!r})")
            row.append(number)
        out.append(row)
    return out


def has_details(obj: Mapping[str, Any]) -> bool:
    """Whether the object carries per-request timing arrays (`ttfts`), i.e. was saved with details."""
    return isinstance(obj.get("ttfts"), list)


def records_from_arrays(
    obj: Mapping[str, Any], *, where: str = "", tool: str = "vLLM"
) -> tuple[list[RequestRecord], list[str]]:
    """The requests of the per-request arrays (`input_lens`, `output_lens`, `ttfts`, `itls`, `latencies`,
    `start_times`, `errors`, seconds) as records, and notes on how they were read.

    A request failed when its `errors` entry is not empty (without `errors`: when its TTFT, latency and output
    length are all zero). Its 0.0 placeholders are left out; its prompt length is kept. TPOT is
    (last chunk − first chunk) / (N_out − 1), the sum of the request's gaps, assuming one token in the first chunk;
    E2E is `latencies` where the file has them, else TTFT + the sum of the gaps (the last content chunk)."""
    ttfts = _number_list(obj, "ttfts", where) or []
    columns = {
        "input_lens": _number_list(obj, "input_lens", where),
        "output_lens": _number_list(obj, "output_lens", where),
        "latencies": _number_list(obj, "latencies", where),
        "start_times": _number_list(obj, "start_times", where),
    }
    itls = _gap_lists(obj, "itls", where)
    errors = obj.get("errors")
    if errors is not None and not isinstance(errors, list):
        raise FormatRefusal(f"{_at(where)}'errors' is not a list of per-request error texts")
    lengths = {"ttfts": len(ttfts), **{key: len(value) for key, value in columns.items() if value is not None}}
    if itls is not None:
        lengths["itls"] = len(itls)
    if errors is not None:
        lengths["errors"] = len(errors)
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{key} {size}" for key, size in lengths.items())
        raise FormatRefusal(f"{_at(where)}the per-request arrays have different lengths ({sizes})")

    # a request that never started keeps the 0.0 default: not a perf_counter reading
    if columns["start_times"] is not None:
        columns["start_times"] = [
            value if value is not None and value > 0 else None for value in columns["start_times"]
        ]
    starts = [value for value in (columns["start_times"] or []) if value is not None]
    origin = min(starts) if starts else None
    latencies, inputs, outputs = columns["latencies"], columns["input_lens"], columns["output_lens"]
    records: list[RequestRecord] = []
    streamed = False
    for index, ttft in enumerate(ttfts):
        gaps = itls[index] if itls is not None else []
        latency = latencies[index] if latencies is not None else None
        output = outputs[index] if outputs is not None else None
        error_text = errors[index] if errors is not None else None
        if errors is not None:
            failed = bool(error_text)
        else:
            failed = not ttft and not latency and not output
        start = columns["start_times"][index] if columns["start_times"] is not None else None
        start_s = start - origin if start is not None and origin is not None else None
        prompt = inputs[index] if inputs is not None else None
        input_tokens = round(prompt) if prompt is not None else None
        if failed:
            records.append(
                RequestRecord(
                    status=RequestStatus.ERROR.value,
                    error=str(error_text or "failed"),
                    start_s=start_s,
                    input_tokens=input_tokens,
                )
            )
            continue
        streamed = streamed or bool(gaps)
        output_tokens = round(output) if output is not None else None
        e2e_s = latency if latency is not None else (ttft + sum(gaps) if ttft is not None else None)
        tpot_ms = (sum(gaps) * 1000 / (output_tokens - 1)) if gaps and output_tokens and output_tokens >= 2 else None
        records.append(
            RequestRecord(
                status=RequestStatus.OK.value,
                start_s=start_s,
                ttft_ms=ttft * 1000 if ttft is not None else None,
                e2e_ms=e2e_s * 1000 if e2e_s is not None else None,
                tpot_ms=tpot_ms,
                itl_ms=tuple(gap * 1000 for gap in gaps),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
            )
        )

    notes = [
        f"Recomputed from the file's per-request arrays ({len(records)} requests); {tool}'s own summary is "
        "kept in reported.",
        "TPOT is recomputed per request as the sum of its inter-chunk gaps / (output tokens − 1), i.e. "
        "(last chunk − first chunk) / (N_out − 1), assuming the first chunk carries one token.",
    ]
    ok = [record for record in records if record.status == RequestStatus.OK.value]
    if ok and not streamed and any((record.output_tokens or 0) >= 2 for record in ok):
        # no gaps at all: the responses were not streamed (or came in one chunk); the first-token time is the
        # whole response's time and is not a TTFT
        records = [
            RequestRecord(**{**record.as_dict(), "itl_ms": (), "ttft_ms": None, "tpot_ms": None})
            if record.status == RequestStatus.OK.value
            else record
            for record in records
        ]
        notes.append(
            "No request has an inter-chunk gap: the responses were not streamed, so the file's TTFT is the "
            "whole response time and is left out, as are TPOT and ITL."
        )
    failed_count = len(records) - len(ok)
    if failed_count:
        notes.append(
            f"{failed_count} failed request(s) (non-empty 'errors'): their 0.0 TTFT/latency placeholders are "
            "left out; their prompt lengths are kept."
        )
    if latencies is None:
        notes.append(
            "E2E is rebuilt as TTFT + the sum of the request's gaps (to the last content chunk): the file "
            f"has no per-request latencies; {tool}'s own E2E runs to the end of the stream."
        )
    if columns["start_times"] is not None:
        notes.append(
            "start_times are time.perf_counter() readings, not wall-clock times: request starts are kept "
            "relative to the first request."
        )
    if inputs is not None:
        notes.append(
            "Input tokens are the client's prompt lengths (input_lens), not the server's usage.prompt_tokens."
            if tool == "vLLM"
            else "Input tokens are input_lens: the dataset's prompt lengths (recent SGLang versions put the "
            "server's usage.prompt_tokens there where the server reports it)."
        )
    return records, notes


def summary_stat(obj: Mapping[str, Any], prefix: str, n: int | None) -> Stat | None:
    """vLLM/SGLang summary keys `mean_{prefix}_ms`, `median_…`, `std_…`, `p90_…`, `p95_…`, `p99_…` as a Stat."""
    median = obj.get(f"median_{prefix}_ms", obj.get(f"p50_{prefix}_ms"))
    return stat_reported(
        n=n,
        mean=obj.get(f"mean_{prefix}_ms"),
        p50=median,
        p90=obj.get(f"p90_{prefix}_ms"),
        p95=obj.get(f"p95_{prefix}_ms"),
        p99=obj.get(f"p99_{prefix}_ms"),
        std=obj.get(f"std_{prefix}_ms"),
        max=obj.get(f"max_{prefix}_ms"),
    )


def token_means(obj: Mapping[str, Any], completed: int | None) -> dict[str, Stat]:
    """Mean input and output tokens per successful request, exactly, from the totals (the tools sum the successful
    requests only)."""
    found: dict[str, Stat] = {}
    if not completed:
        return found
    for key, total in (("input_tokens", "total_input_tokens"), ("output_tokens", "total_output_tokens")):
        value = finite(obj.get(total))
        if value is not None:
            stat = stat_reported(n=completed, mean=value / completed)
            if stat is not None:
                found[key] = stat
    return found


def load_pattern(rate_value: Any, concurrency_value: Any, *, ramp: bool = False) -> tuple[LoadPattern, list[str]]:
    """The load of a vLLM-lineage run: a finite `request_rate` is an open loop (capped by `max_concurrency`); "inf"
    (string or bare Infinity) with `max_concurrency` N is a closed loop of N clients, without it an offline burst."""
    concurrency = finite(concurrency_value)
    clients = int(concurrency) if concurrency is not None and concurrency > 0 else None
    notes: list[str] = []
    if ramp:
        return LoadPattern(kind=LoadKind.RATE.value, concurrency=clients), [
            "The request rate ramps up during the run (ramp_up_strategy): no single rate is given."
        ]
    if rate_value is None:
        return LoadPattern(kind=LoadKind.UNKNOWN.value, concurrency=clients), notes
    rate = finite(rate_value)
    infinite = rate is None and (_non_finite(rate_value) or str(rate_value).strip().lower() in ("inf", "infinity"))
    if rate is not None and rate > 0:
        return LoadPattern(kind=LoadKind.RATE.value, rate=rate, concurrency=clients), notes
    if infinite and clients:
        notes.append(
            f"request_rate inf with max_concurrency {clients}: every request is queued at once and "
            f"{clients} run at a time, a closed loop of {clients} clients."
        )
        return LoadPattern(kind=LoadKind.CONCURRENCY.value, concurrency=clients), notes
    if infinite:
        return LoadPattern(kind=LoadKind.OFFLINE.value), notes
    notes.append(f"request_rate {rate_value!r} is not a rate: the load pattern is unknown.")
    return LoadPattern(kind=LoadKind.UNKNOWN.value, concurrency=clients), notes


def varying_labels(runs_settings: Sequence[Mapping[str, Any]], *, skip: Sequence[str] = ()) -> list[str]:
    """A label per run of a file holding several: the settings whose values differ between the runs."""
    keys: list[str] = []
    for settings in runs_settings:
        for key in settings:
            if key not in keys and key not in skip:
                keys.append(key)
    varying = [key for key in keys if len({repr(settings.get(key)) for settings in runs_settings}) > 1]
    labels = []
    for index, settings in enumerate(runs_settings, start=1):
        parts = [f"{key}={settings.get(key)}" for key in varying]
        labels.append(", ".join(parts) if parts else f"run {index}")
    # runs with the same settings (a repeated measurement) are told apart by their place in the file
    repeated = {label for label in labels if labels.count(label) > 1}
    return [f"{label} (run {index})" if label in repeated else label for index, label in enumerate(labels, start=1)]


# ---------------------------------------------------------------------------------------------------------------
# The importer


def read(text: str) -> list[ImportedRun]:
    """The runs of a `vllm bench serve` / `benchmark_serving.py` result file (one object, or one per line)."""
    objects = objects_in(text, "vLLM", markers=VLLM_KEYS, rival=("an SGLang bench_serving result", SGLANG_KEYS))
    for where, obj in objects:
        _check_vllm(obj, where)
    runs = [_read_run(obj, where) for where, obj in objects]
    if len(runs) > 1:
        labels = varying_labels([run.settings for run in runs], skip=("date",))
        runs = [_with_label(run, label) for run, label in zip(runs, labels, strict=True)]
    return runs


def _with_label(run: ImportedRun, label: str) -> ImportedRun:
    data = {name: getattr(run, name) for name in run.__dataclass_fields__}
    data["label"] = run.label or label
    return ImportedRun(**data)


def _check_vllm(obj: Mapping[str, Any], where: str) -> None:
    if "completed" not in obj:
        raise FormatRefusal(f"{_at(where)}a JSON object without vLLM's 'completed' count")
    sglang = [key for key in SGLANG_KEYS if key in obj]
    if sglang:
        raise FormatRefusal(f"{_at(where)}an SGLang bench_serving result (it has '{sglang[0]}'), not vLLM's")
    if not any(key in obj for key in VLLM_KEYS):
        raise FormatRefusal(
            f"{_at(where)}a JSON object with 'completed' but none of vLLM's result fields "
            "(model_id, num_prompts, total_token_throughput, mean_e2el_ms, ...)"
        )


def _started_at(date: Any, duration_s: float | None) -> str | None:
    if not isinstance(date, str):
        return None
    try:
        saved = datetime.strptime(date.strip(), "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    start = saved - timedelta(seconds=duration_s or 0.0)
    return start.replace(microsecond=0).isoformat()


def _read_run(obj: Mapping[str, Any], where: str) -> ImportedRun:
    completed = whole_number(obj.get("completed"), "completed", where)
    failed = whole_number(obj.get("failed"), "failed", where)
    legacy = "request_goodput:" in obj or "failed" not in obj
    duration = finite(obj.get("duration"))
    notes: list[str] = []
    if legacy:
        notes.append("Legacy benchmark_serving.py key set ('request_goodput:' with a colon, no 'failed').")

    settings = {
        key: nonfinite_as_null(value)
        for key, value in obj.items()
        if key not in _RESULT_KEYS and not _RESULT_PATTERN.match(key)
    }
    reported = {
        key: nonfinite_as_null(value)
        for key, value in obj.items()
        if key not in PER_REQUEST_ARRAYS and key not in settings
    }
    metadata = [key for key in settings if key not in _ARGUMENT_KEYS]
    if metadata:
        notes.append(
            "Keys vLLM does not write itself (--metadata KEY=VALUE or a sweep's parameters: "
            f"{', '.join(metadata)}) are kept in settings as written."
        )
    load, load_notes = load_pattern(
        obj.get("request_rate"), obj.get("max_concurrency"), ramp=obj.get("ramp_up_strategy") is not None
    )
    notes += load_notes

    requests: tuple[RequestRecord, ...] = ()
    if has_details(obj):
        records, record_notes = records_from_arrays(obj, where=where, tool="vLLM")
        notes += record_notes
        requests = tuple(records)
        metrics: dict[str, Stat] = metrics_from_requests(records)
        ok = sum(1 for record in records if record.status == RequestStatus.OK.value)
        counted_failed = len(records) - ok
        if completed is not None and completed != ok:
            notes.append(f"The file says completed {completed}, but {ok} requests succeeded by their errors.")
        if failed is not None and failed != counted_failed:
            notes.append(f"The file says failed {failed}, but {counted_failed} requests have an error.")
        if failed is None:
            failed = counted_failed
            notes.append(f"The file has no 'failed' count: {counted_failed} failed request(s) counted from 'errors'.")
        completed = ok if completed is None else completed
    else:
        metrics = _summary_metrics(obj, completed, notes)
        notes.append(
            "No per-request data (saved without --save-detailed): the distributions are vLLM's summary "
            "figures, as reported. vLLM's ITL is the pooled inter-chunk gap, its TPOT "
            "(latency − TTFT) / (output tokens − 1) per request, its E2E (e2el) runs to the last SSE event."
        )
        prompts = finite(obj.get("num_prompts"))
        if failed is None and prompts is not None and completed is not None and prompts >= completed:
            failed = int(prompts) - completed
            notes.append(
                f"The file has no 'failed' count and no per-request errors: failed = num_prompts − completed "
                f"= {failed}, as every prompt is sent once."
            )
        elif failed is None:
            notes.append("The file has no 'failed' count and no per-request errors: failures are unknown.")
        _e2e_from_latencies(obj, completed, metrics, notes)
    if completed == 0:
        notes.append(
            "Every request failed: vLLM writes 0.0 for the latency summaries of such a run; they are not "
            "taken as latencies."
        )

    started_at = _started_at(obj.get("date"), duration)
    if started_at is not None:
        notes.append(
            "started_at is vLLM's 'date' (the client's local wall-clock time when the result was saved, "
            "with no time zone, read as UTC) minus the run's duration."
        )
    label = obj.get("label")
    return ImportedRun(
        format=FORMAT,
        tool="vllm",
        tool_version=None,
        label=str(label) if label else None,
        model=_text(obj.get("model_id")),
        backend=_text(obj.get("backend") or obj.get("endpoint_type")),
        started_at=started_at,
        duration_s=duration,
        load=load,
        settings=settings,
        completed=completed,
        failed=failed,
        incomplete=None,
        metrics=metrics,
        reported=reported,
        output_tokens_per_s=finite(obj.get("output_throughput")),
        requests_per_s=finite(obj.get("request_throughput")),
        total_tokens_per_s=finite(obj.get("total_token_throughput")),
        requests=requests,
        notes=tuple(notes),
    )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _summary_metrics(obj: Mapping[str, Any], completed: int | None, notes: list[str]) -> dict[str, Stat]:
    if completed == 0:
        return {}
    metrics: dict[str, Stat] = {}
    for prefix, key in _SUMMARY_METRICS:
        stat = summary_stat(obj, prefix, None if prefix == "itl" else completed)
        if stat is not None:
            metrics[key] = stat
    if "e2e_ms" not in metrics:
        notes.append("vLLM reports E2E only when --percentile-metrics names e2el: this file has no E2E summary.")
    metrics.update(token_means(obj, completed))
    return metrics


def _e2e_from_latencies(
    obj: Mapping[str, Any], completed: int | None, metrics: dict[str, Stat], notes: list[str]
) -> None:
    """Newer vLLM keeps `latencies` without --save-detailed: the E2E distribution of the successful requests (the
    failed ones hold 0.0) is recomputed from them when their count matches `completed`."""
    latencies = obj.get("latencies")
    if not isinstance(latencies, list) or not completed:
        return
    values = [finite(value) for value in latencies]
    positive = [value * 1000 for value in values if value is not None and value > 0]
    if len(positive) != completed:
        notes.append(
            f"'latencies' holds {len(positive)} non-zero values for {completed} completed requests: E2E "
            "is left as reported."
        )
        return
    stat = stat_from_values(positive)
    if stat is not None:
        metrics["e2e_ms"] = stat
        notes.append(
            "E2E is recomputed from the per-request 'latencies' the file keeps (zeros of failed requests left out)."
        )

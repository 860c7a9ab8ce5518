"""Importer of SGLang's serving benchmark results: `python -m sglang.bench_serving` (now also
`sglang.benchmark.serving`) with `--output-file`, optionally `--output-details`.

What the tool writes (read from SGLang's `python/sglang/bench_serving.py` and `python/sglang/benchmark/serving.py`):
it *appends* one JSON object per run to a JSON-lines file: the arguments (`tag`, `backend`, `dataset_name`,
`request_rate`, `max_concurrency`, `sharegpt_output_len`, `random_input_len`, `random_output_len`,
`random_range_ratio`), newer versions the server's `/server_info` (`server_info`), the results (`duration`,
`completed`, totals, `request_throughput`, `input_throughput`, `output_throughput`, `total_throughput`,
`mean_/median_/std_/p90_/p95_/p99_{e2e_latency,ttft,tpot,itl}_ms`, `concurrency`, `accept_length`) and, with
`--output-details`, the per-request arrays `input_lens`, `output_lens`, `ttfts`, `itls`, `generated_texts`,
`errors` (seconds). Older versions have fewer keys (the December 2024 files: no TTFT mean, no std or p90/p95).

Traps handled here:

- `request_rate` is the bare token `Infinity` (not valid strict JSON; Python's reader accepts it); newer versions
  write the string "trace" when replaying a trace's timestamps.
- There is no `failed` field: failures are counted from the non-empty `errors` (only with details; otherwise
  unknown). A failed request's `ttfts` is a 0.0 placeholder and its `output_lens` 0.
- Some versions nest the per-request arrays under `"details"`.
- `total_output_tokens` sums the server's `usage.completion_tokens`, or the *requested* output length where the
  server sends no usage; `total_output_tokens_retokenized` is the client tokenizer's count of the text (kept in
  `reported`).
- SGLang's E2E (`*_e2e_latency_ms`) ends at the stream's end (`[DONE]`), its TPOT is (E2E − TTFT)/(N − 1) with
  that end point. There are no per-request latencies: recomputed E2E runs to the last content chunk.
- The file has no date and no model name: the model comes from `server_info` where present (`model_path`, in
  `internal_states[0]` or, for prefill/decode disaggregation, the `decode` servers'), and `tool_version` is the
  server's `version` from `server_info` (the client does not record its own).
- `concurrency` is Σ E2E / duration (Little's law), the mean number in flight, not a client setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks_app.results.formats.vllm import (
    SGLANG_KEYS,
    VLLM_KEYS,
    load_pattern,
    objects_in,
    records_from_arrays,
    summary_stat,
    token_means,
    varying_labels,
    whole_number,
)
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
)
from sizing.kernel.jsonsafe import nonfinite_as_null

FORMAT = "sglang_bench_serving"

ARRAYS = (
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "generated_texts",
    "errors",
    "cached_tokens",
    "cached_tokens_details",
)
SETTINGS_KEYS = (
    "tag",
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
)
# server_info fields worth keeping with the run's settings (the full server_info is hundreds of keys)
SERVER_KEYS = (
    "version",
    "model_path",
    "served_model_name",
    "tp_size",
    "dp_size",
    "pp_size",
    "ep_size",
    "enable_dp_attention",
    "chunked_prefill_size",
    "max_total_num_tokens",
    "max_running_requests",
    "mem_fraction_static",
    "kv_cache_dtype",
    "quantization",
    "dtype",
    "attention_backend",
    "speculative_algorithm",
    "disaggregation_mode",
    "page_size",
    "schedule_policy",
)
_SUMMARY_METRICS = (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2e_latency", "e2e_ms"))


def read(text: str) -> list[ImportedRun]:
    """The runs of an SGLang bench_serving output file (one JSON object per line, runs appended)."""
    objects = objects_in(text, "SGLang", markers=SGLANG_KEYS, rival=("a vLLM bench serve result", VLLM_KEYS))
    for where, obj in objects:
        _check_sglang(obj, where)
    runs = [_read_run(obj, where) for where, obj in objects]
    if len(runs) > 1:
        labels = varying_labels([run.settings for run in runs], skip=("server",))
        runs = [_with_label(run, label) for run, label in zip(runs, labels, strict=True)]
    return runs


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _check_sglang(obj: Mapping[str, Any], where: str) -> None:
    if "completed" not in obj:
        raise FormatRefusal(f"{_at(where)}a JSON object without SGLang's 'completed' count")
    if not any(key in obj for key in SGLANG_KEYS):
        vllm = [key for key in VLLM_KEYS if key in obj]
        if vllm:
            raise FormatRefusal(f"{_at(where)}a vLLM bench serve result (it has '{vllm[0]}'), not SGLang's")
        raise FormatRefusal(
            f"{_at(where)}a JSON object with 'completed' but none of SGLang's result fields "
            "(mean_e2e_latency_ms, total_output_tokens_retokenized, server_info, ...)"
        )


def _with_label(run: ImportedRun, label: str) -> ImportedRun:
    data = {name: getattr(run, name) for name in run.__dataclass_fields__}
    data["label"] = run.label or label
    return ImportedRun(**data)


def _server(info: Any) -> dict[str, Any]:
    """The server_info entry that describes the serving engine: the top level, its `internal_states[0]` (newer),
    or the decode server's of a prefill/decode disaggregated deployment."""
    if not isinstance(info, Mapping):
        return {}
    candidates: list[Mapping[str, Any]] = [info]
    for key in ("decode", "internal_states"):
        value = info.get(key)
        if isinstance(value, list) and value and isinstance(value[0], Mapping):
            candidates.append(value[0])
            inner = value[0].get("internal_states")
            if isinstance(inner, list) and inner and isinstance(inner[0], Mapping):
                candidates.append(inner[0])
    server: dict[str, Any] = {}
    for candidate in candidates:
        for key in SERVER_KEYS:
            value = candidate.get(key)
            if key not in server and value is not None and not isinstance(value, Mapping | list):
                server[key] = nonfinite_as_null(value)
    if isinstance(info.get("prefill"), list) and isinstance(info.get("decode"), list):
        versions = sorted(
            {
                str(entry.get("version"))
                for part in ("prefill", "decode")
                for entry in info[part]
                if isinstance(entry, Mapping) and entry.get("version")
            }
        )
        server["disaggregated"] = {
            "prefill_servers": len(info["prefill"]),
            "decode_servers": len(info["decode"]),
            "versions": versions,
        }
    return server


def _read_run(obj: Mapping[str, Any], where: str) -> ImportedRun:
    details = obj.get("details") if isinstance(obj.get("details"), Mapping) else None
    source: Mapping[str, Any] = {**obj, **details} if details else obj
    completed = whole_number(obj.get("completed"), "completed", where)
    duration = finite(obj.get("duration"))
    notes: list[str] = []
    settings: dict[str, Any] = {key: nonfinite_as_null(obj[key]) for key in SETTINGS_KEYS if key in obj}
    server = _server(obj.get("server_info"))
    if server:
        settings["server"] = server
    reported = {
        key: nonfinite_as_null(value)
        for key, value in obj.items()
        if key not in ARRAYS and key not in ("details", "server_info") and key not in SETTINGS_KEYS
    }

    rate = obj.get("request_rate")
    if isinstance(rate, str) and rate.strip().lower() == "trace":
        load = LoadPattern(kind=LoadKind.UNKNOWN.value, concurrency=_clients(obj.get("max_concurrency")))
        notes.append("request_rate 'trace': requests were sent at a trace's own timestamps.")
    else:
        load, load_notes = load_pattern(rate, obj.get("max_concurrency"))
        notes += load_notes

    failed: int | None = None
    requests: tuple[RequestRecord, ...] = ()
    if isinstance(source.get("ttfts"), list):
        records, record_notes = records_from_arrays(source, where=where, tool="SGLang")
        if details:
            notes.append("The per-request arrays are nested under 'details'.")
        notes += record_notes
        requests = tuple(records)
        metrics: dict[str, Stat] = metrics_from_requests(records)
        ok = sum(1 for record in records if record.status == RequestStatus.OK.value)
        failed = len(records) - ok
        notes.append(
            f"SGLang writes no 'failed' count: {failed} failed request(s) counted from the non-empty 'errors'."
        )
        if completed is not None and completed != ok:
            notes.append(f"The file says completed {completed}, but {ok} requests succeeded by their errors.")
        completed = ok if completed is None else completed
    else:
        metrics = _summary_metrics(obj, completed, notes)
        notes.append(
            "No per-request data (run without --output-details): the distributions are SGLang's summary "
            "figures, as reported, and the number of failed requests is unknown (SGLang writes no "
            "'failed' count)."
        )
    if completed == 0:
        notes.append("No request succeeded: SGLang's latency summaries of such a run are not latencies.")
    retokenized = finite(obj.get("total_output_tokens_retokenized"))
    total_output = finite(obj.get("total_output_tokens"))
    if retokenized is not None and total_output is not None and retokenized != total_output:
        notes.append(
            f"Output tokens are the server's usage.completion_tokens ({total_output:.0f}; SGLang falls back "
            "to the requested length where the server sends no usage); the client tokenizer re-counts "
            f"{retokenized:.0f} (total_output_tokens_retokenized, kept in reported)."
        )
    if "concurrency" in obj:
        notes.append(
            "SGLang's 'concurrency' is Σ E2E / duration, the mean number of requests in flight (kept in "
            "reported), not a client setting."
        )

    model = server.get("served_model_name") or server.get("model_path")
    version = server.get("version")
    if version:
        notes.append(
            "tool_version is the SGLang server's version from server_info (the decode server's where "
            "prefill and decode are disaggregated): the client records none."
        )
    versions = server.get("disaggregated", {}).get("versions", [])
    if len(versions) > 1:
        notes.append("The prefill and decode servers run different SGLang versions: " + ", ".join(versions) + ".")
    if obj.get("request_throughput") is None and completed and duration:
        request_rate = completed / duration
        notes.append(
            "requests_per_s is recomputed as completed / duration (this SGLang version writes no request_throughput)."
        )
    else:
        request_rate = finite(obj.get("request_throughput"))
    total_rate = finite(obj.get("total_throughput"))
    totals = [finite(obj.get("total_input_tokens")), finite(obj.get("total_output_tokens"))]
    if total_rate is None and duration and all(value is not None for value in totals):
        total_rate = sum(value for value in totals if value is not None) / duration
        notes.append(
            "total_tokens_per_s is recomputed as (input + output tokens) / duration (this SGLang version "
            "writes no total_throughput)."
        )
    tag = obj.get("tag")
    return ImportedRun(
        format=FORMAT,
        tool="sglang",
        tool_version=str(version) if version else None,
        label=str(tag) if tag else None,
        model=str(model) if model else None,
        backend=str(obj["backend"]) if obj.get("backend") else None,
        started_at=None,
        duration_s=duration,
        load=load,
        settings=settings,
        completed=completed,
        failed=failed,
        incomplete=None,
        metrics=metrics,
        reported=reported,
        output_tokens_per_s=finite(obj.get("output_throughput")),
        requests_per_s=request_rate,
        total_tokens_per_s=total_rate,
        requests=requests,
        notes=tuple(notes),
    )


def _clients(value: Any) -> int | None:
    number = finite(value)
    return int(number) if number is not None and number > 0 else None


def _summary_metrics(obj: Mapping[str, Any], completed: int | None, notes: list[str]) -> dict[str, Stat]:
    if completed == 0:
        return {}
    metrics: dict[str, Stat] = {}
    for prefix, key in _SUMMARY_METRICS:
        stat = summary_stat(obj, prefix, None if prefix == "itl" else completed)
        if stat is not None:
            metrics[key] = stat
    notes.append(
        "SGLang's ITL is the pooled inter-chunk gap; its E2E runs to the end of the stream ([DONE]) and its "
        "TPOT is (E2E − TTFT) / (output tokens − 1) per request, with that end point."
    )
    missing = [
        name
        for name, key in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("ITL", "itl_ms"), ("E2E", "e2e_ms"))
        if key in metrics and metrics[key].mean is None
    ]
    if missing:
        notes.append(
            "This SGLang version writes no mean for " + ", ".join(missing) + ": only the figures it wrote are given."
        )
    metrics.update(token_means(obj, completed))
    return metrics

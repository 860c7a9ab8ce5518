"""One benchmark run on one footing: the canonical metrics of METRICS.md, whatever tool wrote the file.

An importer (`benchmarks_app.results.formats`) reads one tool's file into `ImportedRun`s (a file may hold several: a
sweep, or runs appended to one file). Latencies are milliseconds, token counts tokens, throughputs per second.

- `metrics` hold the canonical distributions: `ttft_ms`, `tpot_ms` (decode time per output token, request-averaged
  per request), `itl_ms` (pooled inter-chunk gaps), `e2e_ms`, `ntpot_ms` (E2E / output tokens), `input_tokens`,
  `output_tokens`. Each is a `Stat` whose `source` says whether it was recomputed from the file's per-request data
  ("recomputed") or copied from the tool's summary ("reported"). A percentile computed from fewer samples than
  METRICS.md allows (p90 < 10, p95 < 20, p99 < 100) is still given but named in `insufficient`.
- `reported` keeps the tool's own summary fields as the tool wrote them (units and definitions of the tool), so a
  reader can check every canonical figure against the file.
- `notes` say, in words, where a tool's field could not be mapped exactly (GuideLLM's TPOT includes TTFT; llmperf's
  ITL includes TTFT; AIPerf counts tokens with a client tokenizer, ...).

>>> stat = stat_from_values([10.0, 20.0, 30.0, 40.0])
>>> stat.mean, stat.p50, stat.n, stat.source, stat.insufficient
(25.0, 25.0, 4, 'recomputed', ('p90', 'p95', 'p99'))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

PERCENTILES = (50, 90, 95, 99)
# below this many samples a percentile is marked insufficient (METRICS.md: never p99 with n < 100)
MIN_SAMPLES = {50: 1, 90: 10, 95: 20, 99: 100}
METRIC_KEYS = ("ttft_ms", "ttft_sched_ms", "tpot_ms", "itl_ms", "e2e_ms", "ntpot_ms", "input_tokens", "output_tokens")


class Source(StrEnum):
    RECOMPUTED = "recomputed"  # from the file's per-request data, by METRICS.md's definition
    REPORTED = "reported"  # the tool's own summary figure, as reported


class LoadKind(StrEnum):
    RATE = "rate"  # open loop at a request rate
    CONCURRENCY = "concurrency"  # closed loop with a fixed number of clients
    OFFLINE = "offline"  # everything sent at once (rate "inf")
    UNKNOWN = "unknown"


class RequestStatus(StrEnum):
    OK = "ok"
    ERROR = "error"
    INCOMPLETE = "incomplete"  # cut by the end of the run: neither a success nor an error


def finite(value: Any) -> float | None:
    """A float, or None for None, NaN, ±Infinity, booleans and text that is not a number ("1,234.5" reads as
    1234.5: thousands separators occur in real files)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip().replace(",", "")
        if not value:
            return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def describe_value(value: Any) -> str:
    """A JSON value named for a refusal message: "the text 'fast'", "a list", "null".

    >>> describe_value("fast"), describe_value([1]), describe_value(None), describe_value(True)
    ("the text 'fast'", 'a list', 'null', 'the boolean true')
    """
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else f"a {type(value).__name__}"


@dataclass(frozen=True, kw_only=True)
class Stat:
    """A distribution's summary; None where the file does not say."""

    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None
    std: float | None = None
    n: int | None = None
    source: str = Source.REPORTED.value
    insufficient: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["insufficient"] = list(self.insufficient)
        return data


def _insufficient(n: int | None) -> tuple[str, ...]:
    if n is None:
        return ()
    return tuple(f"p{q}" for q in PERCENTILES if n < MIN_SAMPLES[q])


def as_array(values: Sequence[Any]) -> np.ndarray:
    """Floats of `values` with NaN where a value is None or not a number (fast for plain numbers: a 1.5-million
    gap run converts in a fraction of a second; text such as "1,234.5" takes the careful path)."""
    try:
        return np.fromiter((np.nan if v is None else v for v in values), dtype=np.float64, count=len(values))
    except (TypeError, ValueError):
        return np.asarray([np.nan if finite(v) is None else finite(v) for v in values], dtype=np.float64)


def stat_from_values(values: Sequence[float | None], *, weights: Sequence[float] | None = None) -> Stat | None:
    """The distribution of `values` (None and non-finite values left out) with linear-interpolation percentiles
    (numpy's default, as vLLM and SGLang compute theirs); `weights` (e.g. tokens per chunk) make it weighted,
    with nearest-rank percentiles. None when no value is left."""
    data = as_array(values)
    keep = np.isfinite(data)
    data = data[keep]
    if not len(data):
        return None
    if weights is None:
        quantiles = np.percentile(data, PERCENTILES)
        mean, std, n = float(data.mean()), float(data.std()), len(data)
    else:
        w = np.asarray(weights, dtype=np.float64)[keep]
        order = np.argsort(data)
        data, w = data[order], w[order]
        cumulative = np.cumsum(w)
        total = float(cumulative[-1])
        quantiles = [data[min(len(data) - 1, int(np.searchsorted(cumulative, total * q / 100)))] for q in PERCENTILES]
        mean = float((data * w).sum() / total)
        std = float(math.sqrt(max(0.0, float((w * (data - mean) ** 2).sum() / total))))
        n = round(total)
    return Stat(
        mean=mean,
        **{f"p{q}": float(v) for q, v in zip(PERCENTILES, quantiles, strict=True)},
        min=float(data.min()),
        max=float(data.max()),
        std=std,
        n=n,
        source=Source.RECOMPUTED.value,
        insufficient=_insufficient(n),
    )


def stat_reported(*, scale: float = 1.0, n: int | None = None, **figures: Any) -> Stat | None:
    """A Stat from a tool's summary figures (mean=, p50=, p90=, p95=, p99=, min=, max=, std=), each multiplied by
    `scale` (e.g. 1000 for seconds to milliseconds); None when the tool gives none of them."""
    values = {
        key: finite(value)
        for key, value in figures.items()
        if key in ("mean", "p50", "p90", "p95", "p99", "min", "max", "std")
    }
    values = {key: (value * scale if value is not None else None) for key, value in values.items()}
    if all(value is None for value in values.values()):
        return None
    return Stat(**values, n=n, source=Source.REPORTED.value, insufficient=_insufficient(n))


@dataclass(frozen=True, kw_only=True)
class LoadPattern:
    kind: str = LoadKind.UNKNOWN.value
    rate: float | None = None  # requests per second (open loop)
    concurrency: int | None = None  # clients (closed loop) or the tool's max-concurrency cap

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class RequestRecord:
    """One request as the file records it (None where it does not say)."""

    status: str = RequestStatus.OK.value
    error: str | None = None
    start_s: float | None = None  # seconds after the run's first request was sent
    ttft_ms: float | None = None
    ttft_sched_ms: float | None = None  # first token − scheduled send (open loops: includes client queueing)
    e2e_ms: float | None = None
    tpot_ms: float | None = None
    itl_ms: tuple[float, ...] = ()  # inter-chunk gaps, in order
    input_tokens: int | None = None
    output_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["itl_ms"] = list(self.itl_ms)
        return data


def request_tpot_ms(record: RequestRecord) -> float | None:
    """METRICS.md's TPOT of one request: its own figure, else (E2E − TTFT) / (N_out − 1) when N_out ≥ 2.

    The fallback takes E2E as the last token's time (vLLM's and our generator's E2E); a tool whose E2E ends at the
    stream's close, or whose token counts come from another model's tokenizer (llmperf), must give `tpot_ms`
    itself or leave `output_tokens` empty, or this invents a TPOT."""
    if record.tpot_ms is not None:
        return record.tpot_ms
    if record.e2e_ms is None or record.ttft_ms is None or not record.output_tokens or record.output_tokens < 2:
        return None
    return (record.e2e_ms - record.ttft_ms) / (record.output_tokens - 1)


def metrics_from_requests(records: Sequence[RequestRecord]) -> dict[str, Stat]:
    """The canonical distributions over the successful requests (errors and incomplete requests left out)."""
    ok = [r for r in records if r.status == RequestStatus.OK.value]
    found: dict[str, Stat | None] = {
        "ttft_ms": stat_from_values([r.ttft_ms for r in ok]),
        "ttft_sched_ms": stat_from_values([r.ttft_sched_ms for r in ok]),
        "tpot_ms": stat_from_values([request_tpot_ms(r) for r in ok]),
        "itl_ms": stat_from_values([gap for r in ok for gap in r.itl_ms]),
        "e2e_ms": stat_from_values([r.e2e_ms for r in ok]),
        "ntpot_ms": stat_from_values(
            [r.e2e_ms / r.output_tokens if r.e2e_ms is not None and r.output_tokens else None for r in ok]
        ),
        "input_tokens": stat_from_values([r.input_tokens for r in ok]),
        "output_tokens": stat_from_values([r.output_tokens for r in ok]),
    }
    return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True, kw_only=True)
class ImportedRun:
    """One run read from a tool's file."""

    format: str  # the importer's id, e.g. "vllm_bench_serve"
    tool: str  # "vllm", "sglang", "guidellm", "aiperf", "genai_perf", "llmperf", "inference_perf", "llm_sizing"
    tool_version: str | None = None
    label: str | None = None  # which benchmark of a file holding several (a sweep's point)
    model: str | None = None
    backend: str | None = None  # the engine or API the tool talked to, as the file names it
    started_at: str | None = None  # ISO 8601, UTC, when the file says
    duration_s: float | None = None
    load: LoadPattern = field(default_factory=LoadPattern)
    settings: Mapping[str, Any] = field(default_factory=dict)  # the tool's run settings, as written
    completed: int | None = None  # successful requests
    failed: int | None = None  # requests that ended in an error
    incomplete: int | None = None  # cut by the end of the run
    metrics: Mapping[str, Stat] = field(default_factory=dict)
    reported: Mapping[str, Any] = field(default_factory=dict)
    output_tokens_per_s: float | None = None
    requests_per_s: float | None = None
    total_tokens_per_s: float | None = None
    requests: tuple[RequestRecord, ...] = ()
    notes: tuple[str, ...] = ()
    # our own generator's results (issue 7): the endpoint's metrics scraped during the run (a
    # benchmarks_app.results.timeline.MemoryTimeline, POSIX times), the faults injected ({"t_s": seconds on the requests'
    # `start_s` clock, "label", "ok", "detail"}) and the scenario ({"kind", "peak_concurrency", "criteria"})
    timeline: Any = None
    faults: tuple[Mapping[str, Any], ...] = ()
    scenario: Mapping[str, Any] | None = None

    def as_dict(self, *, with_requests: bool = False) -> dict[str, Any]:
        data = {
            "format": self.format,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "label": self.label,
            "model": self.model,
            "backend": self.backend,
            "started_at": self.started_at,
            "duration_s": self.duration_s,
            "load": self.load.as_dict(),
            "settings": dict(self.settings),
            "completed": self.completed,
            "failed": self.failed,
            "incomplete": self.incomplete,
            "metrics": {key: stat.as_dict() for key, stat in self.metrics.items()},
            "reported": dict(self.reported),
            "output_tokens_per_s": self.output_tokens_per_s,
            "requests_per_s": self.requests_per_s,
            "total_tokens_per_s": self.total_tokens_per_s,
            "request_count": len(self.requests),
            "notes": list(self.notes),
        }
        if with_requests:
            data["requests"] = [record.as_dict() for record in self.requests]
        return data


class FormatRefusal(Exception):
    """This importer does not read the text; the reason says why, in words (shown in the 400)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

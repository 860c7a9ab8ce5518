"""Engine boot logs (DESIGN §7): what vLLM or SGLang printed while starting, read into bytes.

Delivery engineers paste a startup log, whole or a fragment, with whatever their logging setup put in front of
each line ("(APIServer pid=6539) INFO 04-18 20:22:57 [utils.py:233] ", "vLLM STDOUT: ",
"(VllmWorker rank=0 pid=7) ", "[2025-01-01 10:00:00 TP0] "), colour codes and Windows line endings.
`bootlog_parse` finds the engine, its version, its flags and every memory figure; `bootlog_compare` sets the
figures against an estimate; `bootlog_calibration` turns them into the runtime terms a later estimate of the same
deployment should use instead of the defaults.

Units, as the engines mean them (read in their source, per version, next to each pattern below): every memory
figure vLLM and SGLang print is bytes / 2^30, whatever label is printed with it. vLLM printed "GB" for
`/ float(2**30)` up to 0.9 ("Loading model weights took 14.9888 GB", "Model loading took 6.0160 GB") and "GiB"
(`GiB_bytes`, `1 << 30`) everywhere else; SGLang prints "GB" for `get_available_gpu_memory()`, which returns
`free / (1 << 30)`, and for `/ GB` with `GB = 1024 * 1024 * 1024` (mem_cache/memory_pool.py). So "GB" here is
2^30 bytes, never 10^9.

Rounding rule: a figure printed as v units becomes `round(Decimal(v) × unit)` bytes: the exact decimal product,
rounded half to even. The engine already rounded v to 2 or 4 decimals, so a 2-decimal GiB figure is ±0.005 GiB
(±5,368,709 bytes) of what the engine measured; when one figure is printed several times, the most precise
printing wins.

>>> log = bootlog_parse("INFO 12-13 19:54:18 model_runner.py:1077] Loading model weights took 14.9888 GB")
>>> (log.engine, log.weights_bytes)  # round(14.9888 × 2^30): the "GB" is GiB
('vllm', 16094101452)
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.units import GiB, MiB, format_bytes

VLLM = "vllm"
SGLANG = "sglang"

# What a printed unit means in bytes, as both engines compute it (module docstring): "GB" is `/ 2**30`.
_PRINTED_UNIT_BYTES: dict[str, int] = {"gib": GiB, "gb": GiB, "mib": MiB, "bytes": 1}
_EXACT = 99  # the precision rank of a figure printed in bytes: nothing beats it
# vLLM's default block size on CUDA (CacheConfig.block_size) when a V0 log gives blocks but not the size.
VLLM_DEFAULT_BLOCK_SIZE = 16

_BYTE_FIGURES = (
    "total_gpu_memory_bytes",
    "budget_bytes",
    "weights_bytes",
    "non_torch_bytes",
    "activation_peak_bytes",
    "kv_cache_bytes",
    "cuda_graph_bytes",
)
_FIGURES = (
    *_BYTE_FIGURES,
    "gpu_memory_utilization",
    "kv_cache_tokens",
    "num_gpu_blocks",
    "max_concurrency",
    "max_concurrency_tokens_per_request",
    "tensor_parallel_size",
    "max_model_len",
    "model",
    "engine_version",
)


@dataclass(frozen=True, kw_only=True)
class BootLog:
    """What one engine startup log says. Memory in bytes (per GPU, as each worker prints it), lengths in tokens.

    `flags` holds the settings the log states: the arguments the engine echoes (vLLM's "non-default args: {...}"
    or older "args: Namespace(...)", SGLang's "server_args=ServerArgs(...)") as given, completed by the effective
    values of vLLM's "Initializing ... engine ... with config:" line (dtype, kv_cache_dtype, quantization, ...)
    and SGLang's scheduler line (chunked_prefill_size, max_prefill_tokens, max_running_requests) for keys the
    arguments leave out or leave None. `lines` maps each figure set here to the log line it was read from;
    `unparsed_memory_lines` lists lines with a memory quantity that no pattern read.
    """

    engine: str  # "vllm" | "sglang"
    engine_version: str | None = None  # as the log prints it ("0.8.5.post1")
    # vLLM: which engine the lines come from: "v0" (llm_engine.py's banner, V0 worker.py's profiling, the
    # executor's "# GPU blocks"/"# cuda blocks"), "v1" (core.py's V1 banner, gpu_worker.py, gpu_model_runner.py,
    # V1's KV-cache lines), None when the log says neither (or both, equally: a warning)
    engine_mode_hint: str | None = None
    # vLLM: without a printed version, the oldest release whose V0 wording the log has ("0.7.0"): the release
    # the log is compared with (a warning says so); None when a version is printed or the wording dates nothing
    engine_version_inferred: str | None = None
    model: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    total_gpu_memory_bytes: int | None = None
    budget_bytes: int | None = None  # vLLM: total × gpu_memory_utilization ("the current vLLM instance can use")
    weights_bytes: int | None = None
    non_torch_bytes: int | None = None
    activation_peak_bytes: int | None = None
    kv_cache_bytes: int | None = None
    cuda_graph_bytes: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens_per_request: int | None = None
    tensor_parallel_size: int | None = None
    max_model_len: int | None = None
    lines: dict[str, str] = field(default_factory=dict)
    unparsed_memory_lines: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class ComparisonLine:
    """One logged figure against the estimate. difference = estimated − logged (positive: we over-estimate);
    relative_difference = difference / logged (None when either is missing or the logged figure is 0)."""

    figure: str
    logged_bytes_or_value: int | float
    estimated: int | float | None
    difference: int | float | None
    relative_difference: float | None
    unit: str  # "bytes" | "tokens" | "x"
    source_line: str


# ---------------------------------------------------------------------------------------------------------------
# Reading


class _Reader:
    """Collects figures line by line; when a figure is printed more than once the most precise printing wins,
    then the first (later equal-rank values that differ become a warning: several ranks, or a restart)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.ranks: dict[str, tuple[int, int]] = {}
        self.lines: dict[str, str] = {}
        self.conflicts: dict[str, list[Any]] = {}
        self.args: dict[str, Any] = {}  # echoed arguments, first line wins per key
        self.arg_lines: dict[str, str] = {}
        self.effective: dict[str, Any] = {}  # settings stated by config/scheduler lines
        self.consumed: tuple[int, str] | None = None  # vLLM's "weights + non-torch" figure
        self.peak_torch: tuple[int, str] | None = None  # vLLM 0.6.4's "weights + activation peak" figure
        self.warnings: list[str] = []
        self.votes: dict[str, int] = {VLLM: 0, SGLANG: 0}
        self.modes: dict[str, tuple[int, str]] = {}  # "v0"/"v1" -> (strength, first line): the strongest sign
        self.v0_format: tuple[int, str, str, str] | None = None  # (rank, oldest release, releases, line)

    def mode(self, mode: str, strength: int, line: str) -> None:
        """A sign that the log comes from vLLM's V0 or V1 engine; a banner (strength 2) outweighs a file name."""
        if mode not in self.modes or strength > self.modes[mode][0]:
            self.modes[mode] = (strength, line)

    def dated(self, rank: int, oldest: str, releases: str, line: str) -> None:
        """A V0 wording first printed by `oldest` (`releases` in words); the most specific wording wins."""
        if self.v0_format is None or rank > self.v0_format[0]:
            self.v0_format = (rank, oldest, releases, line)

    def put(self, figure: str, value: Any, line: str, rank: tuple[int, int] = (0, 0)) -> None:
        if value is None:
            return
        if figure not in self.values or rank > self.ranks[figure]:
            self.values[figure], self.ranks[figure], self.lines[figure] = value, rank, line
        elif rank == self.ranks[figure] and value != self.values[figure]:
            seen = self.conflicts.setdefault(figure, [self.values[figure]])
            if value not in seen:
                seen.append(value)

    def memory(self, figure: str, number: str, unit: str, line: str, *, kind: int = 0) -> None:
        """Store a printed memory figure; `kind` -1 ranks it below every measured printing (estimates)."""
        self.put(figure, _bytes(number, unit), line, (kind, _precision(number, unit)))

    def arg(self, key: str, value: Any, line: str) -> None:
        if key not in self.args:
            self.args[key], self.arg_lines[key] = value, line

    def setting(self, key: str, value: Any) -> None:
        self.effective.setdefault(key, value)


_NUM = r"-?\d[\d,]*(?:\.\d+)?"


def _mem(name: str) -> str:
    """A number and the memory unit printed after it, as groups `name` and `name_u`."""
    return rf"(?P<{name}>{_NUM})\s*(?P<{name}_u>(?i:gib|gb|mib|bytes))"


def _number(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def _bytes(number: str, unit: str) -> int:
    return round(_number(number) * _PRINTED_UNIT_BYTES[unit.lower()])


def _precision(number: str, unit: str) -> int:
    if unit.lower() == "bytes":
        return _EXACT
    return len(number.partition(".")[2])


def _int(text: str) -> int:
    return int(text.replace(",", ""))


Handler = Callable[[re.Match[str], _Reader, str], None]


@dataclass(frozen=True, kw_only=True)
class _Rule:
    engine: str
    pattern: re.Pattern[str]
    handler: Handler | None  # None: a line we recognise that carries no figure we keep
    sign: bool = False  # a sign of the engine's kind only: the line still counts as unread (and casts no vote)


def _figure(figure: str, *, kind: int = 0) -> Handler:
    """Store group `v` (with its unit `v_u`) as `figure`, when the line printed it."""

    def handle(match: re.Match[str], reader: _Reader, line: str) -> None:
        if match["v"] is not None:
            reader.memory(figure, match["v"], match["v_u"], line, kind=kind)

    return handle


def _rule(engine: str, pattern: str, handler: Handler | None = None, *, sign: bool = False) -> _Rule:
    return _Rule(engine=engine, pattern=re.compile(pattern), handler=handler, sign=sign)


# --- vLLM ---------------------------------------------------------------------------------------------------


def _vllm_utilization(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("gpu_memory_utilization", float(match["u"]), line, (0, len(match["u"].partition(".")[2])))


def _vllm_budget_line(match: re.Match[str], reader: _Reader, line: str) -> None:
    _vllm_utilization(match, reader, line)
    reader.memory("budget_bytes", match["v"], match["v_u"], line)


def _vllm_free_total(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.memory("total_gpu_memory_bytes", match["v"], match["v_u"], line)


def _vllm_consumed(match: re.Match[str], reader: _Reader, line: str) -> None:
    if reader.consumed is None:
        reader.consumed = (_bytes(match["v"], match["v_u"]), line)


def _vllm_peak_torch(match: re.Match[str], reader: _Reader, line: str) -> None:
    if reader.peak_torch is None:
        reader.peak_torch = (_bytes(match["v"], match["v_u"]), line)


def _vllm_blocks(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("num_gpu_blocks", _int(match["gpu"]), line)


def _vllm_kv_tokens(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("kv_cache_tokens", _int(match["t"]), line)


def _vllm_concurrency(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("max_concurrency_tokens_per_request", _int(match["t"]), line)
    reader.put("max_concurrency", float(match["x"]), line)


def _version(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("engine_version", match["ver"], line)


def _vllm_engine_banner(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("engine_version", match["ver"], line)
    reader.mode("v1" if match["v1"] else "v0", 2, line)


def _engine_mode(mode: str) -> Handler:
    """A line only vLLM's V0 (or V1) engine prints: a weak sign of the engine (a banner outweighs it)."""

    def handle(match: re.Match[str], reader: _Reader, line: str) -> None:
        reader.mode(mode, 1, line)

    return handle


def _v0_wording(rank: int, oldest: str, releases: str) -> Handler:
    """A V0 wording that dates the log: first printed by `oldest`, printed by `releases`."""

    def handle(match: re.Match[str], reader: _Reader, line: str) -> None:
        reader.mode("v0", 1, line)
        reader.dated(rank, oldest, releases, line)

    return handle


def _vllm_banner_model(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("model", match["m"], line, (-1, 0))


def _vllm_max_model_len(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("max_model_len", _int(match["n"]), line)


def _vllm_batched_tokens(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.setting("max_num_batched_tokens", _int(match["n"]))


# Effective settings of vLLM's engine config line copied into `flags` (when the echoed arguments lack them).
_VLLM_CONFIG_FLAGS = (
    "dtype",
    "kv_cache_dtype",
    "quantization",
    "enforce_eager",
    "pipeline_parallel_size",
    "data_parallel_size",
    "enable_prefix_caching",
    "served_model_name",
)


def _vllm_config(match: re.Match[str], reader: _Reader, line: str) -> None:
    if match["ver"]:
        reader.put("engine_version", match["ver"], line)
    config = _keyword_items(match["cfg"])
    if isinstance(config.get("model"), str):
        reader.put("model", config["model"], line)
    if isinstance(config.get("tensor_parallel_size"), int):
        reader.put("tensor_parallel_size", config["tensor_parallel_size"], line)
    if isinstance(config.get("max_seq_len"), int):
        reader.put("max_model_len", config["max_seq_len"], line)
    for key in _VLLM_CONFIG_FLAGS:
        if key in config:
            value = config[key]
            if key == "dtype" and isinstance(value, str):
                value = value.removeprefix("torch.")
            reader.setting(key, value)


def _vllm_non_default_args(match: re.Match[str], reader: _Reader, line: str) -> None:
    text = match["d"].strip()
    try:
        parsed = ast.literal_eval(text)  # literals only: no names, calls or attribute access are evaluated
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        parsed = _dict_items(text)
        reader.warnings.append(
            "vLLM's non-default args are not a literal dict (an object or a cut line): "
            "values that are not literals are kept as text"
        )
    if not isinstance(parsed, dict):
        return
    for key, value in parsed.items():
        reader.arg(str(key), value, line)


def _keyword_args(match: re.Match[str], reader: _Reader, line: str) -> None:
    for key, value in _keyword_items(match["kw"]).items():
        reader.arg(key, value, line)


# Each pattern names the vLLM versions and source files that print it: read in vLLM's source (the stored copies
# of vllm-project/vllm) and dated in published logs; a "~" marks a version boundary known only approximately.
_VLLM_RULES: tuple[_Rule, ...] = (
    # Memory profiling, V0 worker.py, four wordings:
    #  - pre-0.6.5 dev (PR #10511, Dec 2024), a table under "Memory profiling results:":
    #    "total_gpu_memory     79.22GiB", "gpu_memory_utilization       0.90", "the current vLLM instance can use
    #    71.29GiB", "model weights take   14.96GiB", "non_torch_memory     1.79GiB", "PyTorch activation peak
    #    memory       1.26GiB", "available_kv_cache_memory    53.29GiB";
    #  - 0.6.4: "Memory profiling results: total_gpu_memory=%.2fGiB initial_memory_usage=%.2fGiB
    #    peak_torch_memory=%.2fGiB memory_usage_post_profile=%.2fGib non_torch_memory=%.2fGiB kv_cache_size=%.2fGiB
    #    gpu_memory_utilization=%.2f" (all `/ (1024**3)`; note the "Gib" typo);
    #  - 0.6.5–0.6.6: the same keys comma-separated after "duration=%.2f seconds, ";
    #  - 0.7–0.9 (V0): "the current vLLM instance can use total_gpu_memory (%.2fGiB) x gpu_memory_utilization
    #    (%.2f) = %.2fGiB" + "model weights take %.2fGiB; non_torch_memory takes %.2fGiB; PyTorch activation peak
    #    memory takes %.2fGiB; the rest of the memory reserved for KV Cache is %.2fGiB." (`/ GiB_bytes`).
    _rule(VLLM, r"Memory profiling (?:results|takes)"),
    _rule(VLLM, rf"total_gpu_memory\s*[=(]?\s*{_mem('v')}", _figure("total_gpu_memory_bytes")),
    _rule(VLLM, r"gpu_memory_utilization\s*[=(]?\s*(?P<u>\d*\.\d+|\d+)\b", _vllm_utilization),
    _rule(
        VLLM,
        rf"the current vLLM instance can use\s+(?:total_gpu_memory\s*\([^)]*\)\s*x\s*gpu_memory_utilization"
        rf"\s*\([^)]*\)\s*=\s*)?{_mem('v')}",
        _figure("budget_bytes"),
    ),
    _rule(VLLM, rf"model weights take\s+{_mem('v')}", _figure("weights_bytes")),
    _rule(VLLM, rf"non_torch_memory(?:\s+takes)?\s*=?\s*{_mem('v')}", _figure("non_torch_bytes")),
    _rule(VLLM, rf"PyTorch activation peak memory(?:\s+takes)?\s+{_mem('v')}", _figure("activation_peak_bytes")),
    _rule(
        VLLM,
        rf"(?:available_kv_cache_memory|kv_cache_size\s*=|reserved for KV Cache is)\s*{_mem('v')}",
        _figure("kv_cache_bytes"),
    ),
    _rule(VLLM, r"(?:initial_memory_usage|memory_usage_post_profile)="),
    # 0.6.4's peak_torch_memory is weights + activation peak: kept to derive the activation peak.
    _rule(VLLM, rf"peak_torch_memory\s*=\s*{_mem('v')}", _vllm_peak_torch),
    # Weights: V0 model_runner.py "Loading model weights took %.4f GB" (~0.4–0.6) and "Model loading took %.4f GB
    # and %.6f seconds" (~0.7–0.9), both `/ float(2**30)`; V1 gpu_model_runner.py "Model loading took %.4f GiB and
    # %.6f seconds" (~0.8–0.10, `/ GiB_bytes`), later "Model loading took %s GiB [memory ]and %.6f seconds"
    # (format_gib; 0.19 prints "13.72 GiB memory").
    _rule(VLLM, rf"(?:Loading model weights|Model loading) took\s+{_mem('v')}", _figure("weights_bytes")),
    # V1 gpu_worker.py (0.8+): "Available KV cache memory: %.2f GiB" (`/ GiB_bytes`).
    _rule(VLLM, rf"Available KV cache memory:\s*{_mem('v')}", _figure("kv_cache_bytes")),
    # V1 gpu_worker.py with --kv-cache-memory (~0.11+; seen in 0.19): "Initial free memory %.2f GiB, reserved
    # %.2f GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling."
    _rule(VLLM, rf"reserved\s+{_mem('v')}\s+memory for KV Cache", _figure("kv_cache_bytes")),
    # V1 kv_cache_utils.py (0.8+): "GPU KV cache size: %s tokens" (thousands separators) and "Maximum concurrency
    # for %s tokens per request: %.2fx", also on one line in 0.10+; the latter also V0 gpu_executor.py (0.6.4+)
    # and executor_base.py (0.7–0.9) with an unformatted token count.
    _rule(VLLM, r"GPU KV cache size:\s*(?P<t>[\d,]+)\s*tokens", _vllm_kv_tokens),
    _rule(
        VLLM, r"Maximum concurrency for\s*(?P<t>[\d,]+)\s*tokens per request:\s*(?P<x>\d*\.?\d+)x", _vllm_concurrency
    ),
    # V0 gpu_executor.py (~0.4–0.6) "# GPU blocks: %d, # CPU blocks: %d"; executor_base.py (~0.7–0.9)
    # "# %s blocks: %d, # CPU blocks: %d" with the platform's device name ("cuda", later "CUDA").
    _rule(VLLM, r"(?:#\s*)?(?P<dev>\w+) blocks:\s*(?P<gpu>[\d,]+),\s*#\s*CPU blocks:\s*[\d,]+", _vllm_blocks),
    # CUDA graphs: V0 model_runner.py (~0.6+) and V1 gpu_model_runner.py "Graph capturing finished in %.0f secs,
    # took %.2f GiB" (`/ (1 << 30)`; older: "... in %.0f secs." without the memory, recognised only); captured
    # after the KV allocation, outside the budget, until 0.21. 0.21+: gpu_model_runner.py "Estimated CUDA graph
    # memory: %.2f GiB total" (profiled before the KV allocation, ranked below a measured figure) and
    # gpu_worker.py "CUDA graph pool memory: %s GiB (actual), %s GiB (estimated), difference: ...".
    _rule(VLLM, rf"Graph capturing finished in\s*\d+\s*secs?(?:,\s*took\s*{_mem('v')})?", _figure("cuda_graph_bytes")),
    _rule(VLLM, rf"Estimated CUDA graph memory:\s*{_mem('v')}", _figure("cuda_graph_bytes", kind=-1)),
    _rule(VLLM, rf"CUDA graph pool memory:\s*{_mem('v')}\s*\(actual", _figure("cuda_graph_bytes")),
    # V1 gpu_worker.py compile_or_warm_up_model (~0.10.2+; info in the published 0.11–0.2x logs, debug in some
    # builds):
    # "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage
    # is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, and %s GiB for CUDAGraph
    # memory. ... Current kv cache memory in use is %s GiB." (round(b / GiB_bytes, 2); 0.11 printed the last one
    # in bytes); later wording: "Actual usage is %s GiB for consumed memory (weights + non-torch), %s GiB for peak
    # activation, and %s GiB for CUDAGraph memory." Also init_device's refusal: "Free memory on device (%s/%s
    # GiB) on startup is less than desired GPU memory utilization (%s, %s GiB)."
    _rule(VLLM, rf"Free memory on device\s*\({_NUM}/{_mem('v')}\)", _vllm_free_total),
    _rule(
        VLLM,
        rf"(?:Desired GPU memory utilization is|less than desired GPU memory utilization)\s*"
        rf"\((?P<u>\d*\.?\d+),\s*{_mem('v')}\)",
        _vllm_budget_line,
    ),
    _rule(VLLM, rf"{_mem('v')} for weight\b", _figure("weights_bytes")),
    _rule(VLLM, rf"{_mem('v')} for peak activation", _figure("activation_peak_bytes")),
    _rule(VLLM, rf"{_mem('v')} for non-torch memory", _figure("non_torch_bytes")),
    _rule(VLLM, rf"{_mem('v')} for consumed memory \(weights \+ non-torch\)", _vllm_consumed),
    _rule(VLLM, rf"{_mem('v')} for CUDAGraph memory", _figure("cuda_graph_bytes")),
    _rule(VLLM, rf"Current kv cache memory in use is\s*{_mem('v')}", _figure("kv_cache_bytes")),
    # V1 gpu_worker.py 0.21+: "CUDA graph memory profiling is enabled (default since v0.21.0). The current
    # --gpu-memory-utilization=%.4f is equivalent to ..." and, disabled, "... increasing
    # --gpu-memory-utilization from %.4f to %.4f."
    _rule(
        VLLM, r"(?:current --gpu-memory-utilization=|--gpu-memory-utilization from )(?P<u>\d*\.?\d+)", _vllm_utilization
    ),
    # Versions: V0 llm_engine.py "Initializing an LLM engine (v%s) with config: ..." (0.4–0.9); V1 core.py
    # "Initializing a V1 LLM engine (v%s) with config: ..." (0.8+); entrypoints/openai/api_server.py "vLLM API
    # server version %s" (~0.5–0.10); the ASCII banner (utils.py, later api_utils.py; seen in 0.15–0.28)
    # "█ ▀▄▀ █  version 0.15.1" / "█▄█▀ █ ... █  model   openai/gpt-oss-20b"; collect_env's "vLLM Version: %s".
    _rule(
        VLLM, r"Initializing an? (?:V1 )?LLM engine (?:\(v(?P<ver>[^)\s]+)\) )?with config:\s*(?P<cfg>.*)", _vllm_config
    ),
    # The banner's version and engine also when the line is cut before its config: "a V1 LLM engine" is V1's
    # core.py, "an LLM engine" V0's llm_engine.py (0.8-0.10 print it when they fall back to V0).
    _rule(VLLM, r"Initializing an? (?P<v1>V1 )?LLM engine \(v(?P<ver>[^)\s]+)\)", _vllm_engine_banner),
    # Which engine the lines come from when no banner says it. V0 only: worker.py's profiling (V1's file is
    # gpu_worker.py: "\bworker" does not match inside it) and the executor's blocks line (V1 prints no CPU blocks).
    # The profiling wordings date a log without a version (the oldest release of each, see the memory rules above):
    # 0.6.4's one line "Memory profiling results: total_gpu_memory=...", 0.6.5's table (PR #10511) and comma list
    # ("Memory profiling results: duration=..."), 0.7+'s worker.py sentence "the current vLLM instance can use
    # total_gpu_memory (...) x gpu_memory_utilization (...)"; the executor's "# GPU blocks" (gpu_executor.py,
    # ~0.4-0.6) and "# cuda blocks" (executor_base.py with the device name, ~0.7-0.10).
    _rule(VLLM, r"Memory profiling results:\s*total_gpu_memory\s*=", _v0_wording(3, "0.6.4", "0.6.4"), sign=True),
    _rule(VLLM, r"Memory profiling results:\s*(?:duration\s*=.*)?$", _v0_wording(3, "0.6.5", "0.6.5-0.6.6"), sign=True),
    _rule(
        VLLM,
        r"\bworker\.py:\d+\]?\s.*(?:Memory profiling takes|the current vLLM instance can use total_gpu_memory"
        r"\s*\()",
        _v0_wording(2, "0.7.0", "0.7-0.10"),
        sign=True,
    ),
    _rule(VLLM, r"\bworker\.py:\d+\]?\s", _engine_mode("v0"), sign=True),
    _rule(
        VLLM,
        r"(?:#\s*)?(?:cuda|CUDA) blocks:\s*[\d,]+,\s*#\s*CPU blocks",
        _v0_wording(1, "0.7.0", "0.7-0.10"),
        sign=True,
    ),
    _rule(VLLM, r"(?:#\s*)?GPU blocks:\s*[\d,]+,\s*#\s*CPU blocks", _v0_wording(1, "0.6.0", "0.6"), sign=True),
    _rule(
        VLLM,
        r"\bgpu_(?:worker|model_runner)\.py:\d+|\bEngineCore(?:_\d+)?\b|Available KV cache memory:|"
        r"GPU KV cache size:",
        _engine_mode("v1"),
        sign=True,
    ),
    _rule(VLLM, r"vLLM API server version\s+v?(?P<ver>\d\S*)", _version),
    _rule(VLLM, r"\bvLLM [Vv]ersion:?\s+v?(?P<ver>\d\S*)", _version),
    _rule(VLLM, r"▀▄▀ █\s+version\s+v?(?P<ver>\d\S*)", _version),
    _rule(VLLM, r"█▄█▀.*█\s+model\s+(?P<m>\S+)", _vllm_banner_model),
    # The command line engineers paste above the log: `vllm serve MODEL ...` (the weakest source of the model).
    _rule(VLLM, r"(?:^|\s|\$)vllm serve\s+(?P<m>[^\s-]\S*)", _vllm_banner_model),
    # Arguments: utils.py / api_utils.py "non-default args: %s" (~0.9+, a dict repr; seen in 0.19–0.28);
    # entrypoints/openai/api_server.py "args: %s" (an argparse Namespace, ~0.4–0.8).
    _rule(VLLM, r"non-default args:\s*(?P<d>\{.*)", _vllm_non_default_args),
    _rule(VLLM, r"\bargs: Namespace\((?P<kw>.*)", _keyword_args),
    # config.py (~0.6+): "Using max model len %s"; "Chunked prefill is enabled with max_num_batched_tokens=%d."
    _rule(VLLM, r"Using max model len\s+(?P<n>\d+)", _vllm_max_model_len),
    _rule(VLLM, r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)", _vllm_batched_tokens),
    # V1 gpu_worker.py: "Sleep mode freed ..." is deliberately absent (not a startup figure): it stays unparsed.
)


# --- SGLang -------------------------------------------------------------------------------------------------


def _sglang_weights(match: re.Match[str], reader: _Reader, line: str) -> None:
    if match["v"] is not None:
        reader.memory("weights_bytes", match["v"], match["v_u"], line)
    dtype = re.search(r"\bdtype=(?:torch\.)?(\w+)", line)
    if dtype:
        reader.setting("dtype", dtype[1])


def _sglang_kv(match: re.Match[str], reader: _Reader, line: str) -> None:
    reader.put("kv_cache_tokens", _int(match["t"]), line)
    if match["kv"] is not None:  # MLA: one latent cache
        reader.memory("kv_cache_bytes", match["kv"], match["kv_u"], line)
        return
    # K and V pools: each size converted by the rounding rule, then added
    size = _bytes(match["v"], match["v_u"]) + _bytes(match["w"], match["w_u"])
    reader.put("kv_cache_bytes", size, line, (0, _precision(match["v"], match["v_u"])))


def _sglang_scheduler(match: re.Match[str], reader: _Reader, line: str) -> None:
    items = dict(re.findall(r"\b(\w+)=(\d+)\b", line))
    reader.put("kv_cache_tokens", int(items["max_total_num_tokens"]), line)
    if "context_len" in items:
        reader.put("max_model_len", int(items["context_len"]), line)
    for key in ("chunked_prefill_size", "max_prefill_tokens", "max_running_requests"):
        if key in items:
            reader.setting(key, int(items[key]))


_SGLANG_RULES: tuple[_Rule, ...] = (
    # Followed SGLang's source (python/sglang/srt/..., the stored copies of sgl-project/sglang, 0.4.x–0.5.x) and
    # dated published logs; every "GB" is `/ (1 << 30)` or `/ GB` with GB = 1024**3.
    # server_args.py / entrypoints/engine.py: "server_args=ServerArgs(model_path='...', tp_size=1, ...)".
    _rule(SGLANG, r"server_args=ServerArgs\((?P<kw>.*)", _keyword_args),
    # model_executor/model_runner.py load_model: "Load weight begin. avail mem=%.2f GB" and "Load weight end.
    # type=%s, dtype=%s, avail mem=%.2f GB, mem usage=%.2f GB." (0.4.x; the oldest without mem usage), 0.5.x:
    # "Load weight end. elapsed=%.2f s, type=%s, [quant=...,] avail mem=%.2f GB, mem usage=%.2f GB." (the first
    # one printed is the target model; a draft model's follows).
    _rule(SGLANG, r"Load weight begin\."),
    _rule(SGLANG, rf"Load weight end\.(?:.*?mem usage=\s*{_mem('v')})?", _sglang_weights),
    # mem_cache/memory_pool.py: MHATokenToKVPool "KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size:
    # %.2f GB" (0.5.x may add "dtype: %s, " first); MLATokenToKVPool "KV Cache is allocated. #tokens: %d, KV size:
    # %.2f GB".
    _rule(
        SGLANG,
        rf"KV Cache is allocated\..*?#tokens:\s*(?P<t>\d+),\s*"
        rf"(?:K size:\s*{_mem('v')},\s*V size:\s*{_mem('w')}|KV size:\s*{_mem('kv')})",
        _sglang_kv,
    ),
    # model_runner.py init_memory_pool: "Memory pool end. avail mem=%.2f GB"; init_torch_distributed: "Init torch
    # distributed ends. mem usage=%.2f GB" (free memory, no field of ours: recognised only).
    _rule(SGLANG, r"Memory pool end\. avail mem="),
    _rule(SGLANG, r"Init torch distributed (?:begin|ends)\."),
    # model_runner.py init_device_graphs (~0.4.6+): "Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f
    # GB. avail mem=%.2f GB." (early 2025: "avail mem=%.2f GB. mem usage=%.2f GB."; older and speculative
    # workers: no memory); 2026 nightlies name the graph ("Capture target decode CUDA graph end. elapsed=...")
    # and NPU builds print "npu graph".
    _rule(SGLANG, r"Capture [\w ]*?(?:cuda|CUDA|npu|NPU) graph begin"),
    _rule(
        SGLANG,
        rf"Capture [\w ]*?(?:cuda|CUDA|npu|NPU) graph end\.(?:.*?mem usage=\s*{_mem('v')})?",
        _figure("cuda_graph_bytes"),
    ),
    # managers/scheduler.py: "max_total_num_tokens=%d, chunked_prefill_size=%s, max_prefill_tokens=%d,
    # max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB" (older: without chunked_prefill_size
    # and available_gpu_mem).
    _rule(SGLANG, r"\bmax_total_num_tokens=(?P<t>\d+)", _sglang_scheduler),
    # SGLang itself does not log its version at startup; wrappers and `pip show` do ("SGLang version: 0.5.3").
    _rule(SGLANG, r"(?i:\bsglang)(?: version)?\s*[:=]{1,2}\s*v?(?P<ver>\d+\.\d+\S*)", _version),
)


_RULES: tuple[_Rule, ...] = (*_VLLM_RULES, *_SGLANG_RULES)

# ANSI escape sequences (CSI and OSC), and colour codes whose ESC byte was lost in copying ("[32m").
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|\[\d{1,3}(?:;\d{1,3})*m")
# A memory quantity: a number with a byte unit that is not a rate ("70.9MB/s").
_MEMORY_QUANTITY = re.compile(rf"{_NUM}\s*(?:(?i:[kmgt]i?b)|bytes)\b(?!/s)")


def _keyword_items(text: str) -> dict[str, Any]:
    """Read `key=value, key=value, ...` (a dataclass or Namespace repr, vLLM's config line) into a dict.

    Values are read with `ast.literal_eval` (literals only: nothing is executed); anything else (an enum repr,
    `torch.bfloat16`, a cut line) is kept as its text.
    """
    items: dict[str, Any] = {}
    for part in _split_top_level(text):
        key, equals, value = part.partition("=")
        key = key.strip()
        if equals and key.isidentifier():
            items[key] = _literal(value.strip())
    return items


def _dict_items(text: str) -> dict[str, Any]:
    """Read the items of a dict repr that `ast.literal_eval` refused, keeping non-literal values as text."""
    items: dict[str, Any] = {}
    for part in _split_top_level(text.strip().removeprefix("{")):
        match = re.match(r"""(['"])(?P<k>.*?)\1\s*:\s*(?P<v>.*)""", part, re.DOTALL)
        if match:
            items[match["k"]] = _literal(match["v"].strip())
    return items


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _split_top_level(text: str) -> list[str]:
    """Split at the commas outside quotes and brackets, up to the bracket that closes the enclosing one (the
    `)` of `ServerArgs(...)`, the `}` of a dict) or the end of a cut line."""
    parts: list[str] = []
    depth, quote, start, index = 0, "", 0, 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            if depth == 0:
                break
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:index])
    return [part.strip() for part in parts if part.strip()]


def _text_lines(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [_ANSI.sub("", line).rstrip() for line in text.split("\n")]


# Where a figure may come from when no log line printed it: (figure, argument keys, type), arguments ranked
# below log lines.
_FROM_ARGS: tuple[tuple[str, tuple[str, ...], type], ...] = (
    ("gpu_memory_utilization", ("gpu_memory_utilization",), float),
    ("tensor_parallel_size", ("tensor_parallel_size", "tp_size"), int),
    ("max_model_len", ("max_model_len", "context_length"), int),
    ("model", ("model", "model_path", "model_tag"), str),
)


def bootlog_parse(text: str) -> BootLog:
    """Read a vLLM or SGLang startup log (whole or a fragment) into a `BootLog`.

    Tolerates line prefixes, ANSI colour codes and Windows line endings. Raises `SizingError`
    (INVALID_ARGUMENT) when no line is recognisable as vLLM or SGLang startup output. Figures printed by
    several ranks keep the first rank's value; differing values become a warning.
    """
    reader = _Reader()
    unparsed: list[str] = []
    lines = _text_lines(text)
    for line in lines:
        matched_engines: set[str] = set()
        for rule in _RULES:
            match = rule.pattern.search(line)
            if match is None:
                continue
            if not rule.sign:
                matched_engines.add(rule.engine)
            if rule.handler is not None:
                rule.handler(match, reader, line)
        for engine in matched_engines:
            reader.votes[engine] += 1
        if not matched_engines and _MEMORY_QUANTITY.search(line) and line.strip() not in unparsed:
            unparsed.append(line.strip())

    if not any(reader.votes.values()):
        message = (
            "the text holds no line of a vLLM or SGLang startup log (such as 'Available KV cache memory: "
            "8.11 GiB', 'GPU KV cache size: 158,656 tokens' or SGLang's 'KV Cache is allocated. #tokens: "
            "...'); paste the engine's own log from its start to 'Application startup complete'"
        )
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=message,
            extra={"lines": len([line for line in lines if line.strip()]), "fields": {"text": [message]}},
        )
    engine = VLLM if reader.votes[VLLM] >= reader.votes[SGLANG] else SGLANG
    if reader.votes[VLLM] and reader.votes[SGLANG]:
        reader.warnings.append(
            f"the text holds lines of both engines ({reader.votes[VLLM]} vLLM, "
            f"{reader.votes[SGLANG]} SGLang); read as {engine}"
        )
    _complete(reader, engine)
    values = reader.values
    mode, mode_line = _engine_mode_hint(reader) if engine == VLLM else (None, None)
    inferred, dated_line = _version_inferred(reader, mode) if engine == VLLM else (None, None)
    lines_read = {name: reader.lines[name] for name in _FIGURES if name in values}
    if mode_line:
        lines_read["engine_mode_hint"] = mode_line
    if dated_line:
        lines_read["engine_version_inferred"] = dated_line
    return BootLog(
        engine=engine,
        engine_mode_hint=mode,
        engine_version_inferred=inferred,
        flags=_flags(reader),
        lines=lines_read,
        unparsed_memory_lines=tuple(unparsed),
        warnings=tuple(reader.warnings),
        **{name: values.get(name) for name in _FIGURES},
    )


def _engine_mode_hint(reader: _Reader) -> tuple[str | None, str | None]:
    """The engine the vLLM lines come from (the strongest sign), and the line that says it; (None, None) when
    nothing says it, or V0 and V1 signs are equally strong (a warning: two engines' logs in one paste?)."""
    if not reader.modes:
        return None, None
    ranked = sorted(reader.modes.items(), key=lambda item: item[1][0], reverse=True)
    if len(ranked) > 1 and ranked[0][1][0] == ranked[1][1][0]:
        reader.warnings.append(
            "the log has lines of both vLLM engines, V0 and V1, equally (two logs in one "
            "paste?): the engine is not read from it"
        )
        return None, None
    mode, (_strength, line) = ranked[0]
    return mode, line


def _version_inferred(reader: _Reader, mode: str | None) -> tuple[str | None, str | None]:
    """For a V0 log that prints no version, the oldest release of its wording, and the line."""
    if "engine_version" in reader.values or mode != "v0" or reader.v0_format is None:
        return None, None
    _rank, oldest, _releases, line = reader.v0_format
    return oldest, line


def _flags(reader: _Reader) -> dict[str, Any]:
    flags = dict(reader.args)
    for key, value in reader.effective.items():
        if flags.get(key) is None:
            flags[key] = value
    return flags


def _complete(reader: _Reader, engine: str) -> None:
    """Fill what the log implies but does not print, and warn about what a person should look at."""
    values = reader.values
    below_lines = (-1, 0)
    for figure, keys, kind in _FROM_ARGS:
        for key in keys:
            value = reader.args.get(key)
            accepted = (int, float) if kind is float else kind
            if isinstance(value, accepted) and not isinstance(value, bool):
                reader.put(figure, kind(value), reader.arg_lines[key], below_lines)
                break
    if "max_model_len" not in values and "max_concurrency_tokens_per_request" in values:
        # vLLM states its maximum concurrency for max_model_len tokens per request.
        reader.put(
            "max_model_len",
            values["max_concurrency_tokens_per_request"],
            reader.lines["max_concurrency_tokens_per_request"],
            below_lines,
        )
    if reader.consumed is not None and "non_torch_bytes" not in values and "weights_bytes" in values:
        consumed, line = reader.consumed
        reader.put("non_torch_bytes", consumed - values["weights_bytes"], line, below_lines)
        reader.warnings.append(
            f"non-torch memory derived: {format_bytes(consumed)} of weights + non-torch less "
            f"{format_bytes(values['weights_bytes'])} of weights (vLLM printed them together)"
        )
    if reader.peak_torch is not None and "activation_peak_bytes" not in values and "weights_bytes" in values:
        peak, line = reader.peak_torch
        reader.put("activation_peak_bytes", peak - values["weights_bytes"], line, below_lines)
        reader.warnings.append(
            f"activation peak derived: peak torch memory {format_bytes(peak)} less "
            f"{format_bytes(values['weights_bytes'])} of weights (vLLM 0.6.4 printed them together)"
        )
    if (
        engine == VLLM
        and "gpu_memory_utilization" in values
        and "budget_bytes" in values
        and "total_gpu_memory_bytes" in values
        and values["total_gpu_memory_bytes"] > 0
    ):
        # the utilisation is printed to two decimals; budget / total is the value the engine used
        exact = values["budget_bytes"] / values["total_gpu_memory_bytes"]
        if abs(exact - values["gpu_memory_utilization"]) >= 0.001:
            reader.values["gpu_memory_utilization"] = round(exact, 4)
    if engine == VLLM and "kv_cache_tokens" not in values and "num_gpu_blocks" in values:
        block_size = reader.args.get("block_size")
        if not isinstance(block_size, int) or isinstance(block_size, bool):
            block_size = VLLM_DEFAULT_BLOCK_SIZE
            reader.warnings.append(
                f"KV tokens = {values['num_gpu_blocks']} blocks × {block_size} tokens: "
                "vLLM's default block size, which the log does not state"
            )
        reader.put(
            "kv_cache_tokens", values["num_gpu_blocks"] * block_size, reader.lines["num_gpu_blocks"], below_lines
        )
    for figure, seen in reader.conflicts.items():
        shown = ", ".join(format_bytes(v) if figure in _BYTE_FIGURES else str(v) for v in seen)
        reader.warnings.append(
            f"the log prints several values for {figure} ({shown}): kept the first "
            "(several ranks or models, or a restart, in one paste?)"
        )
    for figure in _BYTE_FIGURES:
        value = values.get(figure)
        if value is not None and value < 0:
            reader.warnings.append(
                f"{figure} is negative ({format_bytes(value)}): memory freed by another "
                "process during profiling, or no room left"
            )
    kv = values.get("kv_cache_bytes")
    if kv is not None and kv <= 0:
        reader.warnings.append("no memory left for the KV cache: the engine cannot start with these settings")
    concurrency = values.get("max_concurrency")
    if concurrency is not None and concurrency < 1:
        reader.warnings.append(
            f"maximum concurrency {concurrency}x: the KV cache cannot hold one "
            f"{values.get('max_concurrency_tokens_per_request')}-token request"
        )


# ---------------------------------------------------------------------------------------------------------------
# Comparing and calibrating

# (figure of the log, path in `MemoryEstimate.as_dict()`, unit), in the order a comparison is shown.
_COMPARED: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("weights_bytes", ("memory_per_gpu", "weights"), "bytes"),  # vLLM counts its rotary cache in weights
    ("activation_peak_bytes", ("memory_per_gpu", "activations"), "bytes"),
    ("non_torch_bytes", ("memory_per_gpu", "runtime"), "bytes"),
    ("kv_cache_bytes", ("memory_per_gpu", "kv_cache"), "bytes"),
    ("kv_cache_tokens", ("kv_capacity_tokens",), "tokens"),
    ("max_concurrency", ("max_concurrency",), "x"),
    ("cuda_graph_bytes", ("memory_per_gpu", "cuda_graphs"), "bytes"),
    ("budget_bytes", ("budget_bytes_per_gpu",), "bytes"),
    ("total_gpu_memory_bytes", ("capacity_bytes_per_gpu",), "bytes"),
)


def _lookup(estimate: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = estimate
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _estimated_concurrency(log: BootLog, estimate: Mapping[str, Any]) -> float | None:
    """Our concurrency for the log's tokens per request: the estimate's own figure when it was computed for
    the same length, else our KV capacity divided by the log's length (vLLM's formula, to 2 decimals)."""
    tokens = log.max_concurrency_tokens_per_request
    if tokens is None or estimate.get("max_model_len") in (None, tokens):
        return estimate.get("max_concurrency")
    capacity = estimate.get("kv_capacity_tokens")
    return None if capacity is None else round(capacity / tokens, 2)


def bootlog_compare(log: BootLog, estimate: Mapping[str, Any]) -> tuple[ComparisonLine, ...]:
    """Set each figure the log has against the estimate (`MemoryEstimate.as_dict()`), one line per figure.

    The log's figures are per GPU (one worker's view), like the estimate's `*_per_gpu` figures. Figures the
    log lacks are left out; figures the estimate lacks get `estimated=None`.
    """
    result: list[ComparisonLine] = []
    for figure, path, unit in _COMPARED:
        logged = getattr(log, figure)
        if logged is None:
            continue
        estimated = _estimated_concurrency(log, estimate) if figure == "max_concurrency" else _lookup(estimate, path)
        difference = None if estimated is None else estimated - logged
        if isinstance(difference, float):
            difference = round(difference, 6)  # concurrency: drop the binary noise of a 2-decimal subtraction
        relative = None if difference is None or logged == 0 else difference / logged
        result.append(
            ComparisonLine(
                figure=figure,
                logged_bytes_or_value=logged,
                estimated=estimated,
                difference=difference,
                relative_difference=relative,
                unit=unit,
                source_line=log.lines.get(figure, ""),
            )
        )
    return tuple(result)


# The figures of a log that replace an estimate's runtime defaults, by `EstimateRequest` keyword argument. The
# total: vLLM prints `torch.cuda.mem_get_info()`'s total (cudaMemGetInfo: what its budget multiplies by
# gpu_memory_utilization, below the driver's nvidia-smi total), so a vLLM log's total is the CUDA-visible total;
# other engines' totals stand for the card's memory.
_CALIBRATED: tuple[tuple[str, str], ...] = (
    ("runtime_reserve_bytes", "non_torch_bytes"),
    ("cuda_graph_bytes", "cuda_graph_bytes"),
    ("gpu_memory_bytes", "total_gpu_memory_bytes"),
    ("activation_peak_bytes", "activation_peak_bytes"),
)
_CUDA_TOTAL_ENGINES = (VLLM,)


def _calibrated(log: BootLog) -> tuple[tuple[str, str], ...]:
    """(EstimateRequest argument, log figure) for this log's engine."""
    if log.engine not in _CUDA_TOTAL_ENGINES:
        return _CALIBRATED
    return tuple(
        ("gpu_cuda_total_bytes" if argument == "gpu_memory_bytes" else argument, figure)
        for argument, figure in _CALIBRATED
    )


def bootlog_calibration(log: BootLog) -> dict[str, int]:
    """The `EstimateRequest` keyword arguments a later estimate of the same deployment should use instead of
    its defaults: `runtime_reserve_bytes` (vLLM's non-torch memory), `cuda_graph_bytes`, the total the engine
    saw (`gpu_cuda_total_bytes` for a vLLM log: CUDA's own total; `gpu_memory_bytes` for other engines) and
    `activation_peak_bytes`. Only figures the log has; a negative figure (memory freed by another process while
    the engine measured) is no calibration and is left out.
    """
    calibration: dict[str, int] = {}
    for argument, figure in _calibrated(log):
        value = getattr(log, figure)
        if value is not None and value >= 0:
            calibration[argument] = value
    return calibration


def bootlog_calibration_evidence(log: BootLog) -> dict[str, str]:
    """The log line each calibration term of `bootlog_calibration` came from."""
    calibration = bootlog_calibration(log)
    return {
        argument: log.lines[figure]
        for argument, figure in _calibrated(log)
        if argument in calibration and figure in log.lines
    }


__all__ = [
    "BootLog",
    "ComparisonLine",
    "bootlog_calibration",
    "bootlog_calibration_evidence",
    "bootlog_compare",
    "bootlog_parse",
]

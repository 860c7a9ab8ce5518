"""TensorRT-LLM's memory defaults as each TensorRT-LLM release applies them (DESIGN §7).

TensorRT-LLM gives the KV cache a fraction of the memory that is free once the model is loaded and its activation
workspace for `max_num_tokens` is in place; the rest of the card stays free for CUDA graphs and transient buffers.

Bands (TensorRT-LLM ships no wheel on PyPI, so these were read from stored copies of the GitHub source and the
versioned documentation; the line numbers of a tagged release could not be checked here):

- 0.17.0–0.21.x: `trtllm-serve` runs a TensorRT engine by default ("--backend: Set to 'pytorch' for pytorch path.
  Default is cpp path", trtllm-serve reference @ 0.18.2). The C++ executor's `KvCacheConfig` takes
  `free_gpu_memory_fraction` (None in `llmapi/llm_args.py` of those releases, meaning 0.9) of the free memory
  after the engine is deserialised (the engine holds the activation buffers for `max_num_tokens`). The engine's
  CUDA-graph mode is off by default.
- 1.0.0–1.2.x: the PyTorch backend is the default (`commands/serve.py:serve --backend default "pytorch"`). It runs
  dummy context requests of `max_num_tokens`, then sizes the pool as `(total − peak memory of that run (torch +
  non-torch) + the temporary KV it held) × free_gpu_memory_fraction`
  (`_torch/pyexecutor/_util.py:KvCacheCreator._cal_max_memory`); `KvCacheConfig.free_gpu_memory_fraction`
  defaults to 0.9 (`llmapi/llm_args.py`). Decode CUDA graphs are on by default
  (`TorchLlmArgs.cuda_graph_config = Field(default_factory=CudaGraphConfig)`) and are captured after the pool is
  allocated, out of the memory the fraction leaves.
- Every band: `max_batch_size` 2048 and `max_num_tokens` 8192 (`BuildConfig` defaults, which trtllm-serve's
  `--max_batch_size` / `--max_num_tokens` take; `BaseLlmArgs.max_batch_size = 2048`, `max_num_tokens = 8192` in
  `llmapi/llm_args.py` of 1.x), `--kv_cache_free_gpu_memory_fraction` 0.9 (`commands/serve.py`).
- KV cache dtype: `auto` follows the checkpoint: a ModelOpt `hf_quant_config.json` with `kv_cache_quant_algo: FP8`
  (or INT8) gives an FP8 (INT8) cache, else the model dtype
  (`llmapi/llm_utils.py:ModelLoader` "Setting kv_cache_quant_algo=... from HF quant config").

>>> trtllm_rules(Version(1, 2, 0)).backend
'pytorch'
>>> trtllm_rules(Version(0, 19, 0)).cuda_graphs_by_default
False
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType
from sizing.estimator.kv import resolve_kv_dtype
from sizing.estimator.units import gib
from sizing.estimator.versions import Version

PYTORCH_DEFAULT_FROM = Version(1, 0, 0)
NEWEST = Version(1, 2, 0)

MAX_BATCH_SIZE = 2048  # BuildConfig / BaseLlmArgs default
MAX_NUM_TOKENS = 8192  # BuildConfig / BaseLlmArgs default
FREE_GPU_MEMORY_FRACTION = 0.9  # KvCacheConfig / trtllm-serve default
# Decode CUDA graphs (PyTorch backend, 1.0+) are captured after the pool. No TensorRT-LLM measurement was at hand:
# the low end of the 0.5-2.5 GiB per GPU that public reports give for another engine's decode graphs (DESIGN §7).
# A boot log or benchmark replaces it.
CUDA_GRAPH_ESTIMATE_BYTES = gib(0.5)

# hf_quant_config.json's `kv_cache_quant_algo` -> the KV cache's dtype
KV_CACHE_QUANT_ALGO_DTYPES: dict[str, DType] = {"FP8": DType.FP8, "INT8": DType.INT8}


@dataclass(frozen=True, kw_only=True)
class TrtllmRules:
    """What one TensorRT-LLM band does by default."""

    band: str
    backend: str  # what trtllm-serve runs without --backend: "tensorrt" (an engine) or "pytorch"
    max_batch_size: int
    max_num_tokens: int
    free_gpu_memory_fraction: float
    cuda_graphs_by_default: bool  # decode CUDA graphs captured after the KV pool


def trtllm_rules(version: Version | None) -> TrtllmRules:
    """The defaults of TensorRT-LLM `version` (None: the newest modelled release)."""
    version = version or NEWEST
    pytorch = version >= PYTORCH_DEFAULT_FROM
    return TrtllmRules(
        band=f"TensorRT-LLM 1.0–{NEWEST.major}.{NEWEST.minor}" if pytorch else "TensorRT-LLM 0.17–0.21",
        backend="pytorch" if pytorch else "tensorrt",
        max_batch_size=MAX_BATCH_SIZE,
        max_num_tokens=MAX_NUM_TOKENS,
        free_gpu_memory_fraction=FREE_GPU_MEMORY_FRACTION,
        cuda_graphs_by_default=pytorch,
    )


def trtllm_default_scheduler(version: Version | None) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) trtllm-serve runs with when neither flag is given."""
    rules = trtllm_rules(version)
    return rules.max_batch_size, rules.max_num_tokens


def checkpoint_kv_quant_algo(arch: Architecture) -> str | None:
    """The checkpoint's `kv_cache_quant_algo` (ModelOpt's hf_quant_config.json, folded into the architecture's
    quantization config by `merge_quant_config`), upper-cased; None when it has none."""
    config = arch.quantization_config or {}
    algo = config.get("kv_cache_quant_algo")
    return algo.upper() if isinstance(algo, str) and algo.lower() not in ("none", "null", "") else None


def trtllm_kv_dtype(arch: Architecture, name: str) -> DType:
    """The KV cache's dtype under TensorRT-LLM: `auto` follows the checkpoint's kv_cache_quant_algo (FP8/INT8),
    else the model dtype; an explicit dtype is taken as given."""
    if name == "auto":
        algo = checkpoint_kv_quant_algo(arch)
        if algo in KV_CACHE_QUANT_ALGO_DTYPES:
            return KV_CACHE_QUANT_ALGO_DTYPES[algo]
    return resolve_kv_dtype(arch, name)

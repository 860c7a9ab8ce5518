"""The vLLM releases a form offers, each with what changes in the memory rules at it, and the launch contexts.

Each release stands for its band of the rule tables (vllm-memory spec §2-§3; `versions.ENGINE_VERSION_RANGES`
bounds what is modelled): choosing 0.9.2 estimates every 0.9.1-0.10.1 release alike. "latest" is the newest
release the tables know.

>>> VLLM_RELEASE_CHOICES[0][0], VLLM_RELEASE_CHOICES[-1][0]
('latest', '0.6.4')
>>> all(resolve_engine_version("vllm", value).version for value, _ in VLLM_RELEASE_CHOICES)
True
"""

from __future__ import annotations

from sizing.estimator.launch import INSTALLS, USAGE_CONTEXTS
from sizing.estimator.versions import LATEST, resolve_engine_version

# (value, what changes at this release), newest first. Values are what `EstimateRequest.engine_version` takes.
VLLM_RELEASE_CHOICES: tuple[tuple[str, str], ...] = (
    (LATEST, "the newest release modelled"),
    (
        "0.33.0",
        "profiling counts start-up buffers (from 0.27); cards of 160 GiB or more get the big batch defaults "
        "(from 0.29); the Triton sampler stays the default unless VLLM_USE_FLASHINFER_SAMPLER=1",
    ),
    ("0.20.0", "gpu_memory_utilization 0.92 by default; CUDA graphs are measured inside the budget"),
    ("0.19.0", "the last release with gpu_memory_utilization 0.90 and CUDA graphs outside the budget"),
    ("0.17.0", "the Triton top-k/top-p sampler: a smaller sampling peak"),
    ("0.11.0", "V1 only; NCCL's NVLS buffers on NVSwitch boards (about 2 GiB at TP > 1)"),
    ("0.10.2", "V1 on every GPU (no V0 fallback below compute capability 8.0)"),
    ("0.9.2", "the hidden states stay alive while sampling; the CUDA context is no longer subtracted (from 0.9.1)"),
    ("0.9.0", "the A100-80GB leaves the big-card batch defaults; profiling subtracts the CUDA context"),
    ("0.8.5", "V1 by default (V0 fallback on older GPUs); profiling subtracts the CUDA context"),
    ("0.7.3", "V0; profiling leaves the CUDA context and fragmentation out"),
    ("0.6.6", "V0; allocator fragmentation lands in non-torch memory (0.6.5-0.6.6)"),
    ("0.6.4", "V0; profiling subtracts the CUDA context"),
)
VLLM_RELEASES: tuple[str, ...] = tuple(value for value, _ in VLLM_RELEASE_CHOICES)

# vLLM's usage context and install (one list, estimator.launch's): the forms offer what the API accepts.
USAGE_CONTEXT_CHOICES: tuple[str, ...] = USAGE_CONTEXTS
INSTALL_CHOICES: tuple[str, ...] = INSTALLS


def latest_vllm_release() -> str:
    """The release "latest" stands for ("0.33.0")."""
    return str(resolve_engine_version("vllm", LATEST).version)

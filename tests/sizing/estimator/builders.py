"""Small builders with defaults for estimator dataclasses (imported by the estimator tests)."""

from __future__ import annotations

from typing import Any

from sizing.estimator.architecture import Architecture, architecture_from_config
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.units import GiB

LLAMA3_8B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3-8B config.json (sizing keys)
    "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336, "vocab_size": 128256,
    "tie_word_embeddings": False, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
}


def llama_config(**overrides: Any) -> dict[str, Any]:
    return {**LLAMA3_8B_CONFIG, **overrides}


def build_arch(**overrides: Any) -> Architecture:
    return architecture_from_config(llama_config(**overrides))


def build_gpu(*, memory_gib: float = 80, slug: str = "test-gpu", name: str = "Test GPU") -> GpuSpec:
    return GpuSpec(slug=slug, name=name, memory_bytes=int(memory_gib * GiB))

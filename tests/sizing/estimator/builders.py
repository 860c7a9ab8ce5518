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


# Sizing keys of published config.json files, copied by hand (tests never read ../shared).
LLAMA31_8B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3.1-8B config.json: the 3-8B shapes (no head_dim key: 4096 / 32 = 128) with a
    # 131,072-token context (RoPE scaling)
    **{key: value for key, value in LLAMA3_8B_CONFIG.items() if key != "head_dim"},
    "max_position_embeddings": 131072,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "attention_bias": False, "mlp_bias": False,
}
LLAMA3_70B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3-70B config.json
    "model_type": "llama", "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 28672, "vocab_size": 128256,
    "tie_word_embeddings": False, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
}
LLAMA2_7B_CONFIG: dict[str, Any] = {
    # meta-llama/Llama-2-7b-hf config.json (multi-head attention: 32 KV heads, no head_dim key)
    "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "tie_word_embeddings": False,
    "max_position_embeddings": 4096, "torch_dtype": "float16", "attention_bias": False, "mlp_bias": False,
}
MISTRAL_7B_V01_CONFIG: dict[str, Any] = {
    # mistralai/Mistral-7B-v0.1 config.json
    "model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "tie_word_embeddings": False,
    "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "sliding_window": 4096,
}
QWEN25_7B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-7B config.json
    "model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "tie_word_embeddings": False,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "use_sliding_window": False,
    "sliding_window": 131072, "max_window_layers": 28,
}
QWEN25_05B_INSTRUCT_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-0.5B-Instruct config.json (tied embeddings)
    "model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
    "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": True,
    "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "use_sliding_window": False,
    "sliding_window": 32768, "max_window_layers": 24,
}
QWEN3_06B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen3-0.6B config.json (q_norm/k_norm, head_dim 128 ≠ hidden / heads = 64, tied embeddings)
    "model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936,
    "tie_word_embeddings": True, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
    "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
}


def small_config(**overrides: Any) -> dict[str, Any]:
    """A tiny Llama-like config whose bytes are easy to compute by hand.

    h 256, 2 layers, 4 heads x 64 (q 256 rows), 2 KV heads (k, v 128 rows), MLP 512, vocabulary 1000.
    """
    return llama_config(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=64, intermediate_size=512, vocab_size=1000, **overrides)

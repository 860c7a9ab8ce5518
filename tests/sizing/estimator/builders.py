"""Small builders with defaults for estimator dataclasses (imported by the estimator tests)."""

from __future__ import annotations

from typing import Any

from sizing.estimator.architecture import Architecture, architecture_from_config
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.units import GiB

LLAMA3_8B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3-8B config.json (sizing keys)
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}


def llama_config(**overrides: Any) -> dict[str, Any]:
    return {**LLAMA3_8B_CONFIG, **overrides}


def build_arch(**overrides: Any) -> Architecture:
    return architecture_from_config(llama_config(**overrides))


def build_gpu(
    *,
    memory_gib: float = 80,
    slug: str = "test-gpu",
    name: str = "Test GPU",
    cuda_total_gib: float | None = None,
    **fields: Any,
) -> GpuSpec:
    """A card whose CUDA-visible total is its memory unless `cuda_total_gib` says otherwise (hand computations stay
    in round numbers; the catalog's cards carry their measured CUDA totals)."""
    memory = int(memory_gib * GiB)
    cuda_total = int(cuda_total_gib * GiB) if cuda_total_gib is not None else memory
    return GpuSpec(slug=slug, name=name, memory_bytes=memory, cuda_total_bytes=cuda_total, **fields)


# Sizing keys of published config.json files, copied by hand (tests never read ../shared).
LLAMA31_8B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3.1-8B config.json: the 3-8B shapes (no head_dim key: 4096 / 32 = 128) with a
    # 131,072-token context (RoPE scaling)
    **{key: value for key, value in LLAMA3_8B_CONFIG.items() if key != "head_dim"},
    "max_position_embeddings": 131072,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "attention_bias": False,
    "mlp_bias": False,
}
LLAMA3_70B_CONFIG: dict[str, Any] = {
    # meta-llama/Meta-Llama-3-70B config.json
    "model_type": "llama",
    "hidden_size": 8192,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}
LLAMA2_7B_CONFIG: dict[str, Any] = {
    # meta-llama/Llama-2-7b-hf config.json (multi-head attention: 32 KV heads, no head_dim key)
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 11008,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "max_position_embeddings": 4096,
    "torch_dtype": "float16",
    "attention_bias": False,
    "mlp_bias": False,
}
MISTRAL_7B_V01_CONFIG: dict[str, Any] = {
    # mistralai/Mistral-7B-v0.1 config.json
    "model_type": "mistral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
    "sliding_window": 4096,
}
QWEN25_7B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-7B config.json
    "model_type": "qwen2",
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "sliding_window": 131072,
    "max_window_layers": 28,
}
QWEN25_05B_INSTRUCT_CONFIG: dict[str, Any] = {
    # Qwen/Qwen2.5-0.5B-Instruct config.json (tied embeddings)
    "model_type": "qwen2",
    "hidden_size": 896,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "intermediate_size": 4864,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "sliding_window": 32768,
    "max_window_layers": 24,
}
QWEN3_06B_CONFIG: dict[str, Any] = {
    # Qwen/Qwen3-0.6B config.json (q_norm/k_norm, head_dim 128 ≠ hidden / heads = 64, tied embeddings)
    "model_type": "qwen3",
    "hidden_size": 1024,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
    "attention_bias": False,
    "use_sliding_window": False,
    "sliding_window": None,
}


def small_config(**overrides: Any) -> dict[str, Any]:
    """A tiny Llama-like config whose bytes are easy to compute by hand.

    h 256, 2 layers, 4 heads x 64 (q 256 rows), 2 KV heads (k, v 128 rows), MLP 512, vocabulary 1000.
    """
    return llama_config(
        hidden_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        intermediate_size=512,
        vocab_size=1000,
        **overrides,
    )


# Families with layer patterns, mixtures of experts and vision towers (tests/sizing/estimator/test_families.py).
GEMMA2_9B_CONFIG: dict[str, Any] = {
    # google/gemma-2-9b config.json (head_dim 256 ≠ 3584 / 16; sliding window on every other layer)
    "model_type": "gemma2",
    "hidden_size": 3584,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "intermediate_size": 14336,
    "vocab_size": 256000,
    "tie_word_embeddings": True,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
    "sliding_window": 4096,
    "query_pre_attn_scalar": 256,
    "attn_logit_softcapping": 50.0,
    "final_logit_softcapping": 30.0,
    "hidden_activation": "gelu_pytorch_tanh",
}
SIGLIP_GEMMA3_VISION_CONFIG: dict[str, Any] = {
    # the vision_config of google/gemma-3-4b-it and google/gemma-3-27b-it (SigLIP So400m, 896×896 images)
    "model_type": "siglip_vision_model",
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "image_size": 896,
    "patch_size": 14,
    "vision_use_head": False,
}
GEMMA3_27B_IT_CONFIG: dict[str, Any] = {
    # google/gemma-3-27b-it config.json: the text backbone in text_config, SigLIP in vision_config
    "model_type": "gemma3",
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "mm_tokens_per_image": 256,
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 5376,
        "num_hidden_layers": 62,
        "intermediate_size": 21504,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "query_pre_attn_scalar": 168,
    },
    "vision_config": SIGLIP_GEMMA3_VISION_CONFIG,
}
GEMMA3_4B_IT_CONFIG: dict[str, Any] = {
    # google/gemma-3-4b-it config.json: its text_config leaves the head counts, head_dim and vocabulary to
    # transformers' Gemma3TextConfig defaults (8 heads, 4 KV heads, head_dim 256, vocabulary 262,208)
    "model_type": "gemma3",
    "torch_dtype": "bfloat16",
    "mm_tokens_per_image": 256,
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_hidden_layers": 34,
        "sliding_window": 1024,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    },
    "vision_config": SIGLIP_GEMMA3_VISION_CONFIG,
}
GEMMA3_1B_IT_CONFIG: dict[str, Any] = {
    # google/gemma-3-1b-it config.json: the text model alone (model_type gemma3_text), one KV head
    "model_type": "gemma3_text",
    "hidden_size": 1152,
    "num_hidden_layers": 26,
    "intermediate_size": 6912,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "vocab_size": 262144,
    "max_position_embeddings": 32768,
    "sliding_window": 512,
    "sliding_window_pattern": 6,
    "torch_dtype": "bfloat16",
}
_GPT_OSS_COMMON: dict[str, Any] = {
    # shared by openai/gpt-oss-20b and openai/gpt-oss-120b config.json (no torch_dtype key)
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "vocab_size": 201088,
    "attention_bias": True,
    "num_experts_per_tok": 4,
    "experts_per_token": 4,
    "sliding_window": 128,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "quantization_config": {
        "quant_method": "mxfp4",
        "modules_to_not_convert": [
            "model.layers.*.self_attn",
            "model.layers.*.mlp.router",
            "model.embed_tokens",
            "lm_head",
        ],
    },
}
GPT_OSS_20B_CONFIG: dict[str, Any] = {
    # openai/gpt-oss-20b config.json: 24 layers alternating sliding/full, 32 experts
    **_GPT_OSS_COMMON,
    "num_hidden_layers": 24,
    "num_local_experts": 32,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
}
GPT_OSS_120B_CONFIG: dict[str, Any] = {
    # openai/gpt-oss-120b config.json: 36 layers alternating sliding/full, 128 experts
    **_GPT_OSS_COMMON,
    "num_hidden_layers": 36,
    "num_local_experts": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
}
LLAMA4_VISION_CONFIG: dict[str, Any] = {
    # the vision_config of meta-llama/Llama-4-Scout-17B-16E-Instruct (and of Maverick)
    "model_type": "llama4_vision_model",
    "hidden_size": 1408,
    "intermediate_size": 5632,
    "num_hidden_layers": 34,
    "num_attention_heads": 16,
    "num_channels": 3,
    "image_size": 336,
    "patch_size": 14,
    "pixel_shuffle_ratio": 0.5,
    "projector_input_dim": 4096,
    "projector_output_dim": 4096,
    "vision_output_dim": 4096,
    "multi_modal_projector_bias": False,
}
LLAMA4_SCOUT_CONFIG: dict[str, Any] = {
    # meta-llama/Llama-4-Scout-17B-16E-Instruct config.json: every layer a MoE of 16 experts + a shared expert,
    # chunked local attention on the RoPE layers (no no_rope_layers key: every 4th layer is NoPE)
    "model_type": "llama4",
    "torch_dtype": "bfloat16",
    "text_config": {
        "model_type": "llama4_text",
        "hidden_size": 5120,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "vocab_size": 202048,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "interleave_moe_layer_step": 1,
        "attention_chunk_size": 8192,
        "attention_bias": False,
        "use_qk_norm": True,
        "max_position_embeddings": 10485760,
        "torch_dtype": "bfloat16",
    },
    "vision_config": LLAMA4_VISION_CONFIG,
}
LLAMA4_MAVERICK_CONFIG: dict[str, Any] = {
    # meta-llama/Llama-4-Maverick-17B-128E-Instruct config.json: MoE every 2nd layer (128 experts), dense
    # layers of intermediate_size_mlp in between, no q/k norm
    "model_type": "llama4",
    "torch_dtype": "bfloat16",
    "text_config": {
        **LLAMA4_SCOUT_CONFIG["text_config"],
        "num_local_experts": 128,
        "interleave_moe_layer_step": 2,
        "use_qk_norm": False,
        "max_position_embeddings": 1048576,
    },
    "vision_config": LLAMA4_VISION_CONFIG,
}
QWEN3_VL_8B_INSTRUCT_CONFIG: dict[str, Any] = {
    # Qwen/Qwen3-VL-8B-Instruct config.json
    "model_type": "qwen3_vl",
    "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_vl_text",
        "hidden_size": 4096,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 12288,
        "vocab_size": 151936,
        "attention_bias": False,
        "max_position_embeddings": 262144,
        "dtype": "bfloat16",
    },
    "vision_config": {
        "model_type": "qwen3_vl",
        "depth": 27,
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "num_heads": 16,
        "in_channels": 3,
        "patch_size": 16,
        "temporal_patch_size": 2,
        "spatial_merge_size": 2,
        "out_hidden_size": 4096,
        "num_position_embeddings": 2304,
        "deepstack_visual_indexes": [8, 16, 24],
    },
}
GLM4_9B_CHAT_CONFIG: dict[str, Any] = {
    # THUDM/glm-4-9b-chat config.json: ChatGLM key names (model_type chatglm)
    "model_type": "chatglm",
    "num_layers": 40,
    "hidden_size": 4096,
    "ffn_hidden_size": 13696,
    "num_attention_heads": 32,
    "multi_query_attention": True,
    "multi_query_group_num": 2,
    "kv_channels": 128,
    "padded_vocab_size": 151552,
    "seq_length": 131072,
    "add_qkv_bias": True,
    "add_bias_linear": False,
    "rmsnorm": True,
    "post_layer_norm": True,
    "original_rope": True,
    "rope_ratio": 500,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}
GLM4_9B_CHAT_HF_CONFIG: dict[str, Any] = {
    # THUDM/glm-4-9b-chat-hf config.json: the same weights in transformers' GLM names (model_type glm)
    "model_type": "glm",
    "hidden_size": 4096,
    "num_hidden_layers": 40,
    "num_attention_heads": 32,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "intermediate_size": 13696,
    "vocab_size": 151552,
    "attention_bias": True,
    "partial_rotary_factor": 0.5,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

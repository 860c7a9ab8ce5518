"""Families with layer patterns, mixtures of experts and vision towers (DESIGN §3, §5): Gemma-2/3, gpt-oss,
Llama-4, Qwen3-VL, ChatGLM/GLM-4, and the families still refused.

Config fields are literals in builders.py (copied from the published config.json files); published counts are
literals with their source. The tests never read ../shared.
"""

from __future__ import annotations

from typing import Any

import pytest

from sizing.estimator.architecture import Architecture, architecture_from_config, architecture_summary
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.layers import AttentionKind, MlpKind
from sizing.estimator.tensors import (
    Role,
    active_parameter_count,
    mtp_parameter_count,
    parameter_count,
    tensor_inventory,
)
from tests.sizing.estimator.builders import (
    GEMMA2_9B_CONFIG,
    GEMMA3_1B_IT_CONFIG,
    GEMMA3_4B_IT_CONFIG,
    GEMMA3_27B_IT_CONFIG,
    GLM4_9B_CHAT_CONFIG,
    GLM4_9B_CHAT_HF_CONFIG,
    GPT_OSS_20B_CONFIG,
    GPT_OSS_120B_CONFIG,
    LLAMA4_MAVERICK_CONFIG,
    LLAMA4_SCOUT_CONFIG,
    QWEN3_VL_8B_INSTRUCT_CONFIG,
)


def _counts(arch: Architecture) -> tuple[int, int]:
    """Total parameters, and the parameters a text token passes through (the vision tower runs per image)."""
    tensors = tensor_inventory(arch)
    text = tuple(t for t in tensors if t.role is not Role.VISION)
    return parameter_count(tensors), active_parameter_count(text)


def _sliding_layers(arch: Architecture) -> list[int]:
    return [i for i, layer in enumerate(arch.layers) if layer.attention.kind is AttentionKind.SLIDING]


def _windows(arch: Architecture) -> set[int | None]:
    return {layer.attention.window for layer in arch.layers if layer.attention.kind is AttentionKind.SLIDING}


def _refusal(config: dict[str, Any]) -> SizingError:
    with pytest.raises(SizingError) as caught:
        architecture_from_config(config)
    return caught.value


# --- Gemma-2 ----------------------------------------------------------------------------------------------------


def test_gemma2_9b_parameters_equal_the_published_count():
    # given google/gemma-2-9b: 9,241,705,984 parameters (Hub safetensors metadata; model card "9B")
    config = GEMMA2_9B_CONFIG

    # when
    total, active = _counts(architecture_from_config(config))

    # then
    # head_dim 256 (not 3584 / 16 = 224): q 3584 × (16×256) = 14,680,064; k, v 3584 × (8×256) = 7,340,032 each;
    #   o 14,680,064 → 44,040,192; GeGLU 3 × 3584 × 14336 = 154,140,672; 4 norms × 3584 = 14,336
    #   → 198,195,200 per layer × 42 = 8,324,198,400
    # tied embeddings once 256,000 × 3584 = 917,504,000; final norm 3,584
    # 8,324,198,400 + 917,504,000 + 3,584 = 9,241,705,984
    assert total == 9_241_705_984
    assert active == total  # dense


def test_gemma2_alternates_sliding_and_global_layers_with_four_norms():
    # given google/gemma-2-9b: no layer_types key, so transformers' rule applies (layer 0 slides)

    # when
    arch = architecture_from_config(GEMMA2_9B_CONFIG)

    # then: the 21 even layers slide over 4096 tokens, the 21 odd ones see the whole sequence
    assert _sliding_layers(arch) == list(range(0, 42, 2))
    assert _windows(arch) == {4096}
    assert {layer.norms for layer in arch.layers} == {4}
    assert "lm_head" not in {t.name for t in tensor_inventory(arch)}
    assert arch.warnings == ()  # the window is modelled per layer, not warned about


def test_gemma2_layer_types_take_precedence_over_the_parity_rule():
    # given a Gemma-2 config whose layer_types makes only the last layer global
    layer_types = ["sliding_attention"] * 41 + ["full_attention"]
    config = {**GEMMA2_9B_CONFIG, "layer_types": layer_types}

    # when
    arch = architecture_from_config(config)

    # then
    assert _sliding_layers(arch) == list(range(41))


# --- Gemma-3 ----------------------------------------------------------------------------------------------------


def test_gemma3_27b_it_parameters_equal_the_published_count_with_the_siglip_tower():
    # given google/gemma-3-27b-it: 27,432,406,640 parameters (Hub safetensors metadata; model card "27B"),
    # of which the SigLIP encoder is the published ≈ 417M
    config = GEMMA3_27B_IT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, active = _counts(arch)

    # then
    # text: q 5376 × 4096 = 22,020,096; k, v 5376 × 2048 = 11,010,048 each; o 22,020,096 → 66,060,288;
    #   q/k norms 128 + 128; GeGLU 3 × 5376 × 21504 = 346,816,512; 4 norms 21,504 → 412,898,560 per layer
    #   × 62 = 25,599,710,720; tied embeddings 262,208 × 5376 = 1,409,630,208; final norm 5,376
    #   → 27,009,346,304
    # SigLIP: patch conv 3 × 14² × 1152 + 1152 = 678,528; positions (896/14)² × 1152 = 4,718,592;
    #   per block LayerNorms 2×2×1152 = 4,608, attention 4 × (1152² + 1152) = 5,313,024,
    #   MLP 2 × 1152 × 4304 + 4304 + 1152 = 9,921,872 → 15,239,504 × 27 = 411,466,608; post-LayerNorm 2,304
    #   → 416,866,032
    # projector: mm_input_projection_weight 1152 × 5376 = 6,193,152; soft-embedding norm 1,152 → 6,194,304
    # 27,009,346,304 + 416,866,032 + 6,194,304 = 27,432,406,640
    assert arch.vision_parameters == 423_060_336
    assert arch.vision_description.startswith("SigLIP vision encoder (27 blocks of width 1152")
    assert "416,866,032 parameters" in arch.vision_description
    assert total == 27_432_406_640
    assert active == total - 423_060_336  # dense: every text weight, not the image encoder


def test_gemma3_27b_it_has_five_local_layers_to_one_global():
    # given google/gemma-3-27b-it: sliding_window_pattern 6, sliding_window 1024, 62 layers

    # when
    arch = architecture_from_config(GEMMA3_27B_IT_CONFIG)

    # then: every 6th layer (5, 11, ..., 59) is global: 10 global, 52 sliding over 1024 tokens
    global_layers = [i for i, layer in enumerate(arch.layers) if layer.attention.kind is AttentionKind.FULL]
    assert global_layers == list(range(5, 62, 6))
    assert len(_sliding_layers(arch)) == 52
    assert _windows(arch) == {1024}
    assert all(layer.attention.qk_norm and layer.norms == 4 for layer in arch.layers)
    assert architecture_summary(arch)["attention_layers"] == {"sliding": 52, "full": 10}
    assert architecture_summary(arch)["sliding_windows"] == [1024]


def test_gemma3_kv_cache_of_a_long_sequence_is_mostly_windowed():
    # given google/gemma-3-27b-it and a 32,768-token sequence
    arch = architecture_from_config(GEMMA3_27B_IT_CONFIG)
    tokens = 32_768

    # when
    elements = sum(
        layer.attention.kv_elements_per_token(tp=1) * layer.attention.cached_tokens(tokens) for layer in arch.layers
    )

    # then: every layer caches 16 KV heads × 128 × 2 (K, V) = 4,096 elements per token;
    # 10 global layers × 32,768 tokens + 52 sliding layers × 1,024 tokens = 380,928 token-layers
    # → 380,928 × 4,096 = 1,560,281,088 elements
    assert {layer.attention.kv_elements_per_token(tp=1) for layer in arch.layers} == {4096}
    assert elements == 1_560_281_088


def test_gemma3_4b_it_fills_omitted_fields_from_the_transformers_defaults_and_says_so():
    # given google/gemma-3-4b-it: 4,300,079,472 parameters (Hub safetensors metadata); its text_config omits
    # the head counts, head_dim and vocabulary
    config = GEMMA3_4B_IT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then
    # defaults: 8 heads, 4 KV heads, head_dim 256, vocabulary 262,208
    # text: q 2560 × 2048 = 5,242,880; k, v 2560 × 1024 = 2,621,440 each; o 5,242,880 → 15,728,640; q/k norms 512;
    #   GeGLU 3 × 2560 × 10240 = 78,643,200; 4 norms 10,240 → 94,382,592 × 34 = 3,209,008,128;
    #   tied embeddings 262,208 × 2560 = 671,252,480; final norm 2,560 → 3,880,263,168
    # vision: SigLIP 416,866,032 + projector 1152 × 2560 + 1152 = 2,950,272 → 419,816,304
    # 3,880,263,168 + 419,816,304 = 4,300,079,472
    assert (arch.num_attention_heads, arch.num_key_value_heads, arch.head_dim, arch.vocab_size) == (8, 4, 256, 262_208)
    assert arch.warnings == (
        "config.json omits vocab_size, num_attention_heads, num_key_value_heads, head_dim: used the defaults of "
        "transformers' Gemma3TextConfig (vocab_size 262208, num_attention_heads 8, num_key_value_heads 4, "
        "head_dim 256)",
    )
    assert arch.vision_parameters == 419_816_304
    assert total == 4_300_079_472


def test_gemma3_text_1b_it_parameters_equal_the_published_count():
    # given google/gemma-3-1b-it (model_type gemma3_text, no vision tower): 999,885,952 parameters
    # (Hub safetensors metadata)
    config = GEMMA3_1B_IT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then
    # q 1152 × 1024 = 1,179,648; k, v 1152 × 256 = 294,912 each; o 1,179,648 → 2,949,120; q/k norms 512;
    # GeGLU 3 × 1152 × 6912 = 23,887,872; 4 norms 4,608 → 26,842,112 × 26 = 697,894,912
    # tied embeddings 262,144 × 1152 = 301,989,888; final norm 1,152
    # 697,894,912 + 301,989,888 + 1,152 = 999,885,952
    assert arch.vision_parameters == 0
    assert _windows(arch) == {512}
    assert total == 999_885_952


# --- gpt-oss ----------------------------------------------------------------------------------------------------

# gpt-oss hand count, per layer (h 2880, 64 heads × 64, 8 KV heads):
#   attention: q 2880 × 4096 = 11,796,480; k, v 2880 × 512 = 1,474,560 each; o 11,796,480 → 26,542,080;
#     biases 4096 + 512 + 512 + 2880 = 8,000; sinks 64 → 26,550,144
#   one expert: gate/up 2 × 2880 × 2880 + down 2880 × 2880 = 24,883,200; biases 2 × 2880 + 2880 = 8,640
#     → 24,891,840
#   norms 2 × 2880 = 5,760; embeddings and untied head 201,088 × 2880 = 579,133,440 each; final norm 2,880


@pytest.mark.parametrize(
    ("config", "published_total", "published_active"),
    [
        # OpenAI gpt-oss model card, table 1: 20.91B total, 3.61B active; Hub: 20,914,757,184
        pytest.param(GPT_OSS_20B_CONFIG, 20_914_757_184, 3.61e9, id="gpt-oss-20b"),
        # OpenAI gpt-oss model card, table 1: 116.83B total, 5.13B active; Hub: 116,829,156,672
        pytest.param(GPT_OSS_120B_CONFIG, 116_829_156_672, 5.13e9, id="gpt-oss-120b"),
    ],
)
def test_gpt_oss_parameters_equal_the_published_counts(config, published_total, published_active):
    # given a gpt-oss config (MoE every layer, 4 experts per token)
    arch = architecture_from_config(config)

    # when
    total, active = _counts(arch)
    active_without_lookup = active_parameter_count(tensor_inventory(arch), input_embedding=False)

    # then
    # 20b: router 2880 × 32 + 32 = 92,192; layer 26,550,144 + 32 × 24,891,840 + 92,192 + 5,760 = 823,186,976
    #   × 24 = 19,756,487,424; + 2 × 579,133,440 + 2,880 = 20,914,757,184
    #   active layer 26,550,144 + 4 × 24,891,840 + 92,192 + 5,760 = 126,215,456 × 24 = 3,029,170,944
    #   → 4,187,440,704 with both vocabulary matrices; OpenAI leaves the input embedding (a lookup) out:
    #   4,187,440,704 − 579,133,440 = 3,608,307,264 (3.61B)
    # 120b: router 2880 × 128 + 128 = 368,768; layer 26,550,144 + 128 × 24,891,840 + 368,768 + 5,760
    #   = 3,213,080,192 × 36 = 115,670,886,912; + 1,158,266,880 + 2,880 = 116,829,156,672
    #   active layer 126,492,032 × 36 = 4,553,713,152 → 5,711,982,912; without the input embedding
    #   5,132,849,472 (5.13B)
    expected_active = {20_914_757_184: 4_187_440_704, 116_829_156_672: 5_711_982_912}[published_total]
    assert total == published_total
    assert active == expected_active
    assert active_without_lookup == {20_914_757_184: 3_608_307_264, 116_829_156_672: 5_132_849_472}[published_total]
    assert abs(active_without_lookup - published_active) / published_active < 0.005


def test_active_parameters_without_the_lookup_keep_a_tied_embedding_table():
    # given Qwen3-0.6B-like numbers with tied embeddings: the table is also the output head, multiplied per token
    config = {
        "model_type": "qwen3",
        "hidden_size": 1024,
        "num_hidden_layers": 2,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 3072,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    }
    tensors = tensor_inventory(architecture_from_config(config))

    # when / then: nothing is left out (151,936 × 1,024 = 155,582,464 stays in)
    assert active_parameter_count(tensors, input_embedding=False) == active_parameter_count(tensors)

    # and with a separate head, exactly the 155,582,464-element input table is left out
    untied = tensor_inventory(architecture_from_config({**config, "tie_word_embeddings": False}))
    assert active_parameter_count(untied) - active_parameter_count(untied, input_embedding=False) == 155_582_464


def test_gpt_oss_20b_layer_table_alternates_128_token_windows_with_full_attention():
    # given openai/gpt-oss-20b: layer_types alternates sliding_attention / full_attention, sliding_window 128

    # when
    arch = architecture_from_config(GPT_OSS_20B_CONFIG)

    # then
    assert _sliding_layers(arch) == list(range(0, 24, 2))
    assert _windows(arch) == {128}
    assert all(layer.attention.sinks and layer.attention.qkv_bias and layer.attention.o_bias for layer in arch.layers)
    assert {
        (
            layer.mlp.kind,
            layer.mlp.num_experts,
            layer.mlp.experts_per_token,
            layer.mlp.intermediate_size,
            layer.mlp.router_bias,
            layer.mlp.expert_bias,
        )
        for layer in arch.layers
    } == {(MlpKind.MOE, 32, 4, 2880, True, True)}
    assert not arch.tie_word_embeddings


def test_gpt_oss_20b_kv_cache_per_token_and_per_sequence():
    # given openai/gpt-oss-20b and a 4,096-token sequence
    arch = architecture_from_config(GPT_OSS_20B_CONFIG)
    tokens = 4096

    # when
    per_layer = [layer.attention.kv_elements_per_token(tp=1) for layer in arch.layers]
    held = sum(
        layer.attention.kv_elements_per_token(tp=1) * layer.attention.cached_tokens(tokens) for layer in arch.layers
    )

    # then: 8 KV heads × 64 × 2 (K, V) = 1,024 elements per token in each of the 24 layers: 24,576 in all;
    # over 4,096 tokens the 12 full layers hold 12 × 4,096 × 1,024 = 50,331,648 elements and the 12 sliding
    # layers only their 128-token window, 12 × 128 × 1,024 = 1,572,864 → 51,904,512
    assert per_layer == [1024] * 24
    assert sum(per_layer) == 24_576
    assert held == 51_904_512


def test_gpt_oss_expert_biases_are_routed_bias_tensors():
    # given openai/gpt-oss-20b (two layer kinds, sliding and full, 12 layers each)
    tensors = tensor_inventory(architecture_from_config(GPT_OSS_20B_CONFIG))

    # when
    biases: dict[str, tuple[int, int, int, int]] = {}
    for t in tensors:
        if t.name.startswith("experts.") and t.name.endswith(".bias"):
            layers = biases.get(t.name, (0, 0, 0, 0))[3]
            biases[t.name] = (t.rows, t.copies, t.active_copies, layers + t.per_model)

    # then: per expert a 2880 gate bias, a 2880 up bias and a 2880 down bias (hidden), 32 experts, 4 used,
    # in 24 layers; kept in 16 bits (not part of the MXFP4 experts)
    assert biases == {
        "experts.gate_proj.bias": (2880, 32, 4, 24),
        "experts.up_proj.bias": (2880, 32, 4, 24),
        "experts.down_proj.bias": (2880, 32, 4, 24),
    }
    assert not any(t.quantizable for t in tensors if t.name in biases)
    assert {t.rows for t in tensors if t.name == "sinks"} == {64}


# --- Llama-4 ----------------------------------------------------------------------------------------------------


def test_llama4_scout_parameters_equal_the_published_count():
    # given meta-llama/Llama-4-Scout-17B-16E-Instruct: 108,641,793,536 parameters (Hub safetensors metadata;
    # model card "109B total, 17B active")
    config = LLAMA4_SCOUT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, active = _counts(arch)

    # then
    # text per layer: q 5120 × 5120 = 26,214,400; k, v 5120 × 1024 = 5,242,880 each; o 26,214,400
    #   → 62,914,560; 16 experts × 3 × 5120 × 8192 = 16 × 125,829,120 = 2,013,265,920; router 5120 × 16 = 81,920;
    #   shared expert 125,829,120; norms 10,240 → 2,202,101,760 × 48 = 105,700,884,480
    #   embeddings + untied head 2 × 202,048 × 5120 = 2,068,971,520; final norm 5,120 → 107,769,861,120
    # vision: patch linear 3 × 14² × 1408 = 827,904; class embedding 1,408; positions (24² + 1) × 1408 = 812,416;
    #   pre/post LayerNorms 5,632; per block 4 × (1408² + 1408) + 2 × 1408 × 5632 + 5632 + 1408 + 4 × 1408
    #   = 23,807,872 × 34 = 809,467,648; adapter 5632 × 4096 + 4096² = 39,845,888; projector 4096 × 5120
    #   = 20,971,520 → 871,932,416
    # 107,769,861,120 + 871,932,416 = 108,641,793,536
    # active: layer 62,914,560 + 2 × 125,829,120 (one routed + the shared expert) + 81,920 + 10,240
    #   = 314,664,960 × 48 = 15,103,918,080; + 2,068,971,520 + 5,120 = 17,172,894,720 (the card's "17B")
    assert arch.vision_parameters == 871_932_416
    assert total == 108_641_793_536
    assert abs(total - 109e9) / 109e9 < 0.005
    assert active == 17_172_894_720
    assert round(active / 1e9) == 17


def test_llama4_scout_chunked_layers_are_sized_as_sliding_windows_of_one_chunk():
    # given meta-llama/Llama-4-Scout-17B-16E-Instruct: attention_chunk_size 8192, no no_rope_layers key

    # when
    arch = architecture_from_config(LLAMA4_SCOUT_CONFIG)

    # then: layers 3, 7, ..., 47 (NoPE) keep the whole sequence; the 36 RoPE layers keep one 8192-token chunk
    full = [i for i, layer in enumerate(arch.layers) if layer.attention.kind is AttentionKind.FULL]
    assert full == list(range(3, 48, 4))
    assert len(_sliding_layers(arch)) == 36
    assert _windows(arch) == {8192}
    assert {layer.attention.kv_elements_per_token(tp=1) for layer in arch.layers} == {2048}  # 8 × 128 × 2
    assert not any(layer.attention.qk_norm for layer in arch.layers)  # an L2 norm without weights
    assert arch.warnings == (
        "Llama-4 chunked local attention (36 of 48 layers, 8192-token chunks) is sized as a sliding window of "
        "8192 tokens, as vLLM allocates chunked-local layers; the other 12 layers keep the whole sequence",
    )


def test_llama4_no_rope_layers_decide_which_layers_are_chunked():
    # given Scout with an explicit no_rope_layers (1 = RoPE, chunked) that makes only layer 0 NoPE
    config = {
        **LLAMA4_SCOUT_CONFIG,
        "text_config": {**LLAMA4_SCOUT_CONFIG["text_config"], "no_rope_layers": [0] + [1] * 47},
    }

    # when
    arch = architecture_from_config(config)

    # then
    assert _sliding_layers(arch) == list(range(1, 48))


def test_llama4_maverick_interleaves_moe_and_dense_layers():
    # given meta-llama/Llama-4-Maverick-17B-128E-Instruct: 401,583,781,376 parameters (Hub safetensors
    # metadata; model card "400B total, 17B active"), MoE every 2nd layer
    config = LLAMA4_MAVERICK_CONFIG

    # when
    arch = architecture_from_config(config)
    total, active = _counts(arch)

    # then
    # MoE layers (1, 3, ..., 47): 62,914,560 + 128 × 125,829,120 + 5120 × 128 + 125,829,120 + 10,240
    #   = 16,295,536,640; dense layers (0, 2, ..., 46): 62,914,560 + 3 × 5120 × 16384 + 10,240 = 314,583,040
    # 24 × (16,295,536,640 + 314,583,040) + 2,068,971,520 + 5,120 = 400,711,848,960; + vision 871,932,416
    #   = 401,583,781,376
    # active: 24 × (62,914,560 + 2 × 125,829,120 + 655,360 + 10,240) + 24 × 314,583,040 + 2,068,976,640
    #   = 17,184,691,200
    moe = [i for i, layer in enumerate(arch.layers) if layer.mlp.kind is MlpKind.MOE]
    assert moe == list(range(1, 48, 2))
    assert {layer.mlp.intermediate_size for layer in arch.layers if layer.mlp.kind is MlpKind.DENSE} == {16384}
    assert total == 401_583_781_376
    assert active == 17_184_691_200


def test_llama4_without_vision_config_counts_no_tower_and_says_so():
    # given the Scout text_config alone under the llama4 wrapper (a trimmed config)
    config = {key: value for key, value in LLAMA4_SCOUT_CONFIG.items() if key != "vision_config"}

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then: the text backbone only, 107,769,861,120
    assert arch.vision_parameters == 0
    assert total == 107_769_861_120
    assert arch.warnings[-1] == "config.json has no vision_config: a vision tower in the checkpoint is not counted"


# --- Qwen3-VL ---------------------------------------------------------------------------------------------------


def test_qwen3_vl_8b_instruct_parameters_equal_the_published_count():
    # given Qwen/Qwen3-VL-8B-Instruct: 8,767,123,696 parameters (Hub safetensors metadata; "8.77B")
    config = QWEN3_VL_8B_INSTRUCT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then
    # text: q 4096² = 16,777,216; k, v 4096 × 1024 = 4,194,304 each; o 16,777,216 → 41,943,040; q/k norms 256;
    #   SwiGLU 3 × 4096 × 12288 = 150,994,944; norms 8,192 → 192,946,432 × 36 = 6,946,071,552;
    #   embeddings + untied head 2 × 151,936 × 4096 = 1,244,659,712; final norm 4,096 → 8,190,735,360
    # vision: Conv3d 3 × 2 × 16 × 16 × 1152 + 1152 = 1,770,624; pos_embed 2304 × 1152 = 2,654,208;
    #   per block LayerNorms 4,608 + qkv 1152 × 3456 + 3456 + proj 1152² + 1152 + fc1 1152 × 4304 + 4304
    #   + fc2 4304 × 1152 + 1152 = 15,239,504 × 27 = 411,466,608;
    #   merger (LayerNorm 1152: 2,304) + fc1 4608² + 4608 + fc2 4608 × 4096 + 4096 = 40,119,040;
    #   3 DeepStack mergers (LayerNorm 4608: 9,216) 40,125,952 each = 120,377,856 → 576,388,336
    # 8,190,735,360 + 576,388,336 = 8,767,123,696
    assert arch.vision_parameters == 576_388_336
    assert "3 DeepStack mergers" in arch.vision_description
    assert total == 8_767_123_696
    assert all(layer.attention.kind is AttentionKind.FULL and layer.attention.qk_norm for layer in arch.layers)
    assert {layer.attention.kv_elements_per_token(tp=1) for layer in arch.layers} == {2048}  # 8 × 128 × 2


def test_qwen3_vl_text_config_with_experts_is_read_as_qwen3_moe():
    # given a Qwen3-VL config whose text_config carries MoE keys (4 layers, 8 experts of 64, 2 per token)
    text = {
        **QWEN3_VL_8B_INSTRUCT_CONFIG["text_config"],
        "num_hidden_layers": 4,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [0],
    }
    config = {**QWEN3_VL_8B_INSTRUCT_CONFIG, "text_config": text}

    # when
    arch = architecture_from_config(config)

    # then: layer 0 stays dense, layers 1-3 route over 8 experts
    assert [layer.mlp.kind for layer in arch.layers] == [MlpKind.DENSE, MlpKind.MOE, MlpKind.MOE, MlpKind.MOE]
    assert arch.layers[1].mlp.num_experts == 8
    assert arch.vision_parameters == 576_388_336


# --- ChatGLM / GLM-4 --------------------------------------------------------------------------------------------


def test_glm4_9b_chat_chatglm_keys_give_the_published_count():
    # given THUDM/glm-4-9b-chat in ChatGLM key names: 9,399,951,360 trainable parameters as its loader logs them
    # (model card "9.4B")
    config = GLM4_9B_CHAT_CONFIG

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then
    # query_key_value 4096 × (32 + 2 × 2) × 128 = 18,874,368 + bias 4,608; dense 4096 × 4096 = 16,777,216;
    # dense_h_to_4h 4096 × 2 × 13696 + dense_4h_to_h 13696 × 4096 = 168,296,448; 2 RMSNorms 8,192
    #   → 203,960,832 per layer × 40 = 8,158,433,280
    # word embeddings + output_layer 2 × 151,552 × 4096 = 1,241,513,984; final norm 4,096
    # 8,158,433,280 + 1,241,513,984 + 4,096 = 9,399,951,360
    assert (arch.num_hidden_layers, arch.num_key_value_heads, arch.head_dim) == (40, 2, 128)
    assert (arch.qkv_bias, arch.o_bias, arch.max_position_embeddings) == (True, False, 131_072)
    assert total == 9_399_951_360
    assert abs(total - 9.40e9) / 9.40e9 < 0.005
    # KV per token: 40 layers × 2 groups × 128 × 2 (K, V) = 20,480 elements
    assert sum(layer.attention.kv_elements_per_token(tp=1) for layer in arch.layers) == 20_480


def test_chatglm_config_missing_a_key_is_refused_naming_the_chatglm_key():
    # given glm-4-9b-chat without ffn_hidden_size
    config = {key: value for key, value in GLM4_9B_CHAT_CONFIG.items() if key != "ffn_hidden_size"}

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.MISSING_FIELDS
    assert error.extra == {"missing": ["ffn_hidden_size"]}


def test_glm_transformers_names_give_the_chatglm_count():
    # given THUDM/glm-4-9b-chat-hf: the same weights in transformers' GLM names (q/k/v biases, no o bias)

    # when
    total, _ = _counts(architecture_from_config(GLM4_9B_CHAT_HF_CONFIG))

    # then: the ChatGLM count above, 9,399,951,360
    assert total == 9_399_951_360


def test_glm4_adds_post_attention_and_post_mlp_norms():
    # given the glm-4-9b-chat shapes under model_type glm4 (GLM-4-0414 layers: 4 RMSNorms per layer)
    config = {**GLM4_9B_CHAT_HF_CONFIG, "model_type": "glm4"}

    # when
    arch = architecture_from_config(config)
    total, _ = _counts(arch)

    # then: 9,399,951,360 + 40 layers × 2 extra norms × 4096 = 9,399,951,360 + 327,680 = 9,400,279,040
    assert {layer.norms for layer in arch.layers} == {4}
    assert (arch.qkv_bias, arch.o_bias) == (True, False)
    assert total == 9_400_279_040


# --- layer_types validation and the families still refused --------------------------------------------------


def test_layer_types_of_the_wrong_length_is_invalid_config():
    # given gpt-oss-20b with one layer type missing
    config = {**GPT_OSS_20B_CONFIG, "layer_types": GPT_OSS_20B_CONFIG["layer_types"][:-1]}

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.INVALID_CONFIG
    assert error.extra == {"field": "layer_types"}


def test_layer_types_with_linear_attention_is_refused_naming_it():
    # given a Gemma-3 text config whose layer_types holds a layer kind the estimator does not model
    config = {**GEMMA3_1B_IT_CONFIG, "layer_types": ["linear_attention"] + ["full_attention"] * 25}

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE
    assert error.extra == {"field": "layer_types", "unsupported": ["linear_attention"]}


GEMMA4_26B_A4B = {  # google/gemma-4-26B-A4B config.json (sizing keys)
    "model_type": "gemma4",
    "tie_word_embeddings": True,
    "text_config": {
        "model_type": "gemma4_text",
        "hidden_size": 2816,
        "num_hidden_layers": 30,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "num_global_key_value_heads": 2,
        "head_dim": 256,
        "global_head_dim": 512,
        "attention_k_eq_v": True,
        "intermediate_size": 2112,
        "enable_moe_block": True,
        "num_experts": 128,
        "top_k_experts": 8,
        "moe_intermediate_size": 704,
        "sliding_window": 1024,
        "vocab_size": 262144,
    },
    "vision_config": {"model_type": "gemma4_vision", "hidden_size": 1152, "num_hidden_layers": 27},
}


def test_gemma4_is_refused_naming_what_is_not_modelled():
    # given google/gemma-4-26B-A4B: K=V global attention with its own head size, a dense MLP beside a MoE block

    # when
    error = _refusal(GEMMA4_26B_A4B)

    # then
    assert error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE
    assert "attention_k_eq_v" in error.message
    assert "global_head_dim" in error.message


DEEPSEEK_V3_CONFIG = {  # deepseek-ai/DeepSeek-V3 config.json, the keys that size it (quantization_config aside)
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "vocab_size": 129280,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "num_nextn_predict_layers": 1,
    "topk_method": "noaux_tc",
    "tie_word_embeddings": False,
    "max_position_embeddings": 163840,
    "torch_dtype": "bfloat16",
}


def test_deepseek_v3_counts_agree_with_the_published_671b_37b_and_14b():
    # given DeepSeek-V3 (technical report and model card: "671B total parameters with 37B activated for each
    # token"; README: "685B ... 671B of the Main Model weights and 14B of the Multi-Token Prediction Module")
    arch = architecture_from_config(DEEPSEEK_V3_CONFIG)
    tensors = tensor_inventory(arch)

    # when
    total, active = parameter_count(tensors), active_parameter_count(tensors)
    active_without_lookup = active_parameter_count(tensors, input_embedding=False)

    # then, by hand:
    # MLA per layer: q_a 7168×1536 = 11,010,048; q_a norm 1,536; q_b 1536×128×192 = 37,748,736;
    #   kv_a 7168×576 = 4,128,768; kv_a norm 512; kv_b 512×128×256 = 16,777,216; o 128×128×7168 = 117,440,512
    #   → 187,107,328; two layer norms 14,336
    # dense layer (first 3): + 3×7168×18432 = 396,361,728 → 583,483,392
    # MoE layer: expert 3×7168×2048 = 44,040,192; 256 routed 11,274,289,152 + 1 shared + router 1,835,008
    #   + correction bias 256 → 11,507,286,272
    # total: 3 × 583,483,392 + 58 × 11,507,286,272 + embedding and head 2 × 926,679,040 + norm 7,168
    #   = 671,026,419,200 (671B)
    assert total == 671_026_419_200
    # active MoE layer: 187,121,664 + 9 experts 396,361,728 + 1,835,008 + 256 = 585,318,656
    #   3 × 583,483,392 + 58 × 585,318,656 + head 926,679,040 + 7,168 = 36,625,618,432 (37B: DeepSeek
    #   leaves the input-embedding lookup out); with the lookup 37,552,297,472
    assert active_without_lookup == 36_625_618_432
    assert active == 37_552_297_472
    assert round(active_without_lookup / 1e9) == 37
    # MTP module: one MoE layer 11,507,286,272 + enorm, hnorm 14,336 + eh_proj 2×7168×7168 = 102,760,448
    #   + head norm 7,168 + its own embedding and head 1,853,358,080 = 13,463,426,304; the README's 14B is
    #   685B (Hub) − 671B, two rounded figures: within their combined rounding of ±1B
    assert mtp_parameter_count(arch) == 13_463_426_304
    assert abs(mtp_parameter_count(arch) - 14e9) <= 1e9

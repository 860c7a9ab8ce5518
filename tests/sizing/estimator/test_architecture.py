"""Reading config.json: refusals that name what is missing, warnings, and invalid fields (DESIGN §3)."""

from __future__ import annotations

from typing import Any

import pytest

from sizing.estimator.architecture import (
    UNSUPPORTED_FAMILIES,
    architecture_from_config,
    architecture_from_numbers,
)
from sizing.estimator.dtypes import DType
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.tensors import parameter_count, tensor_inventory
from tests.sizing.estimator.builders import (
    LLAMA3_8B_CONFIG,
    MISTRAL_7B_V01_CONFIG,
    QWEN3_06B_CONFIG,
    QWEN25_05B_INSTRUCT_CONFIG,
    QWEN25_7B_CONFIG,
    llama_config,
)

# Sizing keys of the published configs of families that are not modelled yet. Each carries every
# standard dense field, so a missing registry entry would size it silently as a dense decoder.
MIXTRAL_8X7B = {  # mistralai/Mixtral-8x7B-v0.1 config.json
    "model_type": "mixtral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "torch_dtype": "bfloat16",
}
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3 config.json
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "intermediate_size": 18432,
    "vocab_size": 129280,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "n_routed_experts": 256,
    "num_nextn_predict_layers": 1,
    "torch_dtype": "bfloat16",
}
GLM_5 = {  # zai-org/GLM-5-FP8 config.json (sizing keys): MLA + MoE, with a DSA indexer on top
    "model_type": "glm_moe_dsa",
    "hidden_size": 6144,
    "num_hidden_layers": 78,
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "intermediate_size": 12288,
    "vocab_size": 154880,
    "kv_lora_rank": 512,
    "q_lora_rank": 2048,
    "qk_rope_head_dim": 64,
    "n_routed_experts": 256,
    "index_n_heads": 32,
    "index_head_dim": 128,
    "index_topk": 2048,
    "torch_dtype": "bfloat16",
}
NEMOTRON_H_56B = {  # nvidia/Nemotron-H-56B-Base-8K config.json
    "model_type": "nemotron_h",
    "hidden_size": 8192,
    "num_hidden_layers": 118,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 32768,
    "vocab_size": 131072,
    "hybrid_override_pattern": "M-M-M-M*-",
    "ssm_state_size": 256,
    "torch_dtype": "bfloat16",
}
QWEN35_27B = {  # Qwen/Qwen3.5-27B config.json: everything sits in text_config / vision_config
    "model_type": "qwen3_5",
    "text_config": {"hidden_size": 5120},
    "vision_config": {"depth": 27},
}


def _refusal(config: dict[str, Any]) -> SizingError:
    with pytest.raises(SizingError) as caught:
        architecture_from_config(config)
    return caught.value


@pytest.mark.parametrize(
    ("config", "names_what_is_missing"),
    [
        pytest.param(GLM_5, "DeepSeek Sparse Attention", id="glm_moe_dsa"),
        pytest.param(NEMOTRON_H_56B, "Mamba-2 state-space layers", id="nemotron_h"),
        pytest.param(QWEN35_27B, "Gated DeltaNet", id="qwen3_5"),
    ],
)
def test_unsupported_family_is_refused_naming_what_is_not_modelled(config, names_what_is_missing):
    # given a published config of a family whose structure the estimator does not model

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE
    assert error.message.startswith(f"{config['model_type']}: ")
    assert names_what_is_missing in error.message
    assert error.extra == {"model_type": config["model_type"]}


@pytest.mark.parametrize("model_type", sorted(UNSUPPORTED_FAMILIES))
def test_every_registered_unsupported_family_is_refused_even_with_dense_fields(model_type):
    # given the Llama-3-8B dense fields under an unsupported model_type
    config = llama_config(model_type=model_type)

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE
    assert error.message == f"{model_type}: {UNSUPPORTED_FAMILIES[model_type]}"


def test_known_family_missing_fields_is_refused_naming_them():
    # given a llama config without intermediate_size and vocab_size
    config = {key: value for key, value in LLAMA3_8B_CONFIG.items() if key not in ("intermediate_size", "vocab_size")}

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.MISSING_FIELDS
    assert error.extra == {"missing": ["intermediate_size", "vocab_size"]}
    assert "intermediate_size, vocab_size" in error.message


def test_config_without_model_type_is_refused_naming_it():
    # given
    config = {key: value for key, value in LLAMA3_8B_CONFIG.items() if key != "model_type"}

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.MISSING_FIELDS
    assert error.extra == {"missing": ["model_type"]}


def test_unknown_model_type_with_standard_fields_is_sized_with_a_warning():
    # given the Llama-3-8B fields under a model_type nobody registered
    config = llama_config(model_type="acme_llm")

    # when
    arch = architecture_from_config(config)

    # then: sized as a Llama-like dense decoder (Llama-3-8B: 8,030,261,248 parameters), and it says so
    assert parameter_count(tensor_inventory(arch)) == 8_030_261_248
    assert len(arch.warnings) == 1
    assert arch.warnings[0].startswith("unknown model_type 'acme_llm': sized as a Llama-like dense decoder")


def test_unknown_model_type_without_standard_fields_is_refused_naming_them():
    # given an unknown family that names its sizes differently (ChatGLM-style keys)
    config = {
        "model_type": "acme_glm",
        "hidden_size": 4096,
        "num_layers": 40,
        "num_attention_heads": 32,
        "ffn_hidden_size": 13696,
        "padded_vocab_size": 151552,
    }

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE
    assert error.extra == {
        "model_type": "acme_glm",
        "missing": ["num_hidden_layers", "intermediate_size", "vocab_size"],
    }
    assert "num_hidden_layers, intermediate_size, vocab_size" in error.message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("hidden_size", 0, id="hidden_size-zero"),
        pytest.param("num_hidden_layers", -32, id="layers-negative"),
        pytest.param("intermediate_size", 14336.0, id="intermediate-float"),
        pytest.param("vocab_size", "128256", id="vocab-string"),
        pytest.param("num_attention_heads", True, id="heads-bool"),
        pytest.param("num_key_value_heads", 0, id="kv-heads-zero"),
        pytest.param("head_dim", 127.5, id="head-dim-float"),
    ],
)
def test_non_positive_or_non_integer_field_is_invalid_config(field, value):
    # given
    config = llama_config(**{field: value})

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.INVALID_CONFIG
    assert error.extra == {"field": field}
    assert error.message == f"config.json field '{field}' must be a positive integer, got {value!r}"


def test_heads_not_a_multiple_of_kv_heads_is_invalid_config():
    # given 32 query heads over 6 KV heads (32 % 6 = 2)
    config = llama_config(num_key_value_heads=6)

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.INVALID_CONFIG
    assert error.extra == {"field": "num_key_value_heads"}


def test_hidden_not_divisible_by_heads_without_head_dim_is_invalid_config():
    # given 4096 / 24 = 170.67 and no head_dim key
    config = {
        key: value
        for key, value in llama_config(num_attention_heads=24, num_key_value_heads=8).items()
        if key != "head_dim"
    }

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.INVALID_CONFIG
    assert error.extra == {"field": "head_dim"}


def test_quantised_torch_dtype_is_invalid_config():
    # given a torch_dtype that is not a 16/32-bit activation dtype
    config = llama_config(torch_dtype="float8_e4m3fn")

    # when
    error = _refusal(config)

    # then
    assert error.code is SizingErrorCode.INVALID_CONFIG
    assert error.extra == {"field": "torch_dtype"}


def test_missing_torch_dtype_assumes_bfloat16_with_a_warning():
    # given
    config = {key: value for key, value in LLAMA3_8B_CONFIG.items() if key != "torch_dtype"}

    # when
    arch = architecture_from_config(config)

    # then
    assert arch.dtype is DType.BF16
    assert arch.warnings == ("config.json has no torch_dtype; assuming bfloat16 weights",)


def test_mistral_7b_v01_sliding_window_is_warned_about():
    # given mistralai/Mistral-7B-v0.1: sliding_window 4096

    # when
    arch = architecture_from_config(MISTRAL_7B_V01_CONFIG)

    # then
    assert arch.warnings == (
        "config.json sets a 4096-token sliding window; the KV cache is sized as full attention "
        "(an upper bound) until sliding-window layers are modelled",
    )


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(QWEN25_7B_CONFIG, id="qwen2.5-7b"),
        pytest.param(QWEN25_05B_INSTRUCT_CONFIG, id="qwen2.5-0.5b-instruct"),
        pytest.param(QWEN3_06B_CONFIG, id="qwen3-0.6b"),
    ],
)
def test_qwen_sliding_window_is_not_warned_about_when_use_sliding_window_is_false(config):
    # given a Qwen config with sliding_window set (or null) but use_sliding_window false

    # when
    arch = architecture_from_config(config)

    # then
    assert arch.warnings == ()


def test_qwen2_with_use_sliding_window_true_is_warned_about():
    # given
    config = {**QWEN25_7B_CONFIG, "use_sliding_window": True, "sliding_window": 4096}

    # when
    arch = architecture_from_config(config)

    # then
    assert len(arch.warnings) == 1
    assert arch.warnings[0].startswith("config.json sets a 4096-token sliding window")


def test_head_dim_defaults_to_hidden_over_heads_and_kv_heads_to_heads():
    # given a Llama-2-style config without head_dim and without num_key_value_heads
    config = {key: value for key, value in LLAMA3_8B_CONFIG.items() if key not in ("head_dim", "num_key_value_heads")}

    # when
    arch = architecture_from_config(config)

    # then: head_dim 4096 / 32 = 128; multi-head attention, 32 KV heads
    assert (arch.head_dim, arch.num_key_value_heads) == (128, 32)


def test_model_described_by_numbers_is_marked_approximate():
    # given a sales call about "a 7B model" with 32 layers and 8 KV heads of 128

    # when
    arch = architecture_from_numbers(parameters=7 * 10**9, num_hidden_layers=32, num_key_value_heads=8, head_dim=128)

    # then
    assert arch.approximate is True
    assert arch.parameters_override == 7_000_000_000
    assert arch.warnings == ("model described by its numbers, not by a config.json: every figure is approximate",)


def test_a_required_field_set_to_null_is_reported_missing():
    # given
    config = llama_config(intermediate_size=None)

    # when
    with pytest.raises(SizingError) as caught:
        architecture_from_config(config)

    # then
    assert caught.value.code is SizingErrorCode.MISSING_FIELDS
    assert caught.value.extra["missing"] == ["intermediate_size"]

"""Exact parameter counts and 16-bit checkpoint sizes against the published figures (DESIGN §3, §4).

Published numbers are literals with their source; the config fields are in builders.py (copied from the
published config.json files): the tests never read ../shared.
"""

from __future__ import annotations

from typing import Any

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.formats import weight_format
from sizing.estimator.tensors import parameter_count, tensor_inventory
from sizing.estimator.weights import resolve_weight_format, weight_bytes_total
from tests.sizing.estimator.builders import (
    LLAMA2_7B_CONFIG,
    LLAMA3_8B_CONFIG,
    LLAMA31_8B_CONFIG,
    MISTRAL_7B_V01_CONFIG,
    QWEN3_06B_CONFIG,
    QWEN25_05B_INSTRUCT_CONFIG,
    QWEN25_7B_CONFIG,
)


def _parameters(config: dict[str, Any]) -> int:
    return parameter_count(tensor_inventory(architecture_from_config(config)))


def test_llama3_8b_parameters_equal_the_published_count():
    # given meta-llama/Meta-Llama-3-8B: 8,030,261,248 parameters
    # (model.safetensors.index.json total_size 16,060,522,496 / 2 bytes)
    config = LLAMA3_8B_CONFIG

    # when
    parameters = _parameters(config)

    # then
    # per layer: q 4096×4096 = 16,777,216; k, v 4096×(8×128) = 4,194,304 each; o 16,777,216
    #   → attention 41,943,040; MLP 3 × 4096 × 14336 = 176,160,768; 2 RMSNorms × 4096 = 8,192
    #   → 218,112,000 × 32 layers = 6,979,584,000
    # embeddings + untied head 2 × 128,256 × 4096 = 1,050,673,152; final norm 4,096
    # 6,979,584,000 + 1,050,673,152 + 4,096 = 8,030,261,248
    assert parameters == 8_030_261_248


def test_llama31_8b_has_the_llama3_8b_parameter_count():
    # given meta-llama/Meta-Llama-3.1-8B: 8,030,261,248 parameters (total_size 16,060,522,496 / 2);
    # the same shapes as Llama-3-8B, only the context (131,072 tokens, RoPE scaling) differs
    config = LLAMA31_8B_CONFIG

    # when
    parameters = _parameters(config)

    # then: the Llama-3-8B hand count above
    assert parameters == 8_030_261_248


def test_llama2_7b_parameters_equal_the_published_count():
    # given meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters (model card / Hub)
    config = LLAMA2_7B_CONFIG

    # when
    parameters = _parameters(config)

    # then
    # multi-head attention, head_dim 4096 / 32 = 128: q, k, v, o 4 × 4096² = 67,108,864
    # MLP 3 × 4096 × 11008 = 135,266,304; norms 8,192 → 202,383,360 × 32 = 6,476,267,520
    # embeddings + head 2 × 32,000 × 4096 = 262,144,000; final norm 4,096
    # 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616
    assert parameters == 6_738_415_616


def test_mistral_7b_v01_parameters_equal_the_published_count():
    # given mistralai/Mistral-7B-v0.1: 7,241,732,096 parameters (total_size 14,483,464,192 / 2)
    config = MISTRAL_7B_V01_CONFIG

    # when
    parameters = _parameters(config)

    # then
    # layers as Llama-3-8B: 218,112,000 × 32 = 6,979,584,000
    # embeddings + head 2 × 32,000 × 4096 = 262,144,000; final norm 4,096
    # 6,979,584,000 + 262,144,000 + 4,096 = 7,241,732,096
    assert parameters == 7_241_732_096


def test_qwen25_7b_parameters_count_the_qkv_biases():
    # given Qwen/Qwen2.5-7B: 7,615,616,512 parameters (total_size 15,231,233,024 / 2)
    config = QWEN25_7B_CONFIG

    # when
    arch = architecture_from_config(config)
    parameters = parameter_count(tensor_inventory(arch))

    # then
    # head_dim 3584 / 28 = 128; KV rows 4 × 128 = 512
    # q 3584² = 12,845,056; k, v 3584 × 512 = 1,835,008 each; o 12,845,056 → 29,360,128
    # q/k/v biases 3584 + 512 + 512 = 4,608 (Qwen2 always has them, no o bias)
    # MLP 3 × 3584 × 18944 = 203,685,888; norms 2 × 3584 = 7,168 → 233,057,792 per layer
    # × 28 = 6,525,618,176; embeddings + head 2 × 152,064 × 3584 = 1,089,994,752; final norm 3,584
    # 6,525,618,176 + 1,089,994,752 + 3,584 = 7,615,616,512
    assert (arch.qkv_bias, arch.o_bias) == (True, False)
    assert parameters == 7_615_616_512


def test_qwen25_05b_instruct_counts_tied_embeddings_once():
    # given Qwen/Qwen2.5-0.5B-Instruct: 494,032,768 parameters (model card "0.49B"; Hub safetensors metadata)
    config = QWEN25_05B_INSTRUCT_CONFIG

    # when
    tensors = tensor_inventory(architecture_from_config(config))
    parameters = parameter_count(tensors)

    # then
    # head_dim 896 / 14 = 64; KV rows 2 × 64 = 128
    # q 896² = 802,816; k, v 896 × 128 = 114,688 each; o 802,816 → 1,835,008; biases 896 + 128 + 128 = 1,152
    # MLP 3 × 896 × 4864 = 13,074,432; norms 1,792 → 14,912,384 per layer × 24 = 357,897,216
    # tied embeddings once 151,936 × 896 = 136,134,656; final norm 896
    # 357,897,216 + 136,134,656 + 896 = 494,032,768
    assert "lm_head" not in {t.name for t in tensors}
    assert parameters == 494_032_768


def test_qwen3_counts_q_norm_and_k_norm_per_layer():
    # given Qwen/Qwen3-0.6B: head_dim 128 (not 1024 / 16 = 64), a per-head RMSNorm on q and on k
    config = QWEN3_06B_CONFIG

    # when
    tensors = tensor_inventory(architecture_from_config(config))
    parameters = parameter_count(tensors)

    # then
    # q 1024 × (16×128) = 2,097,152; k, v 1024 × (8×128) = 1,048,576 each; o 2,097,152 → 6,291,456
    # MLP 3 × 1024 × 3072 = 9,437,184; norms 2 × 1024 = 2,048; q_norm 128 + k_norm 128 = 256
    #   → 15,730,944 per layer × 28 = 440,466,432
    # tied embeddings 151,936 × 1024 = 155,582,464; final norm 1,024
    # 440,466,432 + 155,582,464 + 1,024 = 596,049,920
    # (the model card's "0.44B non-embedding" is 440,466,432 + 1,024 = 440,467,456)
    assert {t.name: t.elements * t.per_model for t in tensors if t.name in ("q_norm", "k_norm")} == {
        "q_norm": 128 * 28,
        "k_norm": 128 * 28,
    }
    assert parameters == 596_049_920


def test_qwen3_without_qk_norm_would_be_7168_parameters_short():
    # given the same Qwen3-0.6B shapes read as a plain Llama (no q_norm/k_norm)
    as_llama = {**QWEN3_06B_CONFIG, "model_type": "llama"}

    # when
    difference = _parameters(QWEN3_06B_CONFIG) - _parameters(as_llama)

    # then: 28 layers × (128 + 128) = 7,168
    assert difference == 7_168


@pytest.mark.parametrize(
    ("config", "published_total_size"),
    [
        # meta-llama/Meta-Llama-3-8B model.safetensors.index.json metadata.total_size
        pytest.param(LLAMA3_8B_CONFIG, 16_060_522_496, id="llama-3-8b"),
        # meta-llama/Meta-Llama-3.1-8B model.safetensors.index.json metadata.total_size
        pytest.param(LLAMA31_8B_CONFIG, 16_060_522_496, id="llama-3.1-8b"),
        # mistralai/Mistral-7B-v0.1 model.safetensors.index.json metadata.total_size
        pytest.param(MISTRAL_7B_V01_CONFIG, 14_483_464_192, id="mistral-7b-v0.1"),
        # Qwen/Qwen2.5-7B model.safetensors.index.json metadata.total_size
        pytest.param(QWEN25_7B_CONFIG, 15_231_233_024, id="qwen2.5-7b"),
    ],
)
def test_bf16_weight_bytes_equal_the_published_safetensors_total_size(config, published_total_size):
    # given a 16-bit release whose total_size is exactly 2 bytes × parameters
    arch = architecture_from_config(config)

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then: 8,030,261,248 × 2 = 16,060,522,496; 7,241,732,096 × 2 = 14,483,464,192;
    # 7,615,616,512 × 2 = 15,231,233,024
    assert total == published_total_size


def test_llama2_7b_checkpoint_holds_8192_bytes_of_rotary_buffers_beyond_the_weights():
    # given meta-llama/Llama-2-7b-hf: total_size 13,476,839,424 (model.safetensors.index.json), which also
    # stores 32 layers × 64 fp32 rotary inv_freq values: not weights, not counted by the estimator
    arch = architecture_from_config(LLAMA2_7B_CONFIG)
    published_total_size = 13_476_839_424

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then: 6,738,415,616 × 2 bytes (float16) = 13,476,831,232;
    # the difference is 32 × 64 × 4 bytes = 8,192
    assert resolve_weight_format(arch, "auto").slug == "fp16"
    assert total == 13_476_831_232
    assert published_total_size - total == 8_192


def test_explicit_fp32_doubles_every_tensor():
    # given Llama-3-8B stored in FP32
    arch = architecture_from_config(LLAMA3_8B_CONFIG)

    # when
    total = weight_bytes_total(arch, weight_format("fp32"))

    # then: 8,030,261,248 × 4 bytes = 32,121,044,992
    assert total == 32_121_044_992

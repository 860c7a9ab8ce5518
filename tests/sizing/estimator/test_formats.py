"""Weight formats: bytes of a linear with its metadata, quantization_config parsing, and which tensors a
quantised checkpoint keeps in 16 bits (DESIGN §4)."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config, merge_quant_config
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.formats import ScaleLayout, format_from_quantization_config, weight_format
from sizing.estimator.tensors import Role, tensor_inventory
from sizing.estimator.weights import resolve_weight_format, weight_bytes_total
from tests.sizing.estimator.builders import build_arch, llama_config, small_config


def test_int4_group128_is_4_bit_weights_plus_a_16_bit_scale_and_4_bit_zero_per_group():
    # given a 4096 × 4096 linear in AWQ/GPTQ INT4, group 128
    fmt = weight_format("int4")

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then
    # weights 4096 × 4096 × 4 bits / 8 = 8,388,608 bytes
    # groups 4096 rows × 4096 / 128 = 131,072 × (16 + 4) bits = 2,621,440 bits = 327,680 bytes
    # 8,388,608 + 327,680 = 8,716,288
    assert size == 8_716_288


def test_int4_groups_round_up_when_inputs_are_not_a_multiple_of_the_group():
    # given a 100 × 300 linear: 300 inputs make ceil(300 / 128) = 3 groups per row
    fmt = weight_format("int4")

    # when
    size = fmt.tensor_bytes(rows=100, cols=300)

    # then: 30,000 × 4 / 8 = 15,000 + 100 × 3 groups × 20 bits / 8 = 750 → 15,750
    assert size == 15_750


def test_gptq_act_order_adds_an_int32_group_index_per_input_channel():
    # given GPTQ INT4 group 128 with desc_act (act-order)
    fmt = format_from_quantization_config(
        {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True, "sym": True}
    )

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then: 8,716,288 (INT4 group 128 above) + g_idx 4096 inputs × 4 bytes = 16,384 → 8,732,672
    assert fmt.slug == "gptq-int4-g128-act-order"
    assert size == 8_732_672


def test_fp8_per_tensor_is_one_byte_per_weight_plus_two_fp32_scales():
    # given
    fmt = weight_format("fp8")

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then: 4096 × 4096 × 1 byte = 16,777,216 + weight scale and input scale 2 × 4 bytes = 16,777,224
    assert size == 16_777_224


def test_fp8_block_128_is_one_fp32_scale_per_128x128_block():
    # given Llama-3-8B's down_proj (4096 rows × 14336 inputs) in FP8 with 128 × 128 block scales
    fmt = weight_format("fp8-block")

    # when
    size = fmt.tensor_bytes(rows=4096, cols=14336)

    # then: 58,720,256 bytes + (4096 / 128 = 32) × (14336 / 128 = 112) = 3,584 blocks × 4 bytes = 14,336
    # → 58,734,592
    assert size == 58_734_592


def test_fp8_block_counts_partial_blocks_on_both_axes():
    # given a 1000 × 300 linear: ceil(1000 / 128) = 8 block rows, ceil(300 / 128) = 3 block columns
    fmt = weight_format("fp8-block")

    # when
    size = fmt.tensor_bytes(rows=1000, cols=300)

    # then: 300,000 bytes + 8 × 3 = 24 blocks × 4 bytes = 96 → 300,096
    assert size == 300_096


def test_int8_per_channel_is_one_byte_per_weight_plus_an_fp32_scale_per_output_row():
    # given
    fmt = weight_format("int8")

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then: 16,777,216 bytes + 4096 output channels × 4 bytes = 16,384 → 16,793,600
    assert size == 16_793_600


def test_fp8_block_quantization_config_is_read_with_its_block_size():
    # given Qwen/Qwen3-32B-FP8 and deepseek-ai/DeepSeek-V3 quantization_config
    quant = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}

    # when
    fmt = format_from_quantization_config(quant)

    # then
    assert (fmt.slug, fmt.bits, fmt.scales, fmt.block) == ("fp8-block", 8, ScaleLayout.BLOCK, (128, 128))


def test_fp8_quantization_config_without_blocks_is_per_tensor():
    # given
    quant = {"quant_method": "fp8", "activation_scheme": "static"}

    # when
    fmt = format_from_quantization_config(quant)

    # then
    assert (fmt.slug, fmt.scales) == ("fp8", ScaleLayout.PER_TENSOR)


@pytest.mark.parametrize(
    ("quant", "slug", "group_size", "act_order"),
    [
        pytest.param(
            {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
            "awq-int4-g128",
            128,
            False,
            id="awq-transformers-keys",
        ),
        pytest.param(
            {"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": True},
            "awq-int4-g64",
            64,
            False,
            id="awq-autoawq-keys",
        ),
        pytest.param(
            {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
            "gptq-int4-g128",
            128,
            False,
            id="gptq",
        ),
        pytest.param(
            {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": True},
            "gptq-int4-g32-act-order",
            32,
            True,
            id="gptq-act-order",
        ),
    ],
)
def test_awq_and_gptq_quantization_configs_are_read(quant, slug, group_size, act_order):
    # given an AWQ or GPTQ quantization_config

    # when
    fmt = format_from_quantization_config(quant)

    # then: 4-bit weights, a 16-bit scale and a 4-bit zero per group
    assert (fmt.slug, fmt.bits, fmt.scales, fmt.group_size) == (slug, 4, ScaleLayout.GROUP, group_size)
    assert (fmt.scale_bits, fmt.zero_bits, fmt.act_order) == (16, 4, act_order)


def test_gptq_with_unsupported_bits_is_unsupported_quantization():
    # given a 3-bit GPTQ checkpoint

    # when
    with pytest.raises(SizingError) as caught:
        format_from_quantization_config({"quant_method": "gptq", "bits": 3, "group_size": 128})

    # then
    assert caught.value.code is SizingErrorCode.UNSUPPORTED_QUANTIZATION
    assert caught.value.message == "GPTQ with 3 bits and group size 128 is not modelled"


@pytest.mark.parametrize(
    ("quant", "method"),
    [
        pytest.param({"quant_method": "hqq", "nbits": 4, "group_size": 64}, "hqq", id="hqq"),
        pytest.param({"quant_method": "eetq"}, "eetq", id="eetq"),
        pytest.param({}, "", id="no-method"),
    ],
)
def test_unmodelled_quantization_method_is_refused(quant, method):
    # given a quantization_config the estimator has no format for

    # when
    with pytest.raises(SizingError) as caught:
        format_from_quantization_config(quant)

    # then
    assert caught.value.code is SizingErrorCode.UNSUPPORTED_QUANTIZATION
    assert caught.value.extra == {"quant_method": method}
    assert "is not modelled yet; choose a weight format explicitly" in caught.value.message


def test_auto_format_of_an_unmodelled_checkpoint_is_refused():
    # given a config.json whose quantization_config is HQQ (not modelled)
    arch = build_arch(quantization_config={"quant_method": "hqq", "nbits": 4, "group_size": 64})

    # when
    with pytest.raises(SizingError) as caught:
        resolve_weight_format(arch, "auto")

    # then
    assert caught.value.code is SizingErrorCode.UNSUPPORTED_QUANTIZATION


def test_modelopt_hf_quant_config_is_read_as_fp8_per_tensor():
    # given nvidia/Llama-3.1-70B-Instruct-FP8: config.json without quantization_config, plus an
    # hf_quant_config.json from ModelOpt
    hf_quant_config = {
        "producer": {"name": "modelopt", "version": "0.23.0"},
        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]},
    }

    # when
    arch = architecture_from_config(merge_quant_config(llama_config(), hf_quant_config))

    # then
    assert resolve_weight_format(arch, "auto").slug == "fp8"


def test_unknown_explicit_weight_format_is_invalid_argument():
    # given

    # when
    with pytest.raises(SizingError) as caught:
        weight_format("int3")

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.extra == {"fields": {"weights": ["unknown weight format 'int3'"]}}


def test_only_linear_weights_are_quantizable():
    # given a Qwen2-style inventory (with q/k/v biases)
    tensors = tensor_inventory(build_arch(model_type="qwen2"))

    # when
    quantizable = {t.name for t in tensors if t.quantizable}

    # then: embeddings, the head, norms and biases stay in 16 bits
    assert quantizable == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    assert {t.role for t in tensors if not t.quantizable} == {Role.EMBEDDING, Role.LM_HEAD, Role.NORM, Role.BIAS}


def test_small_model_int4_keeps_embeddings_head_and_norms_at_16_bits():
    # given h 256, 2 layers, q 256 rows, k/v 128 rows, MLP 512, vocabulary 1000, BF16 checkpoint
    arch = architecture_from_config(small_config())

    # when
    total = weight_bytes_total(arch, weight_format("int4"))

    # then, INT4 group 128 (4-bit weights + 20 bits per group of 128 inputs):
    # q_proj 256 × 256: 32,768 + 256 × 2 groups × 20 / 8 = 1,280 → 34,048; o_proj the same 34,048
    # k_proj, v_proj 128 × 256: 16,384 + 128 × 2 × 20 / 8 = 640 → 17,024 each
    # gate, up 512 × 256: 65,536 + 512 × 2 × 20 / 8 = 2,560 → 68,096 each
    # down 256 × 512: 65,536 + 256 × 4 × 20 / 8 = 2,560 → 68,096
    # 2 RMSNorms 2 × 256 × 2 bytes = 1,024 (16-bit)
    # per layer 34,048 × 2 + 17,024 × 2 + 68,096 × 3 + 1,024 = 307,456; × 2 layers = 614,912
    # embeddings + head 2 × 1000 × 256 × 2 bytes = 1,024,000 (16-bit); final norm 512
    # 614,912 + 1,024,000 + 512 = 1,639,424
    assert total == 1_639_424


def test_small_model_fp8_per_tensor_total():
    # given the same small model in FP8 with per-tensor scales
    arch = architecture_from_config(small_config())

    # when
    total = weight_bytes_total(arch, weight_format("fp8"))

    # then
    # linear elements per layer: 65,536 × 2 (q, o) + 32,768 × 2 (k, v) + 131,072 × 3 (MLP) = 589,824 bytes
    # + 7 linears × 2 fp32 scales × 4 bytes = 56; norms 1,024 → 590,904 per layer; × 2 = 1,181,808
    # embeddings + head 1,024,000; final norm 512 → 2,206,320
    assert total == 2_206_320


def test_small_model_fp8_block_total():
    # given the same small model in FP8 with 128 × 128 block scales
    arch = architecture_from_config(small_config())

    # when
    total = weight_bytes_total(arch, weight_format("fp8-block"))

    # then
    # q, o 256 × 256: 65,536 + 2 × 2 blocks × 4 = 65,552 each; k, v 128 × 256: 32,768 + 1 × 2 × 4 = 32,776 each
    # gate, up 512 × 256: 131,072 + 4 × 2 × 4 = 131,104 each; down 256 × 512: 131,072 + 2 × 4 × 4 = 131,104
    # per layer 65,552 × 2 + 32,776 × 2 + 131,104 × 3 + 1,024 norms = 590,992; × 2 = 1,181,984
    # + 1,024,000 + 512 = 2,206,496
    assert total == 2_206_496


def test_a_4_bit_llama3_8b_is_not_4_gb():
    # given meta-llama/Meta-Llama-3-8B (8,030,261,248 parameters) in INT4 group 128
    arch = build_arch()

    # when
    total = weight_bytes_total(arch, weight_format("int4"))

    # then
    # per layer: linear elements 218,112,000 − 8,192 (norms) = 218,103,808 × 4 bits = 109,051,904 bytes
    # groups: q, o 4096 × 32 = 131,072 each; k, v 1024 × 32 = 32,768 each; gate, up 14336 × 32 = 458,752
    #   each; down 4096 × 112 = 458,752 → 1,703,936 groups × 20 bits / 8 = 4,259,840 bytes
    # norms 8,192 × 2 = 16,384 → 113,328,128 per layer × 32 = 3,626,500,096
    # embeddings + head 2 × 128,256 × 4096 × 2 = 2,101,346,304 (16-bit); final norm 8,192
    # 3,626,500,096 + 2,101,346,304 + 8,192 = 5,727,854,592 (5.73 GB, not 4)
    assert total == 5_727_854_592


def test_fp8_dynamic_activations_store_no_input_scale():
    # given a per-tensor FP8 checkpoint with dynamic activation scales
    fmt = format_from_quantization_config({"quant_method": "fp8", "activation_scheme": "dynamic"})

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then: 4096 × 4096 × 1 byte = 16,777,216 + one fp32 weight scale = 16,777,220
    assert size == 16_777_220

"""Quantised weight formats (DESIGN §4): compressed-tensors, bitsandbytes, MXFP4/NVFP4, GGUF mixes, the tensors a
recipe leaves in 16 bits, per-rank sharding of quantisation metadata, and configs that are refused."""

from __future__ import annotations

from typing import Any

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.formats import (
    GgmlType,
    GgufFileType,
    ScaleLayout,
    format_from_quantization_config,
    gguf_tensor_type,
    model_facts,
    module_matches,
    weight_format,
)
from sizing.estimator.tensors import tensor_inventory
from sizing.estimator.weights import resolve_weight_format, weight_bytes_per_rank, weight_bytes_total
from tests.sizing.estimator.builders import (
    LLAMA2_7B_CONFIG,
    LLAMA3_8B_CONFIG,
    QWEN25_05B_INSTRUCT_CONFIG,
    small_config,
)

# A tiny Mixtral: h 64, 2 layers, 4 heads x 16 (q 64 rows), 2 KV heads (k, v 32 rows), 4 experts of width 128,
# vocabulary 100, BF16.
TINY_MIXTRAL_CONFIG: dict[str, Any] = {
    "model_type": "mixtral",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "vocab_size": 100,
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}

# openai/gpt-oss-20b config.json (sizing keys; it has no torch_dtype: BF16 is assumed, as published).
GPT_OSS_20B_CONFIG: dict[str, Any] = {
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "num_hidden_layers": 24,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "vocab_size": 201088,
    "num_local_experts": 32,
    "num_experts_per_tok": 4,
    "experts_per_token": 4,
    "attention_bias": True,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "sliding_window": 128,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "quantization_config": {
        "modules_to_not_convert": [
            "model.layers.*.self_attn",
            "model.layers.*.mlp.router",
            "model.embed_tokens",
            "lm_head",
        ],
        "quant_method": "mxfp4",
    },
}

# Qwen/Qwen3-32B-FP8 config.json (sizing keys).
QWEN3_32B_FP8_CONFIG: dict[str, Any] = {
    "model_type": "qwen3",
    "hidden_size": 5120,
    "num_hidden_layers": 64,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 25600,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "attention_bias": False,
    "quantization_config": {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    },
}


def _ct_config(
    weights: dict[str, Any],
    *,
    fmt: str,
    ignore: list[str] | None = None,
    input_activations: dict[str, Any] | None = None,
    targets: list[str] | None = None,
) -> dict[str, Any]:
    """A compressed-tensors quantization_config with one config group, as llm-compressor writes it."""
    return {
        "quant_method": "compressed-tensors",
        "format": fmt,
        "quantization_status": "compressed",
        "ignore": ["lm_head"] if ignore is None else ignore,
        "config_groups": {
            "group_0": {
                "targets": targets or ["Linear"],
                "weights": weights,
                "input_activations": input_activations,
                "output_activations": None,
            }
        },
    }


FP8_CHANNEL = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}
TOKEN_DYNAMIC_FP8 = {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": True, "dynamic": True}
W4A16_ASYM = {
    "num_bits": 4,
    "type": "int",
    "strategy": "group",
    "group_size": 128,
    "symmetric": False,
    "dynamic": False,
    "actorder": None,
}
NVFP4_WEIGHTS = {
    "num_bits": 4,
    "type": "float",
    "strategy": "tensor_group",
    "group_size": 16,
    "symmetric": True,
    "dynamic": False,
}
NVFP4_INPUTS = {
    "num_bits": 4,
    "type": "float",
    "strategy": "tensor_group",
    "group_size": 16,
    "symmetric": True,
    "dynamic": "local",
}


# --- bytes of one 4096 x 4096 linear ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        # 4096 x 4096 x 4 bits = 8,388,608 + 131,072 groups x (16-bit scale + 4-bit zero) / 8 = 327,680
        pytest.param("awq-int4", 8_716_288, id="awq-int4: 8,388,608 + 327,680"),
        pytest.param("gptq-int4", 8_716_288, id="gptq-int4: 8,388,608 + 327,680"),
        # + g_idx 4096 inputs x 4 bytes = 16,384
        pytest.param("gptq-int4-act-order", 8_732_672, id="gptq-act-order: 8,716,288 + 16,384"),
        # 8,388,608 + absmax 16,777,216 / 64 = 262,144 blocks x 4 bytes = 1,048,576 + quant_map 16 x 4 = 64
        pytest.param("nf4", 9_437_248, id="nf4: 8,388,608 + 1,048,576 + 64"),
        # 8,388,608 + 262,144 x 1-byte absmax + ceil(262,144 / 256) = 1,024 x 4 = 4,096 + 64 + 256 x 4 = 1,024
        pytest.param("nf4-double-quant", 8_655_936, id="nf4-dq: 8,388,608 + 262,144 + 4,096 + 64 + 1,024"),
        # 16,777,216 int8 + SCB 4096 rows x 4 bytes = 16,384
        pytest.param("bnb-int8", 16_793_600, id="bnb-int8: 16,777,216 + 16,384"),
        # 8,388,608 + 4096 x 256 FP8 scales = 1,048,576 + weight and input global scales 2 x 4 = 8
        pytest.param("nvfp4", 9_437_192, id="nvfp4: 8,388,608 + 1,048,576 + 8"),
        # 8,388,608 + 4096 x 128 E8M0 scales = 524,288
        pytest.param("mxfp4", 8_912_896, id="mxfp4: 8,388,608 + 524,288"),
        # 16,777,216 + 4096 x 2-byte (BF16) scales = 8,192
        pytest.param("fp8-channel", 16_785_408, id="fp8-channel: 16,777,216 + 8,192"),
        # llama.cpp blocks along each 4096-long row: 4096 rows x (4096 / block) blocks x block bytes
        pytest.param("gguf-q8_0", 17_825_792, id="q8_0: 4096 x 128 x 34"),
        pytest.param("gguf-q6_k", 13_762_560, id="q6_k: 4096 x 16 x 210"),
        pytest.param("gguf-q5_k_m", 11_534_336, id="q5_k base q5_k: 4096 x 16 x 176"),
        pytest.param("gguf-q4_k_m", 9_437_184, id="q4_k base q4_k: 4096 x 16 x 144"),
        pytest.param("gguf-q4_0", 9_437_184, id="q4_0: 4096 x 128 x 18"),
        pytest.param("gguf-q3_k_m", 7_208_960, id="q3_k base q3_k: 4096 x 16 x 110"),
        pytest.param("gguf-q2_k", 5_505_024, id="q2_k base q2_k: 4096 x 16 x 84"),
        pytest.param("gguf-f16", 33_554_432, id="f16: 4096 x 4096 x 2"),
    ],
)
def test_each_format_stores_a_4096_square_linear_in_exact_bytes(slug, expected):
    # given one of the user-choosable formats
    fmt = weight_format(slug)

    # when
    size = fmt.tensor_bytes(rows=4096, cols=4096)

    # then
    assert size == expected


@pytest.mark.parametrize(
    ("ggml", "bits"),
    [
        pytest.param(GgmlType.Q8_0, 8.5, id="Q8_0: fp16 d + 32 int8 = 34 bytes / 32"),
        pytest.param(GgmlType.Q6_K, 6.5625, id="Q6_K: 128 + 64 + 16 + 2 = 210 bytes / 256"),
        pytest.param(GgmlType.Q5_K, 5.5, id="Q5_K: 4 + 12 + 32 + 128 = 176 bytes / 256"),
        pytest.param(GgmlType.Q4_K, 4.5, id="Q4_K: 4 + 12 + 128 = 144 bytes / 256"),
        pytest.param(GgmlType.Q4_0, 4.5, id="Q4_0: fp16 d + 16 = 18 bytes / 32"),
        pytest.param(GgmlType.Q3_K, 3.4375, id="Q3_K: 32 + 64 + 12 + 2 = 110 bytes / 256"),
        pytest.param(GgmlType.Q2_K, 2.625, id="Q2_K: 16 + 64 + 4 = 84 bytes / 256"),
    ],
)
def test_ggml_block_types_have_llama_cpp_bits_per_weight(ggml, bits):
    # given a llama.cpp block type (ggml-common.h block structs)

    # when
    figure = ggml.bits_per_weight

    # then
    assert figure == bits


# --- compressed-tensors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quant", "expected"),
    [
        # W8A8-INT8 (int-quantized, per-channel, dynamic per-token inputs): 16,777,216 + 4096 x 2-byte scales
        pytest.param(
            _ct_config(
                {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True},
                fmt="int-quantized",
                input_activations={"num_bits": 8, "type": "int", "strategy": "token", "dynamic": True},
            ),
            16_785_408,
            id="w8a8-int8-channel: 16,777,216 + 8,192",
        ),
        # W8A8-FP8 dynamic (FP8_DYNAMIC): same layout in float8
        pytest.param(
            _ct_config(FP8_CHANNEL, fmt="float-quantized", input_activations=TOKEN_DYNAMIC_FP8),
            16_785_408,
            id="w8a8-fp8-channel: 16,777,216 + 8,192",
        ),
        # W8A8-FP8 per-tensor, static inputs: one 2-byte weight scale + one 2-byte input scale
        pytest.param(
            _ct_config(
                {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": True},
                fmt="float-quantized",
                input_activations={
                    "num_bits": 8,
                    "type": "float",
                    "strategy": "tensor",
                    "dynamic": False,
                    "symmetric": True,
                },
            ),
            16_777_220,
            id="w8a8-fp8-tensor-static: 16,777,216 + 2 + 2",
        ),
        # FP8_BLOCK: 32 x 32 blocks of 128 x 128, a 2-byte scale each
        pytest.param(
            _ct_config(
                {"num_bits": 8, "type": "float", "strategy": "block", "symmetric": True, "block_structure": [128, 128]},
                fmt="float-quantized",
                input_activations={**TOKEN_DYNAMIC_FP8, "strategy": "group", "group_size": 128},
            ),
            16_779_264,
            id="fp8-block: 16,777,216 + 1,024 x 2",
        ),
        # W4A16 asymmetric group 128 (pack-quantized): 8,388,608 + 131,072 groups x (16-bit scale + 4-bit packed
        # zero) = 327,680 + weight_shape 2 x int64 = 16
        pytest.param(
            _ct_config(W4A16_ASYM, fmt="pack-quantized"), 8_716_304, id="w4a16-asym-g128: 8,388,608 + 327,680 + 16"
        ),
        # W4A16 symmetric: no zero points stored: 131,072 x 2 = 262,144
        pytest.param(
            _ct_config({**W4A16_ASYM, "symmetric": True}, fmt="pack-quantized"),
            8_650_768,
            id="w4a16-sym-g128: 8,388,608 + 262,144 + 16",
        ),
        # actorder "group" adds weight_g_idx: 4096 x int32 = 16,384
        pytest.param(
            _ct_config({**W4A16_ASYM, "symmetric": True, "actorder": "group"}, fmt="pack-quantized"),
            8_667_152,
            id="w4a16-sym-g128-actorder: 8,650,768 + 16,384",
        ),
        # NVFP4 (W4A4): 8,388,608 + 1,048,576 FP8 scales + weight_global_scale + input_global_scale (FP32)
        pytest.param(
            _ct_config(NVFP4_WEIGHTS, fmt="nvfp4-pack-quantized", input_activations=NVFP4_INPUTS),
            9_437_192,
            id="nvfp4: 8,388,608 + 1,048,576 + 4 + 4",
        ),
        # NVFP4A16: no input scale
        pytest.param(
            _ct_config(NVFP4_WEIGHTS, fmt="nvfp4-pack-quantized"), 9_437_188, id="nvfp4a16: 8,388,608 + 1,048,576 + 4"
        ),
    ],
)
def test_compressed_tensors_schemes_store_a_4096_square_linear_in_exact_bytes(quant, expected):
    # given a compressed-tensors quantization_config as llm-compressor writes it

    # when
    fmt = format_from_quantization_config(quant)

    # then
    assert fmt.tensor_bytes(rows=4096, cols=4096) == expected
    assert fmt.exclude == ("lm_head",)


def test_compressed_tensors_fp8_dynamic_with_ignore_lm_head_sizes_llama31_8b():
    # given RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic: FP8 per-channel weights, ignore ["lm_head"]
    arch = architecture_from_config(
        {
            **LLAMA3_8B_CONFIG,
            "quantization_config": _ct_config(FP8_CHANNEL, fmt="float-quantized", input_activations=TOKEN_DYNAMIC_FP8),
        }
    )

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # FP8 linears 218,103,808 per layer x 32 = 6,979,321,856 bytes
    # BF16 channel scales: (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096) = 43,008 rows x 2 x 32 = 2,752,512
    # norms 8,192 x 2 x 32 = 524,288; embeddings + lm_head (ignored) 2 x 128,256 x 4096 x 2 = 2,101,346,304;
    # final norm 8,192 → 9,083,953,152
    assert total == 9_083_953_152


def test_compressed_tensors_ignore_can_name_one_layers_module():
    # given the small model in W8A8-FP8 per-channel, ignoring lm_head and layer 0's down_proj by name
    plain = architecture_from_config(
        {**small_config(), "quantization_config": _ct_config(FP8_CHANNEL, fmt="float-quantized")}
    )
    ignoring = architecture_from_config(
        {
            **small_config(),
            "quantization_config": _ct_config(
                FP8_CHANNEL, fmt="float-quantized", ignore=["lm_head", "model.layers.0.mlp.down_proj"]
            ),
        }
    )

    # when
    plain_total = weight_bytes_total(plain, resolve_weight_format(plain, "auto"))
    ignoring_total = weight_bytes_total(ignoring, resolve_weight_format(ignoring, "auto"))

    # then
    # per layer: q, o 256 x 256 = 65,536 + 256 rows x 2 = 66,048 each; k, v 32,768 + 256 = 33,024 each;
    # gate, up 131,072 + 1,024 = 132,096 each; down 131,072 + 512 = 131,584; norms 1,024 → 594,944
    # 2 layers 1,189,888 + embeddings and head 1,024,000 + final norm 512 → 2,214,400
    assert plain_total == 2_214_400
    # layer 0's down_proj in BF16: 256 x 512 x 2 = 262,144 instead of 131,584 → + 130,560
    assert ignoring_total == 2_344_960


def test_compressed_tensors_ignore_regex_up_proj_leaves_gate_proj_converted():
    # given the small Llama in W8A8-FP8 per-channel ignoring re:.*up_proj (Llama has no fused gate_up_proj)
    arch = architecture_from_config(
        {
            **small_config(),
            "quantization_config": _ct_config(FP8_CHANNEL, fmt="float-quantized", ignore=["lm_head", "re:.*up_proj"]),
        }
    )

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then: 2,214,400 with up_proj in BF16 instead: (512 x 256 x 2 = 262,144 − 132,096) x 2 layers = +260,096
    assert total == 2_474_496


def test_compressed_tensors_groups_give_attention_and_mlp_different_schemes():
    # given a mixed-precision config: FP8 per-channel for re:.*self_attn.*, W4A16 asymmetric group 128 for Linear
    quant = {
        "quant_method": "compressed-tensors",
        "format": "mixed-precision",
        "ignore": ["lm_head"],
        "config_groups": {
            "group_0": {"targets": ["re:.*self_attn.*"], "weights": FP8_CHANNEL, "format": "float-quantized"},
            "group_1": {"targets": ["Linear"], "weights": W4A16_ASYM, "format": "pack-quantized"},
        },
    }
    arch = architecture_from_config({**small_config(), "quantization_config": quant})

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # attention (FP8 channel): q, o 66,048 each + k, v 33,024 each = 198,144
    # MLP (W4A16): gate, up 512 x 256: 65,536 + 512 x 2 groups x 20 bits = 2,560 + weight_shape 16 = 68,112 each;
    #   down 256 x 512: 65,536 + 256 x 4 x 20 / 8 = 2,560 + 16 = 68,112 → 204,336
    # per layer 198,144 + 204,336 + 1,024 norms = 403,504; x 2 = 807,008 + 1,024,000 + 512 → 1,831,520
    assert total == 1_831_520


# --- bitsandbytes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("double_quant", "expected_slug", "expected"),
    [
        # 8,388,608 + 262,144 absmax x 4 bytes + quant_map 64
        pytest.param(False, "nf4", 9_437_248, id="nf4: 8,388,608 + 1,048,576 + 64"),
        # 8,388,608 + 262,144 x 1 byte + 1,024 nested fp32 absmax x 4 + quant_map 64 + nested_quant_map 1,024
        pytest.param(True, "nf4-double-quant", 8_655_936, id="nf4-dq: 8,388,608 + 262,144 + 4,096 + 64 + 1,024"),
    ],
)
def test_bitsandbytes_nf4_config_with_and_without_double_quant(double_quant, expected_slug, expected):
    # given a transformers BitsAndBytesConfig as saved in config.json
    quant = {
        "quant_method": "bitsandbytes",
        "load_in_4bit": True,
        "load_in_8bit": False,
        "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": double_quant,
        "bnb_4bit_compute_dtype": "bfloat16",
        "bnb_4bit_quant_storage": "uint8",
        "llm_int8_skip_modules": None,
        "llm_int8_threshold": 6.0,
    }

    # when
    fmt = format_from_quantization_config(quant)

    # then
    assert (fmt.slug, fmt.scales, fmt.group_size) == (expected_slug, ScaleLayout.FLAT_BLOCK, 64)
    assert fmt.tensor_bytes(rows=4096, cols=4096) == expected


def test_bitsandbytes_8bit_keeps_skipped_modules_in_16_bits():
    # given LLM.int8 with llm_int8_skip_modules ["mlp"] on the small model
    quant = {"quant_method": "bitsandbytes", "load_in_8bit": True, "llm_int8_skip_modules": ["mlp"]}
    arch = architecture_from_config({**small_config(), "quantization_config": quant})

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # attention int8 + FP32 SCB per row: q, o 65,536 + 256 x 4 = 66,560 each; k, v 32,768 + 128 x 4 = 33,280 each
    # MLP skipped, BF16: (2 x 512 x 256 + 256 x 512) x 2 = 786,432; norms 1,024
    # per layer 66,560 x 2 + 33,280 x 2 + 786,432 + 1,024 = 987,136; x 2 = 1,974,272 + 1,024,000 + 512 → 2,998,784
    assert total == 2_998_784


@pytest.mark.parametrize(
    ("quant", "slug", "expected"),
    [
        # one FP16 scale and one 4-bit zero per output row: 8,388,608 + 4096 x 20 bits / 8 = 10,240
        pytest.param(
            {"quant_method": "gptq", "bits": 4, "group_size": -1, "desc_act": False},
            "gptq-int4-channel",
            8_398_848,
            id="gptq per-channel: 8,388,608 + 10,240",
        ),
        # AWQ without zero points: 131,072 groups x 2-byte scale = 262,144
        pytest.param(
            {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": False},
            "awq-int4-g128",
            8_650_752,
            id="awq no zero point: 8,388,608 + 262,144",
        ),
    ],
)
def test_awq_gptq_variants_store_a_4096_square_linear_in_exact_bytes(quant, slug, expected):
    # given an AWQ or GPTQ quantization_config

    # when
    fmt = format_from_quantization_config(quant)

    # then
    assert fmt.slug == slug
    assert fmt.tensor_bytes(rows=4096, cols=4096) == expected


# --- MXFP4 --------------------------------------------------------------------------------------------------------


def test_mxfp4_converts_only_the_routed_experts_of_a_tiny_mixtral():
    # given a tiny Mixtral (h 64, 4 experts of width 128) in MXFP4
    arch = architecture_from_config(TINY_MIXTRAL_CONFIG)

    # when
    total = weight_bytes_total(arch, weight_format("mxfp4"))

    # then
    # experts: gate, up 128 x 64 and down 64 x 128: 8,192 x 4 bits = 4,096 + 128 rows x 2 groups (or 64 x 4) of 32
    #   x 1-byte E8M0 scale = 256 → 4,352 each; 4 experts x 3 x 4,352 = 52,224 per layer
    # BF16: q, o 64 x 64 x 2 = 8,192 each; k, v 32 x 64 x 2 = 4,096 each → 24,576; router 4 x 64 x 2 = 512;
    #   norms 2 x 64 x 2 = 256
    # per layer 52,224 + 24,576 + 512 + 256 = 77,568; x 2 = 155,136 + embeddings and head 2 x 100 x 64 x 2 = 25,600
    #   + final norm 128 → 180,864
    assert total == 180_864


def test_mxfp4_modules_to_not_convert_keeps_one_layers_experts_in_16_bits():
    # given the tiny Mixtral with an mxfp4 config leaving layer 1's experts unconverted
    quant = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.1.block_sparse_moe.experts"]}
    arch = architecture_from_config({**TINY_MIXTRAL_CONFIG, "quantization_config": quant})

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then: 180,864 − layer 1's MXFP4 experts 52,224 + BF16 experts 4 x 3 x 8,192 x 2 = 196,608 → 325,248
    assert total == 325_248


def test_mxfp4_chosen_for_a_dense_model_is_refused():
    # given a dense Llama
    arch = architecture_from_config(small_config())

    # when
    with pytest.raises(SizingError) as caught:
        resolve_weight_format(arch, "mxfp4")

    # then
    assert caught.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert caught.value.message == (
        "mxfp4 converts only routed experts (as gpt-oss and vLLM's MXFP4 path do) and "
        "llama has none; choose nvfp4, int4 or fp8 for a dense model"
    )


def test_gpt_oss_20b_matches_its_published_checkpoint_exactly():
    # given openai/gpt-oss-20b's config.json (quant_method mxfp4, modules_to_not_convert self_attn, router,
    # embed_tokens, lm_head)
    arch = architecture_from_config(GPT_OSS_20B_CONFIG)

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # experts per layer: 32 x 3 projections of 2880 x 2880: 4,147,200 (4 bits) + 2880 x 90 scales = 4,406,400
    #   each → 423,014,400; expert biases 32 x 3 x 2880 x 2 = 552,960
    # BF16 attention q, o 4096 x 2880, k, v 512 x 2880 → 26,542,080 x 2 = 53,084,160; biases 8,000 x 2 = 16,000;
    #   sinks 64 x 2 = 128; router (32 x 2880 + 32) x 2 = 184,384; norms 2 x 2880 x 2 = 11,520
    # per layer 476,863,552; x 24 = 11,444,725,248 + embeddings and head 2 x 201,088 x 2880 x 2 = 2,316,533,760
    #   + final norm 5,760 → 13,761,264,768, the published model.safetensors.index.json total_size exactly
    #   (vLLM logged "Model loading took 13.72 GiB" on A100: 0.9 GiB above these 12.82 GiB, its kernels' padding)
    assert total == 13_761_264_768


# --- FP8 and exclusion lists --------------------------------------------------------------------------------------


def test_qwen3_32b_fp8_block_against_its_published_checkpoint():
    # given Qwen/Qwen3-32B-FP8 (FP8 E4M3, 128 x 128 block scales)
    arch = architecture_from_config(QWEN3_32B_FP8_CONFIG)

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # FP8 linears per layer: q 8192 x 5120, k, v 1024 x 5120, o 5120 x 8192, gate, up, down 25600 x 5120
    #   = 487,587,840 bytes; x 64 = 31,205,621,760
    # blocks per layer 64 x 40 + 2 x 8 x 40 + 40 x 64 + 3 x 200 x 40 = 29,760; x 64 = 1,904,640 x 4 bytes (FP32, as
    #   vLLM holds them) = 7,618,560
    # BF16: embeddings + head 2 x 151,936 x 5120 x 2 = 3,111,649,280; norms (2 x 5120 + 2 x 128) x 64 + 5120
    #   = 676,864 x 2 = 1,353,728 → 34,326,243,328
    # The published checkpoint holds 31,205,621,760 F8_E4M3 + 1,558,406,144 BF16 elements = 34,322,434,048 bytes:
    # Qwen stores weight_scale_inv in BF16, 1,904,640 x 2 = 3,809,280 bytes (0.011%) below this figure.
    assert total == 34_326_243_328


def test_modules_to_not_convert_mlp_gate_names_the_router_not_gate_proj():
    # given the small dense model in FP8 per-tensor with modules_to_not_convert ["mlp.gate"]
    arch = architecture_from_config(
        {
            **small_config(),
            "quantization_config": {
                "quant_method": "fp8",
                "activation_scheme": "static",
                "modules_to_not_convert": ["mlp.gate"],
            },
        }
    )

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then: gate_proj stays FP8, so the total equals plain FP8 per-tensor (test_formats: 2,206,320)
    assert total == 2_206_320


def test_modelopt_exclude_modules_keep_attention_in_16_bits():
    # given an NVFP4 ModelOpt config excluding lm_head and every self_attn on the small model
    arch = architecture_from_config(
        {
            **small_config(),
            "quantization_config": {
                "quant_method": "modelopt",
                "quant_algo": "NVFP4",
                "group_size": 16,
                "exclude_modules": ["lm_head", "model.layers.*.self_attn*"],
            },
        }
    )

    # when
    total = weight_bytes_total(arch, resolve_weight_format(arch, "auto"))

    # then
    # attention BF16: (2 x 256 x 256 + 2 x 128 x 256) x 2 = 393,216
    # MLP NVFP4: gate, up 512 x 256: 65,536 + 512 x 16 FP8 scales = 8,192 + 8 = 73,736 each;
    #   down 256 x 512: 65,536 + 256 x 32 = 8,192 + 8 = 73,736 → 221,208
    # per layer 393,216 + 221,208 + 1,024 = 615,448; x 2 = 1,230,896 + 1,024,000 + 512 → 2,255,408
    assert total == 2_255_408


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        pytest.param("mlp.gate", "model.layers.3.mlp.gate", True, id="mlp.gate is the MoE router"),
        pytest.param("mlp.gate", "model.layers.3.mlp.gate_proj", False, id="mlp.gate is not gate_proj"),
        pytest.param("re:.*mlp.gate$", "model.layers.3.mlp.gate", True, id="re: anchored regex"),
        pytest.param("re:.*mlp.gate$", "model.layers.3.mlp.gate_proj", False, id="re: anchored regex, gate_proj"),
        pytest.param("model.layers.*.self_attn", "model.layers.7.self_attn.kv_b_proj", True, id="wildcard prefix"),
        pytest.param("self_attn", "model.layers.7.self_attn.q_proj", True, id="a middle segment"),
        pytest.param("lm_head", "lm_head", True, id="exact name"),
        pytest.param("*mlp.gate", "model.layers.0.mlp.gate", True, id="modelopt fnmatch"),
        pytest.param("model.layers.1", "model.layers.10.mlp.down_proj", False, id="layer 1 is not layer 10"),
        pytest.param("re:.*self_attn.*", "model.layers.0.mlp.up_proj", False, id="re: no match"),
    ],
)
def test_module_patterns_match_whole_segments_or_regexes(pattern, name, matches):
    # given a checkpoint module pattern and a module name

    # when
    result = module_matches(pattern, name)

    # then
    assert result is matches


# --- GGUF ---------------------------------------------------------------------------------------------------------


def test_gguf_q4_k_m_llama2_7b_is_4_85_bits_per_weight():
    # given meta-llama/Llama-2-7b-hf (6,738,415,616 parameters) as llama.cpp's Q4_K_M
    arch = architecture_from_config(LLAMA2_7B_CONFIG)

    # when
    total = weight_bytes_total(arch, weight_format("gguf-q4_k_m"))

    # then
    # Q4_K row of 4096 inputs: 16 blocks x 144 = 2,304 bytes; Q6_K 16 x 210 = 3,360; rows of 11008 inputs: 43 blocks
    #   → Q4_K 6,192, Q6_K 9,030
    # per layer in Q4_K: q, k, o 4096 x 2,304 = 9,437,184 each; v 9,437,184; gate, up 11008 x 2,304 = 25,362,432
    #   each; down 4096 x 6,192 = 25,362,432; norms F32 2 x 4096 x 4 = 32,768 → 113,868,800
    # use_more_bits layers (0-3, 6, 9, ..., 27, 28-31: 16 of 32) hold attn_v and ffn_down in Q6_K:
    #   v 4096 x 3,360 = 13,762,560 (+4,325,376), down 4096 x 9,030 = 36,986,880 (+11,624,448) → +15,949,824
    # 32 x 113,868,800 + 16 x 15,949,824 = 3,898,998,784; token_embd Q4_K 32000 x 2,304 = 73,728,000;
    #   output Q6_K 32000 x 3,360 = 107,520,000; output_norm 16,384 → 4,080,263,168
    #   = 4.844 bits per weight (the ~4.85 quoted for Q4_K_M; TheBloke's llama-2-7b.Q4_K_M.gguf is 4.08 GB)
    assert total == 4_080_263_168


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        # every 2-D tensor in the block type, norms F32: 6,738,149,376 matrix elements x 34 / 32 + 1,064,960
        pytest.param("gguf-q8_0", 7_160_348_672, id="Q8_0: 7,159,283,712 + 1,064,960 (8.50 bpw; TheBloke 7.16 GB)"),
        # x 210 / 256
        pytest.param("gguf-q6_k", 5_528_453_120, id="Q6_K: 5,527,388,160 + 1,064,960 (6.56 bpw; TheBloke 5.53 GB)"),
        # Q4_0 everywhere but output Q6_K: 6,607,077,376 x 18 / 32 + 107,520,000 + 1,064,960
        pytest.param("gguf-q4_0", 3_825_065_984, id="Q4_0: 3,716,481,024 + 107,520,000 + 1,064,960 (4.54 bpw)"),
        pytest.param("gguf-q5_k_m", 4_782_415_872, id="Q5_K_M: 5.68 bpw (quoted ~5.69; TheBloke 4.78 GB)"),
        pytest.param("gguf-q5_k_s", 4_650_950_656, id="Q5_K_S: 5.52 bpw (TheBloke 4.65 GB)"),
        pytest.param("gguf-q4_k_s", 3_855_998_976, id="Q4_K_S: 4.58 bpw (TheBloke 3.86 GB)"),
        pytest.param("gguf-q3_k_m", 3_297_263_616, id="Q3_K_M: 3.91 bpw (quoted ~3.91; TheBloke 3.30 GB)"),
        pytest.param("gguf-q2_k", 2_532_122_624, id="Q2_K: 3.01 bpw (today's mix; 2023 files were 2.83 GB)"),
    ],
)
def test_gguf_file_types_on_llama2_7b(slug, expected):
    # given Llama-2-7B (6,738,149,376 elements in 2-D tensors, 1,064,960 bytes of F32 norms)
    arch = architecture_from_config(LLAMA2_7B_CONFIG)

    # when
    total = weight_bytes_total(arch, weight_format(slug))

    # then
    assert total == expected


@pytest.mark.parametrize(
    ("slug", "expected"),
    [
        # llama.cpp tools/quantize lists each file type's size on Llama-3-8B in GiB
        pytest.param("gguf-q4_k_m", 4_912_898_048, id="Q4_K_M 4.575 GiB (llama.cpp: 4.58G)"),
        pytest.param("gguf-q4_k_s", 4_684_832_768, id="Q4_K_S 4.363 GiB (llama.cpp: 4.37G)"),
        pytest.param("gguf-q5_k_m", 5_725_151_232, id="Q5_K_M 5.332 GiB (llama.cpp: 5.33G)"),
        pytest.param("gguf-q6_k", 6_588_170_240, id="Q6_K 6.136 GiB (llama.cpp: 6.14G)"),
        pytest.param("gguf-q3_k_m", 4_011_081_728, id="Q3_K_M 3.736 GiB (llama.cpp: 3.74G)"),
        pytest.param("gguf-q4_0", 4_653_375_488, id="Q4_0 4.334 GiB (llama.cpp: 4.34G)"),
    ],
)
def test_gguf_file_types_on_llama3_8b_match_llama_cpp_quantize_table(slug, expected):
    # given Meta-Llama-3-8B
    arch = architecture_from_config(LLAMA3_8B_CONFIG)

    # when
    total = weight_bytes_total(arch, weight_format(slug))

    # then: the computed figure and llama-quantize's published size agree to its 0.01 GiB rounding
    assert total == expected


@pytest.mark.parametrize(
    ("config", "tensor_name", "layer", "ftype", "expected"),
    [
        pytest.param(LLAMA2_7B_CONFIG, "v_proj", 5, GgufFileType.Q4_K_M, GgmlType.Q4_K, id="attn_v layer 5: Q4_K"),
        pytest.param(LLAMA2_7B_CONFIG, "v_proj", 6, GgufFileType.Q4_K_M, GgmlType.Q6_K, id="attn_v layer 6: Q6_K"),
        pytest.param(LLAMA2_7B_CONFIG, "down_proj", 31, GgufFileType.Q5_K_M, GgmlType.Q6_K, id="ffn_down last"),
        pytest.param(LLAMA2_7B_CONFIG, "lm_head", None, GgufFileType.Q4_0, GgmlType.Q6_K, id="output Q6_K"),
        pytest.param(LLAMA2_7B_CONFIG, "lm_head", None, GgufFileType.Q8_0, GgmlType.Q8_0, id="output in Q8_0"),
        pytest.param(LLAMA2_7B_CONFIG, "embed_tokens", None, GgufFileType.Q4_K_M, GgmlType.Q4_K, id="token_embd"),
        pytest.param(LLAMA2_7B_CONFIG, "layer_norms", 0, GgufFileType.Q4_K_M, GgmlType.F32, id="norms F32"),
        pytest.param(TINY_MIXTRAL_CONFIG, "router", 0, GgufFileType.Q4_K_M, GgmlType.F32, id="router F32"),
        pytest.param(
            {**TINY_MIXTRAL_CONFIG, "num_local_experts": 8},
            "k_proj",
            0,
            GgufFileType.Q4_K_M,
            GgmlType.Q8_0,
            id="8 experts: attn_k Q8_0",
        ),
        # Qwen2.5-0.5B: hidden 896 is not a multiple of 256: k-quants fall back (Q4_K → Q5_0); tied embeddings take
        # the output rule and fall back to Q8_0
        pytest.param(
            QWEN25_05B_INSTRUCT_CONFIG,
            "q_proj",
            0,
            GgufFileType.Q4_K_M,
            GgmlType.Q5_0,
            id="896 inputs: Q4_K falls back to Q5_0",
        ),
        pytest.param(
            QWEN25_05B_INSTRUCT_CONFIG,
            "embed_tokens",
            None,
            GgufFileType.Q4_K_M,
            GgmlType.Q8_0,
            id="tied token_embd: Q8_0",
        ),
    ],
)
def test_gguf_tensor_types_follow_llama_quantize(config, tensor_name, layer, ftype, expected):
    # given a tensor of a model's inventory
    arch = architecture_from_config(config)
    tensor = next(t for t in tensor_inventory(arch) if t.name == tensor_name)

    # when
    ggml = gguf_tensor_type(ftype, tensor, layer_index=layer, model=model_facts(arch))

    # then
    assert ggml is expected


# --- sharding under tensor parallelism ----------------------------------------------------------------------------


def test_int4_groups_per_rank_come_from_the_ranks_own_shape():
    # given the small model with an MLP of 384 in INT4 group 128, split over 2 ranks
    arch = architecture_from_config({**small_config(), "intermediate_size": 384})

    # when
    per_rank = weight_bytes_per_rank(arch, weight_format("int4"), tp=2, pp=1)

    # then (each rank)
    # q 128 x 256: 16,384 + 128 x 2 groups x 20 bits / 8 = 640 → 17,024; k, v one KV head 64 x 256: 8,192 + 320
    #   = 8,512 each; o 256 x 128: 16,384 + 256 x 1 x 20 / 8 = 640 → 17,024
    # gate, up 192 x 256: 24,576 + 192 x 2 x 20 / 8 = 960 → 25,536 each
    # down 256 x 192 inputs: 24,576 + 256 x ceil(192 / 128) = 2 groups x 20 / 8 = 1,280 → 25,856 (not 1.5 of the
    #   unsplit 3 groups)
    # per layer 17,024 x 2 + 8,512 x 2 + 25,536 x 2 + 25,856 + 1,024 norms = 129,024; x 2 = 258,048
    # embeddings, head: vocabulary 1000 padded to 1024 / 2 = 512 rows x 256 x 2 = 262,144 each; final norm 512
    # → 782,848
    assert per_rank == (782_848,)


def test_mxfp4_experts_split_evenly_over_two_ranks():
    # given the tiny Mixtral in MXFP4 over 2 ranks
    arch = architecture_from_config(TINY_MIXTRAL_CONFIG)

    # when
    per_rank = weight_bytes_per_rank(arch, weight_format("mxfp4"), tp=2, pp=1)

    # then
    # experts: gate, up 64 x 64 and down 64 x 64 per rank: 2,048 + 64 x 2 scales = 2,176 each; 4 x 3 → 26,112
    # q 32 x 64 x 2 = 4,096; k, v one KV head 16 x 64 x 2 = 2,048 each; o 64 x 32 x 2 = 4,096; router 512; norms 256
    # per layer 39,168; x 2 = 78,336 + embeddings and head 128 / 2 = 64 x 64 x 2 = 8,192 each + final norm 128
    # → 94,848
    assert per_rank == (94_848,)


def test_gguf_llama3_8b_splits_in_half_but_for_the_replicated_norms():
    # given Llama-3-8B as Q4_K_M over 2 ranks (every split row length stays a multiple of 256)
    arch = architecture_from_config(LLAMA3_8B_CONFIG)

    # when
    per_rank = weight_bytes_per_rank(arch, weight_format("gguf-q4_k_m"), tp=2, pp=1)

    # then: F32 norms 32 x 2 x 4096 x 4 + 4096 x 4 = 1,064,960 on every rank;
    # (4,912,898,048 − 1,064,960) / 2 + 1,064,960 = 2,456,981,504
    assert per_rank == (2_456_981_504,)


# --- refusals -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quant", "method", "field"),
    [
        pytest.param(
            _ct_config({**W4A16_ASYM, "strategy": "attn_head"}, fmt="pack-quantized"),
            "compressed-tensors",
            "config_groups.group_0.weights.strategy",
            id="ct-strategy",
        ),
        pytest.param(
            _ct_config({**W4A16_ASYM, "num_bits": 3}, fmt="pack-quantized"),
            "compressed-tensors",
            "config_groups.group_0.weights.num_bits",
            id="ct-num-bits",
        ),
        pytest.param(_ct_config(W4A16_ASYM, fmt="marlin-24"), "compressed-tensors", "format", id="ct-format"),
        pytest.param(
            {**_ct_config(W4A16_ASYM, fmt="pack-quantized"), "sparsity_config": {"format": "sparse-24-bitmask"}},
            "compressed-tensors",
            "sparsity_config",
            id="ct-sparsity",
        ),
        pytest.param(
            _ct_config(W4A16_ASYM, fmt="pack-quantized", targets=["Embedding"]),
            "compressed-tensors",
            "config_groups.group_0.targets",
            id="ct-class-target",
        ),
        pytest.param({"quant_method": "compressed-tensors"}, "compressed-tensors", "config_groups", id="ct-no-groups"),
        pytest.param(
            {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "int2"},
            "bitsandbytes",
            "bnb_4bit_quant_type",
            id="bnb-quant-type",
        ),
        pytest.param({"quant_method": "bitsandbytes"}, "bitsandbytes", "load_in_4bit", id="bnb-no-bits"),
        pytest.param(
            {"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "modelopt", "quant_algo", id="modelopt-algo"
        ),
        pytest.param(
            {"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": {"-:.*lm_head": {}}},
            "gptq",
            "dynamic",
            id="gptq-dynamic",
        ),
        pytest.param({"quant_method": "gptq", "bits": "4", "group_size": 128}, "gptq", "bits", id="gptq-bits-text"),
        pytest.param(
            {"quant_method": "mxfp4", "modules_to_not_convert": ["re:model.layers.(0"]},
            "mxfp4",
            "modules_to_not_convert",
            id="bad-regex",
        ),
    ],
)
def test_unreadable_quantization_config_is_refused_naming_the_field(quant, method, field):
    # given a quantization_config with a field the estimator cannot read

    # when
    with pytest.raises(SizingError) as caught:
        format_from_quantization_config(quant)

    # then
    assert caught.value.code is SizingErrorCode.UNSUPPORTED_QUANTIZATION
    assert caught.value.extra == {"quant_method": method, "field": field}
    assert caught.value.message.startswith(f"{method} quantization_config field {field}: ")


def test_unreadable_compressed_tensors_strategy_message():
    # given
    quant = _ct_config({**W4A16_ASYM, "strategy": "attn_head"}, fmt="pack-quantized")

    # when
    with pytest.raises(SizingError) as caught:
        format_from_quantization_config(quant)

    # then
    assert caught.value.message == (
        "compressed-tensors quantization_config field config_groups.group_0.weights.strategy: 'attn_head' is not "
        "modelled (tensor, channel, group, block, tensor_group are); choose a weight format explicitly"
    )

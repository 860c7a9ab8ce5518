"""The step-time model: hand-computed step times and the physics (DESIGN §9)."""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.errors import SizingError
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.perf import (
    Efficiencies,
    compute_dtype,
    decode_tokens_per_s,
    prefill_pairs,
    step_model,
    time_to_first_token_s,
)

LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}
MIXTRAL = {
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
H100 = GpuSpec(
    slug="h100",
    name="H100",
    memory_bytes=80 * 2**30,
    memory_bandwidth_bytes_per_s=3_350 * 10**9,
    tflops_dense={"bf16": 989, "fp16": 989, "fp8": 1979},
    interconnect="nvlink",
    interconnect_bytes_per_s=900 * 10**9,
)
A100 = GpuSpec(
    slug="a100",
    name="A100",
    memory_bytes=80 * 2**30,
    memory_bandwidth_bytes_per_s=2_039 * 10**9,
    tflops_dense={"bf16": 312, "fp16": 312},
    interconnect="nvlink",
    interconnect_bytes_per_s=600 * 10**9,
)
PLAIN = Efficiencies(mfu=0.5, bandwidth=0.8, link=1.0, step_overhead_s=0.0, sequence_overhead_s=0.0)


def _model(config=LLAMA3_8B, gpu=H100, **kwargs):
    defaults = {"weights": "bf16", "kv_dtype": "auto", "tp": 1, "engine": "vllm", "efficiencies": PLAIN}
    return step_model(arch=architecture_from_config(config), gpu=gpu, **{**defaults, **kwargs})


def test_decode_step_reads_the_weights_once_and_every_sequences_kv():
    # given Llama-3-8B in BF16 on an H100 with 80% of 3.35 TB/s and no fixed overheads
    model = _model()

    # when: 8 sequences at 1000 tokens of context each
    seconds = model.step_s(decode=8, context_tokens=8000)

    # then: weights 16,060,522,496 − input table 128,256 × 4096 × 2 = 1,050,673,152 → 15,009,849,344 bytes;
    #   KV 8000 × 131,072 = 1,048,576,000; total 16,058,425,344 / 2.68e12 = 5.99195 ms (memory-bound: compute
    #   is 2 × 6,979,588,096 × 8 + 32 × 2 × 32 × 256 × 8000 flops / 494.5e12 ≈ 0.24 ms)
    assert seconds == pytest.approx(16_058_425_344 / 2.68e12, rel=1e-9)


def test_decode_time_grows_with_batch_and_with_context():
    model = _model()
    by_batch = [model.step_s(decode=b, context_tokens=b * 2000) for b in (1, 8, 64, 256)]
    by_context = [model.step_s(decode=32, context_tokens=32 * c) for c in (128, 1024, 8192, 32768)]
    assert by_batch == sorted(by_batch)
    assert len(set(by_batch)) == 4
    assert by_context == sorted(by_context)
    assert len(set(by_context)) == 4
    # and throughput still rises with the batch while decode is memory-bound
    rates = [decode_tokens_per_s(model, batch=b, context_tokens=1000) for b in (1, 8, 64)]
    assert rates == sorted(rates)


def test_prefill_time_grows_with_prompt_length_and_is_compute_bound():
    model = _model()

    # when
    times = [time_to_first_token_s(model, prompt_tokens=t) for t in (128, 1024, 8192, 32768)]

    # then
    assert times == sorted(times)
    assert len(set(times)) == 4
    # 8192 tokens: decoder matmuls 2 × 6,979,588,096 (8,030,261,248 less the input table and the output head,
    #   525,336,576 each) × 8192 = 114,353,571,364,864 flops; logits for the last token only 2 × 525,336,576;
    #   attention 32 layers × 2 × 32 heads × (128 + 128) = 524,288 flops per pair × 8192 × 8193 / 2 pairs
    #   = 17,594,225,934,336; / (989e12 × 0.5) = 0.266833 s
    expected = (2 * 6_979_588_096 * 8192 + 2 * 525_336_576 + 524_288 * 8192 * 8193 / 2) / (989e12 * 0.5)
    assert times[2] == pytest.approx(expected, rel=1e-9)


def test_prefill_pairs_counts_causal_attention():
    # 4 new tokens attend to 1, 2, 3, 4 tokens; 2 tokens after 10 cached attend to 11 and 12
    assert prefill_pairs(4) == 10
    assert prefill_pairs(2, cached=10) == 23


def test_fp8_weights_halve_the_decode_read_and_use_the_fp8_rate():
    bf16, fp8 = _model(), _model(weights="fp8")
    assert fp8.compute_dtype == "fp8"
    assert bf16.compute_dtype == "bf16"
    assert fp8.dense_read_bytes < 0.55 * bf16.dense_read_bytes
    assert fp8.step_s(decode=1, context_tokens=100) < bf16.step_s(decode=1, context_tokens=100)


def test_gpu_without_fp8_runs_fp8_checkpoints_at_the_16_bit_rate():
    assert compute_dtype(A100, weight_slug="fp8", model_dtype=architecture_from_config(LLAMA3_8B).dtype) == "bf16"


def test_moe_decode_reads_only_the_routed_experts():
    # given Mixtral 8x7B: 8 experts per layer, 2 per token
    model = _model(MIXTRAL)

    # when / then: one token touches 8 × (1 − (1 − 2/8)^1) = 2 experts; a large batch touches nearly all 8
    one = model._weights_read(1)
    assert one == pytest.approx(model.dense_read_bytes + 2 * model.expert_bytes)
    assert model._weights_read(256) == pytest.approx(model.dense_read_bytes + 8 * model.expert_bytes, rel=1e-6)
    assert model.experts == 8
    assert model.experts_per_token == 2


def test_tensor_parallel_splits_the_reads_and_adds_all_reduces():
    one, two = _model(), _model(tp=2)
    # per GPU the weights halve (the vocabulary and norms aside) ...
    assert two.dense_read_bytes < 0.51 * one.dense_read_bytes
    # ... and each step pays 2 all-reduces per layer: 64 × (8 µs + 2 × (2 − 1)/2 × 4096 × 2 bytes / 450 GB/s)
    comm = two._comm_s(1)
    assert comm == pytest.approx(64 * (8e-6 + 1 * 4096 * 2 / 450e9), rel=1e-9)
    assert two.step_s(decode=1, context_tokens=1000) < one.step_s(decode=1, context_tokens=1000)


def test_pcie_link_is_slower_than_nvlink():
    nvlink, pcie = _model(tp=4), _model(tp=4, link="pcie")
    assert pcie._comm_s(256) > nvlink._comm_s(256)


def test_efficiencies_are_validated():
    with pytest.raises(SizingError) as caught:
        Efficiencies(mfu=1.5)
    assert caught.value.extra["fields"] == {"mfu": ["must be in (0, 1]"]}


def test_decode_steps_vector_equals_step_by_step():
    model = _model(efficiencies=Efficiencies())
    vector = model.decode_steps_s(decode=16, context_tokens=16 * 500, steps=5)
    one_by_one = [model.step_s(decode=16, context_tokens=16 * 500 + 16 * k) for k in range(5)]
    assert vector.tolist() == pytest.approx(one_by_one, rel=1e-12)


def test_pipeline_stages_run_in_turn_so_a_step_takes_as_long_as_on_one_gpu():
    # given the same model on one GPU and over two pipeline stages
    one, two = _model(), _model(pp=2)
    # then a step reads the same bytes in total (each stage its half, one after the other): latency-true,
    # throughput-conservative (no micro-batch overlap)
    assert two.step_s(decode=8, context_tokens=8000) == pytest.approx(
        one.step_s(decode=8, context_tokens=8000), rel=1e-6
    )

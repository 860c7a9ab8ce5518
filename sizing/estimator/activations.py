"""First-order model of an engine's activation peak during its profiling forward pass (DESIGN §7).

The peak of one prefill chunk of T tokens on one TP rank is dominated by the MLP's gate/up output and
its activated product, the fused QKV output and a few hidden-state buffers; the sampler adds the fp32
logits of every sequence it may sample at once. Public reference: vLLM logged a 1.26 GiB activation
peak for Llama-3-8B with 8192 batched tokens on H100; this model gives 1.12 GiB for that case.
Calibration against measured boot logs replaces these defaults per GPU and engine.

>>> from sizing.estimator.architecture import architecture_from_config
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16"})
>>> activation_peak_bytes(arch, tp=1, batched_tokens=8192, sampled_sequences=256, last_stage=True)
1205075968
"""

from __future__ import annotations

import math

from sizing.estimator.architecture import Architecture
from sizing.estimator.dtypes import DType
from sizing.estimator.kv import kv_heads_per_rank

HIDDEN_BUFFERS = 4  # residual, normed input, attention output, MLP output alive at the peak
LOGITS_BITS = DType.FP32.bits  # the sampler upcasts logits to fp32


def activation_peak_bytes(
    arch: Architecture, *, tp: int, batched_tokens: int, sampled_sequences: int, last_stage: bool
) -> int:
    """Peak activation bytes on one TP rank for a forward pass of `batched_tokens` tokens."""
    act_bits = arch.dtype.bits
    i_rank = arch.intermediate_size // tp
    gate_up = (2 if arch.gated_mlp else 1) * i_rank
    mlp_product = i_rank if arch.gated_mlp else 0
    qkv = (arch.num_attention_heads // tp + 2 * kv_heads_per_rank(arch.num_key_value_heads, tp)) * arch.head_dim
    per_token_elements = gate_up + mlp_product + qkv + HIDDEN_BUFFERS * arch.hidden_size
    peak = math.ceil(batched_tokens * per_token_elements * act_bits / 8)
    if last_stage:
        peak += math.ceil(sampled_sequences * arch.vocab_size * LOGITS_BITS / 8)
    return peak

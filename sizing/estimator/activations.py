"""First-order model of an engine's activation peak during its profiling forward pass (DESIGN §7).

The peak of one prefill chunk of T tokens on one TP rank is dominated by the MLP's gate/up output and
its activated product, the fused QKV output and a few hidden-state buffers; the sampler adds its working
set for every sequence it may sample at once (fp32 logits by default; vLLM V1's is larger, see
VLLM_SAMPLER_BYTES_PER_LOGIT). Public references: an older vLLM logged 1.26 GiB for Llama-3-8B with 8192
batched tokens and 256 sequences (the forward part here: 1.00 GiB); vLLM 0.11 measured ~4.8 GiB with 1024
sequences (here: 5.04 GiB).
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
from sizing.estimator.layers import AttentionKind, LayerSpec, MlpKind
from sizing.estimator.tensors import layer_counts

HIDDEN_BUFFERS = 4  # residual, normed input, attention output, MLP output alive at the peak
LOGITS_BITS = DType.FP32.bits  # the sampler upcasts logits to fp32
# vLLM V1's dummy sampler run holds, per sampled sequence and vocabulary entry: fp32 logits (4), softmax
# probabilities (4), top-k/top-p sort values (4) and int64 indices (8), the exponential noise of random sampling
# (4), the penalties' int64 bin counts (8) and their bool mask (1). Against DESIGN §7's vLLM 0.11 figures
# (Llama-class 4.8 GiB, Qwen-class 5.6 GiB activation peak with 1024 sequences) this leaves ~1 GiB for the
# forward pass, as the forward model gives.
VLLM_SAMPLER_BYTES_PER_LOGIT = 4 + 4 + 4 + 8 + 4 + 8 + 1


def _layer_elements(layer: LayerSpec, *, tp: int, hidden_size: int) -> int:
    """Activation elements per token of one layer kind on one rank: its QKV output and MLP buffers."""
    attn, mlp = layer.attention, layer.mlp
    if attn.kind is AttentionKind.MLA:
        qkv = attn.num_heads // tp * (attn.head_dim + attn.qk_nope_head_dim + attn.value_head_dim)
    else:
        qkv = (attn.num_heads // tp + 2 * attn.kv_heads_per_rank(tp)) * attn.head_dim
    i_rank = mlp.intermediate_size // tp
    gated = (2 if mlp.gated else 1) * i_rank + (i_rank if mlp.gated else 0)  # gate/up output, act x up
    if mlp.kind is MlpKind.MOE:
        # fused MoE: each token's rows for its experts_per_token experts, plus their outputs
        return qkv + mlp.experts_per_token * (gated + hidden_size)
    return qkv + gated


def activation_peak_bytes(
    arch: Architecture,
    *,
    tp: int,
    batched_tokens: int,
    sampled_sequences: int,
    last_stage: bool,
    sampler_bytes_per_logit: int = LOGITS_BITS // 8,
) -> int:
    """Peak activation bytes on one TP rank for a forward pass of `batched_tokens` tokens."""
    act_bits = arch.dtype.bits
    per_token_elements = HIDDEN_BUFFERS * arch.hidden_size + max(
        _layer_elements(layer, tp=tp, hidden_size=arch.hidden_size) for layer in layer_counts(arch.layers)
    )
    peak = math.ceil(batched_tokens * per_token_elements * act_bits / 8)
    if last_stage:
        peak += sampled_sequences * arch.vocab_size * sampler_bytes_per_logit
    return peak

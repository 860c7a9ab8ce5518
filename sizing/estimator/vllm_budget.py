"""vLLM's KV-cache budget as each vLLM release computes it (`shared/design/vllm-memory.md`, every rule with its
vLLM source as `file:line @ tag`, lines of the released wheel).

vLLM profiles one dummy batch before it sizes the KV cache, and what that batch is, what the profiler subtracts and
which defaults fill the flags a user leaves empty all changed between releases. This module resolves, for one
release: which engine runs (V0 or V1), the profiler regime, the scheduler defaults, the sampler's warm-up cost, the
non-torch memory, the CUDA-graph term and the model-runner buffers; `memory.estimate_memory` subtracts them.

>>> rules = vllm_rules(VllmSettings(version=Version(0, 11, 0), gpu_name="NVIDIA H100 80GB HBM3",
...     cuda_total_bytes=int(79.19 * GiB), compute_capability=(9, 0), max_model_len=32768))
>>> (rules.engine, rules.regime, rules.max_num_seqs, rules.max_num_batched_tokens, rules.sampler_path)
('v1', 'P2', 1024, 8192, 'sort')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sizing.estimator.architecture import Architecture
from sizing.estimator.errors import invalid_argument
from sizing.estimator.layers import AttentionKind, LayerSpec, MlpKind
from sizing.estimator.tensors import layer_counts
from sizing.estimator.units import GiB, MiB
from sizing.estimator.versions import Version

V = Version
UTILIZATION_092_FROM = V(0, 20, 0)  # config/cache.py 66 @ v0.20.0 (0.90: 43 @ v0.11.0, 41 @ v0.19.0)
V1_DEFAULT_FROM = V(0, 8, 0)  # V1 became the default engine
# arg_utils.py _is_v1_supported_oracle: CC < 8.0 -> V0 (1354 @ v0.8.5, 1403 @ v0.10.1)
V0_CC_FALLBACK_UNTIL = V(0, 10, 1)
V1_ONLY_FROM = V(0, 11, 0)  # vllm/worker/worker.py deleted
# the sampler's bytes per logit (spec §3.4): sort path by rows, and the light in-place paths
SORT_BYTES_PER_LOGIT = 38  # bf16 logits 2 + fp32 copy 4 + sort values 4 + int64 indices 8 + temporaries 20
SORT_SMALL_BYTES_PER_LOGIT = 50  # 2 <= rows < 128: PyTorch's segmented_sort_pairs_by_full_sort
LIGHT_BYTES_PER_LOGIT = 14  # FlashInfer / Triton top-k/top-p: logits 2 + fp32 4 + probs 4 + noise 4
V1_PROFILE_WORKSPACE_BYTES = round(0.05 * GiB)  # cuBLAS/cuBLASLt workspaces and sampler small tensors (V1)
# non-torch memory (spec §3.5), bytes
NT_P0 = round(0.40 * GiB)  # the CUDA context (~0.3 GiB, pytorch#107667) + cuBLAS handles + allocator slack
NT_V0 = round(0.05 * GiB)  # V0 0.6.5+: lazily loaded kernels and cuBLAS handles
NT_P1_FRAGMENTATION = round(1.0 * GiB)  # 0.6.5-0.6.6 count allocator fragmentation: 0.1-2 GiB, the midpoint
NT_V1_BEFORE_018 = round(0.15 * GiB)
NT_V1_FROM_018 = round(0.25 * GiB)
NT_TP = round(0.25 * GiB)  # NCCL channel buffers for two communicators + custom all-reduce IPC buffers
NT_PP_ONLY = round(0.07 * GiB)
NVLS_PER_RANK_BYTES = 288 * MiB  # NCCL nvlsPerRankSize 301989888 (vLLM issue #9699), one set per communicator
NT_NVSWITCH_FROM_011 = round(2.1 * GiB)  # 0.11+ no longer forces NCCL_CUMEM_ENABLE=0: ~2.1 GiB at TP 2-4 on HGX
# CUDA graphs (spec §3.6)
GRAPHS_OUTSIDE_DEFAULT = round(0.5 * GiB)  # captured after the KV allocation: 0.2-2.5 GiB above the budget
GRAPHS_INSIDE_DEFAULT = round(0.6 * GiB)  # 0.20+: the profiled estimate for the default capture list
GRAPHS_ESTIMATE_OPT_IN_FROM = V(0, 18, 0)  # envs.py 247 @ v0.18.1: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
GRAPHS_INSIDE_FROM = V(0, 20, 0)  # envs.py 260 @ v0.20.0: on by default

GiB_70 = 70 * GiB
GiB_160 = 160 * GiB


@dataclass(frozen=True, kw_only=True)
class VllmSettings:
    """What the user gave (None: let vLLM pick) and what the machine is."""

    version: Version
    gpu_name: str
    cuda_total_bytes: int
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    nvswitch: bool = False
    usage_context: str = "serve"
    engine_mode: str = "auto"
    install: str = "pip"
    flashinfer_sampler: bool | None = None
    estimate_cudagraphs: bool | None = None
    nccl_nvls: bool | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enable_chunked_prefill: bool | None = None
    no_auto_chunking: str = ""  # why V0 would not turn chunked prefill on by itself (sliding window, LoRA, ...)
    v1_unsupported: str = ""  # why vLLM's oracle would fall back to V0 (besides the compute capability)


@dataclass(frozen=True, kw_only=True, eq=False)
class VllmRules:
    """The release's rules, resolved for one deployment (hashed by identity: `vllm_rules` is cached per settings)."""

    version: Version
    engine: str  # "v0" | "v1"
    regime: str  # "P0" | "P1" | "P2" | "P4" (spec §3.0)
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    utilization: float | None  # the version's default (None: the user's value is used)
    sampler_path: str  # "sort" | "flashinfer" | "triton"
    graphs_in_budget: bool
    defaults_assumed: dict[str, object] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # term -> the band and vLLM source behind it
    notes: tuple[str, ...] = ()

    @property
    def sampler_rows(self) -> int:
        """Rows the dummy sampler run samples: V0 every sequence of the batch, V1 min(S, B) requests."""
        if self.engine == "v0":
            return self.max_num_seqs
        return min(self.max_num_seqs, self.max_num_batched_tokens)


def vllm_default_utilization(version: Version | None) -> float:
    """`gpu_memory_utilization`'s default: 0.90 up to 0.19.x, 0.92 from 0.20.0 (`config/cache.py` 66 @ v0.20.0)."""
    return 0.92 if version is not None and version >= UTILIZATION_092_FROM else 0.9


def _band(low: str, high: str | None = None) -> str:
    return f"vLLM {low}–{high}" if high else f"vLLM {low}+"


def _engine(s: VllmSettings) -> tuple[str, str]:
    """(engine, why) by vLLM's own choice (spec §2)."""
    version, cc = s.version, s.compute_capability
    if s.engine_mode == "v0":
        if version >= V1_ONLY_FROM:
            raise invalid_argument(
                "engine_mode", f"vLLM {version} has no V0 engine (removed in 0.11.0): choose auto or v1"
            )
        return "v0", "V0 requested (VLLM_USE_V1=0)"
    if s.engine_mode == "v1":
        return "v1", "V1 requested (VLLM_USE_V1=1)"
    if version < V1_DEFAULT_FROM:
        return "v0", f"{_band('0.6.0', '0.7.x')}: V0 is the default engine (V1 only with VLLM_USE_V1=1)"
    if version <= V0_CC_FALLBACK_UNTIL:
        if cc is not None and cc < (8, 0):
            return "v0", (
                f"{_band('0.8.0', '0.10.1')}: compute capability {cc[0]}.{cc[1]} < 8.0 falls back to V0 "
                "(arg_utils.py _is_v1_supported_oracle 1354 @ v0.8.5)"
            )
        if s.v1_unsupported:
            return "v0", f"{_band('0.8.0', '0.10.1')}: {s.v1_unsupported} falls back to V0"
    return "v1", f"{_band('0.8.0')}: the V1 engine"


def _regime(engine: str, version: Version) -> tuple[str, str]:
    if engine == "v0":
        if version <= V(0, 6, 4):
            return "P0", (
                "V0 ≤ 0.6.4: KV = budget − peak allocated − (used − allocated): the CUDA context counts "
                "(worker.py determine_num_available_blocks 174–243 @ v0.6.4)"
            )
        if version <= V(0, 6, 6):
            return "P1", (
                "V0 0.6.5–0.6.6: KV = budget − weights − activations − non-torch, non-torch measured "
                "against allocated bytes (utils.py memory_profiling 1661–1738 @ v0.6.5)"
            )
        return "P2", (
            "V0 0.7.0+: KV = budget − weights − activations − non-torch, non-torch against reserved bytes "
            "(utils.py memory_profiling 1983–2056 @ v0.7.0)"
        )
    if version <= V(0, 9, 0):
        return "P0", (
            "V1 ≤ 0.9.0: KV = budget − peak allocated − (used − allocated): the CUDA context and the "
            "model runner's buffers count (v1/worker/gpu_worker.py determine_available_memory 165–212 "
            "@ v0.8.5)"
        )
    if version < V(0, 27, 0):
        return "P2", (
            "V1 0.9.1–0.26.x: KV = budget − weights − activations − non-torch (− CUDA graphs from 0.20) "
            "(utils memory_profiling 2334–2480 @ v0.9.2; gpu_worker.py 222 @ v0.11.0)"
        )
    return "P4", (
        "V1 0.27+: non-KV = memory consumed since init + the profile's peak over what stays allocated "
        "(utils/mem_utils.py memory_profiling 234–326 @ v0.27.0)"
    )


def _scheduler(s: VllmSettings, engine: str) -> tuple[int, int, bool, dict[str, object], str]:
    """(max_num_seqs, max_num_batched_tokens, chunked prefill, defaults assumed, source) — spec §3.2."""
    version, length = s.version, s.max_model_len or 0
    assumed: dict[str, object] = {}
    if engine == "v0":
        seqs = s.max_num_seqs or 256  # arg_utils.py 123 @ v0.6.4; 1561 @ v0.8.5
        if s.max_num_seqs is None:
            assumed["max_num_seqs"] = seqs
        chunked = s.enable_chunked_prefill
        if chunked is None:
            chunked = length > 32768 and not s.no_auto_chunking
            assumed["enable_chunked_prefill"] = chunked
        if s.max_num_batched_tokens is not None:
            batched = s.max_num_batched_tokens
        elif chunked:
            batched = 512 if version <= V(0, 6, 4) else 2048  # config.py 1114 @ v0.6.4; 1344 @ v0.6.5
            assumed["max_num_batched_tokens"] = batched
        else:
            batched = max(length, 2048)
            assumed["max_num_batched_tokens"] = batched
        source = (
            "V0: max_num_seqs 256; chunked prefill on by itself above 32,768 tokens of context; without it "
            "max_num_batched_tokens = max(max_model_len, 2048), with it 512 (≤ 0.6.4) or 2048 "
            "(arg_utils.py 996–1020 @ v0.6.4, config.py 1529–1537 @ v0.7.2)"
        )
        return seqs, batched, chunked, assumed, source
    llm = s.usage_context == "llm"
    name = s.gpu_name.lower()
    big_seqs = 1024
    if version < V(0, 8, 0):  # 0.7.x opt-in V1: by name, 1024 sequences everywhere
        big = "h100" in name or "h200" in name
        seqs, batched = 1024, (16384 if llm else 8192) if big else (8192 if llm else 2048)
        source = (
            "V1 0.7.x: H100/H200 by name 16384/8192 tokens (LLM/serve), else 8192/2048; 1024 sequences "
            "(arg_utils.py _override_v1_engine_args 1296–1328 @ v0.7.2)"
        )
    elif version <= V(0, 8, 4):
        big = "h100" in name or "h200" in name
        source = (
            "V1 0.8.0–0.8.4: H100/H200 by name get 16384/8192 tokens (LLM/serve) and 1024 sequences, "
            "others 8192/2048 and 256 (arg_utils.py 1669–1682 @ v0.8.4)"
        )
    elif version <= V(0, 8, 5):
        big = s.cuda_total_bytes >= GiB_70
        source = (
            "V1 0.8.5: cards of ≥ 70 GiB get 16384/8192 tokens (LLM/serve) and 1024 sequences, others "
            "8192/2048 and 256 (arg_utils.py 1596–1621 @ v0.8.5)"
        )
    else:
        big = s.cuda_total_bytes >= GiB_70 and "a100" not in name
        source = (
            "V1 0.9.0+: cards of ≥ 70 GiB other than the A100 get 16384/8192 tokens (LLM/serve) and 1024 "
            "sequences, others 8192/2048 and 256 (arg_utils.py 1495 @ v0.9.0; get_batch_defaults 1817–1898 "
            "@ v0.14.1)"
        )
        if version >= V(0, 29, 0) and s.cuda_total_bytes >= GiB_160:
            source = (
                "V1 0.29+: cards of ≥ 160 GiB get 16384 tokens and 1024 sequences in both contexts "
                "(get_batch_defaults 2940, 2973 @ v0.33.0)"
            )
    if version >= V(0, 8, 0):
        seqs = big_seqs if big else 256
        if version >= V(0, 29, 0) and s.cuda_total_bytes >= GiB_160:
            batched = 16384
        else:
            batched = (16384 if llm else 8192) if big else (8192 if llm else 2048)
    if s.max_num_seqs is not None:
        seqs = s.max_num_seqs
    else:
        assumed["max_num_seqs"] = seqs
    chunked = True if s.enable_chunked_prefill is None else s.enable_chunked_prefill
    if s.max_num_batched_tokens is not None:
        batched = s.max_num_batched_tokens
    else:
        if not chunked:
            batched = max(length, batched)  # without chunked prefill one prompt must fit the batch
        assumed["max_num_batched_tokens"] = batched
    return seqs, batched, chunked, assumed, source


def _sampler_path(s: VllmSettings, engine: str, rows: int) -> tuple[str, str]:
    """Which top-k/top-p implementation the dummy sampler run takes (spec §3.4)."""
    version, flag = s.version, s.flashinfer_sampler
    if engine == "v0":
        if flag:
            return "flashinfer", "V0 with VLLM_USE_FLASHINFER_SAMPLER=1 (sampler.py 25 @ v0.7.2)"
        return "sort", "V0 sorts the logits (sampler.py _apply_top_k_top_p 388 @ v0.7.2)"
    if flag is False:
        return ("triton" if version >= V(0, 17, 0) and rows >= 8 else "sort"), "VLLM_USE_FLASHINFER_SAMPLER=0"
    if version < V(0, 9, 0):
        if flag:
            return "flashinfer", "V1 0.8.x with VLLM_USE_FLASHINFER_SAMPLER=1"
        return "sort", "V1 0.8.x sorts (FlashInfer only below 0.2.3: topk_topp_sampler.py 29–60 @ v0.8.5)"
    if version <= V(0, 11, 0):
        if flag or s.install == "docker":
            return "flashinfer", (
                "V1 0.9.0–0.11.0: FlashInfer whenever it is importable (the Docker image ships it; "
                "topk_topp_sampler.py 46 @ v0.11.0)"
            )
        return "sort", "V1 0.9.0–0.11.0 on a pip install: FlashInfer is not installed, the logits are sorted"
    if flag:
        return "flashinfer", "V1 0.11.1+ with VLLM_USE_FLASHINFER_SAMPLER=1 (topk_topp_sampler.py 34 @ v0.11.2)"
    if version >= V(0, 17, 0) and rows >= 8:
        return "triton", "V1 0.17+: Triton top-k/top-p for 8 rows or more (apply_top_k_top_p_triton 252 @ v0.17.1)"
    return "sort", "V1 0.11.1–0.16.x: FlashInfer is opt-in, the logits are sorted (topk_topp_sampler.py 164/183)"


def vllm_rules(s: VllmSettings) -> VllmRules:
    """Resolve a release's rules for one deployment."""
    engine, engine_why = _engine(s)
    regime, regime_why = _regime(engine, s.version)
    seqs, batched, chunked, assumed, scheduler_why = _scheduler(s, engine)
    rows = seqs if engine == "v0" else min(seqs, batched)
    path, path_why = _sampler_path(s, engine, rows)
    if s.version >= GRAPHS_INSIDE_FROM:
        inside = s.estimate_cudagraphs is not False
        graphs_why = (
            "vLLM 0.20+: the CUDA graphs' memory is estimated while profiling and subtracted from the "
            "budget (envs.py 260 @ v0.20.0; gpu_model_runner.py profile_cudagraph_memory 6268 @ v0.33.0)"
        )
    elif s.version >= GRAPHS_ESTIMATE_OPT_IN_FROM and s.estimate_cudagraphs:
        inside = True
        graphs_why = "vLLM 0.18–0.19 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1: subtracted from the budget"
    else:
        inside = False
        graphs_why = (
            f"vLLM {s.version}: CUDA graphs are captured after the KV allocation, above the "
            "gpu_memory_utilization budget"
        )
    notes: list[str] = []
    if regime == "P1":
        notes.append(
            f"vLLM {s.version} counts the caching allocator's fragmentation as non-torch memory "
            "(0.1–2 GiB, not predictable): the KV figure assumes 1 GiB; read the boot log"
        )
    sources = {
        "engine": engine_why,
        "regime": regime_why,
        "scheduler": scheduler_why,
        "sampler": path_why,
        "cuda_graphs": graphs_why,
    }
    return VllmRules(
        version=s.version,
        engine=engine,
        regime=regime,
        max_num_seqs=seqs,
        max_num_batched_tokens=batched,
        chunked_prefill=chunked,
        utilization=vllm_default_utilization(s.version),
        sampler_path=path,
        graphs_in_budget=inside,
        defaults_assumed=assumed,
        sources=sources,
        notes=tuple(notes),
    )


# --- the terms ------------------------------------------------------------------------------------------------


def _layer_forward_elements(layer: LayerSpec, *, hidden: int, tp: int) -> int:
    """Elements per token alive at a layer's forward peak on one rank (spec §3.4), beyond 3 hidden buffers."""
    attn, mlp = layer.attention, layer.mlp
    if attn.kind is AttentionKind.MLA:
        q = attn.num_heads // tp * (attn.qk_nope_head_dim + attn.qk_rope_head_dim)
        attention = (
            2 * q
            + attn.kv_lora_rank
            + attn.qk_rope_head_dim
            + attn.num_heads // tp * (attn.qk_nope_head_dim + attn.value_head_dim)
        )
    else:
        q = attn.num_heads // tp * attn.head_dim
        attention = 2 * q + 2 * attn.kv_heads_per_rank(tp) * attn.head_dim
    width = (2 if mlp.gated else 1) + 1  # gate/up output (2I) + activation (I); ungated: up (I) + act (I)
    if mlp.kind is MlpKind.MOE:
        n = mlp.intermediate_size // tp
        # fused_experts' workspaces per routed token: max(2N, H) + N
        routed = mlp.experts_per_token * (max(2 * n, hidden) + n)
        shared = width * (mlp.shared_experts * mlp.shared_intermediate_size) // tp
        return max(attention, routed + shared)
    return max(attention, width * (mlp.intermediate_size // tp))


def forward_peak_bytes(arch: Architecture, *, tp: int, batched_tokens: int) -> int:
    """F(B): the profile forward's peak on one rank: B × (3H + the widest layer's temporaries) × act bytes."""
    widest = max(_layer_forward_elements(layer, hidden=arch.hidden_size, tp=tp) for layer in layer_counts(arch.layers))
    return math.ceil(batched_tokens * (3 * arch.hidden_size + widest) * arch.dtype.bits / 8)


def sampler_bytes_per_logit(path: str, rows: int) -> int:
    if path != "sort":
        return LIGHT_BYTES_PER_LOGIT
    return SORT_SMALL_BYTES_PER_LOGIT if 2 <= rows < 128 else SORT_BYTES_PER_LOGIT


def sampler_peak_bytes(arch: Architecture, rules: VllmRules, *, sm_count: int | None) -> int:
    """S_peak = rows × vocab × k + B × H × act bytes (+ Triton's cached buffer) (+ V1's workspaces)."""
    rows, batched = rules.sampler_rows, rules.max_num_batched_tokens
    peak = rows * arch.vocab_size * sampler_bytes_per_logit(rules.sampler_path, rows)
    peak += math.ceil(batched * arch.hidden_size * arch.dtype.bits / 8)
    if rules.sampler_path == "triton":
        pow2 = 1 << max(0, rows - 1).bit_length()
        peak += min(pow2, sm_count or 132) * arch.vocab_size * 4
    if rules.engine == "v1":
        peak += V1_PROFILE_WORKSPACE_BYTES
    return peak


def activation_peak(
    arch: Architecture, rules: VllmRules, *, tp: int, samples: bool, sm_count: int | None
) -> tuple[int, int, int]:
    """(A, F, S_peak) on one rank: the sampler runs after the forward's temporaries are freed, so the peaks do not
    add. `samples`: this rank runs the sampler (V0: the driver of the last stage only; V1: every last-stage rank)."""
    forward = forward_peak_bytes(arch, tp=tp, batched_tokens=rules.max_num_batched_tokens)
    sampler = sampler_peak_bytes(arch, rules, sm_count=sm_count) if samples else 0
    return max(forward, sampler), forward, sampler


def non_torch_bytes(
    rules: VllmRules,
    *,
    tp: int,
    pp: int,
    nvswitch: bool,
    compute_capability: tuple[int, int] | None,
    nccl_nvls: bool | None,
) -> tuple[int, str]:
    """NT (spec §3.5): the CUDA context where the regime counts it, NCCL, NVLS buffers on NVSwitch boards."""
    version = rules.version
    if rules.regime == "P0":
        base, why = NT_P0, "the CUDA context, cuBLAS handles and allocator slack (≈0.40 GiB; the regime counts them)"
    elif rules.engine == "v0":
        base, why = NT_V0, "lazily loaded kernels and cuBLAS handles (≈0.05 GiB in V0 logs)"
        if rules.regime == "P1":
            base += NT_P1_FRAGMENTATION
            why += " + 1 GiB of allocator fragmentation counted by 0.6.5–0.6.6"
    elif version < V(0, 18, 0):
        base, why = NT_V1_BEFORE_018, "≈0.15 GiB in V1 before 0.18 (public H100 report)"
    else:
        base, why = NT_V1_FROM_018, "≈0.25 GiB in V1 from 0.18 (public H100 report)"
    hopper_plus = compute_capability is not None and compute_capability >= (9, 0)
    nvls = nvswitch and hopper_plus and nccl_nvls is not False
    if tp > 1:
        if nvls and version >= V(0, 11, 0):
            return max(base, NT_NVSWITCH_FROM_011), (
                "NVSwitch board, vLLM 0.11+ (NCCL_CUMEM_ENABLE no longer forced off): ≈2.1 GiB of NCCL and NVLS "
                "buffers at TP ≥ 2 (public H100 report: TP2 2.07, TP4 2.13 GiB)"
            )
        total = base + NT_TP
        why += " + NCCL buffers 0.25 GiB (TP > 1)"
        if nvls and tp > 2:
            total += 2 * tp * NVLS_PER_RANK_BYTES
            why += (
                f" + NVLS buffers 2 communicators × TP {tp} × 288 MiB (NVSwitch, TP > 2; vLLM issue #9699; "
                "NCCL_NVLS_ENABLE=0 drops them)"
            )
        return total, why
    if pp > 1:
        return base + NT_PP_ONLY, why + " + 0.07 GiB of pipeline-parallel NCCL buffers"
    return base, why


def cuda_graph_bytes(rules: VllmRules, *, enforce_eager: bool, measured: int | None) -> tuple[int, bool]:
    """(G, inside the budget)."""
    if enforce_eager:
        return 0, False
    if measured is not None:
        return measured, rules.graphs_in_budget
    return (GRAPHS_INSIDE_DEFAULT if rules.graphs_in_budget else GRAPHS_OUTSIDE_DEFAULT), rules.graphs_in_budget


def persistent_bytes(arch: Architecture, rules: VllmRules, *, max_model_len: int, block_size: int) -> int:
    """P (spec §3.7): V1's model-runner buffers allocated before profiling, counted by P0 and P4 only."""
    if rules.engine != "v1" or rules.regime not in ("P0", "P4"):
        return 0
    batched, seqs = rules.max_num_batched_tokens, rules.max_num_seqs
    return (
        batched * (4 + 8 + 8)
        + math.ceil(batched * arch.hidden_size * arch.dtype.bits / 8)
        + seqs * math.ceil(max(1, max_model_len) / block_size) * 4
    )


def mxfp4_padded_expert_bytes(*, hidden: int, intermediate_per_rank: int, backend: str = "marlin") -> int:
    """One MXFP4 expert's bytes as vLLM stores it (spec §3.1; quantization/mxfp4.py create_weights 199ff @ v0.11.0):
    Marlin pads I per rank to 128 and H to 256; w13 = 2I×H/2 + scales 2I×H/32 + bf16 bias 2I×2, w2 = H×I/2 + H×I/32 +
    H×2. `backend` "none" keeps the checkpoint's shape."""
    i, h = intermediate_per_rank, hidden
    if backend == "marlin":
        i, h = math.ceil(i / 128) * 128, math.ceil(h / 256) * 256
    return (2 * i * h // 2 + 2 * i * h // 32 + 2 * i * 2) + (h * i // 2 + h * i // 32 + h * 2)


def mxfp4_backend(version: Version, compute_capability: tuple[int, int] | None) -> str:
    """The MXFP4 MoE kernel vLLM picks (get_mxfp4_backend 59 @ v0.11.0): Marlin below SM90 and on a plain pip
    install on Hopper; the Triton and SM100 FlashInfer layouts are padded alike (treated as Marlin)."""
    del version, compute_capability  # every path the spec lists pads like Marlin unless fingerprinted
    return "marlin"


__all__ = [
    "VllmRules",
    "VllmSettings",
    "activation_peak",
    "cuda_graph_bytes",
    "forward_peak_bytes",
    "mxfp4_padded_expert_bytes",
    "non_torch_bytes",
    "persistent_bytes",
    "sampler_peak_bytes",
    "vllm_default_utilization",
    "vllm_rules",
]

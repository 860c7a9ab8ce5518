"""SGLang's memory defaults as each SGLang release computes them (DESIGN §7).

SGLang splits a GPU with one number, `mem_fraction_static`: that share of the card holds the weights and the KV pool,
the rest is left for activations, CUDA graphs and the runtime. When it is not given, SGLang chooses it at start-up,
and the rule has changed several times:

Each band, with the source it reproduces (`file:line @ tag` of the released wheel, `pip download --no-deps
sglang==X.Y.Z`):

- 0.4.0–0.4.5: fixed by TP: 0.79 (≥ 16), 0.81 (≥ 8), 0.85 (≥ 4), 0.87 (≥ 2), else 0.88 (`server_args.py:158 @ v0.4.0`).
- 0.4.6: that table on cards up to 81,920 MiB, else `(gpu_mem − 13 × 1024) / gpu_mem` (`server_args.py:224 @ v0.4.6`).
- 0.4.7: the table by TP × PP up to 81,920 MiB, else 0.88; then 0.79 above 180,000 MiB, or above 96 GiB
  `min(f + 48 × 1024 × (1 − f) / gpu_mem, (gpu_mem − 18 × 1024) / gpu_mem)` (`server_args.py:253 @ v0.4.7`).
- 0.4.8–0.5.2: a reserve by card size, `round((gpu_mem − reserve) / gpu_mem, 3)` (`server_args.py:274 @ v0.4.8`,
  `server_args.py:452 @ v0.5.2`).
- 0.5.3–0.5.23: reserve = 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs + 1024 × tp × pp / 8
  MiB, at least 10 GiB on cards above 60 GiB (`server_args.py:_handle_gpu_memory_settings 637 @ v0.5.3`,
  `arg_groups/memory_hook.py:281 @ v0.5.23`).
- 0.5.10–0.5.23: plus the piecewise (prefill) CUDA graphs, on by default: 8 MiB per captured token size, 1.5 GiB
  under MLA (`server_args.py:1308 @ v0.5.10`, `arg_groups/memory_hook.py:386 @ v0.5.23`).
- 0.5.14: the prefill-graph term only with CUDA graphs on (`server_args.py:3303 @ v0.5.14`); from 0.5.15 the
  decode-graph term too (`server_args.py:3643 @ v0.5.15`).

`gpu_mem` is what `nvidia-smi --query-gpu=memory.total` prints, in MiB (`utils.py:get_nvgpu_memory_capacity`). The
KV pool is sized the same way in every band: `free memory after loading − free memory before loading × (1 −
mem_fraction_static)` (`model_runner.py:466 @ v0.4.0`, `model_runner.py:1288 @ v0.5.3`,
`mem_cache/kv_cache_configurator.py:3007 @ v0.5.23`).

Not modelled: speculative decoding's extra reserve, DP attention, the vision-model reduction of the fraction
(0.4.9+), SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (off by default through 0.5.23), NPU/XPU/AMD branches, the
model-architecture list that switches piecewise graphs off.

>>> sglang_default_scheduler_for(version=Version(0, 5, 9), gpu_mem_mib=81920, tp=1)
SglangScheduler(cuda_graph_max_bs=256, chunked_prefill_size=8192, band='SGLang 0.5.5–0.5.19')
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.estimator.versions import Version

V = Version
GiB_MIB = 1024  # MiB in a GiB: SGLang writes its thresholds as `N * 1024` MiB

# Release bands: the first release of each change.
CARD_SIZED_FRACTION_FROM = V(0, 4, 6)
PARALLEL_SIZED_FRACTION_FROM = V(0, 4, 7)
RESERVE_TABLE_FROM = V(0, 4, 8)
RESERVE_FORMULA_FROM = V(0, 5, 3)
SMALL_CARD_GRAPH_BS_24_FROM = V(0, 5, 5)
PIECEWISE_GRAPHS_FROM = V(0, 5, 10)
PREFILL_GRAPHS_FOLLOW_EAGER_FROM = V(0, 5, 14)
DECODE_GRAPHS_FOLLOW_EAGER_FROM = V(0, 5, 15)
SMALL_CARD_CHUNK_4096_FROM = V(0, 5, 20)
NEWEST = V(0, 5, 23)

RESERVE_FLOOR_MIB = 10 * GiB_MIB  # cards above 60 GiB keep at least 10 GiB outside the static pool (0.5.3+)
ACTIVATION_MIB_PER_TOKEN = 1.5  # SGLang's heuristic: MiB of activations per prefill token
GRAPH_MIB_PER_BATCH = 2  # SGLang's heuristic: MiB of decode-graph buffers per captured batch size
PIECEWISE_MIB_PER_SIZE = 8  # non-torch memory of one captured prefill size (0.5.10+)
PIECEWISE_MLA_MIB = 1.5 * GiB_MIB  # flat piecewise reserve under MLA (0.5.10+)


@dataclass(frozen=True, kw_only=True)
class SglangScheduler:
    """The decode-graph batch limit and the prefill chunk SGLang starts with."""

    cuda_graph_max_bs: int  # the largest batch captured in a decode CUDA graph (also bounds the graph memory)
    chunked_prefill_size: int  # tokens of one prefill chunk
    band: str


def sglang_default_scheduler_for(*, version: Version, gpu_mem_mib: float, tp: int) -> SglangScheduler:
    """SGLang's default (cuda_graph_max_bs, chunked_prefill_size) for a card of `gpu_mem_mib` (nvidia-smi's MiB).

    Sources: `server_args.py:171-182 @ v0.4.0` and `cuda_graph_runner.py:132 @ v0.4.0` (capture list up to 160);
    the small-card TP split `server_args.py:190 @ v0.4.1`; `cuda_graph_runner.py:138 @ v0.4.6` (+160..256 above
    81,920 MiB); `cuda_graph_runner.py:150-153 @ v0.4.7`; `server_args.py:318 @ v0.4.8` with
    `cuda_graph_runner.py:160-163 @ v0.4.8`; the card table `server_args.py:_handle_gpu_memory_settings 542-626 @
    v0.5.3`, 24 at < 35 GiB `server_args.py:717 @ v0.5.5`; chunk 4096 and 48/160 at < 35 GiB
    `arg_groups/memory_hook.py:110-114 @ v0.5.20`.
    """
    small_tp = tp < 4
    if version < CARD_SIZED_FRACTION_FROM:  # 0.4.0-0.4.5
        band = "SGLang 0.4.0" if version < V(0, 4, 1) else "SGLang 0.4.1–0.4.5"
        if gpu_mem_mib < 25_000:
            bs = 8 if version < V(0, 4, 1) or small_tp else 80
            return SglangScheduler(cuda_graph_max_bs=bs, chunked_prefill_size=2048, band=band)
        return SglangScheduler(cuda_graph_max_bs=160, chunked_prefill_size=8192, band=band)
    if version < PARALLEL_SIZED_FRACTION_FROM:  # 0.4.6
        if gpu_mem_mib < 25_000:
            return SglangScheduler(
                cuda_graph_max_bs=8 if small_tp else 80, chunked_prefill_size=2048, band="SGLang 0.4.6"
            )
        return SglangScheduler(
            cuda_graph_max_bs=256 if gpu_mem_mib > 81_920 else 160, chunked_prefill_size=8192, band="SGLang 0.4.6"
        )
    if version < RESERVE_TABLE_FROM:  # 0.4.7
        if gpu_mem_mib < 25_000:
            return SglangScheduler(
                cuda_graph_max_bs=8 if small_tp else 80, chunked_prefill_size=2048, band="SGLang 0.4.7"
            )
        bs = 512 if gpu_mem_mib > 180_000 else 256 if gpu_mem_mib > 96 * GiB_MIB else 160
        return SglangScheduler(
            cuda_graph_max_bs=bs, chunked_prefill_size=16384 if gpu_mem_mib > 180_000 else 8192, band="SGLang 0.4.7"
        )
    if version < RESERVE_FORMULA_FROM:  # 0.4.8-0.5.2
        band = "SGLang 0.4.8–0.5.2"
        if gpu_mem_mib < 35 * GiB_MIB:
            return SglangScheduler(cuda_graph_max_bs=8 if small_tp else 80, chunked_prefill_size=2048, band=band)
        bs = 512 if gpu_mem_mib > 160_000 else 256 if gpu_mem_mib > 90 * GiB_MIB else 160
        return SglangScheduler(
            cuda_graph_max_bs=bs, chunked_prefill_size=8192 if gpu_mem_mib < 160 * GiB_MIB else 16384, band=band
        )
    # 0.5.3+: one table by card size sets both
    if version < SMALL_CARD_GRAPH_BS_24_FROM:
        band, small_card = "SGLang 0.5.3–0.5.4", (2048, 16 if small_tp else 80)
    elif version < SMALL_CARD_CHUNK_4096_FROM:
        band, small_card = "SGLang 0.5.5–0.5.19", (2048, 24 if small_tp else 80)
    else:
        band, small_card = f"SGLang {SMALL_CARD_CHUNK_4096_FROM}–{NEWEST}", (4096, 48 if small_tp else 160)
    if gpu_mem_mib < 20 * GiB_MIB:  # T4, 4080
        chunk, bs = 2048, 8
    elif gpu_mem_mib < 35 * GiB_MIB:  # A10, 4090, 5090
        chunk, bs = small_card
    elif gpu_mem_mib < 60 * GiB_MIB:  # A100 40GB, L40
        chunk, bs = 4096, 32 if small_tp else 160
    elif gpu_mem_mib < 160 * GiB_MIB:  # H100, A100 80GB, H20, H200
        chunk, bs = 8192, 256 if small_tp else 512
    else:  # B200, MI300
        chunk, bs = 16384, 512
    return SglangScheduler(cuda_graph_max_bs=bs, chunked_prefill_size=chunk, band=band)


def prefill_graph_sizes(max_tokens: int) -> tuple[int, ...]:
    """The token counts SGLang captures piecewise (prefill) CUDA graphs for, up to `max_tokens`.

    `server_args.py:_generate_piecewise_cuda_graph_tokens 1397 @ v0.5.10` (the same list as
    `arg_groups/cuda_graph_hook.py:generate_prefill_cuda_graph_batch_sizes @ v0.5.23`).
    """
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(576, 1025, 64))
        + list(range(1280, 4097, 256))
        + list(range(4608, max_tokens + 1, 512))
    )
    return tuple(s for s in sizes if s <= max_tokens)


@dataclass(frozen=True, kw_only=True)
class SglangFraction:
    """`mem_fraction_static` as SGLang chose it, with the rule and numbers that produced it."""

    mem_fraction_static: float
    reserved_mib: float | None  # the reserve the rule subtracted (None: a fixed fraction)
    prefill_graph_mib: float  # the piecewise-graph part of the reserve (0 before 0.5.10 or when off)
    rule: str  # the formula with its numbers
    band: str


_TP_TABLE = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87))  # `server_args.py:158-167 @ v0.4.0`


def _by_parallel_size(size: int) -> float:
    return next((fraction for least, fraction in _TP_TABLE if size >= least), 0.88)


def _reserve_table_mib(gpu_mem_mib: float, parallel: int) -> float:
    """0.4.8-0.5.2's reserve by card size (`server_args.py:288-306 @ v0.4.8`)."""
    if gpu_mem_mib < 35 * GiB_MIB:  # T4, 4080, A10, L40, 4090
        return (2.8 + parallel / 10) * GiB_MIB
    if gpu_mem_mib < 90 * GiB_MIB:  # H100, A100
        return (9.5 + parallel / 2) * GiB_MIB
    if gpu_mem_mib < 160 * GiB_MIB:  # H20, H200
        return (12 + parallel / 2) * GiB_MIB
    return 32 * GiB_MIB  # B200, MI300


def sglang_mem_fraction_static(
    *,
    version: Version,
    gpu_mem_mib: float,
    tp: int,
    pp: int,
    chunked_prefill_size: int,
    cuda_graph_max_bs: int,
    cuda_graphs: bool = True,
    mla: bool = False,
) -> SglangFraction:
    """The `mem_fraction_static` SGLang `version` picks when the flag is unset (the table in the module docstring)."""
    parallel = tp * pp
    if version < CARD_SIZED_FRACTION_FROM:
        fraction = _by_parallel_size(tp)
        band = "SGLang 0.4.0–0.4.5"
        return SglangFraction(
            mem_fraction_static=fraction,
            reserved_mib=None,
            prefill_graph_mib=0,
            band=band,
            rule=f"{band}: fixed by TP {tp} → {fraction}",
        )
    if version < PARALLEL_SIZED_FRACTION_FROM:
        band = "SGLang 0.4.6"
        if gpu_mem_mib <= 81_920:
            fraction = _by_parallel_size(tp)
            return SglangFraction(
                mem_fraction_static=fraction,
                reserved_mib=None,
                prefill_graph_mib=0,
                band=band,
                rule=f"{band}: fixed by TP {tp} on cards up to 81,920 MiB → {fraction}",
            )
        fraction = (gpu_mem_mib - 13 * GiB_MIB) / gpu_mem_mib
        return SglangFraction(
            mem_fraction_static=fraction,
            reserved_mib=13 * GiB_MIB,
            prefill_graph_mib=0,
            band=band,
            rule=f"{band}: (gpu_mem {gpu_mem_mib:g} − 13,312) / {gpu_mem_mib:g} MiB = {fraction}",
        )
    if version < RESERVE_TABLE_FROM:
        band = "SGLang 0.4.7"
        fraction = _by_parallel_size(parallel) if gpu_mem_mib <= 81_920 else 0.88
        if gpu_mem_mib > 180_000:
            fraction, rule = 0.79, "0.79 on cards above 180,000 MiB"
        elif gpu_mem_mib > 96 * GiB_MIB:
            base = fraction
            fraction = min(base + 48 * GiB_MIB * (1 - base) / gpu_mem_mib, (gpu_mem_mib - 18 * GiB_MIB) / gpu_mem_mib)
            rule = (
                f"min({base} + 49,152 × (1 − {base}) / {gpu_mem_mib:g}, ({gpu_mem_mib:g} − 18,432) / "
                f"{gpu_mem_mib:g}) = {fraction}"
            )
        else:
            rule = (
                f"fixed by TP × PP {parallel} → {fraction}"
                if gpu_mem_mib <= 81_920
                else "0.88 on cards of 81,920-98,304 MiB"
            )
        return SglangFraction(
            mem_fraction_static=fraction, reserved_mib=None, prefill_graph_mib=0, band=band, rule=f"{band}: {rule}"
        )
    if version < RESERVE_FORMULA_FROM:
        band = "SGLang 0.4.8–0.5.2"
        reserve = _reserve_table_mib(gpu_mem_mib, parallel)
        fraction = round((gpu_mem_mib - reserve) / gpu_mem_mib, 3)
        return SglangFraction(
            mem_fraction_static=fraction,
            reserved_mib=reserve,
            prefill_graph_mib=0,
            band=band,
            rule=f"{band}: round((gpu_mem {gpu_mem_mib:g} − reserve {reserve:g} by card size) / "
            f"{gpu_mem_mib:g}, 3) = {fraction}",
        )
    # 0.5.3+: the reserve formula
    activation = ACTIVATION_MIB_PER_TOKEN * max(chunked_prefill_size, 2048)
    decode_graphs = GRAPH_MIB_PER_BATCH * cuda_graph_max_bs
    if version >= DECODE_GRAPHS_FOLLOW_EAGER_FROM and not cuda_graphs:
        decode_graphs = 0
    prefill_graphs = 0.0
    if version >= PIECEWISE_GRAPHS_FROM and pp == 1 and (cuda_graphs or version < PREFILL_GRAPHS_FOLLOW_EAGER_FROM):
        # piecewise graphs are on by default from 0.5.10 (off with PP > 1, `server_args.py:1098 @ v0.5.10`); the
        # captured sizes run up to the chunk (2048 under MLA, whose reserve is flat anyway)
        prefill_graphs = (
            PIECEWISE_MLA_MIB if mla else PIECEWISE_MIB_PER_SIZE * len(prefill_graph_sizes(chunked_prefill_size))
        )
    parallel_slack = 1024 * parallel / 8
    reserve = 512 + activation + decode_graphs + parallel_slack + prefill_graphs
    floored = gpu_mem_mib > 60 * GiB_MIB and reserve < RESERVE_FLOOR_MIB
    reserve_used = max(reserve, RESERVE_FLOOR_MIB) if gpu_mem_mib > 60 * GiB_MIB else reserve
    fraction = round((gpu_mem_mib - reserve_used) / gpu_mem_mib, 3)
    band = (
        "SGLang 0.5.3–0.5.9"
        if version < PIECEWISE_GRAPHS_FROM
        else "SGLang 0.5.10–0.5.13"
        if version < PREFILL_GRAPHS_FOLLOW_EAGER_FROM
        else "SGLang 0.5.14"
        if version < DECODE_GRAPHS_FOLLOW_EAGER_FROM
        else f"SGLang 0.5.15–{NEWEST}"
    )
    terms = (
        f"512 + 1.5 × max({chunked_prefill_size}, 2048) + 2 × {cuda_graph_max_bs if decode_graphs else 0} "
        f"+ 1024 × {parallel} / 8" + (f" + prefill graphs {prefill_graphs:g}" if prefill_graphs else "")
    )
    rule = (
        f"{band}: reserve {terms} = {reserve:g} MiB"
        + (" → the 10,240 MiB floor" if floored else "")
        + f"; round(({gpu_mem_mib:g} − {reserve_used:g}) / {gpu_mem_mib:g}, 3) = {fraction}"
    )
    return SglangFraction(
        mem_fraction_static=fraction, reserved_mib=reserve_used, prefill_graph_mib=prefill_graphs, band=band, rule=rule
    )

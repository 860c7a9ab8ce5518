"""Solvers over the memory estimate: the largest context at a concurrency, the largest concurrency at a
context, the fewest GPUs for a target, and ranked remedies when a deployment does not fit.

Each solver calls `estimate_memory` with varied inputs; none mutates its request.

>>> from sizing.estimator.architecture import architecture_from_config
>>> from sizing.estimator.hardware import GpuSpec
>>> from sizing.estimator.units import GiB
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
...     "vocab_size": 128256, "torch_dtype": "bfloat16", "max_position_embeddings": 8192})
>>> request = EstimateRequest(arch=arch, gpu=GpuSpec(slug="g", name="80 GiB", memory_bytes=80 * GiB),
...                           max_model_len=8192)
>>> largest_concurrency(request, tokens=8192).value > 1
True
>>> [r.key for r in remedies(replace(request, max_model_len=32768))][:2]  # above the model's 8192: context first
['context_limit', 'rope_yarn']
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from sizing.estimator.architecture import Architecture
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.units import format_bytes
from sizing.estimator.versions import Version, parse_version

MAX_SEARCH_TOKENS = 16_777_216
MAX_SEARCH_CONCURRENCY = 1_000_000
MAX_GPUS = 64
TP_SIZES = (1, 2, 4, 8)  # tensor parallel stays inside one node of up to 8 GPUs
GPUS_PER_NODE = 8
COMBINATION_SIZES = (2, 3)  # a combination of remedies changes two or three things at once
COMBINATIONS_SHOWN = 3  # the fitting combinations offered, smallest first
PREFERRED_UTILIZATION = 0.95  # the gpu_memory_utilization a remedy raises to (vLLM's documented safe ceiling)
# vLLM reads a RoPE override from --hf-overrides from 0.7 (PR #10816, 0.6.5); before that from --rope-scaling.
HF_OVERRIDES_SINCE = Version(0, 7, 0)


@dataclass(frozen=True, kw_only=True)
class SolverResult:
    """A solved limit and why it stops there."""

    target: str
    value: int  # tokens, requests or GPUs; 0 when nothing fits
    stops_because: str  # the component or rule that runs out first
    settings: dict[str, object] = field(default_factory=dict)  # the estimate inputs that apply the result
    estimate: dict[str, object] | None  # the estimate at the solved value (None when nothing fits)


@dataclass(frozen=True, kw_only=True)
class Bind:
    """What stops a deployment from fitting, with the numbers that show it (`extra`, for a translated text)."""

    code: str  # context_above_model_limit | static_exceeds_budget | kv_short | needs_more_gpus |
    #            weights_exceed_cards | kv_exceeds_every_layout
    message: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Remedy:
    """One change, or a combination of changes, that helps a deployment fit, with its effect and the exact flags
    (None when a change is not an engine flag, e.g. another checkpoint or a second replica: then `action` says
    what to do).

    `kind` is "context" (the context above the model's limit: offered first), "change" (one change),
    "combination" (two or three changes that fit together where no single one does) or "binds" (nothing fits:
    `binds` says what stops it; no settings). Memory figures are per GPU of the binding (fullest) GPU: the KV
    room is the KV cache memory that GPU has (never below 0 nor above its engine budget), so
    `freed_bytes_per_gpu` (the change in that room) never exceeds the card.
    """

    key: str  # one change's key; a combination's keys joined by "+"
    description: str
    flag: str | None
    action: str
    settings: dict[str, object]  # the estimate inputs this remedy changes, to apply it
    fits: bool
    max_concurrency_before: int  # requests of the requested length the deployment holds now
    max_concurrency_after: int  # requests of `tokens_per_request` tokens it holds after the change
    freed_bytes_per_gpu: int  # more KV room per GPU (negative: less)
    kind: str = "change"
    changes: tuple[str, ...] = ()  # the keys of the single changes, in the order they are listed
    gpus: int = 0  # GPUs the deployment uses after the change
    tokens_per_request: int = 0  # the request length the counts after the change are at
    concurrency: int = 0  # the requests asked for
    kv_room_bytes_before: int = 0
    kv_room_bytes_after: int = 0
    note: str | None = None  # what the user must judge (a RoPE-scaled context's quality)
    binds: tuple[Bind, ...] = ()


def _fits(request: EstimateRequest) -> MemoryEstimate | None:
    try:
        result = estimate_memory(replace(request, detail=False))
    except SizingError:
        return None
    return result if result.fits else None


def _stop_reason(request: EstimateRequest) -> str:
    """Say which part runs out first for a request that does not fit."""
    try:
        result = estimate_memory(request)
    except SizingError as error:
        return error.message
    return result.problems[0] if result.problems else "the memory bill exceeds the usable memory"


def largest_context(request: EstimateRequest, *, concurrency: int) -> SolverResult:
    """The longest request (tokens, a multiple of the block size) `concurrency` requests can each have."""
    base = replace(request, concurrency=concurrency, max_model_len=None, tokens_per_request=None)

    def at(tokens: int) -> EstimateRequest:
        return replace(base, max_model_len=tokens, tokens_per_request=tokens)

    step = request.block_size or 16
    upper = min(request.arch.max_position_embeddings or MAX_SEARCH_TOKENS, MAX_SEARCH_TOKENS) // step
    if _fits(at(step)) is None:
        return SolverResult(target="largest_context", value=0, stops_because=_stop_reason(at(step)), estimate=None)
    low, high = 1, upper
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(at(mid * step)):
            low = mid
        else:
            high = mid - 1
    best = low * step
    reason = "the model's context length (max_position_embeddings)" if low == upper else _stop_reason(at(best + step))
    return SolverResult(
        target="largest_context",
        value=best,
        stops_because=reason,
        settings={"max_model_len": best, "tokens_per_request": best},
        estimate=estimate_memory(at(best)).as_dict(),
    )


def largest_concurrency(request: EstimateRequest, *, tokens: int) -> SolverResult:
    """The most concurrent requests of `tokens` tokens the deployment holds."""
    base = replace(request, tokens_per_request=tokens)
    if _fits(replace(base, concurrency=1)) is None:
        return SolverResult(
            target="largest_concurrency",
            value=0,
            stops_because=_stop_reason(replace(base, concurrency=1)),
            estimate=None,
        )
    low, high = 1, 2
    while high < MAX_SEARCH_CONCURRENCY and _fits(replace(base, concurrency=high)):
        low, high = high, high * 2
    high = min(high, MAX_SEARCH_CONCURRENCY)
    while low < high:
        mid = (low + high + 1) // 2
        if _fits(replace(base, concurrency=mid)):
            low = mid
        else:
            high = mid - 1
    return SolverResult(
        target="largest_concurrency",
        value=low,
        stops_because=_stop_reason(replace(base, concurrency=low + 1)),
        settings={"concurrency": low, "tokens_per_request": tokens},
        estimate=estimate_memory(replace(base, concurrency=low)).as_dict(),
    )


def _layouts(gpus: int, *, layers: int) -> list[tuple[int, int]]:
    """(tp, pp) pairs that split `gpus` into whole replicas: the smallest model-parallel group first (nothing
    shared, simplest to run), then larger TP groups within a node, then pipeline stages across nodes."""
    return sorted(
        ((tp, pp) for tp in TP_SIZES for pp in range(1, min(gpus // tp, layers) + 1) if gpus % (tp * pp) == 0),
        key=lambda layout: (layout[0] * layout[1], layout[1]),
    )


def fewest_gpus(request: EstimateRequest, *, max_gpus: int = MAX_GPUS) -> SolverResult:
    """The fewest GPUs of the request's type that fit its model, context and concurrency.

    Layouts are tried from the fewest GPUs up: tensor parallel first (one node), then pipeline stages. A context
    above the model's limit fits on no number of GPUs: the answer says so (and the fix) without searching.
    """
    context = _context_bind(request)
    if context is not None:
        return SolverResult(target="fewest_gpus", value=0, stops_because=context.message, estimate=None)
    for gpus in range(1, max_gpus + 1):
        for tp, pp in _layouts(gpus, layers=request.arch.num_hidden_layers):
            result = _fits(replace(request, gpus=gpus, tp=tp, pp=pp))
            if result is not None:
                replicas = gpus // (tp * pp)
                return SolverResult(
                    target="fewest_gpus",
                    value=gpus,
                    stops_because=f"{replicas} replica(s) of TP {tp} x PP {pp}: the smallest layout that fits",
                    settings={"gpus": gpus, "tp": tp, "pp": pp},
                    estimate=estimate_memory(replace(request, gpus=gpus, tp=tp, pp=pp)).as_dict(),
                )
    extent = _extent_bind(request, changes=(), max_gpus=max_gpus)
    reason = extent.message if extent is not None else _stop_reason(replace(request, gpus=max_gpus, tp=None, pp=1))
    return SolverResult(
        target="fewest_gpus",
        value=0,
        stops_because=f"no layout of up to {max_gpus} GPUs fits: " + reason,
        estimate=None,
    )


# ---------------------------------------------------------------------------------------------------- remedies


def _kv_room(result: MemoryEstimate) -> int:
    """KV cache memory the binding GPU has: the engine's pool where it preallocates one, else the usable memory
    left after everything else. Never below 0, never above the GPU's budget (so never above the card)."""
    if result.allocation == "preallocated":
        return max(0, result.kv_cache_bytes_per_gpu)
    static = result.required_bytes_per_gpu - result.memory_per_gpu.get("kv_cache", 0)
    return max(0, min(result.usable_bytes_per_gpu, result.usable_bytes_per_gpu - static))


def _static_bytes(result: MemoryEstimate) -> int:
    """The binding GPU's memory that is not KV cache and sits inside the engine's budget (weights, activations,
    runtime; vLLM before 0.20 captures CUDA graphs outside it)."""
    memory = result.memory_per_gpu
    return sum(memory.get(key, 0) for key in ("weights", "activations", "runtime"))


def _total_fit(result: MemoryEstimate) -> int:
    """Requests of the requested length the whole deployment holds: per replica and DP rank, times their count."""
    return result.concurrency_curve.max_concurrency_fit * result.replicas * result.dp


# The engines' own flags for the changes a remedy makes (None: the change is not a flag of that engine).
_FLAG_FORMS: dict[str, dict[Engine, str]] = {
    "tp": {
        Engine.VLLM: "--tensor-parallel-size {value}",
        Engine.SGLANG: "--tp-size {value}",
        Engine.TRTLLM: "--tp_size {value}",
        Engine.TGI: "--num-shard {value}",
    },
    "context": {
        Engine.VLLM: "--max-model-len {value}",
        Engine.SGLANG: "--context-length {value}",
        Engine.TRTLLM: "--max_seq_len {value}",
        Engine.TGI: "--max-total-tokens {value}",
    },
    "kv_fp8": {Engine.VLLM: "--kv-cache-dtype fp8", Engine.SGLANG: "--kv-cache-dtype fp8_e4m3"},
    "weights_fp8": {
        Engine.VLLM: "--quantization fp8",
        Engine.SGLANG: "--quantization fp8",
        Engine.TGI: "--quantize fp8",
    },
    "utilization": {Engine.VLLM: "--gpu-memory-utilization {value}", Engine.TGI: "--cuda-memory-fraction {value}"},
}


def _flag(form: str, engine: Engine, value: object = "") -> str | None:
    template = _FLAG_FORMS[form].get(engine)
    return template.format(value=value) if template else None


@dataclass(frozen=True, kw_only=True)
class _Change:
    """One change a remedy can make; combinations take at most one change per group."""

    key: str
    group: str  # context | kv | weights | utilization | tp | replica
    label: str
    cost: int  # how much the change asks of the user (tie-break between layouts of as many GPUs)
    settings: dict[str, object] = field(default_factory=dict)  # estimate inputs (no layout)
    flags: tuple[str, ...] = ()
    action: str = ""  # what to do when the change is not a flag
    tp_factor: int = 1
    replica_factor: int = 1
    layout: dict[str, object] | None = None  # an explicit layout (DP attention) instead of factors
    arch: Architecture | None = None  # a changed model config (RoPE scaling)
    shown: dict[str, object] = field(default_factory=dict)  # settings shown that are no estimate input
    note: str | None = None


def _context_over(request: EstimateRequest) -> bool:
    limit = request.arch.max_position_embeddings
    return bool(request.max_model_len and limit and request.max_model_len > limit)


def _rope_scaled(arch: Architecture, *, length: int) -> Architecture:
    """The model with a YaRN RoPE override that stretches its context to `length` tokens."""
    limit = arch.max_position_embeddings or length
    elements = arch.rope_cache_elements
    rotary = elements // limit if elements and limit else None
    return replace(arch, max_position_embeddings=length, rope_cache_elements=rotary * length if rotary else None)


def _rope_flags(engine: Engine, version: Version | None, scaling: dict[str, object], length: int) -> tuple[str, ...]:
    if engine is Engine.VLLM:
        if version is not None and version < HF_OVERRIDES_SINCE:
            return (f"--rope-scaling '{json.dumps(scaling)}'", f"--max-model-len {length}")
        return (f"--hf-overrides '{json.dumps({'rope_scaling': scaling})}'", f"--max-model-len {length}")
    if engine is Engine.SGLANG:
        return (f"--json-model-override-args '{json.dumps({'rope_scaling': scaling})}'", f"--context-length {length}")
    return ()


def _context_changes(request: EstimateRequest, before: MemoryEstimate) -> list[_Change]:
    """The context fixes: the model's own limit, or a RoPE-scaled (YaRN) context of the asked length; when the
    context is within the model, a max_model_len of the requests' length."""
    engine, tokens = request.engine, before.tokens_per_request
    limit = request.arch.max_position_embeddings
    changes: list[_Change] = []
    if _context_over(request) and limit:
        asked = request.max_model_len or limit
        settings: dict[str, object] = {"max_model_len": limit}
        if request.tokens_per_request is not None and request.tokens_per_request > limit:
            settings["tokens_per_request"] = limit
        flag = _flag("context", engine, limit)
        changes.append(
            _Change(
                key="context_limit",
                group="context",
                cost=1,
                settings=settings,
                flags=(flag,) if flag else (),
                label=f"max_model_len {limit} (the model's limit, max_position_embeddings)",
                action=f"serve requests of up to {limit} tokens (the model's limit)",
            )
        )
        factor = math.ceil(asked / limit)
        scaling: dict[str, object] = {
            "rope_type": "yarn",
            "factor": float(factor),
            "original_max_position_embeddings": limit,
        }
        version = parse_version(before.engine_version) if before.engine_version else None
        changes.append(
            _Change(
                key="rope_yarn",
                group="context",
                cost=2,
                arch=_rope_scaled(request.arch, length=limit * factor),
                flags=_rope_flags(engine, version, scaling, asked),
                shown={"rope_scaling": scaling},
                label=f"RoPE scaling (YaRN, factor {factor}) to {asked} tokens",
                action=f"serve the model with YaRN RoPE scaling of factor {factor} ({limit} x {factor} = "
                f"{limit * factor} positions)",
                note=f"the model was trained on {limit} tokens: answers beyond that with RoPE scaling are of a quality "
                "only your own evaluation can vouch for",
            )
        )
        if tokens < limit:
            changes.append(
                _Change(
                    key="max_model_len",
                    group="context",
                    cost=1,
                    settings={"max_model_len": tokens},
                    flags=tuple(f for f in (_flag("context", engine, tokens),) if f),
                    label=f"max_model_len {tokens} (the requests' length)",
                    action=f"serve requests of up to {tokens} tokens",
                )
            )
    elif before.effective_max_model_len and before.effective_max_model_len > tokens:
        flag = _flag("context", engine, tokens)
        changes.append(
            _Change(
                key="max_model_len",
                group="context",
                cost=1,
                settings={"max_model_len": tokens},
                flags=(flag,) if flag else (),
                label=f"max_model_len {tokens} (the requests' length)",
                action=f"serve requests of up to {tokens} tokens",
            )
        )
    return changes


def _changes(request: EstimateRequest, before: MemoryEstimate, *, max_gpus: int) -> list[_Change]:
    """Every change a remedy may make to this deployment."""
    engine = request.engine
    changes = _context_changes(request, before)
    if before.kv_dtype in ("bf16", "fp16", "fp32"):
        flag = _flag("kv_fp8", engine)
        changes.append(
            _Change(
                key="kv_fp8",
                group="kv",
                cost=2,
                label="FP8 KV cache",
                settings={"kv_dtype": "fp8"},
                flags=(flag,) if flag else (),
                action="store the KV cache in FP8",
            )
        )
    if before.weight_format in ("bf16", "fp16", "fp32"):
        flag = _flag("weights_fp8", engine)
        changes.append(
            _Change(
                key="weights_fp8",
                group="weights",
                cost=3,
                settings={"weights": "fp8"},
                label="FP8 weights (an FP8 checkpoint or online quantisation)",
                flags=(flag,) if flag else (),
                action="serve an FP8 checkpoint of the model",
            )
        )
        changes.append(
            _Change(
                key="weights_int4",
                group="weights",
                cost=4,
                settings={"weights": "int4"},
                label="INT4 weights (an AWQ/GPTQ checkpoint)",
                action="serve an AWQ or GPTQ INT4 checkpoint of the model",
            )
        )
    if before.assumptions["gpu_memory_utilization"] < PREFERRED_UTILIZATION:
        flag = _flag("utilization", engine, PREFERRED_UTILIZATION)
        changes.append(
            _Change(
                key="utilization",
                group="utilization",
                cost=1,
                label=f"gpu_memory_utilization {PREFERRED_UTILIZATION}",
                settings={"gpu_memory_utilization": PREFERRED_UTILIZATION},
                flags=(flag,) if flag else (),
                action=f"plan at {PREFERRED_UTILIZATION} of the card",
            )
        )
    if request.arch.uses_mla and request.arch.is_moe and before.tp > 1 and not request.expert_parallel:
        # DP attention: each GPU keeps its own requests' latent instead of every GPU replicating all of them
        changes.append(
            _Change(
                key="dp_attention_ep",
                group="tp",
                cost=2,
                label=f"DP attention over {before.tp} ranks with expert parallelism",
                layout={"tp": 1, "dp": before.tp * before.dp, "expert_parallel": True, "pp": before.pp},
                flags=(f"--data-parallel-size {before.tp}", "--enable-expert-parallel"),
                action=f"run DP attention over {before.tp} ranks with expert parallelism",
            )
        )
    names = {2: "tp_double", 4: "tp_quadruple"}
    for factor, key in names.items():
        tp = before.tp * factor
        if tp <= GPUS_PER_NODE and before.gpus * factor <= max_gpus:
            flag = _flag("tp", engine, tp)
            changes.append(
                _Change(
                    key=key,
                    group="tp",
                    cost=0,
                    tp_factor=factor,
                    flags=(flag,) if flag else (),
                    label=f"{before.gpus * factor} GPUs with TP {tp}",
                    action=f"run TP {tp} on {before.gpus * factor} GPUs",
                )
            )
    for factor, key in ((2, "replica"), (4, "replica_x4")):
        if before.gpus * factor <= max_gpus:
            replicas = before.replicas * factor
            changes.append(
                _Change(
                    key=key,
                    group="replica",
                    cost=1,
                    replica_factor=factor,
                    label=f"{before.gpus * factor} GPUs as {replicas} replicas",
                    action=f"run {replicas} replicas behind the load balancer",
                )
            )
    return changes


@dataclass(frozen=True, kw_only=True)
class _Trial:
    changes: tuple[_Change, ...]
    settings: dict[str, object]
    result: MemoryEstimate

    @property
    def cost(self) -> int:
        return sum(change.cost for change in self.changes)


def _settings_of(changes: Iterable[_Change], before: MemoryEstimate) -> dict[str, object]:
    """The estimate inputs a set of changes makes: their own settings, and the layout their factors give."""
    changes = tuple(changes)
    settings: dict[str, object] = {}
    for change in changes:
        settings.update(change.settings)
    tp_factor = math.prod(change.tp_factor for change in changes)
    replica_factor = math.prod(change.replica_factor for change in changes)
    layout = next((change.layout for change in changes if change.layout), None)
    if layout is not None:
        settings.update(layout)
        if replica_factor > 1:
            settings["gpus"] = before.gpus * replica_factor
    elif tp_factor > 1 or replica_factor > 1:
        settings.update(
            {"gpus": before.gpus * tp_factor * replica_factor, "tp": before.tp * tp_factor, "pp": before.pp}
        )
    return settings


def _try(
    request: EstimateRequest, before: MemoryEstimate, changes: tuple[_Change, ...], cache: dict[str, _Trial | None]
) -> _Trial | None:
    """Re-estimate the deployment with `changes` (None when the estimator refuses that layout or format)."""
    settings = _settings_of(changes, before)
    arch = next((change.arch for change in changes if change.arch is not None), None)
    key = json.dumps([settings, arch is not None], sort_keys=True, default=str)
    if key not in cache:
        changed = replace(request, detail=False, **settings)  # type: ignore[arg-type]
        if arch is not None:
            changed = replace(changed, arch=arch)
        try:
            cache[key] = _Trial(changes=changes, settings=settings, result=estimate_memory(changed))
        except SizingError:
            cache[key] = None
    trial = cache[key]
    return None if trial is None else replace(trial, changes=changes)


def _describe(trial: _Trial, before: MemoryEstimate) -> str:
    """What the change does to the binding GPU and to the requests it holds, in the engine's numbers."""
    after = trial.result
    labels = " + ".join(change.label for change in trial.changes)
    parts = []
    room_before, room_after = _kv_room(before), _kv_room(after)
    if room_after != room_before:
        verb = "frees" if room_after > room_before else "takes"
        parts.append(
            f"{verb} {format_bytes(abs(room_after - room_before))} per GPU for the KV cache "
            f"({format_bytes(room_before)} → {format_bytes(room_after)})"
        )
    if after.kv_bytes_per_token_per_gpu != before.kv_bytes_per_token_per_gpu:
        parts.append(
            f"KV cache per token per GPU {before.kv_bytes_per_token_per_gpu:,} → "
            f"{after.kv_bytes_per_token_per_gpu:,} bytes"
        )
    if after.replicas * after.dp != before.replicas * before.dp:
        parts.append(f"{after.replicas * after.dp} replicas share the requests")
    effect = "; ".join(parts) or "no more memory per GPU"
    return (
        f"{labels}: {effect}; holds {_total_fit(after)} of the {before.concurrency} requests at "
        f"{after.tokens_per_request} tokens (now {_total_fit(before)} at {before.tokens_per_request})"
    )


def _remedy(trial: _Trial, before: MemoryEstimate, *, kind: str) -> Remedy:
    after = trial.result
    flags = [flag for change in trial.changes for flag in change.flags]
    actions = [change.action for change in trial.changes if not change.flags]
    shown = dict(trial.settings)
    for change in trial.changes:
        shown.update(change.shown)
    notes = [change.note for change in trial.changes if change.note]
    action = "; ".join([*([f"launch with {' '.join(flags)}"] if flags else []), *actions])
    return Remedy(
        key="+".join(change.key for change in trial.changes),
        description=_describe(trial, before),
        flag=" ".join(flags) if flags else None,
        action=action,
        settings=shown,
        fits=after.fits,
        max_concurrency_before=_total_fit(before),
        max_concurrency_after=_total_fit(after),
        freed_bytes_per_gpu=_kv_room(after) - _kv_room(before),
        kind=kind,
        changes=tuple(change.key for change in trial.changes),
        gpus=after.gpus,
        tokens_per_request=after.tokens_per_request,
        concurrency=before.concurrency,
        kv_room_bytes_before=_kv_room(before),
        kv_room_bytes_after=_kv_room(after),
        note=" ".join(notes) or None,
    )


def _rank(trial: _Trial) -> tuple[int, int, int, int]:
    """Smallest first: fewest GPUs, then fewest changes, then the least asked of the user, then most requests."""
    return (trial.result.gpus, len(trial.changes), trial.cost, -_total_fit(trial.result))


def _gains(trial: _Trial, before: MemoryEstimate) -> bool:
    after = trial.result
    return _total_fit(after) > _total_fit(before) or (after.fits and not before.fits)


def remedies(request: EstimateRequest, *, max_gpus: int = MAX_GPUS) -> tuple[Remedy, ...]:
    """Changes that make room, each measured by re-estimating, ranked.

    When the context is above the model's limit, the context fixes come first (nothing else fits without one).
    Then what fits, smallest first (fewest GPUs, then fewest changes): single changes, and combinations of two or
    three changes (one per group) where they fit on fewer GPUs than any single change; then the single changes
    that add requests without fitting. When nothing fits, a last entry (kind "binds") says what stops it.
    Every trial is a `detail=False` estimate (about a hundred at most).
    """
    try:
        before = estimate_memory(replace(request, detail=False))
    except SizingError:
        return ()
    changes = _changes(request, before, max_gpus=max_gpus)
    cache: dict[str, _Trial | None] = {}
    context_over = _context_over(request)
    singles = [t for t in (_try(request, before, (change,), cache) for change in changes) if t is not None]
    context = [t for t in singles if t.changes[0].group == "context"] if context_over else []
    others = [t for t in singles if t not in context and _gains(t, before)]
    if context_over:
        others = []  # nothing fits with the context above the model's limit: the combinations carry a fix
    fitting = [t for t in others if t.result.fits]
    # Combinations are worth offering where they fit on fewer GPUs than any single change (or the context fix).
    smallest = min((t.result.gpus for t in [*context, *fitting] if t.result.fits), default=max_gpus + 1)
    combos = _combinations(
        request, before, changes, cache, must_fix_context=context_over, max_gpus=min(max_gpus, smallest - 1)
    )
    found: list[Remedy] = [_remedy(t, before, kind="context") for t in context]
    found += [
        _remedy(t, before, kind="change" if len(t.changes) == 1 else "combination")
        for t in sorted([*fitting, *combos], key=_rank)
    ]
    found += [
        _remedy(t, before, kind="change")
        for t in sorted(
            (t for t in others if not t.result.fits),
            key=lambda t: (-(_total_fit(t.result) - _total_fit(before)), -_kv_room(t.result)),
        )
    ]
    if not any(remedy.fits for remedy in found):
        binds = binding_limits(request, before=before, max_gpus=max_gpus)
        found.append(
            Remedy(
                key="nothing_fits",
                kind="binds",
                description="; ".join(b.message for b in binds),
                flag=None,
                action="",
                settings={},
                fits=False,
                max_concurrency_before=_total_fit(before),
                max_concurrency_after=_total_fit(before),
                freed_bytes_per_gpu=0,
                gpus=before.gpus,
                tokens_per_request=before.tokens_per_request,
                concurrency=before.concurrency,
                kv_room_bytes_before=_kv_room(before),
                kv_room_bytes_after=_kv_room(before),
                binds=binds,
            )
        )
    return tuple(found)


def _combinations(
    request: EstimateRequest,
    before: MemoryEstimate,
    changes: list[_Change],
    cache: dict[str, _Trial | None],
    *,
    must_fix_context: bool,
    max_gpus: int,
) -> list[_Trial]:
    """The smallest combinations of two or three changes (one per group) that fit, none holding a smaller one."""
    fitting: list[_Trial] = []
    for size in COMBINATION_SIZES:
        for combo in combinations(changes, size):
            groups = [change.group for change in combo]
            if len(set(groups)) < size or (must_fix_context and "context" not in groups):
                continue
            keys = {change.key for change in combo}
            if any({c.key for c in smaller.changes} <= keys for smaller in fitting):
                continue  # a smaller combination inside this one fits already
            gpus = before.gpus * math.prod(c.tp_factor * c.replica_factor for c in combo)
            if gpus > max_gpus:
                continue
            trial = _try(request, before, combo, cache)
            if trial is not None and trial.result.fits:
                fitting.append(trial)
    ranked = sorted(fitting, key=_rank)
    shown = ranked[:COMBINATIONS_SHOWN]
    # Above the model's limit the smallest fits tend to cut the context; keep the best one at the asked length.
    rope = next((t for t in ranked if any(c.key == "rope_yarn" for c in t.changes)), None)
    if rope is not None and rope not in shown:
        shown.append(rope)
    return shown


# ---------------------------------------------------------------------------------------------------- what binds


def _context_bind(request: EstimateRequest) -> Bind | None:
    if not _context_over(request):
        return None
    limit = request.arch.max_position_embeddings
    asked = request.max_model_len
    factor = math.ceil((asked or 0) / (limit or 1))
    return Bind(
        code="context_above_model_limit",
        message=f"max_model_len {asked} is above the model's limit of {limit} tokens "
        "(max_position_embeddings): the engine refuses it on any number of GPUs; set max_model_len "
        f"{limit}, or extend the model with RoPE scaling (YaRN, factor {factor})",
        extra={"max_model_len": asked, "max_position_embeddings": limit, "rope_factor": factor},
    )


def _compact_changes(request: EstimateRequest, before: MemoryEstimate) -> tuple[_Change, ...]:
    """The changes that shrink memory the most without touching the layout: the context at the asked length
    (RoPE-scaled when above the model's limit, else the requests' length), FP8 KV cache, INT4 weights and
    utilization 0.95."""
    wanted = {
        "context": ("rope_yarn", "max_model_len"),
        "kv": ("kv_fp8",),
        "weights": ("weights_int4",),
        "utilization": ("utilization",),
    }
    chosen: dict[str, _Change] = {}
    for change in _changes(request, before, max_gpus=before.gpus):
        if change.key in wanted.get(change.group, ()) and change.group not in chosen:
            chosen[change.group] = change
    return tuple(chosen.values())


def _extent_bind(
    request: EstimateRequest, *, changes: tuple[_Change, ...], max_gpus: int, before: MemoryEstimate | None = None
) -> Bind | None:
    """At the largest deployments the search reaches (`max_gpus` GPUs, every TP x PP layout, with `changes`):
    the smallest power-of-two GPU count that fits, else what no layout can hold."""
    if before is None:
        try:
            before = estimate_memory(replace(request, detail=False))
        except SizingError:
            return None
    cache: dict[str, _Trial | None] = {}
    counts = sorted({min(max_gpus, 2**k) for k in range(max_gpus.bit_length() + 1)} | {max_gpus})
    best: _Trial | None = None
    any_room = False
    layers = request.arch.num_hidden_layers
    for gpus in counts:
        for tp, pp in _layouts(gpus, layers=layers):
            layout = _Change(key="layout", group="layout", label="", cost=0, layout={"gpus": gpus, "tp": tp, "pp": pp})
            trial = _try(request, before, (*changes, layout), cache)
            if trial is None:
                continue
            any_room = any_room or _kv_room(trial.result) > 0
            if trial.result.fits:
                result = trial.result
                return Bind(
                    code="needs_more_gpus",
                    message=f"it fits on {gpus} GPUs as TP {tp} x PP {pp} x {result.replicas} replica(s)"
                    + (f" with {', '.join(c.label for c in changes)}" if changes else "")
                    + ": more GPUs than the remedies above try; use the fewest-GPUs solver",
                    extra={
                        "gpus": gpus,
                        "tp": tp,
                        "pp": pp,
                        "replicas": result.replicas,
                        "changes": [c.key for c in changes],
                    },
                )
            if gpus == max_gpus and (best is None or _total_fit(trial.result) > _total_fit(best.result)):
                best = trial
    with_changes = f" (with {', '.join(c.label for c in changes)})" if changes else ""
    if not any_room or best is None:
        return Bind(
            code="weights_exceed_cards",
            message=f"the weights alone exceed the cards: {format_bytes(before.weight_bytes_total)} of "
            f"weights in {before.weight_format.upper()} leave no KV cache on any layout of up to "
            f"{max_gpus} GPUs{with_changes}",
            extra={
                "max_gpus": max_gpus,
                "weight_bytes_total": before.weight_bytes_total,
                "weight_format": before.weight_format,
            },
        )
    result = best.result
    tokens = result.tokens_per_request
    return Bind(
        code="kv_exceeds_every_layout",
        message=f"the KV cache: {before.concurrency} requests x {tokens} tokens need "
        f"{before.concurrency * tokens:,} KV tokens; the best layout of {max_gpus} GPUs (TP "
        f"{result.tp} x PP {result.pp} x {result.replicas} replicas{with_changes}) holds "
        f"{_total_fit(result)} of those requests",
        extra={
            "max_gpus": max_gpus,
            "concurrency": before.concurrency,
            "tokens": tokens,
            "fit": _total_fit(result),
            "tp": result.tp,
            "pp": result.pp,
            "replicas": result.replicas,
            "changes": [c.key for c in changes],
        },
    )


def binding_limits(
    request: EstimateRequest, *, before: MemoryEstimate | None = None, max_gpus: int = MAX_GPUS
) -> tuple[Bind, ...]:
    """What stops the deployment from fitting: the context above the model's limit; at this layout, the static
    memory over the engine's budget or the KV cache short of the requests; and at the search's extent (up to
    `max_gpus` GPUs, with the most compact formats), whether any layout fits and if not what no layout holds."""
    if before is None:
        try:
            before = estimate_memory(replace(request, detail=False))
        except SizingError as error:
            return (Bind(code="refused", message=error.message, extra=dict(error.extra)),)
    binds: list[Bind] = []
    context = _context_bind(request)
    if context is not None:
        binds.append(context)
    static = _static_bytes(before)
    if before.allocation == "preallocated" and static >= before.budget_bytes_per_gpu:
        binds.append(
            Bind(
                code="static_exceeds_budget",
                message=f"on {before.gpus} GPUs (TP {before.tp} x PP {before.pp}) weights, activations and "
                f"runtime take {format_bytes(static)} per GPU (weights "
                f"{format_bytes(before.memory_per_gpu.get('weights', 0))}), more than the engine "
                f"budget of {format_bytes(before.budget_bytes_per_gpu)}: nothing is left for the "
                "KV cache",
                extra={
                    "gpus": before.gpus,
                    "tp": before.tp,
                    "pp": before.pp,
                    "static_bytes": static,
                    "weights_bytes": before.memory_per_gpu.get("weights", 0),
                    "budget_bytes": before.budget_bytes_per_gpu,
                },
            )
        )
    elif _total_fit(before) < before.concurrency:
        binds.append(
            Bind(
                code="kv_short",
                message=f"on {before.gpus} GPUs the KV cache holds {_total_fit(before)} of the "
                f"{before.concurrency} requests at {before.tokens_per_request} tokens",
                extra={
                    "gpus": before.gpus,
                    "fit": _total_fit(before),
                    "concurrency": before.concurrency,
                    "tokens": before.tokens_per_request,
                },
            )
        )
    extent = _extent_bind(request, changes=_compact_changes(request, before), max_gpus=max_gpus, before=before)
    if extent is not None:
        binds.append(extent)
    return tuple(binds)

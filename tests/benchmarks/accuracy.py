"""Accuracy of the sizing estimator against every published fact in the shared data (not collected by pytest).

Reads ../shared/data beside the project (`--shared PATH` to point elsewhere; a fresh clone has none: the script
says so and exits 0) and prints, for each fact, the computed figure against the published one:

1. parameters of every model in facts.json: exact counts within 0.5 %; stated figures ("671B total, 37B active",
   "12.9B") parsed and compared within their rounding (half a unit of the last digit stated);
2. checkpoint bytes (`safetensors_total_size`): within 1 % for 16-bit releases, 3 % for quantised ones;
3. KV bytes per token and the field's worked examples: exactly;
4. vLLM KV-cache capacity for every startup log in engine_logs/vllm_examples.json, estimated with the settings the
   log records, (a) with our defaults and (b) calibrated with the figures the log prints itself (`bootlog_parse`,
   `bootlog_calibration`): tokens within 5 % (KV bytes where the log gives GiB, not tokens). The target applies to
   the calibrated figure where the log prints runtime terms, else to the uncalibrated one. A log whose model or
   format the estimator does not support yet is reported as such and is not a pass;
5. every config in model_configs/: supported or refused with the reason (information, no target);
6. decode throughput of the serving simulator against serving_results/ (serving_accuracy.py): median absolute
   error under 25 % with default efficiencies.

Exit status 1 when a target is missed (or a figure cannot be computed), 0 otherwise.

    .venv/bin/python tests/benchmarks/accuracy.py [--shared PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT, Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from serving_accuracy import serving_section  # noqa: E402
from vllm_logs import catalog_gpu, log_engine_mode, log_release  # noqa: E402

from sizing.estimator.architecture import (  # noqa: E402
    Architecture,
    architecture_from_config,
    architecture_from_numbers,
    merge_quant_config,
)
from sizing.estimator.bootlog import BootLog, bootlog_calibration, bootlog_compare, bootlog_parse  # noqa: E402
from sizing.estimator.engines import Engine  # noqa: E402
from sizing.estimator.errors import SizingError  # noqa: E402
from sizing.estimator.hardware import GpuSpec  # noqa: E402
from sizing.estimator.kv import kv_bytes_per_token, layers_kv_bytes_per_token  # noqa: E402
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory  # noqa: E402
from sizing.estimator.tensors import (  # noqa: E402
    active_parameter_count,
    layer_tensors,
    mtp_parameter_count,
    parameter_count,
    tensor_inventory,
)
from sizing.estimator.units import GiB, KiB, MiB  # noqa: E402
from sizing.estimator.weights import resolve_weight_format, weight_bytes_total  # noqa: E402

DEFAULT_SHARED = ROOT.parent / "shared" / "data"
GPU_CATALOG = ROOT / "sizing" / "catalog_data" / "gpus.json"

PARAMETERS_TOLERANCE = 0.005  # exact published counts
CHECKPOINT_TOLERANCE_16BIT = 0.01
CHECKPOINT_TOLERANCE_QUANTISED = 0.03
KV_TOKENS_TOLERANCE = 0.05

# Logs whose model id names no folder of model_configs/ directly: the folder with the same architecture, and why.
MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "meta-llama/Llama-3.1-8B-Instruct": (
        "meta-llama/Meta-Llama-3.1-8B",
        "the Hub's later name of Meta-Llama-3.1-8B-Instruct; the Instruct model has the base model's architecture",
    ),
}

# What we know about a log's miss beyond the figures (the figures themselves are computed and printed below).
KNOWN_CAUSES: dict[str, str] = {
    "vllm-pr17122-llama3.1-8b-l40s": (
        "the log prints no profiling terms and its gpu_memory_utilization is inferred (the default); vLLM 0.8.5's "
        "profiler (regime P0) subtracts everything the device holds beyond torch's allocations, so another process "
        "on the card (the PR's author runs vLLM inside a training process) or a lower utilisation would explain the "
        "5.6 GiB the log leaves beside weights and KV, where the 0.8.5 rules put 1.6 GiB; a "
        "V1 engine also charges a cold torch.compile's scratch memory to the activation peak on a first start "
        "(vLLM issues #54122 and #54383: GiBs of KV lost until a restart with a warm compile cache), which the "
        "log cannot tell us"
    ),
    "vllm-10517-llama3.1-8b-3090-20000": (
        "vLLM ~0.6.4 (V0) profiles one batch of max_num_batched_tokens = max(max_model_len, 2048) tokens without "
        "chunked prefill, far more than the V1 default (2048) the estimator assumes; the log prints that peak as "
        "peak_torch_memory (weights included), which bootlog_parse recognises but does not turn into "
        "activation_peak_bytes, so the calibration lacks the activation term"
    ),
    "vllm-21348-qwen3-235b-fp8-vllm": (
        "an LMCache KV connector is configured and the vLLM version is unknown; the maintainers attribute the small "
        "cache to vLLM's profiling changes (PR #19312: the profile runs before the KV budget is computed, where a "
        "cold torch.compile's scratch memory is counted as activation peak, vLLM issues #54122 and #54383), which "
        "the estimator's warm-cache vLLM budget does not model; the log prints no profiling terms to calibrate with"
    ),
    "myoceane-gpt-oss-20b-a100": (
        "vLLM 0.19 is newer than the V1 releases the estimator models (0.8-0.11); the weights it reports loading "
        "exceed our MXFP4 bill (an A100 has no native FP4, so vLLM runs the MXFP4 experts through its own kernel "
        "layouts, a plausible but unverified source); the A100's memory size is inferred and the log prints no "
        "profiling terms"
    ),
}


# ---------------------------------------------------------------------------------------------------------------
# Results and printing


@dataclass
class Tally:
    """Counts of one section: passed, missed, not computable (unsupported or refused), and information only."""

    name: str
    passed: int = 0
    missed: int = 0
    unsupported: int = 0
    misses: list[str] = field(default_factory=list)

    def record(self, ok: bool | None, label: str) -> str:
        """Count a result (None: could not be computed) and return its status word."""
        if ok is None:
            self.unsupported += 1
            self.misses.append(f"{label} (not supported)")
            return "UNSUPPORTED"
        if ok:
            self.passed += 1
            return "ok"
        self.missed += 1
        self.misses.append(label)
        return "MISS"

    @property
    def failed(self) -> bool:
        return bool(self.missed or self.unsupported)

    def summary(self) -> str:
        total = self.passed + self.missed + self.unsupported
        extra = f", {self.unsupported} unsupported" if self.unsupported else ""
        return f"{self.name} {self.passed}/{total} pass ({self.missed} miss{extra})"


def _table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> None:
    """Print a table with a rule under its headers; columns in `right` are right-aligned."""
    right = right or set()
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            str(cell).rjust(width) if index in right else str(cell).ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    print(line(headers))
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(line(row))


def _heading(text: str) -> None:
    print(f"\n{text}\n{'=' * len(text)}")


def _relative(computed: float, published: float) -> float:
    return (computed - published) / published if published else float("inf")


def _pct(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:+.{digits}%}"


def _gib(value: float | None) -> str:
    return "-" if value is None else f"{value / GiB:.2f} GiB"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _billions(value: float) -> str:
    return f"{value / 1e9:,.3f}B"


# ---------------------------------------------------------------------------------------------------------------
# Shared data


def _folder(shared: Path, repo: str) -> Path:
    return shared / "model_configs" / repo.replace("/", "--", 1)


def _load_config(folder: Path) -> dict[str, Any]:
    """config.json, with a ModelOpt hf_quant_config.json folded in when the folder has one."""
    config = json.loads((folder / "config.json").read_text())
    quant_file = folder / "hf_quant_config.json"
    if quant_file.exists():
        config = merge_quant_config(config, json.loads(quant_file.read_text()))
    return config


def _architecture(shared: Path, repo: str) -> tuple[Architecture | None, str]:
    """The parsed architecture of a repo's config, or None and why not."""
    folder = _folder(shared, repo)
    if not (folder / "config.json").exists():
        return None, f"no config in model_configs/{folder.name}"
    try:
        return architecture_from_config(_load_config(folder)), ""
    except SizingError as error:
        return None, f"{error.code.value}: {error.message}"


# ---------------------------------------------------------------------------------------------------------------
# 1. Parameters

_UNITS = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
_STATED = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[KMBT])\b(?P<rest>[^,()]*)")


@dataclass(frozen=True)
class Stated:
    """One figure of a model card's prose: its value, the half unit of its last digit, and what it counts."""

    text: str  # the number as stated, e.g. "37B"
    value: Decimal
    half_unit: Decimal
    kind: str  # total | active | mtp | hub


def parse_stated(text: str, default_kind: str) -> list[Stated]:
    """Read "671B total, 37B active, plus a 14B multi-token-prediction module (685B on the Hub)" into figures."""
    figures = []
    for match in _STATED.finditer(text):
        number, unit, rest = match["n"], _UNITS[match["u"]], match["rest"].lower()
        decimals = len(number.partition(".")[2])
        kind = default_kind
        if "active" in rest or "activated" in rest:
            kind = "active"
        elif "multi-token" in rest or "mtp" in rest:
            kind = "mtp"
        elif "hub" in rest:
            kind = "hub"
        elif "total" in rest:
            kind = "total"
        figures.append(
            Stated(
                text=f"{number}{match['u']}",
                value=Decimal(number) * unit,
                half_unit=Decimal(5) * unit / 10 ** (decimals + 1),
                kind=kind,
            )
        )
    return figures


# Whether a publisher's "active parameters" counts the input embedding table (a lookup: one row per token).
# Evidence, from counts we compute exactly: Mistral's Mixtral-8x7B "12.9B" = 12.88B with it (12.75B without);
# Qwen3-30B-A3B "3.3B" = 3.35B with it (3.04B without); DeepSeek-V2-Lite "2.4B" = 2.45B without it (2.66B with);
# OpenAI's gpt-oss-120b "5.13B" = 5.133B without it (5.712B with); Moonshot's Kimi K2 "32B" = 31.7B without it.
ACTIVE_COUNTS_INPUT_EMBEDDING: dict[str, bool] = {
    "mistralai": True,
    "Qwen": True,
    "deepseek-ai": False,
    "openai": False,
    "moonshotai": False,
}


def _active(arch: Architecture, repo: str) -> int:
    publisher = repo.partition("/")[0]
    return active_parameter_count(
        tensor_inventory(arch), input_embedding=ACTIVE_COUNTS_INPUT_EMBEDDING.get(publisher, True)
    )


_STATED_KINDS: dict[str, tuple[str, Callable[[Architecture, str], int]]] = {
    "total": ("parameters (main model)", lambda arch, repo: parameter_count(tensor_inventory(arch))),
    "active": ("active parameters per token", _active),
    "mtp": ("multi-token-prediction parameters", lambda arch, repo: mtp_parameter_count(arch)),
    # The Hub shows the number of tensor elements stored in the checkpoint's safetensors files.
    "hub": (
        "Hub element count (parameters + MTP + FP8 block scales)",
        lambda arch, repo: parameter_count(tensor_inventory(arch))
        + mtp_parameter_count(arch)
        + _block_scale_elements(arch),
    ),
}


def _block_scale_elements(arch: Architecture) -> int:
    """Elements of the block-scale tensors an FP8 block-quantised checkpoint stores beside its linear weights
    (main model and MTP modules), from the config's weight_block_size; 0 for other checkpoints."""
    block = (arch.quantization_config or {}).get("weight_block_size")
    if not block:
        return 0
    rows, cols = int(block[0]), int(block[1])
    tensors = list(tensor_inventory(arch))
    if arch.mtp_layers:
        tensors += layer_tensors(arch.layers[-1], hidden_size=arch.hidden_size, count=arch.mtp_layers)
    return sum(
        math.ceil(t.rows / rows) * math.ceil(t.cols / cols) * t.per_model * t.copies for t in tensors if t.quantizable
    )


def _tolerance(figure: Stated, stated: list[Stated]) -> Decimal:
    """Half a unit of the stated figure's last digit; a module figure that is the difference of two rounded
    totals (DeepSeek's "14B MTP" = "685B on the Hub" - "671B") carries the rounding of both."""
    if figure.kind == "mtp":
        totals = {other.kind: other for other in stated}
        if "hub" in totals and "total" in totals and totals["hub"].value - totals["total"].value == figure.value:
            return totals["hub"].half_unit + totals["total"].half_unit
    return figure.half_unit


def _stated_diagnosis(arch: Architecture, repo: str, figure: Stated, computed: int, stated: list[Stated]) -> str:
    """What the stated figure counts, computed from the architecture."""
    if figure.kind == "active":
        inventory = tensor_inventory(arch)
        with_table, without = (
            active_parameter_count(inventory),
            active_parameter_count(inventory, input_embedding=False),
        )
        counts = ACTIVE_COUNTS_INPUT_EMBEDDING.get(repo.partition("/")[0], True)
        return (
            f"{repo.partition('/')[0]} {'counts' if counts else 'leaves out'} the input embedding table "
            f"(a lookup, one row per token): with it {_billions(with_table)}, without it {_billions(without)}"
        )
    if figure.kind == "hub":
        scales = _block_scale_elements(arch)
        return f"of which {computed - scales:,} parameters (main model + MTP) and {scales:,} block-scale elements"
    if figure.kind == "mtp":
        if _tolerance(figure, stated) != figure.half_unit:
            return (
                "the stated figure is the difference of two rounded totals (Hub - main model), so it carries "
                "the rounding of both; the Hub total itself is compared above"
            )
        return "a module figure stated beside rounded totals"
    return ""


def parameters_section(shared: Path, facts: Mapping[str, Any]) -> Tally:
    _heading("1. Parameters: computed vs published (facts.json)")
    tally = Tally("parameters")
    rows: list[list[str]] = []
    notes: list[str] = []
    for model in facts.get("models", []):
        repo = model["repo"]
        arch, why = _architecture(shared, repo)
        exact = model.get("parameters")
        stated = [
            *parse_stated(str(model.get("parameters_stated") or ""), "total"),
            *parse_stated(str(model.get("active_parameters_stated") or ""), "active"),
        ]
        if arch is None:
            for label in (["parameters"] if isinstance(exact, int) else []) + [s.text for s in stated]:
                status = tally.record(None, f"{repo} {label}")
                rows.append([repo, label, "-", "-", "-", "-", status])
            notes.append(f"{repo}: {why}")
            continue
        if isinstance(exact, int):
            computed = parameter_count(tensor_inventory(arch))
            error = _relative(computed, exact)
            status = tally.record(abs(error) <= PARAMETERS_TOLERANCE, f"{repo} parameters")
            rows.append(
                [
                    repo,
                    "parameters (exact count)",
                    f"{exact:,}",
                    f"{computed:,}",
                    _pct(error, 4),
                    f"±{PARAMETERS_TOLERANCE:.1%}",
                    status,
                ]
            )
        for figure in stated:
            label, compute = _STATED_KINDS[figure.kind]
            computed = compute(arch, repo)
            tolerance = _tolerance(figure, stated)
            ok = abs(Decimal(computed) - figure.value) <= tolerance
            status = tally.record(ok, f"{repo} {figure.kind} (stated {figure.text})")
            rows.append(
                [
                    repo,
                    f"{label} [stated {figure.text}]",
                    f"{figure.value / 10**9:f}B",
                    _billions(computed),
                    _pct(_relative(computed, float(figure.value))),
                    f"±{tolerance / 10**9:f}B",
                    status,
                ]
            )
            if not ok or figure.kind != "total":
                notes.append(
                    f"{repo} {figure.kind} (stated {figure.text}): computed {computed:,}; "
                    f"{_stated_diagnosis(arch, repo, figure, computed, stated)}"
                )
    _table(["model", "figure", "published", "computed", "rel. error", "target", "result"], rows, right={2, 3, 4, 5})
    print(
        "[stated ...]: a rounded figure from a model card's prose (parameters_stated, active_parameters_stated), "
        "compared within half a unit of its last digit (37B: ±0.5B, 12.9B: ±0.05B), a difference of two rounded "
        "totals within the rounding of both; active figures by the publisher's own convention on the input "
        "embedding (ACTIVE_COUNTS_INPUT_EMBEDDING)"
    )
    for note in notes:
        print(f"  note: {note}")
    return tally


# ---------------------------------------------------------------------------------------------------------------
# 2. Checkpoint bytes


def checkpoint_section(shared: Path, facts: Mapping[str, Any]) -> Tally:
    _heading("2. Checkpoint bytes: computed weights vs safetensors metadata.total_size (facts.json)")
    tally = Tally("checkpoint bytes")
    rows: list[list[str]] = []
    notes: list[str] = []
    quantised_given = 0
    for model in facts.get("models", []):
        published = model.get("safetensors_total_size")
        if not isinstance(published, int):
            continue
        repo = model["repo"]
        arch, why = _architecture(shared, repo)
        if arch is None:
            rows.append([repo, "-", f"{published:,}", "-", "-", "-", tally.record(None, f"{repo} checkpoint")])
            notes.append(f"{repo}: {why}")
            continue
        sixteen_bit = not arch.quantization_config and arch.dtype.bits == 16
        quantised_given += not sixteen_bit
        tolerance = CHECKPOINT_TOLERANCE_16BIT if sixteen_bit else CHECKPOINT_TOLERANCE_QUANTISED
        try:
            fmt = resolve_weight_format(arch, "auto")
            computed = weight_bytes_total(arch, fmt)
        except SizingError as error:
            rows.append(
                [repo, "-", f"{published:,}", "-", "-", f"±{tolerance:.0%}", tally.record(None, f"{repo} checkpoint")]
            )
            notes.append(f"{repo}: {error.code.value}: {error.message}")
            continue
        error = _relative(computed, published)
        status = tally.record(abs(error) <= tolerance, f"{repo} checkpoint bytes")
        rows.append(
            [
                repo,
                f"{fmt.slug} ({'16-bit' if sixteen_bit else 'quantised'})",
                f"{published:,}",
                f"{computed:,}",
                _pct(error, 4),
                f"±{tolerance:.0%}",
                status,
            ]
        )
        if model.get("note"):
            notes.append(f"{repo}: {model['note']} (difference {computed - published:+,} bytes)")
    _table(
        ["model", "format", "published bytes", "computed bytes", "rel. error", "target", "result"],
        rows,
        right={2, 3, 4, 5},
    )
    if not quantised_given:
        print("facts.json gives no quantised checkpoint size: the 3 % target for quantised releases is not exercised")
    for note in notes:
        print(f"  note: {note}")
    return tally


# ---------------------------------------------------------------------------------------------------------------
# 3. KV bytes per token and the worked examples

_KV_NOTE = re.compile(r"=\s*(?P<n>[\d,]+)\s*bytes per token(?:\s+in\s+(?P<dtype>\w+))?", re.IGNORECASE)


def kv_section(shared: Path, facts: Mapping[str, Any]) -> Tally:
    _heading("3. KV bytes per token (facts.json) and the field's worked examples")
    tally = Tally("KV per token / worked examples")
    rows: list[list[str]] = []
    for model in facts.get("models", []):
        repo = model["repo"]
        published: list[tuple[str, int]] = []
        if isinstance(model.get("kv_bytes_per_token_bf16"), int):
            published.append(("kv_bytes_per_token_bf16", model["kv_bytes_per_token_bf16"]))
        match = _KV_NOTE.search(str(model.get("kv_note") or ""))
        if match:
            published.append((f"kv_note ({(match['dtype'] or 'BF16').upper()})", int(match["n"].replace(",", ""))))
        if not published:
            continue
        arch, why = _architecture(shared, repo)
        for label, value in published:
            if arch is None:
                rows.append([repo, label, f"{value:,}", "-", "-", tally.record(None, f"{repo} {label}")])
                print(f"  note: {repo}: {why}")
                continue
            computed = layers_kv_bytes_per_token(arch.layers, kv_bits=16)
            rows.append(
                [
                    repo,
                    label,
                    f"{value:,}",
                    f"{computed:,}",
                    _pct(_relative(computed, value), 4),
                    tally.record(computed == value, f"{repo} {label}"),
                ]
            )
    _table(["model", "figure", "published B/token", "computed B/token", "rel. error", "result"], rows, right={2, 3, 4})

    print("\nworked examples (idealised engine; exact)")
    rows = []
    for example in facts.get("worked_examples", []):
        got = _worked_example(example)
        for key, expected in example["expect"].items():
            value = got.get(key)
            rows.append(
                [
                    example["what"],
                    key,
                    str(expected),
                    str(value),
                    tally.record(value == expected, f"worked example {example['what']!r} {key}"),
                ]
            )
    _table(["example", "figure", "published", "computed", "result"], rows)
    return tally


def _worked_example(example: Mapping[str, Any]) -> dict[str, Any]:
    per_token = kv_bytes_per_token(
        num_layers=example["layers"],
        kv_heads=example["kv_heads"],
        head_dim=example["head_dim"],
        kv_bits=example["kv_bytes"] * 8,
    )
    got: dict[str, Any] = {"kv_per_token_kib": per_token / KiB}
    if "parameters_billion" in example:
        arch = architecture_from_numbers(
            parameters=int(example["parameters_billion"] * 10**9),
            num_hidden_layers=example["layers"],
            num_key_value_heads=example["kv_heads"],
            head_dim=example["head_dim"],
        )
        gpu = GpuSpec(slug="worked-example", name="worked example", memory_bytes=int(example["gpu_memory_gib"] * GiB))
        result = estimate_memory(
            EstimateRequest(
                arch=arch,
                gpu=gpu,
                engine=Engine.IDEALIZED,
                tp=example["tensor_parallel"],
                weight_overhead=example["weight_overhead"],
                runtime_reserve_bytes=int(example["runtime_reserve_gib"] * GiB),
                gpu_memory_utilization=example["gpu_utilization_limit"],
                concurrency=example["concurrency"],
                tokens_per_request=example["average_active_tokens"],
            )
        )
        got["kv_cluster_gib"] = result.kv_cache_bytes_per_gpu * result.tp / GiB
        got["fits_idealized"] = result.fits
    if "tokens" in example:
        got["kv_per_sequence_mib"] = per_token * example["tokens"] / MiB
        got["kv_total_gib"] = per_token * example["tokens"] * example["sequences"] / GiB
    return got


# ---------------------------------------------------------------------------------------------------------------
# 4. vLLM startup logs

_VENDOR_WORDS = {"nvidia", "amd", "geforce", "rtx", "tesla", "instinct", "quadro"}


def _gpu_token(name: str) -> str | None:
    """The model word of a catalog GPU name ("NVIDIA GeForce RTX 3090 24GB" -> "3090", "... H100 SXM5" -> "h100")."""
    for word in name.lower().replace("-", " ").split():
        if word not in _VENDOR_WORDS and any(char.isdigit() for char in word):
            return word
    return None


def match_gpu(text: str, catalog: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """The catalog GPU a log's free-text GPU description names, and how it was chosen."""
    low = text.lower()
    candidates = [
        row
        for row in catalog
        if (token := _gpu_token(row["name"])) and re.search(rf"(?<![a-z0-9]){re.escape(token)}(?![a-z0-9])", low)
    ]
    if not candidates:
        return None, f"no catalog GPU named in {text!r}"
    how = f"{len(candidates)} catalog row(s) match"
    sized = [row for row in candidates if re.search(rf"(?<![0-9.]){row['marketed_memory_gb']}\s*gb", low)]
    if sized and len(sized) < len(candidates):
        candidates, how = sized, how + ", memory size narrows"
    shaped = [
        row for row in candidates if any(word in low and word in row["name"].lower() for word in ("pcie", "sxm", "nvl"))
    ]
    if shaped and len(shaped) < len(candidates):
        candidates, how = shaped, how + ", form factor narrows"
    if len(candidates) > 1:
        how += f"; first of {', '.join(row['slug'] for row in candidates)} (same memory)"
    return candidates[0], how


def _model_folder(shared: Path, model_id: str) -> tuple[Path | None, str]:
    """The model_configs folder for a log's model id, and how it was chosen."""
    exact = _folder(shared, model_id)
    if (exact / "config.json").exists():
        return exact, "same repo"
    if model_id in MODEL_ALIASES:
        repo, why = MODEL_ALIASES[model_id]
        return _folder(shared, repo), why
    # An inferred model ("Llama-3.2-3B class model (inferred: ...)"): the folder whose name the description holds.
    named = [
        folder
        for folder in (shared / "model_configs").iterdir()
        if re.search(rf"(?<![\w.-]){re.escape(folder.name.partition('--')[2])}(?![\w.])", model_id)
    ]
    if named:
        folder = max(named, key=lambda path: len(path.name))
        return folder, "named in the log's inferred model description"
    return None, f"no folder of model_configs/ for {model_id!r}"


@dataclass
class LogCase:
    log: dict[str, Any]
    bootlog: BootLog
    calibration: dict[str, int]
    folder: Path | None = None
    folder_how: str = ""
    gpu_row: dict[str, Any] | None = None
    gpu_how: str = ""
    capacity: int | None = None
    capacity_source: str = ""
    request: dict[str, Any] = field(default_factory=dict)
    weights: str = "auto"
    unsupported: str = ""
    uncalibrated: MemoryEstimate | None = None
    calibrated: MemoryEstimate | None = None


_RUNTIME_TERMS = ("runtime_reserve_bytes", "activation_peak_bytes", "cuda_graph_bytes")


def _prepare(shared: Path, log: dict[str, Any], catalog: list[dict[str, Any]]) -> LogCase:
    bootlog = bootlog_parse("\n".join(log.get("raw") or []))
    case = LogCase(log=log, bootlog=bootlog, calibration=bootlog_calibration(bootlog))
    case.folder, case.folder_how = _model_folder(shared, str(log.get("model_id") or ""))
    case.gpu_row, case.gpu_how = match_gpu(str(log.get("gpu_model") or ""), catalog)
    if log.get("gpu_total_memory_gib") is not None:
        case.capacity = round(Decimal(str(log["gpu_total_memory_gib"])) * GiB)
        case.capacity_source = "log"
    elif case.gpu_row is not None:
        case.capacity = catalog_gpu(case.gpu_row).cuda_visible_bytes
        case.capacity_source = "catalog (CUDA-visible)"
    if case.folder is None or case.gpu_row is None:
        case.unsupported = case.folder_how if case.folder is None else case.gpu_how
        return case
    config = _load_config(case.folder)
    if log.get("dtype"):
        config["torch_dtype"] = log["dtype"]  # vLLM's --dtype (also fills configs that state none)
    if not config.get("quantization_config") and log.get("quantization"):
        case.weights = str(log["quantization"])  # an explicit format for a checkpoint that names none
    if log.get("kv_cache_dtype") and log["kv_cache_dtype"] != "auto":
        case.request["kv_dtype"] = log["kv_cache_dtype"]
    try:
        arch = architecture_from_config(config)
        resolve_weight_format(arch, case.weights)
    except SizingError as error:
        case.unsupported = f"{error.code.value}: {error.message}"
        return case
    row = case.gpu_row
    tp = log.get("tensor_parallel_size") or 1
    pp = log.get("pipeline_parallel_size") or 1
    # the log's own release (printed, else its record's, else dated) and the catalog card with CUDA's view
    release, _ = log_release(log, bootlog.engine_version)
    case.request.update(
        arch=arch,
        gpu=catalog_gpu(row),
        gpus=log.get("gpu_count") or tp * pp,
        tp=tp,
        pp=pp,
        engine=Engine.VLLM,
        weights=case.weights,
        engine_version=release,
        engine_mode=log_engine_mode("\n".join(log.get("raw") or []), release),
        gpu_memory_utilization=log.get("gpu_memory_utilization"),
        max_model_len=log.get("max_model_len"),
        max_num_seqs=log.get("max_num_seqs"),
        max_num_batched_tokens=log.get("max_num_batched_tokens"),
        block_size=log.get("block_size"),
        enforce_eager=bool(log.get("enforce_eager")),
    )
    # a logged total is vLLM's own (cudaMemGetInfo), the key bootlog_calibration gives it; else the catalog's
    # CUDA-visible figure
    if case.capacity_source == "log":
        case.request["gpu_cuda_total_bytes"] = case.capacity
    try:
        case.uncalibrated = estimate_memory(EstimateRequest(**case.request))
        case.calibrated = estimate_memory(EstimateRequest(**{**case.request, **case.calibration}))
    except SizingError as error:
        case.unsupported = f"{error.code.value}: {error.message}"
    return case


def _figure(case: LogCase) -> tuple[str, int | None]:
    """The logged figure the target compares: KV tokens, else KV bytes."""
    tokens = case.log.get("kv_cache_tokens") or case.bootlog.kv_cache_tokens
    if tokens:
        return "KV tokens", int(tokens)
    if case.bootlog.kv_cache_bytes is not None:
        return "KV bytes", case.bootlog.kv_cache_bytes
    if case.log.get("kv_cache_gib") is not None:
        return "KV bytes", round(Decimal(str(case.log["kv_cache_gib"])) * GiB)
    return "none", None


def _ours(estimate: MemoryEstimate | None, figure: str) -> int | None:
    if estimate is None:
        return None
    return estimate.kv_capacity_tokens if figure == "KV tokens" else estimate.memory_per_gpu["kv_cache"]


def _show(value: int | None, figure: str) -> str:
    return _count(value) if figure == "KV tokens" else _gib(value)


def vllm_section(shared: Path) -> Tally:
    _heading("4. vLLM KV-cache capacity: estimate vs startup logs (engine_logs/vllm_examples.json)")
    tally = Tally("vLLM KV capacity")
    path = shared / "engine_logs" / "vllm_examples.json"
    if not path.exists():
        print(f"{path} is missing: section skipped")
        return tally
    catalog = json.loads(GPU_CATALOG.read_text())
    cases = [_prepare(shared, log, catalog) for log in json.loads(path.read_text())]

    print("settings each estimate uses (from the log's record; capacity from the log when it gives one)")
    rows = []
    for case in cases:
        log = case.log
        terms = ", ".join(f"{key.removesuffix('_bytes')} {_gib(value)}" for key, value in case.calibration.items())
        rows.append(
            [
                log["id"],
                case.folder.name if case.folder else "-",
                str(log.get("dtype") or "auto"),
                case.gpu_row["slug"] if case.gpu_row else "-",
                f"{_gib(case.capacity)} ({case.capacity_source})" if case.capacity else "-",
                str(log.get("tensor_parallel_size") or 1),
                str(log.get("gpu_memory_utilization")),
                str(log.get("max_model_len") or "-"),
                str(log.get("block_size") or "16*"),
                case.weights if case.weights != "auto" else f"auto ({log.get('quantization') or 'none'})",
                terms or "none printed",
            ]
        )
    _table(
        [
            "log",
            "model config",
            "dtype",
            "GPU (catalog)",
            "capacity",
            "TP",
            "util",
            "max_len",
            "block",
            "weights",
            "calibration terms the log prints",
        ],
        rows,
    )
    print("* block size not recorded: the engine's default (16)")
    for case in cases:
        notes = [f"model: {case.folder_how}"] if case.folder_how != "same repo" else []
        if case.gpu_row is not None and "1 catalog row" not in case.gpu_how:
            notes.append(f"GPU: {case.gpu_how}")
        if notes:
            print(f"  {case.log['id']}: {'; '.join(notes)}")

    print("\nKV capacity per GPU: logged vs estimated (a) uncalibrated and (b) calibrated with the log's own figures")
    rows = []
    misses: list[LogCase] = []
    for case in cases:
        figure, logged = _figure(case)
        applies = "calibrated" if any(term in case.calibration for term in _RUNTIME_TERMS) else "uncalibrated"
        if case.unsupported or logged is None:
            status = tally.record(None, case.log["id"])
            rows.append([case.log["id"], figure, _show(logged, figure), "-", "-", "-", "-", applies, status])
            misses.append(case)
            continue
        uncal, cal = _ours(case.uncalibrated, figure), _ours(case.calibrated, figure)
        uncal_error, cal_error = _relative(uncal, logged), _relative(cal, logged)
        judged = cal_error if applies == "calibrated" else uncal_error
        status = tally.record(abs(judged) <= KV_TOKENS_TOLERANCE, case.log["id"])
        same = applies == "uncalibrated" and not case.calibration
        rows.append(
            [
                case.log["id"],
                figure,
                _show(logged, figure),
                _show(uncal, figure),
                _pct(uncal_error, 2),
                "= (a)" if same else _show(cal, figure),
                "" if same else _pct(cal_error, 2),
                applies,
                status,
            ]
        )
        if status != "ok":
            misses.append(case)
    _table(
        ["log", "figure", "logged", "(a) uncalibrated", "error", "(b) calibrated", "error", "target on", "result"],
        rows,
        right={2, 3, 4, 5, 6},
    )
    print(
        f"target: within ±{KV_TOKENS_TOLERANCE:.0%}, on the calibrated figure where the log prints runtime terms "
        "(non-torch, activation peak, CUDA graphs), else on the uncalibrated one"
    )

    print("\nevery figure each log prints, against the two estimates (bootlog_compare)")
    rows = []
    for case in cases:
        if case.uncalibrated is None or case.calibrated is None:
            continue
        uncal_lines = {line.figure: line for line in bootlog_compare(case.bootlog, case.uncalibrated.as_dict())}
        for line in bootlog_compare(case.bootlog, case.calibrated.as_dict()):
            before = uncal_lines.get(line.figure)
            rows.append(
                [
                    case.log["id"],
                    line.figure,
                    _value(line.logged_bytes_or_value, line.unit),
                    _value(before.estimated if before else None, line.unit),
                    _pct(before.relative_difference if before else None, 2),
                    _value(line.estimated, line.unit),
                    _pct(line.relative_difference, 2),
                ]
            )
    _table(
        ["log", "figure", "logged", "(a) uncalibrated", "error", "(b) calibrated", "error"], rows, right={2, 3, 4, 5, 6}
    )

    if misses:
        print("\nlogs we miss, and why")
        for case in misses:
            _explain(case)
    return tally


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        return _gib(value)
    if unit == "x":
        return f"{value:.2f}x"
    return _count(int(value))


def _explain(case: LogCase) -> None:
    """Why a log is missed: what it is, and where the memory the log leaves beside KV and weights goes."""
    log = case.log
    print(f"- {log['id']} (vLLM {log.get('vllm_version') or 'version unknown'}):")
    if case.unsupported:
        print(f"    not supported by the estimator yet: {case.unsupported}")
    if log.get("inferred_fields"):
        print(f"    inferred settings: {'; '.join(log['inferred_fields'])}")
    command = str(log.get("command") or "")
    if "kv_connector" in command or "kv-transfer-config" in command:
        print("    a KV connector is configured (--kv-transfer-config): not modelled")
    if log.get("notes"):
        print(f"    log notes: {log['notes']}")
    if log["id"] in KNOWN_CAUSES:
        print(f"    cause: {KNOWN_CAUSES[log['id']]}")
    estimate = case.calibrated
    if estimate is None:
        return
    boot = case.bootlog
    if boot.weights_bytes and abs(_relative(estimate.weight_bytes_per_gpu, boot.weights_bytes)) > 0.01:
        print(
            f"    weights: the log loads {_gib(boot.weights_bytes)}, we bill {_gib(estimate.weight_bytes_per_gpu)} "
            f"({_pct(_relative(estimate.weight_bytes_per_gpu, boot.weights_bytes), 2)})"
        )
    budget = boot.budget_bytes or int(estimate.capacity_bytes_per_gpu * estimate.assumptions["gpu_memory_utilization"])
    weights = boot.weights_bytes if boot.weights_bytes is not None else estimate.weight_bytes_per_gpu
    figure, logged = _figure(case)
    kv = logged if figure == "KV bytes" else boot.kv_cache_bytes
    if kv is None:
        kv = (logged or 0) * estimate.kv_bytes_per_token_per_gpu
    left = budget - weights - kv
    ours = estimate.memory_per_gpu["activations"] + estimate.memory_per_gpu["runtime"]
    source = "log" if boot.weights_bytes is not None else "ours"
    print(
        f"    the log's budget {_gib(budget)} less weights {_gib(weights)} ({source})"
        f" and KV {_gib(kv)} leaves {_gib(left)} for activations + non-torch memory; the estimate puts "
        f"{_gib(ours)} there (activations {_gib(estimate.memory_per_gpu['activations'])}, non-torch "
        f"{_gib(estimate.memory_per_gpu['runtime'])}; {estimate.assumptions['max_num_batched_tokens']} batched "
        f"tokens, {estimate.assumptions['max_num_seqs']} sequences)"
    )
    if not any(term in case.calibration for term in _RUNTIME_TERMS):
        needed = (weights + kv + ours) / estimate.capacity_bytes_per_gpu
        print(
            f"    with our activation and non-torch figures, gpu_memory_utilization {needed:.3f} would reproduce "
            "the logged KV"
        )
    peak = re.search(r"peak_torch_memory=(?P<v>\d+(?:\.\d+)?)GiB", "\n".join(log.get("raw") or []))
    if peak and boot.weights_bytes is not None and "activation_peak_bytes" not in case.calibration:
        activation = round(Decimal(peak["v"]) * GiB) - boot.weights_bytes
        again = estimate_memory(
            EstimateRequest(**{**case.request, **case.calibration, "activation_peak_bytes": activation})
        )
        derived = _ours(again, figure)
        print(
            f"    derived by hand: peak_torch_memory − weights = {_gib(activation)} of activations; calibrated with "
            f"it the estimate gives {_show(derived, figure)} ({_pct(_relative(derived, logged), 2)}) — not counted: "
            "bootlog_parse does not read it"
        )


# ---------------------------------------------------------------------------------------------------------------
# 5. Every config


def configs_section(shared: Path) -> None:
    _heading("5. Every config in model_configs/ (information, no target)")
    rows = []
    refused = []
    for folder in sorted(path for path in (shared / "model_configs").iterdir() if (path / "config.json").exists()):
        name = folder.name.replace("--", "/", 1)
        model_type = str(json.loads((folder / "config.json").read_text()).get("model_type", "?"))
        try:
            arch = architecture_from_config(_load_config(folder))
            fmt = resolve_weight_format(arch, "auto")
            inventory = tensor_inventory(arch)
            rows.append(
                [
                    name,
                    model_type,
                    _count(parameter_count(inventory)),
                    _count(active_parameter_count(inventory)),
                    fmt.slug,
                    _count(weight_bytes_total(arch, fmt)),
                    _count(layers_kv_bytes_per_token(arch.layers, kv_bits=16)),
                ]
            )
        except SizingError as error:
            rows.append([name, model_type, "refused", "", "", "", ""])
            refused.append(f"{name}: {error.code.value}: {error.message}")
    _table(
        ["model", "model_type", "parameters", "active", "weights (auto)", "weight bytes", "KV B/token (16-bit)"],
        rows,
        right={2, 3, 5, 6},
    )
    print(f"{len(rows) - len(refused)} supported, {len(refused)} refused")
    for line in refused:
        print(f"  refused: {line}")


# ---------------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--shared",
        type=Path,
        default=DEFAULT_SHARED,
        help="the shared data folder (default: ../shared/data beside the repository)",
    )
    args = parser.parse_args(argv)
    shared: Path = args.shared
    if not (shared / "facts.json").exists() or not (shared / "model_configs").is_dir():
        print(
            f"No shared data at {shared} (facts.json and model_configs/; a fresh clone has no ../shared): "
            "skipping the accuracy benchmark."
        )
        return 0
    facts = json.loads((shared / "facts.json").read_text())
    tallies = [
        parameters_section(shared, facts),
        checkpoint_section(shared, facts),
        kv_section(shared, facts),
        vllm_section(shared),
    ]
    configs_section(shared)
    serving_ok, serving_summary = serving_section(shared)
    print(
        "\nnot checked here: formats/ and real_outputs/ (inputs of the result-file and nvidia-smi parsers, tested "
        "by their own suites)"
    )
    failed = [tally for tally in tallies if tally.failed]
    verdict = "FAIL" if failed or not serving_ok else "OK"
    print(f"\nSUMMARY: {'; '.join(tally.summary() for tally in tallies)}; {serving_summary} -> {verdict}")
    for tally in failed:
        print(f"  {tally.name}: {', '.join(tally.misses)}")
    return 1 if verdict == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main())

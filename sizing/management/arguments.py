"""Argument parsing shared by the commands other tools rely on (`estimate`, `simulate`): bad arguments print one
line on stderr, `<command>: error: ...`, and exit with code 2; numbers are checked where they are read."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import CommandParser

from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.estimator.launch import ENGINE_MODES, ENV_TOGGLES, INSTALLS, USAGE_CONTEXTS
from sizing.estimator.versions import ACCEPTED_FORM, resolve_engine_version
from sizing.models import Gpu, LlmModel
from sizing.selectors.estimates import gpu_get, model_get_for_organisation


def fail(command: str, message: str) -> NoReturn:
    sys.stderr.write(f"{command}: error: {message}\n")
    sys.exit(2)


def one_line_parser(parser: CommandParser, command: str) -> CommandParser:
    """Make `parser` report errors as one line and exit 2 (argparse's default prints usage first)."""

    class _OneLine(CommandParser):
        def error(self, message: str) -> NoReturn:
            fail(command, message)

    parser.__class__ = _OneLine
    return parser


def _number(text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def positive_int(text: str) -> int:
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be ≥ 1")
    return value


def non_negative_int(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be ≥ 0")
    return value


def positive_float(text: str) -> float:
    value = _number(text, float)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{value} must be a finite number > 0")
    return value


def fraction(text: str) -> float:
    value = _number(text, float)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} must be in (0, 1]")
    return value


def add_deployment_arguments(parser: CommandParser) -> None:
    """The model, the GPU type and the deployment's layout and engine settings, as both commands take them."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="catalog model slug (Hugging Face repo id)")
    source.add_argument("--config", type=Path, help="path to a config.json")
    parser.add_argument("--gpu", required=True, help="GPU slug, e.g. nvidia-h100-sxm-80gb")
    parser.add_argument("--gpus", type=positive_int)
    parser.add_argument("--tp", type=positive_int)
    parser.add_argument("--pp", type=positive_int)
    parser.add_argument("--engine", choices=ENGINE_CHOICES, default="vllm")
    parser.add_argument("--weights", choices=WEIGHT_FORMAT_CHOICES, default="auto")
    parser.add_argument("--kv-dtype", choices=KV_CACHE_DTYPES, default="auto")
    parser.add_argument("--gpu-memory-utilization", type=fraction)
    parser.add_argument("--max-model-len", type=positive_int)
    parser.add_argument("--max-num-seqs", type=positive_int)
    parser.add_argument("--max-num-batched-tokens", type=positive_int)
    parser.add_argument(
        "--engine-version",
        metavar="X.Y.Z",
        help=f"the engine release the estimate holds for: {ACCEPTED_FORM} (default latest)",
    )
    parser.add_argument(
        "--usage-context",
        choices=USAGE_CONTEXTS,
        help="vLLM: serve (`vllm serve`, default) or llm (Python LLM(...)): batch defaults differ",
    )
    parser.add_argument(
        "--engine-mode", choices=ENGINE_MODES, help="vLLM 0.8-0.10: auto (vLLM's own V1/V0 choice, default), v0 or v1"
    )
    parser.add_argument(
        "--install",
        choices=INSTALLS,
        help="pip (default) or docker (the official image; vLLM 0.8-0.11's ships FlashInfer)",
    )
    parser.add_argument(
        "--enable-chunked-prefill",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="default: the engine's choice for the version and context",
    )
    parser.add_argument("--kv-cache-memory-bytes", type=positive_int, help="vLLM 0.11+: the KV cache per GPU exactly")
    for key, variable in ENV_TOGGLES.items():
        parser.add_argument(
            f"--{key.replace('_', '-')}",
            action=argparse.BooleanOptionalAction,
            default=None,
            help=f"{variable}=1 / =0; default: the version's own",
        )


def read_json(path: Path, what: str, command: str) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        fail(command, f"cannot read {what} {path}: {error}")


def deployment_sources(options: dict[str, Any], command: str) -> tuple[Gpu, LlmModel | None, Any]:
    """The catalog GPU and the catalog model or the config file the options name; an unknown one, or an engine
    version that is not one or not modelled, ends the command with its one-line error."""
    if options.get("engine_version") is not None:
        try:
            resolve_engine_version(options.get("engine") or "vllm", options["engine_version"])
        except SizingError as error:
            fail(command, f"--engine-version: {error.message}")
    gpu = gpu_get(slug=options["gpu"])
    if gpu is None:
        fail(command, f"unknown GPU {options['gpu']!r} (run catalog_load, or see GET /api/v1/gpus/)")
    if options["model"]:
        model = model_get_for_organisation(organisation=None, slug=options["model"])
        if model is None:
            fail(command, f"unknown model {options['model']!r} (a catalog slug such as meta-llama/Meta-Llama-3-8B)")
        return gpu, model, None
    return gpu, None, read_json(options["config"], "config", command)

"""`manage.py estimate`: the memory bill from the command line. Other tools rely on its flags and JSON."""

from __future__ import annotations

import json
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from sizing.estimator.engines import ENGINE_TRAITS, Engine
from sizing.estimator.errors import SizingError
from sizing.estimator.launch import ENV_TOGGLES, launch_lines
from sizing.estimator.units import format_bytes
from sizing.management.arguments import (
    add_deployment_arguments,
    deployment_sources,
    fail,
    fraction,
    one_line_parser,
    positive_int,
)
from sizing.services.estimates import ESTIMATE_PARAMETERS, SOLVER_TARGETS, estimate_quick, estimate_solve

COMPONENT_LABELS = {
    "weights": "weights",
    "kv_cache": "KV cache",
    "activations": "activations",
    "runtime": "runtime reserve",
    "cuda_graphs": "CUDA graphs",
}


class Command(BaseCommand):
    help = "Estimate the memory bill per GPU of a model on a GPU type, as the API's POST estimates/quick."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_parser(super().create_parser(prog_name, subcommand, **kwargs), "estimate")

    def add_arguments(self, parser: CommandParser) -> None:
        add_deployment_arguments(parser)
        parser.add_argument("--gpu-memory-bytes", type=positive_int, help="measured driver total (nvidia-smi)")
        parser.add_argument(
            "--gpu-cuda-total-bytes",
            type=positive_int,
            help="measured CUDA-visible total (a vLLM boot log's total_gpu_memory)",
        )
        parser.add_argument("--block-size", type=positive_int)
        parser.add_argument("--concurrency", type=positive_int)
        parser.add_argument("--tokens-per-request", type=positive_int)
        parser.add_argument("--mem-fraction-static", type=fraction, help="SGLang's static memory fraction")
        parser.add_argument("--kv-cache-free-gpu-mem-fraction", type=fraction, help="TensorRT-LLM's KV fraction")
        parser.add_argument("--enforce-eager", action="store_true", default=None, help="no CUDA graphs")
        parser.add_argument(
            "--solve",
            choices=SOLVER_TARGETS,
            help="solve for the largest context, the largest concurrency or the fewest GPUs",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        gpu, model, config = deployment_sources(options, "estimate")
        parameters = {key: options.get(key) for key in ESTIMATE_PARAMETERS}
        parameters["engine"] = options["engine"]
        try:
            if options["solve"]:
                solved = estimate_solve(
                    gpu=gpu, model=model, config=config, parameters=parameters, target=options["solve"]
                )
                self._print_solved(solved, as_json=options["json"])
                return
            result = estimate_quick(gpu=gpu, model=model, config=config, parameters=parameters)
        except SizingError as error:
            _fail(f"{error.code.value}: {error.message}")
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict()))
            return
        self.stdout.write(
            f"{model.slug if model else options['config']} on {result.gpus} x {gpu.name} "
            f"(TP {result.tp}, PP {result.pp}, {result.replicas} replica(s), engine {result.engine})"
        )
        self.stdout.write(_release_line(result))
        active = ""
        if result.parameters_active != result.parameters_total:
            active = (
                f" ({result.parameters_active:,} active per token, "
                f"{result.parameters_active_compute:,} without the input-embedding lookup)"
            )
        self.stdout.write(
            f"parameters: {result.parameters_total:,}{active}  weights: {result.weight_format}  "
            f"KV: {result.kv_dtype}, {result.kv_bytes_per_token:,} bytes per token"
        )
        for key, value in result.memory_per_gpu.items():
            self.stdout.write(
                f"  {COMPONENT_LABELS[key]:<16} {format_bytes(value, 'GB'):>12} {format_bytes(value, 'GiB'):>12}"
            )
        self.stdout.write(
            f"  {'required':<16} {format_bytes(result.required_bytes_per_gpu, 'GB'):>12} "
            f"{format_bytes(result.required_bytes_per_gpu, 'GiB'):>12}"
        )
        self.stdout.write(
            f"  {'usable':<16} {format_bytes(result.usable_bytes_per_gpu, 'GB'):>12} "
            f"{format_bytes(result.usable_bytes_per_gpu, 'GiB'):>12}"
        )
        self.stdout.write(
            f"KV capacity: {result.kv_capacity_tokens:,} tokens; max concurrency: "
            f"{result.max_concurrency if result.max_concurrency is not None else 'n/a'}"
        )
        self.stdout.write("FITS" if result.fits else "DOES NOT FIT")
        for line in result.problems:
            self.stdout.write(f"problem: {line}")
        for line in result.warnings:
            self.stdout.write(f"warning: {line}")
        if result.launch_args:
            engine = Engine(result.engine)
            for line in launch_lines(
                engine=engine.value,
                label=ENGINE_TRAITS[engine].label,
                version=result.engine_version,
                requested=result.engine_version_requested,
                install=options["install"] or "pip",
                usage_context=options["usage_context"] or "serve",
                command=result.launch_command,
                model=model.slug if model else "MODEL",
                args=result.launch_args,
                toggles={key: options.get(key) for key in ENV_TOGGLES},
            ):
                self.stdout.write(line)

    def _print_solved(self, solved: dict[str, Any], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(solved))
            return
        unit = {
            "largest_context": "tokens per request",
            "largest_concurrency": "concurrent requests",
            "fewest_gpus": "GPUs",
        }[solved["target"]]
        self.stdout.write(f"{solved['target']}: {solved['value']} {unit}")
        self.stdout.write(f"stops because: {solved['stops_because']}")


def _release_line(result: Any) -> str:
    """Which engine release the bill holds for, and the flags left empty that the release's defaults filled."""
    if result.engine_version:
        asked = (
            ""
            if result.engine_version_requested == result.engine_version
            else f" (asked for: {result.engine_version_requested})"
        )
        release = f"engine version: {result.engine} {result.engine_version}{asked}"
    else:
        release = f"engine version: {result.engine} (no version rules)"
    assumed = ", ".join(f"{key}={value}" for key, value in result.defaults_assumed.items())
    return f"{release}; defaults assumed: {assumed or 'none'}"


def _fail(message: str) -> NoReturn:
    fail("estimate", message)

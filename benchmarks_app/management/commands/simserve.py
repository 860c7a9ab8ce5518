"""`manage.py simserve (--deployment ID | --model SLUG --gpu SLUG [...]) [--host] [--port] [--speedup F]`: serve an
OpenAI-compatible simulator of a deployment (`benchmarks_app.simserver`), its plan built through the service layer:
the estimate command's model, GPU and engine options (or a saved deployment's plan), with the organisation's
latest calibrations for a deployment. Prints the URL and the predicted figures, then serves until interrupted;
`--check` prints and exits. `python -m benchmarks_app.simserver` does the same from the catalog files alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from benchmarks_app.simserver.__main__ import add_server_arguments, run
from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.management.arguments import (
    deployment_sources,
    fail,
    fraction,
    one_line_parser,
    positive_int,
)
from sizing.models import Deployment
from sizing.services.estimates import ESTIMATE_PARAMETERS
from sizing.services.simulations import simulation_plan

OVERRIDABLE = (
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "gpu_memory_utilization",
    "weights",
    "kv_dtype",
)


class Command(BaseCommand):
    help = "Serve an OpenAI-compatible simulator of a deployment (timings from the performance model)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_parser(super().create_parser(prog_name, subcommand, **kwargs), "simserve")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--deployment", type=positive_int, help="a saved deployment's id: its plan")
        source.add_argument("--model", help="catalog model slug (Hugging Face repo id)")
        source.add_argument("--config", type=Path, help="path to a config.json")
        parser.add_argument("--gpu", help="GPU slug, e.g. nvidia-h100-sxm-80gb (with --model or --config)")
        parser.add_argument("--gpus", type=positive_int)
        parser.add_argument("--tp", type=positive_int)
        parser.add_argument("--pp", type=positive_int)
        parser.add_argument("--engine", choices=ENGINE_CHOICES)
        parser.add_argument("--weights", choices=WEIGHT_FORMAT_CHOICES)
        parser.add_argument("--kv-dtype", choices=KV_CACHE_DTYPES)
        parser.add_argument("--gpu-memory-utilization", type=fraction)
        parser.add_argument("--max-model-len", type=positive_int)
        parser.add_argument("--max-num-seqs", type=positive_int)
        parser.add_argument("--max-num-batched-tokens", type=positive_int)
        parser.add_argument("--check", action="store_true", help="print the plan and the predictions, then exit")
        add_server_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["deployment"] is not None:
                plan, name = self._deployment_plan(options)
            else:
                plan, name = self._options_plan(options)
        except SizingError as error:
            _fail(f"{error.code.value}: {error.message}")
        run(plan, model_name=options["served_model_name"] or name, options=options, out=self.stdout)

    def _deployment_plan(self, options: dict[str, Any]) -> tuple[Any, str]:
        deployment = (
            Deployment.objects.select_related("model", "gpu", "organisation").filter(pk=options["deployment"]).first()
        )
        if deployment is None:
            _fail(f"deployment {options['deployment']} does not exist")
        if deployment.model is None or deployment.gpu is None:
            _fail(f"deployment {deployment.pk} ({deployment.name}) names no model or no GPU: nothing to simulate")
        tp = options["tp"] or deployment.tp or 1
        gpus = options["gpus"] or (
            deployment.gpu_count if deployment.gpu_count and deployment.gpu_count % tp == 0 else tp
        )
        parameters: dict[str, Any] = {
            "gpus": gpus,
            "tp": tp,
            "pp": options["pp"],
            "engine": options["engine"] or deployment.engine or "vllm",
            "max_model_len": deployment.max_model_len,
        }
        parameters.update({key: options[key] for key in OVERRIDABLE if options.get(key) is not None})
        plan = simulation_plan(
            gpu=deployment.gpu,
            model=deployment.model,
            parameters=parameters,
            organisation=deployment.organisation,
            max_queue=options["max_queue"],
        )
        self.stdout.write(
            f"deployment {deployment.pk}: {deployment.name} ({plan.efficiencies_source}; memory {plan.memory_source})"
        )
        return plan, deployment.model.slug

    def _options_plan(self, options: dict[str, Any]) -> tuple[Any, str]:
        if not options["gpu"]:
            _fail("--gpu is required with --model or --config")
        gpu, model, config = deployment_sources(options, "simserve")
        parameters = {key: options.get(key) for key in ESTIMATE_PARAMETERS}
        parameters["engine"] = options["engine"] or "vllm"
        plan = simulation_plan(
            gpu=gpu, model=model, config=config, parameters=parameters, max_queue=options["max_queue"]
        )
        return plan, model.slug if model is not None else "simulated-model"


def _fail(message: str) -> NoReturn:
    fail("simserve", message)

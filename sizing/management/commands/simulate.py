"""`manage.py simulate`: latency and throughput of a deployment at a load. Other tools rely on its flags and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from sizing.estimator.errors import SizingError
from sizing.management.arguments import (
    add_deployment_arguments,
    deployment_sources,
    fail,
    non_negative_int,
    one_line_parser,
    positive_float,
    positive_int,
    read_json,
)
from sizing.services.estimates import ESTIMATE_PARAMETERS
from sizing.services.simulations import (
    SIMULATION_DEFAULT_REQUESTS,
    SIMULATION_MAX_REQUESTS,
    simulation_plan,
    simulation_profile,
    simulation_run,
    slo_from,
)

CONTRACT_KEYS = (
    "ttft_ms",
    "itl_ms",
    "tpot_ms",
    "e2e_ms",
    "output_tokens_per_s",
    "requests_per_s",
    "completed",
    "rejected",
    "preempted",
    "kv_overflow_probability",
)


class Command(BaseCommand):
    help = (
        "Simulate serving a profile (or fixed lengths) on a deployment at a rate, a concurrency or offline, "
        "and print latency percentiles and throughput."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_parser(super().create_parser(prog_name, subcommand, **kwargs), "simulate")

    def add_arguments(self, parser: CommandParser) -> None:
        add_deployment_arguments(parser)
        parser.add_argument(
            "--max-queue",
            type=non_negative_int,
            help="waiting requests per replica before new ones are rejected (default 4 x max-num-seqs)",
        )
        parser.add_argument(
            "--link",
            choices=("nvlink", "pcie", "xgmi"),
            help="the GPU-to-GPU link the server really has (default: the catalog's)",
        )
        traffic = parser.add_mutually_exclusive_group()
        traffic.add_argument("--profile", type=Path, help="a workload profile JSON file")
        traffic.add_argument("--input-tokens", type=positive_int)
        parser.add_argument("--output-tokens", type=positive_int)
        load = parser.add_mutually_exclusive_group(required=True)
        load.add_argument("--rate", type=positive_float, help="open loop: requests per second")
        load.add_argument("--concurrency", type=positive_int, help="closed loop: clients")
        load.add_argument("--offline", action="store_true", help="every request arrives at time zero")
        parser.add_argument("--requests", type=positive_int, default=SIMULATION_DEFAULT_REQUESTS)
        parser.add_argument("--seed", type=non_negative_int, default=0)
        parser.add_argument("--hour", type=non_negative_int, help="simulate the profile's mix at this hour (0-23)")
        parser.add_argument("--slo-ttft", type=positive_float, help="TTFT SLO in seconds (goodput)")
        parser.add_argument("--slo-tpot", type=positive_float, help="TPOT SLO in seconds (goodput)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["requests"] > SIMULATION_MAX_REQUESTS:
            _fail(f"--requests {options['requests']} exceeds {SIMULATION_MAX_REQUESTS}")
        if options["input_tokens"] is not None and options["output_tokens"] is None:
            _fail("--input-tokens needs --output-tokens")
        if options["profile"] is None and options["input_tokens"] is None:
            _fail("give --profile PATH or --input-tokens N --output-tokens N")
        gpu, model, config = deployment_sources(options, "simulate")
        profile_data = read_json(options["profile"], "profile", "simulate") if options["profile"] else None
        # --concurrency and --output-tokens describe the traffic here, not the memory estimate's demand
        parameters = {
            key: options.get(key) for key in ESTIMATE_PARAMETERS if key not in ("concurrency", "output_tokens")
        }
        parameters["engine"] = options["engine"]
        load = "offline" if options["offline"] else "rate" if options["rate"] is not None else "concurrency"
        try:
            profile = simulation_profile(
                profile=profile_data, input_tokens=options["input_tokens"], output_tokens=options["output_tokens"]
            )
            plan = simulation_plan(
                gpu=gpu,
                model=model,
                config=config,
                parameters=parameters,
                max_queue=options["max_queue"],
                link=options["link"],
            )
            result = simulation_run(
                plan=plan,
                profile=profile,
                load=load,
                rate=options["rate"],
                concurrency=options["concurrency"],
                requests=options["requests"],
                seed=options["seed"],
                hour=options["hour"],
                slo=slo_from({"ttft_s": options["slo_ttft"], "tpot_s": options["slo_tpot"]}),
            )
        except SizingError as error:
            _fail(f"{error.code.value}: {error.message}")
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self._print(result)

    def _print(self, result: dict[str, Any]) -> None:
        plan = result["plan"]
        self.stdout.write(
            f"{plan['replicas']} replica(s) x TP {plan['tp']} x PP {plan['pp']}, {plan['engine']}, "
            f"weights {plan['weights']}, KV {plan['kv_dtype']}: "
            f"{plan['kv_capacity_tokens_per_replica']:,} KV tokens per replica, "
            f"max_num_seqs {plan['max_num_seqs']}"
        )
        self.stdout.write(
            f"requests {result['requests']}: completed {result['completed']}, rejected "
            f"{result['rejected']}, failed {result['failed']}, preemptions {result['preempted']}"
        )
        for key, label in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("itl_ms", "ITL"), ("e2e_ms", "E2E")):
            d = result[key]
            cells = "  ".join(f"{name} {_ms(d.get(name))}" for name in ("mean", "p50", "p90", "p95", "p99"))
            self.stdout.write(f"  {label:<5} {cells}")
        self.stdout.write(
            f"throughput: {result['output_tokens_per_s']:,.0f} output tokens/s, "
            f"{result['requests_per_s']:.3f} requests/s over {result['window_s']:.1f} s"
        )
        self.stdout.write(
            f"KV: peak {result['kv_peak_fraction']:.0%} of capacity; demand above capacity "
            f"{result['kv_overflow_probability']:.1%} of the time"
        )


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f} ms"


def _fail(message: str) -> NoReturn:
    fail("simulate", message)

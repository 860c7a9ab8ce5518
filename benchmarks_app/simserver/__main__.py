"""`python -m benchmarks_app.simserver --model SLUG --gpu SLUG [options]`: serve a simulated deployment built from
the shipped catalog files (no Django, no database). `python manage.py simserve` does the same from the database
(a saved deployment, calibrations).

    python -m benchmarks_app.simserver --model meta-llama/Meta-Llama-3-8B --gpu nvidia-h100-sxm-80gb
    python -m benchmarks_app.simserver --model meta-llama/Meta-Llama-3-8B --gpu nvidia-l4-24gb --speedup 10
    python -m benchmarks_app.simserver --model meta-llama/Meta-Llama-3-8B --gpu nvidia-h100-sxm-80gb --zero-delay
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from benchmarks_app.simserver.app import create_app, serve
from benchmarks_app.simserver.catalog import catalog_plan, plan_figures, served_max_model_len
from benchmarks_app.simserver.engine import SimEngine
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be > 0")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be ≥ 1")
    return value


def add_server_arguments(parser: Any) -> None:
    """The serving options both entry points share."""
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument(
        "--speedup",
        type=positive_float,
        default=1.0,
        help="run the model's clock this many times faster than the wall clock (default 1)",
    )
    speed.add_argument("--zero-delay", action="store_true", help="steps take no time (load-generator throughput tests)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--served-model-name", help="the model name clients send (default: the model slug)")
    parser.add_argument(
        "--max-queue", type=int, help="waiting requests per replica before 429 (default 4 x max-num-seqs)"
    )
    parser.add_argument("--routing", choices=("least_loaded", "round_robin"), default="least_loaded")
    parser.add_argument("--no-control", action="store_true", help="leave out the /control failure-injection endpoint")
    parser.add_argument("--log-level", default="warning")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks_app.simserver", description="OpenAI-compatible simulator of a sized LLM deployment"
    )
    parser.add_argument("--model", required=True, help="catalog model slug, e.g. meta-llama/Meta-Llama-3-8B")
    parser.add_argument("--gpu", required=True, help="catalog GPU slug, e.g. nvidia-h100-sxm-80gb")
    parser.add_argument("--gpus", type=positive_int, help="GPUs in all (more than TP x PP: replicas)")
    parser.add_argument("--tp", type=positive_int)
    parser.add_argument("--pp", type=positive_int, default=1)
    parser.add_argument("--engine", choices=ENGINE_CHOICES, default="vllm")
    parser.add_argument("--weights", default="auto")
    parser.add_argument("--kv-dtype", default="auto")
    parser.add_argument("--gpu-memory-utilization", type=float)
    parser.add_argument("--max-model-len", type=positive_int)
    parser.add_argument("--max-num-seqs", type=positive_int)
    parser.add_argument("--max-num-batched-tokens", type=positive_int)
    parser.add_argument("--check", action="store_true", help="print the plan and the predictions, then exit")
    add_server_arguments(parser)
    return parser


def run(plan: Any, *, model_name: str, options: dict[str, Any], out: Any = sys.stdout) -> None:
    """Print the URL and the predicted figures, then serve until interrupted (or return at once with check)."""
    speedup = math.inf if options.get("zero_delay") else float(options.get("speedup") or 1.0)
    max_model_len = served_max_model_len(plan)
    for line in plan_figures(plan, speedup=speedup):
        out.write(line + "\n")
    url = f"http://{options['host']}:{options['port']}"
    out.write(
        f"serving {model_name!r} at {url}/v1 (speedup {'zero-delay' if math.isinf(speedup) else speedup}; "
        f"metrics {url}/metrics" + ("" if options.get("no_control") else f"; failure injection {url}/control") + ")\n"
    )
    out.flush()
    if options.get("check"):
        return
    engine = SimEngine.from_plan(plan, speedup=speedup, routing=options.get("routing") or "least_loaded")
    app = create_app(
        engine,
        model_name=model_name,
        max_model_len=max_model_len,
        control=not options.get("no_control"),
        plan=plan.describe(),
    )
    serve(app, host=options["host"], port=options["port"], log_level=options.get("log_level") or "warning")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        plan = catalog_plan(
            model=args.model,
            gpu=args.gpu,
            gpus=args.gpus,
            tp=args.tp,
            pp=args.pp,
            engine=args.engine,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=args.max_model_len,
            max_num_seqs=args.max_num_seqs,
            max_num_batched_tokens=args.max_num_batched_tokens,
            max_queue=args.max_queue,
        )
    except KeyError as error:
        parser.error(str(error.args[0]))
    except SizingError as error:
        parser.error(f"{error.code.value}: {error.message}")
    run(plan, model_name=args.served_model_name or args.model, options=vars(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

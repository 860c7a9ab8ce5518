"""Command line: `python -m llm_sizing_loadgen run plan.json --out result.json`, or the same with flags.

    python -m llm_sizing_loadgen run plan.json --out result.json
    python -m llm_sizing_loadgen run --base-url URL --model NAME (--concurrency C | --rate R) --requests N \\
        --input-tokens N --output-tokens N [--stream] [--metrics-url URL [--scrape-interval S]] --out result.json
    python -m llm_sizing_loadgen validate plan.json
    python -m llm_sizing_loadgen schema [result]     # the plan's (or the result's) JSON Schema

With a plan, only --base-url, --model, --api-key-env, --metrics-url and --scrape-interval may be given as well
(they override the plan's endpoint and metrics: the same plan, pointed at another address). A sweep writes one
result per point: `result.concurrency-4.json`, ...

Exit codes: 0 done; 2 bad arguments or plan; 3 done but the client could not keep up (client fidelity INVALID by
METRICS.md: the result is written, but it does not measure the requested load); 4 done but no request succeeded;
130 cancelled by Ctrl-C or SIGTERM (what was measured is written); 1 an unexpected failure.
A progress line is drawn on stderr (updated in place on a terminal, a line every 5 s otherwise; --quiet: none).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from llm_sizing_loadgen import TOOL_NAME, __version__
from llm_sizing_loadgen.client import Status
from llm_sizing_loadgen.faults import fault_counts
from llm_sizing_loadgen.plan import PlanError, TestPlan, plan_from_dict, plan_load
from llm_sizing_loadgen.result import result_paths, write_result
from llm_sizing_loadgen.runner import LoadRunner, Progress, RunError, RunOutcome, run_points
from llm_sizing_loadgen.schemas import plan_schema, result_schema, schema_text
from llm_sizing_loadgen.scrape import scrape_counts

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_NOTHING_OK = 4
EXIT_CANCELLED = 130
PLAN_OVERRIDES = ("base_url", "model", "api_key_env")
FLAG_FIELDS = (
    "api",
    "engine",
    "concurrency",
    "rate",
    "arrival",
    "burst_requests",
    "burst_window_s",
    "ramp_up_s",
    "requests",
    "duration",
    "input_tokens",
    "output_tokens",
    "stream",
    "ignore_eos",
    "min_tokens",
    "warmup",
    "cooldown",
    "seed",
    "timeout_connect",
    "timeout_ttft",
    "timeout_stream",
    "sweep_concurrency",
    "sweep_rate",
)


def _numbers(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"a comma-separated list of numbers (got {text!r})") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m llm_sizing_loadgen", description="LLM load generator (METRICS.md timings, streamed requests)."
    )
    parser.add_argument("--version", action="version", version=f"{TOOL_NAME} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a plan (a file, or flags) and write the result")
    run.add_argument("plan", nargs="?", help="the plan's JSON file (or give the flags below)")
    run.add_argument("--out", required=True, help="the result file (a sweep writes one per point beside it)")
    run.add_argument("--quiet", action="store_true", help="no progress line")
    run.add_argument("--save-plan", metavar="PATH", help="also write the plan the flags make (to reuse or send)")
    endpoint = run.add_argument_group("endpoint")
    endpoint.add_argument("--base-url", help="http(s)://host:port of the OpenAI-compatible server")
    endpoint.add_argument("--model", help="the served model name")
    endpoint.add_argument("--api", choices=("completions", "chat"), help="the API (default completions)")
    endpoint.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key")
    endpoint.add_argument("--engine", help="the engine and version, recorded in the result")
    endpoint.add_argument(
        "--metrics-url",
        metavar="URL",
        help="scrape this Prometheus endpoint during the run (e.g. http://host:8000/metrics)",
    )
    endpoint.add_argument(
        "--scrape-interval", type=float, metavar="S", help="seconds between scrapes, 0.2 to 60 (default 1)"
    )
    load = run.add_argument_group("load (flags mode)")
    mode = load.add_mutually_exclusive_group()
    mode.add_argument("--concurrency", type=int, help="closed loop: this many clients")
    mode.add_argument("--rate", type=float, help="open loop: requests per second")
    load.add_argument("--arrival", choices=("poisson", "constant", "burst"), help="open loop's arrival process")
    load.add_argument("--burst-requests", type=int, help="arrival burst: extra requests")
    load.add_argument("--burst-window-s", type=float, help="arrival burst: within this many seconds")
    load.add_argument("--ramp-up-s", type=float, dest="ramp_up_s", help="ramp-up in seconds")
    load.add_argument("--requests", type=int, help="max requests (a hard bound)")
    load.add_argument("--duration", type=float, help="max duration in seconds (a hard bound)")
    load.add_argument("--input-tokens", type=int, help="prompt tokens per request")
    load.add_argument("--output-tokens", type=int, help="output tokens per request (max_tokens)")
    load.add_argument(
        "--stream", action=argparse.BooleanOptionalAction, default=None, help="stream the responses (default: yes)"
    )
    load.add_argument(
        "--ignore-eos", action=argparse.BooleanOptionalAction, default=None, help="send ignore_eos (default: yes)"
    )
    load.add_argument("--min-tokens", type=int)
    load.add_argument("--warmup", type=float, help="seconds before the measurement window")
    load.add_argument("--cooldown", type=float, help="seconds cut from the window's end")
    load.add_argument("--seed", type=int)
    load.add_argument("--timeout-connect", type=float)
    load.add_argument("--timeout-ttft", type=float)
    load.add_argument("--timeout-stream", type=float)
    load.add_argument("--sweep-concurrency", type=_numbers, metavar="C1,C2,...")
    load.add_argument("--sweep-rate", type=_numbers, metavar="R1,R2,...")

    validate = commands.add_parser("validate", help="check a plan and print it with its defaults")
    validate.add_argument("plan")
    schema = commands.add_parser("schema", help="print the plan's (or the result's) JSON Schema")
    schema.add_argument("document", nargs="?", choices=("plan", "result"), default="plan")
    return parser


def plan_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The plan's JSON form from the flags mode (validated afterwards like any plan)."""
    endpoint = {
        key: value
        for key, value in (
            ("base_url", args.base_url),
            ("model", args.model),
            ("api", args.api),
            ("api_key_env", args.api_key_env),
            ("engine", args.engine),
        )
        if value is not None
    }
    load: dict[str, Any] = {}
    if args.sweep_rate is not None or args.rate is not None:
        load["mode"] = "open"
    for key, value in (
        ("concurrency", args.concurrency),
        ("rate", args.rate),
        ("arrival", args.arrival),
        ("burst_requests", args.burst_requests),
        ("burst_window_s", args.burst_window_s),
        ("ramp_up_s", args.ramp_up_s),
    ):
        if value is not None:
            load[key] = value
    requests = {
        key: value
        for key, value in (("input_tokens", args.input_tokens), ("output_tokens", args.output_tokens))
        if value is not None
    }
    bounds = {
        key: value
        for key, value in (("max_requests", args.requests), ("max_duration_s", args.duration))
        if value is not None
    }
    data: dict[str, Any] = {"endpoint": endpoint, "load": load, "requests": requests, "bounds": bounds}
    for key, value in (
        ("stream", args.stream),
        ("ignore_eos", args.ignore_eos),
        ("min_tokens", args.min_tokens),
        ("warmup_s", args.warmup),
        ("cooldown_s", args.cooldown),
        ("seed", args.seed),
    ):
        if value is not None:
            data[key] = value
    timeouts = {
        key: value
        for key, value in (
            ("connect", args.timeout_connect),
            ("ttft", args.timeout_ttft),
            ("stream", args.timeout_stream),
        )
        if value is not None
    }
    if timeouts:
        data["timeout_s"] = timeouts
    if args.sweep_concurrency is not None:
        data["sweep"] = {"concurrency": [int(v) if float(v).is_integer() else v for v in args.sweep_concurrency]}
    elif args.sweep_rate is not None:
        data["sweep"] = {"rate": args.sweep_rate}
    _metrics_flags(args, data)
    return data


def _metrics_flags(args: argparse.Namespace, data: dict[str, Any]) -> None:
    """--metrics-url and --scrape-interval into the plan's `metrics` (replacing what a plan file says)."""
    url, interval = args.metrics_url, args.scrape_interval
    if url is None and interval is None:
        return
    metrics = data.get("metrics")
    metrics = dict(metrics) if isinstance(metrics, dict) else {}
    if url is not None:
        metrics["url"] = url
    elif "url" not in metrics:
        raise PlanError([("", "--scrape-interval needs --metrics-url (or metrics.url in the plan)")])
    if interval is not None:
        metrics["interval_s"] = interval
    data["metrics"] = metrics


class ProgressLine:
    """One line on stderr: redrawn in place on a terminal, printed every `every_s` seconds otherwise."""

    def __init__(self, stream: TextIO, *, label: str = "", every_s: float = 5.0) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._label = f"{label} " if label else ""
        self._every_s = every_s
        self._last = 0.0
        self._drawn = False

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if not self._tty and now - self._last < self._every_s:
            return
        self._last = now
        line = self._label + format_progress(progress)
        if self._tty:
            self._stream.write("\r\x1b[2K" + line)
            self._drawn = True
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False


def format_progress(progress: Progress, width: int = 20) -> str:
    """`[#####...] 54% 540/1000 ok 538 err 2 | 31.2 req/s | TTFT p50 45 p99 120 ms | TPOT ... | 12.4 s`."""
    fraction = progress.fraction
    if fraction is None:
        bar = ""
    else:
        filled = round(fraction * width)
        bar = f"[{'#' * filled}{'.' * (width - filled)}] {fraction:4.0%} "
    total = f"/{progress.max_requests}" if progress.max_requests else ""

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    return (
        f"{bar}{progress.done}{total} ok {progress.ok} err {progress.failed} in-flight {progress.in_flight}"
        f" | {progress.rate_per_s:.1f} req/s | TTFT p50 {ms(progress.ttft_p50_ms)} p99 {ms(progress.ttft_p99_ms)}"
        f" ms | TPOT p50 {ms(progress.tpot_p50_ms)} p99 {ms(progress.tpot_p99_ms)} ms | {progress.elapsed_s:.1f} s"
    )


def outcome_line(outcome: RunOutcome, path: Path) -> str:
    """The one-line verdict printed after a point."""
    statuses: dict[str, int] = {}
    for record in outcome.records:
        key = (record.status or Status.INCOMPLETE_AT_END).value
        statuses[key] = statuses.get(key, 0) + 1
    counts = ", ".join(f"{key} {value}" for key, value in sorted(statuses.items())) or "no request sent"
    fidelity = outcome.fidelity
    lag = "" if fidelity.lag_p99_ms is None else f"; schedule lag p99 {fidelity.lag_p99_ms:.2f} ms"
    verdict = "" if fidelity.valid else "; INVALID: " + "; ".join(fidelity.reasons)
    label = f"{outcome.label}: " if outcome.label else ""
    side = ""
    if outcome.plan.metrics is not None:
        taken, failed = scrape_counts(outcome.scrapes)
        side += f"; scrapes {taken} ({failed} failed)"
    if outcome.plan.faults:
        run, ok, skipped = fault_counts(outcome.fault_events)
        side += f"; faults run {run} ({ok} ok" + (f", {skipped} skipped)" if skipped else ")")
    return f"{label}{counts} ({outcome.stop_reason}){lag}{side}{verdict} -> {path}"


def exit_code(outcomes: Sequence[RunOutcome]) -> int:
    if any(outcome.stop_reason == "cancelled" for outcome in outcomes):
        return EXIT_CANCELLED
    if any(not any(r.status is Status.OK for r in outcome.records) for outcome in outcomes):
        return EXIT_NOTHING_OK
    if any(not outcome.fidelity.valid for outcome in outcomes):
        return EXIT_INVALID
    return EXIT_OK


async def _run(plan: TestPlan, out: str, *, quiet: bool, stderr: TextIO) -> int:
    loop = asyncio.get_running_loop()
    labels = [label for label, _ in plan.points()]
    paths = dict(zip(labels, result_paths(out, labels), strict=True))
    current: list[LoadRunner] = []
    lines: list[ProgressLine] = []

    def interrupt() -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(signum)  # a second Ctrl-C interrupts at once
            except (NotImplementedError, RuntimeError):
                pass
        if current:
            current[-1].cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, interrupt)
        except (NotImplementedError, RuntimeError):  # not on this platform or thread
            pass

    def on_runner(runner: LoadRunner) -> None:
        if lines:
            lines[-1].close()
        current.append(runner)
        if not quiet:
            line = ProgressLine(stderr, label=runner.label)
            lines.append(line)
            runner.on_progress = line

    outcomes: list[RunOutcome] = []
    try:
        outcomes = await run_points(plan, on_runner=on_runner)
    finally:
        if lines:
            lines[-1].close()
    for outcome in outcomes:
        path = write_result(outcome, paths[outcome.label])
        stderr.write(outcome_line(outcome, path) + "\n")
    return exit_code(outcomes)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """The command line; returns the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    if args.command == "schema":
        out.write(schema_text(plan_schema() if args.document == "plan" else result_schema()))
        return EXIT_OK
    try:
        if args.command == "validate":
            plan = plan_load(args.plan)
            out.write(json.dumps(plan.to_dict(), indent=2, ensure_ascii=False) + "\n")
            return EXIT_OK
        plan = _plan_for_run(args)
        if args.save_plan:
            Path(args.save_plan).write_text(
                json.dumps(plan.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        return asyncio.run(_run(plan, args.out, quiet=args.quiet, stderr=err))
    except PlanError as error:
        err.write(
            "The plan does not fit:\n"
            + "".join(f"  {path or '(plan)'}: {message}\n" for path, message in error.problems)
        )
        return EXIT_USAGE
    except RunError as error:
        err.write(f"Cannot run: {error}\n")
        return EXIT_USAGE


def _plan_for_run(args: argparse.Namespace) -> TestPlan:
    if args.plan is None:
        return plan_from_dict(plan_from_flags(args))
    given = [name for name in FLAG_FIELDS if getattr(args, name, None) is not None]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise PlanError(
            [
                (
                    "",
                    f"give a plan file or the load flags, not both ({flags}); with a plan only "
                    "--base-url, --model, --api-key-env, --metrics-url and --scrape-interval may be "
                    "added",
                )
            ]
        )
    try:
        data = json.loads(Path(args.plan).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise PlanError([("", f"cannot read {args.plan}: {error}")]) from None
    except json.JSONDecodeError as error:
        raise PlanError(
            [("", f"{args.plan} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}")]
        ) from None
    if isinstance(data, dict) and isinstance(data.get("endpoint"), dict):
        for name in PLAN_OVERRIDES:
            value = getattr(args, name)
            if value is not None:
                data["endpoint"][name] = value
    if isinstance(data, dict):
        _metrics_flags(args, data)
    return plan_from_dict(data)


def main_exit() -> None:
    """The console script's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()

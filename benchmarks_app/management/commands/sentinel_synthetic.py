"""Write a synthetic 72-hour sentinel file (benchmarks_app.services.sentinel_synthetic) for tests and the demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks_app.services.sentinel_synthetic import simulator_gauges, synthetic_sentinel_lines


class Command(BaseCommand):
    help = (
        "Write a synthetic memory-sentinel/1 file from the simulator's GPU gauges: steady (--climb-mib-per-h 0) "
        "it passes the memory health criteria; with a slow climb (e.g. 40) it fails on the climb."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hours", type=float, default=72.0)
        parser.add_argument("--interval", type=float, default=10.0, help="seconds between samples")
        parser.add_argument("--climb-mib-per-h", type=float, default=0.0)
        parser.add_argument("--model", help="catalog model slug: take the simulator's memory for it (with --gpu)")
        parser.add_argument("--gpu", default="nvidia-h100-sxm-80gb", help="catalog GPU slug")
        parser.add_argument("--gpus", type=int, default=2)
        parser.add_argument("--no-failure", action="store_true", help="leave out the injected failure")
        parser.add_argument("--no-breaker", action="store_true", help="leave out the breaker episode")
        parser.add_argument("--host", default="gpu-sim-01")
        parser.add_argument("--start", type=float, default=None, help="POSIX seconds of the first sample")
        parser.add_argument("--out", required=True, help="the file to write")

    def handle(self, *args: Any, **options: Any) -> None:
        gauges = None
        if options["model"]:
            try:
                gauges = simulator_gauges(
                    model=options["model"], gpu=options["gpu"], gpus=options["gpus"], tp=options["gpus"]
                )
            except (KeyError, ValueError) as error:
                raise CommandError(str(error)) from None
        extra = {"start_s": options["start"]} if options["start"] is not None else {}
        path = Path(options["out"])
        with path.open("w", encoding="utf-8") as handle:
            for line in synthetic_sentinel_lines(
                hours=options["hours"],
                interval_s=options["interval"],
                climb_mib_per_h=options["climb_mib_per_h"],
                gauges=gauges,
                failure=not options["no_failure"],
                breaker=not options["no_breaker"],
                host=options["host"],
                **extra,
            ):
                handle.write(line)
        self.stdout.write(f"{path}: {path.stat().st_size:,} bytes")

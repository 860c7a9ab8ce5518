"""`manage.py benchmark import PATH [--dry-run] [--json]`: read a load-test tool's result file (vllm bench serve,
SGLang bench_serving, GuideLLM, AIPerf/GenAI-Perf, llmperf, inference-perf, our load generator) onto one footing.
With --dry-run nothing is stored and one JSON object is printed: the detected `tool`, `completed`, `failed`,
`ttft_ms`, `tpot_ms`, `itl_ms`, `e2e_ms` ({mean, p50, p90, p95, p99, ...} where the file allows),
`output_tokens_per_s`, `requests_per_s` of the file's first run, and `runs` with every run of the file. Without it
the runs are stored for `--user`'s organisation (with their per-request records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from benchmarks_app.results.detect import MAX_BYTES
from benchmarks_app.services.runs import benchmark_file_read, benchmark_import, benchmark_run_summary
from sizing.estimator.errors import SizingError
from sizing.management.arguments import fail, one_line_parser, positive_int
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.selectors.estimates import gpu_get, model_get_for_organisation
from sizing.services.estimates import organisation_for_user


class Command(BaseCommand):
    help = "Import a benchmark result file (or, with --dry-run, only read it and print its runs)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_parser(super().create_parser(prog_name, subcommand, **kwargs), "benchmark")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=("import",))
        parser.add_argument("path", type=Path, metavar="PATH")
        parser.add_argument("--dry-run", action="store_true", help="read and print; store nothing")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--user", help="store for this user's organisation (required without --dry-run)")
        parser.add_argument("--deployment", type=positive_int, help="the deployment the run belongs to (id)")
        parser.add_argument("--model", help="the model (catalog slug; default: the file's model)")
        parser.add_argument("--gpu", help="the GPU (catalog slug)")
        parser.add_argument("--gpus", type=positive_int, help="GPUs the deployment used")
        parser.add_argument("--tp", type=positive_int)
        parser.add_argument("--engine", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            size = path.stat().st_size
            if size > MAX_BYTES:
                fail("benchmark", f"{path}: the file is {size:,} bytes; the limit is {MAX_BYTES:,} bytes")
            data = path.read_bytes()
        except OSError as error:
            fail("benchmark", f"cannot read {path}: {error.strerror or error}")
        try:
            if options["dry_run"]:
                _text, fmt, runs = benchmark_file_read(name=path.name, data=data)
                summaries = [benchmark_run_summary(run) for run in runs]
                payload = {**summaries[0], "format": fmt, "run_count": len(runs), "runs": summaries}
                self._print(payload, options["json"])
                return
            stored = self._store(path, data, options)
        except SizingError as error:
            fail("benchmark", error.message)
        payload = {
            "stored": [
                {
                    "id": run.pk,
                    "name": run.name,
                    "tool": run.tool,
                    "completed": run.completed,
                    "failed": run.failed,
                    "request_count": run.request_count,
                }
                for run in stored
            ]
        }
        self._print(payload, options["json"])

    def _store(self, path: Path, data: bytes, options: dict[str, Any]) -> list[Any]:
        if not options["user"]:
            fail("benchmark", "give --user to store the run (or --dry-run to only read it)")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            fail("benchmark", f"unknown user {options['user']!r}")
        organisation = organisation_for_user(user=user)
        links: dict[str, Any] = {}
        if options["deployment"]:
            links["deployment"] = deployment_get_for_organisation(
                organisation=organisation, deployment_id=options["deployment"]
            )
            if links["deployment"] is None:
                fail("benchmark", f"unknown deployment {options['deployment']}")
        if options["model"]:
            links["model"] = model_get_for_organisation(organisation=organisation, slug=options["model"])
            if links["model"] is None:
                fail("benchmark", f"unknown model {options['model']!r}")
        if options["gpu"]:
            links["gpu"] = gpu_get(slug=options["gpu"])
            if links["gpu"] is None:
                fail("benchmark", f"unknown GPU {options['gpu']!r}")
        return benchmark_import(
            organisation=organisation,
            user=user,
            name=path.name,
            data=data,
            gpu_count=options["gpus"],
            tp=options["tp"],
            engine=options["engine"],
            **links,
        )

    def _print(self, payload: dict[str, Any], as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(payload))
            return
        for run in payload.get("runs", payload.get("stored", [])):
            self.stdout.write(
                " · ".join(
                    f"{key} {value}"
                    for key, value in run.items()
                    if key in ("tool", "label", "name", "completed", "failed", "id") and value is not None
                )
            )
            for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
                stat = run.get(key)
                if stat:
                    self.stdout.write(
                        f"  {key}: mean {stat['mean']}, p50 {stat['p50']}, p99 {stat['p99']} ({stat['source']})"
                    )

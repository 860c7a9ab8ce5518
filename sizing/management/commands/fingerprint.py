"""`manage.py fingerprint parse PATH [PATH ...] [--json]`: read pasted nvidia-smi (and friends) outputs of one
machine and print the merged fingerprint, with the findings of a plan when one is given (`--plan-gpu`,
`--plan-gpus`, `--tp`, `--image-cuda`, `--required-bytes-per-gpu`). Nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sizing.estimator.errors import SizingError
from sizing.fingerprint.checks import Plan, plan_check
from sizing.fingerprint.detect import MAX_INPUT_BYTES, decode_input
from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from sizing.fingerprint.probe import is_probe_output
from sizing.management.arguments import fail, one_line_parser, positive_int
from sizing.selectors.estimates import gpu_get
from sizing.services.fingerprints import fingerprint_from_texts


def _read(path: Path) -> str:
    """One file's text (a probe file holds several outputs: up to 4 pieces' size)."""
    limit = 4 * MAX_INPUT_BYTES
    try:
        size_bytes = path.stat().st_size
        if size_bytes > limit:  # refuse before reading a huge file into memory
            fail(
                "fingerprint",
                f"{path}: {FingerprintErrorCode.OVERSIZE_INPUT.value}: input of {size_bytes:,} "
                f"bytes exceeds the {limit:,}-byte limit",
            )
        data = path.read_bytes()
    except OSError as error:
        fail("fingerprint", f"cannot read {path}: {error.strerror or error}")
    try:
        head = data[:400].decode("utf-8", errors="replace")
        return data.decode("utf-8", errors="replace") if is_probe_output(head) else decode_input(data)
    except FingerprintError as error:
        fail("fingerprint", f"{path}: {error.code.value}: {error.message}")


class Command(BaseCommand):
    help = "Parse raw nvidia-smi / topo / CUDA / rocm-smi outputs of one machine and print its fingerprint."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return one_line_parser(super().create_parser(prog_name, subcommand, **kwargs), "fingerprint")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=("parse",), help="parse: read the files and print the fingerprint")
        parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="pasted outputs of one machine")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        plan = parser.add_argument_group("the plan to check the machine against (optional)")
        plan.add_argument("--plan-gpu", help="the GPU the plan was sized for (catalog slug)")
        plan.add_argument("--plan-gpus", type=positive_int, help="the GPU count the plan assumes")
        plan.add_argument("--tp", type=positive_int, default=1, help="the plan's tensor-parallel size")
        plan.add_argument("--image-cuda", help="the CUDA version the serving image was built for, e.g. 12.4")
        plan.add_argument(
            "--required-bytes-per-gpu",
            type=positive_int,
            help="what the memory bill needs per card (from manage.py estimate)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["paths"]
        texts = [_read(path) for path in paths]
        try:
            fingerprint = fingerprint_from_texts(texts=texts, names=[str(path) for path in paths])
        except SizingError as error:
            fail("fingerprint", error.message)
        fingerprint["findings"] += plan_check(fingerprint, self._plan(options))
        if options["json"]:
            self.stdout.write(json.dumps(fingerprint))
            return
        self._print(fingerprint)

    def _plan(self, options: dict[str, Any]) -> Plan:
        name = memory = None
        if options["plan_gpu"]:
            gpu = gpu_get(slug=options["plan_gpu"])
            if gpu is None:
                fail("fingerprint", f"unknown GPU {options['plan_gpu']!r} (run catalog_load, or see GET /api/v1/gpus/)")
            name, memory = gpu.name, gpu.memory_bytes
        return Plan(
            gpu_name=name,
            gpu_count=options["plan_gpus"],
            memory_bytes_per_gpu=memory,
            tp=options["tp"],
            image_cuda_version=options["image_cuda"],
            required_bytes_per_gpu=options["required_bytes_per_gpu"],
        )

    def _print(self, fingerprint: dict[str, Any]) -> None:
        self.stdout.write(
            f"{fingerprint['gpu_count']} GPU(s); driver {fingerprint['driver_version'] or 'unknown'}, "
            f"CUDA {fingerprint['cuda_version'] or 'unknown'}"
            + (f", toolkit {fingerprint['cuda_toolkit_version']}" if fingerprint["cuda_toolkit_version"] else "")
        )
        for gpu in fingerprint["gpus"]:
            memory = f"{gpu['memory_total_bytes'] // (1024 * 1024):,} MiB" if gpu["memory_total_bytes"] else "? MiB"
            link = (
                f", PCIe Gen{gpu['pcie_generation_current']} x{gpu['pcie_width_current']}"
                if gpu["pcie_generation_current"]
                else ""
            )
            self.stdout.write(
                f"  GPU {gpu['index']}: {gpu['name'] or 'unnamed'}, {memory}{link}"
                + (f", MIG {gpu['mig_mode']}" if gpu["mig_mode"] else "")
            )
        pairs = fingerprint["topology"]["nvlink_pairs"]
        if fingerprint["topology"]["connections"]:
            kinds = sorted({item["kind"] for item in fingerprint["topology"]["connections"]})
            self.stdout.write(f"topology: {len(pairs)} NVLink pair(s); GPU links {', '.join(kinds)}")
        host = fingerprint.get("host") or {}
        if host.get("name") or host.get("cpu_count"):
            memory = f", {host['memory_total_bytes'] / 2**30:.0f} GiB RAM" if host.get("memory_total_bytes") else ""
            container = host.get("container") or {}
            self.stdout.write(
                f"host {host.get('name') or 'unnamed'}: {host.get('cpu_count') or '?'} CPUs{memory}"
                + (
                    f", in a {container.get('runtime') or ''} container".replace("a  ", "a ")
                    if container.get("detected")
                    else ""
                )
            )
        for finding in fingerprint["findings"]:
            self.stdout.write(f"  [{finding['severity']}] {finding['code']}: {finding['message']}")
        for piece in fingerprint["pieces"]:
            problems = f": {'; '.join(piece['problems'])}" if piece["problems"] else ""
            self.stdout.write(f"{piece['name']}: {piece['kind']}{problems}")

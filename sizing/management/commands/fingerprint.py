"""`manage.py fingerprint parse PATH [PATH ...] [--json]`: read pasted nvidia-smi (and friends) outputs of one
machine and print the merged fingerprint. Nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sizing.fingerprint.detect import MAX_INPUT_BYTES, ParsedPiece, decode_input, parse_any
from sizing.fingerprint.errors import FingerprintError, FingerprintErrorCode
from sizing.fingerprint.merge import fingerprint_merge
from sizing.management.arguments import fail, one_line_parser


def _read(path: Path) -> ParsedPiece:
    try:
        size_bytes = path.stat().st_size
        if size_bytes > MAX_INPUT_BYTES:  # refuse before reading a huge file into memory
            raise FingerprintError(code=FingerprintErrorCode.OVERSIZE_INPUT,
                                   message=f"input of {size_bytes:,} bytes exceeds the {MAX_INPUT_BYTES:,}-byte limit")
        data = path.read_bytes()
    except OSError as error:
        fail("fingerprint", f"cannot read {path}: {error.strerror or error}")
    try:
        return parse_any(decode_input(data))
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

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["paths"]
        pieces = [_read(path) for path in paths]
        fingerprint = fingerprint_merge(pieces, names=[str(path) for path in paths])
        if options["json"]:
            self.stdout.write(json.dumps(fingerprint))
            return
        self._print(fingerprint)

    def _print(self, fingerprint: dict[str, Any]) -> None:
        self.stdout.write(f"{fingerprint['gpu_count']} GPU(s); driver {fingerprint['driver_version'] or 'unknown'}, "
                          f"CUDA {fingerprint['cuda_version'] or 'unknown'}"
                          + (f", toolkit {fingerprint['cuda_toolkit_version']}"
                             if fingerprint["cuda_toolkit_version"] else ""))
        for gpu in fingerprint["gpus"]:
            memory = f"{gpu['memory_total_bytes'] // (1024 * 1024):,} MiB" if gpu["memory_total_bytes"] else "? MiB"
            link = (f", PCIe Gen{gpu['pcie_generation_current']} x{gpu['pcie_width_current']}"
                    if gpu["pcie_generation_current"] else "")
            self.stdout.write(f"  GPU {gpu['index']}: {gpu['name'] or 'unnamed'}, {memory}{link}"
                              + (f", MIG {gpu['mig_mode']}" if gpu["mig_mode"] else ""))
        pairs = fingerprint["topology"]["nvlink_pairs"]
        if fingerprint["topology"]["connections"]:
            kinds = sorted({item["kind"] for item in fingerprint["topology"]["connections"]})
            self.stdout.write(f"topology: {len(pairs)} NVLink pair(s); GPU links {', '.join(kinds)}")
        for finding in fingerprint["findings"]:
            self.stdout.write(f"  [{finding['severity']}] {finding['code']}: {finding['message']}")
        for piece in fingerprint["pieces"]:
            problems = f": {'; '.join(piece['problems'])}" if piece["problems"] else ""
            self.stdout.write(f"{piece['name']}: {piece['kind']}{problems}")

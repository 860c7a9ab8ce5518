"""Services of environment fingerprints: texts (pasted outputs or a probe file) to one merged fingerprint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.estimator.errors import invalid_argument
from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.errors import FingerprintError
from sizing.fingerprint.merge import fingerprint_merge
from sizing.fingerprint.probe import is_probe_output, probe_findings, probe_pieces


def fingerprint_from_texts(*, texts: Sequence[str]) -> dict[str, Any]:
    """Parse each text (a probe file is expanded into its commands' outputs) and merge them; a text the parsers
    refuse (binary, unsafe XML, a cut probe file) is a 400 naming which one."""
    pieces, names, failures = [], [], []
    for index, text in enumerate(texts):
        try:
            if is_probe_output(text[:400]):
                _facts, entries, problems = probe_pieces(text)
                failures += problems
                pieces += [parse_any(output) for _, output in entries]
                names += [f"texts[{index}]#{name}" for name, _ in entries]
                continue
            pieces.append(parse_any(text))
            names.append(f"texts[{index}]")
        except FingerprintError as error:
            raise invalid_argument("texts", f"texts[{index}]: {error.code.value}: {error.message}") from None
    fingerprint = fingerprint_merge(pieces, names=names)
    fingerprint["findings"] += probe_findings(failures)
    return fingerprint

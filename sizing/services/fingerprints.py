"""Services of environment fingerprints: texts (pasted outputs or a probe file) to one merged fingerprint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizing.estimator.errors import invalid_argument
from sizing.fingerprint.detect import parse_any
from sizing.fingerprint.errors import FingerprintError
from sizing.fingerprint.host import host_facts, host_findings
from sizing.fingerprint.merge import fingerprint_merge
from sizing.fingerprint.probe import is_probe_output, probe_findings, probe_pieces


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def fingerprint_from_texts(*, texts: Sequence[str], names: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse each text (a probe file is expanded into its commands' outputs) and merge them; a text the parsers
    refuse (binary, unsafe XML, a cut probe file) is a 400 naming which one. `names` label the texts (file names;
    default texts[0], texts[1], ...).

    The fingerprint's `host` is the machine around the GPUs: the probe file's host name and capture time and the
    `host_facts` of its CPU/RAM/container entries (of the first probe file when several are given; all None but
    for an empty container record when only pasted outputs are given); its findings follow the parse findings."""
    pieces: list[Any] = []
    names_: list[str] = []
    failures: list[str] = []
    host: dict[str, Any] | None = None
    labels = list(names) if names is not None else [f"texts[{index}]" for index in range(len(texts))]
    for index, text in enumerate(texts):
        label = labels[index]
        try:
            if is_probe_output(text[:400]):
                facts, entries, problems = probe_pieces(text)
                failures += problems
                pieces += [parse_any(output) for _, output in entries]
                names_ += [f"{label}#{name}" for name, _ in entries]
                if host is None:
                    host = {
                        "name": _text_or_none(facts.get("host")),
                        "captured_at": _text_or_none(facts.get("captured_at")),
                        **host_facts(facts["raw"]),
                    }
                continue
            pieces.append(parse_any(text))
            names_.append(label)
        except FingerprintError as error:
            raise invalid_argument("texts", f"{label}: {error.code.value}: {error.message}") from None
    fingerprint = fingerprint_merge(pieces, names=names_)
    fingerprint["findings"] += probe_findings(failures)
    if host is None:
        host = {"name": None, "captured_at": None, **host_facts({})}
    fingerprint["host"] = host
    fingerprint["findings"] += host_findings(host, gpu_count=fingerprint["gpu_count"])
    return fingerprint

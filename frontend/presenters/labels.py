"""Labels of the server's own values, in the reader's language: engine names for running text, metric names and
what they measure, request-length kinds. The server-rendered tables use them, and each page hands them to its
script as a JSON data block ("labels", frontend/partials/page_scripts.html), so that both name a value alike."""

from __future__ import annotations

from django.utils.translation import gettext as _

from llm_sizing_loadgen.workload import LengthKind
from sizing.estimator.engines import ENGINE_TRAITS


def engine_name_map() -> dict[str, str]:
    """Short engine names for running text (the summary line, the allocation note)."""
    names = {engine.value: traits.label for engine, traits in ENGINE_TRAITS.items()}
    names["idealized"] = _("the idealized engine")
    names["transformers"] = _("transformers generate()")
    return names


def metric_labels() -> dict[str, tuple[str, str]]:
    """Canonical metric key → (short name, what it is)."""
    return {
        "ttft_ms": (_("TTFT"), _("Time to first token")),
        "tpot_ms": (_("TPOT"), _("Time per output token")),
        "itl_ms": (_("ITL"), _("Inter-token latency")),
        "e2e_ms": (_("E2E"), _("End-to-end latency")),
        "ntpot_ms": (_("NTPOT"), _("End-to-end latency per output token")),
        "input_tokens": (_("Input tokens"), _("Prompt tokens per request")),
        "output_tokens": (_("Output tokens"), _("Generated tokens per request")),
    }


def length_kind_labels() -> dict[str, str]:
    labels = {
        "fixed": _("Fixed"),
        "normal": _("Normal"),
        "lognormal": _("Lognormal"),
        "empirical": _("Empirical (histogram)"),
    }
    return {kind.value: labels.get(kind.value, kind.value) for kind in LengthKind}


def page_labels() -> dict[str, dict[str, str]]:
    """What a page script reads from its "labels" data block (frontend/static/frontend/words/labels.js)."""
    metrics = metric_labels()
    return {
        "engine_names": engine_name_map(),
        "metric_names": {key: short for key, (short, _title) in metrics.items()},
        "metric_titles": {key: title for key, (_short, title) in metrics.items()},
        "length_kinds": length_kind_labels(),
    }

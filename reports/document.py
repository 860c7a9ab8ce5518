"""The memory-commitment report as a document: from the stored `content` snapshot to HTML and to PDF bytes.

Each report version stores a JSON-safe `content` dict; the document is a pure function of it, so a signed version can
always be re-rendered identically (`render_report_pdf(content)` gives the same bytes for the same content, fonts and
WeasyPrint version). Fixed labels are translated into `content["language"]`; texts inside the content (labels of the
bill, findings, criteria details, the configuration, assumptions ...) are shown exactly as given, so whoever builds the
content writes its people-facing texts in the report's language. Every text is HTML-escaped by the template.

The content contract (all byte figures are ints in bytes; times are ISO 8601 strings with an offset, shown in UTC):

    {
     "language": "en" | "zh-hans",
     "report": {"id": int, "version": int, "title": str, "created_at": ISO, "changes": [str]  # [] for version 1
                "status": "draft" | "in_review" | "approved" | "signed"},
     "organisation": {"name": str},
     "customer": {"name": str},
     "deployment": {"id": int, "name": str, "model": {"slug": str, "parameters": int | None},
                    "gpu": {"name": str, "memory_bytes": int} | None, "gpu_count": int | None, "tp": int,
                    "engine": str, "max_model_len": int | None,
                    "slo": {"ttft_ms"?: float, "tpot_ms"?: float, "e2e_ms"?: float},
                    "workload": {"name": str, "rate_per_s": float | None} | None},
     "hardware": {"measured": False}
               | {"measured": True, "host": str, "captured_at": ISO,
                  "gpus": [{"index": int, "name": str, "memory_bytes": int}], "driver": str | None,
                  "cuda": str | None, "findings": [{"code": str, "severity": "error" | "warning" | "info",
                  "text": str}]},
     "launch_args": [str],  # the engine's arguments, one token each: ["--model", "Qwen/...", "--dtype", "bfloat16"]
     "release"?: {"engine": str, "label": str,  # the engine release the commitment holds for (absent before issue 18)
                  "version": str,  # the release whose rules the estimate follows ("0.11.0"); "" without rules
                  "requested": str,  # the plan's engine_version ("latest", "0.11.0")
                  "install": "pip" | "docker", "usage_context": "serve" | "llm",
                  "install_command": str | None},  # e.g. "pip install vllm==0.11.0"
     "memory": {"per_gpu": [{"key": str, "label": str, "bytes": int}],  # one GPU's bill, in order
                "capacity_bytes_per_gpu": int, "budget_bytes_per_gpu": int, "required_bytes_per_gpu": int,
                "kv_cache_bytes_per_gpu": int, "kv_capacity_tokens": int, "engine_reserves": bool},
     "commitment": {"peak_bytes_per_gpu": int, "kv_overflow_probability": float | None,  # 0-1
                    "load": str,   # the load the commitment holds at, in words
                    "basis": str},  # why this is the peak (reserves at start vs grows on demand, DESIGN §11)
     "protection": {"engine_budget": str, "max_input_tokens": int | None, "max_output_tokens": int | None,
                    "per_tenant_concurrency": int | None, "queue_limit": int | None,
                    "request_timeout_s": float | None,
                    "breaker": {"metric": str, "threshold": float,  # in the metric's own unit, shown as given
                                "for_s": float, "action": str, "recover_within_s": float},
                    "config": str},  # the exact configuration to apply, shown verbatim in a monospace block
     "fallback": [str],
     "evidence": {"estimate": {"source": str, "computed_at": ISO},
                  "fingerprints": [{"host": str, "captured_at": ISO, "findings": [{"code", "severity", "text"}]}],
                  "load_tests": [{"name": str, "scenario": str, "verdict": "pass" | "fail" | "invalid",
                                  "partial": bool, "finished_at": ISO | None,
                                  "figures": {"requests": int, "errors": int, "attainment": float | None,  # 0-1
                                              "recovery_s": float | None, "ttft_p99_ms": float | None,
                                              "tpot_p99_ms": float | None},
                                  "criteria": [{"code": str, "verdict": str, "detail": str}]}],
                  "monitoring": {"name": str, "verdict": "pass" | "fail" | "insufficient", "hours": float,
                                 "detail": str} | None},
     "missing": [str],  # evidence still missing; shown in a warning box (a signed report may still list some)
     "assumptions": [str], "exclusions": [str],
     "signature": {"author": str, "reviewer": str | None, "approver": str | None, "signer": str | None,
                   "signed_at": ISO | None}
    }

A version rendered for signing must already say so: status "signed" with `signature.signer` and `signed_at` filled
(the DRAFT watermark shows on every page of any other status). Sections are numbered 1-11 after the title page and
always present, so that "section 5" means the same thing in every version; an empty section says so plainly.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, override, pgettext
from weasyprint import HTML
from weasyprint.urls import URLFetcher

from reports.charts import memory_bill_svg
from sizing.estimator.units import GB, GiB, format_bytes

REPORT_SECTIONS: tuple[str, ...] = (
    "title",
    "hardware",
    "model",
    "memory",
    "commitment_peak",
    "commitment_protection",
    "commitment_fallback",
    "evidence",
    "missing",
    "assumptions",
    "history",
    "signature",
)
"""The document's sections in order, each a `<section id="section-<key>">`: the title page, then sections 1-11."""

# launch arguments that name a weight, compute or KV-cache format
_FORMAT_FLAGS: tuple[str, ...] = ("--dtype", "--quantization", "--kv-cache-dtype", "--load-format")


def render_report_html(content: Mapping[str, Any]) -> str:
    """Render the report's HTML: self-contained (inline CSS and SVG, no script, no external URL), print-ready (A4)."""
    with override(content["language"]):
        return render_to_string("reports/report.html", _context(content))


def render_report_pdf(content: Mapping[str, Any]) -> bytes:
    """Render the report as PDF bytes with WeasyPrint, offline: every URL fetch is refused.

    Fonts come from fontconfig: Noto Sans CJK SC (Debian's fonts-noto-cjk) for the text, Noto Sans Mono CJK SC or
    DejaVu Sans Mono for the configuration; they are embedded as subsets, so the text is selectable and searchable.
    """
    html = render_report_html(content)
    refuse_all = URLFetcher(allowed_protocols=())
    return HTML(string=html, url_fetcher=refuse_all).write_pdf()


# --- formatting for people -------------------------------------------------------------------------------------------


def _size(n_bytes: int) -> str:
    """Bytes as GiB and GB, two decimals each: "72.19 GiB (77.51 GB)"."""
    return gettext("%(gib)s (%(gb)s)") % {"gib": format_bytes(n_bytes, "GiB"), "gb": format_bytes(n_bytes, "GB")}


def _integer(value: int) -> str:
    """An integer with thousands separators."""
    return f"{value:,}"


def _number(value: float) -> str:
    """A float without useless digits, with thousands separators: 120.0 → "120", 1712.4 → "1,712.4"."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def _percent(fraction: float) -> str:
    """A fraction (0-1) as a percentage with two decimals; a tiny non-zero one as "< 0.01%"."""
    if 0 < fraction < 0.0001:
        return "< 0.01%"
    return f"{fraction:.2%}"


def _seconds(value: float) -> str:
    return gettext("%(value)s s") % {"value": _number(value)}


def _milliseconds(value: float) -> str:
    return gettext("%(value)s ms") % {"value": _number(value)}


def _moment(iso: str | None) -> str:
    """An ISO 8601 time in UTC to the minute ("2025-03-14 09:30 UTC"); text that does not parse is shown as given."""
    if not iso:
        return "—"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:  # the contract asks for an offset; a naive time is taken as UTC rather than guessed
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _or_not_set(value: object, formatted: str) -> str:
    return gettext("not set") if value is None else formatted


def _css_string(text: str) -> str:
    """Quote text as a CSS string; `<` is escaped too, so nothing can close the <style> element."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\A ").replace("<", "\\3C ")
    return f'"{escaped}"'


def _page_counter_css() -> SafeString:
    """The footer's `content` value, from the translated "Page %(page)s of %(pages)s" with CSS page counters."""
    pieces = re.split(r"(%\(page\)s|%\(pages\)s)", gettext("Page %(page)s of %(pages)s"))
    counters = {"%(page)s": "counter(page)", "%(pages)s": "counter(pages)"}
    css = " ".join(counters.get(piece, _css_string(piece)) for piece in pieces if piece)
    return mark_safe(css)  # noqa: S308 - every literal piece went through _css_string


# --- labels of the fixed vocabularies --------------------------------------------------------------------------------


def _status_label(status: str) -> str:
    labels = {
        "draft": gettext("Draft"),
        "in_review": gettext("In review"),
        "approved": gettext("Approved"),
        "signed": gettext("Signed"),
    }
    return labels.get(status, status)


def _severity_label(severity: str) -> str:
    labels = {
        "error": pgettext("severity", "Error"),
        "warning": pgettext("severity", "Warning"),
        "info": pgettext("severity", "Info"),
    }
    return labels.get(severity, severity)


def _verdict_label(verdict: str) -> str:
    labels = {
        "pass": gettext("Pass"),
        "fail": gettext("Fail"),
        "invalid": gettext("Invalid"),
        "insufficient": gettext("Insufficient data"),
    }
    return labels.get(verdict, verdict)


def _findings(findings: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    return [
        {
            "code": finding["code"],
            "severity": finding["severity"],
            "severity_label": _severity_label(finding["severity"]),
            "text": finding["text"],
        }
        for finding in findings
    ]


# --- sections --------------------------------------------------------------------------------------------------------


def _hardware(hardware: Mapping[str, Any]) -> dict[str, Any]:
    if not hardware.get("measured"):
        return {"measured": False}
    return {
        "measured": True,
        "rows": [
            (gettext("Host"), hardware["host"]),
            (gettext("Captured at"), _moment(hardware["captured_at"])),
            (gettext("Driver"), hardware.get("driver") or gettext("not reported")),
            ("CUDA", hardware.get("cuda") or gettext("not reported")),
        ],
        "gpus": [
            {"index": gpu["index"], "name": gpu["name"], "memory": _size(gpu["memory_bytes"])}
            for gpu in hardware["gpus"]
        ],
        "findings": _findings(hardware.get("findings", [])),
    }


def _launch_command(args: Sequence[str]) -> str:
    """The launch arguments one flag per line (with its values), shell-quoted, joined with line continuations."""
    lines: list[list[str]] = []
    for arg in args:
        if arg.startswith("-") or not lines:
            lines.append([arg])
        else:
            lines[-1].append(arg)
    return " \\\n".join(" ".join(shlex.quote(word) for word in line) for line in lines)


def _formats(args: Sequence[str]) -> str:
    """The format flags among the launch arguments ("--dtype bfloat16, --kv-cache-dtype fp8"), or the defaults."""
    found = [
        f"{arg} {args[index + 1]}"
        for index, arg in enumerate(args[:-1])
        if arg in _FORMAT_FLAGS and not args[index + 1].startswith("-")
    ]
    found += [arg for arg in args if "=" in arg and arg.split("=", 1)[0] in _FORMAT_FLAGS]
    return ", ".join(found) if found else gettext("the engine's defaults (no format flag in the launch arguments)")


def _model_rows(deployment: Mapping[str, Any], launch_args: Sequence[str]) -> list[tuple[str, str]]:
    model = deployment["model"]
    parameters = model.get("parameters")
    gpu = deployment.get("gpu")
    slo = deployment.get("slo") or {}
    workload = deployment.get("workload")
    slo_names = {"ttft_ms": gettext("TTFT"), "tpot_ms": gettext("TPOT"), "e2e_ms": gettext("E2E latency")}
    slo_text = pgettext("list separator", "; ").join(
        gettext("%(name)s ≤ %(limit)s") % {"name": slo_names[key], "limit": _milliseconds(slo[key])}
        for key in ("ttft_ms", "tpot_ms", "e2e_ms")
        if slo.get(key) is not None
    )
    if workload is None:
        workload_text = gettext("not stated")
    elif workload.get("rate_per_s") is None:
        workload_text = workload["name"]
    else:
        workload_text = gettext("%(name)s, %(rate)s requests/s") % {
            "name": workload["name"],
            "rate": _number(workload["rate_per_s"]),
        }
    return [
        (gettext("Deployment"), deployment["name"]),
        (gettext("Model"), model["slug"]),
        (
            gettext("Parameters"),
            gettext("not stated")
            if parameters is None
            else gettext("%(count)s (%(billions)s B)")
            % {"count": _integer(parameters), "billions": _billions(parameters)},
        ),
        (gettext("Formats"), _formats(launch_args)),
        (gettext("GPU"), gettext("not stated") if gpu is None else f"{gpu['name']}, {_size(gpu['memory_bytes'])}"),
        (gettext("GPU count"), _or_not_set(deployment.get("gpu_count"), str(deployment.get("gpu_count")))),
        (gettext("Tensor parallelism (TP)"), str(deployment["tp"])),
        (gettext("Serving engine"), deployment["engine"]),
        (
            gettext("Max model length"),
            _or_not_set(
                deployment.get("max_model_len"),
                gettext("%(count)s tokens") % {"count": _integer(deployment.get("max_model_len") or 0)},
            ),
        ),
        (gettext("Service-level objectives (SLO)"), slo_text or gettext("not stated")),
        (gettext("Workload profile"), workload_text),
    ]


def _release(release: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The engine release the commitment holds for, in words; None for content made before releases were stated
    (so an older signed version renders as it did)."""
    if not release:
        return None
    name = f"{release['label']} {release['version']}".strip() if release.get("version") else release["label"]
    installs = {"pip": gettext("pip package"), "docker": gettext("Docker image")}
    contexts = {"serve": gettext("OpenAI server (vllm serve)"), "llm": gettext("Python LLM class")}
    details = [installs.get(release.get("install"), release.get("install") or "")]
    if release.get("engine") == "vllm":
        details.append(contexts.get(release.get("usage_context"), release.get("usage_context") or ""))
    return {
        "name": name,
        "row": pgettext("list separator", "; ").join([name, *(detail for detail in details if detail)]),
        "statement": gettext("This commitment holds for %(engine)s %(version)s")
        % {"engine": release["label"], "version": release.get("version") or gettext("not stated")},
        "install_command": release.get("install_command") or "",
    }


def _billions(parameters: int) -> str:
    """Parameters in billions, two decimals."""
    return f"{parameters / 1e9:.2f}"


def _memory(memory: Mapping[str, Any], language: str) -> dict[str, Any]:
    capacity_bytes = memory["capacity_bytes_per_gpu"]
    budget_bytes = memory["budget_bytes_per_gpu"]
    required_bytes = memory["required_bytes_per_gpu"]

    def row(label: str, n_bytes: int, *, total: bool = False) -> dict[str, Any]:
        share = _percent(n_bytes / capacity_bytes) if capacity_bytes else "—"
        return {
            "label": label,
            "gib": format_bytes(n_bytes, "GiB"),
            "gb": format_bytes(n_bytes, "GB"),
            "bytes": _integer(n_bytes),
            "share": share,
            "total": total,
        }

    headroom_bytes = capacity_bytes - required_bytes
    return {
        "rows": [row(item["label"], item["bytes"]) for item in memory["per_gpu"]],
        "totals": [
            row(gettext("Required per GPU"), required_bytes, total=True),
            row(gettext("Engine budget"), budget_bytes, total=True),
            row(gettext("Card capacity"), capacity_bytes, total=True),
            row(gettext("Headroom"), headroom_bytes, total=True),
        ],
        "kv_text": gettext("KV cache: %(size)s per GPU, room for %(tokens)s tokens in the engine")
        % {
            "size": _size(memory["kv_cache_bytes_per_gpu"]),
            "tokens": _integer(memory["kv_capacity_tokens"]),
        },
        "fits": required_bytes <= capacity_bytes,
        "chart": mark_safe(  # noqa: S308 - memory_bill_svg escapes every text it writes
            memory_bill_svg(
                memory["per_gpu"], capacity_bytes=capacity_bytes, budget_bytes=budget_bytes, language=language
            )
        ),
    }


def _commitment(commitment: Mapping[str, Any], memory: Mapping[str, Any]) -> dict[str, Any]:
    probability = commitment.get("kv_overflow_probability")
    peak_bytes = commitment["peak_bytes_per_gpu"]
    return {
        "peak": _size(peak_bytes),
        "peak_bytes": _integer(peak_bytes),
        "statement": gettext(
            "At the stated load, the GPU memory used on each card of this deployment stays at or below %(peak)s"
        )
        % {"peak": _size(peak_bytes)},
        "probability": gettext("not computed (no simulation of the workload)")
        if probability is None
        else _percent(probability),
        "load": commitment["load"],
        "case": gettext(
            "The engine reserves its memory at start: the peak is its budget plus what lives outside the budget, "
            "and it does not grow with load; under load the risk is preemption and queueing, not running out of memory"
        )
        if memory["engine_reserves"]
        else gettext(
            "The engine takes memory on demand: the peak is the upper end of the distribution that the simulation "
            "over the workload gives, and the breaker watches GPU memory itself"
        ),
        "basis": commitment["basis"],
        "kv_capacity": gettext("%(count)s tokens") % {"count": _integer(memory["kv_capacity_tokens"])},
    }


def _protection(protection: Mapping[str, Any]) -> dict[str, Any]:
    breaker = protection["breaker"]

    def tokens(value: int | None) -> str:
        return _or_not_set(value, gettext("%(count)s tokens") % {"count": _integer(value or 0)})

    concurrency = protection.get("per_tenant_concurrency")
    queue = protection.get("queue_limit")
    timeout = protection.get("request_timeout_s")
    return {
        "rows": [
            (gettext("Engine budget"), protection["engine_budget"]),
            (gettext("Max input tokens"), tokens(protection.get("max_input_tokens"))),
            (gettext("Max output tokens"), tokens(protection.get("max_output_tokens"))),
            (
                gettext("Concurrency per tenant"),
                _or_not_set(concurrency, gettext("%(count)s requests") % {"count": _integer(concurrency or 0)}),
            ),
            (
                gettext("Queue limit"),
                _or_not_set(queue, gettext("%(count)s requests") % {"count": _integer(queue or 0)}),
            ),
            (gettext("Request timeout"), _or_not_set(timeout, _seconds(timeout or 0))),
        ],
        "breaker": gettext(
            "When %(metric)s stays above %(threshold)s for %(duration)s: %(action)s; recover within %(recovery)s"
        )
        % {
            "metric": breaker["metric"],
            "threshold": _number(breaker["threshold"]),
            "duration": _seconds(breaker["for_s"]),
            "action": breaker["action"],
            "recovery": _seconds(breaker["recover_within_s"]),
        },
        "config": protection["config"],
    }


def _load_test(test: Mapping[str, Any]) -> dict[str, Any]:
    figures = test["figures"]

    def optional(value: float | None, formatted: str) -> str:
        return "—" if value is None else formatted

    return {
        "name": test["name"],
        "scenario": test["scenario"],
        "verdict": test["verdict"],
        "verdict_label": _verdict_label(test["verdict"]),
        "meta": " · ".join(
            [
                gettext("Scenario: %(scenario)s") % {"scenario": test["scenario"]},
                gettext("Finished at: %(time)s") % {"time": _moment(test.get("finished_at"))},
            ]
            + ([gettext("Partial: the run did not complete")] if test["partial"] else [])
        ),
        "partial": test["partial"],
        "figures": [
            (gettext("Requests"), _integer(figures["requests"])),
            (gettext("Errors"), _integer(figures["errors"])),
            (
                gettext("SLO attainment"),
                optional(figures.get("attainment"), _percent(figures.get("attainment") or 0)),
            ),
            (gettext("Recovery"), optional(figures.get("recovery_s"), _seconds(figures.get("recovery_s") or 0))),
            (
                gettext("TTFT P99"),
                optional(figures.get("ttft_p99_ms"), _milliseconds(figures.get("ttft_p99_ms") or 0)),
            ),
            (
                gettext("TPOT P99"),
                optional(figures.get("tpot_p99_ms"), _milliseconds(figures.get("tpot_p99_ms") or 0)),
            ),
        ],
        "criteria": [
            {
                "code": criterion["code"],
                "verdict": criterion["verdict"],
                "verdict_label": _verdict_label(criterion["verdict"]),
                "detail": criterion["detail"],
            }
            for criterion in test.get("criteria", [])
        ],
    }


def _evidence(evidence: Mapping[str, Any]) -> dict[str, Any]:
    monitoring = evidence.get("monitoring")
    return {
        "estimate": [
            (gettext("Source"), evidence["estimate"]["source"]),
            (gettext("Computed at"), _moment(evidence["estimate"]["computed_at"])),
        ],
        "fingerprints": [
            {
                "host": fingerprint["host"],
                "captured": _moment(fingerprint["captured_at"]),
                "findings": _findings(fingerprint.get("findings", [])),
            }
            for fingerprint in evidence.get("fingerprints", [])
        ],
        "load_tests": [_load_test(test) for test in evidence.get("load_tests", [])],
        "monitoring": None
        if monitoring is None
        else {
            "name": monitoring["name"],
            "verdict": monitoring["verdict"],
            "verdict_label": _verdict_label(monitoring["verdict"]),
            "sampled": gettext("Sampled: %(hours)s h") % {"hours": _number(monitoring["hours"])},
            "detail": monitoring["detail"],
        },
    }


def _signature(signature: Mapping[str, Any], status: str) -> dict[str, Any]:
    pending = gettext("not yet")
    return {
        "rows": [
            (gettext("Author"), signature["author"]),
            (gettext("Reviewer"), signature.get("reviewer") or pending),
            (gettext("Approver"), signature.get("approver") or pending),
            (gettext("Signer"), signature.get("signer") or pending),
        ],
        "signed_at": gettext("Signed at: %(time)s")
        % {"time": _moment(signature.get("signed_at")) if signature.get("signed_at") else pending},
        "signed": status == "signed",
    }


def _context(content: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the template shows, formatted for people in the active language."""
    report = content["report"]
    status = report["status"]
    # a plan that cannot be estimated has no memory bill, commitment 1 or 2: the DRAFT says so (and lists it missing)
    memory = content.get("memory")
    commitment = _commitment(content["commitment"], memory) if memory and content.get("commitment") else None
    not_estimated = gettext("not estimated")
    release = _release(content.get("release"))
    model_rows = _model_rows(content["deployment"], content["launch_args"])
    if release is not None:  # after the engine's row
        engine_row = next((index for index, (label, _) in enumerate(model_rows)
                           if label == gettext("Serving engine")), len(model_rows) - 1)
        model_rows.insert(engine_row + 1, (gettext("Engine version"), release["row"]))
    head = gettext("Report %(id)s, version %(version)s · %(customer)s") % {
        "id": report["id"],
        "version": report["version"],
        "customer": content["customer"]["name"],
    }
    return {
        "html_lang": "zh-Hans" if content["language"] == "zh-hans" else "en",
        "sections": REPORT_SECTIONS,
        "report": report,
        "organisation": content["organisation"]["name"],
        "customer": content["customer"]["name"],
        "deployment_name": content["deployment"]["name"],
        "created": _moment(report["created_at"]),
        "status": status,
        "status_label": _status_label(status),
        "signed": status == "signed",
        "running_head": head,
        "page_counter_css": _page_counter_css(),
        "units_note": gettext("Units: 1 GiB = %(gib)s bytes, 1 GB = %(gb)s bytes. Times are in UTC.")
        % {
            "gib": _integer(GiB),
            "gb": _integer(GB),
        },
        "summary": [
            (gettext("Peak GPU memory per card"),
             _size(content["commitment"]["peak_bytes_per_gpu"]) if commitment else not_estimated),
            (gettext("Probability that KV demand exceeds the KV cache"),
             commitment["probability"] if commitment else not_estimated),
            (gettext("Evidence still missing"), _integer(len(content["missing"]))),
        ] + ([(gettext("Engine version"), release["name"])] if release is not None else []),
        "hardware": _hardware(content["hardware"]),
        "model_rows": model_rows,
        "release": release,
        "launch_command": _launch_command(content["launch_args"]),
        "memory": _memory(memory, content["language"]) if memory else None,
        "commitment": commitment,
        "protection": _protection(content["protection"]) if content.get("protection") else None,
        "fallback": content["fallback"],
        "evidence": _evidence(content["evidence"]),
        "missing": content["missing"],
        "assumptions": content["assumptions"],
        "exclusions": content["exclusions"],
        "changes": report["changes"],
        "signature": _signature(content["signature"], status),
    }

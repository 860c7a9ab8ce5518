"""The memory-commitment report as a document: from the stored `content` snapshot to HTML and to PDF bytes.

Each report version stores a JSON-safe `content` dict; the document is a pure function of it, so a signed version can
always be re-rendered identically (`render_report_pdf(content)` gives the same bytes for the same content, fonts and
WeasyPrint version). Fixed labels are translated into `content["language"]`; the people-facing texts inside the
content (labels of the bill, load, basis, fallback, checklist, waivers, assumptions ...) are shown as given, so whoever
builds the content writes them in the report's language; the configuration and launch arguments are shown verbatim.
Every text is HTML-escaped by the template.

Figures are formatted here, never taken as text: milliseconds to one decimal, seconds and hours to one (a trailing
zero dropped), GiB and GB to two, shares as percentages (one decimal between 1% and 99%, two nearer the ends),
thousands separated, counts with their plural forms (ngettext). No code of the content (criteria, findings,
checklist items) is printed: criteria are worded here from their code and numbers (an unknown code shows its English
`detail` in an English report, a generic translated line in a Chinese one); a finding shows its `text` (worded again
from `extra` when it carries one); a Chinese report leaves out, or replaces with a generic line, any system text with
no Chinese in it (a monitoring detail, the estimate's source, a finding the evidence could not word).

Times are shown in the report's zone, named in the title page's note: `report.timezone` (an IANA name) when given,
else UTC+08:00 for "zh-hans" and UTC for "en". `signature.signed_at` is shown to the second: it is the time the PDF
signature states (`reports.signing.sign_pdf(signing_time=...)`), so the page, the signature and the audit log agree.

The content contract (all byte figures are ints in bytes; times are ISO 8601 strings with an offset; a key marked
`?` is absent from content made before it existed, and the document renders that content as it did):

    {
     "language": "en" | "zh-hans",
     "report": {"id": int, "version": int, "title": str, "created_at": ISO, "changes": [str]  # [] for version 1
                "status": "draft" | "in_review" | "approved" | "signed",
                "timezone"?: str},  # IANA name ("Asia/Shanghai") the times are shown in
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
                  "text": str, "extra"?: {...}}]},  # `extra`: the numbers sizing.texts.findings words it from
     "machines"?: [{"host": str, "version": int,  # the deployment's chosen machines, each with its fingerprint
                    "captured_at": ISO,             # version (issue 20); when present, section 1 shows all of them
                    "gpus": [{"index": int, "name": str, "memory_bytes": int, "uuid": str | None}],  # instead of
                    "driver": str | None, "cuda": str | None,                                         # `hardware`
                    "findings": [{"code", "severity", "text", "extra"?}]}],  # [] = none chosen: "not measured"
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
     "confidence"?: {"peak_bytes_per_gpu": int, "probability": float | None,  # 0.999; None: no computed confidence
                     "method": "reserved_budget" | "simulated_percentile", "method_text": str,
                     "base_bytes_per_gpu": int, "margin_bytes_per_gpu": int,
                     "kv_risk": float | None,  # P(KV demand > capacity): queueing/preemption, not OOM
                     "samples": int | None,
                     "error_band": {"engine": str, "band": str, "n": int, "max_abs_error": float} | None,
                     "evidence": [{"kind": "load_test" | "memory_log" | "sentinel", "name": str, "effect": str}]},
                    # commitment 1 then reads "Peak GPU memory ≤ X GiB per GPU, confidence 99.9%", the method,
                    # its figures and the measurements that moved it
     "protection": {"engine_budget": str, "max_input_tokens": int | None, "max_output_tokens": int | None,
                    "per_tenant_concurrency": int | None, "queue_limit": int | None,
                    "concurrency_basis"?: str,  # why that concurrency, in words
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
                                              "tpot_p99_ms": float | None, "gpu_peak_bytes"?: int | None,
                                              "tolerance_bytes"?: int | None},
                                  # criteria of benchmarks_app.loadtests.scenarios.judge (client_fidelity,
                                  # fault_injected, slo_attainment, error_rate, recovery_time, memory) or checks of
                                  # benchmarks_app.results.loadverdict; `measured`/`limit` (or `value`) and `extra` are
                                  # the numbers the words are built from, `detail` the English fallback
                                  "criteria": [{"code": str, "verdict": "pass" | "fail" | "unknown", "detail": str,
                                                "measured"?: Any, "limit"?: Any, "value"?: Any, "extra"?: {...}}]}],
                  "monitoring": {"name": str, "verdict": "pass" | "fail" | "insufficient", "hours": float,
                                 "detail": str, "peak_bytes"?: int | None} | None},
     "missing": [str],  # evidence still missing; shown in a warning box (a signed report may still list some)
     "checklist"?: [{"code": str, "text": str, "state": "done" | "failed" | "missing" | "waived", "detail": str}],
                   # the evidence checklist as it stood, in section 8 (state translated: 完成/失败/缺失/豁免)
     "waivers"?: [{"item": str, "item_text": str, "reason": str, "requested_by": str, "requested_at": ISO,
                   "granted_by": str, "granted_at": ISO, "decision_reason": str}],
                   # granted waivers, under "Exceptions" / "例外" in section 8; absent or [] → "None" / "无"
     "acceptance"?: {"health_report": {"id": int, "verdict": "pass" | "fail", "sha256": str, "signed_at": ISO,
                                       "coverage_hours": float} | None,
                     "text": str},  # the final acceptance (验收), section 12, on the memory health report
     "assumptions": [str], "exclusions": [str],
     "signature": {"author": str, "reviewer": str | None, "approver": str | None, "signer": str | None,
                   "signed_at": ISO | None}
    }

A version rendered for signing must already say so: status "signed" with `signature.signer` and `signed_at` filled
(the DRAFT watermark shows on every page of any other status). Sections are numbered 1-11 after the title page and
always present, so that "section 5" means the same thing in every version; an empty section says so plainly. Content
of issue 20 and later adds section 12 (final acceptance) after the signatures and, inside section 8, the evidence
checklist and the exceptions; the chosen machines replace section 1's single host and the confidence leads section 4,
so no section number moves. Every page carries "Page X of Y" ("第 X 页 / 共 Y 页"). Code blocks (launch command,
configuration, install line) are set unwrapped in a size that fits their longest line (8 pt down to 5 pt), so no token
is split and copying them gives the exact text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext, override, pgettext
from weasyprint import HTML
from weasyprint.urls import URLFetcher

from reports.charts import memory_bill_svg, percent_text
from sizing.estimator.units import GB, GiB
from sizing.texts.findings import finding_text

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
    "acceptance",
)
"""The document's sections in order, each a `<section id="section-<key>">`: the title page, then sections 1-12
(section 12, the final acceptance, only for content that carries `acceptance`)."""

# launch arguments that name a weight, compute or KV-cache format
_FORMAT_FLAGS: tuple[str, ...] = ("--dtype", "--quantization", "--kv-cache-dtype", "--load-format")
CHINA_STANDARD_TIME = timezone(timedelta(hours=8))  # zh-hans reports: UTC+08:00 (no daylight saving)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
# the printable width of a code block (A4 210 mm - 2 × 16 mm page margins - 2 × 3 mm padding - borders), in points,
# and the advance of one monospace character in em (DejaVu Sans Mono 0.602; Noto Sans Mono CJK's Latin 0.5)
_CODE_WIDTH_PT = 170.0 / 25.4 * 72
_MONO_ADVANCE_EM = 0.61
_CODE_FONT_PT = (8.0, 5.0)  # the largest and smallest size a code block is set in


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


def _decimal(value: float, places: int, *, strip: bool = False) -> str:
    """A number rounded to `places` decimals with thousands separators; `strip` drops trailing zeros ("30", "41.2")."""
    text = f"{float(value):,.{places}f}"
    if strip and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _gib(n_bytes: float) -> str:
    """Bytes as GiB, two decimals: "72.19 GiB"."""
    return gettext("%(value)s GiB") % {"value": _decimal(n_bytes / GiB, 2)}


def _mib_or_gib(n_bytes: float) -> str:
    """A small tolerance as MiB ("1 MiB"), a larger one as GiB."""
    if n_bytes < GiB:
        return gettext("%(value)s MiB") % {"value": _decimal(n_bytes / 2**20, 1, strip=True)}
    return _gib(n_bytes)


def _gb(n_bytes: float) -> str:
    return gettext("%(value)s GB") % {"value": _decimal(n_bytes / GB, 2)}


def _size(n_bytes: float) -> str:
    """Bytes as GiB and GB, two decimals each: "72.19 GiB (77.51 GB)"."""
    return gettext("%(gib)s (%(gb)s)") % {"gib": _gib(n_bytes), "gb": _gb(n_bytes)}


def _integer(value: int) -> str:
    """An integer with thousands separators."""
    return f"{int(value):,}"


def _number(value: float) -> str:
    """A figure given in its own unit (a threshold, a rate): at most 2 decimals, trailing zeros dropped."""
    return _decimal(value, 2, strip=True)


def _percent(fraction: float) -> str:
    """A fraction (0-1) as a percentage ("98.7%", "0.31%", "99.9%"): `reports.charts.percent_text`."""
    return percent_text(fraction)


def _seconds(value: float) -> str:
    """Seconds, one decimal, trailing zero dropped: "41.2 s", "30 s"."""
    return gettext("%(value)s s") % {"value": _decimal(value, 1, strip=True)}


def _milliseconds(value: float) -> str:
    """Milliseconds, one decimal: "1,115.5 ms"."""
    return gettext("%(value)s ms") % {"value": _decimal(value, 1)}


def _limit_milliseconds(value: float) -> str:
    """A limit in milliseconds, as it was set: "2,000 ms", "80 ms", "1,500.5 ms"."""
    return gettext("%(value)s ms") % {"value": _decimal(value, 1, strip=True)}


def _hours(value: float) -> str:
    return gettext("%(value)s h") % {"value": _decimal(value, 1, strip=True)}


def _tokens(count: int) -> str:
    return ngettext("%(count)s token", "%(count)s tokens", count) % {"count": _integer(count)}


def _requests(count: int) -> str:
    return ngettext("%(count)s request", "%(count)s requests", count) % {"count": _integer(count)}


def _report_zone(content: Mapping[str, Any]) -> tuple[tzinfo, str]:
    """The zone times are shown in, and its name for the note: `report.timezone` (an IANA name) when the content
    carries one, else UTC+08:00 for a Chinese report and UTC for an English one."""
    name = (content.get("report") or {}).get("timezone")
    if name:
        try:
            return ZoneInfo(str(name)), str(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass  # an unknown zone name falls back to the language's zone rather than failing a signed version
    if content["language"] == "zh-hans":
        return CHINA_STANDARD_TIME, "UTC+08:00"
    return UTC, "UTC"


def _offset(moment: datetime) -> str:
    """ "UTC" or "UTC+08:00" for a moment's own offset."""
    offset = moment.utcoffset() or timedelta(0)
    if not offset:
        return "UTC"
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _moment(iso: str | None, zone: tzinfo, *, seconds: bool = False) -> str:
    """An ISO 8601 time in the report's zone, to the minute ("2025-03-14 17:30 UTC+08:00"), or to the second; text
    that does not parse is shown as given."""
    if not iso:
        return "—"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:  # the contract asks for an offset; a naive time is taken as UTC rather than guessed
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(zone)
    return local.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + " " + _offset(local)


def _or_not_set(value: object, formatted: str) -> str:
    return gettext("not set") if value is None else formatted


def _has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _in_language(text: str | None, language: str) -> str | None:
    """A text of the content when it is in the report's language: a Chinese report leaves out a text with no Chinese
    in it (an English sentence the system wrote), so no English fragment reaches it."""
    if not text:
        return None
    if language == "zh-hans" and not _has_cjk(text):
        return None
    return text


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


def _code_block(text: str) -> dict[str, Any]:
    """A verbatim block (configuration, launch command) set small enough that its longest line fits the page
    unwrapped, so no token is split and copying it gives the exact text; only a line longer than the smallest size
    allows wraps (at the page edge, `wrap`)."""
    longest = max((len(line) for line in text.splitlines()), default=0)
    largest, smallest = _CODE_FONT_PT
    fitting = _CODE_WIDTH_PT / (_MONO_ADVANCE_EM * longest) if longest else largest
    size = max(smallest, min(largest, fitting))
    return {"text": text, "font_pt": f"{size:.2f}", "wrap": fitting < smallest}


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
        "unknown": gettext("Not measured"),
    }
    return labels.get(verdict, gettext("Not measured"))


def _state_label(state: str) -> str:
    labels = {
        "done": pgettext("checklist state", "Done"),
        "failed": pgettext("checklist state", "Failed"),
        "missing": pgettext("checklist state", "Missing"),
        "waived": pgettext("checklist state", "Waived"),
    }
    return labels.get(state, labels["missing"])


def _findings(findings: Sequence[Mapping[str, Any]], language: str) -> list[dict[str, str]]:
    """Each finding's sentence in the report's language; its code never shows. A finding that carries the numbers
    (`extra`) is worded again here; a Chinese report gives a finding with no Chinese wording a generic line."""
    rows = []
    for finding in findings:
        text = str(finding.get("text") or "")
        if isinstance(finding.get("extra"), Mapping):
            text = finding_text({"code": finding.get("code"), "message": text, "extra": finding["extra"]})
        shown = _in_language(text, language) or gettext(
            "A finding of the fingerprint check that has no wording in this language yet; the service's page of "
            "this machine shows it"
        )
        severity = str(finding.get("severity") or "info")
        rows.append({"severity": severity, "severity_label": _severity_label(severity), "text": shown})
    return rows


# --- sections --------------------------------------------------------------------------------------------------------


def _gpu_rows(gpus: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "index": gpu.get("index", ""),
            "name": gpu.get("name") or "—",
            "memory": _size(gpu.get("memory_bytes") or 0),
            "uuid": gpu.get("uuid") or "",
        }
        for gpu in gpus
    ]


def _hardware(hardware: Mapping[str, Any], zone: tzinfo, language: str) -> dict[str, Any]:
    if not hardware.get("measured"):
        return {"measured": False}
    return {
        "measured": True,
        "rows": [
            (gettext("Host"), hardware["host"]),
            (gettext("Captured at"), _moment(hardware["captured_at"], zone)),
            (gettext("Driver"), hardware.get("driver") or gettext("not reported")),
            ("CUDA", hardware.get("cuda") or gettext("not reported")),
        ],
        "gpus": _gpu_rows(hardware["gpus"]),
        "findings": _findings(hardware.get("findings", []), language),
    }


def _machines(machines: Sequence[Mapping[str, Any]], zone: tzinfo, language: str) -> list[dict[str, Any]]:
    """The deployment's chosen machines, each a host with the fingerprint version the report rests on."""
    return [
        {
            "title": gettext("%(host)s, fingerprint version %(version)s")
            % {"host": machine["host"], "version": machine.get("version", 1)},
            "rows": [
                (gettext("Captured at"), _moment(machine.get("captured_at"), zone)),
                (gettext("Driver"), machine.get("driver") or gettext("not reported")),
                ("CUDA", machine.get("cuda") or gettext("not reported")),
                (gettext("GPU count"), _integer(len(machine.get("gpus") or []))),
            ],
            "gpus": _gpu_rows(machine.get("gpus") or []),
            "uuids": any(gpu.get("uuid") for gpu in machine.get("gpus") or []),
            "findings": _findings(machine.get("findings") or [], language),
        }
        for machine in machines
    ]


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
        gettext("%(name)s ≤ %(limit)s") % {"name": slo_names[key], "limit": _limit_milliseconds(slo[key])}
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
    gpu_count = deployment.get("gpu_count")
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
        (
            gettext("GPU"),
            gettext("not stated")
            if gpu is None
            else gettext("%(name)s, %(size)s") % {"name": gpu["name"], "size": _size(gpu["memory_bytes"])},
        ),
        (gettext("GPU count"), _or_not_set(gpu_count, _integer(gpu_count or 0))),
        (gettext("Tensor parallelism (TP)"), _integer(deployment["tp"])),
        (gettext("Serving engine"), deployment["engine"]),
        (
            gettext("Max model length"),
            _or_not_set(deployment.get("max_model_len"), _tokens(deployment.get("max_model_len") or 0)),
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
    install_command = release.get("install_command") or ""
    return {
        "name": name,
        "row": pgettext("list separator", "; ").join([name, *(detail for detail in details if detail)]),
        "statement": gettext("This commitment holds for %(engine)s %(version)s")
        % {"engine": release["label"], "version": release.get("version") or gettext("not stated")},
        "install": _code_block(install_command) if install_command else None,
    }


def _billions(parameters: int) -> str:
    """Parameters in billions, two decimals."""
    return _decimal(parameters / 1e9, 2)


def _memory(memory: Mapping[str, Any], language: str) -> dict[str, Any]:
    capacity_bytes = memory["capacity_bytes_per_gpu"]
    budget_bytes = memory["budget_bytes_per_gpu"]
    required_bytes = memory["required_bytes_per_gpu"]

    def row(label: str, n_bytes: int, *, total: bool = False) -> dict[str, Any]:
        share = _percent(n_bytes / capacity_bytes) if capacity_bytes else "—"
        return {
            "label": label,
            "gib": _decimal(n_bytes / GiB, 2),
            "gb": _decimal(n_bytes / GB, 2),
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
        "kv_text": gettext("KV cache: %(size)s per GPU, room for %(tokens)s in the engine")
        % {
            "size": _size(memory["kv_cache_bytes_per_gpu"]),
            "tokens": _tokens(memory["kv_capacity_tokens"]),
        },
        "fits": required_bytes <= capacity_bytes,
        "chart": mark_safe(  # noqa: S308 - memory_bill_svg escapes every text it writes
            memory_bill_svg(
                memory["per_gpu"], capacity_bytes=capacity_bytes, budget_bytes=budget_bytes, language=language
            )
        ),
    }


def _confidence(confidence: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Commitment 1 with its confidence: "Peak GPU memory ≤ X GiB per GPU, confidence 99.9%", the method, its
    figures and the evidence that moved it; None for content made before issue 20."""
    if not confidence:
        return None
    peak_bytes = confidence["peak_bytes_per_gpu"]
    probability = confidence.get("probability")
    statement = (
        gettext("Peak GPU memory ≤ %(peak)s per GPU, confidence %(probability)s")
        % {"peak": _gib(peak_bytes), "probability": _percent(probability)}
        if probability is not None
        else gettext("Peak GPU memory ≤ %(peak)s per GPU (no computed confidence)") % {"peak": _gib(peak_bytes)}
    )
    methods = {
        "reserved_budget": gettext("The engine's reserved budget plus a margin for what lives outside it"),
        "simulated_percentile": gettext("A percentile of the simulated memory demand over the workload"),
    }
    rows = [
        (gettext("Method"), methods.get(str(confidence.get("method")), gettext("not stated"))),
        (gettext("Model estimate"), _size(confidence.get("base_bytes_per_gpu") or 0)),
        (gettext("Margin"), _size(confidence.get("margin_bytes_per_gpu") or 0)),
    ]
    if confidence.get("samples") is not None:
        count = int(confidence["samples"])
        rows.append(
            (
                gettext("Simulated samples"),
                ngettext("%(count)s sample", "%(count)s samples", count) % {"count": _integer(count)},
            )
        )
    band = confidence.get("error_band")
    if band:
        count = int(band.get("n") or 0)
        logs = ngettext("%(count)s boot log", "%(count)s boot logs", count) % {"count": _integer(count)}
        band_name = gettext("all releases") if band.get("band") in ("all", "") else band["band"]
        rows.append(
            (
                gettext("Measured error"),
                gettext("%(engine)s %(band)s: %(logs)s, largest error %(error)s")
                % {
                    "engine": band["engine"],
                    "band": band_name,
                    "logs": logs,
                    "error": _percent(abs(float(band.get("max_abs_error") or 0.0))),
                },
            )
        )
    kv_risk = confidence.get("kv_risk")
    evidence = []
    for item in confidence.get("evidence") or []:
        kinds = {
            "load_test": gettext("Load test"),
            "memory_log": gettext("Memory log"),
            "sentinel": gettext("Memory health report"),
        }
        evidence.append(
            gettext("%(kind)s “%(name)s”: %(effect)s")
            % {
                "kind": kinds.get(str(item.get("kind")), gettext("Measurement")),
                "name": item.get("name") or "",
                "effect": item.get("effect") or "",
            }
        )
    return {
        "statement": statement,
        "method_text": confidence.get("method_text") or "",
        "rows": rows,
        "kv_risk": None
        if kv_risk is None
        else gettext(
            "Probability that KV demand exceeds the KV cache: %(p)s; that is the risk of queueing and preemption, "
            "not of running out of memory"
        )
        % {"p": _percent(float(kv_risk))},
        "evidence": evidence,
        "probability": None if probability is None else _percent(probability),
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
        "kv_capacity": _tokens(memory["kv_capacity_tokens"]),
    }


# the breaker's action that the evidence writes in English (reports.evidence.BREAKER_KV), worded here
_BREAKER_ACTION_KV = "refuse new requests (HTTP 503) until it falls below the threshold"


def _protection(protection: Mapping[str, Any], language: str) -> dict[str, Any]:
    breaker = protection["breaker"]

    def tokens(value: int | None) -> str:
        return _or_not_set(value, _tokens(value or 0))

    concurrency = protection.get("per_tenant_concurrency")
    queue = protection.get("queue_limit")
    timeout = protection.get("request_timeout_s")
    action = str(breaker["action"])
    if action == _BREAKER_ACTION_KV:
        action = gettext("refuse new requests (HTTP 503) until it falls below the threshold")
    action = _in_language(action, language) or gettext("refuse new requests")
    engine_budget = str(protection["engine_budget"])
    if not engine_budget.startswith("-"):  # a flag is shown as it is; a sentence only in the report's language
        engine_budget = _in_language(engine_budget, language) or gettext(
            "the engine's memory limit (no flag: it grows on demand)"
        )
    return {
        "rows": [
            (gettext("Engine budget"), engine_budget),
            (gettext("Max input tokens"), tokens(protection.get("max_input_tokens"))),
            (gettext("Max output tokens"), tokens(protection.get("max_output_tokens"))),
            (gettext("Concurrency per tenant"), _or_not_set(concurrency, _requests(concurrency or 0))),
            (gettext("Queue limit"), _or_not_set(queue, _requests(queue or 0))),
            (gettext("Request timeout"), _or_not_set(timeout, _seconds(timeout or 0))),
        ],
        "concurrency_basis": _in_language(protection.get("concurrency_basis"), language),
        "breaker": gettext(
            "When %(metric)s stays above %(threshold)s for %(duration)s: %(action)s; recover within %(recovery)s"
        )
        % {
            "metric": breaker["metric"],
            "threshold": _number(breaker["threshold"]),
            "duration": _seconds(breaker["for_s"]),
            "action": action,
            "recovery": _seconds(breaker["recover_within_s"]),
        },
        "config": _code_block(protection["config"]),
    }


# --- load-test criteria, worded from their codes and figures --------------------------------------------------------


def _criterion_name(code: str) -> str:
    names = {
        # benchmarks_app.loadtests.scenarios.CriterionCode
        "client_fidelity": gettext("Client fidelity"),
        "fault_injected": gettext("Failure injected"),
        "slo_attainment": gettext("SLO attainment"),
        "error_rate": gettext("Error rate"),
        "recovery_time": gettext("Time to recover"),
        "memory": gettext("Memory verdict"),
        # benchmarks_app.results.loadverdict.CheckCode
        "peak_within_commitment": gettext("Peak within the commitment"),
        "kv_below_full": gettext("KV cache never full"),
        "no_preemption": gettext("No preemption"),
        "no_preemption_storm": gettext("No preemption"),
        "no_oom": gettext("No out-of-memory event"),
        "no_restart": gettext("No restart"),
    }
    return names.get(code, gettext("Other criterion"))


def _figure(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _criterion_text(criterion: Mapping[str, Any], test_figures: Mapping[str, Any]) -> str | None:
    """A criterion of a load test in the report's language, from its code, its `measured` (or a memory check's
    `value`) and `limit`, its `extra` numbers (benchmarks_app.results.loadverdict) and the test's figures; None for a code
    not known here."""
    code, state = str(criterion.get("code")), str(criterion.get("verdict"))
    extra = criterion.get("extra") if isinstance(criterion.get("extra"), Mapping) else {}
    figures = {**test_figures, **extra}
    measured = _figure(criterion.get("measured", criterion.get("value")))
    limit = _figure(criterion.get("limit"))
    passed, failed = state == "pass", state == "fail"
    if code == "client_fidelity":
        if passed:
            return gettext("The client sent the load it was asked to")
        if failed:
            return gettext(
                "The client could not send the load it was asked to: this is not a measurement of the server"
            )
        return gettext("The client fidelity is not known for this run")
    if code == "fault_injected":
        if not passed:
            return gettext("No failure was injected: the test does not test a failure")
        if measured is None:
            return gettext("A failure was injected")
        count = int(measured)
        return ngettext("%(count)s failure injected", "%(count)s failures injected", count) % {"count": _integer(count)}
    if code == "slo_attainment":
        share = measured if measured is not None else _figure(figures.get("attainment"))
        if share is None:
            return gettext("No request finished: the SLO attainment was not measured")
        text = gettext("%(share)s of the requests met every SLO") % {"share": _percent(share)}
        if limit is not None:
            text = gettext("%(share)s of the requests met every SLO; at least %(limit)s required") % {
                "share": _percent(share),
                "limit": _percent(limit),
            }
        return text
    if code == "error_rate":
        requests, errors = _figure(figures.get("requests")), _figure(figures.get("errors"))
        share = measured if measured is not None else (errors / requests if requests and errors is not None else None)
        if share is None:
            return gettext("No request finished: the error rate was not measured")
        if limit is None:
            return gettext("%(share)s of the requests failed") % {"share": _percent(share)}
        return gettext("%(share)s of the requests failed; at most %(limit)s allowed") % {
            "share": _percent(share),
            "limit": _percent(limit),
        }
    if code == "recovery_time":
        seconds = measured if measured is not None else _figure(figures.get("recovery_s"))
        if seconds is None:
            text = gettext("The endpoint had not recovered when the test ended")
        else:
            text = gettext("Requests succeeded again %(seconds)s after the failure") % {"seconds": _seconds(seconds)}
        if limit is not None:
            text = gettext("%(text)s; recovery within %(limit)s required") % {"text": text, "limit": _seconds(limit)}
        return text
    peak = _figure(figures.get("gpu_peak_bytes"))
    if code in ("memory", "peak_within_commitment"):
        if state not in ("pass", "fail"):
            return gettext("The memory was not measured: no metrics were scraped, or none could be read")
        if peak is None:
            return gettext("The memory checks passed") if passed else gettext("A memory check failed")
        values = {"peak": _gib(peak)}
        tolerance = _figure(figures.get("tolerance_bytes"))
        if tolerance:
            values["peak"] = gettext("%(peak)s (± %(tolerance)s)") % {
                "peak": _gib(peak),
                "tolerance": _mib_or_gib(tolerance),
            }
        committed = _figure(figures.get("committed_bytes_per_gpu"))
        if code == "peak_within_commitment" and committed is not None:
            values["committed"] = _gib(committed)
            if passed:
                return gettext("GPU memory peaked at %(peak)s, within the committed %(committed)s per GPU") % values
            return gettext("GPU memory peaked at %(peak)s, above the committed %(committed)s per GPU") % values
        if passed:
            return gettext("The memory checks passed: GPU memory peaked at %(peak)s") % values
        return gettext("A memory check failed: GPU memory peaked at %(peak)s") % values
    if code == "kv_below_full":
        kv_peak = _figure(figures.get("kv_peak"))
        if passed and kv_peak is not None:
            return gettext("KV-cache usage peaked at %(peak)s") % {"peak": _percent(kv_peak)}
        return {"pass": gettext("The KV cache never filled"), "fail": gettext("The KV cache was full")}.get(
            state, gettext("No KV-cache usage was scraped")
        )
    if code in ("no_preemption", "no_preemption_storm"):
        if state not in ("pass", "fail"):
            return gettext("No preemption counter was scraped")
        if measured is not None and measured > 0:
            count = int(measured)
            return ngettext("%(count)s preemption", "%(count)s preemptions", count) % {"count": _integer(count)}
        return gettext("No preemption") if passed else gettext("Requests were preempted")
    if code == "no_oom":
        events = _figure(figures.get("events"))
        if failed and events:
            count = int(events)
            return ngettext("%(count)s out-of-memory or XID event", "%(count)s out-of-memory or XID events", count) % {
                "count": _integer(count)
            }
        return {
            "pass": gettext("No out-of-memory event and no XID error"),
            "fail": gettext("An out-of-memory event or an XID error occurred"),
        }.get(state, gettext("Nothing could have shown an out-of-memory event: no GPU memory series and no events"))
    if code == "no_restart":
        if state not in ("pass", "fail"):
            return gettext("Too few server samples to see a restart")
        if measured:
            count = int(measured)
            return ngettext("%(count)s server restart", "%(count)s server restarts", count) % {"count": _integer(count)}
        return gettext("No server restart") if passed else gettext("The server restarted")
    return None


def _criterion(criterion: Mapping[str, Any], figures: Mapping[str, Any], language: str) -> dict[str, str]:
    code, verdict = str(criterion.get("code")), str(criterion.get("verdict"))
    text = _criterion_text(criterion, figures)
    if text is None:  # a code not known here: its English detail in an English report only
        detail = str(criterion.get("detail") or "")
        text = (detail if language == "en" and detail else None) or gettext(
            "A further criterion of the load test: %(verdict)s"
        ) % {"verdict": _verdict_label(verdict)}
    return {"name": _criterion_name(code), "verdict": verdict, "verdict_label": _verdict_label(verdict), "text": text}


def _load_test(test: Mapping[str, Any], zone: tzinfo, language: str) -> dict[str, Any]:
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
                gettext("Scenario: %(scenario)s") % {"scenario": _scenario_label(test["scenario"])},
                gettext("Finished at: %(time)s") % {"time": _moment(test.get("finished_at"), zone)},
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
        ]
        + (
            [(gettext("GPU memory peak"), _gib(figures["gpu_peak_bytes"]))]
            if _figure(figures.get("gpu_peak_bytes")) is not None
            else []
        ),
        "criteria": [_criterion(criterion, figures, language) for criterion in test.get("criteria", [])],
    }


def _scenario_label(scenario: str) -> str:
    labels = {
        "pulse": gettext("Pulse"),
        "long_tail": gettext("Long tail"),
        "failure": gettext("Failure injection"),
        "steady": gettext("Steady load"),
        "custom": gettext("Custom"),
    }
    return labels.get(scenario, gettext("Custom"))


def _evidence(evidence: Mapping[str, Any], deployment: Mapping[str, Any], zone: tzinfo, language: str) -> dict:
    monitoring = evidence.get("monitoring")
    source = _in_language(str(evidence["estimate"]["source"]), language) or gettext(
        "the %(engine)s memory model of this service"
    ) % {"engine": deployment.get("engine") or ""}
    monitoring_view = None
    if monitoring is not None:
        sampled = gettext("Sampled: %(hours)s") % {"hours": _hours(monitoring["hours"])}
        if _figure(monitoring.get("peak_bytes")) is not None:
            sampled += " · " + gettext("GPU memory peak: %(peak)s") % {"peak": _gib(monitoring["peak_bytes"])}
        monitoring_view = {
            "name": monitoring["name"],
            "verdict": monitoring["verdict"],
            "verdict_label": _verdict_label(monitoring["verdict"]),
            "sampled": sampled,
            "detail": _in_language(str(monitoring.get("detail") or ""), language) or "",
        }
    return {
        "estimate": [
            (gettext("Source"), source),
            (gettext("Computed at"), _moment(evidence["estimate"]["computed_at"], zone)),
        ],
        "fingerprints": [
            {
                "host": fingerprint["host"],
                "captured": _moment(fingerprint["captured_at"], zone),
                "findings": _findings(fingerprint.get("findings", []), language),
            }
            for fingerprint in evidence.get("fingerprints", [])
        ],
        "load_tests": [_load_test(test, zone, language) for test in evidence.get("load_tests", [])],
        "monitoring": monitoring_view,
    }


def _checklist(checklist: Sequence[Mapping[str, Any]] | None) -> list[dict[str, str]] | None:
    if checklist is None:
        return None
    return [
        {
            "text": str(item.get("text") or ""),
            "state": str(item.get("state") or "missing"),
            "state_label": _state_label(str(item.get("state") or "missing")),
            "detail": str(item.get("detail") or ""),
        }
        for item in checklist
    ]


def _waivers(waivers: Sequence[Mapping[str, Any]] | None, zone: tzinfo) -> list[dict[str, Any]]:
    """The granted waivers (exceptions): what, who asked and when, who granted and when, and why."""
    return [
        {
            "title": str(waiver.get("item_text") or ""),
            "rows": [
                (gettext("Reason given"), str(waiver.get("reason") or "—")),
                (
                    gettext("Requested by"),
                    gettext("%(name)s, %(time)s")
                    % {"name": waiver.get("requested_by") or "—", "time": _moment(waiver.get("requested_at"), zone)},
                ),
                (
                    gettext("Granted by"),
                    gettext("%(name)s, %(time)s")
                    % {"name": waiver.get("granted_by") or "—", "time": _moment(waiver.get("granted_at"), zone)},
                ),
                (gettext("Reason for granting"), str(waiver.get("decision_reason") or "—")),
            ],
        }
        for waiver in waivers or []
    ]


def _acceptance(acceptance: Mapping[str, Any] | None, zone: tzinfo) -> dict[str, Any] | None:
    if acceptance is None:
        return None
    health = acceptance.get("health_report")
    rows = None
    if health:
        rows = [
            (gettext("Memory health report"), gettext("No. %(id)s") % {"id": health["id"]}),
            (gettext("Verdict"), _verdict_label(str(health.get("verdict")))),
            (gettext("Coverage"), _hours(float(health.get("coverage_hours") or 0.0))),
            (gettext("Signed at"), _moment(health.get("signed_at"), zone)),
        ]
    return {
        "text": str(acceptance.get("text") or ""),
        "rows": rows,
        "sha256": str(health.get("sha256") or "") if health else "",
        "verdict": str(health.get("verdict")) if health else "",
    }


def _signature(signature: Mapping[str, Any], status: str, zone: tzinfo) -> dict[str, Any]:
    pending = gettext("not yet")
    signed_at = signature.get("signed_at")
    return {
        "rows": [
            (gettext("Author"), signature["author"]),
            (gettext("Reviewer"), signature.get("reviewer") or pending),
            (gettext("Approver"), signature.get("approver") or pending),
            (gettext("Signer"), signature.get("signer") or pending),
        ],
        # to the second: the time the PDF signature states (reports.signing.sign_pdf's signing_time)
        "signed_at": gettext("Signed at: %(time)s")
        % {"time": _moment(signed_at, zone, seconds=True) if signed_at else pending},
        "signed": status == "signed",
    }


def _context(content: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the template shows, formatted for people in the active language."""
    language = content["language"]
    zone, zone_name = _report_zone(content)
    report = content["report"]
    status = report["status"]
    # a plan that cannot be estimated has no memory bill, commitment 1 or 2: the DRAFT says so (and lists it missing)
    memory = content.get("memory")
    commitment = _commitment(content["commitment"], memory) if memory and content.get("commitment") else None
    confidence = _confidence(content.get("confidence")) if commitment else None
    not_estimated = gettext("not estimated")
    release = _release(content.get("release"))
    model_rows = _model_rows(content["deployment"], content["launch_args"])
    if release is not None:  # after the engine's row
        engine_row = next(
            (index for index, (label, _) in enumerate(model_rows) if label == gettext("Serving engine")),
            len(model_rows) - 1,
        )
        model_rows.insert(engine_row + 1, (gettext("Engine version"), release["row"]))
    head = gettext("Report %(id)s, version %(version)s · %(customer)s") % {
        "id": report["id"],
        "version": report["version"],
        "customer": content["customer"]["name"],
    }
    machines = content.get("machines")
    summary = [
        (
            gettext("Peak GPU memory per card"),
            _size(content["commitment"]["peak_bytes_per_gpu"]) if commitment else not_estimated,
        ),
    ]
    if confidence is not None and confidence["probability"] is not None:
        summary.append((gettext("Confidence"), confidence["probability"]))
    summary += [
        (
            gettext("Probability that KV demand exceeds the KV cache"),
            commitment["probability"] if commitment else not_estimated,
        ),
        (gettext("Evidence still missing"), _integer(len(content["missing"]))),
    ] + ([(gettext("Engine version"), release["name"])] if release is not None else [])
    launch_command = _launch_command(content["launch_args"])
    return {
        "html_lang": "zh-Hans" if language == "zh-hans" else "en",
        "sections": REPORT_SECTIONS,
        "report": report,
        "organisation": content["organisation"]["name"],
        "customer": content["customer"]["name"],
        "deployment_name": content["deployment"]["name"],
        "created": _moment(report["created_at"], zone),
        "status": status,
        "status_label": _status_label(status),
        "signed": status == "signed",
        "running_head": head,
        "page_counter_css": _page_counter_css(),
        "units_note": gettext("Units: 1 GiB = %(gib)s bytes, 1 GB = %(gb)s bytes. Times are in %(zone)s.")
        % {"gib": _integer(GiB), "gb": _integer(GB), "zone": zone_name},
        "summary": summary,
        "machines": None if machines is None else _machines(machines, zone, language),
        "hardware": _hardware(content["hardware"], zone, language),
        "model_rows": model_rows,
        "release": release,
        "launch_command": _code_block(launch_command) if launch_command else None,
        "memory": _memory(memory, language) if memory else None,
        "commitment": commitment,
        "confidence": confidence,
        "protection": _protection(content["protection"], language) if content.get("protection") else None,
        "fallback": content["fallback"],
        "evidence": _evidence(content["evidence"], content["deployment"], zone, language),
        "checklist": _checklist(content.get("checklist")),
        "waivers": _waivers(content.get("waivers"), zone),
        "missing": content["missing"],
        "assumptions": content["assumptions"],
        "exclusions": content["exclusions"],
        "changes": report["changes"],
        "signature": _signature(content["signature"], status, zone),
        "acceptance": _acceptance(content.get("acceptance"), zone),
    }

"""The memory health report (显存健康报告) of a 72-hour sentinel as a document: from its content dict to HTML and to
PDF bytes with WeasyPrint, offline (every URL fetch refused), A4 with page numbers, in the report's language.
The criteria's titles and sentences come already in that language (benchmarks_app.texts.sentinel); the fixed labels
are translated here. Numbers carry units: GiB to 2 decimals, seconds to 1 decimal, hours to 1 decimal.

The content (reports.services.health_reports._content):

    {"language": "en" | "zh-hans", "report": {"id": int, "created_at": ISO},
     "organisation": {"name": str}, "customer": {"name": str}, "deployment": {"id": int, "name": str},
     "file": {"name", "size_bytes", "sha256", "host", "version", "interval_s", "zone", "first_sample",
              "last_sample", "samples", "resumes", "gpus": [{"index", "uuid", "name", "memory_total_bytes"}]},
     "verdict": "pass" | "fail", "coverage_hours": float, "peak_bytes": int | None,
     "committed_bytes_per_gpu": int | None,
     "criteria": [{"title": str, "verdict": "pass" | "fail", "text": str}],
     "series": {"gpus": [{"gpu": str, "t": [ISO], "used_bytes": [int], "total_bytes": int | None}]},
     "signature": {"signer": str, "signed_at": ISO}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, override
from weasyprint import HTML
from weasyprint.urls import URLFetcher

from benchmarks_app.texts.sentinel import moment
from reports.charts import PALETTE
from sizing.estimator.units import GiB, format_bytes

_FONT = "'Noto Sans CJK SC', 'Noto Sans', sans-serif"


def _moment(iso: str | None) -> str:
    """To the minute in the report's zone (UTC+08:00 in Chinese, as the commitment's PDF; UTC in English)."""
    return moment(iso, seconds_shown=False)


def _css_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\A ").replace("<", "\\3C ")
    return f'"{escaped}"'


def _page_counter_css() -> SafeString:
    pieces = re.split(r"(%\(page\)s|%\(pages\)s)", gettext("Page %(page)s of %(pages)s"))
    counters = {"%(page)s": "counter(page)", "%(pages)s": "counter(pages)"}
    return mark_safe(" ".join(counters.get(p, _css_string(p)) for p in pieces if p))  # noqa: S308 - quoted above


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def memory_timeline_svg(gpus: Sequence[Mapping[str, Any]], *, language: str) -> str:
    """Per-GPU memory used over the watch (hours from the first sample), one line per GPU, the card's capacity as a
    dashed line; inline SVG, every text escaped. Empty string when there is nothing to draw."""
    lines = []
    for gpu in gpus:
        points = [
            (datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp(), used)
            for t, used in zip(gpu.get("t") or [], gpu.get("used_bytes") or [], strict=False)
            if t and used is not None
        ]
        if points:
            lines.append((str(gpu.get("gpu")), points, gpu.get("total_bytes")))
    if not lines:
        return ""
    start = min(p[0] for _, points, _ in lines for p in points)
    end = max(p[0] for _, points, _ in lines for p in points)
    span_h = max((end - start) / 3600, 1e-6)
    top = max([used for _, points, _ in lines for _, used in points] + [t or 0 for *_, t in lines])
    top_gib = max(1.0, top / GiB * 1.05)
    width, height, left, right, upper, lower = 680.0, 260.0, 56.0, 12.0, 14.0, 40.0
    plot_w, plot_h = width - left - right, height - upper - lower

    def x(epoch: float) -> float:
        return left + (epoch - start) / 3600 / span_h * plot_w

    def y(n_bytes: float) -> float:
        return upper + plot_h - n_bytes / GiB / top_gib * plot_h

    with override(language):
        title = gettext("GPU memory used per card over the watch")
        x_label = gettext("hours since the first sample")
        capacity = gettext("card capacity")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="memory-timeline-chart" viewBox="0 0 {_n(width)} '
        f'{_n(height + 18 * len(lines))}" width="100%" role="img" font-family="{escape(_FONT)}" font-size="10">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{_n(left)}" y="{_n(upper)}" width="{_n(plot_w)}" height="{_n(plot_h)}" fill="#f8f9fa" '
        'stroke="#adb5bd" stroke-width="0.5"/>',
    ]
    step_h = 12 if span_h > 36 else 6 if span_h > 12 else 1
    tick = 0
    while tick <= span_h + 1e-9:
        tx = left + tick / span_h * plot_w
        parts.append(
            f'<line x1="{_n(tx)}" y1="{_n(upper + plot_h)}" x2="{_n(tx)}" y2="{_n(upper + plot_h + 4)}" '
            'stroke="#495057" stroke-width="0.5"/>'
        )
        parts.append(f'<text x="{_n(tx)}" y="{_n(upper + plot_h + 15)}" text-anchor="middle">{tick:g}</text>')
        tick += step_h
    parts.append(
        f'<text x="{_n(left + plot_w / 2)}" y="{_n(upper + plot_h + 30)}" text-anchor="middle">{escape(x_label)}</text>'
    )
    for k in range(5):
        value = top_gib * k / 4
        ty = upper + plot_h - plot_h * k / 4
        parts.append(f'<text x="{_n(left - 4)}" y="{_n(ty + 3)}" text-anchor="end">{value:.0f} GiB</text>')
    totals = {t for *_, t in lines if t}
    for total in totals:
        parts.append(
            f'<line class="capacity" x1="{_n(left)}" y1="{_n(y(total))}" x2="{_n(left + plot_w)}" '
            f'y2="{_n(y(total))}" stroke="#c92a2a" stroke-width="0.8" stroke-dasharray="4 2"/>'
        )
        parts.append(
            f'<text x="{_n(left + plot_w - 2)}" y="{_n(y(total) - 3)}" text-anchor="end" fill="#c92a2a">'
            f"{escape(capacity)} {escape(format_bytes(total, 'GiB'))}</text>"
        )
    for index, (name, points, _total) in enumerate(lines):
        colour = PALETTE[index % len(PALETTE)]
        path = " ".join(f"{_n(x(t))},{_n(y(used))}" for t, used in points)
        parts.append(
            f'<polyline class="gpu" data-gpu="{escape(name)}" points="{path}" fill="none" '
            f'stroke="{colour}" stroke-width="0.9"/>'
        )
        ly = height + 4 + 18 * index
        peak = max(used for _, used in points)
        with override(language):
            legend = gettext("GPU %(gpu)s, peak %(peak)s") % {"gpu": name, "peak": format_bytes(peak, "GiB")}
        parts.append(f'<rect x="{_n(left)}" y="{_n(ly)}" width="12" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{_n(left + 18)}" y="{_n(ly + 9)}">{escape(legend)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _context(content: Mapping[str, Any]) -> dict[str, Any]:
    file = content["file"]
    verdict = content["verdict"]
    verdict_words = {"pass": gettext("Pass"), "fail": gettext("Fail")}
    gpus = [
        {
            "index": g.get("index"),
            "name": g.get("name") or "—",
            "uuid": g.get("uuid"),
            "total": format_bytes(g["memory_total_bytes"], "GiB") if g.get("memory_total_bytes") else "—",
        }
        for g in file.get("gpus") or []
    ]
    peaks = {}
    for series in (content.get("series") or {}).get("gpus") or []:
        values = [v for v in series.get("used_bytes") or [] if v is not None]
        if values:
            peaks[str(series.get("gpu"))] = format_bytes(max(values), "GiB")
    for gpu in gpus:
        gpu["peak"] = peaks.get(str(gpu["index"]), "—")
    facts = [
        (gettext("Customer"), content["customer"]["name"]),
        (gettext("Deployment"), content["deployment"]["name"]),
        (gettext("Host"), file.get("host") or "—"),
        (gettext("Watched from"), _moment(file.get("first_sample"))),
        (gettext("Watched to"), _moment(file.get("last_sample"))),
        (gettext("Hours watched"), gettext("%(value)s h") % {"value": f"{content['coverage_hours']:,.1f}"}),
        (gettext("Sampling interval"), gettext("%(value)s s") % {"value": f"{file.get('interval_s') or 0:,.1f}"}),
        (
            gettext("Highest GPU memory used on a card"),
            format_bytes(content["peak_bytes"], "GiB") if content.get("peak_bytes") is not None else "—",
        ),
    ]
    if content.get("committed_bytes_per_gpu"):
        facts.append((gettext("Committed peak per card"), format_bytes(content["committed_bytes_per_gpu"], "GiB")))
    source = [
        (gettext("File"), file.get("name") or "—"),
        (gettext("Size"), gettext("%(value)s bytes") % {"value": f"{file.get('size_bytes') or 0:,}"}),
        (gettext("SHA-256 of the file"), file.get("sha256") or "—"),
        (gettext("Sentinel version"), file.get("version") or "—"),
        (gettext("GPU samples"), f"{file.get('samples') or 0:,}"),
        (gettext("Resumed after a stop"), f"{file.get('resumes') or 0:,}"),
        (gettext("Time zone of the server"), file.get("zone") or "—"),
    ]
    return {
        "html_lang": "zh-Hans" if content["language"] == "zh-hans" else "en",
        "title": gettext("Memory health report"),
        "organisation": content["organisation"]["name"],
        "report_id": content["report"]["id"],
        "verdict": verdict,
        "verdict_label": verdict_words.get(verdict, verdict),
        "criteria": [{**c, "label": verdict_words.get(c["verdict"], c["verdict"])} for c in content["criteria"]],
        "facts": facts,
        "source": source,
        "gpus": gpus,
        "chart": mark_safe(  # noqa: S308
            memory_timeline_svg(
                (content.get("series") or {}).get("gpus") or [],
                language=content["language"],
            )
        ),
        "signer": content["signature"]["signer"],
        "signed_at": moment(content["signature"]["signed_at"]),
        "page_counter_css": _page_counter_css(),
        "running_head": gettext("Memory health report %(id)s · %(customer)s")
        % {"id": content["report"]["id"], "customer": content["customer"]["name"]},
    }


def render_health_report_html(content: Mapping[str, Any]) -> str:
    with override(content["language"]):
        return render_to_string("reports/health_report.html", _context(content))


def render_health_report_pdf(content: Mapping[str, Any]) -> bytes:
    """The report as PDF bytes (WeasyPrint, offline: fonts from fontconfig, Noto Sans CJK SC for Chinese)."""
    html = render_health_report_html(content)
    return HTML(string=html, url_fetcher=URLFetcher(allowed_protocols=())).write_pdf()

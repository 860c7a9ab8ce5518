"""Charts for the memory-commitment report, as inline SVG built from strings.

No JavaScript, no plotting library, no external resource: the SVG goes straight into the report's HTML and renders the
same in a browser and in WeasyPrint, offline. Every text that reaches the SVG is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from django.utils.translation import gettext, override

from sizing.estimator.units import format_bytes

# Colour-blind-safe palette (Okabe–Ito, without black), one colour per bill line in order; it repeats past seven lines.
PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")

_WIDTH = 680.0  # user units of the viewBox; the <svg> scales to its container
_BAR_X = 10.0
_BAR_WIDTH = 640.0
_BAR_Y = 34.0
_BAR_HEIGHT = 34.0
_LEGEND_Y = 104.0
_LEGEND_ROW = 20.0
_FONT = "'Noto Sans CJK SC', 'Noto Sans', sans-serif"


def percent_text(fraction: float) -> str:
    """A fraction (0-1) as a percentage for people: one decimal between 1% and 99%, two nearer the ends, trailing
    zeros dropped ("98.7%", "0.31%", "0.64%", "99.9%", "100%"); a tiny non-zero one as "< 0.01%". The report's tables
    and this chart's legend share it, so one share reads the same in both."""
    if 0 < fraction < 0.0001:
        return "< 0.01%"
    if 0.9999 < fraction < 1:
        return "> 99.99%"
    places = 1 if 0.01 <= fraction <= 0.99 else 2
    text = f"{fraction * 100:,.{places}f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _number(value: float) -> str:
    """Format a coordinate with three decimals, without trailing zeros."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def memory_bill_svg(
    per_gpu: Sequence[Mapping[str, object]], *, capacity_bytes: int, budget_bytes: int, language: str
) -> str:
    """Return a horizontal stacked bar of one GPU's memory bill, with capacity and budget marked and a legend.

    `per_gpu` is the report's `memory.per_gpu`: `{"key", "label", "bytes"}` in bill order. Segment widths are
    proportional to bytes on one scale, the largest of the card capacity, the engine budget and the bill's total, so
    a bill that overflows the card shows past the capacity line. Each segment is a `<rect class="segment">` carrying
    `data-key` and `data-bytes`. Labels of the marks are translated into `language` ("en" or "zh-hans"); the bill's own
    labels are shown as given.
    """
    total_bytes = sum(int(item["bytes"]) for item in per_gpu)
    scale_bytes = max(capacity_bytes, budget_bytes, total_bytes, 1)
    per_byte = _BAR_WIDTH / scale_bytes  # user units per byte
    height = _LEGEND_Y + _LEGEND_ROW * len(per_gpu) + 6

    with override(language):
        title = gettext("Memory bill of one GPU")
        capacity_text = gettext("Card capacity %(size)s") % {"size": format_bytes(capacity_bytes)}
        budget_text = gettext("Engine budget %(size)s") % {"size": format_bytes(budget_bytes)}

    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="memory-bill-chart" viewBox="0 0 {_number(_WIDTH)} '
        f'{_number(height)}" width="100%" role="img" font-family="{escape(_FONT)}" font-size="11">',
        f"<title>{escape(title)}</title>",
        # the whole card as a light background, so free memory shows as the space after the last segment
        f'<rect class="card" x="{_number(_BAR_X)}" y="{_number(_BAR_Y)}" width="{_number(capacity_bytes * per_byte)}" '
        f'height="{_number(_BAR_HEIGHT)}" fill="#f1f3f5" stroke="#adb5bd" stroke-width="0.5"/>',
    ]
    x = _BAR_X
    for index, item in enumerate(per_gpu):
        n_bytes = int(item["bytes"])
        width = n_bytes * per_byte
        colour = PALETTE[index % len(PALETTE)]
        parts.append(
            f'<rect class="segment" data-key="{escape(str(item["key"]))}" data-bytes="{n_bytes}" x="{_number(x)}" '
            f'y="{_number(_BAR_Y)}" width="{_number(width)}" height="{_number(_BAR_HEIGHT)}" fill="{colour}"/>'
        )
        x += width

    budget_x = _BAR_X + budget_bytes * per_byte
    capacity_x = _BAR_X + capacity_bytes * per_byte
    bar_bottom = _BAR_Y + _BAR_HEIGHT
    parts += [
        # capacity: a solid line labelled above the bar; budget: a dashed line labelled below it
        f'<line class="capacity" x1="{_number(capacity_x)}" y1="{_number(_BAR_Y - 14)}" x2="{_number(capacity_x)}" '
        f'y2="{_number(bar_bottom + 4)}" stroke="#212529" stroke-width="1.5"/>',
        f'<text x="{_number(capacity_x)}" y="{_number(_BAR_Y - 18)}" text-anchor="end" fill="#212529">'
        f"{escape(capacity_text)}</text>",
        f'<line class="budget" x1="{_number(budget_x)}" y1="{_number(_BAR_Y - 4)}" x2="{_number(budget_x)}" '
        f'y2="{_number(bar_bottom + 14)}" stroke="#c92a2a" stroke-width="1.5" stroke-dasharray="4 2"/>',
        f'<text x="{_number(budget_x)}" y="{_number(bar_bottom + 26)}" text-anchor="end" fill="#c92a2a">'
        f"{escape(budget_text)}</text>",
    ]

    for index, item in enumerate(per_gpu):
        n_bytes = int(item["bytes"])
        y = _LEGEND_Y + index * _LEGEND_ROW
        colour = PALETTE[index % len(PALETTE)]
        share = n_bytes / capacity_bytes if capacity_bytes else 0.0
        figures = f"{format_bytes(n_bytes)} · {format_bytes(n_bytes, 'GB')} · {percent_text(share)}"
        parts += [
            f'<rect x="{_number(_BAR_X)}" y="{_number(y)}" width="12" height="12" fill="{colour}"/>',
            f'<text x="{_number(_BAR_X + 18)}" y="{_number(y + 10)}">{escape(str(item["label"]))}</text>',
            f'<text x="{_number(_BAR_X + _BAR_WIDTH)}" y="{_number(y + 10)}" text-anchor="end">'
            f"{escape(figures)}</text>",
        ]
    parts.append("</svg>")
    return "".join(parts)

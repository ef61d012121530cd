"""Hand-written SVG bar charts for the HTML sweep report.

:func:`bar_chart` draws horizontal bars (one per :class:`Bar`) on a linear
scale with a zero line, each value a ``<text>`` carrying its
``data-metric`` and ``data-value``; everything from outside is escaped.
Pure: data in, markup out. Why no charting library (a self-contained page,
stable bytes, every number named): docs/sweeps.md, "Report".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import NamedTuple

__all__ = ["Bar", "bar_chart"]

#: Geometry of a chart, in CSS pixels.
BAR_HEIGHT = 18
GAP = 8
PAD = 8
FONT = 12
#: Width of one character of a label, roughly (12 px system sans-serif).
CHAR_WIDTH = 7.2
LABEL_MAX = 300
VALUE_ROOM = 80

#: One colour per kind of bar (CSS colours; ``fill`` attributes).
COLOURS = {
    "count": "#4c72b0",
    "reward": "#55a868",
    "run": "#dd8452",
    "grader": "#c44e52",
    "other": "#8172b3",
}


class Bar(NamedTuple):
    """One bar of a chart.

    - ``label``: the category (text, escaped when drawn);
    - ``value``: the bar's length (finite; an absent value has no bar);
    - ``text``: the value as the page shows it, drawn at the bar's end;
    - ``metric`` / ``exact``: the value label's ``data-metric`` and
      ``data-value`` (the exact number);
    - ``kind``: its colour, a key of :data:`COLOURS`;
    - ``label_metric``: a ``data-metric`` for the label when the label is
      itself a number (the attempt count of a histogram bar; ``data-value``
      is then the label), else ``None``;
    - ``label_markup``: the label as SVG text content, already escaped, when
      it holds several numbers each in its own ``<tspan data-metric>`` (a
      histogram bucket's bounds); ``label`` is then its plain text (its
      width, its tooltip).
    """

    label: str
    value: float
    text: str
    metric: str
    exact: str
    kind: str = "count"
    label_metric: str | None = None
    label_markup: str | None = None


def _number(value: float) -> str:
    # Coordinates: two decimals are plenty, and the output stays stable.
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    low: float = 0.0,
    high: float | None = None,
    width: int = 640,
) -> str:
    """An ``<svg>`` horizontal bar chart of ``bars`` (see the module
    docstring), or ``""`` when there is no bar.

    The scale runs from ``min(low, 0, values)`` to ``high`` (default: the
    largest value; widened to include 0 and every value, and to 1 when every
    value is 0, so a bar of 0 is drawn as nothing, never as a full bar).
    ``title`` becomes the chart's accessible name (``<title>`` and
    ``aria-label``).
    """
    if not bars:
        return ""
    values = [bar.value for bar in bars]
    lo = min(low, 0.0, *values)
    hi = max(high if high is not None else max(values), 0.0, *values)
    if hi <= lo:
        hi = lo + 1.0
    # Labels longer than the label column holds are cut with "…" (the
    # whole label is the text's tooltip).
    fits = int((LABEL_MAX - PAD * 2) // CHAR_WIDTH)
    longest = min(max(len(bar.label) for bar in bars), fits)
    label_width = math.ceil(longest * CHAR_WIDTH) + PAD * 2
    # Room for the value labels of negative bars, left of the plot.
    left_room = VALUE_ROOM if lo < 0 else 0
    plot_left = label_width + left_room
    plot_width = max(width - plot_left - VALUE_ROOM - PAD, 60)
    width = plot_left + plot_width + VALUE_ROOM + PAD
    height = PAD * 2 + len(bars) * (BAR_HEIGHT + GAP) - GAP

    def x(value: float) -> float:
        return plot_left + (value - lo) / (hi - lo) * plot_width

    zero = x(0.0)
    safe_title = escape(title, quote=True)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'aria-label="{safe_title}" font-size="{FONT}">',
        f"<title>{safe_title}</title>",
    ]
    for index, bar in enumerate(bars):
        top = PAD + index * (BAR_HEIGHT + GAP)
        middle = top + BAR_HEIGHT / 2 + FONT * 0.35
        end = x(bar.value)
        left, right = min(zero, end), max(zero, end)
        colour = COLOURS.get(bar.kind, COLOURS["other"])
        label_attrs = ""
        if bar.label_metric is not None:
            label_attrs = (
                f' data-metric="{escape(bar.label_metric, quote=True)}"'
                f' data-value="{escape(bar.label, quote=True)}"'
            )
        shown = bar.label if len(bar.label) <= fits else bar.label[: max(fits - 1, 1)] + "…"
        hover = f"<title>{escape(bar.label, quote=True)}</title>" if shown != bar.label else ""
        content = escape(shown, quote=True) if bar.label_markup is None else bar.label_markup
        parts.append(
            f'<text x="{_number(label_width - PAD)}" y="{_number(middle)}" text-anchor="end"'
            f"{label_attrs}>{hover}{content}</text>"
        )
        parts.append(
            f'<rect x="{_number(left)}" y="{_number(top)}" width="{_number(right - left)}" '
            f'height="{BAR_HEIGHT}" fill="{colour}" '
            f'data-bar="{escape(bar.metric, quote=True)}"/>'
        )
        # The value label goes beyond the bar's outer end: right of a
        # positive bar, left of a negative one (inside the plot, before 0).
        if bar.value < 0:
            anchor, where = "end", left - 4
        else:
            anchor, where = "start", right + 4
        parts.append(
            f'<text x="{_number(where)}" y="{_number(middle)}" text-anchor="{anchor}" '
            f'data-metric="{escape(bar.metric, quote=True)}" '
            f'data-value="{escape(bar.exact, quote=True)}">{escape(bar.text, quote=True)}</text>'
        )
    parts.append(
        f'<line x1="{_number(zero)}" y1="{PAD // 2}" x2="{_number(zero)}" '
        f'y2="{height - PAD // 2}" stroke="#333" stroke-width="1"/>'
    )
    parts.append("</svg>")
    return "".join(parts)

"""SVG charts for report.html: pure functions from numbers to one `<svg>` string.

The charts are inlined in HTML, so they carry no xmlns and reference nothing outside
themselves. Colours are CSS classes styled by `CHART_CSS` through variables, so one chart
reads in the page's light and dark themes alike. Output is deterministic: coordinates are
rounded to two decimals, and there are no ids, clocks or random numbers. All text is
escaped. This module holds the drawing primitives (scale, ticks, elements, whiskers) and
`row_chart`, the frame of labelled rows; the charts are built on them: bar and column
charts and histograms in `bars`, forest plots in `forest`, stacked bars, heat maps,
reliability diagrams and scatters in `charts`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from judgecli.report.escape import XML_TEXT, Table, escaped

WIDTH = 560
ROW = 26
"""Height of one row of a horizontal bar chart or forest plot."""
BAR = 16
TOP = 22
"""Room above the first row (for the reference line's label)."""
AXIS = 26
"""Room below the plot for tick labels."""
CHAR = 7.0
"""Average width of a 12px sans-serif character (generous): how much room a label needs."""
LABEL_CHARS = 32

Attr = str | float | None
Format = Callable[[float], str]

# Light palette by default; dark only on screens that ask for it, so print stays light.
CHART_CSS = """
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--grid:#d8dee4;--panel:#f6f8fa;
--accent:#0969da;--new:#0072b2;--old:#d55e00;--tie:#8c959f;--good:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--ref:#8250df;--heat:#0969da;--heat-ink:#fff}
@media screen and (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;
--muted:#9198a1;--grid:#30363d;--panel:#161b22;--accent:#4493f8;--new:#56b4e9;
--old:#e69f00;--tie:#6e7681;--good:#3fb950;--bad:#f85149;--warn:#d29922;--ref:#bc8cff;
--heat:#4493f8;--heat-ink:#0d1117}}
svg.chart{max-width:100%;height:auto;font:12px system-ui,sans-serif;display:block}
.chart text{fill:var(--fg)}
.chart text.muted{fill:var(--muted)}
.chart .grid{stroke:var(--grid)}
.chart .axis{stroke:var(--muted)}
.chart .bar{fill:var(--accent);fill-opacity:.8}
.reliability .bar{stroke:var(--panel)}
.chart .ci{stroke:var(--fg);stroke-width:1.5}
.chart .ref{stroke:var(--ref);stroke-width:1.5;stroke-dasharray:5 3;fill:none}
.chart text.ref-label{fill:var(--ref)}
.chart .point,.chart .key{fill:var(--accent);stroke:var(--bg);stroke-width:1.5}
.chart .above{fill:var(--good)}
.chart .below{fill:var(--bad)}
.chart .straddles{fill:var(--warn)}
.chart .few{fill:var(--tie)}
.chart .new{fill:var(--new)}
.chart .old{fill:var(--old)}
.chart .tie{fill:var(--tie)}
.chart .dot{fill-opacity:.75}
.chart .cell{fill:var(--heat);stroke:var(--grid)}
.chart .cell.diagonal{stroke:var(--fg)}
.chart text.ink{fill:var(--heat-ink)}
"""


def num(value: float) -> str:
    """A coordinate: at most two decimals, no trailing zeros, no negative zero."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# escape and quoteattr are xml.sax.saxutils's, written out: importing saxutils imports
# urllib.request (and http.client, email...), ~6 ms of a report's start for two functions.
def escape(text: str) -> str:
    """Text for markup: `&`, `<` and `>` escaped, as saxutils.escape does."""
    return escaped(text, XML_TEXT)


SAX_ATTRIBUTE: Table = (*XML_TEXT, ("\n", "&#10;"), ("\r", "&#13;"), ("\t", "&#9;"))
"""As saxutils.quoteattr escapes a value, before it chooses the quotes."""


def quoteattr(value: str) -> str:
    """An attribute value escaped and quoted, as saxutils.quoteattr does: tab, newline and CR
    as character references, and in single quotes when it holds only double ones.
    """
    value = escaped(value, SAX_ATTRIBUTE)
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace('"', "&quot;") + '"'


def el(tag: str, text: str | None = None, /, *, inner: str = "", **attrs: Attr) -> str:
    """One element. `class_` is `class`, `text_anchor` is `text-anchor`; text is escaped,
    `inner` is markup built by these functions; None attributes are left out.
    """
    # num() writes digits, "-" and "." only: nothing to escape (a scatter has a dot per case).
    parts = "".join(
        f" {name.rstrip('_').replace('_', '-')}="
        + (quoteattr(value) if isinstance(value, str) else f'"{num(value)}"')
        for name, value in attrs.items()
        if value is not None
    )
    content = escape(text) if text is not None else inner
    return f"<{tag}{parts}>{content}</{tag}>" if content else f"<{tag}{parts}/>"


def svg(width: float, height: float, title: str, body: Sequence[str], *, kind: str) -> str:
    """The outer element: scales to its container, titled for screen readers."""
    return (
        f'<svg class="chart {kind}" viewBox="0 0 {num(width)} {num(height)}" '
        f'width="{num(width)}" height="{num(height)}" role="img" aria-label={quoteattr(title)}>'
        + el("title", title)
        + "".join(body)
        + "</svg>"
    )


def shorten(label: str, limit: int = LABEL_CHARS) -> str:
    """A label cut to fit beside a chart (the full text is in the element's tooltip)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def room(texts: Sequence[str], limit: int = LABEL_CHARS) -> float:
    """Pixels the longest (shortened) text needs."""
    return CHAR * max((len(shorten(t, limit)) for t in texts), default=0) + 12


def general(value: float) -> str:
    """A tick label: the shortest exact-looking form."""
    return f"{value:g}"


def percent(value: float) -> str:
    """A tick label for a share."""
    return f"{value:.0%}"


@dataclass(frozen=True)
class Scale:
    """A linear map from a data domain onto pixels; values outside it are clamped."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        """The pixel position of a value."""
        span = self.hi - self.lo
        t = 0.0 if span == 0 else (min(max(value, self.lo), self.hi) - self.lo) / span
        return self.start + t * (self.end - self.start)


def ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) covering lo..hi."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 10) for k in range(first, math.floor(hi / step + 1e-9) + 1)]


@dataclass(frozen=True)
class Bar:
    """One bar (or forest-plot row): a value, an optional 95% interval, and its label."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    text: str | None = None
    """What to print beside it (e.g. "76.7% [65.0%, 88.3%]"); default: the value."""
    too_few: bool = False
    """A group too small to tell anything (stats.intervals.TOO_FEW): drawn, never coloured
    as above or below a reference."""
    call: str | None = None
    """A category's mark from its multiplicity-adjusted test ("above", "below", "not
    significant", "too few"): it colours the point instead of the interval's side."""

    @property
    def shown(self) -> str:
        """The value label."""
        if self.text is not None:
            return self.text
        return "n/a" if self.value is None else f"{self.value:g}"

    @property
    def interval(self) -> tuple[float, float] | None:
        """The interval when both ends are known."""
        return None if self.low is None or self.high is None else (self.low, self.high)


def whisker_h(scale: Scale, low: float, high: float, y: float) -> list[str]:
    """A horizontal interval with end caps."""
    x1, x2 = scale(low), scale(high)
    return [
        el("line", class_="ci", x1=x1, x2=x2, y1=y, y2=y),
        el("line", class_="ci", x1=x1, x2=x1, y1=y - 5, y2=y + 5),
        el("line", class_="ci", x1=x2, x2=x2, y1=y - 5, y2=y + 5),
    ]


def whisker_v(scale: Scale, low: float, high: float, x: float) -> list[str]:
    """A vertical interval with end caps."""
    y1, y2 = scale(low), scale(high)
    return [
        el("line", class_="ci", x1=x, x2=x, y1=y1, y2=y2),
        el("line", class_="ci", x1=x - 5, x2=x + 5, y1=y1, y2=y1),
        el("line", class_="ci", x1=x - 5, x2=x + 5, y1=y2, y2=y2),
    ]


Mark = Callable[[Scale, Bar, float], list[str]]


def row_chart(
    rows: Sequence[Bar],
    *,
    title: str,
    domain: tuple[float, float],
    mark: Mark,
    kind: str,
    reference: float | None,
    reference_label: str | None,
    tick_format: Format,
    footer: Callable[[float], list[str]] | None = None,
    footer_height: float = 0.0,
) -> str:
    """Rows of label | plot | value text, a value axis below, an optional reference line:
    the frame shared by horizontal bars and forest plots; `mark` draws each row's data.
    `footer(top)` draws what goes under the axis (a legend) in `footer_height` pixels.
    """
    left = room([r.label for r in rows])
    right = WIDTH - room([r.shown for r in rows], limit=40)
    scale = Scale(domain[0], domain[1], left, right - 8)
    bottom = TOP + ROW * len(rows)
    parts = []
    for t in ticks(*domain):
        x = scale(t)
        parts.append(el("line", class_="grid", x1=x, x2=x, y1=TOP - 4, y2=bottom))
        parts.append(
            el("text", tick_format(t), x=x, y=bottom + 16, text_anchor="middle", class_="muted")
        )
    for i, row in enumerate(rows):
        mid = TOP + ROW * i + ROW / 2
        label = el("title", row.label) + escape(shorten(row.label))
        parts.append(el("text", x=left - 8, y=mid + 4, text_anchor="end", inner=label))
        parts += mark(scale, row, mid)
        parts.append(el("text", row.shown, x=right, y=mid + 4, class_="value"))
    if reference is not None:
        x = scale(reference)
        parts.append(el("line", class_="ref", x1=x, x2=x, y1=TOP - 6, y2=bottom))
        if reference_label:
            parts.append(
                el(
                    "text",
                    reference_label,
                    x=x,
                    y=TOP - 9,
                    text_anchor="middle",
                    class_="ref-label",
                )
            )
    if footer is not None:
        parts += footer(bottom + AXIS)
    return svg(WIDTH, bottom + AXIS + footer_height, title, parts, kind=kind)

"""Bar charts for report.html: horizontal bars (rows of `svg.row_chart`), vertical columns
and histograms, each a value from the domain's low end with an optional interval whisker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgecli.report.svg import (
    AXIS,
    BAR,
    CHAR,
    TOP,
    WIDTH,
    Bar,
    Format,
    Scale,
    el,
    escape,
    general,
    room,
    row_chart,
    shorten,
    svg,
    ticks,
    whisker_h,
    whisker_v,
)


def domain_of(bars: Sequence[Bar], domain: tuple[float, float] | None) -> tuple[float, float]:
    """The given domain, else 0 up to the largest value or interval end (at least 1)."""
    if domain is not None:
        return domain
    tops = [v for b in bars for v in (b.value, b.high) if v is not None]
    return 0.0, max([*tops, 1.0])


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    domain: tuple[float, float] | None = None,
    reference: float | None = None,
    reference_label: str | None = None,
    tick_format: Format = general,
    vertical: bool = False,
) -> str:
    """Bars from the domain's low end to each value, with a whisker where an interval is
    given, the value text beside (horizontal) or above (vertical) each bar.
    """
    lo_hi = domain_of(bars, domain)
    if vertical:
        return column_chart(
            bars,
            title=title,
            domain=lo_hi,
            reference=reference,
            reference_label=reference_label,
            tick_format=tick_format,
        )

    def mark(scale: Scale, bar: Bar, mid: float) -> list[str]:
        out = []
        if bar.value is not None:
            x0, x1 = scale(lo_hi[0]), scale(bar.value)
            tip = el("title", f"{bar.label}: {bar.shown}")
            out.append(
                el(
                    "rect",
                    class_="bar",
                    x=x0,
                    y=mid - BAR / 2,
                    width=x1 - x0,
                    height=BAR,
                    inner=tip,
                )
            )
        if bar.interval:
            out += whisker_h(scale, *bar.interval, mid)
        return out

    return row_chart(
        bars,
        title=title,
        domain=lo_hi,
        mark=mark,
        kind="bars",
        reference=reference,
        reference_label=reference_label,
        tick_format=tick_format,
    )


COLUMN_HEIGHT = 180
"""Height of the plot area of a vertical bar chart."""


def column_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    domain: tuple[float, float],
    reference: float | None,
    reference_label: str | None,
    tick_format: Format,
    gap: float = 0.3,
    kind: str = "columns",
) -> str:
    """Vertical bars: categories left to right, values upwards, value text above each."""
    left = room([tick_format(t) for t in ticks(*domain)], limit=12) + 4
    top, bottom = TOP, TOP + COLUMN_HEIGHT
    scale = Scale(domain[0], domain[1], bottom, top)
    slot = (WIDTH - left - 8) / max(len(bars), 1)
    limit = max(3, int(slot / CHAR))
    parts = []
    for t in ticks(*domain):
        y = scale(t)
        parts.append(el("line", class_="grid", x1=left, x2=WIDTH - 8, y1=y, y2=y))
        parts.append(
            el("text", tick_format(t), x=left - 6, y=y + 4, text_anchor="end", class_="muted")
        )
    for i, bar in enumerate(bars):
        x, mid = left + slot * i + slot * gap / 2, left + slot * (i + 0.5)
        label = el("title", bar.label) + escape(shorten(bar.label, limit))
        parts.append(el("text", x=mid, y=bottom + 16, text_anchor="middle", inner=label))
        if bar.value is None:
            continue
        y = scale(bar.value)
        tip = el("title", f"{bar.label}: {bar.shown}")
        parts.append(
            el("rect", class_="bar", x=x, y=y, width=slot * (1 - gap), height=bottom - y, inner=tip)
        )
        above = y
        if bar.interval:
            parts += whisker_v(scale, *bar.interval, mid)
            above = min(y, scale(bar.interval[1]))
        parts.append(
            el("text", bar.shown, x=mid, y=above - 5, text_anchor="middle", class_="value")
        )
    parts.append(el("line", class_="axis", x1=left, x2=WIDTH - 8, y1=bottom, y2=bottom))
    if reference is not None:
        y = scale(reference)
        parts.append(el("line", class_="ref", x1=left, x2=WIDTH - 8, y1=y, y2=y))
        if reference_label:
            parts.append(
                el(
                    "text",
                    reference_label,
                    x=WIDTH - 8,
                    y=y - 4,
                    text_anchor="end",
                    class_="ref-label",
                )
            )
    return svg(WIDTH, bottom + AXIS, title, parts, kind=kind)


def histogram(counts: Mapping[str, int], *, title: str) -> str:
    """Counts per bin (bins in the given order), the count above each column."""
    bars = [Bar(label, float(n), text=str(n)) for label, n in counts.items()]
    top = max(counts.values(), default=0)
    return column_chart(
        bars,
        title=title,
        domain=(0.0, float(max(top, 1))),
        reference=None,
        reference_label=None,
        tick_format=general,
        gap=0.08,
        kind="histogram",
    )

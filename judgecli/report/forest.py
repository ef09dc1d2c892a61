"""The forest plot: point estimates with their 95% intervals, one row each, against a
reference line (the gate's bar), each point coloured by where its interval stands against
the line, with a legend saying what the colours mean. Same conventions as `svg`.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecli.report.svg import WIDTH, Bar, Format, Scale, el, percent, row_chart, whisker_h


def side(row: Bar, reference: float | None) -> str:
    """Where a row stands against the reference: its mark when a multiplicity-adjusted test
    made one (categories), else its whole interval above or below it, an interval that
    straddles it (not yet distinguishable from the bar), or "few" when there is
    no evidence either way: a group too small to tell, no interval, or a zero-width one
    (five wins of five resampled are always five of five; that is not certainty).
    """
    if reference is None or row.value is None:
        return ""
    if row.call is not None:
        return CALL_SIDE.get(row.call, "few")
    if row.too_few or row.interval is None or row.interval[0] == row.interval[1]:
        return "few"
    low, high = row.interval
    if low >= reference:
        return "above"
    return "below" if high < reference else "straddles"


CALL_SIDE = {"above": "above", "below": "below", "not significant": "straddles"}
"""A category's adjusted-test mark → its colour (a test, not its raw interval, decides)."""

LEGEND = [
    ("above", "whole interval above the line"),
    ("below", "whole interval below the line"),
    ("straddles", "interval crosses the line"),
    ("few", "too few cases to tell"),
]
"""What a forest plot's point colours mean, two entries a row."""
LEGEND_ROW = 18
LEGEND_HEIGHT = 4 + 2 * LEGEND_ROW


def legend(top: float) -> list[str]:
    """The colour key of a forest plot, starting `top` pixels down."""
    parts = []
    for i, (kind, text) in enumerate(LEGEND):
        x, y = 8 + (WIDTH / 2) * (i % 2), top + 4 + LEGEND_ROW * (i // 2) + 10
        parts.append(el("circle", class_=f"key {kind}", cx=x + 5, cy=y - 4, r=5))
        parts.append(el("text", text, x=x + 16, y=y))
    return parts


def forest_plot(
    rows: Sequence[Bar],
    *,
    title: str,
    reference: float | None,
    reference_label: str | None = None,
    domain: tuple[float, float] = (0.0, 1.0),
    tick_format: Format = percent,
) -> str:
    """Point estimates with 95% intervals, one row each, against a vertical reference line
    (e.g. the gate's threshold); a point is coloured by its interval's side of the line, and
    a legend below says what each colour means.
    """

    def mark(scale: Scale, row: Bar, mid: float) -> list[str]:
        if row.value is None:
            return []
        out = whisker_h(scale, *row.interval, mid) if row.interval else []
        tip = el("title", f"{row.label}: {row.shown}")
        cls = f"point {side(row, reference)}".strip()
        return [*out, el("circle", class_=cls, cx=scale(row.value), cy=mid, r=5, inner=tip)]

    return row_chart(
        rows,
        title=title,
        domain=domain,
        mark=mark,
        kind="forest",
        reference=reference,
        reference_label=reference_label,
        tick_format=tick_format,
        footer=None if reference is None else legend,
        footer_height=0.0 if reference is None else LEGEND_HEIGHT,
    )

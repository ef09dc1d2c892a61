"""The report's other SVG charts (the forest plot has its own module, `forest`): a
stacked win/tie/loss bar, a confusion-matrix heat map, a reliability diagram and a scatter of
a number against a category (length difference by winner). Same conventions as `svg`: pure,
deterministic, escaped, styled by CSS classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgecli.report.svg import (
    AXIS,
    CHAR,
    TOP,
    WIDTH,
    Scale,
    el,
    escape,
    general,
    room,
    shorten,
    svg,
    ticks,
)
from judgecli.stats.calibration import ReliabilityBin


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar; `kind` is its CSS class ("new", "tie", "old")."""

    label: str
    count: int
    kind: str


STACK_LEFT = 8
STACK_HEIGHT = 28


def stacked_bar(segments: Sequence[Segment], *, title: str) -> str:
    """One bar split in proportion to the counts, the count inside each part wide enough
    to hold it, and a legend with counts and shares below.
    """
    total = sum(s.count for s in segments)
    width = WIDTH - 2 * STACK_LEFT
    parts, x = [], float(STACK_LEFT)
    for s in segments:
        w = width * s.count / total if total else 0.0
        if w > 0:
            tip = el("title", f"{s.label}: {s.count}")
            parts.append(
                el(
                    "rect",
                    class_=f"segment {s.kind}",
                    x=x,
                    y=8,
                    width=w,
                    height=STACK_HEIGHT,
                    inner=tip,
                )
            )
            if w >= CHAR * len(str(s.count)) + 8:
                parts.append(
                    el(
                        "text",
                        str(s.count),
                        x=x + w / 2,
                        y=8 + STACK_HEIGHT / 2 + 4,
                        text_anchor="middle",
                        class_="ink",
                    )
                )
        x += w
    if not total:
        parts.append(
            el(
                "rect",
                class_="grid",
                x=STACK_LEFT,
                y=8,
                width=width,
                height=STACK_HEIGHT,
                fill="none",
            )
        )
    y, x = 8 + STACK_HEIGHT + 22, float(STACK_LEFT)
    for s in segments:
        share = f" ({s.count / total:.1%})" if total else ""
        text = f"{s.label} {s.count}{share}"
        parts.append(el("rect", class_=s.kind, x=x, y=y - 10, width=12, height=12))
        parts.append(el("text", text, x=x + 17, y=y))
        x += 17 + CHAR * len(text) + 18
    return svg(WIDTH, y + 10, title, parts, kind="stacked")


def heat_map(
    rows: Sequence[str],
    columns: Sequence[str],
    matrix: Sequence[Sequence[int]],
    *,
    title: str,
    row_title: str,
    column_title: str,
) -> str:
    """A matrix of counts (a confusion matrix: rows human, columns judge): each cell's
    shade in proportion to its count, the count written in it, the diagonal outlined.
    """
    size = min(48.0, max(24.0, 360 / max(len(rows), len(columns), 1)))
    left = room(rows, limit=14) + 22
    top = 48.0
    largest = max((n for row in matrix for n in row), default=0) or 1
    fits = max(2, int(size / CHAR))
    parts = [
        el(
            "text",
            column_title,
            x=left + size * len(columns) / 2,
            y=14,
            text_anchor="middle",
            class_="muted",
        ),
        el(
            "text",
            row_title,
            x=14,
            y=top + size * len(rows) / 2,
            text_anchor="middle",
            class_="muted",
            transform=f"rotate(-90 14 {top + size * len(rows) / 2:.2f})",
        ),
    ]
    cells = [
        [
            Cell(
                shade=0.1 + 0.9 * count / largest if count else 0.0,
                text=str(count),
                tip=f"{name} → {columns[j]}: {count}",
                ink=count / largest > 0.5,
            )
            for j, count in enumerate(row)
        ]
        for name, row in zip(rows, matrix, strict=True)
    ]
    parts += cell_grid(rows, columns, cells, size=size, left=left, top=top, fits=fits)
    width = left + size * len(columns) + 10
    return svg(width, top + size * len(rows) + 10, title, parts, kind="heatmap")


@dataclass(frozen=True)
class Cell:
    """One square of a heat map: its shade (0 to 1), the text in it (None: blank), its
    tooltip, and whether the text is drawn light on a dark shade.
    """

    shade: float
    text: str | None
    tip: str
    ink: bool


def cell_grid(
    rows: Sequence[str],
    columns: Sequence[str],
    cells: Sequence[Sequence[Cell]],
    *,
    size: float,
    left: float,
    top: float,
    fits: int,
) -> list[str]:
    """A heat map's labelled squares: column names above, row names to the left (`fits`
    characters a column name may take), each cell shaded with its text, the diagonal
    outlined.
    """
    parts = []
    for j, name in enumerate(columns):
        label = el("title", name) + escape(shorten(name, fits))
        parts.append(
            el("text", x=left + size * (j + 0.5), y=top - 8, text_anchor="middle", inner=label)
        )
    for i, (name, row) in enumerate(zip(rows, cells, strict=True)):
        y = top + size * i
        label = el("title", name) + escape(shorten(name, 14))
        parts.append(el("text", x=left - 6, y=y + size / 2 + 4, text_anchor="end", inner=label))
        for j, cell in enumerate(row):
            x = left + size * j
            parts.append(
                el(
                    "rect",
                    class_="cell diagonal" if i == j else "cell",
                    x=x,
                    y=y,
                    width=size,
                    height=size,
                    fill_opacity=cell.shade,
                    inner=el("title", cell.tip),
                )
            )
            if cell.text is not None:
                parts.append(
                    el(
                        "text",
                        cell.text,
                        x=x + size / 2,
                        y=y + size / 2 + 4,
                        text_anchor="middle",
                        class_="ink" if cell.ink else None,
                    )
                )
    return parts


SQUARE = 300
"""Side of the reliability diagram's plot."""


def reliability_diagram(bins: Sequence[ReliabilityBin], *, title: str) -> str:
    """Accuracy per confidence bin against the diagonal of perfect calibration: a bar over
    each bin's range up to its accuracy, a point at (mean confidence, accuracy), and the
    bin's count above it.
    """
    left, top = 52.0, 16.0
    sx = Scale(0.0, 1.0, left, left + SQUARE)
    sy = Scale(0.0, 1.0, top + SQUARE, top)
    parts = []
    for t in ticks(0.0, 1.0):
        parts.append(el("line", class_="grid", x1=sx(t), x2=sx(t), y1=top, y2=top + SQUARE))
        parts.append(el("line", class_="grid", x1=left, x2=left + SQUARE, y1=sy(t), y2=sy(t)))
        parts.append(
            el(
                "text",
                general(t),
                x=sx(t),
                y=top + SQUARE + 16,
                text_anchor="middle",
                class_="muted",
            )
        )
        parts.append(
            el("text", general(t), x=left - 6, y=sy(t) + 4, text_anchor="end", class_="muted")
        )
    for b in bins:
        x0, x1, y = sx(b.low), sx(b.high), sy(b.accuracy)
        tip = el(
            "title",
            f"confidence {b.low:.2f}–{b.high:.2f}: accuracy {b.accuracy:.2f}, mean confidence "
            f"{b.mean_confidence:.2f}, n={b.count}",
        )
        parts.append(
            el("rect", class_="bar", x=x0, y=y, width=x1 - x0, height=sy(0.0) - y, inner=tip)
        )
        parts.append(el("circle", class_="point", cx=sx(b.mean_confidence), cy=y, r=4))
        parts.append(
            el("text", str(b.count), x=(x0 + x1) / 2, y=y - 7, text_anchor="middle", class_="count")
        )
    parts.append(el("line", class_="ref", x1=sx(0.0), y1=sy(0.0), x2=sx(1.0), y2=sy(1.0)))
    parts.append(
        el(
            "text",
            "stated confidence",
            x=left + SQUARE / 2,
            y=top + SQUARE + 34,
            text_anchor="middle",
        )
    )
    mid = top + SQUARE / 2
    parts.append(
        el(
            "text",
            "accuracy",
            x=14,
            y=mid,
            text_anchor="middle",
            transform=f"rotate(-90 14 {mid:.2f})",
        )
    )
    return svg(left + SQUARE + 16, top + SQUARE + 42, title, parts, kind="reliability")


LANE = 44
# Deterministic jitter: successive points in a lane step by the golden ratio's fraction,
# which spreads any number of them evenly without a random generator.
GOLDEN = 0.6180339887


def scatter(
    points: Sequence[tuple[float, str]],
    *,
    lanes: Sequence[tuple[str, str]],
    title: str,
    x_label: str,
) -> str:
    """A number against a category: one horizontal lane per category (`lanes` holds
    (key, label) pairs, top to bottom), each point at its x with a little vertical jitter,
    and a dashed line at x = 0. A point's CSS class is `dot <key>`.
    """
    counts = {key: sum(1 for _, k in points if k == key) for key, _ in lanes}
    names = [f"{label} (n={counts[key]})" for key, label in lanes]
    left = room(names)
    reach = max((abs(x) for x, _ in points), default=0.0) or 1.0
    scale = Scale(-reach, reach, left, WIDTH - 16)
    bottom = TOP + LANE * len(lanes)
    parts = []
    for t in ticks(-reach, reach, 6):
        x = scale(t)
        parts.append(el("line", class_="grid", x1=x, x2=x, y1=TOP, y2=bottom))
        parts.append(
            el("text", general(t), x=x, y=bottom + 16, text_anchor="middle", class_="muted")
        )
    row = {key: i for i, (key, _) in enumerate(lanes)}
    seen = dict.fromkeys(row, 0)
    for i, name in enumerate(names):
        parts.append(el("text", name, x=left - 8, y=TOP + LANE * (i + 0.5) + 4, text_anchor="end"))
    for x, key in points:
        if key not in row:
            continue
        jitter = ((seen[key] * GOLDEN) % 1 - 0.5) * (LANE - 16)
        seen[key] += 1
        parts.append(
            el(
                "circle",
                class_=f"dot {key}",
                cx=scale(x),
                cy=TOP + LANE * (row[key] + 0.5) + jitter,
                r=3.5,
            )
        )
    parts.append(el("line", class_="ref", x1=scale(0.0), x2=scale(0.0), y1=TOP - 6, y2=bottom))
    parts.append(
        el("text", x_label, x=(left + WIDTH - 16) / 2, y=bottom + AXIS + 10, text_anchor="middle")
    )
    return svg(WIDTH, bottom + AXIS + 16, title, parts, kind="scatter")

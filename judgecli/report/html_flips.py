"""The flipped cases of a `judge drift` on its report.html: one row per case whose verdict
moved (its label in A and in B, the change), expandable to the case's text, searchable and
filterable by the same inline script as a run's cases table (report/html.py SCRIPT).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgecli.report.cells import NA
from judgecli.report.escape import esc
from judgecli.report.html_cases import MAX_ROWS, case_fields_html, select

if TYPE_CHECKING:
    from judgecli.summary.drift import Flip


def direction(flip: Flip) -> str:
    """`up`, `down` or `moved` (no value to compare): the filter key of a flip."""
    if flip.change is None or flip.change == 0:
        return "moved"
    return "up" if flip.change > 0 else "down"


def flip_row(flip: Flip) -> str:
    """A flipped case's tbody: the row, then its text behind a <details>."""
    change = NA if flip.change is None else f"{flip.change:+g}"
    cells = [f"<code>{esc(flip.id)}</code>", esc(flip.a), esc(flip.b), esc(change)]
    more = ""
    if flip.case:
        more = (
            '<tr class="more"><td colspan="4"><details><summary>the case</summary>'
            f"{case_fields_html(flip.case)}</details></td></tr>"
        )
    return (
        f'<tbody data-direction="{direction(flip)}"><tr class="case"><td>'
        f"{'</td><td>'.join(cells)}</td></tr>{more}</tbody>"
    )


def flips_table(flips: Sequence[Flip]) -> str:
    """Every flipped case (up to MAX_ROWS, largest change first), searchable by id, label and
    case text, filterable by the direction of the change.
    """
    shown = flips[:MAX_ROWS]
    note = (
        f'<p class="note">Showing the first {len(shown):,} of {len(flips):,} flipped cases; '
        "every one is in flips.jsonl.</p>"
        if len(flips) > len(shown)
        else ""
    )
    filters = [
        '<input type="search" id="case-search" placeholder="search ids, labels, case text" '
        'aria-label="search flipped cases">',
        select(
            "direction",
            "direction of the change",
            [("", "any change"), ("up", "up in B"), ("down", "down in B"), ("moved", "moved")],
        ),
    ]
    head = "".join(f"<th>{h}</th>" for h in ("id", "A", "B", "change"))
    body = "".join(flip_row(f) for f in shown)
    return (
        f"<section><h2>Flipped cases ({len(flips):,})</h2>{note}"
        f'<div class="filters" id="case-filters" hidden>{"".join(filters)}'
        '<span id="case-count" class="muted"></span></div>'
        f'<table id="cases"><thead><tr>{head}</tr></thead>{body}</table></section>'
    )

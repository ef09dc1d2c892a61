"""A drift's report.html lists every flipped case in a table to search and filter, with the
case's text, as a run's page lists its cases.

Issue 29 (review 2026-11-27, §5): the arena and drift pages had no per-case table.
"""

from __future__ import annotations

from judgecli.commands.drift.measure import measure_drift
from judgecli.report.drift import render_drift_html
from judgecli.report.html_flips import MAX_ROWS, flips_table
from tests.unit.commands.test_drift import ok, score_run


def drift_of(moves: dict[str, tuple[float, float]]):
    a = score_run(
        "a", [ok(i, score=x, case={"output": f"answer {i}"}) for i, (x, _) in moves.items()]
    )
    b = score_run("b", [ok(i, score=y) for i, (_, y) in moves.items()])
    return measure_drift(a, b)


def test_the_drift_page_lists_each_flipped_case_once_with_its_text_and_a_direction():
    drift = drift_of({"q-1": (1, 3), "q-2": (4, 2), "q-3": (2, 2), "q-4": (3, 4)})
    html = render_drift_html(drift)
    assert "<h2>Flipped cases (3)</h2>" in html
    assert html.count('<tbody data-direction="up">') == 2
    assert html.count('<tbody data-direction="down">') == 1
    assert "<code>q-3</code>" not in html  # unchanged: not a flip
    assert "<pre>answer q-1</pre>" in html
    assert 'id="case-search"' in html
    # Listed once: the searchable table replaces the plain one of report.md.
    assert html.count("<code>q-1</code>") == 1


def test_a_drift_without_flips_says_so_and_a_long_one_is_capped():
    empty = drift_of({"q-1": (2, 2)})
    assert "<h2>Flipped cases (0)</h2>" in render_drift_html(empty)
    many = drift_of({f"q-{i}": (1, 2) for i in range(3)}).flips * (MAX_ROWS // 3 + 1)
    html = flips_table(many)
    assert html.count("<tbody ") == MAX_ROWS
    assert f"first {MAX_ROWS:,} of {len(many):,} flipped cases" in html

"""A drift's report.md and report.html show the judge's shift (identical outputs) beside the
system's (changed outputs) as a table: cases, shift, 95% interval each, and whether the
judge's shift could explain run B's gate. Issue 35.
"""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from judgecli.commands.drift.measure import measure_drift
from judgecli.report.drift import render_drift_html, render_drift_markdown, terminal_tables
from judgecli.summary.drift import Drift
from judgecli.summary.gate_records import GateMetric
from judgecli.summary.judge_shift import JudgeShiftGate
from tests.unit.commands.test_drift import ok, score_run

HEADER = "| shift | cases | B − A | 95% CI | could explain B's gate |"


def drift_of(moves: dict[str, tuple[float, float, bool]]) -> Drift:
    """Cases id → (A's score, B's score, whether the answer changed)."""
    a = score_run("a", [ok(i, score=x, case={"output": i}) for i, (x, _, _) in moves.items()])
    b = score_run(
        "b",
        [ok(i, score=y, case={"output": i + "!" if c else i}) for i, (_, y, c) in moves.items()],
    )
    return measure_drift(a, b)


# Anchors move by −1, 0, −1 (mean −2/3); changed answers by +2, +1, +2 (mean +5/3).
SPLIT = {
    "q-1": (3, 2, False),
    "q-2": (3, 3, False),
    "q-3": (4, 3, False),
    "q-4": (1, 3, True),
    "q-5": (2, 3, True),
    "q-6": (1, 3, True),
}


def test_the_split_is_a_table_of_its_own_with_each_shift_and_interval():
    drift = drift_of(SPLIT)
    s = drift.summary
    markdown = render_drift_markdown(drift)
    assert "## Judge shift vs system shift" in markdown
    assert HEADER in markdown
    low, high = s.judge_shift_ci or (None, None)
    assert low is not None
    assert high is not None
    judge = f"| judge (identical outputs) | 3 | -0.667 | [{low:+.3f}, {high:+.3f}] |"
    assert judge + " n/a (B gates no pass rate, mean or win rate) |" in markdown
    assert "| system (changed outputs) | 3 | +1.667 |" in markdown
    assert "Both on the mean scale." in markdown
    # Not twice: the numbers table of the reports leaves the split to its own table.
    assert "judge shift (3 identical outputs)" not in markdown
    html = render_drift_html(drift)
    assert "<h3>Judge shift vs system shift</h3>" in html
    assert "<td>judge (identical outputs)</td><td>3</td><td>-0.667</td>" in html
    # The terminal keeps them as rows under the shift.
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(terminal_tables(drift)[0])
    assert "judge shift (3 identical outputs)" in console.export_text()


def test_the_table_says_whether_the_judge_could_explain_b_s_gate_with_its_margin():
    drift = drift_of(SPLIT)
    for explains, word in ((True, "yes"), (False, "no")):
        gate = JudgeShiftGate(
            metric=GateMetric.MEAN,
            threshold=2.5,
            value=3.0,
            passed=True,
            minimum=True,
            margin=0.5,
            explains=explains,
        )
        summary = drift.summary.model_copy(update={"judge_shift_gate": gate})
        markdown = render_drift_markdown(dataclasses.replace(drift, summary=summary))
        assert f"| {word} (margin +0.500) |" in markdown
        assert "scale of B's gate (passed mean ≥ 2.5)" in markdown


def test_without_anchors_the_judges_row_has_no_shift_and_without_a_split_no_table():
    changed = drift_of({k: (x, y, True) for k, (x, y, _) in SPLIT.items()})
    markdown = render_drift_markdown(changed)
    assert "| judge (identical outputs) | 0 | n/a | n/a |" in markdown
    unsplit = changed.summary.model_copy(update={"n_identical": None, "n_system": None})
    assert "Judge shift vs system shift" not in render_drift_markdown(
        dataclasses.replace(changed, summary=unsplit)
    )

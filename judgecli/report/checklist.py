"""A checklist run in the reports: the checklist score with its interval and simple-evals'
bootstrap standard deviation, the score of each tag, and each case's items met or not met
(report.md's lowest-scored cases, report.html's case rows, JUnit's failure text).
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct, group_ci, reason_for
from judgecli.report.escape import esc
from judgecli.result import CaseResult, CaseStatus, ItemResult, natural_key
from judgecli.summary.score import ScoreSummary

CASES_SHOWN = 20
"""Cases whose items report.md lists (the lowest-scored first); results.jsonl has them all."""
SCORE_MEANS = (
    "The checklist score is HealthBench's: each case scores the points of its met items over "
    "its positive points (below 0 when it does what must not happen), and the score is their "
    "mean clipped to 0..1; a tag's score is the same over the items carrying the tag. "
    "Bootstrap std: simple-evals' (1,000 resamples)."
)


def checklist_rows(s: ScoreSummary) -> list[tuple[str, str, str]]:
    """The result table's checklist rows: the score with its 95% interval, and simple-evals'
    bootstrap standard deviation (none for a run that graded no checklist).
    """
    if s.checklist_score is None:
        return []
    why = reason_for(s.no_interval, "checklist_score")
    return [
        (
            "checklist score",
            fmt_pct(s.checklist_score),
            fmt_ci(s.checklist_score_ci, pct=True, why=why),
        ),
        ("  bootstrap std (simple-evals)", fmt_pct(s.checklist_score_bootstrap_std), ""),
    ]


def tag_section(s: ScoreSummary) -> list[Section]:
    """The score of each tag, with its interval and bootstrap std (none without tags)."""
    if not s.by_tag:
        return []
    rows = [
        (
            tag,
            str(t.n),
            fmt_pct(t.score),
            group_ci(t.score_ci, t.n, pct=True, why=reason_for(t.no_interval, "score")),
            fmt_pct(t.bootstrap_std),
        )
        for tag, t in s.by_tag.items()
    ]
    header = ["tag", "n", "score", "95% CI", "bootstrap std"]
    return [Section("checklist score by tag", header, rows, note=SCORE_MEANS)]


def item_mark(item: ItemResult) -> str:
    """✓ met, ✗ not met."""
    return "✓" if item.met else "✗"


def points_text(points: float) -> str:
    """Points with their sign: +5, −8."""
    return f"{'+' if points > 0 else '−'}{abs(points):g}"


def items_text(result: CaseResult) -> str:
    """A case's items as lines of text (JUnit): mark, points, criterion, the reasoning."""
    return "\n".join(
        f"{item_mark(i)} [{points_text(i.points)}] {i.criterion} "
        f"({'met' if i.met else 'not met'}): {i.reasoning}"
        for i in result.items or []
    )


def items_section(results: Sequence[CaseResult]) -> list[Section]:
    """report.md's table of the lowest-scored cases' items, met or not (none for a run
    without checklists).
    """
    graded = [r for r in results if r.status is CaseStatus.OK and r.items is not None]
    if not graded:
        return []
    shown = sorted(graded, key=lambda r: (r.score or 0.0, natural_key(r.id)))[:CASES_SHOWN]
    rows = [
        (
            r.id if n == 1 else "",
            fmt(r.score) if n == 1 else "",
            item_mark(i),
            points_text(i.points),
            i.criterion,
        )
        for r in shown
        for n, i in enumerate(r.items or [], start=1)
    ]
    more = len(graded) - len(shown)
    note = f"The {len(shown)} lowest-scored cases" + (
        f"; {more} more in results.jsonl (`items`)." if more else "."
    )
    return [
        Section(
            "checklist items by case", ["case", "score", "met", "points", "criterion"], rows, note
        )
    ]


def items_html(result: CaseResult) -> str:
    """A case's items as a table for its row of report.html (nothing for other cases)."""
    if not result.items:
        return ""
    rows = "".join(item_row_html(i) for i in result.items)
    met = sum(i.met for i in result.items)
    return (
        f"<h5>checklist: {met} of {len(result.items)} items met</h5>"
        '<table class="numbers"><thead><tr><th>met</th><th>points</th><th>criterion</th>'
        f"<th>tags</th><th>reasoning</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def item_row_html(item: ItemResult) -> str:
    """One item's row: its mark (a miss in the failure colour), points, text, tags, reason."""
    mark = item_mark(item) if item.met else f'<span class="failed">{item_mark(item)}</span>'
    tags = esc(", ".join(item.tags)) or NA
    return (
        f"<tr><td>{mark}</td><td>{esc(points_text(item.points))}</td>"
        f'<td class="text">{esc(item.criterion)}</td><td class="muted">{tags}</td>'
        f'<td class="text">{esc(item.reasoning)}</td></tr>'
    )

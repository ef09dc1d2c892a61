"""`judge report RUN_A RUN_B`: two runs of one rubric compared case by case, as tables for
the terminal (each metric in A and B, the paired delta and its interval, the paired tests).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct, rich_table
from judgecli.report.decision import fmt_p
from judgecli.summary.compare import Delta


def compare_section(deltas: Sequence[Delta], name_a: str, name_b: str) -> Section:
    """Run A → run B: each metric in A, then in B, the paired change B − A and its 95%
    interval. Rates are percentages, as in every other report; their change is in points.
    """
    rows = []
    for d in deltas:
        if d.rate:
            change = NA if d.delta is None else f"{100 * d.delta:+.1f} pts"
            lo, hi = d.ci
            ci = fmt_ci(d.ci, why=d.no_interval)
            if lo is not None and hi is not None:
                ci = f"[{100 * lo:+.1f}, {100 * hi:+.1f}] pts"
            rows.append((d.metric, fmt_pct(d.a), fmt_pct(d.b), change, ci, str(d.n_paired)))
        else:
            change = NA if d.delta is None else f"{d.delta:+.3f}"
            ci = fmt_ci(d.ci, why=d.no_interval)
            rows.append((d.metric, fmt(d.a, 3), fmt(d.b, 3), change, ci, str(d.n_paired)))
    return Section(
        f"A → B: {name_a} → {name_b} (paired on case id)",
        ["metric", "A", "B", "B − A", "95% CI", "paired cases"],
        rows,
    )


def paired_tests_section(deltas: Sequence[Delta]) -> Section:
    """The tests of each change: paired t, Wilcoxon signed-rank (scores, win rates) and the
    exact McNemar test (pass/fail: ranks of ±1 say nothing the signs do not).
    """
    return Section(
        "paired tests of B − A (two-sided p)",
        ["metric", "t test", "Wilcoxon", "McNemar (exact)"],
        [
            (
                d.metric,
                fmt_p(d.t_p),
                fmt_p(d.wilcoxon_p) if d.mcnemar_p is None else "",
                fmt_p(d.mcnemar_p) if d.mcnemar_p is not None else "",
            )
            for d in deltas
        ],
    )


def compare_tables(deltas: Sequence[Delta], name_a: str, name_b: str) -> list[Table]:
    """The run comparison as terminal tables (A's column first, as in the title), then the
    paired tests.
    """
    return [
        rich_table(compare_section(deltas, name_a, name_b)),
        rich_table(paired_tests_section(deltas)),
    ]

"""Comparing two runs of the same rubric: per-metric deltas with intervals and tests. Pure.

Cases are paired on id (both runs graded the same cases, e.g. before and after a prompt
change), so each delta's interval is a paired t interval of the per-case differences:
far tighter than comparing two independent intervals, and honest about which cases moved.
Beside it, the paired t test's p-value, the Wilcoxon signed-rank test's (no normality
assumed: scores on a 1–5 scale are not normal), and for pass/fail the exact McNemar test
on the cases that passed in one run only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgecli.errors import InputError
from judgecli.result import OUTCOME, CaseResult, CaseStatus
from judgecli.stats.interval_rule import mean_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.paired import discordant, mcnemar_exact, paired_t, wilcoxon_signed_rank
from judgecli.stats.scores import mean
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary, load_run


@dataclass(frozen=True)
class Delta:
    """One metric in run A and run B, and B − A on the cases both graded."""

    metric: str
    a: float | None
    b: float | None
    delta: float | None
    ci: Interval
    n_paired: int
    rate: bool = False
    """A share (win rate, pass rate, consistency): reports show it as a percentage."""
    t_p: float | None = None
    """Paired t test of B − A against 0 (two-sided)."""
    wilcoxon_p: float | None = None
    """Wilcoxon signed-rank test of B − A (two-sided; cases with no change left out)."""
    mcnemar_p: float | None = None
    """Pass/fail: exact McNemar test on the cases that passed in one run only."""
    no_interval: str | None = None
    """Why `ci` is (None, None) while there is a delta: one case, or no spread (every case
    changed by the same amount, none included)."""


def paired(
    a: Sequence[CaseResult], b: Sequence[CaseResult], value: Callable[[CaseResult], float | None]
) -> list[tuple[float, float]]:
    """(A's value, B's value) for every id both runs graded with a value."""
    b_by_id = {r.id: r for r in b if r.status is CaseStatus.OK}
    pairs = []
    for r in a:
        other = b_by_id.get(r.id)
        if r.status is not CaseStatus.OK or other is None:
            continue
        x, y = value(r), value(other)
        if x is not None and y is not None:
            pairs.append((x, y))
    return pairs


def delta(
    metric: str, pairs: list[tuple[float, float]], *, rate: bool = False, binary: bool = False
) -> Delta:
    """The paired difference B − A with its t interval and tests (`binary`: 0/1 values,
    which get McNemar's test too).
    """
    diffs = [y - x for x, y in pairs]
    t = paired_t(diffs)
    change = mean(diffs)
    mcnemar = None
    if binary:
        mcnemar = mcnemar_exact(*discordant([x == 1 for x, _ in pairs], [y == 1 for _, y in pairs]))
    return Delta(
        metric=metric,
        a=mean([x for x, _ in pairs]),
        b=mean([y for _, y in pairs]),
        delta=change,
        ci=t.ci,
        n_paired=len(pairs),
        rate=rate,
        t_p=t.p_value,
        wilcoxon_p=None if binary else wilcoxon_signed_rank(diffs),
        mcnemar_p=mcnemar,
        no_interval=None if change is None else mean_interval(diffs, what="change").why,
    )


def passed_value(r: CaseResult) -> float | None:
    """1 for a pass, 0 for a fail, None without a pass mark."""
    return None if r.passed is None else float(r.passed)


def win_value(r: CaseResult) -> float | None:
    """NEW's outcome: 1 win, 0.5 tie, 0 loss."""
    return None if r.winner is None else OUTCOME[r.winner]


def consistent_value(r: CaseResult) -> float | None:
    """1 when both orders agreed, 0 when not, None without a flip."""
    return None if r.consistent is None else float(r.consistent)


def criterion(name: str) -> Callable[[CaseResult], float | None]:
    """The value function for one criterion's score."""
    return lambda r: r.criteria.get(name)


def compare_runs(
    a: RunSummary, a_results: Sequence[CaseResult], b: RunSummary, b_results: Sequence[CaseResult]
) -> list[Delta]:
    """The deltas that matter for the runs' command."""
    deltas = []
    if isinstance(a, PairwiseSummary):
        deltas.append(delta("win_rate", paired(a_results, b_results, win_value), rate=True))
        deltas.append(
            delta(
                "consistency",
                paired(a_results, b_results, consistent_value),
                rate=True,
                binary=True,
            )
        )
    else:
        deltas.append(delta("mean", paired(a_results, b_results, lambda r: r.score)))
        deltas.append(
            delta("pass_rate", paired(a_results, b_results, passed_value), rate=True, binary=True)
        )
        for name in a.criteria:
            deltas.append(delta(f"criteria.{name}", paired(a_results, b_results, criterion(name))))
    return [d for d in deltas if d.n_paired]


def compare_finished_runs(run_a: Path, run_b: Path) -> list[Delta]:
    """What changed from run A to run B, case by case: two finished runs of one command
    and one rubric (InputError otherwise: other numbers, or another scale, say nothing
    about a change).
    """
    summary, results = load_run(run_a)
    summary_b, results_b = load_run(run_b)
    if summary.rubric_hash != summary_b.rubric_hash or summary.command != summary_b.command:
        raise InputError(
            f"{run_a} and {run_b} are not runs of the same command and rubric "
            f"({summary.command} {summary.rubric_hash} vs {summary_b.command} "
            f"{summary_b.rubric_hash})",
            hint="compare two runs of one rubric, e.g. before and after a prompt change",
        )
    return compare_runs(summary, results, summary_b, results_b)

"""The pytest session's numbers and its gate: the judged cases of every test, pooled (from
every xdist worker), as `judge score` and `judge pairwise` count a run's cases, and the
session's exit status.

Each judged call is one case. Graded cases give the pass rate (Wilson's interval) and, per
rubric, the mean score (Student t, clipped to the scale, or no interval and why); compared
pairs give NEW's win rate with ties counted half (the bootstrap, seed 0 as judge's default
--seed, Wilson where it is degenerate): the functions `summary.score` and
`summary.pairwise` use, so the same cases give the same numbers as a `judge` run
(docs/statistics.md, "Intervals at small n"). Overall, and by test module.

The gate compares each threshold as judge's gate does (`deciding.gate.check`) and has its
three outcomes: passed, failed on judged evidence, undecided.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from judgecli.api.pytest_cases import CallKind, JudgedCase
from judgecli.deciding.gate import check
from judgecli.deciding.undecided import Undecided, undecided_check
from judgecli.errors import ExitCode
from judgecli.stats.interval_rule import NO_INTERVAL, Bounded, mean_interval, proportion_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.pairwise import win_rate, win_rate_bootstrap_interval
from judgecli.stats.scores import mean, pass_rate
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOn, GateOutcome
from judgecli.summary.pairwise import outcomes, tally

if TYPE_CHECKING:
    from judgecli.api.pytest_session import GateAsked

ALL = "all"
"""The row of every case, above the rows of each module."""
PYTEST_EXIT = {
    ExitCode.GATE_FAILED: pytest.ExitCode.TESTS_FAILED,
    ExitCode.INCOMPLETE: pytest.ExitCode.INTERNAL_ERROR,
    ExitCode.BAD_INPUT: pytest.ExitCode.USAGE_ERROR,
}
"""judge's exit codes (docs/contract.md) in pytest's numbers: 1 is both tools' failure; a
run that could not finish is 3 in both (pytest's INTERNAL_ERROR); judge's bad usage (2 in
judge, pytest's "interrupted") is pytest's usage error, 4."""


@dataclass(frozen=True)
class Graded:
    """Graded cases' numbers: the pass rate and the mean score, with their intervals."""

    cases: int
    passed: int
    decided: int
    """Cases with a pass or fail (a rubric without pass_at gives none)."""
    pass_rate: float | None
    pass_rate_ci: Interval
    mean: float | None
    mean_ci: Interval
    no_interval: str | None
    """Why the mean has no interval, when it has a value and none."""


@dataclass(frozen=True)
class Compared:
    """Compared pairs' numbers: NEW's wins, losses and ties, and its win rate (ties half)."""

    pairs: int
    wins: int
    losses: int
    ties: int
    win_rate: float | None
    win_rate_ci: Interval

    @property
    def dropped(self) -> int:
        """Pairs with no winner (the `drop` flip policy)."""
        return self.pairs - self.wins - self.losses - self.ties


def graded(cases: Sequence[JudgedCase], scale: tuple[float, float] | None) -> Graded:
    """The numbers of graded cases, their mean clipped to `scale` (None: several rubrics,
    whose scores have no common mean).
    """
    decided = [c.passed for c in cases if c.passed is not None]
    scores = [c.score for c in cases if c.score is not None]
    spread = Bounded(NO_INTERVAL)
    if scale is not None and scores:
        spread = mean_interval(scores, bounds=scale, what="score")
    return Graded(
        cases=len(cases),
        passed=sum(decided),
        decided=len(decided),
        pass_rate=pass_rate(decided),
        pass_rate_ci=proportion_interval(sum(decided), len(decided)),
        mean=mean(scores) if scale is not None else None,
        mean_ci=spread.ci,
        no_interval=spread.why,
    )


def compared(cases: Sequence[JudgedCase]) -> Compared:
    """The numbers of compared pairs."""
    winners = [c.winner for c in cases if c.winner is not None]
    wins, losses, ties = tally(winners)
    return Compared(
        pairs=len(cases),
        wins=wins,
        losses=losses,
        ties=ties,
        win_rate=win_rate(wins, losses, ties),
        win_rate_ci=win_rate_bootstrap_interval(outcomes(winners), seed=0),
    )


@dataclass(frozen=True)
class Table:
    """One rubric's cases: every case, then each test module's (by name: the same order
    whichever xdist worker ran which test).
    """

    rubric: str
    kind: CallKind
    judges: list[str]
    scale: tuple[float, float] | None
    rows: list[tuple[str, Graded | Compared]]


def tables(cases: Sequence[JudgedCase]) -> list[Table]:
    """A table per rubric (and kind of call), graded ones first."""
    grouped: dict[tuple[CallKind, str, tuple[float, float] | None], list[JudgedCase]]
    grouped = defaultdict(list)
    for case in cases:
        grouped[(case.kind, case.rubric, case.scale)].append(case)
    made = []
    for (kind, rubric, scale), group in sorted(
        grouped.items(), key=lambda g: g[0][0] != CallKind.GRADE
    ):
        modules: dict[str, list[JudgedCase]] = defaultdict(list)
        for case in group:
            modules[case.module].append(case)
        parts = [(ALL, group), *sorted(modules.items())]
        rows: list[tuple[str, Graded | Compared]] = [
            (name, graded(part, scale) if kind is CallKind.GRADE else compared(part))
            for name, part in parts
        ]
        judges = list(dict.fromkeys(case.judge for case in group))
        made.append(Table(rubric, kind, judges, scale, rows))
    return made


@dataclass(frozen=True)
class SessionOutcome:
    """What the session judged, its numbers, the gate's checks and verdict, and the exit
    code judge's contract gives it.
    """

    tables: list[Table]
    pooled: Graded | None
    """Every graded case of the session (the gate's pass rate and mean), None without one."""
    pooled_pairs: Compared | None
    """Every compared pair of the session (the gate's win rate), None without one."""
    checks: list[GateCheck]
    gate: GateOutcome | None
    """The gate's verdict; None when no threshold was given."""
    undecided: list[Undecided]
    ungraded: list[JudgedCase]
    unmade: list[str]
    lost: list[str]
    exit_code: ExitCode = ExitCode.OK


def decide(
    cases: Sequence[JudgedCase], asked: GateAsked, *, unmade: list[str], lost: list[str]
) -> SessionOutcome:
    """The session's numbers, its gate, and the exit code they give: 2 when the judge could
    not be made, 3 when a call could not be graded, a worker was lost or the gate cannot
    decide, 1 when the gate failed on judged evidence, else 0.
    """
    done = [c for c in cases if c.graded]
    grades = [c for c in done if c.kind is CallKind.GRADE]
    pairs = [c for c in done if c.kind is CallKind.COMPARE]
    scales = {c.scale for c in grades}
    rubrics = {c.rubric for c in grades}
    one_scale = next(iter(scales)) if len(scales) == 1 and len(rubrics) == 1 else None
    pooled = graded(grades, one_scale) if grades else None
    pooled_pairs = compared(pairs) if pairs else None
    on = GateOn(asked.on)
    made = [
        checked(metric, bar, pooled, pooled_pairs, on, mixed=len(rubrics) > 1)
        for metric, bar in (
            (GateMetric.PASS_RATE, asked.min_pass_rate),
            (GateMetric.MEAN, asked.min_mean),
            (GateMetric.WIN_RATE, asked.min_win_rate),
        )
        if bar is not None
    ]
    checks = [c for c, _ in made]
    whys = [why for _, why in made if why is not None]
    gate = None
    if checks:
        failed = any(c.decided and not c.passed for c in checks)
        gate = (
            GateOutcome.FAILED if failed else GateOutcome.UNDECIDED if whys else GateOutcome.PASSED
        )
    ungraded = [c for c in cases if not c.graded]
    if unmade:
        code = ExitCode.BAD_INPUT
    elif ungraded or lost or gate is GateOutcome.UNDECIDED:
        code = ExitCode.INCOMPLETE
    elif gate is GateOutcome.FAILED:
        code = ExitCode.GATE_FAILED
    else:
        code = ExitCode.OK
    return SessionOutcome(
        tables=tables(done),
        pooled=pooled,
        pooled_pairs=pooled_pairs,
        checks=checks,
        gate=gate,
        undecided=whys,
        ungraded=ungraded,
        unmade=list(unmade),
        lost=list(lost),
        exit_code=code,
    )


def checked(
    metric: GateMetric,
    bar: float,
    pooled: Graded | None,
    pairs: Compared | None,
    on: GateOn,
    *,
    mixed: bool,
) -> tuple[GateCheck, Undecided | None]:
    """One threshold against the session's number, compared as judge's gate compares it;
    undecided, and why, when the number or the bound compared does not exist.
    """
    if metric is GateMetric.WIN_RATE:
        point, interval = (pairs.win_rate, pairs.win_rate_ci) if pairs else (None, None)
    elif metric is GateMetric.PASS_RATE:
        point, interval = (pooled.pass_rate, pooled.pass_rate_ci) if pooled else (None, None)
    else:
        point, interval = (pooled.mean, pooled.mean_ci) if pooled else (None, None)
    made, why = check(metric, bar, point, interval, on, minimum=True)
    if why is None:
        return made, None
    return undecided_check(made, missing(metric, point, pooled, mixed=mixed))


def missing(
    metric: GateMetric, point: float | None, pooled: Graded | None, *, mixed: bool
) -> Undecided:
    """Why a threshold has no number (or no bound) to compare."""
    if point is not None:
        why = (
            f": {pooled.no_interval}"
            if metric is GateMetric.MEAN and pooled and pooled.no_interval
            else ""
        )
        return Undecided(
            f"the {metric.value.replace('_', ' ')} ({point:.3g}) has no 95% interval{why}, so "
            "--judge-on lower-bound has no bound to compare",
            "judge more (and more varied) cases, or gate on the point estimate (--judge-on point)",
        )
    if metric is GateMetric.MEAN and mixed:
        return Undecided(
            "no mean score: the session graded with several rubrics, whose scores have no "
            "common scale",
            "gate on --judge-min-pass-rate, or run the tests of one rubric",
        )
    if metric is GateMetric.WIN_RATE:
        return Undecided(
            "no win rate: no pair of this session was compared with a winner",
            "run the tests that compare, or leave out --judge-min-win-rate",
        )
    name, flag = (
        ("pass rate", "pass-rate") if metric is GateMetric.PASS_RATE else ("mean score", "mean")
    )
    return Undecided(
        f"no {name}: no case of this session was graded with one",
        f"run the tests that call llm_judge.grade (with a rubric that gives a {name}), "
        f"or leave out --judge-min-{flag}",
    )


def session_exit(status: int, outcome: SessionOutcome) -> int:
    """The session's exit status: pytest's own when it stopped short (interrupted, an
    internal or usage error, nothing collected), else the judge's when it says more than
    OK, else pytest's.
    """
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return status
    if outcome.exit_code is ExitCode.OK:
        return status
    return PYTEST_EXIT[outcome.exit_code]

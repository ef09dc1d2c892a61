"""CaseResults of a `judge arena` run → its ArenaSummary: the Bradley–Terry leaderboard
with bootstrap intervals and ranks, the win-rate matrix, and (asked for) the style-
controlled leaderboard. The arithmetic is `stats.bradley_terry`'s; what a comparison is
(which systems, whose outcome) is decided here.

Each result is one comparison of two systems on one case, both orders judged and
reconciled as in `judge pairwise`: its `winner` is "old" (the first system of the pair, in
file order), "new" or "tie". A failed comparison, and one the "drop" flip policy left
undecided, are outside the fit; both are counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.rubric import Rubric
from judgecli.stats.bradley_terry import (
    RIDGE,
    Comparisons,
    Resampled,
    bootstrap_bradley_terry,
    components,
    elo_scores,
    fit_bradley_terry,
    ranks,
    scaled_columns,
    score_intervals,
    share_above,
    win_table,
)
from judgecli.stats.interval_rule import Bounded, bootstrap_bounded
from judgecli.stats.intervals import FloatArray, Interval
from judgecli.stats.resampling import Bootstrapped, clusters_of
from judgecli.summary.arena_length import LengthControlled, Matched, arena_length_control
from judgecli.summary.arena_style import style_of
from judgecli.summary.facts import FailedCase, Usage
from judgecli.summary.gate_records import ConsistencyFloor
from judgecli.summary.head import run_facts
from judgecli.summary.parts import Part, Record

RESAMPLES = 1000
"""Bootstrap resamples of cases behind every interval, rank and beat share."""
OUTCOME = {Winner.OLD: 1.0, Winner.TIE: 0.5, Winner.NEW: 0.0}
"""The first (old) system's outcome of a comparison."""
STYLE = ("length", "markdown")
"""The style covariates, in the order of the regression's columns."""


class Standing(Part):
    """One system's line of a leaderboard."""

    name: str
    score: float
    """Bradley–Terry score on the Elo-like scale (1000 = the anchor)."""
    score_ci: Interval
    """95% percentile bootstrap interval, resampling cases."""
    rank: int
    """1 + the systems whose interval lies wholly above this one's."""
    wins: int
    losses: int
    ties: int
    n: int
    """Decided comparisons this system took part in."""
    win_rate: float | None = None
    """Its share of those won, ties counting half (against whichever opponents it met)."""
    no_interval: dict[str, str] | None = None
    """Why `score_ci` is null (every resample alike: one case, or every case decided the
    same way), as a run summary's `no_interval`."""


class Coefficient(Record):
    """A style covariate's fitted effect on the log-odds of winning, per root-mean-square
    unit of the covariate; null when the covariate is 0 in every comparison (no answer
    differs from its opponent in it), and so left out of the fit.
    """

    estimate: float | None = None
    ci: Interval = (None, None)
    unit: float | None = None
    """The covariate's root mean square over the comparisons (its raw value per unit)."""


class StyleControl(Part):
    """The leaderboard with style held fixed (`--style-control`)."""

    covariates: dict[str, Coefficient]
    leaderboard: list[Standing]
    above_share: dict[str, dict[str, float | None]]


class ScheduleSummary(Record):
    """Which comparisons were planned, and how."""

    kind: str
    """"round-robin", "baseline" or "adaptive"."""
    pairs: int
    """System pairs that could be compared."""
    planned: int
    """Comparisons planned (each judged in both orders)."""
    baseline: str | None = None
    budget: int | None = None
    max_pairs_per_case: int | None = None
    warmup_cases: int | None = None
    rounds: int | None = None


class Method(Part):
    """How the numbers were made (fixed by this version of judge; recorded for readers)."""

    model: str = "Bradley-Terry, maximum likelihood"
    ties: str = "half a win each way"
    ridge: float = RIDGE
    scale: str = "1000 + 400*log10(odds) from the anchor"
    interval: str = "95% percentile bootstrap over cases"
    resamples: int = RESAMPLES
    rank: str = "1 + systems whose interval lies wholly above"


class GateCheck(Record):
    """One check of the arena's gate."""

    check: Literal["beats", "min_rank"]
    against: str | None = None
    """--beats: the system it must beat."""
    value: float | None
    """--beats: the share of resamples with the system above `against`; --min-rank: its rank."""
    threshold: float
    passed: bool
    decided: bool = True
    """False below the position-consistency floor (`passed` is then false too)."""


class ArenaGate(Record):
    """The gate's verdict on one system (--for): passed, failed (exit 1) or, when the judge
    is below the position-consistency floor, undecided (exit 3).
    """

    passed: bool
    system: str
    leaderboard: Literal["raw", "style-controlled"]
    checks: list[GateCheck]
    decided: bool = True
    undecided: str | None = None
    """Why the gate is undecided; null when it is decided."""
    hint: str | None = None
    """What to do about an undecided gate."""
    consistency_floor: ConsistencyFloor | None = None
    """A run judged in both orders: the floor and the arena's consistency."""


class ArenaSummary(Part):
    """summary.json of `judge arena`."""

    command: Literal["arena"] = "arena"
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    models: list[str]
    n_cases: int
    """Distinct case ids with at least one comparison."""
    n_comparisons: int
    n_ok: int
    n_failed: int
    usage: Usage
    systems: list[str]
    """In file order."""
    files: dict[str, str]
    schedule: ScheduleSummary
    anchor: str
    """"mean" (the mean strength scores 1000) or the baseline system's name."""
    leaderboard: list[Standing]
    """Best first; empty when the comparisons do not link every system."""
    win_rate_matrix: dict[str, dict[str, float | None]]
    """Row's win rate against column (ties half); null where they never met."""
    comparisons: dict[str, dict[str, int]]
    """Decided comparisons per pair of systems."""
    above_share: dict[str, dict[str, float | None]]
    """Share of bootstrap resamples with row's score above column's."""
    style_control: StyleControl | None = None
    length_controlled: LengthControlled | None = None
    """Each system's win rate against the baseline at equal answer length (AlpacaEval 2's
    GLM with its instruction-difficulty term); null under 10 comparisons with it."""
    flip: bool
    flip_policy: str
    consistency: float | None = None
    """Share of graded comparisons whose two orders agreed."""
    dropped: int = 0
    """Graded comparisons the drop flip policy left without a winner."""
    method: Method = Field(default_factory=Method)
    disconnected_groups: list[list[str]] | None = None
    """When the decided comparisons do not link every system: the groups they form."""
    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    gate: ArenaGate | None = None
    incomplete: str | None = None


@dataclass(frozen=True)
class Board:
    """A fitted leaderboard with its bootstrap."""

    standings: list[Standing]
    above: dict[str, dict[str, float | None]]
    boot: Resampled
    coefficients: list[float]


def fitted_board(
    c: Comparisons,
    clusters: list[list[int]],
    systems: list[str],
    *,
    anchor: int | None,
    seed: int,
    resamples: int,
) -> Board:
    """The leaderboard of one fit (raw or style-controlled), best first."""
    fit = fit_bradley_terry(c)
    boot = bootstrap_bradley_terry(c, clusters, resamples=resamples, seed=seed)
    scores = elo_scores(fit.strengths, anchor=anchor).tolist()
    samples = elo_scores(boot.strengths, anchor=anchor)
    # The anchor scores 1000 in every resample by definition, not by certainty: its interval
    # stays the point it is. Any other score alike in every resample has none.
    found = [
        Bounded(ci)
        if i == anchor and ci[0] is not None
        else bootstrap_bounded(Bootstrapped(ci, len(clusters), len(samples), len(samples)))
        for i, ci in enumerate(score_intervals(samples))
    ]
    intervals = [b.ci for b in found]
    ranked = ranks(scores, intervals)
    table = win_table(c)
    standings = []
    for i, name in enumerate(systems):
        as_first, as_second = c.outcome[c.first == i], c.outcome[c.second == i]
        won = np.concatenate([as_first, 1.0 - as_second])
        n = int(won.size)
        standings.append(
            Standing(
                name=name,
                score=scores[i],
                score_ci=intervals[i],
                rank=ranked[i],
                wins=int(np.sum(won == 1.0)),
                losses=int(np.sum(won == 0.0)),
                ties=int(np.sum(won == 0.5)),
                n=n,
                win_rate=float(table.won[i].sum() / n) if n else None,
                no_interval={"score": found[i].why} if found[i].why else None,
            )
        )
    standings.sort(key=lambda s: (-s.score, systems.index(s.name)))
    above = {
        a: {b: share_above(samples, i, j) for j, b in enumerate(systems) if j != i}
        for i, a in enumerate(systems)
    }
    return Board(standings, above, boot, fit.coefficients.tolist())


def summarize_arena(
    results: Sequence[CaseResult],
    matched: Mapping[str, Matched],
    *,
    systems: list[str],
    files: dict[str, str],
    rubric: Rubric,
    models: list[str],
    schedule: ScheduleSummary,
    anchor: str | None,
    style_control: bool,
    flip: bool,
    flip_policy: str,
    seed: int,
    resamples: int = RESAMPLES,
) -> ArenaSummary:
    """The arena's numbers from its results (those of comparisons in `matched`, in the
    order given: id order makes the bootstrap the same however the run was judged).
    """
    rows = [r for r in results if r.id in matched]
    ok = [r for r in rows if r.status is CaseStatus.OK]
    decided = [r for r in ok if r.winner is not None]
    index = {name: i for i, name in enumerate(systems)}
    styles = np.asarray([style_of(r) for r in decided]).reshape(-1, len(STYLE))
    c = Comparisons.of(
        [index[matched[r.id].old] for r in decided],
        [index[matched[r.id].new] for r in decided],
        [OUTCOME[r.winner] for r in decided if r.winner is not None],
        n_systems=len(systems),
    )
    clusters = clusters_of([matched[r.id].case_id for r in decided])
    table = win_table(c)
    facts = run_facts(rows, rubric=rubric, models=models)
    summary = ArenaSummary(
        rubric=facts["rubric"],
        rubric_version=facts["rubric_version"],
        rubric_hash=facts["rubric_hash"],
        models=models,
        n_cases=len({matched[r.id].case_id for r in rows}),
        n_comparisons=len(rows),
        n_ok=facts["n_ok"],
        n_failed=facts["n_failed"],
        usage=facts["usage"],
        systems=systems,
        files=files,
        schedule=schedule,
        anchor=anchor if anchor is not None else "mean",
        leaderboard=[],
        win_rate_matrix={
            a: {b: table.rate(i, j) for j, b in enumerate(systems) if j != i}
            for i, a in enumerate(systems)
        },
        comparisons={
            a: {b: int(table.played[i, j]) for j, b in enumerate(systems) if j != i}
            for i, a in enumerate(systems)
        },
        above_share={},
        flip=flip,
        flip_policy=flip_policy,
        consistency=(float(np.mean([bool(r.consistent) for r in ok])) if flip and ok else None),
        dropped=len(ok) - len(decided),
        method=Method(resamples=resamples),
        failures=facts["failures"],
        length_controlled=arena_length_control(
            rows,
            matched,
            systems=systems,
            baseline=anchor if anchor is not None else systems[0],
            seed=seed,
            resamples=resamples,
        ),
    )
    groups = components(c)
    if len(groups) > 1:
        named = [[systems[i] for i in group] for group in groups]
        return summary.model_copy(update={"disconnected_groups": named})
    at = None if anchor is None else index[anchor]
    raw = fitted_board(c, clusters, systems, anchor=at, seed=seed, resamples=resamples)
    update: dict[str, object] = {"leaderboard": raw.standings, "above_share": raw.above}
    if style_control:
        update["style_control"] = style_controlled(
            c, styles, clusters, systems, anchor=at, seed=seed, resamples=resamples
        )
    return summary.model_copy(update=update)


def style_controlled(
    c: Comparisons,
    styles: FloatArray,
    clusters: list[list[int]],
    systems: list[str],
    *,
    anchor: int | None,
    seed: int,
    resamples: int,
) -> StyleControl:
    """The leaderboard fitted with the style covariates (each divided by its root mean
    square), and their coefficients with bootstrap intervals.
    """
    varying = [k for k in range(styles.shape[1]) if np.any(styles[:, k] != 0)]
    scaled, unit = scaled_columns(styles[:, varying])
    with_style = Comparisons.of(
        c.first, c.second, c.outcome, n_systems=c.n_systems, covariates=scaled
    )
    board = fitted_board(
        with_style, clusters, systems, anchor=anchor, seed=seed, resamples=resamples
    )
    intervals = score_intervals(board.boot.coefficients)
    covariates = {name: Coefficient(estimate=None, ci=(None, None), unit=None) for name in STYLE}
    for column, k in enumerate(varying):
        covariates[STYLE[k]] = Coefficient(
            estimate=board.coefficients[column], ci=intervals[column], unit=float(unit[column])
        )
    return StyleControl(covariates=covariates, leaderboard=board.standings, above_share=board.above)

"""An arena's length-controlled win rates → ArenaSummary's `length_controlled`: each system
against one baseline at equal answer length, with AlpacaEval 2's instruction-difficulty
term fitted jointly over the systems (`stats.instruction_difficulty` does the arithmetic;
arena.md and statistics.md explain it). Which comparisons count, and whose outcome, is
decided here.

The baseline is `--baseline`, else the first file's system (the OLD of `judge pairwise`).
Only comparisons with the baseline enter, as only those exist in AlpacaEval; in a round
robin the other pairs feed the Bradley–Terry leaderboard, not this. With one system besides
the baseline there is no instruction term (one outcome per case would be all it explains):
that system gets the two-system fit of `judge pairwise`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.stats.instruction_difficulty import Contests, joint_length_control
from judgecli.stats.intervals import Interval
from judgecli.stats.length_control import MIN_CASES, length_controlled_win_rate
from judgecli.summary.length_control import OutcomeKind
from judgecli.summary.parts import Part, Record

MIN_SYSTEMS = 2
"""Systems besides the baseline the instruction term needs (statistics.md: with two, its
fit is noisier than with five, but already removes most of the two-system fit's bias)."""
OUTCOME = {Winner.OLD: 1.0, Winner.TIE: 0.5, Winner.NEW: 0.0}
"""The first (old) system's outcome of a comparison."""
METHOD = (
    "AlpacaEval 2's length-controlled GLM (Dubois et al. 2024): per case a difficulty term "
    "fitted jointly over the systems' comparisons with the baseline (the baseline tying "
    "itself once per case), then per system logit = theta + phi*tanh(dlen/sd) + psi*gamma, "
    "averaged at dlen = 0, its prior centred on the joint fit (sd 3.2); no L1 penalty or "
    "gamed-baseline rows"
)
METHOD_TWO_SYSTEMS = (
    "AlpacaEval 2's GLM without its instruction-difficulty term (one system besides the "
    "baseline): logit = theta + phi*tanh(dlen/sd), predicted at dlen = 0"
)


@dataclass(frozen=True)
class Matched:
    """Which systems a comparison's result is of, and on which case."""

    case_id: str
    old: str
    new: str


class ControlledStanding(Record):
    """One system's length-controlled win rate against the baseline."""

    name: str
    win_rate: float | None
    """At equal answer length: the mean over its cases of sigmoid(θ + ψ·γ_case)."""
    win_rate_ci: Interval
    """95% percentile bootstrap over cases (both steps refitted in each resample)."""
    win_rate_raw: float | None
    """Its mean outcome against the baseline in the comparisons fitted."""
    coefficient: float | None
    """φ, the length weight in log-odds (> 0: the judge favours the longer answer)."""
    coefficient_ci: Interval
    loading: float | None
    """ψ, the weight of the instruction term in its own fit (null without the term)."""
    n: int
    """Comparisons with the baseline that have both answers' lengths."""
    reason: str | None
    """Why there is no rate; else null."""


class InstructionDifficulty(Record):
    """The per-case term γ (log-odds) the systems' fits share."""

    n_cases: int
    """Cases with a γ (compared with the baseline by a fitted system)."""
    sd: float | None
    """Spread of γ over them: how much the cases differ in how the baseline fares."""


class LengthControlled(Part):
    """summary.json → `length_controlled` of an arena."""

    baseline: str
    outcome: OutcomeKind
    standings: list[ControlledStanding]
    """Every other system, the highest rate first (those without one last)."""
    win_rate_matrix: dict[str, dict[str, float | None]] | None = None
    """Row's win rate against column at equal length (AlpacaEval's predicted matrix), the
    baseline included; null without the instruction term."""
    instruction_difficulty: InstructionDifficulty | None = None
    """Null when there is no instruction term (one system besides the baseline)."""
    method: str


def probability_outcome(result: CaseResult) -> float | None:
    """The first system's P(win) + ½ P(tie) from the judge's probabilities, if recorded."""
    p = result.probabilities
    if not p:
        return None
    return p.get("old", 0.0) + 0.5 * p.get("tie", 0.0)


def answer_lengths(result: CaseResult) -> tuple[int, int] | None:
    """Characters of the first and second system's answers, as results.jsonl records them."""
    if {"old", "new"} <= result.lengths.keys():
        return result.lengths["old"], result.lengths["new"]
    return None


def arena_length_control(
    results: Sequence[CaseResult],
    matched: Mapping[str, Matched],
    *,
    systems: list[str],
    baseline: str,
    seed: int,
    resamples: int,
) -> LengthControlled | None:
    """Each system's length-controlled win rate against `baseline`; None when no system
    besides it has MIN_CASES comparisons with it.
    """
    ok = [r for r in results if r.id in matched and r.status is CaseStatus.OK]
    weighed = any(probability_outcome(r) is not None for r in ok)
    others = [name for name in systems if name != baseline]
    rows: list[tuple[int, str, float, float]] = []
    for r in ok:
        pair, sizes = matched[r.id], answer_lengths(r)
        if baseline not in (pair.old, pair.new) or sizes is None:
            continue
        y = probability_outcome(r) if weighed else None
        if y is None:
            if r.winner is None:
                continue
            y = OUTCOME[r.winner]
        first = pair.old != baseline
        system = pair.old if first else pair.new
        own, base = (sizes[0], sizes[1]) if first else (sizes[1], sizes[0])
        rows.append((others.index(system), pair.case_id, y if first else 1.0 - y, own - base))
    if not rows:
        return None
    counts = np.bincount([s for s, *_ in rows], minlength=len(others))
    if counts.max() < MIN_CASES:
        return None
    outcome = OutcomeKind.PROBABILITY if weighed else OutcomeKind.VERDICT
    if int(np.sum(counts >= MIN_CASES)) < MIN_SYSTEMS:
        return two_system_fits(rows, others, baseline, outcome, seed=seed, resamples=resamples)
    return joint_fits(rows, others, baseline, outcome, seed=seed, resamples=resamples)


def joint_fits(
    rows: list[tuple[int, str, float, float]],
    others: list[str],
    baseline: str,
    outcome: OutcomeKind,
    *,
    seed: int,
    resamples: int,
) -> LengthControlled:
    """The instruction term fitted jointly, then each system's fit with it."""
    case_ids = sorted({case for _, case, _, _ in rows})
    where = {case: i for i, case in enumerate(case_ids)}
    system, case, y, d = zip(*rows, strict=True)
    c = Contests.of(
        system, [where[x] for x in case], y, d, n_systems=len(others), n_cases=len(case_ids)
    )
    fit = joint_length_control(c, resamples=resamples, seed=seed)
    standings = []
    for m, name in enumerate(others):
        mine = c.outcome[c.system == m]
        reason = None
        if fit.win_rate[m] is None:
            reason = (
                f"fewer than {MIN_CASES} comparisons with {baseline} with lengths"
                if fit.n[m] < MIN_CASES
                else "every comparison has the same length difference"
                if not fit.fitted[m]
                else "no finite fit (outcomes separated)"
            )
        standings.append(
            ControlledStanding(
                name=name,
                win_rate=fit.win_rate[m],
                win_rate_ci=fit.win_rate_ci[m],
                win_rate_raw=float(mine.mean()) if mine.size else None,
                coefficient=fit.coefficient[m],
                coefficient_ci=fit.coefficient_ci[m],
                loading=fit.loading[m],
                n=fit.n[m],
                reason=reason,
            )
        )
    names = [*others, baseline]
    table = fit.matrix()
    gamma = fit.difficulty[~np.isnan(fit.difficulty)]
    return LengthControlled(
        baseline=baseline,
        outcome=outcome,
        standings=ranked(standings),
        win_rate_matrix={
            a: {b: finite(table[i, j]) for j, b in enumerate(names) if j != i}
            for i, a in enumerate(names)
        },
        instruction_difficulty=InstructionDifficulty(
            n_cases=int(gamma.size), sd=float(np.std(gamma, ddof=1)) if gamma.size > 1 else None
        ),
        method=METHOD,
    )


def two_system_fits(
    rows: list[tuple[int, str, float, float]],
    others: list[str],
    baseline: str,
    outcome: OutcomeKind,
    *,
    seed: int,
    resamples: int,
) -> LengthControlled:
    """Without the instruction term: each system's own two-parameter fit (pairwise's)."""
    standings = []
    for m, name in enumerate(others):
        y = [v for s, _, v, _ in rows if s == m]
        d = [v for s, _, _, v in rows if s == m]
        fit = length_controlled_win_rate(y, d, resamples=resamples, seed=seed)
        standings.append(
            ControlledStanding(
                name=name,
                win_rate=fit.win_rate,
                win_rate_ci=fit.win_rate_ci,
                win_rate_raw=float(np.mean(y)) if y else None,
                coefficient=fit.coefficient,
                coefficient_ci=fit.coefficient_ci,
                loading=None,
                n=fit.n,
                reason=None if fit.reason is None else fit.reason.value,
            )
        )
    return LengthControlled(
        baseline=baseline,
        outcome=outcome,
        standings=ranked(standings),
        method=METHOD_TWO_SYSTEMS,
    )


def ranked(standings: list[ControlledStanding]) -> list[ControlledStanding]:
    """The highest length-controlled rate first; those without one last, in file order."""
    return sorted(standings, key=lambda s: (s.win_rate is None, -(s.win_rate or 0.0)))


def finite(value: float) -> float | None:
    """A float for JSON: nan (no fit) is null."""
    return None if np.isnan(value) else float(value)

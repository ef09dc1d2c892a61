"""The length-controlled win rate of a pairwise summary: NEW's win rate at equal answer
length, how it was fitted (`length_control`), and the warning when length explains much
of the verdicts (`stats.length_control` does the arithmetic; statistics.md explains it).

It is AlpacaEval 2's length-controlled GLM without its instruction-difficulty term (that
term is estimated across many systems answering the same instructions: `judge arena`
fits it), so it is not the number AlpacaEval's leaderboard publishes for the same
verdicts. The outcome fitted is the judge's probability when the run has one
(--score-mode logprob: P(new) + ½ P(tie), as AlpacaEval fits its annotator's preference),
else the written verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from judgecli.result import OUTCOME, CaseResult, CaseStatus
from judgecli.stats.intervals import Interval
from judgecli.stats.length_control import length_controlled_win_rate
from judgecli.summary.parts import Record

NAME = "length-controlled win rate (AlpacaEval 2's GLM without its instruction-difficulty term)"
"""What the number is, in reports and warnings."""
METHOD = (
    "logistic GLM of NEW's outcome on tanh((len_new - len_old) / sd), predicted at equal "
    "length: AlpacaEval 2's length-controlled GLM (Dubois et al. 2024) without its "
    "instruction-difficulty term or regularisation"
)


class OutcomeKind(StrEnum):
    """What the fit takes as a comparison's outcome."""

    VERDICT = "verdict"
    """The written verdict: a win 1, a tie ½, a loss 0."""
    PROBABILITY = "probability"
    """--score-mode logprob: P(win) + ½ P(tie), the judge's token probabilities."""


class LengthControlSummary(Record):
    """How the length-controlled win rate was fitted (a logistic GLM of NEW's outcome on
    tanh(length difference / sigma); statistics.md, "Length-controlled win rate").
    """

    coefficient: float | None
    """The length term's weight in log-odds: > 0, the judge favours the longer answer."""
    coefficient_ci: Interval
    """Seeded percentile bootstrap over cases, 95%."""
    sigma: float | None
    """Standard deviation of len_new − len_old (characters) over the cases fitted."""
    n: int
    """Decided cases with both answers' lengths (those fitted)."""
    method: str
    reason: str | None
    """Why there is no fit (too few cases, no length spread, separated verdicts); else None."""
    outcome: OutcomeKind | None = None
    """What was fitted: "probability" (--score-mode logprob: P(new) + ½ P(tie) per case) or
    "verdict" (win 1, tie ½, loss 0); absent from summaries of older judges."""


def fitted_outcomes(
    results: Sequence[CaseResult],
) -> tuple[list[float], list[float], OutcomeKind]:
    """NEW's outcome and len_new − len_old (characters) of each graded case whose result
    records both answers' lengths, and which outcome that is: the judge's P(new) + ½ P(tie)
    when the run recorded probabilities (every graded case, a verdict the flip policy
    dropped included, as `win_rate_weighted` counts them), else the written verdict of
    each decided case.
    """
    ok = [r for r in results if r.status is CaseStatus.OK and {"old", "new"} <= r.lengths.keys()]
    weighed = [r for r in ok if r.probabilities]
    if weighed:
        probabilities = [r.probabilities or {} for r in weighed]
        return (
            [p.get("new", 0.0) + 0.5 * p.get("tie", 0.0) for p in probabilities],
            [float(r.lengths["new"] - r.lengths["old"]) for r in weighed],
            OutcomeKind.PROBABILITY,
        )
    decided = [r for r in ok if r.winner is not None]
    return (
        [OUTCOME[r.winner] for r in decided if r.winner is not None],
        [float(r.lengths["new"] - r.lengths["old"]) for r in decided],
        OutcomeKind.VERDICT,
    )


def length_control_fields(results: Sequence[CaseResult], *, seed: int) -> dict[str, Any]:
    """The summary's `win_rate_length_controlled`, its `_ci` (None without a fit) and
    `length_control`, from the run's results (`fitted_outcomes` says which cases count).
    """
    outcomes, differences, kind = fitted_outcomes(results)
    fit = length_controlled_win_rate(outcomes, differences, seed=seed)
    return {
        "win_rate_length_controlled": fit.win_rate,
        "win_rate_length_controlled_ci": fit.win_rate_ci if fit.win_rate is not None else None,
        "length_control": LengthControlSummary(
            coefficient=fit.coefficient,
            coefficient_ci=fit.coefficient_ci,
            sigma=fit.sigma,
            n=fit.n,
            method=METHOD,
            reason=None if fit.reason is None else fit.reason.value,
            outcome=kind,
        ),
    }

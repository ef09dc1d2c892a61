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
from typing import TYPE_CHECKING, Any

from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.stats.intervals import Interval
from judgecli.stats.length_control import length_controlled_win_rate
from judgecli.summary.arena_length import OutcomeKind
from judgecli.summary.parts import Record

if TYPE_CHECKING:
    from judgecli.summary.pairwise import PairwiseSummary

NAME = "length-controlled win rate (AlpacaEval 2's GLM without its instruction-difficulty term)"
"""What the number is, in reports and warnings."""
METHOD = (
    "logistic GLM of NEW's outcome on tanh((len_new - len_old) / sd), predicted at equal "
    "length: AlpacaEval 2's length-controlled GLM (Dubois et al. 2024) without its "
    "instruction-difficulty term or regularisation"
)
OUTCOME = {Winner.OLD: 0.0, Winner.TIE: 0.5, Winner.NEW: 1.0}
"""NEW's outcome of a written verdict."""

GAP = 0.05
"""Raw and length-controlled win rates further apart than this (with a length coefficient
whose interval excludes 0) are warned about."""


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


def length_warnings(s: PairwiseSummary) -> list[str]:
    """A warning when length explains much of the verdicts: the length coefficient's 95%
    interval excludes 0 and the length-controlled win rate differs by more than GAP from the
    raw one it controls (the probability-weighted one when probabilities were fitted).
    """
    fit, controlled = s.length_control, s.win_rate_length_controlled
    weighed = fit is not None and fit.outcome is OutcomeKind.PROBABILITY
    raw = s.win_rate_weighted if weighed else s.win_rate
    if fit is None or fit.coefficient is None or raw is None or controlled is None:
        return []
    low, high = fit.coefficient_ci
    if low is None or high is None or low <= 0 <= high or abs(raw - controlled) <= GAP:
        return []
    ci_low, ci_high = s.win_rate_length_controlled_ci or (None, None)
    interval = "" if ci_low is None or ci_high is None else f" [{ci_low:.1%}, {ci_high:.1%}]"
    lengths = ""
    if s.length is not None and None not in (s.length.mean_length_new, s.length.mean_length_old):
        lengths = (
            f"; NEW's answers average {s.length.mean_length_new:,.0f} characters, "
            f"OLD's {s.length.mean_length_old:,.0f}"
        )
    favours = "longer" if fit.coefficient > 0 else "shorter"
    kind = " (probability-weighted)" if weighed else ""
    return [
        f"answer length sways the judge: at equal length NEW's win rate would be "
        f"{controlled:.1%}{interval}, not {raw:.1%}{kind} (the judge favours the {favours} "
        f"answer: length coefficient {fit.coefficient:+.2f} [{low:+.2f}, {high:+.2f}])"
        f"{lengths}; that is the {NAME}. "
        "The gate compares the raw win rate: before trusting it, check in report.html whether "
        "the length difference is substance or padding (win_rate_length_controlled is the rate "
        "at equal length), and consider telling the judge in the rubric not to prefer an "
        "answer for its length"
    ]

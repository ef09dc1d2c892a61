"""The length-controlled win rate of a pairwise summary: NEW's win rate at equal answer
length, how it was fitted (`length_control`), and the warning when length explains much
of the verdicts (`stats.length_control` does the arithmetic; statistics.md explains it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from judgecli.stats.intervals import Interval
from judgecli.stats.length_control import length_controlled_win_rate
from judgecli.summary.facts import Record

if TYPE_CHECKING:
    from judgecli.summary.pairwise import PairwiseSummary

METHOD = (
    "logistic GLM of NEW's outcome (win 1, tie 0.5, loss 0) on tanh((len_new - len_old) / sd), "
    "predicted at equal length (Dubois et al. 2024, AlpacaEval 2 LC, no instruction term)"
)

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


def length_control_fields(
    outcomes: Sequence[float], differences: Sequence[float], *, seed: int
) -> dict[str, Any]:
    """The summary's `win_rate_length_controlled`, its `_ci` (None without a fit) and
    `length_control`, from NEW's outcome and len_new − len_old (characters) per case.
    """
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
        ),
    }


def length_warnings(s: PairwiseSummary) -> list[str]:
    """A warning when length explains much of the verdicts: the length coefficient's 95%
    interval excludes 0 and the raw and length-controlled win rates differ by more than GAP.
    """
    fit, raw, controlled = s.length_control, s.win_rate, s.win_rate_length_controlled
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
    return [
        f"answer length sways the judge: at equal length NEW's win rate would be "
        f"{controlled:.1%}{interval}, not {raw:.1%} (the judge favours the {favours} answer: "
        f"length coefficient {fit.coefficient:+.2f} [{low:+.2f}, {high:+.2f}]){lengths}. "
        "The gate compares the raw win rate: before trusting it, check in report.html whether "
        "the length difference is substance or padding (win_rate_length_controlled is the rate "
        "at equal length), and consider telling the judge in the rubric not to prefer an "
        "answer for its length"
    ]

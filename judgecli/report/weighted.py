"""--score-mode logprob in a report: the rate weighed by the judge's token probabilities,
a row beside the rate of its written verdicts (pairwise: the win rate, also beside the
length-controlled one; binary: the pass rate). No row for a sampled run.
"""

from __future__ import annotations

from judgecli.report.cells import fmt_ci, fmt_pct
from judgecli.report.length_control import length_controlled_row
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.score import ScoreSummary

Row = tuple[str, str, str]


def adjusted_win_rates(s: PairwiseSummary) -> list[Row]:
    """The length-controlled win rate, and the probability-weighted one when measured."""
    rows = [length_controlled_row(s)]
    if s.win_rate_weighted is not None:
        rows.append(
            (
                "win rate, probability-weighted",
                fmt_pct(s.win_rate_weighted),
                fmt_ci(s.win_rate_weighted_ci, pct=True),
            )
        )
    return rows


def weighted_pass_rate(s: ScoreSummary) -> list[Row]:
    """The probability-weighted pass rate of a binary logprob run; nothing otherwise."""
    if s.pass_rate_weighted is None:
        return []
    return [
        (
            "pass rate, probability-weighted",
            fmt_pct(s.pass_rate_weighted),
            fmt_ci(s.pass_rate_weighted_ci, pct=True),
        )
    ]

"""The length-controlled win rate in a pairwise report: its row beside the raw win rate and
the fitted length coefficient in the judge-bias (length) table. Shared by report.md,
report.html and the terminal, which all build on `pairwise.pairwise_sections`. The label
says what the number is: AlpacaEval 2's GLM without its instruction-difficulty term, not
the number AlpacaEval publishes.
"""

from __future__ import annotations

from judgecli.report.cells import NA, fmt_ci, fmt_pct
from judgecli.summary.length_control import OutcomeKind
from judgecli.summary.pairwise import PairwiseSummary

LABEL = "win rate, length-controlled†"
NOTE = (
    "† length-controlled: AlpacaEval 2's GLM without its instruction-difficulty term "
    "(statistics.md), not the rate AlpacaEval publishes."
)
FITTED = {
    OutcomeKind.PROBABILITY: "the judge's probabilities",
    OutcomeKind.VERDICT: "written verdicts",
}
OLDER_SUMMARY = "not in this summary (written by an older judge)"


def length_controlled_row(s: PairwiseSummary) -> tuple[str, str, str]:
    """NEW's win rate at equal length with its 95% interval, or n/a and why."""
    fit = s.length_control
    if fit is None:
        return (LABEL, f"{NA}: {OLDER_SUMMARY}", "")
    if s.win_rate_length_controlled is None:
        return (LABEL, f"{NA}: {fit.reason or 'no fit'}", "")
    return (
        LABEL,
        fmt_pct(s.win_rate_length_controlled),
        fmt_ci(s.win_rate_length_controlled_ci, pct=True),
    )


def length_control_note(s: PairwiseSummary) -> str | None:
    """What the length-controlled row is (under the result table), when there is one."""
    return None if s.length_control is None else NOTE


def length_control_rows(s: PairwiseSummary) -> list[tuple[str, str]]:
    """The fitted length coefficient (log-odds per unit of tanh(Δlength / σ)) with its
    interval, and the σ and cases it was fitted on.
    """
    fit = s.length_control
    if fit is None:
        return []
    if fit.coefficient is None:
        return [("length coefficient (log-odds)", NA)]
    low, high = fit.coefficient_ci
    interval = NA if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"
    sigma = NA if fit.sigma is None else f"{fit.sigma:,.0f}"
    rows = [
        ("length coefficient (log-odds)", f"{fit.coefficient:+.2f} {interval}"),
        ("  σ of Δlength / cases fitted", f"{sigma} chars / {fit.n}"),
    ]
    if fit.outcome is not None:
        rows.append(("  outcome fitted", FITTED[fit.outcome]))
    return rows

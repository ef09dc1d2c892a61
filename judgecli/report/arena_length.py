"""An arena's length-controlled win rates in its reports: each system against the baseline
at equal answer length (AlpacaEval 2's GLM with its instruction-difficulty term), a table
of report.md, report.html and the terminal (`report.arena.arena_sections` places it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgecli.report.cells import NA, Section, fmt_ci, fmt_pct
from judgecli.summary.length_control import OutcomeKind

if TYPE_CHECKING:
    from judgecli.summary.arena import ArenaSummary
    from judgecli.summary.arena_length import ControlledStanding

OUTCOMES = {
    OutcomeKind.VERDICT: "written verdicts, ties ½",
    OutcomeKind.PROBABILITY: "the judge's probabilities, P(win) + ½ P(tie)",
}


def coefficient_cell(x: ControlledStanding) -> str:
    """The length coefficient with its interval, or n/a."""
    if x.coefficient is None:
        return NA
    low, high = x.coefficient_ci
    interval = "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"
    return f"{x.coefficient:+.2f}{interval}"


def length_controlled_sections(s: ArenaSummary) -> list[Section]:
    """The table, when the arena has length-controlled win rates."""
    lc = s.length_controlled
    if lc is None:
        return []
    rows = [
        (
            x.name,
            fmt_pct(x.win_rate) if x.win_rate is not None else f"{NA}: {x.reason}",
            fmt_ci(x.win_rate_ci, pct=True) if x.win_rate is not None else "",
            fmt_pct(x.win_rate_raw),
            coefficient_cell(x),
            str(x.n),
        )
        for x in lc.standings
    ]
    if lc.instruction_difficulty is not None:
        model = (
            "AlpacaEval 2's length-controlled GLM with its instruction-difficulty term, "
            f"fitted jointly over the systems' comparisons with {lc.baseline} "
            f"({lc.instruction_difficulty.n_cases} cases)"
        )
    else:
        model = (
            "AlpacaEval 2's length-controlled GLM without its instruction-difficulty term "
            "(it needs two systems or more besides the baseline)"
        )
    return [
        Section(
            f"length-controlled win rate against {lc.baseline}",
            ["system", "at equal length", "95% CI", "raw", "length coef.", "n"],
            rows,
            note=f"Each system's win rate against {lc.baseline} were its answers as long as "
            f"{lc.baseline}'s: {model}; fitted on {OUTCOMES[lc.outcome]}. Raw: its win rate "
            "in those comparisons. Length coefficient (log-odds) > 0: the judge favours the "
            "longer answer. statistics.md, “Length-controlled win rate”.",
        )
    ]

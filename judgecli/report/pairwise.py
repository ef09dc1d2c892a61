"""A `pairwise` run's tables: the result with its intervals, the judge's biases (position,
length, and for agents' runs the number of tool calls), by category, each judge, and the
agreement between judges.
"""

from __future__ import annotations

from judgecli.grading.elision import CHARS_PER_TOKEN
from judgecli.report.cells import (
    Section,
    fmt,
    fmt_ci,
    fmt_pct,
    group_ci,
)
from judgecli.report.decision import calls_legend, fmt_p, mark_cell
from judgecli.report.length_control import length_control_note, length_control_rows
from judgecli.report.weighted import adjusted_win_rates
from judgecli.summary.pairwise import PairwiseSummary


def tokens(chars: float | None) -> str:
    """A run's mean length in tokens, estimated as --elide-at estimates them."""
    return fmt(None if chars is None else chars / CHARS_PER_TOKEN, 0)


def pairwise_sections(s: PairwiseSummary) -> list[Section]:
    """The tables of a `pairwise` run."""
    rows = [
        ("cases", f"{s.n_ok} ok / {s.n_failed} failed of {s.n_cases}", ""),
        ("win rate of NEW (ties ½)", fmt_pct(s.win_rate), fmt_ci(s.win_rate_ci, pct=True)),
        ("  Wilson interval", "", fmt_ci(s.win_rate_ci_wilson, pct=True)),
        *adjusted_win_rates(s),
        ("win rate without ties", fmt_pct(s.win_rate_no_ties), ""),
        ("wins / losses / ties", f"{s.wins} / {s.losses} / {s.ties}", ""),
        ("sign test p (wins vs losses)", fmt_p(s.sign_test_p), ""),
        ("loss rate", fmt_pct(s.loss_rate), fmt_ci(s.loss_rate_ci, pct=True)),
    ]
    if s.dropped:
        rows.append(("dropped (inconsistent)", str(s.dropped), ""))
    length = s.length
    bias = [
        ("flip (both orders)", "yes" if s.flip else "NO — position bias not removed"),
        ("position consistency", fmt_pct(s.consistency)),
        ("first-position (A) preference", fmt_pct(s.first_position_rate)),
    ]
    if length is not None:
        bias += [
            ("longer answer wins", fmt_pct(length.longer_wins_rate)),
            (
                "mean length winner / loser",
                f"{fmt(length.mean_length_winner, 0)} / {fmt(length.mean_length_loser, 0)} chars",
            ),
            (
                "mean length old / new",
                f"{fmt(length.mean_length_old, 0)} / {fmt(length.mean_length_new, 0)} chars",
            ),
        ]
        if length.mean_steps_old is not None:
            # Agents' runs: a judge may favour the run that did more, as it may the longer text.
            bias += [
                ("more tool calls wins", fmt_pct(length.more_steps_wins_rate)),
                (
                    "mean tool calls winner / loser",
                    f"{fmt(length.mean_steps_winner, 1)} / {fmt(length.mean_steps_loser, 1)}",
                ),
                (
                    "mean tool calls old / new",
                    f"{fmt(length.mean_steps_old, 1)} / {fmt(length.mean_steps_new, 1)}",
                ),
                (
                    "≈ tokens winner / loser, old / new",
                    f"{tokens(length.mean_length_winner)} / {tokens(length.mean_length_loser)}, "
                    f"{tokens(length.mean_length_old)} / {tokens(length.mean_length_new)}",
                ),
            ]
        bias += length_control_rows(s)
    sections = [
        Section("result", ["measure", "value", "95% CI"], rows, note=length_control_note(s)),
        Section("judge biases", ["measure", "value"], bias),
    ]
    if s.by_category:
        calls = s.category_calls
        header = ["category", "n", "win rate", "95% CI", "W/L/T"]
        title = "by category"
        if calls is not None:
            header.append(f"vs {fmt_pct(calls.reference)}")
            title += f" ({calls_legend(calls, pct=True)})"
        sections.append(
            Section(
                title,
                header,
                [
                    (
                        name,
                        str(c.n),
                        fmt_pct(c.win_rate),
                        group_ci(c.win_rate_ci, c.n, pct=True),
                        f"{c.wins}/{c.losses}/{c.ties}",
                    )
                    + ((mark_cell(c.mark),) if calls is not None else ())
                    for name, c in s.by_category.items()
                ],
            )
        )
    if s.judges:
        sections.append(
            Section(
                "judges",
                ["judge", "win rate", "95% CI", "W/L/T", "consistency", "A preference"],
                [
                    (
                        m,
                        fmt_pct(j.win_rate),
                        fmt_ci(j.win_rate_ci, pct=True),
                        f"{j.wins}/{j.losses}/{j.ties}",
                        fmt_pct(j.consistency),
                        fmt_pct(j.first_position_rate),
                    )
                    for m, j in s.judges.items()
                ],
            )
        )
    if s.inter_judge is not None:
        agree = [
            ("Fleiss' κ", fmt(s.inter_judge.fleiss_kappa)),
            ("mean pairwise agreement", fmt_pct(s.inter_judge.percent_agreement)),
        ]
        agree += [(f"Cohen's κ {pair}", fmt(k)) for pair, k in s.inter_judge.cohen_kappa.items()]
        sections.append(Section("inter-judge agreement", ["measure", "value"], agree))
    return sections

"""The report of a `judge arena`: its headline, its tables (the leaderboard, the style-
controlled leaderboard and its coefficients, the win-rate matrix, the schedule, usage),
its charts (a forest plot of the scores, a heat map of the win rates), and report.md /
report.html made of them. Returns text; the store writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from judgecli.report import charts, forest, svg
from judgecli.report.arena_length import length_controlled_sections
from judgecli.report.cells import (
    NA,
    Section,
    fmt,
    fmt_ci,
    fmt_pct,
    money,
    no_interval_text,
    reason_for,
    rich_table,
)
from judgecli.report.escape import esc
from judgecli.report.figures import figure
from judgecli.report.html import SCRIPT, cards, page, table, warnings_section
from judgecli.report.html_cases import TableShape, cases_section
from judgecli.report.markdown import judged_by, markdown_page
from judgecli.report.svg import Bar
from judgecli.stats.intervals import Interval

if TYPE_CHECKING:
    from rich.table import Table

    from judgecli.result import CaseResult
    from judgecli.summary.arena import ArenaSummary, Standing

HEADLINE_SYSTEMS = 5
"""The headline names this many systems of the leaderboard."""
MATRIX_IN_TERMINAL = 8
"""The terminal shows the win-rate matrix up to this many systems (report.md: always)."""


def title_of(s: ArenaSummary) -> str:
    """`judge arena: pairwise (v2)`."""
    return f"judge arena: {s.rubric} (v{s.rubric_version})"


def score_text(score: float) -> str:
    """A score to the point: differences under one point mean nothing."""
    return f"{round(score):d}"


def score_ci(ci: Interval, why: str | None = None) -> str:
    """A score's interval as [lo, hi]; without one n/a, and `why` when given."""
    low, high = ci
    if low is None or high is None:
        return no_interval_text(why)
    return f"[{round(low):d}, {round(high):d}]"


def board_of(s: ArenaSummary) -> list[Standing]:
    """The leaderboard the gate reads: style-controlled when asked for, else the raw one."""
    return s.style_control.leaderboard if s.style_control else s.leaderboard


def board_line(board: Sequence[Standing]) -> str:
    """`1. B 1105 [1060, 1150] · 2. A 895 [850, 940]` (the first few)."""
    shown = [f"{x.rank}. {x.name} {score_text(x.score)} {score_ci(x.score_ci)}" for x in board]
    more = len(shown) - HEADLINE_SYSTEMS
    return " · ".join(shown[:HEADLINE_SYSTEMS]) + (f" · and {more} more" if more > 0 else "")


def numbers_line(s: ArenaSummary) -> str:
    """The leaderboard in one line, or why there is none."""
    where = f"{s.n_comparisons} comparisons of {len(s.systems)} systems on {s.n_cases} cases"
    if not s.leaderboard:
        return f"no leaderboard ({where})"
    styled = " (style-controlled)" if s.style_control else ""
    return f"{board_line(board_of(s))}{styled} — {where}"


def check_text(check_kind: str, against: str | None, value: float | None, limit: float) -> str:
    """One gate check in words."""
    if check_kind == "beats":
        return f"beats {against} ({fmt_pct(value)} of resamples, needs ≥ {limit:.0%})"
    return f"rank {NA if value is None else f'{value:.0f}'} (needs ≤ {limit:.0f})"


def arena_headline(s: ArenaSummary) -> str:
    """One line: PASS/FAIL and the checks when gated, then the leaderboard; INCOMPLETE
    when the run cannot stand for a verdict.
    """
    line = numbers_line(s)
    if s.incomplete is not None:
        return f"INCOMPLETE — {s.incomplete}; no verdict. {line}."
    if s.gate is None:
        return f"{line}."
    checks = "; ".join(
        check_text(c.check, c.against, c.value, c.threshold)
        + ("" if c.passed else " — not met" if c.decided else " — undecided")
        for c in s.gate.checks
    )
    if not s.gate.decided:
        return f"UNDECIDED — {s.gate.undecided}; no verdict. {s.gate.system}: {checks}. {line}."
    word = "PASS" if s.gate.passed else "FAIL"
    return f"{word} — {s.gate.system}: {checks}. {line}."


def gate_note(s: ArenaSummary) -> str | None:
    """What the gate checked, in words (only the kinds of check it made)."""
    if s.gate is None:
        return None
    if not s.gate.decided:
        return f"The gate is undecided (exit 3): {s.gate.hint}."
    kinds = {c.check for c in s.gate.checks}
    said = []
    if "beats" in kinds:
        said.append(
            "--beats X passes when its score is above X's in the fit and in at least 95% of "
            "the bootstrap resamples"
        )
    if "min_rank" in kinds:
        said.append(
            "--min-rank N when its rank (1 + the systems whose interval lies wholly above "
            "its own) is N or better"
        )
    return f"Gate on {s.gate.system} ({s.gate.leaderboard} leaderboard): {'; '.join(said)}."


def leaderboard_section(board: Sequence[Standing], title: str, anchor: str) -> Section:
    """A leaderboard, best first."""
    rows = [
        (
            str(x.rank),
            x.name,
            score_text(x.score),
            score_ci(x.score_ci, reason_for(x.no_interval, "score")),
            f"{x.wins} / {x.losses} / {x.ties}",
            fmt_pct(x.win_rate),
        )
        for x in board
    ]
    centre = "the mean strength" if anchor == "mean" else f"{anchor} (the baseline)"
    return Section(
        title,
        ["rank", "system", "score", "95% CI", "W / L / T", "win rate"],
        rows,
        note=f"Bradley–Terry scores: 1000 is {centre}, and 400 points more is odds of 10 to 1 "
        "of winning. Rank: 1 + the number of systems whose interval lies wholly above this one's, "
        "so overlapping systems share a rank; ties count half.",
    )


def style_sections(s: ArenaSummary) -> list[Section]:
    """The style-controlled leaderboard and the style coefficients (when asked for)."""
    if s.style_control is None:
        return []
    sc = s.style_control
    rows = [
        (name, fmt(c.estimate), fmt_ci(c.ci), NA if c.unit is None else f"{c.unit:.3g}")
        for name, c in sc.covariates.items()
    ]
    return [
        leaderboard_section(sc.leaderboard, "leaderboard, style-controlled", s.anchor),
        Section(
            "style coefficients",
            ["covariate", "log-odds per unit", "95% CI", "unit"],
            rows,
            note="Length: (a − b)/(a + b) of the two answers' characters; markdown: headers, "
            "bold spans and list items per 1,000 characters, a minus b. Each is in units of "
            "its root mean square over the comparisons; a positive coefficient means the "
            "judge favours the longer (or more formatted) answer, whoever wrote it; n/a: no "
            "two answers compared differ in it.",
        ),
    ]


def matrix_section(s: ArenaSummary) -> Section:
    """Row's win rate against column, ties half (n/a where they never met)."""
    order = [x.name for x in s.leaderboard] or s.systems
    rows = [
        (a, *("—" if a == b else fmt_pct(s.win_rate_matrix[a][b]) for b in order)) for a in order
    ]
    return Section(
        "win rate of row against column",
        ["system", *order],
        rows,
        note="Decided comparisons only; ties count half.",
    )


def schedule_section(s: ArenaSummary) -> Section:
    """Which comparisons were judged, and the run's usage."""
    sc, u = s.schedule, s.usage
    rows = [
        ("schedule", sc.kind + (f" (baseline {sc.baseline})" if sc.baseline else "")),
        ("comparisons", f"{s.n_comparisons} of {sc.planned} planned, {s.n_failed} failed"),
        ("pairs of systems", str(sc.pairs)),
    ]
    if sc.budget is not None:
        rows.append(("budget", f"{sc.budget} ({sc.rounds} rounds, warm-up {sc.warmup_cases})"))
    rows += [
        ("position consistency", fmt_pct(s.consistency)),
        ("calls", f"{u.calls} ({u.retries} retries, {u.cached} cached)"),
        ("tokens", f"{u.prompt_tokens:,} in / {u.completion_tokens:,} out"),
        ("cost", money(u.cost_usd)),
    ]
    return Section("schedule and usage", ["measure", "value"], rows)


def arena_sections(s: ArenaSummary) -> list[Section]:
    """Every table of the report, in order."""
    found = []
    if s.leaderboard:
        found.append(leaderboard_section(s.leaderboard, "leaderboard", s.anchor))
        found += style_sections(s)
    found += length_controlled_sections(s)
    found += [matrix_section(s), schedule_section(s)]
    if s.failures:
        found.append(
            Section(
                f"failed comparisons ({s.n_failed})",
                ["id", "error"],
                [(f.id, f.error[:200]) for f in s.failures],
            )
        )
    return found


def render_arena_markdown(s: ArenaSummary) -> str:
    """report.md: the headline, then the tables."""
    return markdown_page(
        title_of(s),
        arena_headline(s),
        judged_by(s.models, s.rubric_hash),
        gate_note(s),
        arena_sections(s),
        s.warnings,
    )


def score_forest(board: Sequence[Standing], *, title: str, anchor: str) -> str:
    """The scores with their intervals, best at the top, against the anchor's 1000."""
    rows = [
        Bar(x.name, x.score, x.score_ci[0], x.score_ci[1], text=score_ci(x.score_ci)) for x in board
    ]
    ends = [v for r in rows for v in (r.value, r.low, r.high) if v is not None]
    low, high = min([*ends, 1000.0]), max([*ends, 1000.0])
    pad = max(10.0, (high - low) * 0.05)
    label = "mean" if anchor == "mean" else anchor
    return forest.forest_plot(
        rows,
        title=title,
        reference=1000.0,
        reference_label=f"1000 ({label})",
        domain=(low - pad, high + pad),
        tick_format=svg.general,
    )


def win_rate_map(s: ArenaSummary) -> str:
    """The win-rate matrix as a heat map: a cell's shade is the row's win rate against the
    column, the rate written in it; pairs that never met are left blank.
    """
    order = [x.name for x in s.leaderboard] or s.systems
    size = min(48.0, max(28.0, 360 / max(len(order), 1)))
    left, top = svg.room(order, limit=14) + 8, 40.0
    fits = max(2, int(size / svg.CHAR))
    cells = [
        [
            charts.Cell(
                shade=0.0 if rate is None else 0.1 + 0.9 * rate,
                text=None if rate is None else f"{rate:.0%}",
                tip=f"{a} against {b}: {fmt_pct(rate)}",
                ink=rate is not None and rate > 0.5,
            )
            for b in order
            for rate in [None if a == b else s.win_rate_matrix[a][b]]
        ]
        for a in order
    ]
    parts = charts.cell_grid(order, order, cells, size=size, left=left, top=top, fits=fits)
    width = left + size * len(order) + 10
    return svg.svg(
        width, top + size * len(order) + 10, "win rate of row against column", parts, kind="heatmap"
    )


def arena_figures(s: ArenaSummary) -> list[str]:
    """report.html's charts: the scores (raw and style-controlled) and the win rates."""
    if not s.leaderboard:
        return []
    out = [
        figure(
            score_forest(s.leaderboard, title="Bradley–Terry scores", anchor=s.anchor),
            "Each system's score with its 95% bootstrap interval (cases resampled); dashed: "
            "1000, the anchor. Green: the whole interval is above it, red: below, amber: "
            "it crosses.",
        )
    ]
    if s.style_control is not None:
        chart = score_forest(
            s.style_control.leaderboard, title="scores, style-controlled", anchor=s.anchor
        )
        out.append(figure(chart, "The same fit with length and markdown held fixed."))
    out.append(
        figure(
            win_rate_map(s),
            "Row's win rate against column in their decided comparisons (ties half); "
            "darker: the row won more. Blank: they were never compared.",
        )
    )
    return out


def render_arena_html(
    s: ArenaSummary,
    results: Sequence[CaseResult] = (),
    systems: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """report.html: the same as report.md with the charts, on one self-contained page
    (nothing fetched, every name escaped), then the searchable table of every comparison
    (`systems`: each one's two systems by its id).
    """
    state = "" if s.gate is None else ("pass" if s.gate.passed else "fail")
    if s.gate is not None and not s.gate.decided:
        state = "undecided"
    if s.incomplete is not None:
        state = "incomplete"
    note = f'<p class="note">{esc(n)}</p>' if (n := gate_note(s)) else ""
    judges = ", ".join(f"<code>{esc(m)}</code>" for m in s.models)
    body = [
        f'<header><h1>{esc(title_of(s))}</h1><p class="headline {state}">'
        f'{esc(arena_headline(s))}</p><p class="meta">Judges: {judges} · rubric '
        f"<code>{esc(s.rubric_hash)}</code></p>{note}</header>",
    ]
    if figures := arena_figures(s):
        body.append(cards("Charts", figures))
    body.append(cards("Numbers", [table(sec) for sec in arena_sections(s)]))
    body.append(warnings_section(s.warnings))
    # Issue 29: like every run's page, one row per comparison (results.md).
    body.append(cases_section(results, TableShape(pairwise=True, systems=systems or {})))
    return page(title_of(s), body, script=SCRIPT)


def terminal_tables(s: ArenaSummary) -> list[Table]:
    """What the terminal shows: the leaderboards, the win rates when they fit, the schedule."""
    shown = [
        sec
        for sec in arena_sections(s)
        if not sec.title.startswith("win rate") or len(s.systems) <= MATRIX_IN_TERMINAL
    ]
    return [rich_table(sec) for sec in shown]

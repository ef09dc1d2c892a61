"""The report of a `judge drift`: its headline, its tables (the numbers, what differs in the
judge, the label transitions, the flipped cases), and report.md / report.html made of them.
Returns text; the store writes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from judgecli.report.cells import (
    NA,
    Section,
    fmt,
    fmt_ci,
    fmt_pct,
    no_interval_text,
    reason_for,
    rich_table,
)
from judgecli.report.decision import fmt_p
from judgecli.report.escape import esc
from judgecli.report.html import SCRIPT, cards, page, table, warnings_section
from judgecli.report.html_flips import flips_table
from judgecli.report.markdown import markdown_page

if TYPE_CHECKING:
    from rich.table import Table

    from judgecli.stats.intervals import Interval
    from judgecli.summary.drift import Drift, DriftSummary, Flip

FLIPS_LISTED = 50
"""report.md lists this many flipped cases (flips.jsonl and report.html hold them all)."""

VALUE_WORDS = {
    "outcome": "NEW's outcome (1 win, ½ tie, 0 loss)",
    "passed": "passed (1 or 0)",
    "score": "score",
}
MEAN_WORDS = {"outcome": "win rate", "passed": "pass rate", "score": "mean score"}
"""What the mean of each kind of headline value is called."""
SCALE_OF = {"outcome": "win_rate", "passed": "pass_rate", "score": "mean"}
"""The gate metric whose scale each kind of headline value is on."""


def title_of(s: DriftSummary) -> str:
    """`Judge drift: A → B`."""
    return f"Judge drift: {s.runs.a} → {s.runs.b}"


def mean_words(s: DriftSummary) -> str:
    """`win rate`, `pass rate` or `mean score`: the number whose shift is measured."""
    return MEAN_WORDS.get(s.value, f"mean {s.value}")


def shift_ci(s: DriftSummary, *, why: bool = False) -> str:
    """The shift's interval, signed, to three places (`why`: without one, say why)."""
    low, high = s.shift_ci
    if low is None or high is None:
        return no_interval_text(reason_for(s.no_interval, "shift") if why else None)
    return f"[{low:+.3f}, {high:+.3f}]"


def part_interval(s: DriftSummary, key: str, ci: Interval | None) -> str:
    """judge_shift_ci or system_shift_ci, signed, or why there is none."""
    low, high = ci or (None, None)
    if low is None or high is None:
        return no_interval_text(reason_for(s.no_interval, key))
    return f"[{low:+.3f}, {high:+.3f}]"


def split_rows(s: DriftSummary) -> list[tuple[str, str, str]]:
    """The judge's shift on identical outputs and the system's on the changed ones (issue
    35), when the runs have both kinds of case; none otherwise.
    """
    if not s.n_identical or not s.n_system:
        return []
    rows = []
    for name, key, n, value, ci in (
        ("judge", "judge_shift", s.n_identical, s.judge_shift, s.judge_shift_ci),
        ("system", "system_shift", s.n_system, s.system_shift, s.system_shift_ci),
    ):
        interval = part_interval(s, key, ci)
        cases = "identical" if name == "judge" else "changed"
        shown = NA if value is None else f"{value:+.3f}"
        # On B's gate's scale, which may not be the headline's (a score run gated on passes).
        scale = "" if s.shift_scale == SCALE_OF.get(s.value) else f", {s.shift_scale}"
        rows.append((f"  {name} shift ({n} {cases} outputs{scale})", shown, interval))
    return rows


def explains_cell(s: DriftSummary) -> str:
    """Whether the judge's shift could explain run B's gate decision, with the margin."""
    gate = s.judge_shift_gate
    if gate is None:
        return "n/a (B gates no pass rate, mean or win rate)"
    if gate.explains is None:
        return "n/a (no judge shift)" if s.judge_shift is None else "n/a (no gated value)"
    margin = NA if gate.margin is None else f"{gate.margin:+.3f}"
    return f"{'yes' if gate.explains else 'no'} (margin {margin})"


def shift_split_section(s: DriftSummary) -> Section | None:
    """The judge's shift (identical outputs) beside the system's (changed outputs): cases,
    shift and 95% interval each, and whether the judge's could explain B's gate (issue 35,
    docs/drift.md "Judge shift vs system shift"). None when the split was not measured.
    """
    if s.n_identical is None or s.n_system is None or not (s.n_identical or s.n_system):
        return None
    gate = s.judge_shift_gate
    rows = [
        (
            "judge (identical outputs)",
            str(s.n_identical),
            NA if s.judge_shift is None else f"{s.judge_shift:+.3f}",
            part_interval(s, "judge_shift", s.judge_shift_ci),
            explains_cell(s),
        ),
        (
            "system (changed outputs)",
            str(s.n_system),
            NA if s.system_shift is None else f"{s.system_shift:+.3f}",
            part_interval(s, "system_shift", s.system_shift_ci),
            "",
        ),
    ]
    scale = s.shift_scale or SCALE_OF.get(s.value, s.value)
    if gate is None:
        said = f"Both on the {scale} scale."
    else:
        word = "passed" if gate.passed else "failed"
        sign = "≥" if gate.minimum else "≤"
        said = (
            f"Both on the {scale} scale of B's gate ({word} {gate.metric} {sign} "
            f"{gate.threshold:g}). The judge could explain it when its interval reaches past "
            "the margin: a pass whose margin is below the interval's upper end, a fail whose "
            "shortfall reaches its lower end."
        )
    return Section(
        "judge shift vs system shift",
        ["shift", "cases", "B − A", "95% CI", "could explain B's gate"],
        rows,
        note=said,
    )


def p_text(p: float | None) -> str:
    """`p = 0.010`, `p < 0.001` or `p n/a`."""
    shown = fmt_p(p)
    return f"p {shown}" if shown.startswith("<") or p is None else f"p = {shown}"


def gate_word(s: DriftSummary) -> str:
    """PASS, FAIL or NO VERDICT for a drift with --max-shift; "" without."""
    if s.gate is None:
        return ""
    return {True: "PASS", False: "FAIL", None: "NO VERDICT"}[s.gate.passed]


def drift_headline(s: DriftSummary) -> str:
    """One line: how many verdicts flipped, the shift, κ (and the gate's word first)."""
    shift = NA if s.shift is None else f"{s.shift:+.3f}"
    line = (
        f"{s.n_flipped} of {s.n_paired} {s.kind} verdicts flipped ({fmt_pct(s.flip_rate)} "
        f"{fmt_ci(s.flip_rate_ci, pct=True)}); {mean_words(s)} shift {shift} "
        f"{shift_ci(s)} ({p_text(s.shift_p_value)}); κ {fmt(s.kappa)}"
    )
    word = gate_word(s)
    return f"{word} — {line}" if word else line


def gate_note(s: DriftSummary) -> str | None:
    """What the gate checked, in words."""
    if s.gate is None:
        return None
    found = {
        True: "the shift is significant",
        False: "the shift is not significant",
        None: "the shift's interval could not be computed",
    }
    if s.gate.significant is None and s.gate.passed:
        found[None] = "the shift has no interval, and is within the bar"
    return (
        f"Gate: fails when the shift is significant (its 95% interval excludes 0) and "
        f"|shift| > {s.gate.max_shift:g}; {found[s.gate.significant]}."
    )


def numbers_section(s: DriftSummary, *, split: bool = True) -> Section:
    """The headline numbers with their intervals (`split`: with the judge's and the
    system's shift as rows; the reports give them a table of their own).
    """
    reasons = s.left_out_reasons
    why = (
        f"{reasons.missing_in_a} only in B, {reasons.missing_in_b} only in A, "
        f"{reasons.failed_in_a} failed in A, {reasons.failed_in_b} failed in B"
    )
    rows = [
        ("cases paired", str(s.n_paired), ""),
        ("cases left out", str(s.left_out), why if s.left_out else ""),
        (f"flipped ({s.compared} differs)", f"{s.n_flipped} of {s.n_paired}", ""),
        ("flip rate", fmt_pct(s.flip_rate), fmt_ci(s.flip_rate_ci, pct=True)),
        (f"{mean_words(s)}: A → B", f"{fmt(s.mean_a, 3)} → {fmt(s.mean_b, 3)}", ""),
        ("shift (B − A)", NA if s.shift is None else f"{s.shift:+.3f}", shift_ci(s, why=True)),
        ("  paired t test p", fmt_p(s.shift_p_value), ""),
        *(split_rows(s) if split else []),
        ("Cohen's κ, A vs B", fmt(s.kappa), ""),
    ]
    if "weighted_kappa" in s.model_fields_set:
        rows.append(("  quadratic-weighted κ", fmt(s.weighted_kappa), ""))
    return Section(
        f"drift ({s.kind}; value: {VALUE_WORDS.get(s.value, s.value)})",
        ["measure", "value", "95% CI"],
        rows,
    )


def cell(value: Any) -> str:
    """A setting's value in a cell: text as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def differences_section(s: DriftSummary) -> Section:
    """The settings of the judge that differ between the runs."""
    rows = [(name, cell(d.a), cell(d.b)) for name, d in s.differences.items()]
    return Section(
        "what differs in the judge",
        ["setting", "A", "B"],
        rows or [("(nothing)", "", "")],
    )


def transitions_section(s: DriftSummary) -> Section:
    """Cases per label in A (rows) and in B (columns)."""
    rows = [(a, *(str(s.transitions[a][b]) for b in s.labels)) for a in s.labels]
    return Section(f"{s.compared}: A (rows) → B (columns)", ["A \\ B", *s.labels], rows)


def flips_section(flips: Sequence[Flip], limit: int | None = None) -> Section:
    """The flipped cases, largest change first (`limit`: only the first so many)."""
    shown = flips if limit is None else flips[:limit]
    rows = [(f.id, f.a, f.b, NA if f.change is None else f"{f.change:+g}") for f in shown]
    more = "" if len(shown) == len(flips) else f"; the first {len(shown)} (all in flips.jsonl)"
    return Section(f"flipped cases ({len(flips)}{more})", ["id", "A", "B", "change"], rows)


def drift_sections(drift: Drift, *, flips_limit: int | None = FLIPS_LISTED) -> list[Section]:
    """Every table of the report, in order."""
    s = drift.summary
    sections = [numbers_section(s, split=False)]
    if (split := shift_split_section(s)) is not None:
        sections.append(split)
    sections += [differences_section(s), transitions_section(s)]
    if drift.flips:
        sections.append(flips_section(drift.flips, flips_limit))
    return sections


def render_drift_markdown(drift: Drift) -> str:
    """report.md: the headline, then the tables."""
    s = drift.summary
    return markdown_page(
        title_of(s), drift_headline(s), None, gate_note(s), drift_sections(drift), s.warnings
    )


def render_drift_html(drift: Drift) -> str:
    """report.html: the same as report.md on one self-contained page (nothing fetched,
    everything from a run escaped), the flipped cases in a searchable table of their own.
    """
    s = drift.summary
    state = {"PASS": "pass", "FAIL": "fail", "NO VERDICT": "incomplete"}.get(gate_word(s), "")
    note = f'<p class="note">{esc(n)}</p>' if (n := gate_note(s)) else ""
    # Issue 29: every flipped case in a table to search, as a run's page has its cases.
    numbers = [sec for sec in drift_sections(drift) if not sec.title.startswith("flipped")]
    body = [
        f'<header><h1>{esc(title_of(s))}</h1><p class="headline {state}">'
        f"{esc(drift_headline(s))}</p>{note}</header>",
        cards("Numbers", [table(sec) for sec in numbers]),
    ]
    body += [warnings_section(s.warnings), flips_table(drift.flips)]
    return page(title_of(s), body, script=SCRIPT)


def terminal_tables(drift: Drift) -> list[Table]:
    """What the terminal shows: the numbers and what differs, laid out for 80 columns."""
    s = drift.summary
    return [rich_table(numbers_section(s)), rich_table(differences_section(s))]

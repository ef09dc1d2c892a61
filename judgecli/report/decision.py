"""The statistics of the decision in every report: the sequential gate's stop, the
human-corrected estimates, the exact tests beside the intervals, and how the categories'
above/below marks were made (the legend of their tables and charts).
"""

from __future__ import annotations

from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct, reason_for
from judgecli.summary.facts import (
    CategoryCalls,
    CorrectedEstimate,
    LabelDesign,
    SequentialSummary,
)
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOutcome, GateResult
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

MARK_TEXT = {"above": "▲ above", "below": "▼ below", "not significant": "–", "too few": "too few"}

CORRECTION_TEXT = {
    "holm": "Holm-adjusted (chance of any false mark ≤ {alpha:.0%})",
    "bh": "Benjamini–Hochberg-adjusted (--fdr: expected share of false marks ≤ {alpha:.0%})",
}

RATES = (
    GateMetric.WIN_RATE,
    GateMetric.PASS_RATE,
    GateMetric.STABILITY,
    GateMetric.PASS_K,
    GateMetric.CHECKLIST_SCORE,
)

VERDICT_CLASS = {
    GateOutcome.PASSED: "pass",
    GateOutcome.FAILED: "fail",
    GateOutcome.UNDECIDED: "undecided",
}
"""The CSS class of a gated report's headline."""

METRIC_NAMES = {GateMetric.PASS_K: "pass^K"}
"""How a gated number is named where it differs from its summary key (the flag's name)."""


def metric_name(metric: GateMetric) -> str:
    """A gated number's name in a report: its summary key, or the name readers know it by."""
    return METRIC_NAMES.get(metric, metric.value)


def check_text(c: GateCheck) -> str:
    """One check in the headline: `win_rate ≥ 0.55 (point: 0.817 ok)`."""
    said = "ok" if c.passed else ("not met" if c.decided else "undecided")
    return (
        f"{metric_name(c.metric)} {'≥' if c.minimum else '≤'} {c.threshold:g} "
        f"({c.on}: {fmt(c.value, 3)} {said})"
    )


def gate_verdict(gate: GateResult, numbers: str) -> str:
    """The headline of a gated run: PASS or FAIL, the numbers and every check; UNDECIDED
    first says why the evidence cannot decide.
    """
    checks = "; ".join(check_text(c) for c in gate.checks)
    if gate.outcome is GateOutcome.UNDECIDED:
        return f"UNDECIDED — {gate.undecided}; no verdict. {numbers}. Gate: {checks}."
    return f"{gate.outcome.value} — {numbers}. Gate: {checks}."


def undecided_note(gate: GateResult | None) -> str | None:
    """What to do about an undecided gate (the line under the headline); None otherwise."""
    if gate is None or gate.decided:
        return None
    return f"The gate is undecided (exit 3): {gate.hint}."


def fmt_p(p: float | None) -> str:
    """A p-value: three decimals, or "< 0.001"."""
    if p is None:
        return NA
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def mark_cell(mark: str | None) -> str:
    """A category's call in a table."""
    return MARK_TEXT.get(mark or "", NA)


def on_scale(metric: str | GateMetric, value: float | None) -> str:
    """A value of a gated number as reports show it: rates in %, means as numbers."""
    return fmt_pct(value) if metric in RATES else fmt(value)


def calls_legend(calls: CategoryCalls, *, pct: bool) -> str:
    """What a category's mark means, for a table title or a chart caption."""
    reference = fmt_pct(calls.reference) if pct else fmt(calls.reference)
    if not calls.tested:
        return f"marks vs {reference}: none, no category has 10 or more cases"
    how = CORRECTION_TEXT.get(calls.correction, calls.correction).format(alpha=calls.alpha)
    family = "the 1 category" if calls.tested == 1 else f"the {calls.tested} categories"
    return f"marks vs {reference}: {calls.test}, {how}, over {family} of 10 or more cases"


def sequential_note(seq: SequentialSummary) -> str:
    """One line: when the sequence decided, by which bound, and what stopping saved."""
    if seq.decision == "undecided":
        low, high = seq.interval
        return (
            f"Sequential: undecided after all {seq.n_cases:,} cases — the confidence sequence "
            f"[{on_scale(seq.metric, low)}, {on_scale(seq.metric, high)}] still contains "
            f"{on_scale(seq.metric, seq.threshold)}, so the bar is not shown to be met."
        )
    side = "lower end" if seq.decision == "pass" else "upper end"
    compare = ">" if seq.decision == "pass" else "<"
    saved = ""
    if seq.saved_cases and seq.saved_usd:
        saved = f"; saved ≈ ${seq.saved_usd:.2f} (est.), {seq.saved_cases:,} cases not judged"
    elif seq.saved_cases:
        saved = f"; {seq.saved_cases:,} cases not judged (no price known to estimate the saving)"
    return (
        f"Sequential: decided {seq.decision.upper()} after {seq.decided_after:,} of "
        f"{seq.n_cases:,} cases (the confidence sequence's {side} "
        f"{on_scale(seq.metric, seq.bound)} {compare} {on_scale(seq.metric, seq.threshold)})"
        f"{saved}."
    )


def sequential_section(seq: SequentialSummary) -> Section:
    """The sequential gate's table."""
    low, high = seq.interval
    decided = NA if seq.decided_after is None else f"{seq.decided_after:,} of {seq.n_cases:,}"
    return Section(
        "sequential gate",
        ["measure", "value"],
        [
            ("decision", seq.decision),
            (
                f"{seq.metric} bar",
                on_scale(seq.metric, seq.threshold),
            ),
            ("decided after (cases)", decided),
            (
                f"confidence sequence ({1 - seq.alpha:.0%})",
                f"[{on_scale(seq.metric, low)}, {on_scale(seq.metric, high)}]",
            ),
            ("cases judged", f"{seq.judged:,}"),
            ("saved (est.)", f"${seq.saved_usd:.4f}, {seq.saved_cases:,} cases"),
            ("method", seq.method),
        ],
    )


def corrected_section(
    corrections: dict[str, CorrectedEstimate | LabelDesign],
    no_interval: dict[str, str] | None = None,
) -> Section:
    """Judge vs human-corrected numbers, with the label budget (and, from the summary's
    `no_interval`, why a corrected number has no interval), and the plan that drew the
    labels when it weighed them (`corrections.design`, issue 33).
    """
    rows: list[tuple[str, ...]] = []
    design = corrections.get("design")
    for metric, c in corrections.items():
        if not isinstance(c, CorrectedEstimate):
            continue
        more = NA
        if c.target_half_width is not None:
            target = on_scale(metric, c.target_half_width)
            more = (
                f"about {c.more_labels:,} more → ±{target}"
                if c.more_labels is not None
                else f"±{target} needs more cases than there are"
            )
        rows += [
            (f"{metric} (judge)", on_scale(metric, c.raw), ""),
            (
                f"{metric} (human-corrected)",
                on_scale(metric, c.corrected),
                fmt_ci(
                    c.ci, pct=metric in RATES, why=reason_for(no_interval, f"{metric}_corrected")
                ),
            ),
            ("  labelled / other cases", f"{c.n_labeled:,} / {c.n_unlabeled:,}", ""),
            ("  judge − human (labelled)", fmt(c.judge_bias, 3), ""),
            ("  λ (weight of the judge)", fmt(c.lam, 2), ""),
            ("  labels to narrow it", more, ""),
        ]
    if isinstance(design, LabelDesign):
        planned = f"{design.strategy or '?'} plan, budget {design.budget or '?'}"
        rows.append(("  labels drawn by", planned, f"{design.n_unplanned:,} unplanned left out"))
        return Section("human-corrected (active inference)", ["measure", "value", "95% CI"], rows)
    return Section("human-corrected (PPI++)", ["measure", "value", "95% CI"], rows)


def decision_sections(s: RunSummary) -> list[Section]:
    """The decision's tables: the sequence, the corrected estimates, the category legend."""
    out = []
    if s.sequential is not None:
        out.append(sequential_section(s.sequential))
    if isinstance(s, PairwiseSummary | ScoreSummary) and s.corrections:
        out.append(corrected_section(s.corrections, s.no_interval))
    return out

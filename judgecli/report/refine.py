"""The report of a `refine` run: its headline numbers and its tables (first against final
answers, the lift, scores per attempt, cost, the cases that never passed).
"""

from __future__ import annotations

from judgecli.report.cells import Section, fmt, fmt_ci, fmt_pct, money, reason_for
from judgecli.summary.refine import RefineSummary


def refine_line(s: RefineSummary) -> str:
    """The pass rate at the first answer and at the end, regenerations, and the lift."""
    return (
        f"pass rate {fmt_pct(s.pass_rate_first)} at the first answer → "
        f"{fmt_pct(s.pass_rate_final)} {fmt_ci(s.pass_rate_final_ci, pct=True)} at the end; "
        f"{fmt(s.mean_attempts)} regenerations per case; lift "
        f"{fmt(s.lift)} {fmt_ci(s.lift_ci)}"
    )


def refine_sections(s: RefineSummary) -> list[Section]:
    """The tables of a `refine` run: first vs final, the lift, attempts, cost, stragglers."""
    first_ci, final_ci = s.pass_rate_first_ci, s.pass_rate_final_ci
    costs = f"{money(s.cost_generation_usd)} / {money(s.cost_judging_usd)}"
    rows = [
        ("cases", f"{s.n_ok} ok / {s.n_failed} failed of {s.n_cases}", ""),
        ("generator", s.generator, ""),
        ("pass rate, first answer", fmt_pct(s.pass_rate_first), fmt_ci(first_ci, pct=True)),
        ("pass rate, final answer", fmt_pct(s.pass_rate_final), fmt_ci(final_ci, pct=True)),
        ("mean score, first → final", f"{fmt(s.mean_first)} → {fmt(s.mean_final)}", ""),
        (
            "lift (final − first)",
            fmt(s.lift),
            fmt_ci(s.lift_ci, why=reason_for(s.no_interval, "lift")),
        ),
        ("  paired t interval", "", fmt_ci(s.lift_ci_t)),
        ("regenerations per case", fmt(s.mean_attempts), ""),
        ("passed / exhausted", f"{s.n_passed} / {s.n_exhausted}", ""),
        ("cost: generation / judging", costs, ""),
    ]
    sections = [Section("refine", ["measure", "value", "95% CI"], rows)]
    per_attempt = [
        (
            k,
            str(a.n),
            fmt(a.mean),
            fmt_pct(a.pass_rate),
            " ".join(f"{score}:{n}" for score, n in (a.distribution or {}).items()),
        )
        for k, a in s.by_attempt.items()
    ]
    if per_attempt:
        header = ["attempt", "cases", "mean", "pass rate", "distribution"]
        title = "scores per attempt (0 = the case's own output)"
        sections.append(Section(title, header, per_attempt))
    if s.never_passed:
        title = f"never passed ({s.n_exhausted})"
        sections.append(Section(title, ["id"], [(i,) for i in s.never_passed]))
    return sections

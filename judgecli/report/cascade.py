"""The report's cascade tables (--screen runs): escalation, cost per tier, savings, and how
often the screen agreed with the strong judge.
"""

from __future__ import annotations

from judgecli.report.cells import NA, Section, fmt, fmt_ci, fmt_pct, money
from judgecli.summary.facts import CascadeSummary, TierUsage
from judgecli.summary.run import RunSummary


def cascade_sections(s: RunSummary) -> list[Section]:
    """Nothing for a run without a screen."""
    c = s.cascade
    if c is None:
        return []
    a = c.agreement
    rows = [
        ("screen judge", c.screen, ""),
        ("strong judge" + ("s" if len(c.judges) > 1 else ""), ", ".join(c.judges), ""),
        ("escalate when", c.rule, ""),
        (
            "escalated",
            f"{c.escalated} of {c.n_cases} ({fmt_pct(c.escalated_share)})",
            fmt_ci(c.escalated_share_ci, pct=True),
        ),
        (
            f"screen agreed with strong ({a.on}, escalated cases)",
            f"{a.agreed} of {a.n} ({fmt_pct(a.rate)})",
            fmt_ci(a.rate_ci, pct=True),
        ),
    ]
    if a.mean_abs_score_diff is not None:
        rows.append(("mean |screen − strong| score", fmt(a.mean_abs_score_diff), ""))
    return [
        Section("cascade", ["measure", "value", "95% CI"], rows),
        Section(
            "cost per tier",
            ["tier", "decided", "calls", "tokens in / out", "cost"],
            [
                tier_row("screen", c.tiers.get("screen")),
                tier_row("strong", c.tiers.get("strong")),
                ("both", str(c.n_cases), "", "", money(c.cost_usd)),
                ("all by the strong judge (estimate)", "", "", "", money(c.all_strong_cost_usd)),
                ("saved", "", "", "", savings(c)),
            ],
        ),
    ]


def tier_row(name: str, t: TierUsage | None) -> tuple[str, ...]:
    """One tier's line of the cost table."""
    if t is None:
        return (name, NA, NA, NA, NA)
    tokens = f"{t.prompt_tokens:,} / {t.completion_tokens:,}"
    return (name, str(t.decided), str(t.calls), tokens, money(t.cost_usd))


def savings(c: CascadeSummary) -> str:
    """What the screen saved, or why it cannot be said."""
    if c.saved_usd is None:
        return f"{NA}: no price for {', '.join(c.unpriced)} (give --price IN,OUT)"
    return f"{money(c.saved_usd)} ({fmt_pct(c.saved_share)})"

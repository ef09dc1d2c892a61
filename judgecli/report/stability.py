"""The judge's agreement with itself when every case was asked K times (--repeats K): the
"judge stability" tables of every report, the sentence saying what they mean, and how one
repeat's verdict is written. Runs without repeats have none of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgecli.report.cells import (
    NA,
    Section,
    count_of,
    fmt,
    fmt_ci,
    fmt_pct,
    group_ci,
    reason_for,
)
from judgecli.result import CaseResult, RepeatVerdict
from judgecli.summary.run import RunSummary
from judgecli.summary.stability import SelfConsistency

UNSTABLE_LISTED = 10
"""Unstable case ids a report names (every case's `stable` is in results.jsonl)."""

COMPARED = {
    "score": "score (integer scale)",
    "passed": "pass/fail (continuous scale)",
    "choice": "choice",
    "winner": "winner (both orders reconciled)",
}
"""SelfConsistency.compared → what the table says was compared."""

SAME = {
    "score": "the same score",
    "passed": "the same pass/fail call",
    "choice": "the same choice",
    "winner": "the same winner",
}
"""SelfConsistency.compared → what "stable" meant, in the plain-words sentence."""


def stability_of(s: RunSummary, sc: SelfConsistency) -> float | None:
    """The share of stable cases: the summary's own, else counted from `sc`."""
    if s.stability is not None:
        return s.stability
    return sc.stable / sc.cases if sc.cases else None


def stability_sentence(s: RunSummary, sc: SelfConsistency) -> str:
    """What the stability numbers mean, in plain words."""
    k = sc.repeats
    same = SAME.get(sc.compared, "the same verdict")
    text = (
        f"Asked each case {k} times, the judge gave {same} all {k} times on {sc.stable} of "
        f"{count_of(sc.cases, 'case')}"
    )
    other = sc.cases - sc.stable
    if other:
        text += (
            f"; on the other {other} its verdict changed from one ask to the next, so a "
            "single run could have graded them differently."
        )
    else:
        text += "."
    if sc.pass_k is not None and sc.pass_at_k is not None:
        text += (
            f" {fmt_pct(sc.pass_k)} of the cases passed in all {k} asks, "
            f"{fmt_pct(sc.pass_at_k)} in at least one."
        )
    return text


def unstable_text(sc: SelfConsistency) -> str:
    """The first unstable case ids, saying how many there are in all."""
    listed = sc.unstable[:UNSTABLE_LISTED]
    total = max(sc.cases - sc.stable, len(sc.unstable))
    more = f" … ({total} in all)" if total > len(listed) else ""
    return ", ".join(listed) + more


def stability_sections(s: RunSummary) -> list[Section]:
    """The "judge stability" table, and its breakdown by category when there are
    categories; nothing for a run without --repeats.
    """
    sc = s.self_consistency
    if sc is None:
        return []
    k = sc.repeats
    share = fmt_pct(stability_of(s, sc))
    why = reason_for(sc.no_interval, "fleiss_kappa")
    rows = [
        ("repeats per case (K)", str(k), ""),
        ("verdict compared", COMPARED.get(sc.compared, sc.compared), ""),
        ("stable cases", f"{sc.stable} of {sc.cases} ({share})", fmt_ci(s.stability_ci, pct=True)),
        (
            "Fleiss' κ across repeats",
            fmt(sc.fleiss_kappa),
            fmt_ci(sc.fleiss_kappa_ci, why=why) if sc.fleiss_kappa_ci or why else "",
        ),
    ]
    if sc.within_case_sd is not None:
        rows.append(("mean within-case SD", fmt(sc.within_case_sd), ""))
    if sc.pass_k is not None:
        rows.append(
            (f"pass^{k} (passed all {k})", fmt_pct(sc.pass_k), fmt_ci(sc.pass_k_ci, pct=True))
        )
    if sc.pass_at_k is not None:
        rows.append(
            (
                f"pass@{k} (passed at least once)",
                fmt_pct(sc.pass_at_k),
                fmt_ci(sc.pass_at_k_ci, pct=True),
            )
        )
    if sc.unstable:
        rows.append(("unstable cases", unstable_text(sc), ""))
    out = [
        Section("judge stability", ["measure", "value", "95% CI"], rows, stability_sentence(s, sc))
    ]
    if sc.by_category:
        out.append(
            Section(
                "judge stability by category",
                ["category", "stable", "stability", "95% CI"],
                [
                    (
                        name,
                        f"{c.stable} of {c.cases}",
                        fmt_pct(c.stability),
                        group_ci(c.stability_ci, c.cases, pct=True),
                    )
                    for name, c in sc.by_category.items()
                ],
            )
        )
    return out


def repeat_text(v: RepeatVerdict) -> str:
    """One repeat's verdict in a few words: "3, passed", "new", "no verdict"."""
    bits = [] if v.score is None else [f"{v.score:.4g}"]
    bits += [] if v.choice is None else [v.choice]
    bits += [] if v.winner is None else [v.winner.value]
    bits += [] if v.passed is None else ["passed" if v.passed else "not passed"]
    return ", ".join(bits) or "no verdict"


def repeats_text(repeats: Sequence[RepeatVerdict]) -> str:
    """Every repeat's verdict, in repeat order: "3 · 4 · 3"."""
    return " · ".join(repeat_text(v) for v in repeats) or NA


def spread_text(r: CaseResult) -> str:
    """A case's spread over its repeats: the SD of its scores (pointwise), else the share of
    its verdicts that differ from the most common one; "—" without repeats.
    """
    if r.spread is None:
        return "—"
    # As repeats.agreement measures it: the SD when every repeat has a score.
    scored = bool(r.repeats) and all(v.score is not None for v in r.repeats or [])
    return f"SD {fmt(r.spread)}" if scored else f"{fmt_pct(r.spread)} differ"

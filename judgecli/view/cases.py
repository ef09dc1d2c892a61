"""A run's cases as the viewer filters them: what each case is flagged for (failed, judges
disagree, orders disagree, unstable over repeats, its category, its trajectory steps), the
filters a query asks for, and the search over a case's text, verdicts and replies.

The flags are read from results.jsonl as the rest of judge reads them: a panel's
disagreement as `judge review export` finds it (inputs.review.panel_disagrees), orders'
disagreement as the run's own `consistent`, instability as its `stable`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from judgecli.inputs.review import panel_disagrees, verdict_of
from judgecli.result import CaseResult, CaseStatus


class Flag(StrEnum):
    """What a case can be filtered for (the `flag` query of the cases page and API)."""

    FAILED = "failed"
    JUDGES_DISAGREE = "judges-disagree"
    ORDERS_DISAGREE = "orders-disagree"
    UNSTABLE = "unstable"
    STEPS = "steps"
    UNLABELLED = "unlabelled"
    LABELLED = "labelled"


FLAG_WORDS = {
    Flag.FAILED: "failed (no verdict)",
    Flag.JUDGES_DISAGREE: "judges disagree",
    Flag.ORDERS_DISAGREE: "orders disagree",
    Flag.UNSTABLE: "unstable over repeats",
    Flag.STEPS: "with trajectory steps",
    Flag.UNLABELLED: "not labelled yet",
    Flag.LABELLED: "labelled",
}


def step_count(r: CaseResult) -> int | None:
    """How many trajectory steps the case has: graded steps, else the tool calls its
    answers made (pairwise: the more of OLD's and NEW's); None for a case without any.
    """
    if r.steps is not None:
        return len(r.steps)
    counts = [r.lengths[k] for k in ("old_steps", "new_steps") if k in r.lengths]
    return max(counts) if counts else None


def flags_of(r: CaseResult, labelled: bool) -> set[Flag]:
    """Every flag a case has (`labelled`: someone's label stands on it)."""
    flags = {Flag.LABELLED if labelled else Flag.UNLABELLED}
    if r.status is CaseStatus.FAILED:
        flags.add(Flag.FAILED)
    if panel_disagrees(r):
        flags.add(Flag.JUDGES_DISAGREE)
    if r.consistent is False:
        flags.add(Flag.ORDERS_DISAGREE)
    if r.stable is False:
        flags.add(Flag.UNSTABLE)
    if step_count(r):
        flags.add(Flag.STEPS)
    return flags


def search_text(r: CaseResult) -> str:
    """Everything a search looks in, lower-cased: id, category, the case's text, the
    judges' reasoning and raw replies, the error.
    """
    parts = [r.id, r.category or "", r.error or "", *r.case.values()]
    for j in r.all_judgements:
        parts += [j.raw or "", j.verdict.reasoning if j.verdict else "", j.error or ""]
    return "\n".join(parts).casefold()


@dataclass(frozen=True)
class CaseFilter:
    """What the cases page and API were asked to show: all given conditions hold."""

    flags: frozenset[Flag] = frozenset()
    category: str | None = None
    query: str = ""

    @classmethod
    def of(cls, params: Mapping[str, str], flags: Sequence[str]) -> CaseFilter:
        """From a query string: `flag` (repeatable), `category`, `q`; unknown flags are
        ValueError (the API answers 400 naming them).
        """
        unknown = [f for f in flags if f not in {x.value for x in Flag}]
        if unknown:
            names = ", ".join(f.value for f in Flag)
            raise ValueError(f"unknown flag {unknown[0]!r}: one of {names}")
        return cls(
            flags=frozenset(Flag(f) for f in flags if f),
            category=params.get("category") or None,
            query=(params.get("q") or "").strip().casefold(),
        )

    def keeps(self, r: CaseResult, flags: set[Flag]) -> bool:
        """Whether a case with these flags passes the filter."""
        if not self.flags <= flags:
            return False
        if self.category is not None and (r.category or "") != self.category:
            return False
        return not self.query or self.query in search_text(r)


def case_row(r: CaseResult, flags: set[Flag], labels: Mapping[str, Any]) -> dict[str, Any]:
    """A case as the API's list gives it: id, status, verdict, category, flags, steps, and
    each rater's standing label.
    """
    return {
        "id": r.id,
        "status": r.status.value,
        "verdict": verdict_of(r),
        "category": r.category,
        "flags": sorted(f.value for f in flags),
        "steps": step_count(r),
        "labels": dict(labels),
    }


def categories(results: Sequence[CaseResult]) -> list[str]:
    """The categories of a run's cases, sorted."""
    return sorted({r.category for r in results if r.category})

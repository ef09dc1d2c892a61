"""What align compares: a verdict's outcome in the rubric's terms (a binary rubric's
choice; a pointwise rubric's pass or fail at its pass mark) and the human's; and the pass
mark fitted to the human's pass/fail on train.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from judgecli.inputs.labels import Value
from judgecli.rubric import Rubric, RubricKind

FAILED = "(failed)"
"""A case whose verdict failed counts as this category: never the human's label."""


class PassFail(StrEnum):
    """A pointwise verdict's outcome at a pass mark."""

    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict on one case: its choice or score (both None: the case failed),
    its reason, and the error of a failed case.
    """

    choice: str | None = None
    score: float | None = None
    reason: str | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the case has no verdict."""
        return self.choice is None and self.score is None


def outcome(verdict: Verdict, rubric: Rubric) -> str:
    """The verdict as a category: the choice, or pass/fail at the rubric's pass mark."""
    if rubric.kind is RubricKind.POINTWISE:
        if verdict.score is None or rubric.pass_at is None:
            return FAILED
        return PassFail.PASS if verdict.score >= rubric.pass_at else PassFail.FAIL
    return verdict.choice if verdict.choice is not None else FAILED


def human_outcome(value: Value, base: Rubric) -> str:
    """A human label as a category: a pointwise score at the base rubric's pass mark (the
    people's standard, which no candidate moves), else the label itself.
    """
    if base.kind is RubricKind.POINTWISE and isinstance(value, int | float):
        return (
            PassFail.PASS if base.pass_at is not None and value >= base.pass_at else PassFail.FAIL
        )
    return str(value)


def categories(rubric: Rubric) -> list[str]:
    """Every category a verdict or a label can be, in a fixed order."""
    if rubric.kind is RubricKind.POINTWISE:
        return [PassFail.PASS, PassFail.FAIL, FAILED]
    return [*(rubric.choices or []), FAILED]


def fit_pass_mark(
    scores: Sequence[float | None], labels: Sequence[str], *, current: float
) -> float | None:
    """The pass mark that makes `score ≥ mark` agree most with the pass/fail labels: tried
    at every distinct score given (each as the lowest passing score), ties broken toward
    the current mark. None when no case has a score.
    """
    given = sorted({s for s in scores if s is not None})
    if not given:
        return None

    def right(mark: float) -> int:
        return sum(
            s is not None and (s >= mark) == (label == PassFail.PASS)
            for s, label in zip(scores, labels, strict=True)
        )

    return max(given, key=lambda m: (right(m), -abs(m - current)))

"""What the pytest plugin keeps of each judged call of a test (`JudgedCase`): the verdict in
plain values, with the test that asked for it, so pytest-xdist's workers can send it to the
controller as a dict, the JUnit report can carry it as properties, and `--judge-per-test`
can say why a test failed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from judgecli.result import Winner

if TYPE_CHECKING:
    from judgecli.api.verdicts import Comparison, Verdict
    from judgecli.rubric import Rubric


class CallKind(StrEnum):
    """What a judged call asked: one answer graded, or two compared."""

    GRADE = "grade"
    COMPARE = "compare"


@dataclass(frozen=True)
class Asked:
    """Where a call was made and of whom: the test, its module, the rubric and the judge."""

    test: str
    """The test's node id (`tests/test_answers.py::test_capital[paris]`)."""
    module: str
    """The test's file, as its node id names it (`tests/test_answers.py`)."""
    rubric: str
    """The rubric's name."""
    judge: str
    """The judge's model string (a panel's, comma-separated)."""

    def made(self, kind: CallKind, case: str, **said: Any) -> JudgedCase:
        """The record of a call made here, of `case`, with what the judge `said`."""
        return JudgedCase(
            test=self.test,
            module=self.module,
            kind=kind,
            rubric=self.rubric,
            judge=self.judge,
            case=case,
            **said,
        )


@dataclass(frozen=True)
class JudgedCase:
    """One judged call of a test: a case graded or a pair compared, or the error that kept
    the judge from it.
    """

    test: str
    module: str
    kind: CallKind
    rubric: str
    judge: str
    case: str
    """The case's id (`case-1` for a case given without one)."""
    score: float | None = None
    scale: tuple[float, float] | None = None
    """A pointwise rubric's (min, max): where a mean's interval is clipped."""
    passed: bool | None = None
    choice: str | None = None
    winner: Winner | None = None
    """A comparison's winner, from NEW's side; None when the flip policy dropped the pair."""
    reason: str = ""
    error: str | None = None
    """Why the judge could not grade the call (an outage, invalid replies, the budget)."""

    @property
    def graded(self) -> bool:
        """Whether the judge gave a verdict."""
        return self.error is None

    @property
    def failed(self) -> bool:
        """Whether the verdict is against the answer: a case that did not pass, or a pair
        NEW lost (a tie or a dropped pair is no loss).
        """
        if self.kind is CallKind.COMPARE:
            return self.winner is Winner.OLD
        return self.passed is False

    def as_dict(self) -> dict[str, Any]:
        """The record in plain types (what execnet carries from an xdist worker)."""
        data = asdict(self)
        data["kind"] = self.kind.value
        data["winner"] = None if self.winner is None else self.winner.value
        data["scale"] = None if self.scale is None else list(self.scale)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgedCase:
        """The record `as_dict` gave."""
        fields = dict(data)
        scale, winner = data.get("scale"), data.get("winner")
        fields["kind"] = CallKind(data["kind"])
        fields["scale"] = None if scale is None else (float(scale[0]), float(scale[1]))
        fields["winner"] = None if winner is None else Winner(winner)
        return cls(**fields)

    def properties(self) -> list[tuple[str, str]]:
        """The record as JUnit properties (`item.user_properties`), `judge_case` first so a
        test with several judged calls shows each as a group.
        """
        values: list[tuple[str, Any]] = [
            ("judge_case", self.case),
            ("judge_rubric", self.rubric),
            ("judge_model", self.judge),
            ("judge_score", self.score),
            ("judge_choice", self.choice),
            ("judge_passed", self.passed),
            ("judge_winner", None if self.winner is None else self.winner.value),
            ("judge_reason", self.reason or None),
            ("judge_error", self.error),
        ]
        return [(name, shown(value)) for name, value in values if value is not None]

    def complaint(self) -> str:
        """Why the verdict fails its test (`--judge-per-test`): the case, what the judge
        said, and its reason.
        """
        if self.kind is CallKind.COMPARE:
            said = "NEW lost to OLD"
        elif self.score is not None:
            said = f"score {self.score:g}, not a pass"
        else:
            said = f"{self.choice or 'no choice'}, not a pass"
        reason = self.reason.strip().replace("\n", "\n    ")
        return f"case {self.case!r} ({self.rubric}): {said}: {reason}"


def shown(value: Any) -> str:
    """A property's value as JUnit XML holds it (`true`/`false` for a bool, as in JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def graded_case(asked: Asked, verdict: Verdict, rubric: Rubric) -> JudgedCase:
    """The record of a case graded."""
    return asked.made(
        CallKind.GRADE,
        verdict.id,
        score=verdict.score,
        scale=(rubric.scale.min, rubric.scale.max) if rubric.scale is not None else None,
        passed=verdict.passed,
        choice=verdict.choice,
        reason=verdict.reason,
    )


def compared_case(asked: Asked, comparison: Comparison) -> JudgedCase:
    """The record of a pair compared."""
    return asked.made(
        CallKind.COMPARE, comparison.id, winner=comparison.winner, reason=comparison.reason
    )


def ungraded_case(asked: Asked, kind: CallKind, case: str, error: str) -> JudgedCase:
    """The record of a call the judge could not grade."""
    return asked.made(kind, case, error=error)

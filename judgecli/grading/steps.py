"""What one case is graded as: itself once, each assistant turn of a conversation (`turns:
each`), or each tool call of an agent's run in its context (`steps: each`); and each graded
part's verdict as the case's result keeps it (`turns` or `steps`). Pure.

A run without a tool call under `steps: each` is graded once, as a whole (its `steps` is
empty): it made no call to grade, and it is not a failure (the task may need none).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from judgecli.grading.debias import PanelVerdict
from judgecli.grading.turns import turn_record
from judgecli.inputs.conversation import answer_positions
from judgecli.inputs.dataset import Case
from judgecli.inputs.trajectory import Step, run_steps, step_view
from judgecli.rubric import Rubric, Steps, Turns


class Part(StrEnum):
    """What the parts a case is graded in are."""

    WHOLE = "whole"
    TURN = "turn"
    STEP = "step"


@dataclass(frozen=True)
class Graded:
    """A case as it is graded: the views the judges are shown (each a case of its own) and
    what they are.
    """

    part: Part
    views: list[Case]
    steps: list[Step]
    """`steps: each`: the run's steps, one per view (empty for a run without a call)."""

    @property
    def each(self) -> bool:
        """Whether the views' verdicts aggregate into the case's."""
        return self.part is not Part.WHOLE

    def label(self, view: int) -> str:
        """A graded part in an error message: `turn 2: `, `step 3 (search): `, or nothing."""
        if self.part is Part.TURN:
            return f"turn {view + 1}: "
        if self.part is Part.STEP and self.steps:
            step = self.steps[view]
            return f"step {step.index} ({step.tool}): "
        return ""


def graded_parts(rubric: Rubric, case: Case) -> Graded:
    """The views of `case` its rubric grades (module docstring)."""
    if case.messages is not None and rubric.turns is Turns.EACH:
        return Graded(Part.TURN, case.answer_turns(), [])
    if case.messages is not None and rubric.steps is Steps.EACH:
        steps = run_steps(case.messages)
        if not steps:
            return Graded(Part.STEP, [case], [])
        views = [
            case.model_copy(update={"messages": step_view(case.messages, step)}) for step in steps
        ]
        return Graded(Part.STEP, views, steps)
    return Graded(Part.WHOLE, [case], [])


def step_record(step: Step, verdict: PanelVerdict) -> dict[str, Any]:
    """One graded step as a case's result keeps it (CaseResult.steps)."""
    return {
        "step": step.index,
        "tool": step.tool,
        "message": step.message,
        "score": verdict.score,
        "criteria": verdict.criteria,
        "choice": verdict.choice,
        "passed": verdict.passed,
    }


def part_records(graded: Graded, case: Case, verdicts: list[PanelVerdict]) -> dict[str, Any]:
    """The result's `turns` or `steps`: each graded part's verdict (`verdicts`, one per
    view); nothing for a case graded whole.
    """
    if graded.part is Part.TURN:
        assert case.messages is not None
        positions = answer_positions(case.messages)
        return {
            "turns": [
                turn_record(turn + 1, message, verdict)
                for turn, (message, verdict) in enumerate(zip(positions, verdicts, strict=True))
            ]
        }
    if graded.part is Part.STEP:
        # A run without a call was graded whole: no step of it has a verdict of its own.
        steps = zip(graded.steps, verdicts, strict=True) if graded.steps else []
        return {"steps": [step_record(step, verdict) for step, verdict in steps]}
    return {}

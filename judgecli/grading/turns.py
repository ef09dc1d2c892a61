"""A conversation graded turn by turn (`turns: each`): each graded turn as a case's result
keeps it, and the case's verdict from its turns' verdicts by the rubric's `aggregate`
(`mean` or `min`). Pure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from judgecli.grading.debias import PanelVerdict
from judgecli.rubric import Rubric, RubricKind, TurnAggregate


def turn_record(turn: int, message: int, verdict: PanelVerdict) -> dict[str, Any]:
    """One graded turn as a case's result keeps it (CaseResult.turns)."""
    return {
        "turn": turn,
        "message": message,
        "score": verdict.score,
        "criteria": verdict.criteria,
        "choice": verdict.choice,
        "passed": verdict.passed,
    }


def aggregate_turns(rubric: Rubric, verdicts: Sequence[PanelVerdict]) -> PanelVerdict:
    """The case's verdict from its graded turns' verdicts, by the rubric's `aggregate`.

    Pointwise: `mean` averages the scores (and each criterion), and the case passes when the
    mean reaches pass_at; `min` takes the worst turn's verdict (its score and criteria, the
    first of equals), so the case passes only when every turn does. Binary: under `min` the
    case passes when every turn passes, under `mean` when most turns do (more than half: two
    of four is a fail); a failed case takes the failing choice its turns gave most often.
    A turn without a verdict (a split panel) leaves the case undecided when the decided
    turns do not settle it either way.
    """
    how = rubric.turn_aggregate
    if rubric.kind is RubricKind.BINARY:
        return aggregate_choices(rubric, verdicts, how)
    if not verdicts or any(v.score is None for v in verdicts):
        return PanelVerdict()
    if how is TurnAggregate.MIN:
        return min(verdicts, key=lambda v: v.score if v.score is not None else math.inf)
    score = math.fsum(v.score for v in verdicts if v.score is not None) / len(verdicts)
    criteria = {
        name: math.fsum(v.criteria[name] for v in verdicts) / len(verdicts)
        for name in verdicts[0].criteria
    }
    passed = None if rubric.pass_at is None else score >= rubric.pass_at
    return PanelVerdict(score=score, criteria=criteria, passed=passed)


def aggregate_choices(
    rubric: Rubric, verdicts: Sequence[PanelVerdict], how: TurnAggregate
) -> PanelVerdict:
    """Binary `aggregate_turns`: every turn passes (min), or most turns do (mean)."""
    if not verdicts:
        return PanelVerdict()
    calls = [v.passed for v in verdicts]
    passes, fails, n = calls.count(True), calls.count(False), len(calls)
    passed: bool | None
    if how is TurnAggregate.MIN:
        passed = False if fails else (True if passes == n and n else None)
    elif 2 * passes > n:
        passed = True
    else:
        # Undecided turns could still make a majority only if they all passed.
        passed = False if 2 * (n - fails) <= n else None
    if passed is None:
        return PanelVerdict()
    if passed:
        return PanelVerdict(choice=rubric.passing_choice, passed=True)
    failing = Counter(v.choice for v in verdicts if v.passed is False and v.choice is not None)
    ranked = sorted(failing, key=lambda c: (-failing[c], (rubric.choices or []).index(c)))
    return PanelVerdict(choice=ranked[0] if ranked else None, passed=False)

"""Debiasing: combine the verdicts of a panel of judges into one case verdict. Pure.

A panel averages away one judge's idiosyncrasies (and self-preference). Pointwise scores
are averaged (criterion by criterion); choices go to the majority, and a split panel gives
no choice rather than a coin flip.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from judgecli.rubric import Rubric, RubricKind
from judgecli.verdict import Verdict


@dataclass(frozen=True)
class PanelVerdict:
    """The aggregated verdict of every judge for one case."""

    score: float | None = None
    criteria: dict[str, float] = field(default_factory=dict)
    choice: str | None = None
    passed: bool | None = None


def majority(labels: list[str]) -> str | None:
    """The label more judges gave than any other; None on a tie for first place."""
    if not labels:
        return None
    ranked = Counter(labels).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def combine_panel(rubric: Rubric, verdicts: list[Verdict]) -> PanelVerdict:
    """Aggregate one case's verdicts (one per judge) under the rubric's rules."""
    if rubric.kind is RubricKind.BINARY:
        choice = majority([v.choice for v in verdicts if v.choice is not None])
        passed = None if choice is None else choice == rubric.passing_choice
        return PanelVerdict(choice=choice, passed=passed)
    scores = [v.score for v in verdicts if v.score is not None]
    if not scores:
        return PanelVerdict()
    score = math.fsum(scores) / len(scores)
    criteria = {
        name: math.fsum(v.criteria[name] for v in verdicts) / len(verdicts)
        for name in (verdicts[0].criteria if verdicts else {})
    }
    passed = None if rubric.pass_at is None else score >= rubric.pass_at
    return PanelVerdict(score=score, criteria=criteria, passed=passed)

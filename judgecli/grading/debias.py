"""Debiasing: reconcile both orders of a pairwise judgement, and combine a panel. Pure.

Judges prefer whatever sits in position A (or B) when unsure; asking in both orders and
mapping the answers back cancels that: a verdict that flips with the order was the
position talking, not the answers. A panel averages away one judge's idiosyncrasies (and
self-preference): scores are averaged, choices and winners go to the majority, and a
split panel gives no choice (pairwise: a tie) rather than a coin flip.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from judgecli.result import Order, Winner
from judgecli.rubric import Rubric, RubricKind
from judgecli.verdict import Position


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


class Graded(Protocol):
    """A verdict on one prompt (a judge's Verdict), or one already combined (PanelVerdict)."""

    @property
    def score(self) -> float | None:
        """Pointwise: the score."""

    @property
    def criteria(self) -> dict[str, float]:
        """Pointwise: each criterion's score."""

    @property
    def choice(self) -> str | None:
        """Binary: the choice."""


def combine_panel(rubric: Rubric, verdicts: Sequence[Graded]) -> PanelVerdict:
    """Aggregate one case's verdicts (one per judge; or, with --repeats, one per repeat)
    under the rubric's rules: the mean score, the majority choice.
    """
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
        for name in verdicts[0].criteria
    }
    passed = None if rubric.pass_at is None else score >= rubric.pass_at
    return PanelVerdict(score=score, criteria=criteria, passed=passed)


class FlipPolicy(StrEnum):
    """What a judge's verdict is when its two orders disagree."""

    TIE = "tie"
    """Disagreement is a tie (MT-Bench's rule): position bias cannot manufacture a win."""
    DROP = "drop"
    """The judge has no verdict on that case; the case leaves the win rate."""
    VOTE = "vote"
    """The two orders vote: a win and a tie is a win; a win each way is a tie."""


@dataclass(frozen=True)
class FlipVerdict:
    """One judge's verdict on one case after reconciling both orders."""

    winner: Winner | None
    consistent: bool


def to_winner(position: Position, order: Order) -> Winner:
    """Map a slot (A/B/tie) back to the answer that sat there."""
    if position is Position.TIE:
        return Winner.TIE
    old_in_a = order is Order.OLD_NEW
    return Winner.OLD if (position is Position.A) == old_in_a else Winner.NEW


def reconcile_flip(first: Winner, second: Winner, policy: FlipPolicy) -> FlipVerdict:
    """Combine one judge's verdicts from the two orders of a pair."""
    if first is second:
        return FlipVerdict(winner=first, consistent=True)
    if policy is FlipPolicy.DROP:
        return FlipVerdict(winner=None, consistent=False)
    if policy is FlipPolicy.VOTE and Winner.TIE in (first, second):
        decided = second if first is Winner.TIE else first
        return FlipVerdict(winner=decided, consistent=False)
    return FlipVerdict(winner=Winner.TIE, consistent=False)


def combine_winners(winners: list[Winner]) -> Winner | None:
    """The panel's verdict: the majority of the judges' verdicts, a tie when none has one.

    None only when no judge has a verdict (every one dropped by the flip policy).
    """
    if not winners:
        return None
    return Winner(majority([w.value for w in winners]) or Winner.TIE)

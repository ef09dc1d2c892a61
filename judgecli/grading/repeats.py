"""--repeats K: one case's K verdicts → its verdict, whether they agree, and how far apart. Pure.

A judge asked the same prompt K times (at a temperature above 0) need not answer the same.
Each repeat is graded like a case of its own (the panel combined, both orders reconciled);
the case's verdict is then their aggregate: the mean score, the majority choice or winner
(no choice, or a tie, without a majority), so one lucky sample cannot decide a case. The
case is *stable* when the K verdicts agree on what the gate reads: the score on an integer
scale, the pass/fail call on a continuous one (two real-valued scores are never exactly
equal), the choice, or the winner.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from judgecli.grading.debias import PanelVerdict, majority
from judgecli.result import RepeatVerdict, Winner
from judgecli.rubric import Rubric, RubricKind

DROPPED = "dropped"
"""The label of a pairwise repeat the flip policy dropped."""
SPLIT = "(split)"
"""The label of a binary repeat whose panel had no majority."""


class Compared:
    """What the repeats of a case must agree on (SelfConsistency.compared)."""

    SCORE = "score"
    PASSED = "passed"
    CHOICE = "choice"
    WINNER = "winner"


def compared_for(rubric: Rubric) -> str:
    """What the K verdicts of a case are compared on under this rubric."""
    if rubric.kind is RubricKind.PAIRWISE:
        return Compared.WINNER
    if rubric.kind is RubricKind.BINARY:
        return Compared.CHOICE
    integer = rubric.scale is not None and rubric.scale.integer
    return Compared.PASSED if not integer and rubric.pass_at is not None else Compared.SCORE


def label(verdict: RepeatVerdict, compared: str) -> str:
    """One repeat's verdict as the category its agreement is counted in."""
    if compared == Compared.WINNER:
        return verdict.winner.value if verdict.winner is not None else DROPPED
    if compared == Compared.CHOICE:
        return verdict.choice if verdict.choice is not None else SPLIT
    if compared == Compared.PASSED:
        return "pass" if verdict.passed else "fail"
    return f"{verdict.score:g}" if verdict.score is not None else "none"


@dataclass(frozen=True)
class Agreement:
    """Whether a case's K verdicts agree, and how far apart they are."""

    stable: bool
    spread: float


def agreement(verdicts: Sequence[RepeatVerdict], compared: str) -> Agreement:
    """Stable when every repeat has the same label. The spread: the scores' standard
    deviation for a score rubric, else the share of repeats off the most common label.
    """
    labels = [label(v, compared) for v in verdicts]
    stable = len(set(labels)) == 1
    scores = [v.score for v in verdicts if v.score is not None]
    if compared in (Compared.SCORE, Compared.PASSED) and len(scores) == len(verdicts):
        return Agreement(stable=stable, spread=statistics.stdev(scores))
    top = Counter(labels).most_common(1)[0][1]
    return Agreement(stable=stable, spread=1.0 - top / len(labels))


def majority_winner(winners: Sequence[Winner | None]) -> Winner | None:
    """A pairwise case's winner from its repeats' winners: the majority of those not
    dropped, a tie without one; None when every repeat was dropped.
    """
    decided = [w.value for w in winners if w is not None]
    if not decided:
        return None
    return Winner(majority(decided) or Winner.TIE)


def repeat_verdict(repeat: int, panel: PanelVerdict) -> RepeatVerdict:
    """One pointwise or binary repeat's verdict, as results.jsonl keeps it."""
    return RepeatVerdict(repeat=repeat, score=panel.score, choice=panel.choice, passed=panel.passed)


def repeats_warning(repeats: int, temperature: float) -> str | None:
    """What to say of --repeats at temperature 0, where a judge's K asks differ only by the
    provider's nondeterminism.
    """
    if repeats < 2 or temperature > 0:
        return None
    return (
        f"--repeats {repeats} at temperature 0: the repeats measure only the provider's "
        "nondeterminism, not the judge's own spread; set --temperature (e.g. 0.7) to "
        "sample the judge"
    )

"""Choosing on train alone: each way of making a candidate (labelled examples, an
optimizer's revision, a pointwise rubric's pass mark) is fitted on k − 1 folds of the train
cases and judged on the fold left out; the way with the best cross-validated accuracy wins
if it beats the baseline's, and is then fitted on the whole train set.

Nothing here can see the sealed test: the functions receive train cases and a `TrainRater`
that refuses any other id.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from judgecli.commands.align.candidates import (
    Candidate,
    Method,
    TrainCase,
    few_shot_system,
    optimizer_prompt,
    pick_examples,
    revised_instruction,
)
from judgecli.commands.align.outcomes import Verdict, fit_pass_mark, outcome
from judgecli.rubric import Rubric, RubricKind

DEFAULT_FOLDS = 3


class Rater(Protocol):
    """Judges cases (by id) with a rubric."""

    async def __call__(self, rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        """Each id's verdict."""
        ...


Optimizer = Callable[[list[dict[str, Any]]], Awaitable[str]]
"""Asks the optimizer model: messages in, reply text out."""


class TrainRater:
    """A rater that judges train cases only: asked for any other id it raises."""

    def __init__(self, rater: Rater, train: Sequence[str]) -> None:
        """Wrap ``rater`` for the ``train`` ids."""
        self._rater = rater
        self._train = frozenset(train)

    async def __call__(self, rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        """Each train id's verdict (ValueError for an id not in train)."""
        outside = [i for i in ids if i not in self._train]
        if outside:
            raise ValueError(f"the choosing asked for {len(outside)} case(s) outside train")
        return await self._rater(rubric, ids)


@dataclass(frozen=True)
class Choice:
    """What the choosing found: each method's cross-validated accuracy, the winner and its
    candidate fitted on the whole train set.
    """

    cv_accuracy: dict[Method, float | None]
    chosen: Candidate
    """The baseline when no method beat it."""
    folds: int


def folds_of(cases: Sequence[TrainCase], k: int, seed: int) -> list[list[TrainCase]]:
    """Deal k folds stratified by label: each label's cases shuffled and dealt round-robin."""
    rng = random.Random(seed)
    folds: list[list[TrainCase]] = [[] for _ in range(k)]
    dealt = 0
    for label in sorted({c.label for c in cases}):
        group = sorted((c for c in cases if c.label == label), key=lambda c: c.id)
        rng.shuffle(group)
        for case in group:
            folds[dealt % k].append(case)
            dealt += 1
    return [fold for fold in folds if fold]


def methods_for(base: Rubric, *, optimizer: bool) -> list[Method]:
    """The methods that can shape ``base``, the one that changes the least first."""
    found = [Method.PASS_MARK] if base.kind is RubricKind.POINTWISE else []
    return found + [Method.FEW_SHOT] + ([Method.REVISION] if optimizer else [])


async def fit(
    method: Method, base: Rubric, cases: Sequence[TrainCase], optimizer: Optimizer | None
) -> Candidate | None:
    """The candidate a method makes from ``cases`` (None: it makes none)."""
    system = base.prompt.system if base.prompt is not None else ""
    if method is Method.FEW_SHOT:
        examples = pick_examples(cases)
        return Candidate(method, few_shot_system(system, examples)) if examples else None
    if method is Method.REVISION and optimizer is not None:
        wrong = [c for c in cases if c.judged != c.label]
        if not wrong:
            return None
        revised = revised_instruction(await optimizer(optimizer_prompt(system, wrong)))
        return Candidate(method, revised) if revised else None
    if method is Method.PASS_MARK and base.pass_at is not None:
        mark = fit_pass_mark(
            [c.score for c in cases], [c.label for c in cases], current=base.pass_at
        )
        return None if mark is None else Candidate(method, pass_at=mark)
    return None


async def held_out_right(
    candidate: Candidate, rubric: Rubric, held: Sequence[TrainCase], rater: TrainRater
) -> int:
    """How many held-out cases the candidate's rubric gets right. A candidate that asks
    nothing new (a pass mark) reads the baseline's scores: no call is made for it.
    """
    if candidate.asks_differently:
        verdicts = await rater(rubric, [c.id for c in held])
        return sum(outcome(verdicts[c.id], rubric) == c.label for c in held)
    return sum(outcome(Verdict(score=c.score), rubric) == c.label for c in held)


async def choose(
    base: Rubric,
    cases: Sequence[TrainCase],
    rater: TrainRater,
    *,
    optimizer: Optimizer | None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> Choice:
    """Cross-validate each method on the train ``cases`` (already judged by the baseline:
    `TrainCase.judged`) and fit the winner on all of them.
    """
    methods = methods_for(base, optimizer=optimizer is not None)
    baseline = sum(c.judged == c.label for c in cases) / len(cases)
    scores: dict[Method, float | None] = {Method.BASELINE: baseline}
    split = folds_of(cases, folds, seed)
    for method in methods:
        right: int | None = 0
        for held in split:
            held_ids = {c.id for c in held}
            fitted = await fit(method, base, [c for c in cases if c.id not in held_ids], optimizer)
            rubric = usable(fitted, base)
            if fitted is None or rubric is None:
                right = None
                break
            right = (right or 0) + await held_out_right(fitted, rubric, held, rater)
        scores[method] = None if right is None else right / len(cases)
    ranked = [m for m in methods if scores[m] is not None]
    chosen = Candidate(Method.BASELINE)
    if ranked:
        # The first method listed wins a tie: the one that changes the least comes first.
        best = max(ranked, key=lambda m: scores[m] or 0.0)
        if (scores[best] or 0.0) > baseline:
            fitted = await fit(best, base, cases, optimizer)
            if fitted is not None and usable(fitted, base) is not None:
                chosen = fitted
    return Choice(cv_accuracy=scores, chosen=chosen, folds=len(split))


def usable(candidate: Candidate | None, base: Rubric) -> Rubric | None:
    """The candidate's rubric, or None when it makes none or it is not a valid rubric (an
    optimizer may write a stray brace).
    """
    if candidate is None:
        return None
    try:
        return candidate.rubric(base)
    except (ValidationError, ValueError):
        return None

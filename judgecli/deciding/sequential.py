"""The sequential gate (`--sequential`): judge the cases in a seeded random order, follow an
anytime-valid confidence sequence of the gated number after every finished case, and stop
as soon as it lies wholly above or below the threshold (or the cases run out).

The sequence is the betting confidence sequence of `stats.sequential`: valid at every
stopping time, so looking after each case (or on every push) does not raise the false-pass
rate above α. The order is part of the guarantee: cases are taken in a random order fixed by
the seed before any verdict is seen, and the sequence advances along that order only. A
case that finishes early (concurrency) waits for the cases before it, so when the decision
is made never depends on how fast a verdict came back. A failed case adds no observation.

The state is a function of results.jsonl and the order: a resumed run, or the summary at
the end, walks the same prefix and reaches the same decision at the same case.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from judgecli.deciding.outcomes import case_value
from judgecli.result import CaseResult
from judgecli.stats.sequential import BettingCS, Decision, decide
from judgecli.summary.facts import SequentialSummary
from judgecli.summary.gate_records import GateMetric

T = TypeVar("T")

METHOD = "betting confidence sequence (Waudby-Smith & Ramdas, JRSS-B 2024)"


@dataclass(frozen=True)
class SequentialGate:
    """What a sequential run follows: one number, its floor, and the order's seed."""

    metric: GateMetric
    threshold: float
    """On the metric's own scale (a mean score on the rubric's scale)."""
    scale: tuple[float, float] = (0.0, 1.0)
    """The bounds of one case's value (a mean's rubric scale; rates are 0..1)."""
    alpha: float = 0.05
    seed: int = 0

    def value(self, result: CaseResult) -> float | None:
        """The case's observation on the unit scale, or None (failed, no verdict)."""
        raw = case_value(result, self.metric)
        return None if raw is None else self.to_unit(raw)

    def to_unit(self, value: float) -> float:
        """A value of the metric's scale on 0..1."""
        low, high = self.scale
        return min(1.0, max(0.0, (value - low) / (high - low)))

    def from_unit(self, value: float) -> float:
        """A 0..1 value back on the metric's scale."""
        low, high = self.scale
        return low + value * (high - low)


def shuffled(items: Iterable[T], seed: int) -> list[T]:
    """The items in the sequential gate's random order: fixed by the seed alone, before any
    verdict (the same seed gives the same order, so a resume follows the same sequence).
    """
    ordered = list(items)
    random.Random(f"sequential-{seed}").shuffle(ordered)
    return ordered


@dataclass
class Follower:
    """The confidence sequence along the order, advanced as results arrive."""

    gate: SequentialGate
    order: Sequence[str]
    """Case ids in the order they are judged."""
    values: dict[str, float | None] = field(default_factory=dict)
    """Each finished case's observation (None: failed or no verdict)."""
    position: int = 0
    """How many cases of the order the sequence has taken."""
    decision: Decision = Decision.UNDECIDED
    cs: BettingCS = field(init=False)

    def __post_init__(self) -> None:
        self.cs = BettingCS(alpha=self.gate.alpha, points=[self.unit_threshold])

    @property
    def unit_threshold(self) -> float:
        """The threshold on the unit scale."""
        return self.gate.to_unit(self.gate.threshold)

    def record(self, result: CaseResult) -> None:
        """One finished case (a retried case's later result replaces its earlier one)."""
        self.values[result.id] = self.gate.value(result)

    def advance(self) -> Decision:
        """Take every case of the order whose result is in, up to the first gap or the
        decision; the decision so far.
        """
        while self.decision is Decision.UNDECIDED and self.position < len(self.order):
            case_id = self.order[self.position]
            if case_id not in self.values:
                break
            self.position += 1
            value = self.values[case_id]
            if value is not None:
                self.cs.update(value)
                self.decision = decide(self.cs.interval, self.unit_threshold)
        return self.decision

    def decided(self) -> bool:
        """Whether the run can stop: the sequence has left the threshold."""
        return self.advance() is not Decision.UNDECIDED

    def replayed(self, results: Iterable[CaseResult]) -> Follower:
        """The sequence along the same order over `results` from the start: over the run's
        results.jsonl once it is judged, the one a resume or a merge follows too.
        """
        return follow(self.gate, self.order, results)


def follow(gate: SequentialGate, order: Sequence[str], results: Iterable[CaseResult]) -> Follower:
    """The sequence over finished results, as the run followed it."""
    follower = Follower(gate, order)
    for result in results:
        follower.record(result)
    follower.advance()
    return follower


def sequential_summary(follower: Follower, *, judged: int, cost_usd: float) -> SequentialSummary:
    """summary.json's `sequential`: the decision, when it came, the bound that made it, and
    what stopping saved (the cost per judged case times the cases left unjudged, an
    estimate).
    """
    gate = follower.gate
    low, high = follower.cs.interval
    bound = {Decision.PASS: low, Decision.FAIL: high}.get(follower.decision)
    decided = follower.decision is not Decision.UNDECIDED
    saved = max(0, len(follower.order) - judged) if decided else 0
    per_case = cost_usd / judged if judged else 0.0
    return SequentialSummary(
        metric=gate.metric,
        threshold=gate.threshold,
        alpha=gate.alpha,
        method=METHOD,
        decision=follower.decision.value,
        decided_after=follower.position if decided else None,
        n_cases=len(follower.order),
        judged=judged,
        observations=follower.cs.n,
        bound=None if bound is None else gate.from_unit(bound),
        interval=(gate.from_unit(low), gate.from_unit(high)),
        saved_cases=saved,
        saved_usd=round(per_case * saved, 6),
        order_seed=gate.seed,
    )


def redecide(summary: SequentialSummary, threshold: float) -> Decision:
    """The decision a finished sequence gives at another threshold (`judge gate`): the
    interval at a stopping time of an anytime-valid sequence is a valid interval, so it
    can be compared with any bar, though only the run's own bar chose when to stop.
    """
    if threshold == summary.threshold:
        return Decision(summary.decision)
    return decide(summary.interval, threshold)

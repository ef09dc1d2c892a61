"""The gate's verdict as summary.json holds it: which number of an estimate is compared
(`GateOn`), which numbers can be gated (`GateMetric`), each threshold against its number
(`GateCheck`), the position-consistency floor a pairwise gate stands on, and the verdict
(`GateResult`: passed, failed on judged evidence, or undecided). `judgecli.deciding.gate` computes
them; the reports and the CLI show them.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from judgecli.stats.intervals import Interval
from judgecli.summary.parts import Record


class GateOn(StrEnum):
    """Which number of an estimate the gate compares."""

    POINT = "point"
    LOWER_BOUND = "lower-bound"
    CORRECTED = "corrected"
    """The human-corrected (PPI++) point estimate: needs human labels (--labels)."""
    CORRECTED_LOWER_BOUND = "corrected-lower-bound"
    """The pessimistic end of the human-corrected estimate's 95% interval."""
    SEQUENTIAL = "sequential"
    """The decision of an anytime-valid confidence sequence (--sequential)."""


class GateOutcome(StrEnum):
    """How a gate ended: its word in the reports."""

    PASSED = "PASS"
    FAILED = "FAIL"
    UNDECIDED = "UNDECIDED"


class GateMetric(StrEnum):
    """A number a gate can check: its summary key."""

    WIN_RATE = "win_rate"
    PASS_RATE = "pass_rate"
    MEAN = "mean"
    LOSS_RATE = "loss_rate"
    CONSISTENCY = "consistency"
    STABILITY = "stability"
    PASS_K = "pass_k"
    COHEN_KAPPA = "cohen_kappa"
    WEIGHTED_KAPPA = "weighted_kappa"
    ACCURACY = "accuracy"
    TOOL_F1 = "tool_calls.f1"
    """A `tool_calls` check's micro F1 (summary.json's tool_calls.f1), and its recall and
    precision below."""
    TOOL_RECALL = "tool_calls.recall"
    TOOL_PRECISION = "tool_calls.precision"
    CHECKLIST_SCORE = "checklist_score"


TOOL_METRICS = frozenset({GateMetric.TOOL_F1, GateMetric.TOOL_RECALL, GateMetric.TOOL_PRECISION})
"""The numbers of a rubric's tool-call check (summary.json's `tool_calls`)."""


class GateCheck(Record):
    """One threshold against its number."""

    metric: GateMetric
    threshold: float
    value: float | None
    """The number compared (point estimate or interval bound, per `on`); None = no data."""
    point: float | None
    interval: Interval | None
    on: GateOn
    passed: bool
    minimum: bool
    """True for a floor (min_*), False for a ceiling (max_*)."""
    decided: bool = True
    """False when the evidence cannot decide the check (`passed` is then false too)."""
    undecided: str | None = None
    """Why the check is undecided; null when it is decided."""


class ConsistencyFloor(Record):
    """The position-consistency floor a pairwise gate stands on (`--min-consistency`):
    below it the judge picks a position, not an answer, and decides no gate.
    """

    threshold: float
    value: float | None
    """The run's position consistency (point estimate); a panel's: its most consistent
    judge's (the panel stands while one judge can tell the answers apart)."""
    judges: dict[str, float | None] | None = None
    """A panel: each judge's position consistency."""
    below: list[str] = Field(default_factory=list)
    """A panel: the judges below the floor."""
    met: bool


class GateResult(Record):
    """The gate's verdict: passed (exit 0), failed on judged evidence (exit 1) or, when
    the evidence cannot decide, undecided (exit 3). `metric`/`threshold`/`value` describe
    the first check.
    """

    passed: bool
    metric: GateMetric
    threshold: float
    value: float | None
    on: GateOn
    checks: list[GateCheck]
    cases_needed: int | None = None
    """When the win rate's point estimate passes but its lower bound does not: how many
    cases in all, at the observed rate, would make the lower bound pass too."""
    decided: bool = True
    """False: the gate is undecided (exit 3); `passed` is false too."""
    undecided: str | None = None
    """Why the gate is undecided (the first reason); null when it is decided."""
    hint: str | None = None
    """What to do about an undecided gate; null when it is decided."""
    consistency_floor: ConsistencyFloor | None = None
    """A pairwise run judged in both orders: the floor and the run's consistency."""

    @property
    def outcome(self) -> GateOutcome:
        """Passed, failed or undecided."""
        if not self.decided:
            return GateOutcome.UNDECIDED
        return GateOutcome.PASSED if self.passed else GateOutcome.FAILED

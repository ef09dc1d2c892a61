"""The CI gate: a finished run's summary + thresholds → passed or not, with the numbers used.

Pure. By default the point estimate is compared (what users ask for: "win rate at least
0.55"); `--on lower-bound` compares the pessimistic end of the 95% interval instead (the
lower bound for a minimum, the upper bound for a maximum), so a lucky small sample cannot
pass. A minimum passes at or above its threshold, a maximum at or below.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from judgecli.stats.intervals import Interval
from judgecli.stats.pairwise import cases_needed
from judgecli.summary.run import RunSummary


class GateOn(StrEnum):
    """Which number of an estimate the gate compares."""

    POINT = "point"
    LOWER_BOUND = "lower-bound"


@dataclass(frozen=True)
class GateSpec:
    """The thresholds a user asked for; None = not checked."""

    min_win_rate: float | None = None
    max_loss_rate: float | None = None
    min_consistency: float | None = None
    min_kappa: float | None = None
    """Calibrate: quadratic-weighted κ for ordinal scales, Cohen's κ otherwise."""
    min_accuracy: float | None = None
    on: GateOn = GateOn.POINT

    @property
    def empty(self) -> bool:
        """No threshold at all: no gate."""
        thresholds = (self.min_win_rate, self.max_loss_rate, self.min_consistency,
                      self.min_kappa, self.min_accuracy)  # fmt: skip
        return all(t is None for t in thresholds)


class GateCheck(BaseModel):
    """One threshold against its number."""

    metric: str
    threshold: float
    value: float | None
    """The number compared (point estimate or interval bound, per `on`); None = no data."""
    point: float | None
    interval: Interval | None
    on: GateOn
    passed: bool
    minimum: bool
    """True for a floor (min_*), False for a ceiling (max_*)."""


class GateResult(BaseModel):
    """The gate's verdict. `metric`/`threshold`/`value` describe the first check."""

    passed: bool
    metric: str
    threshold: float
    value: float | None
    on: GateOn
    checks: list[GateCheck]
    cases_needed: int | None = None
    """When the win rate's point estimate passes but its lower bound does not: how many
    cases in all, at the observed rate, would make the lower bound pass too."""


def check(
    metric: str,
    threshold: float,
    point: float | None,
    interval: Interval | None,
    on: GateOn,
    *,
    minimum: bool,
) -> GateCheck:
    """Compare one number to its threshold."""
    value = point
    if on is GateOn.LOWER_BOUND:
        bound = None if interval is None else (interval[0] if minimum else interval[1])
        value = bound
    passed = value is not None and (value >= threshold if minimum else value <= threshold)
    return GateCheck(
        metric=metric, threshold=threshold, value=value, point=point, interval=interval, on=on,
        passed=passed, minimum=minimum,
    )  # fmt: skip


def evaluate_gate(summary: RunSummary, spec: GateSpec) -> GateResult | None:
    """Check every threshold in `spec` against the summary; None when there is none."""
    if spec.empty:
        return None
    kappa = "weighted_kappa" if summary.weighted_kappa is not None else "cohen_kappa"
    wanted = [
        ("win_rate", spec.min_win_rate, True),
        ("loss_rate", spec.max_loss_rate, False),
        ("consistency", spec.min_consistency, True),
        (kappa, spec.min_kappa, True),
        ("accuracy", spec.min_accuracy, True),
    ]
    checks = [
        check(metric, threshold, getattr(summary, metric), getattr(summary, f"{metric}_ci"),
              spec.on, minimum=minimum)
        for metric, threshold, minimum in wanted
        if threshold is not None
    ]  # fmt: skip
    first = checks[0]
    return GateResult(
        passed=all(c.passed for c in checks),
        metric=first.metric,
        threshold=first.threshold,
        value=first.value,
        on=spec.on,
        checks=checks,
        cases_needed=more_cases_needed(summary, spec),
    )


def more_cases_needed(summary: RunSummary, spec: GateSpec) -> int | None:
    """Cases needed for the win rate's lower bound to clear the bar, when only the point
    estimate does (normal approximation at the observed rate).
    """
    rate, ci, bar = summary.win_rate, summary.win_rate_ci, spec.min_win_rate
    if rate is None or bar is None or ci is None or ci[0] is None or rate < bar:
        return None
    if ci[0] >= bar:
        return None
    return cases_needed(rate, bar)


def gate_dict(result: GateResult) -> dict[str, Any]:
    """The gate as summary.json holds it."""
    return result.model_dump(mode="json")

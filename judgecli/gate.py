"""The CI gate: a finished run's summary + thresholds → passed or not, with the numbers used.

Pure. By default the point estimate is compared (what users ask for: "win rate at least
0.55"); `--on lower-bound` compares the pessimistic end of the 95% interval instead (the
lower bound for a minimum, the upper bound for a maximum), so a lucky small sample cannot
pass. A minimum passes at or above its threshold, a maximum at or below.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgecli.stats.intervals import Interval
from judgecli.stats.pairwise import cases_needed
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import GateCheck, GateMetric, GateOn, GateResult
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary

# The CLI builds GateSpecs (GateOn) and shows GateResults: they are the gate's interface,
# whichever module declares them (summary.json holds the verdict, so summary.facts does).
__all__ = [
    "GateCheck",
    "GateMetric",
    "GateOn",
    "GateResult",
    "GateSpec",
    "check",
    "estimate",
    "evaluate_gate",
    "more_cases_needed",
]


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
        thresholds = (
            self.min_win_rate,
            self.max_loss_rate,
            self.min_consistency,
            self.min_kappa,
            self.min_accuracy,
        )
        return all(t is None for t in thresholds)


def check(
    metric: GateMetric,
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
        metric=metric,
        threshold=threshold,
        value=value,
        point=point,
        interval=interval,
        on=on,
        passed=passed,
        minimum=minimum,
    )


def estimate(summary: RunSummary, metric: GateMetric) -> tuple[float | None, Interval | None]:
    """The metric's point estimate and 95% interval in the summary; (None, None) when its
    command does not measure it (a check on it then fails: there is no evidence).
    """
    match summary:
        case PairwiseSummary():
            found = {
                GateMetric.WIN_RATE: (summary.win_rate, summary.win_rate_ci),
                GateMetric.LOSS_RATE: (summary.loss_rate, summary.loss_rate_ci),
                GateMetric.CONSISTENCY: (summary.consistency, summary.consistency_ci),
            }
        case CalibrateSummary():
            found = {
                GateMetric.COHEN_KAPPA: (summary.cohen_kappa, summary.cohen_kappa_ci),
                GateMetric.WEIGHTED_KAPPA: (summary.weighted_kappa, summary.weighted_kappa_ci),
                GateMetric.ACCURACY: (summary.accuracy, summary.accuracy_ci),
            }
        case _:
            found = {}
    return found.get(metric, (None, None))


def evaluate_gate(summary: RunSummary, spec: GateSpec) -> GateResult | None:
    """Check every threshold in `spec` against the summary; None when there is none."""
    if spec.empty:
        return None
    weighted = isinstance(summary, CalibrateSummary) and summary.weighted_kappa is not None
    kappa = GateMetric.WEIGHTED_KAPPA if weighted else GateMetric.COHEN_KAPPA
    wanted = [
        (GateMetric.WIN_RATE, spec.min_win_rate, True),
        (GateMetric.LOSS_RATE, spec.max_loss_rate, False),
        (GateMetric.CONSISTENCY, spec.min_consistency, True),
        (kappa, spec.min_kappa, True),
        (GateMetric.ACCURACY, spec.min_accuracy, True),
    ]
    checks = [
        check(metric, threshold, *estimate(summary, metric), spec.on, minimum=minimum)
        for metric, threshold, minimum in wanted
        if threshold is not None
    ]
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
    rate, ci = estimate(summary, GateMetric.WIN_RATE)
    bar = spec.min_win_rate
    if rate is None or bar is None or ci is None or ci[0] is None or rate < bar:
        return None
    if ci[0] >= bar:
        return None
    return cases_needed(rate, bar)

"""The CI gate: a finished run's summary + thresholds → passed or not, with the numbers used.

Pure. By default the point estimate is compared (what users ask for: "win rate at least
0.55"); `--on lower-bound` compares the pessimistic end of the 95% interval instead (the
lower bound for a minimum, the upper bound for a maximum), so a lucky small sample cannot
pass. A minimum passes at or above its threshold, a maximum at or below.

`--on corrected` and `corrected-lower-bound` compare the human-corrected estimate (PPI++,
from --labels) of the numbers that have one (win rate, pass rate, mean), and the raw one
of the others. `--on sequential` takes the decision of a --sequential run's confidence
sequence: a pass only when the sequence lies wholly above the bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgecli.errors import ConfigError, InputError
from judgecli.outcomes import CASE_MEANS
from judgecli.rubric import Rubric
from judgecli.stats.intervals import Interval
from judgecli.stats.pairwise import cases_needed
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import GateCheck, GateMetric, GateOn, GateResult
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

if TYPE_CHECKING:
    # A --sequential run's modules are imported where one is planned or checked: the gate
    # of any other run needs neither.
    from judgecli.sequential import SequentialGate

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
    "plan_sequential",
    "check_gate_mode",
]


@dataclass(frozen=True)
class GateSpec:
    """The thresholds a user asked for; None = not checked."""

    min_win_rate: float | None = None
    min_pass_rate: float | None = None
    min_mean: float | None = None
    """Score: the mean score's floor, on the rubric's scale."""
    max_loss_rate: float | None = None
    min_consistency: float | None = None
    min_kappa: float | None = None
    """Calibrate: quadratic-weighted κ for ordinal scales, Cohen's κ otherwise."""
    min_accuracy: float | None = None
    min_stability: float | None = None
    """--repeats: the share of cases whose K verdicts agree."""
    min_pass_k: float | None = None
    """Score with --repeats: the share of cases that pass in every one of the K repeats."""
    on: GateOn = GateOn.POINT

    @property
    def floors(self) -> dict[GateMetric, float]:
        """The floors given on means a sequence or a correction can follow (win rate, pass
        rate, mean score), by metric.
        """
        bars = {
            GateMetric.WIN_RATE: self.min_win_rate,
            GateMetric.PASS_RATE: self.min_pass_rate,
            GateMetric.MEAN: self.min_mean,
        }
        return {metric: bar for metric, bar in bars.items() if bar is not None}

    @property
    def empty(self) -> bool:
        """No threshold at all: no gate."""
        thresholds = (
            self.min_win_rate,
            self.min_pass_rate,
            self.min_mean,
            self.max_loss_rate,
            self.min_consistency,
            self.min_kappa,
            self.min_accuracy,
            self.min_stability,
            self.min_pass_k,
        )
        return all(t is None for t in thresholds)

    @property
    def on_repeats(self) -> list[str]:
        """The flags given that only a run with --repeats can be checked against."""
        given = [("--min-stability", self.min_stability), ("--min-pass-k", self.min_pass_k)]
        return [flag for flag, value in given if value is not None]


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
    if on in (GateOn.LOWER_BOUND, GateOn.CORRECTED_LOWER_BOUND):
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


def sequential_check(summary: RunSummary, metric: GateMetric, threshold: float) -> GateCheck:
    """A floor checked by the run's confidence sequence: passed only when the sequence, at
    the stop, lies wholly above it. `value` is the end that decided (the upper end of a
    sequence wholly below the bar, else the lower end).
    """
    from judgecli.sequential import redecide
    from judgecli.stats.sequential import Decision

    seq = summary.sequential
    point, _ = estimate(summary, metric)
    if seq is None or seq.metric is not metric:
        return GateCheck(
            metric=metric,
            threshold=threshold,
            value=None,
            point=point,
            interval=None,
            on=GateOn.SEQUENTIAL,
            passed=False,
            minimum=True,
        )
    decision = redecide(seq, threshold)
    # The end of the sequence that decided: the lower for a pass, the upper for a fail.
    value = seq.interval[1] if decision is Decision.FAIL else seq.interval[0]
    return GateCheck(
        metric=metric,
        threshold=threshold,
        value=value,
        point=point,
        interval=seq.interval,
        on=GateOn.SEQUENTIAL,
        passed=decision is Decision.PASS,
        minimum=True,
    )


def corrected(summary: RunSummary, metric: GateMetric) -> tuple[float | None, Interval | None]:
    """The human-corrected estimate of the metric, (None, None) without one."""
    match summary:
        case PairwiseSummary() if metric is GateMetric.WIN_RATE:
            return summary.win_rate_corrected, summary.win_rate_corrected_ci
        case ScoreSummary() if metric is GateMetric.PASS_RATE:
            return summary.pass_rate_corrected, summary.pass_rate_corrected_ci
        case ScoreSummary() if metric is GateMetric.MEAN:
            return summary.mean_corrected, summary.mean_corrected_ci
    return None, None


def estimate(
    summary: RunSummary, metric: GateMetric, on: GateOn = GateOn.POINT
) -> tuple[float | None, Interval | None]:
    """The metric's point estimate and 95% interval in the summary (the human-corrected
    ones when `on` asks for them); (None, None) when its command does not measure it (a
    check on it then fails: there is no evidence).
    """
    if on in (GateOn.CORRECTED, GateOn.CORRECTED_LOWER_BOUND) and metric in CASE_MEANS:
        return corrected(summary, metric)
    if metric is GateMetric.STABILITY:
        return summary.stability, summary.stability_ci
    if metric is GateMetric.PASS_K:
        repeated = summary.self_consistency
        return (repeated.pass_k, repeated.pass_k_ci) if repeated else (None, None)
    match summary:
        case PairwiseSummary():
            found = {
                GateMetric.WIN_RATE: (summary.win_rate, summary.win_rate_ci),
                GateMetric.LOSS_RATE: (summary.loss_rate, summary.loss_rate_ci),
                GateMetric.CONSISTENCY: (summary.consistency, summary.consistency_ci),
            }
        case ScoreSummary():
            found = {
                GateMetric.PASS_RATE: (summary.pass_rate, summary.pass_rate_ci),
                GateMetric.MEAN: (summary.mean, summary.mean_ci),
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
        (GateMetric.PASS_RATE, spec.min_pass_rate, True),
        (GateMetric.MEAN, spec.min_mean, True),
        (GateMetric.LOSS_RATE, spec.max_loss_rate, False),
        (GateMetric.CONSISTENCY, spec.min_consistency, True),
        (kappa, spec.min_kappa, True),
        (GateMetric.ACCURACY, spec.min_accuracy, True),
        (GateMetric.STABILITY, spec.min_stability, True),
        (GateMetric.PASS_K, spec.min_pass_k, True),
    ]
    checks = [
        sequential_check(summary, metric, threshold)
        if spec.on is GateOn.SEQUENTIAL and metric in CASE_MEANS
        else check(metric, threshold, *estimate(summary, metric, spec.on), spec.on, minimum=minimum)
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
    if (
        spec.on is GateOn.SEQUENTIAL
        or rate is None
        or bar is None
        or ci is None
        or ci[0] is None
        or rate < bar
    ):
        return None
    if ci[0] >= bar:
        return None
    return cases_needed(rate, bar)


FLAG_OF = {
    GateMetric.WIN_RATE: "--min-win-rate",
    GateMetric.PASS_RATE: "--min-pass-rate",
    GateMetric.MEAN: "--min-mean",
}


def plan_sequential(spec: GateSpec, rubric: Rubric, *, seed: int) -> SequentialGate:
    """The sequential gate a --sequential run follows: its one floor (--min-win-rate,
    --min-pass-rate or --min-mean). ConfigError (exit 2, before anything is judged) for a
    run with no such floor, or with other thresholds: stopping is decided by one number.
    """
    from judgecli.sequential import SequentialGate

    given = list(spec.floors.items())
    others = (
        spec.max_loss_rate,
        spec.min_consistency,
        spec.min_kappa,
        spec.min_accuracy,
        spec.min_stability,
        spec.min_pass_k,
    )
    if len(given) != 1 or any(t is not None for t in others):
        raise ConfigError(
            "--sequential stops on one number: give exactly one of --min-win-rate "
            "(pairwise), --min-pass-rate or --min-mean (score), and no other threshold",
            hint="e.g. judge pairwise OLD NEW --sequential --min-win-rate 0.55; check the "
            "other numbers afterwards with judge gate SUMMARY.json",
        )
    if spec.on not in (GateOn.POINT, GateOn.SEQUENTIAL):
        raise ConfigError(
            f"--sequential decides by its confidence sequence, not --on {spec.on.value}",
            hint="leave --on out with --sequential",
        )
    metric, threshold = given[0]
    scale = (0.0, 1.0)
    if metric is GateMetric.MEAN:
        if rubric.scale is None:
            raise ConfigError(
                f"--min-mean needs a rubric with a score scale; {rubric.name!r} has none",
                hint="use --min-pass-rate with a binary rubric",
            )
        scale = (rubric.scale.min, rubric.scale.max)
    if not scale[0] < threshold < scale[1]:
        raise ConfigError(
            f"{FLAG_OF[metric]} {threshold:g} leaves nothing to decide on the scale "
            f"{scale[0]:g}..{scale[1]:g}",
            hint="a sequential bar lies strictly inside the scale",
        )
    return SequentialGate(metric=metric, threshold=threshold, scale=scale, seed=seed)


def check_gate_mode(summary: RunSummary, spec: GateSpec, path: Path) -> None:
    """InputError (exit 2) when `judge gate` asks for numbers the run did not make: a
    corrected estimate without labels, a sequence without --sequential. A gate that fails
    for want of them would read as a verdict on the candidate.
    """
    if spec.on_repeats and summary.repeats is None:
        raise InputError(
            f"{path}: {' and '.join(spec.on_repeats)} need a run judged with --repeats K",
            hint="re-run with --repeats 3 (and a temperature above 0)",
        )
    if spec.min_pass_k is not None and summary.repeats and _no_pass_k(summary):
        raise InputError(
            f"{path}: --min-pass-k needs a score run with a pass bar (the rubric's pass_at, "
            "or a binary rubric)",
            hint="gate on --min-stability instead",
        )
    if spec.on is GateOn.SEQUENTIAL and summary.sequential is None:
        raise InputError(
            f"{path}: --on sequential, but the run was not --sequential",
            hint="re-run with --sequential, or gate with --on point / lower-bound",
        )
    if spec.on in (GateOn.CORRECTED, GateOn.CORRECTED_LOWER_BOUND):
        missing = [m.value for m in spec.floors if corrected(summary, m)[0] is None]
        if missing:
            raise InputError(
                f"{path}: --on {spec.on.value}, but the run has no human-corrected "
                f"{', '.join(missing)}",
                hint="re-run with --labels LABELS.jsonl (human labels of some cases)",
            )


def _no_pass_k(summary: RunSummary) -> bool:
    """Whether a repeated run has no pass^K (a pairwise run, a rubric without a bar)."""
    return summary.self_consistency is None or summary.self_consistency.pass_k is None

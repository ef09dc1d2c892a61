"""The CI gate: a finished run's summary + thresholds → passed or not, with the numbers used.

Pure. By default the point estimate is compared (what users ask for: "win rate at least
0.55"); `--on lower-bound` compares the pessimistic end of the 95% interval instead (the
lower bound for a minimum, the upper bound for a maximum), so a lucky small sample cannot
pass. A minimum passes at or above its threshold, a maximum at or below.

`--on corrected` and `corrected-lower-bound` compare the human-corrected estimate (PPI++,
from --labels) of the numbers that have one (win rate, pass rate, mean), and the raw one
of the others. `--on sequential` takes the decision of a --sequential run's confidence
sequence: a pass only when the sequence lies wholly above the bar.

A gate has three outcomes: passed, failed on judged evidence, and undecided when the
evidence cannot decide (`undecided`: a number undefined on this data, a missing interval,
a pairwise judge below the position-consistency floor, `consistency`). A check that fails
on a number the run has fails the gate; otherwise an undecided check leaves it undecided.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from judgecli.deciding.consistency import (
    DEFAULT_FLOOR,
    floor_check,
    floor_undecided,
    pairwise_floor,
)
from judgecli.deciding.outcomes import CASE_MEANS
from judgecli.deciding.undecided import (
    Undecided,
    kappa_undecided,
    no_bound,
    no_number,
    no_sequence,
    undecided_check,
)
from judgecli.settings.gate_flags import GateThresholds, Sequence
from judgecli.stats.intervals import Interval
from judgecli.stats.pairwise import cases_needed
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.gate_records import (
    ConsistencyFloor,
    GateCheck,
    GateMetric,
    GateOn,
    GateResult,
)
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.run import RunSummary
from judgecli.summary.score import ScoreSummary

# The CLI builds GateSpecs (GateOn) and shows GateResults: they are the gate's interface,
# whichever module declares them (summary.json holds the verdict, so summary.gate_records does).
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
class GateSpec(GateThresholds):
    """The thresholds a user asked for (None = not checked; each declared in
    settings/gate_flags.py), and which number of each estimate they are compared with.
    """

    on: GateOn = GateOn.POINT

    @classmethod
    def of(cls, thresholds: GateThresholds, on: GateOn) -> GateSpec:
        """The gate of the thresholds a command was given, compared `on` that number."""
        return cls(**asdict(thresholds), on=on)

    @property
    def floors(self) -> dict[GateMetric, float]:
        """The floors given on means a sequence or a correction can follow (win rate, pass
        rate, mean score), by metric.
        """
        return {
            GateMetric(row.threshold.metric): bar
            for row, bar in self.given()
            if row.threshold.sequence is Sequence.FOLLOWS
        }

    @property
    def consistency_floor(self) -> float:
        """The position-consistency floor a pairwise gate stands on."""
        return DEFAULT_FLOOR if self.min_consistency is None else self.min_consistency

    @property
    def empty(self) -> bool:
        """No threshold at all: no gate."""
        return not self.given()

    @property
    def on_repeats(self) -> list[str]:
        """The flags given that only a run with --repeats can be checked against."""
        return [row.spelling for row, _ in self.given() if row.threshold.repeats]


def check(
    metric: GateMetric,
    threshold: float,
    point: float | None,
    interval: Interval | None,
    on: GateOn,
    *,
    minimum: bool,
    missing: Undecided | None = None,
) -> tuple[GateCheck, Undecided | None]:
    """Compare one number to its threshold; undecided (with why, `missing` when the point
    estimate is absent) when the number compared does not exist.
    """
    value = point
    if on in (GateOn.LOWER_BOUND, GateOn.CORRECTED_LOWER_BOUND):
        bound = None if interval is None else (interval[0] if minimum else interval[1])
        value = bound
    why = None
    if value is None:
        why = missing if point is None and missing else no_bound(metric, point, on)
    passed = value is not None and (value >= threshold if minimum else value <= threshold)
    made = GateCheck(
        metric=metric,
        threshold=threshold,
        value=value,
        point=point,
        interval=interval,
        on=on,
        passed=passed,
        minimum=minimum,
        decided=why is None,
        undecided=None if why is None else why.reason,
    )
    return made, why


def sequential_check(
    summary: RunSummary, metric: GateMetric, threshold: float
) -> tuple[GateCheck, Undecided | None]:
    """A floor checked by the run's confidence sequence: passed only when the sequence, at
    the stop, lies wholly above it (one that ran out of cases undecided fails: the bar is
    not shown to be met). `value` is the end that decided (the upper end of a sequence
    wholly below the bar, else the lower end).
    """
    from judgecli.deciding.sequential import redecide
    from judgecli.stats.sequential import Decision

    seq = summary.sequential
    point, _ = estimate(summary, metric)
    if seq is None or seq.metric is not metric:
        missing = no_sequence(metric)
        return check(
            metric, threshold, None, None, GateOn.SEQUENTIAL, minimum=True, missing=missing
        )
    decision = redecide(seq, threshold)
    # The end of the sequence that decided: the lower for a pass, the upper for a fail.
    value = seq.interval[1] if decision is Decision.FAIL else seq.interval[0]
    made = GateCheck(
        metric=metric,
        threshold=threshold,
        value=value,
        point=point,
        interval=seq.interval,
        on=GateOn.SEQUENTIAL,
        passed=decision is Decision.PASS,
        minimum=True,
        decided=True,
        undecided=None,
    )
    return made, None


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
    check on it is then undecided: there is no evidence).
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
                **tool_call_estimates(summary),
                GateMetric.CHECKLIST_SCORE: (
                    summary.checklist_score,
                    summary.checklist_score_ci,
                ),
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


def tool_call_estimates(summary: ScoreSummary) -> dict[GateMetric, tuple[float | None, Interval]]:
    """A score run's tool-call numbers by metric (none without a `tool_calls` check)."""
    calls = summary.tool_calls
    if calls is None:
        return {}
    return {
        GateMetric.TOOL_F1: (calls.f1, calls.f1_ci),
        GateMetric.TOOL_RECALL: (calls.recall, calls.recall_ci),
        GateMetric.TOOL_PRECISION: (calls.precision, calls.precision_ci),
    }


def evaluate_gate(summary: RunSummary, spec: GateSpec) -> GateResult | None:
    """Check every threshold in `spec` against the summary; None when there is none.

    Passed when every check passes; failed when a check fails on a number the run has;
    otherwise, when a check cannot decide (or a pairwise judge is below the consistency
    floor, whatever the checks say), undecided.
    """
    if spec.empty:
        return None
    floor = (
        pairwise_floor(summary, spec.consistency_floor)
        if isinstance(summary, PairwiseSummary)
        else None
    )
    checks = [
        checked(summary, spec, metric, bar, minimum, floor)
        for metric, bar, minimum in wanted(summary, spec)
    ]
    if floor is not None and not floor.met:
        # The judge picks a position, not an answer: none of its numbers decide.
        below = floor_undecided(floor)
        checks = [undecided_check(c, why or below) for c, why in checks]
    failed = any(c.decided and not c.passed for c, _ in checks)
    whys = [why for _, why in checks if why is not None]
    why = None if failed or not whys else whys[0]
    first = checks[0][0]
    # Absent, not null, where there is no floor: a score or calibrate run, or --no-flip.
    floored = {} if floor is None else {"consistency_floor": floor}
    return GateResult(
        passed=not failed and why is None,
        metric=first.metric,
        threshold=first.threshold,
        value=first.value,
        on=spec.on,
        checks=[c for c, _ in checks],
        cases_needed=more_cases_needed(summary, spec) if why is None else None,
        decided=why is None,
        undecided=None if why is None else why.reason,
        hint=None if why is None else why.hint,
        **floored,
    )


def wanted(summary: RunSummary, spec: GateSpec) -> list[tuple[GateMetric, float, bool]]:
    """(metric, threshold, is a minimum) of every threshold given, in the gate's order; κ is
    the weighted one where the summary has it (an ordinal scale).
    """
    weighted = isinstance(summary, CalibrateSummary) and summary.weighted_kappa is not None
    given = []
    for row, bar in spec.given():
        metric = GateMetric(row.threshold.metric)
        if metric is GateMetric.COHEN_KAPPA and weighted:
            metric = GateMetric.WEIGHTED_KAPPA
        given.append((metric, bar, row.threshold.minimum))
    return given


def checked(
    summary: RunSummary,
    spec: GateSpec,
    metric: GateMetric,
    threshold: float,
    minimum: bool,
    floor: ConsistencyFloor | None,
) -> tuple[GateCheck, Undecided | None]:
    """One threshold checked the way `spec.on` asks."""
    if metric is GateMetric.CONSISTENCY and floor is not None:
        return floor_check(floor)
    if spec.on is GateOn.SEQUENTIAL and metric in CASE_MEANS:
        return sequential_check(summary, metric, threshold)
    point, interval = estimate(summary, metric, spec.on)
    made = check(
        metric,
        threshold,
        point,
        interval,
        spec.on,
        minimum=minimum,
        missing=no_number(summary, metric),
    )
    if (one_class := kappa_undecided(summary, metric)) is not None:
        return undecided_check(made[0], one_class)
    return made


def more_cases_needed(summary: RunSummary, spec: GateSpec) -> int | None:
    """Cases needed for the win rate's lower bound to clear the bar, when only the point
    estimate does: at the observed wins, ties and losses, with the interval the gate uses
    (Wilson when every case ended alike, else the bootstrap's normal approximation;
    `stats.pairwise.cases_needed`).
    """
    rate, ci = estimate(summary, GateMetric.WIN_RATE)
    bar = spec.min_win_rate
    if (
        not isinstance(summary, PairwiseSummary)
        or spec.on is GateOn.SEQUENTIAL
        or rate is None
        or bar is None
        or ci is None
        or ci[0] is None
        or rate < bar
    ):
        return None
    if ci[0] >= bar:
        return None
    return cases_needed(summary.wins, summary.losses, summary.ties, bar)

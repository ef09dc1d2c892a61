"""Judge shift vs system shift: when the judge and the system changed together, the cases
whose text the judge saw is byte-identical in both runs (the *anchors*) moved with the judge
alone; their mean change is the judge's own shift. The other cases' mean change is the
system's shift (with the judge's mixed in: on those cases both changed). Pure arithmetic on
per-case changes B − A, on the scale of the number the gate reads (a pass rate's 1/0, a
score, a win rate's 1/0.5/0), and the test of whether the judge's shift could explain a
gate's decision (docs/drift.md, "Judge shift vs system shift").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgecli.stats.interval_rule import mean_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.scores import mean
from judgecli.summary.gate_records import GateCheck, GateMetric
from judgecli.summary.parts import Record

SHIFT_METRICS = frozenset({GateMetric.PASS_RATE, GateMetric.MEAN, GateMetric.WIN_RATE})
"""The gated numbers that are a mean of per-case values, so a per-case shift adds to them."""


@dataclass(frozen=True)
class MeanShift:
    """The mean of per-case changes B − A with its paired t 95% interval."""

    n: int
    shift: float | None
    ci: Interval
    why: str | None
    """Why `ci` is (None, None) while there is a shift (one case, or every change alike)."""


def mean_shift(changes: Sequence[float]) -> MeanShift:
    """The mean change with its paired (one-sample) Student t interval."""
    bounded = mean_interval(list(changes), what="change")
    return MeanShift(len(changes), mean(list(changes)), bounded.ci, bounded.why)


class JudgeShiftGate(Record):
    """Whether the judge's shift could explain run B's gate decision."""

    metric: GateMetric
    """The gated number (the first check's): judge_shift is on its scale."""
    threshold: float
    value: float | None
    """The number the gate compared (point or bound, as the gate's `on`)."""
    passed: bool
    minimum: bool
    """True for a floor, False for a ceiling."""
    margin: float | None
    """How far the decision stood from the threshold, signed so that a pass has margin
    ≥ 0: value − threshold for a floor, threshold − value for a ceiling."""
    explains: bool | None
    """True when some value of judge_shift_ci (its point when it has no interval), taken
    off the gated number, would move it to the other side of the threshold; None without a
    value or a judge_shift."""


def could_explain(margin: float, low: float, high: float) -> bool:
    """Whether a judge's shift d in [low, high], oriented so that a larger d helps the
    gate, could have made the decision: a pass (margin ≥ 0) would not have passed without
    it when d > margin for some d (high > margin); a fail (margin < 0) would have passed
    when d ≤ margin for some d (low ≤ margin).
    """
    return high > margin if margin >= 0 else low <= margin


def gate_explained(check: GateCheck, judge: MeanShift) -> JudgeShiftGate:
    """The judge-shift test of one gate check, on the check's own scale."""
    margin = None
    if check.value is not None:
        gap = check.value - check.threshold
        margin = gap if check.minimum else -gap
    explains = None
    if margin is not None and judge.shift is not None:
        low, high = judge.ci
        ends = (judge.shift, judge.shift) if low is None or high is None else (low, high)
        # A ceiling's gate is helped by a negative shift: orient d so that larger helps.
        oriented = ends if check.minimum else (-ends[1], -ends[0])
        explains = could_explain(margin, *oriented)
    return JudgeShiftGate(
        metric=check.metric,
        threshold=check.threshold,
        value=check.value,
        passed=check.passed,
        minimum=check.minimum,
        margin=margin,
        explains=explains,
    )


def explained_warning(gate: JudgeShiftGate, judge: MeanShift, run_b: str) -> str | None:
    """The warning when the judge's shift could explain the gate's decision; None when not."""
    if not gate.explains:
        return None
    low, high = judge.ci
    interval = "no interval" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
    word = "passed" if gate.passed else "failed"
    return (
        f"the judge's own shift could explain {run_b}'s gate: it {word} {gate.metric} "
        f"{'≥' if gate.minimum else '≤'} {gate.threshold:g} by a margin of "
        f"{gate.margin:+.3f}, and the judge's shift on identical outputs is "
        f"{judge.shift:+.3f} ({interval}): the verdict may be the judge's, not the system's"
    )

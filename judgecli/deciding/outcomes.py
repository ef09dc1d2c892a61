"""The value one case contributes to a gated mean: NEW's outcome (win 1, tie ½, loss 0),
pass (1) or fail (0), or the score. The sequential gate follows these values, and the
human-corrected estimates compare them with the same values read off human labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgecli.result import OUTCOME, CaseResult, CaseStatus, Winner
from judgecli.rubric import RubricKind
from judgecli.summary.gate_records import GateMetric

if TYPE_CHECKING:
    # Labels are read by the runs that have them (labels.py); every gate imports this module.
    from judgecli.inputs.labels import Label, LabelSpace

CASE_MEANS = frozenset({GateMetric.WIN_RATE, GateMetric.PASS_RATE, GateMetric.MEAN})
"""The gated numbers that are means of one value per case (`case_value`): what a sequence
can follow and human labels can correct."""


def case_value(result: CaseResult, metric: GateMetric) -> float | None:
    """The judge's value of a graded case for `metric`; None when it has none (failed, a
    dropped pair, no pass mark, no score).
    """
    if result.status is not CaseStatus.OK:
        return None
    match metric:
        case GateMetric.WIN_RATE:
            return None if result.winner is None else OUTCOME[result.winner]
        case GateMetric.PASS_RATE:
            return None if result.passed is None else float(result.passed)
        case GateMetric.MEAN:
            return result.score
    return None


def label_value(
    label: Label, metric: GateMetric, space: LabelSpace, pass_at: float | None
) -> float | None:
    """A human label's value for `metric`, on the judge's scale; None when the label says
    nothing about it (a score's pass mark without a pass_at).
    """
    value = label.value
    match metric, space.kind:
        case GateMetric.WIN_RATE, RubricKind.PAIRWISE:
            return OUTCOME[Winner(str(value))]
        case GateMetric.MEAN, RubricKind.POINTWISE:
            return float(value)
        case GateMetric.PASS_RATE, RubricKind.POINTWISE:
            return None if pass_at is None else float(float(value) >= pass_at)
        case GateMetric.PASS_RATE, RubricKind.BINARY:
            return float(value == space.passing)
    return None


def human_means(
    labels: list[Label], metric: GateMetric, space: LabelSpace, pass_at: float | None
) -> dict[str, float]:
    """Per case id, the mean of its annotators' values for `metric` (one rater's value when
    there is one): the human answer a corrected estimate is anchored to.
    """
    sums: dict[str, list[float]] = {}
    for label in labels:
        value = label_value(label, metric, space, pass_at)
        if value is not None:
            sums.setdefault(label.id, []).append(value)
    return {case_id: sum(values) / len(values) for case_id, values in sums.items()}

"""Human-corrected estimates (`--labels` on score and pairwise): the judge's win rate,
pass rate or mean, with its bias against human raters removed by prediction-powered
inference (PPI++, `stats.ppi`): the labelled cases measure how far the judge sits from the
humans, every graded case lends the judge's verdicts for precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgecli.deciding.outcomes import case_value, human_means
from judgecli.inputs.labels import Label, LabelSpace, check_labels_match, read_labels
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.stats.interval_rule import (
    Bounded,
    NoIntervalKind,
    NoIntervalReasons,
    proportion_interval,
    reason,
    within,
)
from judgecli.stats.intervals import Interval
from judgecli.stats.ppi import CorrectedMean, labels_needed, ppi_mean
from judgecli.summary.facts import CorrectedEstimate
from judgecli.summary.gate_records import GateMetric

RATE_METRICS = frozenset({GateMetric.WIN_RATE, GateMetric.PASS_RATE})
"""The corrected numbers that are proportions (a corrected mean score is not)."""
NO_SPREAD = reason(
    NoIntervalKind.NO_SPREAD,
    "every human label, and every judge verdict the corrected estimate rests on, is alike",
)


@dataclass(frozen=True)
class HumanLabels:
    """The labels of a run's cases (--labels), read against the rubric's label space."""

    labels: list[Label]
    space: LabelSpace
    pass_at: float | None = None


def read_human_labels(
    path: Path, rubric: Rubric, case_ids: list[str], cases_path: Path
) -> HumanLabels:
    """The labels of --labels, checked against the rubric (file:line errors, exit 2) and
    against the cases: labels of none of them are an error, not an all-n/a estimate.
    """
    space = LabelSpace.of(rubric)
    labels = read_labels(path, space)
    check_labels_match(labels, case_ids, path, cases_path)
    return HumanLabels(labels=labels, space=space, pass_at=rubric.pass_at)


def corrected_estimate(
    results: Sequence[CaseResult], metric: GateMetric, humans: dict[str, float]
) -> CorrectedEstimate | None:
    """The PPI++ estimate of `metric` over the graded cases, anchored to the humans' values
    (per case id); None when no graded case has a label. A target for "more labels": half
    the interval's current half-width.
    """
    judged = {r.id: v for r in results if (v := case_value(r, metric)) is not None}
    labelled = [case_id for case_id in judged if case_id in humans]
    if not labelled:
        return None
    y = [humans[case_id] for case_id in labelled]
    y_hat = [judged[case_id] for case_id in labelled]
    unlabelled = [v for case_id, v in judged.items() if case_id not in humans]
    found = ppi_mean(y, y_hat, unlabelled)
    if found.estimate is not None and metric in RATE_METRICS:
        found = replace(found, ci=rate_interval(found))
    low, high = found.ci
    target = more = None
    if low is not None and high is not None:
        target = (high - low) / 4
        more = labels_needed(y, y_hat, unlabelled, half_width=target) if target > 0 else None
    return CorrectedEstimate(
        raw=found.judge_mean,
        corrected=found.estimate,
        ci=found.ci,
        n_labeled=found.n_labeled,
        n_unlabeled=found.n_unlabeled,
        lam=found.lam,
        judge_bias=found.bias,
        target_half_width=target,
        more_labels=more,
    )


def rate_interval(found: CorrectedMean) -> Interval:
    """A corrected proportion's interval: PPI++'s normal interval within [0, 1]; without
    one (no spread: every label and labelled verdict alike, so λ = 0 and the estimate is
    the labels' own share), Wilson's over the labels.
    """
    if found.ci[0] is not None:
        return within(found.ci, (0.0, 1.0))
    n = found.n_labeled
    return proportion_interval(min(max((found.estimate or 0.0) * n, 0.0), n), n)


def corrected_fields(
    results: Sequence[CaseResult],
    human: HumanLabels,
    metrics: Sequence[GateMetric],
    *,
    no_interval: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The summary's `<metric>_corrected`, `<metric>_corrected_ci` and `corrections`
    for each metric the labels speak to, and its `no_interval` (the summary's own,
    `no_interval`, with why a corrected mean has no interval when it has none).
    """
    fields: dict[str, Any] = {}
    details: dict[str, CorrectedEstimate] = {}
    reasons = NoIntervalReasons(dict(no_interval or {}))
    for metric in metrics:
        humans = human_means(human.labels, metric, human.space, human.pass_at)
        found = corrected_estimate(results, metric, humans)
        if found is None:
            continue
        details[metric.value] = found
        key = f"{metric.value}_corrected"
        fields[key] = found.corrected
        why = NO_SPREAD if found.ci[0] is None else None
        fields[f"{key}_ci"] = reasons.ci(key, found.corrected, Bounded(found.ci, why))
    if details:
        fields["corrections"] = details
    fields["no_interval"] = reasons.mapping()
    return fields

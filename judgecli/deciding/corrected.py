"""Human-corrected estimates (`--labels` on score and pairwise): the judge's win rate,
pass rate or mean, with its bias against human raters removed by prediction-powered
inference (PPI++, `stats.ppi`): the labelled cases measure how far the judge sits from the
humans, every graded case lends the judge's verdicts for precision.

Labels drawn by a plan (`judge review plan`, issue 33) carry their inclusion probability:
then each is weighed by its inverse (active inference, `stats.active`), the only estimate
that stays unbiased when the plan drew the judge's unsure cases more often; labels made
outside the plan are left out of it (counted in `corrections.design`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgecli.deciding.outcomes import case_value, human_means
from judgecli.errors import InputError
from judgecli.inputs.labels import Label, LabelSpace, check_labels_match, read_labels
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric
from judgecli.stats.active import active_mean
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
from judgecli.summary.facts import CorrectedEstimate, LabelDesign
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
    details: dict[str, CorrectedEstimate | LabelDesign] = {}
    reasons = NoIntervalReasons(dict(no_interval or {}))
    planned = planned_probabilities(human.labels)
    for metric in metrics:
        humans = human_means(human.labels, metric, human.space, human.pass_at)
        if planned:
            found = weighted_estimate(results, metric, humans, planned)
        else:
            found = corrected_estimate(results, metric, humans)
        if found is None:
            continue
        details[metric.value] = found
        key = f"{metric.value}_corrected"
        fields[key] = found.corrected
        why = NO_SPREAD if found.ci[0] is None else None
        fields[f"{key}_ci"] = reasons.ci(key, found.corrected, Bounded(found.ci, why))
    if details and planned:
        details["design"] = label_design(results, human.labels, planned)
    if details:
        fields["corrections"] = details
    fields["no_interval"] = reasons.mapping()
    return fields


ESTIMATOR = "active inference: inverse-probability-weighted PPI (Zrnic & Candès, ICML 2024)"


def planned_probabilities(labels: Sequence[Label]) -> dict[str, float]:
    """Per case id, the inclusion probability its labels carry (none: an empty mapping).

    Raises:
        InputError: One case with two different probabilities (labels of two plans).
    """
    found: dict[str, float] = {}
    for label in labels:
        pi = label.inclusion_probability
        if pi is None:
            continue
        seen = found.setdefault(label.id, pi)
        if abs(seen - pi) > 1e-9:
            raise InputError(
                f"labels of id {label.id!r} carry two inclusion probabilities ({seen:g} and "
                f"{pi:g}, line {label.line}): they come from two label plans",
                hint="pass the labels of one plan (`judge review plan`), or drop the "
                "inclusion_probability of the others",
            )
    return found


def weighted_estimate(
    results: Sequence[CaseResult],
    metric: GateMetric,
    humans: dict[str, float],
    planned: dict[str, float],
) -> CorrectedEstimate | None:
    """The active-inference estimate of `metric` over the graded cases from the labels a
    plan drew (the others are left out); None when no graded case has one.
    """
    judged = [(r.id, v) for r in results if (v := case_value(r, metric)) is not None]
    labelled = {
        index: (humans[case_id], planned[case_id])
        for index, (case_id, _) in enumerate(judged)
        if case_id in humans and case_id in planned
    }
    if not labelled:
        return None
    found = active_mean([v for _, v in judged], labelled)
    ci = found.ci
    if found.estimate is not None and metric in RATE_METRICS and ci[0] is not None:
        ci = within(ci, (0.0, 1.0))
    return CorrectedEstimate(
        raw=found.judge_mean,
        corrected=found.estimate,
        ci=ci,
        n_labeled=found.n_labeled,
        n_unlabeled=found.n_unlabeled,
        lam=1.0,
        judge_bias=found.bias,
    )


def label_design(
    results: Sequence[CaseResult], labels: Sequence[Label], planned: dict[str, float]
) -> LabelDesign:
    """`corrections.design`: the plan the labels name, and how many labels it weighed."""
    graded = {r.id for r in results if r.status is CaseStatus.OK}
    unplanned = {label.id for label in labels if label.id in graded} - planned.keys()
    strategies = {label.strategy for label in labels if label.strategy}
    budgets = {label.budget for label in labels if label.budget}
    return LabelDesign(
        strategy=", ".join(sorted(strategies)) or None,
        budget=max(budgets) if budgets else None,
        weighted=True,
        n_weighted=len(graded & planned.keys()),
        n_unplanned=len(unplanned),
        estimator=ESTIMATOR,
    )

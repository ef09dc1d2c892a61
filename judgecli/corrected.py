"""Human-corrected estimates (`--labels` on score and pairwise): the judge's win rate,
pass rate or mean, with its bias against human raters removed by prediction-powered
inference (PPI++, `stats.ppi`): the labelled cases measure how far the judge sits from the
humans, every graded case lends the judge's verdicts for precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.labels import Label, LabelSpace, check_labels_match, read_labels
from judgecli.outcomes import case_value, human_means
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.stats.ppi import labels_needed, ppi_mean
from judgecli.summary.facts import CorrectedEstimate, GateMetric


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


def corrected_fields(
    results: Sequence[CaseResult], human: HumanLabels, metrics: Sequence[GateMetric]
) -> dict[str, Any]:
    """The summary's `<metric>_corrected`, `<metric>_corrected_ci` and `corrections`
    for each metric the labels speak to.
    """
    fields: dict[str, Any] = {}
    details: dict[str, CorrectedEstimate] = {}
    for metric in metrics:
        humans = human_means(human.labels, metric, human.space, human.pass_at)
        found = corrected_estimate(results, metric, humans)
        if found is None:
            continue
        details[metric.value] = found
        fields[f"{metric.value}_corrected"] = found.corrected
        fields[f"{metric.value}_corrected_ci"] = found.ci
    if details:
        fields["corrections"] = details
    return fields

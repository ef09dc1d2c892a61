"""CaseResults of a `score` run → its RunSummary (mean, pass rate, criteria, categories)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.intervals import Interval, t_interval, wilson_interval
from judgecli.stats.scores import by_category, distribution, mean, pass_rate
from judgecli.summary.run import (
    CategorySummary,
    CriterionSummary,
    RunSummary,
    run_facts,
)


def summarize_pointwise(
    results: Iterable[CaseResult], *, rubric: Rubric, models: list[str], command: str
) -> RunSummary:
    """The summary of a `score` run (pointwise or binary rubric)."""
    rows = list(results)
    ok = [r for r in rows if r.status is CaseStatus.OK]
    fields: dict[str, Any] = {}
    decided = [r.passed for r in ok if r.passed is not None]
    if decided:
        fields["pass_rate"] = pass_rate(decided)
        fields["pass_rate_ci"] = wilson_interval(sum(decided), len(decided))
    if rubric.kind is RubricKind.POINTWISE:
        assert rubric.scale is not None
        scores = [r.score for r in ok if r.score is not None]
        fields["mean"] = mean(scores)
        fields["mean_ci"] = within(t_interval(scores), rubric)
        fields["distribution"] = distribution(
            scores, scale_min=rubric.scale.min, scale_max=rubric.scale.max,
            integer=on_scale_points(rubric, models),
        )  # fmt: skip
        fields["criteria"] = {
            name: CriterionSummary(
                mean=mean(values := [r.criteria[name] for r in ok if name in r.criteria]),
                mean_ci=within(t_interval(values), rubric),
            )
            for name in rubric.weights
        }
    else:
        counts = Counter(r.choice for r in ok)
        fields["choices"] = {c: counts.get(c, 0) for c in rubric.choices or []}
        if counts.get(None):
            fields["choices"]["(split)"] = counts[None]
    fields["by_category"] = category_summaries(ok, rubric)
    return RunSummary(**run_facts(rows, command=command, rubric=rubric, models=models), **fields)


def on_scale_points(rubric: Rubric, judges: list[str]) -> bool:
    """Whether every score is a point of an integer scale: one judge and no criteria, since a
    panel's mean or a weighted sum of criteria falls between the points.
    """
    return bool(rubric.scale and rubric.scale.integer and not rubric.criteria and len(judges) == 1)


def within(ci: Interval, rubric: Rubric) -> Interval:
    """Clip a mean's interval to the scale: a t interval of a few 4s can reach past 4, and a
    bound no case could ever have is noise, not information.
    """
    if ci[0] is None or ci[1] is None or rubric.scale is None:
        return ci
    lo, hi = rubric.scale.min, rubric.scale.max
    return (min(max(ci[0], lo), hi), min(max(ci[1], lo), hi))


def category_summaries(ok: list[CaseResult], rubric: Rubric) -> dict[str, CategorySummary]:
    """Per-category numbers, only when the cases carry more than one category."""
    categories = [r.category for r in ok]
    if len(set(categories)) < 2:
        return {}
    scored = rubric.kind is RubricKind.POINTWISE
    stats = by_category(
        categories,
        [r.score if r.score is not None and scored else 0.0 for r in ok],
        [r.passed for r in ok],
    )
    return {
        name: CategorySummary(
            n=s.n,
            mean=s.mean if scored else None,
            mean_ci=within(s.mean_ci, rubric) if scored else (None, None),
            pass_rate=s.pass_rate,
            pass_rate_ci=s.pass_rate_ci,
        )
        for name, s in stats.items()
    }

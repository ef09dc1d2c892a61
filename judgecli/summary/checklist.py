"""A checklist run's numbers (`kind: checklist`): the HealthBench score of its cases with
its interval, and the score of each tag (docs/checklists.md, docs/results.md).

The score is the mean of the case scores clipped to [0, 1] (`stats.checklist`). Its 95%
interval follows judge's rule for a mean (`stats.interval_rule.mean_interval`: Student t
over the case scores, clipped to [0, 1]; none, with the reason, for one case or scores all
alike), and simple-evals' bootstrap standard deviation is kept beside it
(`checklist_score_bootstrap_std`), so a number can be set against HealthBench's own.
"""

from __future__ import annotations

from typing import Any

from judgecli.result import CaseResult
from judgecli.stats.checklist import (
    Item,
    clipped_mean,
    clipped_mean_bootstrap_std,
    tag_scores,
)
from judgecli.stats.interval_rule import NoIntervalReasons, mean_interval
from judgecli.stats.intervals import Interval
from judgecli.summary.parts import Part

UNIT = (0.0, 1.0)
"""Where a clipped mean lies, and its interval with it."""


class TagScore(Part):
    """One tag's checklist score: over the cases with an item of positive points under it."""

    score: float
    """The clipped mean of the cases' scores over their items with the tag."""
    score_ci: Interval | None = None
    bootstrap_std: float
    """simple-evals' bootstrap standard deviation of `score` (1,000 resamples, --seed)."""
    n: int
    """Cases with the tag (on an item with positive points)."""
    no_interval: dict[str, str] | None = None
    """Why `score_ci` is null while `score` has a value."""


def checklist_items(result: CaseResult) -> list[Item]:
    """A graded case's items as the statistics take them: (points, met, tags)."""
    return [(float(i.points), i.met, i.tags) for i in result.items or []]


def checklist_numbers(ok: list[CaseResult], *, seed: int = 0) -> dict[str, Any]:
    """ScoreSummary's checklist keys for the cases graded with a checklist rubric (none
    when there is none): `checklist_score`, `checklist_score_ci`,
    `checklist_score_bootstrap_std`, `by_tag`, and `no_interval` (why the score has none).
    """
    graded = [r for r in ok if r.items is not None and r.score is not None]
    if not graded:
        return {}
    scores = [r.score for r in graded if r.score is not None]
    reasons = NoIntervalReasons()
    point = clipped_mean(scores)
    ci = reasons.ci(
        "checklist_score", point, mean_interval(scores, bounds=UNIT, what="case's score")
    )
    return {
        "checklist_score": point,
        "checklist_score_ci": ci,
        "checklist_score_bootstrap_std": clipped_mean_bootstrap_std(scores, seed=seed),
        "by_tag": {
            tag: tag_score(values, seed=seed)
            for tag, values in sorted(tag_scores(checklist_items(r) for r in graded).items())
        },
        "no_interval": reasons.mapping(),
    }


def tag_score(values: list[float], *, seed: int) -> TagScore:
    """One tag's score from its cases' scores."""
    reasons = NoIntervalReasons()
    point = clipped_mean(values)
    assert point is not None  # tag_scores keeps only tags with a case score
    ci = reasons.ci("score", point, mean_interval(values, bounds=UNIT, what="case's score"))
    std = clipped_mean_bootstrap_std(values, seed=seed)
    assert std is not None
    return TagScore(
        score=point,
        score_ci=ci,
        bootstrap_std=std,
        n=len(values),
        no_interval=reasons.mapping(),
    )

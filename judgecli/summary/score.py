"""CaseResults of a `score` run → its ScoreSummary (mean, pass rate, criteria, categories)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.group_tests import permutation_tests
from judgecli.stats.interval_rule import NoIntervalReasons, mean_interval, proportion_interval
from judgecli.stats.intervals import Interval
from judgecli.stats.multiplicity import Correction, category_calls
from judgecli.stats.scores import NO_CATEGORY, by_category, distribution, mean, pass_rate
from judgecli.summary.checklist import TagScore, checklist_numbers
from judgecli.summary.facts import (
    CategoryCalls,
    CategorySummary,
    Command,
    CorrectedEstimate,
    CriterionSummary,
    LabelDesign,
    SummaryHead,
    SummaryTail,
    calls_summary,
)
from judgecli.summary.head import run_facts
from judgecli.summary.tool_calls import ToolCallsSummary, summarize_tool_calls
from judgecli.summary.weighted import pass_rate_weighted


class ScoreNumbers(SummaryHead):
    """The numbers of graded answers (score; refine's final answers), before the tail."""

    mean: float | None = None
    mean_ci: Interval | None = None
    pass_rate: float | None = None
    pass_rate_ci: Interval | None = None
    distribution: dict[str, int] | None = None
    """Pointwise: cases per score (per bin on a continuous scale)."""
    choices: dict[str, int] | None = None
    """Binary: cases per choice ("(split)": a panel without a majority)."""
    criteria: dict[str, CriterionSummary] = Field(default_factory=dict)
    by_category: dict[str, CategorySummary] = Field(default_factory=dict)
    checklist_score: float | None = None
    """A checklist rubric: the mean of the case scores (met points over positive points)
    clipped to [0, 1], as HealthBench scores (summary.checklist)."""
    checklist_score_ci: Interval | None = None
    checklist_score_bootstrap_std: float | None = None
    """simple-evals' bootstrap standard deviation of checklist_score (1,000 resamples)."""
    by_tag: dict[str, TagScore] | None = None
    """A checklist rubric: each tag's score over the items that carry it."""


class ScoreSummary(SummaryTail, ScoreNumbers):
    """summary.json of `judge score`."""

    command: Literal[Command.SCORE] = Command.SCORE
    category_calls: CategoryCalls | None = None
    pass_rate_weighted: float | None = None
    """--score-mode logprob, binary: the mean over cases of P(passing choice)."""
    pass_rate_weighted_ci: Interval | None = None
    pass_rate_corrected: float | None = None
    """Human-corrected pass rate (PPI++ with --labels)."""
    pass_rate_corrected_ci: Interval | None = None
    mean_corrected: float | None = None
    """Human-corrected mean score (PPI++ with --labels)."""
    mean_corrected_ci: Interval | None = None
    corrections: dict[str, CorrectedEstimate | LabelDesign] | None = None
    """How each corrected number was made (--labels), and under `design` the plan that drew
    the labels when they carry inclusion probabilities."""
    tool_calls: ToolCallsSummary | None = None
    """A rubric with a `tool_calls` check: precision, recall and F1 of the calls made,
    micro-averaged over every call, with intervals (summary.tool_calls)."""


def summarize_score(
    results: Iterable[CaseResult],
    *,
    rubric: Rubric,
    models: list[str],
    correction: Correction = Correction.HOLM,
    seed: int = 0,
) -> ScoreSummary:
    """The summary of a `score` run (pointwise or binary rubric)."""
    rows = list(results)
    numbers = score_numbers(rows, rubric, models)
    ok = [r for r in rows if r.status is CaseStatus.OK]
    checklist = checklist_numbers(ok, seed=seed)
    reasons = (numbers.pop("no_interval") or {}) | (checklist.pop("no_interval", None) or {})
    numbers |= checklist | {"no_interval": reasons or None}
    calls = mark_categories(numbers["by_category"], ok, numbers.get("mean"), correction, seed)
    return ScoreSummary(
        **run_facts(rows, rubric=rubric, models=models),
        **numbers,
        **pass_rate_weighted(ok, rubric.passing_choice),
        category_calls=calls,
        tool_calls=summarize_tool_calls(rows, rubric, seed=seed),
    )


PERMUTATION_TEST = "permutation test of each category against the other cases"


def mark_categories(
    categories: dict[str, CategorySummary],
    ok: list[CaseResult],
    overall: float | None,
    correction: Correction,
    seed: int = 0,
) -> CategoryCalls | None:
    """Mark each category's mean above or below the others' (a seeded permutation test per
    category, adjusted over the categories tested); None without scores or categories.
    Welch's t test would be the textbook choice, but on a 1–5 scale in categories of a few
    dozen cases it marks too often in the far tail Holm looks at; reshuffling the cases
    among categories is exact at any n.
    """
    if not categories or overall is None:
        return None
    scores: dict[str, list[float]] = {name: [] for name in categories}
    for r in ok:
        if r.score is not None:
            scores.setdefault(r.category or NO_CATEGORY, []).append(r.score)
    p_values = permutation_tests(scores, seed=seed)
    tests = {name: (c.mean, c.n, p_values.get(name)) for name, c in categories.items()}
    calls = category_calls(tests, overall, correction=correction)
    for name, c in categories.items():
        c.p_value, c.p_adjusted = calls[name].p_value, calls[name].p_adjusted
        c.mark = calls[name].mark.value
    return calls_summary(PERMUTATION_TEST, overall, correction, calls)


def score_numbers(rows: list[CaseResult], rubric: Rubric, models: list[str]) -> dict[str, Any]:
    """ScoreNumbers' fields (but the head's) for these results, as keyword arguments, and
    `no_interval`: why the mean has no interval, when it has none.
    """
    ok = [r for r in rows if r.status is CaseStatus.OK]
    fields: dict[str, Any] = {}
    reasons = NoIntervalReasons()
    decided = [r.passed for r in ok if r.passed is not None]
    if decided:
        fields["pass_rate"] = pass_rate(decided)
        fields["pass_rate_ci"] = proportion_interval(sum(decided), len(decided))
    if rubric.kind is RubricKind.POINTWISE:
        assert rubric.scale is not None
        scores = [r.score for r in ok if r.score is not None]
        fields["mean"] = mean(scores)
        spread = mean_interval(scores, bounds=scale_bounds(rubric), what="score")
        fields["mean_ci"] = reasons.ci("mean", fields["mean"], spread)
        fields["distribution"] = distribution(
            scores,
            scale_min=rubric.scale.min,
            scale_max=rubric.scale.max,
            # A case's mean over --repeats or turns, or an expected score (--score-mode
            # logprob), falls between the points, as a panel's mean does.
            integer=on_scale_points(rubric, models) and all(s.is_integer() for s in scores),
        )
        fields["criteria"] = {
            name: criterion_summary([r.criteria[name] for r in ok if name in r.criteria], rubric)
            for name in rubric.weights
        }
    elif rubric.kind is RubricKind.BINARY:
        counts = Counter(r.choice for r in ok)
        fields["choices"] = {c: counts.get(c, 0) for c in rubric.choices or []}
        if counts.get(None):
            fields["choices"]["(split)"] = counts[None]
    fields["by_category"] = category_summaries(ok, rubric)
    fields["no_interval"] = reasons.mapping()
    return fields


def criterion_summary(values: list[float], rubric: Rubric) -> CriterionSummary:
    """One criterion's mean with its interval, or why it has none."""
    reasons = NoIntervalReasons()
    value = mean(values)
    ci = reasons.ci("mean", value, mean_interval(values, bounds=scale_bounds(rubric), what="score"))
    return CriterionSummary(mean=value, mean_ci=ci, no_interval=reasons.mapping())


def scale_bounds(rubric: Rubric) -> tuple[float, float] | None:
    """Where a mean's interval is clipped: the rubric's scale. A t interval of a few 4s can
    reach past 4, and a bound no case could ever have is noise, not information.
    """
    return (rubric.scale.min, rubric.scale.max) if rubric.scale else None


def on_scale_points(rubric: Rubric, judges: list[str]) -> bool:
    """Whether every score is a point of an integer scale: one judge, no criteria and no mean
    of a conversation's turns, since a panel's mean, a weighted sum of criteria or a mean of
    turns falls between the points.
    """
    points = bool(rubric.scale and rubric.scale.integer and not rubric.criteria)
    return points and len(judges) == 1 and not rubric.averages_turns


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
        bounds=scale_bounds(rubric),
    )
    return {
        name: CategorySummary(
            n=s.n,
            mean=s.mean if scored else None,
            mean_ci=s.mean_ci if scored else (None, None),
            pass_rate=s.pass_rate,
            pass_rate_ci=s.pass_rate_ci,
            no_interval={"mean": s.mean_ci_why} if scored and s.mean_ci_why else None,
        )
        for name, s in stats.items()
    }

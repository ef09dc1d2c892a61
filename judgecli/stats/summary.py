"""CaseResults → RunSummary: the numbers summary.json holds (DESIGN.md "Stable keys").

The summary is always computed from results.jsonl, never from the runner's memory, so a
resumed run and `judge report` give exactly the numbers a single uninterrupted run would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.intervals import t_interval, wilson_interval
from judgecli.stats.scores import by_category, distribution, mean, pass_rate

Interval = tuple[float, float] | tuple[None, None]

# How many failed cases the summary lists by id (the rest are in results.jsonl).
FAILURES_LISTED = 20


class Usage(BaseModel):
    """What the run's calls cost."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None


class CriterionSummary(BaseModel):
    """Mean of one criterion across cases."""

    mean: float | None
    mean_ci: Interval


class CategorySummary(BaseModel):
    """The headline numbers for one value of the cases' `category`."""

    n: int
    mean: float | None = None
    mean_ci: Interval = (None, None)
    pass_rate: float | None = None
    pass_rate_ci: Interval = (None, None)


class FailedCase(BaseModel):
    """A case that got no verdict, and why."""

    id: str
    error: str


class RunSummary(BaseModel):
    """Everything summary.json says about a run."""

    model_config = ConfigDict(extra="allow")

    command: str
    rubric: str
    rubric_version: int | str
    rubric_hash: str
    models: list[str]
    n_cases: int
    n_ok: int
    n_failed: int
    usage: Usage
    mean: float | None = None
    mean_ci: Interval | None = None
    pass_rate: float | None = None
    pass_rate_ci: Interval | None = None
    distribution: dict[str, int] | None = None
    choices: dict[str, int] | None = None
    criteria: dict[str, CriterionSummary] = Field(default_factory=dict)
    by_category: dict[str, CategorySummary] = Field(default_factory=dict)
    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def usage_of(results: list[CaseResult]) -> Usage:
    """Sum the calls, tokens and cost of every judgement; latency percentiles over calls."""
    usage = Usage()
    latencies: list[float] = []
    for result in results:
        for j in result.judgements:
            usage.calls += j.attempts
            usage.retries += j.retries
            usage.cached += j.cached
            usage.prompt_tokens += j.prompt_tokens
            usage.completion_tokens += j.completion_tokens
            usage.cost_usd += j.cost_usd
            if j.attempts and not j.cached:
                latencies.append(j.latency_s / j.attempts)
    if latencies:
        p50, p95 = np.percentile(np.asarray(latencies), [50, 95])
        usage.latency_p50_s, usage.latency_p95_s = float(p50), float(p95)
    usage.cost_usd = round(usage.cost_usd, 10)
    return usage


def summarize_pointwise(
    results: Iterable[CaseResult], *, rubric: Rubric, models: list[str], command: str
) -> RunSummary:
    """The summary of a `score` run (pointwise or binary rubric)."""
    rows = list(results)
    ok = [r for r in rows if r.status is CaseStatus.OK]
    failed = [r for r in rows if r.status is CaseStatus.FAILED]
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
            integer=rubric.scale.integer and not rubric.criteria and len(models) == 1,
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
    return RunSummary(
        command=command,
        rubric=rubric.name,
        rubric_version=rubric.version,
        rubric_hash=rubric.content_hash,
        models=models,
        n_cases=len(rows),
        n_ok=len(ok),
        n_failed=len(failed),
        usage=usage_of(rows),
        failures=[FailedCase(id=r.id, error=r.error or "") for r in failed[:FAILURES_LISTED]],
        **fields,
    )


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

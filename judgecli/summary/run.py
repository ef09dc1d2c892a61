"""CaseResults → RunSummary: the numbers summary.json holds (DESIGN.md "Stable keys").

The summary is always computed from results.jsonl, never from the runner's memory, so a
resumed run and `judge report` give exactly the numbers a single uninterrupted run would.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import Rubric
from judgecli.stats.intervals import Interval

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

    mean: float | None = None
    mean_ci: Interval = (None, None)


class CategorySummary(BaseModel):
    """The headline numbers for one value of the cases' `category`."""

    n: int
    mean: float | None = None
    mean_ci: Interval | None = None
    pass_rate: float | None = None
    pass_rate_ci: Interval | None = None
    win_rate: float | None = None
    win_rate_ci: Interval | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None


class JudgeSummary(BaseModel):
    """One judge of a pairwise panel on its own."""

    win_rate: float | None = None
    win_rate_ci: Interval = (None, None)
    wins: int
    losses: int
    ties: int
    consistency: float | None = None
    first_position_rate: float | None = None


class LengthSummary(BaseModel):
    """Does the judge reward length? (Answers' lengths in characters.)."""

    longer_wins_rate: float | None = None
    """Among decided cases whose answers differ in length: how often the longer one won."""
    mean_length_winner: float | None = None
    mean_length_loser: float | None = None
    mean_length_old: float | None = None
    mean_length_new: float | None = None


class InterJudgeSummary(BaseModel):
    """How much the judges of a panel agree (on their flip-reconciled verdicts)."""

    fleiss_kappa: float | None = None
    cohen_kappa: dict[str, float | None]
    percent_agreement: float | None = None


class TierUsage(BaseModel):
    """What one tier of a cascade decided and cost."""

    decided: int = 0
    """Cases whose verdict is this tier's."""
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class ScreenAgreement(BaseModel):
    """Escalated cases where both tiers gave a verdict: how often the screen's verdict was
    the strong judge's.
    """

    on: str
    """What is compared: pass/fail, score, choice or winner."""
    n: int = 0
    agreed: int = 0
    rate: float | None = None
    rate_ci: Interval = (None, None)
    """Wilson 95% interval."""
    mean_abs_score_diff: float | None = None
    """Pointwise: mean |screen score - strong score|."""


class CascadeSummary(BaseModel):
    """A --screen run: how many cases escalated, what each tier cost, what it saved."""

    screen: str
    judges: list[str]
    """The strong tier."""
    rule: str
    """The --escalate rule as run (the default spelled out)."""
    n_cases: int
    escalated: int
    escalated_share: float | None = None
    escalated_share_ci: Interval = (None, None)
    tiers: dict[str, TierUsage]
    """"screen" and "strong"."""
    cost_usd: float
    """Both tiers together: what the run paid."""
    all_strong_cost_usd: float | None = None
    """Estimate: every case judged by the strong tier (its real cost on the escalated cases;
    the screen's token counts at the strong judges' prices on the others)."""
    saved_usd: float | None = None
    saved_share: float | None = None
    unpriced: list[str] = Field(default_factory=list)
    """Strong judges without a known price (no estimate is made then)."""
    agreement: ScreenAgreement


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
    win_rate: float | None = None
    win_rate_ci: Interval | None = None
    """Seeded percentile bootstrap over cases (the interval the gate's lower bound uses)."""
    win_rate_ci_wilson: Interval | None = None
    """Wilson interval on wins + ties/2 (an approximation; reported beside the bootstrap)."""
    win_rate_no_ties: float | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    dropped: int | None = None
    """Cases the flip policy "drop" left without a verdict."""
    loss_rate: float | None = None
    loss_rate_ci: Interval | None = None
    flip: bool | None = None
    flip_policy: str | None = None
    consistency: float | None = None
    consistency_ci: Interval | None = None
    first_position_rate: float | None = None
    length: LengthSummary | None = None
    judges: dict[str, JudgeSummary] | None = None
    inter_judge: InterJudgeSummary | None = None
    n_labels: int | None = None
    """Calibrate: (case, human label) pairs with a judge verdict; every pair counts."""
    accuracy: float | None = None
    accuracy_ci: Interval | None = None
    cohen_kappa: float | None = None
    cohen_kappa_ci: Interval | None = None
    weighted_kappa: float | None = None
    """Calibrate, ordinal scales: quadratic-weighted κ."""
    weighted_kappa_ci: Interval | None = None
    failures: list[FailedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    gate: dict[str, Any] | None = None
    """The gate's verdict when a threshold was given (gate.GateResult as a dict)."""
    cascade: CascadeSummary | None = None
    """A --screen run's tiers."""
    incomplete: str | None = None
    """Why the run's numbers cannot stand for a verdict (e.g. "the judge could not grade 24
    of 30 cases"): the run then exits 3 and its gate is not evaluated."""


def usage_of(results: list[CaseResult]) -> Usage:
    """Sum the calls, tokens and cost of every judgement; latency percentiles over calls."""
    usage = Usage()
    latencies: list[float] = []
    for result in results:
        for j in result.all_judgements:
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


def run_facts(
    rows: list[CaseResult], *, command: str, rubric: Rubric | None, models: list[str]
) -> dict[str, Any]:
    """The fields every summary has: what ran, how many cases ended how, what it cost.
    Without a rubric (calibrating a results file) its fields are left for the caller.
    """
    failed = [r for r in rows if r.status is CaseStatus.FAILED]
    return {
        "command": command,
        "rubric": rubric.name if rubric else "",
        "rubric_version": rubric.version if rubric else "",
        "rubric_hash": rubric.content_hash if rubric else "",
        "models": models,
        "n_cases": len(rows),
        "n_ok": len(rows) - len(failed),
        "n_failed": len(failed),
        "usage": usage_of(rows),
        "failures": [
            FailedCase(id=r.id, error=r.error or "")
            for r in sorted(failed, key=lambda r: natural_key(r.id))[:FAILURES_LISTED]
        ],
    }

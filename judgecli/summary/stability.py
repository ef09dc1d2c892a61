"""--repeats K: how far the judge agrees with itself over a run → summary.json's `repeats`,
`stability` (with its interval) and `self_consistency`.

Every number is over cases, never over the K·n verdicts: the K asks of one case are not
independent evidence about the candidate, so the headline numbers (mean, pass rate, win
rate) are computed on each case's aggregated verdict (clustered by case), and stability is
the share of cases whose K verdicts agree, with a Wilson interval over cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.grading.repeats import Compared, compared_for, label
from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import Rubric
from judgecli.stats.agreement import category_counts, fleiss_kappa, fleiss_kappa_resampled
from judgecli.stats.interval_rule import (
    NoIntervalReasons,
    bootstrap_bounded,
    proportion_interval,
    too_few_informative,
)
from judgecli.stats.intervals import Interval
from judgecli.stats.resampling import cluster_bootstrap
from judgecli.stats.scores import NO_CATEGORY


class CategoryStability(BaseModel):
    """Self-consistency of the judge on one category's cases (--repeats)."""

    model_config = ConfigDict(extra="forbid")

    stable: int
    cases: int
    stability: float | None = None
    stability_ci: Interval | None = None


class SelfConsistency(BaseModel):
    """How the judge agreed with itself over K independent asks of every case (--repeats)."""

    model_config = ConfigDict(extra="forbid")

    repeats: int
    compared: str
    """What "agree" compares: "score" (integer scale), "passed" (continuous scale), "choice"
    (binary) or "winner" (pairwise)."""
    stable: int
    """Cases whose K verdicts all agree."""
    cases: int
    """Cases with K verdicts (the failed ones have none)."""
    fleiss_kappa: float | None = None
    """Fleiss' κ with the K repeats as raters (None when every verdict is the same)."""
    fleiss_kappa_ci: Interval | None = None
    """A percentile bootstrap interval of κ over cases (seeded)."""
    within_case_sd: float | None = None
    """Pointwise: the mean over cases of the K scores' standard deviation."""
    pass_k: float | None = None
    """Score with a pass bar: share of cases that pass in all K repeats (pass^K)."""
    pass_k_ci: Interval | None = None
    pass_at_k: float | None = None
    """Score with a pass bar: share of cases that pass in at least one repeat (pass@K)."""
    pass_at_k_ci: Interval | None = None
    by_category: dict[str, CategoryStability] = Field(default_factory=dict)
    unstable: list[str] = Field(default_factory=list)
    """Ids of the cases whose verdicts disagree (the first few, in id order)."""
    no_interval: dict[str, str] | None = None
    """Why `fleiss_kappa_ci` is null while κ has a value (as the summary's `no_interval`)."""


# How many unstable case ids summary.json lists (the HTML and results.jsonl have them all).
UNSTABLE_LISTED = 20


def stability_fields(
    rows: Sequence[CaseResult], rubric: Rubric | None, *, seed: int = 0
) -> dict[str, Any]:
    """The summary's `repeats`, `stability`, `stability_ci` and `self_consistency` for a
    run judged with --repeats K (K >= 2); nothing for a run without.
    """
    repeated = [r for r in rows if r.status is CaseStatus.OK and r.repeats]
    if not repeated:
        return {}
    k = max(len(r.repeats or []) for r in repeated)
    compared = compared_for(rubric) if rubric is not None else inferred(repeated)
    labels = [[label(v, compared) for v in r.repeats or []] for r in repeated]
    stable = [len(set(case)) == 1 for case in labels]
    details = SelfConsistency(
        repeats=k,
        compared=compared,
        stable=sum(stable),
        cases=len(repeated),
        **repeat_kappa(labels, seed),
        by_category=category_stability(repeated, stable),
        unstable=sorted(
            (r.id for r, s in zip(repeated, stable, strict=True) if not s), key=natural_key
        )[:UNSTABLE_LISTED],
        **score_spread(repeated, compared),
        **pass_k(repeated),
    )
    return {
        "repeats": k,
        "stability": sum(stable) / len(stable),
        "stability_ci": proportion_interval(sum(stable), len(stable)),
        "self_consistency": details,
    }


def inferred(repeated: Sequence[CaseResult]) -> str:
    """What the verdicts compare, read from the results (calibrate may have no rubric)."""
    verdicts = [v for r in repeated for v in r.repeats or []]
    if any(r.judge_winners for r in repeated):
        return Compared.WINNER
    if any(v.choice is not None for v in verdicts):
        return Compared.CHOICE
    scores = [v.score for v in verdicts if v.score is not None]
    if any(not s.is_integer() for s in scores) and any(v.passed is not None for v in verdicts):
        return Compared.PASSED
    return Compared.SCORE


def repeat_kappa(labels: Sequence[Sequence[str]], seed: int) -> dict[str, Any]:
    """Fleiss' κ with the K repeats as raters, and its bootstrap interval over cases (none,
    and why, with too few informative cases: fewer than MIN_INFORMATIVE cases with a
    verdict off the most common one). Cases with fewer repeats (a run whose K changed on
    resume) are left out: κ needs the same number of ratings per case.
    """
    k = max(len(case) for case in labels)
    full = [case for case in labels if len(case) == k]
    categories = sorted({x for case in full for x in case})
    kappa = fleiss_kappa(full, labels=categories)
    if kappa is None:
        return {"fleiss_kappa": None}
    ratings = category_counts(full, labels=categories)
    found = cluster_bootstrap(
        {"kappa": lambda counts: fleiss_kappa_resampled(ratings, counts)},
        [[i] for i in range(len(full))],
        seed=seed,
    )["kappa"]
    verdicts = [x for case in full for x in case]
    cases = [i for i, case in enumerate(full) for _ in case]
    too_few = too_few_informative({"judge": verdicts}, cases, what="verdict")
    reasons = NoIntervalReasons()
    interval = reasons.ci("fleiss_kappa", kappa, bootstrap_bounded(found, too_few=too_few))
    return {"fleiss_kappa": kappa, "fleiss_kappa_ci": interval, "no_interval": reasons.mapping()}


def score_spread(repeated: Sequence[CaseResult], compared: str) -> dict[str, Any]:
    """Score rubrics: the mean over cases of the K scores' standard deviation."""
    if compared not in (Compared.SCORE, Compared.PASSED):
        return {}
    spreads = [r.spread for r in repeated if r.spread is not None]
    return {"within_case_sd": sum(spreads) / len(spreads)} if spreads else {}


def pass_k(repeated: Sequence[CaseResult]) -> dict[str, Any]:
    """Rubrics with a pass bar: the share of cases passing in every repeat (pass^K) and in
    at least one (pass@K), each with a Wilson interval over cases. A repeat whose panel
    split (no choice) did not pass.
    """
    passes = [[bool(v.passed) for v in r.repeats or []] for r in repeated]
    if all(v.passed is None for r in repeated for v in r.repeats or []):
        return {}
    every = sum(all(case) for case in passes)
    some = sum(any(case) for case in passes)
    n = len(passes)
    return {
        "pass_k": every / n,
        "pass_k_ci": proportion_interval(every, n),
        "pass_at_k": some / n,
        "pass_at_k_ci": proportion_interval(some, n),
    }


def category_stability(
    repeated: Sequence[CaseResult], stable: Sequence[bool]
) -> dict[str, CategoryStability]:
    """Stability per category, when the cases carry more than one."""
    groups: dict[str, list[bool]] = {}
    for result, agreed in zip(repeated, stable, strict=True):
        groups.setdefault(result.category or NO_CATEGORY, []).append(agreed)
    if len(groups) < 2:
        return {}
    return {
        name: CategoryStability(
            stable=sum(group),
            cases=len(group),
            stability=sum(group) / len(group),
            stability_ci=proportion_interval(sum(group), len(group)),
        )
        for name, group in sorted(groups.items())
    }

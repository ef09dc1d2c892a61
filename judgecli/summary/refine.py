"""CaseResults of a `refine` run → its RunSummary: pass rate at the first answer and at the
end, the lift the loop bought (with a paired interval), scores per attempt, and what
generating and judging cost. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.intervals import Interval, bootstrap_mean_interval, t_interval, wilson_interval
from judgecli.stats.scores import distribution, mean, pass_rate
from judgecli.summary.run import FAILURES_LISTED, RunSummary, Usage
from judgecli.summary.score import on_scale_points, summarize_pointwise


class ScoredAttempt(Protocol):
    """What the summary reads of one attempt (refine.Attempt)."""

    @property
    def attempt(self) -> int:
        """0 for the case's own output, then 1, 2, ..."""
        ...

    @property
    def score(self) -> float | None:
        """The judges' score (pointwise)."""
        ...

    @property
    def passed(self) -> bool | None:
        """Whether the answer met the bar."""
        ...

    @property
    def cost_generation_usd(self) -> float:
        """What generating it cost."""
        ...

    @property
    def cost_judging_usd(self) -> float:
        """What judging it cost."""
        ...


@dataclass(frozen=True)
class Lift:
    """Final minus first mean score over the same cases, with 95% intervals."""

    value: float | None
    ci: Interval
    """Seeded percentile bootstrap of the mean per-case difference."""
    ci_t: Interval
    """Paired Student t interval of the same differences."""
    n: int


def lift(first: Sequence[float], final: Sequence[float], *, seed: int = 0) -> Lift:
    """Mean of (final − first) per case. Paired: each case is its own control, so the
    interval reflects how consistently answers improved, not how hard the cases were.
    """
    if len(first) != len(final):
        raise ValueError(f"need one first and one final score per case, got {len(first)} "
                         f"and {len(final)}")  # fmt: skip
    diffs = np.asarray(final, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    return Lift(
        value=mean(diffs),
        ci=bootstrap_mean_interval(diffs, seed=seed),
        ci_t=t_interval(diffs),
        n=int(diffs.size),
    )


def outcome(attempt: ScoredAttempt, *, scored: bool) -> float | None:
    """The number an attempt is compared by: its score, or 1/0 passed for binary rubrics."""
    if scored:
        return attempt.score
    return None if attempt.passed is None else float(attempt.passed)


def by_attempt(
    attempts: Sequence[Sequence[ScoredAttempt]], rubric: Rubric, *, integer: bool
) -> dict[str, dict[str, Any]]:
    """Per attempt number: cases that reached it, mean score, pass rate, score distribution."""
    numbers = sorted({a.attempt for case in attempts for a in case})
    out: dict[str, dict[str, Any]] = {}
    for k in numbers:
        at_k = [a for case in attempts for a in case if a.attempt == k]
        scores = [a.score for a in at_k if a.score is not None]
        decided = [a.passed for a in at_k if a.passed is not None]
        row: dict[str, Any] = {
            "n": len(at_k),
            "mean": mean(scores),
            "pass_rate": pass_rate(decided),
        }
        if rubric.kind is RubricKind.POINTWISE and rubric.scale is not None:
            scale = rubric.scale
            row["distribution"] = distribution(
                scores, scale_min=scale.min, scale_max=scale.max, integer=integer
            )
        out[str(k)] = row
    return out


def summarize_refine(
    results: Sequence[CaseResult],
    attempts: Sequence[Sequence[ScoredAttempt]],
    *,
    rubric: Rubric,
    judges: list[str],
    generator: str,
    generation_usage: Usage,
    max_attempts: int,
    success_rating: float | None,
    seed: int = 0,
) -> RunSummary:
    """The summary of a `refine` run; `attempts` is aligned with `results`. The score
    fields (mean, pass_rate, distribution) describe the final answers.
    """
    base = summarize_pointwise(results, rubric=rubric, models=judges, command="refine")
    scored = rubric.kind is RubricKind.POINTWISE
    ok = [(r, a) for r, a in zip(results, attempts, strict=True)
          if r.status is CaseStatus.OK and a]  # fmt: skip
    firsts = [a[0].passed for _, a in ok if a[0].passed is not None]
    finals = [bool(r.passed) for r, _ in ok]
    pairs = [(x, y) for _, a in ok
             if (x := outcome(a[0], scored=scored)) is not None
             and (y := outcome(a[-1], scored=scored)) is not None]  # fmt: skip
    gained = lift([x for x, _ in pairs], [y for _, y in pairs], seed=seed)
    never = sorted((r.id for r, _ in ok if not r.passed), key=natural_key)
    every = [a for case in attempts for a in case]
    usage = base.usage.model_copy(update={
        "calls": base.usage.calls + generation_usage.calls,
        "cached": base.usage.cached + generation_usage.cached,
        "retries": base.usage.retries + generation_usage.retries,
        "prompt_tokens": base.usage.prompt_tokens + generation_usage.prompt_tokens,
        "completion_tokens": base.usage.completion_tokens + generation_usage.completion_tokens,
        "cost_usd": round(base.usage.cost_usd + generation_usage.cost_usd, 10),
    })  # fmt: skip
    extra: dict[str, Any] = {
        "generator": generator,
        "success_rating": success_rating,
        "max_attempts": max_attempts,
        "pass_rate_first": pass_rate(firsts),
        "pass_rate_first_ci": wilson_interval(sum(firsts), len(firsts)),
        "pass_rate_final": pass_rate(finals),
        "pass_rate_final_ci": wilson_interval(sum(finals), len(finals)),
        "n_passed": sum(finals),
        "n_exhausted": len(never),
        # Regenerations per case (attempts after the case's own output; 0 = passed at
        # once). The key's name predates the label reports give it; keys are never renamed.
        "mean_attempts": mean([sum(1 for x in a if x.attempt > 0) for _, a in ok]),
        "mean_first": mean([x for x, _ in pairs]),
        "mean_final": mean([y for _, y in pairs]),
        "lift": gained.value,
        "lift_ci": gained.ci,
        "lift_ci_t": gained.ci_t,
        "by_attempt": by_attempt(
            [a for _, a in ok], rubric, integer=on_scale_points(rubric, judges)
        ),
        "cost_generation_usd": round(sum(a.cost_generation_usd for a in every), 10),
        "cost_judging_usd": round(sum(a.cost_judging_usd for a in every), 10),
        "never_passed": never[:FAILURES_LISTED],
    }
    fields = base.model_dump() | {"usage": usage, "models": [*judges]} | extra
    return RunSummary.model_validate(fields)

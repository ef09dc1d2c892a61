"""CaseResults of a `refine` run → its RefineSummary: pass rate at the first answer and at the
end, the lift the loop bought (with a paired interval), scores per attempt, and what
generating and judging cost. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from judgecli.result import CaseResult, CaseStatus, natural_key
from judgecli.rubric import Rubric, RubricKind
from judgecli.stats.interval_rule import mean_interval, proportion_interval
from judgecli.stats.intervals import Interval, bootstrap_mean_interval
from judgecli.stats.scores import distribution, mean, pass_rate
from judgecli.summary.facts import FAILURES_LISTED, Command, SummaryTail, Usage
from judgecli.summary.head import run_facts
from judgecli.summary.parts import Record
from judgecli.summary.score import ScoreNumbers, on_scale_points, score_numbers
from judgecli.usage import COST_DIGITS, total


class AttemptSummary(Record):
    """The answers of one attempt number (0: the case's own output)."""

    n: int
    """Cases that reached this attempt."""
    mean: float | None
    pass_rate: float | None
    distribution: dict[str, int] | None = None
    """Pointwise: cases per score."""


class RefineSummary(SummaryTail, ScoreNumbers):
    """summary.json of `judge refine`. ScoreNumbers describe the final answers."""

    command: Literal[Command.REFINE] = Command.REFINE
    generator: str
    success_rating: float | None = None
    """Pointwise: the score an answer had to reach; None for a binary rubric's pass_choice."""
    max_attempts: int
    pass_rate_first: float | None = None
    """At the case's own output (attempt 0)."""
    pass_rate_first_ci: Interval
    pass_rate_final: float | None = None
    pass_rate_final_ci: Interval
    n_passed: int
    n_exhausted: int
    """Cases still below the bar after the last attempt."""
    mean_attempts: float | None = None
    """Regenerations per case (attempts after the case's own output; 0 = passed at once).
    The key's name predates the label reports give it; keys are never renamed."""
    mean_first: float | None = None
    mean_final: float | None = None
    lift: float | None = None
    """Mean of final − first score per case (binary: passed 1, not 0)."""
    lift_ci: Interval
    """Seeded percentile bootstrap."""
    lift_ci_t: Interval
    """Paired Student t interval."""
    by_attempt: dict[str, AttemptSummary]
    cost_generation_usd: float
    cost_judging_usd: float
    never_passed: list[str]
    """Ids of exhausted cases (the first FAILURES_LISTED)."""


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
    why: str | None = None
    """Why both intervals are (None, None) while there is a lift (one case, no spread)."""


def lift(first: Sequence[float], final: Sequence[float], *, seed: int = 0) -> Lift:
    """Mean of (final − first) per case. Paired: each case is its own control, so the
    interval reflects how consistently answers improved, not how hard the cases were.
    """
    if len(first) != len(final):
        raise ValueError(
            f"need one first and one final score per case, got {len(first)} and {len(final)}"
        )
    diffs = np.asarray(final, dtype=np.float64) - np.asarray(first, dtype=np.float64)
    paired = mean_interval(diffs, what="lift")
    return Lift(
        value=mean(diffs),
        ci=bootstrap_mean_interval(diffs, seed=seed),
        ci_t=paired.ci,
        n=int(diffs.size),
        why=paired.why,
    )


def outcome(attempt: ScoredAttempt, *, scored: bool) -> float | None:
    """The number an attempt is compared by: its score, or 1/0 passed for binary rubrics."""
    if scored:
        return attempt.score
    return None if attempt.passed is None else float(attempt.passed)


def by_attempt(
    attempts: Sequence[Sequence[ScoredAttempt]], rubric: Rubric, *, integer: bool
) -> dict[str, AttemptSummary]:
    """Per attempt number: cases that reached it, mean score, pass rate, score distribution."""
    numbers = sorted({a.attempt for case in attempts for a in case})
    out: dict[str, AttemptSummary] = {}
    for k in numbers:
        at_k = [a for case in attempts for a in case if a.attempt == k]
        scores = [a.score for a in at_k if a.score is not None]
        decided = [a.passed for a in at_k if a.passed is not None]
        row = AttemptSummary(n=len(at_k), mean=mean(scores), pass_rate=pass_rate(decided))
        if rubric.kind is RubricKind.POINTWISE and rubric.scale is not None:
            scale = rubric.scale
            row.distribution = distribution(
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
) -> RefineSummary:
    """The summary of a `refine` run; `attempts` is aligned with `results`. The score
    fields (mean, pass_rate, distribution) describe the final answers.
    """
    rows = list(results)
    facts = run_facts(rows, rubric=rubric, models=[*judges])
    scored = rubric.kind is RubricKind.POINTWISE
    ok = [(r, a) for r, a in zip(rows, attempts, strict=True) if r.status is CaseStatus.OK and a]
    firsts = [a[0].passed for _, a in ok if a[0].passed is not None]
    finals = [bool(r.passed) for r, _ in ok]
    pairs = [
        (x, y)
        for _, a in ok
        if (x := outcome(a[0], scored=scored)) is not None
        and (y := outcome(a[-1], scored=scored)) is not None
    ]
    gained = lift([x for x, _ in pairs], [y for _, y in pairs], seed=seed)
    never = sorted((r.id for r, _ in ok if not r.passed), key=natural_key)
    every = [a for case in attempts for a in case]
    judging: Usage = facts["usage"]
    # The generator's calls count in the run's usage; its latencies do not (the judges' do).
    facts["usage"] = judging.model_copy(
        update={
            "calls": judging.calls + generation_usage.calls,
            "cached": judging.cached + generation_usage.cached,
            "retries": judging.retries + generation_usage.retries,
            **total([judging, generation_usage]).rounded().token_fields(),
        }
    )
    numbers = score_numbers(rows, rubric, judges)
    if gained.value is not None and gained.why is not None:
        numbers["no_interval"] = (numbers["no_interval"] or {}) | {"lift": gained.why}
    return RefineSummary(
        **facts,
        **numbers,
        generator=generator,
        success_rating=success_rating,
        max_attempts=max_attempts,
        pass_rate_first=pass_rate(firsts),
        pass_rate_first_ci=proportion_interval(sum(firsts), len(firsts)),
        pass_rate_final=pass_rate(finals),
        pass_rate_final_ci=proportion_interval(sum(finals), len(finals)),
        n_passed=sum(finals),
        n_exhausted=len(never),
        mean_attempts=mean([sum(1 for x in a if x.attempt > 0) for _, a in ok]),
        mean_first=mean([x for x, _ in pairs]),
        mean_final=mean([y for _, y in pairs]),
        lift=gained.value,
        lift_ci=gained.ci,
        lift_ci_t=gained.ci_t,
        by_attempt=by_attempt([a for _, a in ok], rubric, integer=on_scale_points(rubric, judges)),
        cost_generation_usd=round(sum(a.cost_generation_usd for a in every), COST_DIGITS),
        cost_judging_usd=round(sum(a.cost_judging_usd for a in every), COST_DIGITS),
        never_passed=never[:FAILURES_LISTED],
    )

"""Which cases a human should label (`judge review plan`, the viewer's "next case"), each
with the known probability it had of being picked, so that `--labels` can weigh it back
and the corrected estimate stays unbiased (active statistical inference, `stats.active`).

The design is Poisson sampling, the one of Zrnic & Candès (2024): every graded case i is
drawn independently with probability π_i, Σ π_i = the budget (so the number of cases
drawn is the budget on average, not exactly). It is chosen over a fixed-size design
because its inclusion probabilities are exact and simple (π_i itself, no joint
probabilities to compute), the paper's estimator and its variance apply as they are, and a
case's weight does not depend on which other cases were drawn. The drawn cases are listed
surest first (by U_i/π_i): the first k of them are themselves close to a Poisson draw at a
smaller budget, but only a plan labelled to its end is the design its probabilities state.

The strategies differ in the uncertainty u_i the probabilities follow (`signals`):

- `uniform`: none; π_i = budget/N, every case alike.
- `disagreement`: the judge's disagreement with itself, each in [0, 1]: the panel's
  judges split (the share off the most common verdict; a score's spread over the run's
  range of scores), the two orders of a pairwise case disagreeing (1), the verdicts of
  --repeats differing (their spread). u_i is the largest of them.
- `uncertainty`: the same, and the logprob margin of --score-mode logprob (1 − the gap
  between the two likeliest values' probabilities).

A strategy whose signals are all zero (one judge, one order, no repeats, no logprobs)
falls back to the uniform design, and the plan says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import numpy as np

from judgecli.errors import ConfigError, InputError
from judgecli.result import CaseResult, CaseStatus
from judgecli.stats.active import UNIFORM_SHARE, inclusion_probabilities, poisson_draw
from judgecli.store import RESULTS, read_results


class LabelStrategy(StrEnum):
    """What the inclusion probabilities follow."""

    UNIFORM = "uniform"
    DISAGREEMENT = "disagreement"
    UNCERTAINTY = "uncertainty"


@dataclass(frozen=True)
class PlannedCase:
    """One case to label, with the probability the design had of drawing it."""

    id: str
    inclusion_probability: float
    why: str


@dataclass(frozen=True)
class LabelPlan:
    """The cases to label, in the order to label them, and the design that drew them."""

    cases: list[PlannedCase]
    strategy: LabelStrategy
    budget: int
    seed: int
    population: int
    """Graded cases the design drew from (N)."""
    uniform_share: float = UNIFORM_SHARE
    fallback: str | None = None
    """Why the plan is uniform although another strategy was asked (no signal), or None."""
    probabilities: dict[str, float] = field(default_factory=dict)
    """Every graded case's inclusion probability, drawn or not."""


@dataclass(frozen=True)
class Signals:
    """How unsure the judge was of one case, each in [0, 1] (None: not measured)."""

    panel: float | None = None
    order: float | None = None
    repeats: float | None = None
    margin: float | None = None

    def score(self, strategy: LabelStrategy) -> float:
        """u_i for a strategy: the largest of its signals (0 for uniform)."""
        if strategy is LabelStrategy.UNIFORM:
            return 0.0
        found = [self.panel, self.order, self.repeats]
        if strategy is LabelStrategy.UNCERTAINTY:
            found.append(self.margin)
        return max((v for v in found if v is not None), default=0.0)

    def why(self, strategy: LabelStrategy) -> str:
        """The signals the strategy follows, in words."""
        parts = []
        if self.panel:
            parts.append(f"panel split {self.panel:.2f}")
        if self.order:
            parts.append("orders disagree")
        if self.repeats:
            parts.append(f"repeats differ {self.repeats:.2f}")
        if self.margin is not None and strategy is LabelStrategy.UNCERTAINTY:
            parts.append(f"logprob margin {1 - self.margin:.2f}")
        return "; ".join(parts)


def graded(result: CaseResult) -> bool:
    """Whether a case has a verdict a corrected estimate can use."""
    if result.status is not CaseStatus.OK:
        return False
    return any(v is not None for v in (result.winner, result.score, result.passed, result.choice))


def off_mode(values: list[object]) -> float | None:
    """The share of values other than the most common one; None for fewer than two."""
    if len(values) < 2:
        return None
    common = Counter(values).most_common(1)[0][1]
    return (len(values) - common) / len(values)


def panel_split(result: CaseResult, span: float) -> float | None:
    """How far the panel's judges are apart on this case."""
    if result.judge_winners:
        return off_mode(list(result.judge_winners.values()))
    scores: dict[str, list[float]] = {}
    choices: dict[str, list[str]] = {}
    for judgement in result.judgements:
        verdict = judgement.verdict
        if verdict is None or judgement.error:
            continue
        if verdict.score is not None:
            scores.setdefault(judgement.model, []).append(verdict.score)
        elif verdict.choice is not None:
            choices.setdefault(judgement.model, []).append(verdict.choice)
    if len(scores) >= 2:
        means = [sum(v) / len(v) for v in scores.values()]
        return min(1.0, (max(means) - min(means)) / span)
    if len(choices) >= 2:
        return off_mode([Counter(v).most_common(1)[0][0] for v in choices.values()])
    return None


def margin_of(probabilities: dict[str, float] | None) -> float | None:
    """1 − (p₁ − p₂) of the two likeliest values; None without logprobs."""
    if not probabilities:
        return None
    ranked = sorted(probabilities.values(), reverse=True) + [0.0]
    return min(1.0, max(0.0, 1.0 - (ranked[0] - ranked[1])))


def signals(result: CaseResult, span: float) -> Signals:
    """The judge's uncertainty about one case; `span` is the run's range of scores."""
    order = None if result.consistent is None else float(not result.consistent)
    repeats = None
    if result.spread is not None:
        scaled = result.spread / (span / 2) if result.score is not None else result.spread
        repeats = min(1.0, scaled)
    return Signals(
        panel=panel_split(result, span),
        order=order,
        repeats=repeats,
        margin=margin_of(result.probabilities),
    )


def score_span(results: list[CaseResult]) -> float:
    """The range of the scores the run's judges gave (1 when they gave none or one)."""
    scores = [
        j.verdict.score
        for r in results
        for j in r.judgements
        if j.verdict is not None and j.verdict.score is not None
    ]
    span = max(scores) - min(scores) if scores else 0.0
    return span if span > 0 else 1.0


def plan_labels(run_dir: Path, *, budget: int, strategy: LabelStrategy, seed: int = 0) -> LabelPlan:
    """The plan of `judge review plan RUN --budget N --strategy S --seed K`: the graded
    cases of the run drawn by the design (module docstring), surest first. The same run,
    budget, strategy and seed give the same plan.

    Raises:
        ConfigError: A budget below 1.
        InputError: No results.jsonl, a bad line of it (file:line), or no graded case.
    """
    if budget < 1:
        raise ConfigError(
            f"--budget {budget}: a plan needs at least one label", hint="e.g. --budget 50"
        )
    path = run_dir / RESULTS
    if not path.is_file():
        raise InputError(f"{path}: no such file", hint="pass the directory of a finished run")
    results = sorted((r for r in read_results(path) if graded(r)), key=lambda r: r.id)
    if not results:
        raise InputError(
            f"{path}: no graded case to plan labels for",
            hint="plan on a run whose cases got verdicts",
        )
    span = score_span(results)
    found = [signals(r, span) for r in results]
    u = np.array([s.score(strategy) for s in found])
    fallback = None
    if strategy is not LabelStrategy.UNIFORM and not u.any():
        fallback = f"no case shows {strategy.value} (one judge, one order, no repeats or logprobs)"
    probs = inclusion_probabilities(u, float(budget))
    drawn, ranks = poisson_draw(probs, seed)
    picked = sorted(np.flatnonzero(drawn), key=lambda i: (float(ranks[i]), results[i].id))
    cases = []
    for i in picked:
        said = found[i].why(strategy) if u[i] > 0 else ""
        if not said:
            uniform = strategy is LabelStrategy.UNIFORM or fallback
            said = "uniform design" if uniform else "no doubt shown (the uniform floor)"
        why = said
        cases.append(PlannedCase(results[i].id, float(probs[i]), why))
    return LabelPlan(
        cases=cases,
        strategy=strategy,
        budget=budget,
        seed=seed,
        population=len(results),
        fallback=fallback,
        probabilities={r.id: float(p) for r, p in zip(results, probs, strict=True)},
    )

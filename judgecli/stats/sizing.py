"""How many cases a gate on a mean of per-case values needs: the fixed-n gate on the point
estimate or on the lower end of its interval (normal formulas), and the sequential gate's
stopping time (simulated: the betting confidence sequence has no closed-form stopping law).

A gate passes a mean μ̂ of n per-case values against a floor μ₀. With the true mean μ₁ =
μ₀ + Δ and the values' standard deviation σ (at μ₁), μ̂ is about normal(μ₁, σ²/n), so

- on the point estimate (pass iff μ̂ ≥ μ₀): power = Φ(Δ√n/σ), n = (z_power·σ/Δ)²;
- on the lower bound (pass iff μ̂ − z₁₋α/₂·σ̂/√n ≥ μ₀, the pessimistic end of the
  two-sided 1 − α interval the gate uses): power = Φ(Δ√n/σ − z₁₋α/₂),
  n = ((z₁₋α/₂ + z_power)·σ/Δ)².

That second formula holds for a mean score (its spread does not move with the mean). A
rate's spread does: the pass line of its lower bound is the smallest p̂ whose bound clears
the floor, p̂ − z·σ(p̂)/√n ≥ μ₀, where σ(p̂) is the spread at p̂ itself (a win rate's
bootstrap interval, near the normal one) or at the floor (Wilson's interval, a pass rate's:
it inverts the score test, so its line is μ₀ + z·σ(μ₀)/√n). The power is then
Φ((μ₁ − line)·√n/σ(μ₁)), and `rate_cases` finds the smallest n that reaches it (for
Wilson: Fleiss' n = ((z·σ₀ + z_power·σ₁)/Δ)², Fleiss, Levin & Paik 2003, §2.5).

On the point, a rate's mean lies on a lattice (steps of 1/(2n)): below a few hundred cases
the exact power saws up and down by up to about 4 points around the normal one as n grows
by one (tests/bench/bench_planning.py shows it); the plan gives the normal n.

The constant-spread formula is the one-sample z-test's sample size (Chow, Shao & Wang, "Sample Size
Calculations in Clinical Research", 2nd ed., §3.1.1; statsmodels' `NormalIndPower().
solve_power(effect_size=Δ/σ, alpha=α/2, power=..., ratio=0, alternative="larger")` gives
the same n before rounding). A win rate counts a tie ½: its values are 1, ½, 0, and with a
tie share τ its variance is μ(1 − μ) − τ/4; a pass rate's is μ(1 − μ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgecli.stats.intervals import normal_quantile
from judgecli.stats.sequential import _candidates, _Capital


def normal_cdf(z: float) -> float:
    """Φ(z), the standard normal distribution function."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def one_sided_z(probability: float) -> float:
    """The z with Φ(z) = probability (0 < probability < 1)."""
    if not 0 < probability < 1:
        raise ValueError(f"need 0 < probability < 1, got {probability}")
    if probability >= 0.5:
        return normal_quantile(2 * probability - 1)
    return -normal_quantile(1 - 2 * probability)


def outcome_sd(mean: float, tie_share: float = 0.0) -> float:
    """Standard deviation of one case's value 1 / ½ / 0 with mean `mean` and a share
    `tie_share` of ½s (0: a pass rate's 1 / 0). The tie share is capped at what the mean
    allows (2·min(μ, 1 − μ)).
    """
    if not 0 <= mean <= 1 or not 0 <= tie_share <= 1:
        raise ValueError("need 0 <= mean <= 1 and 0 <= tie_share <= 1")
    ties = min(tie_share, 2 * min(mean, 1 - mean))
    return math.sqrt(max(mean * (1 - mean) - ties / 4, 0.0))


def _check(delta: float, sd: float, power: float, alpha: float) -> None:
    if not delta > 0:
        raise ValueError(f"the effect must lie above the floor (difference {delta})")
    if not sd > 0:
        raise ValueError(f"the standard deviation must be positive, got {sd}")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must lie strictly between 0 and 1")


def fixed_power(*, n: int, delta: float, sd: float, alpha: float, bound: bool) -> float:
    """Probability that a gate of n cases passes when the true mean lies `delta` above the
    floor: on the lower end of the 1 − α interval (`bound`) or on the point estimate.
    """
    _check(delta, sd, 0.5, alpha)
    z_bound = normal_quantile(1 - alpha) if bound else 0.0
    return normal_cdf(delta * math.sqrt(n) / sd - z_bound)


def fixed_cases(*, delta: float, sd: float, power: float, alpha: float, bound: bool) -> int:
    """Cases a fixed-n gate needs to pass with probability `power` when the true mean lies
    `delta` above the floor (values of standard deviation `sd`), on the lower bound of the
    1 − α interval (`bound`) or on the point estimate.
    """
    _check(delta, sd, power, alpha)
    z_bound = normal_quantile(1 - alpha) if bound else 0.0
    return max(1, math.ceil(((z_bound + one_sided_z(power)) * sd / delta) ** 2 - 1e-9))


def _pass_line(*, n: int, floor: float, tie_share: float, z: float, wilson: bool) -> float:
    """The smallest mean of n rate values whose lower bound (z standard errors below)
    clears `floor`.
    """
    if wilson:
        return floor + z * outcome_sd(floor, tie_share) / math.sqrt(n)
    low, high = floor, 1.0
    if high - z * outcome_sd(high, tie_share) / math.sqrt(n) < floor:
        return math.inf  # cannot happen at 1 (spread 0) but keeps the bisection honest
    for _ in range(60):
        middle = (low + high) / 2
        if middle - z * outcome_sd(middle, tie_share) / math.sqrt(n) >= floor:
            high = middle
        else:
            low = middle
    return high


def rate_power(
    *, n: int, floor: float, effect: float, tie_share: float, alpha: float, wilson: bool
) -> float:
    """Probability that the lower bound of a rate's 1 − α interval clears `floor` after n
    cases when the true rate is `effect` (values 1 / ½ / 0, `tie_share` of them ½).
    """
    z = normal_quantile(1 - alpha)
    line = _pass_line(n=n, floor=floor, tie_share=tie_share, z=z, wilson=wilson)
    return normal_cdf((effect - line) * math.sqrt(n) / outcome_sd(effect, tie_share))


def rate_cases(
    *, floor: float, effect: float, tie_share: float, power: float, alpha: float, wilson: bool
) -> int:
    """Cases a rate's lower-bound gate needs to pass with probability `power` when the true
    rate is `effect`: the smallest n with `rate_power` at least `power`.
    """
    if not 0 <= floor < effect < 1:
        raise ValueError("need 0 <= floor < effect < 1")
    sd = outcome_sd(effect, tie_share)
    _check(effect - floor, sd, power, alpha)

    def enough(n: int) -> bool:
        found = rate_power(
            n=n, floor=floor, effect=effect, tie_share=tie_share, alpha=alpha, wilson=wilson
        )
        return found >= power

    widest = max(sd, outcome_sd(floor, tie_share), 0.5 * sd)
    high = max(
        2, fixed_cases(delta=effect - floor, sd=widest, power=power, alpha=alpha, bound=True)
    )
    while not enough(high):
        high *= 2
    low = 0  # enough(low) is False: no case passes nothing
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class StoppingTimes:
    """The sequential gate simulated `runs` times at the true mean.

    Attributes:
        expected: Mean number of cases at the stop (an undecided run counts its horizon).
        p95: 95th percentile of the cases at the stop.
        passed: Share of runs that passed.
        undecided: Share still undecided at the horizon.
        horizon: Cases a run could take at most.
    """

    expected: float
    p95: int
    passed: float
    undecided: float
    horizon: int


def sequential_stops(
    *,
    mean: float,
    tie_share: float,
    floor: float,
    alpha: float,
    horizon: int,
    runs: int = 1000,
    seed: int = 0,
    grid: int = 100,
) -> StoppingTimes:
    """Simulate the sequential gate on values 1 / ½ / 0 of mean `mean` with a share
    `tie_share` of ½s (a win or pass rate's cases): `sequential_stops_of` on that law.
    """
    ties = min(tie_share, 2 * min(mean, 1 - mean))
    wins = mean - ties / 2
    return sequential_stops_of(
        values=(1.0, 0.5, 0.0),
        weights=(wins, ties, max(0.0, 1 - wins - ties)),
        floor=floor,
        alpha=alpha,
        horizon=horizon,
        runs=runs,
        seed=seed,
        grid=grid,
    )


def sequential_stops_of(
    *,
    values: Sequence[float],
    weights: Sequence[float],
    floor: float,
    alpha: float,
    horizon: int,
    runs: int = 1000,
    seed: int = 0,
    grid: int = 100,
) -> StoppingTimes:
    """Simulate the sequential gate (stats/sequential: stop at the first case after which
    the confidence sequence lies wholly above or below `floor`) on cases drawn from the
    discrete law `values` (on 0..1) with probabilities `weights`. The decision depends on
    the grid only through the floor, which is always a candidate
    (stats/sequential._run_batch), so a coarse grid is exact enough and fast.
    """
    if not 0 <= floor <= 1 or horizon < 1 or runs < 1:
        raise ValueError("need 0 <= floor <= 1, horizon >= 1 and runs >= 1")
    support = np.asarray(values, dtype=np.float64)
    if support.size == 0 or len(weights) != support.size:
        raise ValueError("need one weight per value, and at least one value")
    if not np.all((support >= 0) & (support <= 1)):
        raise ValueError("values must lie in [0, 1]")
    chances = np.asarray(weights, dtype=np.float64)
    if np.any(chances < 0) or not chances.sum() > 0:
        raise ValueError("weights must be nonnegative with a positive sum")
    cumulative = np.cumsum(chances / chances.sum())
    last = support.size - 1
    rng = np.random.default_rng(seed)
    capital = _Capital(runs, alpha=alpha, candidates=_candidates(grid, [floor]))
    candidates = capital.m
    stops = np.full(runs, horizon, dtype=np.int64)
    passed = np.zeros(runs, dtype=np.bool_)
    decided = np.zeros(runs, dtype=np.bool_)
    active = np.arange(runs)
    for step in range(1, horizon + 1):
        if active.size == 0:
            break
        # One uniform per run and case, read through the law's cumulative weights (for
        # 1 / ½ / 0: below the win share a 1, then a ½, else a 0).
        draw = rng.random(active.size)
        x = support[np.minimum(np.searchsorted(cumulative, draw, side="right"), last)]
        capital.update(x)
        low_index, high_index = capital.bounds()
        above = candidates[low_index] > floor
        below = candidates[high_index] < floor
        done = above | below
        if done.any():
            finished = active[done]
            stops[finished] = step
            passed[finished] = above[done]
            decided[finished] = True
            active = active[~done]
            capital.keep(~done)
    return StoppingTimes(
        expected=float(stops.mean()),
        p95=int(np.ceil(np.quantile(stops, 0.95))),
        passed=float(passed.mean()),
        undecided=float(1 - decided.mean()),
        horizon=horizon,
    )


def shifted_to_mean(values: Sequence[float], mean: float) -> list[float]:
    """`values` (on 0..1) moved by one shift d, each clamped to [0, 1], with d solved so
    that their mean is `mean`: a pilot's spread carried to the true value a plan assumes,
    kept inside the scale as the sequential gate keeps a case's value (0 < mean < 1).
    """
    if not values or not 0 < mean < 1:
        raise ValueError("need values and 0 < mean < 1")

    def moved(d: float) -> list[float]:
        return [min(1.0, max(0.0, v + d)) for v in values]

    low, high = -1.0, 1.0  # the clamped mean rises with d from 0 (d = -1) to 1 (d = 1)
    for _ in range(60):
        middle = (low + high) / 2
        if sum(moved(middle)) / len(values) < mean:
            low = middle
        else:
            high = middle
    return moved((low + high) / 2)

"""Pairwise comparisons of NEW against OLD: win rates, their interval, judge biases.

Outcomes are from NEW's point of view: win = 1, tie = 0.5, loss = 0. A statistic of no
data is ``None`` (shown as "n/a").
"""

from collections.abc import Callable, Sequence
from math import floor, sqrt

import numpy as np

from judgecli.stats.interval_rule import proportion_interval
from judgecli.stats.intervals import (
    FloatArray,
    Interval,
    Values,
    check_confidence,
    normal_quantile,
    percentile_interval,
    wilson_interval,
)
from judgecli.stats.scores import mean

WIN, TIE, LOSS = 1.0, 0.5, 0.0


def win_rate(wins: int, losses: int, ties: int) -> float | None:
    """Win rate with ties counted half: (wins + ties / 2) / (wins + losses + ties).

    Each tie is half a win and half a loss, as MT-Bench's ``win_rate_adjusted`` (FastChat
    ``llm_judge/show_result.py``; L. Zheng et al. 2023, "Judging LLM-as-a-Judge with
    MT-Bench and Chatbot Arena"). ``None`` when there are no cases.
    """
    n = wins + losses + ties
    return None if n == 0 else (wins + ties / 2) / n


def win_rate_no_ties(wins: int, losses: int) -> float | None:
    """Win rate among decided cases: wins / (wins + losses); ``None`` when all tied or none."""
    decided = wins + losses
    return None if decided == 0 else wins / decided


def win_rate_bootstrap_interval(
    outcomes: Sequence[float], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Interval:
    """Percentile bootstrap interval of the ties-half win rate, resampling cases; Wilson's
    on wins + ties/2 when the bootstrap is degenerate (``interval_rule.proportion_interval``).

    When every case ended the same way every resample does too, and the percentile interval
    collapses to a point ([100%, 100%] from 5 wins of 5) that would read as certainty;
    Wilson keeps the width a sample of n has ([56.6%, 100%]).

    Resampling n cases with replacement and counting their wins, ties and losses is the
    same, in distribution, as drawing the (wins, ties, losses) counts from
    Multinomial(n, observed shares); the win rate of each resample is
    (wins + ties / 2) / n. Drawing the counts costs O(resamples) whatever n is.
    Reference: B. Efron & R. Tibshirani (1993), "An Introduction to the Bootstrap",
    ch. 13 (percentile interval). Deterministic for a given seed.

    Args:
        outcomes: One outcome per case: 1 (NEW won), 0.5 (tie) or 0 (NEW lost).
        resamples: Number of bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng``.
        confidence: Coverage of the two-sided interval.

    Returns:
        ``(low, high)``, or ``(None, None)`` for no outcomes.

    Raises:
        ValueError: If an outcome is not 0, 0.5 or 1, or ``resamples`` < 1.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    data = np.asarray(outcomes, dtype=np.float64)
    if data.size == 0:
        return (None, None)
    wins, ties, losses = (int(np.count_nonzero(data == value)) for value in (WIN, TIE, LOSS))
    n = data.size
    if wins + ties + losses != n:
        odd = data[(data != WIN) & (data != TIE) & (data != LOSS)][0]
        raise ValueError(f"outcomes must be 1 (win), 0.5 (tie) or 0 (loss), got {odd:g}")
    bootstrap = None
    if max(wins, ties, losses) < n:  # else every resample is the sample: nothing to draw
        rates = resampled_win_rates(
            wins, ties, losses, resamples=resamples, rng=np.random.default_rng(seed)
        )
        bootstrap = percentile_interval(rates, confidence=confidence)
    return proportion_interval(wins + ties / 2, n, bootstrap=bootstrap, confidence=confidence)


def resampled_win_rates(
    wins: int, ties: int, losses: int, *, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Ties-half win rates of ``resamples`` bootstrap resamples, drawn as multinomial counts."""
    n = wins + ties + losses
    counts = rng.multinomial(n, [wins / n, ties / n, losses / n], size=resamples)
    return np.asarray((counts[:, 0] + counts[:, 1] / 2) / n, dtype=np.float64)


def consistency_rate(consistent: Sequence[bool]) -> float | None:
    """Share of cases whose two presentation orders gave the same verdict.

    The position-swap check of Zheng et al. (2023). ``None`` for no cases.
    """
    return mean(consistent)


def first_position_rate(first_position_won: Sequence[bool]) -> float | None:
    """Share of decided single-order verdicts in which the answer shown first won.

    The caller passes one flag per single-order verdict that picked a winner (ties left
    out); 0.5 means no position bias (Zheng et al. 2023). ``None`` for no verdicts.
    """
    return mean(first_position_won)


def length_preference(winner_longer: Sequence[bool]) -> float | None:
    """Share of decided cases where the longer answer won (verbosity bias); ``None`` if none."""
    return mean(winner_longer)


def mean_length(values: Values) -> float | None:
    """Mean answer length (in whatever unit the caller counts); ``None`` for no answers."""
    return mean(values)


def cases_needed(
    wins: int, losses: int, ties: int, threshold: float, *, confidence: float = 0.95
) -> int | None:
    """Cases needed, at the observed mix of outcomes, for the lower bound of the interval
    the gate uses (``win_rate_bootstrap_interval``) to reach ``threshold``.

    It answers "if the observed rate held, how many cases in all would make the gate's
    lower bound pass?", with the lower bound the gate's own interval would have:

    - every case ended alike (5 wins of 5): the gate's interval is Wilson's, so n is the
      smallest with ``wilson_interval(rate·n, n)``'s lower end ≥ ``threshold`` (100%
      against 0.9: 35, since 35/(35 + z²) = 0.9011 and 34/(34 + z²) = 0.8985);
    - otherwise it is the percentile bootstrap, whose spread at n cases is about that of
      the normal distribution of a mean of n outcomes with the observed variance
      σ² = (wins + ties/4)/n₀ − rate² (a tie is ½: ties narrow it); n is the smallest
      with ``rate − z·σ/√n ≥ threshold``, z the two-sided normal quantile. Without ties
      σ² = rate(1 − rate), the Wald interval's variance.

    Args:
        wins: NEW's wins.
        losses: NEW's losses.
        ties: Ties.
        threshold: The gate's bar on the win rate (ties half).
        confidence: Coverage of the gate's interval.

    Returns:
        The number of cases in all (at least 1), or ``None`` when there are none or the
        rate is at or below ``threshold`` (no number of cases is enough).

    Raises:
        ValueError: If ``threshold`` is outside [0, 1] or a count is negative.
    """
    z = normal_quantile(confidence)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    if min(wins, losses, ties) < 0:
        raise ValueError(f"counts cannot be negative, got {wins}, {losses}, {ties}")
    n0 = wins + losses + ties
    if n0 == 0:
        return None
    rate = (wins + ties / 2) / n0
    if rate <= threshold:
        return None
    if max(wins, losses, ties) == n0:
        return smallest_n(lambda n: _wilson_low(rate * n, n, confidence) >= threshold)
    spread = sqrt(max((wins + ties / 4) / n0 - rate * rate, 0.0))
    # The closed form n ≥ (zσ / (rate − threshold))², guarded against rounding below.
    start = max(1, floor((z * spread / (rate - threshold)) ** 2))
    return smallest_n(lambda n: rate - z * spread / sqrt(n) >= threshold, start=start)


def _wilson_low(successes: float, n: int, confidence: float) -> float:
    low, _ = wilson_interval(successes, n, confidence=confidence)
    assert low is not None  # n >= 1
    return low


def smallest_n(clears: Callable[[int], bool], *, start: int = 1) -> int:
    """The smallest n ≥ 1 for which ``clears(n)`` holds, for a condition that, once it
    holds, holds for every larger n: doubling from ``start`` until it holds, then bisecting.
    """
    high = max(1, start)
    while not clears(high):
        high *= 2
    low = 0  # n = 0 never clears
    while high - low > 1:
        middle = (low + high) // 2
        if clears(middle):
            high = middle
        else:
            low = middle
    return high

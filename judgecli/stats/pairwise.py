"""Pairwise comparisons of NEW against OLD: win rates, their interval, judge biases.

Outcomes are from NEW's point of view: win = 1, tie = 0.5, loss = 0. A statistic of no
data is ``None`` (shown as "n/a").
"""

from collections.abc import Sequence
from math import floor, sqrt

import numpy as np

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
    """Percentile bootstrap interval of the ties-half win rate, resampling cases.

    When every case ended the same way the bootstrap has nothing to resample and would give
    a zero-width interval; the Wilson interval on wins + ties/2 is returned then.

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
    if max(wins, ties, losses) == n:
        # Every case ended the same way: every resample does too, and the percentile
        # interval collapses to a point ([100%, 100%] from 5 wins of 5) that would read as
        # certainty. Wilson on wins + ties/2 keeps the width a sample of n has.
        return wilson_interval(wins + ties / 2, n, confidence=confidence)
    rates = resampled_win_rates(
        wins, ties, losses, resamples=resamples, rng=np.random.default_rng(seed)
    )
    return percentile_interval(rates, confidence=confidence)


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


def cases_needed(rate: float, threshold: float, *, confidence: float = 0.95) -> int | None:
    """Cases needed for the normal-approximation interval at ``rate`` to clear ``threshold``.

    The smallest n with ``rate − z·√(rate(1 − rate)/n) > threshold``, z the two-sided
    normal quantile of ``confidence`` (the Wald interval's lower bound), i.e. the
    smallest integer n > z²·rate(1 − rate) / (rate − threshold)². It answers "if the
    observed rate held, how many cases would make the gate's lower bound pass?".

    Returns:
        The number of cases (at least 1), or ``None`` when ``rate <= threshold`` (no
        number of cases is enough).

    Raises:
        ValueError: If ``rate`` or ``threshold`` is outside [0, 1].
    """
    z = normal_quantile(confidence)
    if not (0.0 <= rate <= 1.0 and 0.0 <= threshold <= 1.0):
        raise ValueError(f"rate and threshold must be in [0, 1], got {rate} and {threshold}")
    if rate <= threshold:
        return None

    def clears(n: int) -> bool:
        return rate - z * sqrt(rate * (1.0 - rate) / n) > threshold

    n = max(1, floor(z * z * rate * (1.0 - rate) / (rate - threshold) ** 2) + 1)
    # Guard the closed form against rounding at the boundary.
    while not clears(n):
        n += 1
    while n > 1 and clears(n - 1):
        n -= 1
    return n

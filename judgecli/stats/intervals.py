"""Confidence intervals: Wilson for proportions, Student t and percentile bootstrap for means.

Every function returns plain Python floats (JSON-ready) and ``(None, None)`` when the
interval is undefined (no data, or too little of it), so a report can print "n/a"
instead of ``nan``.
"""

from collections.abc import Sequence
from math import sqrt
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from judgecli.stats.special import t_quantile

FloatArray = npt.NDArray[np.float64]
Values = Sequence[float] | FloatArray
Interval = tuple[float, float] | tuple[None, None]

# Working memory one batch of bootstrap resamples may use (bytes).
CHUNK_BYTES = 64 * 2**20

TOO_FEW = 10
"""Groups (categories, judges) of fewer cases are reported as "too few to tell": a 95%
interval over 5 cases spans half the scale, and a small group with no spread at all (4
cases, all scored 3) has no interval. Reports show the mark instead of the interval, and
charts colour such a group neither red nor green.
"""


def too_few(n: int) -> bool:
    """Whether a group of ``n`` cases is too small for its interval to tell anything."""
    return n < TOO_FEW


def normal_quantile(confidence: float) -> float:
    """Two-sided standard-normal critical value z for a confidence level.

    z = Φ⁻¹((1 + confidence) / 2), e.g. 1.959964 for 0.95. Uses ``statistics.NormalDist``
    so that callers do not pay for importing scipy.

    Args:
        confidence: Coverage of the two-sided interval, strictly between 0 and 1.

    Raises:
        ValueError: If ``confidence`` is not in (0, 1).
    """
    check_confidence(confidence)
    return NormalDist().inv_cdf((1.0 + confidence) / 2.0)


def wilson_interval(successes: float, n: float, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    With p̂ = successes / n and z = ``normal_quantile(confidence)``::

        centre = (p̂ + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²)

    Reference: E. B. Wilson (1927), "Probable inference, the law of succession, and
    statistical inference", JASA 22(158); matches ``scipy.stats.binomtest(k, n)
    .proportion_ci(method="wilson")``.

    ``successes`` may be fractional: a win rate with ties counted half uses
    ``successes = wins + ties / 2``. That is the usual practice (MT-Bench's
    ``win_rate_adjusted``) and an approximation, since a tie is not half a Bernoulli
    trial; the bootstrap in ``pairwise.win_rate_bootstrap_interval`` does not need it.

    Args:
        successes: Number of successes, 0 ≤ successes ≤ n.
        n: Number of trials.
        confidence: Coverage of the two-sided interval.

    Returns:
        ``(low, high)`` clipped to [0, 1], or ``(None, None)`` when ``n`` is 0.

    Raises:
        ValueError: If ``n`` is negative or ``successes`` is outside [0, n].
    """
    z = normal_quantile(confidence)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (None, None)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * sqrt(p * (1.0 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (float(low), float(high))


def t_interval(values: Values, *, confidence: float = 0.95) -> Interval:
    """Student t confidence interval for a mean: x̄ ± t₍₁₊c₎/₂,ₙ₋₁ · s/√n.

    s is the sample standard deviation (ddof=1). Reference: "Student" (1908), "The
    probable error of a mean", Biometrika 6(1); matches ``scipy.stats.t.interval(c,
    n - 1, loc=x̄, scale=s/√n)``.

    Returns:
        ``(low, high)``, or ``(None, None)`` when fewer than two values are given (the
        spread is unknown) or when they are all equal: s = 0 would give the zero-width
        interval [x̄, x̄], a certainty no sample gives (four cases all scored 3 say little
        about the fifth). scipy's ``t.interval`` is undefined (nan) there too.
    """
    check_confidence(confidence)
    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n < 2 or float(data.min()) == float(data.max()):
        return (None, None)
    centre = float(data.mean())
    half = t_quantile((1.0 + confidence) / 2.0, n - 1) * float(data.std(ddof=1)) / sqrt(n)
    return (centre - half, centre + half)


def bootstrap_mean_interval(
    values: Values, *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Interval:
    """Percentile bootstrap confidence interval for a mean.

    Draws ``resamples`` samples of size n with replacement from ``values``, takes each
    sample's mean, and returns the (1 − c)/2 and (1 + c)/2 quantiles of those means
    (``numpy.quantile``, linear interpolation). Reference: B. Efron & R. Tibshirani
    (1993), "An Introduction to the Bootstrap", ch. 13 (the percentile interval).

    Two exactly equivalent resampling schemes are used, whichever is cheaper: when
    there are few distinct values (rating scales, 0/1 data: at most n/8 distinct), each
    resample's counts of the distinct values are drawn from a multinomial with the
    observed frequencies (O(distinct values) per resample); otherwise case indices are
    drawn. Both process resamples in batches of at most ``CHUNK_BYTES`` working memory,
    so n = 1,000,000 needs ~64 MB, not resamples × n. Deterministic for a given seed.

    Returns:
        ``(low, high)``, or ``(None, None)`` for empty ``values`` or values all alike: every
        resample is then the sample, and the zero-width interval [x, x] would claim a
        certainty no sample gives (as ``t_interval``).

    Raises:
        ValueError: If ``resamples`` < 1 or ``confidence`` is not in (0, 1).
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    data = np.asarray(values, dtype=np.float64).ravel()
    if data.size == 0 or float(data.min()) == float(data.max()):
        return (None, None)
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(data, return_counts=True)
    if 8 * distinct.size <= data.size:
        means = resampled_means_from_counts(distinct, counts, resamples=resamples, rng=rng)
    else:
        means = resampled_means_from_indices(data, resamples=resamples, rng=rng)
    return percentile_interval(means, confidence=confidence)


def resampled_means_from_counts(
    distinct: FloatArray,
    counts: npt.NDArray[np.int64],
    *,
    resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Bootstrap means of data given as distinct values and their counts.

    A resample of n cases with replacement has, for each distinct value, a count that
    is jointly Multinomial(n, counts / n): the same distribution as resampling the
    cases themselves, at O(len(distinct)) cost per resample instead of O(n).
    """
    n = int(counts.sum())
    probabilities = counts / n
    chunk = _rows_per_chunk(2 * distinct.size)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        drawn = rng.multinomial(n, probabilities, size=size)
        means[start : start + size] = drawn @ distinct / n
    return means


def resampled_means_from_indices(
    data: FloatArray, *, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Bootstrap means by drawing case indices with replacement, in memory-bounded batches."""
    n = data.size
    chunk = _rows_per_chunk(2 * n)  # the indices and the gathered values
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        indices = rng.integers(0, n, size=(size, n))
        means[start : start + size] = data[indices].mean(axis=1)
    return means


def percentile_interval(samples: FloatArray, *, confidence: float) -> tuple[float, float]:
    """The (1 − c)/2 and (1 + c)/2 quantiles of a bootstrap distribution (linear interpolation)."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return (float(low), float(high))


def _rows_per_chunk(words_per_row: int) -> int:
    return max(1, CHUNK_BYTES // (8 * max(1, words_per_row)))


def check_confidence(confidence: float) -> None:
    """Raise ValueError unless 0 < confidence < 1."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")

"""Tests of one group of cases: a rate against a bar (the score test, Wilson's dual), and a
category's values against the other cases' (a permutation test, valid at any size and on
any scale; Welch's t test, the large-sample alternative). `stats.multiplicity` adjusts
their p-values over the categories. p-values are plain Python floats; ``None`` is a test
of no data.
"""

from collections.abc import Mapping, Sequence
from math import erfc, sqrt

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import CHUNK_BYTES, FloatArray
from judgecli.stats.special import t_cdf

TIE_TOLERANCE = 1e-9
"""A resampled statistic within this share of the data's total absolute deviation from the
mean of the observed one counts as reaching it: two ways of adding the same values differ
by rounding, and a tie must count (counting near-ties errs on the conservative side)."""


def proportion_test(successes: float, n: int, value: float) -> float | None:
    """Two-sided score test of H0: the proportion is ``value``.

    z = (p̂ − value) / √(value(1 − value)/n) with p̂ = successes / n, and
    p = 2·(1 − Φ(|z|)) = erfc(|z|/√2). It is the dual of the Wilson interval: ``value``
    lies outside ``wilson_interval(successes, n, confidence=1 − a)`` exactly when p < a.
    Reference: E. B. Wilson (1927), JASA 22(158); A. Agresti & B. A. Coull (1998),
    "Approximate is better than 'exact' for interval estimation of binomial proportions",
    Am. Statist. 52(2); matches ``statsmodels.stats.proportion.proportions_ztest(successes,
    n, value, prop_var=value)[1]``.

    ``successes`` may be fractional: a win rate with ties counted half uses
    ``wins + ties / 2``. Outcomes in [0, 1] with mean ``value`` have variance at most
    value(1 − value), the Bernoulli case; ties make it smaller, so with ties the test
    over-states the spread and is conservative (its p-values are too large, never too
    small).

    Args:
        successes: Number of successes (ties counting half), 0 ≤ successes ≤ n.
        n: Number of cases.
        value: The proportion under H0, strictly between 0 and 1.

    Returns:
        The p-value, or ``None`` when ``n`` is 0.

    Raises:
        ValueError: If ``value`` is not in (0, 1), ``n`` is negative or ``successes`` is
            outside [0, n].
    """
    if not 0.0 < value < 1.0:
        raise ValueError(f"value must be between 0 and 1 (exclusive), got {value}")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return None
    z = (successes / n - value) / sqrt(value * (1.0 - value) / n)
    return min(1.0, erfc(abs(z) / sqrt(2.0)))


def welch_test(group: Sequence[float], rest: Sequence[float]) -> float | None:
    """Two-sided Welch t test that ``group`` and ``rest`` have the same mean.

    t = (x̄₁ − x̄₂) / √(s₁²/n₁ + s₂²/n₂) on the Welch–Satterthwaite degrees of freedom
    ν = (s₁²/n₁ + s₂²/n₂)² / ((s₁²/n₁)²/(n₁ − 1) + (s₂²/n₂)²/(n₂ − 1)), the variances
    not assumed equal. Reference: B. L. Welch (1947), "The generalization of 'Student's'
    problem when several different population variances are involved", Biometrika
    34(1–2); matches ``scipy.stats.ttest_ind(group, rest, equal_var=False).pvalue``.

    This is the large-sample test. For small samples of a discrete scale the t
    distribution is only approximate, worst far in the tail: 10 scores on a 1–5 scale get
    p < 0.005 up to ~1.6 times as often as they should (the simulation in
    tests/unit/stats/test_multiplicity.py), which matters once Holm compares the smallest
    of ten p-values with 0.005; ``permutation_test`` is valid at any size.

    Returns:
        The p-value, or ``None`` when either side has fewer than two values (its spread is
        unknown) or neither side varies (t is 0/0 or ±∞; scipy gives nan or 0).

    Raises:
        ValueError: If a value is not finite.
    """
    a = _finite(group)
    b = _finite(rest)
    if a.size < 2 or b.size < 2:
        return None
    va = float(a.var(ddof=1)) / a.size
    vb = float(b.var(ddof=1)) / b.size
    if va + vb == 0.0:
        return None
    t = (float(a.mean()) - float(b.mean())) / sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return min(1.0, 2.0 * t_cdf(-abs(t), df))


def permutation_test(
    group: Sequence[float], rest: Sequence[float], *, resamples: int = 1999, seed: int = 0
) -> float | None:
    """Two-sided Monte Carlo permutation test that ``group`` is a random subset of all cases.

    H0: the cases of ``group`` and ``rest`` are exchangeable (which group a case is in does
    not matter). The statistic is |Σ group − n·x̄|, n times the distance of the group's mean
    from the mean x̄ of all N = len(group) + len(rest) values (equivalently the group's sum,
    the total being fixed). ``resamples`` subsets of n of the N values are drawn at random
    without replacement, and p = (1 + b) / (resamples + 1), b the number whose statistic
    reaches the observed one (within ``TIE_TOLERANCE``). Counting the observed arrangement
    as one of the draws makes the test valid for any number of resamples: P(p ≤ u) ≤ u
    under H0 for every u. Reference: B. Phipson & G. K. Smyth (2010), "Permutation
    p-values should never be zero: calculating exact p-values when permutations are
    randomly drawn", Stat. Appl. Genet. Mol. Biol. 9(1), article 39.

    The test is exact in the conditional sense: given the values observed, under H0 every
    split of them is equally likely, so no normality or large-sample approximation is
    needed, and scores in few distinct values (a 1–5 scale) only make it conservative
    (ties). The smallest p-value is 1 / (resamples + 1), 0.0005 at the default; Holm over
    m tests at level α can only mark when it is below α/m, so resamples must exceed m/α
    (at 199, 10 × 1/200 = 0.05: ten categories could never be marked at α = 0.05).

    Cost O(resamples × N), or O(resamples × distinct values) when there are few distinct
    values (see ``permutation_tests``), in batches of at most ``CHUNK_BYTES`` working
    memory; 2,000 cases and 1,999 resamples take ~0.06 s (~0.01 s for 1–5 scores).
    Deterministic for a given seed. It is ``permutation_tests`` with the two groups (same
    seed, same p-value).

    Returns:
        The p-value, or ``None`` when either side is empty or all values are equal.

    Raises:
        ValueError: If a value is not finite or ``resamples`` < 1.
    """
    return permutation_tests({"group": group, "rest": rest}, resamples=resamples, seed=seed)[
        "group"
    ]


def permutation_tests(
    groups: Mapping[str, Sequence[float]], *, resamples: int = 1999, seed: int = 0
) -> dict[str, float | None]:
    """``permutation_test`` of each group against all the other groups' values pooled.

    One random reshuffle of all cases among the groups (their sizes kept) serves every
    group's test, so ten categories cost about what one does. Each p-value is a valid
    permutation p-value on its own; the tests share their reshuffles and so depend on
    each other, which Holm's control of the family-wise error rate allows (any
    dependence).

    When there are few distinct values, at most N / 10 hypergeometric draws per reshuffle
    ((groups − 1) × (distinct values − 1): 1–5 scores in ten categories from 360 cases on),
    the counts of each distinct value falling to each group are drawn directly
    (sequential multivariate hypergeometric draws: exactly the distribution a reshuffle
    gives, at a cost independent of N); otherwise each reshuffle permutes the N values.

    Args:
        groups: Group name → its values (e.g. the scores of one category's cases).
        resamples: Number of random reshuffles (at least 1).
        seed: Seed of the one random stream all the tests share.

    Returns:
        Group name → p-value, in the order of ``groups``; ``None`` for an empty group, a
        group holding every value (no rest to compare with), or when all values are equal.

    Raises:
        ValueError: If a value is not finite or ``resamples`` < 1.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    arrays = {name: _finite(values) for name, values in groups.items()}
    result: dict[str, float | None] = dict.fromkeys(arrays)
    blocks = {name: a for name, a in arrays.items() if a.size > 0}
    if len(blocks) < 2:
        return result  # no group has a rest to compare with
    values = np.concatenate(list(blocks.values()))
    sizes = np.array([a.size for a in blocks.values()], dtype=np.int64)
    if values.min() == values.max():
        return result
    rng = np.random.default_rng(seed)
    distinct, inverse = np.unique(values, return_inverse=True)
    centred = distinct - values.mean()
    draws = (sizes.size - 1) * (distinct.size - 1)
    if 10 * draws <= values.size:
        labels = np.repeat(np.arange(sizes.size), sizes)
        counts = np.zeros((sizes.size, distinct.size), dtype=np.int64)
        np.add.at(counts, (labels, inverse), 1)
        observed = counts @ centred
        sums = _reshuffled_sums_from_counts(centred, counts.sum(axis=0), sizes, resamples, rng)
    else:
        observed = np.add.reduceat(centred[inverse], _starts(sizes))
        sums = _reshuffled_sums_from_values(centred[inverse], sizes, resamples, rng)
    tolerance = TIE_TOLERANCE * float(np.abs(centred[inverse]).sum())
    reached = np.count_nonzero(np.abs(sums) >= np.abs(observed) - tolerance, axis=0)
    for name, b in zip(blocks, reached, strict=True):
        result[name] = (1.0 + float(b)) / (resamples + 1.0)
    return result


def _starts(sizes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Where each of the consecutive blocks of these (positive) sizes starts."""
    return np.concatenate(([0], np.cumsum(sizes)[:-1]))


def _reshuffled_sums_from_values(
    values: FloatArray, sizes: npt.NDArray[np.int64], resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Sums of consecutive blocks of ``sizes`` values in random permutations of ``values``.

    Returns a resamples × blocks array: row r holds the block sums of the r-th permutation
    (a uniformly random split of the values into blocks of these sizes).
    """
    starts = _starts(sizes)
    chunk = max(1, CHUNK_BYTES // (8 * values.size))
    sums = np.empty((resamples, sizes.size), dtype=np.float64)
    for first in range(0, resamples, chunk):
        rows = min(chunk, resamples - first)
        shuffled = np.tile(values, (rows, 1))
        rng.permuted(shuffled, axis=1, out=shuffled)
        sums[first : first + rows] = np.add.reduceat(shuffled, starts, axis=1)
    return sums


def _reshuffled_sums_from_counts(
    distinct: FloatArray,
    counts: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """The same block sums, for values given as distinct values and their counts.

    In a random split of the values into blocks of ``sizes``, the first block's counts of
    the distinct values are multivariate hypergeometric (``sizes[0]`` drawn without
    replacement from ``counts``): the count of the first distinct value is
    Hypergeometric(its count, the other values' count, sizes[0]), the next one's given it
    likewise from what is left, and so on. The next block draws the same way from what the
    first left, and the last block takes the remainder: O(blocks × distinct values) per
    resample instead of O(N).
    """
    blocks, kinds = sizes.size, distinct.size
    chunk = max(1, CHUNK_BYTES // (8 * (3 * kinds + blocks)))
    sums = np.empty((resamples, blocks), dtype=np.float64)
    for first in range(0, resamples, chunk):
        rows = min(chunk, resamples - first)
        left = np.tile(counts, (rows, 1))  # per resample, the values not yet dealt out
        for k in range(blocks - 1):
            drawn = np.empty_like(left)
            wanted = np.full(rows, sizes[k], dtype=np.int64)
            others = left.sum(axis=1)
            for d in range(kinds - 1):
                others -= left[:, d]
                drawn[:, d] = rng.hypergeometric(left[:, d], others, wanted)
                wanted -= drawn[:, d]
            drawn[:, -1] = wanted
            left -= drawn
            sums[first : first + rows, k] = drawn @ distinct
        sums[first : first + rows, -1] = left @ distinct
    return sums


def _finite(values: Sequence[float]) -> FloatArray:
    data = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(data)):
        raise ValueError("values must be finite numbers (no nan or inf)")
    return data

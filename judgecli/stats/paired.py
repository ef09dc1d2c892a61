"""Paired tests of B against A on the same cases: sign, paired t, Wilcoxon signed-rank, McNemar.

Each returns a two-sided p-value as a plain Python float (JSON-ready), or ``None`` when the
data cannot say anything (no informative pair), so a report can print "n/a" instead of
``nan``. Differences are B − A, one per case.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from math import erfc, sqrt

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray, Interval, t_interval
from judgecli.stats.special import binom_cdf, t_cdf

# Above this many differences (zeros included) the Wilcoxon test uses the normal
# approximation, as scipy.stats.wilcoxon(method="auto") does.
WILCOXON_EXACT_MAX = 50
# With ties or zeros scipy enumerates all 2ⁿ sign flips only up to this n (2¹³ ≤ its default
# 9,999 resamples); between this and WILCOXON_EXACT_MAX it uses the normal approximation.
WILCOXON_TIES_EXACT_MAX = 13


def sign_test(wins: int, losses: int) -> float | None:
    """Exact two-sided sign test of "B beats A as often as A beats B".

    Under H0 the number of wins among the k = wins + losses decided pairs is
    Binomial(k, ½), so p = min(1, 2·P(X ≤ min(wins, losses))). Ties carry no information
    about the direction and are left out by the caller (report them beside the p-value).
    Reference: W. J. Dixon & A. M. Mood (1946), "The statistical sign test", JASA 41(236);
    matches ``scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue`` and
    ``statsmodels.stats.descriptivestats.sign_test``.

    Args:
        wins: Pairs in which B beat A.
        losses: Pairs in which A beat B.

    Returns:
        The p-value, or ``None`` when no pair was decided (wins + losses = 0).

    Raises:
        ValueError: If a count is negative or not a whole number.
    """
    _check_count("wins", wins)
    _check_count("losses", losses)
    decided = int(wins) + int(losses)
    if decided == 0:
        return None
    return min(1.0, 2.0 * binom_cdf(min(int(wins), int(losses)), decided, 0.5))


@dataclass(frozen=True)
class PairedT:
    """A paired t test of the mean difference B − A against 0.

    Attributes:
        n: Number of pairs.
        mean: Mean difference, ``None`` when ``n`` is 0.
        ci: Student t interval of the mean difference (``t_interval``); ``(None, None)``
            for fewer than two pairs or when every difference is the same.
        p_value: Two-sided p-value of H0: mean difference = 0; ``None`` exactly when
            ``ci`` is undefined.
    """

    n: int
    mean: float | None
    ci: Interval
    p_value: float | None


def paired_t(differences: Sequence[float], *, confidence: float = 0.95) -> PairedT:
    """Paired (one-sample) Student t test on per-case differences B − A.

    t = d̄ / (s/√n) with s the sample standard deviation (ddof=1), on n − 1 degrees of
    freedom; p = 2·P(T ≥ |t|). Reference: "Student" (1908), "The probable error of a
    mean", Biometrika 6(1); matches ``scipy.stats.ttest_rel(b, a)`` and
    ``scipy.stats.ttest_1samp(differences, 0)``.

    When every difference is the same (s = 0) the p-value is ``None``, like the interval:
    scipy gives nan (all differences 0) or p = 0 (all equal and non-zero, t = ±∞), and a
    p of 0 from, say, three cases that each gained exactly one point is a certainty no
    sample gives.

    Args:
        differences: One difference B − A per case.
        confidence: Coverage of the two-sided interval.

    Raises:
        ValueError: If ``confidence`` is not in (0, 1) or a difference is not finite.
    """
    data = _finite(differences)
    ci = t_interval(data, confidence=confidence)
    n = int(data.size)
    if n == 0:
        return PairedT(n=0, mean=None, ci=ci, p_value=None)
    centre = float(data.mean())
    if ci == (None, None):
        return PairedT(n=n, mean=centre, ci=ci, p_value=None)
    t = centre / (float(data.std(ddof=1)) / sqrt(n))
    p = min(1.0, 2.0 * t_cdf(-abs(t), n - 1))
    return PairedT(n=n, mean=centre, ci=ci, p_value=p)


def wilcoxon_signed_rank(differences: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank test of H0: differences symmetric about 0.

    Zero differences are dropped (Wilcoxon's own ``zero_method="wilcox"``); the m non-zero
    |differences| are ranked, tied ones sharing their average rank, and the statistic is
    R⁺, the sum of the ranks of the positive ones. The p-value is computed as
    ``scipy.stats.wilcoxon(differences)`` with its defaults does in scipy 1.17
    (``method="auto"``, no continuity correction; older versions treat ties and zeros
    differently):

    - n ≤ 50 differences (zeros included), no ties and no zeros: exact, from the null
      distribution of R⁺ over all 2ᵐ sign patterns;
    - n ≤ 13 with ties or zeros: the same exact sign-flip distribution, built on the
      average ranks (scipy's exhaustive permutation test);
    - otherwise (n > 50, or ties/zeros with 13 < n ≤ 50): normal approximation,
      z = (R⁺ − m(m+1)/4) / √((m(m+1)(2m+1) − Σ(t³ − t)/2) / 24) with t the sizes of the
      groups of tied |differences|.

    Exact p-values are 2·min(P(R⁺ ≤ r), P(R⁺ ≥ r)), capped at 1. The distribution is
    counted exactly (in integers) rather than taken from scipy, which needs no
    ``scipy.stats`` import and gives the same numbers. Reference: F. Wilcoxon (1945),
    "Individual comparisons by ranking methods", Biometrics Bulletin 1(6); the tie
    correction from J. W. Pratt (1959), JASA 54(287).

    Args:
        differences: One difference B − A per case.

    Returns:
        The p-value, or ``None`` when no difference is non-zero.

    Raises:
        ValueError: If a difference is not finite.
    """
    data = _finite(differences)
    nonzero = data[data != 0.0]
    m = int(nonzero.size)
    if m == 0:
        return None
    magnitudes = np.abs(nonzero)
    distinct, inverse, tie_sizes = np.unique(magnitudes, return_inverse=True, return_counts=True)
    # Average rank of each group of ties, doubled so every rank is a whole number:
    # a group of t ties starting after c smaller values has ranks c+1 … c+t, average
    # c + (t + 1)/2, doubled 2c + t + 1.
    below = np.concatenate(([0], np.cumsum(tie_sizes)[:-1]))
    doubled_ranks = (2 * below + tie_sizes + 1)[inverse]
    doubled_r_plus = int(doubled_ranks[nonzero > 0].sum())
    has_ties = distinct.size < m
    has_zeros = m < data.size
    exact = data.size <= WILCOXON_EXACT_MAX and (
        not (has_ties or has_zeros) or data.size <= WILCOXON_TIES_EXACT_MAX
    )
    if exact:
        return _signed_rank_exact_p(doubled_ranks, doubled_r_plus)
    mean_r_plus = m * (m + 1) / 4.0
    ties = tie_sizes.astype(np.float64)
    variance = (m * (m + 1) * (2 * m + 1) - float(np.sum(ties**3 - ties)) / 2.0) / 24.0
    z = (doubled_r_plus / 2.0 - mean_r_plus) / sqrt(variance)
    return min(1.0, erfc(abs(z) / sqrt(2.0)))


def _signed_rank_exact_p(doubled_ranks: npt.NDArray[np.int64], doubled_r_plus: int) -> float:
    """2·min(P(R⁺ ≤ r), P(R⁺ ≥ r)) under random signs, counting all 2ᵐ sign patterns.

    ``counts[s]`` is the number of sign patterns whose doubled R⁺ is s (a subset-sum count,
    built one rank at a time). With m ≤ 50 the counts stay below 2⁵⁰, exact in int64.
    """
    total = int(doubled_ranks.sum())
    counts = np.zeros(total + 1, dtype=np.int64)
    counts[0] = 1
    for rank in (int(r) for r in doubled_ranks):
        counts[rank:] = counts[rank:] + counts[: total + 1 - rank]
    patterns = float(2 ** int(doubled_ranks.size))
    at_most = float(counts[: doubled_r_plus + 1].sum()) / patterns
    at_least = float(counts[doubled_r_plus:].sum()) / patterns
    return min(1.0, 2.0 * min(at_most, at_least))


def discordant(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int]:
    """Discordant pairs of two paired pass/fail records: (passed in A only, passed in B only).

    Raises:
        ValueError: If ``a`` and ``b`` differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"need one outcome per case in both, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return (only_a, only_b)


def mcnemar_exact(only_a: int, only_b: int) -> float | None:
    """Exact McNemar test that A and B pass equally often on the same cases.

    Only the discordant pairs inform: under H0 a case that passed in exactly one of A, B
    is equally likely to be either, so ``only_b`` ~ Binomial(only_a + only_b, ½) and the
    two-sided p is that of the sign test on them. Reference: Q. McNemar (1947), "Note on
    the sampling error of the difference between correlated proportions or percentages",
    Psychometrika 12(2); A. Agresti (2013), "Categorical Data Analysis", 3rd ed., §11.1;
    matches ``statsmodels.stats.contingency_tables.mcnemar([[both, only_a], [only_b,
    neither]], exact=True).pvalue``.

    Args:
        only_a: Cases that passed in A and failed in B.
        only_b: Cases that failed in A and passed in B.

    Returns:
        The p-value, or ``None`` when there is no discordant pair.

    Raises:
        ValueError: If a count is negative or not a whole number.
    """
    _check_count("only_a", only_a)
    _check_count("only_b", only_b)
    return sign_test(only_b, only_a)


def _check_count(name: str, value: int) -> None:
    if value < 0 or value != int(value):
        raise ValueError(f"{name} must be a whole number >= 0, got {value}")


def _finite(values: Sequence[float]) -> FloatArray:
    data = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(data)):
        raise ValueError("differences must be finite numbers (no nan or inf)")
    return data

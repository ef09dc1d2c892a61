"""Special functions the tests of significance need: Student t CDF and quantile, binomial
CDF, and the logistic function.

They replace ``scipy.special`` (``stdtr``, ``stdtrit``, ``bdtr``, ``expit``): importing it
costs ~0.15 s (and numpy.f2py, through scipy's array_api_compat), paid on every run for
four small functions. These use only ``math`` (and numpy for ``expit``, whose caller passes
arrays). Against 40-digit references (mpmath, exact binomial sums) they are good to a
relative 5e-14 for values above 1e-15 and 4e-13 in tails down to 1e-300, df from 0.1 to
1e15, binomial n up to 100,000; scipy 1.17 itself is off by up to 2e-10 (``bdtr`` near the
centre at n = 100,000) and 3e-9 (``stdtr`` at df = 1, |t| = 1e-8).
tests/unit/stats/test_special.py checks them against scipy, closed forms and exact sums.

Both distributions reduce to the regularized incomplete beta function I_x(a, b),
evaluated by its continued fraction (W. H. Press et al., "Numerical Recipes", 3rd ed.,
§6.4). Its prefactor x^a (1 − x)^b / B(a, b) is where precision is lost for large a, b:
``lgamma(a) + lgamma(b) − lgamma(a + b)`` cancels (lgamma(5e6) ≈ 7e7, so its rounding
alone is a relative 1e-8 in the prefactor). It is computed instead as a binomial density
with Stirling-series errors and the deviance ``bd0``, after C. Loader (2000), "Fast and
accurate computation of binomial probabilities" (the method of R's ``dbinom``). The t
distribution with large df has its own expansion (``_beta_half_large_a``).

Invalid parameters (df ≤ 0, n < 0, a probability outside [0, 1], nan) give nan, as the
scipy functions do.
"""

import functools
import math
import sys
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

EPSILON = sys.float_info.epsilon
NORMAL_DF = 1.0 / EPSILON
"""Above this many degrees of freedom the t distribution is taken as the normal one, as
Boost (behind scipy) does: the two then differ by less than the rounding of the result."""
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
STIRLING_SERIES = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)
"""Coefficients of δ(n) = 1/(12n) − 1/(360n³) + 1/(1260n⁵) − 1/(1680n⁷) + 1/(1188n⁹) − …"""
TINY = 1e-300
"""Lentz's guard against dividing by zero in the continued fraction."""
LARGE_DF = 1000.0
"""From here on the t CDF uses the BGRAT expansion instead of the continued fraction, whose
error grows like df·ε (it reads 1 − x, of order t²/df, out of x ≈ 1): 5e-12 at df = 1e5,
3e-10 at 1e7. BGRAT needs at most ~12 terms here; at df = 100 it would need ~30."""
BGRAT_TERMS = 40
MAX_REFINEMENTS = 200
"""Steps of the quantile's refinement; two or three suffice from Hill's start, the rest is
room for bisection should a step ever leave the bracket."""


def expit(x: FloatArray) -> FloatArray:
    """The logistic function 1 / (1 + e^(−x)), elementwise.

    Written with e^(−|x|), which never overflows: the textbook form warns (and the test
    suite turns warnings into errors) for x < −709.
    """
    e = np.exp(-np.abs(x))
    return np.asarray(np.where(x >= 0, 1.0, e) / (1.0 + e), dtype=np.float64)


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t distribution with ``df`` degrees of freedom.

    Equals ``scipy.special.stdtr(df, t)``. With x = df/(df + t²),
    P(T ≤ −|t|) = I_x(df/2, ½)/2. x and 1 − x are formed from t²/df or df/t², whichever is
    at most 1, so neither loses digits to the other and t² cannot overflow. From df = 1000
    on, I_x(df/2, ½) comes from the BGRAT expansion; beyond 1/ε, from the normal CDF.
    Where |t| > 1e8·√df the tail is its leading term, so df = 1 and t = −1e200 give 3e-201
    (stdtr gives 0 beyond |t| ≈ 1e154).
    """
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    if df > NORMAL_DF:
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    if t == 0:
        return 0.5
    if abs(t) <= math.sqrt(df):
        s = (t / df) * t
        x, y = 1.0 / (1.0 + s), s / (1.0 + s)
    else:
        r = (df / t) / t
        x, y = r / (1.0 + r), 1.0 / (1.0 + r)
    # I_x(df/2, ½) = P(|T| > |t|).
    if x < EPSILON:
        # Far out (x may even underflow): I_x(a, b) = x^a/(a·B(a, b))·(1 + O(x)), in logs.
        a = 0.5 * df
        log_x = math.log(df) - 2.0 * math.log(abs(t))
        log_beta = 0.5 * math.log(math.pi / a) - _log_gamma_ratio_half(a)
        tail = 0.5 * math.exp(a * log_x - math.log(a) - log_beta)
    elif df >= LARGE_DF:
        tail = 0.5 * _beta_half_large_a(0.5 * df, x, y)
    else:
        tail = 0.5 * incomplete_beta(0.5 * df, 0.5, x, y)
    return tail if t < 0 else 1.0 - tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T ≤ t) = p for Student's t distribution with ``df`` degrees of freedom.

    Equals ``scipy.special.stdtrit(df, p)`` for 0 < p < 1; p = 0 gives −∞ (scipy 1.17
    gives +∞ there). G. W. Hill's approximation (1970, "Algorithm 396: Student's
    t-quantiles", CACM 13(10)) is refined by second-order Taylor steps on ``t_cdf`` (Hill's
    1981 remark on it; the method of R's ``qt``); a bracket of the root turns any step
    that leaves it into a bisection. The tail probability min(p, 1 − p) is exact in
    floating point, so both tails keep every digit.
    """
    if math.isnan(p) or math.isnan(df) or df <= 0 or not 0.0 <= p <= 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    if p == 0.5:
        return 0.0
    if df > NORMAL_DF:
        return NormalDist().inv_cdf(p)
    tail = min(p, 1.0 - p)
    q = _upper_tail_quantile(tail, df)
    return q if p > 0.5 else -q


def binom_cdf(k: float, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p): I_{1−p}(n − k, k + 1) for 0 ≤ k < n.

    Equals ``scipy.special.bdtr(k, n, p)`` (k rounded down, as there) for 0 ≤ k ≤ n; for
    k < 0 it is 0 and for k > n it is 1, where bdtr gives nan.
    """
    if math.isnan(k) or math.isnan(p) or n < 0 or not 0.0 <= p <= 1.0:
        return math.nan
    k = math.floor(k)
    if k < 0:
        return 0.0
    if k >= n or p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    return incomplete_beta(n - k, k + 1.0, 1.0 - p, p)


def incomplete_beta(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularized incomplete beta function I_x(a, b) (``scipy.special.betainc``).

    Args:
        a: First shape parameter, > 0.
        b: Second shape parameter, > 0.
        x: Where to evaluate, in [0, 1].
        y: 1 − x, when the caller knows it more accurately than ``1 - x`` would be (x
            near 1: the t and binomial tails pass the small one of the pair exactly).
    """
    if y is None:
        y = 1.0 - x
    if any(math.isnan(v) for v in (a, b, x, y)) or a <= 0 or b <= 0 or not 0.0 <= x <= 1.0:
        return math.nan
    if x == 0.0 or y == 0.0:
        return 0.0 if x == 0.0 else 1.0
    # a − (a + b)x, the distance of a from its mean, from whichever of x, y is the small,
    # exact one: near the centre its rounding decides the prefactor's last digits.
    gap = (a + b) * y - b if y <= x else a - (a + b) * x
    # The continued fraction converges fast only below the mean (Numerical Recipes
    # §6.4); above it, I_x(a, b) = 1 − I_{1−x}(b, a), which is then above the mean.
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _lower_incomplete_beta(b, a, y, x, -gap)
    return _lower_incomplete_beta(a, b, x, y, gap)


def _lower_incomplete_beta(a: float, b: float, x: float, y: float, gap: float) -> float:
    """I_x(a, b) by its continued fraction, for x at most about the mean (a + 1)/(a + b + 2)."""
    prefix = _beta_prefix(a, b, x, y, gap)
    if prefix == 0.0:
        return 0.0
    return prefix * _beta_continued_fraction(a, b, x, gap) / a


def _beta_continued_fraction(a: float, b: float, x: float, gap: float) -> float:
    """The continued fraction of I_x(a, b) by the modified Lentz method (NR ``betacf``).

    Its first denominator 1 − (a + b)x/(a + 1) is (1 + gap)/(a + 1) exactly: near the
    mean it is ~1/a, which ``1 - (a + b) * x / (a + 1)`` would give to only ~a ulp. Terms
    needed grow like √max(a, b) at the mean (~200 for a = b = 50,000), far fewer elsewhere.
    """
    d = (1.0 + gap) / (a + 1.0)
    d = 1.0 / max(d, TINY)
    c = 1.0
    h = d
    max_terms = 1000 + int(10 * math.sqrt(max(a, b)))
    for m in range(1, max_terms):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) >= TINY else TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) >= TINY else TINY
            h *= d * c
        if abs(d * c - 1.0) <= EPSILON / 2:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def _beta_prefix(a: float, b: float, x: float, y: float, gap: float) -> float:
    """x^a y^b / B(a, b), with y = 1 − x and gap = a − (a + b)x.

    It is (ab/n)·C(n; a)·x^a y^b with n = a + b, and Loader's saddle-point form of that
    binomial density is exact: C(n; a) x^a y^b = √(n / 2πab) · exp(δ(n) − δ(a) − δ(b) −
    bd0(a, nx) − bd0(b, ny)), every term small or computed without cancellation.
    """
    n = a + b
    exponent = (
        _stirling_error(n)
        - _stirling_error(a)
        - _stirling_error(b)
        - _deviance(a, n * x, gap)
        - _deviance(b, n * y, -gap)
    )
    return math.sqrt(a * b / (2.0 * math.pi * n)) * math.exp(exponent)


def _beta_half_large_a(a: float, x: float, y: float) -> float:
    """I_x(a, ½) for large a by the BGRAT expansion of A. R. DiDonato & A. H. Morris (1992),
    "Algorithm 708: significant digit computation of the incomplete beta function ratios",
    ACM TOMS 18(3), eqs. 9–9.6 (as Boost's ``beta_small_b_large_a_series``).

    With T = a − ¼ and u = −T ln x, I_x(a, ½) = Γ(a + ½)/(Γ(a)√T) · (Q(½, u) + h·Σ pₙJₙ),
    where Q(½, u) = erfc(√u) and h = √u e^(−u)/√π. Everything is read from ln x =
    log1p(−y), so 1 − x keeps its digits; the terms fall like (ln x / 2π)^(2n).
    """
    t = a - 0.25
    log_x = math.log1p(-y) if y < 0.35 else math.log(x)
    u = -t * log_x
    ratio = math.exp(_log_gamma_ratio_half(a) - 0.5 * math.log1p(-0.25 / a))  # ÷ √(T/a)
    q = math.erfc(math.sqrt(u))
    h = math.sqrt(u / math.pi) * math.exp(-u)
    if h == 0.0:
        return ratio * q  # u > ~745: the sum's terms are below the smallest double
    j = q / h  # J₀, then Jₙ from Jₙ₋₁ (eq. 9.6)
    total = 0.0
    power = 1.0  # (ln x / 2)^(2(n−1))
    for n, p in enumerate(_bgrat_coefficients(), start=1):
        j = ((2 * n - 1.5) * (2 * n - 0.5) * j + (u + 2 * n - 0.5) * power) / (4.0 * t * t)
        power *= (0.5 * log_x) ** 2
        term = p * j
        total += term
        if abs(h * term) <= EPSILON / 4 * q or term == 0.0:
            return ratio * (q + h * total)
    raise ArithmeticError(f"BGRAT did not converge for a={a}, x={x}")


@functools.cache
def _bgrat_coefficients() -> tuple[float, ...]:
    """p₁, p₂, … of BGRAT for b = ½ (DiDonato & Morris eq. 9.4), p₀ = 1:
    pₙ = (b − 1)/(2n + 1)! + (1/n) Σₘ₌₁ⁿ⁻¹ (mb − n) pₙ₋ₘ / (2m + 1)!.
    """
    b = 0.5
    p = [1.0]
    for n in range(1, BGRAT_TERMS + 1):
        total = sum((m * b - n) * p[n - m] / math.factorial(2 * m + 1) for m in range(1, n))
        p.append(total / n + (b - 1.0) / math.factorial(2 * n + 1))
    return tuple(p[1:])


def _stirling_error(n: float) -> float:
    """δ(n) = ln Γ(n + 1) − (n + ½) ln n + n − ln √(2π), the error of Stirling's formula."""
    if n <= 15.0:
        # lgamma's rounding here is ~1e-14 absolute: well inside the accuracy target.
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - LOG_SQRT_2PI
    # The series: with n > 15 its first omitted term is below 1e-16 (fewer terms as n grows).
    s0, s1, s2, s3, s4 = STIRLING_SERIES
    nn = n * n
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _deviance(x: float, mean: float, gap: float) -> float:
    """bd0(x, mean) = x ln(x/mean) + mean − x, with gap = x − mean given accurately.

    Near the mean the two terms cancel almost entirely, so bd0 is summed as the series
    2x·Σ v^(2j+1)/(2j+1) − gap with v = gap/(x + mean) (Loader 2000), which needs the
    gap to full precision rather than a difference of two rounded numbers.
    """
    if abs(gap) < 0.1 * (x + mean):
        v = gap / (x + mean)
        total = gap * v
        term = 2.0 * x * v
        v2 = v * v
        j = 1
        while True:
            term *= v2
            following = total + term / (2 * j + 1)
            if following == total:
                return total
            total = following
            j += 1
    # Far from the mean: ln(x/mean) as log1p(gap/mean) while the ratio is near 1, where
    # the quotient's rounding would count; −gap for mean − x, whichever side is small.
    ratio = x / mean
    log_ratio = math.log1p(gap / mean) if 0.5 <= ratio <= 2.0 else math.log(ratio)
    return x * log_ratio - gap


def _upper_tail_quantile(tail: float, df: float) -> float:
    """The q > 0 with P(T > q) = tail (tail < ½), refined from Hill's start."""
    q = _hill_start(2.0 * tail, df)
    low, high = 0.0, math.inf  # P(T > low) > tail > P(T > high)
    for _ in range(MAX_REFINEMENTS):
        excess = t_cdf(-q, df) - tail
        if excess == 0.0:
            return q
        if excess > 0:
            low = q
        else:
            high = q
        # excess / density, through logs: far out both underflow (df = 3, p = 1e-300 has a
        # density of 1e-400 at its quantile). A huge step is capped; the bracket takes it.
        log_step = math.log(abs(excess)) - _t_log_density(q, df)
        step = math.copysign(math.exp(min(log_step, 700.0)), excess)
        candidate = q + step * (1.0 + step * q * (df + 1.0) / (2.0 * (q * q + df)))
        if abs(candidate - q) <= 2.0 * EPSILON * q:
            return candidate
        if not low < candidate < high:
            # A step out of the bracket: bisect it (double q while it is unbounded above).
            candidate = 2.0 * q if math.isinf(high) else 0.5 * (low + high)
        q = candidate
    return q


def _hill_start(two_tail: float, df: float) -> float:
    """Hill's (1970) approximation of the q > 0 with P(|T| > q) = two_tail.

    Exact for df = 1 (Cauchy) and df = 2; elsewhere good to a few digits, which the
    refinement's third-order convergence then takes to full precision in two or three steps.
    Hill's formulas need df > ½; below 1 the Cauchy quantile starts the refinement.
    """
    if df <= 1.0:
        return 1.0 / math.tan(0.5 * math.pi * two_tail)
    if df == 2.0:
        return math.sqrt(2.0 / (two_tail * (2.0 - two_tail)) - 2.0)
    a = 1.0 / (df - 0.5)
    b = 48.0 / (a * a)
    c = ((20700.0 * a / b - 98.0) * a - 16.0) * a + 96.36
    d = ((94.5 / (b + c) - 3.0) / b + 1.0) * math.sqrt(a * math.pi / 2.0) * df
    log_y = 2.0 / df * math.log(d * two_tail)
    y = math.exp(log_y)
    if (df < 2.1 and two_tail > 0.5) or y > 0.05 + a:
        # Far from the tail: an expansion about the normal quantile.
        x = NormalDist().inv_cdf(0.5 * two_tail)
        y = x * x
        if df < 5:
            c += 0.3 * (df - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5.0) * x - 7.0) * x - 2.0) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36.0) * y + 94.5) / c - y - 3.0) / b + 1.0) * x
        return math.sqrt(df * math.expm1(a * y * y))
    if y < EPSILON:
        return math.sqrt(df) * math.exp(-0.5 * log_y)  # √(df/y), y too small to invert
    y = (
        (1.0 / (((df + 6.0) / (df * y) - 0.089 * d - 0.822) * (df + 2.0) * 3.0) + 0.5 / (df + 4.0))
        * y
        - 1.0
    ) * (df + 1.0) / (df + 2.0) + 1.0 / y
    return math.sqrt(df * y)


def _t_log_density(t: float, df: float) -> float:
    """The log of the t density Γ((df+1)/2) / (Γ(df/2)√(df π)) · (1 + t²/df)^(−(df+1)/2).

    For |t| above √df·1e150, t²/df would overflow: ln(1 + t²/df) is then 2 ln(|t|/√df).
    """
    u = abs(t) / math.sqrt(df)
    log_kernel = math.log1p(u * u) if u < 1e150 else 2.0 * math.log(u)
    return _log_gamma_ratio_half(0.5 * df) - LOG_SQRT_2PI - 0.5 * (df + 1.0) * log_kernel


def _log_gamma_ratio_half(z: float) -> float:
    """ln(Γ(z + ½) / (Γ(z)√z)), near 0 for large z, from Stirling errors: two lgamma calls
    would cancel to no digit at z = 1e15 (lgamma(z) ≈ 3e16). With ln Γ(z) = (z − ½) ln z −
    z + ln √(2π) + δ(z), it is z·ln(1 + 1/2z) − ½ + δ(z + ½) − δ(z).
    """
    return z * math.log1p(0.5 / z) - 0.5 + _stirling_error(z + 0.5) - _stirling_error(z)

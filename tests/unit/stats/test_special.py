"""Known answers for the special functions behind the t and sign tests (stats.special).

scipy.special (a test dependency, no longer a runtime one) gives most reference values;
closed forms (df = 1, 2), exact binomial sums and a few pinned 40-digit values stand where
scipy itself is off: ``stdtr(1, -1e-8)`` in the 9th digit, ``bdtr`` near the centre of
n = 100,000 in the 10th.
"""

import math
import subprocess
import sys
from collections.abc import Sequence
from decimal import Decimal, localcontext
from statistics import NormalDist

import numpy as np
import pytest
from scipy import special as scipy_special

from judgecli.stats.special import binom_cdf, expit, incomplete_beta, t_cdf, t_quantile

DFS = [1, 2, 3, 4.5, 10, 29, 30, 100, 1e3, 1e5, 1e7]
TS = sorted(
    {float(t) for t in np.linspace(-50.0, 50.0, 201)}
    | {s * v for s in (1.0, -1.0) for v in (1e-4, 0.01, 0.3, 1.7, 1.96, 2.2281388519862744)}
)
PS = [1e-12, 1e-6, 0.001, 0.025, 0.05, 0.1, 0.5, 0.9, 0.975, 0.999, 1 - 1e-9]
# A relative 1e-12, except below the normal doubles (t = -38.5 at df = 1e7 gives 1e-320,
# with a handful of significant bits).
REL, ABS = 1e-12, 1e-300

Checked = Sequence[tuple[object, float, float]]


def mismatches(pairs: Checked) -> Checked:
    """The (argument, ours, reference) triples not within REL (or ABS), for a readable failure."""
    return [(arg, ours, ref) for arg, ours, ref in pairs if ours != pytest.approx(ref, REL, ABS)]


# ---- Student t CDF -----------------------------------------------------------------------


@pytest.mark.parametrize("df", DFS, ids=str)
def test_t_cdf_matches_scipy_stdtr_from_minus_to_plus_fifty(df):
    pairs = [(t, t_cdf(t, df), float(scipy_special.stdtr(df, t))) for t in TS]
    assert mismatches(pairs) == []


def exact_t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) in closed form for df = 1 (Cauchy) and df = 2, written without cancellation."""
    if df == 1:
        tail = (
            math.atan(1.0 / abs(t)) / math.pi if abs(t) > 1 else 0.5 - math.atan(abs(t)) / math.pi
        )
    else:
        root = math.sqrt(2.0 + t * t)
        tail = 1.0 / (root * (root + abs(t)))  # ½(1 − |t|/√(2 + t²))
    return tail if t < 0 else 1.0 - tail


# scipy.special.stdtr(1, -1e-8) is 0.4999999952568131; the Cauchy CDF is 0.49999999681690...
@pytest.mark.parametrize("df", [1, 2])
@pytest.mark.parametrize(
    "t", [1e-12, 1e-8, 1e-4, 0.5, 1.0, 3.0, 1e3, 1e8, 1e40, 1e200], ids=lambda t: f"{t:g}"
)
def test_t_cdf_matches_the_closed_forms_for_one_and_two_df(df, t):
    assert t_cdf(-t, df) == pytest.approx(exact_t_cdf(-t, df), rel=1e-13)
    assert t_cdf(t, df) == pytest.approx(exact_t_cdf(t, df), rel=1e-15)


# Pinned from mpmath (40 digits): betainc(df/2, 1/2, 0, df/(df + t²), regularized=True)/2.
@pytest.mark.parametrize(
    ("t", "df", "expected"),
    [
        pytest.param(-2.0, 10, 0.03669401738537018, id="t=-2,df=10"),
        pytest.param(-1.96, 30, 0.02967115644802524, id="t=-1.96,df=30"),
        pytest.param(-2.5, 4.5, 0.029952843251100272, id="t=-2.5,df=4.5"),
        pytest.param(-3.0, 1e7, 0.0013499013555185806, id="t=-3,df=1e7"),
    ],
)
def test_t_cdf_matches_pinned_values(t, df, expected):
    assert t_cdf(t, df) == pytest.approx(expected, rel=1e-14)
    assert t_cdf(-t, df) == pytest.approx(1.0 - expected, rel=1e-15)


@pytest.mark.parametrize(
    ("t", "df"),
    [
        pytest.param(math.inf, 3, id="+inf"),
        pytest.param(-math.inf, 3, id="-inf"),
        pytest.param(0.0, 3, id="zero"),
        pytest.param(1.5, math.inf, id="df=inf-is-normal"),
        pytest.param(-2.0, 1e300, id="huge-df-is-normal"),
        pytest.param(-1e300, 0.5, id="df<1-far-out"),
    ],
)
def test_t_cdf_edge_values_are_scipys(t, df):
    assert t_cdf(t, df) == pytest.approx(float(scipy_special.stdtr(df, t)), rel=1e-15)


@pytest.mark.parametrize(
    ("t", "df"), [(math.nan, 3), (1.0, math.nan), (1.0, 0.0), (1.0, -2.0)], ids=str
)
def test_t_cdf_of_nan_or_nonpositive_df_is_nan_as_in_scipy(t, df):
    assert math.isnan(t_cdf(t, df))
    assert math.isnan(scipy_special.stdtr(df, t))


# ---- Student t quantile ------------------------------------------------------------------


@pytest.mark.parametrize("df", DFS, ids=str)
def test_t_quantile_matches_scipy_stdtrit(df):
    pairs = [(p, t_quantile(p, df), float(scipy_special.stdtrit(df, p))) for p in PS]
    assert mismatches(pairs) == []


# Textbook critical values (t tables: 12.706, 2.920, 4.032, 2.228, 2.042, 1.984), pinned
# from mpmath (40 digits) for the double nearest each p.
@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        pytest.param(0.975, 1, 12.706204736174694, id="t(.975,1)"),
        pytest.param(0.95, 2, 2.9199855803537242, id="t(.95,2)"),
        pytest.param(0.995, 5, 4.032142983555227, id="t(.995,5)"),
        pytest.param(0.975, 10, 2.2281388519862744, id="t(.975,10)"),
        pytest.param(0.975, 30, 2.0422724563012378, id="t(.975,30)"),
        pytest.param(0.975, 100, 1.9839715185235518, id="t(.975,100)"),
        pytest.param(0.975, math.inf, 1.959963984540054, id="z(.975)"),
    ],
)
def test_t_quantile_gives_the_table_values(p, df, expected):
    assert t_quantile(p, df) == pytest.approx(expected, rel=1e-14)
    assert t_quantile(1.0 - p, df) == pytest.approx(-expected, rel=1e-14)


@pytest.mark.parametrize("df", [0.5, 1, 1.5, 3, 29, 999, 1001, 1e5, 1e7, 1e12], ids=str)
def test_t_quantile_inverts_t_cdf_into_the_far_tails(df):
    for p in [1e-300, 1e-100, 1e-30, *PS]:
        assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, rel=1e-12), p


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        pytest.param(0.5, 7, 0.0, id="median"),
        # scipy 1.17's stdtrit(df, 0) is +inf; the 0-quantile is -inf.
        pytest.param(0.0, 7, -math.inf, id="p=0"),
        pytest.param(1.0, 7, math.inf, id="p=1"),
        pytest.param(0.975, 1e300, NormalDist().inv_cdf(0.975), id="huge-df-is-normal"),
    ],
)
def test_t_quantile_edge_values(p, df, expected):
    assert t_quantile(p, df) == expected


@pytest.mark.parametrize(
    ("p", "df"), [(-0.1, 3), (1.1, 3), (math.nan, 3), (0.9, 0.0), (0.9, math.nan)], ids=str
)
def test_t_quantile_outside_its_domain_is_nan_as_in_scipy(p, df):
    assert math.isnan(t_quantile(p, df))
    assert math.isnan(scipy_special.stdtrit(df, p))


# ---- binomial CDF ------------------------------------------------------------------------


def exact_binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k), X ~ Binomial(n, p) for the double p, summed term by term to 40 digits.

    The side of the mean that k is on is summed, so no digit is lost to 1 − (sum ≈ 1).
    """
    with localcontext() as context:
        context.prec = 40
        p_, q_ = Decimal(p), 1 - Decimal(p)
        total = Decimal(0)
        if k < n * p:
            term = q_**n
            for i in range(k + 1):
                total += term
                term = term * (n - i) / (i + 1) * p_ / q_
            return float(total)
        term = p_**n
        for i in range(n, k, -1):
            total += term
            term = term * i / (n - i + 1) * q_ / p_
        return float(1 - total)


BINOMIAL_CASES = (
    [
        (k, n, p)
        for n in (1, 2, 5, 10, 20, 50, 100, 1000, 10_000)
        for k in sorted({0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 1})
        for p in (0.5, 0.3, 0.01, 0.999)
        if 0 <= k < n
    ]
    + [
        # n = 100,000 around the centre, where scipy's bdtr is off in the 10th digit, and out
        # to where the p-value of a sign test is ~1e-10 (2.27 per cent from the centre).
        (k, 100_000, 0.5)
        for k in (47_000, 48_850, 49_500, 49_999, 50_000, 50_001, 51_000)
    ]
    + [(k, 100_000, 0.3) for k in (29_000, 29_999, 30_500)]
    # A rare event in many trials: 1 − p is rounded, p is not, and the distance of k from
    # the mean must come from p (from 1 − p it was off in the 11th digit).
    + [(k, 100_000, 1e-5) for k in (0, 1, 3)]
    + [(k, 10_000, 1e-4) for k in (0, 1, 3)]
)


def test_binom_cdf_matches_exact_sums():
    pairs = [
        ((k, n, p), binom_cdf(k, n, p), exact_binom_cdf(k, n, p)) for k, n, p in BINOMIAL_CASES
    ]
    assert mismatches(pairs) == []


@pytest.mark.parametrize("n", [1, 2, 3, 9, 20, 57, 100])
def test_binom_cdf_matches_scipy_bdtr_for_small_n(n):
    pairs = [
        ((k, n, p), binom_cdf(k, n, p), float(scipy_special.bdtr(k, n, p)))
        for k in range(n + 1)
        for p in (0.5, 0.05, 0.3, 0.7, 0.999)
    ]
    assert mismatches(pairs) == []


# Binomial(n, ½) counts over 2ⁿ: the sign test's p-values are twice these.
@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        pytest.param(0, 10, 1 / 1024, id="0-of-10"),
        pytest.param(2, 9, 46 / 512, id="2-of-9"),
        pytest.param(5, 20, 21700 / 2**20, id="5-of-20"),
        pytest.param(3, 6, 42 / 64, id="3-of-6"),
    ],
)
def test_binom_cdf_is_the_counted_share(k, n, expected):
    assert binom_cdf(k, n, 0.5) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize(
    ("k", "n", "p", "expected"),
    [
        pytest.param(10, 10, 0.5, 1.0, id="k=n"),
        pytest.param(3, 10, 0.0, 1.0, id="p=0"),
        pytest.param(3, 10, 1.0, 0.0, id="p=1"),
        pytest.param(10, 10, 1.0, 1.0, id="p=1,k=n"),
        pytest.param(0, 0, 0.5, 1.0, id="n=0"),
        pytest.param(3.7, 10, 0.5, 0.171875, id="k-rounds-down"),
    ],
)
def test_binom_cdf_edge_values_are_scipys(k, n, p, expected):
    assert binom_cdf(k, n, p) == pytest.approx(expected, rel=1e-14)
    assert float(scipy_special.bdtr(k, n, p)) == pytest.approx(expected, rel=1e-14)


def test_binom_cdf_outside_zero_to_n_is_zero_or_one_where_scipy_says_nan():
    assert binom_cdf(-1, 10, 0.5) == 0.0
    assert binom_cdf(11, 10, 0.5) == 1.0
    assert math.isnan(scipy_special.bdtr(-1, 10, 0.5))


@pytest.mark.parametrize(
    ("k", "n", "p"), [(3, 10, math.nan), (math.nan, 10, 0.5), (3, 10, 1.5), (3, -1, 0.5)], ids=str
)
def test_binom_cdf_of_invalid_parameters_is_nan(k, n, p):
    assert math.isnan(binom_cdf(k, n, p))


# ---- incomplete beta, logistic -----------------------------------------------------------


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 10.0, 100.0, 1e4, 1e6], ids=str)
def test_incomplete_beta_matches_scipy_betainc(a):
    pairs = [
        ((a, b, x), incomplete_beta(a, b, x), float(scipy_special.betainc(a, b, x)))
        for b in (0.5, 1.0, 2.5, 10.0, 100.0, 1e4)
        for x in (0.0, 1e-10, 0.01, 0.3, 0.5, 0.9, 0.999, 1.0 - 1e-10, 1.0)
    ]
    assert mismatches(pairs) == []


def test_expit_matches_scipy_without_overflow_warnings():
    x = np.concatenate([np.linspace(-800.0, 800.0, 1601), [0.0, np.inf, -np.inf, np.nan]])
    ours = expit(x)  # filterwarnings = error: an overflow in exp() would fail here
    assert ours.dtype == np.float64
    # Below x = -709 scipy's 1/(1 + e^(-x)) is 0 and ours e^x keeps a subnormal value.
    np.testing.assert_allclose(ours, scipy_special.expit(x), rtol=1e-15, atol=1e-300)
    assert ours[x == 0.0][0] == 0.5


# ---- no scipy at run time ----------------------------------------------------------------


def test_the_t_and_sign_tests_neither_import_nor_call_into_scipy():
    # scipy.special alone costs ~0.15 s to import, once paid on every `judge score` run.
    # The tests are run too: the scipy imports they replaced were lazy, inside them.
    code = """
import sys
from judgecli.stats import bradley_terry, group_tests, intervals, paired, special
intervals.t_interval([1.0, 2.0, 4.0])
paired.sign_test(3, 9)
paired.paired_t([0.5, 1.0, -0.25, 2.0])
group_tests.welch_test([1.0, 2.0, 4.0], [2.0, 3.0, 5.0, 5.0])
comparisons = bradley_terry.Comparisons.of([0, 1], [1, 2], [1.0, 0.5], n_systems=3)
bradley_terry.fit_bradley_terry(comparisons)
print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"

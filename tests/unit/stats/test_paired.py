import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.descriptivestats import sign_test as statsmodels_sign_test

from judgecli.stats.paired import (
    PairedT,
    discordant,
    mcnemar_exact,
    paired_t,
    sign_test,
    wilcoxon_signed_rank,
)

# Student's sleep data (Cushny & Peebles 1905, as analysed by "Student" 1908; R's `sleep`):
# extra hours of sleep of ten patients under drug A and drug B.
SLEEP_A = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_B = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
SLEEP_D = list(np.subtract(SLEEP_B, SLEEP_A))  # one zero, one pair of ties (1.3, 1.3)

# Darwin's Zea mays data (Fisher 1935, "The Design of Experiments"), the example of the
# scipy.stats.wilcoxon documentation: height differences of cross- and self-fertilised pairs.
DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def scipy_wilcoxon(d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # older scipy warns about zeros and ties
        return float(stats.wilcoxon(d).pvalue)


# ---- sign test -------------------------------------------------------------------------


# Pinned from scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue (scipy 1.17.1).
@pytest.mark.parametrize(
    ("wins", "losses", "expected"),
    [
        pytest.param(7, 2, 0.1796875, id="7-2"),
        pytest.param(15, 5, 0.04138946533203125, id="15-5"),
        pytest.param(0, 10, 0.001953125, id="0-10"),
        pytest.param(5, 5, 1.0, id="even-is-one"),
        pytest.param(1, 0, 1.0, id="one-pair"),
        pytest.param(60, 40, 0.05688793364098089, id="60-40"),
    ],
)
def test_sign_test_matches_the_pinned_binomial_test(wins, losses, expected):
    p = sign_test(wins, losses)
    assert p == pytest.approx(expected, rel=1e-12)
    assert p == pytest.approx(stats.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)
    assert type(p) is float


@pytest.mark.parametrize(("wins", "losses"), [(3, 9), (9, 3), (120, 97), (0, 1), (13, 13)])
def test_sign_test_matches_statsmodels_on_the_differences(wins, losses):
    differences = [1.0] * wins + [-1.0] * losses + [0.0] * 4  # ties are left out
    _, expected = statsmodels_sign_test(np.array(differences), 0.0)
    assert sign_test(wins, losses) == pytest.approx(expected, rel=1e-12)


def test_sign_test_is_symmetric():
    assert sign_test(4, 11) == sign_test(11, 4)


def test_sign_test_of_no_decided_pair_is_undefined():
    assert sign_test(0, 0) is None


@pytest.mark.parametrize(("wins", "losses"), [(-1, 3), (3, -1), (2.5, 3)])
def test_sign_test_rejects_counts_that_are_not_whole_numbers(wins, losses):
    with pytest.raises(ValueError, match="whole number"):
        sign_test(wins, losses)


# ---- paired t --------------------------------------------------------------------------


def test_paired_t_reproduces_students_sleep_data():
    # R: t.test(extra ~ group, data = sleep, paired = TRUE): t = -4.0621, df = 9,
    # p-value = 0.002833, 95% CI -2.4598858 -0.7001142 (A − B; here B − A).
    result = paired_t(SLEEP_D)
    assert result.n == 10
    assert result.mean == pytest.approx(1.58, rel=1e-12)
    assert result.ci == pytest.approx((0.7001142367230175, 2.459885763276983), rel=1e-12)
    assert result.p_value == pytest.approx(0.002832890197384273, rel=1e-10)
    oracle = stats.ttest_rel(SLEEP_B, SLEEP_A)
    assert result.p_value == pytest.approx(float(oracle.pvalue), rel=1e-12)
    assert result.ci == pytest.approx(tuple(oracle.confidence_interval()), rel=1e-12)
    assert all(type(x) is float for x in (result.mean, *result.ci, result.p_value))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [2, 3, 17, 200])
def test_paired_t_matches_scipy_ttest_1samp(seed, n):
    d = np.random.default_rng(seed).normal(0.2, 1.0, n)
    result = paired_t(list(d), confidence=0.9)
    oracle = stats.ttest_1samp(d, 0.0)
    assert result.p_value == pytest.approx(float(oracle.pvalue), rel=1e-10)
    assert result.ci == pytest.approx(
        tuple(oracle.confidence_interval(confidence_level=0.9)), rel=1e-10
    )


@pytest.mark.parametrize(
    ("differences", "expected"),
    [
        pytest.param([], PairedT(n=0, mean=None, ci=(None, None), p_value=None), id="no-data"),
        pytest.param([0.5], PairedT(n=1, mean=0.5, ci=(None, None), p_value=None), id="n=1"),
        pytest.param(
            [1.0, 1.0, 1.0], PairedT(n=3, mean=1.0, ci=(None, None), p_value=None), id="all-equal"
        ),
        pytest.param(
            [0.0] * 4, PairedT(n=4, mean=0.0, ci=(None, None), p_value=None), id="all-zero"
        ),
    ],
)
def test_paired_t_without_spread_has_no_p_value(differences, expected):
    assert paired_t(differences) == expected


def test_paired_t_of_a_symmetric_sample_has_p_one():
    assert paired_t([-1.0, 1.0, -2.0, 2.0]).p_value == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(
    ("differences", "confidence", "match"),
    [
        pytest.param([1.0, 2.0], 1.5, "confidence", id="bad-confidence"),
        pytest.param([1.0, float("nan")], 0.95, "finite", id="nan"),
    ],
)
def test_paired_t_rejects_bad_input(differences, confidence, match):
    with pytest.raises(ValueError, match=match):
        paired_t(differences, confidence=confidence)


# ---- Wilcoxon signed-rank --------------------------------------------------------------


# Pinned from scipy.stats.wilcoxon(d).pvalue (scipy 1.17.1, defaults).
@pytest.mark.parametrize(
    ("differences", "expected"),
    [
        # The scipy documentation's example: exact, no ties, n = 15.
        pytest.param(DARWIN, 0.041259765625, id="darwin-exact"),
        # One zero and a tie, n = 10: exact over the 2⁹ sign flips; all nine positive.
        pytest.param(SLEEP_D, 0.00390625, id="sleep-zero-and-tie"),
        pytest.param([1.0, 2.0, 3.0, -4.0, 5.0], 0.4375, id="exact-small"),
        # Ties, n = 20: normal approximation with the tie correction.
        pytest.param(
            [1, -1, 2, 2, 3, -3, 3, 4, 4, 4, 5, -1, 2, 6, 1, 1, -2, 3, 2, 1],
            0.004572365697114233,
            id="ties-normal-approximation",
        ),
        # n = 60 without ties: normal approximation.
        pytest.param(
            [i * (-1) ** (i % 3 == 0) for i in range(1, 61)],
            0.03590012321587811,
            id="large-normal-approximation",
        ),
    ],
)
def test_wilcoxon_matches_the_pinned_scipy_value(differences, expected):
    p = wilcoxon_signed_rank(differences)
    assert p == pytest.approx(expected, rel=1e-10)
    assert p == pytest.approx(scipy_wilcoxon(differences), rel=1e-12)
    assert type(p) is float


# With ties or zeros and 11–13 differences scipy's exhaustive permutation test takes
# 0.5–2 s per call, so those sizes are covered by the pinned boundary case below instead.
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 9, 14, 20, 35, 50, 51, 79])
def test_wilcoxon_matches_scipy_in_every_regime(seed, n):
    # Sizes across the exact (n ≤ 50, no ties or zeros), exhaustive tied (n ≤ 13) and
    # normal-approximation regimes, with data with and without ties and zeros.
    rng = np.random.default_rng(seed)
    continuous = rng.normal(0.3, 1.0, n)
    for d in (continuous, np.round(continuous, 1), rng.integers(-3, 4, n).astype(float)):
        if np.any(d != 0):
            assert wilcoxon_signed_rank(list(d)) == pytest.approx(scipy_wilcoxon(d), rel=1e-12)


def test_wilcoxon_switches_to_the_normal_approximation_above_13_tied_differences():
    # Pinned from scipy.stats.wilcoxon (1.17.1): 13 differences with ties and a zero are
    # exact over all sign flips; one more difference and scipy uses the normal approximation.
    thirteen = [1.0, -2, 2, 3, -3, 3, 4, 5, -1, 6, 2, 0, 7]
    assert wilcoxon_signed_rank(thirteen) == pytest.approx(0.03857421875, rel=1e-12)
    fourteen = [*thirteen, 8.0]
    assert wilcoxon_signed_rank(fourteen) == pytest.approx(0.0207452657440037, rel=1e-10)
    assert wilcoxon_signed_rank(fourteen) == pytest.approx(scipy_wilcoxon(fourteen), rel=1e-12)


def test_wilcoxon_drops_zeros_but_they_can_change_the_method():
    # Zeros are dropped from the ranking; with a zero present scipy (and this) uses the
    # tied-permutation method below 14 cases, which gives the same exact distribution.
    assert wilcoxon_signed_rank(DARWIN[:10] + [0.0]) == pytest.approx(
        wilcoxon_signed_rank(DARWIN[:10]), rel=1e-12
    )


@pytest.mark.parametrize(
    ("differences", "expected"),
    [
        pytest.param([], None, id="no-data"),
        pytest.param([0.0, 0.0, 0.0], None, id="all-zero"),
        pytest.param([2.0], 1.0, id="n=1"),
        pytest.param([3.0, 3.0, 3.0, 3.0], 0.125, id="all-tied-positive"),
        pytest.param([-1.0, 1.0], 1.0, id="balanced"),
    ],
)
def test_wilcoxon_edge_cases(differences, expected):
    assert wilcoxon_signed_rank(differences) == expected
    if expected is not None:
        assert expected == pytest.approx(scipy_wilcoxon(differences), rel=1e-12)


def test_wilcoxon_rejects_non_finite_differences():
    with pytest.raises(ValueError, match="finite"):
        wilcoxon_signed_rank([1.0, float("inf")])


# ---- McNemar ---------------------------------------------------------------------------


# Pinned from statsmodels mcnemar(table, exact=True).pvalue (statsmodels 0.15.0).
@pytest.mark.parametrize(
    ("table", "expected"),
    [
        # Agresti, "Categorical Data Analysis" (3rd ed., Table 11.1): approval of the
        # President's performance in two surveys a month apart, 1600 people.
        pytest.param([[794, 150], [86, 570]], 3.7159361395713866e-05, id="agresti-approval"),
        pytest.param([[10, 9], [2, 20]], 0.0654296875, id="9-vs-2"),
        pytest.param([[5, 3], [3, 5]], 1.0, id="balanced"),
        pytest.param([[0, 0], [6, 0]], 0.03125, id="all-discordant-one-way"),
    ],
)
def test_mcnemar_exact_matches_statsmodels(table, expected):
    only_a, only_b = table[0][1], table[1][0]
    p = mcnemar_exact(only_a, only_b)
    assert p == pytest.approx(expected, rel=1e-10)
    assert p == pytest.approx(float(mcnemar(table, exact=True).pvalue), rel=1e-10)


def test_mcnemar_exact_without_discordant_pairs_is_undefined():
    assert mcnemar_exact(0, 0) is None


def test_mcnemar_exact_rejects_negative_counts():
    with pytest.raises(ValueError, match="only_a"):
        mcnemar_exact(-1, 2)


def test_discordant_counts_the_pairs_that_disagree():
    a = [True, True, False, False, True, False]
    b = [True, False, True, False, False, True]
    assert discordant(a, b) == (2, 2)
    assert discordant([True, True, True], [False, True, True]) == (1, 0)
    assert discordant([], []) == (0, 0)


def test_discordant_feeds_mcnemar():
    rng = np.random.default_rng(5)
    a = list(rng.random(200) < 0.6)
    b = list(rng.random(200) < 0.7)
    only_a, only_b = discordant(a, b)
    table = [
        [sum(x and y for x, y in zip(a, b, strict=True)), only_a],
        [only_b, sum(not x and not y for x, y in zip(a, b, strict=True))],
    ]
    assert mcnemar_exact(only_a, only_b) == pytest.approx(
        float(mcnemar(table, exact=True).pvalue), rel=1e-10
    )


def test_discordant_rejects_records_of_different_length():
    with pytest.raises(ValueError, match="one outcome per case"):
        discordant([True], [True, False])

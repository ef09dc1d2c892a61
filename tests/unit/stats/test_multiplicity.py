import warnings
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from scipy.special import stdtr
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from judgecli.stats import group_tests
from judgecli.stats.group_tests import (
    _reshuffled_sums_from_counts,
    _reshuffled_sums_from_values,
    permutation_test,
    permutation_tests,
    proportion_test,
    welch_test,
)
from judgecli.stats.intervals import TOO_FEW, wilson_interval
from judgecli.stats.multiplicity import (
    Call,
    Correction,
    Mark,
    benjamini_hochberg,
    category_calls,
    holm,
)

ALPHA = 0.05

# The 15 p-values of Benjamini & Hochberg (1995, §4.1, a study of myocardial infarction
# treatments): at 0.05 their procedure rejects the four smallest, Bonferroni-type
# procedures (Holm, Hochberg) only the three smallest.
BH_1995 = [
    0.0001,
    0.0004,
    0.0019,
    0.0095,
    0.0201,
    0.0278,
    0.0298,
    0.0344,
    0.0459,
    0.3240,
    0.4262,
    0.5719,
    0.6528,
    0.7590,
    1.000,
]
# Pinned from statsmodels multipletests(BH_1995, method=...)[1] (statsmodels 0.15.0).
BH_1995_HOLM = [
    0.0015,
    0.0056,
    0.0247,
    0.114,
    0.2211,
    0.278,
    0.278,
    0.278,
    0.3213,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
]
BH_1995_BH = [
    0.0015,
    0.003,
    0.0095,
    0.035625,
    0.0603,
    0.06385714285714286,
    0.06385714285714286,
    0.0645,
    0.0765,
    0.486,
    0.5811818181818182,
    0.714875,
    0.7532307692307693,
    0.8132142857142857,
    1.0,
]


# ---- Holm and Benjamini–Hochberg -------------------------------------------------------


@pytest.mark.parametrize(
    ("adjust", "method", "expected", "rejected"),
    [
        pytest.param(holm, "holm", BH_1995_HOLM, 3, id="holm"),
        pytest.param(benjamini_hochberg, "fdr_bh", BH_1995_BH, 4, id="bh"),
    ],
)
def test_adjustment_reproduces_benjamini_hochbergs_example(adjust, method, expected, rejected):
    adjusted = adjust(BH_1995)
    assert adjusted == pytest.approx(expected, rel=1e-12)
    assert adjusted == pytest.approx(list(multipletests(BH_1995, method=method)[1]), rel=1e-12)
    assert sum(q < ALPHA for q in adjusted) == rejected
    assert all(type(q) is float for q in adjusted)


@pytest.mark.parametrize(("adjust", "method"), [(holm, "holm"), (benjamini_hochberg, "fdr_bh")])
@pytest.mark.parametrize("seed", range(8))
def test_adjustment_matches_statsmodels(adjust, method, seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.beta(0.4, 1.0, m)
    p[rng.random(m) < 0.2] = 1.0  # p-values of 1
    p[: m // 4] = p[0]  # ties
    rng.shuffle(p)
    assert adjust(list(p)) == pytest.approx(list(multipletests(p, method=method)[1]), rel=1e-12)


@pytest.mark.parametrize("adjust", [holm, benjamini_hochberg])
def test_adjustment_keeps_the_input_order_and_is_monotone(adjust):
    rng = np.random.default_rng(11)
    p = rng.random(25) ** 3
    adjusted = np.array(adjust(list(p)))
    order = rng.permutation(25)
    # Shuffling the input shuffles the output the same way.
    assert adjust(list(p[order])) == pytest.approx(list(adjusted[order]), rel=1e-15)
    # Smaller p, smaller (or equal) adjusted p; never below the raw p; never above 1.
    by_p = np.argsort(p)
    assert np.all(np.diff(adjusted[by_p]) >= 0)
    assert np.all(adjusted >= p)
    assert np.all(adjusted <= 1.0)


@pytest.mark.parametrize("adjust", [holm, benjamini_hochberg])
def test_adjustment_edge_cases(adjust):
    assert adjust([]) == []
    assert adjust([0.03]) == [0.03]  # a family of one is not adjusted
    assert adjust([1.0, 1.0]) == [1.0, 1.0]
    assert adjust([0.0, 0.5]) == [0.0, pytest.approx(0.5)]
    tied = adjust([0.02, 0.02, 0.02])
    assert tied[0] == tied[1] == tied[2]


def test_holm_is_never_below_benjamini_hochberg():
    p = list(np.random.default_rng(3).random(30) ** 2)
    assert all(h >= b for h, b in zip(holm(p), benjamini_hochberg(p), strict=True))


@pytest.mark.parametrize("adjust", [holm, benjamini_hochberg])
@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_adjustment_rejects_p_values_outside_zero_and_one(adjust, bad):
    with pytest.raises(ValueError, match="p-values"):
        adjust([0.2, bad])


# ---- proportion (score) test -----------------------------------------------------------


# Pinned from statsmodels proportions_ztest(count, nobs, value, prop_var=value)[1].
@pytest.mark.parametrize(
    ("successes", "n", "value", "expected"),
    [
        pytest.param(118, 188, 0.5, 0.0004639337983508059, id="118-of-188"),
        pytest.param(118.5, 188, 0.55, 0.026852350762240112, id="ties-count-half"),
        pytest.param(3, 10, 0.5, 0.2059032107320684, id="3-of-10"),
        pytest.param(0, 5, 0.2, 0.2635524772829728, id="none-of-5"),
        pytest.param(5, 10, 0.5, 1.0, id="on-the-value"),
    ],
)
def test_proportion_test_matches_statsmodels(successes, n, value, expected):
    p = proportion_test(successes, n, value)
    assert p == pytest.approx(expected, rel=1e-12)
    assert p == pytest.approx(
        float(proportions_ztest(successes, n, value, prop_var=value)[1]), rel=1e-12
    )
    assert type(p) is float


def test_proportion_test_is_dual_to_the_wilson_interval():
    # `value` lies outside the Wilson interval at confidence 1 − a exactly when p < a.
    checked = 0
    for n in (1, 2, 3, 7, 10, 25, 60, 188, 1000):
        for successes in np.unique(np.round(np.linspace(0, n, 23) * 2) / 2):
            for value in np.linspace(0.01, 0.99, 50):
                p = proportion_test(float(successes), n, float(value))
                for a in (0.01, 0.05, 0.1, 0.32):
                    if abs(p - a) < 1e-9:  # on the boundary; rounding decides
                        continue
                    low, high = wilson_interval(float(successes), n, confidence=1 - a)
                    assert (value < low or value > high) == (p < a), (successes, n, value, a)
                    checked += 1
    assert checked > 25_000


def test_proportion_test_of_no_cases_is_undefined():
    assert proportion_test(0, 0, 0.5) is None


@pytest.mark.parametrize(
    ("successes", "n", "value", "match"),
    [
        pytest.param(3, 10, 0.0, "value", id="value-0"),
        pytest.param(3, 10, 1.0, "value", id="value-1"),
        pytest.param(11, 10, 0.5, "successes", id="too-many-successes"),
        pytest.param(-1, 10, 0.5, "successes", id="negative-successes"),
        pytest.param(0, -1, 0.5, "successes", id="negative-n"),
    ],
)
def test_proportion_test_rejects_bad_arguments(successes, n, value, match):
    with pytest.raises(ValueError, match=match):
        proportion_test(successes, n, value)


# ---- Welch t test ----------------------------------------------------------------------


def scipy_welch(group, rest):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on (nearly) constant samples
        return float(stats.ttest_ind(group, rest, equal_var=False).pvalue)


# Pinned from scipy.stats.ttest_ind(group, rest, equal_var=False).pvalue (scipy 1.17.1).
@pytest.mark.parametrize(
    ("group", "rest", "expected"),
    [
        pytest.param(
            [4, 5, 3, 4, 5, 5, 4],
            [3, 2, 4, 3, 3, 2, 4, 3, 1, 3, 4],
            0.003857746802674319,
            id="ratings",
        ),
        pytest.param([1, 2], [5, 6, 7], 0.010907121270022517, id="two-and-three"),
        pytest.param([3, 3, 3, 3], [1, 2, 3, 4, 5], 1.0, id="group-without-spread"),
    ],
)
def test_welch_test_matches_the_pinned_scipy_value(group, rest, expected):
    p = welch_test(group, rest)
    assert p == pytest.approx(expected, rel=1e-10)
    assert p == pytest.approx(scipy_welch(group, rest), rel=1e-12)
    assert type(p) is float


@pytest.mark.parametrize("seed", range(10))
def test_welch_test_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    n, m = (int(k) for k in rng.integers(2, 200, 2))
    group = rng.normal(0.2, rng.uniform(0.2, 3), n)
    rest = rng.normal(0.0, rng.uniform(0.2, 3), m)
    assert welch_test(list(group), list(rest)) == pytest.approx(scipy_welch(group, rest), rel=1e-10)


@pytest.mark.parametrize(
    ("group", "rest"),
    [
        pytest.param([], [1.0, 2.0], id="empty-group"),
        pytest.param([3.0], [1.0, 2.0, 3.0], id="group-of-one"),
        pytest.param([1.0, 2.0], [4.0], id="rest-of-one"),
        pytest.param([2.0, 2.0], [4.0, 4.0, 4.0], id="no-spread-anywhere"),
    ],
)
def test_welch_test_without_two_values_and_spread_is_undefined(group, rest):
    assert welch_test(group, rest) is None


def test_welch_test_rejects_non_finite_values():
    with pytest.raises(ValueError, match="finite"):
        welch_test([1.0, float("nan")], [1.0, 2.0])


# ---- permutation test ------------------------------------------------------------------


def exact_permutation_p(group, rest):
    """The permutation p-value by full enumeration: the share of all size-n subsets of the
    values whose |sum − n·mean| reaches the group's."""
    values = np.array(list(group) + list(rest), dtype=np.float64)
    n = len(group)
    centre = n * values.mean()
    observed = abs(sum(group) - centre)
    reached = [
        abs(values[list(i)].sum() - centre) >= observed - 1e-9
        for i in combinations(range(values.size), n)
    ]
    return float(np.mean(reached))


def exact_binary_p(group, rest):
    """The same for 0/1 values: the group's count of ones is hypergeometric."""
    ones, n, total = int(sum(group) + sum(rest)), len(group), len(group) + len(rest)
    centre = n * ones / total
    observed = abs(sum(group) - centre)
    k = np.arange(0, n + 1)
    reached = np.abs(k - centre) >= observed - 1e-9
    return float(stats.hypergeom(total, ones, n).pmf(k)[reached].sum())


def assert_within_monte_carlo_error(p, exact, resamples):
    # p = (1 + b) / (B + 1) with b ~ Binomial(B, exact): mean (1 + B·exact) / (B + 1).
    expected = (1 + resamples * exact) / (resamples + 1)
    assert abs(p - expected) <= 4.5 * np.sqrt(exact * (1 - exact) / resamples) + 1e-12, (
        p,
        exact,
    )


RATINGS = ([4, 5, 3, 4, 5, 5, 4], [3, 2, 4, 3, 3, 2, 4, 3, 1, 3, 4])


@pytest.mark.parametrize(
    ("group", "rest"),
    [
        pytest.param([5, 5], [1, 1, 1], id="two-fives-three-ones"),  # exact p = 1/10
        pytest.param([1, 2], [5, 6, 7], id="two-and-three"),
        pytest.param([3, 3, 3, 3], [1, 2, 3, 4, 5], id="group-on-the-mean"),
        pytest.param([1], [2, 3, 3, 4, 9], id="group-of-one"),
        pytest.param(*RATINGS, id="ratings"),  # 31,824 subsets
        pytest.param([0.3, -1.2, 2.5], [0.1, 0.4, -0.7, 1.9, 0.0, 3.3], id="continuous"),
    ],
)
def test_permutation_test_matches_full_enumeration(group, rest):
    exact = exact_permutation_p(group, rest)
    resamples = 20_000
    p = permutation_test(group, rest, resamples=resamples, seed=1)
    assert type(p) is float
    assert_within_monte_carlo_error(p, exact, resamples)
    if group == [5, 5]:
        assert exact == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("group", "rest"),
    [
        # 1 distinct value in 17 cases: counts are drawn (hypergeometric), not cases shuffled.
        pytest.param([1, 1, 1, 0, 0], [0] * 10 + [1] * 2, id="5-of-17"),
        pytest.param([1] * 30 + [0] * 10, [1] * 50 + [0] * 60, id="40-of-150"),
        pytest.param([1] * 3 + [0] * 47, [1] * 9 + [0] * 91, id="rare-ones"),
    ],
)
def test_permutation_test_of_few_distinct_values_matches_the_hypergeometric(group, rest):
    exact = exact_binary_p(group, rest)
    if len(group) + len(rest) < 20:
        assert exact == pytest.approx(exact_permutation_p(group, rest), rel=1e-12)
    resamples = 20_000
    p = permutation_test(group, rest, resamples=resamples, seed=2)
    assert_within_monte_carlo_error(p, exact, resamples)


def test_permutation_tests_test_each_group_against_the_others_pooled():
    groups = {"a": [5, 4, 5], "b": [1, 2, 2, 3], "c": [3, 3, 4, 2, 1], "d": [4, 2]}
    resamples = 20_000
    p = permutation_tests(groups, resamples=resamples, seed=3)
    assert list(p) == list(groups)  # input order
    for name, values in groups.items():
        rest = [v for other, vs in groups.items() if other != name for v in vs]
        assert_within_monte_carlo_error(p[name], exact_permutation_p(values, rest), resamples)
    # Binary scores in three groups of 150 cases: the counts path, each vs the hypergeometric.
    rng = np.random.default_rng(4)
    binary = {f"g{k}": list(rng.integers(0, 2, 150) * 1.0) for k in range(3)}
    p = permutation_tests(binary, resamples=resamples, seed=5)
    for name, values in binary.items():
        rest = [v for other, vs in binary.items() if other != name for v in vs]
        assert_within_monte_carlo_error(p[name], exact_binary_p(values, rest), resamples)


@pytest.mark.parametrize(
    "reshuffle",
    [
        pytest.param(
            lambda values, sizes, rng: _reshuffled_sums_from_values(
                np.array(values, dtype=np.float64), np.array(sizes), 30_000, rng
            ),
            id="values",
        ),
        pytest.param(
            lambda values, sizes, rng: _reshuffled_sums_from_counts(
                *(np.unique(np.array(values, dtype=np.float64), return_counts=True)),
                np.array(sizes),
                30_000,
                rng,
            ),
            id="counts",
        ),
    ],
)
def test_reshuffles_split_the_values_uniformly_at_random(reshuffle):
    # Both ways of reshuffling must give the joint distribution of the block sums over all
    # 7!/(2!·2!·3!) = 210 equally likely splits of the values into blocks of 2, 2 and 3.
    values, sizes = [1, 1, 2, 3, 3, 3, 5], [2, 2, 3]
    exact = Counter()
    for first in combinations(range(7), 2):
        left = [i for i in range(7) if i not in first]
        for second in combinations(left, 2):
            exact[(sum(values[i] for i in first), sum(values[i] for i in second))] += 1 / 210
    sums = reshuffle(values, sizes, np.random.default_rng(6))
    assert sums.shape == (30_000, 3)
    np.testing.assert_array_equal(sums.sum(axis=1), sum(values))
    drawn = Counter(zip(sums[:, 0], sums[:, 1], strict=True))
    assert set(drawn) <= set(exact)
    for cell, probability in exact.items():
        share = drawn[cell] / 30_000
        assert abs(share - probability) <= 4.5 * np.sqrt(probability * (1 - probability) / 30_000)


def test_permutation_p_is_never_below_one_over_resamples_plus_one():
    far = ([5.0] * 20, [1.0] * 20)  # no other subset of 20 is as far from the mean
    for resamples in (1, 19, 99, 1999):
        assert permutation_test(*far, resamples=resamples) == 1 / (resamples + 1)
    rng = np.random.default_rng(8)
    for resamples in (1, 9, 199):
        for _ in range(20):
            group = list(rng.integers(1, 6, int(rng.integers(1, 30))) * 1.0)
            rest = list(rng.integers(1, 6, int(rng.integers(1, 30))) * 1.0)
            p = permutation_test(group, rest, resamples=resamples, seed=int(rng.integers(99)))
            if p is not None:
                assert 1 / (resamples + 1) <= p <= 1.0
                assert p * (resamples + 1) == pytest.approx(round(p * (resamples + 1)))


@pytest.mark.parametrize(
    ("group", "rest"),
    [
        pytest.param([], [1.0, 2.0], id="empty-group"),
        pytest.param([1.0, 2.0], [], id="empty-rest"),
        pytest.param([], [], id="nothing"),
        pytest.param([2.0, 2.0], [2.0, 2.0, 2.0], id="all-equal"),
        pytest.param([3.0], [3.0], id="one-and-one-equal"),
    ],
)
def test_permutation_test_without_both_sides_and_spread_is_undefined(group, rest):
    assert permutation_test(group, rest) is None


def test_permutation_tests_undefined_groups():
    assert permutation_tests({}) == {}
    assert permutation_tests({"only": [1.0, 2.0, 3.0]}) == {"only": None}
    assert permutation_tests({"a": [1.0, 5.0], "empty": []}) == {"a": None, "empty": None}
    assert permutation_tests({"a": [2.0], "b": [2.0, 2.0]}) == {"a": None, "b": None}
    p = permutation_tests({"a": [1.0, 2.0], "empty": [], "b": [4.0, 5.0, 5.0]})
    assert list(p) == ["a", "empty", "b"]
    assert p["empty"] is None
    assert p["a"] == p["b"]  # two groups: the same split, the same test
    assert p["a"] == permutation_test([1.0, 2.0], [4.0, 5.0, 5.0])
    # A group of one value is a valid (if weak) test; one value against one never rejects.
    assert permutation_test([1.0], [2.0]) == 1.0


def test_permutation_test_is_deterministic_for_a_seed():
    p = permutation_test(*RATINGS, resamples=999, seed=11)
    assert permutation_test(*RATINGS, resamples=999, seed=11) == p
    others = {permutation_test(*RATINGS, resamples=999, seed=s) for s in range(12, 20)}
    assert len(others) > 1  # a Monte Carlo p-value: other seeds, other draws
    groups = {f"c{k}": list(np.random.default_rng(k).integers(1, 6, 40) * 1.0) for k in range(5)}
    assert permutation_tests(groups, seed=3) == permutation_tests(groups, seed=3)


def test_permutation_test_is_two_sided_and_symmetric():
    # Mirroring the scale (x → 6 − x) turns a category above the rest into one as far
    # below: the same shuffles give the same p-value.
    group, rest = RATINGS
    p = permutation_test(group, rest, resamples=1999, seed=5)
    assert p == permutation_test([6 - v for v in group], [6 - v for v in rest], seed=5)
    assert p < 0.05
    # The same through the counts path (binary scores of many cases).
    rng = np.random.default_rng(9)
    group, rest = list(rng.binomial(1, 0.6, 60) * 1.0), list(rng.binomial(1, 0.45, 300) * 1.0)
    up = permutation_test(group, rest, resamples=20_000, seed=1)
    down = permutation_test([1 - v for v in group], [1 - v for v in rest], resamples=20_000)
    exact = exact_binary_p(group, rest)
    assert_within_monte_carlo_error(up, exact, 20_000)
    assert_within_monte_carlo_error(down, exact, 20_000)
    # A shift of the group by δ and by −δ is equally significant.
    base = list(np.random.default_rng(10).normal(0, 1, 25))
    others = list(np.random.default_rng(11).normal(0, 1, 60))
    above = permutation_test([v + 0.5 for v in base], others, resamples=1999)
    below = permutation_test([-v - 0.5 for v in base], [-v for v in others], resamples=1999)
    assert above == below


def test_permutation_test_chunks_do_not_change_the_result(monkeypatch):
    # Reshuffles are processed in batches of CHUNK_BYTES; smaller batches, same p-values
    # (the shuffled rows consume the random stream in the same order).
    groups = {f"c{k}": list(np.random.default_rng(k).normal(k / 10, 1, 30)) for k in range(4)}
    whole = permutation_tests(groups, resamples=999, seed=2)
    monkeypatch.setattr(group_tests, "CHUNK_BYTES", 8 * 120 * 7)  # 7 reshuffles a batch
    assert permutation_tests(groups, resamples=999, seed=2) == whole
    # The counts path: other batches draw in another order, still valid.
    binary = {f"g{k}": list(np.random.default_rng(k).binomial(1, 0.5, 200) * 1.0) for k in range(2)}
    p = permutation_tests(binary, resamples=20_000, seed=2)["g0"]
    assert_within_monte_carlo_error(p, exact_binary_p(binary["g0"], binary["g1"]), 20_000)


def test_permutation_tests_draw_counts_when_there_are_few_distinct_values(monkeypatch):
    # (groups − 1) × (distinct values − 1) hypergeometric draws per reshuffle instead of
    # permuting N values, when that is at most N / 10.
    used = []
    for name in ("_reshuffled_sums_from_counts", "_reshuffled_sums_from_values"):
        original = getattr(group_tests, name)

        def spy(*args, _original=original, _name=name):
            used.append(_name.removeprefix("_reshuffled_sums_from_"))
            return _original(*args)

        monkeypatch.setattr(group_tests, name, spy)
    rng = np.random.default_rng(13)
    ten_categories = [(f"c{k}", n) for k, n in enumerate(SIZES)]  # 346 cases
    scores = {name: rng.integers(1, 6, n) * 1.0 for name, n in ten_categories}
    permutation_tests(scores)  # 10 × 9 × 4 = 360 > 346
    more = rng.integers(1, 6, 400 - int(SIZES.sum())) * 1.0
    permutation_tests({**scores, "more": more})  # 10 × 10 × 4 ≤ 400
    permutation_tests({name: v + rng.normal(0, 0.1, v.size) for name, v in scores.items()})
    permutation_test([1, 1, 1, 0, 0], [0] * 10 + [1] * 2)  # 10 × 1 × 1 ≤ 17
    permutation_test([1, 1, 0], [0, 1, 0, 1, 1, 0])  # 10 > 9
    assert used == ["values", "counts", "values", "counts", "values"]


def test_permutation_tests_on_large_inputs_give_valid_p_values():
    # 2,000 cases in 10 categories, 1,999 reshuffles on both paths (their speed is a
    # benchmark's business, not a unit test's).
    rng = np.random.default_rng(12)
    for values in (rng.integers(1, 6, 2000) * 1.0, rng.normal(3, 1, 2000)):
        groups = {f"c{k}": values[k * 200 : (k + 1) * 200] for k in range(10)}
        p = permutation_tests(groups)
        assert all(q is not None and 1 / 2000 <= q <= 1 for q in p.values())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"group": [1.0, float("nan")], "rest": [1.0, 2.0]}, "finite", id="nan"),
        pytest.param({"group": [1.0], "rest": [float("inf")]}, "finite", id="inf"),
        pytest.param({"group": [1.0], "rest": [2.0], "resamples": 0}, "resamples", id="zero"),
    ],
)
def test_permutation_test_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        permutation_test(**kwargs)


# ---- category calls --------------------------------------------------------------------


def test_category_calls_marks_by_the_adjusted_p_and_the_side():
    groups = {
        "math": (0.80, 40, 0.001),
        "code": (0.30, 50, 0.004),
        "chat": (0.52, 60, 0.03),  # significant alone, not after Holm over 4
        "writing": (0.45, 20, 0.04),  # the largest p of the family is not scaled by Holm
        "tiny": (0.99, 4, 0.0001),  # too few cases: not tested, not in the family
        "none": (None, 0, None),
        "flat": (0.50, 30, None),  # no test possible (e.g. no spread)
    }
    calls = category_calls(groups, 0.5)
    assert list(calls) == list(groups)  # input order
    assert {name: call.mark for name, call in calls.items()} == {
        "math": Mark.ABOVE,
        "code": Mark.BELOW,
        "chat": Mark.NOT_SIGNIFICANT,
        "writing": Mark.NOT_SIGNIFICANT,
        "tiny": Mark.TOO_FEW,
        "none": Mark.TOO_FEW,
        "flat": Mark.NOT_SIGNIFICANT,
    }
    family = holm([0.001, 0.004, 0.03, 0.04])
    assert family == pytest.approx([0.004, 0.012, 0.06, 0.06], rel=1e-12)
    assert [calls[name].p_adjusted for name in ("math", "code", "chat", "writing")] == family
    assert calls["tiny"] == Call(
        estimate=0.99, reference=0.5, p_value=0.0001, p_adjusted=None, mark=Mark.TOO_FEW
    )
    assert calls["flat"].p_adjusted is None
    assert calls["none"].estimate is None


def test_category_calls_with_bh_makes_more_calls_than_holm():
    groups = {f"c{i}": (0.6 if i % 2 else 0.4, 100, p) for i, p in enumerate(BH_1995)}
    holm_calls = category_calls(groups, 0.5)
    bh_calls = category_calls(groups, 0.5, correction=Correction.BH)
    assert sum(c.mark != Mark.NOT_SIGNIFICANT for c in holm_calls.values()) == 3
    assert sum(c.mark != Mark.NOT_SIGNIFICANT for c in bh_calls.values()) == 4
    assert [c.p_adjusted for c in bh_calls.values()] == pytest.approx(BH_1995_BH, rel=1e-12)
    assert bh_calls["c0"].mark == Mark.BELOW
    assert bh_calls["c1"].mark == Mark.ABOVE
    assert category_calls(groups, 0.5, correction="bh") == bh_calls


def test_category_calls_defaults():
    # too_few defaults to intervals.TOO_FEW, alpha to 0.05, correction to Holm.
    calls = category_calls({"small": (0.9, TOO_FEW - 1, 0.001), "big": (0.9, TOO_FEW, 0.049)}, 0.5)
    assert calls["small"].mark == Mark.TOO_FEW
    assert calls["big"].mark == Mark.ABOVE  # alone in its family: not adjusted
    assert calls["big"].p_adjusted == 0.049
    assert category_calls({"big": (0.9, 20, 0.049)}, 0.5, alpha=0.01)["big"].mark == (
        Mark.NOT_SIGNIFICANT
    )
    assert category_calls({}, 0.5) == {}


def test_category_calls_does_not_call_a_side_for_an_estimate_on_the_reference():
    calls = category_calls({"on": (0.5, 30, 0.001)}, 0.5)
    assert calls["on"].mark == Mark.NOT_SIGNIFICANT


def test_marks_are_plain_strings_for_json():
    assert Mark.NOT_SIGNIFICANT == "not significant"
    assert Mark.TOO_FEW == "too few"
    assert Correction("holm") is Correction.HOLM


@pytest.mark.parametrize(
    ("groups", "kwargs", "match"),
    [
        pytest.param({"a": (0.5, 20, 0.1)}, {"alpha": 0.0}, "alpha", id="alpha-0"),
        pytest.param({"a": (0.5, 20, 0.1)}, {"alpha": 1.0}, "alpha", id="alpha-1"),
        pytest.param({"a": (0.5, 20, 0.1)}, {"too_few": -1}, "too_few", id="too-few"),
        pytest.param({"a": (0.5, -2, 0.1)}, {}, "negative", id="negative-n"),
        pytest.param({"a": (0.5, 20, 1.2)}, {}, "p-values", id="p-above-one"),
        pytest.param({"a": (None, 20, 0.1)}, {}, "estimate", id="p-without-estimate"),
        pytest.param(
            {"a": (0.5, 20, 0.1)}, {"correction": "bonferroni"}, "Correction", id="correction"
        ),
    ],
)
def test_category_calls_rejects_bad_arguments(groups, kwargs, match):
    with pytest.raises(ValueError, match=match):
        category_calls(groups, 0.5, **kwargs)


# ---- simulation: no category truly differs ---------------------------------------------

RUNS = 4000  # runs through category_calls
MANY_RUNS = 50_000  # vectorised runs, for rates that sit close to α
CHECKED_RUNS = 2000  # of those, runs also taken through welch_test and category_calls
SIZES = np.linspace(10, 60, 10).astype(int)  # 10, 15, 21, …, 60 cases in 10 categories
MARKED = (Mark.ABOVE, Mark.BELOW)


def any_marked(groups_per_run, reference_per_run):
    """Per run, whether any category got marked: after Holm, after BH, and unadjusted."""
    flags = []
    for groups, reference in zip(groups_per_run, reference_per_run, strict=True):
        holm_calls = category_calls(groups, reference, correction=Correction.HOLM, alpha=ALPHA)
        bh_calls = category_calls(groups, reference, correction=Correction.BH, alpha=ALPHA)
        flags.append(
            (
                any(call.mark in MARKED for call in holm_calls.values()),
                any(call.mark in MARKED for call in bh_calls.values()),
                any(p is not None and p < ALPHA for _, _, p in groups.values()),
            )
        )
    return np.array(flags).T  # 3 × runs


def any_marked_vectorised(p):
    """The same flags from a runs × categories array of p-values (all categories tested).

    Holm marks something iff its first step does, m·min p < α; BH iff some m·p₍ᵢ₎/i < α.
    """
    m = p.shape[1]
    ordered = np.sort(p, axis=1)
    holm_any = ordered[:, 0] * m < ALPHA
    bh_any = np.any(ordered * m / np.arange(1, m + 1) < ALPHA, axis=1)
    return np.array([holm_any, bh_any, ordered[:, 0] < ALPHA])


def report(label, flags):
    runs = flags.shape[1]
    rates = []
    for name, hits in zip(("Holm", "BH", "unadjusted"), flags.sum(axis=1), strict=True):
        low, high = wilson_interval(int(hits), runs)
        rates.append(f"{name} {hits / runs:.4f} [{low:.4f}, {high:.4f}]")
    print(f"\n{label}: any category marked, {runs} null runs (95% Wilson CI): {', '.join(rates)}")
    return flags.mean(axis=1)


@pytest.mark.parametrize(
    ("reference", "ties", "unadjusted_at_least"),
    [
        pytest.param(0.5, 0.1, 0.2, id="rate-0.50-ties-10%"),
        pytest.param(0.55, 0.1, 0.2, id="rate-0.55-ties-10%"),
        # Many ties shrink the variance below p(1 − p): the score test is conservative,
        # so even unadjusted the false marks are fewer, and after Holm very rare.
        pytest.param(0.5, 0.3, 0.1, id="rate-0.50-ties-30%"),
    ],
)
def test_holm_keeps_false_win_rate_calls_below_alpha(reference, ties, unadjusted_at_least):
    # Every category's true ties-half win rate equals the reference: a win with
    # probability reference − ties/2, a tie with probability `ties`, else a loss.
    rng = np.random.default_rng(2024)
    win = reference - ties / 2
    counts = rng.multinomial(
        np.broadcast_to(SIZES, (RUNS, SIZES.size)), [win, ties, 1 - win - ties]
    )
    successes = counts[..., 0] + counts[..., 1] / 2
    groups_per_run = [
        {
            f"c{k}": (
                float(successes[run, k] / n),
                int(n),
                proportion_test(float(successes[run, k]), int(n), reference),
            )
            for k, n in enumerate(SIZES)
        }
        for run in range(RUNS)
    ]
    holm_rate, bh_rate, raw_rate = report(
        f"win rates {reference}, ties {ties:.0%}", any_marked(groups_per_run, [reference] * RUNS)
    )
    assert holm_rate <= ALPHA
    # Under the global null every BH call is false, so its FDR is the familywise rate.
    assert bh_rate <= ALPHA
    # The problem the correction solves: ten tests at 5% each.
    assert raw_rate > unadjusted_at_least


def welch_p_values(scores, sizes):
    """Welch p-values of each consecutive block of columns against all the other columns."""
    edges = np.concatenate(([0], np.cumsum(sizes)))
    total, total_sq, n_all = scores.sum(axis=1), (scores**2).sum(axis=1), scores.shape[1]
    p = np.empty((scores.shape[0], len(sizes)))
    for k, n in enumerate(sizes):
        block = scores[:, edges[k] : edges[k + 1]]
        m = n_all - n
        g_sum, g_sq = block.sum(axis=1), (block**2).sum(axis=1)
        g_mean, r_mean = g_sum / n, (total - g_sum) / m
        g_var = (g_sq - n * g_mean**2) / (n - 1) / n
        r_var = (total_sq - g_sq - m * r_mean**2) / (m - 1) / m
        t = (g_mean - r_mean) / np.sqrt(g_var + r_var)
        df = (g_var + r_var) ** 2 / (g_var**2 / (n - 1) + r_var**2 / (m - 1))
        p[:, k] = np.minimum(1.0, 2.0 * stdtr(df, -np.abs(t)))
    return p


def score_calls(draw, seed):
    """Flags of CHECKED_RUNS runs through category_calls, and of MANY_RUNS vectorised.

    The vectorised flags are checked against category_calls' on the first CHECKED_RUNS
    runs, and the vectorised Welch p-values against welch_test on the first 50.
    """
    rng = np.random.default_rng(seed)
    scores = draw(rng, (MANY_RUNS, int(SIZES.sum())))
    p = welch_p_values(scores, SIZES)
    edges = np.concatenate(([0], np.cumsum(SIZES)))
    groups_per_run = []
    for run in range(CHECKED_RUNS):
        groups = {}
        for k, n in enumerate(SIZES):
            block = scores[run, edges[k] : edges[k + 1]]
            if run < 50:
                rest = np.concatenate((scores[run, : edges[k]], scores[run, edges[k + 1] :]))
                assert welch_test(list(block), list(rest)) == pytest.approx(p[run, k], rel=1e-9)
            groups[f"c{k}"] = (float(block.mean()), int(n), float(p[run, k]))
        groups_per_run.append(groups)
    flags = any_marked(groups_per_run, [float(row.mean()) for row in scores[:CHECKED_RUNS]])
    vectorised = any_marked_vectorised(p)
    np.testing.assert_array_equal(flags, vectorised[:, :CHECKED_RUNS])
    return flags, vectorised


# Monte Carlo error of a rate near α over MANY_RUNS runs.
MC_ERROR = 3 * np.sqrt(ALPHA * (1 - ALPHA) / MANY_RUNS)


def test_holm_keeps_false_score_calls_at_alpha():
    # Ten categories of the same (normal) score distribution, each mean tested against
    # the rest's by Welch's t, which is accurate for normal data. The category-vs-rest
    # tests barely overlap in their rejections, so Holm's familywise rate sits at its
    # Bonferroni bound m · α/m = α itself (0.0499 over 500,000 runs): a simulation can
    # only show it is within Monte Carlo error of α, hence the 3-standard-error allowance.
    # Under the global null BH is Simes' test, exact for independent or positively
    # dependent tests; a category against the rest is negatively dependent on the other
    # categories' tests, and BH's rate is a little above α (0.0512 over 500,000 runs).
    flags, vectorised = score_calls(lambda rng, shape: rng.normal(3.5, 1.0, shape), seed=7)
    report("normal score means, Welch vs rest", flags)
    holm_rate, bh_rate, raw_rate = report("normal score means, Welch vs rest", vectorised)
    assert holm_rate <= ALPHA + MC_ERROR
    assert bh_rate <= ALPHA + MC_ERROR
    assert raw_rate > 0.3


SCALES = [
    pytest.param([0.1, 0.15, 0.3, 0.3, 0.15], id="1-5-spread"),
    pytest.param([0.02, 0.03, 0.05, 0.3, 0.6], id="1-5-piled-at-4-5"),
]


def scale(probabilities):
    """A draw(rng, shape) of integer scores 1–5 with these probabilities."""
    cumulative = np.cumsum(probabilities)[:-1]

    def draw(rng, shape):  # inverse CDF: faster than rng.choice(..., p=...)
        return np.searchsorted(cumulative, rng.random(shape), side="right") + 1.0

    return draw


@pytest.mark.parametrize("probabilities", SCALES)
def test_welch_calls_on_a_1_to_5_scale_are_liberal_in_small_categories(probabilities):
    # Why the product tests category means by permutation: on a 1–5 integer scale Welch's
    # t is only approximately valid for small discrete samples, and Holm tests the
    # smallest p at α/10 = 0.005, far in the tail, where the t approximation is worst:
    # a category of 10 scores gets p < 0.005 1.6 times as often as it should, one of 60
    # 1.06 times (normal scores: 1.1 and 1.0). So the share of runs with a false mark
    # ends above α: 0.057 here (0.059 over 500,000 runs), and 0.185 for scores piled up
    # at 4–5, where a category of 10 often has no 1–3 at all and a tiny variance.
    flags, vectorised = score_calls(scale(probabilities), seed=7)
    report("1-5 scores, Welch vs rest", flags)
    holm_rate, bh_rate, raw_rate = report("1-5 scores, Welch vs rest", vectorised)
    assert holm_rate > ALPHA + MC_ERROR
    assert bh_rate > ALPHA + MC_ERROR
    assert raw_rate > 0.3


PERMUTATION_RUNS = 500
# Any number of resamples gives valid p-values (the +1 of p = (1 + b) / (B + 1)), but at
# 199 the smallest p is 1/200 = α/10 and Holm, which marks when 10·p < α, could never
# mark: 999 lets it mark at p ≤ 0.004 (b ≤ 3), so at most 10 × 0.004 = 0.04 of the runs.
PERMUTATION_RESAMPLES = 999


@pytest.mark.parametrize("probabilities", SCALES)
def test_holm_over_permutation_tests_keeps_false_score_calls_below_alpha(probabilities):
    # The product path: each category's scores against the other cases' by
    # permutation_tests, Holm over the 10 categories by category_calls. The permutation
    # p-values are valid at any n on any scale, so with no category truly different the
    # share of runs with any mark stays ≤ α even in categories of 10 on a 1–5 scale,
    # where Welch's t gives 0.057 (0.185 piled at 4–5). Over 8,000 runs at the default
    # 1,999 resamples it was 0.038 [0.034, 0.042] (spread) and 0.037 [0.033, 0.042]
    # (piled at 4–5), under the 0.045 that p ≤ 9/2,000 allows: ties make the test
    # conservative.
    rng = np.random.default_rng(17)
    scores = scale(probabilities)(rng, (PERMUTATION_RUNS, int(SIZES.sum())))
    edges = np.concatenate(([0], np.cumsum(SIZES)))
    groups_per_run = []
    tail = 0
    for run in range(PERMUTATION_RUNS):
        values = {f"c{k}": scores[run, edges[k] : edges[k + 1]] for k in range(SIZES.size)}
        p = permutation_tests(values, resamples=PERMUTATION_RESAMPLES, seed=run)
        tail += sum(q < ALPHA / SIZES.size for q in p.values())
        groups_per_run.append(
            {name: (float(v.mean()), v.size, p[name]) for name, v in values.items()}
        )
    flags = any_marked(groups_per_run, [float(row.mean()) for row in scores])
    holm_rate, _, raw_rate = report("1-5 scores, permutation vs rest", flags)
    tests = PERMUTATION_RUNS * SIZES.size
    low, high = wilson_interval(tail, tests)
    print(f"single tests with p < α/10: {tail / tests:.4f} [{low:.4f}, {high:.4f}]")
    assert holm_rate <= ALPHA
    # The problem the correction solves: ten tests at 5% each.
    assert raw_rate > 0.3

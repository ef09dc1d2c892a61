import json
import tracemalloc

import numpy as np
import pytest

from judgecli.stats import intervals
from judgecli.stats.intervals import (
    bootstrap_mean_interval,
    normal_quantile,
    resampled_means_from_counts,
    resampled_means_from_indices,
    t_interval,
    too_few,
    wilson_interval,
)

# Seven distinct values: the bootstrap draws case indices.
SMALL = [3.1, 4.2, 2.8, 5.0, 3.9, 4.4, 3.3]
# Five distinct values in 50 cases: the bootstrap draws multinomial counts.
RATINGS = [1.0, 2.0, 3.0, 4.0, 5.0] * 10


@pytest.mark.parametrize(
    ("confidence", "z"),
    [
        pytest.param(0.95, 1.959963984540054, id="95%"),
        pytest.param(0.90, 1.6448536269514722, id="90%"),
        pytest.param(0.99, 2.5758293035489004, id="99%"),
    ],
)
def test_normal_quantile_is_the_two_sided_z_value(confidence, z):
    assert normal_quantile(confidence) == pytest.approx(z, rel=1e-12)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95])
def test_a_confidence_outside_zero_and_one_is_rejected(confidence):
    with pytest.raises(ValueError, match="confidence"):
        normal_quantile(confidence)


# Pinned from scipy.stats.binomtest(k, n).proportion_ci(confidence_level=c, method="wilson");
# the fractional case from statsmodels proportion_confint(118.5, 188, method="wilson").
@pytest.mark.parametrize(
    ("successes", "n", "confidence", "expected"),
    [
        pytest.param(118, 188, 0.95, (0.5566472209347528, 0.6935593834930394), id="118-of-188"),
        pytest.param(118, 188, 0.90, (0.5682391794449458, 0.683457751491695), id="118-of-188-90%"),
        pytest.param(0, 10, 0.95, (0.0, 0.27753279986288926), id="none-of-10"),
        pytest.param(10, 10, 0.95, (0.7224672001371109, 1.0), id="all-of-10"),
        pytest.param(1, 1, 0.95, (0.20654931437723745, 1.0), id="one-of-one"),
        pytest.param(5, 10, 0.95, (0.236593090512564, 0.7634069094874361), id="half"),
        pytest.param(
            118.5, 188, 0.95, (0.5593519488583896, 0.6960672931616483), id="ties-count-half"
        ),
        # A category of five: statsmodels proportion_confint(k, 5, method="wilson").
        pytest.param(5, 5, 0.95, (0.5655175352168252, 1.0), id="five-of-five"),
        pytest.param(3.5, 5, 0.95, (0.29879105407239326, 0.9274159600143366), id="3-wins-1-tie"),
    ],
)
def test_wilson_interval_matches_the_reference_value(successes, n, confidence, expected):
    low, high = wilson_interval(successes, n, confidence=confidence)
    assert (low, high) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_wilson_interval_endpoints_are_exact_at_zero_and_all_successes():
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0


def test_wilson_interval_of_no_trials_is_undefined():
    assert wilson_interval(0, 0) == (None, None)


@pytest.mark.parametrize(
    ("successes", "n"),
    [
        pytest.param(11, 10, id="more-successes-than-trials"),
        pytest.param(-1, 10, id="negative-successes"),
        pytest.param(0, -1, id="negative-trials"),
    ],
)
def test_wilson_interval_rejects_impossible_counts(successes, n):
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(successes, n)


def test_intervals_are_plain_floats_that_serialise_to_json():
    results = [
        wilson_interval(118, 188),
        t_interval(SMALL),
        bootstrap_mean_interval(SMALL),
        bootstrap_mean_interval(RATINGS),
    ]
    assert all(type(end) is float for interval in results for end in interval)
    json.dumps(results)


# Pinned from scipy.stats.t.interval(c, n - 1, loc=mean, scale=scipy.stats.sem(values)).
@pytest.mark.parametrize(
    ("values", "confidence", "expected"),
    [
        pytest.param(SMALL, 0.95, (3.0871809283873675, 4.541390500184061), id="seven-values"),
        pytest.param(SMALL, 0.90, (3.2368657793727187, 4.391705649198709), id="seven-values-90%"),
        pytest.param([1.0, 2.0], 0.95, (-4.853102368087347, 7.853102368087347), id="two-values"),
    ],
)
def test_t_interval_matches_scipy(values, confidence, expected):
    assert t_interval(values, confidence=confidence) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "values",
    [pytest.param([], id="empty"), pytest.param([4.0], id="one-value")],
)
def test_t_interval_needs_two_values(values):
    assert t_interval(values) == (None, None)


# Regression (review 2026-11-23, finding 9): four cases all scored 3 read "3.00 [3.00, 3.00]"
# and were drawn as significant. scipy.stats.t.interval(0.95, 3, loc=3, scale=0) is (nan, nan).
@pytest.mark.parametrize(
    "values",
    [pytest.param([3.0] * 4, id="four-threes"), pytest.param([1.0] * 30, id="thirty-ones")],
)
def test_t_interval_of_values_without_spread_is_undefined_not_a_point(values):
    assert t_interval(values) == (None, None)


# The same spread over 4 and over 12 cases, pinned from scipy.stats.t.interval(0.95, n - 1,
# loc=3, scale=scipy.stats.sem(values)): t(0.975, 3) = 3.18 against t(0.975, 11) = 2.20.
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([2.0, 3.0, 4.0, 3.0], (1.700771736374889, 4.2992282636251105), id="n=4"),
        pytest.param([2.0, 3.0, 4.0, 3.0] * 3, (2.530748387180395, 3.469251612819605), id="n=12"),
    ],
)
def test_t_interval_widens_for_small_samples(values, expected):
    assert t_interval(values) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        pytest.param(1, True, id="1"),
        pytest.param(9, True, id="9"),
        pytest.param(10, False, id="10"),
        pytest.param(500, False, id="500"),
    ],
)
def test_groups_under_ten_cases_are_too_few_to_tell(n, expected):
    assert too_few(n) is expected


def test_t_interval_accepts_a_numpy_array():
    assert t_interval(np.array(SMALL)) == t_interval(SMALL)


# Pinned: computed once with this implementation (numpy default_rng PCG64, seed 0).
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(SMALL, (3.3000000000000003, 4.328571428571428), id="index-resampling"),
        pytest.param(RATINGS, (2.6, 3.36), id="multinomial-resampling"),
    ],
)
def test_bootstrap_mean_interval_is_pinned_for_seed_zero(values, expected):
    assert bootstrap_mean_interval(values, seed=0) == pytest.approx(expected, rel=1e-12)


def test_bootstrap_mean_interval_of_no_values_is_undefined():
    assert bootstrap_mean_interval([]) == (None, None)


def test_bootstrap_mean_interval_depends_on_the_seed_only():
    assert bootstrap_mean_interval(SMALL, seed=1) == bootstrap_mean_interval(SMALL, seed=1)
    assert bootstrap_mean_interval(SMALL, seed=1) != bootstrap_mean_interval(SMALL, seed=2)


@pytest.mark.parametrize(
    "values", [pytest.param(SMALL, id="indices"), pytest.param(RATINGS, id="counts")]
)
def test_bootstrap_result_does_not_depend_on_how_resamples_are_batched(values, monkeypatch):
    whole = bootstrap_mean_interval(values, resamples=500)
    monkeypatch.setattr(intervals, "CHUNK_BYTES", 1)  # one resample per batch
    assert bootstrap_mean_interval(values, resamples=500) == whole


def test_bootstrap_of_a_million_distinct_values_stays_under_100_mb():
    values = np.arange(1_000_000, dtype=np.float64)  # all distinct: the index path
    tracemalloc.start()
    try:
        low, high = bootstrap_mean_interval(values, resamples=16)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20  # all 16 resamples at once would need 256 MB
    assert low < 499_999.5 < high


def test_bootstrap_of_a_million_ratings_is_fast_and_centred():
    values = np.random.default_rng(3).integers(1, 6, size=1_000_000).astype(np.float64)
    low, high = bootstrap_mean_interval(values)
    assert low < float(values.mean()) < high
    assert high - low < 0.01


def test_multinomial_counts_and_case_indices_resample_the_same_distribution():
    from scipy.stats import ks_2samp

    data = np.random.default_rng(5).integers(1, 6, size=200).astype(np.float64)
    distinct, counts = np.unique(data, return_counts=True)
    by_counts = resampled_means_from_counts(
        distinct, counts, resamples=4000, rng=np.random.default_rng(6)
    )
    by_indices = resampled_means_from_indices(data, resamples=4000, rng=np.random.default_rng(7))
    assert not np.array_equal(by_counts, by_indices)
    assert ks_2samp(by_counts, by_indices).pvalue > 0.01
    assert by_counts.std() == pytest.approx(by_indices.std(), rel=0.05)


def test_bootstrap_agrees_with_scipy_percentile_bootstrap_up_to_monte_carlo_error():
    from scipy.stats import bootstrap

    data = np.random.default_rng(11).normal(10.0, 2.0, size=300)
    ours = bootstrap_mean_interval(data, resamples=4000, seed=1)
    theirs = bootstrap(
        (data,), np.mean, method="percentile", n_resamples=4000, rng=np.random.default_rng(2)
    ).confidence_interval
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.05)  # SE of the mean ≈ 0.115


def test_wilson_interval_agrees_with_statsmodels_on_random_counts():
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(0)
    for n in rng.integers(1, 500, size=50):
        k = int(rng.integers(0, n + 1))
        expected = proportion_confint(k, int(n), alpha=0.05, method="wilson")
        assert wilson_interval(k, int(n)) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_t_interval_agrees_with_scipy_on_random_samples():
    from scipy import stats

    rng = np.random.default_rng(0)
    for size in (2, 3, 10, 100):
        data = rng.normal(size=size)
        expected = stats.t.interval(0.95, size - 1, loc=data.mean(), scale=stats.sem(data))
        assert t_interval(data) == pytest.approx(expected, rel=1e-10)

from math import sqrt

import numpy as np
import pytest

from judgecli.stats.intervals import normal_quantile, wilson_interval
from judgecli.stats.pairwise import (
    cases_needed,
    consistency_rate,
    first_position_rate,
    length_preference,
    mean_length,
    resampled_win_rates,
    win_rate,
    win_rate_bootstrap_interval,
    win_rate_no_ties,
)

OUTCOMES = [1.0] * 60 + [0.5] * 20 + [0.0] * 40  # 60 wins, 20 ties, 40 losses


@pytest.mark.parametrize(
    ("wins", "losses", "ties", "expected"),
    [
        pytest.param(6, 2, 2, 0.7, id="ties-count-half"),
        pytest.param(0, 0, 4, 0.5, id="all-ties-is-even"),
        pytest.param(3, 0, 0, 1.0, id="all-wins"),
        pytest.param(0, 0, 0, None, id="no-cases-is-undefined"),
    ],
)
def test_win_rate_counts_ties_as_half_a_win(wins, losses, ties, expected):
    assert win_rate(wins, losses, ties) == expected


@pytest.mark.parametrize(
    ("wins", "losses", "expected"),
    [
        pytest.param(6, 2, 0.75, id="decided-cases-only"),
        pytest.param(0, 5, 0.0, id="all-losses"),
        pytest.param(0, 0, None, id="nothing-decided-is-undefined"),
    ],
)
def test_win_rate_without_ties_uses_decided_cases(wins, losses, expected):
    assert win_rate_no_ties(wins, losses) == expected


def test_win_rate_bootstrap_interval_is_pinned_for_seed_zero():
    # Computed once with this implementation (numpy default_rng PCG64, seed 0).
    low, high = win_rate_bootstrap_interval(OUTCOMES, seed=0)
    assert (low, high) == pytest.approx((0.5041666666666667, 0.6625), rel=1e-12)
    assert type(low) is float
    assert type(high) is float


def test_win_rate_bootstrap_interval_contains_the_win_rate():
    low, high = win_rate_bootstrap_interval(OUTCOMES)
    assert low < win_rate(60, 40, 20) < high


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        pytest.param([], (None, None), id="no-cases-is-undefined"),
    ],
)
def test_win_rate_bootstrap_interval_edge_cases(outcomes, expected):
    assert win_rate_bootstrap_interval(outcomes) == expected


def test_win_rate_bootstrap_interval_rejects_outcomes_other_than_win_tie_loss():
    with pytest.raises(ValueError, match="0.7"):
        win_rate_bootstrap_interval([1.0, 0.7, 0.0])


def test_win_rate_bootstrap_cost_does_not_grow_with_the_number_of_cases():
    outcomes = np.tile([1.0, 0.5, 0.0, 1.0], 250_000)  # a million cases
    low, high = win_rate_bootstrap_interval(outcomes, resamples=2000)
    assert low < 0.625 < high
    assert high - low < 0.002


def test_multinomial_counts_resample_the_same_distribution_as_resampling_cases():
    """Drawing (wins, ties, losses) ~ Multinomial(n, shares) is case resampling in disguise."""
    from scipy.stats import ks_2samp

    outcomes = np.array(OUTCOMES)
    by_counts = resampled_win_rates(60, 20, 40, resamples=5000, rng=np.random.default_rng(1))
    rng = np.random.default_rng(2)
    by_cases = outcomes[rng.integers(0, outcomes.size, size=(5000, outcomes.size))].mean(axis=1)
    assert not np.array_equal(by_counts, by_cases)  # same distribution, not the same numbers
    assert ks_2samp(by_counts, by_cases).pvalue > 0.01
    assert by_counts.mean() == pytest.approx(by_cases.mean(), abs=0.002)
    assert by_counts.std() == pytest.approx(by_cases.std(), rel=0.05)
    # Both are close to the analytic standard error of a mean of n outcomes.
    analytic = outcomes.std() / sqrt(outcomes.size)
    assert by_counts.std() == pytest.approx(analytic, rel=0.05)


@pytest.mark.parametrize(
    ("function", "flags", "expected"),
    [
        pytest.param(consistency_rate, [True, True, False, True], 0.75, id="consistency"),
        pytest.param(consistency_rate, [], None, id="consistency-of-nothing"),
        pytest.param(first_position_rate, [True, True, True, False], 0.75, id="first-position"),
        pytest.param(first_position_rate, [], None, id="first-position-of-nothing"),
        pytest.param(length_preference, [False, True], 0.5, id="length-preference"),
        pytest.param(length_preference, [], None, id="length-preference-of-nothing"),
    ],
)
def test_bias_rates_are_the_share_of_true_flags(function, flags, expected):
    assert function(flags) == expected


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [pytest.param([100, 300], 200.0, id="two-answers"), pytest.param([], None, id="none")],
)
def test_mean_length_is_the_mean(lengths, expected):
    assert mean_length(lengths) == expected


def test_cases_needed_for_a_60_percent_rate_to_clear_50_percent_is_93():
    # No ties: the bootstrap's spread is the Wald variance rate(1 − rate) = 0.24.
    # n ≥ 3.841459 · 0.24 / 0.01 = 92.195 → n = 93.
    # Check: n = 93: 0.6 − 1.959964 · √(0.24/93) = 0.6 − 0.099566 = 0.500434 ≥ 0.5;
    #        n = 92: 0.6 − 1.959964 · √(0.24/92) = 0.6 − 0.100106 = 0.499894 < 0.5.
    assert cases_needed(60, 40, 0, 0.5) == 93


def test_a_100_percent_win_rate_needs_the_cases_whose_wilson_bound_clears_the_bar():
    # Issue 29 (review finding 14): 5 wins of 5 against 0.9 said "about 1 cases in all":
    # the Wald variance is 0 at rate 1. The gate's interval there is Wilson's, whose lower
    # bound at k of k is k / (k + z²): 35/38.841459 = 0.90110 ≥ 0.9, 34/37.841459 = 0.89849.
    # statsmodels.stats.proportion.proportion_confint(35, 35, method="wilson")[0] =
    # 0.9010990076755958; (34, 34): 0.8984854458466761.
    assert cases_needed(5, 0, 0, 0.9) == 35
    assert cases_needed(1, 0, 0, 0.5) == 4  # 4/(4 + z²) = 0.510; 3/(3 + z²) = 0.438


def test_ties_narrow_the_spread_and_so_the_cases_needed():
    # 55 wins, 35 losses, 10 ties: rate 0.6, outcome variance (55 + 10/4)/100 − 0.36 = 0.215
    # (not the Wald 0.24): n ≥ 3.841459 · 0.215 / 0.05² = 330.37 → 331 (Wald: 369).
    assert cases_needed(55, 35, 10, 0.55) == 331


@pytest.mark.parametrize(
    ("counts", "threshold", "confidence", "expected"),
    [
        # z(0.90)² = 1.644854² = 2.705543; 2.705543 · 0.24 / 0.01 = 64.93 → 65.
        pytest.param((60, 40, 0), 0.5, 0.90, 65, id="90%-needs-fewer"),
        # 3.841459 · 0.7 · 0.3 / 0.2² = 3.841459 · 5.25 = 20.17 → 21.
        pytest.param((7, 3, 0), 0.5, 0.95, 21, id="larger-margin"),
        # Every case a tie: the gate's interval is Wilson's on n/2 of n, whose lower bound
        # is 0.40042 at n = 93 and 0.39990 at n = 92 (wilson_interval(46.5, 93), (46, 92)).
        pytest.param((0, 0, 4), 0.4, 0.95, 93, id="all-ties-by-wilson"),
        pytest.param((1, 1, 0), 0.5, 0.95, None, id="rate-at-threshold-never-clears"),
        pytest.param((4, 6, 0), 0.5, 0.95, None, id="rate-below-threshold-never-clears"),
        pytest.param((0, 0, 0), 0.5, 0.95, None, id="no-cases"),
    ],
)
def test_cases_needed_edge_cases(counts, threshold, confidence, expected):
    assert cases_needed(*counts, threshold, confidence=confidence) == expected


def test_cases_needed_is_the_smallest_sufficient_number_on_a_grid():
    z = normal_quantile(0.95)
    for wins in range(1, 40, 3):
        for losses in range(1, 40, 5):
            rate = wins / (wins + losses)
            for threshold in np.linspace(0.0, rate - 0.01, 5):
                n = cases_needed(wins, losses, 0, float(threshold))
                assert n is not None
                assert rate - z * sqrt(rate * (1 - rate) / n) >= threshold
                assert n == 1 or rate - z * sqrt(rate * (1 - rate) / (n - 1)) < threshold


def test_cases_needed_at_100_percent_is_the_smallest_wilson_clearing_n_on_a_grid():
    for threshold in np.linspace(0.05, 0.99, 30):
        n = cases_needed(3, 0, 0, float(threshold))
        assert n is not None
        assert wilson_interval(n, n)[0] >= threshold
        assert n == 1 or wilson_interval(n - 1, n - 1)[0] < threshold


def test_cases_needed_rejects_a_threshold_outside_zero_and_one():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cases_needed(3, 1, 0, 1.2)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        # statsmodels.stats.proportion.proportion_confint(5, 5, method="wilson")
        pytest.param([1.0] * 5, (0.565518, 1.0), id="five-wins-of-five"),
        # proportion_confint(2, 4, method="wilson"): all ties count as 2 of 4
        pytest.param([0.5] * 4, (0.150039, 0.849961), id="all-ties"),
        pytest.param([0.0] * 3, (0.0, 0.561497), id="three-losses"),
    ],
)
def test_a_sample_with_no_spread_gets_wilson_not_a_zero_width_bootstrap(outcomes, expected):
    # Issue 13 §6: every resample of identical outcomes is identical, and the percentile
    # interval [100%, 100%] read as certainty from five cases.
    assert win_rate_bootstrap_interval(outcomes, seed=1) == pytest.approx(expected, abs=1e-6)

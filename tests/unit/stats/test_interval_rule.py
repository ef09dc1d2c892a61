"""The one interval rule (`stats.interval_rule`) against known answers: Wilson's values
pinned from statsmodels, Student t's from scipy, and the reasons a statistic has none.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgecli.stats.interval_rule import (
    MIN_INFORMATIVE,
    Bounded,
    NoIntervalReasons,
    bootstrap_bounded,
    mean_interval,
    proportion_interval,
    rate_interval,
    too_few_informative,
)
from judgecli.stats.resampling import Bootstrapped, cluster_bootstrap


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        # statsmodels.stats.proportion.proportion_confint(k, n, method="wilson"), computed
        # once (statsmodels 0.15.0).
        pytest.param(5, 5, (0.5655175352168252, 1.0), id="5-of-5-the-trial"),
        pytest.param(0, 5, (0.0, 0.43448246478317487), id="0-of-5"),
        pytest.param(1, 1, (0.2065493143772374, 1.0), id="1-of-1"),
        pytest.param(0, 1, (0.0, 0.7934506856227627), id="0-of-1"),
        pytest.param(1, 2, (0.09453120573423068, 0.9054687942657693), id="1-of-2"),
        pytest.param(2, 3, (0.2076596008020477, 0.9385080552796037), id="2-of-3"),
        pytest.param(4, 5, (0.3755346297625252, 0.9637758913675698), id="4-of-5"),
        pytest.param(9, 10, (0.5958499732047614, 0.982123786904927), id="9-of-10"),
        pytest.param(2.5, 4, (0.21942652006536284, 0.9081007708209878), id="ties-half"),
    ],
)
def test_a_proportion_without_a_bootstrap_has_wilsons_interval(successes, n, expected):
    assert proportion_interval(successes, n) == pytest.approx(expected, abs=1e-12)


def test_wilson_at_another_confidence_matches_statsmodels():
    # proportion_confint(3, 8, alpha=0.1, method="wilson")
    got = proportion_interval(3, 8, confidence=0.9)
    assert got == pytest.approx((0.1611723377606734, 0.6520085615952674), abs=1e-12)


@pytest.mark.parametrize(
    ("bootstrap", "expected"),
    [
        pytest.param((0.4, 0.9), (0.4, 0.9), id="a-bootstrap-with-width-stands"),
        pytest.param((1.0, 1.0), (0.5655175352168252, 1.0), id="zero-width-gives-wilson"),
        pytest.param((None, None), (0.5655175352168252, 1.0), id="none-gives-wilson"),
    ],
)
def test_a_degenerate_bootstrap_of_a_proportion_gives_way_to_wilson(bootstrap, expected):
    assert proportion_interval(5, 5, bootstrap=bootstrap) == pytest.approx(expected, abs=1e-12)


def test_a_proportion_of_no_trials_has_no_interval():
    assert proportion_interval(0, 0) == (None, None)


def test_a_rate_of_probabilities_has_a_t_interval_within_zero_and_one():
    # scipy.stats.t.interval(0.95, 2, loc=mean, scale=sem) of (0.9, 0.8, 0.95):
    # (0.6936041816534955, 1.0730624850131714), cut at 1.
    got = rate_interval([0.9, 0.8, 0.95])
    assert got == pytest.approx((0.6936041816534955, 1.0), abs=1e-12)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # No spread: Wilson on (Σ, n) = (2.4, 3): proportion_confint(2.4, 3, method="wilson").
        pytest.param([0.8, 0.8, 0.8], (0.2877273491312991, 0.9753744318156734), id="no-spread"),
        pytest.param([1.0], (0.2065493143772374, 1.0), id="one-value"),
    ],
)
def test_a_rate_without_a_t_interval_falls_back_to_wilson(values, expected):
    assert rate_interval(values) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("values", "bounds", "expected"),
    [
        # scipy.stats.t.interval(0.95, 1, loc=0.55, scale=0.35): (-3.8972, 4.9972).
        pytest.param([0.2, 0.9], None, Bounded((-3.8971716576611426, 4.997171657661142)), id="t"),
        pytest.param([0.2, 0.9], (0.0, 1.0), Bounded((0.0, 1.0)), id="clipped-to-bounds"),
        pytest.param([3.0], None, Bounded((None, None), "one case: no spread to measure"), id="1"),
        pytest.param(
            [3.0] * 4, None, Bounded((None, None), "no spread: every value is 3"), id="alike"
        ),
        pytest.param([], None, Bounded((None, None)), id="none"),
    ],
)
def test_a_mean_has_its_t_interval_or_says_why_not(values, bounds, expected):
    got = mean_interval(values, bounds=bounds)
    assert got.why == expected.why
    if expected.ci[0] is None:
        assert got.ci == (None, None)
    else:
        assert got.ci == pytest.approx(expected.ci, abs=1e-12)


def batch_mean(values):
    data = np.asarray(values, dtype=np.float64)
    return lambda counts: counts @ data / counts.sum(axis=1)


def test_a_bootstrap_where_every_resample_is_alike_has_no_interval():
    found = cluster_bootstrap({"x": batch_mean([2.0, 2.0, 2.0])}, [[0], [1], [2]])["x"]
    assert found.ci == (2.0, 2.0)
    assert bootstrap_bounded(found) == Bounded(
        (None, None), "every resample alike: every bootstrap resample gives 2"
    )


def test_a_bootstrap_of_one_case_or_mostly_undefined_resamples_says_so():
    one = cluster_bootstrap({"x": batch_mean([1.0, 2.0])}, [[0, 1]])["x"]
    assert bootstrap_bounded(one).why == "one case: nothing to resample"
    undefined = Bootstrapped((None, None), clusters=5, resamples=2000, kept=700)
    assert bootstrap_bounded(undefined).why == (
        "most resamples undefined: 1300 of 2000 bootstrap resamples have no value"
    )


def test_a_bootstrap_with_width_and_enough_informative_cases_stands():
    found = Bootstrapped((0.1, 0.7), clusters=8, resamples=2000, kept=2000)
    assert bootstrap_bounded(found) == Bounded((0.1, 0.7))
    assert bootstrap_bounded(found, too_few="too few informative cases: x").ci == (None, None)


@pytest.mark.parametrize(
    ("judge", "human", "expected"),
    [
        pytest.param(
            [1, 1, 1, 1, 1, 1, 1, 3],
            [2, 4, 1, 3, 4, 2, 3, 1],
            "too few informative cases: the judge's score is 1 on 7 of 8 cases (an interval "
            "needs 3 cases off each side's most common)",
            id="the-llama-trial",
        ),
        pytest.param(
            [1, 2, 3, 1, 2, 3],
            [4, 4, 4, 4, 4, 4],
            "too few informative cases: the human's score is 4 on 6 of 6 cases (an interval "
            "needs 3 cases off each side's most common)",
            id="one-class-on-a-side",
        ),
        pytest.param([1, 2, 3, 1, 2, 3], [1, 1, 1, 2, 2, 3], None, id="three-off-each-side"),
    ],
)
def test_a_side_with_fewer_than_three_cases_off_its_most_common_value_is_too_few(
    judge, human, expected
):
    ids = [f"c{i}" for i in range(len(judge))]
    sides = {"judge": [float(x) for x in judge], "human": [float(x) for x in human]}
    assert too_few_informative(sides, ids, what="score") == expected


def test_informative_cases_are_counted_once_however_many_labels_they_have():
    # Case c3 has two labels off the most common; it is still one informative case.
    ids = ["c0", "c1", "c2", "c3", "c3", "c4"]
    human = ["a", "a", "a", "b", "b", "b"]
    assert MIN_INFORMATIVE == 3
    assert too_few_informative({"human": human}, ids, what="label") == (
        "too few informative cases: the human's label is 'a' on 3 of 5 cases (an interval "
        "needs 3 cases off each side's most common)"
    )


def test_reasons_are_kept_only_for_statistics_with_a_value_and_no_interval():
    reasons = NoIntervalReasons()
    assert reasons.ci("a", 0.5, Bounded((None, None), "no spread: x")) == (None, None)
    assert reasons.ci("b", None, Bounded((None, None), "no spread: y")) == (None, None)
    assert reasons.ci("c", 0.2, Bounded((0.1, 0.3))) == (0.1, 0.3)
    assert reasons.mapping() == {"a": "no spread: x"}
    assert NoIntervalReasons().mapping() is None

import dataclasses
import json

import numpy as np
import pytest

from judgecli.stats.scores import CategoryStats, by_category, distribution, mean, pass_rate


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([1.0, 2.0, 3.0, 4.0], 2.5, id="floats"),
        pytest.param([5], 5.0, id="one-value"),
        pytest.param(np.array([0.25, 0.75]), 0.5, id="numpy-array"),
        pytest.param([], None, id="empty-is-undefined"),
    ],
)
def test_mean_is_the_arithmetic_mean(values, expected):
    result = mean(values)
    assert result == expected
    assert result is None or type(result) is float


@pytest.mark.parametrize(
    ("passed", "expected"),
    [
        pytest.param([True, False, True, True], 0.75, id="three-of-four"),
        pytest.param([False, False], 0.0, id="none-passed"),
        pytest.param([], None, id="empty-is-undefined"),
    ],
)
def test_pass_rate_is_the_share_that_passed(passed, expected):
    assert pass_rate(passed) == expected


@pytest.mark.parametrize(
    ("values", "scale", "expected"),
    [
        pytest.param(
            [1, 2, 2, 5], (1, 5), {"1": 1, "2": 2, "3": 0, "4": 0, "5": 1}, id="one-to-five"
        ),
        pytest.param([0.0, 3.0, 3.0], (0, 3), {"0": 1, "1": 0, "2": 0, "3": 2}, id="zero-based"),
        pytest.param([], (1, 3), {"1": 0, "2": 0, "3": 0}, id="empty-gives-zero-counts"),
        pytest.param(
            [7.0, 10.0],
            (1.0, 10.0),
            {str(i): int(i in (7, 10)) for i in range(1, 11)},
            id="float-bounds-with-integer-values",
        ),
    ],
)
def test_integer_distribution_counts_every_scale_point(values, scale, expected):
    result = distribution(values, scale_min=scale[0], scale_max=scale[1], integer=True)
    assert result == expected
    assert list(result) == list(expected)  # scale order


def test_continuous_distribution_has_five_equal_width_bins_with_edges_in_the_labels():
    values = [0.0, 0.19, 0.2, 0.6, 0.61, 0.99, 1.0]
    assert distribution(values, scale_min=0.0, scale_max=1.0, integer=False) == {
        "0.00–0.20": 2,
        "0.20–0.40": 1,
        "0.40–0.60": 0,
        "0.60–0.80": 2,  # 0.6 / 0.2 == 2.9999999999999996, still the 0.60 bin
        "0.80–1.00": 2,  # the last bin holds the scale maximum
    }


def test_continuous_distribution_labels_follow_the_scale():
    result = distribution([1.0, 10.0], scale_min=1.0, scale_max=10.0, integer=False)
    assert list(result) == ["1.00–2.80", "2.80–4.60", "4.60–6.40", "6.40–8.20", "8.20–10.00"]
    assert sum(result.values()) == 2


@pytest.mark.parametrize(
    ("values", "integer", "message"),
    [
        pytest.param([6], True, "outside the scale", id="above-integer-scale"),
        pytest.param([-0.1], False, "outside the scale", id="below-continuous-scale"),
        pytest.param([2.5], True, "not a point", id="fraction-on-integer-scale"),
    ],
)
def test_distribution_rejects_scores_off_the_scale(values, integer, message):
    with pytest.raises(ValueError, match=message):
        distribution(values, scale_min=0, scale_max=5, integer=integer)


def test_integer_distribution_needs_integer_bounds():
    with pytest.raises(ValueError, match="integer bounds"):
        distribution([1.0], scale_min=0.5, scale_max=5, integer=True)


def test_by_category_groups_cases_and_sorts_the_keys():
    result = by_category(
        ["b", None, "a", "a", "b"],
        [1.0, 2.0, 3.0, 4.0, 5.0],
        [True, None, False, True, True],
    )
    assert list(result) == ["(none)", "a", "b"]
    # mean_ci: scipy.stats.t.interval(0.95, 1, loc=3.5, scale=0.5);
    # pass_rate_ci: scipy.stats.binomtest(1, 2).proportion_ci(method="wilson").
    assert result["a"] == CategoryStats(
        n=2,
        mean=3.5,
        mean_ci=pytest.approx((-2.853102368087347, 9.853102368087347), rel=1e-12),
        pass_rate=0.5,
        pass_rate_ci=pytest.approx((0.09453120573423074, 0.9054687942657693), rel=1e-12),
    )


def test_a_category_of_one_case_without_pass_outcome_has_undefined_intervals():
    result = by_category([None], [2.0], [None])
    assert result == {
        "(none)": CategoryStats(
            n=1,
            mean=2.0,
            mean_ci=(None, None),
            pass_rate=None,
            pass_rate_ci=(None, None),
            mean_ci_why="one case: no spread to measure",
        )
    }


# Regression (review 2026-11-23, finding 9): "travel", 4 cases all scored 3, read
# "3.00 [3.00, 3.00]". Its pass rate 4 of 4 gets the Wilson interval
# scipy.stats.binomtest(4, 4).proportion_ci(method="wilson"), not [100%, 100%].
def test_a_small_category_without_spread_has_no_mean_interval_and_a_wide_pass_interval():
    result = by_category(["travel"] * 4, [3.0] * 4, [True] * 4)
    assert result["travel"].mean == 3.0
    assert result["travel"].mean_ci == (None, None)
    assert result["travel"].mean_ci_why == "no spread: every score is 3"
    assert result["travel"].pass_rate_ci == pytest.approx((0.5101091635454027, 1.0), rel=1e-12)


def test_by_category_of_no_cases_is_empty():
    assert by_category([], [], []) == {}


def test_by_category_results_serialise_to_json():
    result = by_category(["x", "x", "x"], [1.0, 2.0, 4.0], [True, False, True])
    json.dumps({name: dataclasses.asdict(stats) for name, stats in result.items()})


def test_by_category_rejects_misaligned_inputs():
    with pytest.raises(ValueError, match="differ in length"):
        by_category(["a", "b"], [1.0], [True, False])

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from judgecli.stats.calibration import (
    ReliabilityBin,
    brier_score,
    expected_calibration_error,
    reliability_table,
)

# A hand-worked example: eight verdicts.
CONFIDENCE = [0.95, 0.85, 0.8, 0.7, 0.6, 0.55, 0.3, 1.0]
CORRECT = [True, True, False, True, False, True, False, True]
# Width, 5 bins, edges 0, .2, .4, .6, .8, 1, right-closed (an edge value goes below it):
#   (.2, .4]: 0.3 F                  |0 − 0.3|           · 1 = 0.3
#   (.4, .6]: 0.55 T, 0.6 F          |1 − 1.15|          = 0.15  (count · gap)
#   (.6, .8]: 0.7 T, 0.8 F           |1 − 1.5|           = 0.5
#   (.8, 1]:  0.85 T, 0.95 T, 1.0 T  |3 − 2.8|           = 0.2
#   ECE = (0.3 + 0.15 + 0.5 + 0.2) / 8 = 1.15 / 8 = 0.14375
# Mass, 2 bins: sorted order cut into 4 + 4:
#   {0.3 F, 0.55 T, 0.6 F, 0.7 T}   |2 − 2.15| = 0.15
#   {0.8 F, 0.85 T, 0.95 T, 1.0 T}  |3 − 3.6|  = 0.6
#   ECE = 0.75 / 8 = 0.09375
# Brier: (0.05² + 0.15² + 0.8² + 0.3² + 0.6² + 0.45² + 0.3² + 0²) / 8
#      = (0.0025 + 0.0225 + 0.64 + 0.09 + 0.36 + 0.2025 + 0.09 + 0) / 8 = 1.4075 / 8


def random_judge(n=500, seed=1):
    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.0, 1.0, n)
    # Overconfident: right with probability 0.3 + 0.5·confidence.
    correct = rng.uniform(0.0, 1.0, n) < 0.3 + 0.5 * confidence
    return confidence, correct


def approx_bin(low, high, mean_confidence, accuracy, count):
    return ReliabilityBin(
        low=pytest.approx(low),
        high=pytest.approx(high),
        mean_confidence=pytest.approx(mean_confidence),
        accuracy=pytest.approx(accuracy),
        count=count,
    )


@pytest.mark.parametrize(
    ("bins", "strategy", "ece"),
    [
        pytest.param(5, "width", 1.15 / 8, id="width-5"),
        pytest.param(2, "mass", 0.75 / 8, id="mass-2"),
        pytest.param(1, "width", abs(5 - 5.75) / 8, id="one-bin-is-the-overall-gap"),
    ],
)
def test_ece_of_the_hand_worked_example(bins, strategy, ece):
    result = expected_calibration_error(CONFIDENCE, CORRECT, bins=bins, strategy=strategy)
    assert result == pytest.approx(ece, abs=1e-12)
    assert type(result) is float


def test_reliability_table_of_the_hand_worked_example():
    table = reliability_table(CONFIDENCE, CORRECT, bins=5)
    assert table == [
        approx_bin(0.2, 0.4, 0.3, 0.0, 1),
        approx_bin(0.4, 0.6, 0.575, 0.5, 2),
        approx_bin(0.6, 0.8, 0.75, 0.5, 2),
        approx_bin(0.8, 1.0, 2.8 / 3, 1.0, 3),
    ]
    assert all(type(b.count) is int and type(b.low) is float for b in table)


@pytest.mark.parametrize("strategy", ["width", "mass"])
def test_a_perfectly_calibrated_judge_has_zero_ece(strategy):
    # Says 0.2 on five verdicts (one right), 0.8 on five (four right), 1.0 on two (both).
    confidence = [0.2] * 5 + [0.8] * 5 + [1.0] * 2
    correct = [True] + [False] * 4 + [True] * 4 + [False] + [True] * 2
    ece = expected_calibration_error(confidence, correct, bins=3, strategy=strategy)
    assert ece == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("strategy", ["width", "mass"])
@pytest.mark.parametrize("bins", [1, 10, 15])
def test_an_overconfident_judge_has_the_gap_as_ece(bins, strategy):
    # 0.95 stated, 70% right; 0.75 stated, 50% right: a gap of 0.25 at both levels.
    confidence = [0.95] * 10 + [0.75] * 10
    correct = [True] * 7 + [False] * 3 + [True] * 5 + [False] * 5
    ece = expected_calibration_error(confidence, correct, bins=bins, strategy=strategy)
    assert ece == pytest.approx(0.25, abs=1e-12)


@pytest.mark.parametrize(
    ("confidence", "low", "high"),
    [
        pytest.param(0.0, 0.0, 0.1, id="zero-in-the-first-bin"),
        pytest.param(0.7, 0.6, 0.7, id="an-edge-value-goes-to-the-bin-below"),
        pytest.param(0.7000001, 0.7, 0.8, id="just-above-an-edge"),
        pytest.param(0.9, 0.8, 0.9, id="point-nine-below-its-edge"),
        pytest.param(1.0, 0.9, 1.0, id="one-in-the-last-bin"),
    ],
)
def test_width_bins_are_closed_on_the_right(confidence, low, high):
    [only] = reliability_table([confidence], [True], bins=10)
    assert (only.low, only.high) == pytest.approx((low, high))


def test_stated_point_nine_and_one_fall_in_different_width_bins():
    table = reliability_table([0.9, 0.9, 1.0], [True, False, True], bins=10)
    assert [b.count for b in table] == [2, 1]


def test_mass_bins_are_equal_count_without_ties():
    confidence, correct = random_judge(n=103)
    counts = [b.count for b in reliability_table(confidence, correct, bins=10, strategy="mass")]
    assert counts == [len(chunk) for chunk in np.array_split(np.arange(103), 10)]


def test_mass_bins_never_split_a_run_of_equal_confidences():
    # Sorted: 0.5, 0.5, then six 0.9s; cuts every 2 rows would split the 0.9s three ways.
    confidence = [0.9] * 6 + [0.5] * 2
    correct = [True, False, True, True, False, True, True, False]
    table = reliability_table(confidence, correct, bins=4, strategy="mass")
    assert table == [approx_bin(0.0, 0.5, 0.5, 0.5, 2), approx_bin(0.5, 0.9, 0.9, 4 / 6, 6)]


def test_mass_ece_does_not_depend_on_the_order_of_tied_rows():
    confidence = np.array([0.9] * 6 + [0.5] * 2 + [0.7] * 4)
    correct = np.array([True, False] * 6)
    order = np.random.default_rng(3).permutation(confidence.size)
    first = expected_calibration_error(confidence, correct, bins=5, strategy="mass")
    again = expected_calibration_error(confidence[order], correct[order], bins=5, strategy="mass")
    assert first == pytest.approx(again, abs=1e-15)


@pytest.mark.parametrize("strategy", ["width", "mass"])
@pytest.mark.parametrize("bins", [1, 4, 10, 20])
def test_ece_is_the_count_weighted_gap_of_the_reliability_table(bins, strategy):
    confidence, correct = random_judge()
    table = reliability_table(confidence, correct, bins=bins, strategy=strategy)
    n = sum(b.count for b in table)
    assert n == len(confidence)
    from_table = sum(b.count / n * abs(b.accuracy - b.mean_confidence) for b in table)
    ece = expected_calibration_error(confidence, correct, bins=bins, strategy=strategy)
    assert ece == pytest.approx(from_table, abs=1e-12)


def test_width_table_matches_sklearn_calibration_curve():
    confidence, correct = random_judge()
    accuracy, mean_confidence = calibration_curve(correct, confidence, n_bins=10)
    table = reliability_table(confidence, correct, bins=10)
    assert [b.accuracy for b in table] == pytest.approx(accuracy, abs=1e-12)
    assert [b.mean_confidence for b in table] == pytest.approx(mean_confidence, abs=1e-12)


def test_brier_score_of_the_hand_worked_example():
    assert brier_score(CONFIDENCE, CORRECT) == pytest.approx(1.4075 / 8, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_brier_score_matches_sklearn(seed):
    confidence, correct = random_judge(seed=seed)
    expected = brier_score_loss(correct, confidence, pos_label=True)
    result = brier_score(confidence, correct)
    assert result == pytest.approx(expected, abs=1e-12)
    assert type(result) is float


def test_a_judge_that_always_says_half_has_brier_a_quarter():
    assert brier_score([0.5] * 4, [True, False, False, True]) == pytest.approx(0.25)


def test_no_data_gives_none_and_an_empty_table():
    assert expected_calibration_error([], []) is None
    assert expected_calibration_error([], [], strategy="mass") is None
    assert brier_score([], []) is None
    assert reliability_table([], []) == []


@pytest.mark.parametrize(
    ("confidence", "correct", "kwargs", "message"),
    [
        pytest.param([0.5, 0.5], [True], {}, "differ in length", id="misaligned"),
        pytest.param([1.2], [True], {}, r"\[0, 1\]", id="above-one"),
        pytest.param([-0.1], [True], {}, r"\[0, 1\]", id="below-zero"),
        pytest.param([float("nan")], [True], {}, r"\[0, 1\]", id="nan"),
        pytest.param([0.5], [2], {}, "booleans", id="correct-not-boolean"),
        pytest.param([0.5], [True], {"bins": 0}, "bins", id="no-bins"),
        pytest.param([0.5], [True], {"strategy": "quantile"}, "strategy", id="unknown-strategy"),
    ],
)
def test_bad_input_is_rejected(confidence, correct, kwargs, message):
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(confidence, correct, **kwargs)
    with pytest.raises(ValueError, match=message):
        reliability_table(confidence, correct, **kwargs)


def test_brier_score_rejects_confidence_outside_zero_and_one():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        brier_score([1.5], [True])


def test_a_reliability_bin_is_frozen():
    bin_ = ReliabilityBin(low=0.0, high=0.1, mean_confidence=0.05, accuracy=0.0, count=1)
    with pytest.raises(AttributeError):
        bin_.count = 2  # type: ignore[misc]

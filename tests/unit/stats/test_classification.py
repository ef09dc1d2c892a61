import math

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_recall_fscore_support

from judgecli.stats.classification import (
    ClassReport,
    accuracy,
    accuracy_resampled,
    accuracy_within,
    macro_f1,
    per_class_report,
    within_tolerance,
)

# A 3-class example; confusion matrix (rows human, columns judge, order pass/partial/fail):
#   pass    [3, 1, 0]   TP 3, predicted 3, support 4: P 1,   R 3/4, F1 6/7
#   partial [0, 2, 1]   TP 2, predicted 4, support 3: P 1/2, R 2/3, F1 4/7
#   fail    [0, 1, 2]   TP 2, predicted 3, support 3: P 2/3, R 2/3, F1 2/3
# macro F1 = (6/7 + 4/7 + 2/3) / 3 = 44/63; accuracy = 7/10.
LABELS = ["pass", "partial", "fail"]
TRUTH = ["pass"] * 4 + ["partial"] * 3 + ["fail"] * 3
PRED = ["pass"] * 3 + ["partial"] * 3 + ["fail"] * 3 + ["partial"]

# Undefined ratios: "fail" is never predicted (precision 0/0), "extra" never a human
# label (recall 0/0), "skip" used by nobody (all 0/0).
SPARSE_LABELS = ["P", "M", "F", "extra", "skip"]
SPARSE_TRUTH = ["P", "P", "M", "M", "F"]
SPARSE_PRED = ["P", "M", "M", "extra", "P"]


def test_per_class_report_of_the_three_class_example():
    reports = per_class_report(TRUTH, PRED, labels=LABELS)
    assert reports == [
        ClassReport("pass", precision=1.0, recall=0.75, f1=pytest.approx(6 / 7), support=4),
        ClassReport(
            "partial",
            precision=0.5,
            recall=pytest.approx(2 / 3),
            f1=pytest.approx(4 / 7),
            support=3,
        ),
        ClassReport(
            "fail",
            precision=pytest.approx(2 / 3),
            recall=pytest.approx(2 / 3),
            f1=pytest.approx(2 / 3),
            support=3,
        ),
    ]
    assert all(type(r.support) is int and type(r.f1) is float for r in reports)


@pytest.mark.parametrize(
    ("truth", "pred", "labels"),
    [
        pytest.param(TRUTH, PRED, LABELS, id="three-class"),
        pytest.param(SPARSE_TRUTH, SPARSE_PRED, SPARSE_LABELS, id="undefined-ratios"),
    ],
)
def test_per_class_report_matches_sklearn_with_none_for_its_nan(truth, pred, labels):
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, pred, labels=labels, zero_division=np.nan
    )
    reports = per_class_report(truth, pred, labels=labels)

    def as_nan(value):
        return math.nan if value is None else value

    assert [as_nan(r.precision) for r in reports] == pytest.approx(precision, nan_ok=True)
    assert [as_nan(r.recall) for r in reports] == pytest.approx(recall, nan_ok=True)
    assert [as_nan(r.f1) for r in reports] == pytest.approx(f1, nan_ok=True)
    assert [r.support for r in reports] == list(support)


def test_a_ratio_of_zero_over_zero_is_none_not_zero():
    reports = {
        r.label: r for r in per_class_report(SPARSE_TRUTH, SPARSE_PRED, labels=SPARSE_LABELS)
    }
    assert reports["F"] == ClassReport("F", precision=None, recall=0.0, f1=0.0, support=1)
    assert reports["extra"] == ClassReport("extra", precision=0.0, recall=None, f1=0.0, support=0)
    assert reports["skip"] == ClassReport("skip", precision=None, recall=None, f1=None, support=0)


def test_reports_follow_the_order_of_labels():
    reports = per_class_report(TRUTH, PRED, labels=["fail", "pass", "partial"])
    assert [r.label for r in reports] == ["fail", "pass", "partial"]
    assert reports[1].f1 == pytest.approx(6 / 7)


def test_macro_f1_of_the_three_class_example_matches_sklearn():
    result = macro_f1(per_class_report(TRUTH, PRED, labels=LABELS))
    assert result == pytest.approx(44 / 63)
    assert result == pytest.approx(f1_score(TRUTH, PRED, labels=LABELS, average="macro"))


def test_macro_f1_leaves_out_a_label_nobody_used():
    # (1/2 + 1/2 + 0 + 0) / 4: "F" (missed) and "extra" (wrongly predicted) count as 0,
    # "skip" is not there at all. sklearn's default zero_division=0 gives 1/5 instead.
    reports = per_class_report(SPARSE_TRUTH, SPARSE_PRED, labels=SPARSE_LABELS)
    assert macro_f1(reports) == pytest.approx(0.25)
    sklearn_nan = f1_score(
        SPARSE_TRUTH, SPARSE_PRED, labels=SPARSE_LABELS, average="macro", zero_division=np.nan
    )
    assert macro_f1(reports) == pytest.approx(sklearn_nan)


def test_no_items_give_none_everywhere():
    reports = per_class_report([], [], labels=LABELS)
    assert [(r.precision, r.recall, r.f1, r.support) for r in reports] == [
        (None, None, None, 0)
    ] * 3
    assert macro_f1(reports) is None
    assert macro_f1([]) is None
    assert accuracy([], []) is None
    assert accuracy_within([], []) is None


@pytest.mark.parametrize(
    ("truth", "pred", "message"),
    [
        pytest.param(["pass"], ["pass", "fail"], "differ in length", id="misaligned"),
        pytest.param(["pass"], ["great"], "great", id="unknown-label"),
    ],
)
def test_per_class_report_rejects_bad_input(truth, pred, message):
    with pytest.raises(ValueError, match=message):
        per_class_report(truth, pred, labels=LABELS)


def test_accuracy_is_exact_agreement():
    assert accuracy(TRUTH, PRED) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="differ in length"):
        accuracy([1, 2], [1])


@pytest.mark.parametrize(
    ("truth", "pred", "tolerance", "expected"),
    [
        pytest.param([1, 2, 3, 4, 5], [2, 2, 5, 3, 1], 1.0, 3 / 5, id="adjacent"),
        pytest.param([1, 2, 3, 4, 5], [2, 2, 5, 3, 1], 0.0, 1 / 5, id="exact"),
        pytest.param([1, 2, 3, 4, 5], [2, 2, 5, 3, 1], 2.0, 4 / 5, id="within-two"),
        pytest.param([1.1], [0.9], 0.2, 1.0, id="rounding-does-not-push-out"),
        pytest.param([1.1], [0.85], 0.2, 0.0, id="a-real-gap-is-outside"),
        pytest.param([0.5, 3.0], [1.0, 3.5], 0.5, 1.0, id="half-points"),
    ],
)
def test_accuracy_within_a_tolerance(truth, pred, tolerance, expected):
    result = accuracy_within(truth, pred, tolerance=tolerance)
    assert result == pytest.approx(expected)
    assert type(result) is float


@pytest.mark.parametrize(
    ("truth", "pred", "tolerance", "message"),
    [
        pytest.param([1.0], [1.0, 2.0], 1.0, "differ in length", id="misaligned"),
        pytest.param([1.0], [math.nan], 1.0, "nan", id="nan"),
        pytest.param([1.0], [1.0], -1.0, "tolerance", id="negative-tolerance"),
        pytest.param([1.0], [1.0], math.nan, "tolerance", id="nan-tolerance"),
    ],
)
def test_accuracy_within_rejects_bad_input(truth, pred, tolerance, message):
    with pytest.raises(ValueError, match=message):
        accuracy_within(truth, pred, tolerance=tolerance)


def test_accuracy_within_of_no_items_is_none():
    assert accuracy_within([], []) is None


def test_resampled_accuracy_weighs_each_row_by_its_count():
    hits = np.array([True, False, True])
    counts = np.array([[1.0, 1.0, 1.0], [0.0, 3.0, 0.0], [2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(accuracy_resampled(hits, counts), [2 / 3, 0.0, 2 / 3])


def test_resampled_accuracy_counts_only_kept_rows_and_is_nan_without_any():
    # Row 1 is left out (say, a tie); resample 1 holds nothing else, so it has no value.
    hits = np.array([True, False, False])
    kept = np.array([True, False, True])
    counts = np.array([[1.0, 4.0, 1.0], [0.0, 3.0, 0.0]])
    got = accuracy_resampled(hits, counts, kept=kept)
    assert got[0] == 0.5
    assert np.isnan(got[1])


def test_resampled_accuracy_equals_accuracy_of_each_resample():
    truth, pred = np.array(TRUTH), np.array(PRED)
    counts = np.random.default_rng(2).multinomial(10, np.full(10, 0.1), size=30).astype(float)
    rows = [np.repeat(np.arange(10), c.astype(int)) for c in counts]
    got = accuracy_resampled(truth == pred, counts)
    assert list(got) == [accuracy(list(truth[r]), list(pred[r])) for r in rows]
    within = within_tolerance([1, 2, 3, 4, 5], [2, 2, 5, 3, 1])
    assert list(within) == [True, True, False, True, False]

"""Known answers for the calibrate numbers, computed by hand or pinned from sklearn/scipy."""

from __future__ import annotations

import pytest

from judgecli.inputs.labels import Label, LabelSpace
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.rubric import RubricKind
from judgecli.summary.calibrate import (
    disagreements,
    label_results,
    majority_labels,
    summarize_calibration,
)
from judgecli.verdict import Position, Verdict

SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))


def scored(case_id, score, confidence=None):
    verdict = Verdict(reasoning="r", score=score, confidence=confidence)
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        score=score,
        rubric_hash="h",
        judgements=[Judgement(model="m", verdict=verdict, attempts=1)],
    )


def label(case_id, value, annotator=None):
    return Label(
        id=case_id,
        value=float(value) if isinstance(value, int) else value,
        annotator=annotator,
        line=1,
    )


# judge: 1 2 3 4 4 2 ; human: 1 2 3 3 4 1
RESULTS = [scored(str(i), s) for i, s in enumerate([1, 2, 3, 4, 4, 2])]
LABELS = [label(str(i), h) for i, h in enumerate([1, 2, 3, 3, 4, 1])]


def test_accuracy_kappa_and_correlations_match_reference_values():
    s = summarize_calibration(RESULTS, LABELS, SCALE)
    assert s.n_labels == 6
    assert s.accuracy == pytest.approx(4 / 6)
    assert s.within_one == 1.0
    # Pinned once from sklearn.metrics.cohen_kappa_score(human, judge[, weights="quadratic"])
    # with labels=[1, 2, 3, 4].
    assert s.cohen_kappa == pytest.approx(0.5714285714285714)
    assert s.weighted_kappa == pytest.approx(0.8695652173913043)
    # Pinned from scipy.stats.spearmanr / pearsonr on the same vectors.
    assert s.spearman == pytest.approx(0.909090909090909)
    assert s.pearson == pytest.approx(0.9090909090909091)
    assert s.confusion is not None
    assert s.confusion.matrix == [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]]
    lo, hi = s.accuracy_ci
    assert lo <= s.accuracy <= hi


def test_every_case_label_pair_counts():
    extra = [label("0", 2, "r2"), label("1", 2, "r2")]
    s = summarize_calibration(RESULTS, [*LABELS, *extra], SCALE)
    assert s.n_labels == 8
    assert s.n_labelled_cases == 6
    assert s.accuracy == pytest.approx(5 / 8)


def test_labels_without_a_verdict_are_counted_not_guessed():
    failed = CaseResult(id="9", status=CaseStatus.FAILED, error="x", rubric_hash="h")
    s = summarize_calibration([*RESULTS, failed], [*LABELS, label("9", 4), label("404", 1)], SCALE)
    assert s.n_labels == 6
    assert s.n_unmatched_labels == 2


def test_fractional_human_means_get_correlations_not_kappa():
    labels = [label(str(i), h) for i, h in enumerate([1.2, 2.0, 2.8, 3.4, 4.0, 1.6])]
    s = summarize_calibration(RESULTS, labels, SCALE)
    # Not computed at all (absent from summary.json), not computed as null.
    assert s.cohen_kappa is None
    assert "cohen_kappa" not in s.model_fields_set
    assert s.confusion is None
    assert "confusion" not in s.model_fields_set
    assert s.spearman is not None


def test_human_human_agreement_sits_beside_judge_human():
    labels = [
        label("0", 1, "a"),
        label("0", 1, "b"),
        label("1", 2, "a"),
        label("1", 3, "b"),
        label("2", 3, "a"),
        label("2", 3, "b"),
    ]
    s = summarize_calibration(RESULTS[:3], labels, SCALE)
    assert s.human_human is not None
    assert s.human_human.accuracy == pytest.approx(2 / 3)
    assert s.human_human.annotators == ["a", "b"]
    # Majority: case 0 → 1, case 2 → 3; case 1 is split and has no majority.
    assert s.judge_vs_majority is not None
    assert s.judge_vs_majority.n_labels == 2


def test_majority_label_skips_ties():
    chosen = majority_labels([label("x", 1, "a"), label("x", 2, "b"), label("y", 3, "a")])
    assert [(c.id, c.value) for c in chosen] == [("y", 3.0)]


def test_calibration_of_stated_confidence():
    results = [scored("0", 1, 0.9), scored("1", 2, 0.9), scored("2", 3, 0.6), scored("3", 4, 0.6)]
    labels = [label("0", 1), label("1", 2), label("2", 3), label("3", 1)]
    s = summarize_calibration(results, labels, SCALE)
    # Bin 0.9: 2 right of 2 → |1 - 0.9|; bin 0.6: 1 of 2 → |0.5 - 0.6|. ECE = (0.1 + 0.1) / 2.
    assert s.ece == pytest.approx(0.1)
    # Brier: (0.1² + 0.1² + 0.4² + 0.6²) / 4 = 0.135
    assert s.brier == pytest.approx(0.135)
    assert s.reliability is not None
    assert sum(b.count for b in s.reliability) == 4


def test_pairwise_agreement_with_and_without_ties_and_per_order_accuracy():
    def case(case_id, winner, slots):
        js = [
            Judgement(model="m", order=o, verdict=Verdict(reasoning="r", winner=Position(p)))
            for o, p in zip((Order.OLD_NEW, Order.NEW_OLD), slots, strict=True)
        ]
        return CaseResult(
            id=case_id,
            status=CaseStatus.OK,
            winner=winner,
            consistent=True,
            judgements=js,
            rubric_hash="h",
        )

    results = [
        case("0", Winner.NEW, ("B", "A")),
        case("1", Winner.TIE, ("A", "A")),
        case("2", Winner.OLD, ("A", "B")),
    ]
    labels = [label("0", "new"), label("1", "new"), label("2", "tie")]
    s = summarize_calibration(results, labels, LabelSpace(kind=RubricKind.PAIRWISE))
    assert s.agreement_with_ties == pytest.approx(1 / 3)
    # Without ties only case 0 remains (case 1: judge tie; case 2: human tie).
    assert s.agreement_without_ties == 1.0
    # old-new order said new, old, old → right on case 0 only; new-old said new, new, old.
    assert s.by_order is not None
    assert s.by_order["m"] == {
        "old-new": pytest.approx(1 / 3),
        "new-old": pytest.approx(2 / 3),
        "mean": pytest.approx(0.5),
    }


def test_disagreements_list_the_worst_first():
    results = [*RESULTS, scored("6", 4, 0.9)]
    rows = disagreements(results, [*LABELS, label("6", 1)], RubricKind.POINTWISE)
    # Case 6 is off by 3; cases 3 and 5 by 1 each (ties broken by id).
    assert [(r["id"], r["gap"]) for r in rows] == [("6", 3.0), ("3", 1.0), ("5", 1.0)]
    assert rows[0]["confidence"] == 0.9


# 16 cases: a judge and two raters (b labelled 10 of them) on a 1-4 scale.
PIN_JUDGE = [3, 3, 2, 2, 2, 2, 2, 2, 1, 2, 3, 1, 4, 2, 1, 3]
PIN_RATER_A = [3, 2, 2, 3, 3, 2, 2, 2, 1, 3, 4, 1, 4, 2, 1, 3]
PIN_RATER_B = [None, 1, 2, None, 3, 1, None, 1, 1, None, 4, 2, None, 1, 1, None]


@pytest.mark.parametrize(
    ("side", "key", "expected"),
    [
        pytest.param("", "accuracy_ci", (0.344540229885058, 0.7309782608695641), id="accuracy"),
        pytest.param("", "cohen_kappa_ci", (0.061328790459965865, 0.6033249504506187), id="kappa"),
        pytest.param(
            "", "weighted_kappa_ci", (0.27991489361702143, 0.8370111504615035), id="weighted-kappa"
        ),
        pytest.param("", "within_one_ci", (0.8846153846153846, 1.0), id="within-one"),
        pytest.param("", "spearman_ci", (0.2636115391689623, 0.8862195319585225), id="spearman"),
        pytest.param("", "kendall_ci", (0.24145750980140682, 0.8433443706635905), id="kendall"),
        pytest.param("", "pearson_ci", (0.30286189912419725, 0.8835125369423146), id="pearson"),
        pytest.param(
            "human_human",
            "weighted_kappa_ci",
            (-0.2068965517241379, 0.92),
            id="human-human-weighted-kappa",
        ),
        pytest.param(
            "human_human",
            "spearman_ci",
            (-0.37499999999999994, 0.9460998335825322),
            id="human-human-spearman",
        ),
        pytest.param(
            "human_human", "kendall_ci", (-0.375, 0.9153348228041136), id="human-human-kendall"
        ),
    ],
)
def test_intervals_are_the_ones_scipy_per_resample_gave(side, key, expected):
    # Regression for issue 13 §6: the intervals were computed with one scipy/sklearn call
    # per resample (seed 0, 2,000 resamples); the array form must give the same numbers.
    # Pinned from that implementation; equal to rounding (1e-15).
    results = [scored(str(i), s) for i, s in enumerate(PIN_JUDGE)]
    labels = [label(str(i), v, "a") for i, v in enumerate(PIN_RATER_A)]
    labels += [label(str(i), v, "b") for i, v in enumerate(PIN_RATER_B) if v is not None]
    s = summarize_calibration(results, labels, SCALE, seed=0)
    got = getattr(getattr(s, side), key) if side else getattr(s, key)
    assert got == pytest.approx(expected, abs=1e-15)


def test_labels_whose_cases_all_failed_give_no_numbers_and_no_crash():
    # Regression for issue 13 §4 (`min() arg is an empty sequence`): with no scale to fall
    # back on, an empty set of (verdict, label) pairs has no categories at all.
    failed = CaseResult(id="0", status=CaseStatus.FAILED, error="x", rubric_hash="h")
    s = summarize_calibration([failed], [label("0", 3)], LabelSpace(kind=RubricKind.POINTWISE))
    assert (s.n_labels, s.n_unmatched_labels) == (0, 1)
    assert s.spearman is None
    assert s.spearman_ci == (None, None)


@pytest.mark.parametrize(
    ("labels", "verdict", "agrees"),
    [
        pytest.param([3], 3.0, True, id="one-label-equal"),
        pytest.param([2], 3.0, False, id="one-label-off-by-one"),
        pytest.param([3, 3, 2], 3.0, True, id="with-the-majority"),
        pytest.param([2, 2, 3], 3.0, False, id="against-the-majority"),
        pytest.param([2, 3], 3.0, True, id="humans-split-judge-sides-with-one"),
        pytest.param([2, 4], 3.0, False, id="humans-split-judge-with-neither"),
    ],
)
def test_agrees_is_the_judge_against_the_most_common_label(labels, verdict, agrees):
    given = [label("0", v, f"r{i}") for i, v in enumerate(labels)]
    (row,) = label_results([scored("0", verdict)], given, RubricKind.POINTWISE)
    assert row.human_labels == [float(v) for v in labels]
    assert row.agrees is agrees


def test_agrees_is_none_without_a_verdict_or_without_a_label():
    failed = CaseResult(id="f", status=CaseStatus.FAILED, error="x", rubric_hash="h")
    stale = scored("u", 2.0).model_copy(update={"human_labels": [2.0], "agrees": True})
    rows = label_results([failed, stale], [label("f", 2)], RubricKind.POINTWISE)
    assert (rows[0].human_labels, rows[0].agrees) == ([2.0], None)
    assert (rows[1].human_labels, rows[1].agrees) == (None, None)


def test_an_inconsistent_pairwise_case_agrees_with_a_tie_label():
    dropped = CaseResult(id="p", status=CaseStatus.OK, consistent=False, rubric_hash="h")
    (row,) = label_results([dropped], [label("p", "tie")], RubricKind.PAIRWISE)
    assert row.agrees is True

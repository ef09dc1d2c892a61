"""`judge drift`'s numbers on hand-made runs: pairing, labels per kind, flip rate with its
Wilson interval, the shift with its paired t interval (scipy's ttest_rel, pinned), Cohen's κ
(a textbook example and scikit-learn, pinned), the order of the flips, and the runs it refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from judgecli.commands.drift.audit import AuditedRun
from judgecli.commands.drift.measure import measure_drift, pair_cases, shift_gate, shift_of
from judgecli.errors import InputError
from judgecli.report.drift import render_drift_html, render_drift_markdown
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Command
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.refine import RefineSummary
from judgecli.summary.score import ScoreSummary

HEAD: dict[str, Any] = {"rubric": "r", "rubric_version": 1, "rubric_hash": "sha256:a"}


def score_run(name: str, results: list[CaseResult], **summary: Any) -> AuditedRun:
    fields = HEAD | {"models": ["openai/old"]} | summary
    made = ScoreSummary.model_construct(command=Command.SCORE, **fields)
    return AuditedRun(path=Path(name), summary=made, results=results, info={})


def pairwise_run(name: str, results: list[CaseResult]) -> AuditedRun:
    made = PairwiseSummary.model_construct(command=Command.PAIRWISE, models=["m"], **HEAD)
    return AuditedRun(path=Path(name), summary=made, results=results, info={})


def ok(case_id: str, **verdict: Any) -> CaseResult:
    return CaseResult(id=case_id, status=CaseStatus.OK, rubric_hash="h", **verdict)


def failed(case_id: str) -> CaseResult:
    return CaseResult(id=case_id, status=CaseStatus.FAILED, error="no JSON", rubric_hash="h")


def scores(values: Sequence[float], *, pass_at: float | None = None) -> list[CaseResult]:
    return [
        ok(f"q-{i}", score=v, passed=None if pass_at is None else v >= pass_at)
        for i, v in enumerate(values, start=1)
    ]


def choices(labels: list[str]) -> list[CaseResult]:
    return [ok(f"q-{i}", choice=c, passed=c == "YES") for i, c in enumerate(labels, start=1)]


def winners(labels: list[Winner | None]) -> list[CaseResult]:
    return [ok(f"p-{i}", winner=w) for i, w in enumerate(labels, start=1)]


# 12 cases on a 1-4 scale, no pass mark: 7 scores moved (by ±1), 5 did not.
SCORES_A = [1, 2, 3, 4, 2, 3, 4, 1, 3, 2, 4, 3]
SCORES_B = [1, 3, 3, 3, 2, 4, 4, 2, 4, 1, 4, 4]

# Cohen's own kind of example (and Wikipedia's): 50 items, YES/YES 20, YES/NO 5, NO/YES 10,
# NO/NO 15; p_o = 0.7, p_e = 0.5 · 0.6 + 0.5 · 0.4 = 0.5, so κ = 0.4 exactly.
TEXTBOOK_A = ["YES"] * 25 + ["NO"] * 25
TEXTBOOK_B = ["YES"] * 20 + ["NO"] * 5 + ["YES"] * 10 + ["NO"] * 15


def test_the_flip_rate_is_flips_over_paired_cases_with_a_wilson_interval():
    drift = measure_drift(score_run("a", scores(SCORES_A)), score_run("b", scores(SCORES_B)))
    s = drift.summary
    assert (s.n_paired, s.n_flipped) == (12, 7)
    assert s.flip_rate == pytest.approx(7 / 12)
    # scipy.stats.binomtest(7, 12).proportion_ci(method="wilson"), computed once.
    assert s.flip_rate_ci == pytest.approx((0.31951131254954973, 0.8067396863412435))


def test_the_shift_is_the_paired_mean_difference_with_scipys_t_interval_and_p():
    s = measure_drift(score_run("a", scores(SCORES_A)), score_run("b", scores(SCORES_B))).summary
    assert s.shift == pytest.approx(0.25)
    assert (s.mean_a, s.mean_b) == pytest.approx((32 / 12, 35 / 12))
    # scipy.stats.ttest_rel(SCORES_B, SCORES_A): pvalue, confidence_interval(0.95).
    assert s.shift_p_value == pytest.approx(0.27496148552409877)
    assert s.shift_ci == pytest.approx((-0.22892792182753602, 0.728927921827536))


def test_kappa_between_the_runs_scores_matches_sklearn_plain_and_quadratic():
    s = measure_drift(score_run("a", scores(SCORES_A)), score_run("b", scores(SCORES_B))).summary
    # sklearn.metrics.cohen_kappa_score(A, B) and (..., weights="quadratic", labels=[1..4]).
    assert s.kappa == pytest.approx(0.2149532710280373)
    assert s.weighted_kappa == pytest.approx(0.7529411764705882)
    assert s.labels == ["1", "2", "3", "4"]


def test_binary_verdicts_compare_choices_and_shift_the_pass_rate_textbook_kappa():
    a = score_run("a", choices(TEXTBOOK_A), choices={"YES": 25, "NO": 25})
    b = score_run("b", choices(TEXTBOOK_B), choices={"YES": 30, "NO": 20})
    s = measure_drift(a, b).summary
    assert (s.kind, s.compared, s.value) == ("binary", "choice", "passed")
    assert s.kappa == pytest.approx(0.4)
    assert s.flip_rate == pytest.approx(15 / 50)
    # scipy.stats.binomtest(15, 50).proportion_ci(method="wilson")
    assert s.flip_rate_ci == pytest.approx((0.1910355350088095, 0.4375035046445341))
    assert s.shift == pytest.approx(0.1)  # 30 passes instead of 25
    # scipy.stats.ttest_rel(passed_B, passed_A)
    assert s.shift_p_value == pytest.approx(0.1997282402649096)
    assert s.shift_ci == pytest.approx((-0.0545984834896765, 0.2545984834896765))
    assert s.transitions == {"NO": {"NO": 15, "YES": 10}, "YES": {"NO": 5, "YES": 20}}
    assert "weighted_kappa" not in s.model_dump(mode="json")


def test_pointwise_with_a_pass_mark_flips_only_across_the_mark():
    a = score_run("a", scores([2, 3, 4, 1], pass_at=3))
    b = score_run("b", scores([3, 4, 3, 2], pass_at=3))
    drift = measure_drift(a, b)
    assert drift.summary.compared == "passed"
    # 3 → 4 and 4 → 3 stay passes, 1 → 2 stays a fail: only q-1 crossed the mark.
    assert [(f.id, f.a, f.b) for f in drift.flips] == [("q-1", "fail", "pass")]
    assert drift.summary.shift == pytest.approx(0.5)  # the headline value is still the score


def test_pointwise_compares_scores_when_one_run_has_no_pass_mark():
    drift = measure_drift(score_run("a", scores([2, 3], pass_at=3)), score_run("b", scores([2, 4])))
    assert drift.summary.compared == "score"
    assert [(f.a, f.b) for f in drift.flips] == [("3", "4")]


@pytest.mark.parametrize(
    ("a", "b", "flipped", "values"),
    [
        pytest.param(Winner.OLD, Winner.NEW, True, (0.0, 1.0), id="old-to-new"),
        pytest.param(Winner.TIE, Winner.NEW, True, (0.5, 1.0), id="tie-to-new"),
        pytest.param(Winner.NEW, Winner.NEW, False, (1.0, 1.0), id="unchanged"),
        pytest.param(None, Winner.TIE, True, (None, 0.5), id="dropped-to-tie"),
    ],
)
def test_pairwise_labels_are_winners_and_values_news_outcome(a, b, flipped, values):
    drift = measure_drift(pairwise_run("a", winners([a])), pairwise_run("b", winners([b])))
    assert drift.summary.compared == "winner"
    assert drift.summary.n_flipped == int(flipped)
    if flipped:
        flip = drift.flips[0]
        assert (flip.a, flip.b) == (a.value if a else "dropped", b.value)
        assert (flip.a_value, flip.b_value) == values


def test_a_dropped_pair_counts_for_flips_but_has_no_value_to_shift():
    a = pairwise_run("a", winners([None, Winner.OLD, Winner.TIE]))
    b = pairwise_run("b", winners([Winner.NEW, Winner.NEW, Winner.TIE]))
    s = measure_drift(a, b).summary
    assert (s.n_paired, s.n_flipped, s.n_shift) == (3, 2, 2)
    assert s.shift == pytest.approx(0.5)  # (1 − 0) and (0.5 − 0.5), over 2
    assert s.labels == ["old", "tie", "new", "dropped"]


def test_flips_are_listed_largest_change_first_then_by_id_in_natural_order():
    a = score_run(
        "a", [ok(i, score=v) for i, v in [("q-10", 1), ("q-2", 1), ("q-9", 4), ("q-3", 2)]]
    )
    b = score_run(
        "b", [ok(i, score=v) for i, v in [("q-10", 2), ("q-2", 2), ("q-9", 1), ("q-3", 4)]]
    )
    flips = measure_drift(a, b).flips
    assert [(f.id, f.change) for f in flips] == [
        ("q-9", -3.0),
        ("q-3", 2.0),
        ("q-2", 1.0),
        ("q-10", 1.0),
    ]


def test_a_flip_carries_the_case_text_when_the_results_have_it():
    text = {"input": "2+2?", "output": "4"}
    a = score_run("a", [ok("q-1", score=1, case=text)])
    b = score_run("b", [ok("q-1", score=2)])
    flip = measure_drift(a, b).flips[0]
    assert flip.case == text
    assert "case" not in measure_drift(
        score_run("a", scores([1])), score_run("b", scores([2]))
    ).flips[0].model_dump(mode="json")


def test_cases_missing_in_one_run_or_failed_in_either_are_left_out_and_counted():
    a = [ok("q-1", score=1), ok("q-2", score=2), failed("q-3"), ok("q-4", score=3), failed("q-6")]
    b = [ok("q-1", score=1), failed("q-2"), ok("q-3", score=3), ok("q-5", score=1), failed("q-6")]
    pairs, reasons, left_out = pair_cases(a, b)
    assert [x.id for x, _ in pairs] == ["q-1"]
    assert left_out == 5  # q-2, q-3, q-6 failed; q-4 only in A; q-5 only in B
    assert reasons.model_dump() == {
        "missing_in_a": 1,
        "missing_in_b": 1,
        "failed_in_a": 2,
        "failed_in_b": 2,
    }


def test_when_no_case_moved_the_shift_is_zero_with_p_1_and_no_interval():
    # Issue 29: the interval was [0, 0], as if no case of another sample could move either.
    s = measure_drift(score_run("a", scores([1, 2, 3])), score_run("b", scores([1, 2, 3]))).summary
    assert (s.shift, s.shift_ci, s.shift_p_value) == (0.0, (None, None), 1.0)
    # Issue 35: no case records its text, so every case is a system case, alike unmoved.
    assert s.no_interval == {
        "system_shift": "no spread: every change is 0",
        "shift": "no spread: every change is 0",
    }


@pytest.mark.parametrize(
    ("shift_b", "max_shift", "significant", "passed"),
    [
        pytest.param([2, 3, 4, 5, 4, 3], 0.5, True, False, id="significant-and-large-fails"),
        pytest.param([2, 3, 4, 5, 4, 3], 1.5, True, True, id="significant-but-small-passes"),
        pytest.param([1, 3, 3, 4, 2, 3], 0.0, False, True, id="not-significant-passes"),
    ],
)
def test_the_gate_fails_only_a_significant_shift_beyond_the_bar(
    shift_b, max_shift, significant, passed
):
    a = score_run("a", scores([1, 2, 3, 4, 2, 2]))
    gate = measure_drift(a, score_run("b", scores(shift_b)), max_shift=max_shift).summary.gate
    assert gate is not None
    assert (gate.significant, gate.passed) == (significant, passed)


@pytest.mark.parametrize(
    ("scores_b", "shift", "passed"),
    [
        # Every case moved by exactly +1: the t interval is undefined (s = 0), and so is the
        # gate's verdict, which the command turns into exit 3 rather than a guess.
        pytest.param([2, 3, 4], 1.0, None, id="beyond-the-bar-no-verdict"),
        # Issue 29: nothing moved, so there is no interval; the gate (fail only a
        # significant shift beyond the bar) still passes, since 0 is within any bar.
        pytest.param([1, 2, 3], 0.0, True, id="within-the-bar-passes"),
    ],
)
def test_a_shift_without_an_interval_passes_within_the_bar_and_is_undecided_beyond(
    scores_b, shift, passed
):
    a, b = score_run("a", scores([1, 2, 3])), score_run("b", scores(scores_b))
    gate = measure_drift(a, b, max_shift=0.1).summary.gate
    assert gate is not None
    assert (gate.shift, gate.shift_ci, gate.significant, gate.passed) == (
        shift,
        (None, None),
        None,
        passed,
    )
    assert shift_gate(shift_of([]), 0.1).passed is None  # no case with a value at all


def test_runs_of_different_commands_are_refused():
    with pytest.raises(InputError, match="a score run and b a pairwise run"):
        measure_drift(score_run("a", scores([1])), pairwise_run("b", winners([Winner.NEW])))


def test_binary_and_pointwise_verdicts_are_refused():
    binary = score_run("b", choices(["YES"]), choices={"YES": 1})
    with pytest.raises(InputError, match="pointwise verdicts and b binary verdicts"):
        measure_drift(score_run("a", scores([1])), binary)


def test_a_calibrate_run_counts_as_the_command_its_verdicts_come_from():
    labelled = CalibrateSummary.model_construct(command=Command.CALIBRATE, models=["m"], **HEAD)
    calibrated = AuditedRun(Path("c"), labelled, scores([1, 3]), {})
    assert measure_drift(calibrated, score_run("b", scores([1, 2]))).summary.n_flipped == 1
    judged_in_both_orders = [
        ok("p-1", winner=Winner.NEW, judgements=[Judgement(model="m", order=Order.OLD_NEW)])
    ]
    pairwise_calibrate = AuditedRun(Path("c"), labelled, judged_in_both_orders, {})
    drift = measure_drift(pairwise_calibrate, pairwise_run("b", winners([Winner.OLD])))
    assert drift.summary.kind == "pairwise"
    with pytest.raises(InputError, match="c is a calibrate run and b a pairwise run"):
        measure_drift(calibrated, pairwise_run("b", winners([Winner.OLD])))


def test_a_refine_run_is_refused():
    refined = RefineSummary.model_construct(command=Command.REFINE, models=["m"], **HEAD)
    with pytest.raises(InputError, match="refine run"):
        measure_drift(AuditedRun(Path("r"), refined, scores([1]), {}), score_run("b", scores([1])))


def test_runs_sharing_no_graded_case_are_refused():
    with pytest.raises(InputError, match="share no case graded in both"):
        measure_drift(score_run("a", scores([1])), score_run("b", [ok("x-1", score=1)]))


def test_differences_name_what_changed_in_the_judge_and_nothing_that_did_not():
    info_a = {"models": [{"name": "openai/old"}], "config": {"temperature": 0.0, "concurrency": 4}}
    info_b = {"models": [{"name": "openai/new"}], "config": {"temperature": 0.7, "concurrency": 64}}
    a = AuditedRun(Path("a"), score_run("a", []).summary, scores([1]), info_a)
    b_summary = ScoreSummary.model_construct(
        command=Command.SCORE, models=["openai/new"], **(HEAD | {"rubric_hash": "sha256:b"})
    )
    b = AuditedRun(Path("b"), b_summary, scores([2]), info_b)
    differences = {k: (d.a, d.b) for k, d in measure_drift(a, b).summary.differences.items()}
    assert differences == {
        "models": (["openai/old"], ["openai/new"]),
        "rubric_hash": ("sha256:a", "sha256:b"),
        "temperature": (0.0, 0.7),
    }


def test_the_html_report_escapes_what_runs_hold_and_fetches_nothing():
    a = score_run("a", [ok("<script>alert(1)</script>", score=1, case={"output": "<b>x</b>"})])
    b = score_run("b", [ok("<script>alert(1)</script>", score=3)])
    drift = measure_drift(a, b)
    html = render_drift_html(drift)
    assert "<script>alert" not in html
    assert html.count("<script>") == 1  # the page's own, which filters the flipped cases
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http" not in html
    assert "| <script>alert(1)</script> | 1 | 3 | +2 |" in render_drift_markdown(drift)

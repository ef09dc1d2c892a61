"""The gate's three outcomes (issue 29): passed, failed on judged evidence, and undecided when
the evidence cannot decide — a number undefined on this data, a missing interval under
--on lower-bound, a κ on labels of one class, or a judge below the position-consistency
floor (a panel: every judge below it).
"""

from __future__ import annotations

import json

import pytest

from judgecli.deciding.gate import GateOn, GateSpec, evaluate_gate
from judgecli.inputs.labels import Label, LabelSpace
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.rubric import RubricKind
from judgecli.summary.calibrate import summarize_calibration
from judgecli.summary.gate_records import GateOutcome, GateResult
from judgecli.summary.pairwise import JudgeSummary, PairwiseSummary, summarize_pairwise
from judgecli.verdict import Position, Verdict
from tests.unit.deciding.test_gate import summary

RUBRIC = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: '{input} {output_a} {output_b}'\n", source="pw"
)

PASS, FAIL, UNDECIDED = GateOutcome.PASSED, GateOutcome.FAILED, GateOutcome.UNDECIDED


def pairwise(**kw) -> PairwiseSummary:
    """test_gate's summary (60% win rate, 80% consistent), with a first-position rate."""
    return summary(**({"first_position_rate": 0.55} | kw))


def panel(a: float | None, b: float | None) -> dict:
    """A two-judge panel whose judges have these position consistencies."""
    judge = {"wins": 5, "losses": 3, "ties": 2, "win_rate": 0.6}
    return {
        "models": ["a", "b"],
        "consistency": 0.0,
        "judges": {
            "a": JudgeSummary(**judge, consistency=a),
            "b": JudgeSummary(**judge, consistency=b),
        },
    }


# The SmolLM2 run of the review: "A" whatever the order, so 0 wins, 0 losses, all ties.
ALWAYS_A = {
    "win_rate": 0.5,
    "win_rate_ci": (0.5, 0.5),
    "wins": 0,
    "losses": 0,
    "ties": 6,
    "loss_rate": 0.0,
    "loss_rate_ci": (0.0, 0.39),
    "consistency": 0.0,
    "consistency_ci": (0.0, 0.39),
    "first_position_rate": 1.0,
}


@pytest.mark.parametrize(
    ("numbers", "spec", "outcome", "reason"),
    [
        pytest.param({}, GateSpec(min_win_rate=0.55), PASS, None, id="pass"),
        pytest.param({}, GateSpec(min_win_rate=0.65), FAIL, None, id="fail"),
        pytest.param(
            {"win_rate": None, "win_rate_ci": None},
            GateSpec(min_win_rate=0.55),
            UNDECIDED,
            "win_rate is n/a",
            id="no-number",
        ),
        pytest.param(
            {"win_rate": None, "win_rate_ci": None, "dropped": 100},
            GateSpec(min_win_rate=0.55),
            UNDECIDED,
            "--flip-policy drop left each one out",
            id="every-case-dropped",
        ),
        pytest.param(
            {"win_rate_ci": None},
            GateSpec(min_win_rate=0.55, on=GateOn.LOWER_BOUND),
            UNDECIDED,
            "win_rate (0.6) has no 95% interval",
            id="lower-bound-without-an-interval",
        ),
        pytest.param(
            {"win_rate_ci": (None, None)},
            GateSpec(min_win_rate=0.55, on=GateOn.LOWER_BOUND),
            UNDECIDED,
            "--on lower-bound has no bound to compare",
            id="lower-bound-of-an-empty-interval",
        ),
        pytest.param(
            ALWAYS_A,
            GateSpec(min_win_rate=0.55),
            UNDECIDED,
            "the judge could not tell the answers apart (position consistency 0% < 50%)",
            id="below-the-default-floor",
        ),
        pytest.param(
            {"consistency": 0.6},
            GateSpec(min_win_rate=0.55, min_consistency=0.7),
            UNDECIDED,
            "position consistency 60% < 70%",
            id="below-an-explicit-floor",
        ),
        pytest.param(
            {"consistency": None, "consistency_ci": None},
            GateSpec(min_win_rate=0.55),
            UNDECIDED,
            "position consistency n/a < 50%",
            id="no-consistency-measured",
        ),
        pytest.param(
            ALWAYS_A,
            GateSpec(min_win_rate=0.55, min_consistency=0),
            FAIL,
            None,
            id="floor-0-turns-the-floor-off",
        ),
        pytest.param(
            {**ALWAYS_A, "flip": False, "consistency": None, "consistency_ci": None},
            GateSpec(min_win_rate=0.55),
            FAIL,
            None,
            id="no-flip-measures-no-consistency-and-has-no-floor",
        ),
        pytest.param(
            panel(0.2, 0.1),
            GateSpec(min_win_rate=0.55),
            UNDECIDED,
            "no judge of the panel could tell the answers apart (position consistency "
            "a 20%, b 10% < 50%)",
            id="panel-every-judge-below",
        ),
        pytest.param(
            panel(0.9, None),
            GateSpec(min_win_rate=0.55),
            PASS,
            None,
            id="panel-one-judge-above-stands",
        ),
        pytest.param(
            {"win_rate": None, "win_rate_ci": None},
            GateSpec(min_win_rate=0.55, max_loss_rate=0.2),
            FAIL,
            None,
            id="a-check-failed-on-evidence-outweighs-an-undecided-one",
        ),
        pytest.param(
            {**ALWAYS_A, "loss_rate": 0.9},
            GateSpec(min_win_rate=0.55, max_loss_rate=0.2),
            UNDECIDED,
            "could not tell the answers apart",
            id="below-the-floor-even-a-failed-check-decides-nothing",
        ),
    ],
)
def test_the_gate_passes_fails_or_is_undecided(numbers, spec, outcome, reason):
    result = evaluate_gate(pairwise(**numbers), spec)
    assert result.outcome is outcome
    assert result.passed is (outcome is PASS)
    assert result.decided is (outcome is not UNDECIDED)
    if reason is None:
        assert (result.undecided, result.hint) == (None, None)
    else:
        assert reason in result.undecided
        assert result.hint
        assert all(not c.decided and not c.passed and c.undecided for c in result.checks)


def test_a_judge_below_the_floor_is_recorded_with_the_gate():
    result = evaluate_gate(pairwise(**ALWAYS_A), GateSpec(min_win_rate=0.55))
    floor = result.consistency_floor
    assert (floor.threshold, floor.value, floor.met) == (0.5, 0.0, False)
    assert "first_position_rate" in result.hint
    assert "--min-consistency 0" in result.hint


def test_a_panel_floor_names_the_judges_below_it():
    result = evaluate_gate(pairwise(**panel(0.9, 0.3)), GateSpec(min_win_rate=0.55))
    floor = result.consistency_floor
    assert (floor.value, floor.below, floor.met) == (0.9, ["b"], True)
    assert floor.judges == {"a": 0.9, "b": 0.3}


def test_an_explicit_min_consistency_is_a_check_on_the_floor():
    result = evaluate_gate(pairwise(**panel(0.9, 0.3)), GateSpec(min_consistency=0.8))
    [check] = result.checks
    assert (check.metric, check.threshold, check.value, check.on) == (
        "consistency",
        0.8,
        0.9,
        GateOn.POINT,
    )
    assert result.passed is True


def test_the_new_keys_are_written_and_an_old_gate_reads_as_decided():
    result = evaluate_gate(pairwise(**ALWAYS_A), GateSpec(min_win_rate=0.55))
    written = json.loads(result.model_dump_json())
    assert (written["passed"], written["decided"]) == (False, False)
    assert written["undecided"].startswith("the judge could not tell the answers apart")
    assert written["checks"][0]["decided"] is False
    assert written["consistency_floor"]["met"] is False
    # A summary.json written before issue 29 has none of these keys.
    old = {k: v for k, v in written.items() if k not in ("decided", "undecided", "hint")}
    old["passed"] = True
    old["checks"] = [
        {k: v for k, v in c.items() if k not in ("decided", "undecided")} for c in old["checks"]
    ]
    assert GateResult.model_validate(old).outcome is PASS


SCALE = LabelSpace(kind=RubricKind.POINTWISE, scale=(1, 4))


def scored(case_id: str, score: int) -> CaseResult:
    verdict = Verdict(reasoning="r", score=score)
    judgement = Judgement(model="m", verdict=verdict, attempts=1)
    return CaseResult(
        id=case_id, status=CaseStatus.OK, score=score, rubric_hash="h", judgements=[judgement]
    )


def calibrated(judge: list[int], human: list[int]):
    results = [scored(str(i), s) for i, s in enumerate(judge)]
    labels = [Label(id=str(i), value=float(h), annotator=None, line=1) for i, h in enumerate(human)]
    return summarize_calibration(results, labels, SCALE)


@pytest.mark.parametrize(
    ("judge", "human", "spec", "outcome"),
    [
        pytest.param([1, 2, 3, 4], [1, 2, 3, 4], GateSpec(min_kappa=0.5), PASS, id="kappa-pass"),
        pytest.param([4, 3, 2, 1], [1, 2, 3, 4], GateSpec(min_kappa=0.5), FAIL, id="kappa-fail"),
        pytest.param(
            [3, 3, 3, 3], [3, 3, 3, 3], GateSpec(min_kappa=0.5), UNDECIDED, id="kappa-undefined"
        ),
        pytest.param(
            [3, 2, 3, 4],
            [3, 3, 3, 3],
            GateSpec(min_kappa=0.5),
            UNDECIDED,
            id="kappa-on-one-class-labels-is-0-at-best",
        ),
        pytest.param(
            [3, 3, 3, 3], [3, 3, 3, 3], GateSpec(min_accuracy=0.9), PASS, id="accuracy-is-defined"
        ),
    ],
)
def test_a_kappa_on_labels_of_one_class_is_undecided(judge, human, spec, outcome):
    result = evaluate_gate(calibrated(judge, human), spec)
    assert result.outcome is outcome
    if outcome is UNDECIDED:
        assert "every human label is '3'" in result.undecided
        assert "--min-accuracy" in result.hint


def repeated(i: int, slots: list[tuple[str, str]], *, repeats: bool = True) -> CaseResult:
    """A pair asked len(slots) times (--repeats), each repeat in both orders."""
    judgements = [
        Judgement(
            model="m",
            order=order,
            repeat=repeat if repeats else None,
            verdict=Verdict(reasoning="r", winner=Position(slot)),
            attempts=1,
        )
        for repeat, pair in enumerate(slots)
        for order, slot in zip((Order.OLD_NEW, Order.NEW_OLD), pair, strict=True)
    ]
    agreed = all(pair in (("A", "B"), ("B", "A"), ("tie", "tie")) for pair in slots)
    return CaseResult(
        id=str(i),
        status=CaseStatus.OK,
        winner=Winner.NEW,
        consistent=agreed,
        judgements=judgements,
        rubric_hash="h",
    )


def test_with_repeats_the_floor_counts_each_ask_not_each_pair():
    # Each pair asked 3 times; one ask in three swaps its verdict with the order. Every pair
    # then has an inconsistent ask (`consistency` 0%), yet 2 of 3 asks agree: the judge can
    # tell the answers apart most of the time, and the floor reads 67%.
    results = [repeated(i, [("B", "A"), ("B", "A"), ("A", "A")]) for i in range(6)]
    summary = summarize_pairwise(results, rubric=RUBRIC, models=["m"], flip=True, flip_policy="tie")
    assert summary.consistency == 0.0
    assert summary.ask_consistency == pytest.approx(2 / 3)
    result = evaluate_gate(summary, GateSpec(min_win_rate=0.55))
    assert result.consistency_floor.value == pytest.approx(2 / 3)
    assert result.outcome is PASS


def test_without_repeats_there_is_no_ask_consistency():
    once = [repeated(i, [("B", "A")], repeats=False) for i in range(3)]
    summary = summarize_pairwise(once, rubric=RUBRIC, models=["m"], flip=True, flip_policy="tie")
    assert (summary.consistency, summary.ask_consistency) == (1.0, None)

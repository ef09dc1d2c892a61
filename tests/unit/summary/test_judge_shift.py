"""Judge shift vs system shift (issue 35): the anchors' (byte-identical outputs') mean change
is the judge's shift, with a paired t interval; the other cases' is the system's; and the
test of whether the judge's shift could explain run B's gate decision.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgecli.commands.drift.audit import AuditedRun
from judgecli.commands.drift.measure import measure_drift
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.summary.facts import Command
from judgecli.summary.gate_records import GateCheck, GateMetric, GateOn, GateResult
from judgecli.summary.judge_shift import could_explain, gate_explained, mean_shift
from judgecli.summary.pairwise import PairwiseSummary
from judgecli.summary.score import ScoreSummary

HEAD: dict[str, Any] = {"rubric": "r", "rubric_version": 1, "rubric_hash": "sha256:a"}


def run(name: str, results: list[CaseResult], gate: GateResult | None = None) -> AuditedRun:
    made = ScoreSummary.model_construct(
        command=Command.SCORE, models=[f"openai/{name}"], gate=gate, **HEAD
    )
    return AuditedRun(path=Path(name), summary=made, results=results, info={})


def case(i: int, output: str, choice: str) -> CaseResult:
    return CaseResult(
        id=f"q-{i}",
        status=CaseStatus.OK,
        rubric_hash="h",
        choice=choice,
        passed=choice == "YES",
        case={"input": f"question {i}", "output": output},
    )


def pass_rate_gate(value: float, threshold: float) -> GateResult:
    check = GateCheck(
        metric=GateMetric.PASS_RATE,
        threshold=threshold,
        value=value,
        point=value,
        interval=None,
        on=GateOn.POINT,
        passed=value >= threshold,
        minimum=True,
    )
    return GateResult(
        passed=check.passed,
        metric=check.metric,
        threshold=threshold,
        value=value,
        on=GateOn.POINT,
        checks=[check],
    )


def test_the_judge_shift_interval_is_scipys_one_sample_t_interval_of_the_anchor_changes():
    # scipy.stats.ttest_1samp([-1, -1, 0 × 8], 0).confidence_interval(0.95), computed once.
    shift = mean_shift([-1.0, -1.0] + [0.0] * 8)
    assert shift.n == 10
    assert shift.shift == pytest.approx(-0.2)
    assert shift.ci == pytest.approx((-0.5016209550397608, 0.10162095503976071))


@pytest.mark.parametrize(
    ("margin", "low", "high", "explains"),
    [
        pytest.param(0.02, -0.01, 0.05, True, id="pass-within-the-interval"),
        pytest.param(0.02, 0.05, 0.10, True, id="pass-wholly-owed-to-the-judge"),
        pytest.param(0.08, -0.01, 0.05, False, id="pass-beyond-the-interval"),
        pytest.param(-0.03, -0.05, 0.01, True, id="fail-within-the-interval"),
        pytest.param(-0.03, -0.01, 0.02, False, id="fail-the-judge-cannot-undo"),
        pytest.param(0.0, -0.02, 0.0, False, id="exactly-at-the-bar-and-no-kinder-judge"),
    ],
)
def test_the_judge_explains_a_decision_when_removing_some_plausible_shift_reverses_it(
    margin, low, high, explains
):
    assert could_explain(margin, low, high) is explains


def test_a_ceiling_is_helped_by_a_negative_judge_shift():
    check = GateCheck(
        metric=GateMetric.MEAN,
        threshold=3.0,
        value=2.9,
        point=2.9,
        interval=None,
        on=GateOn.POINT,
        passed=True,
        minimum=False,
    )
    harsher = mean_shift([-0.5, -0.2, -0.3, -0.1])
    kinder = mean_shift([0.5, 0.2, 0.3, 0.1])
    assert gate_explained(check, harsher).margin == pytest.approx(0.1)
    assert gate_explained(check, harsher).explains is True
    assert gate_explained(check, kinder).explains is False


def test_drift_splits_the_shift_into_the_judges_on_identical_outputs_and_the_systems():
    # Six anchors (same text): the new judge fails 2 of the 5 the old passed → −2/6.
    # Four changed outputs: all failed before, 3 pass now → +3/4.
    a_rows = [case(i, f"same {i}", "YES" if i < 5 else "NO") for i in range(6)]
    a_rows += [case(i, f"old {i}", "NO") for i in range(6, 10)]
    b_rows = [case(i, f"same {i}", "NO" if i in (0, 1) or i == 5 else "YES") for i in range(6)]
    b_rows += [case(i, f"new {i}", "NO" if i == 9 else "YES") for i in range(6, 10)]
    s = measure_drift(run("a", a_rows), run("b", b_rows)).summary
    assert (s.n_identical, s.n_system, s.shift_scale) == (6, 4, "pass_rate")
    assert s.judge_shift == pytest.approx(-2 / 6)
    assert s.system_shift == pytest.approx(3 / 4)
    assert s.judge_shift_ci == pytest.approx(mean_shift([-1, -1, 0, 0, 0, 0]).ci)
    assert s.judge_shift_gate is None
    dumped = s.model_dump(mode="json", exclude_none=True)
    assert {"judge_shift", "judge_shift_ci", "system_shift", "system_shift_ci"} <= dumped.keys()


def test_a_gate_passed_by_less_than_the_judges_kindness_is_flagged():
    a_rows = [case(i, f"same {i}", "YES" if i < 5 else "NO") for i in range(10)]
    b_rows = [case(i, f"same {i}", "YES" if i < 8 else "NO") for i in range(10)]
    b_rows[0] = case(0, "changed 0", "YES")
    # The judge passes 3 more of 9 anchors (+1/3); B's pass rate 0.8 clears 0.75 by 0.05.
    s = measure_drift(run("a", a_rows), run("b", b_rows, pass_rate_gate(0.8, 0.75))).summary
    assert s.judge_shift == pytest.approx(3 / 9)
    assert s.judge_shift_gate is not None
    assert s.judge_shift_gate.margin == pytest.approx(0.05)
    assert s.judge_shift_gate.explains is True
    assert any("could explain b's gate" in w for w in s.warnings)
    # The same gate cleared by a margin beyond the interval's upper end: no warning.
    far = measure_drift(run("a", a_rows), run("b", b_rows, pass_rate_gate(0.8, 0.0))).summary
    assert far.judge_shift_gate is not None
    assert far.judge_shift_gate.explains is False
    assert not any("could explain" in w for w in far.warnings)


def test_without_identical_outputs_the_judge_shift_is_unknown_and_said_so():
    a_rows = [case(i, f"old {i}", "NO") for i in range(4)]
    b_rows = [case(i, f"new {i}", "YES") for i in range(4)]
    s = measure_drift(run("a", a_rows), run("b", b_rows)).summary
    assert (s.n_identical, s.judge_shift, s.judge_shift_ci) == (0, None, (None, None))
    assert any("cannot be told from the system's" in w for w in s.warnings)


def test_the_judge_shift_interval_covers_the_true_shift_95_percent_of_the_time():
    # 80 anchors per seed; the old judge passes 75%, the new one fails a pass with
    # probability 0.2 and passes a fail with 0.04: true shift 0.75·(−0.2) + 0.25·0.04.
    truth = 0.75 * -0.2 + 0.25 * 0.04
    covered = 0
    seeds = 400
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        old = rng.random(80) < 0.75
        draw = rng.random(80)
        new = np.where(old, draw >= 0.2, draw < 0.04)
        low, high = mean_shift((new.astype(float) - old.astype(float)).tolist()).ci
        assert low is not None
        assert high is not None
        covered += low <= truth <= high
    assert 0.92 <= covered / seeds <= 0.975


def test_two_pairwise_runs_split_a_win_rate_shift_on_pairs_whose_both_outputs_are_unchanged():
    def pair(i: int, new: str, winner: Winner) -> CaseResult:
        text = {"input": f"q{i}", "output_old": "Red.", "output_new": new}
        return CaseResult(
            id=f"p-{i}", status=CaseStatus.OK, rubric_hash="h", winner=winner, case=text
        )

    # Pairs 0-3 unchanged: the new judge turns two ties into wins (+0.5 each) → +1/4.
    # Pairs 4-5 got a new NEW answer: a loss becomes a win, a tie stays → +1/2.
    a_rows = [pair(i, "Red, like fire.", Winner.TIE) for i in range(4)]
    a_rows += [pair(4, "Blue.", Winner.OLD), pair(5, "Blue.", Winner.TIE)]
    b_rows = [pair(i, "Red, like fire.", Winner.NEW if i < 2 else Winner.TIE) for i in range(4)]
    b_rows += [pair(4, "Blue, like the sky.", Winner.NEW), pair(5, "Green.", Winner.TIE)]
    pairwise = PairwiseSummary.model_construct(command=Command.PAIRWISE, models=["m"], **HEAD)
    a = AuditedRun(path=Path("a"), summary=pairwise, results=a_rows, info={})
    b = AuditedRun(path=Path("b"), summary=pairwise, results=b_rows, info={})
    s = measure_drift(a, b).summary
    assert (s.shift_scale, s.n_identical, s.n_system) == ("win_rate", 4, 2)
    assert s.judge_shift == pytest.approx(0.25)
    assert s.system_shift == pytest.approx(0.5)

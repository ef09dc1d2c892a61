from __future__ import annotations

import pytest

from judgecli.deciding.gate import GateOn, GateSpec, evaluate_gate
from judgecli.summary.facts import Usage
from judgecli.summary.pairwise import PairwiseSummary


def summary(**kw) -> PairwiseSummary:
    base = {
        "rubric": "pairwise",
        "rubric_version": 1,
        "rubric_hash": "h",
        "models": ["m"],
        "n_cases": 100,
        "n_ok": 100,
        "n_failed": 0,
        "usage": Usage(),
        "win_rate": 0.60,
        "win_rate_ci": (0.52, 0.68),
        "wins": 55,
        "losses": 35,
        "ties": 10,
        "dropped": 0,
        "loss_rate": 0.35,
        "loss_rate_ci": (0.26, 0.45),
        "flip": True,
        "flip_policy": "tie",
        "consistency": 0.8,
        "consistency_ci": (0.71, 0.87),
    }
    return PairwiseSummary(**(base | kw))


@pytest.mark.parametrize(
    ("spec", "passed", "value"),
    [
        pytest.param(GateSpec(min_win_rate=0.55), True, 0.60, id="point-above"),
        pytest.param(GateSpec(min_win_rate=0.60), True, 0.60, id="point-equal-passes"),
        pytest.param(GateSpec(min_win_rate=0.65), False, 0.60, id="point-below"),
        pytest.param(
            GateSpec(min_win_rate=0.55, on=GateOn.LOWER_BOUND), False, 0.52, id="lower-bound-below"
        ),
        pytest.param(
            GateSpec(min_win_rate=0.50, on=GateOn.LOWER_BOUND), True, 0.52, id="lower-bound-above"
        ),
        pytest.param(GateSpec(max_loss_rate=0.40), True, 0.35, id="loss-point"),
        pytest.param(
            GateSpec(max_loss_rate=0.40, on=GateOn.LOWER_BOUND),
            False,
            0.45,
            id="loss-upper-bound-is-the-pessimistic-end",
        ),
        pytest.param(GateSpec(min_consistency=0.7), True, 0.8, id="consistency"),
    ],
)
def test_gate_compares_the_chosen_number(spec, passed, value):
    result = evaluate_gate(summary(), spec)
    assert result.passed is passed
    assert result.decided is True
    assert result.value == value


def test_every_threshold_must_pass():
    result = evaluate_gate(summary(), GateSpec(min_win_rate=0.5, max_loss_rate=0.3))
    assert result.passed is False
    assert [c.passed for c in result.checks] == [True, False]
    assert (result.metric, result.threshold) == ("win_rate", 0.5)


def test_a_consistency_below_an_explicit_bar_leaves_the_gate_undecided_not_failed():
    # Issue 29: --min-consistency is the floor the verdicts stand on (one flag, one
    # meaning): below it the gate is undecided (exit 3), where it used to fail (exit 1).
    result = evaluate_gate(summary(), GateSpec(min_win_rate=0.5, min_consistency=0.9))
    assert (result.passed, result.decided) == (False, False)
    assert [(c.passed, c.decided) for c in result.checks] == [(False, False), (False, False)]
    assert "position consistency 80% < 90%" in result.undecided


def test_no_threshold_is_no_gate():
    assert evaluate_gate(summary(), GateSpec()) is None


def test_no_data_leaves_the_gate_undecided():
    # Issue 29: this used to fail the gate (exit 1); no number is no evidence either way.
    result = evaluate_gate(
        summary(win_rate=None, win_rate_ci=(None, None)), GateSpec(min_win_rate=0.1)
    )
    assert (result.passed, result.decided) == (False, False)
    assert result.value is None


def test_cases_needed_when_the_point_passes_but_the_lower_bound_does_not():
    result = evaluate_gate(summary(), GateSpec(min_win_rate=0.55))
    # Rate 0.6 (55 wins, 35 losses, 10 ties) vs 0.55, at the bootstrap's spread: outcome
    # variance (55 + 10/4)/100 − 0.6² = 0.215, n ≥ (1.959964 / 0.05)² · 0.215 = 330.37 → 331
    # (issue 29: the Wald variance 0.24 ignored the ties and said 369).
    assert result.cases_needed == 331


def test_no_cases_needed_when_the_interval_already_clears_the_bar():
    assert evaluate_gate(summary(), GateSpec(min_win_rate=0.5)).cases_needed is None
    assert evaluate_gate(summary(), GateSpec(min_win_rate=0.7)).cases_needed is None

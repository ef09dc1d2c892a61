"""`judge gate` on a number the run does not make is bad usage, exit 2 before any verdict
(issue 29: these used to print FAIL and exit 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.deciding.gate import GateOn, GateSpec
from judgecli.deciding.measured import check_gate_mode
from judgecli.errors import ConfigError, InputError
from judgecli.summary.calibrate import CalibrateSummary
from judgecli.summary.facts import Usage
from judgecli.summary.score import ScoreSummary
from tests.unit.deciding.test_gate import summary as pairwise

PATH = Path("runs/x/summary.json")
HEAD = {
    "rubric": "r",
    "rubric_version": 1,
    "rubric_hash": "h",
    "models": ["m"],
    "n_cases": 10,
    "n_ok": 10,
    "n_failed": 0,
    "usage": Usage(),
}


def score(**kw) -> ScoreSummary:
    return ScoreSummary(**HEAD, **kw)


def calibrate() -> CalibrateSummary:
    counts = {"n_labels": 5, "n_labelled_cases": 5, "n_labels_total": 5, "n_unmatched_labels": 0}
    return CalibrateSummary(**HEAD, **counts, accuracy=1.0)


@pytest.mark.parametrize(
    ("made", "spec", "message"),
    [
        pytest.param(
            score(mean=3.0, pass_rate=0.5),
            GateSpec(min_win_rate=0.55),
            "--min-win-rate needs a pairwise run; runs/x/summary.json is a score run",
            id="win-rate-of-a-score-run",
        ),
        pytest.param(
            pairwise(),
            GateSpec(min_mean=3),
            "--min-mean needs a score run; runs/x/summary.json is a pairwise run",
            id="mean-of-a-pairwise-run",
        ),
        pytest.param(
            calibrate(),
            GateSpec(max_loss_rate=0.2),
            "--max-loss-rate needs a pairwise run",
            id="loss-rate-of-a-calibrate-run",
        ),
        pytest.param(
            pairwise(),
            GateSpec(min_accuracy=0.9),
            "--min-accuracy needs a calibrate run",
            id="accuracy-of-a-pairwise-run",
        ),
        pytest.param(
            score(mean=3.0),
            GateSpec(min_pass_rate=0.8),
            "the run has no pass rate (its rubric 'r' gives no pass or fail)",
            id="pass-rate-without-a-pass-mark",
        ),
        pytest.param(
            score(pass_rate=0.8, choices={"yes": 8, "no": 2}),
            GateSpec(min_mean=3),
            "the run has no mean score",
            id="mean-of-a-binary-rubric",
        ),
        pytest.param(
            pairwise(flip=False, consistency=None, consistency_ci=None),
            GateSpec(min_consistency=0.5),
            "--min-consistency needs a run judged in both orders",
            id="consistency-of-a-no-flip-run",
        ),
    ],
)
def test_a_threshold_on_a_number_the_run_does_not_make_exits_2(made, spec, message):
    with pytest.raises(InputError) as raised:
        check_gate_mode(made, spec, PATH)
    assert message in str(raised.value)
    assert raised.value.hint


def test_calibrate_gates_on_its_point_or_its_bound_only():
    with pytest.raises(ConfigError, match="--on corrected: a calibrate run's agreement"):
        check_gate_mode(calibrate(), GateSpec(min_accuracy=0.9, on=GateOn.CORRECTED), PATH)
    check_gate_mode(calibrate(), GateSpec(min_accuracy=0.9, on=GateOn.LOWER_BOUND), PATH)


@pytest.mark.parametrize(
    ("made", "spec"),
    [
        pytest.param(pairwise(), GateSpec(min_win_rate=0.5, min_consistency=0.6), id="pairwise"),
        pytest.param(score(mean=3.0, pass_rate=0.5), GateSpec(min_mean=3), id="score"),
        pytest.param(calibrate(), GateSpec(min_kappa=0.5, min_accuracy=0.9), id="calibrate"),
        pytest.param(
            pairwise(win_rate=None, win_rate_ci=None),
            GateSpec(min_win_rate=0.5),
            id="a-number-undefined-on-the-data-is-for-the-gate-to-call-undecided",
        ),
    ],
)
def test_a_threshold_the_run_measures_is_checked(made, spec):
    check_gate_mode(made, spec, PATH)

"""deciding/planning: the gate `judge plan` reads off a command line, and the plan it makes
from the bar, --effect, α, power and a pilot's spread. Issue 35.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from judgecli.deciding.planned_gate import planned_gate
from judgecli.deciding.planning import make_plan, pilot_of
from judgecli.deciding.sequential import SequentialGate
from judgecli.errors import InputError
from judgecli.stats.sequential import _run_batch
from judgecli.stats.sizing import sequential_stops_of
from judgecli.summary.gate_records import GateMetric, GateOn

PAIRWISE = ["pairwise", "old.jsonl", "new.jsonl", "--rubric", "pairwise", "--model", "m"]


def test_the_gate_is_read_as_the_command_reads_its_flags() -> None:
    gate = planned_gate([*PAIRWISE, "--min-win-rate", "0.55"])
    assert (gate.metric, gate.floor, gate.on, gate.sequential) == (
        GateMetric.WIN_RATE,
        0.55,
        GateOn.POINT,
        False,
    )
    gate = planned_gate(["score", "d.jsonl", "--min-pass-rate=0.7", "--gate-on", "lower-bound"])
    assert (gate.metric, gate.floor, gate.on) == (GateMetric.PASS_RATE, 0.7, GateOn.LOWER_BOUND)
    assert planned_gate([*PAIRWISE, "--min-win-rate", "0.5", "--sequential"]).sequential
    # The last of a repeated flag wins, as with the command's own parser.
    assert planned_gate([*PAIRWISE, "--min-win-rate", "0.5", "--min-win-rate", "0.6"]).floor == 0.6


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*PAIRWISE], "gives 0"),
        (["score", "d", "--min-pass-rate", "0.7", "--min-mean", "3"], "gives 2"),
        ([*PAIRWISE, "--min-pass-rate", "0.7"], "has no --min-pass-rate"),
        (["calibrate", "d", "--min-kappa", "0.6"], "score or pairwise"),
        ([], "got nothing"),
        ([*PAIRWISE, "--min-win-rate", "x"], "not a number"),
        ([*PAIRWISE, "--min-win-rate", "0.5", "--on", "corrected"], "--on corrected"),
    ],
)
def test_a_command_line_without_one_sizable_gate_is_bad_usage(argv: list[str], words: str) -> None:
    with pytest.raises(InputError, match=words):
        planned_gate(argv)


def test_the_plan_of_the_issues_example_sizes_every_gate() -> None:
    plan = make_plan([*PAIRWISE, "--min-win-rate", "0.55"], effect=0.60, runs=200)
    assert plan.cases_point == 68
    assert plan.cases_needed == 68  # --on point, the command's default
    assert plan.cases_lower_bound > plan.cases_point
    assert plan.sequential_expected is not None
    assert plan.sequential_p95 is not None
    assert plan.cases_lower_bound < plan.sequential_expected < plan.sequential_p95
    keys = plan.to_json()
    assert {"cases_needed", "power", "sequential_expected", "sequential_p95"} <= keys.keys()
    assert keys["power"] >= 0.8


def test_the_sequential_gate_is_planned_at_its_95th_percentile() -> None:
    plan = make_plan([*PAIRWISE, "--min-win-rate", "0.55", "--sequential"], effect=0.65, runs=200)
    assert plan.cases_needed == plan.sequential_p95
    assert plan.to_json()["on"] == "sequential"


def test_a_pilot_with_ties_needs_fewer_cases_than_the_worst_case() -> None:
    values = [1.0] * 45 + [0.5] * 30 + [0.0] * 25
    pilot = pilot_of(Path("pilot"), values, GateMetric.WIN_RATE)
    assert pilot.tie_share == pytest.approx(0.3)
    assert pilot.cases == 100
    assert pilot.mean == pytest.approx(0.6)
    argv = [*PAIRWISE, "--min-win-rate", "0.55", "--on", "lower-bound"]
    worst = make_plan(argv, effect=0.6, runs=200)
    tied = make_plan(argv, effect=0.6, pilot=pilot, runs=200)
    assert tied.tie_share == pytest.approx(0.3)
    assert tied.sd == pytest.approx(math.sqrt(0.24 - 0.3 / 4))
    assert tied.cases_lower_bound < worst.cases_lower_bound
    assert tied.to_json()["pilot"]["tie_share"] == pytest.approx(0.3)


def test_a_pilots_spread_sizes_a_mean_score_on_the_z_tests_n() -> None:
    pilot = pilot_of(Path("p"), [3.0, 4.0, 5.0, 4.0], GateMetric.MEAN)
    assert pilot.sd == pytest.approx(math.sqrt(2 / 3))
    assert pilot.tie_share == 0
    argv = ["score", "d.jsonl", "--min-mean", "3.5", "--on", "lower-bound"]
    plan = make_plan(argv, effect=3.9, pilot=pilot)
    # ((1.959964 + 0.841621) · 0.816497 / 0.4)² = 32.70 → 33; the point: (0.841621·2.0412)² → 3.
    assert (plan.cases_lower_bound, plan.cases_point, plan.cases_needed) == (33, 3, 33)
    # No --rubric, so no scale to map the scores onto 0..1: the sequence is not sized.
    assert plan.sequential_p95 is None


def test_a_power_or_alpha_outside_zero_and_one_is_bad_usage() -> None:
    with pytest.raises(InputError, match="--power"):
        make_plan([*PAIRWISE, "--min-win-rate", "0.55"], effect=0.6, power=1.0)


@pytest.mark.parametrize(
    ("argv", "effect", "words"),
    [
        ([*PAIRWISE, "--min-win-rate", "0.55"], 0.55, "not above the bar"),
        ([*PAIRWISE, "--min-win-rate", "0.55"], 1.0, "a true rate of 1"),
        (["score", "d", "--min-mean", "3.5"], 4.0, "needs the scores' spread"),
    ],
)
def test_an_effect_the_plan_cannot_size_is_bad_usage(
    argv: list[str], effect: float, words: str
) -> None:
    with pytest.raises(InputError, match=words):
        make_plan(argv, effect=effect)


def test_a_pilot_with_fewer_than_two_values_is_bad_usage() -> None:
    with pytest.raises(InputError, match="1 case"):
        pilot_of(Path("p"), [1.0], GateMetric.WIN_RATE)


# Issue 35: a --min-mean gate's sequence, sized on the rubric's scale as the run maps it.
SCORES = [1.0] * 5 + [2.0] * 10 + [3.0] * 30 + [4.0] * 35 + [5.0] * 20  # mean 3.55
GRADED = """\
name: graded
kind: pointwise
scale: {min: 1, max: 5}
prompt:
  user: "Question: {input}\\nAnswer: {output}"
"""


@pytest.fixture
def graded(tmp_path: Path) -> str:
    path = tmp_path / "graded.yaml"
    path.write_text(GRADED, encoding="utf-8")
    return str(path)


def test_a_means_sequence_is_sized_on_the_pilots_scores_mapped_by_the_rubrics_scale(
    graded: str,
) -> None:
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--rubric", graded, "--min-mean", "3.3", "--sequential"]
    plan = make_plan(argv, effect=3.55, pilot=pilot, runs=200)
    # The effect is the pilot's own mean: no shift, the scores on 0..1 as (s − 1)/4.
    by_hand = sequential_stops_of(
        values=[(v - 1) / 4 for v in SCORES],
        weights=[1.0] * len(SCORES),
        floor=(3.3 - 1) / 4,
        alpha=0.05,
        horizon=20 * plan.cases_lower_bound,
        runs=200,
        seed=0,
    )
    assert plan.sequential_expected == round(by_hand.expected, 1)
    assert plan.sequential_p95 == by_hand.p95
    assert plan.cases_needed == plan.sequential_p95
    assert plan.to_json()["on"] == "sequential"


def test_a_means_planned_p95_decides_about_95_percent_of_fresh_runs_of_the_gate(
    graded: str,
) -> None:
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--rubric", graded, "--min-mean", "3.3", "--sequential"]
    plan = make_plan(argv, effect=3.55, pilot=pilot)
    assert plan.sequential_p95 is not None
    # Fresh runs, another seed: scores drawn from the true law, mapped by the gate itself.
    gate = SequentialGate(metric=GateMetric.MEAN, threshold=3.3, scale=(1.0, 5.0))
    rng = np.random.default_rng(2035)
    scores = rng.choice(np.asarray(SCORES), size=(600, plan.sequential_p95))
    units = np.vectorize(gate.to_unit)(scores)
    runs = _run_batch(units, gate.to_unit(3.3), alpha=0.05, grid=100)
    assert float((runs.decision != 0).mean()) == pytest.approx(0.95, abs=0.025)


def test_a_means_sequence_shifts_the_pilot_to_the_effect_and_stops_sooner_further_off(
    graded: str,
) -> None:
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--rubric", graded, "--min-mean", "3.3", "--sequential"]
    near = make_plan(argv, effect=3.55, pilot=pilot, runs=200)
    far = make_plan(argv, effect=3.9, pilot=pilot, runs=200)
    assert far.sequential_p95 is not None
    assert near.sequential_p95 is not None
    assert far.sequential_p95 < near.sequential_p95
    assert far.sequential_power == pytest.approx(1.0, abs=0.01)


def test_a_means_plan_without_a_sequence_still_sizes_it_beside_when_the_rubric_is_given(
    graded: str,
) -> None:
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--rubric", graded, "--min-mean", "3.3", "--on", "lower-bound"]
    plan = make_plan(argv, effect=3.55, pilot=pilot, runs=200)
    assert plan.sequential_p95 is not None
    assert plan.cases_needed == plan.cases_lower_bound


@pytest.mark.parametrize(
    ("extra", "effect", "words"),
    [
        ([], 3.55, "by the rubric's scale"),  # --sequential without --rubric
        (["--rubric", "no-such-rubric"], 3.55, "no-such-rubric"),
        (["--rubric", "GRADED", "--min-mean", "5"], 5.5, "nothing to decide on the scale 1..5"),
        (["--rubric", "GRADED"], 5.0, "top of the scale"),
    ],
)
def test_a_means_sequence_the_rubric_cannot_map_is_bad_usage(
    graded: str, extra: list[str], effect: float, words: str
) -> None:
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--min-mean", "3.3", "--sequential"]
    argv += [graded if word == "GRADED" else word for word in extra]
    with pytest.raises(InputError, match=words):
        make_plan(argv, effect=effect, pilot=pilot, runs=20)


def test_a_binary_rubric_has_no_scale_for_a_means_sequence(tmp_path: Path) -> None:
    path = tmp_path / "yes.yaml"
    path.write_text(
        'name: yes\nkind: binary\nchoices: [YES, NO]\nprompt:\n  user: "{output}"\n',
        encoding="utf-8",
    )
    pilot = pilot_of(Path("p"), SCORES, GateMetric.MEAN)
    argv = ["score", "d.jsonl", "--rubric", str(path), "--min-mean", "3.3", "--sequential"]
    with pytest.raises(InputError, match="has none"):
        make_plan(argv, effect=3.55, pilot=pilot, runs=20)

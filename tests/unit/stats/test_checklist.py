"""HealthBench's checklist arithmetic (judgecli/stats/checklist.py), pinned against the
numbers openai/simple-evals' own code gives on a worked example (tests/data/checklist/SOURCE.md
says how they were made: its grade_sample, _aggregate_get_clipped_mean and
_compute_clipped_stats, at commit ee3b031)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgecli.stats.checklist import (
    case_score,
    clipped_mean,
    clipped_mean_bootstrap_std,
    tag_scores,
)
from tests.conftest import DATA

WORKED = [
    json.loads(line)
    for line in (DATA / "checklist" / "worked.jsonl").read_text(encoding="utf-8").splitlines()
]

# simple-evals' per-case `overall_score` of w1..w8 (grade_sample's calculate_score).
CASE_SCORES = {
    "w1": 0.5,
    "w2": -1.2307692307692308,
    "w3": 1.0,
    "w4": -0.6,
    "w5": 1.0,
    "w6": -0.46153846153846156,
    "w7": 0.6666666666666666,
    "w8": 1.0,
}
# _aggregate_get_clipped_mean: each metric's clipped mean and n_samples.
OVERALL = 0.23429487179487174
TAGS = {
    "axis:accuracy": (0.1809027777777778, 8),
    "axis:communication_quality": (1.0, 3),
    "axis:completeness": (0.4305555555555556, 8),
    "axis:context_awareness": (0.3333333333333333, 3),
    "level:example": (1.0, 1),
}
# _compute_clipped_stats(values, "bootstrap_std") of each metric alone, after
# np.random.seed(seed).
BOOTSTRAP_STD = {
    0: {
        "overall_score": 0.23331942933267596,
        "axis:accuracy": 0.2732647288774945,
        "axis:communication_quality": 0.0,
        "axis:completeness": 0.166191818348892,
        "axis:context_awareness": 0.27318613922867074,
        "level:example": 0.0,
    },
    7: {
        "overall_score": 0.23199626205088805,
        "axis:accuracy": 0.2725387594865246,
        "axis:communication_quality": 0.0,
        "axis:completeness": 0.164252486850971,
        "axis:context_awareness": 0.27377180278472796,
        "level:example": 0.0,
    },
}


def items_of(case: dict) -> list[tuple[float, bool, list[str]]]:
    return [
        (float(item["points"]), met, item.get("tags", []))
        for item, met in zip(case["rubric_items"], case["met"], strict=True)
    ]


def scores_of(cases: list[dict]) -> list[float]:
    return [
        case_score([p for p, _, _ in items_of(c)], [m for _, m, _ in items_of(c)]) for c in cases
    ]


def test_simple_evals_own_unit_test_of_calculate_score_holds():
    # healthbench_eval_test.py: 7 + 10 - 6 of 7 + 5 + 10.
    assert case_score([7, 5, 10, -6], [True, False, True, True]) == 11 / 22


def test_a_case_scores_its_met_points_over_its_positive_points_unclipped_as_healthbench():
    scores = dict(zip((c["id"] for c in WORKED), scores_of(WORKED), strict=True))
    assert scores == pytest.approx(CASE_SCORES, rel=1e-15)
    # Not clipped: an answer that does what it must not scores below 0.
    assert scores["w2"] < 0


def test_the_overall_score_is_the_mean_of_the_case_scores_clipped_to_0_1():
    assert clipped_mean(scores_of(WORKED)) == pytest.approx(OVERALL, rel=1e-15)
    negative = [c for c in WORKED if c["id"] in ("w2", "w4", "w6")]
    # simple-evals on these three alone: 0.0 (the mean, -0.76, is clipped, not each case).
    assert clipped_mean(scores_of(negative)) == 0.0
    assert clipped_mean([]) is None


def test_each_tags_score_and_cases_are_simple_evals_own():
    found = tag_scores(items_of(c) for c in WORKED)
    assert {tag: len(v) for tag, v in found.items()} == {tag: n for tag, (_, n) in TAGS.items()}
    means = {tag: clipped_mean(v) for tag, v in found.items()}
    assert means == pytest.approx({tag: mean for tag, (mean, _) in TAGS.items()}, rel=1e-15)
    # w2's accuracy items: 9 not met, -10 and -6 met: -16 / 9, below 0 as the case is.
    assert found["axis:accuracy"][1] == pytest.approx(-16 / 9, rel=1e-15)


def test_a_tag_whose_items_have_no_positive_points_leaves_the_case_out_of_that_tag():
    # HealthBench drops a case from a tag whose items there are all negative.
    found = tag_scores([[(5.0, True, ["a"]), (-3.0, True, ["b"])], [(2.0, False, ["b"])]])
    assert found == {"a": [1.0], "b": [0.0]}
    assert tag_scores([[(-3.0, True, ["b"])]]) == {}


@pytest.mark.parametrize("seed", [0, 7])
def test_the_bootstrap_std_is_simple_evals_own_after_seeding_numpy_with_the_seed(seed):
    found = tag_scores(items_of(c) for c in WORKED)
    values = {"overall_score": scores_of(WORKED)} | found
    stds = {name: clipped_mean_bootstrap_std(v, seed=seed) for name, v in values.items()}
    assert stds == pytest.approx(BOOTSTRAP_STD[seed], rel=1e-12)


def test_the_bootstrap_draws_the_same_numbers_as_np_random_choice_in_a_loop():
    # simple-evals: [np.random.choice(values, len(values)) for _ in range(1000)] after
    # np.random.seed(seed); drawn here in blocks of rows.
    values = np.linspace(-1.0, 1.0, 37)
    np.random.seed(3)  # the global generator simple-evals draws from
    means = [np.clip(np.mean(np.random.choice(values, len(values))), 0, 1) for _ in range(1000)]
    assert clipped_mean_bootstrap_std(values, seed=3) == pytest.approx(
        float(np.std(means)), rel=1e-13
    )
    assert clipped_mean_bootstrap_std([], seed=3) is None


def test_points_and_verdicts_must_pair_up():
    with pytest.raises(ValueError, match="2 items' points but 1 verdicts"):
        case_score([1, 2], [True])
    assert case_score([-1.0], [True]) is None

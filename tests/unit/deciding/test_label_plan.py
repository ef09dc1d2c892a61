"""Label plans (issue 33): which cases a human should label, drawn with known inclusion
probabilities that follow the judge's own uncertainty read from results.jsonl.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgecli.deciding.label_plan import (
    LabelStrategy,
    Signals,
    margin_of,
    plan_labels,
    signals,
)
from judgecli.errors import ConfigError, InputError
from judgecli.result import CaseResult, CaseStatus, Judgement, RepeatVerdict, Winner
from judgecli.stats.active import inclusion_probabilities
from judgecli.verdict import Verdict


def pairwise(case_id: str, *, consistent: bool = True, **extra) -> CaseResult:
    fields = {"judge_winners": {"a": Winner.NEW}} | extra
    return CaseResult(
        id=case_id,
        status=CaseStatus.OK,
        winner=Winner.NEW,
        consistent=consistent,
        rubric_hash="h",
        **fields,
    )


def scored(case_id: str, scores: dict[str, float]) -> CaseResult:
    judgements = [
        Judgement(model=model, verdict=Verdict(reasoning="r", score=score))
        for model, score in scores.items()
    ]
    mean = sum(scores.values()) / len(scores)
    return CaseResult(
        id=case_id, status=CaseStatus.OK, score=mean, judgements=judgements, rubric_hash="h"
    )


def run_of(tmp_path: Path, results: list[CaseResult]) -> Path:
    text = "".join(r.model_dump_json(exclude_none=True) + "\n" for r in results)
    (tmp_path / "results.jsonl").write_text(text, encoding="utf-8")
    return tmp_path


def mixed_run(tmp_path: Path) -> Path:
    """40 pairwise cases: every fourth one with its orders disagreeing, one failed."""
    results = [pairwise(f"c{i:02}", consistent=i % 4 != 0) for i in range(40)]
    failed = CaseResult(id="x", status=CaseStatus.FAILED, error="boom", rubric_hash="h")
    return run_of(tmp_path, [*results, failed])


def test_orders_that_disagree_raise_a_case_s_probability(tmp_path):
    plan = plan_labels(mixed_run(tmp_path), budget=8, strategy=LabelStrategy.DISAGREEMENT)
    probs = plan.probabilities
    assert probs["c00"] > probs["c01"]
    # 10 disagreeing cases, weights 0.5/0.25 + 0.5 = 2.5 against 0.5: c = 8 / (10·2.5 + 30·0.5)
    assert probs["c00"] == pytest.approx(2.5 * 8 / 40)
    assert probs["c01"] == pytest.approx(0.5 * 8 / 40)
    assert sum(probs.values()) == pytest.approx(8)


def test_only_graded_cases_are_planned(tmp_path):
    plan = plan_labels(mixed_run(tmp_path), budget=40, strategy=LabelStrategy.UNIFORM)
    assert plan.population == 40
    assert "x" not in plan.probabilities
    assert len(plan.cases) == 40  # a budget of every case takes every case
    assert {c.inclusion_probability for c in plan.cases} == {1.0}


def test_a_plan_is_the_same_for_the_same_seed_whatever_the_order_of_results(tmp_path):
    results = [pairwise(f"c{i:02}", consistent=i % 3 != 0) for i in range(30)]
    first = plan_labels(run_of(tmp_path / "a", results), budget=6, strategy="uncertainty")
    again = plan_labels(run_of(tmp_path / "b", results[::-1]), budget=6, strategy="uncertainty")
    other = plan_labels(run_of(tmp_path / "a", results), budget=6, strategy="uncertainty", seed=1)
    assert first.cases == again.cases
    assert first.cases != other.cases


@pytest.fixture(autouse=True)
def _dirs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()


def test_the_cases_are_listed_surest_first_and_say_why(tmp_path):
    plan = plan_labels(mixed_run(tmp_path), budget=12, strategy=LabelStrategy.DISAGREEMENT)
    whys = {c.id: c.why for c in plan.cases}
    for case in plan.cases:
        expected = "orders disagree" if case.id in {f"c{i:02}" for i in range(0, 40, 4)} else None
        assert whys[case.id] == (expected or "no doubt shown (the uniform floor)")


def test_a_strategy_without_any_signal_falls_back_to_uniform_and_says_so(tmp_path):
    run = run_of(tmp_path, [pairwise(f"c{i}") for i in range(10)])
    plan = plan_labels(run, budget=5, strategy=LabelStrategy.UNCERTAINTY)
    assert plan.fallback
    assert "uncertainty" in plan.fallback
    assert set(plan.probabilities.values()) == {0.5}
    assert all(c.why == "uniform design" for c in plan.cases)


def test_the_probabilities_are_those_of_the_signals(tmp_path):
    results = [
        pairwise("a", probabilities={"new": 0.5, "old": 0.4, "tie": 0.1}),
        pairwise("b", probabilities={"new": 0.9, "old": 0.05, "tie": 0.05}),
        pairwise("c", consistent=False),
        pairwise("d"),
    ]
    plan = plan_labels(run_of(tmp_path, results), budget=2, strategy=LabelStrategy.UNCERTAINTY)
    u = [0.9, 0.15, 1.0, 0.0]
    assert list(plan.probabilities.values()) == pytest.approx(inclusion_probabilities(u, 2))


def test_a_split_panel_of_scores_is_read_over_the_run_s_range():
    found = signals(scored("a", {"m1": 1.0, "m2": 3.0}), span=4.0)
    assert found.panel == pytest.approx(0.5)


def test_repeats_that_differ_are_instability():
    repeats = [RepeatVerdict(repeat=k, winner=w) for k, w in enumerate(["new", "new", "old"])]
    result = pairwise("a", repeats=repeats, stable=False, spread=1 / 3)
    assert signals(result, span=1.0).repeats == pytest.approx(1 / 3)
    assert Signals(repeats=1 / 3).score(LabelStrategy.DISAGREEMENT) == pytest.approx(1 / 3)


def test_the_logprob_margin_counts_for_uncertainty_only():
    assert margin_of({"new": 0.6, "old": 0.4}) == pytest.approx(0.8)
    assert Signals(margin=0.8).score(LabelStrategy.DISAGREEMENT) == 0.0
    assert Signals(margin=0.8).score(LabelStrategy.UNCERTAINTY) == 0.8
    assert Signals(order=1.0, margin=0.8).score(LabelStrategy.UNIFORM) == 0.0


def test_a_split_pairwise_panel_is_read_from_judge_winners():
    result = pairwise("a", judge_winners={"m1": Winner.NEW, "m2": Winner.OLD})
    assert signals(result, span=1.0).panel == 0.5


def test_a_budget_below_one_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="--budget 0"):
        plan_labels(mixed_run(tmp_path), budget=0, strategy=LabelStrategy.UNIFORM)


def test_a_directory_without_results_is_refused(tmp_path):
    with pytest.raises(InputError, match="results.jsonl: no such file"):
        plan_labels(tmp_path, budget=3, strategy=LabelStrategy.UNIFORM)


def test_a_bad_results_line_names_file_and_line(tmp_path):
    run = mixed_run(tmp_path)
    with (run / "results.jsonl").open("a") as handle:
        handle.write('{"id": 3}\n')
    with pytest.raises(InputError, match=r"results.jsonl:42: not a judge results line"):
        plan_labels(run, budget=3, strategy=LabelStrategy.UNIFORM)


def test_a_run_without_a_graded_case_is_refused(tmp_path):
    failed = CaseResult(id="x", status=CaseStatus.FAILED, error="boom", rubric_hash="h")
    with pytest.raises(InputError, match="no graded case"):
        plan_labels(run_of(tmp_path, [failed]), budget=3, strategy=LabelStrategy.UNIFORM)

"""`judge align`'s split, its seal and its known answers, with the judge simulated in-process
(the simulator's own blind-spot rule, `judgecli.simulator.blind_spot`). Issue 34.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from judgecli.commands.align.choosing import TrainRater
from judgecli.commands.align.outcomes import Verdict, fit_pass_mark
from judgecli.commands.align.run import AlignPlan, align
from judgecli.commands.align.split import majority, seal_split
from judgecli.errors import TooManyFailuresError
from judgecli.inputs.dataset import Case
from judgecli.inputs.labels import Label
from judgecli.inputs.rubric_file import load_rubric
from judgecli.rubric import Rubric
from judgecli.simulator.blind_spot import BlindSpot, noise_draw, optimizer_reply
from judgecli.simulator.truth import TruthAnswer

PHRASE = "I guarantee this is correct."
RUBRIC = load_rubric("rubrics/answer-correctness.yaml")


def labelled(n: int, seed: int) -> tuple[dict[str, Case], list[Label]]:
    """n cases, half YES; 40% carry the blind-spot phrase."""
    rng = random.Random(seed)
    cases, labels = {}, []
    for i in range(n):
        right = rng.random() < 0.5
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        out = f"{a} plus {b} is {a + b if right else a + b + rng.choice([-2, 1, 10])}."
        if rng.random() < 0.4:
            out += " " + PHRASE
        case_id = f"c{i:03d}"
        cases[case_id] = Case(
            id=case_id, input=f"What is {a} + {b}?", output=out, reference=str(a + b)
        )
        labels.append(Label(id=case_id, value="YES" if right else "NO", annotator=None, line=i + 1))
    return cases, labels


class SimulatedJudge:
    """The simulator's blind-spot judge, in-process; records what it was asked."""

    def __init__(self, cases: dict[str, Case], labels: list[Label], spot: BlindSpot, noise: float):
        self.cases = cases
        self.truth = {label.id: str(label.value) for label in labels}
        self.spot = spot
        self.noise = noise
        self.asked: list[tuple[str, list[str]]] = []

    async def __call__(self, rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        system = rubric.prompt.system if rubric.prompt else ""
        self.asked.append((system, list(ids)))
        found = {}
        for i in ids:
            out = self.cases[i].output or ""
            draw = noise_draw(0, "sim", system, out)
            answer = TruthAnswer(
                self.truth[i], flipped=False, draw=random.Random(draw).random(), confidence=0.9
            )
            choice = self.spot.choice(
                instructions=system,
                output=out,
                truth=answer,
                choices=["YES", "NO"],
                noise_draw=draw,
                noise=self.noise,
            )
            found[i] = Verdict(choice, reason="simulated")
        return found


class RecordingOptimizer:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.prompts.append("\n".join(str(m["content"]) for m in messages))
        return optimizer_reply(messages)


def plan(labels: list[Label], seed: int, *, resamples: int = 2000) -> AlignPlan:
    return AlignPlan(
        rubric=RUBRIC,
        rubric_ref="answer-correctness",
        labels=labels,
        labels_hash="x",
        model="openai/sim",
        optimizer_model="openai/opt-sim",
        seed=seed,
        resamples=resamples,
    )


def test_the_split_is_stratified_by_label_reproducible_and_hashed_over_the_sorted_test_ids() -> (
    None
):
    _, labels = labelled(100, 3)
    strata = majority(labels)
    split = seal_split(strata, test_share=0.3, seed=7)
    assert split == seal_split(strata, test_share=0.3, seed=7)
    assert split != seal_split(strata, test_share=0.3, seed=8)
    assert not set(split.train) & set(split.test)
    assert len(split.train) + len(split.test) == 100
    by = {label.id: label.value for label in labels}
    share = Counter(by[i] for i in split.test)
    whole = Counter(by.values())
    for value in whole:
        assert abs(share[value] - 0.3 * whole[value]) <= 1
    expected = hashlib.sha256("".join(f"{i}\n" for i in sorted(split.test)).encode()).hexdigest()
    assert split.test_hash == expected


def test_nothing_of_the_sealed_test_reaches_a_proposer_or_a_choice(tmp_path: Path) -> None:
    cases, labels = labelled(90, 1)
    judge = SimulatedJudge(cases, labels, BlindSpot(PHRASE), noise=0.1)
    optimizer = RecordingOptimizer()
    summary = asyncio.run(align(plan(labels, 1), cases, judge, optimizer, tmp_path))
    test = set(summary.split.test)
    # The test is judged last, twice at most (baseline and aligned): every call before is train.
    first_test_call = next(n for n, (_, ids) in enumerate(judge.asked) if set(ids) & test)
    assert all(not set(ids) & test for _, ids in judge.asked[:first_test_call])
    assert all(set(ids) <= test for _, ids in judge.asked[first_test_call:])
    assert len(judge.asked) - first_test_call <= 2
    test_outputs = {cases[i].output or "" for i in test} - {
        cases[i].output or "" for i in summary.split.train
    }
    said = [*optimizer.prompts, *(system for system, _ in judge.asked)]
    assert optimizer.prompts
    for text in said:
        assert not any(f"{i}" in text for i in test)
        assert not any(out in text for out in test_outputs)
    # The split was on disk before the first judge call could see it.
    assert (tmp_path / "split.json").exists()


def test_align_finds_the_blind_spot_gain_with_an_interval_above_zero(tmp_path: Path) -> None:
    # 200 cases (60 sealed), noise 0.05: measured power 0.90 over seeds 1000-1019.
    seeds, found = 20, 0
    for seed in range(seeds):
        cases, labels = labelled(200, 1000 + seed)
        judge = SimulatedJudge(cases, labels, BlindSpot(PHRASE), noise=0.05)
        summary = asyncio.run(
            align(plan(labels, seed, resamples=500), cases, judge, RecordingOptimizer(), tmp_path)
        )
        assert summary.method != "baseline"  # chosen on train every time
        if summary.decision.value == "better":
            assert (summary.gain_ci["kappa"][0] or 0) > 0
            assert summary.kept == "aligned"
            found += 1
        else:
            assert summary.kept == "baseline"
    assert found / seeds >= 0.8


def test_a_judge_that_ignores_its_prompt_rarely_shows_a_false_gain_over_many_seeds(
    tmp_path: Path,
) -> None:
    # α = 0.05, two-sided interval: a false "better" needs the lower bound above 0, expected
    # at most α/2 of the time for the one choice made, plus what the winner's curse on train
    # adds (none on a sealed test). Over 200 seeds (measured: 0.0225 over
    # 400) the rate must stay below α; the noise
    # differs by instruction, so the choosing does see candidates "beat" the baseline on train.
    seeds = 200
    false_gains = 0
    chose = 0
    for seed in range(seeds):
        cases, labels = labelled(80, 1000 + seed)
        judge = SimulatedJudge(cases, labels, BlindSpot(PHRASE, ignores_prompt=True), noise=0.15)
        summary = asyncio.run(
            align(plan(labels, seed, resamples=500), cases, judge, RecordingOptimizer(), tmp_path)
        )
        false_gains += summary.decision.value == "better"
        chose += summary.method != "baseline"
    assert chose > 10  # the test is not trivial: candidates were chosen on train
    assert false_gains / seeds <= 0.05


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_a_test_share_outside_zero_to_one_is_refused(share: float) -> None:
    _, labels = labelled(10, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        seal_split(majority(labels), test_share=share, seed=0)


def test_the_train_rater_refuses_a_case_outside_train() -> None:
    cases, labels = labelled(10, 0)
    judge = SimulatedJudge(cases, labels, BlindSpot(PHRASE), noise=0.0)
    rater = TrainRater(judge, ["c000", "c001"])
    assert set(asyncio.run(rater(RUBRIC, ["c000"]))) == {"c000"}
    with pytest.raises(ValueError, match="outside train"):
        asyncio.run(rater(RUBRIC, ["c000", "c005"]))
    assert len(judge.asked) == 1


def test_a_judge_that_fails_more_cases_than_max_failures_allows_stops_the_run(
    tmp_path: Path,
) -> None:
    cases, labels = labelled(40, 0)

    async def down(rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        return {i: Verdict(error="connection refused") for i in ids}

    with pytest.raises(TooManyFailuresError, match="connection refused"):
        asyncio.run(align(plan(labels, 0), cases, down, None, tmp_path))
    assert (tmp_path / "split.json").exists()
    assert not (tmp_path / "summary.json").exists()


def test_the_pass_mark_is_the_passing_score_that_agrees_most_ties_going_toward_the_current() -> (
    None
):
    # Scores 1..5; people pass 4 and 5: the mark 4 gets all five right.
    assert fit_pass_mark([1, 2, 3, 4, 5], ["fail", "fail", "fail", "pass", "pass"], current=3) == 4
    # 2 and 5 both get 3 of 4 right: the one nearer the current mark wins.
    assert fit_pass_mark([1, 2, 3, 5], ["fail", "pass", "fail", "pass"], current=3) == 2
    assert fit_pass_mark([1, 2, 3, 5], ["fail", "pass", "fail", "pass"], current=4.5) == 5
    assert fit_pass_mark([None, None], ["pass", "fail"], current=3) is None


POINTWISE = Rubric.model_validate(
    {**load_rubric("rubrics/helpfulness.yaml").model_dump(exclude_unset=True), "pass_at": 3}
)


def test_a_lenient_pointwise_judge_gets_its_pass_mark_raised_and_no_call_is_spent_on_it(
    tmp_path: Path,
) -> None:
    # People score 1-4 and pass at 3; the judge scores one point higher (capped at 4), so
    # at pass_at 3 it passes every 2. The pass mark 4 fixes it without asking anything new.
    rng = random.Random(5)
    cases, labels = {}, []
    for i in range(150):
        case_id = f"p{i:03d}"
        cases[case_id] = Case(id=case_id, input=f"question {i}", output=f"answer {i}")
        labels.append(Label(id=case_id, value=float(rng.randint(1, 4)), annotator=None, line=i + 1))
    truth = {label.id: float(label.value) for label in labels}
    asked: list[str] = []

    async def lenient(rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        asked.append(rubric.prompt.system if rubric.prompt else "")
        return {i: Verdict(score=min(4.0, truth[i] + 1)) for i in ids}

    aligned = AlignPlan(
        rubric=POINTWISE,
        rubric_ref="helpfulness",
        labels=labels,
        labels_hash="x",
        model="openai/sim",
        optimizer_model=None,
        seed=0,
    )
    summary = asyncio.run(align(aligned, cases, lenient, None, tmp_path))
    assert summary.method == "pass-mark"
    assert summary.pass_at == 4
    assert summary.decision.value == "better"
    assert summary.aligned["accuracy"] == 1.0
    assert "pass_at: 4" in (tmp_path / "rubric.yaml").read_text()
    # The pass mark asks the judge nothing new: the baseline on train, few-shot's three
    # held-out folds, and the sealed test once (the aligned verdicts are the baseline's).
    assert len(asked) == 1 + 3 + 1

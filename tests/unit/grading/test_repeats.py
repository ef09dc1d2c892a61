"""--repeats K without a server: the K asks of a prompt (cache keys), a case's verdict from
its repeats, and the run's self-consistency numbers against hand-computed answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

import numpy as np
import pytest

from judgecli.grading.debias import PanelVerdict, combine_panel
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.grading.repeats import (
    Compared,
    agreement,
    compared_for,
    majority_winner,
    repeats_warning,
)
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.protocol import JudgeRequest
from judgecli.result import CaseResult, CaseStatus, RepeatVerdict, Winner
from judgecli.stats.agreement import category_counts, fleiss_kappa, fleiss_kappa_resampled
from judgecli.stats.intervals import wilson_interval
from judgecli.stats.resampling import cluster_bootstrap
from judgecli.summary.stability import stability_fields
from tests.scripted import ScriptedJudge

# --- the K asks of one prompt -------------------------------------------------------------


def request(repeat: int = 0) -> JudgeRequest:
    return JudgeRequest(
        model="openai/m", messages=[{"role": "user", "content": "hi"}], repeat=repeat
    )


def test_the_first_ask_keys_as_a_request_without_repeats_does():
    # So a run that adds --repeats replays the replies an earlier run paid for as repeat 0.
    body = request().model_dump(mode="json", exclude={"repeat", "top_logprobs"})
    body["api_base"] = None
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request(0).key(None) == hashlib.sha256(text.encode()).hexdigest()


def test_each_repeat_is_a_call_of_its_own():
    keys = {request(r).key(None) for r in range(5)}
    assert len(keys) == 5


# --- grading a case K times ---------------------------------------------------------------


def plan(rubric, repeats: int, models=("m1",)) -> GradingPlan:
    return GradingPlan(
        rubric=rubric,
        models=list(models),
        temperature=0.7,
        max_tokens=100,
        max_retries=0,
        repeats=repeats,
    )


def test_a_pointwise_case_is_the_mean_of_its_repeats(pointwise_rubric):
    scores = {0: 2, 1: 4, 2: 3}
    judge = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": scores[r.repeat]}))
    result = asyncio.run(
        grade_pointwise(judge, plan(pointwise_rubric, 3), Case(id="c", input="q", output="a"))
    )
    assert result.status is CaseStatus.OK
    assert sorted(r.repeat for r in judge.history) == [0, 1, 2]
    assert [j.repeat for j in result.judgements] == [0, 1, 2]
    assert result.score == pytest.approx(3.0)
    assert result.passed is True  # pass_at 3
    assert [v.score for v in result.repeats] == [2.0, 4.0, 3.0]
    assert [v.passed for v in result.repeats] == [False, True, True]
    assert result.stable is False
    assert result.spread == pytest.approx(1.0)  # sample SD of 2, 4, 3


def test_a_panel_is_combined_within_each_repeat_first(pointwise_rubric):
    scores = {("m1", 0): 1, ("m2", 0): 3, ("m1", 1): 2, ("m2", 1): 2}
    judge = ScriptedJudge(
        lambda r: json.dumps({"reasoning": "r", "score": scores[(r.model, r.repeat)]})
    )
    result = asyncio.run(
        grade_pointwise(judge, plan(pointwise_rubric, 2, ("m1", "m2")), Case(id="c", input="q"))
    )
    assert [v.score for v in result.repeats] == [2.0, 2.0]
    assert result.stable is True
    assert result.spread == 0.0


def test_one_failed_repeat_fails_the_case(pointwise_rubric):
    judge = ScriptedJudge(
        lambda r: "no verdict" if r.repeat == 1 else json.dumps({"reasoning": "r", "score": 3})
    )
    result = asyncio.run(grade_pointwise(judge, plan(pointwise_rubric, 3), Case(id="c", input="q")))
    assert result.status is CaseStatus.FAILED
    assert result.repeats is None


def test_without_repeats_results_keep_their_old_shape(pointwise_rubric):
    judge = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": 3}))
    result = asyncio.run(grade_pointwise(judge, plan(pointwise_rubric, 1), Case(id="c", input="q")))
    dumped = json.loads(result.model_dump_json(exclude_none=True))
    assert not {"repeats", "stable", "spread"} & set(dumped)
    assert "repeat" not in dumped["judgements"][0]
    assert judge.history[0].repeat == 0


def test_a_binary_case_takes_the_majority_choice(binary_rubric):
    choices = {0: "YES", 1: "NO", 2: "YES"}
    judge = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "choice": choices[r.repeat]}))
    result = asyncio.run(grade_pointwise(judge, plan(binary_rubric, 3), Case(id="c", input="q")))
    assert (result.choice, result.passed, result.stable) == ("YES", True, False)
    assert result.spread == pytest.approx(1 / 3)


PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: 'Q {input} A {output_a} B {output_b}'\n",
    source="pw.yaml",
)


def test_a_pairwise_case_takes_the_majority_winner_of_its_reconciled_repeats():
    # Repeat 0: NEW in both orders; 1: NEW; 2: the orders disagree, a tie (MT-Bench rule).
    def reply(r: JudgeRequest) -> str:
        a_part = r.messages[-1]["content"].split("<output_a>")[1].split("</output_a>")[0]
        new = "A" if "new" in a_part else "B"
        winner = {0: new, 1: new, 2: "A"}[r.repeat]
        return json.dumps({"reasoning": "r", "winner": winner})

    pair = Pair(
        old=Case(id="p", input="q", output="old"), new=Case(id="p", input="q", output="new")
    )
    result = asyncio.run(grade_pairwise(ScriptedJudge(reply), plan(PAIRWISE, 3), pair))
    assert [v.winner for v in result.repeats] == [Winner.NEW, Winner.NEW, Winner.TIE]
    assert result.winner is Winner.NEW
    assert result.judge_winners == {"m1": Winner.NEW}
    assert result.consistent is False
    assert result.stable is False


# --- a case's verdict from its repeats ----------------------------------------------------


def test_what_repeats_are_compared_on(pointwise_rubric, binary_rubric):
    assert compared_for(pointwise_rubric) == Compared.SCORE
    assert compared_for(binary_rubric) == Compared.CHOICE
    assert compared_for(PAIRWISE) == Compared.WINNER
    continuous = pointwise_rubric.model_copy(
        update={"scale": pointwise_rubric.scale.model_copy(update={"integer": False})}
    )
    assert compared_for(continuous) == Compared.PASSED


def test_a_binary_split_has_no_choice(binary_rubric):
    panels = [PanelVerdict(choice="YES"), PanelVerdict(choice="NO")]
    assert combine_panel(binary_rubric, panels) == PanelVerdict()


@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        ([Winner.NEW, Winner.NEW, Winner.OLD], Winner.NEW),
        ([Winner.NEW, Winner.OLD], Winner.TIE),
        ([None, Winner.OLD, None], Winner.OLD),
        ([None, None], None),
    ],
)
def test_the_majority_winner(winners, expected):
    assert majority_winner(winners) is expected


def test_a_categorical_spread_is_the_share_off_the_most_common():
    verdicts = [RepeatVerdict(repeat=i, choice=c) for i, c in enumerate("aaba")]
    said = agreement(verdicts, Compared.CHOICE)
    assert (said.stable, said.spread) == (False, 0.25)


def test_temperature_0_is_warned_of():
    assert "only the provider's nondeterminism" in (repeats_warning(3, 0.0) or "")
    assert repeats_warning(3, 0.7) is None
    assert repeats_warning(1, 0.0) is None


# --- the run's self-consistency -----------------------------------------------------------

# Four binary cases asked three times; pinned κ from statsmodels:
# fleiss_kappa(aggregate_raters([[0,0,0],[0,1,0],[1,1,1],[1,1,0]])[0]) = 1/3.
CHOICES = [["YES"] * 3, ["YES", "NO", "YES"], ["NO"] * 3, ["NO", "NO", "YES"]]


def binary_rows(binary_rubric, categories=("a", "a", "b", "b")) -> list[CaseResult]:
    rows = []
    for i, (choices, category) in enumerate(zip(CHOICES, categories, strict=True)):
        verdicts = [
            RepeatVerdict(repeat=r, choice=c, passed=c == "YES") for r, c in enumerate(choices)
        ]
        said = agreement(verdicts, Compared.CHOICE)
        rows.append(
            CaseResult(
                id=f"c{i}",
                status=CaseStatus.OK,
                category=category,
                rubric_hash="h",
                repeats=verdicts,
                stable=said.stable,
                spread=said.spread,
            )
        )
    return rows


def test_self_consistency_of_a_binary_run(binary_rubric):
    fields = stability_fields(binary_rows(binary_rubric), binary_rubric)
    assert fields["repeats"] == 3
    assert fields["stability"] == 0.5
    assert fields["stability_ci"] == wilson_interval(2, 4)
    details = fields["self_consistency"]
    assert (details.stable, details.cases, details.compared) == (2, 4, "choice")
    assert details.fleiss_kappa == pytest.approx(1 / 3)
    assert details.fleiss_kappa_ci is not None
    assert details.pass_k == 0.25  # only c0 passes all three
    assert details.pass_at_k == 0.75
    assert details.pass_k_ci == wilson_interval(1, 4)
    assert details.unstable == ["c1", "c3"]
    assert {name: c.stable for name, c in details.by_category.items()} == {"a": 1, "b": 1}
    assert details.within_case_sd is None


def test_a_run_without_repeats_has_no_self_consistency(binary_rubric):
    row = CaseResult(id="x", status=CaseStatus.OK, choice="YES", rubric_hash="h")
    assert stability_fields([row], binary_rubric) == {}


def test_failed_cases_are_left_out(binary_rubric):
    rows = [
        *binary_rows(binary_rubric),
        CaseResult(id="f", status=CaseStatus.FAILED, rubric_hash="h"),
    ]
    assert stability_fields(rows, binary_rubric)["self_consistency"].cases == 4


def test_what_is_compared_is_read_from_the_results_without_a_rubric(binary_rubric):
    assert (
        stability_fields(binary_rows(binary_rubric), None)["self_consistency"].compared == "choice"
    )


def test_within_case_sd_is_the_mean_of_the_cases_sds(pointwise_rubric):
    rows = []
    for i, scores in enumerate([[1, 2, 3], [4, 4, 4]]):
        verdicts = [RepeatVerdict(repeat=r, score=s, passed=s >= 3) for r, s in enumerate(scores)]
        said = agreement(verdicts, Compared.SCORE)
        rows.append(
            CaseResult(
                id=f"c{i}",
                status=CaseStatus.OK,
                rubric_hash="h",
                repeats=verdicts,
                stable=said.stable,
                spread=said.spread,
            )
        )
    details = stability_fields(rows, pointwise_rubric)["self_consistency"]
    assert details.within_case_sd == pytest.approx(0.5)  # (1 + 0) / 2
    assert details.compared == "score"
    assert details.pass_k == 0.5


# --- Fleiss' κ of resamples ---------------------------------------------------------------


def test_kappa_of_the_whole_sample_is_fleiss_kappa():
    labels = ["NO", "YES"]
    ratings = category_counts(CHOICES, labels=labels)
    once = fleiss_kappa_resampled(ratings, np.ones((1, len(CHOICES))))
    assert once[0] == pytest.approx(fleiss_kappa(CHOICES, labels=labels))


def test_a_resample_of_one_category_has_no_kappa():
    ratings = category_counts(CHOICES, labels=["NO", "YES"])
    only_c0 = np.array([[2.0, 0.0, 0.0, 0.0]])
    assert np.isnan(fleiss_kappa_resampled(ratings, only_c0)[0])


def test_the_kappa_interval_covers_the_truth_about_95_percent_of_the_time():
    # A judge that answers its fixed verdict with probability 1 - j and a coin flip with
    # probability j, on cases whose verdicts are YES or NO at random: two asks agree with
    # probability (1 - j/2)^2 + (j/2)^2 against 1/2 by chance, so κ = (1 - j)^2.
    rng = np.random.default_rng(7)
    j, k, n, seeds = 0.4, 3, 150, 300
    truth = (1 - j) ** 2
    covered = 0
    for seed in range(seeds):
        base = rng.integers(0, 2, size=n)
        guess = rng.random((n, k)) < j
        coin = rng.integers(0, 2, size=(n, k))
        said = np.where(guess, coin, base[:, None])
        ratings = np.stack([(said == 0).sum(axis=1), (said == 1).sum(axis=1)], axis=1) * 1.0
        low, high = cluster_bootstrap(
            {"kappa": lambda counts, r=ratings: fleiss_kappa_resampled(r, counts)},
            [[i] for i in range(n)],
            resamples=1000,
            seed=seed,
        )["kappa"].ci
        covered += low <= truth <= high
    # 95% nominal; a 99.9% binomial band around it at 300 seeds is about ±4 points.
    assert 0.90 <= covered / seeds <= 0.99

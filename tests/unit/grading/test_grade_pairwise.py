from __future__ import annotations

import asyncio

import pytest

from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan, grade_pairwise, single_order
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseStatus, Order, Winner
from tests.scripted import ScriptedJudge

RUBRIC = parse_rubric(
    "name: pw\nkind: pairwise\nprompt:\n  user: 'Q {input} A {output_a} B {output_b}'\n",
    source="pw.yaml",
)
PAIR = Pair(
    old=Case(id="p1", input="q", output="short old", category="c"),
    new=Case(id="p1", input="q", output="a longer new answer", category="c"),
)


def reply(winner: str) -> str:
    return f'{{"reasoning": "r", "winner": "{winner}"}}'


def favours(answer: str):
    """A judge that always prefers the answer containing `answer`, wherever it sits."""

    def respond(request):
        user = request.messages[-1]["content"]
        a_part = user.split("<output_a>")[1].split("</output_a>")[0]
        return reply("A" if answer in a_part else "B")

    return respond


def grade(judge, *, models=("m1",), flip=True, policy=FlipPolicy.TIE):
    plan = GradingPlan(
        rubric=RUBRIC,
        models=list(models),
        temperature=0,
        max_tokens=100,
        max_retries=1,
        flip=flip,
        flip_policy=policy,
    )
    return asyncio.run(grade_pairwise(judge, plan, PAIR))


def test_both_orders_are_asked_and_mapped_back_to_new():
    judge = ScriptedJudge(favours("new"))
    result = grade(judge)
    assert result.status is CaseStatus.OK
    assert (result.winner, result.consistent) == (Winner.NEW, True)
    assert [j.order for j in result.judgements] == [Order.OLD_NEW, Order.NEW_OLD]
    assert [j.verdict.winner.value for j in result.judgements] == ["B", "A"]
    firsts = [r.messages[-1]["content"].split("<output_a>\n")[1][:5] for r in judge.history]
    assert sorted(firsts) == ["a lon", "short"]
    assert result.lengths == {"old": 9, "new": 19}


def test_a_judge_that_always_says_a_is_inconsistent_and_scores_a_tie():
    result = grade(ScriptedJudge(lambda r: reply("A")))
    assert (result.winner, result.consistent) == (Winner.TIE, False)


def test_drop_policy_leaves_an_inconsistent_case_undecided():
    result = grade(ScriptedJudge(lambda r: reply("A")), policy=FlipPolicy.DROP)
    assert result.status is CaseStatus.OK
    assert result.winner is None
    assert result.judge_winners == {"m1": None}


def test_panel_verdict_is_the_majority_of_reconciled_judges():
    prefs = {"m1": "new", "m2": "new", "m3": "old"}

    def respond(request):
        return favours(prefs[request.model])(request)

    result = grade(ScriptedJudge(respond), models=("m1", "m2", "m3"))
    assert result.winner is Winner.NEW
    assert result.judge_winners == {"m1": Winner.NEW, "m2": Winner.NEW, "m3": Winner.OLD}
    assert len(result.judgements) == 6


def test_a_failed_order_fails_the_case_with_its_order_named():
    judge = ScriptedJudge().enqueue(reply("A"), "garbage", "garbage")
    result = grade(judge)
    assert result.status is CaseStatus.FAILED
    assert "(new-old)" in result.error
    assert result.winner is None


def test_without_flip_one_seeded_order_is_asked():
    judge = ScriptedJudge(favours("new"))
    result = grade(judge, flip=False)
    assert len(judge.history) == 1
    assert result.winner is Winner.NEW
    assert result.consistent is None
    assert result.judgements[0].order is single_order("p1", 0)


@pytest.mark.parametrize("seed", range(3))
def test_single_orders_are_balanced_across_cases(seed):
    orders = [single_order(f"case-{i}", seed) for i in range(400)]
    assert 160 < orders.count(Order.OLD_NEW) < 240

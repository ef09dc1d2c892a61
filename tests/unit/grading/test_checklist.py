"""A case's checklist graded (judgecli/grading/checklist.py, issue 32): one call per item or
all at once, each item's verdict kept so that a changed item is asked alone, and a reply
that does not validate re-asked, then a failed case with its raw text."""

from __future__ import annotations

import asyncio
import json

import pytest

from judgecli.grading.checklist import items_schema
from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.inputs.rubric_items import RubricItem
from judgecli.judge.protocol import JudgeReply, JudgeRequest
from judgecli.result import CaseStatus
from judgecli.settings.items_per_call import ItemsPerCall
from judgecli.verdict import VerdictError, parse_items_verdict
from tests.scripted import ScriptedJudge

RUBRIC = parse_rubric(
    """\
name: tiny-checklist
kind: checklist
pass_at: 0.5
requires: [input, output, rubric_items]
prompt:
  system: You grade answers against rubric items.
  user: "Q: {input}\\nA: {output}\\nItems:\\n{rubric_items}"
""",
    source="tiny-checklist.yaml",
)
ITEMS = [
    RubricItem(criterion="Names the capital", points=5, tags=["axis:accuracy"]),
    RubricItem(criterion="Gives the population", points=3),
    RubricItem(criterion="Insults the user", points=-4, tags=["axis:safety"]),
]
CASE = Case(id="c1", input="Capital of France?", output="Paris.", rubric_items=ITEMS)
# What the judge says of each item, by its criterion.
SAYS = {
    "Names the capital": True,
    "Gives the population": False,
    "Gives the population of Paris": False,
    "Insults the user": True,
}


def plan(per_call=ItemsPerCall.ONE, retries=1) -> GradingPlan:
    return GradingPlan(
        rubric=RUBRIC,
        models=["m1"],
        temperature=0.0,
        max_tokens=300,
        max_retries=retries,
        items_per_call=per_call,
    )


def shown(request: JudgeRequest) -> list[str]:
    """The criteria a request shows, in order."""
    text = request.messages[-1]["content"].split("<rubric_items>\n", 1)[1]
    lines = text.split("\n</rubric_items>", 1)[0].splitlines()
    return [line.split("] ", 1)[1] for line in lines]


def answer(request: JudgeRequest) -> str:
    """A judge that says SAYS of each item it is shown, in the shape it was asked for."""
    criteria = shown(request)
    schema = request.response_format["json_schema"]["schema"]
    if "met" in schema["properties"]:
        return json.dumps({"reasoning": f"on {criteria[0]}", "met": SAYS[criteria[0]]})
    return json.dumps(
        {
            "items": {
                str(n): {"reasoning": f"on {c}", "met": SAYS[c]}
                for n, c in enumerate(criteria, start=1)
            }
        }
    )


class CachingJudge(ScriptedJudge):
    """A scripted judge with a reply cache it can recall from, as CachedJudge has."""

    def __init__(self, respond=answer) -> None:
        super().__init__(respond)
        self.kept: dict[str, JudgeReply] = {}

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        super().remember(request, reply)
        self.kept[request.key(None)] = reply

    def recall(self, request: JudgeRequest) -> JudgeReply | None:
        kept = self.kept.get(request.key(None))
        return None if kept is None else JudgeReply(text=kept.text, attempts=0, cached=True)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        kept = self.recall(request)
        return kept if kept is not None else await super().complete(request)


def grade(judge, case=CASE, **kw):
    return asyncio.run(grade_pointwise(judge, plan(**kw), case))


def test_one_call_per_item_each_showing_that_item_alone():
    judge = ScriptedJudge(answer)
    result = grade(judge)
    assert result.status is CaseStatus.OK
    assert [shown(r) for r in judge.history] == [[i.criterion] for i in ITEMS]
    # 5 met, 3 not, -4 met (it insults the user): (5 - 4) / (5 + 3), not clipped.
    assert result.score == pytest.approx(1 / 8)
    assert result.passed is False
    assert [(i.item, i.met, i.points, i.tags) for i in result.items] == [
        (1, True, 5, ["axis:accuracy"]),
        (2, False, 3, []),
        (3, True, -4, ["axis:safety"]),
    ]
    assert result.items[1].reasoning == "on Gives the population"
    assert [j.verdict.met for j in result.judgements] == [True, False, True]
    assert judge.history[0].response_format["json_schema"]["schema"]["properties"]["met"] == {
        "type": "boolean"
    }


def test_a_case_can_score_below_zero_and_its_results_keep_every_item():
    bad = {"Names the capital": False, "Gives the population": False, "Insults the user": True}
    judge = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "met": bad[shown(r)[0]]}))
    result = grade(judge)
    assert result.score == pytest.approx(-4 / 8)
    assert len(result.items) == 3


def test_a_met_that_is_not_true_or_false_is_re_asked_then_the_case_fails_with_the_raw_text():
    judge = ScriptedJudge().enqueue(
        '{"reasoning": "r", "met": true}',
        '{"reasoning": "r", "met": "yes"}',
        '{"reasoning": "r", "met": 1}',
        '{"reasoning": "r", "met": false}',
    )
    result = grade(judge, retries=1)
    assert result.status is CaseStatus.FAILED
    assert result.score is None
    assert result.items is None
    assert result.error.startswith(
        'item 2: m1: invalid verdict: "met" must be true or false, got 1'
    )
    assert result.judgements[1].raw == '{"reasoning": "r", "met": 1}'
    repair = judge.history[2].messages[-1]["content"]
    assert '"met" must be true or false, got "yes"' in repair


def test_all_items_in_one_call_give_the_same_result_as_one_call_each():
    judge = ScriptedJudge(answer)
    batched = grade(judge, per_call=ItemsPerCall.ALL)
    assert len(judge.history) == 1
    request = judge.history[0]
    assert shown(request) == [i.criterion for i in ITEMS]
    assert request.response_format["json_schema"]["schema"] == items_schema(3)
    one = grade(ScriptedJudge(answer))
    assert (batched.score, batched.passed) == (one.score, one.passed)
    assert [(i.met, i.reasoning) for i in batched.items] == [
        (i.met, i.reasoning) for i in one.items
    ]


def test_all_at_once_keeps_each_items_verdict_so_a_changed_item_is_asked_alone():
    judge = CachingJudge()
    grade(judge, per_call=ItemsPerCall.ALL)
    assert len(judge.history) == 1
    # The batch's reply, and each item's verdict as the reply to asking it alone.
    assert len(judge.kept) == 1 + 3
    again = grade(judge, per_call=ItemsPerCall.ALL)
    assert len(judge.history) == 1
    assert all(j.cached for j in again.judgements)
    changed = [ITEMS[0], RubricItem(criterion="Insults the user", points=-6), ITEMS[1]]
    result = grade(
        judge, case=CASE.model_copy(update={"rubric_items": changed}), per_call=ItemsPerCall.ALL
    )
    # Only the item whose points changed is asked, numbered 1 in a call of its own.
    assert len(judge.history) == 2
    assert shown(judge.history[1]) == ["Insults the user"]
    assert "1. [-6] Insults the user" in judge.history[1].messages[-1]["content"]
    assert [(i.item, i.criterion, i.met) for i in result.items] == [
        (1, "Names the capital", True),
        (2, "Insults the user", True),
        (3, "Gives the population", False),
    ]
    assert result.score == pytest.approx((5 - 6) / 8)


def test_one_call_per_item_asks_only_a_changed_item_again():
    judge = CachingJudge()
    grade(judge)
    assert len(judge.history) == 3
    changed = [ITEMS[0], RubricItem(criterion="Gives the population of Paris", points=3), ITEMS[2]]
    grade(judge, case=CASE.model_copy(update={"rubric_items": changed}))
    assert [shown(r) for r in judge.history[3:]] == [["Gives the population of Paris"]]


def test_a_batched_reply_missing_an_item_is_re_asked_then_the_case_fails():
    short = json.dumps({"items": {"1": {"reasoning": "r", "met": True}}})
    judge = ScriptedJudge().enqueue(short, short)
    result = grade(judge, per_call=ItemsPerCall.ALL, retries=1)
    assert result.status is CaseStatus.FAILED
    assert result.error.startswith("items 1, 2, 3: m1: invalid verdict:")
    assert '"items" has no verdict for item(s) 2, 3' in result.error
    assert result.judgements[0].raw == short
    assert len(judge.history) == 2


def test_a_kept_verdict_that_does_not_read_is_asked_again():
    judge = CachingJudge()
    grade(judge, per_call=ItemsPerCall.ALL)
    batch, *alone = judge.kept
    # Each item's kept verdict unreadable, and the batch's reply gone from the cache.
    del judge.kept[batch]
    for key in alone:
        judge.kept[key] = JudgeReply(text="not a verdict")
    grade(judge, per_call=ItemsPerCall.ALL)
    assert len(judge.history) == 2
    assert shown(judge.history[1]) == [i.criterion for i in ITEMS]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("prose", "no JSON object", id="prose"),
        pytest.param('{"items": []}', '"items" is missing or not an object', id="list"),
        pytest.param(
            '{"items": {"1": {"reasoning": "r", "met": true}, "2": {"reasoning": "r", '
            '"met": true}, "3": {"reasoning": "r", "met": false}}}',
            "verdicts for '3', which were not asked (items 1..2)",
            id="extra",
        ),
        pytest.param(
            '{"items": {"1": {"met": true}, "2": {"reasoning": "r", "met": true}}}',
            '"items.1.reasoning" is missing',
            id="no-reasoning",
        ),
        pytest.param(
            '{"items": {"1": {"reasoning": "r", "met": "true"}, "2": {"reasoning": "r", '
            '"met": true}}}',
            '"items.1.met" must be true or false, got "true"',
            id="text-true",
        ),
    ],
)
def test_a_batched_reply_is_read_exactly_or_not_at_all(text, says):
    with pytest.raises(VerdictError) as caught:
        parse_items_verdict(text, count=2)
    assert says in caught.value.reason


def test_a_batched_reply_after_thinking_and_in_a_fence_is_read():
    text = (
        "<think>maybe item 2 is met</think>```json\n"
        '{"items": {"1": {"reasoning": "a", "met": true}, "2": {"reasoning": "b", "met": false}}}'
        "\n```"
    )
    verdict = parse_items_verdict(text, count=2)
    assert [(i.item, i.met) for i in verdict.items] == [(1, True), (2, False)]

from __future__ import annotations

import asyncio

from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.dataset import Case
from judgecli.judge.protocol import JudgeCallError, JudgeReply
from judgecli.result import CaseStatus
from tests.scripted import ScriptedJudge

CASE = Case(id="c1", input="q", output="a", category="math")


def plan(rubric, models=("m1",), retries=2) -> GradingPlan:
    return GradingPlan(
        rubric=rubric, models=list(models), temperature=0.0, max_tokens=100, max_retries=retries
    )


def grade(judge, rubric, **kw):
    return asyncio.run(grade_pointwise(judge, plan(rubric, **kw), CASE))


def test_a_valid_reply_gives_the_score_and_pass(pointwise_rubric):
    judge = ScriptedJudge().enqueue('{"reasoning": "fine", "score": 3}')
    result = grade(judge, pointwise_rubric)
    assert result.status is CaseStatus.OK
    assert (result.score, result.passed, result.category) == (3.0, True, "math")
    assert result.rubric_hash == pointwise_rubric.content_hash
    assert result.judgements[0].verdict.reasoning == "fine"
    assert judge.history[0].response_format["type"] == "json_schema"


def test_unparseable_reply_is_re_asked_with_the_reason(pointwise_rubric):
    judge = ScriptedJudge().enqueue("a 3 I guess", '{"reasoning": "ok", "score": 2}')
    result = grade(judge, pointwise_rubric)
    assert result.status is CaseStatus.OK
    assert result.score == 2.0
    repair = judge.history[1].messages
    assert repair[-2] == {"role": "assistant", "content": "a 3 I guess"}
    assert "no JSON object" in repair[-1]["content"]
    assert result.judgements[0].attempts == 2
    assert result.judgements[0].prompt_tokens == 20


def test_unparseable_reply_is_a_failed_case_not_a_low_score(pointwise_rubric):
    judge = ScriptedJudge().enqueue("nope", "still nope", '{"reasoning": "x", "score": 9}')
    result = grade(judge, pointwise_rubric, retries=2)
    assert result.status is CaseStatus.FAILED
    assert result.score is None
    assert result.passed is None
    assert "outside 1..4" in result.error
    assert "after 3 replies" in result.error
    assert result.judgements[0].raw == '{"reasoning": "x", "score": 9}'
    assert len(judge.history) == 3


def test_a_call_error_is_a_failed_case_with_its_reason(pointwise_rubric):
    judge = ScriptedJudge().enqueue(JudgeCallError("HTTP 401 bad key", attempts=1))
    result = grade(judge, pointwise_rubric)
    assert result.status is CaseStatus.FAILED
    assert result.error == "m1: HTTP 401 bad key"


def test_a_panel_averages_scores(pointwise_rubric):
    judge = ScriptedJudge(lambda r: f'{{"reasoning": "r", "score": {2 if r.model == "m1" else 4}}}')
    result = grade(judge, pointwise_rubric, models=("m1", "m2"))
    assert result.score == 3.0
    assert [j.model for j in result.judgements] == ["m1", "m2"]


def test_one_failed_judge_fails_the_panel_case(pointwise_rubric):
    judge = ScriptedJudge(lambda r: '{"reasoning": "r", "score": 3}' if r.model == "m1" else "?")
    result = grade(judge, pointwise_rubric, models=("m1", "m2"), retries=0)
    assert result.status is CaseStatus.FAILED
    assert result.error.startswith("m2: invalid verdict")


def test_no_schema_is_sent_to_a_judge_that_does_not_take_one(pointwise_rubric):
    judge = ScriptedJudge(schema=False).enqueue('{"reasoning": "r", "score": 1}')
    grade(judge, pointwise_rubric)
    assert judge.history[0].response_format is None


def test_binary_majority_decides_and_a_split_panel_decides_nothing(binary_rubric):
    votes = {"m1": "YES", "m2": "NO", "m3": "YES"}
    judge = ScriptedJudge(lambda r: f'{{"reasoning": "r", "choice": "{votes[r.model]}"}}')
    result = grade(judge, binary_rubric, models=("m1", "m2", "m3"))
    assert (result.choice, result.passed) == ("YES", True)
    split = grade(judge, binary_rubric, models=("m1", "m2"))
    assert (split.status, split.choice, split.passed) == (CaseStatus.OK, None, None)


def test_a_reply_cut_off_at_max_tokens_is_re_asked_not_parsed(pointwise_rubric):
    # Issue 13: finish_reason "length" is retried with a clear error; even a complete
    # object early in a cut-off reply is not taken as the verdict.
    cut = JudgeReply(
        text='{"reasoning": "a", "score": 1} and then I reconsidered, the', finish_reason="length"
    )
    judge = ScriptedJudge().enqueue(cut, cut)
    result = grade(judge, pointwise_rubric, retries=1)
    assert result.status is CaseStatus.FAILED
    assert "cut off at --max-tokens 100 (finish_reason: length)" in result.error
    assert "be brief" in judge.history[1].messages[-1]["content"]


def test_a_reasoning_models_thinking_is_kept_but_never_parsed(pointwise_rubric):
    reply = JudgeReply(text='{"reasoning": "ok", "score": 2}', reasoning='maybe {"score": 4}?')
    result = grade(ScriptedJudge().enqueue(reply), pointwise_rubric)
    assert result.score == 2.0
    assert result.judgements[0].reasoning == 'maybe {"score": 4}?'


def test_the_case_text_is_kept_with_its_result(pointwise_rubric):
    result = grade(ScriptedJudge().enqueue('{"reasoning": "fine", "score": 3}'), pointwise_rubric)
    assert result.case["input"] == "q"
    assert result.case["output"] == "a"


def test_a_stop_in_one_call_lets_its_sibling_calls_finish(pointwise_rubric):
    # --max-cost stops the run in one judge's call: the other judge's reply, already paid
    # for, is still received and remembered (cached), not cancelled mid-flight.
    from judgecli.errors import BudgetExceededError

    class Judge(ScriptedJudge):
        async def complete(self, request):
            if request.model == "m1":
                raise BudgetExceededError("stopped")
            await asyncio.sleep(0.05)
            return JudgeReply(text='{"reasoning": "fine", "score": 3}')

    judge = Judge()
    try:
        grade(judge, pointwise_rubric, models=("m1", "m2"))
    except BudgetExceededError:
        pass
    else:
        raise AssertionError("the stop must reach the runner")
    assert [r.model for r in judge.remembered] == ["m2"]

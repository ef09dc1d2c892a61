"""What Judge.grade and compare return (issue 31): the verdict with its judgements and
spend, or, for a case the judge could not grade, GradeError with every raw reply (never a
verdict a caller could read as a low score)."""

from __future__ import annotations

import pytest

from judgecli.api.verdicts import Comparison, Verdict, reason_of, usage_of
from judgecli.errors import GradeError
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, Winner
from judgecli.verdict import Position
from judgecli.verdict import Verdict as Said


def judgement(model="openai/a", reasoning="fine", **extra) -> Judgement:
    fields = {"verdict": Said(reasoning=reasoning, score=4.0), "raw": '{"score": 4}'} | extra
    return Judgement(
        model=model,
        attempts=1,
        prompt_tokens=10,
        completion_tokens=5,
        cost_usd=0.001,
        latency_s=0.5,
        **fields,
    )


def test_a_graded_case_is_a_verdict_with_its_judgements_and_spend():
    result = CaseResult(
        id="q1",
        status=CaseStatus.OK,
        score=4.0,
        passed=True,
        rubric_hash="h",
        judgements=[judgement()],
    )
    verdict = Verdict.of(result)
    assert (verdict.id, verdict.score, verdict.passed, verdict.reason) == ("q1", 4.0, True, "fine")
    assert verdict.usage.model_dump() == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001,
        "latency_s": 0.5,
        "calls": 1,
        "cached": 0,
    }
    assert verdict.result is result


def test_a_panels_reasons_are_one_line_per_judgement():
    said = [
        judgement("openai/a", "A says", order=Order.OLD_NEW),
        judgement("openai/b", "B says", repeat=1),
    ]
    assert reason_of(said) == "- openai/a (old-new): A says\n- openai/b [repeat 1]: B says"


def test_a_cached_judgement_costs_nothing_and_made_no_call():
    cached = Judgement(model="m", cached=True, verdict=Said(reasoning="r", score=1.0))
    assert usage_of([cached, cached]).model_dump() == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
        "latency_s": 0.0,
        "calls": 0,
        "cached": 2,
    }


def test_a_comparison_carries_the_reconciled_winner():
    result = CaseResult(
        id="p",
        status=CaseStatus.OK,
        winner=Winner.NEW,
        consistent=True,
        rubric_hash="h",
        judge_winners={"openai/a": Winner.NEW},
        judgements=[
            judgement(order=Order.OLD_NEW, verdict=Said(reasoning="B", winner=Position.B)),
            judgement(order=Order.NEW_OLD, verdict=Said(reasoning="A", winner=Position.A)),
        ],
    )
    comparison = Comparison.of(result)
    assert (comparison.winner, comparison.consistent) == (Winner.NEW, True)
    assert comparison.usage.calls == 2


@pytest.mark.parametrize("make", [Verdict.of, Comparison.of])
def test_a_failed_case_raises_with_every_raw_reply(make):
    failed = [
        Judgement(model="openai/a", attempts=2, raw="not json", error="invalid verdict: x"),
        Judgement(model="openai/b", attempts=1, raw=None, error="HTTP 400: too long"),
    ]
    result = CaseResult(
        id="q9",
        status=CaseStatus.FAILED,
        error="openai/a: invalid verdict: x",
        rubric_hash="h",
        judgements=failed,
    )
    with pytest.raises(GradeError) as raised:
        make(result)
    error = raised.value
    assert error.message == "the judge could not grade case 'q9': openai/a: invalid verdict: x"
    assert error.raw == ("not json",)
    assert error.reasons == ("openai/a: invalid verdict: x", "openai/b: HTTP 400: too long")
    assert error.case_id == "q9"
    assert int(error.exit_code) == 3

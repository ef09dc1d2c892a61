"""The refine loop against a scripted client, its feedback template, and its numbers."""

from __future__ import annotations

import asyncio
import json

import pytest

from judgecli.commands.refine import (
    Attempt,
    RefineSettings,
    answer_row,
    attempts_of,
    generator_messages,
    refine_case,
)
from judgecli.grading.grade import GradingPlan
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.protocol import JudgeCallError, JudgeRequest
from judgecli.result import CaseStatus
from judgecli.settings.judges import ModelSettings
from judgecli.summary.facts import Command, Usage
from judgecli.summary.refine import lift, summarize_refine
from tests.conftest import POINTWISE_YAML
from tests.scripted import ScriptedJudge

GEN = "gen/model"
CASE = Case(id="c1", input="Why is the sky blue?", category="science")


def settings(max_attempts: int = 3, **kw) -> RefineSettings:
    return RefineSettings(
        generator=ModelSettings(name=GEN), success_rating=None, max_attempts=max_attempts, **kw
    )


def plan(rubric) -> GradingPlan:
    return GradingPlan(
        rubric=rubric, models=["judge"], temperature=0.0, max_tokens=100, max_retries=1
    )


def scripted(scores: list[int], feedback: str = "be specific") -> ScriptedJudge:
    """Generator answers a1, a2, ...; the judge gives `scores` in turn."""
    answers = iter(f"a{i}" for i in range(1, 100))
    verdicts = iter(scores)

    def respond(request: JudgeRequest) -> str:
        if request.model == GEN:
            return next(answers)
        return json.dumps({"reasoning": "r", "score": next(verdicts), "feedback": feedback})

    return ScriptedJudge(respond)


def refine(client, rubric, case=CASE, **kw):
    return asyncio.run(refine_case(client, plan(rubric), settings(**kw), case))


# --- the lift statistic -------------------------------------------------------------------


def test_lift_is_the_mean_paired_difference_with_a_t_interval():
    # Differences 2, 0, 2, 1: mean 1.25, s = 0.9574, se = 0.4787, t(0.975, 3) = 3.1824,
    # so 1.25 ± 1.5235 (scipy.stats.t.interval(0.95, 3, 1.25, 0.4787)).
    result = lift([1, 2, 2, 3], [3, 2, 4, 4])
    assert result.value == pytest.approx(1.25)
    assert result.ci_t == pytest.approx((-0.27348, 2.77348), abs=1e-4)
    assert result.n == 4
    low, high = result.ci
    assert 0.0 <= low <= 1.25 <= high <= 2.0  # a bootstrap mean stays within the data


def test_lift_of_identical_differences_has_no_interval_and_says_why():
    # Issue 29: every case gained exactly 1, so every resample did too; the zero-width
    # [1.0, 1.0] claimed a certainty three cases do not give.
    result = lift([1, 2, 3], [2, 3, 4])
    assert (result.ci, result.ci_t) == ((None, None), (None, None))
    assert result.why == "no spread: every lift is 1"


def test_lift_of_no_cases_is_unknown():
    result = lift([], [])
    assert (result.value, result.ci, result.ci_t) == (None, (None, None), (None, None))


def test_lift_needs_one_first_and_one_final_per_case():
    with pytest.raises(ValueError, match="one first and one final"):
        lift([1, 2], [3])


# --- the generator's request --------------------------------------------------------------


def test_the_retry_message_is_the_original_input_plus_the_rendered_feedback():
    previous = Attempt(attempt=1, answer="It depends.", feedback="add detail")
    messages = generator_messages(
        CASE, settings(feedback_template="Was: {answer}\nFix: {feedback}"), previous
    )
    assert messages == [
        {"role": "user", "content": "Why is the sky blue?\n\nWas: It depends.\nFix: add detail"}
    ]


def test_the_case_system_message_wins_over_the_flag():
    case = CASE.model_copy(update={"metadata": {"system": "from case"}})
    assert generator_messages(case, settings(system="flag"), None)[0]["content"] == "from case"
    assert generator_messages(CASE, settings(system="flag"), None)[0]["content"] == "flag"
    assert generator_messages(CASE, settings(), None)[0]["role"] == "user"


# --- stop rules ---------------------------------------------------------------------------


def test_success_at_attempt_two_stops_the_loop(pointwise_rubric):
    client = scripted([2, 3])
    result = refine(client, pointwise_rubric)
    attempts = attempts_of(result)
    assert [a.attempt for a in attempts] == [1, 2]
    assert [a.passed for a in attempts] == [False, True]
    assert (result.status, result.passed, result.score) == (CaseStatus.OK, True, 3.0)
    assert [r.model for r in client.history] == [GEN, "judge", GEN, "judge"]
    assert len(result.judgements) == 2  # every judge call of every attempt


def test_an_exhausted_case_keeps_its_last_answer(pointwise_rubric):
    result = refine(scripted([1, 2, 2]), pointwise_rubric)
    attempts = attempts_of(result)
    assert [a.answer for a in attempts] == ["a1", "a2", "a3"]
    assert (result.passed, result.score) == (False, 2.0)
    row = answer_row(CASE, result)
    assert row is not None
    assert (row["output"], row["attempts"], row["outcome"]) == ("a3", 3, "exhausted")


def test_the_judges_feedback_reaches_the_next_generation():
    rubric = parse_rubric(POINTWISE_YAML + "feedback: true\n", source="tiny.yaml")
    client = scripted([1, 4], feedback="name Rayleigh scattering")
    refine(client, rubric)
    retry = client.history[2]
    assert retry.model == GEN
    assert retry.response_format is None  # a generator is never asked for a verdict
    content = retry.messages[-1]["content"]
    assert content.startswith("Why is the sky blue?")
    assert "name Rayleigh scattering" in content
    assert "a1" in content


def test_a_given_output_that_passes_is_attempt_zero_and_nothing_is_generated(pointwise_rubric):
    client = scripted([4])
    result = refine(client, pointwise_rubric, case=CASE.model_copy(update={"output": "given"}))
    assert [a.attempt for a in attempts_of(result)] == [0]
    assert [r.model for r in client.history] == ["judge"]
    row = answer_row(CASE, result)
    assert row is not None
    assert (row["output"], row["attempts"], row["passed"]) == ("given", 0, True)


def test_a_reasoning_stands_in_for_missing_feedback(pointwise_rubric):
    answers = iter(["a1", "a2"])
    verdicts = iter([1, 4])
    client = ScriptedJudge(
        lambda r: (
            next(answers)
            if r.model == GEN
            else json.dumps({"reasoning": f"too vague {next(verdicts)}", "score": 1})
        )
    )
    refine(client, pointwise_rubric, max_attempts=2)
    assert "too vague" in client.history[2].messages[-1]["content"]


def test_a_failed_generator_call_fails_the_case_with_the_reason(pointwise_rubric):
    client = ScriptedJudge().enqueue(JudgeCallError("HTTP 500 boom", attempts=3))
    result = refine(client, pointwise_rubric)
    assert result.status is CaseStatus.FAILED
    assert result.error == "generator: HTTP 500 boom"
    assert answer_row(CASE, result) is None


def test_a_binary_rubric_passes_on_its_pass_choice(binary_rubric):
    answers = iter(["a1", "a2"])
    choices = iter(["NO", "YES"])
    client = ScriptedJudge(
        lambda r: (
            next(answers)
            if r.model == GEN
            else json.dumps({"reasoning": "r", "choice": next(choices)})
        )
    )
    result = refine(client, binary_rubric)
    assert [a.passed for a in attempts_of(result)] == [False, True]


# --- the summary --------------------------------------------------------------------------


def test_the_summary_reports_first_and_final_pass_rates_lift_and_costs(pointwise_rubric):
    results = [
        refine(scripted(s), pointwise_rubric, case=CASE.model_copy(update={"id": i}))
        for i, s in (("x", [2, 3]), ("y", [1, 1, 2]), ("z", [3]))
    ]
    attempts = [attempts_of(r) for r in results]
    summary = summarize_refine(
        results,
        attempts,
        rubric=pointwise_rubric,
        judges=["judge"],
        generator=GEN,
        generation_usage=Usage(calls=6, cost_usd=0.006),
        max_attempts=3,
        success_rating=3,
    )
    assert summary.command is Command.REFINE
    assert summary.pass_rate_first == pytest.approx(1 / 3)
    assert summary.pass_rate_final == pytest.approx(2 / 3)
    assert summary.mean_attempts == pytest.approx(2.0)
    # first 2, 1, 3 → final 3, 2, 3: differences 1, 1, 0
    assert summary.lift == pytest.approx(2 / 3)
    assert summary.never_passed == ["y"]
    assert summary.by_attempt["1"].n == 3
    assert summary.by_attempt["3"].distribution == {"1": 0, "2": 1, "3": 0, "4": 0}
    # ScriptedJudge charges 0.001 a call: 6 generations and 6 judgements.
    assert summary.cost_generation_usd == pytest.approx(0.006)
    assert summary.cost_judging_usd == pytest.approx(0.006)
    assert summary.usage.calls == 12

"""The tiered cascade: default rules per rubric, rules that do not fit the rubric, what the
rule sees of the screen's verdict, and the grader that escalates (with a scripted judge).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from judgecli.errors import ConfigError
from judgecli.grading.cascade import (
    DEFAULT_LOW_CONFIDENCE,
    default_rule_text,
    escalation_rule,
    plan_cascade,
    screen_facts,
    tiered,
)
from judgecli.grading.escalate import parse_rule
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.inputs.dataset import Case
from judgecli.inputs.pairs import Pair
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.protocol import JudgeCallError, JudgeRequest
from judgecli.result import CaseResult, CaseStatus, Judgement, Tier
from judgecli.rubric import Rubric
from judgecli.verdict import Verdict
from tests.scripted import ScriptedJudge

CONTINUOUS = parse_rubric(
    "name: cont\nkind: pointwise\nscale: {min: 0, max: 1, integer: false}\npass_at: 0.7\n"
    "confidence: true\nprompt:\n  user: 'Q {input} A {output}'\n",
    source="cont.yaml",
)
PAIRWISE = parse_rubric(
    "name: pw\nkind: pairwise\nconfidence: true\nprompt:\n  user: 'Q {input} A {output_a} "
    "B {output_b}'\n",
    source="pw.yaml",
)
PAIRWISE_PLAIN = parse_rubric(
    "name: pw-plain\nkind: pairwise\nprompt:\n  user: 'Q {input} A {output_a} B {output_b}'\n",
    source="pw-plain.yaml",
)


def same_rule(a: str, b: str) -> bool:
    return parse_rule(a).text == parse_rule(b).text


def plan(rubric: Rubric, models: list[str], *, flip: bool = True) -> GradingPlan:
    return GradingPlan(
        rubric=rubric, models=models, temperature=0.0, max_tokens=100, max_retries=0, flip=flip
    )


# --- default rules ------------------------------------------------------------------


def test_pointwise_default_is_failed_or_the_two_scores_at_the_pass_line(pointwise_rubric):
    # tiny: scale 1-4, pass_at 3 → the last failing (2) and the first passing (3) score.
    assert same_rule(
        default_rule_text(pointwise_rubric, flip=True), "failed or (score >= 2 and score < 4)"
    )


def test_continuous_scale_band_is_a_tenth_of_the_scale_plus_low_confidence():
    assert same_rule(
        default_rule_text(CONTINUOUS, flip=True),
        f"failed or (score >= 0.6 and score < 0.8) or confidence < {DEFAULT_LOW_CONFIDENCE}",
    )


def test_pairwise_default_escalates_inconsistent_verdicts_or_unsure_ones_without_flip():
    assert same_rule(default_rule_text(PAIRWISE, flip=True), "failed or not consistent")
    assert same_rule(default_rule_text(PAIRWISE, flip=False), "failed or confidence < 0.8")


@pytest.mark.parametrize(("rubric_name", "flip"), [("binary", True), ("pairwise_plain", False)])
def test_a_default_with_only_failures_to_look_at_needs_an_explicit_rule(
    binary_rubric, rubric_name, flip
):
    rubric = binary_rubric if rubric_name == "binary" else PAIRWISE_PLAIN
    with pytest.raises(ConfigError, match="nothing to escalate on") as err:
        escalation_rule(None, rubric, flip=flip)
    assert "--escalate" in (err.value.hint or "")


# --- rules that do not fit the rubric ---------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "rubric_name", "flip", "problem"),
    [
        ("score < 3", "binary", True, "is for pointwise rubrics"),
        ("score < 3", "pairwise", True, "is for pointwise rubrics"),
        ("not consistent", "pointwise", True, "is for pairwise rubrics"),
        ("winner == tie", "pointwise", True, "is for pairwise rubrics"),
        ("not consistent", "pairwise", False, "--no-flip"),
        ("confidence < 0.8", "pointwise", True, "no `confidence: true`"),
        ("passed == false", "pairwise", True, "needs a pass line"),
    ],
)
def test_a_rule_on_a_value_the_screen_will_not_give_is_an_input_error(
    pointwise_rubric, binary_rubric, rule, rubric_name, flip, problem
):
    rubric = {"pointwise": pointwise_rubric, "binary": binary_rubric, "pairwise": PAIRWISE}[
        rubric_name
    ]
    with pytest.raises(ConfigError, match="--escalate") as err:
        escalation_rule(rule, rubric, flip=flip)
    assert problem in err.value.message


def test_a_fitting_rule_is_kept_in_canonical_form(pointwise_rubric):
    rule = escalation_rule("FAILED  or score<=2", pointwise_rubric, flip=True)
    assert rule.text == parse_rule("failed or score <= 2").text


def test_without_screen_there_is_no_cascade(pointwise_rubric):
    assert plan_cascade(plan(pointwise_rubric, ["strong"]), None, "score < 2") is None


# --- what the rule sees --------------------------------------------------------------


def judgement(confidence: float | None, *, winner: str | None = None) -> Judgement:
    verdict = Verdict(
        reasoning="r", score=None if winner else 3.0, winner=winner, confidence=confidence
    )
    return Judgement(model="cheap", verdict=verdict)


def test_confidence_is_the_lowest_of_the_screens_replies():
    replies = [judgement(0.9, winner="A"), judgement(0.6, winner="B")]
    result = CaseResult(
        id="c", status=CaseStatus.OK, rubric_hash="h", consistent=False, judgements=replies
    )
    facts = screen_facts(result)
    assert (facts.confidence, facts.consistent, facts.failed) == (0.6, False, False)


def test_a_reply_without_confidence_makes_it_unknown():
    result = CaseResult(
        id="c",
        status=CaseStatus.OK,
        rubric_hash="h",
        score=3.0,
        judgements=[judgement(0.9), judgement(None)],
    )
    assert screen_facts(result).confidence is None
    assert screen_facts(result).score == 3.0


def test_a_failed_screen_is_failed_with_no_score():
    result = CaseResult(
        id="c",
        status=CaseStatus.FAILED,
        rubric_hash="h",
        error="x",
        judgements=[Judgement(model="cheap", error="x")],
    )
    facts = screen_facts(result)
    assert facts.failed
    assert facts.score is None
    assert facts.confidence is None


# --- the grader ------------------------------------------------------------------------

# The screen scores by case id; the strong judge always says 3.
SCREEN_SCORES = {"low": 1, "border": 2, "high": 4}


def by_model(request: JudgeRequest) -> str:
    if request.model == "strong":
        return '{"reasoning": "strong", "score": 3}'
    case_id = next(k for k in SCREEN_SCORES if f"id:{k}" in request.messages[-1]["content"])
    return json.dumps({"reasoning": "screen", "score": SCREEN_SCORES[case_id]})


def grade_cases(rubric: Rubric, judge: ScriptedJudge, rule: str | None) -> dict[str, CaseResult]:
    base = plan(rubric, ["strong"])
    grade = tiered(grade_pointwise, base, plan_cascade(base, "cheap", rule))

    async def all_cases() -> list[CaseResult]:
        cases = [Case(id=k, input="q", output=f"id:{k}") for k in SCREEN_SCORES]
        return [await grade(judge, c) for c in cases]

    return {r.id: r for r in asyncio.run(all_cases())}


def test_only_the_cases_the_rule_picks_go_to_the_strong_judge(pointwise_rubric):
    judge = ScriptedJudge(by_model)
    results = grade_cases(pointwise_rubric, judge, None)  # default: score in [2, 4)
    strong_asked = [r.messages[-1]["content"] for r in judge.history if r.model == "strong"]
    assert len(strong_asked) == 1
    assert "id:border" in strong_asked[0]
    assert sum(r.model == "cheap" for r in judge.history) == 3
    border = results["border"]
    assert (border.tier, border.score, border.passed) == (Tier.STRONG, 3.0, True)
    assert border.screen is not None
    assert border.screen.score == 2.0
    assert [j.model for j in border.all_judgements] == ["cheap", "strong"]
    assert border.spent_usd == pytest.approx(0.002)
    for kept in ("low", "high"):
        assert results[kept].tier is Tier.SCREEN
        assert results[kept].screen is None
        assert results[kept].score == SCREEN_SCORES[kept]


def test_a_user_rule_replaces_the_default(pointwise_rubric):
    judge = ScriptedJudge(by_model)
    results = grade_cases(pointwise_rubric, judge, "score < 2 or score > 3")
    assert {k for k, r in results.items() if r.tier is Tier.STRONG} == {"low", "high"}


def test_a_strong_failure_on_an_escalated_case_fails_it_and_keeps_the_screen(pointwise_rubric):
    judge = ScriptedJudge().enqueue(
        '{"reasoning": "screen", "score": 2}',
        JudgeCallError("HTTP 500", attempts=1),
    )
    base = plan(pointwise_rubric, ["strong"])
    grade = tiered(grade_pointwise, base, plan_cascade(base, "cheap", None))
    result = asyncio.run(grade(judge, Case(id="c", input="q", output="a")))
    assert result.status is CaseStatus.FAILED
    assert result.tier is Tier.STRONG
    assert result.screen is not None
    assert result.screen.score == 2.0
    assert "HTTP 500" in (result.error or "")


def pair_reply(request: JudgeRequest) -> str:
    """The screen picks slot A in both orders (inconsistent) for q1, the same answer for q2."""
    text = request.messages[-1]["content"]
    new_first = "<output_a>\nnew" in text
    if request.model == "strong":
        winner = "A" if new_first else "B"  # always NEW
    elif "q1" in text:
        winner = "A"
    else:
        winner = "B" if new_first else "A"  # always OLD, both orders
    return json.dumps({"reasoning": "r", "winner": winner, "confidence": 0.9})


def test_pairwise_escalates_the_position_inconsistent_pair_only():
    base = plan(PAIRWISE, ["strong"])
    grade = tiered(grade_pairwise, base, plan_cascade(base, "cheap", None))
    judge = ScriptedJudge(pair_reply)

    def pair(case_id: str) -> Pair:
        return Pair(
            old=Case(id=case_id, input=case_id, output="old"),
            new=Case(id=case_id, input=case_id, output="new"),
        )

    async def both() -> list[CaseResult]:
        return [await grade(judge, pair("q1")), await grade(judge, pair("q2"))]

    q1, q2 = asyncio.run(both())
    assert (q1.tier, q1.winner, q1.consistent) == (Tier.STRONG, "new", True)
    assert q1.screen is not None
    assert q1.screen.consistent is False
    assert (q2.tier, q2.winner) == (Tier.SCREEN, "old")
    calls = [(r.model, r.messages[-1]["content"][:4]) for r in judge.history]
    assert sum(m == "strong" for m, _ in calls) == 2  # both orders, q1 only
    assert sum(m == "cheap" for m, _ in calls) == 4

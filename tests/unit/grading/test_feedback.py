"""The self-refine loop's rules that `judge refine` and the runtime guard share (issue 31):
the feedback template, the judges' advice, the success bar, the self-preference warning."""

from __future__ import annotations

import pytest

from judgecli.errors import ConfigError, RubricError
from judgecli.grading.feedback import (
    DEFAULT_FEEDBACK_TEMPLATE,
    check_template,
    feedback_of,
    reaches_bar,
    render_feedback,
    self_preference_warning,
    success_bar,
)
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import Judgement
from judgecli.verdict import Verdict

# --- the feedback template ----------------------------------------------------------------


def test_the_template_fills_answer_and_feedback_and_keeps_literal_braces():
    text = render_feedback("was {answer}; {{note}} {feedback}", answer="A", feedback="F")
    assert text == "was A; {note} F"


def test_the_default_template_is_valid():
    check_template(DEFAULT_FEEDBACK_TEMPLATE)


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        pytest.param("{answer} {critique}", "{critique}", id="unknown-placeholder"),
        pytest.param("{answer} only", "no {feedback}", id="no-feedback"),
        pytest.param("{feedback", "--feedback-template", id="unbalanced-brace"),
        pytest.param("{} {feedback}", "{}", id="positional"),
        pytest.param("{feedback.upper}", "{feedback.upper}", id="attribute"),
    ],
)
def test_a_bad_template_is_a_config_error(template, problem):
    with pytest.raises(ConfigError, match=problem.replace("{", r"\{").replace(".", r"\.")):
        check_template(template)


# --- the judges' advice -------------------------------------------------------------------


def said(model: str, reasoning: str, feedback: str | None = None, **extra) -> Judgement:
    verdict = Verdict(reasoning=reasoning, score=2.0, feedback=feedback)
    return Judgement(model=model, verdict=verdict, **extra)


def test_one_judges_feedback_is_the_advice_as_it_is():
    assert feedback_of([said("m", "vague", "name the cause")]) == "name the cause"


def test_a_reasoning_stands_in_for_missing_feedback():
    assert feedback_of([said("m", "too vague")]) == "too vague"


def test_a_panels_advice_is_one_labelled_line_per_judge_and_a_failed_call_says_nothing():
    judgements = [
        said("openai/a", "r", "add a source"),
        Judgement(model="openai/c", error="HTTP 500"),
        said("openai/b", "too short"),
    ]
    assert feedback_of(judgements) == "- openai/a: add a source\n- openai/b: too short"


def test_repeats_of_one_judge_are_told_apart():
    judgements = [said("m", "r", "one", repeat=0), said("m", "r", "two", repeat=1)]
    assert feedback_of(judgements) == "- m [repeat 0]: one\n- m [repeat 1]: two"


# --- the success bar ----------------------------------------------------------------------


def test_the_bar_defaults_to_the_rubrics_pass_at(pointwise_rubric):
    assert success_bar(pointwise_rubric, None) == 3
    assert success_bar(pointwise_rubric, 4) == 4


def test_a_bar_outside_the_scale_is_a_config_error(pointwise_rubric):
    with pytest.raises(ConfigError, match="outside the scale"):
        success_bar(pointwise_rubric, 5)


def test_a_binary_rubric_takes_its_pass_choice_as_the_bar(binary_rubric):
    assert success_bar(binary_rubric, None) is None
    with pytest.raises(ConfigError, match="pointwise"):
        success_bar(binary_rubric, 1)


def test_a_pairwise_rubric_cannot_refine():
    rubric = parse_rubric(
        "name: p\nkind: pairwise\nrequires: [input]\nprompt: {user: '{input} {output_a} "
        "{output_b}'}\n",
        source="p.yaml",
    )
    with pytest.raises(RubricError, match="pairwise"):
        success_bar(rubric, None)


@pytest.mark.parametrize(
    ("bar", "score", "passed", "reached"),
    [
        pytest.param(3.0, 3.0, False, True, id="the-bar-itself-passes-whatever-pass_at-says"),
        pytest.param(3.0, 2.5, True, False, id="below-the-bar-fails"),
        pytest.param(3.0, None, None, False, id="no-score-fails"),
        pytest.param(None, None, True, True, id="binary-its-pass-choice"),
        pytest.param(None, None, False, False, id="binary-another-choice"),
    ],
)
def test_an_answer_reaches_the_bar_by_its_score_or_its_pass_choice(bar, score, passed, reached):
    assert reaches_bar(bar, score=score, passed=passed) is reached


def test_the_same_model_as_generator_and_judge_is_warned_about():
    assert "self-preference" in (self_preference_warning("m", ["m"]) or "")
    assert self_preference_warning("g", ["m"]) is None

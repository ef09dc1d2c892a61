from __future__ import annotations

import pytest

from judgecli.verdict import Position, VerdictError, extract_json, parse_verdict


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"reasoning": "ok", "score": 3}', 3.0, id="bare-json"),
        pytest.param('Here:\n```json\n{"reasoning": "ok", "score": 2}\n```', 2.0, id="fenced"),
        pytest.param('I think... {"reasoning": "ok", "score": 4} done', 4.0, id="after-prose"),
        pytest.param(
            'Example: {"reasoning": "x", "score": 1}\nMine: {"reasoning": "y", "score": 3}',
            3.0,
            id="last-object-wins",
        ),
        pytest.param('{"reasoning": "ok", "score": 3.0}', 3.0, id="whole-float-on-integer-scale"),
    ],
)
def test_valid_replies_parse_to_the_score(pointwise_rubric, text, expected):
    assert parse_verdict(text, pointwise_rubric).score == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("The answer deserves a 3.", "no JSON object", id="prose-with-a-digit"),
        pytest.param('{"score": 3}', '"reasoning" is missing', id="no-reasoning"),
        pytest.param('{"reasoning": "ok"}', '"score" is missing', id="no-score"),
        pytest.param('{"reasoning": "ok", "score": 5}', "outside 1..4", id="off-scale"),
        pytest.param('{"reasoning": "ok", "score": 2.5}', "whole number", id="half-point"),
        pytest.param('{"reasoning": "ok", "score": "3"}', "not a number", id="string-score"),
        pytest.param('{"reasoning": "ok", "score": true}', "not a number", id="bool-score"),
        pytest.param('{"reasoning": "ok", "score": NaN}', "not a number", id="nan"),
        pytest.param('{"reasoning": "unterminated', "no JSON object", id="truncated"),
        pytest.param("", "no JSON object", id="empty"),
    ],
)
def test_invalid_replies_are_errors_never_guesses(pointwise_rubric, text, reason):
    with pytest.raises(VerdictError) as caught:
        parse_verdict(text, pointwise_rubric)
    assert reason in caught.value.reason
    assert caught.value.raw == text


def test_criteria_scores_give_the_weighted_overall_score(criteria_rubric):
    v = parse_verdict(
        '{"reasoning": "r", "criteria": {"accuracy": 5, "clarity": 1}}', criteria_rubric
    )
    assert v.criteria == {"accuracy": 5.0, "clarity": 1.0}
    assert v.score == pytest.approx(0.75 * 5 + 0.25 * 1)


def test_a_missing_criterion_is_an_error(criteria_rubric):
    with pytest.raises(VerdictError, match="criteria.clarity"):
        parse_verdict('{"reasoning": "r", "criteria": {"accuracy": 5}}', criteria_rubric)


@pytest.mark.parametrize(("given", "canonical"), [("YES", "YES"), ("no", "NO"), (" Yes ", "YES")])
def test_binary_choice_is_matched_ignoring_case(binary_rubric, given, canonical):
    v = parse_verdict(f'{{"reasoning": "r", "choice": "{given}"}}', binary_rubric)
    assert v.choice == canonical


def test_binary_choice_outside_the_list_is_an_error(binary_rubric):
    with pytest.raises(VerdictError, match="must be one of"):
        parse_verdict('{"reasoning": "r", "choice": "MAYBE"}', binary_rubric)


def test_pairwise_winner_is_a_position(pointwise_rubric):
    rubric = pointwise_rubric.model_copy(update={"kind": "pairwise", "scale": None})
    v = parse_verdict('{"reasoning": "r", "winner": "b"}', rubric)
    assert v.winner is Position.B


def test_confidence_is_required_and_bounded_when_the_rubric_asks(pointwise_rubric):
    rubric = pointwise_rubric.model_copy(update={"confidence": True})
    assert (
        parse_verdict('{"reasoning": "r", "score": 3, "confidence": 0.8}', rubric).confidence == 0.8
    )
    with pytest.raises(VerdictError, match="confidence"):
        parse_verdict('{"reasoning": "r", "score": 3, "confidence": 1.5}', rubric)


def test_extract_json_ignores_non_object_json():
    assert extract_json("[1, 2, 3]") is None


def test_a_think_block_before_the_json_is_skipped(pointwise_rubric):
    # Issue 13: reasoning models served raw think aloud first, braces and all.
    text = '<think>Is it a 4? {"score": 4} no...</think>\n{"reasoning": "ok", "score": 2}'
    assert parse_verdict(text, pointwise_rubric).score == 2.0


def test_a_closing_think_tag_alone_ends_the_thinking(pointwise_rubric):
    text = 'The answer... {"score": 4}\n</think>\n\n{"reasoning": "ok", "score": 1}'
    assert parse_verdict(text, pointwise_rubric).score == 1.0


def test_a_reply_that_never_stops_thinking_has_no_verdict(pointwise_rubric):
    with pytest.raises(VerdictError, match="all <think> block"):
        parse_verdict('<think>{"reasoning": "x", "score": 3} hmm, let me', pointwise_rubric)


def test_json_in_a_fenced_block_after_prose_is_the_verdict(pointwise_rubric):
    text = 'Here is my assessment.\n\n```json\n{"reasoning": "ok", "score": 3}\n```\nThanks!'
    assert parse_verdict(text, pointwise_rubric).score == 3.0


def test_a_raw_newline_inside_a_string_is_read(pointwise_rubric):
    # llama.cpp's JSON grammar lets a model write a raw newline inside "reasoning": invalid
    # JSON, but an unambiguous object (issue 13, SmolLM2 under llama-cpp-python).
    text = '{"reasoning": "Line one.\nLine two.", "score": 3}'
    assert parse_verdict(text, pointwise_rubric).reasoning == "Line one.\nLine two."

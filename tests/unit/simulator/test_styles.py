"""Reply styles: the verdict computed as always, worded as real judges word theirs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from judgecli.errors import ConfigError
from judgecli.simulator.config import JudgeProfile
from judgecli.simulator.profiles import parse_profiles
from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from judgecli.simulator.styles import ReplyStyle, StyledReply, style_reply
from judgecli.simulator.verdicts import verdict_content
from tests.unit.simulator.requests import (
    JSON_SCHEMA_FORMAT,
    SCHEMA,
    message_of,
    post,
    request,
)

VERDICT = {"reasoning": "Simulated judgement.", "score": 4, "confidence": 0.85}
VERDICT_TEXT = json.dumps(VERDICT)
FENCE = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


def first_json_object(text: str) -> Any:
    """What a naive parser takes: the first '{' that starts a decodable JSON value."""
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            return decoder.raw_decode(text, start)[0]
        except ValueError:
            continue
    return None


def styled(
    style: ReplyStyle, *, constrained: bool = False, content: str = VERDICT_TEXT
) -> StyledReply:
    return style_reply(style, content, constrained=constrained, schema=SCHEMA)


def test_json_style_is_the_bare_verdict():
    assert styled(ReplyStyle.JSON) == StyledReply(VERDICT_TEXT)


def test_think_style_reasons_first_with_a_draft_that_is_not_the_verdict():
    reply = styled(ReplyStyle.THINK)

    thoughts, sep, after = reply.content.partition("</think>")
    assert reply.content.startswith("<think>\n")
    assert sep
    assert json.loads(after) == VERDICT
    assert "{ relevance" in thoughts  # braces that are not JSON
    # A client that takes the first JSON object in the reply gets a wrong verdict.
    draft = first_json_object(reply.content)
    assert isinstance(draft, dict)
    assert draft["score"] != VERDICT["score"]
    assert (reply.reasoning, reply.finish_reason) == (None, "stop")


def test_think_unopened_style_has_only_the_closing_tag():
    reply = styled(ReplyStyle.THINK_UNOPENED)

    thoughts, sep, after = reply.content.partition("</think>")
    assert sep
    assert "<think>" not in reply.content
    assert json.loads(after) == VERDICT
    assert first_json_object(thoughts)["score"] != VERDICT["score"]


def test_reasoning_content_style_keeps_the_reasoning_out_of_the_content():
    reply = styled(ReplyStyle.REASONING_CONTENT)

    assert json.loads(reply.content) == VERDICT
    assert reply.reasoning is not None
    assert "<think>" not in reply.reasoning
    assert first_json_object(reply.reasoning)["score"] != VERDICT["score"]


def test_fenced_style_puts_the_verdict_in_a_json_fence_between_sentences():
    reply = styled(ReplyStyle.FENCED)

    before, fence, after = FENCE.split(reply.content)
    assert json.loads(fence) == VERDICT
    assert before.startswith("Here is my assessment")
    assert after.strip().endswith(".")
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.content)


def test_prose_style_has_no_json_only_the_score_on_its_scale():
    reply = styled(ReplyStyle.PROSE)

    assert "{" not in reply.content
    assert "rate it 4 out of 5" in reply.content


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        pytest.param({"winner": "B", "confidence": 0.7}, "Answer B is the better", id="winner"),
        pytest.param({"winner": "tie"}, "call it a tie", id="tie"),
        pytest.param({"reasoning": "...", "choice": "YES"}, "My verdict is YES", id="choice"),
    ],
)
def test_prose_words_winners_and_choices_too(verdict, expected):
    reply = style_reply(ReplyStyle.PROSE, json.dumps(verdict), constrained=False, schema=None)

    assert expected in reply.content
    assert "{" not in reply.content


def test_truncated_style_cuts_the_verdict_and_says_length():
    reply = styled(ReplyStyle.TRUNCATED)

    assert reply.finish_reason == "length"
    assert 0 < len(reply.content) < len(VERDICT_TEXT)
    assert VERDICT_TEXT.startswith(reply.content)
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.content)


@pytest.mark.parametrize(
    "style",
    [
        pytest.param(s, id=s.value)
        for s in (ReplyStyle.THINK, ReplyStyle.THINK_UNOPENED, ReplyStyle.FENCED, ReplyStyle.PROSE)
    ],
)
def test_an_enforced_json_format_leaves_room_for_nothing_but_the_verdict(style):
    assert styled(style, constrained=True) == StyledReply(VERDICT_TEXT)


def test_constrained_reasoning_content_and_truncated_keep_their_shape():
    reasoning = styled(ReplyStyle.REASONING_CONTENT, constrained=True)
    truncated = styled(ReplyStyle.TRUNCATED, constrained=True)

    assert json.loads(reasoning.content) == VERDICT
    assert reasoning.reasoning
    assert truncated.finish_reason == "length"


@pytest.mark.parametrize(
    "style",
    [pytest.param(s, id=s.value) for s in (ReplyStyle.JSON, ReplyStyle.FENCED, ReplyStyle.PROSE)],
)
def test_text_that_is_not_a_verdict_stays_text(style):
    assert styled(style, content="The answer looks good.") == StyledReply("The answer looks good.")


def test_json_mode_without_a_schema_wraps_text_in_an_object():
    reply = styled(ReplyStyle.PROSE, constrained=True, content="The answer looks good.")

    assert json.loads(reply.content) == {"response": "The answer looks good."}


# --- Over the socket: a profile's style, picked by the request's model ---------------------

STYLED = SimulatorConfig(
    profiles={style.value: JudgeProfile(style=style) for style in ReplyStyle},
)


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer(STYLED) as running:
        yield running


def expected_verdict(body: dict[str, Any]) -> dict[str, Any]:
    verdict = json.loads(verdict_content(body, seed=0))
    assert isinstance(verdict, dict)
    return verdict


def verdict_in(style: ReplyStyle, message: dict[str, Any]) -> Any:
    """Read the verdict back out of a reply the way a careful client would."""
    content = message["content"]
    if style in (ReplyStyle.THINK, ReplyStyle.THINK_UNOPENED):
        return json.loads(content.rpartition("</think>")[2])
    if style is ReplyStyle.FENCED:
        match = FENCE.search(content)
        assert match is not None, content
        return json.loads(match.group(1))
    return json.loads(content)


@pytest.mark.parametrize(
    "style",
    [
        pytest.param(s, id=s.value)
        for s in (
            ReplyStyle.JSON,
            ReplyStyle.THINK,
            ReplyStyle.THINK_UNOPENED,
            ReplyStyle.REASONING_CONTENT,
            ReplyStyle.FENCED,
        )
    ],
)
def test_every_style_carries_the_verdict_a_json_judge_gives(server, style):
    body = request(model=style.value)

    message, finish_reason = message_of(server.url, body)

    assert verdict_in(style, message) == expected_verdict(body)
    assert finish_reason == "stop"
    assert ("reasoning_content" in message) is (style is ReplyStyle.REASONING_CONTENT)


def test_a_prose_judge_names_the_score_a_json_judge_gives(server):
    body = request(model="prose")

    message, _ = message_of(server.url, body)

    assert f"rate it {expected_verdict(body)['score']} out of 5" in message["content"]
    assert "{" not in message["content"]


def test_a_truncated_reply_is_the_start_of_the_verdict_with_finish_reason_length(server):
    body = request(model="openai/truncated")

    message, finish_reason = message_of(server.url, body)

    assert finish_reason == "length"
    assert json.dumps(expected_verdict(body)).startswith(message["content"])


def test_reasoning_counts_as_completion_tokens(server):
    _, _, plain = post(server.url, request(model="json"))
    _, _, reasoned = post(server.url, request(model="reasoning-content"))

    message = reasoned["choices"][0]["message"]
    chars = len(message["content"]) + len(message["reasoning_content"])
    assert reasoned["usage"]["completion_tokens"] == -(-chars // 4)
    assert reasoned["usage"]["completion_tokens"] > plain["usage"]["completion_tokens"]


def test_an_enforced_response_format_makes_a_prose_judge_answer_json(server):
    constrained = request(model="prose", response_format=JSON_SCHEMA_FORMAT)

    message, _ = message_of(server.url, constrained)

    assert json.loads(message["content"]) == expected_verdict(constrained)


def test_scripted_content_is_sent_exactly_whatever_the_style(server):
    server.reset()
    server.enqueue("exactly this")

    message, _ = message_of(server.url, request(model="think"))

    assert message["content"] == "exactly this"


def test_the_server_wide_style_applies_to_models_without_a_profile():
    config = SimulatorConfig(style="fenced", profiles={"sharp": JudgeProfile(style="json")})
    with SimulatorServer(config) as running:
        unprofiled, _ = message_of(running.url, request(model="sim"))
        sharp, _ = message_of(running.url, request(model="sharp"))

    assert FENCE.search(unprofiled["content"])
    assert json.loads(sharp["content"]) == expected_verdict(request(model="sharp"))


# --- Settings ------------------------------------------------------------------------------


def test_profile_flags_take_a_style():
    assert parse_profiles(["r1:style=think,noise=0.1"]) == {
        "r1": JudgeProfile(style=ReplyStyle.THINK, noise=0.1)
    }


def test_an_unknown_style_names_the_styles():
    with pytest.raises(
        ConfigError, match="style needs one of json, think, think-unopened, reasoning-content"
    ):
        parse_profiles(["r1:style=xml"])
    with pytest.raises(ValidationError):
        SimulatorConfig(style="xml")

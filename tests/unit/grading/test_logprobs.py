"""--score-mode logprob without a network: the expected score and the choice and winner
probabilities from hand-made token logprobs (known answers), finding the verdict's value
among tokens cut in different ways, what a cached reply keeps, the cache key, the client's
check that a judge gives logprobs, and the simulator's logprobs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from judgecli.errors import ConfigError
from judgecli.grading.grade import GradingPlan, ask_judge, grade_pointwise
from judgecli.grading.logprobs import LogprobError, graded_verdict, kept, mean_probabilities, weigh
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.judge.batches import batch_line
from judgecli.judge.breaker import CircuitBreaker
from judgecli.judge.formats import FormatMode
from judgecli.judge.protocol import JudgeReply, JudgeRequest
from judgecli.judge.token_logprobs import (
    NO_CHANCE,
    LogprobsWatch,
    TokenLogprob,
    TopLogprob,
    token_logprobs,
)
from judgecli.result import Judgement, Order
from judgecli.rubric import Rubric
from judgecli.settings.judges import ModelSettings
from judgecli.settings.score_mode import ScoreMode, parse_score_mode
from judgecli.simulator.config import JudgeProfile, SimulatorConfig
from judgecli.simulator.logprobs import OTHER_SHARE, content_logprobs, value_distribution
from judgecli.simulator.profiles import parse_profiles
from judgecli.verdict import Verdict
from tests.scripted import ScriptedJudge

TEN_POINT_YAML = """\
name: ten
kind: pointwise
scale: {min: 1, max: 10}
prompt:
  user: "Q: {input} A: {output}"
"""

PAIRWISE_YAML = """\
name: pair
kind: pairwise
prompt:
  user: "A: {output_a} B: {output_b}"
"""


def token(text: str, alternatives: dict[str, float] | None = None) -> TokenLogprob:
    """A generated token; `alternatives` maps tokens to probabilities (the sampled one among
    them gets its own), none means a certain token with no alternatives listed."""
    alternatives = alternatives or {}
    p = alternatives.get(text, 1.0)
    return TokenLogprob(
        token=text,
        logprob=math.log(p),
        top_logprobs=[TopLogprob(token=t, logprob=math.log(q)) for t, q in alternatives.items()],
    )


def reply_tokens(*parts: str | tuple[str, dict[str, float]]) -> tuple[str, list[TokenLogprob]]:
    """The reply the tokens spell, and the tokens."""
    tokens = [token(p) if isinstance(p, str) else token(*p) for p in parts]
    return "".join(t.token for t in tokens), tokens


# --- the expected score, known answers -----------------------------------------------------


@pytest.mark.parametrize(
    ("alternatives", "expected", "probabilities"),
    [
        pytest.param({" 3": 0.5, " 4": 0.5}, 3.5, {"3": 0.5, "4": 0.5}, id="half-3-half-4"),
        pytest.param({" 4": 1.0}, 4.0, {"4": 1.0}, id="certain"),
        pytest.param(
            {" 4": 0.4, " 3": 0.4, ' "': 0.15, " four": 0.05},
            3.5,
            {"3": 0.5, "4": 0.5},
            id="non-scale-tokens-renormalised-away",
        ),
        pytest.param(
            {" 4": 0.3, " 9": 0.3, " 2": 0.1, " 0": 0.3},
            (4 * 0.3 + 2 * 0.1) / 0.4,
            {"2": 0.25, "4": 0.75},
            id="off-scale-points-dropped",
        ),
        pytest.param(
            {" 4": 0.5, "3": 0.25, " 3": 0.25},
            3.5,
            {"3": 0.5, "4": 0.5},
            id="with-and-without-the-space-add-up",
        ),
    ],
)
def test_the_expected_score_is_the_probability_weighted_mean_over_the_scale(
    pointwise_rubric, alternatives, expected, probabilities
):
    text, tokens = reply_tokens(
        '{"', "reasoning", '":', ' "', "fine", '",', ' "', "score", '":', (" 4", alternatives), "}"
    )
    weighed = weigh(text, tokens, pointwise_rubric)
    assert weighed.expected == pytest.approx(expected)
    assert weighed.probabilities == pytest.approx(probabilities)
    assert list(weighed.probabilities) == sorted(weighed.probabilities, key=int)


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param(
            ['{"score":', " ", ("4", {"4": 0.5, "3": 0.5}), "}"], id="4-after-a-space-token"
        ),
        pytest.param(['{"score":', (" 4", {" 4": 0.5, " 3": 0.5}), "}"], id="space-4"),
        pytest.param(['{"score', ('": 4', {'": 4': 0.5, '": 3': 0.5}), "}"], id="inside-a-token"),
        pytest.param(['{"score":', (" 4}", {" 4}": 0.5, " 3}": 0.5}), ""], id="with-the-brace"),
        pytest.param(
            ['{"score": ', ("4", {"4": 0.5, "3": 0.5}), (".", {".": 1.0}), ("0", {"0": 1.0}), "}"],
            id="written-4.0",
        ),
    ],
)
def test_the_score_is_found_however_its_value_is_cut_into_tokens(pointwise_rubric, parts):
    text, tokens = reply_tokens(*[p if isinstance(p, str) else tuple(p) for p in parts])
    assert json.loads(text)["score"] == 4
    assert weigh(text, tokens, pointwise_rubric).expected == pytest.approx(3.5)


def test_a_value_spelled_over_two_tokens_is_followed_along_them():
    # "10" written as "1" then "0" (tokenisers that split digits): P(10) = P("1")·P("0" | "1"),
    # and P(1) = P("1")·P(the value ends after "1").
    rubric = parse_rubric(TEN_POINT_YAML, source="ten.yaml")
    text, tokens = reply_tokens(
        '{"score": ',
        ("1", {"1": 0.6, "9": 0.4}),
        ("0", {"0": 0.5, "}": 0.5}),
        "}",
    )
    weighed = weigh(text, tokens, rubric)
    assert weighed.probabilities == pytest.approx({"1": 0.3, "9": 0.4, "10": 0.3})
    assert weighed.expected == pytest.approx(0.3 * 1 + 0.4 * 9 + 0.3 * 10)
    assert weighed.positions == {1, 2}


def test_the_score_read_is_the_verdicts_not_one_quoted_in_its_reasoning_or_thinking(
    pointwise_rubric,
):
    text, tokens = reply_tokens(
        "<think>",
        ("2", {"2": 0.9, "1": 0.1}),
        "</think>",
        '{"reasoning": "not \\"score\\": ',
        ("1", {"1": 1.0}),
        '", "score": ',
        ("3", {"3": 0.5, "4": 0.5}),
        "}",
    )
    assert weigh(text, tokens, pointwise_rubric).expected == pytest.approx(3.5)


def test_tokens_that_spell_more_than_the_reply_are_laid_back_from_its_end(pointwise_rubric):
    # A reasoning model's thinking among the tokens, apart from the content.
    _, tokens = reply_tokens(
        "<think>", "hm", "</think>", '{"score":', (" 4", {" 4": 0.5, " 2": 0.5}), "}"
    )
    assert weigh('{"score": 4}', tokens, pointwise_rubric).expected == pytest.approx(3.0)


def test_a_binary_verdict_gives_the_probability_of_the_pass_choice(binary_rubric):
    alternatives = {"YES": 0.5, "NO": 0.2, "yes": 0.1, "Y": 0.1, "maybe": 0.1}
    text, tokens = reply_tokens('{"reasoning": "ok", "choice": "', ("YES", alternatives), '"}')
    weighed = weigh(text, tokens, binary_rubric)
    # "yes" is YES as parse_verdict reads it, "Y" can only go on to spell YES, and "maybe"
    # is no choice: renormalised away.
    assert weighed.probabilities == pytest.approx({"YES": 7 / 9, "NO": 2 / 9})
    assert weighed.expected == pytest.approx(7 / 9)


@pytest.mark.parametrize(
    ("order", "probabilities"),
    [
        pytest.param(Order.OLD_NEW, {"old": 0.7, "new": 0.2, "tie": 0.1}, id="old-shown-first"),
        pytest.param(Order.NEW_OLD, {"old": 0.2, "new": 0.7, "tie": 0.1}, id="new-shown-first"),
    ],
)
def test_pairwise_probabilities_are_mapped_back_through_the_order(order, probabilities):
    rubric = parse_rubric(PAIRWISE_YAML, source="pair.yaml")
    text, tokens = reply_tokens(
        '{"reasoning": "r", "winner": "', ("A", {"A": 0.7, "B": 0.2, "tie": 0.1}), '"}'
    )
    weighed = weigh(text, tokens, rubric, order)
    assert weighed.probabilities == pytest.approx(probabilities)
    # What NEW is expected to win, a tie counting half.
    assert weighed.expected == pytest.approx(probabilities["new"] + probabilities["tie"] / 2)


def test_a_case_averages_its_two_orders_probabilities():
    both = [{"old": 0.7, "new": 0.2, "tie": 0.1}, {"old": 0.3, "new": 0.6, "tie": 0.1}]
    assert mean_probabilities(both) == pytest.approx({"old": 0.5, "new": 0.4, "tie": 0.1})
    assert mean_probabilities([{"A": 1.0}, {"B": 1.0}]) == {"A": 0.5, "B": 0.5}


# --- no guessing ---------------------------------------------------------------------------

# The score token with no logprob of its own (a server sent null) and no scale point among
# its alternatives.
UNRATED_FOUR = TokenLogprob(
    token=" 4",
    logprob=NO_CHANCE,
    top_logprobs=[TopLogprob(token=" four", logprob=-0.5), TopLogprob(token=' "', logprob=-1.0)],
)


@pytest.mark.parametrize(
    ("text", "tokens", "reason"),
    [
        pytest.param('{"score": 4}', None, "without logprobs", id="no-logprobs"),
        pytest.param(
            '{"score": 4}',
            [token('{"score":'), UNRATED_FOUR, token("}")],
            "spells a valid value (1, 2, 3, 4)",
            id="score-token-missing-from-the-top-logprobs",
        ),
        pytest.param(
            '{"score": 4}',
            [token('{"score":')],
            "do not spell out the reply",
            id="logprobs-of-the-first-tokens-only",
        ),
        pytest.param(
            '{"score": 4}',
            reply_tokens('{"score":', " 9", "}")[1],
            "do not spell out the reply",
            id="tokens-of-another-reply",
        ),
    ],
)
def test_logprobs_that_cannot_give_the_verdict_are_an_error_not_a_guess(
    pointwise_rubric, text, tokens, reason
):
    with pytest.raises(LogprobError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        weigh(text, tokens, pointwise_rubric)


def test_a_cached_reply_keeps_alternatives_only_where_the_verdict_was_read(pointwise_rubric):
    text, tokens = reply_tokens(
        ('{"', {'{"': 0.9, "{": 0.1}), "score", '":', (" 3", {" 3": 0.5, " 4": 0.5}), "}"
    )
    weighed = weigh(text, tokens, pointwise_rubric)
    pruned = kept(tokens, weighed.positions)
    assert [len(t.top_logprobs) for t in pruned] == [0, 0, 0, 2, 0]
    assert weigh(text, pruned, pointwise_rubric) == weighed


# --- the request, the reply, the cache -----------------------------------------------------


def test_requests_without_logprobs_keep_the_keys_they_had():
    request = JudgeRequest(model="openai/m", messages=[{"role": "user", "content": "hi"}])
    # The key as it was computed before top_logprobs existed.
    body = {
        "model": "openai/m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": None,
        "response_format": None,
        "api_base": None,
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request.key(None) == hashlib.sha256(text.encode()).hexdigest()
    asking = request.model_copy(update={"top_logprobs": 20})
    assert asking.key(None) != request.key(None)
    assert asking.model_copy(update={"repeat": 1}).key(None) != asking.key(None)


def test_a_reply_with_logprobs_round_trips_through_the_cache_json():
    _, tokens = reply_tokens(('{"', {'{"': 0.5, "{": 0.5}), "x")
    reply = JudgeReply(text='{"x', logprobs=tokens)
    assert JudgeReply.model_validate_json(reply.model_dump_json()).logprobs == tokens


def as_objects(item: Any) -> Any:
    """JSON as LiteLLM's response objects hold it: attributes, not keys."""
    if isinstance(item, dict):
        return SimpleNamespace(**{k: as_objects(v) for k, v in item.items()})
    return [as_objects(v) for v in item] if isinstance(item, list) else item


@pytest.mark.parametrize("shape", ["object", "dict"])
def test_a_responses_logprobs_are_read_from_litellm_objects_and_batch_json(shape):
    entries = [
        {"token": "é", "logprob": -0.1, "bytes": [195, 169], "top_logprobs": []},
        {
            "token": "\\xe2",
            "logprob": None,
            "bytes": [226],
            "top_logprobs": [{"token": "a", "logprob": float("-inf"), "bytes": [97]}],
        },
    ]
    logprobs: Any = {"content": entries}
    if shape == "object":
        logprobs = as_objects(logprobs)
    tokens = token_logprobs(logprobs)
    assert tokens is not None
    assert tokens[0].bytes is None  # the text's own UTF-8: nothing to keep
    assert tokens[1].bytes == [226]  # half a character: the bytes are the truth
    assert tokens[1].logprob < -1000
    assert tokens[1].top_logprobs[0].logprob < -1000
    assert token_logprobs(None) is None
    assert token_logprobs({"content": None}) is None


def test_a_batch_line_asks_for_logprobs_as_the_online_call_does():
    request = JudgeRequest(model="m", messages=[{"role": "user", "content": "x"}], top_logprobs=20)
    body = batch_line("k", request, "m", FormatMode.PROMPT)["body"]
    assert (body["logprobs"], body["top_logprobs"]) == (True, 20)
    plain = batch_line(
        "k", request.model_copy(update={"top_logprobs": None}), "m", FormatMode.PROMPT
    )
    assert "logprobs" not in plain["body"]


# --- grading with logprobs -----------------------------------------------------------------


def logprob_plan(rubric: Rubric) -> GradingPlan:
    return GradingPlan(
        rubric=rubric,
        models=["m1"],
        temperature=0.0,
        max_tokens=100,
        max_retries=1,
        score_mode=ScoreMode.LOGPROB,
    )


def test_a_judgement_keeps_the_sampled_verdict_and_adds_the_expected_score(pointwise_rubric):
    text, tokens = reply_tokens('{"reasoning": "r", "score":', (" 3", {" 3": 0.6, " 4": 0.4}), "}")
    judge = ScriptedJudge().enqueue(JudgeReply(text=text, logprobs=tokens))
    judgement = asyncio.run(
        ask_judge(judge, logprob_plan(pointwise_rubric), "m1", [{"role": "user", "content": "q"}])
    )
    assert judge.history[0].top_logprobs == 20
    assert judgement.verdict is not None
    assert judgement.verdict.score == 3.0  # what the judge wrote
    assert judgement.score_expected == pytest.approx(3.4)
    assert judgement.probabilities == pytest.approx({"3": 0.6, "4": 0.4})
    assert judge.remembered == [judge.history[0]]


def test_a_reply_whose_logprobs_miss_the_score_is_a_failed_judgement(pointwise_rubric):
    text = '{"reasoning": "r", "score": 4}'
    tokens = [token('{"reasoning": "r", "score":'), UNRATED_FOUR, token("}")]
    judge = ScriptedJudge().enqueue(JudgeReply(text=text, logprobs=tokens))
    result = asyncio.run(
        grade_pointwise(judge, logprob_plan(pointwise_rubric), Case(id="c", input="q", output="a"))
    )
    assert result.status.value == "failed"
    assert "logprobs: none of the most likely tokens" in (result.error or "")
    assert result.judgements[0].raw == text
    assert len(judge.history) == 1  # not re-asked: the same reply reads the same way
    assert judge.remembered == []  # nor cached


def test_a_case_is_graded_from_the_expected_score_of_a_weighed_judgement():
    sampled = Verdict(reasoning="r", score=3.0)
    weighed = Judgement(model="m", verdict=sampled, score_expected=3.4, probabilities={"3": 0.6})
    graded = graded_verdict(weighed)
    assert graded is not None
    assert (graded.score, graded.reasoning) == (3.4, "r")
    assert graded_verdict(Judgement(model="m", verdict=sampled)) == sampled
    chosen = Verdict(reasoning="r", choice="YES")  # binary: the choice stays the sampled one
    assert graded_verdict(Judgement(model="m", verdict=chosen, score_expected=0.8)) == chosen
    assert graded_verdict(Judgement(model="m", error="x")) is None


def test_sample_mode_asks_for_no_logprobs(pointwise_rubric):
    judge = ScriptedJudge().enqueue('{"reasoning": "r", "score": 3}')
    plan = GradingPlan(
        rubric=pointwise_rubric, models=["m1"], temperature=0.0, max_tokens=1, max_retries=0
    )
    judgement = asyncio.run(ask_judge(judge, plan, "m1", [{"role": "user", "content": "q"}]))
    assert judge.history[0].top_logprobs is None
    assert (judgement.score_expected, judgement.probabilities) == (None, None)


# --- the flag ------------------------------------------------------------------------------


def test_score_mode_values(pointwise_rubric, binary_rubric, criteria_rubric):
    assert parse_score_mode(None, pointwise_rubric) is ScoreMode.SAMPLE
    assert parse_score_mode(" LogProb ", pointwise_rubric) is ScoreMode.LOGPROB
    assert parse_score_mode("logprob", binary_rubric) is ScoreMode.LOGPROB
    with pytest.raises(ConfigError, match="'weighted' is not one of: sample, logprob"):
        parse_score_mode("weighted", pointwise_rubric)
    with pytest.raises(ConfigError, match="scores criteria"):
        parse_score_mode("logprob", criteria_rubric)
    continuous = pointwise_rubric.model_copy(
        update={"scale": pointwise_rubric.scale.model_copy(update={"integer": False})}
    )
    with pytest.raises(ConfigError, match="continuous scale"):
        parse_score_mode("logprob", continuous)


# --- the client's watch: logprobs or a clear stop ------------------------------------------


def fake_litellm(params: list[str]) -> ModuleType:
    """LiteLLM's provider lookup and parameter table, as the watch reads them."""
    module = ModuleType("litellm")
    module.get_llm_provider = lambda model, api_base=None: (  # type: ignore[attr-defined]
        *reversed(model.split("/", 1)),
        None,
        None,
    )
    module.get_supported_openai_params = lambda model, custom_llm_provider: params  # type: ignore[attr-defined]
    return module


def watch(params: list[str] | None = None) -> tuple[LogprobsWatch, CircuitBreaker]:
    breaker = CircuitBreaker()
    models = {"openai/sim": ModelSettings(name="openai/sim", api_base="http://127.0.0.1:9/v1")}
    params = ["logprobs", "top_logprobs"] if params is None else params
    return LogprobsWatch(fake_litellm(params), models, breaker), breaker


def test_a_first_reply_without_logprobs_stops_the_run_naming_the_judge_and_server():
    logprobs, breaker = watch()
    with pytest.raises(ConfigError, match="openai/sim at http://127.0.0.1:9/v1 gives none") as err:
        logprobs.replied("openai/sim", None)
    assert "--score-mode sample" in (err.value.hint or "")
    with pytest.raises(ConfigError):  # every call after fails fast the same way
        breaker.check()


def test_a_later_reply_without_logprobs_fails_only_its_case():
    logprobs, breaker = watch()
    assert logprobs.replied("openai/sim", [token("x")]) is None
    assert "without the logprobs" in (logprobs.replied("openai/sim", None) or "")
    breaker.check()


def test_a_model_litellm_sends_no_logprobs_is_stopped_before_its_first_call():
    logprobs, _ = watch(params=["temperature"])
    with pytest.raises(ConfigError, match="LiteLLM does not send logprobs"):
        logprobs.before_call("openai/sim")


@pytest.mark.parametrize(
    ("text", "stops"),
    [
        pytest.param(
            "HTTP 400 UnsupportedParamsError: anthropic does not support parameters: "
            "['logprobs', 'top_logprobs'], for model=x",
            True,
            id="litellm-refuses-the-parameter",
        ),
        pytest.param("HTTP 400 BadRequestError: top_logprobs must be at most 5", True, id="server"),
        pytest.param(
            "HTTP 500 InternalServerError: response_format json_schema invalid in "
            "{'logprobs': True, ...}",
            False,
            id="a-format-refusal-quoting-the-request",
        ),
        pytest.param("HTTP 500 InternalServerError: boom", False, id="another-failure"),
    ],
)
def test_a_refused_logprobs_parameter_stops_the_run(text, stops):
    logprobs, _ = watch()
    if stops:
        with pytest.raises(ConfigError, match="the call was refused"):
            logprobs.refused("openai/sim", text)
    else:
        logprobs.refused("openai/sim", text)


# --- the simulator -------------------------------------------------------------------------

SCHEMA_BODY = {
    "model": "sim",
    "logprobs": True,
    "top_logprobs": 20,
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "schema": {
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string"},
                    "score": {"type": "integer", "enum": [1, 2, 3, 4]},
                },
            }
        },
    },
}


@pytest.mark.parametrize("written", [1, 2, 3, 4])
def test_the_simulators_logprobs_give_the_expected_score_it_spread(pointwise_rubric, written):
    content = json.dumps({"reasoning": "Simulated, quality 0.5.", "score": written})
    logprobs = content_logprobs(SCHEMA_BODY, content, seed=7, model="sim")
    tokens = token_logprobs(logprobs)
    shares = value_distribution(
        "score", str(written), [1, 2, 3, 4], seed=7, model="sim", content=content
    )
    assert math.fsum(shares.values()) == pytest.approx(1 - OTHER_SHARE)
    assert max(shares, key=shares.__getitem__) == str(written)  # the written score is likeliest
    known = math.fsum(int(k) * p for k, p in shares.items()) / (1 - OTHER_SHARE)
    weighed = weigh(content, tokens, pointwise_rubric)
    assert weighed.expected == pytest.approx(known, abs=1e-6)
    assert abs(weighed.expected - written) < 1  # within a point of the written score
    assert "".join(t.token for t in tokens or []) == content


def test_the_simulator_gives_no_logprobs_when_told_not_to():
    config = SimulatorConfig(profiles=parse_profiles(["cheap:logprobs=false"]))
    assert config.settings_for("openai/cheap").logprobs is False
    assert config.settings_for("other").logprobs is True
    assert SimulatorConfig(logprobs=False).settings_for("x").logprobs is False
    assert JudgeProfile(logprobs=False).logprobs is False
    with pytest.raises(ConfigError, match="logprobs needs true or false"):
        parse_profiles(["cheap:logprobs=maybe"])

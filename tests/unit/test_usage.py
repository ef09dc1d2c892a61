"""judgecli.usage: the one declaration of a call's tokens and cost, its sums, and the key
order of every file those fields are written to (results.jsonl, summary.json, the reply
cache), which inheriting them must not change.
"""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest
from pydantic import ValidationError

from judgecli.commands.refine import (
    Generation,
    RefineSettings,
    attempts_of,
    generation_usage,
    refine_case,
)
from judgecli.grading.grade import GradingPlan, Spend, ask_judge
from judgecli.inputs.dataset import Case
from judgecli.judge.protocol import JudgeReply
from judgecli.result import CaseResult, CaseStatus, Judgement, Tier
from judgecli.settings.judges import ModelSettings
from judgecli.summary.cascade import summarize_cascade, tier_usage
from judgecli.summary.facts import TierUsage, Usage
from judgecli.summary.head import usage_of
from judgecli.summary.refine import summarize_refine
from judgecli.summary.run import summary_json
from judgecli.usage import COST_DIGITS, Metered, Tokens, total
from tests.scripted import ScriptedJudge

TOKEN_KEYS = ["prompt_tokens", "completion_tokens", "cost_usd"]
GEN = "gen/model"


def judgement(prompt: int, completion: int, cost: float, **kw) -> Judgement:
    fields = {"model": "judge", "attempts": 1, "latency_s": 0.5} | kw
    return Judgement(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost, **fields)


def result(*judgements: Judgement, **kw) -> CaseResult:
    fields = {"id": "c1", "status": CaseStatus.OK, "score": 3.0, "rubric_hash": "h"} | kw
    return CaseResult(judgements=list(judgements), **fields)


def plan(rubric) -> GradingPlan:
    return GradingPlan(
        rubric=rubric, models=["judge"], temperature=0.0, max_tokens=100, max_retries=1
    )


# --- declared once ------------------------------------------------------------------------


@pytest.mark.parametrize("model", [JudgeReply, Spend, Judgement, Generation, Usage, TierUsage])
def test_every_spend_type_inherits_the_token_fields_and_declares_none_itself(model):
    assert issubclass(model, Tokens)
    for cls in model.__mro__:
        if cls is not Tokens and isinstance(cls, type):
            own = inspect.get_annotations(cls)
            assert not set(TOKEN_KEYS) & set(own), f"{cls.__name__} redeclares a token field"


def test_the_fields_keep_their_defaults_and_the_models_their_configs():
    assert Tokens().token_fields() == {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    assert Metered().latency_s == 0.0
    assert JudgeReply(text="x").attempts == 1
    for frozen in (JudgeReply(text="x"), judgement(1, 1, 0.1), Generation(model="g")):
        with pytest.raises(ValidationError, match="frozen"):
            frozen.cost_usd = 1.0  # type: ignore[misc]
    # summary.json's parts forbid keys nobody declared (Tokens sets no config to undo it).
    for part in (Usage, TierUsage):
        with pytest.raises(ValidationError, match="extra"):
            part(cost_usdd=1.0)
    # results.jsonl lines stay lenient: a later version's extra key is ignored.
    assert Judgement.model_validate({"model": "m", "new_key": 1}).cost_usd == 0.0


# --- the sums -----------------------------------------------------------------------------


def test_total_adds_tokens_and_cost_in_order():
    summed = total(
        [
            Tokens(prompt_tokens=3, completion_tokens=1, cost_usd=0.1),
            judgement(10, 5, 0.2),
            JudgeReply(text="x", prompt_tokens=7),
        ]
    )
    assert type(summed) is Tokens
    assert summed.token_fields() == {
        "prompt_tokens": 20,
        "completion_tokens": 6,
        "cost_usd": 0.1 + 0.2,
    }
    assert total([]) == Tokens()


def test_rounded_rounds_only_the_cost_to_cost_digits():
    assert COST_DIGITS == 10
    noisy = total([Tokens(cost_usd=0.1), Tokens(cost_usd=0.2), Tokens(prompt_tokens=4)])
    assert noisy.cost_usd != 0.3
    assert noisy.rounded() == Tokens(prompt_tokens=4, cost_usd=0.3)
    assert Tokens(cost_usd=1.23456789016).rounded().cost_usd == 1.2345678902


def test_add_tokens_accumulates_in_place_and_a_frozen_model_refuses():
    usage = Usage(calls=2)
    usage.add_tokens(judgement(10, 5, 0.25))
    usage.add_tokens(Tokens(prompt_tokens=1, completion_tokens=2, cost_usd=0.5))
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd) == (
        2,
        11,
        7,
        0.75,
    )
    with pytest.raises(ValidationError, match="frozen"):
        judgement(1, 1, 0.1).add_tokens(Tokens(prompt_tokens=1))


def test_spend_sums_every_reply_behind_a_judgement(pointwise_rubric):
    client = ScriptedJudge().enqueue(
        JudgeReply(
            text="not json",
            prompt_tokens=100,
            completion_tokens=7,
            cost_usd=0.1,
            latency_s=1.0,
            attempts=2,
        ),
        JudgeReply(
            text='{"reasoning": "r", "score": 3}',
            prompt_tokens=150,
            completion_tokens=9,
            cost_usd=0.2,
            latency_s=0.5,
        ),
    )
    got = asyncio.run(ask_judge(client, plan(pointwise_rubric), "judge", []))
    assert got.verdict is not None
    assert got.verdict.score == 3
    assert (got.prompt_tokens, got.completion_tokens, got.cost_usd) == (250, 16, 0.1 + 0.2)
    assert (got.latency_s, got.attempts, got.retries) == (1.5, 3, 2)


def test_usage_of_sums_every_judgement_screen_included_and_rounds_the_cost():
    screen = result(judgement(1, 1, 0.1, cached=True, attempts=0), tier=Tier.SCREEN)
    rows = [
        result(judgement(10, 2, 0.2, attempts=2, retries=1), tier=Tier.STRONG, screen=screen),
        result(judgement(100, 20, 1e-11), id="c2"),
    ]
    usage = usage_of(rows)
    assert (usage.calls, usage.cached, usage.retries) == (3, 1, 1)
    assert (usage.prompt_tokens, usage.completion_tokens) == (111, 23)
    # 0.1 + 0.2 + 1e-11 is 0.30000000001000005 unrounded.
    assert usage.cost_usd == 0.3
    assert usage.latency_p50_s == pytest.approx(0.375)  # per call: 0.25 and 0.5; cached left out


def test_generation_usage_sums_the_generator_calls():
    a = attempts_of(
        result(
            attempts=[
                {"attempt": 0},
                {
                    "attempt": 1,
                    "generation": {
                        "model": GEN,
                        "prompt_tokens": 5,
                        "completion_tokens": 3,
                        "cost_usd": 0.1,
                        "calls": 3,
                    },
                },
                {
                    "attempt": 2,
                    "generation": {
                        "model": GEN,
                        "prompt_tokens": 6,
                        "completion_tokens": 4,
                        "cost_usd": 0.2,
                        "calls": 0,
                        "cached": True,
                    },
                },
            ]
        )
    )
    usage = generation_usage([a])
    assert (usage.calls, usage.retries, usage.cached) == (3, 2, 1)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd) == (11, 7, 0.1 + 0.2)


def test_the_refine_summary_adds_the_generators_tokens_to_the_judges(pointwise_rubric):
    rows = [result(judgement(10, 2, 0.1), judgement(20, 4, 0.2))]
    summary = summarize_refine(
        rows,
        [[]],
        rubric=pointwise_rubric,
        judges=["judge"],
        generator=GEN,
        generation_usage=Usage(
            calls=4,
            cached=1,
            retries=2,
            prompt_tokens=7,
            completion_tokens=3,
            cost_usd=4e-11,
            latency_p50_s=9.0,
        ),
        max_attempts=3,
        success_rating=None,
    )
    usage = summary.usage
    assert (usage.calls, usage.cached, usage.retries) == (6, 1, 2)
    assert (usage.prompt_tokens, usage.completion_tokens) == (37, 9)
    assert usage.cost_usd == 0.3  # 0.3 + 4e-11, rounded
    assert usage.latency_p50_s == pytest.approx(0.5)  # the judges', not the generator's


def test_a_cascade_tier_sums_its_judgements_and_the_run_both_tiers(pointwise_rubric):
    screened = result(judgement(10, 1, 0.1), tier=Tier.SCREEN)
    screen_of_escalated = result(judgement(20, 2, 0.2), tier=Tier.SCREEN)
    escalated = result(
        judgement(300, 30, 3e-11, attempts=2), id="c2", tier=Tier.STRONG, screen=screen_of_escalated
    )
    cascade = summarize_cascade(
        [screened, escalated],
        screen="small",
        judges=["big"],
        rule="default",
        rubric=pointwise_rubric,
        prices={"big": None},
    )
    screen, strong = cascade.tiers["screen"], cascade.tiers["strong"]
    assert (screen.decided, screen.calls, screen.prompt_tokens, screen.completion_tokens) == (
        1,
        2,
        30,
        3,
    )
    assert screen.cost_usd == 0.3
    assert (strong.decided, strong.calls, strong.prompt_tokens, strong.cost_usd) == (1, 2, 300, 0.0)
    assert cascade.cost_usd == 0.3
    assert tier_usage(0, []) == TierUsage()


# --- key order: part of results.jsonl, summary.json and the reply cache -------------------


def test_a_judgement_keeps_its_results_jsonl_key_order():
    line = json.loads(result(Spend().judgement("judge", None, raw="{}")).model_dump_json())
    assert list(line["judgements"][0]) == [
        "model",
        "order",
        "raw",
        "reasoning",
        "verdict",
        "error",
        *TOKEN_KEYS,
        "latency_s",
        "attempts",
        "retries",
        "cached",
        "batched",
        "repeat",
        "score_expected",
        "probabilities",
    ]


def test_summary_usage_and_tier_keys_keep_their_order(pointwise_rubric):
    summary = summarize_refine(
        [result(judgement(1, 1, 0.1))],
        [[]],
        rubric=pointwise_rubric,
        judges=["judge"],
        generator=GEN,
        generation_usage=Usage(),
        max_attempts=1,
        success_rating=None,
    )
    assert list(summary_json(summary)["usage"]) == [
        "calls",
        "cached",
        "retries",
        "batched",
        *TOKEN_KEYS,
        "latency_p50_s",
        "latency_p95_s",
    ]
    tier = tier_usage(1, [judgement(1, 1, 0.1)]).model_dump(mode="json", exclude_none=True)
    assert list(tier) == ["decided", "calls", *TOKEN_KEYS]


def test_a_refine_generation_keeps_its_key_order_and_the_replys_spend(pointwise_rubric):
    client = ScriptedJudge().enqueue(
        JudgeReply(
            text="an answer",
            prompt_tokens=40,
            completion_tokens=12,
            cost_usd=0.02,
            latency_s=0.75,
            attempts=2,
        ),
        '{"reasoning": "r", "score": 4}',
    )
    settings = RefineSettings(
        generator=ModelSettings(name=GEN), success_rating=None, max_attempts=1
    )

    got = asyncio.run(
        refine_case(client, plan(pointwise_rubric), settings, Case(id="c", input="q"))
    )
    generation = got.attempts[0]["generation"] if got.attempts else None
    assert generation == {
        "model": GEN,
        "prompt_tokens": 40,
        "completion_tokens": 12,
        "cost_usd": 0.02,
        "latency_s": 0.75,
        "calls": 2,
        "cached": False,
    }
    assert list(generation) == ["model", *TOKEN_KEYS, "latency_s", "calls", "cached"]


def test_a_cached_reply_is_stored_text_first():
    stored = JudgeReply(text="t", prompt_tokens=1).model_dump_json()
    assert list(json.loads(stored)) == [
        "text",
        *TOKEN_KEYS,
        "latency_s",
        "attempts",
        "cached",
        "finish_reason",
        "reasoning",
        "format_mode",
        "batched",
        "logprobs",
    ]

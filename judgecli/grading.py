"""Grading one case: prompts → judge calls → verdicts → the panel's verdict.

A reply that does not validate is re-asked with the reason (a "repair" turn), up to
`max_retries` times, then recorded as a failed judgement with its raw text. A case with
any failed judgement is a failed case: dropping one judge of a panel would quietly turn
it into a different panel.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar, cast

from judgecli.config import RunConfig
from judgecli.dataset import Case
from judgecli.debias import (
    FlipPolicy,
    FlipVerdict,
    combine_panel,
    combine_winners,
    reconcile_flip,
    to_winner,
)
from judgecli.judge.client import JudgeCallError, JudgeClient, JudgeReply, JudgeRequest, Message
from judgecli.pairs import Pair
from judgecli.prompt import build_pair_messages, case_values, messages_from, response_format
from judgecli.repeats import (
    Compared,
    agreement,
    compared_for,
    majority_winner,
    repeat_verdict,
)
from judgecli.result import CaseResult, CaseStatus, Judgement, Order, RepeatVerdict
from judgecli.rubric import Rubric
from judgecli.usage import Metered
from judgecli.verdict import VerdictError, parse_verdict

T = TypeVar("T")

# How much of a bad reply is echoed back in the repair turn.
REPAIR_ECHO_CHARS = 4000


@dataclass(frozen=True)
class GradingPlan:
    """What every case of a run is graded with."""

    rubric: Rubric
    models: list[str]
    temperature: float
    max_tokens: int | None
    max_retries: int
    """Re-asks after an unparseable or off-schema reply."""
    flip: bool = True
    """Pairwise: judge both orders (the position-bias fix); else one seeded random order."""
    flip_policy: FlipPolicy = FlipPolicy.TIE
    seed: int = 0
    repeats: int = 1
    """--repeats K: every judge asks every prompt K times, as independent samples."""

    @classmethod
    def of(cls, config: RunConfig, rubric: Rubric, **pairwise: Any) -> GradingPlan:
        """The plan of a run: its judges and sampling settings (plus, for pairwise runs,
        `flip` and `flip_policy`).
        """
        return cls(
            rubric=rubric,
            models=config.model_names,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            max_retries=config.max_retries,
            seed=config.seed,
            repeats=config.repeats,
            **pairwise,
        )

    @property
    def repeat_indices(self) -> list[int | None]:
        """The repeat index of each ask of a prompt: [None] without --repeats (results keep
        no index then), else 0..K-1.
        """
        return [None] if self.repeats == 1 else list(range(self.repeats))

    @cached_property
    def response_format(self) -> dict[str, Any]:
        """The rubric's structured-output request, built once for the whole run."""
        return response_format(self.rubric)


def repair_request(request: JudgeRequest, reply: str, reason: str) -> JudgeRequest:
    """The same request plus the bad reply and what was wrong with it."""
    messages: list[Message] = [
        *request.messages,
        {"role": "assistant", "content": reply[:REPAIR_ECHO_CHARS]},
        {
            "role": "user",
            "content": f"That reply is not valid: {reason}. Reply again with only the JSON "
            "object the instructions describe.",
        },
    ]
    return request.model_copy(update={"messages": messages})


class Spend(Metered):
    """What the calls behind one judgement cost, summed over attempts (a mutable
    accumulator: tokens, cost and latency from Metered).
    """

    attempts: int = 0
    batched: int = 0

    def add(self, reply: JudgeReply) -> None:
        """Count one reply (and the transport retries behind it)."""
        self.add_tokens(reply)
        self.latency_s += reply.latency_s
        self.attempts += reply.attempts
        self.batched += reply.batched

    def judgement(
        self, model: str, order: Order | None, repeat: int | None = None, **outcome: Any
    ) -> Judgement:
        """A Judgement carrying this spend and the given raw/verdict/error."""
        return Judgement(
            model=model,
            order=order,
            repeat=repeat,
            **self.token_fields(),
            latency_s=self.latency_s,
            attempts=self.attempts,
            retries=max(self.attempts - 1, 0),
            batched=self.batched or None,
            **outcome,
        )


async def ask_judge(
    client: JudgeClient,
    plan: GradingPlan,
    model: str,
    messages: list[Message],
    *,
    order: Order | None = None,
    repeat: int | None = None,
) -> Judgement:
    """One judge's verdict on one prompt (ask `repeat` of K), re-asking after invalid
    replies.
    """
    request = JudgeRequest(
        model=model,
        messages=messages,
        temperature=plan.temperature,
        max_tokens=plan.max_tokens,
        response_format=plan.response_format if client.accepts_schema(model) else None,
        repeat=repeat or 0,
    )
    first_request = request
    spend = Spend()
    raw: str | None = None
    reasoning: str | None = None
    error = "no reply"
    for _ in range(plan.max_retries + 1):
        try:
            reply = await client.complete(request)
        except JudgeCallError as err:
            spend.attempts += err.attempts
            return spend.judgement(model, order, repeat, raw=raw, error=err.reason)
        spend.add(reply)
        raw = reply.text
        reasoning = reply.reasoning
        try:
            if reply.finish_reason == "length":
                # A reply cut off at max_tokens is not parsed, even when an early `{...}`
                # happens to be complete: the judge had not finished saying what it meant.
                raise VerdictError(cut_off(plan.max_tokens), reply.text)
            verdict = parse_verdict(reply.text, plan.rubric)
        except VerdictError as err:
            error = f"invalid verdict: {err.reason}"
            request = repair_request(request, reply.text, err.reason)
            continue
        # Keyed by the first request: a re-run asks that one, and must get this verdict
        # (even when it took a repair turn) without paying for the turns again.
        client.remember(first_request, reply)
        return spend.judgement(
            model,
            order,
            repeat,
            raw=raw,
            reasoning=reasoning,
            verdict=verdict,
            cached=reply.cached,
        )
    return spend.judgement(
        model,
        order,
        repeat,
        raw=raw,
        reasoning=reasoning,
        error=f"{error} (after {plan.max_retries + 1} replies)",
    )


def cut_off(max_tokens: int | None) -> str:
    """The reason for a reply that hit the token limit (finish_reason "length")."""
    limit = f" --max-tokens {max_tokens}" if max_tokens else " the token limit"
    return (
        f"the reply was cut off at{limit} (finish_reason: length); be brief, or raise --max-tokens"
    )


async def settle_all(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Await every call, and only then raise the first error among them: when one call
    stops the run (the budget), its siblings' replies are already paid for, so they are
    awaited and cached instead of cancelled mid-flight.
    """
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(list[T], outcomes)


async def grade_pointwise(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
    """Grade one case with a pointwise or binary rubric, by every judge of the panel (each
    asked K times with --repeats).
    """
    values = case_values(plan.rubric, case)
    messages = messages_from(plan.rubric, values)
    asks = [(model, repeat) for repeat in plan.repeat_indices for model in plan.models]
    judgements = await settle_all(
        ask_judge(client, plan, model, messages, repeat=repeat) for model, repeat in asks
    )
    common = {
        "id": case.id,
        "category": case.category,
        "rubric_hash": plan.rubric.content_hash,
        "case": values,
    }
    failed = [j for j in judgements if j.verdict is None]
    if failed:
        error = "; ".join(f"{j.model}: {j.error}" for j in failed)
        return CaseResult(status=CaseStatus.FAILED, error=error, judgements=judgements, **common)
    panels = [
        combine_panel(
            plan.rubric, [j.verdict for j in judgements if j.repeat == repeat and j.verdict]
        )
        for repeat in plan.repeat_indices
    ]
    if plan.repeats == 1:
        panel, repeated = panels[0], {}
    else:
        panel = combine_panel(plan.rubric, panels)
        verdicts = [repeat_verdict(repeat, p) for repeat, p in enumerate(panels)]
        repeated = repeat_fields(verdicts, compared_for(plan.rubric))
    return CaseResult(
        status=CaseStatus.OK,
        score=panel.score,
        criteria=panel.criteria,
        choice=panel.choice,
        passed=panel.passed,
        judgements=judgements,
        **common,
        **repeated,
    )


def repeat_fields(verdicts: list[RepeatVerdict], compared: str) -> dict[str, Any]:
    """A repeated case's `repeats`, `stable` and `spread`."""
    agreed = agreement(verdicts, compared)
    return {"repeats": verdicts, "stable": agreed.stable, "spread": agreed.spread}


def pair_text(rubric: Rubric, pair: Pair) -> dict[str, str]:
    """The pair's text as the judge saw it, with the answers named old and new."""
    return case_values(rubric, pair.old) | {
        "output_old": pair.old.output or "",
        "output_new": pair.new.output or "",
    }


def single_order(case_id: str, seed: int) -> Order:
    """Without --flip, each case gets one order drawn from (seed, id): position bias then
    averages out over cases instead of always favouring the same side, and a re-run or
    resume draws the same order.
    """
    byte = hashlib.sha256(f"{seed}:{case_id}".encode()).digest()[0]
    return Order.OLD_NEW if byte % 2 == 0 else Order.NEW_OLD


async def grade_pairwise(client: JudgeClient, plan: GradingPlan, pair: Pair) -> CaseResult:
    """Compare OLD and NEW for one id: every judge, both orders, reconciled and combined."""
    orders = [Order.OLD_NEW, Order.NEW_OLD] if plan.flip else [single_order(pair.id, plan.seed)]
    messages = {
        order: build_pair_messages(
            plan.rubric, pair.old, pair.new, old_first=order is Order.OLD_NEW
        )
        for order in orders
    }
    asks = [
        (model, order, repeat)
        for repeat in plan.repeat_indices
        for model in plan.models
        for order in orders
    ]
    judgements = await settle_all(
        ask_judge(client, plan, model, messages[order], order=order, repeat=repeat)
        for model, order, repeat in asks
    )
    common = {
        "id": pair.id,
        "category": pair.old.category or pair.new.category,
        "rubric_hash": plan.rubric.content_hash,
        "case": pair_text(plan.rubric, pair),
        "lengths": {"old": len(pair.old.output or ""), "new": len(pair.new.output or "")},
        "judgements": judgements,
    }
    failed = [j for j in judgements if j.verdict is None]
    if failed:
        error = "; ".join(f"{j.model} ({j.order}): {j.error}" for j in failed)
        return CaseResult(status=CaseStatus.FAILED, error=error, **common)
    # Each judge's verdict in each repeat, its orders reconciled.
    verdicts = {
        (model, repeat): reconcile_judge(
            plan, [j for j in judgements if j.model == model and j.repeat == repeat]
        )
        for repeat in plan.repeat_indices
        for model in plan.models
    }
    winners = [
        combine_winners(
            [v.winner for (_, r), v in verdicts.items() if r == repeat and v.winner is not None]
        )
        for repeat in plan.repeat_indices
    ]
    judge_winners = {
        model: majority_winner([v.winner for (m, _), v in verdicts.items() if m == model])
        for model in plan.models
    }
    repeated: dict[str, Any] = {}
    if plan.repeats > 1:
        said = [RepeatVerdict(repeat=r, winner=w) for r, w in enumerate(winners)]
        repeated = repeat_fields(said, Compared.WINNER)
    return CaseResult(
        status=CaseStatus.OK,
        winner=majority_winner(winners) if plan.repeats > 1 else winners[0],
        consistent=all(v.consistent for v in verdicts.values()) if plan.flip else None,
        judge_winners=judge_winners,
        **common,
        **repeated,
    )


def reconcile_judge(plan: GradingPlan, judgements: list[Judgement]) -> FlipVerdict:
    """One judge's verdict on a pair from its one or two orders."""
    winners = []
    for j in judgements:
        assert j.verdict is not None
        assert j.verdict.winner is not None
        assert j.order is not None
        winners.append(to_winner(j.verdict.winner, j.order))
    if len(winners) == 1:
        return FlipVerdict(winner=winners[0], consistent=True)
    return reconcile_flip(winners[0], winners[1], plan.flip_policy)

"""One judge's verdict on one prompt: the request (the plan's sampling settings, the
repeat index, logprobs when asked), the call, and the re-asks.

A reply that does not validate is re-asked with the reason (a "repair" turn), up to
`max_retries` times, then recorded as a failed judgement with its raw text; what the calls
cost is summed over the attempts (Spend).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar, cast

from judgecli.grading.debias import (
    FlipPolicy,
)
from judgecli.grading.logprobs import (
    TOP_LOGPROBS,
    LogprobError,
    kept,
    weigh,
)
from judgecli.grading.prompt import (
    response_format,
)
from judgecli.judge.protocol import JudgeCallError, JudgeClient, JudgeReply, JudgeRequest, Message
from judgecli.result import Judgement, Order
from judgecli.rubric import Rubric
from judgecli.settings.config import RunConfig
from judgecli.settings.items_per_call import ItemsPerCall
from judgecli.settings.score_mode import ScoreMode
from judgecli.usage import Metered
from judgecli.verdict import Verdict, VerdictError, parse_verdict

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
    score_mode: ScoreMode = ScoreMode.SAMPLE
    """--score-mode logprob: ask for token logprobs, and weigh each verdict by them."""
    items_per_call: ItemsPerCall = ItemsPerCall.ONE
    """--items: a checklist's items asked one per call, or a case's all at once."""
    elide_at: int | None = None
    """--elide-at: the most tokens a run's turns may take in a prompt (the
    middle left out and said so beyond it; grading.elision); None: shown whole."""

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
            score_mode=config.score_mode,
            items_per_call=config.items_per_call,
            elide_at=config.elide_at,
            **pairwise,
        )

    @property
    def repeat_indices(self) -> list[int | None]:
        """The repeat index of each ask of a prompt: [None] without --repeats (results keep
        no index then), else 0..K-1.
        """
        return [None] if self.repeats == 1 else list(range(self.repeats))

    @property
    def top_logprobs(self) -> int | None:
        """The alternatives to ask for at each token (None: no logprobs)."""
        return TOP_LOGPROBS if self.score_mode is ScoreMode.LOGPROB else None

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


async def settle_all(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Await every call, and only then raise the first error among them: when one call
    stops the run (the budget), its siblings' replies are already paid for, so they are
    awaited and cached instead of cancelled mid-flight.
    """
    pending = list(calls)
    if len(pending) == 1:
        # One call (one judge, no repeats): nothing beside it to wait for, and no task.
        return [await pending[0]]
    outcomes = await asyncio.gather(*pending, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(list[T], outcomes)


def judge_request(
    client: JudgeClient,
    plan: GradingPlan,
    model: str,
    messages: list[Message],
    *,
    repeat: int | None = None,
    response_format: dict[str, Any] | None = None,
) -> JudgeRequest:
    """The request ask_judge sends first for a prompt (and keys the reply cache by): the
    plan's sampling settings, and `response_format` (else the rubric's verdict schema's)
    when the judge takes one.
    """
    wanted = response_format or plan.response_format
    return JudgeRequest(
        model=model,
        messages=messages,
        temperature=plan.temperature,
        max_tokens=plan.max_tokens,
        response_format=wanted if client.accepts_schema(model) else None,
        repeat=repeat or 0,
        top_logprobs=plan.top_logprobs,
    )


async def ask_judge(
    client: JudgeClient,
    plan: GradingPlan,
    model: str,
    messages: list[Message],
    *,
    order: Order | None = None,
    repeat: int | None = None,
    response_format: dict[str, Any] | None = None,
    read: Callable[[str], Verdict] | None = None,
) -> Judgement:
    """One judge's verdict on one prompt (ask `repeat` of K), re-asking after invalid
    replies; with --score-mode logprob, weighed by the reply's token logprobs too. A prompt
    whose verdict is not the rubric's own (a checklist's items asked at once) brings its
    `response_format` and how its reply is `read`.
    """
    request = judge_request(
        client, plan, model, messages, repeat=repeat, response_format=response_format
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
            verdict = read(reply.text) if read else parse_verdict(reply.text, plan.rubric)
        except VerdictError as err:
            error = f"invalid verdict: {err.reason}"
            request = repair_request(request, reply.text, err.reason)
            continue
        weighed: dict[str, Any] = {}
        if plan.top_logprobs:
            try:
                found = weigh(reply.text, reply.logprobs, plan.rubric, order)
            except LogprobError as err:
                # No re-ask: the same reply would be read the same way.
                return spend.judgement(
                    model,
                    order,
                    repeat,
                    raw=raw,
                    reasoning=reasoning,
                    error=f"logprobs: {err.reason}",
                )
            weighed = {"score_expected": found.expected, "probabilities": found.probabilities}
            assert reply.logprobs is not None  # weigh needs them
            reply = reply.model_copy(update={"logprobs": kept(reply.logprobs, found.positions)})
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
            **weighed,
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

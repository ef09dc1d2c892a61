"""What model calls spend, declared once: tokens each way, their cost, and the time taken.

A call's spend is recorded in many places: a judge's reply (`judge.protocol.JudgeReply`), the
running total behind one judgement (`grading.Spend`), a results.jsonl judgement
(`result.Judgement`), a refine generation (`refine.Generation`), and summary.json's usage
and cascade tiers (`summary.facts.Usage`, `TierUsage`). Each inherits its token and cost
fields from `Tokens` and sums them with `Tokens.add_tokens` or `total`, so a field added
here is declared, summed and written everywhere at once instead of in some places only.

The order of these fields is part of the files they are written to. Pydantic lays fields
out base-first along the reversed MRO, so a model whose own keys come before the tokens
declares them in a small base listed after the one from here: `class Usage(Tokens, Calls)`
writes Calls' fields, then Tokens', then Usage's own.

The calls of a case that did not finish are counted apart (`CallSpend`, `CALLS_SENT`): no
result line holds them, yet they were sent and billed, and summary.json's usage counts them.

It imports nothing from judgecli, so every layer (judge/, result, grading, refine,
summary/) can build on it without an import circle.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

COST_DIGITS = 10
"""Places a summed cost is rounded to in summary.json: adding float prices leaves noise in
the last digits (0.1 + 0.2 = 0.30000000000000004) that is not money anyone spent."""


class Tokens(BaseModel):
    """The tokens some calls used and what they cost.

    The model config is left empty on purpose: a subclass gets its config (frozen, extra
    keys forbidden) from its own declaration or its other base, and this one overrides
    neither.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def token_fields(self) -> dict[str, Any]:
        """These fields alone, by name: to build or update another model that has them."""
        return {name: getattr(self, name) for name in Tokens.model_fields}

    def add_tokens(self, other: Tokens) -> None:
        """Add another's tokens and cost to these, in place: for the accumulators (a frozen
        model refuses it).
        """
        for name in Tokens.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def rounded(self) -> Tokens:
        """These tokens, with the cost rounded to COST_DIGITS places as summary.json has it."""
        return Tokens(**self.token_fields() | {"cost_usd": round(self.cost_usd, COST_DIGITS)})


class Metered(Tokens):
    """Tokens and cost of some calls, and the wall time they took: what a reply, the spend
    behind a judgement and a generation record.
    """

    latency_s: float = 0.0


def total(items: Iterable[Tokens]) -> Tokens:
    """The sum of some calls' tokens and cost, the costs added one by one in the order
    given: float addition is not associative, and the same order gives the same digits as
    the running totals summary.json has always been built from.
    """
    summed = Tokens()
    for item in items:
        summed.add_tokens(item)
    return summed


class CallCount(BaseModel):
    """How many calls were sent: the key before the tokens, in a base of its own so that it
    stays first (see the module's docstring).
    """

    calls: int = 0


class CallSpend(Tokens, CallCount):
    """Calls sent and what their replies cost: the calls of cases that did not finish in
    the session that sent them (stopped by a signal, the budget, a lost endpoint or worker).
    Their verdicts are in no result line, yet the provider bills them.
    """

    def add_calls(self, sent: Iterable[Tokens]) -> None:
        """Count calls, one per entry of `sent` (each what its reply cost: 0 while none came)."""
        for call in sent:
            self.calls += 1
            self.add_tokens(call)

    def add(self, other: CallSpend) -> None:
        """Add another spend's calls, tokens and cost to these, in place."""
        self.calls += other.calls
        self.add_tokens(other)


CALLS_SENT: ContextVar[list[Tokens] | None] = ContextVar("calls_sent", default=None)
"""The calls the case being graded in this context has sent, one entry each (what its reply
cost, 0 until it comes): set by the runner for each case, appended to by the judge client.
A plain list, as every case gets one (a cached re-run makes thousands, and sends nothing)."""

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

It imports nothing from judgecli, so every layer (judge/, result, grading, refine,
summary/) can build on it without an import circle.
"""

from __future__ import annotations

from collections.abc import Iterable
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

"""Results: one line of `results.jsonl` per case, and one judgement per judge call.

The keys are a contract (DESIGN.md "Stable keys"): users' CI scripts read them with `jq`.
Keys may be added; none may be renamed.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from judgecli.verdict import Verdict


class CaseStatus(StrEnum):
    """Whether a case got a verdict."""

    OK = "ok"
    FAILED = "failed"


class Judgement(BaseModel):
    """One judge's answer for one prompt (one order of a pairwise case)."""

    model_config = ConfigDict(frozen=True)

    model: str
    order: str | None = None
    """Pairwise: which answer was shown first ("old-new" or "new-old"); None for pointwise."""
    raw: str | None = None
    """The reply text exactly as received (the last attempt's)."""
    verdict: Verdict | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    attempts: int = 0
    """HTTP calls made, including transport retries and re-asks after unparseable replies."""
    retries: int = 0
    """Of those, how many were retries."""
    cached: bool = False


class CaseResult(BaseModel):
    """The aggregated verdict for one case, with every judgement behind it."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: CaseStatus
    error: str | None = None
    category: str | None = None
    score: float | None = None
    criteria: dict[str, float] = Field(default_factory=dict)
    choice: str | None = None
    passed: bool | None = None
    """Whether the case met the rubric's bar (pass_at or pass_choice); None when unknown."""
    judgements: list[Judgement] = Field(default_factory=list)
    rubric_hash: str

"""Grading one case: prompts → judge calls → verdicts → the panel's verdict.

A reply that does not validate is re-asked with the reason (a "repair" turn), up to
`max_retries` times, then recorded as a failed judgement with its raw text. A case with
any failed judgement is a failed case: dropping one judge of a panel would quietly turn
it into a different panel.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from judgecli.dataset import Case
from judgecli.debias import combine_panel
from judgecli.judge import JudgeCallError, JudgeClient, JudgeReply, JudgeRequest, Message
from judgecli.prompt import build_messages, response_format
from judgecli.result import CaseResult, CaseStatus, Judgement
from judgecli.rubric import Rubric
from judgecli.verdict import VerdictError, parse_verdict

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


@dataclass
class Spend:
    """What the calls behind one judgement cost, summed over attempts."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    attempts: int = 0

    def add(self, reply: JudgeReply) -> None:
        """Count one reply (and the transport retries behind it)."""
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cost_usd += reply.cost_usd
        self.latency_s += reply.latency_s
        self.attempts += reply.attempts

    def judgement(self, model: str, order: str | None, **outcome: Any) -> Judgement:
        """A Judgement carrying this spend and the given raw/verdict/error."""
        return Judgement(
            model=model,
            order=order,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=self.cost_usd,
            latency_s=self.latency_s,
            attempts=self.attempts,
            retries=max(self.attempts - 1, 0),
            **outcome,
        )


async def ask_judge(
    client: JudgeClient,
    plan: GradingPlan,
    model: str,
    messages: list[Message],
    *,
    order: str | None = None,
) -> Judgement:
    """One judge's verdict on one prompt, re-asking after invalid replies."""
    request = JudgeRequest(
        model=model,
        messages=messages,
        temperature=plan.temperature,
        max_tokens=plan.max_tokens,
        response_format=plan.response_format if client.accepts_schema(model) else None,
    )
    spend = Spend()
    raw: str | None = None
    error = "no reply"
    for _ in range(plan.max_retries + 1):
        try:
            reply = await client.complete(request)
        except JudgeCallError as err:
            spend.attempts += err.attempts
            return spend.judgement(model, order, raw=raw, error=err.reason)
        spend.add(reply)
        raw = reply.text
        try:
            verdict = parse_verdict(reply.text, plan.rubric)
        except VerdictError as err:
            error = f"invalid verdict: {err.reason}"
            request = repair_request(request, reply.text, err.reason)
            continue
        return spend.judgement(model, order, raw=raw, verdict=verdict)
    return spend.judgement(
        model, order, raw=raw, error=f"{error} (after {plan.max_retries + 1} replies)"
    )


async def grade_pointwise(client: JudgeClient, plan: GradingPlan, case: Case) -> CaseResult:
    """Grade one case with a pointwise or binary rubric, by every judge of the panel."""
    messages = build_messages(plan.rubric, case)
    judgements = list(
        await asyncio.gather(*(ask_judge(client, plan, model, messages) for model in plan.models))
    )
    common = {"id": case.id, "category": case.category, "rubric_hash": plan.rubric.content_hash}
    failed = [j for j in judgements if j.verdict is None]
    if failed:
        error = "; ".join(f"{j.model}: {j.error}" for j in failed)
        return CaseResult(status=CaseStatus.FAILED, error=error, judgements=judgements, **common)
    panel = combine_panel(plan.rubric, [j.verdict for j in judgements if j.verdict is not None])
    return CaseResult(
        status=CaseStatus.OK,
        score=panel.score,
        criteria=panel.criteria,
        choice=panel.choice,
        passed=panel.passed,
        judgements=judgements,
        **common,
    )

"""The judge's verdicts for align: cases graded with a rubric through the judge client
(the same grading, limits and retries as `judge score`), and the optimizer asked through
the same client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from judgecli.commands.align.outcomes import Verdict
from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.dataset import Case
from judgecli.judge.protocol import JudgeClient, JudgeRequest
from judgecli.result import CaseStatus
from judgecli.rubric import Rubric
from judgecli.settings.config import RunConfig

OPTIMIZER_MAX_TOKENS = 2000


class JudgeRater:
    """Grades the cases it holds, by id, with any rubric."""

    def __init__(self, client: JudgeClient, config: RunConfig, cases: dict[str, Case]) -> None:
        """Grade ``cases`` through ``client`` with ``config``'s judges and sampling."""
        self.client = client
        self.config = config
        self.cases = cases

    async def __call__(self, rubric: Rubric, ids: Sequence[str]) -> dict[str, Verdict]:
        """Each id's verdict (a failed case's holds its error)."""
        plan = GradingPlan.of(self.config, rubric)
        results = await asyncio.gather(
            *(grade_pointwise(self.client, plan, self.cases[i]) for i in ids)
        )
        verdicts = {}
        for result in results:
            reason = next((j.reasoning for j in result.judgements if j.reasoning), None)
            if result.status is CaseStatus.OK:
                verdicts[result.id] = Verdict(result.choice, result.score, reason)
            else:
                verdicts[result.id] = Verdict(error=result.error or "the case failed")
        return verdicts


class ClientOptimizer:
    """Asks the optimizer model through the judge client."""

    def __init__(self, client: JudgeClient, model: str) -> None:
        """Ask ``model`` through ``client``."""
        self.client = client
        self.model = model

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        """The reply text."""
        request = JudgeRequest(
            model=self.model, messages=messages, temperature=0.0, max_tokens=OPTIMIZER_MAX_TOKENS
        )
        reply = await self.client.complete(request)
        if reply.text.strip():
            self.client.remember(request, reply)  # a re-run proposes the same revision
        return reply.text

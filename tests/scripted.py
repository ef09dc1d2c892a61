"""A JudgeClient that answers from a script: the seam the runner tests fake (llm's MockModel)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from judgecli.judge.protocol import JudgeCallError, JudgeReply, JudgeRequest


class ScriptedJudge:
    """Replies in order from `enqueue`d texts or errors, or from a callable; records history."""

    def __init__(
        self, respond: Callable[[JudgeRequest], str] | None = None, *, schema: bool = True
    ) -> None:
        self._queue: deque[str | JudgeReply | JudgeCallError] = deque()
        self._respond = respond
        self._schema = schema
        self.history: list[JudgeRequest] = []
        self.remembered: list[JudgeRequest] = []

    def enqueue(self, *replies: str | JudgeReply | JudgeCallError) -> ScriptedJudge:
        self._queue.extend(replies)
        return self

    def accepts_schema(self, model: str) -> bool:
        return self._schema

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        self.remembered.append(request)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.history.append(request)
        if self._queue:
            reply = self._queue.popleft()
        elif self._respond is not None:
            reply = self._respond(request)
        else:
            raise AssertionError("ScriptedJudge ran out of replies")
        if isinstance(reply, JudgeCallError):
            raise reply
        if isinstance(reply, JudgeReply):
            return reply
        return JudgeReply(
            text=reply, prompt_tokens=10, completion_tokens=5, cost_usd=0.001, latency_s=0.01
        )

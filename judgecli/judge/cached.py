"""CachedJudge: a JudgeClient that answers repeated requests from the reply cache.

The real client (and with it LiteLLM, ~3 s to import) is only built on the first cache
miss, so re-running a finished job costs neither money nor start-up time.
"""

from __future__ import annotations

from collections.abc import Callable

from judgecli.judge.protocol import JudgeClient, JudgeReply, JudgeRequest
from judgecli.settings.judges import ModelSettings
from judgecli.store.cache import ReplyCache


class CachedJudge:
    """Cache in front of a judge client: hits are replies with cached=True and no cost."""

    def __init__(
        self,
        make_client: Callable[[], JudgeClient],
        cache: ReplyCache,
        models: list[ModelSettings],
    ) -> None:
        self._make_client = make_client
        self._client: JudgeClient | None = None
        self._cache = cache
        self._models = {m.name: m for m in models}

    @property
    def client(self) -> JudgeClient:
        """The real client, built on first use."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def accepts_schema(self, model: str) -> bool:
        """Answered without the real client when the settings decide it."""
        decided = self._models[model].schema_decision()
        return decided if decided is not None else self.client.accepts_schema(model)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """A cached reply, else the real client's."""
        stored = self.recall(request)
        return stored if stored is not None else await self.client.complete(request)

    def recall(self, request: JudgeRequest) -> JudgeReply | None:
        """The cached reply to this request, else None (nothing is sent)."""
        stored = self._cache.get(self.key(request))
        if stored is None:
            return None
        reply = JudgeReply.model_validate_json(stored)
        # Nothing was sent: this run spent no tokens, money or time on it.
        return JudgeReply(text=reply.text, attempts=0, cached=True, logprobs=reply.logprobs)

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """Keep a reply that parsed into a valid verdict."""
        if not reply.cached:
            self._cache.put(self.key(request), request.model, reply.model_dump_json())

    def key(self, request: JudgeRequest) -> str:
        """The request's cache key (its endpoint included: two servers may differ)."""
        return request.key(self._models[request.model].api_base)

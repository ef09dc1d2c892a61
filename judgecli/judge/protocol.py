"""What a judge call is, apart from how it is made: the request (everything that decides
the reply, and the cache key made from it), the reply (with what it cost), the error of a
call that failed for good, and the interface a judge client offers (`JudgeClient`: the
LiteLLM client, the reply cache in front of it, provider batches, scripted test judges).

Kept apart from `client` (the LiteLLM client, its retries, pacing and breaker) so that
what only passes requests and replies around imports none of that.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from judgecli.judge.token_logprobs import TokenLogprob
from judgecli.usage import Metered

if TYPE_CHECKING:
    from _hashlib import HASH

Message = dict[str, Any]
"""A chat message: its role, and its content (a string, or text and image parts)."""


class JudgeRequest(BaseModel):
    """Everything that determines a judge's reply (and nothing secret)."""

    model_config = ConfigDict(frozen=True)

    model: str
    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None
    """The verdict schema in json_schema form; the client sends it in the model's current
    FormatMode. The cache key uses this logical form, so a step down does not re-pay."""

    repeat: int = 0
    """--repeats K: which of K independent asks of the same prompt this is. Never sent: it
    keys the cache, so that the K asks are K replies rather than one reply K times (and a
    re-run replays the same K). The first ask keys as a request without repeats does."""
    top_logprobs: int | None = None
    """--score-mode logprob: ask for token logprobs with this many alternatives at each
    token. It keys the cache only when set (a reply cached without logprobs cannot serve),
    so every other request keys as before it existed."""

    def key(self, api_base: str | None) -> str:
        """Canonical hash of the request: the identity of a call for caches and dedupe.

        The hash of the fields as sorted-key JSON (what model_dump(mode="json") would give,
        sorted), computed in two pieces: the head up to the first message is the same for
        every case of a run (the endpoint, max_tokens, the system message with the rubric
        and the verdict schema: ~2/3 of the text), so its hash state is kept and copied, and
        the verdict schema is encoded once. The text hashed is exactly that of one
        json.dumps of the whole body (tests pin both).
        """
        if not self.messages:
            return hashlib.sha256(canonical_json(self.body(api_base)).encode()).hexdigest()
        digest = head_digest(api_base, self.max_tokens, self.messages[0]).copy()
        tail = [f",{canonical_json(m)}" for m in self.messages[1:]]
        tail.append(f'],"model":{canonical_json(self.model)}')
        if self.repeat:
            tail.append(f',"repeat":{canonical_json(self.repeat)}')
        tail.append(f',"response_format":{encoded_format(self.response_format)}')
        tail.append(f',"temperature":{canonical_json(self.temperature)}')
        if self.top_logprobs:
            tail.append(f',"top_logprobs":{canonical_json(self.top_logprobs)}')
        tail.append("}")
        digest.update("".join(tail).encode())
        return digest.hexdigest()

    def body(self, api_base: str | None) -> dict[str, Any]:
        """What the key hashes: the fields as they are (every one is JSON already; no deep
        copy of the messages and the schema as model_dump would make) and the endpoint.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": self.response_format,
            "api_base": api_base,
        }
        if self.repeat:
            body["repeat"] = self.repeat
        if self.top_logprobs:
            body["top_logprobs"] = self.top_logprobs
        return body


canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
"""The one JSON spelling keys are made of: sorted keys, no spaces, UTF-8 as it is."""

# Kept hash states of key heads, at most this many (a run has one per judge and rubric).
HEADS_KEPT = 64
_heads: dict[tuple[str | None, int | None, tuple[tuple[str, str], ...]], HASH] = {}


def head_digest(api_base: str | None, max_tokens: int | None, first: Message) -> HASH:
    """The sha256 state after a request body's JSON up to and including its first message
    (the keys sort as api_base, max_tokens, messages, model, repeat, response_format,
    temperature, top_logprobs).
    """
    slot = (api_base, max_tokens, tuple(first.items()))
    digest = _heads.get(slot)
    if digest is None:
        if len(_heads) >= HEADS_KEPT:
            _heads.clear()
        head = (
            f'{{"api_base":{canonical_json(api_base)},"max_tokens":{canonical_json(max_tokens)}'
            f',"messages":[{canonical_json(first)}'
        )
        digest = _heads[slot] = hashlib.sha256(head.encode())
    return digest


# The last response_format encoded, and its JSON: every request of a run asks for the same
# schema, and a dict compares equal to itself at once (pydantic copies the outer dict of each
# request, not the schema inside it).
_last_format: list[tuple[dict[str, Any] | None, str]] = [(None, "null")]


def encoded_format(response_format: dict[str, Any] | None) -> str:
    """The response_format as canonical JSON, encoded once for a run of equal ones."""
    last, text = _last_format[0]
    if response_format != last:
        text = canonical_json(response_format)
        _last_format[0] = (response_format, text)
    return text


class ReplyText(BaseModel):
    """A reply's first key, in a base of its own so that it stays first (the reply cache
    stores replies as JSON in field order, and pydantic lays out base fields first).
    """

    text: str


class JudgeReply(Metered, ReplyText):
    """A successful reply, with what it cost (tokens, cost and latency from Metered)."""

    model_config = ConfigDict(frozen=True)

    attempts: int = 1
    cached: bool = False
    """Served from the reply cache: nothing was sent or paid."""
    finish_reason: str | None = None
    """Why generation stopped ("stop", "length" when max_tokens cut it off, ...)."""
    reasoning: str | None = None
    """A reasoning model's thinking, when the server returns it apart (reasoning_content)."""
    format_mode: str | None = None
    """The response format the reply was asked in (formats.FormatMode)."""
    batched: bool = False
    """Answered by a provider batch (--batch), at batch prices."""
    logprobs: list[TokenLogprob] | None = None
    """The reply's tokens with their logprobs, when the request asked for them (a cached
    reply keeps alternatives only where its verdict was read: logprobs.kept)."""


class JudgeCallError(Exception):
    """A call that failed for good (non-retryable, or retries exhausted)."""

    def __init__(self, reason: str, *, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class JudgeClient(Protocol):
    """What the runner needs from a judge; tests script it without a network."""

    def accepts_schema(self, model: str) -> bool:
        """Whether to ask this model for the verdict schema as a response_format."""
        ...

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One reply, or JudgeCallError."""
        ...

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """The reply parsed into a valid verdict: a cache may keep it."""
        ...


@runtime_checkable
class Recalling(Protocol):
    """A judge client that can say, without asking, what it already holds for a request
    (the reply cache). A checklist whose items are asked at once recalls each item's
    verdict first, so that only the items it does not hold are asked (grading.checklist).
    """

    def recall(self, request: JudgeRequest) -> JudgeReply | None:
        """The reply kept for this request (cached=True, nothing paid), else None."""
        ...

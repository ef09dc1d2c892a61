"""Token logprobs on the wire (--score-mode logprob): the form a reply keeps them in, read
from a response, and the watch that a judge gives the logprobs it is asked for.

A server that cannot give logprobs must never pass for one that can (DeepEval's
long-standing bug: a silent fallback to the sampled score): LiteLLM's parameter table is
read before a model's first logprob call, and the first reply is checked. Either way the
run stops at once (exit 2, the model and its server named, the fix in the hint), as the
circuit breaker stops a run whose endpoint cannot serve it. A reply without logprobs from
a judge that gave them before fails only its case.
"""

from __future__ import annotations

import math
import re
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.errors import ConfigError
from judgecli.judge.breaker import CircuitBreaker
from judgecli.judge.failures import FORMAT_WORDS
from judgecli.settings.judges import ModelSettings

# A logprob a server leaves out or sends as -inf: no probability, and storable as JSON.
NO_CHANCE = -1e4
# A refusal of the parameter itself (LiteLLM's UnsupportedParamsError, a server's 400).
REFUSES_LOGPROBS = re.compile(r"logprobs", re.IGNORECASE)
UNSUPPORTED = "UnsupportedParamsError"
SERVERS_WITH_LOGPROBS = (
    "OpenAI's non-reasoning models (gpt-4o, gpt-4.1), vLLM, llama.cpp's server, Together, "
    "Fireworks, DeepSeek; not Anthropic, not reasoning models"
)


class TopLogprob(BaseModel):
    """One alternative at a token position, as the server ranked it."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float


class TokenLogprob(BaseModel):
    """One generated token with its log-probability and the top alternatives there
    (OpenAI's `choices[0].logprobs.content[i]`).
    """

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float
    bytes: list[int] | None = None
    """The token's UTF-8 bytes, kept only when the text is not them (a token that ends
    inside a multi-byte character)."""
    top_logprobs: list[TopLogprob] = Field(default_factory=list)


def field(item: Any, name: str) -> Any:
    """A field of a response part: an attribute of LiteLLM's objects, a key of a batch
    line's JSON.
    """
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def logprob(value: Any) -> float:
    """A logprob as sent, NO_CHANCE for none or -inf."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return NO_CHANCE
    return number if math.isfinite(number) else NO_CHANCE


def token_bytes(token: str, raw: Any) -> list[int] | None:
    """A token's bytes when they are not its text's UTF-8 (else None: nothing to keep)."""
    if not isinstance(raw, list) or not all(isinstance(b, int) for b in raw):
        return None
    return None if bytes(raw) == token.encode() else list(raw)


def token_logprobs(logprobs: Any) -> list[TokenLogprob] | None:
    """A choice's `logprobs` as tokens; None when the reply has none."""
    content = field(logprobs, "content") if logprobs is not None else None
    if not content:
        return None
    tokens = []
    for item in content:
        text = str(field(item, "token") or "")
        tops = [
            TopLogprob(token=str(field(top, "token") or ""), logprob=logprob(field(top, "logprob")))
            for top in field(item, "top_logprobs") or []
        ]
        tokens.append(
            TokenLogprob(
                token=text,
                logprob=logprob(field(item, "logprob")),
                bytes=token_bytes(text, field(item, "bytes")),
                top_logprobs=tops,
            )
        )
    return tokens


def logprobs_supported(litellm: ModuleType, settings: ModelSettings) -> bool | None:
    """Whether LiteLLM sends logprobs and top_logprobs to this model (None: it cannot tell).
    For an OpenAI-compatible server (`openai/NAME` with --api-base) it answers for OpenAI.
    """
    try:
        provider = litellm.get_llm_provider(settings.name, api_base=settings.api_base)[1]
        model = settings.name.split("/", 1)[-1]
        params = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:  # noqa: BLE001 - LiteLLM raises several types for "not mapped"
        return None
    if not params:
        return None
    return "logprobs" in params and "top_logprobs" in params


def where(settings: ModelSettings) -> str:
    """The judge's server, for messages."""
    if settings.api_base:
        return f"at {settings.api_base}"
    provider = settings.name.split("/", 1)[0] if "/" in settings.name else "its provider"
    return f"at the {provider} API"


class LogprobsWatch:
    """Checks, for a run's client, that each judge gives the logprobs asked for."""

    def __init__(
        self, litellm: ModuleType, models: dict[str, ModelSettings], breaker: CircuitBreaker
    ) -> None:
        self._litellm = litellm
        self._models = models
        self._breaker = breaker
        self._checked: set[str] = set()
        self._given: set[str] = set()
        """Models that have sent logprobs: a reply without them fails only its case."""

    def before_call(self, model: str) -> None:
        """Before a model's first logprob call: stop the run if LiteLLM says it has none."""
        if model in self._checked:
            return
        self._checked.add(model)
        settings = self._models[model]
        if logprobs_supported(self._litellm, settings) is False:
            self._stop(settings, "LiteLLM does not send logprobs to this model")

    def replied(self, model: str, logprobs: list[TokenLogprob] | None) -> str | None:
        """After a reply: None when it has logprobs; the reason its case fails when it has
        none but the judge gave them before; the run stops when the judge never did.
        """
        if logprobs:
            self._given.add(model)
            return None
        if model in self._given:
            return "logprobs: the server sent this reply without the logprobs asked for"
        self._stop(self._models[model], "its reply came without them")
        return None  # not reached: _stop raises

    def refused(self, model: str, text: str) -> None:
        """A call failed (`text`, as failures.describe says it): stop the run when the
        server or LiteLLM refused the logprobs parameter before the judge ever gave logprobs.
        A refusal of the response format that quotes the request is the format ladder's.
        """
        if model in self._given or not REFUSES_LOGPROBS.search(text):
            return
        if FORMAT_WORDS.search(text) and UNSUPPORTED not in text:
            return
        self._stop(self._models[model], f"the call was refused: {text}")

    def _stop(self, settings: ModelSettings, why: str) -> None:
        self._breaker.stop(
            ConfigError(
                f"--score-mode logprob needs token logprobs, and the judge {settings.name} "
                f"{where(settings)} gives none ({why})",
                hint="use --score-mode sample with this judge, or a judge whose server "
                f"returns logprobs with top_logprobs: {SERVERS_WITH_LOGPROBS}",
            )
        )

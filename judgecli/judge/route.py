"""Which of LiteLLM's providers carries a judge's calls.

A judge written `openai/NAME` behind `--api-base` is an OpenAI-compatible server (llama.cpp,
vLLM, Ollama, a proxy). LiteLLM can reach it two ways that send the same request body:
its `openai` provider, through the openai SDK, and its `hosted_vllm` provider, through
LiteLLM's own HTTP handler. The SDK's request transform and reply parsing cost ~1.4 ms of
CPU a call, a third of the call's whole cost (docs/ecosystem.md, "The route to an
OpenAI-compatible server"), so such a judge goes out as `hosted_vllm/NAME` — unless LiteLLM's
price map knows NAME: LiteLLM charges a reply at the map entry of the name it was sent
under, and `hosted_vllm/NAME` has none; and the openai route gives a name it knows the
parameters it takes (an o-series or gpt-5 model gets `max_completion_tokens`, not
`max_tokens`), with or without a --price. Everything the user sees (run.json, results, the
cache key) keeps the name the user gave.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from judgecli.judge.provider import file_at_price_zero, listed_price
from judgecli.settings.judges import ModelSettings

OPENAI = "openai/"
DIRECT = "hosted_vllm/"
"""LiteLLM's provider for an OpenAI-compatible server, without the openai SDK."""


@dataclass(frozen=True)
class Route:
    """How LiteLLM is called for one judge."""

    model: str
    """The name LiteLLM is given (the user's, or DIRECT + the server's model name)."""
    api_key: str | None
    """The key sent; None leaves it to LiteLLM (the provider's variable)."""

    @property
    def direct(self) -> bool:
        """Whether the call bypasses the openai SDK."""
        return self.model.startswith(DIRECT)


def route(litellm: ModuleType, settings: ModelSettings) -> Route:
    """The route of one judge's calls (see the module's docstring)."""
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    name = settings.name
    if not settings.api_base or not name.startswith(OPENAI):
        return Route(name, key)
    # Asked of LiteLLM's map whatever --price says: a name it knows may take parameters of
    # its own on the openai route (o-series and gpt-5 names: max_completion_tokens, no
    # temperature), which hosted_vllm would send as they are.
    if listed_price(litellm, name) is not None:
        return Route(name, key)
    # The key the openai route would send: without one LiteLLM's hosted_vllm provider sends a
    # placeholder of its own, and a server that checks keys must see the user's.
    return Route(DIRECT + name.removeprefix(OPENAI), key or os.environ.get("OPENAI_API_KEY"))


def routes(litellm: ModuleType, models: list[ModelSettings]) -> dict[str, Route]:
    """Each judge's route, by the judge's name. A direct route's name is filed in LiteLLM's
    price map at price 0, as an unpriced --api-base model is (provider.register_unpriced):
    the cost LiteLLM works out for each reply is then a look-up, not a search of its map.
    """
    found = {settings.name: route(litellm, settings) for settings in models}
    for settings in models:
        way = found[settings.name]
        if way.direct and settings.api_base:
            file_at_price_zero(litellm, way.model, settings.api_base)
    return found


def through_sdk(found: Iterable[Route]) -> bool:
    """Whether some judge's calls go through the openai SDK (provider.warm_up)."""
    return not all(way.direct for way in found)

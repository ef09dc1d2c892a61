"""How each judge is reached: its model string, endpoint, key (only a keyless server's
placeholder: real keys stay in LiteLLM's environment variables), price and response format
(`ModelSettings`), made from --model, --api-base, --price and --json-schema.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr

from judgecli.errors import ConfigError

# Sent as the key to keyless OpenAI-compatible servers (vLLM, Ollama): the OpenAI client
# refuses to send a request without one, and LiteLLM reports that as a retryable 5xx.
KEYLESS_PLACEHOLDER = "no-key-needed"


class Price(BaseModel):
    """A user-given price, USD per million tokens (what provider price pages show)."""

    model_config = ConfigDict(frozen=True)

    input_per_mtok: float
    """USD per million prompt tokens."""
    output_per_mtok: float
    """USD per million completion tokens."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for these token counts at this price."""
        return (
            prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok
        ) / 1e6


class ModelSettings(BaseModel):
    """How to reach one judge model."""

    model_config = ConfigDict(frozen=True)

    name: str
    """LiteLLM model string, e.g. openai/gpt-4o-mini."""
    api_base: str | None = None
    """--api-base: the endpoint of an OpenAI-compatible server (vLLM, Ollama, llama.cpp, a
    proxy); None: the provider's own."""
    api_key: SecretStr | None = None
    """Only set for keyless local servers; real keys stay in LiteLLM's env variables."""
    price: Price | None = None
    """--price IN,OUT: USD per million tokens, over LiteLLM's map (None: the map's, if any)."""
    json_schema: bool | None = None
    """Send the verdict schema as response_format; None decides from LiteLLM's model map."""

    def schema_decision(self) -> bool | None:
        """Whether to send the verdict schema, when known without LiteLLM: the user's choice,
        else yes behind --api-base (LiteLLM's map says no for every local model name, yet
        OpenAI-compatible servers such as vLLM and Ollama accept it); None = ask LiteLLM.
        """
        if self.json_schema is not None:
            return self.json_schema
        return True if self.api_base else None


def check_api_base(url: str) -> str:
    """An --api-base that LiteLLM can call: http(s), a host; ConfigError naming the fix.
    A missing /v1 cannot be known from here (some servers use other paths): a 404 on the
    first call says so instead.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fixed = url if "://" in url else f"http://{url}"
        raise ConfigError(
            f"--api-base {url!r} is not an http(s) URL",
            hint=f"write it in full, e.g. --api-base {fixed}",
        )
    return url


def parse_price(text: str) -> Price:
    """`--price 0.15,0.60` → USD per million input and output tokens."""
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 2 or any(v < 0 for v in values):
        raise ConfigError(
            f"--price {text!r} is not IN,OUT",
            hint="USD per million tokens, e.g. --price 0.15,0.60",
        )
    return Price(input_per_mtok=values[0], output_per_mtok=values[1])


def model_settings(
    names: list[str], *, api_base: str | None, price: str | None, json_schema: bool | None
) -> list[ModelSettings]:
    """One ModelSettings per judge; a keyless local OpenAI-compatible server gets a dummy key."""
    parsed_price = parse_price(price) if price else None
    if api_base is not None:
        check_api_base(api_base)
    settings = []
    for name in names:
        if "/" not in name and api_base:
            raise ConfigError(
                f"--model {name!r} needs a provider prefix with --api-base",
                hint=f"for an OpenAI-compatible server use --model openai/{name}",
            )
        key = None
        if api_base and name.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            key = SecretStr(KEYLESS_PLACEHOLDER)
        settings.append(
            ModelSettings(
                name=name,
                api_base=api_base,
                api_key=key,
                price=parsed_price,
                json_schema=json_schema,
            )
        )
    return settings


def secret_values(models: list[ModelSettings]) -> list[str]:
    """Every secret that could leak into an error message: provider keys from the
    environment and keys given per model. Used to scrub messages, never written.
    """
    found = {m.api_key.get_secret_value() for m in models if m.api_key is not None}
    for name, value in os.environ.items():
        if value and len(value) >= 8 and name.endswith(("_API_KEY", "_TOKEN", "_SECRET")):
            found.add(value)
    return sorted(found, key=len, reverse=True)

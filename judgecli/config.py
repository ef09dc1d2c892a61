"""RunConfig: flags (with their JUDGE_* environment variables) > the rubric's `judge:` block >
built-in defaults, merged and validated once, then passed down.

Typer resolves each flag against its environment variable (declared in cli/options.py), so a
value that reaches this module as "given" came from one of those two; None means neither.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from judgecli.errors import ConfigError

if TYPE_CHECKING:
    from judgecli.rubric import Rubric

DEFAULT_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 4
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_TOKENS = 1024
# Sent as the key to keyless OpenAI-compatible servers (vLLM, Ollama): the OpenAI client
# refuses to send a request without one, and LiteLLM reports that as a retryable 5xx.
KEYLESS_PLACEHOLDER = "no-key-needed"

T = TypeVar("T")


class Price(BaseModel):
    """A user-given price, USD per million tokens (what provider price pages show)."""

    model_config = ConfigDict(frozen=True)

    input_per_mtok: float
    output_per_mtok: float


class ModelSettings(BaseModel):
    """How to reach one judge model."""

    model_config = ConfigDict(frozen=True)

    name: str
    """LiteLLM model string, e.g. openai/gpt-4o-mini."""
    api_base: str | None = None
    api_key: SecretStr | None = None
    """Only set for keyless local servers; real keys stay in LiteLLM's env variables."""
    price: Price | None = None
    json_schema: bool | None = None
    """Send the verdict schema as response_format; None decides from LiteLLM's model map."""


class RunConfig(BaseModel):
    """Everything a judging run needs to know, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    models: list[ModelSettings] = Field(min_length=1)
    temperature: float = Field(ge=0, le=2)
    max_tokens: int = Field(gt=0)
    timeout_s: float = Field(gt=0)
    max_retries: int = Field(ge=0)
    concurrency: int = Field(ge=1)
    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)
    out: Path
    limit: int | None = Field(default=None, ge=1)
    sample: int | None = Field(default=None, ge=1)
    seed: int = 0
    field_map: dict[str, str] = Field(default_factory=dict)

    @property
    def model_names(self) -> list[str]:
        """The judges' model strings, in the order given."""
        return [m.name for m in self.models]


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
                name=name, api_base=api_base, api_key=key, price=parsed_price,
                json_schema=json_schema,
            )
        )  # fmt: skip
    return settings


def build_run_config(
    *,
    command: str,
    rubric: Rubric,
    models: list[str] | None,
    api_base: str | None,
    out: Path | None,
    default_out: Path,
    concurrency: int | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    max_retries: int | None = None,
    timeout_s: float | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    price: str | None = None,
    json_schema: bool | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    field_map: dict[str, str] | None = None,
) -> RunConfig:
    """Merge flags, the rubric's judge block and defaults into one RunConfig."""
    names = list(dict.fromkeys(models or ([rubric.judge.model] if rubric.judge.model else [])))
    if not names:
        raise ConfigError(
            "no judge model",
            hint="pass --model (e.g. --model openai/gpt-4o-mini), set JUDGE_MODEL, "
            "or give the rubric a judge: {model: ...} block",
        )
    return RunConfig(
        command=command,
        models=model_settings(names, api_base=api_base, price=price, json_schema=json_schema),
        temperature=first(temperature, rubric.judge.temperature, DEFAULT_TEMPERATURE),
        max_tokens=first(max_tokens, rubric.judge.max_tokens, DEFAULT_MAX_TOKENS),
        timeout_s=first(timeout_s, DEFAULT_TIMEOUT_S),
        max_retries=first(max_retries, DEFAULT_MAX_RETRIES),
        concurrency=first(concurrency, DEFAULT_CONCURRENCY),
        rpm=rpm,
        tpm=tpm,
        out=out or default_out,
        limit=limit,
        sample=sample,
        seed=seed,
        field_map=field_map or {},
    )


def first(*values: T | None) -> T:
    """The first value that is not None (flag, then rubric, then default)."""
    for value in values:
        if value is not None:
            return value
    raise ValueError("no value and no default")


def debug_enabled() -> bool:
    """JUDGE_DEBUG=1: let errors raise with a full traceback (for bug reports)."""
    return os.environ.get("JUDGE_DEBUG", "") not in ("", "0")


def step_summary_path() -> Path | None:
    """$GITHUB_STEP_SUMMARY: where GitHub Actions shows a job's markdown summary."""
    value = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None


E = TypeVar("E", bound=StrEnum)


def parse_choice(choices: type[E], value: str, flag: str) -> E:
    """A flag's value as one of an enum's values, or a ConfigError listing them."""
    try:
        return choices(value.strip().lower())
    except ValueError:
        allowed = ", ".join(c.value for c in choices)
        raise ConfigError(f"{flag} {value!r} is not one of: {allowed}") from None

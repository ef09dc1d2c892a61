"""The simulator's settings and its record of each request it received."""

from __future__ import annotations

import math
import random
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgecli.errors import ConfigError


class Fault(StrEnum):
    """A misbehaviour the simulator draws at its configured rate, in draw order."""

    DROP = "drop"
    ERROR = "error"
    MALFORMED = "malformed"
    RATE_LIMIT = "rate_limit"
    TRUNCATE = "truncate"


class JudgeProfile(BaseModel):
    """How one simulated judge, picked by the request's ``model``, differs from the server's.

    One server can then play judges of different quality at once (a noisy cheap screen and
    a sharp strong judge for a cascade); a field left None keeps the server-wide value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    noise: float | None = Field(default=None, ge=0, le=1)
    """With `truth_file`: this judge's probability of answering a wrong label."""
    position_bias: float | None = Field(default=None, ge=0, le=1)
    """Pairwise: this judge's probability of preferring answer A when unsure."""
    length_bias: float | None = Field(default=None, ge=0, le=1)
    """Pairwise: this judge's probability of preferring the longer answer when unsure."""


class JudgeSettings(BaseModel):
    """The noise and biases one request is answered with: its profile over the globals."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    noise: float
    """With a truth file: probability of answering a wrong label."""
    position_bias: float
    """Pairwise: probability of preferring answer A when unsure."""
    length_bias: float
    """Pairwise: probability of preferring the longer answer when unsure."""


_PROFILE_KEYS = {"noise": "noise", "position-bias": "position_bias", "length-bias": "length_bias"}
_PROFILE_HINT = (
    "e.g. --profile cheap:noise=0.3,position-bias=0.4 (keys: noise, position-bias, length-bias)"
)


def parse_profiles(specs: list[str]) -> dict[str, JudgeProfile]:
    """`--profile NAME:KEY=VALUE[,KEY=VALUE...]` flags → {NAME: JudgeProfile}.

    The name ends at the last colon, so `ollama/llama3:8b:noise=0.1` names
    `ollama/llama3:8b` (values never hold a colon).
    """
    profiles: dict[str, JudgeProfile] = {}
    for spec in specs:
        name, _, pairs = spec.rpartition(":")
        if not name or not pairs:
            raise ConfigError(f"--profile {spec!r} is not NAME:KEY=VALUE", hint=_PROFILE_HINT)
        if name in profiles:
            raise ConfigError(
                f"--profile {name!r} is given twice",
                hint=f"put all its settings in one: --profile {name}:noise=0.3,position-bias=0.4",
            )
        profiles[name] = JudgeProfile(**dict(_profile_setting(spec, p) for p in pairs.split(",")))
    return profiles


def _profile_setting(spec: str, pair: str) -> tuple[str, float]:
    key, sep, text = (part.strip() for part in pair.partition("="))
    if key not in _PROFILE_KEYS:
        raise ConfigError(f"--profile {spec!r}: unknown key {key!r}", hint=_PROFILE_HINT)
    try:
        value = float(text) if sep else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:  # also False for nan
        raise ConfigError(
            f"--profile {spec!r}: {key} needs a value from 0 to 1, not {pair.strip()!r}",
            hint=_PROFILE_HINT,
        )
    return _PROFILE_KEYS[key], value


def _model_names(model: str) -> set[str]:
    # LiteLLM strips the provider: `--model openai/cheap` arrives as "cheap". Only the first
    # segment goes, so `openai/meta-llama/x` still meets the "meta-llama/x" the body holds.
    return {model, model.split("/", 1)[-1]}


class SimulatorConfig(BaseModel):
    """How the simulator listens and misbehaves."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface to listen on; loopback keeps tests and the demo off the network."""
    port: int = Field(default=0, ge=0, le=65535)
    """TCP port; 0 picks a free one (read it back from `SimulatorServer.port`)."""
    seed: int = 0
    """Seed of every hash and random draw: same seed and request, same reply."""
    latency_ms: float = Field(default=0.0, ge=0)
    """Delay added before each chat completion reply."""
    latency_jitter_ms: float = Field(default=0.0, ge=0)
    """Uniform +- jitter on the delay, drawn from a seeded RNG."""
    rpm: int | None = Field(default=None, gt=0)
    """Requests per sliding 60 s window; over it the reply is 429 with Retry-After."""
    error_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of requests answered with HTTP 500."""
    drop_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of requests whose connection is closed with no reply."""
    malformed_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of replies (HTTP 200) whose content is not valid JSON."""
    rate_limit_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of requests answered with HTTP 429 and ``Retry-After``, whatever the `rpm`."""
    rate_limit_retry_after_s: float = Field(default=1.0, ge=0)
    """The ``Retry-After`` seconds of a `rate_limit_rate` 429 (sent as "1" or "0.05")."""
    truncate_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of replies (HTTP 200) whose JSON body is cut in half, with a matching
    Content-Length: a provider or proxy cutting the response off."""
    position_bias: float = Field(default=0.0, ge=0, le=1)
    """Pairwise: probability of preferring answer A when the true preference is weak."""
    length_bias: float = Field(default=0.0, ge=0, le=1)
    """Pairwise: probability of preferring the longer answer when the true preference is weak."""
    truth_file: Path | None = None
    """JSONL cases (id, input, output, ...) whose labels the simulator answers for their outputs."""
    truth_field: str = Field(default="label", min_length=1)
    """The key of `truth_file` that holds each case's true label."""
    noise: float = Field(default=0.0, ge=0, le=1)
    """With `truth_file`: probability of answering another valid value than the label (seeded)."""
    profiles: dict[str, JudgeProfile] = Field(default_factory=dict)
    """Per-model judges by request ``model`` (``openai/cheap`` and ``cheap`` match each other);
    other models get the server-wide `noise`, `position_bias` and `length_bias`."""

    @property
    def fault_rates(self) -> dict[Fault, float]:
        """The rate of each fault, in the order their slices of the draw are laid out."""
        return {
            Fault.DROP: self.drop_rate,
            Fault.ERROR: self.error_rate,
            Fault.MALFORMED: self.malformed_rate,
            Fault.RATE_LIMIT: self.rate_limit_rate,
            Fault.TRUNCATE: self.truncate_rate,
        }

    def settings_for(self, model: str) -> JudgeSettings:
        """The noise and biases a request for ``model`` is answered with.

        An exact profile name wins; otherwise the first profile whose name matches once a
        provider prefix is stripped from either side; otherwise the server-wide values.
        """
        profile = self.profiles.get(model)
        if profile is None:
            names = _model_names(model)
            profile = next(
                (p for name, p in self.profiles.items() if names & _model_names(name)),
                JudgeProfile(),
            )
        return JudgeSettings(
            noise=self.noise if profile.noise is None else profile.noise,
            position_bias=(
                self.position_bias if profile.position_bias is None else profile.position_bias
            ),
            length_bias=self.length_bias if profile.length_bias is None else profile.length_bias,
        )

    def draw_fault(self, key: str) -> Fault | None:
        """The fault a request drawing with ``key`` gets (None: answer it normally).

        One seeded draw in [0, 1) falls into disjoint slices laid out in `Fault` order, so
        each rate is exactly its share. New faults come after the old ones: a seed fails
        the same requests with drop, error and malformed as before they existed.
        """
        draw, edge = random.Random(f"{self.seed}\x1f{key}").random(), 0.0
        for fault, rate in self.fault_rates.items():
            edge += rate
            if draw < edge:
                return fault
        return None

    @model_validator(mode="after")
    def _fault_shares_fit(self) -> Self:
        # Faults take disjoint slices of one draw, so each rate is exactly its share.
        # fsum: 0.1 + 0.2 + 0.7 is 1.0000000000000002 by plain addition.
        total = math.fsum(self.fault_rates.values())
        if total > 1:
            names = " + ".join(f"{fault.value}_rate" for fault in Fault)
            raise ValueError(f"{names} must be at most 1, got {total:g}")
        return self


class RecordedRequest(BaseModel):
    """One chat completion request the simulator received."""

    model_config = ConfigDict(frozen=True)

    time: float
    """`time.monotonic()` at arrival."""
    model: str
    """The request's ``model`` ("" when absent)."""
    body: dict[str, Any]
    """The parsed JSON body ({} when it was not a JSON object)."""
    headers: dict[str, str]
    """Request headers, names lower-cased."""
    status: int
    """The HTTP status answered; 0 when the connection was dropped."""
    fault: Fault | None = None
    """The seeded fault this request drew; None for a clean reply, the script or `rpm`."""

"""The simulator's settings and its record of each request it received."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


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

    @model_validator(mode="after")
    def _fault_shares_fit(self) -> Self:
        # Faults take disjoint slices of one draw, so each rate is exactly its share.
        if self.drop_rate + self.error_rate + self.malformed_rate > 1:
            raise ValueError("drop_rate + error_rate + malformed_rate must be at most 1")
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

"""The simulator's settings and its record of each request it received."""

from __future__ import annotations

import math
import random
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judgecli.simulator.formats import ResponseFormats, parse_formats, requested_type
from judgecli.simulator.styles import ReplyStyle


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
    jitter: float | None = Field(default=None, ge=0, le=1)
    """This judge's probability of answering a verdict as a random guess, drawn anew for
    each identical request (`judgecli.simulator.jitter`)."""
    style: ReplyStyle | None = None
    """How this judge words its verdict (`judgecli.simulator.styles`)."""
    formats: ResponseFormats | None = None
    """The ``response_format`` types this judge's server accepts; a preset name or
    ``type+type`` string is parsed (`judgecli.simulator.formats`)."""
    logprobs: bool | None = None
    """Whether this judge's server answers ``logprobs: true`` with token logprobs."""

    @field_validator("formats", mode="before")
    @classmethod
    def _parse_formats(cls, value: object) -> object:
        return parse_formats(value) if isinstance(value, str) else value


class JudgeSettings(BaseModel):
    """The settings one request is answered with: its profile over the server-wide values."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    noise: float
    """With a truth file: probability of answering a wrong label."""
    position_bias: float
    """Pairwise: probability of preferring answer A when unsure."""
    length_bias: float
    """Pairwise: probability of preferring the longer answer when unsure."""
    jitter: float
    """Probability of answering a verdict as a random guess, drawn anew per identical call."""
    style: ReplyStyle
    """How the verdict is worded."""
    formats: ResponseFormats
    """The ``response_format`` types accepted, and whether they are enforced."""
    logprobs: bool = True
    """Whether a request asking ``logprobs: true`` gets token logprobs."""
    padding_bias: float = 0.0
    """`judge probe`: probability of preferring an answer padded with filler."""
    verbosity_bias: float = 0.0
    """`judge probe`: probability of preferring an answer restated at twice its length."""
    self_bias: float = 0.0
    """`judge probe`: probability of preferring the answer its own model family wrote."""
    self_answers: tuple[Path, ...] = ()
    """JSONL files naming each answer's generator (`self_bias` reads them)."""


def rate_text(limit: int | None, window_s: float) -> str:
    """`30 requests per minute`, or per `6 s` for another window length."""
    per = "minute" if window_s == 60 else f"{window_s:g} s"
    return f"{limit} requests per {per}"


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
    """Requests per sliding window (`rate_limit_window_s`); over it the reply is 429 with
    Retry-After."""
    rate_limit_window_s: float = Field(default=60.0, gt=0)
    """Length of the `rpm` window: 6 runs the dynamics of a per-minute limit 10x faster."""
    rate_limit_prefill: bool = False
    """Start (and reset) with the `rpm` window full, its entries spread evenly over the
    previous window: a key another job has just used up; slots free at the steady rate."""
    rate_limit_headers: bool = True
    """With `rpm`: send OpenAI's ``x-ratelimit-{limit,remaining,reset}-requests`` headers on
    every chat reply; off plays the many servers and proxies that send only Retry-After."""
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
    padding_bias: float = Field(default=0.0, ge=0, le=1)
    """`judge probe`: probability of preferring an answer padded with filler, whatever the gap
    (`judgecli.simulator.probes`)."""
    verbosity_bias: float = Field(default=0.0, ge=0, le=1)
    """`judge probe`: probability of preferring an answer restated at twice its length."""
    self_bias: float = Field(default=0.0, ge=0, le=1)
    """`judge probe`: probability of preferring the answer of a pair (exactly one) whose
    generator, per `self_answers`, is of the judge's own model family."""
    self_answers: tuple[Path, ...] = ()
    """JSONL files (rows with `output` and `generator` or `model`) naming each answer's
    generator, for `self_bias`."""
    truth_file: Path | None = None
    """JSONL cases (id, input, output, ...) whose labels the simulator answers for their outputs."""
    truth_field: str = Field(default="label", min_length=1)
    """The key of `truth_file` that holds each case's true label."""
    noise: float = Field(default=0.0, ge=0, le=1)
    """With `truth_file`: probability of answering another valid value than the label (seeded)."""
    blind_spot: str | None = Field(default=None, min_length=1)
    """With `truth_file`: a phrase whose answers a binary judge passes whatever their label,
    until its system message quotes three words of it in a row (`simulator.blind_spot`)."""
    ignores_prompt: bool = False
    """With `blind_spot`: no instruction fixes it (a judge that ignores its prompt)."""
    jitter: float = Field(default=0.0, ge=0, le=1)
    """Probability that a call asking for a verdict is answered as a uniform random guess,
    drawn anew for each identical request but reproducibly from the seed
    (`judgecli.simulator.jitter`): a judge with known per-call noise, for repeated judging.
    Not `latency_jitter_ms`. 0 keeps every verdict a pure function of the request."""
    style: ReplyStyle = ReplyStyle.JSON
    """How verdicts are worded (`judgecli.simulator.styles`); the verdict itself is the same."""
    formats: ResponseFormats = ResponseFormats()
    """The ``response_format`` types accepted (`judgecli.simulator.formats`); a preset name
    such as ``"llama-cpp"`` or a ``"json_object+text"`` string is parsed. Default: all."""
    logprobs: bool = True
    """Answer ``logprobs: true`` with OpenAI's ``choices[0].logprobs.content``: the reply's
    tokens, the score's spread over the neighbouring scale points
    (`judgecli.simulator.logprobs`); false plays a server that ignores the parameter."""
    profiles: dict[str, JudgeProfile] = Field(default_factory=dict)
    """Per-model judges by request ``model`` (``openai/cheap`` and ``cheap`` match each other);
    other models get the server-wide `noise`, `position_bias`, `length_bias`, `jitter`,
    `style` and `formats`."""

    batch_steps: int = Field(default=2, ge=0)
    """Retrieves (``GET /v1/batches/{id}``) a batch takes from ``validating`` to its end;
    0 ends it at creation. Progress is counted in retrieves, never in time, so tests of a
    batch client are deterministic (`judgecli.simulator.batches`)."""
    batch_fail_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of each batch's lines (chosen by seed, the count rounded half up) answered with
    HTTP 500 in its error file instead of a reply."""
    batch_expire: bool = False
    """Batches end ``expired`` instead of ``completed``: only the first half of their lines
    are answered, the rest go to the error file as ``batch_expired``."""

    @field_validator("formats", mode="before")
    @classmethod
    def _parse_formats(cls, value: object) -> object:
        return parse_formats(value) if isinstance(value, str) else value

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
        """The noise, biases, jitter, style and formats a request for ``model`` is answered with.

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
            jitter=self.jitter if profile.jitter is None else profile.jitter,
            style=self.style if profile.style is None else profile.style,
            formats=self.formats if profile.formats is None else profile.formats,
            logprobs=self.logprobs if profile.logprobs is None else profile.logprobs,
            padding_bias=self.padding_bias,
            verbosity_bias=self.verbosity_bias,
            self_bias=self.self_bias,
            self_answers=self.self_answers,
        )

    def describe(self) -> list[str]:
        """What this server does, in a few lines for `judge simulate`'s startup banner."""
        latency = f"latency {self.latency_ms:g} ms" + (
            f" ± {self.latency_jitter_ms:g} ms" if self.latency_jitter_ms else ""
        )
        limit = "no rate limit"
        if self.rpm is not None:
            limit = f"rate limit {rate_text(self.rpm, self.rate_limit_window_s)}" + (
                " (window full at start)" if self.rate_limit_prefill else ""
            )
            limit += ", x-ratelimit-* headers " + ("on" if self.rate_limit_headers else "off")
        shares = [f"{fault.value} {rate:g}" for fault, rate in self.fault_rates.items() if rate]
        faults = f"faults: {', '.join(shares)}" if shares else "no faults"
        lines = [f"{latency}; {limit}; {faults}"]
        lines.append(f"verdicts worded as {self.style}; response_format accepted: {self.formats}")
        if self.truth_file is not None:
            lines.append(
                f"replaying the {self.truth_field!r} labels of {self.truth_file} with noise "
                f"{self.noise:g}; other answers get text-feature verdicts"
            )
        if self.jitter:
            lines.append(f"a share of {self.jitter:g} of verdicts are random guesses (jitter)")
        if self.blind_spot is not None:
            fix = "no prompt fixes it" if self.ignores_prompt else "until its prompt quotes it"
            lines.append(
                f"blind spot: answers saying {self.blind_spot!r} pass ({fix}); opt* models optimize"
            )
        if not self.logprobs:
            lines.append("no logprobs, whatever a request asks")
        for name, judge in self.profiles.items():
            given = ", ".join(
                f"{key.replace('_', '-')} {value:g}"
                if isinstance(value, float)
                else f"{key} {value}"
                for key, value in judge
                if value is not None
            )
            lines.append(f"requests for model {name!r} get {given or 'the defaults'}")
        if self.batch_fail_rate or self.batch_expire or self.batch_steps != 2:
            # Only when set: most runs never use the Batch API.
            end = "expire half done" if self.batch_expire else "complete"
            lines.append(
                f"batches {end} after {self.batch_steps} retrieves; "
                f"batch lines failed: {self.batch_fail_rate:g}"
            )
        return lines

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
        if self.rate_limit_prefill and self.rpm is None:
            raise ValueError("rate_limit_prefill needs an rpm limit to fill")
        return self


class RecordedRequest(BaseModel):
    """One chat completion request the simulator received online or answered in a batch."""

    model_config = ConfigDict(frozen=True)

    time: float
    """`time.monotonic()` at arrival."""
    model: str
    """The request's ``model`` ("" when absent)."""
    body: dict[str, Any]
    """The parsed JSON body ({} when it was not a JSON object)."""
    headers: dict[str, str]
    """Request headers, names lower-cased (a batch line has those that created its batch)."""
    status: int
    """The HTTP status answered; 0 when the connection was dropped."""
    fault: Fault | None = None
    """The seeded fault this request drew; None for a clean reply, the script or `rpm`.
    A batch line failed by `SimulatorConfig.batch_fail_rate` has `Fault.ERROR`."""
    batch_id: str | None = None
    """The batch this request was a line of; None for a request sent online."""
    custom_id: str | None = None
    """The line's ``custom_id`` in its batch; None for a request sent online."""

    @property
    def response_format(self) -> str | None:
        """The request's ``response_format.type`` ("" when malformed), None without one."""
        return requested_type(self.body)

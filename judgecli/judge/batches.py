"""Provider batch APIs through LiteLLM: half price, replies within 24 hours.

A batch is a JSONL file of requests, each named by a `custom_id` (here the request's cache
key, so a batch reply stands exactly where the online reply would: the same key in the
cache, the same verdict), uploaded with `acreate_file`, started with `acreate_batch`,
followed with `aretrieve_batch`, and its output and error files read with `afile_content`
(docs/ecosystem.md, "Provider batch APIs"). Output lines come back in any order and some may
fail; a failed or missing line is asked again as an ordinary call when the run is collected.

Supported: models LiteLLM routes through the OpenAI provider (`openai/...`), i.e. OpenAI
itself and any OpenAI-compatible server with /v1/files and /v1/batches (`--api-base`).
LiteLLM can also create batches for Azure, Vertex AI, Bedrock, Mistral and xAI, but each
needs its own upload (a bucket, a deployment) that nothing here has been tried against;
Anthropic's batches LiteLLM cannot create at all. Those are refused (exit 2) rather than
half supported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from judgecli.errors import ConfigError
from judgecli.judge.formats import FormatMode, wire_format
from judgecli.judge.protocol import JudgeReply, JudgeRequest
from judgecli.judge.provider import model_price
from judgecli.judge.token_logprobs import token_logprobs
from judgecli.settings.judges import ModelSettings, Price

BATCH_PROVIDERS = ("openai",)
ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
# OpenAI's limits per input file: 50,000 requests and 200 MB; stay under both.
MAX_LINES = 50_000
MAX_BYTES = 190_000_000
# Providers bill batch calls at half the online price.
BATCH_DISCOUNT = 0.5
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


def provider_of(litellm: ModuleType, settings: ModelSettings) -> str:
    """The LiteLLM provider a model is routed to ("openai", "anthropic", ...)."""
    try:
        return str(litellm.get_llm_provider(settings.name, api_base=settings.api_base)[1])
    except Exception:  # noqa: BLE001 - LiteLLM raises BadRequestError for "no provider"
        return "unknown"


def check_batchable(litellm: ModuleType, models: list[ModelSettings]) -> None:
    """ConfigError (exit 2) naming a model whose provider has no batch API we support."""
    for settings in models:
        provider = provider_of(litellm, settings)
        if provider not in BATCH_PROVIDERS:
            raise ConfigError(
                f"--batch: {settings.name} is a {provider} model; batch mode supports "
                "openai/ models (OpenAI, or an OpenAI-compatible server with /v1/files and "
                "/v1/batches via --api-base)",
                hint="drop --batch to judge online, or judge with an openai/ model",
            )


def wire_model(litellm: ModuleType, settings: ModelSettings) -> str:
    """The model name the provider's API expects (`openai/gpt-4o-mini` → `gpt-4o-mini`)."""
    return str(litellm.get_llm_provider(settings.name, api_base=settings.api_base)[0])


def batch_line(key: str, request: JudgeRequest, model: str, mode: FormatMode) -> dict[str, Any]:
    """One line of a batch input file: the request as its online call would send it."""
    body: dict[str, Any] = {
        "model": model,
        "messages": request.messages,
        "temperature": request.temperature,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    response_format = wire_format(mode, request.response_format)
    if response_format is not None:
        body["response_format"] = response_format
    if request.top_logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    return {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}


def input_files(lines: list[dict[str, Any]]) -> Iterator[bytes]:
    """The lines as JSONL files, each within the provider's limits."""
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        if chunk and (len(chunk) >= MAX_LINES or size + len(data) > MAX_BYTES):
            yield b"".join(chunk)
            chunk, size = [], 0
        chunk.append(data)
        size += len(data)
    if chunk:
        yield b"".join(chunk)


def batch_price(litellm: ModuleType, settings: ModelSettings) -> Price | None:
    """The model's batch price: LiteLLM's batch price when its map has one, else half the
    online price (--price, or the map's), else None (unpriced: cost counts as 0).
    """
    if settings.price is None:
        try:
            info = litellm.get_model_info(settings.name)
        except Exception:  # noqa: BLE001 - not mapped
            info = None
        if info and info.get("input_cost_per_token_batches") is not None:
            return Price(
                input_per_mtok=float(info["input_cost_per_token_batches"]) * 1e6,
                output_per_mtok=float(info.get("output_cost_per_token_batches") or 0.0) * 1e6,
            )
    online = model_price(litellm, settings)
    if online is None:
        return None
    return Price(
        input_per_mtok=online.input_per_mtok * BATCH_DISCOUNT,
        output_per_mtok=online.output_per_mtok * BATCH_DISCOUNT,
    )


@dataclass(frozen=True)
class BatchStatus:
    """Where a provider's batch stands."""

    status: str
    total: int
    completed: int
    failed: int
    output_file_id: str | None
    error_file_id: str | None
    errors: str | None = None
    """Why a batch failed as a whole (its input was refused)."""

    @property
    def ended(self) -> bool:
        """No more lines will be processed."""
        return self.status in TERMINAL


@dataclass(frozen=True)
class LineOutcome:
    """One output or error line of a batch: a reply, or why there is none."""

    key: str
    reply: JudgeReply | None = None
    error: str | None = None


class BatchApi:
    """One model's batch endpoint (its provider, API base and key) through LiteLLM."""

    def __init__(self, litellm: ModuleType, settings: ModelSettings) -> None:
        self._litellm = litellm
        self.settings = settings
        self._price = batch_price(litellm, settings)

    def _where(self) -> dict[str, Any]:
        where: dict[str, Any] = {"custom_llm_provider": "openai"}
        if self.settings.api_base:
            where["api_base"] = self.settings.api_base
        if self.settings.api_key is not None:
            where["api_key"] = self.settings.api_key.get_secret_value()
        return where

    async def submit(self, content: bytes, name: str) -> tuple[str, str]:
        """Upload one input file and start its batch; (batch id, input file id)."""
        uploaded = await self._litellm.acreate_file(
            file=(name, content, "application/jsonl"), purpose="batch", **self._where()
        )
        batch = await self._litellm.acreate_batch(
            completion_window=COMPLETION_WINDOW,
            endpoint=ENDPOINT,
            input_file_id=uploaded.id,
            metadata={"created_by": "judge"},
            **self._where(),
        )
        return str(batch.id), str(uploaded.id)

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch as the provider reports it now."""
        batch = await self._litellm.aretrieve_batch(batch_id=batch_id, **self._where())
        counts = batch.request_counts
        errors = getattr(batch, "errors", None)
        problems = [getattr(e, "message", str(e)) for e in getattr(errors, "data", None) or []]
        return BatchStatus(
            status=str(batch.status),
            total=int(getattr(counts, "total", 0) or 0),
            completed=int(getattr(counts, "completed", 0) or 0),
            failed=int(getattr(counts, "failed", 0) or 0),
            output_file_id=batch.output_file_id,
            error_file_id=batch.error_file_id,
            errors="; ".join(problems) or None,
        )

    async def download(self, file_id: str) -> str:
        """A result file's text."""
        content = await self._litellm.afile_content(file_id=file_id, **self._where())
        data = content.content if hasattr(content, "content") else content
        return data.decode("utf-8") if isinstance(data, bytes) else str(data)

    def outcomes(self, text: str) -> Iterator[LineOutcome]:
        """The lines of an output or error file: replies at batch prices, or errors."""
        for line in text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            yield self.outcome(row)

    def outcome(self, row: dict[str, Any]) -> LineOutcome:
        """One result line (OpenAI's shape: custom_id, response {status_code, body}, error)."""
        key = str(row.get("custom_id"))
        response = row.get("response") or {}
        body = response.get("body") or {}
        if row.get("error") or response.get("status_code") != 200:
            problem = row.get("error") or body.get("error") or {}
            message = problem.get("message") if isinstance(problem, dict) else str(problem)
            status = response.get("status_code")
            return LineOutcome(key, error=f"batch line failed ({status}): {message}")
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            return LineOutcome(key, error="batch line without a reply")
        usage = body.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        cost = self._price.cost(prompt_tokens, completion_tokens) if self._price else 0.0
        reasoning = message.get("reasoning_content")
        reply = JudgeReply(
            text=message.get("content") or "",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_s=0.0,
            finish_reason=choice.get("finish_reason"),
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            batched=True,
            logprobs=token_logprobs(choice.get("logprobs")),
        )
        return LineOutcome(key, reply=reply)


def worst_case_cost(
    litellm: ModuleType, models: list[ModelSettings], requests: list[JudgeRequest]
) -> float:
    """What the requests could cost at batch prices if every reply were max_tokens long
    (the prompt's tokens counted by LiteLLM, else ~4 characters a token; unpriced: 0).
    """
    prices = {m.name: batch_price(litellm, m) for m in models}
    worst = 0.0
    for request in requests:
        price = prices[request.model]
        if price is None:
            continue
        try:
            prompt = int(
                litellm.token_counter(
                    model=request.model,
                    messages=request.messages,
                    use_default_image_token_count=True,  # no download of an http(s) image
                )
            )
        except Exception:  # noqa: BLE001 - an estimate
            prompt = sum(len(m.get("content", "")) for m in request.messages) // 4
        worst += price.cost(prompt, request.max_tokens or 0)
    return worst

"""The judge client: the only module that talks to LiteLLM.

LiteLLM is imported lazily (it takes ~3 s and would make `judge --help` slow) and only after
the environment switches that keep it offline and quiet are set. Retries are ours, not
LiteLLM's: its `num_retries` silently does nothing without tenacity, and with it retries
400s and ignores Retry-After (ECOSYSTEM.md §1.3). So every call goes out with
`max_retries=0` and this module owns backoff, Retry-After and the attempt budget.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import os
import random
import re
import time
import warnings
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from judgecli.config import ModelSettings, Price
from judgecli.errors import ConfigError, JudgeError
from judgecli.limits import BudgetGuard, Limits

Message = dict[str, str]

MAX_RETRY_AFTER_S = 120.0
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


class JudgeRequest(BaseModel):
    """Everything that determines a judge's reply (and nothing secret)."""

    model_config = ConfigDict(frozen=True)

    model: str
    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None

    def key(self, api_base: str | None) -> str:
        """Canonical hash of the request: the identity of a call for caches and dedupe."""
        body = self.model_dump(mode="json") | {"api_base": api_base}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


class JudgeReply(BaseModel):
    """A successful reply, with what it cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    attempts: int = 1
    cached: bool = False
    """Served from the reply cache: nothing was sent or paid."""


class JudgeCallError(Exception):
    """A call that failed for good (non-retryable, or retries exhausted)."""

    def __init__(self, reason: str, *, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class JudgeClient(Protocol):
    """What the runner needs from a judge; tests script it without a network."""

    def accepts_schema(self, model: str) -> bool:
        """Whether to send the verdict schema as `response_format` to this model."""
        ...

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One reply, or JudgeCallError."""
        ...

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """The reply parsed into a valid verdict: a cache may keep it."""
        ...


def import_litellm() -> ModuleType:
    """Import LiteLLM offline and quiet (ECOSYSTEM.md §1.8, §1.10)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price map
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")  # no implicit .env loading
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # token_counter must not download tokenizers
    import litellm

    litellm.suppress_debug_info = True  # it otherwise print()s to stdout on every error
    litellm.drop_params = False  # fail loudly rather than silently drop a parameter
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # litellm.acompletion builds the provider coroutine in a thread (run_in_executor); a call
    # cancelled meanwhile (Ctrl-C, --max-cost stop) leaves that coroutine unawaited, and
    # Python would print a RuntimeWarning about it at exit. Nothing was sent; nothing is lost.
    warnings.filterwarnings(
        "ignore", message=r"coroutine '.*acompletion' was never awaited", category=RuntimeWarning
    )
    return litellm


def model_price(litellm: ModuleType, settings: ModelSettings) -> Price | None:
    """The model's price: the user's --price, else LiteLLM's bundled map, else None."""
    if settings.price is not None:
        return settings.price
    try:
        info = litellm.get_model_info(settings.name)
    except Exception:  # noqa: BLE001 - LiteLLM raises several types for "not mapped"
        return None
    if not info or info.get("input_cost_per_token") is None:
        return None
    return Price(
        input_per_mtok=float(info["input_cost_per_token"]) * 1e6,
        output_per_mtok=float(info.get("output_cost_per_token") or 0.0) * 1e6,
    )


def required_price(litellm: ModuleType, settings: ModelSettings) -> Price:
    """The model's price, or ConfigError: a budget cannot be kept without one."""
    price = model_price(litellm, settings)
    if price is None:
        raise ConfigError(
            f"--max-cost needs a price, and LiteLLM has none for {settings.name}",
            hint="give one with --price IN,OUT (USD per million tokens)",
        )
    return price


def check_prices(models: list[ModelSettings]) -> None:
    """Raise ConfigError unless every model has a price (before a budgeted run starts)."""
    litellm = import_litellm()
    for settings in models:
        required_price(litellm, settings)


def retry_after_s(error: BaseException) -> float | None:
    """Seconds a provider asked us to wait (`retry-after-ms` or `retry-after`, seconds or an
    HTTP date), capped; None when it did not say.
    """
    headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if ms is not None:
            return min(float(ms) / 1000.0, MAX_RETRY_AFTER_S)
        if value is not None:
            return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(str(value)) if value else None
        if parsed is not None:
            return min(max(parsed.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER_S)
    return None


def backoff_s(retry: int) -> float:
    """Exponential backoff with full jitter: 0.5 s, 1 s, 2 s ... capped, randomised so a
    fleet of callers does not retry in lockstep.
    """
    return random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**retry))  # noqa: S311


class LiteLLMClient:
    """JudgeClient over `litellm.acompletion`, under Limits, with our own retry loop."""

    def __init__(
        self,
        models: list[ModelSettings],
        limits: Limits,
        *,
        max_retries: int,
        timeout_s: float,
        budget: BudgetGuard | None = None,
        secrets: list[str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._litellm = import_litellm()
        self._models = {m.name: m for m in models}
        self._limits = limits
        self._max_retries = max_retries
        self._timeout_s = timeout_s
        self._budget = budget
        self._secrets = secrets or []
        self._sleep = sleep
        self._retryable = self._retryable_errors()
        # Fixed for the run, yet asked before every call: decide once per model.
        self._count_tokens = limits.counts_tokens or budget is not None
        self._accepts_schema = {m.name: self._schema_support(m) for m in models}
        if budget is not None:
            self._prices = {m.name: required_price(self._litellm, m) for m in models}

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """No cache at this layer (see cached.CachedJudge)."""

    def _retryable_errors(self) -> tuple[type[BaseException], ...]:
        ll = self._litellm
        # 429, 5xx, timeouts and dropped connections; never 400/401/403/404.
        return (
            ll.RateLimitError,
            ll.Timeout,
            ll.APIConnectionError,
            ll.InternalServerError,
            ll.ServiceUnavailableError,
            ll.BadGatewayError,
            asyncio.TimeoutError,
        )

    def unpriced_models(self) -> list[str]:
        """Models with no user price and no entry in LiteLLM's price map (cost counts as 0)."""
        return [m.name for m in self._models.values() if model_price(self._litellm, m) is None]

    def accepts_schema(self, model: str) -> bool:
        """The settings' decision, else LiteLLM's model map."""
        return self._accepts_schema[model]

    def _schema_support(self, settings: ModelSettings) -> bool:
        decided = settings.schema_decision()
        if decided is not None:
            return decided
        return bool(self._litellm.supports_response_schema(model=settings.name))

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Call the judge, retrying transient errors; raise JudgeCallError when it gives up."""
        settings = self._models[request.model]
        tokens = self._estimate_tokens(request) if self._count_tokens else 0
        attempt = 0
        while True:
            attempt += 1
            estimate = spent = 0.0
            try:
                async with self._limits.slot(request.model, tokens):
                    # Reserved once in flight, so calls queueing for a slot hold no budget.
                    estimate = self._reserve(request, tokens)
                    started = time.monotonic()
                    response = await asyncio.wait_for(
                        self._send(request, settings), timeout=self._timeout_s + 5
                    )
                reply = self._reply(response, settings, time.monotonic() - started, attempt)
                spent = reply.cost_usd
            except self._retryable as err:
                if attempt > self._max_retries:
                    raise JudgeCallError(
                        f"{describe(err, self._secrets)} (gave up after {attempt} attempts)",
                        attempts=attempt,
                    ) from None
                wait = retry_after_s(err)
                if wait is not None:
                    self._limits.gate(request.model).pause(wait)
                await self._sleep(wait if wait is not None else backoff_s(attempt - 1))
                continue
            except JudgeError:
                raise  # our own stop (the budget): the run ends, the case is not failed
            except Exception as err:  # noqa: BLE001 - anything else is final: 4xx, bad config
                raise JudgeCallError(describe(err, self._secrets), attempts=attempt) from None
            finally:
                if self._budget is not None:
                    self._budget.settle(estimate, spent)
            return reply

    def _reserve(self, request: JudgeRequest, prompt_tokens: int) -> float:
        """Reserve the call's worst-case cost with the budget (0 without a budget)."""
        if self._budget is None:
            return 0.0
        price = self._prices[request.model]
        reply_tokens = request.max_tokens or 0
        prompt_only = max(prompt_tokens - reply_tokens, 0)
        estimate = price.cost(prompt_only, reply_tokens)
        self._budget.reserve(estimate)
        return estimate

    async def _send(self, request: JudgeRequest, settings: ModelSettings) -> Any:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            "temperature": request.temperature,
            "timeout": self._timeout_s,
            "max_retries": 0,
        }
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
        if settings.api_key is not None:
            kwargs["api_key"] = settings.api_key.get_secret_value()
        return await self._litellm.acompletion(**kwargs)

    def _reply(
        self, response: Any, settings: ModelSettings, latency: float, attempts: int
    ) -> JudgeReply:
        text = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        if settings.price is not None:
            cost = settings.price.cost(prompt_tokens, completion_tokens)
        else:
            hidden = getattr(response, "_hidden_params", None) or {}
            cost = float(hidden.get("response_cost") or 0.0)
        return JudgeReply(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_s=latency,
            attempts=attempts,
        )

    def _estimate_tokens(self, request: JudgeRequest) -> int:
        # For the TPM limiter: the prompt's tokens plus the most the reply may use.
        try:
            prompt = int(
                self._litellm.token_counter(model=request.model, messages=request.messages)
            )
        except Exception:  # noqa: BLE001 - an estimate; fall back to ~4 characters a token
            prompt = sum(len(m.get("content", "")) for m in request.messages) // 4
        return prompt + (request.max_tokens or 0)

    async def aclose(self) -> None:
        """Close LiteLLM's pooled HTTP clients before the event loop ends."""
        close = getattr(self._litellm, "close_litellm_async_clients", None)
        if close is not None:
            await close()


# Things that look like credentials, in case a provider echoes one we were not told about.
CREDENTIAL = re.compile(
    r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,}|key=[A-Za-z0-9_\-]{8,})"
)


def scrub(text: str, secrets: list[str]) -> str:
    """The text with every known secret and anything key-shaped masked: LiteLLM exceptions
    can echo request headers, and error messages end up in results.jsonl and logs.
    """
    for secret in secrets:
        text = text.replace(secret, "***")
    return CREDENTIAL.sub("***", text)


def describe(error: BaseException, secrets: list[str] | None = None) -> str:
    """A one-line description of a call error, without secrets or LiteLLM's help banners."""
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    message = str(getattr(error, "message", "") or error).strip().splitlines()
    first = message[0] if message else ""
    first = first.removeprefix("litellm.").split(" LiteLLM Retried")[0]
    text = f"{name}: {first}" if first and not first.startswith(name) else first or name
    return scrub(f"HTTP {status} {text}" if status else text, secrets or [])

"""The judge client: the only module that talks to LiteLLM.

LiteLLM is imported lazily (it takes ~3 s and would make `judge --help` slow) and only after
the environment switches that keep it offline and quiet are set. Retries are ours, not
LiteLLM's: its `num_retries` silently does nothing without tenacity, and with it retries
400s and ignores Retry-After (docs/ecosystem.md, "Retries"). So every call goes out with
`max_retries=0` and this module decides, per failure (failures.classify), whether to retry,
step down the response format (formats), pace (limits, pacing), or give up — and the
circuit breaker (breaker) stops the whole run when the endpoint cannot serve it. A halt
(halt) stops it sending when the run is asked to stop, and lets the calls in flight land.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from judgecli.errors import JudgeError
from judgecli.judge.breaker import CallFailure, CircuitBreaker
from judgecli.judge.budget import BudgetGuard
from judgecli.judge.failures import Endpoint, FailureKind, classify, describe, from_provider
from judgecli.judge.formats import FormatLadder, FormatMode, wire_format
from judgecli.judge.halt import Halt
from judgecli.judge.limits import Limits
from judgecli.judge.pacing import backoff_s
from judgecli.judge.protocol import JudgeCallError, JudgeReply, JudgeRequest
from judgecli.judge.provider import (
    close_clients,
    import_litellm,
    model_price,
    register_unpriced,
    required_price,
    warm_up,
)
from judgecli.judge.rate_headers import rate_limit_info, retry_after_s
from judgecli.judge.route import routes, through_sdk
from judgecli.judge.token_logprobs import LogprobsWatch, token_logprobs
from judgecli.settings.judges import ModelSettings
from judgecli.usage import CALLS_SENT, Tokens

# A refused connection or an unknown host is retried this often (the server may be
# starting), then the endpoint counts as unreachable.
UNREACHABLE_RETRIES = 2
# However patient 429 handling is while other calls get through, a call stops somewhere.
MAX_CALLS_PER_REQUEST = 100


def response_headers(response: Any) -> Mapping[str, str]:
    """The provider's HTTP headers of a reply (LiteLLM keeps them in its hidden params)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {}
    return headers if isinstance(headers, Mapping) else {}


def error_headers(error: BaseException) -> Mapping[str, str]:
    """The provider's HTTP headers of a failed call, where LiteLLM or the SDK kept them."""
    headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(error, "response", None), "headers", None)
    return headers if isinstance(headers, Mapping) else {}


@dataclass
class Sent:
    """What one HTTP call was sent with, decided once it had its turn."""

    mode: FormatMode = FormatMode.JSON_SCHEMA


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
        formats: dict[str, FormatMode] | None = None,
        halt: Halt | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._litellm = import_litellm()
        # How LiteLLM is called for each judge (route.py); the names stay the user's.
        self._routes = routes(self._litellm, models)
        warm_up(sdk=through_sdk(self._routes.values()))
        self._models = {m.name: m for m in models}
        self._limits = limits
        self._max_retries = max_retries
        self._timeout_s = timeout_s
        self._budget = budget
        self._secrets = secrets or []
        self._sleep = sleep
        # A first SIGTERM or Ctrl-C halts it: no new call, the ones in flight land (halt.py).
        self.halt = halt or Halt()
        self.breaker = CircuitBreaker()
        self._logprobs = LogprobsWatch(self._litellm, self._models, self.breaker)
        # Fixed for the run, yet asked before every call: decide once per model.
        self._count_tokens = limits.counts_tokens or budget is not None
        self._accepts_schema = {m.name: self._schema_support(m) for m in models}
        # A model asked for no structured output (--no-json-schema, or LiteLLM says it has
        # none) is in prompt-only mode from the start, and run.json says so.
        start = formats or {}
        self.ladder = FormatLadder(
            {
                m.name: start.get(m.name, FormatMode.JSON_SCHEMA)
                if self._accepts_schema[m.name]
                else FormatMode.PROMPT
                for m in models
            }
        )
        if budget is not None:
            self._prices = {m.name: required_price(self._litellm, m) for m in models}
        register_unpriced(self._litellm, models)

    def remember(self, request: JudgeRequest, reply: JudgeReply) -> None:
        """No cache at this layer (see cached.CachedJudge)."""

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
        """Call the judge until it replies; raise JudgeCallError when this call cannot
        succeed, or JudgeUnavailableError (via the breaker) when no call can — or, asked for
        logprobs, ConfigError when the judge gives none (token_logprobs.LogprobsWatch).
        """
        model = request.model
        gate = self._limits.gate(model)
        tokens = self._estimate_tokens(request) if self._count_tokens else 0
        calls = retries = unreachable = 0
        replies_seen = gate.replies
        if request.top_logprobs:
            self._logprobs.before_call(model)
        while True:
            self.breaker.check()
            calls += 1
            sent = Sent()
            try:
                reply = await self._call(request, tokens, sent)
            except JudgeError:
                raise  # our own stops (budget, breaker): the run ends, the case is not failed
            except Exception as err:  # noqa: BLE001 - classified below, nothing is swallowed
                if not from_provider(err):
                    raise  # a bug of ours: a crash with its traceback, not an outage
                if request.top_logprobs:
                    self._logprobs.refused(model, describe(err, self._secrets))
                with_format = wire_format(sent.mode, request.response_format) is not None
                kind = classify(err, sent_format=with_format)
                if kind is FailureKind.FORMAT and self.ladder.step_down(
                    model, sent.mode, describe(err, self._secrets)
                ):
                    continue
                if kind is FailureKind.RATE_LIMITED:
                    headers = error_headers(err)
                    wait = retry_after_s(headers)
                    gate.rate_limited(rate_limit_info(headers), wait)
                    # A 429 while other calls of this model get replies is queueing, not
                    # failure: only a 429 with no progress anywhere uses up a retry.
                    retries += gate.replies == replies_seen
                    replies_seen = gate.replies
                    if retries <= self._max_retries and calls < MAX_CALLS_PER_REQUEST:
                        await self._pause(wait if wait is not None else backoff_s(retries))
                        continue
                elif kind is FailureKind.TRANSIENT and retries < self._max_retries:
                    retries += 1
                    await self._pause(backoff_s(retries - 1))
                    continue
                elif kind is FailureKind.UNREACHABLE and unreachable < UNREACHABLE_RETRIES:
                    unreachable += 1
                    await self._pause(backoff_s(unreachable - 1))
                    continue
                raise self._give_up(err, kind, self._models[model], calls) from None
            self.breaker.success()
            if request.top_logprobs and (missing := self._logprobs.replied(model, reply.logprobs)):
                raise JudgeCallError(missing, attempts=calls)
            return reply.model_copy(update={"attempts": calls})

    def _give_up(
        self, error: BaseException, kind: FailureKind, settings: ModelSettings, calls: int
    ) -> JudgeCallError:
        """The error this call ends with, after telling the breaker (which may stop the run
        instead, by raising).
        """
        text = describe(error, self._secrets)
        self.breaker.failure(
            CallFailure(
                kind=kind,
                status=getattr(error, "status_code", None),
                text=text,
                endpoint=Endpoint(model=settings.name, api_base=settings.api_base),
            )
        )
        suffix = f" (gave up after {calls} attempts)" if calls > 1 else ""
        return JudgeCallError(text + suffix, attempts=calls)

    async def _call(self, request: JudgeRequest, tokens: int, sent: Sent) -> JudgeReply:
        """One HTTP call under the limits and the budget; `sent` records its format."""
        settings = self._models[request.model]
        gate = self._limits.gate(request.model)
        async with self._limits.slot(request.model, tokens):
            self.breaker.check()  # it may have tripped while this call waited for its turn
            # Read now, not before the wait: the probe may have stepped the format down.
            mode = sent.mode = self.ladder.mode(request.model)
            estimate = await self._reserve(request, tokens)
            spent = 0.0
            try:
                # Last, after every wait: a call that waited for its turn while the run
                # was halted is never sent.
                self.halt.check()
                call = self._count_call()
                started = time.monotonic()
                with self.halt.sending():
                    response = await asyncio.wait_for(
                        self._send(request, settings, mode), timeout=self._timeout_s + 5
                    )
                latency = time.monotonic() - started
                reply = self._reply(response, settings, latency, mode, bool(request.top_logprobs))
                spent = reply.cost_usd
                call.add_tokens(reply)
            finally:
                if estimate is not None and self._budget is not None:
                    self._budget.settle(estimate, spent)
        gate.replied(rate_limit_info(response_headers(response)))
        return reply

    @staticmethod
    def _count_call() -> Tokens:
        """One call going out, entered in its case's account (usage.CALLS_SENT) if the
        runner keeps one: its reply's tokens and cost are added to the entry returned.
        """
        call = Tokens()
        sent = CALLS_SENT.get()
        if sent is not None:
            sent.append(call)
        return call

    async def _pause(self, seconds: float) -> None:
        """Wait before a retry; a halted run ends the wait with Halted (a retry is a call)."""
        await self.halt.pause(self._sleep(seconds))

    async def _reserve(self, request: JudgeRequest, prompt_tokens: int) -> float | None:
        """Reserve the call's worst-case cost with the budget (None without a budget)."""
        if self._budget is None:
            return None
        price = self._prices[request.model]
        reply_tokens = request.max_tokens or 0
        prompt_only = max(prompt_tokens - reply_tokens, 0)
        estimate = price.cost(prompt_only, reply_tokens)
        await self._budget.reserve(estimate)
        return estimate

    async def _send(self, request: JudgeRequest, settings: ModelSettings, mode: FormatMode) -> Any:
        way = self._routes[request.model]
        kwargs: dict[str, Any] = {
            "model": way.model,
            "messages": request.messages,
            "temperature": request.temperature,
            "timeout": self._timeout_s,
            "max_retries": 0,
        }
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        response_format = wire_format(mode, request.response_format)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if request.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
        if way.api_key is not None:
            kwargs["api_key"] = way.api_key
        return await self._litellm.acompletion(**kwargs)

    def _reply(
        self,
        response: Any,
        settings: ModelSettings,
        latency: float,
        mode: FormatMode,
        with_logprobs: bool,
    ) -> JudgeReply:
        choice = response.choices[0]
        message = choice.message
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        if settings.price is not None:
            cost = settings.price.cost(prompt_tokens, completion_tokens)
        else:
            hidden = getattr(response, "_hidden_params", None) or {}
            cost = float(hidden.get("response_cost") or 0.0)
        reasoning = getattr(message, "reasoning_content", None)
        return JudgeReply(
            text=message.content or "",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_s=latency,
            finish_reason=getattr(choice, "finish_reason", None),
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            format_mode=mode.value,
            logprobs=token_logprobs(getattr(choice, "logprobs", None)) if with_logprobs else None,
        )

    def _estimate_tokens(self, request: JudgeRequest) -> int:
        # For the TPM limiter and the budget: the prompt's tokens plus the most the reply may use.
        try:
            # An image is counted at LiteLLM's default: its exact count for detail "high"
            # would download an http(s) image from this process (issue 32).
            prompt = int(
                self._litellm.token_counter(
                    model=request.model,
                    messages=request.messages,
                    use_default_image_token_count=True,
                )
            )
        except Exception:  # noqa: BLE001 - an estimate; fall back to ~4 characters a token
            prompt = sum(len(m.get("content", "")) for m in request.messages) // 4
        return prompt + (request.max_tokens or 0)

    async def aclose(self) -> None:
        """Close LiteLLM's pooled HTTP clients before the event loop ends."""
        await close_clients(self._litellm)

"""Client-side limits: calls in flight, requests and tokens per minute, and 429 back-off.

Three traps of aiolimiter shape this module (ECOSYSTEM.md §2): a bucket starts empty, so
`AsyncLimiter(rpm, 60)` lets a whole minute's budget burst at once — we pace over a ~1 s
window instead; `acquire(amount)` raises when amount exceeds the bucket — we clamp; and
waiters are served smallest-first, so a large prompt could starve — a FIFO lock makes
callers take their turn in arrival order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiolimiter import AsyncLimiter

from judgecli.errors import BudgetExceededError


def paced_limiter(per_minute: float) -> AsyncLimiter:
    """A limiter that never allows more than `per_minute` in any 60-second window, with
    bursts of at most one second's budget.

    A leaky bucket of capacity c draining at r per second admits at most c + 60·r in a
    minute, so the drain rate is (per_minute - c) / 60 — 1.7% under the nominal rate, the
    price of never tripping a provider's per-minute counter. A bucket of one unit spaces
    calls exactly 60/per_minute apart instead (slow rates, rpm < 120).
    """
    capacity = max(1.0, per_minute / 60.0)
    budget = per_minute if capacity <= 1.0 else per_minute - capacity
    per_second = budget / 60.0
    return AsyncLimiter(capacity, capacity / per_second)


class RateGate:
    """Paces one model's calls under its rpm/tpm limits, and holds them all after a 429.

    Must be created inside the running event loop (aiolimiter binds to the first loop).
    """

    def __init__(self, *, rpm: float | None, tpm: float | None) -> None:
        self._requests = paced_limiter(rpm) if rpm else None
        self._tokens = paced_limiter(tpm) if tpm else None
        self._fifo = asyncio.Lock()
        self._paused_until = 0.0

    async def acquire(self, tokens: int) -> None:
        """Wait for this call's turn; `tokens` is the call's estimated token use."""
        loop = asyncio.get_running_loop()
        async with self._fifo:
            # Re-check after each sleep: another call may have hit a 429 meanwhile.
            while (delay := self._paused_until - loop.time()) > 0:
                await asyncio.sleep(delay)
            if self._tokens is not None:
                await self._tokens.acquire(min(float(max(tokens, 1)), self._tokens.max_rate))
            if self._requests is not None:
                await self._requests.acquire()

    def pause(self, seconds: float) -> None:
        """Hold every call of this model for `seconds` (a provider's Retry-After), so one
        429 slows the whole fleet instead of each waiter hitting the wall in turn.
        """
        until = asyncio.get_running_loop().time() + seconds
        self._paused_until = max(self._paused_until, until)


class Limits:
    """The in-flight cap shared by all judges, plus a RateGate per model."""

    def __init__(self, *, concurrency: int, rpm: float | None, tpm: float | None) -> None:
        self._slots = asyncio.Semaphore(concurrency)
        self._rpm = rpm
        self._tpm = tpm
        self._gates: dict[str, RateGate] = {}

    @property
    def counts_tokens(self) -> bool:
        """Whether calls need a token estimate (only a TPM limit uses one)."""
        return self._tpm is not None

    def gate(self, model: str) -> RateGate:
        """The model's gate, created on first use."""
        if model not in self._gates:
            self._gates[model] = RateGate(rpm=self._rpm, tpm=self._tpm)
        return self._gates[model]

    @asynccontextmanager
    async def slot(self, model: str, tokens: int) -> AsyncIterator[None]:
        """Hold an in-flight slot and pass the model's rate gate for one call."""
        async with self._slots:
            await self.gate(model).acquire(tokens)
            yield


class BudgetGuard:
    """Stops a run before its spend would pass the cap (--max-cost).

    Each call reserves its worst-case cost (the prompt's tokens plus max_tokens of reply,
    at the model's price) before it is sent, so calls in flight together can never pass
    the cap; the reservation is replaced by the actual cost when the reply arrives.
    """

    def __init__(self, cap_usd: float, *, spent_usd: float = 0.0) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = spent_usd
        self._reserved = 0.0

    def reserve(self, estimate_usd: float) -> None:
        """Claim room for one call, or raise BudgetExceededError."""
        if self.spent_usd + self._reserved + estimate_usd > self.cap_usd:
            raise BudgetExceededError(
                f"stopped before passing --max-cost ${self.cap_usd:g}: ${self.spent_usd:.4f} "
                f"spent, the next call could cost up to ${estimate_usd:.4f}",
                hint="resume with a higher cap: judge resume RUN_DIR --max-cost USD",
            )
        self._reserved += estimate_usd

    def settle(self, estimate_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call actually cost (0 when it failed)."""
        self._reserved -= estimate_usd
        self.spent_usd += actual_usd

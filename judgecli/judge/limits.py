"""Client-side limits: calls in flight, the pace of requests and tokens per model, and the
hold after a 429.

Each model has one RateGate, shared by every call to it:
- the first call goes alone (the probe): a dead endpoint, a refused response format or a
  key at its limit then shows on one call, not on `concurrency` calls at once, and the
  client's one-off warm-up is paid before the others start;
- the call that got a 429 waits its Retry-After (the client does); every call of the
  model waits it too only when the 429 is systematic — no reply yet, only 429s for a
  Retry-After with nothing in flight, headers saying nothing remains, or most calls refused
  (pacing.AdaptiveRate.systematic) —, and when that hold ends calls leave one by one at the
  model's pace, not all at once. An isolated 429 among replies stalls no other call:
  holding every call for each of an overloaded provider's random 429s stalled the run
  (issue 19);
- requests are spaced evenly at the pace pacing.AdaptiveRate sets (the user's --rpm, the
  provider's headers, or what its 429s taught) — no burst at the start, which against a
  key already at its limit is a burst of 429s;
- tokens (--tpm) go through aiolimiter, paced over one-second windows. Two traps of
  aiolimiter shape that part (docs/ecosystem.md, "aiolimiter"): a bucket starts empty, so
  `AsyncLimiter(tpm, 60)` would let a whole minute's budget burst at once; and
  `acquire(amount)` raises when amount exceeds the bucket, so it is clamped. A FIFO lock
  makes callers take their turn in arrival order (aiolimiter serves small requests first).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from aiolimiter import AsyncLimiter

from judgecli.judge.pacing import AdaptiveRate
from judgecli.judge.rate_headers import RateLimitInfo

# --rpm is paced 1% under: evenly spaced calls at exactly rpm/60 per second put rpm + 1 in
# a closed 60-second window, and some providers count that way.
RPM_MARGIN = 0.99


def paced_limiter(per_minute: float) -> AsyncLimiter:
    """A limiter that never allows more than `per_minute` in any 60-second window, with
    bursts of at most one second's budget.

    A leaky bucket of capacity c draining at r per second admits at most c + 60·r in a
    minute, so the drain rate is (per_minute - c) / 60 — 1.7% under the nominal rate, the
    price of never tripping a provider's per-minute counter. A bucket of one unit spaces
    calls exactly 60/per_minute apart instead (slow rates, under 120 a minute).
    """
    capacity = max(1.0, per_minute / 60.0)
    budget = per_minute if capacity <= 1.0 else per_minute - capacity
    per_second = budget / 60.0
    return AsyncLimiter(capacity, capacity / per_second)


class RateGate:
    """Paces one model's calls. Create inside the running event loop (aiolimiter binds to
    the first loop it sees). `clock` and `sleep` default to the loop's; tests pass a fake
    pair (every wait happens under the FIFO lock, one at a time, so a fake sleep that
    advances a fake clock measures exactly what the real one would).
    """

    def __init__(
        self,
        *,
        rpm: float | None,
        tpm: float | None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.pace = AdaptiveRate(ceiling=rpm / 60.0 * RPM_MARGIN if rpm else None)
        self._tokens = paced_limiter(tpm) if tpm else None
        self._clock = clock or asyncio.get_running_loop().time
        self._sleep = sleep
        self._fifo = asyncio.Lock()
        self._paused_until = 0.0
        self._next_send = float("-inf")
        self._opened = asyncio.Event()
        self._probing = False
        self.replies = 0
        """Calls of this model that got a reply: a 429 while others get replies is queueing,
        not failure."""
        self.in_flight = 0
        """Calls of this model sent and not yet answered."""

    async def acquire(self, tokens: int) -> None:
        """Wait for this call's turn; `tokens` is the call's estimated token use."""
        if not self._opened.is_set():
            if self._probing:
                await self._opened.wait()
            self._probing = True  # the first call is the probe: it goes alone
        async with self._fifo:
            # Re-check after each sleep: another call may have hit a 429 meanwhile.
            while (delay := self._paused_until - self._clock()) > 0:
                await self._sleep(delay)
            if self._tokens is not None:
                await self._tokens.acquire(min(float(max(tokens, 1)), self._tokens.max_rate))
            rate = self.pace.rate
            now = self._clock()
            start = max(now, self._next_send)
            self._next_send = start + (1.0 / rate if rate else 0.0)
            if start > now:
                await self._sleep(start - now)

    def open(self) -> None:
        """A call finished (however): the others may go."""
        self._opened.set()

    def replied(self, info: RateLimitInfo) -> None:
        """A call got a reply; its rate-limit headers may set the pace."""
        self.replies += 1
        self.pace.on_reply(self._clock(), info, in_flight=self.in_flight)

    def rate_limited(self, info: RateLimitInfo, retry_after: float | None) -> None:
        """A call got a 429 (and waits its Retry-After): slow the pace, and when the 429s
        are systematic hold every call of this model for the Retry-After too, so a key at
        its limit does not get a storm of them.
        """
        now = self._clock()
        systematic = self.pace.on_rate_limited(now, info, retry_after, in_flight=self.in_flight)
        if systematic and retry_after:
            self._paused_until = max(self._paused_until, now + retry_after)


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
        """Hold an in-flight slot and pass the model's rate gate for one call; the gate
        opens for the others once this call is over, however it ended.
        """
        gate = self.gate(model)
        async with self._slots:
            try:
                await gate.acquire(tokens)
                gate.in_flight += 1
                try:
                    yield
                finally:
                    gate.in_flight -= 1
            finally:
                gate.open()

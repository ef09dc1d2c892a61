"""The spending cap (--max-cost): never pass it, and never stop short of it for no reason.

Each call reserves its worst-case cost (the prompt's tokens plus max_tokens of reply, at
the model's price) before it is sent, so calls in flight together can never pass the cap;
the reservation becomes the actual cost when the reply arrives. A call whose reservation
does not fit waits for the calls in flight to settle (they usually cost far less than
their worst case) and only when nothing is in flight and it still does not fit is the run
stopped: at --concurrency 8 the old rule ("refuse when spent + reserved + next > cap")
stopped runs before their first case.
"""

from __future__ import annotations

import asyncio

from judgecli.errors import BudgetExceededError


class BudgetGuard:
    """Reservations against the cap, shared by every call of a run (create in the loop)."""

    def __init__(self, cap_usd: float, *, spent_usd: float = 0.0) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = spent_usd
        self._reserved = 0.0
        self._in_flight = 0
        self._settled = asyncio.Event()
        self._stop: BudgetExceededError | None = None

    async def reserve(self, estimate_usd: float) -> None:
        """Claim room for one call, waiting for calls in flight to settle; raise
        BudgetExceededError when it cannot fit even with nothing in flight.
        """
        while self.spent_usd + self._reserved + estimate_usd > self.cap_usd:
            if self._stop is None and self._in_flight == 0:
                self._stop = BudgetExceededError(
                    f"stopped at ${self.spent_usd:.4f} of --max-cost ${self.cap_usd:g}: the "
                    f"next call could cost up to ${estimate_usd:.4f}",
                    hint="resume with a higher cap: judge resume RUN_DIR --max-cost USD",
                )
            if self._stop is not None:
                raise self._stop
            self._settled.clear()
            await self._settled.wait()
        self._reserved += estimate_usd
        self._in_flight += 1

    def settle(self, estimate_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call actually cost (0 when it failed)."""
        self._reserved = max(self._reserved - estimate_usd, 0.0)
        self._in_flight -= 1
        if self._in_flight == 0:
            self._reserved = 0.0  # no rounding residue when nothing is in flight
        self.spent_usd += actual_usd
        self._settled.set()

"""The run's word to send no new call: a first SIGTERM or Ctrl-C (runner.py) halts the
judge client, and the calls already sent get a grace to land.

A call in flight has been sent, so the provider bills it whatever happens next. Cut off, its
reply is lost and `judge resume` pays for it again (the review counted 516 requests for 500
cases after one SIGTERM). Halted, the client sends nothing more (a retry, a repair turn, the
other order of a pair: each is a new call, refused with `Halted`), while each call in flight
lands as usual: its valid reply goes into the reply cache, and a case it completes into
results.jsonl. The runner bounds the wait (GRACE_S) and ends it early once nothing is in
flight (`idle`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager

from judgecli.errors import RunInterruptedError

GRACE_S = 5.0
"""After a first SIGTERM or Ctrl-C: the longest the calls in flight may take to land before
they are cut off (docs/endpoints.md). A judge answers in well under that as a rule; a slower
one's calls cut off are counted, and a resume pays for them again."""
SETTLE_S = 0.5
"""Once no call is in flight: how long the cases whose replies came in may take to finish.
They need no call (parse, cache, write a line): milliseconds, even on a busy machine."""
SAVED = "finished cases are saved in results.jsonl"


class Halted(RunInterruptedError):
    """A call refused because the run is stopping (a signal came): the case is left for
    `judge resume`, and the cases in flight finish (the stop drains, as the budget's does).
    """

    drains = True


class Halt:
    """Whether the run may still send calls, and how many it has in flight now.

    Made outside any event loop is fine: its events bind to the loop that first waits on
    them (one run_sync, one loop).
    """

    def __init__(self) -> None:
        self.reason: str | None = None
        """What stopped the run ("stopped by SIGTERM", "interrupted"); None while it runs."""
        self.in_flight = 0
        self.cut_off = 0
        """Calls still in flight when the grace ended (the runner cut them off)."""
        self._halted = asyncio.Event()
        self._idle = asyncio.Event()

    @property
    def halted(self) -> bool:
        """Whether new calls are refused."""
        return self.reason is not None

    def halt(self, reason: str) -> None:
        """Refuse every new call from now on (the first reason stays)."""
        if self.reason is not None:
            return
        self.reason = reason
        self._halted.set()
        if self.in_flight == 0:
            self._idle.set()

    def error(self) -> Halted:
        """The error the run ends with (call once halted)."""
        message = f"{self.reason}: {SAVED}"
        if self.cut_off:
            message += (
                f"; {self.cut_off} call(s) still in flight after {GRACE_S:g} s were cut off "
                "(a resume pays for them again)"
            )
        return Halted(message)

    def check(self) -> None:
        """Before a call is sent: Halted if the run is stopping."""
        if self.reason is not None:
            raise self.error()

    @contextmanager
    def sending(self) -> Iterator[None]:
        """Around one call on the wire: counted in flight until its reply (or error) is in."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            if self.in_flight == 0 and self.reason is not None:
                self._idle.set()

    async def wait_halted(self) -> None:
        """Until the run is halted."""
        await self._halted.wait()

    async def wait_idle(self) -> None:
        """Until the run is halted and no call is in flight any more."""
        await self._idle.wait()

    async def pause(self, wait: Awaitable[None]) -> None:
        """Await a wait before a retry (a backoff, a Retry-After); a halt ends it at once
        with Halted, since the retry would be a new call.
        """
        self.check()
        waiting = asyncio.ensure_future(wait)
        halting = asyncio.ensure_future(self._halted.wait())
        try:
            await asyncio.wait({waiting, halting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            halting.cancel()
            if not waiting.done():
                waiting.cancel()
        self.check()
        waiting.result()  # the wait's own error, if it had one

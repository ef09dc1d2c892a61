"""The one event loop the Python API judges on: a daemon thread of its own, started on
first use and shared by every Judge and every job of the process.

One loop, because LiteLLM binds process-wide state to one loop at a time: its logging
worker's queue follows the loop that last used it, and its pooled HTTP clients are closed
all at once at the end of a run. Two loops judging at once in one process (a job in one
thread, a Judge in another) broke each other's calls (measured: "Queue is bound to a
different event loop", and "Connection error" on a client another loop had closed). So
every call is made on this loop, from whichever thread or loop asked for it: a synchronous
call waits for its result, `agrade` awaits it, a job's run is judged here
(`running.fan_out.SHARED_LOOP`). Its clients stay open between runs (`judge.provider.
LASTING_LOOPS`) and close when the process exits.

It also means a synchronous call works where a loop already runs in the caller's thread
(Jupyter runs one in the kernel's thread, where `asyncio.run` refuses to start another).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from judgecli.running.fan_out import SharedLoop

T = TypeVar("T")
IDLE_S = 1.0
"""Idle time after which the loop settles LiteLLM's logging worker."""


class EngineLoop:
    """The API's event loop, run by a daemon thread from its first use to the process's
    exit.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._busy = 0
        """Units of work running on the loop now (read and written on the loop only)."""
        self._idle: asyncio.TimerHandle | None = None
        """The settling of LiteLLM's logging worker, due once the loop has been idle."""

    def shared(self) -> SharedLoop:
        """The loop, as the spine's runs take it (started if need be)."""
        return EngineShared(self.loop(), os.getpid(), self)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the loop and wait for its result (its exception raised here). An
        interrupt of the wait (Ctrl-C) cancels the work.
        """
        if self.on_loop():
            work.close()
            raise RuntimeError(
                "a synchronous judgecli call from code running on judgecli's own event loop "
                "would wait for itself: await the async method (agrade, acompare) there"
            )
        return self.shared().run(work)

    async def run_async(self, work: Coroutine[Any, Any, T]) -> T:
        """Await `work` run on the loop, from any loop (at once when already on it)."""
        loop = self.loop()
        if self.on_loop():
            return await work
        future = asyncio.run_coroutine_threadsafe(self.tracked(work), loop)
        return await asyncio.wrap_future(future)

    async def tracked(self, work: Coroutine[Any, Any, T]) -> T:
        """`work`, counted while it runs on the loop: once nothing has run there for
        IDLE_S, LiteLLM's logging worker is settled (judge.provider.settle_logging; at
        once it would cost every call ~50 ms).
        """
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        self._busy += 1
        try:
            return await work
        finally:
            self._busy -= 1
            if self._busy == 0:
                loop = asyncio.get_running_loop()
                self._idle = loop.call_later(IDLE_S, lambda: loop.create_task(settle()))

    def on_loop(self) -> bool:
        """Whether the caller runs on the engine's loop (in its thread)."""
        return threading.current_thread() is self._thread

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, its thread started on first use (again in a forked process)."""
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                self._loop, self._thread = start_loop()
                self._pid = os.getpid()
                atexit.register(self.stop)
            return self._loop

    def stop(self) -> None:
        """Close the loop's pooled HTTP clients, then stop it (at exit)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None or self._pid != os.getpid():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(wind_down(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()


@dataclass(frozen=True)
class EngineShared(SharedLoop):
    """The engine's loop as a SharedLoop whose work is counted (EngineLoop.tracked)."""

    engine: EngineLoop

    def run(self, main: Coroutine[Any, Any, T]) -> T:  # noqa: D102
        return super().run(self.engine.tracked(main))


async def settle() -> None:
    """Settle LiteLLM's logging worker, if LiteLLM was ever imported."""
    import sys

    if "litellm" in sys.modules:
        from judgecli.judge.provider import settle_logging

        await settle_logging()


def start_loop() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """A new event loop, running in a new daemon thread."""
    from judgecli.judge.provider import LASTING_LOOPS

    loop = asyncio.new_event_loop()
    LASTING_LOOPS.add(loop)
    ready: Future[None] = Future()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set_result, None)
        loop.run_forever()

    thread = threading.Thread(target=serve, name="judgecli-engine", daemon=True)
    thread.start()
    ready.result()
    return loop, thread


async def wind_down() -> None:
    """Close LiteLLM's pooled HTTP clients (if it was ever imported), then cancel what is
    left on the loop (LiteLLM's logging worker waits there for ever): a task destroyed
    while pending would be reported at exit.
    """
    import sys

    if "litellm" in sys.modules:
        from judgecli.judge.provider import close_clients

        await close_clients(sys.modules["litellm"], final=True)
    left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


ENGINE = EngineLoop()
"""The process's one engine loop."""

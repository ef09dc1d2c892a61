"""The runner: async fan-out over cases with bounded memory and clean stops.

A producer feeds a small queue from the case iterator (so a million-line dataset is never
held in memory) and `concurrency` workers grade cases from it; each finished case is
handed to the sink (the store appends it to results.jsonl at once) and to the event
listener (the progress bar).

Stops: a stop that drains (the budget, the failure limit, a sequential gate that has
decided) lets the cases in flight finish — their calls are paid for, so their verdicts are
kept and cached — and takes no new ones;
any other (the judge unreachable) cancels them at once. Ctrl-C and SIGTERM (what CI
cancellation, `timeout` and `docker stop` send) cancel in-flight calls; what finished is
already on disk, and the run ends with RunInterruptedError (exit 3) so it can be resumed.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol, TypeVar

from judgecli.errors import RunIncompleteError, RunInterruptedError, TooManyFailuresError
from judgecli.result import CaseResult, CaseStatus
from judgecli.startup import resume_gc

T = TypeVar("T")


class ResultSink(Protocol):
    """Where finished cases go (the run store)."""

    def append_result(self, result: CaseResult) -> None:
        """Persist one case result."""
        ...


class RunEvents(Protocol):
    """What the runner reports while it works (the CLI draws a progress bar from it)."""

    def case_done(self, result: CaseResult) -> None:
        """A case finished, ok or failed."""
        ...


@dataclass
class RunTally:
    """How many cases ended each way, and the first failure's reason."""

    ok: int = 0
    failed: int = 0
    first_error: str | None = None

    def count(self, result: CaseResult) -> None:
        """Count one finished case."""
        if result.status is CaseStatus.OK:
            self.ok += 1
        else:
            self.failed += 1
            self.first_error = self.first_error or result.error


async def run_cases(
    items: Iterable[T],
    grade: Callable[[T], Awaitable[CaseResult]],
    *,
    concurrency: int,
    sink: ResultSink,
    events: RunEvents,
    failures_allowed: int | None = None,
    failed_before: int = 0,
    done: Callable[[], bool] | None = None,
) -> RunTally:
    """Grade every item with at most `concurrency` cases in flight.

    `failures_allowed`: the most failed cases the whole run may end with (--max-failures
    over every case of the run); once more have failed (`failed_before` counts a resumed
    run's), no outcome can pass, so the run stops with TooManyFailuresError.
    `done`: asked before each new case; once it says True (a sequential gate has decided)
    no new case starts, the cases in flight finish, and the run ends normally.
    """
    finished = done or (lambda: False)
    queue: asyncio.Queue[T | None] = asyncio.Queue(maxsize=2 * concurrency)
    tally = RunTally()
    stops: list[RunIncompleteError] = []

    async def produce() -> None:
        for item in items:
            if finished():
                break
            await queue.put(item)
        for _ in range(concurrency):
            await queue.put(None)

    async def work() -> None:
        while not stops and not finished():
            item = await queue.get()
            if item is None or finished():
                return
            try:
                result = await grade(item)
            except RunIncompleteError as err:
                stops.append(err)
                if not err.drains:
                    raise  # cancels the other workers at once
                return
            sink.append_result(result)
            tally.count(result)
            events.case_done(result)
            failed = failed_before + tally.failed
            if failures_allowed is not None and failed > failures_allowed and not stops:
                stops.append(
                    TooManyFailuresError(
                        f"stopped: {failed} cases failed, more than --max-failures allows "
                        f"({failures_allowed}); first error: {tally.first_error}"
                    )
                )

    producer = asyncio.create_task(produce())
    workers = [asyncio.create_task(work()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in [producer, *workers]:
            task.cancel()
        await asyncio.gather(producer, *workers, return_exceptions=True)
    if stops:
        raise stops[0]
    return tally


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: handled exactly as Ctrl-C (KeyboardInterrupt) is."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM interrupts like Ctrl-C; the old handler comes back after.
    Signal handlers can only be set from the main thread; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_sync(main: Coroutine[Any, Any, T]) -> T:
    """Run the async job to completion; Ctrl-C or SIGTERM becomes RunInterruptedError
    (exit 3).
    """
    resume_gc()  # start-up is over: the long-lived work collects its garbage again
    try:
        with sigterm_as_interrupt():
            return asyncio.run(main)
    except Terminated:
        raise RunInterruptedError(
            "stopped by SIGTERM: finished cases are saved in results.jsonl"
        ) from None
    except KeyboardInterrupt:
        raise RunInterruptedError(
            "interrupted: finished cases are saved in results.jsonl"
        ) from None

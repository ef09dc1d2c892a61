"""The runner: async fan-out over cases with bounded memory and clean stops.

A producer feeds a small queue from the case iterator (so a million-line dataset is never
held in memory) and `concurrency` workers grade cases from it; each finished case is
handed to the sink (the store appends it to results.jsonl at once) and to the event
listener (the progress bar). Ctrl-C cancels in-flight calls; what finished is already on
disk, and the run ends with RunInterruptedError (exit 3) so `--resume` can continue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from judgecli.config import FailureLimit
from judgecli.errors import RunInterruptedError, TooManyFailuresError
from judgecli.result import CaseResult, CaseStatus

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
    failure_limit: FailureLimit | None = None,
) -> RunTally:
    """Grade every item with at most `concurrency` cases in flight; stop with
    TooManyFailuresError when the failure limit is passed (results so far are kept).
    """
    queue: asyncio.Queue[T | None] = asyncio.Queue(maxsize=2 * concurrency)
    tally = RunTally()

    async def produce() -> None:
        for item in items:
            await queue.put(item)
        for _ in range(concurrency):
            await queue.put(None)

    async def work() -> None:
        while (item := await queue.get()) is not None:
            result = await grade(item)
            sink.append_result(result)
            tally.count(result)
            events.case_done(result)
            done = tally.ok + tally.failed
            if failure_limit is not None and failure_limit.exceeded(tally.failed, done):
                raise TooManyFailuresError(
                    f"stopped: {tally.failed} of {done} cases failed (--max-failures "
                    f"{failure_limit}); first error: {tally.first_error}"
                )

    tasks = [asyncio.create_task(produce())]
    tasks += [asyncio.create_task(work()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return tally


def run_sync(main: Coroutine[Any, Any, T]) -> T:
    """Run the async job to completion; Ctrl-C becomes RunInterruptedError (exit 3)."""
    try:
        return asyncio.run(main)
    except KeyboardInterrupt:
        raise RunInterruptedError(
            "interrupted: finished cases are saved in results.jsonl"
        ) from None

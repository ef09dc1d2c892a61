"""The runner: async fan-out over cases with bounded memory and clean stops.

A producer feeds a small queue from the case iterator (so a million-line dataset is never
held in memory) and `concurrency` workers grade cases from it; each finished case is
handed to the sink (the store appends it to results.jsonl at once) and to the event
listener (the progress bar).

Stops: a stop that drains (the budget, the failure limit, a sequential gate that has
decided) lets the cases in flight finish — their calls are paid for, so their verdicts are
kept and cached — and takes no new ones;
any other (the judge unreachable) cancels them at once. Ctrl-C and SIGTERM (what CI
cancellation, `timeout` and `docker stop` send) stop it as a drain does, within a bound:
no new case or call starts, and the calls in flight get GRACE_S seconds to land (their
replies in the reply cache, the cases they complete in results.jsonl) before they are cut
off; a second signal ends the run at once. Either way the run ends with RunInterruptedError
(exit 3) and can be resumed, and the calls of the cases that did not finish are counted
(usage.CallSpend): no result line holds them, yet they were billed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol, TypeVar

from judgecli.errors import RunIncompleteError, RunInterruptedError, TooManyFailuresError
from judgecli.gc_pause import resume_gc
from judgecli.judge.halt import GRACE_S, SAVED, SETTLE_S, Halt
from judgecli.result import CaseResult, CaseStatus
from judgecli.running.relayed_stops import StopRelay
from judgecli.usage import CALLS_SENT, CallSpend, Tokens

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
    halt: Halt | None = None,
    unfinished: CallSpend | None = None,
) -> RunTally:
    """Grade every item with at most `concurrency` cases in flight.

    `failures_allowed`: the most failed cases the whole run may end with (--max-failures
    over every case of the run); once more have failed (`failed_before` counts a resumed
    run's), no outcome can pass, so the run stops with TooManyFailuresError.
    `done`: asked before each new case; once it says True (a sequential gate has decided)
    no new case starts, the cases in flight finish, and the run ends normally.
    `halt`: the judge client's (run_sync halts it at a first signal): no new case starts,
    the calls in flight get GRACE_S to land, then the run ends with Halted.
    `unfinished`: where the calls of cases that did not finish are counted (usage.CallSpend).
    """
    finished = done or (lambda: False)
    queue: asyncio.Queue[T | None] = asyncio.Queue(maxsize=2 * concurrency)
    tally = RunTally()
    stops: list[RunIncompleteError] = []
    lost = CallSpend() if unfinished is None else unfinished

    def stopping() -> bool:
        return bool(stops) or finished() or (halt is not None and halt.halted)

    async def produce() -> None:
        for item in items:
            if finished() or (halt is not None and halt.halted):
                break
            await queue.put(item)
        for _ in range(concurrency):
            await queue.put(None)

    async def work() -> None:
        while not stopping():
            item = await queue.get()
            if item is None or stopping():
                return
            # The calls this case sends (judge client): counted as unfinished unless the
            # case ends in a result line, which counts them itself.
            sent: list[Tokens] = []
            CALLS_SENT.set(sent)
            try:
                result = await grade(item)
            except RunIncompleteError as err:
                lost.add_calls(sent)
                stops.append(err)
                if not err.drains:
                    raise  # cancels the other workers at once
                return
            except BaseException:  # cut off (a stop that does not drain, the grace's end)
                lost.add_calls(sent)
                raise
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
    graces = [] if halt is None else [asyncio.create_task(keep_grace(halt, workers))]
    try:
        await asyncio.gather(*workers)
    except asyncio.CancelledError:
        # keep_grace cut off the cases still in flight when the grace ended; a cancel of
        # this run itself goes on.
        this = asyncio.current_task()
        if halt is None or not halt.halted or (this is not None and this.cancelling()):
            raise
    finally:
        for task in [producer, *workers, *graces]:
            task.cancel()
        await asyncio.gather(producer, *workers, *graces, return_exceptions=True)
    if stops:
        raise stops[0]
    if halt is not None and halt.halted:
        raise halt.error()
    return tally


async def keep_grace(halt: Halt, workers: list[asyncio.Task[None]]) -> None:
    """Once the run is halted: the calls in flight get GRACE_S to land, and the cases whose
    replies came in SETTLE_S more to finish (they need no call: parse, cache, write); then
    every case still going is cut off, its calls counted as cut off (Halt.cut_off).
    """
    await halt.wait_halted()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(halt.wait_idle(), GRACE_S)
    going = [worker for worker in workers if not worker.done()]
    if going:
        await asyncio.wait(going, timeout=SETTLE_S)
    halt.cut_off = halt.in_flight
    for worker in workers:
        worker.cancel()


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: handled exactly as Ctrl-C (KeyboardInterrupt) is."""


STOPPED_BY = {signal.SIGTERM: "stopped by SIGTERM", signal.SIGINT: "interrupted"}
"""How a run stopped by each signal says so (`error: stopped by SIGTERM: ...`)."""
AGAIN = {signal.SIGTERM: "SIGTERM again", signal.SIGINT: "Ctrl-C again"}


@dataclass
class Interrupts:
    """The SIGTERM and Ctrl-C handler of one process phase. With a `halt` and its event
    loop running, the first signal halts the run (no new call; the calls in flight land,
    within GRACE_S) and says so through `on_stopping`, and the second cuts the grace short
    (every task of the loop cancelled). Otherwise, and at a third signal (a loop that does
    not answer), it interrupts at once: SIGTERM as Terminated, Ctrl-C as KeyboardInterrupt.
    """

    halt: Halt | None = None
    on_stopping: Callable[[str], None] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    asked: signal.Signals | None = None
    """The first signal, once it halted the run."""
    cut: signal.Signals | None = None
    """The second, once it cut the grace short."""

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler (signal.signal calls it in the main thread)."""
        signum = signal.Signals(signum)
        loop = self.loop
        if self.halt is None or loop is None or not loop.is_running() or self.cut is not None:
            raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        # A handler runs between two bytecodes of the main thread, wherever the loop is
        # (inside a task's step, maybe): the loop acts on the signal, rather than an
        # exception raised into whatever code was running.
        if self.asked is None:
            self.asked = signum
            loop.call_soon_threadsafe(self.begin, signum)
        else:
            self.cut = signum
            loop.call_soon_threadsafe(self.cut_short)

    def begin(self, signum: signal.Signals) -> None:
        """In the loop: halt the run, and say what it waits for."""
        assert self.halt is not None
        in_flight = self.halt.in_flight
        self.halt.halt(STOPPED_BY[signum])
        if in_flight and self.on_stopping is not None:
            self.on_stopping(
                f"stopping: no new calls; waiting up to {GRACE_S:g} s for the {in_flight} "
                f"call(s) in flight to land ({AGAIN[signum]} stops at once)"
            )

    def cut_short(self) -> None:
        """In the loop: cancel everything still running, the calls in flight with it."""
        for task in asyncio.all_tasks(self.loop):
            task.cancel()


@contextmanager
def interrupts(
    halt: Halt | None = None, on_stopping: Callable[[str], None] | None = None
) -> Iterator[Interrupts]:
    """Within the block, SIGTERM and Ctrl-C are handled by an `Interrupts` (set its `loop`
    once there is one); the old handlers come back after. A Ctrl-C this process ignores (a
    --workers child: its parent relays the stop) stays ignored. Signal handlers can only be
    set from the main thread; elsewhere this changes nothing.
    """
    with handled_by(Interrupts(halt, on_stopping)) as handler:
        yield handler


H = TypeVar("H", bound=Callable[[int, FrameType | None], None])


@contextmanager
def handled_by(handler: H) -> Iterator[H]:
    """Within the block, SIGTERM and Ctrl-C go to `handler`; the old handlers come back
    after. A Ctrl-C this process ignores (a --workers child) stays ignored, and a --workers
    child's SIGTERM keeps coming through its StopRelay (relayed_stops.py), which passes
    each stop on to `handler`; outside the main thread (where no handler can be set) this
    changes nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield handler
        return
    current = signal.getsignal(signal.SIGTERM)
    relay = current if isinstance(current, StopRelay) else None
    taken = [] if relay is not None else [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        taken.append(signal.SIGINT)
    previous = {signum: signal.signal(signum, handler) for signum in taken}
    if relay is not None:
        target, relay.target = relay.target, handler
    try:
        yield handler
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        if relay is not None:
            relay.target = target


@dataclass(frozen=True)
class SharedLoop:
    """An event loop that runs in a thread of its own and outlives the runs made on it:
    the Python API's, which every API call and job shares (LiteLLM binds process-wide
    state to one loop at a time). Set as SHARED_LOOP, a run judges on it.
    """

    loop: asyncio.AbstractEventLoop
    pid: int
    """The process it runs in: a forked process has no such thread."""

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run `main` on the loop and wait for it; an exception here (an interrupt)
        cancels it there.
        """
        future = asyncio.run_coroutine_threadsafe(main, self.loop)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise asyncio.CancelledError from None  # cut short there (a second signal)
        except BaseException:
            future.cancel()
            raise


SHARED_LOOP: ContextVar[SharedLoop | None] = ContextVar("shared_loop", default=None)
"""The loop runs judge on instead of one of their own (None: each run makes its own)."""


def run_sync(
    main: Coroutine[Any, Any, T],
    *,
    halt: Halt | None = None,
    on_stopping: Callable[[str], None] | None = None,
) -> T:
    """Run the async job to completion (on SHARED_LOOP when one is set, else on a loop of
    its own). Ctrl-C or SIGTERM becomes RunInterruptedError (exit 3): with the `halt` of
    the job's judge client, the first halts the run (the calls in flight land, within
    GRACE_S; `on_stopping` hears of it) and a second ends it at once; without one, the
    first ends it at once.
    """
    resume_gc()  # start-up is over: the long-lived work collects its garbage again
    shared = SHARED_LOOP.get()
    with interrupts(halt, on_stopping) as handler:
        try:
            if shared is not None and shared.pid == os.getpid():
                handler.loop = shared.loop
                result = shared.run(main)
            else:
                with asyncio.Runner() as runner:
                    handler.loop = runner.get_loop()
                    result = runner.run(main)
        except KeyboardInterrupt as interrupt:  # Terminated too
            signum = signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT
            raise interrupted(signum, again=handler.asked is not None) from None
        except asyncio.CancelledError:
            if handler.cut is None:
                raise
        if handler.cut is not None:
            raise interrupted(handler.cut, again=True)
    if halt is not None and halt.halted:
        raise halt.error()  # it came as the job ended: stopped all the same
    return result


def interrupted(signum: signal.Signals, *, again: bool) -> RunInterruptedError:
    """The error of a run a signal ended at once: the first, when nothing could be let
    finish, or the second, which cut the grace short.
    """
    if not again:
        return RunInterruptedError(f"{STOPPED_BY[signum]}: {SAVED}")
    return RunInterruptedError(
        f"{STOPPED_BY[signum]} again, at once: {SAVED}; the calls still in flight were cut "
        "off (a resume pays for them again)"
    )

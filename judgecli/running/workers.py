"""--workers N: one run judged by N processes.

LiteLLM spends milliseconds of CPU on each call (~1.5 ms: docs/ecosystem.md, "CPU per call"; ~5.8 ms
for a whole judge call measured by tests/bench/bench_workers.py), so one process tops out
at a few hundred calls a second on a core: enough for any hosted provider's rate limits, not
for a fast local server. With N workers, each process judges the cases whose id hashes to
it (`shard.shard_of`), under its share of the run's limits (--concurrency, --rpm, --tpm and
--max-cost: the flags declared Role.SHARED, split evenly); they share the reply cache
(SQLite in WAL mode takes writers from several processes), and send every finished case to
this process, which alone appends it to results.jsonl, draws the progress and follows the
failure limit and a sequential gate.
So the run directory is the one a single process writes, and a resume works whatever N
was. Workers are forked: the job (its dataset reader, its grading) is inherited as it is,
not rebuilt from the command line.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any

from judgecli import errors
from judgecli.judge.halt import GRACE_S
from judgecli.result import CaseResult, CaseStatus
from judgecli.running.fan_out import AGAIN, ResultSink, Terminated, handled_by, interrupted
from judgecli.running.lifeline import Lifeline
from judgecli.running.noted_signals import NotedSignals
from judgecli.running.relayed_stops import CUT, HALT, STOP_SIGNALS, relay_stops
from judgecli.running.share import ShareEnd, Stop

# How long the parent waits on the workers' pipes at a time: a signal noted meanwhile is
# acted on only once the wait ends.
POLL_S = 0.2
# Beyond a stopped worker's grace: how long its last cases and its end may take to arrive;
# also how long a worker may take to exit once it said its end.
DRAIN_S = 5.0


JudgeShare = Callable[[int, ResultSink, Callable[[], bool], ShareEnd], None]
"""Judge worker i's cases (those of shard i of N) into a sink, until the callable says the
run is done; fills the ShareEnd (also when it raises)."""


class StopFlag:
    """The parent's word to stop taking cases: one byte of shared memory and no lock.

    Not a multiprocessing.Event: it has a lock, and a worker killed while holding it (by
    SIGKILL, the out-of-memory killer) would hang every other process that looks at it.
    """

    def __init__(self, context: Any) -> None:
        self._value = context.RawValue("b", 0)

    def set(self) -> None:
        """Stop every worker from taking new cases."""
        self._value.value = 1

    def is_set(self) -> bool:
        """Whether the parent said stop."""
        return bool(self._value.value)


class Outbox:
    """A worker's messages to the parent, over a pipe of its own. Not a shared
    multiprocessing.Queue: its writers share a lock, and a worker killed while holding it
    would hang the others for ever. A pipe of its own can only close, and the parent reads
    its end as the worker's death. Messages are written by a thread of their own: a signal
    only ever interrupts the main thread, so none can cut a message in half.
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._messages: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._sender = threading.Thread(target=self._send_all, name="judge-outbox", daemon=True)
        self._sender.start()

    def append_result(self, result: CaseResult) -> None:
        """Send one finished case."""
        self._messages.put(("result", result.model_dump_json(exclude_none=True)))

    def close(self, index: int, end: ShareEnd) -> None:
        """Send how worker `index` ended, once every result before it is out."""
        self._messages.put(("end", index, end))
        self._messages.put(None)
        self._sender.join()
        self.connection.close()

    def _send_all(self) -> None:
        """The sender thread: write each message whole, in order, until the last."""
        while (message := self._messages.get()) is not None:
            try:
                self.connection.send(message)
            except OSError:  # the parent is gone: nobody is left to tell
                return


def work(
    judge_share: JudgeShare,
    index: int,
    connection: Connection,
    stop: StopFlag,
    lifeline: Lifeline,
    inherited: tuple[Connection, ...],
) -> None:
    """A worker process: judge its share, then say how it ended (always, even on a crash:
    the parent waits for every worker's end). It dies with its parent (lifeline.py).
    """
    # Ctrl-C at a terminal reaches every process of the job: the parent alone decides, and
    # relays the stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM stops a worker as it stops a run: while it judges, the first halts it (the
    # calls in flight land: fan_out.run_sync). Else it is only noted: before the share, it
    # takes no case; after, the worker says its end whole (issue 36: ended there, a worker
    # lost the cases still in its outbox, their calls paid). end_all kills one that hangs.
    # The parent's relays count as SIGTERMs, each stop once (relayed_stops.py); a stop sent
    # since the fork waited, blocked (run_workers), for the relay to take it.
    sigterm = NotedSignals()
    relay_stops(sigterm)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    lifeline.tie(inherited)
    # Fresh streams over the same descriptors: a lock the parent's progress thread held on
    # sys.stderr at the fork would otherwise hang this process's first warning.
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    outbox = Outbox(connection)
    end = ShareEnd()
    try:
        judge_share(index, outbox, lambda: stop.is_set() or bool(sigterm.came), end)
    except BaseException as error:  # noqa: BLE001 - carried to the parent, which raises it
        end.stop = Stop.of(error)
    if sigterm.came and end.stop is None:  # stopped before its share began: nothing judged
        end.stop = Stop.of(Terminated())
    outbox.close(index, end)


@dataclass
class Parent:
    """What the parent keeps while the workers judge."""

    sink: ResultSink
    on_result: Callable[[CaseResult], None]
    failures_allowed: int | None
    failed: int
    done: Callable[[], bool]
    stops: list[BaseException] = field(default_factory=list)
    ends: dict[int, ShareEnd] = field(default_factory=dict)

    def take(self, message: tuple[Any, ...], stop: Any) -> None:
        """One message from a worker: a finished case, or a worker's end."""
        if message[0] == "result":
            result = CaseResult.model_validate_json(message[1])
            self.sink.append_result(result)
            self.on_result(result)
            self.failed += result.status is CaseStatus.FAILED
            if self.over_failures() and not self.stops:
                self.stops.append(
                    errors.TooManyFailuresError(
                        f"stopped: {self.failed} cases failed, more than --max-failures "
                        f"allows ({self.failures_allowed}); first error: {result.error}"
                    )
                )
            if self.stops or self.done():
                stop.set()
            return
        _, index, end = message
        self.ends[index] = end
        if end.stop is not None:
            self.stops.append(end.stop.error())
            stop.set()

    def over_failures(self) -> bool:
        """More cases failed than the run may lose."""
        return self.failures_allowed is not None and self.failed > self.failures_allowed


def run_workers(
    count: int,
    judge_share: JudgeShare,
    *,
    sink: ResultSink,
    on_result: Callable[[CaseResult], None],
    ends: list[ShareEnd] | None = None,
    failures_allowed: int | None = None,
    failed_before: int = 0,
    done: Callable[[], bool] | None = None,
    on_stopping: Callable[[str], None] | None = None,
) -> list[ShareEnd]:
    """Judge in `count` forked processes; every finished case goes to `sink` and
    `on_result` here, and each worker's end, in order, to the list returned (and to `ends`,
    also when the run stops). Stops like the single-process runner: the failure limit or
    `done` (a sequential gate that decided) stop every worker from taking new cases, the
    first worker's error is raised once all have ended; a first Ctrl-C or SIGTERM halts
    them all (their calls in flight land, `on_stopping` hears of it), a second cuts that
    short, and either ends the run with RunInterruptedError once what they finished is
    written. The workers die with this process (lifeline.py).
    """
    context = multiprocessing.get_context("fork")
    stop = StopFlag(context)
    parent = Parent(
        sink=sink,
        on_result=on_result,
        failures_allowed=failures_allowed,
        failed=failed_before,
        done=done or (lambda: False),
    )
    lifeline = Lifeline.open()
    workers: list[Worker] = []
    # Blocked while forking: a worker is born with them blocked, and takes one sent before
    # it could handle it (SIGUSR1's default is to end the process) once its relay is in
    # place; this process takes its own after the loop.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        for index in range(count):
            workers.append(
                start_worker(context, judge_share, index, count, stop, lifeline, workers)
            )
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        lifeline.forked()
    try:
        # SIGTERM interrupts like Ctrl-C throughout, the shutdown included: a second signal
        # while the workers are being stopped must not kill this process before it has
        # written what they finished. Each is acted on between two messages.
        with handled_by(NotedSignals()) as signals:
            try:
                read_until_ended(workers, stop, parent, signals)
            except KeyboardInterrupt as interrupt:  # Terminated too
                signum = signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT
                again = halt_all(workers, stop, parent, signals, signum, on_stopping)
                raise interrupted(signum, again=again) from None
            finally:
                end_all(workers, signals)
        if signals.came:  # it came as the workers ended: stopped all the same
            raise interrupted(signals.came[0], again=False)
    finally:
        lifeline.cut()
        if ends is not None:
            ends[:] = [parent.ends[index] for index in sorted(parent.ends)]
    if parent.stops:
        raise parent.stops[0]
    return [parent.ends[index] for index in range(count)]


def halt_all(
    workers: list[Worker],
    stop: StopFlag,
    parent: Parent,
    signals: NotedSignals,
    signum: signal.Signals,
    on_stopping: Callable[[str], None] | None,
) -> bool:
    """After a first Ctrl-C or SIGTERM: halt every worker as a run is halted (SIGTERM: no
    new call, its calls in flight land) and write what they finish. A second signal cuts
    their grace short (a second SIGTERM: they cancel their calls, and say which they had
    sent) and a third kills them. True if a second came.
    """
    stop.set()
    for worker in workers:
        signal_worker(worker, HALT)
    if on_stopping is not None:
        on_stopping(
            f"stopping: no new calls; waiting up to {GRACE_S:g} s for the workers' calls in "
            f"flight to land ({AGAIN[signum]} stops at once)"
        )
    try:
        read_until_ended(workers, stop, parent, signals, within=GRACE_S + DRAIN_S)
    except KeyboardInterrupt:
        for worker in workers:
            signal_worker(worker, CUT)
        try:
            read_until_ended(workers, stop, parent, signals, within=DRAIN_S)
        except KeyboardInterrupt:
            for worker in workers:
                worker.process.kill()
        return True
    return False


def signal_worker(worker: Worker, signum: signal.Signals) -> None:
    """Relay a stop to a worker (relayed_stops.py); nothing if it has already exited."""
    if worker.process.pid is not None and worker.process.exitcode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.process.pid, signum)


@dataclass(frozen=True)
class Worker:
    """A worker process and the parent's end of its pipe."""

    index: int
    count: int
    process: Any
    inbox: Connection

    def died(self) -> ShareEnd:
        """The end of a worker whose pipe closed before it said how it ended."""
        self.process.join(timeout=DRAIN_S)  # its exit code, once it is reaped
        return ShareEnd(
            stop=Stop(
                "RunIncompleteError",
                f"worker {self.index} of {self.count} died (exit code "
                f"{self.process.exitcode}); the cases it had sent are saved",
                hint="continue with: judge resume RUN_DIR",
            )
        )


def start_worker(
    context: Any,
    judge_share: JudgeShare,
    index: int,
    count: int,
    stop: StopFlag,
    lifeline: Lifeline,
    started: list[Worker],
) -> Worker:
    """Fork worker `index` of `count` with a pipe of its own to this process, tied to this
    process's life (the parent's ends of its own and the `started` workers' pipes are closed
    in it at once: a pipe with a reader left in a worker would never break).
    """
    inbox, outbox = context.Pipe(duplex=False)
    inherited = (inbox, *(worker.inbox for worker in started))
    process = context.Process(
        target=work,
        args=(judge_share, index, outbox, stop, lifeline, inherited),
        daemon=True,
        name=f"judge-{index}",
    )
    process.start()
    # The worker holds the only writing end now, so its death closes the pipe. (Closed here
    # before the next fork, so that no other worker inherits it either.)
    outbox.close()
    return Worker(index=index, count=count, process=process, inbox=inbox)


def read_until_ended(
    workers: list[Worker],
    stop: StopFlag,
    parent: Parent,
    signals: NotedSignals,
    *,
    within: float | None = None,
) -> None:
    """Take the workers' messages until each has said how it ended (or `within` seconds
    have passed); a worker whose pipe closes first (killed, out of memory) stops the run.
    A signal noted meanwhile is raised between two messages (`signals.act`).
    """
    deadline = None if within is None else time.monotonic() + within
    open_ = {worker.inbox: worker for worker in workers if worker.index not in parent.ends}
    while open_:
        signals.act()
        if deadline is not None and time.monotonic() > deadline:
            return
        # A timeout, so that a signal noted while it waits is acted on soon.
        for inbox in connection.wait(list(open_), timeout=POLL_S):
            worker = open_[inbox]  # type: ignore[index]
            try:
                message = worker.inbox.recv()
            except (EOFError, OSError):  # closed, maybe mid-message: it died
                message = ("end", worker.index, worker.died())
            parent.take(message, stop)
            if message[0] == "end":
                del open_[inbox]  # type: ignore[arg-type]
                worker.inbox.close()
            signals.act()


def end_all(workers: list[Worker], signals: NotedSignals) -> None:
    """Wait a little for every worker to exit, then kill what is left (also when a signal
    cuts the wait short).
    """
    try:
        for worker in workers:
            deadline = time.monotonic() + DRAIN_S
            while worker.process.is_alive() and time.monotonic() < deadline:
                worker.process.join(timeout=POLL_S)
                signals.act()
    except KeyboardInterrupt:  # Terminated too
        pass
    for worker in workers:
        if worker.process.is_alive():
            worker.process.kill()
        worker.inbox.close()

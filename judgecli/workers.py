"""--workers N: one run judged by N processes.

LiteLLM spends milliseconds of CPU on each call (~1.5 ms in ECOSYSTEM.md §1.12; ~5.8 ms
for a whole judge call measured by tests/bench/bench_workers.py), so one process tops out
at a few hundred calls a second on a core: enough for any hosted provider's rate limits, not
for a fast local server. With N workers, each process judges the cases whose id hashes to
it (`shard.shard_of`), under its share of the run's limits (--concurrency, --rpm, --tpm and
--max-cost split evenly); they share the reply cache (SQLite in WAL mode takes writers from
several processes), and send every finished case to this process, which alone appends it
to results.jsonl, draws the progress and follows the failure limit and a sequential gate.
So the run directory is the one a single process writes, and a resume works whatever N
was. Workers are forked: the job (its dataset reader, its grading) is inherited as it is,
not rebuilt from the command line.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from judgecli import errors
from judgecli.config import RunConfig
from judgecli.errors import JudgeError, RunIncompleteError, RunInterruptedError
from judgecli.result import CaseResult, CaseStatus
from judgecli.runner import ResultSink, Terminated, sigterm_as_interrupt

# How long the parent waits on the workers' queue before it looks whether one died.
POLL_S = 0.2
# After an interrupt: how long finished cases still in the queue are collected.
DRAIN_S = 5.0


def worker_config(config: RunConfig, count: int) -> RunConfig:
    """One worker's share of the run's limits: each of --concurrency, --rpm, --tpm and
    --max-cost divided by the number of workers (at least one call in flight each).
    """
    if count == 1:
        return config

    def share(value: float | None) -> float | None:
        return None if value is None else value / count

    return config.model_copy(
        update={
            "concurrency": max(1, config.concurrency // count),
            "rpm": share(config.rpm),
            "tpm": share(config.tpm),
            "max_cost": share(config.max_cost),
        }
    )


def describe_shares(config: RunConfig, count: int) -> str:
    """What each worker runs under, said once at the start of the run."""
    each = worker_config(config, count)
    limits = [f"--concurrency {each.concurrency}"]
    for flag, value in [("--rpm", each.rpm), ("--tpm", each.tpm), ("--max-cost", each.max_cost)]:
        if value is not None:
            limits.append(f"{flag} {value:g}")
    return f"--workers {count}: each process judges its share of the cases with " + ", ".join(
        limits
    )


@dataclass
class ShareEnd:
    """How one worker's judging ended: what it warned of, the response format each judge
    ended with, and the error that stopped it (None: it judged all it was given).
    """

    warnings: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)
    stop: Stop | None = None


@dataclass(frozen=True)
class Stop:
    """An error that ended a worker, carried to the parent (exceptions of ours do not all
    pickle: DatasetError's constructor takes other arguments).
    """

    kind: str
    message: str
    hint: str | None = None

    @classmethod
    def of(cls, error: BaseException) -> Stop:
        """The error as a Stop; a crash (a bug) keeps its traceback."""
        if isinstance(error, JudgeError):
            return cls(type(error).__name__, error.message, error.hint)
        if isinstance(error, KeyboardInterrupt):  # Terminated too
            return cls("RunInterruptedError", "interrupted: finished cases are saved")
        text = "".join(traceback.format_exception(error)).rstrip()
        return cls("crash", f"a worker crashed:\n{text}")

    def error(self) -> BaseException:
        """The error again, as its own class."""
        kind = getattr(errors, self.kind, None)
        if not (isinstance(kind, type) and issubclass(kind, JudgeError)):
            return RuntimeError(self.message)
        rebuilt = kind.__new__(kind)
        JudgeError.__init__(rebuilt, self.message, hint=self.hint)
        return rebuilt

    @property
    def drains(self) -> bool:
        """Whether the other workers finish their cases in flight (see RunIncompleteError)."""
        error = self.error()
        return isinstance(error, RunIncompleteError) and error.drains


JudgeShare = Callable[[int, ResultSink, Callable[[], bool], ShareEnd], None]
"""Judge worker i's cases (those of shard i of N) into a sink, until the callable says the
run is done; fills the ShareEnd (also when it raises)."""


class QueueSink:
    """A worker's results go to the parent, which alone writes results.jsonl."""

    def __init__(self, results: Any) -> None:
        self._results = results

    def append_result(self, result: CaseResult) -> None:
        """Send one finished case."""
        self._results.put(("result", result.model_dump_json(exclude_none=True)))


def work(judge_share: JudgeShare, index: int, results: Any, stop: Any) -> None:
    """A worker process: judge its share, then say how it ended (always, even on a crash:
    the parent waits for every worker's end).
    """
    # Fresh streams over the same descriptors: a lock the parent's progress thread held on
    # sys.stderr at the fork would otherwise hang this process's first warning.
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    # A signal must never kill this process by its default action: that could cut a
    # message to the parent in half, and the parent would wait for its rest for ever. So
    # SIGTERM interrupts like Ctrl-C here too, and both wait while the end is sent.
    signal.signal(signal.SIGTERM, interrupt)
    end = ShareEnd()
    try:
        judge_share(index, QueueSink(results), stop.is_set, end)
    except BaseException as error:  # noqa: BLE001 - carried to the parent, which raises it
        end.stop = Stop.of(error)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    results.put(("end", index, end))
    results.close()
    results.join_thread()


def interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM in a worker: interrupt it as Ctrl-C would."""
    raise Terminated


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
    failures_allowed: int | None = None,
    failed_before: int = 0,
    done: Callable[[], bool] | None = None,
) -> list[ShareEnd]:
    """Judge in `count` forked processes; every finished case goes to `sink` and
    `on_result` here. Stops like the single-process runner: the failure limit or `done`
    (a sequential gate that decided) stop every worker from taking new cases, the first
    worker's error is raised once all have ended, Ctrl-C or SIGTERM end them all with
    RunInterruptedError after the cases they finished are written.
    """
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    stop = context.Event()
    parent = Parent(
        sink=sink,
        on_result=on_result,
        failures_allowed=failures_allowed,
        failed=failed_before,
        done=done or (lambda: False),
    )
    processes = [
        context.Process(target=work, args=(judge_share, index, results, stop), daemon=True)
        for index in range(count)
    ]
    for process in processes:
        process.start()
    # SIGTERM interrupts like Ctrl-C throughout, the shutdown included: a second signal
    # while the workers are being stopped must not kill this process before it has written
    # what they finished.
    with sigterm_as_interrupt():
        try:
            wait_for_ends(processes, results, stop, parent)
        except (KeyboardInterrupt, Terminated) as interrupt:
            stop.set()
            for process in processes:
                process.terminate()  # SIGTERM: a worker ends like an interrupted run
            drain(processes, results, stop, parent)
            raise RunInterruptedError(
                ("stopped by SIGTERM" if isinstance(interrupt, Terminated) else "interrupted")
                + ": finished cases are saved in results.jsonl"
            ) from None
        finally:
            end_all(processes)
    if parent.stops:
        raise parent.stops[0]
    return [parent.ends[index] for index in range(count)]


def end_all(processes: list[Any]) -> None:
    """Wait a little for every worker to exit, then kill what is left (also when a second
    interrupt cuts the wait short).
    """
    try:
        for process in processes:
            process.join(timeout=DRAIN_S)
    except (KeyboardInterrupt, Terminated):
        pass
    for process in processes:
        if process.is_alive():
            process.kill()


def wait_for_ends(processes: list[Any], results: Any, stop: Any, parent: Parent) -> None:
    """Take the workers' messages until each has said how it ended; a worker that died
    without saying so (killed, out of memory) stops the run.
    """
    while len(parent.ends) < len(processes):
        try:
            parent.take(results.get(timeout=POLL_S), stop)
        except queue.Empty:
            for index, process in enumerate(processes):
                if index in parent.ends or process.exitcode is None:
                    continue
                # Its last messages may still be in the pipe: look once more first.
                try:
                    parent.take(results.get(timeout=POLL_S), stop)
                except queue.Empty:
                    died = Stop(
                        "RunIncompleteError",
                        f"worker {index} of {len(processes)} died (exit code "
                        f"{process.exitcode}); the cases it had sent are saved",
                        hint="continue with: judge resume RUN_DIR",
                    )
                    parent.take(("end", index, ShareEnd(stop=died)), stop)
                break


def drain(processes: list[Any], results: Any, stop: Any, parent: Parent) -> None:
    """After an interrupt: write the cases the workers finished before they ended."""
    try:
        while len(parent.ends) < len(processes):
            parent.take(results.get(timeout=DRAIN_S), stop)
    except (queue.Empty, KeyboardInterrupt, Terminated):
        pass

"""--workers and signals, at the exact moments they used to lose a case (issue 36): every
call a worker sent is counted once, in a case written to results.jsonl or as unfinished
spend, whenever SIGTERM or Ctrl-C comes. The signal is sent by the test at the moment
itself (no clock): while the parent writes a case it read off a worker's pipe, and while a
worker says its end with cases still in its outbox. Real forked workers, stand-in shares.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import CodeType
from typing import Any

import pytest

from judgecli.errors import RunInterruptedError
from judgecli.result import CaseResult
from judgecli.running import workers
from judgecli.running.fan_out import ResultSink, Terminated
from judgecli.running.noted_signals import NotedSignals
from judgecli.running.relayed_stops import HALT
from judgecli.running.share import ShareEnd
from judgecli.running.workers import Outbox, run_workers
from tests.unit.running.test_workers import WAIT_S, ListSink, result, wait_for


def ids(results: list[CaseResult]) -> list[str]:
    return sorted(r.id for r in results)


def test_noted_signals_are_acted_on_one_at_a_time_in_order():
    noted = NotedSignals()
    noted.act()  # none came: nothing
    noted(signal.SIGTERM, None)
    noted(signal.SIGINT, None)
    with pytest.raises(Terminated):
        noted.act()
    with pytest.raises(KeyboardInterrupt) as second:
        noted.act()
    assert type(second.value) is KeyboardInterrupt  # Ctrl-C, not SIGTERM
    noted.act()  # both acted on
    assert noted.came == [signal.SIGTERM, signal.SIGINT]


class SignalledStore(ListSink):
    """The run's store, and SIGTERM to this process as it writes its first case: the moment
    between a case read off a worker's pipe and its line written."""

    def __init__(self) -> None:
        super().__init__()
        self.signalled = False

    def append_result(self, result: CaseResult) -> None:
        if not self.signalled:
            self.signalled = True
            os.kill(os.getpid(), signal.SIGTERM)
        super().append_result(result)


def test_sigterm_while_the_parent_writes_a_case_loses_no_case():
    # Issue 36: the parent raised the signal where it came, and the case it was writing was
    # lost (its call paid and cached, so the resume answered it from the cache: the run's
    # usage counted one call less than the judge was sent).
    # Both in their shares before any case is sent: a worker forked but not yet set up
    # dies of a SIGTERM (nothing sent, nothing to count).
    both_judging = multiprocessing.get_context("fork").Barrier(2)

    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        both_judging.wait(timeout=WAIT_S)
        for k in range(3):
            sink.append_result(result(f"{index}-{k}"))
        wait_for(should_stop)

    store = SignalledStore()
    with pytest.raises(RunInterruptedError, match="^stopped by SIGTERM: finished cases are saved"):
        run_workers(2, share, sink=store, on_result=lambda r: None)
    assert ids(store.results) == [f"{i}-{k}" for i in (0, 1) for k in range(3)]


def main_thread_in(code: CodeType) -> bool:
    """Whether this process's main thread is inside a call of `code` now."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def test_sigterm_while_a_worker_says_its_end_loses_none_of_its_cases():
    # Issue 36: a SIGTERM that came once a worker's share was over, its last cases still in
    # its outbox, ended the process (or raised past its end): the cases were never sent.
    # Here each worker's sender thread holds its first case until the worker is saying its
    # end (Outbox.close), sends the worker SIGTERM, then sends the case.
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        assert isinstance(sink, Outbox)
        send = sink.connection.send

        def send_once_ending(message: Any) -> None:
            if message[0] == "result" and message[1] == result(f"{index}-0").model_dump_json(
                exclude_none=True
            ):
                deadline = time.monotonic() + WAIT_S
                while not main_thread_in(Outbox.close.__code__):
                    assert time.monotonic() < deadline, "the worker never said its end"
                    time.sleep(0.001)
                os.kill(os.getpid(), signal.SIGTERM)
            send(message)

        sink.connection.send = send_once_ending  # type: ignore[method-assign]
        for k in range(3):
            sink.append_result(result(f"{index}-{k}"))
        end.warnings.append(f"worker {index} ended")

    store = ListSink()
    ends = run_workers(2, share, sink=store, on_result=lambda r: None)
    assert ids(store.results) == [f"{i}-{k}" for i in (0, 1) for k in range(3)]
    assert [end.warnings for end in ends] == [["worker 0 ended"], ["worker 1 ended"]]
    assert all(end.stop is None for end in ends)  # it had judged all it was given


def test_a_worker_told_to_stop_outside_its_judging_takes_no_case_and_says_it_stopped():
    # Outside run_sync's loop (before the share's first case), SIGTERM is noted: the share
    # is told to stop, and the worker's end says it was interrupted.
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 0:
            os.kill(os.getpid(), signal.SIGTERM)
            end.warnings.append(f"told to stop: {should_stop()}")
            return
        wait_for(should_stop)  # the parent's stop, once worker 0 said it was interrupted

    ends: list[ShareEnd] = []
    with pytest.raises(RunInterruptedError, match="^interrupted: finished cases are saved"):
        run_workers(2, share, sink=ListSink(), on_result=lambda r: None, ends=ends)
    assert ends[0].warnings == ["told to stop: True"]
    assert ends[0].stop is not None


def test_sigterm_as_the_workers_end_still_stops_the_run():
    # The last worker's end is read, then SIGTERM comes (the worker sends it to its parent
    # once its end is on the pipe): the run is stopped all the same, as a run in one
    # process is (fan_out.run_sync), never finished as if no signal came.
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        assert isinstance(sink, Outbox)
        send = sink.connection.send

        def send_then_signal(message: Any) -> None:
            send(message)
            if message[0] == "end":
                os.kill(os.getppid(), signal.SIGTERM)

        sink.connection.send = send_then_signal  # type: ignore[method-assign]
        sink.append_result(result("only"))

    store = ListSink()
    with pytest.raises(RunInterruptedError, match="^stopped by SIGTERM: finished cases are saved"):
        run_workers(1, share, sink=store, on_result=lambda r: None)
    assert ids(store.results) == ["only"]


def test_a_stop_relayed_to_a_worker_as_it_is_born_waits_for_its_relay(monkeypatch):
    # The parent relays a first stop with SIGUSR1 (relayed_stops.py), whose default is to
    # end the process: sent before a newborn worker set its handler, it killed the worker
    # ("worker 0 of 2 died (exit code -10)") instead of stopping it. The stop signals are
    # blocked while run_workers forks, so the worker takes it once its relay is in place.
    real = workers.start_worker

    def start_then_relay_a_stop(*args: Any, **kwargs: Any) -> workers.Worker:
        worker = real(*args, **kwargs)
        workers.signal_worker(worker, HALT)  # at once: long before the worker's handler
        return worker

    monkeypatch.setattr(workers, "start_worker", start_then_relay_a_stop)

    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        wait_for(should_stop)  # told to stop by the relayed signal itself

    ends: list[ShareEnd] = []
    with pytest.raises(RunInterruptedError, match="^interrupted: finished cases are saved"):
        run_workers(2, share, sink=ListSink(), on_result=lambda r: None, ends=ends)
    # Each worker says it was stopped; none died.
    assert [end.stop.kind if end.stop else None for end in ends] == ["RunInterruptedError"] * 2

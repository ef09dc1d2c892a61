"""The grace a stopped run gives its calls in flight (issue 29): a first SIGTERM or Ctrl-C
halts the judge client (no new call) while the calls already sent land, a second ends the
run at once, and the calls of cases that did not finish are counted. The grading here
stands in for the judge client: it checks the halt before each call and counts itself in
flight while it "waits for the reply", as judge/client.py does.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field

import pytest

from judgecli.errors import RunInterruptedError
from judgecli.judge.halt import Halt, Halted
from judgecli.result import CaseResult, CaseStatus
from judgecli.running import fan_out as runner
from judgecli.running.fan_out import run_cases, run_sync
from judgecli.summary.facts import Usage
from judgecli.summary.head import with_unfinished
from judgecli.usage import CALLS_SENT, CallSpend, Tokens


class ListSink:
    def __init__(self) -> None:
        self.results: list[CaseResult] = []

    def append_result(self, result: CaseResult) -> None:
        self.results.append(result)

    def case_done(self, result: CaseResult) -> None:
        pass


async def call(halt: Halt, seconds: float, tokens: int = 10) -> None:
    """One judge call as the client makes it: refused once halted, else in flight for
    `seconds`, then its reply's tokens entered in the case's account."""
    halt.check()
    sent = Tokens()
    account = CALLS_SENT.get()
    if account is not None:
        account.append(sent)
    with halt.sending():
        await asyncio.sleep(seconds)
    sent.add_tokens(Tokens(prompt_tokens=tokens, completion_tokens=1, cost_usd=0.5))


def grader(halt: Halt, *, calls: int, seconds: float, started: list[int]):
    async def grade(i: int) -> CaseResult:
        started.append(i)
        for _ in range(calls):
            await call(halt, seconds)
        return CaseResult(id=str(i), status=CaseStatus.OK, rubric_hash="h")

    return grade


@dataclass
class HaltedRun:
    """A run of `n` cases, `calls` calls of `seconds` each, halted once `concurrency`
    calls are in flight: what it wrote, which cases it started, what it left unfinished."""

    n: int
    concurrency: int
    calls: int
    seconds: float
    halt: Halt = field(default_factory=Halt)
    sink: ListSink = field(default_factory=ListSink)
    unfinished: CallSpend = field(default_factory=CallSpend)
    started: list[int] = field(default_factory=list)

    async def main(self) -> None:
        halt = self.halt

        async def stop_when_all_in_flight() -> None:
            while halt.in_flight < self.concurrency:
                await asyncio.sleep(0.001)
            halt.halt("stopped by SIGTERM")

        stopper = asyncio.create_task(stop_when_all_in_flight())
        try:
            await run_cases(
                range(self.n),
                grader(halt, calls=self.calls, seconds=self.seconds, started=self.started),
                concurrency=self.concurrency,
                sink=self.sink,
                events=self.sink,
                halt=halt,
                unfinished=self.unfinished,
            )
        finally:
            await stopper

    def written(self) -> list[str]:
        return sorted(r.id for r in self.sink.results)


def test_a_halt_lets_the_calls_in_flight_land_and_starts_no_new_case():
    run = HaltedRun(n=100, concurrency=4, calls=1, seconds=0.05)
    with pytest.raises(Halted, match="^stopped by SIGTERM: finished cases are saved"):
        asyncio.run(run.main())
    # The four cases in flight finished and were written; none started after the halt.
    assert run.written() == ["0", "1", "2", "3"]
    assert run.started == [0, 1, 2, 3]
    assert run.unfinished.calls == 0


def test_a_case_whose_next_call_is_refused_counts_the_calls_it_made():
    # Two calls a case (the other order of a pair, a repair turn): the first lands, the
    # second is never sent, and the first is counted as a call of an unfinished case.
    run = HaltedRun(n=10, concurrency=3, calls=2, seconds=0.05)
    with pytest.raises(Halted):
        asyncio.run(run.main())
    assert run.written() == []
    assert run.started == [0, 1, 2]
    assert run.unfinished.model_dump() == {
        "calls": 3,
        "prompt_tokens": 30,
        "completion_tokens": 3,
        "cost_usd": 1.5,
    }


def test_calls_that_outlast_the_grace_are_cut_off_and_counted(monkeypatch):
    monkeypatch.setattr(runner, "GRACE_S", 0.2)
    run = HaltedRun(n=5, concurrency=2, calls=1, seconds=600)
    began = time.monotonic()
    with pytest.raises(Halted, match=r"2 call\(s\) still in flight after .* were cut off"):
        asyncio.run(run.main())
    assert time.monotonic() - began < 60  # not the calls' 600 s
    assert run.written() == []
    # Sent, so counted; no reply came, so no tokens.
    assert run.unfinished.model_dump() == {
        "calls": 2,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
    }


def test_nothing_in_flight_ends_the_grace_without_waiting_for_it(monkeypatch):
    # A case waiting for something that is no call (a rate-limit hold) is not waited for.
    monkeypatch.setattr(runner, "GRACE_S", 600.0)
    halt, sink = Halt(), ListSink()

    async def grade(i: int) -> CaseResult:
        halt.halt("interrupted")
        await asyncio.sleep(600)
        raise AssertionError("not cut off")

    began = time.monotonic()
    with pytest.raises(Halted, match="^interrupted: "):
        asyncio.run(run_cases(range(3), grade, concurrency=1, sink=sink, events=sink, halt=halt))
    assert time.monotonic() - began < 60


def test_a_halt_ends_a_pause_before_a_retry_at_once():
    halt = Halt()

    async def main() -> None:
        asyncio.get_running_loop().call_later(0.01, halt.halt, "stopped by SIGTERM")
        await halt.pause(asyncio.sleep(600))

    with pytest.raises(Halted):
        asyncio.run(asyncio.wait_for(main(), 60))


def test_a_pause_that_was_not_halted_returns_the_waits_own_outcome():
    async def failing() -> None:
        raise ValueError("the wait failed")

    asyncio.run(Halt().pause(asyncio.sleep(0)))
    with pytest.raises(ValueError, match="the wait failed"):
        asyncio.run(Halt().pause(failing()))


# --- the signals themselves (run_sync installs the handlers in the main thread) -----------


def signal_run(halt: Halt, *, second: bool) -> None:
    """run_sync of a run whose two calls take 600 s: SIGTERM once they are in flight, and
    (`second`) again once the run is halted."""
    sink = ListSink()

    async def main() -> None:
        async def signals() -> None:
            while halt.in_flight < 2:
                await asyncio.sleep(0.001)
            os.kill(os.getpid(), signal.SIGTERM)
            if second:
                while not halt.halted:
                    await asyncio.sleep(0.001)
                os.kill(os.getpid(), signal.SIGTERM)

        sender = asyncio.create_task(signals())
        grade = grader(halt, calls=1, seconds=600, started=[])
        await run_cases(range(2), grade, concurrency=2, sink=sink, events=sink, halt=halt)
        await sender

    run_sync(main(), halt=halt)


def test_a_first_sigterm_halts_the_run_and_the_grace_ends_it(monkeypatch):
    monkeypatch.setattr(runner, "GRACE_S", 0.2)
    halt = Halt()
    with pytest.raises(RunInterruptedError, match="^stopped by SIGTERM: .* were cut off") as info:
        signal_run(halt, second=False)
    assert isinstance(info.value, Halted)
    assert halt.reason == "stopped by SIGTERM"


def test_a_second_sigterm_ends_the_run_at_once(monkeypatch):
    monkeypatch.setattr(runner, "GRACE_S", 600.0)
    halt = Halt()
    began = time.monotonic()
    with pytest.raises(RunInterruptedError, match="^stopped by SIGTERM again, at once: "):
        signal_run(halt, second=True)
    assert time.monotonic() - began < 60  # not the grace's 600 s


def test_the_handlers_come_back_after_the_run_and_an_ignored_ctrl_c_stays_ignored():
    before = signal.getsignal(signal.SIGTERM)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a --workers child
    try:
        seen = {}

        async def main() -> None:
            seen["int"] = signal.getsignal(signal.SIGINT)
            seen["term"] = signal.getsignal(signal.SIGTERM)

        run_sync(main(), halt=Halt())
        assert seen["int"] is signal.SIG_IGN
        assert isinstance(seen["term"], runner.Interrupts)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == before
    finally:
        signal.signal(signal.SIGINT, previous)


# --- what the summary says ----------------------------------------------------------------


def test_the_calls_of_unfinished_cases_join_the_totals_and_are_listed_apart():
    usage = Usage(calls=10, cached=2, prompt_tokens=100, completion_tokens=20, cost_usd=0.3)
    spent = CallSpend(calls=3, prompt_tokens=30, completion_tokens=6, cost_usd=0.1)
    total = with_unfinished(usage, spent)
    assert (total.calls, total.cached) == (13, 2)
    assert (total.prompt_tokens, total.completion_tokens) == (130, 26)
    assert total.cost_usd == 0.4  # rounded as summary.json has it, not 0.30000000000000004
    assert total.unfinished is not None
    assert total.unfinished.model_dump() == spent.model_dump()
    assert with_unfinished(usage, CallSpend()) is usage  # none: no key at all

from __future__ import annotations

import asyncio

import pytest

from judgecli.errors import RunInterruptedError
from judgecli.result import CaseResult, CaseStatus
from judgecli.running.fan_out import run_cases, run_sync


class ListSink:
    def __init__(self):
        self.results: list[CaseResult] = []

    def append_result(self, result: CaseResult) -> None:
        self.results.append(result)

    def case_done(self, result: CaseResult) -> None:
        pass


def result(i: int, ok: bool = True) -> CaseResult:
    status = CaseStatus.OK if ok else CaseStatus.FAILED
    return CaseResult(id=str(i), status=status, rubric_hash="h")


def test_every_case_is_graded_once_and_counted():
    sink = ListSink()

    async def grade(i: int) -> CaseResult:
        await asyncio.sleep(0.001 * (i % 3))
        return result(i, ok=i % 4 != 0)

    tally = asyncio.run(run_cases(range(40), grade, concurrency=5, sink=sink, events=sink))
    assert sorted(int(r.id) for r in sink.results) == list(range(40))
    assert (tally.ok, tally.failed) == (30, 10)


def test_at_most_concurrency_cases_are_in_flight():
    sink = ListSink()
    active = 0
    peak = 0

    async def grade(i: int) -> CaseResult:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.002)
        active -= 1
        return result(i)

    asyncio.run(run_cases(range(50), grade, concurrency=4, sink=sink, events=sink))
    assert peak == 4


def test_the_case_iterator_is_consumed_lazily():
    # Bounded memory: while every worker is busy, the producer may only fill the queue
    # (2 x concurrency) and hand one item to each worker, never read the whole dataset.
    sink = ListSink()
    pulled = 0

    def items():
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield i

    async def main():
        release = asyncio.Event()

        async def grade(i: int) -> CaseResult:
            await release.wait()
            return result(i)

        run = asyncio.create_task(run_cases(items(), grade, concurrency=3, sink=sink, events=sink))
        await asyncio.sleep(0.05)
        in_memory = pulled
        release.set()
        await run
        return in_memory

    in_memory = asyncio.run(main())
    assert in_memory <= 2 * 3 + 3 + 1
    assert len(sink.results) == 1000


def test_a_crash_in_grading_propagates_and_stops_the_workers():
    sink = ListSink()

    async def grade(i: int) -> CaseResult:
        if i == 3:
            raise RuntimeError("boom")
        return result(i)

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(run_cases(range(10), grade, concurrency=1, sink=sink, events=sink))
    assert [r.id for r in sink.results] == ["0", "1", "2"]


def test_ctrl_c_becomes_run_interrupted():
    async def main() -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterruptedError):
        run_sync(main())

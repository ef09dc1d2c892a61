"""The spending cap waits for calls in flight instead of stopping short."""

from __future__ import annotations

import asyncio

import pytest

from judgecli.errors import BudgetExceededError
from judgecli.judge.budget import BudgetGuard


def test_a_call_that_does_not_fit_waits_for_calls_in_flight_to_settle():
    # Regression (issue 13): --max-cost 0.05 --concurrency 8 stopped before the first case
    # ("$0.0000 spent, the next call could cost up to $0.0069").
    async def main():
        budget = BudgetGuard(0.05)
        for _ in range(7):
            await budget.reserve(0.0069)  # 7 calls in flight reserve $0.0483
        eighth = asyncio.create_task(budget.reserve(0.0069))
        await asyncio.sleep(0)
        waiting = not eighth.done()
        budget.settle(0.0069, 0.0010)  # one call cost far less than its worst case
        await eighth
        return waiting, budget.spent_usd

    waiting, spent = asyncio.run(main())
    assert waiting
    assert spent == pytest.approx(0.0010)


def test_the_run_stops_only_when_the_next_call_cannot_fit_with_nothing_in_flight():
    async def main():
        budget = BudgetGuard(0.01, spent_usd=0.008)
        await budget.reserve(0.001)
        blocked = asyncio.create_task(budget.reserve(0.005))
        await asyncio.sleep(0)
        budget.settle(0.001, 0.001)  # in flight settles: $0.009 spent, $0.005 cannot fit
        with pytest.raises(BudgetExceededError, match=r"stopped at \$0\.0090 of --max-cost"):
            await blocked
        with pytest.raises(BudgetExceededError):  # a later call that does not fit: at once
            await asyncio.wait_for(budget.reserve(0.002), 1)
        await budget.reserve(0.0005)  # one that still fits may go: the cap is what counts
        return budget.spent_usd

    assert asyncio.run(main()) <= 0.01


def test_the_cap_is_never_passed_by_calls_in_flight_together():
    async def main():
        budget = BudgetGuard(1.0)
        reserved = 0
        for _ in range(100):
            try:
                await asyncio.wait_for(budget.reserve(0.3), 0.05)
            except (TimeoutError, BudgetExceededError):
                break
            reserved += 1
        return reserved

    assert asyncio.run(main()) == 3

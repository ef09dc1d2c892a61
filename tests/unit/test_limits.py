from __future__ import annotations

import asyncio

import pytest

from judgecli.limits import Limits, RateGate, paced_limiter


def run_gate(n, **kw):
    async def main():
        gate = RateGate(**kw)
        loop = asyncio.get_running_loop()
        start = loop.time()
        stamps = []

        async def one():
            await gate.acquire(1)
            stamps.append(loop.time() - start)

        await asyncio.gather(*(one() for _ in range(n)))
        return sorted(stamps)

    return asyncio.run(main())


def test_rpm_is_paced_over_a_second_not_burst_over_a_minute():
    # rpm=600: 10 per second. A minute-sized bucket would let all 25 through at t=0.
    stamps = run_gate(25, rpm=600, tpm=None)
    assert stamps[9] < 0.05  # the first second's worth goes at once
    assert stamps[-1] >= 1.4  # the rest at ~10/s


def test_slow_rpm_spaces_calls_evenly():
    # rpm=120 is 2/s; bucket capacity 2 → 2 at t=0, then one every 0.5 s.
    stamps = run_gate(4, rpm=120, tpm=None)
    assert stamps[1] < 0.05
    assert 0.45 <= stamps[2] < 0.7
    assert 0.95 <= stamps[3] < 1.2


def test_rpm_below_sixty_does_not_raise():
    stamps = run_gate(2, rpm=30, tpm=None)  # 0.5/s; capacity clamps to 1 unit
    assert stamps[1] >= 1.9


def test_a_large_request_is_clamped_to_the_token_bucket_instead_of_raising():
    async def main():
        gate = RateGate(rpm=None, tpm=600)  # 10 tokens per second
        await gate.acquire(10_000)

    asyncio.run(main())


def test_pause_holds_every_waiter_until_retry_after():
    async def main():
        gate = RateGate(rpm=None, tpm=None)
        loop = asyncio.get_running_loop()
        start = loop.time()
        gate.pause(0.3)
        await asyncio.gather(gate.acquire(1), gate.acquire(1))
        return loop.time() - start

    assert asyncio.run(main()) >= 0.29


def test_concurrency_caps_calls_in_flight():
    async def main():
        limits = Limits(concurrency=3, rpm=None, tpm=None)
        active = peak = 0

        async def call():
            nonlocal active, peak
            async with limits.slot("m", 1):
                active += 1
                peak = max(peak, active)
                await asyncio.sleep(0.01)
                active -= 1

        await asyncio.gather(*(call() for _ in range(12)))
        return peak

    assert asyncio.run(main()) == 3


def test_each_model_has_its_own_gate():
    async def main():
        limits = Limits(concurrency=4, rpm=60, tpm=None)
        return limits.gate("a") is limits.gate("a"), limits.gate("a") is limits.gate("b")

    assert asyncio.run(main()) == (True, False)


@pytest.mark.parametrize("rpm", [1, 30, 60, 90, 120, 600, 10_000])
def test_a_paced_limiter_never_exceeds_the_rate_in_any_minute(rpm):
    limiter = paced_limiter(rpm)
    burst = limiter.max_rate
    per_second = limiter.max_rate / limiter.time_period
    assert burst <= max(1, rpm / 60)  # at most one second of budget at once
    # Worst case in a minute: a full bucket plus 60 s of drain (or exact spacing for one unit).
    worst = 60 * per_second if burst == 1 else burst + 60 * per_second
    assert worst == pytest.approx(min(rpm, worst))
    assert worst >= 0.98 * rpm

"""The rate gate on a fake clock: every wait happens under the gate's FIFO lock, one at a
time, so a sleep that advances a fake clock gives the exact send times, on any machine."""

from __future__ import annotations

import asyncio

import pytest

from judgecli.judge.limits import RPM_MARGIN, Limits, RateGate, paced_limiter
from judgecli.judge.rate_headers import RateLimitInfo


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0)


def send_times(n: int, *, open_first: bool = True, before=None, **gate_args) -> list[float]:
    """When n calls, all queued at t=0, would be sent."""

    async def main():
        clock = FakeClock()
        gate = RateGate(clock=clock, sleep=clock.sleep, **gate_args)
        if open_first:
            gate.open()
        if before is not None:
            before(gate)
        stamps = []

        async def one():
            await gate.acquire(1)
            stamps.append(clock.now)

        await asyncio.gather(*(one() for _ in range(n)))
        return stamps

    return asyncio.run(main())


def test_rpm_spaces_calls_evenly_from_the_first_with_no_burst():
    # Regression (issue 13): 8-9 requests left at once at the start, and against a key
    # already at its limit each was a 429.
    stamps = send_times(25, rpm=600, tpm=None)
    gap = 60 / (600 * RPM_MARGIN)
    assert stamps == pytest.approx([i * gap for i in range(25)])


@pytest.mark.parametrize("rpm", [1, 30, 120, 600, 10_000])
def test_rpm_is_never_exceeded_in_any_closed_minute(rpm):
    stamps = send_times(min(3 * rpm, 2_000), rpm=rpm, tpm=None)
    start = 0
    for end, t in enumerate(stamps):
        while stamps[start] < t - 60:
            start += 1
        assert end - start + 1 <= rpm
    minutes = stamps[-1] / 60
    if minutes >= 1:
        assert (len(stamps) - 1) / minutes >= 0.98 * rpm


def test_without_a_limit_calls_are_not_paced():
    assert send_times(10, rpm=None, tpm=None) == [0.0] * 10


def test_a_429_before_any_reply_holds_every_call_and_releases_them_paced():
    # Regression (issue 13): when the Retry-After pause ended, every waiting worker sent at
    # once and met the wall again. The probe's 429, before any reply, is a key at its limit.
    def limited(gate):
        gate.rate_limited(RateLimitInfo(), retry_after=2.0)

    stamps = send_times(5, rpm=None, tpm=None, before=limited)
    assert stamps[0] == pytest.approx(2.0)
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert all(g > 0.1 for g in gaps)  # paced at the rate the 429 set, not all at once


def replies_then(gate, clock, *events):
    """Ten replies, one every 0.1 s; then each (seconds later, in_flight, info, retry_after)
    429 in turn."""
    for _ in range(10):
        clock.now += 0.1
        gate.replied(RateLimitInfo())
    for later, in_flight, info, retry_after in events:
        clock.now += later
        gate.in_flight = in_flight
        gate.rate_limited(info, retry_after)
    gate.in_flight = 0


def first_send_after(*events) -> float:
    """How long after the last of `events` the next call of the model may be sent."""

    async def main():
        clock = FakeClock()
        gate = RateGate(rpm=None, tpm=None, clock=clock, sleep=clock.sleep)
        gate.open()
        replies_then(gate, clock, *events)
        start = clock.now
        await gate.acquire(1)
        return clock.now - start

    return asyncio.run(main())


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([(0.0, 8, RateLimitInfo(), 1.0)], id="one-429-among-replies"),
        pytest.param(
            [(0.0, 8, RateLimitInfo(), 1.0), (0.0, 7, RateLimitInfo(), 1.0)],
            id="a-burst-of-429s-while-replies-are-pending",
        ),
        pytest.param(
            [(0.0, 0, RateLimitInfo(), 1.0), (0.2, 0, RateLimitInfo(), 1.0)],
            id="two-429s-within-the-retry-after",
        ),
    ],
)
def test_an_isolated_429_among_replies_holds_no_other_call(events):
    # Regression (issue 19): under 20% random 429s with Retry-After 1, each 429 held every
    # call of the model for a second; the refused call alone waits it now (the client).
    assert first_send_after(*events) == 0.0


def test_429s_and_no_reply_for_a_retry_after_hold_every_call():
    # A key at its limit: the refused call, retried after its Retry-After, is refused again,
    # no call got a reply meanwhile and none is in flight.
    events = [(0.0, 0, RateLimitInfo(), 1.0), (1.0, 0, RateLimitInfo(), 1.0)]
    assert first_send_after(*events) == pytest.approx(1.0)


def test_a_429_whose_headers_say_nothing_remains_holds_every_call():
    nothing_left = RateLimitInfo(limit=600, remaining=0, reset_s=2.0)
    assert first_send_after((0.0, 8, nothing_left, 2.0)) == pytest.approx(2.0)


def test_most_calls_refused_hold_every_call():
    # Twenty 429s, none in flight: over half of the last seconds' calls refused.
    events = [(0.01, 0, RateLimitInfo(), 0.5)] * 20
    assert first_send_after(*events) == pytest.approx(0.5)


def test_the_first_call_goes_alone_until_it_is_over():
    async def main():
        clock = FakeClock()
        gate = RateGate(rpm=None, tpm=None, clock=clock, sleep=clock.sleep)
        await gate.acquire(1)  # the probe
        follower = asyncio.create_task(gate.acquire(1))
        await asyncio.sleep(0.01)
        waiting = not follower.done()
        gate.open()
        await asyncio.wait_for(follower, 1)
        return waiting

    assert asyncio.run(main()) is True


def test_the_gate_opens_when_the_probe_call_fails():
    async def main():
        limits = Limits(concurrency=4, rpm=None, tpm=None)
        with pytest.raises(RuntimeError):
            async with limits.slot("m", 1):
                raise RuntimeError("the probe failed")
        async with limits.slot("m", 1):
            return True

    assert asyncio.run(asyncio.wait_for(main(), 5)) is True


def test_headers_saying_few_requests_remain_set_the_pace():
    def replied(gate):
        gate.replied(RateLimitInfo(limit=60, remaining=1, reset_s=60.0))

    stamps = send_times(4, rpm=None, tpm=None, before=replied)
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert gaps == pytest.approx([1 / 0.97] * 3)  # 60 per minute, 3% in hand


def test_a_large_request_is_clamped_to_the_token_bucket_instead_of_raising():
    async def main():
        gate = RateGate(rpm=None, tpm=600)  # 10 tokens per second
        gate.open()
        await gate.acquire(10_000)

    asyncio.run(main())


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


@pytest.mark.parametrize("tpm", [1, 30, 60, 90, 120, 600, 10_000])
def test_a_paced_token_limiter_never_exceeds_the_rate_in_any_minute(tpm):
    limiter = paced_limiter(tpm)
    burst = limiter.max_rate
    per_second = limiter.max_rate / limiter.time_period
    assert burst <= max(1, tpm / 60)  # at most one second of budget at once
    # Worst case in a minute: a full bucket plus 60 s of drain (or exact spacing for one unit).
    worst = 60 * per_second if burst == 1 else burst + 60 * per_second
    assert worst == pytest.approx(min(tpm, worst))
    assert worst >= 0.98 * tpm

"""A --workers child takes each level of stop once, however many ways it arrives
(running/relayed_stops.py): a SIGTERM to the whole process group reaches a worker from the
sender and again through its parent's relay."""

from __future__ import annotations

import os
import signal

import pytest

from judgecli.running.fan_out import handled_by
from judgecli.running.relayed_stops import CUT, HALT, StopRelay, relay_stops

TERM = signal.SIGTERM


def passed_on(*signals: signal.Signals) -> int:
    """How many SIGTERMs the relay hands on for these signals, in this order."""
    seen: list[int] = []
    relay = StopRelay(lambda signum, frame: seen.append(signum))
    for signum in signals:
        relay(signum, None)
    assert set(seen) <= {TERM}
    return len(seen)


@pytest.mark.parametrize(
    ("signals", "stops"),
    [
        pytest.param((TERM, HALT), 1, id="group-sigterm-then-the-relay"),
        pytest.param((HALT, TERM), 1, id="the-relay-first"),
        pytest.param((HALT,), 1, id="parent-alone-signalled"),
        pytest.param((HALT, CUT), 2, id="parent-alone-signalled-twice"),
        pytest.param((TERM, HALT, TERM, CUT), 2, id="group-sigterm-twice"),
        pytest.param((TERM, HALT, CUT, TERM), 2, id="group-twice-relay-first"),
        pytest.param((TERM, TERM, TERM), 3, id="the-worker-itself-thrice"),
        pytest.param((TERM, HALT, TERM, CUT, TERM), 3, id="a-third-still-counts"),
    ],
)
def test_each_level_of_stop_is_passed_on_once(signals, stops):
    assert passed_on(*signals) == stops


def test_a_phase_handler_takes_the_relayed_stops_and_hands_them_back():
    before = {s: signal.getsignal(s) for s in (TERM, HALT, CUT)}
    outer: list[int] = []
    inner: list[int] = []
    try:
        relay = relay_stops(lambda signum, frame: outer.append(signum))
        os.kill(os.getpid(), HALT)
        with handled_by(lambda signum, frame: inner.append(signum)):
            assert signal.getsignal(TERM) is relay  # still the relay: it counts the stops
            os.kill(os.getpid(), TERM)  # the group's copy of the stop already relayed
            os.kill(os.getpid(), CUT)
        assert signal.getsignal(TERM) is relay
        assert (outer, inner) == ([TERM], [TERM])
        os.kill(os.getpid(), TERM)  # the group's copy of the second
        assert outer == [TERM]
        os.kill(os.getpid(), TERM)  # a third: back with the handler of before
        assert (outer, inner) == ([TERM, TERM], [TERM])
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)

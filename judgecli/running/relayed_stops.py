"""A --workers child's stop, counted once however many ways it arrives (issue 36).

The parent relays each Ctrl-C or SIGTERM it takes to its workers: the first halts them (no
new call, the calls in flight land), the second cuts their grace short. A SIGTERM sent to
the whole process group (systemd's control-group kill, a CI runner cancelling a job)
reaches each worker twice: from the sender and from the parent's relay. Had the relay been
a SIGTERM too, the worker would have taken the two as a first and a second signal, cut its
calls in flight off, and a resume would have paid for them again. So the parent relays
with signals of its own, which say which stop they are (HALT, CUT), and a worker's SIGTERM
handler sees each level of stop once: the n-th SIGTERM from outside is level n, HALT is
level 1, CUT level 2, and only a level not reached before is passed on.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

HALT = signal.SIGUSR1
"""The parent's first stop: as a first SIGTERM."""
CUT = signal.SIGUSR2
"""The parent's second stop: as a second SIGTERM."""

STOP_SIGNALS = frozenset({signal.SIGTERM, HALT, CUT})
"""What a worker's StopRelay takes."""

Handler = Callable[[int, FrameType | None], None]


class StopRelay:
    """A worker's handler of SIGTERM, HALT and CUT: each stop level reached for the first
    time goes to `target` as one SIGTERM (the handler of the phase the worker is in:
    fan_out.handled_by sets it).
    """

    def __init__(self, target: Handler) -> None:
        self.target = target
        self.level = 0
        self.sigterms = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler (runs in the main thread, between two bytecodes)."""
        if signum == signal.SIGTERM:
            self.sigterms += 1
            level = self.sigterms
        else:
            level = 1 if signum == HALT else 2
        while self.level < level:
            self.level += 1
            self.target(signal.SIGTERM, frame)


def relay_stops(target: Handler) -> StopRelay:
    """Make this process (a --workers child) take its stops through a StopRelay, handing
    them to `target` until fan_out.handled_by sets another.
    """
    relay = StopRelay(target)
    for signum in STOP_SIGNALS:
        signal.signal(signum, relay)
    return relay

"""Signals noted, not raised where they land: a process that must not be cut off in the
middle of a step (a --workers parent between reading a case and writing it, a worker saying
its end) takes each signal only where it is safe (issue 36).
"""

from __future__ import annotations

import signal
from types import FrameType

from judgecli.running.fan_out import Terminated


class NotedSignals:
    """A signal handler that only notes each signal, for the main thread to act on where
    it is safe (`act`): the parent between two messages, never inside one (issue 36: a
    case read off a worker's pipe but not yet written was lost, though its call was paid
    and cached; a read cut in half left the pipe to be read from inside a message).
    """

    def __init__(self) -> None:
        self.came: list[signal.Signals] = []
        self.acted = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        """The handler: note the signal (appending to a list is safe in any bytecode)."""
        self.came.append(signal.Signals(signum))

    def act(self) -> None:
        """Raise the next signal not acted on yet, as a run interrupted by it raises:
        SIGTERM as Terminated, Ctrl-C as KeyboardInterrupt. Nothing if none came.
        """
        if self.acted < len(self.came):
            signum = self.came[self.acted]
            self.acted += 1
            raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

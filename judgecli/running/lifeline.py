"""A --workers child dies with its parent.

Killed by kill -9 (the out-of-memory killer, `timeout -s KILL`, a CI runner), the parent
cannot stop its workers, and before issue 29 they went on calling the judge for their whole
share (327 → 500 requests), then hung for good. So each worker learns of its parent's death
by itself, two ways:

- on Linux the kernel sends it a signal when the parent dies (prctl(2) PR_SET_PDEATHSIG);
  a parent that died before the request took effect is seen at once (the parent's pid is
  no longer the worker's parent's);
- everywhere, a thread watches a pipe whose write end only the parent holds (`Lifeline`):
  the kernel closes it when the parent dies, however it dies, and the watcher ends the
  process outright if it is still alive GRACE_S + ORPHAN_MARGIN_S later (whatever its main
  thread is stuck in).

Either way the worker sends itself one SIGTERM (`orphaned`), and SIGTERM halts a worker as it
halts a run: no new call, the calls in flight get judge.halt.GRACE_S to land in the reply
cache, then the worker ends. Its results have nobody to go to (nothing more is written to the
run), but `judge resume` finds their replies in the cache and pays nothing twice. The
parent-death signal is SIGHUP, not SIGTERM itself: the kernel sends it again each time the
process the worker was handed to next ends (the parent's other threads, measured: twice
within 0.1 s), and a second SIGTERM means "stop at once". (A terminal that hangs up sends
SIGHUP too: its parent dies of it, so the worker rightly halts.)

A pipe only tells of a death if no one else holds its other end: a forked worker inherits
every descriptor of its parent, so it closes what it must not hold at once (`Lifeline.tie`):
the lifeline's write end, and the parent's ends of its own and earlier workers' result
pipes (with a copy of its own, a dead parent's pipe never broke, and a worker blocked on a
full pipe hung for ever).
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import FrameType

from judgecli.errors import ExitCode
from judgecli.judge.halt import GRACE_S

ORPHAN_MARGIN_S = 10.0
"""After the grace: how long an orphaned worker may take to close its client and cache
before it is ended outright."""
PR_SET_PDEATHSIG = 1
"""prctl(2)'s option: the signal this process gets when its parent dies (linux/prctl.h)."""
PARENT_DEATH_SIGNAL = signal.SIGHUP
_TOLD = itertools.count()
"""How often this process was told its parent is gone (by the signal, by the watcher)."""


def orphaned(signum: int | None = None, frame: FrameType | None = None) -> None:
    """The parent is gone: halt this worker, once (a SIGTERM to itself, however often and
    by however many ways the news comes). Also the handler of PARENT_DEATH_SIGNAL.
    """
    if next(_TOLD) == 0:  # atomic: safe from a signal handler and the watcher thread at once
        os.kill(os.getpid(), signal.SIGTERM)


def ask_parent_death_signal(signum: int) -> bool:
    """Linux: have the kernel send this process `signum` when its parent dies. False where
    there is no such request (other systems) or it failed.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class Lifeline:
    """A pipe the parent holds the write end of, for its workers to read: it reads as
    closed (EOF) once the parent is gone. Nothing is ever written to it.
    """

    parent: int
    """The parent's pid."""
    reader: int
    writer: int

    @classmethod
    def open(cls) -> Lifeline:
        """In the parent, before the first worker is forked."""
        reader, writer = os.pipe()
        return cls(parent=os.getpid(), reader=reader, writer=writer)

    def forked(self) -> None:
        """In the parent, once every worker is forked: the reader is the workers' alone."""
        with contextlib.suppress(OSError):
            os.close(self.reader)

    def cut(self) -> None:
        """In the parent, once the workers have ended."""
        with contextlib.suppress(OSError):
            os.close(self.writer)

    def tie(self, inherited: Sequence[Connection]) -> None:
        """In a worker, first thing after the fork: close what it inherited of the parent
        (the lifeline's write end, the parent's ends of the result pipes), and die with the
        parent from now on.
        """
        for connection in inherited:
            connection.close()
        os.close(self.writer)
        signal.signal(PARENT_DEATH_SIGNAL, orphaned)
        ask_parent_death_signal(PARENT_DEATH_SIGNAL)
        if os.getppid() != self.parent:
            os._exit(ExitCode.INCOMPLETE)  # the parent died before the request took effect
        threading.Thread(
            target=watch, args=(self.reader,), name="judge-lifeline", daemon=True
        ).start()


def watch(reader: int) -> None:
    """The watcher thread of a worker: once the parent is gone, halt this worker, and end it
    if it still runs after its grace.
    """
    while os.read(reader, 1):  # never written to: returns only at the parent's death
        pass
    orphaned()
    time.sleep(GRACE_S + ORPHAN_MARGIN_S)
    os._exit(ExitCode.INCOMPLETE)

"""The garbage collector around start-up and exit: paused while the process loads, resumed
with everything loaded frozen once the long-lived work starts, frozen again at exit.

CPython 3.11 runs a collection every 700 new container objects, and an import creates
classes, functions and dicts by the thousand: `import litellm` spends ~0.45 s of its ~2.8 s
in collections that find nothing to free, and judge's own modules ~0.1 s more. At exit the
interpreter's final collections walk all of it again (~0.7 s with LiteLLM loaded).

So the `judge` command pauses the collector from its first line (`startup.main`), and the
code that starts the long-lived work (judging, serving) resumes it (`resume_gc`), with
everything loaded so far frozen: moved to a generation the collector never scans, since
modules and classes live as long as the process. At exit, the same freeze spares the final
walk. Code that imports `judgecli` as a library (tests, notebooks) keeps its collector as it
was: only `startup.main` pauses it, and `gc_paused` restores the state it found.

A ground-floor module: the judging code that resumes the collector must not import the
process's entry (which imports the whole command line).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_paused_by_main = False


def pause_gc_for_startup() -> None:
    """Pause the collector until `resume_gc` (the command line's first line)."""
    global _paused_by_main
    if gc.isenabled():
        gc.disable()
        _paused_by_main = True


def resume_gc() -> None:
    """Start-up is over: freeze what it loaded and collect again from here on. A no-op
    unless `pause_gc_for_startup` paused it, so a library caller's collector is untouched.
    """
    global _paused_by_main
    if _paused_by_main:
        _paused_by_main = False
        gc.freeze()
        gc.enable()


def freeze_for_exit() -> None:
    """The process is about to exit: spare the interpreter's final collections."""
    gc.freeze()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No collections inside the block (a big import); what it loaded is frozen after it
    and the collector is left as it was found.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()

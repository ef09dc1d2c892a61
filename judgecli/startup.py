"""The `judge` process's entry (`main`): the console script and `python -m judgecli`. The
garbage collector is paused while the process loads and frozen out of the way when it
exits (gc_pause.py says why).
"""

from __future__ import annotations

import sys

from judgecli.gc_pause import freeze_for_exit, pause_gc_for_startup


def main() -> None:
    """The `judge` console script and `python -m judgecli`: the command line, with the
    collector paused while it loads and frozen out of the way when it exits.
    """
    pause_gc_for_startup()
    from judgecli.cli.app import app_for

    try:
        app_for(sys.argv[1:])()
    finally:
        freeze_for_exit()

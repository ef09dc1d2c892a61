"""The command line: parse flags, make one core call, render, exit.

`app.py` holds the typer app and what every command shares (`exits_with_code`, the
`stdout` and `stderr` consoles); each command lives in its own module and registers itself
on that app with `@app.command`. This package's `__init__` is where the commands are
brought together, as inspect_ai's `_cli/main.py` does: importing a command module here is
what registers it (`judge --help` lists them in this order). The console script
`judge = "judgecli.startup:main"` and `python -m judgecli` start this app, from a module
that sets up the process first (startup.py).

Command modules import from `judgecli.cli.app`, never from this package, so no module
imports one that imports it back.
"""

from judgecli.cli import (  # noqa: F401  (imported to register their commands)
    arena,
    cache,
    calibrate,
    collect,
    demo,
    drift,
    gate,
    merge,
    pairwise,
    refine,
    report,
    resume,
    review,
    rubrics,
    score,
    simulate,
)
from judgecli.cli.app import app, exits_with_code, stderr, stdout

__all__ = ["app", "exits_with_code", "stderr", "stdout"]

"""The command line a command was invoked with, rebuilt from its parsed parameters.

run.json records it so `judge resume` can run the same command again. It is rebuilt from
what typer parsed rather than taken from sys.argv, so values that came from JUDGE_*
environment variables are written out too (a resume must not depend on the shell it runs
in) and the record is right however the command was invoked (console script, `python -m`,
a test runner).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def invocation(ctx: typer.Context) -> list[str]:
    """`judge <command> [args] [--flags]` equivalent to this invocation."""
    # The subcommand names from the context chain: the root's own name varies with how
    # judge was started (`judge`, `python -m judgecli`, `__main__.py`).
    names: list[str] = []
    current: typer.Context | None = ctx
    while current is not None and current.parent is not None:
        names.insert(0, current.info_name or "")
        current = current.parent  # type: ignore[assignment]
    argv = ["judge", *names]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        argv += as_args(param, value)
    return argv


def as_args(param: Any, value: Any) -> list[str]:
    """One parameter's value as command-line words (nothing when it is the default)."""
    if value is None or (isinstance(value, list | tuple) and not value):
        return []
    values = list(value) if isinstance(value, list | tuple) else [value]
    if param.param_type_name == "argument":
        return [word(v) for v in values]
    if getattr(param, "is_flag", False):
        if value == param.default:
            return []
        names = param.opts if value else param.secondary_opts
        return [long_name(names)] if names else []
    if value == param.default:
        return []
    name = long_name(param.opts)
    return [w for v in values for w in (name, word(v))]


def word(value: Any) -> str:
    """A value as a command-line word: a path as given (typer's Path of `hf://owner/name`
    folds its `//`: the name is written whole again).
    """
    from judgecli.inputs.rows import shown

    return shown(value) if isinstance(value, Path) else str(value)


def long_name(opts: list[str]) -> str:
    """The --long spelling of an option."""
    return next((o for o in opts if o.startswith("--")), opts[0])

"""The command line an API run is equivalent to, which run.json records as its `argv`: so
`judge resume RUN_DIR` continues a run the API started (the run's command line, replayed),
and run.json says how to make the run again from a shell, as it does for the CLI's runs.

Each setting given is written the way `cli/invocation.py` writes a parsed one: its long
spelling, and nothing for a value the command line would take by default.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

from judgecli.settings.flag_spec import FlagField
from judgecli.settings.flags import JudgeFlags, flag_fields
from judgecli.settings.gate_flags import GateThresholds, threshold_fields


def command_line(
    command: str,
    arguments: Iterable[str | os.PathLike[str]],
    flags: JudgeFlags,
    thresholds: GateThresholds | None = None,
    *options: tuple[str, Any, Any],
) -> list[str]:
    """`judge COMMAND ARGUMENTS... --flags` for these settings: the command's own `options`
    ((spelling, value, default) triples, written as flag_words writes a flag's), the shared
    flags and the gate's thresholds.
    """
    words = ["judge", command, *(word(a) for a in arguments)]
    for spelling, value, default in options:
        words += option_words(spelling, value, default=default)
    shared = {f.name: f for f in flag_fields()}
    for name in (f.name for f in fields(JudgeFlags)):
        words += flag_words(shared[name], getattr(flags, name))
    if thresholds is not None:
        for row in threshold_fields():
            words += flag_words(row, getattr(thresholds, row.name))
    return words


def flag_words(declared: FlagField, value: Any) -> list[str]:
    """A declared flag's value as words (none for its default)."""
    return option_words(declared.flag.names[0], value, default=declared.default)


def option_words(spelling: str, value: Any, *, default: Any) -> list[str]:
    """`--name VALUE` (repeated for a list), `--name` or `--no-name` for a switch, nothing
    for None or the default. `spelling` may be a switch's `--x/--no-x`.
    """
    if value is None or value == default or (isinstance(value, list | tuple) and not value):
        return []
    on, _, off = spelling.partition("/")
    if isinstance(value, bool):
        return [on] if value else ([off] if off else [])
    values = value if isinstance(value, list | tuple) else [value]
    return [w for v in values for w in (on, word(v))]


def word(value: Any) -> str:
    """One value as a command-line word: a path as given, an enum by its value, a number
    as Python writes it.
    """
    if isinstance(value, os.PathLike):
        from judgecli.inputs.rows import shown

        return shown(Path(value))
    return str(getattr(value, "value", value))

"""Settings as keyword arguments: the API takes the command line's judging flags by their
JudgeFlags field names (`concurrency=8`, `max_cost=2.0`, `model=[...]` for a panel) and the
gate's thresholds by GateThresholds' (`min_win_rate=0.55`), checks each as the command line
does (its type, its bounds), and gathers them into the JudgeFlags and GateThresholds the
command line makes: `settings.config.build_run_config` then makes the same RunConfig of
them, with the same defaults, the rubric's `judge:` block and the same checks.

A few spellings are the API's own: `cache=False` is `--no-cache` (`use_cache` too, as
RunConfig calls it), `field={"output": "answer"}` is `--field output=answer`, `price=(0.15,
0.6)` is `--price 0.15,0.6`, `sample=50` or `sample="10%"`. A name that is no setting is a
TypeError naming the nearest one, as Python's own for an unknown keyword would be.

Unlike the command line, the API reads no JUDGE_* variable in place of a setting: what a
call does is what its arguments say. (JUDGE_CACHE_DIR and JUDGE_RUBRICS_PATH, which say
where the reply cache and the rubric library are, hold for both.)
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, TypeVar, get_args

from judgecli.errors import ConfigError
from judgecli.settings.flag_spec import FlagField
from judgecli.settings.flags import JudgeFlags, flag_fields
from judgecli.settings.gate_flags import GateThresholds, ThresholdField

E = TypeVar("E", bound=StrEnum)
COMMAND_LINE_ONLY = frozenset(
    {"quiet", "json_output", "progress_every", "conclude_only", "batch", "workers"}
)
"""Flags of the command line's own: what it prints, a --batch submission (which `judge
collect` finishes), and --workers, which forks processes: a fork copies only the thread
that makes it, and the API judges in a thread of its own (loops.py). No API call takes
them."""
CACHE_NAMES = ("cache", "use_cache")
"""The API's spellings of --no-cache, the other way round: `cache=False`."""
LISTS = frozenset({"model", "field"})
"""Repeatable flags: a list (one string is a list of one)."""
PAIRS = frozenset({"price", "screen_price"})
"""IN,OUT prices: a string, or a pair of numbers."""
COUNTS_OR_SHARES = frozenset({"sample", "max_failures", "workers"})
"""N, P% or auto: a string, or a whole number."""


@dataclass(frozen=True)
class Settings:
    """The keyword arguments of one call, as the command line would have parsed them."""

    flags: JudgeFlags = field(default_factory=JudgeFlags)
    thresholds: GateThresholds = field(default_factory=GateThresholds)
    given: frozenset[str] = frozenset()
    """The JudgeFlags and GateThresholds fields a value was given for."""


def read_settings(
    given: Mapping[str, Any],
    *,
    caller: str,
    flags: Sequence[FlagField],
    thresholds: Sequence[ThresholdField] = (),
    own: Collection[str] = (),
) -> Settings:
    """The settings `given` (keyword arguments of `caller`): each a flag of `flags` or a
    threshold of `thresholds`. TypeError for any other name (the nearest of these, or of
    the call's `own` parameters, suggested) or a value of the wrong type; ConfigError (as
    the command line's exit 2) for a value out of its bounds.
    """
    offered = {shared.name: shared for shared in flags}
    gates = {row.name: row for row in thresholds}
    values: dict[str, Any] = {}
    gated: dict[str, Any] = {}
    for name, value in given.items():
        if name in CACHE_NAMES and "no_cache" in offered:
            if "no_cache" in values:
                raise TypeError(f"{caller}() got more than one of {', '.join(CACHE_NAMES)}")
            values["no_cache"] = not checked_bool(caller, name, value)
        elif name in offered:
            if value is not None:
                values[name] = flag_value(caller, offered[name], value)
        elif name in gates:
            if value is not None:
                gated[name] = bounded(name, number(caller, name, value), gates[name])
        else:
            raise unknown_setting(caller, name, [*offered, *CACHE_NAMES, *gates, *own])
    return Settings(JudgeFlags(**values), GateThresholds(**gated), frozenset(values) | set(gated))


def unknown_setting(caller: str, name: str, known: Iterable[str]) -> TypeError:
    """Python's error for an unknown keyword, with the nearest known one suggested."""
    names = sorted(set(known) - {"no_cache"})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    guess = f"; did you mean {close[0]}?" if close else ""
    if name in COMMAND_LINE_ONLY:
        return TypeError(
            f"{caller}() takes no {name!r}: that flag is the command line's own (what it "
            "prints, a --batch submission that `judge collect` finishes, or --workers "
            "processes, which a fork of the API's judging thread cannot make)"
        )
    if name in {shared.name for shared in flag_fields()} | {"no_cache"}:
        return TypeError(f"{caller}() takes no {name!r}: its command has no such flag{guess}")
    return TypeError(f"{caller}() got an unexpected keyword argument {name!r}{guess}")


def flag_value(caller: str, shared: FlagField, value: Any) -> Any:
    """A keyword argument as the JudgeFlags field `shared` holds it."""
    name = shared.name
    if name in LISTS:
        return words(caller, name, value)
    if name in PAIRS and isinstance(value, tuple | list):
        if len(value) != 2:
            raise TypeError(f"{caller}() argument {name!r} must be (IN, OUT) USD per 1M tokens")
        return ",".join(str(number(caller, name, v)) for v in value)
    if name in COUNTS_OR_SHARES and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    kinds = [t for t in get_args(shared.type) or [shared.type] if t is not type(None)]
    kind = kinds[0]
    if kind is bool:
        return checked_bool(caller, name, value)
    if kind is str:
        if isinstance(value, Enum):
            value = value.value
        if not isinstance(value, str):
            raise TypeError(f"{caller}() argument {name!r} must be a str, not {kind_of(value)}")
        return value
    if kind is Path:
        if not isinstance(value, str | os.PathLike):
            raise TypeError(f"{caller}() argument {name!r} must be a path, not {kind_of(value)}")
        if not str(os.fspath(value)).strip():
            raise ConfigError(
                f"{name}: the path is empty", hint="name a directory, or leave it out"
            )
        return Path(value)
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{caller}() argument {name!r} must be an int, not {kind_of(value)}")
        return bounded(name, value, shared)
    return bounded(name, number(caller, name, value), shared)


def choice(values: type[E], name: str, value: E | str) -> E:
    """An enum setting given as the enum or its value; ConfigError naming the values."""
    try:
        return values(value)
    except ValueError:
        allowed = ", ".join(values)
        raise ConfigError(f"{name}={value!r} is not one of: {allowed}") from None


def words(caller: str, name: str, value: Any) -> list[str]:
    """A repeatable flag's values: one string, strings, or (--field) a mapping."""
    if name == "field" and isinstance(value, Mapping):
        value = [f"{ours}={theirs}" for ours, theirs in value.items()]
    if isinstance(value, str):
        return [value]
    listed = list(value) if isinstance(value, Iterable) else None
    if listed is not None and all(isinstance(v, str) for v in listed):
        return listed
    raise TypeError(f"{caller}() argument {name!r} must be a str or a list of str")


def number(caller: str, name: str, value: Any) -> float:
    """A number (an int or a float, not a bool) as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{caller}() argument {name!r} must be a number, not {kind_of(value)}")
    return float(value)


def checked_bool(caller: str, name: str, value: Any) -> bool:
    """A switch: True or False, nothing that merely looks like one."""
    if not isinstance(value, bool):
        raise TypeError(f"{caller}() argument {name!r} must be True or False, not {value!r}")
    return value


def kind_of(value: Any) -> str:
    """A value's type, as Python's own messages name it."""
    return type(value).__name__


def bounded(name: str, value: float, shared: FlagField) -> Any:
    """`value`, within the bounds the flag declares (ConfigError naming them otherwise)."""
    declared = shared.flag
    low, high = declared.min, declared.max
    if declared.positive and value <= 0:
        raise ConfigError(f"{name}={value:g} is not greater than 0")
    if (low is not None and value < low) or (high is not None and value > high):
        span = " to ".join(f"{b:g}" for b in (low, high) if b is not None)
        both = low is not None and high is not None
        which = "from" if both else "at least" if low is not None else "at most"
        raise ConfigError(f"{name}={value:g} is out of range: {which} {span}")
    return value

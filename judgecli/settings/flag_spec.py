"""How one flag is declared: its spellings, help, bounds, where its value lands, and its roles.

The flag tables (`flags.JudgeFlags`, the judging flags; `gate_flags.GateThresholds`, the gate's
thresholds) are dataclasses whose fields each carry one `Flag` in their metadata. A flag's
`Role` says what its value means to the stages that never parse it, and they read their
lists off the tables rather than keeping their own:

- `PER_MACHINE`: `running/merge.py` lets the shards of one run differ in it;
- `VERDICTS`: `commands/drift/audit.py` reports two runs that differ in it;
- `THIS_RUN`: `cli/rejudge.py` gives a re-judged anchor set its default, not RUN_A's;
- `SHARED`: `running/workers.py` divides it among the worker processes.

`flag(...)` takes the roles without a default: a new flag cannot be declared without them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Role(enum.Flag):
    """What a flag's value says about a run besides the value: the roles it plays (none, or
    several joined with `|`).
    """

    NONE = 0
    """None of the roles below: a setting of the whole run that decides no verdict, and that
    the shards, a re-judged anchor set and every worker keep as given (--timeout, --seed)."""
    VERDICTS = enum.auto()
    """It can change what the judges say (the judges, the prompt, how a verdict is read):
    drift reports two runs that differ in it, and the shards of one run must agree on it."""
    PER_MACHINE = enum.auto()
    """It says where, how fast or how loudly one machine ran: the shards of one run may
    differ in it (judge merge)."""
    THIS_RUN = enum.auto()
    """It belongs to the one run it was given for (where it is written, what it prints,
    which cases, how it is submitted, its gate): a re-judged anchor set (judge drift
    --anchor) has its default, not RUN_A's."""
    SHARED = enum.auto()
    """A limit of the whole run: --workers gives each process an even share of it."""


@dataclass(frozen=True)
class Flag:
    """How one flag is spelled, documented and checked, where its value lands, and its roles."""

    names: tuple[str, ...]
    """Its spellings, the long one first: ("--concurrency", "-c"), or "--x/--no-x"."""
    help: str
    panel: str
    """The `--help` panel listing it."""
    roles: Role
    """What its value says about a run besides the value (see Role)."""
    env: str | None = None
    """The JUDGE_* variable that stands in for it (typer reads it: flag > environment)."""
    metavar: str | None = None
    """What `--help` calls its value (N, USD, MODEL); None for a flag that takes none."""
    min: float | None = None
    max: float | None = None
    positive: bool = False
    """The value must be greater than 0."""
    show_default: bool = True
    to: str | None = None
    """The RunConfig field its value sets as given."""
    sets: str | None = None
    """The RunConfig field config.build_run_config makes of its value (use_cache of
    --no-cache), for a flag without `to`; None when it sets none of its own (--price is part
    of each judge's settings, --quiet only the command reads)."""
    rubric: bool = False
    """Without the flag, the rubric's `judge:` value of the same name sets that field."""
    hidden: bool = False
    """Not listed by `--help`: set by judge itself (judge merge), not by users."""

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every way the command line spells it: `--json-schema/--no-json-schema` is two."""
        return tuple(spelt for name in self.names for spelt in name.split("/"))

    @property
    def lands_in(self) -> str | None:
        """The RunConfig field its value sets, as given or made by build_run_config."""
        return self.to or self.sets


FLAG = "flag"
"""The key of a flag table field's metadata that holds its Flag."""


def flag(
    *names: str,
    help: str,
    panel: str,
    roles: Role,
    default: Any = None,
    env: str | None = None,
    metavar: str | None = None,
    min: float | None = None,
    max: float | None = None,
    positive: bool = False,
    show_default: bool = True,
    to: str | None = None,
    sets: str | None = None,
    rubric: bool = False,
    hidden: bool = False,
) -> Any:
    """A flag table's field: its default, and the Flag the other arguments describe."""
    declared = Flag(
        names=names,
        help=help,
        panel=panel,
        roles=roles,
        env=env,
        metavar=metavar,
        min=min,
        max=max,
        positive=positive,
        show_default=show_default,
        to=to,
        sets=sets,
        rubric=rubric,
        hidden=hidden,
    )
    return field(default=default, metadata={FLAG: declared})


@dataclass(frozen=True)
class FlagField:
    """One field of a flag table: its name, type and default, and the Flag it declares."""

    name: str
    type: Any
    default: Any
    flag: Flag

    @property
    def switch(self) -> bool:
        """Whether the flag takes no value (`--quiet`, `--json-schema/--no-json-schema`)."""
        return self.type is bool or self.type == bool | None

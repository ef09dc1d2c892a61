"""Typer options: the shared judging flags and the gate's thresholds made from their
declarations (judgecli/settings/flags.py, judgecli/settings/gate_flags.py), and the options
a few commands share (the rubric, how the gate compares, pairwise's flips).

Every option that takes a value names it (`MODEL`, `N`, `USD`): typer would otherwise show
Python types (`<list[str]>`, `<float range> [x>=0.001]`), which take half of an 80-column
help screen and tell a user less. "Greater than 0" is checked by a callback rather than by
`min=0.001`, whose range typer prints beside the metavar.

An option with a fixed set of values is an enum option: `--help` and shell completion list
the values, and a value outside them is one `error:` line naming the flag (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

import typer

from judgecli.settings.flag_spec import FlagField
from judgecli.settings.flags import flag_fields
from judgecli.settings.gate_flags import GATE as GATE
from judgecli.settings.gate_flags import threshold_fields
from judgecli.settings.judging_flags import DATA, JUDGE

E = TypeVar("E", bound=StrEnum)


def positive(value: float | None) -> float | None:
    """Callback: a value that must be greater than 0 (a rate, a time, a price cap)."""
    if value is not None and value <= 0:
        raise typer.BadParameter(f"{value:g} is not greater than 0")
    return value


def path_value(value: str) -> Path:
    """A typer `parser` for a path option: the path, never an empty one. `--out "$OUT"` with
    OUT unset would otherwise be the current directory, and a run's files would land there.
    """
    if not value.strip():
        raise typer.BadParameter(
            "the path is empty (an unset variable?): name a directory, or leave the option out"
        )
    return Path(value)


def judge_option(shared: FlagField) -> Any:
    """The typer option of a declared flag (a shared judging flag, a gate threshold)."""
    declared = shared.flag
    return typer.Option(
        *declared.names,
        envvar=declared.env,
        metavar=declared.metavar,
        rich_help_panel=declared.panel,
        help=declared.help,
        min=declared.min,
        max=declared.max,
        callback=positive if declared.positive else None,
        parser=path_value if Path in (shared.type, *get_args(shared.type)) else None,
        show_default=declared.show_default,
        hidden=declared.hidden,
    )


def shared_flag(name: str) -> FlagField:
    """The declaration of the shared flag `name` (KeyError: there is none)."""
    return {shared.name: shared for shared in flag_fields()}[name]


# Shared flags that other commands offer on their own (`judge resume`, `judge report`,
# `judge collect`, `judge merge`, `judge drift`).
MaxCostOpt = Annotated[float | None, judge_option(shared_flag("max_cost"))]
JsonOpt = Annotated[bool, judge_option(shared_flag("json_output"))]
QuietOpt = Annotated[bool, judge_option(shared_flag("quiet"))]
# The threshold `judge arena` takes beside its own gate (its gate is not a GateSpec).
MinConsistencyOpt = Annotated[
    float | None, judge_option({t.name: t for t in threshold_fields()}["min_consistency"])
]


class ChoiceError(typer.BadParameter):
    """A value outside an enum option's values. Its message names the flag itself, in the
    words these errors have always had (`--on 'x' is not one of: point, lower-bound`), so
    it is shown without click's `Invalid value for '--on':` in front.
    """

    def format_message(self) -> str:  # noqa: D102
        return self.message


def choice(values: type[E], flag: str) -> Callable[[str], E]:
    """A typer `parser` for an enum option: the value, in any case, as a member of `values`;
    otherwise `--flag 'x' is not one of: a, b`.
    """

    def parse(value: str) -> E:
        try:
            return values(value.strip().lower())
        except ValueError:
            allowed = ", ".join(values)
            raise ChoiceError(f"{flag} {value!r} is not one of: {allowed}") from None

    return parse


# The enum options' values. Each mirrors the core enum a command turns it into (a test keeps
# them equal): typer reads every command's options to build any `--help` or completion, and
# importing debias, gate and store.sheets for their enums would load pydantic and numpy
# there, doubling the time `judge --help` and every <TAB> take.
class FlipPolicyChoice(StrEnum):
    """--flip-policy: debias.FlipPolicy's values."""

    TIE = "tie"
    DROP = "drop"
    VOTE = "vote"


class GateOnChoice(StrEnum):
    """--on: gate.GateOn's values."""

    POINT = "point"
    LOWER_BOUND = "lower-bound"
    CORRECTED = "corrected"
    CORRECTED_LOWER_BOUND = "corrected-lower-bound"
    SEQUENTIAL = "sequential"


class SheetFormatChoice(StrEnum):
    """review export --format: store.sheets.SheetFormat's values."""

    CSV = "csv"
    JSONL = "jsonl"


RubricOpt = Annotated[
    str,
    typer.Option(
        "--rubric",
        "-r",
        metavar="RUBRIC",
        help="Rubric YAML file, or the name of a library rubric.",
    ),
]
AllowPartialOpt = Annotated[
    bool,
    typer.Option(
        "--allow-partial",
        rich_help_panel=DATA,
        help="Judge only ids present in both files (reported) instead of failing.",
    ),
]
FlipOpt = Annotated[
    bool,
    typer.Option(
        "--flip/--no-flip",
        rich_help_panel=JUDGE,
        help="Judge each pair in both orders, cancelling position bias.",
    ),
]
FlipPolicyOpt = Annotated[
    FlipPolicyChoice,
    typer.Option(
        "--flip-policy",
        parser=choice(FlipPolicyChoice, "--flip-policy"),
        rich_help_panel=JUDGE,
        help="When a judge's two orders disagree: a tie (MT-Bench), drop the case, or let a "
        "win beat a tie.",
    ),
]
GateOnOpt = Annotated[
    GateOnChoice,
    typer.Option(
        "--on",
        "--gate-on",
        parser=choice(GateOnChoice, "--on"),
        rich_help_panel=GATE,
        help="Compare the point estimate, the pessimistic end of its 95% interval, the "
        "human-corrected estimate (needs --labels) or its bound, or a --sequential run's "
        "decision.",
    ),
]
SequentialOpt = Annotated[
    bool,
    typer.Option(
        "--sequential",
        rich_help_panel=GATE,
        help="Judge cases in a seeded random order and stop as soon as an anytime-valid "
        "confidence sequence puts the gated number above or below its bar (one --min-* "
        "threshold).",
    ),
]
AlphaOpt = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        metavar="A",
        rich_help_panel=GATE,
        help="The --sequential gate's error rate (default 0.05); a fixed-n gate's intervals "
        "are 95%.",
        show_default=False,
    ),
]
LabelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--labels",
        metavar="LABELS.jsonl",
        rich_help_panel=GATE,
        help="Human labels of some cases (calibrate's format): also report the "
        "human-corrected estimate (PPI++), and gate on it with --on corrected.",
    ),
]
FdrOpt = Annotated[
    bool,
    typer.Option(
        "--fdr",
        rich_help_panel=GATE,
        help="Mark categories above/below by Benjamini-Hochberg (false discovery rate) "
        "instead of Holm (family-wise error).",
    ),
]
GATE_OPTIONS = frozenset({"on", "sequential", "alpha", "labels", "fdr", "require_qualified"})
"""The gate's options beside its thresholds (GateOnOpt, SequentialOpt, AlphaOpt, LabelsOpt, FdrOpt,
and cli/qualified's RequireQualifiedOpt), by parameter name: how the thresholds are
compared and who may be gated, not what is judged."""
ResumeRetryFailedOpt = Annotated[
    bool,
    typer.Option("--retry-failed", help="Judge the cases that failed last time again."),
]

"""The gate a `judge plan` command line sets (deciding/planning sizes it): read as the
command reads it, its threshold flags the ones settings/gate_flags declares for that
command; a plan sizes the one mean a --sequential run could follow (--min-win-rate,
--min-pass-rate, --min-mean), and a mean's scale is its rubric's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from judgecli.errors import InputError
from judgecli.settings.flag_spec import FLAG
from judgecli.settings.gate_flags import (
    THRESHOLD,
    GateThresholds,
    Sequence,
    Threshold,
)
from judgecli.summary.gate_records import GateMetric, GateOn

PLANNED_COMMANDS = ("score", "pairwise")
"""The judging commands whose gate a plan sizes."""
ON_FLAGS = ("--on", "--gate-on")


@dataclass(frozen=True)
class PlannedGate:
    """The gate a command line sets: its metric, floor and what it compares (--on)."""

    command: str
    flag: str
    metric: GateMetric
    floor: float
    on: GateOn
    sequential: bool


def _flag_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The last value given to a flag of `names` (`--flag V` or `--flag=V`), as the
    command's parser would keep it.
    """
    found: str | None = None
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name:
                if index + 1 >= len(argv):
                    raise InputError(f"{name} needs a value", hint=f"e.g. {name} 0.55")
                found = argv[index + 1]
            elif arg.startswith(name + "="):
                found = arg.split("=", 1)[1]
    return found


def planned_gate(argv: list[str]) -> PlannedGate:
    """The gate the command line `argv` (COMMAND ARGS...) sets."""
    if not argv or argv[0] not in PLANNED_COMMANDS:
        given = argv[0] if argv else "nothing"
        raise InputError(
            f"judge plan sizes a score or pairwise command, got {given}",
            hint="e.g. judge plan pairwise OLD NEW --min-win-rate 0.55 --effect 0.60",
        )
    command, rest = argv[0], argv[1:]
    found: list[tuple[str, Threshold, float]] = []
    for spec in fields(GateThresholds):
        gated: Threshold = spec.metadata[THRESHOLD]
        name = spec.metadata[FLAG].names[0]
        value = _flag_value(rest, (name,))
        if value is None:
            continue
        if command not in gated.commands:
            raise InputError(f"judge {command} has no {name}", hint=f"see judge {command} --help")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"{name}: {value!r} is not a number") from None
        if gated.sequence is Sequence.FOLLOWS:
            found.append((name, gated, number))
    if len(found) != 1:
        follows = [
            f.metadata[FLAG].names[0]
            for f in fields(GateThresholds)
            if f.metadata[THRESHOLD].sequence is Sequence.FOLLOWS
            and command in f.metadata[THRESHOLD].commands
        ]
        raise InputError(
            f"judge plan sizes one mean's floor; the command gives {len(found)}",
            hint=f"give exactly one of {', '.join(follows)}",
        )
    name, gated, floor = found[0]
    on_text = _flag_value(rest, ON_FLAGS) or GateOn.POINT.value
    sequential = "--sequential" in rest or on_text == GateOn.SEQUENTIAL.value
    on = GateOn.POINT if sequential else GateOn(on_text) if on_text in _ONS else None
    if on is None or on not in (GateOn.POINT, GateOn.LOWER_BOUND):
        raise InputError(
            f"--on {on_text}: a plan sizes the point, the lower bound or a --sequential run",
            hint="use --on point, --on lower-bound or --sequential",
        )
    return PlannedGate(command, name, GateMetric(gated.metric), floor, on, sequential)


_ONS = frozenset(o.value for o in GateOn)


def mean_scale(argv: list[str], gate: PlannedGate) -> tuple[float, float] | None:
    """The scale a --min-mean gate's sequence maps a score from onto 0..1, as the run does
    (deciding/decision.value_scale): its --rubric's. None when the command line names no
    rubric and does not ask for --sequential; InputError when the rubric cannot be read,
    has no scale, or the floor does not lie strictly inside it.
    """
    from judgecli.deciding.decision import value_scale
    from judgecli.errors import ConfigError, RubricError
    from judgecli.inputs.rubric_file import load_rubric
    from judgecli.inputs.rubric_library import find_rubric
    from judgecli.settings.config import rubric_dirs

    ref = _flag_value(argv[1:], ("--rubric", "-r"))
    if ref is None:
        if not gate.sequential:
            return None
        raise InputError(
            f"{gate.flag} --sequential: a plan maps the scores onto 0..1 by the rubric's scale",
            hint="give the command's --rubric",
        )
    try:
        rubric = load_rubric(find_rubric(ref, rubric_dirs()), dirs=rubric_dirs())
        low, high = value_scale(gate.metric, rubric, gate.flag)
    except (RubricError, ConfigError) as err:
        raise InputError(f"--rubric {ref}: {err.message}", hint=err.hint) from None
    if not low < gate.floor < high:
        raise InputError(
            f"{gate.flag} {gate.floor:g} leaves nothing to decide on the scale {low:g}..{high:g}",
            hint="a bar lies strictly inside the rubric's scale",
        )
    return low, high

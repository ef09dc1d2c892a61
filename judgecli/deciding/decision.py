"""How a score or pairwise run decides: its gate, the confidence sequence it follows
(--sequential, planned here from the gate's one floor), the human labels its numbers are
corrected with (--labels), and the correction its category marks use (--fdr). The CLI
reads them from the gate flags (`cli.inputs.decision_inputs`); the commands' jobs take
them as one value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgecli.deciding.gate import GateSpec
from judgecli.errors import ConfigError
from judgecli.rubric import Rubric
from judgecli.settings.gate_flags import Sequence, one_of, threshold_fields
from judgecli.stats.multiplicity import Correction
from judgecli.summary.gate_records import GateMetric, GateOn

if TYPE_CHECKING:
    # Annotations only: the run that has labels (or a sequence) imports what reads them.
    from judgecli.deciding.corrected import HumanLabels
    from judgecli.deciding.sequential import SequentialGate


@dataclass(frozen=True)
class Deciding:
    """The decision's settings of one run (the defaults: no gate, Holm-marked categories)."""

    gate: GateSpec = field(default_factory=GateSpec)
    sequential: SequentialGate | None = None
    labels: HumanLabels | None = None
    correction: Correction = Correction.HOLM


def plan_sequential(
    spec: GateSpec, rubric: Rubric, *, seed: int, alpha: float | None = None
) -> SequentialGate:
    """The sequential gate a --sequential run follows: its one floor (a threshold declared
    `Sequence.FOLLOWS`: --min-win-rate, --min-pass-rate or --min-mean). ConfigError (exit
    2, before anything is judged) for a run with no such floor, or with other thresholds
    (but the floor the verdicts stand on): stopping is decided by one number.
    """
    from judgecli.deciding.sequential import SequentialGate

    given = spec.given()
    followed = [(row, bar) for row, bar in given if row.threshold.sequence is Sequence.FOLLOWS]
    refused = [row for row, _ in given if row.threshold.sequence is Sequence.REFUSED]
    if len(followed) != 1 or refused:
        raise ConfigError(
            f"--sequential stops on one number: give exactly one of {followable()}, and no "
            f"other threshold (but the {one_of(spelt(Sequence.BESIDE))} floor)",
            hint="e.g. judge pairwise OLD NEW --sequential --min-win-rate 0.55; check the "
            "other numbers afterwards with judge gate SUMMARY.json",
        )
    if spec.on not in (GateOn.POINT, GateOn.SEQUENTIAL):
        raise ConfigError(
            f"--sequential decides by its confidence sequence, not --on {spec.on.value}",
            hint="leave --on out with --sequential",
        )
    [(row, threshold)] = followed
    metric = GateMetric(row.threshold.metric)
    scale = value_scale(metric, rubric, row.spelling)
    if not scale[0] < threshold < scale[1]:
        raise ConfigError(
            f"{row.spelling} {threshold:g} leaves nothing to decide on the scale "
            f"{scale[0]:g}..{scale[1]:g}",
            hint="a sequential bar lies strictly inside the scale",
        )
    if alpha is None:
        return SequentialGate(metric=metric, threshold=threshold, scale=scale, seed=seed)
    return SequentialGate(metric=metric, threshold=threshold, scale=scale, alpha=alpha, seed=seed)


def value_scale(metric: GateMetric, rubric: Rubric, spelling: str) -> tuple[float, float]:
    """The bounds of one case's value, which the sequential gate maps onto 0..1: the
    rubric's score scale for a mean (ConfigError when it has none), 0..1 for a rate.
    `judge plan` sizes the sequence on the same map (deciding/planning).
    """
    if metric is not GateMetric.MEAN:
        return (0.0, 1.0)
    if rubric.scale is None:
        raise ConfigError(
            f"{spelling} needs a rubric with a score scale; {rubric.name!r} has none",
            hint="use --min-pass-rate with a binary rubric",
        )
    return (rubric.scale.min, rubric.scale.max)


def spelt(sequence: Sequence) -> list[str]:
    """The thresholds a --sequential run treats as `sequence` says, by their spelling."""
    return [row.spelling for row in threshold_fields() if row.threshold.sequence is sequence]


def followable() -> str:
    """The floors a sequence can follow, each with the commands that take it:
    `--min-win-rate (pairwise), --min-pass-rate or --min-mean (score)`.
    """
    by_commands: dict[str, list[str]] = {}
    for row in threshold_fields():
        if row.threshold.sequence is Sequence.FOLLOWS:
            commands = ", ".join(sorted(row.threshold.commands))
            by_commands.setdefault(commands, []).append(row.spelling)
    return ", ".join(
        f"{one_of(spellings)} ({commands})" for commands, spellings in by_commands.items()
    )

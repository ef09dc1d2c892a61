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


FLAG_OF = {
    GateMetric.WIN_RATE: "--min-win-rate",
    GateMetric.PASS_RATE: "--min-pass-rate",
    GateMetric.MEAN: "--min-mean",
}


def plan_sequential(spec: GateSpec, rubric: Rubric, *, seed: int) -> SequentialGate:
    """The sequential gate a --sequential run follows: its one floor (--min-win-rate,
    --min-pass-rate or --min-mean). ConfigError (exit 2, before anything is judged) for a
    run with no such floor, or with other thresholds: stopping is decided by one number.
    """
    from judgecli.deciding.sequential import SequentialGate

    given = list(spec.floors.items())
    # --min-consistency is the floor the verdicts stand on, not a number to stop on.
    others = (spec.max_loss_rate, spec.min_kappa, spec.min_accuracy, spec.min_stability)
    if len(given) != 1 or any(t is not None for t in (*others, spec.min_pass_k)):
        raise ConfigError(
            "--sequential stops on one number: give exactly one of --min-win-rate "
            "(pairwise), --min-pass-rate or --min-mean (score), and no other threshold "
            "(but the --min-consistency floor)",
            hint="e.g. judge pairwise OLD NEW --sequential --min-win-rate 0.55; check the "
            "other numbers afterwards with judge gate SUMMARY.json",
        )
    if spec.on not in (GateOn.POINT, GateOn.SEQUENTIAL):
        raise ConfigError(
            f"--sequential decides by its confidence sequence, not --on {spec.on.value}",
            hint="leave --on out with --sequential",
        )
    metric, threshold = given[0]
    scale = (0.0, 1.0)
    if metric is GateMetric.MEAN:
        if rubric.scale is None:
            raise ConfigError(
                f"--min-mean needs a rubric with a score scale; {rubric.name!r} has none",
                hint="use --min-pass-rate with a binary rubric",
            )
        scale = (rubric.scale.min, rubric.scale.max)
    if not scale[0] < threshold < scale[1]:
        raise ConfigError(
            f"{FLAG_OF[metric]} {threshold:g} leaves nothing to decide on the scale "
            f"{scale[0]:g}..{scale[1]:g}",
            hint="a sequential bar lies strictly inside the scale",
        )
    return SequentialGate(metric=metric, threshold=threshold, scale=scale, seed=seed)

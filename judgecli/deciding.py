"""How a score or pairwise run decides: its gate, the confidence sequence it follows
(--sequential), the human labels its numbers are corrected with (--labels), and the
correction its category marks use (--fdr). The CLI reads them from the gate flags
(`cli.inputs.decision_inputs`); the commands' jobs take them as one value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgecli.gate import GateSpec
from judgecli.stats.multiplicity import Correction

if TYPE_CHECKING:
    # Annotations only: the run that has labels (or a sequence) imports what reads them.
    from judgecli.corrected import HumanLabels
    from judgecli.sequential import SequentialGate


@dataclass(frozen=True)
class Deciding:
    """The decision's settings of one run (the defaults: no gate, Holm-marked categories)."""

    gate: GateSpec = field(default_factory=GateSpec)
    sequential: SequentialGate | None = None
    labels: HumanLabels | None = None
    correction: Correction = Correction.HOLM

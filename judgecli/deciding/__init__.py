"""Deciding: a run's numbers against what the user asked, the gate's verdict passed (exit 0),
failed on judged evidence (exit 1) or undecided (exit 3).

- `gate`: thresholds (`GateSpec`) against a summary → the verdict, check by check
- `decision`: how a run decides (`Deciding`: the gate, the sequence it follows, the human
  labels, the correction of its category marks), and the sequential gate planned
- `consistency`: the position-consistency floor a pairwise gate stands on
- `undecided`: why a check's evidence cannot decide, and what to do
- `measured`: whether a finished run measured what `judge gate` asks of it
- `outcomes`: the value one case contributes to a gated mean
- `sequential`: --sequential: follow a confidence sequence and stop once decided
- `corrected`: human-corrected estimates (PPI++, --labels)
- `verify`: whether a finished run kept to its evaluation spec (`judge verify`): each
  departure named
- `line_kept`: whether a command line given `--spec` is the spec's (refused before any
  call when it is not)
- `label_plan`: which cases a human should label, with known inclusion probabilities
  (`judge review plan`, the viewer's next case)
- `planned_gate`: the gate a `judge plan` command line sets, and a mean's scale
- `planning`: `judge plan`: the cases a command's gate needs (fixed n on the point or the
  lower bound, the sequential gate's expected and 95th-percentile n), from a pilot's spread
"""

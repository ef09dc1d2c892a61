"""`judge align` (docs/align.md): a rubric shaped on human labels, proved on a sealed split.

- `split`: the sealed split, stratified by label, and its hash
- `candidates`: the candidates (labelled examples, an optimizer's revision), each an
  `extends:` of the rubric
- `outcomes`: a verdict and a label as categories (a choice; pass or fail at a pass mark),
  and the pass mark fitted on train
- `choosing`: cross-validation on train alone (a rater that refuses any other id)
- `rating`: verdicts through the judge client, and the optimizer asked through it
- `start`: what `judge align` does first (config, labels, dataset, client), then the run
- `files`: the run directory's files (split.json first, rubric.yaml with its provenance)
- `run`: the run end to end, the gain on the sealed test and the run directory
"""

from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    REPEAT_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
)

LEFT_OUT = (
    CASCADE_FLAGS
    | SUBSET_FLAGS
    | SCALE_OUT_FLAGS
    | CHECKLIST_FLAGS
    | REPEAT_FLAGS
    | frozenset({"resume", "retry_failed", "workers"})
)
"""The shared flags align does not take (here, light, for the command line's --help and the
API alike): one sampled verdict a case, every case judged, no --resume yet (the reply cache
makes a re-run free instead: every verdict and the optimizer's replies are kept)."""

"""Commands: what each judging command adds to the spine (`running.job`): its items, how
one is graded, how its results become its numbers; and how a command's job is prepared from
what it was asked, and what its finished run means as an exit code. `cli/` parses the flags
and `api/` the keyword arguments, and both call these.

- `setup`: what every judging command does first (the rubric found, the RunConfig built,
  the gate's settings read)
- `jobs`: each judging command's job prepared from what it was asked
- `outcome`: a finished run's exit code (the command line's, and the API's `Run.exit_code`)
- `align`: `judge align` (docs/align.md): a rubric shaped on labels, proved on a sealed split

- `score`: `judge score`, a dataset graded with a pointwise or binary rubric
- `pairwise`: `judge pairwise`, NEW against OLD in both orders, the win rate and its warnings
- `calibrate`: `judge calibrate`, the judge's agreement with human labels
- `refine`: `judge refine`, generate, judge, regenerate with the judges' feedback
- `qualify`: `judge qualify`, the judge's agreement on labelled judge sets, its record,
  and `--require-qualified`'s check
- `drift`: `judge drift`, how far the verdicts moved when the judge changed
- `arena`: `judge arena`, many systems on one Bradley–Terry leaderboard
- `probe`: `judge probe`, the judge's verdicts under perturbations, flip rates, the gate
"""

"""Commands: what each judging command adds to the spine (`running.job`): its items, how
one is graded, how its results become its numbers. `cli/` parses the flags and calls these.

- `score`: `judge score`, a dataset graded with a pointwise or binary rubric
- `pairwise`: `judge pairwise`, NEW against OLD in both orders, the win rate and its warnings
- `calibrate`: `judge calibrate`, the judge's agreement with human labels
- `refine`: `judge refine`, generate, judge, regenerate with the judges' feedback
- `drift`: `judge drift`, how far the verdicts moved when the judge changed
- `arena`: `judge arena`, many systems on one Bradley–Terry leaderboard
"""

"""`judge arena`: many systems' answers to the same cases, compared pair by pair with a
pairwise rubric (both orders, as `judge pairwise` does), fitted to one Bradley–Terry
leaderboard with bootstrap intervals, and gated.

- `setup`: the systems, the schedule, the gate and the grading plan from the command line,
  each checked before anything is called or written
- `systems`: the systems' names, and their files joined on id pair by pair (pairs.scan_pairs)
- `schedule`: which comparisons are judged: round robin, against a baseline, or adaptive
- `gate`: --beats and --min-rank, checked against the summary
- `run`: judging the schedule into one run directory (judging.judge_all, round by round),
  then the summary, the gate and the files

The numbers are `summary.arena`'s, the model `stats.bradley_terry`'s, the reports
`report.arena`'s; docs/arena.md says what each means.
"""

"""`judge arena`: many systems' answers to the same cases, compared pair by pair with a
pairwise rubric (both orders, as `judge pairwise` does), fitted to one Bradley–Terry
leaderboard with bootstrap intervals, and gated.

- `setup`: the arena (`Arena`): the systems, the schedule, the gate and the grading plan
  from the command line, each checked before anything is called or written
- `systems`: the systems' names, and their files joined on id pair by pair (pairs.scan_pairs)
- `schedule`: which comparisons are judged: round robin, against a baseline, or adaptive,
  and the plan as the run goes, round by round (`Plan`)
- `gate`: --beats, --min-rank and the consistency floor, checked against the summary
- `run`: the arena as a job on the spine (`running.job.run_job`, as every judging command):
  its comparisons, how one is graded, its schedule's rounds
- `ending`: how its run concludes through the spine's `conclude`: the summary, the
  warnings, the incomplete rule in comparisons, the gate and the reports

The numbers are `summary.arena`'s, the model `stats.bradley_terry`'s, the reports
`report.arena`'s; docs/arena.md says what each means.
"""

"""Summaries: a run's results.jsonl → the numbers summary.json holds, per command. Domain-
aware (results, rubrics, labels, verdicts); the arithmetic itself is in `stats/`.

- `run`: RunSummary, the summary of any command (a union told apart by `command`), and
  reading one
- `facts`: what every summary has: the head (command, rubric, counts, Usage), the tail
  (failures, warnings, the gate's verdict, the cascade block, incomplete)
- `parts`: Part and Record, the two kinds of piece every summary model is built of
- `align`: AlignSummary, `judge align`'s summary.json (split, gains and their intervals)
- `gate_records`: the gate's verdict as summary.json holds it (checks, the consistency floor)
- `score`, `pairwise`, `calibrate`, `refine`: each command's summary model and summariser
- `length_control`: a pairwise run's length-controlled win rate, its fit and warning
- `arena`, `arena_length`, `arena_style`: an arena's leaderboard, its length-controlled win
  rates against the baseline, and the style covariates of `--style-control`
- `agreement`: agreement measures over (case, label) pairs, for calibrate
- `stability`: the judge's agreement with itself over --repeats K
- `checklist`: a checklist run's score with its interval, and each tag's
- `tool_calls`: a tool-call check's precision, recall and F1 over every call, with intervals
- `weighted`: the probability-weighted rates of --score-mode logprob
- `head`: a run's results → the fields every summary starts with (counts, usage, failures)
- `cascade`: a --screen run's tiers, costs and agreement
- `compare`: two runs of one rubric, case by case (`judge report A B`)
- `qualify`: `judge qualify`'s summary: each judge set's agreement, κ, position
  consistency and length preference with intervals, and its gate
- `drift`: `judge drift`'s summary.json and flips.jsonl lines (DriftSummary, Flip)
- `judge_shift`: the judge's shift on identical outputs beside the system's, and whether it
  could explain a gate's decision
- `probe`: `judge probe`'s summary: each probe's flip rate, interval and examples, its gate
"""

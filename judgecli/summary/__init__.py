"""Summaries: a run's results.jsonl → the numbers summary.json holds, per command. Domain-
aware (results, rubrics, labels, verdicts); the arithmetic itself is in `stats/`.

- `run`: RunSummary, Usage and the facts every summary has
- `score`, `pairwise`, `calibrate`, `refine`: each command's summary
- `cascade`: a --screen run's tiers, costs and agreement
- `compare`: two runs of one rubric, case by case (`judge report A B`)
"""

"""Settings: the flags, their environment variables, the rubric's `judge:` block and the
built-in defaults, merged once into the one validated `RunConfig` every stage is handed.

- `judging_flags`: the first part of the shared flags: how the judge is asked (model,
  sampling, cascade, limits, retries), and the panels of `--help`
- `flags`: the flags the judging commands share, declared once (spelling, help, where each
  lands in RunConfig, its roles)
- `gate_flags`: the gate's thresholds, declared once (spelling, help, bounds, the number
  each checks, the commands that take it, what --sequential does with it)
- `flag_spec`: how one flag is declared (`Flag`, `flag(...)`), and the roles a flag plays
  (`Role`: per machine, changes verdicts, belongs to its run, shared among workers)
- `config`: RunConfig and how it is built
- `judges`: how each judge is reached (ModelSettings: model, endpoint, price, format)
- `scale_flags`: --workers parsed and --batch checked before a run is configured
- `score_mode`: --score-mode (the written verdict, or the verdict weighed by its token
  probabilities)
- `items_per_call`: --items (a checklist's items asked one per call, or all at
  once), and what a checklist run is not graded with
- `spec_line`: the spec a judging command line pins (`spec_of`), and the flags `judge run
  SPEC` refuses because they would change it
"""

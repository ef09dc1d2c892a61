"""Settings: the flags, their environment variables, the rubric's `judge:` block and the
built-in defaults, merged once into the one validated `RunConfig` every stage is handed.

- `flags`: the flags the judging commands share, declared once (spelling, help, where each
  lands in RunConfig)
- `config`: RunConfig and how it is built
- `scale_flags`: --workers parsed and --batch checked before a run is configured
- `score_mode`: --score-mode (the written verdict, or the verdict weighed by its token
  probabilities)
"""

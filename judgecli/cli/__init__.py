"""The command line: parse flags, make one core call, render, exit.

`app.py` holds the typer app and what every command shares (`exits_with_code`, the
`stdout` and `stderr` consoles); each command lives in its own module and registers itself
on that app with `@app.command` when the module is imported. `app.COMMANDS` names them in
the order `judge --help` lists them, and `app.app_for` imports what one process needs: the
command it runs, or all of them (for --help and a misspelt name). `main.py` is the app with
every command, for code that drives it in-process (tests). The console script
`judge = "judgecli.startup:main"` and `python -m judgecli` start the app from a module
that sets up the process first (startup.py).

This package imports nothing itself: a command module imported here would load for every
command.

- `app`: the typer app, `exits_with_code`, the consoles, the commands' order
- `main`: the app with every command registered (for in-process callers)
- `score`, `pairwise`, `calibrate`, `refine`, `arena`: the judging commands
- `align`: `judge align`, a rubric shaped on labels and proved on a sealed split
- `drift`, `rejudge`: `judge drift`, and re-judging a run's anchor set for it
- `gate`, `report`, `resume`, `merge`, `collect`: commands over finished (or stopped) runs
- `plan`: `judge plan`, the cases a command's gate needs (sizing, calls no judge)
- `verify`: `judge verify`, whether a finished run kept to its evaluation spec
- `run_spec`: `judge run SPEC`, exactly the command an evaluation spec pins
- `qualify`, `qualified`: `judge qualify` (a judge measured on labelled judge sets), and
  the `--require-qualified` option score, pairwise and gate share
- `view`: the local web app to browse, compare and label runs
- `probe`: `judge probe`, the judge's position, length and verbosity biases
- `review`, `rubrics`, `cache`: the review sheet, the rubric library, the reply cache
- `simulate`, `demo`, `demo_data`: the bundled simulator, the offline demo and its datasets
- `flags`, `options`, `invocation`: the shared flags as typer options, the options a few
  commands share, the command line rebuilt
- `render`, `progress`, `streams`, `retry_advice`: printing a finished run, progress on
  stderr, consoles that keep lines whole, what to run after a run that lost cases
"""

"""The Python API: the engine the command line runs, called from Python (docs/api.md). Its
public names are `judgecli`'s own (`from judgecli import Judge, score_dataset`), listed in
`judgecli.__all__`.

- `judge`: `Judge`, grading one case or comparing two answers, sync and async
- `verdicts`: what a Judge returns (`Verdict`, `Comparison`, `Usage`), or GradeError
- `jobs`: `score_dataset`, `compare_datasets`: whole jobs, as `judge score` and `pairwise`
- `calibration`, `refining`, `arena`: `calibrate_judge`, `refine_dataset`, `run_arena`
- `aligning`: `align_rubric`, a rubric shaped on labels and proved on a sealed split as
  `judge align` does
- `probing`: `probe_judge`, the judge's biases measured as `judge probe` does
- `qualifying`: `qualify_judge`, a judge measured on labelled judge sets as `judge qualify`
  does, and its record
- `runs`: a finished job (`Run`), its run directory prepared, its job run on the spine
- `settings`: keyword arguments as the command line's flags and thresholds
- `cases`: cases given in memory, checked as a dataset's rows
- `argv`: the command line an API run is equivalent to (run.json's, for `judge resume`)
- `guard`: `guard`, a runtime guard: generate, judge, retry with the judges' feedback
- `guarded`: a guarded call's attempts and what it returns (`GuardResult`, `Attempt`)
- `loops`: the private event loop the synchronous calls run on
- `pytest_plugin`: the pytest plugin (entry point `pytest11: judge`): `llm_judge`, the
  session's numbers and its gate (docs/pytest.md)
- `pytest_session`: what the plugin keeps of a session (`Ledger`, `GateAsked`)
- `pytest_judge`: `llm_judge`'s Judge, recording each verdict (`RecordingJudge`)
- `pytest_cases`: one judged call of a test, as the session and JUnit keep it (`JudgedCase`)
- `pytest_gate`: the session's numbers by module, its gate and its exit status
- `pytest_report`: the session's numbers as the terminal summary shows them
- `rubrics`: `load_rubric`
"""

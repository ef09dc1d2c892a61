"""The Python API: the engine the command line runs, called from Python (docs/api.md). Its
public names are `judgecli`'s own (`from judgecli import Judge, score_dataset`), listed in
`judgecli.__all__`.

- `judge`: `Judge`, grading one case or comparing two answers, sync and async
- `verdicts`: what a Judge returns (`Verdict`, `Comparison`, `Usage`), or GradeError
- `jobs`: `score_dataset`, `compare_datasets`: whole jobs, as `judge score` and `pairwise`
- `calibration`, `refining`, `arena`: `calibrate_judge`, `refine_dataset`, `run_arena`
- `runs`: a finished job (`Run`), its run directory prepared, its job run on the spine
- `settings`: keyword arguments as the command line's flags and thresholds
- `cases`: cases given in memory, checked as a dataset's rows
- `argv`: the command line an API run is equivalent to (run.json's, for `judge resume`)
- `loops`: the private event loop the synchronous calls run on
- `rubrics`: `load_rubric`
"""

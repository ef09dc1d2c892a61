"""`judge drift RUN_A RUN_B`: did a change of the judge (model, rubric, temperature) move the
verdicts? With --anchor, RUN_B is made first: RUN_A's anchor set re-judged by the new judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt, QuietOpt, path_value
from judgecli.cli.rejudge import (
    AnchorOpt,
    JudgeChange,
    NewApiBaseOpt,
    NewModelOpt,
    NewRubricOpt,
    NewTemperatureOpt,
    NoCacheOpt,
    check_usage,
)
from judgecli.errors import ExitCode

if TYPE_CHECKING:
    from judgecli.summary.drift import Drift


@app.command("drift")
@exits_with_code
def drift_command(
    run_a: Annotated[Path, typer.Argument(metavar="RUN_A", help="The baseline run (old judge).")],
    run_b: Annotated[
        Path | None,
        typer.Argument(metavar="[RUN_B]", help="The run with the new judge.", show_default=False),
    ] = None,
    anchor: AnchorOpt = None,
    model: NewModelOpt = None,
    api_base: NewApiBaseOpt = None,
    rubric: NewRubricOpt = None,
    temperature: NewTemperatureOpt = None,
    no_cache: NoCacheOpt = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            parser=path_value,
            help="Where the drift is written (default: runs/<UTC time>-drift-<rubric>).",
            show_default=False,
        ),
    ] = None,
    max_shift: Annotated[
        float | None,
        typer.Option(
            metavar="X",
            min=0,
            help="Exit 1 when the shift is significant (95%) and larger than X either way.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an earlier drift in --out.")
    ] = False,
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Measure how far the verdicts moved between RUN_A and RUN_B (the same cases, judged
    before and after a change of model, rubric or temperature): flip rate, shift, κ.

    With --anchor, RUN_B is made first by re-judging the anchor file(s) with the command
    line RUN_A was made with; of its options, only --model, --api-base, --rubric,
    --temperature and --no-cache are replaced.
    """
    from judgecli.cli.rejudge import rejudge
    from judgecli.commands.drift.files import (
        REJUDGED,
        check_drift_dir,
        read_audited_run,
        write_drift,
    )
    from judgecli.commands.drift.measure import measure_drift
    from judgecli.settings.config import step_summary_path
    from judgecli.store import default_run_dir

    change = JudgeChange(model or None, api_base, rubric, temperature, no_cache)
    check_usage(run_b, anchor, change)
    a = read_audited_run(run_a)
    out = out or default_run_dir("drift", a.summary.rubric)
    check_drift_dir(out, replace=force)
    b_path = run_b if run_b is not None else out / REJUDGED
    if anchor:
        code = rejudge(a, anchor, change, b_path, force=force, quiet=quiet)
        if code not in (ExitCode.OK, ExitCode.GATE_FAILED):
            return code
    drift = measure_drift(a, read_audited_run(b_path), max_shift=max_shift)
    write_drift(out, drift, step_summary=step_summary_path())
    show(drift, out, quiet=quiet, json_output=json_output)
    return exit_code(drift)


def show(drift: Drift, out: Path, *, quiet: bool, json_output: bool) -> None:
    """The tables (not when quiet), warnings, the headline and where the drift is; with
    --json the summary on stdout and the rest on stderr.
    """
    import json

    from judgecli.cli.render import report_console
    from judgecli.report.drift import drift_headline, gate_note, terminal_tables

    console = report_console(json_output=json_output)
    s = drift.summary
    if not quiet:
        for table in terminal_tables(drift):
            console.print(table)
    for warning in s.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    line = escape(drift_headline(s))
    if s.gate is not None and s.gate.passed is not None:
        line = f"[bold {'green' if s.gate.passed else 'red'}]{line}[/]"
    console.print(line, soft_wrap=True)
    if note := gate_note(s):
        console.print(escape(note), soft_wrap=True)
    console.print(f"drift directory: {escape(str(out))}", soft_wrap=True)
    if json_output:
        print(json.dumps(s.model_dump(mode="json"), indent=2))


def exit_code(drift: Drift) -> ExitCode:
    """0 without a gate or when it passed, 1 when it failed, 3 when it could not decide."""
    gate = drift.summary.gate
    if gate is None or gate.passed:
        return ExitCode.OK
    if gate.passed is None:
        stderr.print(
            "[bold red]error:[/] the shift's interval could not be computed "
            f"({drift.summary.n_shift} case(s) with a value in both runs, or every one "
            "moved alike): --max-shift has no verdict"
        )
        return ExitCode.INCOMPLETE
    return ExitCode.GATE_FAILED

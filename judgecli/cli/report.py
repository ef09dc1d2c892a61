"""`judge report RUN_DIR [RUN_B]`: re-render a finished run's reports, or compare two runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt
from judgecli.errors import ExitCode

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.summary.run import RunSummary


@app.command("report")
@exits_with_code
def report_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="A finished run.")],
    other: Annotated[
        Path | None,
        typer.Argument(
            metavar="RUN_B", help="A second run of the same rubric: compare.", show_default=False
        ),
    ] = None,
    html: Annotated[bool, typer.Option("--html", help="(Re)write report.html.")] = False,
    open_it: Annotated[bool, typer.Option("--open", help="Open report.html in a browser.")] = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Print a run's report from its summary.json and results.jsonl (no judge calls)."""
    import json
    import webbrowser

    from judgecli.cli.render import print_json, print_summary, report_console
    from judgecli.report.markdown import compare_table
    from judgecli.run import write_reports

    out = report_console(json_output=json_output)
    summary, results = finished_run(run_dir)
    if other is None:
        if html or open_it:
            page = write_reports(run_dir, summary, results)
            stderr.print(f"wrote {escape(str(page))}")
            if open_it:
                webbrowser.open(page.resolve().as_uri())
        print_summary(summary, run_dir, quiet=False, out=out)
        if json_output:
            print_json(summary)
        return ExitCode.OK
    from judgecli.errors import InputError
    from judgecli.summary.compare import compare_runs

    summary_b, results_b = finished_run(other)
    if summary.rubric_hash != summary_b.rubric_hash or summary.command != summary_b.command:
        raise InputError(
            f"{run_dir} and {other} are not runs of the same command and rubric "
            f"({summary.command} {summary.rubric_hash} vs {summary_b.command} "
            f"{summary_b.rubric_hash})",
            hint="compare two runs of one rubric, e.g. before and after a prompt change",
        )
    deltas = compare_runs(summary, results, summary_b, results_b)
    out.print(compare_table(deltas, str(run_dir), str(other)))
    if json_output:
        print(json.dumps([vars(d) for d in deltas], indent=2))
    return ExitCode.OK


def finished_run(run_dir: Path) -> tuple[RunSummary, list[CaseResult]]:
    """A finished run's summary and results; for a folder that is no run, an error that
    does not suggest `judge resume` (only a run.json makes a run that can be continued).
    """
    from judgecli.errors import InputError
    from judgecli.run import load_run
    from judgecli.store import RUN_INFO, SUMMARY

    if not (run_dir / SUMMARY).exists() and not (run_dir / RUN_INFO).exists():
        raise InputError(
            f"{run_dir}: not a judge run directory (no {SUMMARY} or {RUN_INFO})",
            hint="pass a directory a judge command wrote, e.g. runs/<time>-<command>-<rubric>",
        )
    return load_run(run_dir)

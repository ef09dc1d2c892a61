"""`judge report RUN_DIR [RUN_B]`: re-render a finished run's reports, or compare two runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.options import JsonOpt
from judgecli.errors import ExitCode


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
    from judgecli.report.compare import compare_tables
    from judgecli.running.job import write_reports
    from judgecli.summary.compare import compare_finished_runs
    from judgecli.summary.run import load_run

    out = report_console(json_output=json_output)
    if other is None:
        summary, results = load_run(run_dir)
        if html or open_it:
            page = write_reports(run_dir, summary, results)
            stderr.print(f"wrote {escape(str(page))}")
            if open_it:
                webbrowser.open(page.resolve().as_uri())
        print_summary(summary, run_dir, quiet=False, out=out)
        if json_output:
            print_json(summary)
        return ExitCode.OK
    deltas = compare_finished_runs(run_dir, other)
    for table in compare_tables(deltas, str(run_dir), str(other)):
        out.print(table)
    if json_output:
        print(json.dumps([vars(d) for d in deltas], indent=2))
    return ExitCode.OK

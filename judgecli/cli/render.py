"""Printing a finished run's summary.

The report (tables, the headline, where the run directory is) goes to stdout, so
`judge report RUN | less` and `> report.txt` work; warnings and errors go to stderr. With
--json, stdout carries the summary JSON and nothing else, and the report moves to stderr:
a CI log still shows it while `judge ... --json > summary.json` stays valid JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from judgecli.cli.app import stderr, stdout
from judgecli.errors import ExitCode
from judgecli.report.markdown import gate_note, headline, terminal_tables
from judgecli.summary.run import RunSummary, summary_json


def report_console(*, json_output: bool) -> Console:
    """Where the human-readable report goes: stdout, unless stdout carries --json."""
    return stderr if json_output else stdout


def print_summary(summary: RunSummary, run_dir: Path, *, quiet: bool, out: Console) -> None:
    """The tables (not when quiet), the headline and where the run directory is, on `out`;
    the run's warnings on stderr.
    """
    if not quiet:
        for table in terminal_tables(summary):
            out.print(table)
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    line = escape(headline(summary))
    if summary.gate is not None and not summary.incomplete:
        colour = "green" if summary.gate.passed else "red"
        line = f"[bold {colour}]{line}[/]"
    # soft_wrap: the verdict and the path stay one line each, for grep and copy.
    out.print(line, soft_wrap=True)
    if note := gate_note(summary):
        out.print(f"[yellow]{escape(note)}[/]", soft_wrap=True)
    out.print(f"run directory: {escape(str(run_dir))}", soft_wrap=True)


def print_json(summary: RunSummary) -> None:
    """--json: summary.json on stdout, the only thing stdout then carries."""
    print(json.dumps(summary_json(summary), indent=2))


def print_incomplete(summary: RunSummary, run_dir: Path) -> None:
    """`error:` with why the run's numbers cannot stand for a verdict, and how to go on."""
    stderr.print(f"[bold red]error:[/] {escape(summary.incomplete or '')}")
    stderr.print(f"[dim]hint:[/] continue with: judge resume {escape(str(run_dir))} --retry-failed")


def report_outcome(
    summary: RunSummary, run_dir: Path, *, quiet: bool, json_output: bool
) -> ExitCode:
    """Print a finished run and say how to exit: 3 when the judge could not grade enough
    of it (whatever its gate says: an outage is not a regression), 1 when its gate failed.
    """
    print_summary(summary, run_dir, quiet=quiet, out=report_console(json_output=json_output))
    if json_output:
        print_json(summary)
    if summary.incomplete:
        print_incomplete(summary, run_dir)
        return ExitCode.INCOMPLETE
    if summary.gate is not None and not summary.gate.passed:
        return ExitCode.GATE_FAILED
    return ExitCode.OK

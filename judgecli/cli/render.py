"""Printing a finished run's summary.

The report (tables, the headline, where the run directory is) goes to stdout, so
`judge report RUN | less` and `> report.txt` work; warnings and errors go to stderr. With
--json, stdout carries the summary JSON and nothing else, and the report moves to stderr:
a CI log still shows it while `judge ... --json > summary.json` stays valid JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from judgecli.cli.app import stderr, stdout
from judgecli.commands.outcome import exit_code
from judgecli.errors import ExitCode
from judgecli.report.markdown import gate_note, headline, terminal_tables
from judgecli.summary.run import RunSummary, summary_json

if TYPE_CHECKING:
    from judgecli.deciding.gate import GateResult

VERDICT_COLOURS = {"PASS": "bold green", "FAIL": "bold red", "UNDECIDED": "bold yellow"}


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
        line = f"[{verdict_style(summary.gate)}]{line}[/]"
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
    from judgecli.cli.retry_advice import retry_hint

    errors = [failure.error for failure in summary.failures]
    stderr.print(f"[dim]hint:[/] {escape(retry_hint(run_dir, errors))}")


def verdict_style(gate: GateResult) -> str:
    """The colour of a gate's verdict line: green, red, or yellow when undecided."""
    return VERDICT_COLOURS[gate.outcome.value]


def print_undecided(why: str | None, hint: str | None) -> None:
    """`error:` with why the gate's evidence cannot decide, and `hint:` with what to do."""
    stderr.print(f"[bold red]error:[/] the gate is undecided: {escape(why or '')}")
    stderr.print(f"[dim]hint:[/] {escape(hint or '')}")


def report_outcome(
    summary: RunSummary, run_dir: Path, *, quiet: bool, json_output: bool
) -> ExitCode:
    """Print a finished run and say how to exit: 3 when the judge could not grade enough
    of it (whatever its gate says: an outage is not a regression) or when its gate's
    evidence cannot decide, 1 when its gate failed.
    """
    print_summary(summary, run_dir, quiet=quiet, out=report_console(json_output=json_output))
    if json_output:
        print_json(summary)
    if summary.incomplete:
        print_incomplete(summary, run_dir)
    elif summary.gate is not None and not summary.gate.decided:
        print_undecided(summary.gate.undecided, summary.gate.hint)
    return exit_code(summary)

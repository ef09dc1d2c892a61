"""Printing a finished run's summary for humans (stderr)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape

from judgecli.cli import stderr
from judgecli.errors import ExitCode
from judgecli.report import gate_note, headline, terminal_tables
from judgecli.stats.summary import RunSummary


def print_summary(summary: RunSummary, run_dir: Path, *, quiet: bool) -> None:
    """The tables, warnings and where the run directory is."""
    if not quiet:
        for table in terminal_tables(summary):
            stderr.print(table)
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    line = escape(headline(summary))
    if summary.gate is not None:
        colour = "green" if summary.gate["passed"] else "red"
        line = f"[bold {colour}]{line}[/]"
    stderr.print(line)
    if note := gate_note(summary):
        stderr.print(f"[yellow]{escape(note)}[/]")
    stderr.print(f"run directory: {escape(str(run_dir))}")


def print_json(summary: RunSummary) -> None:
    """--json: summary.json on stdout, the only thing stdout carries."""
    print(json.dumps(summary.model_dump(mode="json", exclude_none=True), indent=2))


def report_outcome(
    summary: RunSummary, run_dir: Path, *, quiet: bool, json_output: bool
) -> ExitCode:
    """Print a finished run (tables on stderr, --json on stdout); exit 1 when its gate failed."""
    print_summary(summary, run_dir, quiet=quiet)
    if json_output:
        print_json(summary)
    if summary.gate is not None and not summary.gate["passed"]:
        return ExitCode.GATE_FAILED
    return ExitCode.OK

"""`judge qualify`: may this judge gate? Its agreement with human labels on judge sets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.flags import judge_flags
from judgecli.cli.options import GATE, RubricOpt
from judgecli.errors import ExitCode
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
    JudgeFlags,
)

if TYPE_CHECKING:
    from judgecli.summary.qualify import QualifySummary

LEFT_OUT = CASCADE_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS | SUBSET_FLAGS | {"workers"}
"""A qualification judges every case of its sets, in one process: no cascade, shards,
batches, subsets or workers."""


@app.command("qualify")
@exits_with_code
@judge_flags(without=LEFT_OUT)
def qualify_command(
    ctx: typer.Context,
    rubric: RubricOpt = "pairwise",
    *,
    flags: JudgeFlags,
    judge_set: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="NAME|FILE",
            help="A bundled judge set's name or your own labelled JSONL (repeatable; "
            "default: every bundled set).",
            show_default=False,
        ),
    ] = None,
    min_agreement: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            metavar="A",
            rich_help_panel=GATE,
            help="Exit 1 unless every set's agreement lower bound (95%) is at least A.",
            show_default=False,
        ),
    ] = None,
) -> ExitCode:
    """Measure how far the judge agrees with human labels on labelled judge sets (bundled
    or your own), gate on the agreement's lower bound, and write a qualification record
    that --require-qualified checks later runs against.
    """
    from judgecli.cli.flags import run_with_progress
    from judgecli.commands.qualify import prepare_qualify
    from judgecli.commands.setup import find_rubric_of

    job = prepare_qualify(find_rubric_of(rubric), flags, judge_set or [], min_agreement)
    outcome = run_with_progress(ctx, flags, job)
    return show(outcome.summary, outcome.run_dir, quiet=flags.quiet, json_output=flags.json_output)


def show(summary: QualifySummary, run_dir: Path, *, quiet: bool, json_output: bool) -> ExitCode:
    """Print the sets' table (unless quiet), the warnings, the headline and where the run
    and its record are (with --json the summary on stdout, the rest on stderr); the exit
    code: 3 incomplete or undecided, 1 not qualified, else 0.
    """
    import json

    from rich.table import Table

    from judgecli.cli.render import report_console
    from judgecli.commands.outcome import exit_code
    from judgecli.report.qualify import COLUMNS, qualify_headline, row

    console = report_console(json_output=json_output)
    if not quiet:
        table = Table(*COLUMNS, title="Agreement with human labels (95% intervals)")
        for s in summary.sets:
            table.add_row(*(escape(cell) for cell in row(s)))
        console.print(table)
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    gate = summary.gate
    line = escape(qualify_headline(summary))
    if gate is not None and not summary.incomplete:
        colour = "green" if gate.passed else "red" if gate.decided else "yellow"
        line = f"[bold {colour}]{line}[/]"
    console.print(line, soft_wrap=True)
    console.print(f"run directory: {escape(str(run_dir))}", soft_wrap=True)
    from judgecli.inputs.qualification import RECORD_FILE

    if not summary.incomplete and (run_dir / RECORD_FILE).is_file():
        console.print(f"record: {escape(str(run_dir / RECORD_FILE))}", soft_wrap=True)
    if json_output:
        print(json.dumps(summary.model_dump(mode="json", exclude_none=True), indent=2))
    if summary.incomplete:
        from judgecli.cli.retry_advice import retry_hint

        stderr.print(f"[bold red]error:[/] {escape(summary.incomplete)}")
        errors = [failure.error for failure in summary.failures]
        stderr.print(f"[dim]hint:[/] {escape(retry_hint(run_dir, errors))}")
    elif gate is not None and not gate.decided:
        from judgecli.cli.render import print_undecided

        print_undecided(gate.undecided, gate.hint)
    return exit_code(summary)

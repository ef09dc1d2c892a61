"""`judge gate SUMMARY.json`: re-check a finished run's summary against thresholds (CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.flags import gate_thresholds
from judgecli.cli.options import GateOnChoice, GateOnOpt
from judgecli.cli.qualified import RequireQualifiedOpt
from judgecli.errors import ExitCode
from judgecli.settings.gate_flags import GateThresholds


@app.command("gate")
@exits_with_code
@gate_thresholds(None)
def gate_command(
    summary_file: Annotated[
        Path,
        typer.Argument(
            metavar="SUMMARY.json", help="summary.json of a pairwise, score or calibrate run."
        ),
    ],
    thresholds: GateThresholds,
    on: GateOnOpt = GateOnChoice.POINT,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the gate's verdict as JSON on stdout.")
    ] = False,
    require_qualified: RequireQualifiedOpt = None,
) -> ExitCode:
    """Exit 0 when the run meets every threshold, 1 when it does not, 3 when its evidence
    cannot decide (a number undefined on its data, a missing interval, a pairwise judge
    below the position-consistency floor). Calls no judge.
    """
    import json

    from rich.markup import escape

    from judgecli.cli.render import print_undecided, report_console, verdict_style
    from judgecli.deciding.consistency import gate_warnings
    from judgecli.deciding.gate import GateOn, GateSpec, evaluate_gate
    from judgecli.deciding.measured import check_gate_mode
    from judgecli.errors import InputError, RunIncompleteError
    from judgecli.report.markdown import gate_note, headline
    from judgecli.summary.run import read_summary

    spec = GateSpec.of(thresholds, on=GateOn(on))
    if spec.empty:
        raise InputError(
            "no threshold given", hint="e.g. --min-win-rate 0.55 (and --on lower-bound)"
        )
    summary = read_summary(summary_file)
    if require_qualified is not None:
        from judgecli.commands.qualify import check_summary

        check_summary(summary, require_qualified)
    if summary.incomplete:
        # The numbers of a run the judge could not grade say nothing about the candidate:
        # an outage must not pass or fail a gate.
        raise RunIncompleteError(
            f"{summary_file}: {summary.incomplete}",
            hint=f"continue with: judge resume {summary_file.parent} --retry-failed",
        )
    check_gate_mode(summary, spec, summary_file)
    result = evaluate_gate(summary, spec)
    assert result is not None
    summary.gate = result
    for warning in gate_warnings(summary, result):
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    out = report_console(json_output=json_output)
    # soft_wrap: the verdict stays one line without a terminal, for grep (issue 29).
    out.print(f"[{verdict_style(result)}]{escape(headline(summary))}[/]", soft_wrap=True)
    if note := gate_note(summary):
        out.print(f"[yellow]{escape(note)}[/]", soft_wrap=True)
    if json_output:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
    if not result.decided:
        print_undecided(result.undecided, result.hint)
        return ExitCode.INCOMPLETE
    return ExitCode.OK if result.passed else ExitCode.GATE_FAILED

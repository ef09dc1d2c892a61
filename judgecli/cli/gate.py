"""`judge gate SUMMARY.json`: re-check a finished run's summary against thresholds (CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli import app, exits_with_code, stderr
from judgecli.cli.options import (
    GateOnOpt,
    JsonOpt,
    MaxLossRateOpt,
    MinConsistencyOpt,
    MinWinRateOpt,
)
from judgecli.errors import ExitCode


@app.command("gate")
@exits_with_code
def gate_command(
    summary_file: Annotated[
        Path, typer.Argument(metavar="SUMMARY.json", help="summary.json of a pairwise run.")
    ],
    min_win_rate: MinWinRateOpt = None,
    max_loss_rate: MaxLossRateOpt = None,
    min_consistency: MinConsistencyOpt = None,
    on: GateOnOpt = "point",
    json_output: JsonOpt = False,
) -> ExitCode:
    """Exit 0 when the run meets every threshold, 1 when it does not. Calls no judge."""
    import json

    from rich.markup import escape

    from judgecli.config import parse_choice
    from judgecli.errors import InputError
    from judgecli.gate import GateOn, GateSpec, evaluate_gate, gate_dict
    from judgecli.report import headline
    from judgecli.store import read_summary

    spec = GateSpec(
        min_win_rate=min_win_rate, max_loss_rate=max_loss_rate, min_consistency=min_consistency,
        on=parse_choice(GateOn, on, "--on"),
    )  # fmt: skip
    if spec.empty:
        raise InputError(
            "no threshold given", hint="e.g. --min-win-rate 0.55 (and --on lower-bound)"
        )
    summary = read_summary(summary_file)
    result = evaluate_gate(summary, spec)
    assert result is not None
    summary.gate = gate_dict(result)
    colour = "green" if result.passed else "red"
    stderr.print(f"[bold {colour}]{escape(headline(summary))}[/]")
    if json_output:
        print(json.dumps(summary.gate, indent=2))
    return ExitCode.OK if result.passed else ExitCode.GATE_FAILED

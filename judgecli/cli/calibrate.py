"""`judge calibrate`: agreement of the judge with human labels (κ, accuracy, calibration)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.flags import gate_thresholds, judge_flags, report_run, run_and_report
from judgecli.cli.invocation import invocation
from judgecli.cli.options import GateOnChoice, GateOnOpt
from judgecli.errors import ExitCode
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    SCALE_OUT_FLAGS,
    SUBSET_FLAGS,
    JudgeFlags,
)
from judgecli.settings.gate_flags import CALIBRATE, GateThresholds


@app.command("calibrate")
@exits_with_code
@judge_flags(without=CASCADE_FLAGS | SUBSET_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS)
@gate_thresholds(CALIBRATE)
def calibrate_command(
    ctx: typer.Context,
    labels_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="[LABELS.jsonl]",
            help="Human labels: JSONL, a CSV sheet, Parquet or hf://... (with the case "
            "fields, or see --cases).",
            show_default=False,
        ),
    ] = None,
    rubric: Annotated[
        str | None,
        typer.Option(
            "--rubric",
            "-r",
            help="Rubric file or name (required to judge; optional with --results).",
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            help="results.jsonl of a finished run: measure its verdicts, call no judge.",
            show_default=False,
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option("--labels", help="Labels file (with --results).", show_default=False),
    ] = None,
    cases: Annotated[
        Path | None,
        typer.Option(help="Dataset holding the labelled cases, joined on id.", show_default=False),
    ] = None,
    old: Annotated[
        Path | None, typer.Option(help="Pairwise: OLD answers.", show_default=False)
    ] = None,
    new: Annotated[
        Path | None, typer.Option(help="Pairwise: NEW answers.", show_default=False)
    ] = None,
    label_map: Annotated[
        str | None,
        typer.Option(
            "--label-map",
            metavar="FROM=TO,...",
            help="Translate labels, e.g. A=old,B=new,1=old,2=new.",
        ),
    ] = None,
    key: Annotated[
        Path | None,
        typer.Option(
            help="The review-key.json of a blind pairwise sheet (default: the one beside "
            "--results).",
            show_default=False,
        ),
    ] = None,
    *,
    flags: JudgeFlags,
    thresholds: GateThresholds,
    on: GateOnOpt = GateOnChoice.POINT,
) -> ExitCode:
    """Measure how well the judge agrees with human labels (and gate on it)."""
    from judgecli.cli.review import rubric_of_run
    from judgecli.commands.jobs import (
        Labelled,
        calibrate_finished,
        label_source,
        prepare_calibration,
    )
    from judgecli.commands.setup import FoundRubric, find_rubric_of
    from judgecli.deciding.gate import GateOn, GateSpec
    from judgecli.deciding.measured import check_calibrate_on
    from judgecli.settings.config import step_summary_path

    gate = GateSpec.of(thresholds, on=GateOn(on))
    check_calibrate_on(gate)
    found = find_rubric_of(rubric) if rubric else None
    source = label_source(labels or labels_file, label_map, key)
    if results is not None:
        warnings: list[str] = []
        if found is None and (of_run := rubric_of_run(results, warnings)) is not None:
            found = FoundRubric(of_run)
        outcome = calibrate_finished(
            results,
            source,
            found,
            flags,
            gate,
            argv=invocation(ctx),
            step_summary=step_summary_path(),
            warnings=warnings,
        )
        return report_run(flags, outcome.summary, outcome.run_dir)
    labelled = Labelled(source, cases=cases, old=old, new=new)
    return run_and_report(ctx, flags, prepare_calibration(found, flags, labelled, gate))

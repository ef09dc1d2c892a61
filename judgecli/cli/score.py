"""`judge score`: pointwise grading of a JSONL dataset against a rubric."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.flags import gate_thresholds, judge_flags, run_and_report
from judgecli.cli.options import (
    AlphaOpt,
    FdrOpt,
    GateOnChoice,
    GateOnOpt,
    LabelsOpt,
    RubricOpt,
    SequentialOpt,
)
from judgecli.cli.qualified import RequireQualifiedOpt
from judgecli.errors import ExitCode
from judgecli.settings.flags import JudgeFlags
from judgecli.settings.gate_flags import SCORE, GateThresholds


@app.command("score")
@exits_with_code
@judge_flags()
@gate_thresholds(SCORE)
def score_command(
    ctx: typer.Context,
    dataset: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET",
            help="Cases: a JSONL, CSV or Parquet file, or hf://owner/name[:split].",
            show_default=False,
        ),
    ],
    rubric: RubricOpt,
    *,
    flags: JudgeFlags,
    thresholds: GateThresholds,
    on: GateOnOpt = GateOnChoice.POINT,
    sequential: SequentialOpt = False,
    alpha: AlphaOpt = None,
    labels: LabelsOpt = None,
    fdr: FdrOpt = False,
    require_qualified: RequireQualifiedOpt = None,
) -> ExitCode:
    """Grade every case of DATASET with a pointwise or binary rubric."""
    # Imported here so `judge --help` stays fast (numpy, pydantic models, rich.progress).
    from judgecli.commands.jobs import prepare_score
    from judgecli.commands.setup import GateAsked, find_rubric_of
    from judgecli.deciding.gate import GateOn, GateSpec

    found = find_rubric_of(rubric)
    asked = GateAsked(
        GateSpec.of(thresholds, on=GateOn(on)),
        sequential=sequential,
        labels=labels,
        fdr=fdr,
        alpha=alpha,
    )
    job = prepare_score(dataset, found, flags, asked)
    if require_qualified is not None:
        from judgecli.commands.qualify import check_job

        check_job(job, require_qualified)
    return run_and_report(ctx, flags, job)

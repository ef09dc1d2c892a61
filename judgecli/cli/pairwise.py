"""`judge pairwise OLD NEW`: is NEW better? Both orders, panels, win rate and the CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.flags import gate_thresholds, judge_flags, run_and_report
from judgecli.cli.options import (
    AllowPartialOpt,
    AlphaOpt,
    FdrOpt,
    FlipOpt,
    FlipPolicyChoice,
    FlipPolicyOpt,
    GateOnChoice,
    GateOnOpt,
    LabelsOpt,
    RubricOpt,
    SequentialOpt,
)
from judgecli.cli.qualified import RequireQualifiedOpt
from judgecli.errors import ExitCode
from judgecli.settings.flags import CHECKLIST_FLAGS, JudgeFlags
from judgecli.settings.gate_flags import PAIRWISE, GateThresholds


@app.command("pairwise")
@exits_with_code
@judge_flags(without=CHECKLIST_FLAGS)
@gate_thresholds(PAIRWISE)
def pairwise_command(
    ctx: typer.Context,
    old: Annotated[
        Path,
        typer.Argument(
            metavar="OLD",
            help="The current answers (JSONL, CSV, Parquet or hf://...).",
            show_default=False,
        ),
    ],
    new: Annotated[
        Path,
        typer.Argument(
            metavar="NEW",
            help="The candidate answers (JSONL, CSV, Parquet or hf://...).",
            show_default=False,
        ),
    ],
    rubric: RubricOpt = "pairwise",
    *,
    flags: JudgeFlags,
    flip: FlipOpt = True,
    flip_policy: FlipPolicyOpt = FlipPolicyChoice.TIE,
    thresholds: GateThresholds,
    on: GateOnOpt = GateOnChoice.POINT,
    sequential: SequentialOpt = False,
    alpha: AlphaOpt = None,
    labels: LabelsOpt = None,
    fdr: FdrOpt = False,
    allow_partial: AllowPartialOpt = False,
    require_qualified: RequireQualifiedOpt = None,
) -> ExitCode:
    """Compare NEW against OLD, case by case (joined on id), with a pairwise rubric."""
    from judgecli.commands.jobs import Sides, prepare_pairwise
    from judgecli.commands.setup import GateAsked, find_rubric_of
    from judgecli.deciding.gate import GateOn, GateSpec
    from judgecli.grading.debias import FlipPolicy

    found = find_rubric_of(rubric)
    asked = GateAsked(
        GateSpec.of(thresholds, on=GateOn(on)),
        sequential=sequential,
        labels=labels,
        fdr=fdr,
        alpha=alpha,
    )
    sides = Sides(flip=flip, flip_policy=FlipPolicy(flip_policy), allow_partial=allow_partial)
    job = prepare_pairwise(old, new, found, flags, asked, sides)
    if require_qualified is not None:
        from judgecli.commands.qualify import check_job

        check_job(job, require_qualified)
    return run_and_report(ctx, flags, job)

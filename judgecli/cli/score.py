"""`judge score`: pointwise grading of a JSONL dataset against a rubric."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.flags import gate_thresholds, judge_flags, run_and_report
from judgecli.cli.options import (
    FdrOpt,
    GateOnChoice,
    GateOnOpt,
    LabelsOpt,
    RubricOpt,
    SequentialOpt,
)
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
    labels: LabelsOpt = None,
    fdr: FdrOpt = False,
) -> ExitCode:
    """Grade every case of DATASET with a pointwise or binary rubric."""
    # Imported here so `judge --help` stays fast (numpy, pydantic models, rich.progress).
    from judgecli.cli.inputs import (
        decision_inputs,
        judge_config,
        named_rubric,
    )
    from judgecli.commands import score
    from judgecli.deciding.gate import GateOn, GateSpec
    from judgecli.inputs.dataset import scan_dataset

    rubric_path, loaded = named_rubric(rubric)
    score.check_rubric_kind(loaded, rubric_path)
    gate = GateSpec.of(thresholds, on=GateOn(on))
    score.check_gate(gate, loaded)
    config = judge_config("score", loaded, flags)
    decides = decision_inputs(
        gate, loaded, config, sequential=sequential, labels=labels, fdr=fdr, cases=dataset
    )
    scan = scan_dataset(
        dataset,
        requires=loaded.requires,
        field_map=config.field_map,
        limit=flags.limit,
        sample=flags.sample_size,
        seed=flags.seed,
        shard=config.shard,
    )
    job = score.score_job(config, loaded, scan, decides)
    return run_and_report(ctx, flags, job)

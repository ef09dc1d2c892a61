"""`judge refine`: generate, judge, retry with the judge's feedback until the bar is met."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code
from judgecli.cli.flags import judge_flags, run_and_report
from judgecli.cli.options import RubricOpt
from judgecli.errors import ExitCode
from judgecli.settings.flags import (
    CASCADE_FLAGS,
    CHECKLIST_FLAGS,
    REPEAT_FLAGS,
    SCALE_OUT_FLAGS,
    JudgeFlags,
)

GENERATE = "Generate"


@app.command("refine")
@exits_with_code
@judge_flags(without=CASCADE_FLAGS | SCALE_OUT_FLAGS | REPEAT_FLAGS | CHECKLIST_FLAGS)
def refine_command(
    ctx: typer.Context,
    dataset: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET",
            help="Cases with id and input (JSONL, CSV, Parquet or hf://...).",
            show_default=False,
        ),
    ],
    rubric: RubricOpt,
    generator: Annotated[
        str,
        typer.Option(
            "--generator",
            "-g",
            metavar="MODEL",
            rich_help_panel=GENERATE,
            help="LiteLLM model string of the model that writes the answers.",
        ),
    ],
    success_rating: Annotated[
        float | None,
        typer.Option(
            "--success-rating",
            metavar="SCORE",
            rich_help_panel=GENERATE,
            help="Score an answer must reach (default: the rubric's pass_at).",
        ),
    ] = None,
    max_attempts: Annotated[
        int,
        typer.Option(
            "--max-attempts",
            min=1,
            metavar="N",
            rich_help_panel=GENERATE,
            help="Answers generated per case at most.",
        ),
    ] = 3,
    feedback_template: Annotated[
        str | None,
        typer.Option(
            "--feedback-template",
            metavar="TEXT",
            rich_help_panel=GENERATE,
            help="Text added to the input for a retry; {answer} is the "
            "previous answer, {feedback} the judge's advice.",
        ),
    ] = None,
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            metavar="TEXT",
            rich_help_panel=GENERATE,
            help="Generator system message (a case's own `system` wins).",
        ),
    ] = None,
    generator_temperature: Annotated[
        float,
        typer.Option(
            "--generator-temperature",
            min=0,
            max=2,
            metavar="T",
            rich_help_panel=GENERATE,
            help="The generator's sampling temperature.",
        ),
    ] = 0.0,
    *,
    flags: JudgeFlags,
) -> ExitCode:
    """Answer each case with --generator, judge it, and retry with the judge's feedback."""
    # Imported here so `judge --help` stays fast.
    from judgecli.commands.jobs import Generating, prepare_refine
    from judgecli.commands.setup import find_rubric_of

    generating = Generating(
        generator=generator,
        success_rating=success_rating,
        max_attempts=max_attempts,
        feedback_template=feedback_template,
        system=system,
        temperature=generator_temperature,
    )
    found = find_rubric_of(rubric)
    return run_and_report(ctx, flags, prepare_refine(dataset, found, flags, generating))

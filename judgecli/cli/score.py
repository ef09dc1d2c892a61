"""`judge score`: pointwise grading of a JSONL dataset against a rubric."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli import app, exits_with_code, stderr
from judgecli.cli.invocation import invocation
from judgecli.cli.options import (
    ApiBaseOpt,
    ConcurrencyOpt,
    EscalateOpt,
    FieldOpt,
    JsonOpt,
    JsonSchemaOpt,
    LimitOpt,
    MaxCostOpt,
    MaxFailuresOpt,
    MaxRetriesOpt,
    MaxTokensOpt,
    ModelOpt,
    NoCacheOpt,
    OutOpt,
    PriceOpt,
    QuietOpt,
    ResumeOpt,
    RetryFailedOpt,
    RpmOpt,
    RubricOpt,
    SampleOpt,
    ScreenOpt,
    ScreenPriceOpt,
    SeedOpt,
    TemperatureOpt,
    TimeoutOpt,
    TpmOpt,
)
from judgecli.errors import ExitCode


@app.command("score")
@exits_with_code
def score_command(
    ctx: typer.Context,
    dataset: Annotated[
        Path, typer.Argument(metavar="DATASET", help="JSONL file of cases.", show_default=False)
    ],
    rubric: RubricOpt,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    price: PriceOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    json_schema: JsonSchemaOpt = None,
    screen: ScreenOpt = None,
    escalate: EscalateOpt = None,
    screen_price: ScreenPriceOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_retries: MaxRetriesOpt = None,
    timeout: TimeoutOpt = None,
    out: OutOpt = None,
    resume: ResumeOpt = None,
    retry_failed: RetryFailedOpt = False,
    no_cache: NoCacheOpt = False,
    max_cost: MaxCostOpt = None,
    max_failures: MaxFailuresOpt = None,
    limit: LimitOpt = None,
    sample: SampleOpt = None,
    seed: SeedOpt = 0,
    field: FieldOpt = None,
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Grade every case of DATASET with a pointwise or binary rubric."""
    # Imported here so `judge --help` stays fast (numpy, pydantic models, rich.progress).
    from judgecli import score
    from judgecli.cli.inputs import judge_config, named_rubric
    from judgecli.cli.progress import RunProgress
    from judgecli.cli.render import report_outcome
    from judgecli.config import step_summary_path
    from judgecli.dataset import scan_dataset

    rubric_path, loaded = named_rubric(rubric)
    score.check_rubric_kind(loaded, rubric_path)
    config, field_map = judge_config("score", loaded, locals())
    scan = scan_dataset(
        dataset, requires=loaded.requires, field_map=field_map, limit=limit, sample=sample,
        seed=seed,
    )  # fmt: skip
    with RunProgress(stderr, total=len(scan.lines), enabled=not quiet) as progress:
        outcome = score.score_dataset(
            config, loaded, scan, argv=invocation(ctx), on_result=progress.case_done,
            warnings=list(scan.warnings), step_summary=step_summary_path(),
        )  # fmt: skip
    return report_outcome(outcome.summary, outcome.run_dir, quiet=quiet, json_output=json_output)

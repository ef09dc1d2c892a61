"""`judge pairwise OLD NEW`: is NEW better? Both orders, panels, win rate and the CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli import app, exits_with_code, stderr
from judgecli.cli.invocation import invocation
from judgecli.cli.options import (
    AllowPartialOpt,
    ApiBaseOpt,
    ConcurrencyOpt,
    EscalateOpt,
    FieldOpt,
    FlipOpt,
    FlipPolicyOpt,
    GateOnOpt,
    JsonOpt,
    JsonSchemaOpt,
    LimitOpt,
    MaxCostOpt,
    MaxFailuresOpt,
    MaxLossRateOpt,
    MaxRetriesOpt,
    MaxTokensOpt,
    MinConsistencyOpt,
    MinWinRateOpt,
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


@app.command("pairwise")
@exits_with_code
def pairwise_command(
    ctx: typer.Context,
    old: Annotated[
        Path,
        typer.Argument(metavar="OLD", help="JSONL of the current answers.", show_default=False),
    ],
    new: Annotated[
        Path,
        typer.Argument(metavar="NEW", help="JSONL of the candidate answers.", show_default=False),
    ],
    rubric: RubricOpt = "pairwise",
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    price: PriceOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    json_schema: JsonSchemaOpt = None,
    flip: FlipOpt = True,
    flip_policy: FlipPolicyOpt = "tie",
    screen: ScreenOpt = None,
    escalate: EscalateOpt = None,
    screen_price: ScreenPriceOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_retries: MaxRetriesOpt = None,
    timeout: TimeoutOpt = None,
    min_win_rate: MinWinRateOpt = None,
    max_loss_rate: MaxLossRateOpt = None,
    min_consistency: MinConsistencyOpt = None,
    on: GateOnOpt = "point",
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
    allow_partial: AllowPartialOpt = False,
    quiet: QuietOpt = False,
    json_output: JsonOpt = False,
) -> ExitCode:
    """Compare NEW against OLD, case by case (joined on id), with a pairwise rubric."""
    from judgecli import pairwise
    from judgecli.cli.inputs import judge_config, named_rubric
    from judgecli.cli.progress import RunProgress
    from judgecli.cli.render import report_outcome
    from judgecli.config import parse_choice, step_summary_path
    from judgecli.debias import FlipPolicy
    from judgecli.gate import GateOn, GateSpec
    from judgecli.pairs import scan_pairs

    rubric_path, loaded = named_rubric(rubric)
    pairwise.check_rubric_kind(loaded, rubric_path)
    policy = parse_choice(FlipPolicy, flip_policy, "--flip-policy")
    gate = GateSpec(
        min_win_rate=min_win_rate, max_loss_rate=max_loss_rate, min_consistency=min_consistency,
        on=parse_choice(GateOn, on, "--on"),
    )  # fmt: skip
    config, field_map = judge_config("pairwise", loaded, locals())
    scan = scan_pairs(
        old, new, requires=loaded.requires, field_map=field_map, allow_partial=allow_partial,
        limit=limit, sample=sample, seed=seed,
    )  # fmt: skip
    with RunProgress(stderr, total=len(scan.pairs), enabled=not quiet) as progress:
        outcome = pairwise.compare_datasets(
            config, loaded, scan, flip=flip, flip_policy=policy, gate=gate, argv=invocation(ctx),
            on_result=progress.case_done, warnings=list(scan.warnings),
            step_summary=step_summary_path(),
        )  # fmt: skip
    return report_outcome(outcome.summary, outcome.run_dir, quiet=quiet, json_output=json_output)

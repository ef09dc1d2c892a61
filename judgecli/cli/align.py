"""`judge align`: shape a binary rubric on human labels, proved on a sealed split."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.flags import judge_flags
from judgecli.commands.align import LEFT_OUT
from judgecli.errors import ExitCode
from judgecli.settings.flags import JudgeFlags


@app.command("align")
@exits_with_code
@judge_flags(without=LEFT_OUT)
def align_command(
    rubric: Annotated[
        str, typer.Argument(help="Rubric file or library name (binary, or pointwise with pass_at).")
    ],
    dataset: Annotated[
        Path, typer.Option("--dataset", help="The labelled cases (JSONL).", show_default=False)
    ],
    labels: Annotated[
        Path,
        typer.Option("--labels", help="Human labels (id, label[, annotator]).", show_default=False),
    ],
    optimizer_model: Annotated[
        str | None,
        typer.Option(
            "--optimizer-model",
            help="Model that proposes instruction revisions from the train disagreements.",
        ),
    ] = None,
    test_share: Annotated[
        float, typer.Option("--test-share", help="Share of the cases sealed as the test.")
    ] = 0.3,
    min_gain: Annotated[
        float | None,
        typer.Option(
            "--min-gain", help="Exit 1 when the κ gain's lower bound is below G.", metavar="G"
        ),
    ] = None,
    folds: Annotated[
        int, typer.Option("--folds", min=2, help="Cross-validation folds on train.")
    ] = 3,
    *,
    flags: JudgeFlags,
) -> ExitCode:
    """Shape a rubric on human labels; report the gain on a sealed test split."""
    from judgecli.commands.align.start import AlignAsk, run_align
    from judgecli.commands.setup import find_rubric_of

    ask = AlignAsk(
        dataset=dataset,
        labels=labels,
        optimizer_model=optimizer_model,
        test_share=test_share,
        min_gain=min_gain,
        folds=folds,
    )
    summary, out = run_align(find_rubric_of(rubric), flags, ask)
    if flags.json_output:
        typer.echo(summary.model_dump_json(indent=2))
    kappa = summary.gain["kappa"]
    low, high = summary.gain_ci["kappa"]
    ci = "n/a" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
    shown = "n/a" if kappa is None else f"{kappa:+.3f}"
    stderr.print(
        f"{summary.decision.value}: κ gain {shown} {ci} on {len(summary.split.test)} sealed "
        f"test cases (chosen on train: {summary.method}); kept the {summary.kept}"
    )
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {warning}")
    stderr.print(f"wrote {out}/rubric.yaml, report.md, summary.json, test-labels.jsonl")
    return ExitCode.OK if summary.passed else ExitCode.GATE_FAILED

"""`judge calibrate`: agreement of the judge with human labels (κ, accuracy, calibration)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli import app, exits_with_code
from judgecli.cli.flags import CASCADE, SUBSET, JudgeFlags, judge_flags
from judgecli.cli.invocation import invocation
from judgecli.cli.options import (
    GateOnOpt,
    MinAccuracyOpt,
    MinKappaOpt,
)
from judgecli.errors import ExitCode

FileOpt = Annotated[Path | None, typer.Option(show_default=False)]


@app.command("calibrate")
@exits_with_code
@judge_flags(without=CASCADE | SUBSET)
def calibrate_command(
    ctx: typer.Context,
    labels_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="[LABELS.jsonl]",
            help="Human labels (with the case fields, or see --cases).",
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
    min_kappa: MinKappaOpt = None,
    min_accuracy: MinAccuracyOpt = None,
    on: GateOnOpt = "point",
) -> ExitCode:
    """Measure how well the judge agrees with human labels (and gate on it)."""
    from judgecli import calibrate
    from judgecli.cli.inputs import judge_config, named_rubric
    from judgecli.cli.review import rubric_of_run
    from judgecli.config import parse_choice, step_summary_path
    from judgecli.dataset import DatasetScan
    from judgecli.errors import ConfigError
    from judgecli.gate import GateOn, GateSpec
    from judgecli.labels import LabelSpace, parse_label_map, read_labels
    from judgecli.pairs import PairScan
    from judgecli.rubric import RubricKind
    from judgecli.store import default_run_dir, read_results
    from judgecli.store.sheets import REVIEW_KEY, read_review_key

    gate = GateSpec(min_kappa=min_kappa, min_accuracy=min_accuracy,
                    on=parse_choice(GateOn, on, "--on"))  # fmt: skip
    mapping = parse_label_map(label_map)
    loaded = named_rubric(rubric)[1] if rubric else None
    labels_path = labels or labels_file
    if labels_path is None:
        raise ConfigError("no labels file", hint="judge calibrate LABELS.jsonl --rubric R, or "
                          "--results RESULTS.jsonl --labels LABELS.jsonl")  # fmt: skip
    beside = results.parent / REVIEW_KEY if results else None
    key = key or (beside if beside and beside.exists() else None)
    review_key = read_review_key(key) if key else None
    if results is not None:
        rows, warnings = list(read_results(results)), list[str]()
        loaded = loaded or rubric_of_run(results, warnings)
        space = LabelSpace.of(loaded) if loaded else LabelSpace(kind=calibrate.infer_kind(rows))
        label_rows = read_labels(labels_path, space, label_map=mapping, key=review_key)
        outcome = calibrate.calibrate_existing(
            rows, label_rows, space, sources=(labels_path, results), rubric=loaded,
            out=flags.out or default_run_dir("calibrate", loaded.name if loaded else "results"),
            argv=invocation(ctx), gate=gate, seed=flags.seed, step_summary=step_summary_path(),
            warnings=warnings, replace=flags.force,
        )  # fmt: skip
    else:
        if loaded is None:
            raise ConfigError(
                "judging needs --rubric",
                hint="or pass --results RESULTS.jsonl to calibrate a finished run",
            )
        label_rows = read_labels(labels_path, LabelSpace.of(loaded), label_map=mapping,
                                 key=review_key)  # fmt: skip
        config, field_map = judge_config("calibrate", loaded, flags)
        items: DatasetScan | PairScan
        if loaded.kind is RubricKind.PAIRWISE:
            if old is None or new is None:
                raise ConfigError("a pairwise rubric needs --old OLD.jsonl --new NEW.jsonl")
            items = calibrate.labelled_pairs(labels_path, old, new, label_rows, loaded, field_map)
            total = len(items.pairs)
        else:
            items = calibrate.labelled_cases(labels_path, cases, label_rows, loaded, field_map)
            total = len(items.lines)
        with flags.progress(total) as progress:
            outcome = calibrate.calibrate_by_judging(
                config, loaded, label_rows, items, argv=invocation(ctx),
                on_result=progress.case_done,
                gate=gate, warnings=[], step_summary=step_summary_path(),
            )  # fmt: skip
    return flags.report(outcome.summary, outcome.run_dir)

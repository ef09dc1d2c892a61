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
    *,
    flags: JudgeFlags,
    min_kappa: MinKappaOpt = None,
    min_accuracy: MinAccuracyOpt = None,
    on: GateOnOpt = "point",
) -> ExitCode:
    """Measure how well the judge agrees with human labels (and gate on it)."""
    from judgecli import calibrate
    from judgecli.cli.inputs import judge_config, named_rubric
    from judgecli.config import parse_choice, step_summary_path
    from judgecli.dataset import DatasetScan
    from judgecli.errors import ConfigError
    from judgecli.gate import GateOn, GateSpec
    from judgecli.labels import LabelSpace, parse_label_map, read_labels
    from judgecli.pairs import PairScan, scan_pairs
    from judgecli.rubric import RubricKind
    from judgecli.store import default_run_dir, read_results

    gate = GateSpec(min_kappa=min_kappa, min_accuracy=min_accuracy,
                    on=parse_choice(GateOn, on, "--on"))  # fmt: skip
    mapping = parse_label_map(label_map)
    loaded = named_rubric(rubric)[1] if rubric else None
    labels_path = labels or labels_file
    if labels_path is None:
        raise ConfigError("no labels file", hint="judge calibrate LABELS.jsonl --rubric R, or "
                          "--results RESULTS.jsonl --labels LABELS.jsonl")  # fmt: skip
    name = loaded.name if loaded else "results"
    if results is not None:
        kind = loaded.kind if loaded else calibrate.infer_kind(list(read_results(results)))
        space = LabelSpace.of(loaded) if loaded else LabelSpace(kind=kind)
        label_rows = read_labels(labels_path, space, label_map=mapping)
        outcome = calibrate.calibrate_existing(
            results, label_rows, space, rubric=loaded,
            out=flags.out or default_run_dir("calibrate", name), argv=invocation(ctx), gate=gate,
            seed=flags.seed,
            step_summary=step_summary_path(),
        )  # fmt: skip
    else:
        if loaded is None:
            raise ConfigError(
                "judging needs --rubric",
                hint="or pass --results RESULTS.jsonl to calibrate a finished run",
            )
        label_rows = read_labels(labels_path, LabelSpace.of(loaded), label_map=mapping)
        config, field_map = judge_config("calibrate", loaded, flags)
        ids = {label.id for label in label_rows}
        if loaded.kind is RubricKind.PAIRWISE:
            if old is None or new is None:
                raise ConfigError("a pairwise rubric needs --old OLD.jsonl --new NEW.jsonl")
            pair_scan = scan_pairs(old, new, requires=loaded.requires, field_map=field_map,
                                   allow_partial=True, only=ids)  # fmt: skip
            items: DatasetScan | PairScan = pair_scan
            total = len(pair_scan.pairs)
        else:
            case_scan = calibrate.labelled_cases(labels_path, cases, label_rows, loaded, field_map)
            items, total = case_scan, len(case_scan.lines)
        with flags.progress(total) as progress:
            outcome = calibrate.calibrate_by_judging(
                config, loaded, label_rows, items, argv=invocation(ctx),
                on_result=progress.case_done,
                gate=gate, warnings=[], step_summary=step_summary_path(),
            )  # fmt: skip
    return flags.report(outcome.summary, outcome.run_dir)

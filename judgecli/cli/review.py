"""`judge review export RUN_DIR`: a labelling sheet of the cases people should check."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from judgecli.cli.app import app, exits_with_code, stderr, stdout
from judgecli.cli.invocation import invocation
from judgecli.cli.options import SheetFormatChoice, choice
from judgecli.errors import ConfigError, ExitCode, InputError

if TYPE_CHECKING:
    from judgecli.inputs.label_files import PlannedRow
    from judgecli.inputs.review import Pick
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric

review_app = typer.Typer(
    help="Human review: plan which cases to label, export them to a sheet.", no_args_is_help=True
)
app.add_typer(review_app, name="review")


def path_option(text: str) -> Any:
    """A dataset path flag: by default the run's own, from its run.json."""
    return typer.Option(help=f"{text} (default: the one run.json names).", show_default=False)


@review_app.command("export")
@exits_with_code
def export_command(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="A finished run.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The sheet to write (a new file).")],
    sample: Annotated[
        str | None,
        typer.Option(metavar="N|P%", help="Stratified sample size: a count or a percentage."),
    ] = None,
    include: Annotated[
        str | None,
        typer.Option(
            metavar="GROUPS",
            help="Add every case of these groups (comma-separated): inconsistent, failed, "
            "borderline, disagreement.",
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(metavar="N", help="Seed of the sample and of a pairwise sheet's A/B order."),
    ] = 0,
    fmt: Annotated[
        SheetFormatChoice | None,
        typer.Option(
            "--format",
            parser=choice(SheetFormatChoice, "--format"),
            help="Sheet format (default: from --out's suffix, else csv).",
        ),
    ] = None,
    show_verdict: Annotated[
        bool, typer.Option("--show-verdict", help="Add the judge's verdict (anchors raters).")
    ] = False,
    cases: Annotated[Path | None, path_option("The dataset the run judged")] = None,
    old: Annotated[Path | None, path_option("Pairwise: the OLD answers")] = None,
    new: Annotated[Path | None, path_option("Pairwise: the NEW answers")] = None,
    rubric: Annotated[
        str | None, typer.Option("--rubric", "-r", help="Rubric for the scale and pass_at.")
    ] = None,
    plan: Annotated[
        Path | None,
        typer.Option(
            metavar="PLAN.jsonl",
            help="The cases of a label plan (`judge review plan --out`), in its order, each "
            "row with its inclusion probability (instead of --sample/--include).",
        ),
    ] = None,
) -> ExitCode:
    """Write a sheet for human labelling: a seeded sample stratified by category and verdict,
    plus every case of the --include groups. The judge's verdict is hidden unless
    --show-verdict; a pairwise sheet shows the answers as A and B in a random order per row,
    its key kept in RUN_DIR/review-key.json. Hand it back with
    `judge calibrate --results RUN_DIR/results.jsonl --labels SHEET`.
    """
    from judgecli.inputs import review
    from judgecli.store import RESULTS, read_results, read_run_info
    from judgecli.store.lock import hold_run_dir
    from judgecli.store.sheets import SheetFormat, record_export, review_key, write_sheet

    size = review.parse_sample(sample)
    groups = review.parse_groups(include)
    planned = None
    if plan is not None:
        from judgecli.inputs.label_files import read_plan

        if sample is not None or include is not None:
            raise ConfigError(
                "--plan picks the sheet's cases: --sample and --include do not apply",
                hint="drop --sample and --include, or --plan",
            )
        planned = {row.id: row for row in read_plan(plan)}
    suffix = out.suffix.lstrip(".").lower()
    sheet_format = SheetFormat(fmt or ("jsonl" if suffix == "jsonl" else "csv"))
    info = read_run_info(run_dir, hint="pass the --out directory of a judge run")
    # The export adds to the run's run.json (and review-key.json): as its one writer, with
    # run.json as the last writer left it.
    hold_run_dir(run_dir)
    info = read_run_info(run_dir, hint="pass the --out directory of a judge run")
    results = list(read_results(run_dir / RESULTS))
    pairwise = info.get("command") == "pairwise"
    recorded = recorded_inputs(info)
    run_hash = str(info.get("rubric", {}).get("hash"))
    loaded = load_scale_rubric(rubric or recorded.get("rubric"), run_hash, pairwise)
    band = loaded.scale.borderline_band if loaded and loaded.scale else 1.0
    picks = review.choose_cases(
        results,
        sample=size,
        include=groups,
        seed=seed,
        pass_at=loaded.pass_at if loaded else None,
        band=band,
    )
    if planned is not None and plan is not None:
        picks = planned_picks(results, planned, plan, run_dir)
    if (
        review.Group.BORDERLINE in groups
        and not pairwise
        and (loaded is None or loaded.pass_at is None)
    ):
        stderr.print(
            f"note: no rubric pass_at (see --rubric): borderline = within {band:g} "
            "of the median score"
        )
    # The run read its cases through --field; the sheet must read them the same way.
    field_map = dict(info.get("config", {}).get("field_map") or {})
    key = blinding = None
    if pairwise:
        olds, news = old or recorded.get("old"), new or recorded.get("new")
        if olds is None or news is None:
            raise missing_cases("--old OLD.jsonl --new NEW.jsonl")
        texts: Any = (review.read_cases(olds, field_map), review.read_cases(news, field_map))
        key = review_key(run_dir)
        blinding = review.Blinding(salt=key.salt, seed=seed)
    else:
        dataset = cases or recorded.get("dataset")
        if dataset is None:
            raise missing_cases("--cases DATASET.jsonl")
        texts = review.read_cases(dataset, field_map)
    note = review.label_note(loaded, pairwise=pairwise)
    sheet = review.build_sheet(
        picks, texts, note=note, show_verdict=show_verdict, blinding=blinding, planned=planned
    )
    write_sheet(out, sheet, sheet_format, key=key)
    entry = {"argv": invocation(ctx), "out": str(out), "n": len(sheet.rows)}
    record_export(run_dir, info, entry)
    stderr.print(f"wrote {out}: {len(sheet.rows)} case(s) to label")
    if key is not None:
        stderr.print(f"its A/B key is in {key.path}: keep it from the raters")
    return ExitCode.OK


@review_app.command("plan")
@exits_with_code
def plan_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="A finished run.")],
    budget: Annotated[
        int, typer.Option(metavar="N", help="Labels to spend (the expected number drawn).")
    ],
    strategy: Annotated[
        str,
        typer.Option(
            metavar="uniform|disagreement|uncertainty",
            help="What the inclusion probabilities follow: nothing (uniform), the judge's "
            "disagreement with itself (panel, orders, repeats), or that and its logprob margin.",
        ),
    ] = "uncertainty",
    seed: Annotated[int, typer.Option(metavar="N", help="Seed of the draw.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="The plan to write (a new JSONL file; default: stdout)."),
    ] = None,
) -> ExitCode:
    """Plan which cases a human should label: each graded case is drawn with a known
    probability that follows the judge's uncertainty (active inference), listed surest
    first with why. Labels made on the plan keep that probability (judge view writes it),
    and --labels weighs them by it so the corrected number stays unbiased.
    """
    from judgecli.deciding.label_plan import LabelStrategy, plan_labels
    from judgecli.store.plans import plan_text, write_plan

    try:
        chosen = LabelStrategy(strategy)
    except ValueError:
        raise ConfigError(
            f"--strategy {strategy!r} is not a strategy",
            hint="one of: " + ", ".join(s.value for s in LabelStrategy),
        ) from None
    if out is not None and out.exists():  # refused before the run is read
        write_plan(out, [])
    plan = plan_labels(run_dir, budget=budget, strategy=chosen, seed=seed)
    lines = [
        {
            "id": case.id,
            "inclusion_probability": case.inclusion_probability,
            "why": case.why,
            "strategy": plan.strategy.value,
            "budget": plan.budget,
            "seed": plan.seed,
        }
        for case in plan.cases
    ]
    if plan.fallback:
        stderr.print(f"note: {plan.fallback}: the plan is uniform")
    if out is None:
        stdout.print(plan_text(lines), end="", markup=False, soft_wrap=True)
    else:
        write_plan(out, lines)
    where = "" if out is None else f"wrote {out}: "
    stderr.print(
        f"{where}{len(plan.cases)} of {plan.population} graded case(s) to label "
        f"({plan.strategy.value}, budget {plan.budget}, seed {plan.seed})"
    )
    return ExitCode.OK


def planned_picks(
    results: list[CaseResult], planned: dict[str, PlannedRow], plan: Path, run_dir: Path
) -> list[Pick]:
    """The sheet's cases of a plan, in the plan's order, each with why it was drawn."""
    from judgecli.inputs.review import Pick

    by_id = {r.id: r for r in results}
    missing = [case_id for case_id in planned if case_id not in by_id]
    if missing:
        raise InputError(
            f"{plan}: case {missing[0]!r} is not a case of {run_dir}",
            hint="export a plan with the run it was made for",
        )
    return [Pick(result=by_id[row.id], reasons=(row.why,)) for row in planned.values()]


def recorded_inputs(info: dict[str, Any]) -> dict[str, Path]:
    """The rubric and dataset(s) run.json's argv names, paths resolved against its cwd
    (parsed by the recorded command itself, so flags and arguments are told apart).
    """
    from judgecli.cli.app import app_for

    try:
        argv, cwd = list(info["argv"]), Path(info.get("cwd", "."))
        group: Any = typer.main.get_command(app_for(argv[1:2]))
        command = group.commands[argv[1]]
        params = command.make_context(argv[1], argv[2:], resilient_parsing=True).params
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {}
    from judgecli.inputs.rows import anchored

    found: dict[str, Path] = {}
    for name in ("dataset", "old", "new"):
        if isinstance(params.get(name), Path | str):
            found[name] = anchored(Path(params[name]), cwd)
    rubric = params.get("rubric")
    if isinstance(rubric, str):
        on_disk = cwd / rubric
        found["rubric"] = on_disk if on_disk.exists() else Path(rubric)
    return found


def rubric_of_run(results: Path, warnings: list[str]) -> Rubric | None:
    """The rubric of the run that wrote RESULTS (named in its run.json), so labels are
    checked against its scale and choices as with --rubric; None, with a warning saying
    why, when it cannot be found or has changed since the run (its scale may have too).
    """
    from judgecli.commands.setup import named_rubric
    from judgecli.store import read_run_info

    unchecked = "the labels are checked against no scale (pass --rubric)"
    try:
        info = read_run_info(results.parent, hint="pass --rubric")
        where = recorded_inputs(info).get("rubric")
        if where is None:
            raise InputError(f"{results.parent}/run.json names none")
        found = named_rubric(str(where))[1]
    except InputError as err:
        warnings.append(f"the run's rubric is unknown ({err.message}): {unchecked}")
        return None
    if found.content_hash != info.get("rubric", {}).get("hash"):
        warnings.append(f"rubric {found.name} has changed since the run: {unchecked}")
        return None
    return found


def load_scale_rubric(name: Any, run_hash: str, pairwise: bool) -> Rubric | None:
    """The rubric for the label scale and pass_at, or None (pairwise needs none)."""
    from judgecli.commands.setup import named_rubric

    if pairwise or name is None:
        return None
    loaded = named_rubric(str(name))[1]
    if loaded.content_hash != run_hash:
        stderr.print(
            f"warning: rubric {loaded.name} has changed since the run "
            f"({run_hash} then, {loaded.content_hash} now); using its scale"
        )
    return loaded


def missing_cases(flags: str) -> Exception:
    """The error for a run whose case text cannot be found."""
    return InputError(
        "the run's results hold no case text and its datasets were not found", hint=f"pass {flags}"
    )

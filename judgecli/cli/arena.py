"""`judge arena A B C ...`: many systems compared pair by pair with a pairwise rubric, one
Bradley–Terry leaderboard with intervals, and a gate on one system's place in it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr
from judgecli.cli.flags import judge_flags
from judgecli.cli.options import (
    GATE,
    AllowPartialOpt,
    FlipOpt,
    FlipPolicyChoice,
    FlipPolicyOpt,
    MinConsistencyOpt,
    RubricOpt,
    choice,
)
from judgecli.errors import ExitCode
from judgecli.settings.flags import CASCADE_FLAGS, CHECKLIST_FLAGS, SCALE_OUT_FLAGS, JudgeFlags

if TYPE_CHECKING:
    from judgecli.summary.arena import ArenaSummary

ARENA = "Arena"
LEFT_OUT = CASCADE_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS | {"workers"}
"""An arena's results carry which systems each comparison is of, and its schedule may come
in rounds: it has no cascade, shards, batches or worker processes (yet), and it grades no
checklists."""


class ScheduleChoice(StrEnum):
    """--schedule: arena.schedule.Schedule's values."""

    ROUND_ROBIN = "round-robin"
    BASELINE = "baseline"
    ADAPTIVE = "adaptive"


@app.command("arena")
@exits_with_code
@judge_flags(without=LEFT_OUT)
def arena_command(
    ctx: typer.Context,
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILES...",
            help="One file of answers per system (2 or more; JSONL, CSV, Parquet or "
            "hf://...), joined on id.",
            show_default=False,
        ),
    ],
    rubric: RubricOpt = "pairwise",
    *,
    flags: JudgeFlags,
    name: Annotated[
        list[str] | None,
        typer.Option(
            "--name",
            metavar="NAME",
            rich_help_panel=ARENA,
            help="The systems' names, once per file in order (default: the file names).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            rich_help_panel=ARENA,
            help="Score this system 1000 and, unless --schedule says otherwise, compare "
            "every other system with it only.",
        ),
    ] = None,
    schedule: Annotated[
        ScheduleChoice | None,
        typer.Option(
            parser=choice(ScheduleChoice, "--schedule"),
            metavar="KIND",
            rich_help_panel=ARENA,
            help="round-robin (every pair on every case), baseline or adaptive (default: "
            "round-robin for up to 4 systems, adaptive for more, baseline with --baseline).",
            show_default=False,
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            rich_help_panel=ARENA,
            help="Adaptive: comparisons in all (default: half of a round robin).",
        ),
    ] = None,
    max_pairs_per_case: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            rich_help_panel=ARENA,
            help="Adaptive: pairs of systems compared on one case at most.",
        ),
    ] = None,
    style_control: Annotated[
        bool,
        typer.Option(
            "--style-control",
            rich_help_panel=ARENA,
            help="Also fit with the answers' length and markdown held fixed.",
        ),
    ] = False,
    beats: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            rich_help_panel=GATE,
            help="Exit 1 unless --for scores above NAME in 95% of resamples. Repeatable.",
            show_default=False,
        ),
    ] = None,
    min_rank: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="N", rich_help_panel=GATE, help="Exit 1 unless --for ranks N or better."
        ),
    ] = None,
    for_system: Annotated[
        str | None,
        typer.Option(
            "--for",
            metavar="NAME",
            rich_help_panel=GATE,
            help="The system gated (default: the last file's).",
        ),
    ] = None,
    min_consistency: MinConsistencyOpt = None,
    flip: FlipOpt = True,
    flip_policy: FlipPolicyOpt = FlipPolicyChoice.TIE,
    allow_partial: AllowPartialOpt = False,
) -> ExitCode:
    """Rank 2 or more systems answering the same cases (joined on id): each pair of systems
    is compared on each case with a pairwise rubric, in both orders, and a Bradley–Terry
    model turns the verdicts into scores with 95% intervals and ranks.
    """
    from judgecli.cli.flags import run_with_progress
    from judgecli.commands.arena.gate import ArenaGateSpec
    from judgecli.commands.arena.schedule import Schedule
    from judgecli.commands.jobs import Sides, Tournament, prepare_arena
    from judgecli.commands.setup import find_rubric_of
    from judgecli.grading.debias import FlipPolicy
    from judgecli.grading.repeats import repeats_warning

    found = find_rubric_of(rubric)
    tournament = Tournament(
        names=name,
        baseline=baseline,
        schedule=Schedule(schedule) if schedule else None,
        budget=budget,
        max_pairs_per_case=max_pairs_per_case,
        style_control=style_control,
        gate=ArenaGateSpec(
            system=for_system,
            beats=tuple(beats or ()),
            min_rank=min_rank,
            min_consistency=min_consistency,
        ),
    )
    sides = Sides(flip=flip, flip_policy=FlipPolicy(flip_policy), allow_partial=allow_partial)
    job = prepare_arena(files, found, flags, tournament, sides)
    config = job.config
    if not flags.quiet and (said := repeats_warning(config.repeats, config.temperature)):
        stderr.print(f"[yellow]warning: {escape(said)}[/]")
    outcome = run_with_progress(ctx, flags, job)
    return show(outcome.summary, outcome.run_dir, quiet=flags.quiet, json_output=flags.json_output)


def show(summary: ArenaSummary, run_dir: Path, *, quiet: bool, json_output: bool) -> ExitCode:
    """Print the arena (tables unless quiet, warnings, the headline, where the run is; with
    --json the summary on stdout and the rest on stderr) and say how to exit: 3 when it
    is incomplete, 1 when its gate failed.
    """
    import json

    from judgecli.cli.render import print_undecided, report_console
    from judgecli.commands.outcome import exit_code
    from judgecli.report.arena import arena_headline, gate_note, terminal_tables

    console = report_console(json_output=json_output)
    if not quiet:
        for table in terminal_tables(summary):
            console.print(table)
    for warning in summary.warnings:
        stderr.print(f"[yellow]warning:[/] {escape(warning)}")
    line = escape(arena_headline(summary))
    if summary.gate is not None and not summary.incomplete:
        colour = "green" if summary.gate.passed else "red" if summary.gate.decided else "yellow"
        line = f"[bold {colour}]{line}[/]"
    console.print(line, soft_wrap=True)
    if note := gate_note(summary):
        console.print(escape(note), soft_wrap=True)
    console.print(f"run directory: {escape(str(run_dir))}", soft_wrap=True)
    if json_output:
        print(json.dumps(summary.model_dump(mode="json", exclude_none=True), indent=2))
    if summary.incomplete:
        stderr.print(f"[bold red]error:[/] {escape(summary.incomplete)}")
        from judgecli.cli.retry_advice import retry_hint

        errors = [failure.error for failure in summary.failures]
        stderr.print(f"[dim]hint:[/] {escape(retry_hint(run_dir, errors))}")
    elif summary.gate is not None and not summary.gate.decided:
        # Issue 29: a judge that cannot tell the answers apart decides no gate.
        print_undecided(summary.gate.undecided, summary.gate.hint)
    return exit_code(summary)

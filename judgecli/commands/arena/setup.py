"""Setting an arena up from what the command line asked (`Arena`): the systems' names, the
schedule (its default by the number of systems), the gate, the joined files and the grading
plan, every flag checked before anything is called or written (ConfigError or DatasetError,
exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgecli.commands.arena.gate import ArenaGateSpec
from judgecli.commands.arena.schedule import ADAPTIVE_FROM, Planner, Schedule, system_pairs
from judgecli.commands.arena.systems import (
    ArenaFiles,
    join_files,
    system_index,
    system_names,
)
from judgecli.commands.setup import check_images
from judgecli.errors import ConfigError
from judgecli.grading.debias import FlipPolicy
from judgecli.grading.grade import GradingPlan
from judgecli.inputs.sampling import SampleSize
from judgecli.rubric import Rubric
from judgecli.settings.config import RunConfig


@dataclass(frozen=True)
class Arena:
    """One arena run, as the command line set it up."""

    config: RunConfig
    plan: GradingPlan
    files: ArenaFiles
    planner: Planner
    gate: ArenaGateSpec
    anchor: str | None = None
    """The baseline whose score is 1000 (None: the mean strength)."""
    style_control: bool = False


def chosen_schedule(asked: Schedule | None, n: int, baseline: int | None) -> Schedule:
    """--schedule, else the baseline schedule with --baseline, else a round robin for up to
    4 systems and the adaptive schedule for more.
    """
    if asked is Schedule.BASELINE and baseline is None:
        raise ConfigError(
            "--schedule baseline needs --baseline NAME", hint="name the system to compare with"
        )
    if asked is not None:
        return asked
    if baseline is not None:
        return Schedule.BASELINE
    return Schedule.ROUND_ROBIN if n < ADAPTIVE_FROM else Schedule.ADAPTIVE


def check_budget(
    kind: Schedule, budget: int | None, max_pairs_per_case: int | None, pairs: int
) -> None:
    """--budget and --max-pairs-per-case belong to the adaptive schedule; a budget must
    allow every pair of systems one comparison.
    """
    given = [
        flag
        for flag, v in (("--budget", budget), ("--max-pairs-per-case", max_pairs_per_case))
        if v
    ]
    if given and kind is not Schedule.ADAPTIVE:
        raise ConfigError(
            f"{' and '.join(given)} apply to the adaptive schedule, not {kind.value}",
            hint="add --schedule adaptive, or drop them",
        )
    if budget is not None and budget < pairs:
        raise ConfigError(
            f"--budget {budget} is fewer comparisons than the {pairs} pairs of systems",
            hint=f"every pair needs at least one comparison: --budget {pairs} or more",
        )


def set_up_arena(
    config: RunConfig,
    rubric: Rubric,
    paths: Sequence[Path],
    *,
    names: Sequence[str] | None = None,
    baseline: str | None = None,
    schedule: Schedule | None = None,
    budget: int | None = None,
    max_pairs_per_case: int | None = None,
    style_control: bool = False,
    gate: ArenaGateSpec | None = None,
    flip: bool = True,
    flip_policy: FlipPolicy = FlipPolicy.TIE,
    allow_partial: bool = False,
    limit: int | None = None,
    sample: int | SampleSize | None = None,
) -> Arena:
    """The arena the flags describe, its files validated and joined (nothing judged yet)."""
    systems = system_names(paths, names)
    anchor = None if baseline is None else system_index(systems, baseline, "--baseline")
    kind = chosen_schedule(schedule, len(systems), anchor)
    pairs = system_pairs(kind, len(systems), anchor)
    check_budget(kind, budget, max_pairs_per_case, len(pairs))
    checked = (gate or ArenaGateSpec()).checked(systems, flip=flip)
    files = join_files(
        paths,
        systems,
        pairs,
        requires=rubric.requires,
        field_map=config.field_map,
        allow_partial=allow_partial,
        limit=limit,
        sample=sample,
        seed=config.seed,
    )
    check_images(config, rubric, files.images)
    planner = Planner(
        files,
        kind,
        baseline=anchor,
        budget=budget,
        max_pairs_per_case=max_pairs_per_case,
        seed=config.seed,
    )
    return Arena(
        config=config,
        plan=GradingPlan.of(config, rubric, flip=flip, flip_policy=flip_policy),
        files=files,
        planner=planner,
        gate=checked,
        anchor=baseline,
        style_control=style_control,
    )

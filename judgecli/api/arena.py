"""`run_arena`: many systems answering the same cases, compared pair by pair with a
pairwise rubric, on one Bradley–Terry leaderboard with intervals, as `judge arena` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgecli.api.argv import command_line
from judgecli.api.jobs import PAIR_OWN, offered, pair_words
from judgecli.api.runs import Dataset, Preparing, Run, run_prepared
from judgecli.api.settings import choice, number, read_settings
from judgecli.commands.arena.gate import ArenaGateSpec
from judgecli.commands.arena.schedule import Schedule
from judgecli.commands.jobs import Sides, Tournament, prepare_arena
from judgecli.grading.debias import FlipPolicy
from judgecli.settings.flags import CASCADE_FLAGS, CHECKLIST_FLAGS, SCALE_OUT_FLAGS

if TYPE_CHECKING:
    from judgecli.result import CaseResult
    from judgecli.rubric import Rubric
    from judgecli.summary.arena import ArenaSummary


def run_arena(
    systems: Mapping[str, Dataset] | Sequence[str | Path],
    *,
    rubric: str | Path | Rubric = "pairwise",
    model: str | Sequence[str] | None = None,
    api_base: str | None = None,
    out: str | Path | None = None,
    cache: bool = True,
    baseline: str | None = None,
    schedule: Schedule | str | None = None,
    budget: int | None = None,
    max_pairs_per_case: int | None = None,
    style_control: bool = False,
    beats: Sequence[str] = (),
    min_rank: int | None = None,
    for_system: str | None = None,
    min_consistency: float | None = None,
    flip: bool = True,
    flip_policy: FlipPolicy | str = FlipPolicy.TIE,
    allow_partial: bool = False,
    on_result: Callable[[CaseResult], None] | None = None,
    **settings: Any,
) -> Run[ArenaSummary]:
    """Rank 2 or more systems answering the same cases (joined on id): `judge arena`.

    Args:
        systems: Each system's answers: a dict of name to dataset (a path or rows, kept
            as RUN_DIR/inputs/system-N.jsonl), or a list of paths (named by their files).
        rubric: A pairwise rubric (default: the library's `pairwise`).
        model: The judge, or a list for a panel (None: the rubric's).
        api_base: An OpenAI-compatible server's endpoint.
        out: The run directory (None: a new runs/<UTC time>-arena-<rubric>).
        cache: False: no reply cache.
        baseline: Score this system 1000 and compare every other with it only (unless
            `schedule` says otherwise).
        schedule: `"round-robin"`, `"baseline"` or `"adaptive"` (default: by the number
            of systems).
        budget: Adaptive: comparisons in all.
        max_pairs_per_case: Adaptive: pairs of systems compared on one case at most.
        style_control: Also fit with the answers' length and markdown held fixed.
        beats: The gate: `for_system` must score above each of these in 95% of resamples.
        min_rank: The gate: `for_system` must rank this or better.
        for_system: The system gated (default: the last one).
        min_consistency: The position-consistency floor under the gate (default 0.5).
        flip: Judge each pair in both orders.
        flip_policy: A judge whose two orders disagree says `"tie"`, `"drop"` or `"vote"`.
        allow_partial: Judge only the ids every system answered instead of refusing.
        on_result: Called with each comparison's result as it is written.
        **settings: The judging flags (no cascade or scale-out).

    Returns:
        The finished run (`summary.leaderboard`, `summary.gate`, ...).
    """
    read = read_settings(
        {"model": model, "api_base": api_base, "out": out, "cache": cache, **settings},
        caller="run_arena",
        flags=offered(CASCADE_FLAGS | SCALE_OUT_FLAGS | CHECKLIST_FLAGS),
        own=("systems", "rubric", "baseline", "schedule", "budget", "beats", *PAIR_OWN),
    )
    names = list(systems) if isinstance(systems, Mapping) else None
    floor = (
        None if min_consistency is None else number("run_arena", "min_consistency", min_consistency)
    )
    tournament = Tournament(
        names=names,
        baseline=baseline,
        schedule=choice(Schedule, "schedule", schedule) if schedule is not None else None,
        budget=budget,
        max_pairs_per_case=max_pairs_per_case,
        style_control=style_control,
        gate=ArenaGateSpec(
            system=for_system, beats=tuple(beats), min_rank=min_rank, min_consistency=floor
        ),
    )
    policy = choice(FlipPolicy, "flip_policy", flip_policy)
    sides = Sides(flip=flip, flip_policy=policy, allow_partial=allow_partial)
    given = list(systems.values()) if isinstance(systems, Mapping) else list(systems)
    with Preparing("arena", rubric, read.flags) as prep:
        files = [Path(prep.dataset(d, f"system-{i}")) for i, d in enumerate(given, start=1)]
        job = prepare_arena(files, prep.rubric, prep.flags, tournament, sides)
        argv = command_line(
            "arena",
            files,
            prep.flags,
            None,
            ("--rubric", prep.rubric_word, None),
            ("--name", names, None),
            ("--baseline", baseline, None),
            ("--schedule", tournament.schedule, None),
            ("--budget", budget, None),
            ("--max-pairs-per-case", max_pairs_per_case, None),
            ("--style-control", style_control, False),
            ("--beats", list(beats), None),
            ("--min-rank", min_rank, None),
            ("--for", for_system, None),
            ("--min-consistency", floor, None),
            *pair_words(sides),
        )
        return run_prepared(job, argv=argv, on_result=on_result)

"""An arena as a job on the spine (`running.job`), as every judging command runs: its
comparisons judged into one run directory (run.json, the reply cache, --resume, --max-cost,
--max-failures), then concluded (`ending.ArenaEnding`: summary.json, the gate, the reports).

Each comparison is graded by `grading.grade_pairwise` (both orders, the flip policy,
panels), the earlier file's system as OLD, and written as an `ArenaResult`. The schedule
is the job's rounds (`schedule.Plan`): a fixed schedule is one round; an adaptive one plans
each round from the verdicts before it, and each later round reopens the run (run.json then
lists a `resumed` time per round).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from judgecli.commands.arena.ending import ArenaEnding
from judgecli.commands.arena.schedule import Matchup, Plan
from judgecli.commands.arena.setup import Arena
from judgecli.commands.pairwise import NO_FLIP_WARNING
from judgecli.grading.grade import GradingPlan, grade_pairwise
from judgecli.judge.protocol import JudgeClient
from judgecli.result import CaseResult, Winner
from judgecli.running.job import Job
from judgecli.summary.arena import ArenaSummary


class ArenaResult(CaseResult):
    """A results.jsonl line of an arena: the comparison's pairwise result (`winner` "old"
    is the first system of `systems`) and which systems, on which case.
    """

    case_id: str
    """The id of the case in the systems' files."""
    systems: dict[str, str]
    """{"old": the earlier file's system, "new": the later one's}."""
    winner_system: str | None = None
    """The name of the system that won (absent on a tie, a dropped or a failed comparison)."""


def arena_result(result: CaseResult, m: Matchup, names: Sequence[str]) -> ArenaResult:
    """A graded comparison as its results.jsonl line."""
    old, new = (names[i] for i in m.systems)
    won = {Winner.OLD: old, Winner.NEW: new}.get(result.winner) if result.winner else None
    return ArenaResult(
        **dict(result),
        case_id=m.case_id,
        systems={"old": old, "new": new},
        winner_system=won,
    )


def grader(arena: Arena) -> Callable[[JudgeClient, GradingPlan, Matchup], Awaitable[CaseResult]]:
    """Grade one comparison: read both answers, judge them as a pairwise case."""
    names = arena.files.names

    async def grade(client: JudgeClient, plan: GradingPlan, m: Matchup) -> CaseResult:
        pair = arena.files.pair(m.systems, m.case_id, m.id)
        return arena_result(await grade_pairwise(client, plan, pair), m, names)

    return grade


def arena_job(arena: Arena) -> Job[Matchup, ArenaSummary]:
    """The arena as the spine runs it: its schedule's first round as the items, the later
    ones (adaptive) as its rounds, at most the schedule's capacity in all (ConfigError, before
    anything is written, when the planned comparisons cannot link every system).
    """
    plan = Plan.begun(arena.planner)
    return Job(
        config=arena.config,
        plan=arena.plan,
        items=list(plan.planned),
        total=arena.planner.capacity,
        grade=grader(arena),
        ending=ArenaEnding(arena, plan),
        warnings=arena.files.warnings,
        late_warnings=lambda: [] if arena.plan.flip else [NO_FLIP_WARNING],
        rounds=plan,
    )

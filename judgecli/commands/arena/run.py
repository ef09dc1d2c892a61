"""Running an arena: judge its comparisons into one run directory, round by round, then
summarise, gate and write summary.json, report.md, report.html and results.junit.xml.

Judging is `judging.judge_all`'s, as for every judging command: the run directory and
run.json, the reply cache, --resume, --max-cost, --max-failures. Each comparison is graded
by `grading.grade_pairwise` (both orders, the flip policy, panels), the earlier file's
system as OLD. An adaptive schedule judges its rounds one after the other into the same
run: each later round reopens it (run.json then lists a `resumed` time per round).

`job.run_job` is not used because its ending (summary, reports) is the four original
commands' union of summaries; an arena's summary is its own (`summary.arena`), as a
drift's is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgecli.commands.arena.gate import ArenaGateSpec, arena_warnings, evaluate_arena_gate
from judgecli.commands.arena.schedule import Matchup, Planner, Schedule
from judgecli.commands.arena.systems import ArenaFiles
from judgecli.commands.pairwise import NO_FLIP_WARNING
from judgecli.grading.grade import GradingPlan, grade_pairwise
from judgecli.judge.protocol import JudgeClient
from judgecli.report.arena import render_arena_html, render_arena_markdown
from judgecli.report.junit_arena import render_arena_junit
from judgecli.result import CaseResult, CaseStatus, Winner
from judgecli.running.judging import judge_all
from judgecli.settings.config import FailureLimit, RunConfig
from judgecli.store import (
    JUNIT,
    REPORT_HTML,
    REPORT_MD,
    RESULTS,
    SUMMARY,
    RunStore,
    append_step_summary,
    read_results,
)
from judgecli.summary.arena import ArenaSummary, ScheduleSummary, summarize_arena
from judgecli.summary.arena_length import Matched


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


@dataclass(frozen=True)
class ArenaOutcome:
    """A finished arena: where it is and what its summary says."""

    run_dir: Path
    summary: ArenaSummary


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


def grader(arena: Arena) -> Callable[[JudgeClient, Matchup], Awaitable[CaseResult]]:
    """Grade one comparison: read both answers, judge them as a pairwise case."""
    names = arena.files.names

    async def grade(client: JudgeClient, m: Matchup) -> CaseResult:
        pair = arena.files.pair(m.systems, m.case_id, m.id)
        return arena_result(await grade_pairwise(client, arena.plan, pair), m, names)

    return grade


def failed_too_often(results: Sequence[CaseResult], limit: FailureLimit, total: int) -> bool:
    """More comparisons failed than --max-failures allows of the run's `total`."""
    failed = sum(r.status is CaseStatus.FAILED for r in results)
    return failed > limit.allowed(total)


def planned_results(run_dir: Path, planned: Sequence[Matchup]) -> list[CaseResult]:
    """The run's results of the planned comparisons, in id order (the last line of an id
    wins).
    """
    ids = {m.id for m in planned}
    found = {r.id: r for r in read_results(run_dir / RESULTS) if r.id in ids}
    return [found[i] for i in sorted(found)]


def run_arena(
    arena: Arena,
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    step_summary: Path | None = None,
) -> ArenaOutcome:
    """Judge the arena's schedule round by round, then conclude it."""
    config, planner = arena.config, arena.planner
    planned: list[Matchup] = []
    results: list[CaseResult] = []
    warnings = list(arena.files.warnings)
    rounds = 0
    batch = planner.first_round()
    while batch:
        planned += batch
        rounds += 1
        judged = judge_all(
            config,
            arena.plan.rubric,
            batch,
            grader(arena),
            argv=argv,
            on_result=on_result,
            total=planner.capacity,
        )
        warnings += judged.warnings
        config = config.model_copy(
            update={"out": judged.run_dir, "resume": True, "force": False, "retry_failed": False}
        )
        results = planned_results(judged.run_dir, planned)
        if failed_too_often(results, config.max_failures, planner.capacity):
            break
        batch = planner.next_round(planned, results)
    if not arena.plan.flip:
        warnings.append(NO_FLIP_WARNING)
    return conclude_arena(
        arena,
        config.out,
        planned,
        results,
        warnings=warnings,
        rounds=rounds,
        step_summary=step_summary,
    )


def schedule_summary(planner: Planner, planned: int, rounds: int) -> ScheduleSummary:
    """summary.json's `schedule`."""
    fields: dict[str, object] = {
        "kind": planner.kind.value,
        "pairs": len(planner.pairs),
        "planned": planned,
    }
    if planner.baseline is not None:
        fields["baseline"] = planner.files.names[planner.baseline]
    if planner.kind is Schedule.ADAPTIVE:
        fields |= {
            "budget": planner.planned_budget,
            "max_pairs_per_case": planner.max_pairs_per_case,
            "warmup_cases": planner.warmup_cases,
            "rounds": rounds,
        }
    return ScheduleSummary.model_validate(fields)


def conclude_arena(
    arena: Arena,
    run_dir: Path,
    planned: Sequence[Matchup],
    results: Sequence[CaseResult],
    *,
    warnings: Sequence[str],
    rounds: int,
    step_summary: Path | None = None,
) -> ArenaOutcome:
    """Summarise the results, settle the gate (not on an incomplete run) and write the
    reports, then summary.json (last: it is what says the run finished).
    """
    names = arena.files.names
    matched = {m.id: Matched(m.case_id, names[m.systems[0]], names[m.systems[1]]) for m in planned}
    summary = summarize_arena(
        results,
        matched,
        systems=names,
        files={n: str(p) for n, p in zip(names, arena.files.paths, strict=True)},
        rubric=arena.plan.rubric,
        models=arena.plan.models,
        schedule=schedule_summary(arena.planner, len(planned), rounds),
        anchor=arena.anchor,
        style_control=arena.style_control,
        flip=arena.plan.flip,
        flip_policy=arena.plan.flip_policy.value,
        seed=arena.config.seed,
    )
    incomplete = incomplete_reason(summary, arena.config.max_failures, len(planned))
    summary = summary.model_copy(
        update={
            "warnings": list(
                dict.fromkeys(
                    [*warnings, *sweep_warnings(summary), *arena_warnings(summary, arena.gate)]
                )
            ),
            "incomplete": incomplete,
            "gate": None if incomplete else evaluate_arena_gate(summary, arena.gate),
        }
    )
    store = RunStore(run_dir)
    markdown = render_arena_markdown(summary)
    store.write_text(REPORT_MD, markdown)
    if step_summary is not None:
        append_step_summary(step_summary, markdown)
    pairs = {key: (m.old, m.new) for key, m in matched.items()}
    store.write_text(REPORT_HTML, render_arena_html(summary, results, pairs))
    store.write_text(JUNIT, render_arena_junit(summary, results, pairs))
    store.write_json(SUMMARY, summary.model_dump(mode="json", exclude_none=True))
    return ArenaOutcome(run_dir=run_dir, summary=summary)


def incomplete_reason(summary: ArenaSummary, limit: FailureLimit, planned: int) -> str | None:
    """Why the leaderboard cannot stand for a verdict, or None: too many comparisons
    failed, the run stopped before judging them all, or the decided ones do not link every
    system (no common scale).
    """
    reasons = []
    allowed = limit.allowed(planned)
    if summary.n_failed > allowed:
        reasons.append(
            f"the judge could not grade {summary.n_failed} of {summary.n_comparisons} "
            f"comparisons (--max-failures {limit} allows {allowed} of {planned})"
        )
    if summary.n_comparisons < planned:
        reasons.append(f"stopped early, {planned - summary.n_comparisons} comparisons not judged")
    if summary.disconnected_groups:
        groups = " | ".join(", ".join(g) for g in summary.disconnected_groups)
        reasons.append(f"the decided comparisons do not link every system ({groups})")
    if summary.failures and reasons:
        first = summary.failures[0]
        reasons.append(f"e.g. {first.id}: {first.error}")
    return "; ".join(reasons) or None


def sweep_warnings(summary: ArenaSummary) -> list[str]:
    """Systems that won, or lost, every decided comparison: their maximum-likelihood score
    is infinite, so the one shown rests on the ridge prior (and its interval too).
    """
    said = []
    for s in summary.leaderboard:
        if s.n and (s.wins == s.n or s.losses == s.n):
            verb = "won" if s.wins == s.n else "lost"
            said.append(
                f"{s.name} {verb} every one of its {s.n} decided comparisons: its score "
                "rests on the ridge prior (read it as 'at least this far "
                f"{'above' if verb == 'won' else 'below'}'), not on a measured win rate"
            )
    return said

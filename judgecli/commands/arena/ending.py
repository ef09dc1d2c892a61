"""How an arena's run concludes: its answer to what the spine asks of every judging command
(`running.conclusion.Concluding`); `running.job.conclude` does the rest as it does for the
others (the summary's tail, the --max-failures rule, the reports and summary.json written).

The arena's own: the Bradley–Terry summary of the comparisons its plan made
(`summary.arena`), the warnings the numbers give (a system that swept, a judge below the
position-consistency floor), the --max-failures rule in comparisons (and a leaderboard whose
comparisons do not link every system is incomplete too), its gate (`gate`: --beats,
--min-rank, the floor) and its reports (`report.arena`, `report.junit_arena`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgecli.commands.arena.gate import arena_warnings, evaluate_arena_gate
from judgecli.commands.arena.schedule import Plan, Schedule
from judgecli.commands.arena.setup import Arena
from judgecli.report.arena import render_arena_html, render_arena_markdown
from judgecli.report.junit_arena import render_arena_junit
from judgecli.result import CaseResult
from judgecli.running.conclusion import Reports, Shortfall, first_failure
from judgecli.settings.config import FailureLimit
from judgecli.store import RunStore
from judgecli.summary.arena import ArenaGate, ArenaSummary, ScheduleSummary, summarize_arena
from judgecli.summary.arena_length import Matched


@dataclass(frozen=True)
class ArenaEnding:
    """How an arena's run concludes (a `Concluding` of ArenaSummary), from what it was set
    up with and the comparisons its plan made (read when the run concludes: an adaptive
    plan grows round by round until then).
    """

    arena: Arena
    plan: Plan

    def matched(self) -> dict[str, Matched]:
        """Each planned comparison's case and two systems, by its id."""
        names = self.arena.files.names
        return {
            m.id: Matched(m.case_id, names[m.systems[0]], names[m.systems[1]])
            for m in self.plan.planned
        }

    def summarize(self, results: list[CaseResult]) -> ArenaSummary:
        """The leaderboard, the win rates and the schedule, from the planned comparisons'
        results.
        """
        arena = self.arena
        names = arena.files.names
        return summarize_arena(
            results,
            self.matched(),
            systems=names,
            files={n: s.name for n, s in zip(names, arena.files.sources, strict=True)},
            rubric=arena.plan.rubric,
            models=arena.plan.models,
            schedule=schedule_summary(self.plan),
            anchor=arena.anchor,
            style_control=arena.style_control,
            flip=arena.plan.flip,
            flip_policy=arena.plan.flip_policy.value,
            seed=arena.config.seed,
        )

    def warnings_of(self, summary: ArenaSummary) -> list[str]:
        """A system that swept its comparisons; a judge below the consistency floor."""
        return [*sweep_warnings(summary), *arena_warnings(summary, self.arena.gate)]

    def incomplete(
        self, summary: ArenaSummary, limit: FailureLimit, total: int | None
    ) -> str | None:
        """Why the leaderboard cannot stand for a verdict (`incomplete_reason`), or None."""
        return incomplete_reason(summary, limit, total)

    def verdict(self, summary: ArenaSummary) -> ArenaGate | None:
        """The arena's gate on the leaderboard (None: neither --beats nor --min-rank)."""
        return evaluate_arena_gate(summary, self.arena.gate)

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        """An arena writes no files of its own: the reports show every result."""
        return results

    def reports(self, summary: ArenaSummary, results: Sequence[CaseResult]) -> Reports:
        """The leaderboard's report.md and report.html, and results.junit.xml with the
        gated system's comparisons as its tests.
        """
        pairs = {key: (m.old, m.new) for key, m in self.matched().items()}
        return Reports(
            markdown=render_arena_markdown(summary),
            html=render_arena_html(summary, results, pairs),
            junit=render_arena_junit(summary, results, pairs),
        )


def schedule_summary(plan: Plan) -> ScheduleSummary:
    """summary.json's `schedule`."""
    planner = plan.planner
    fields: dict[str, object] = {
        "kind": planner.kind.value,
        "pairs": len(planner.pairs),
        "planned": len(plan.planned),
    }
    if planner.baseline is not None:
        fields["baseline"] = planner.files.names[planner.baseline]
    if planner.kind is Schedule.ADAPTIVE:
        fields |= {
            "budget": planner.planned_budget,
            "max_pairs_per_case": planner.max_pairs_per_case,
            "warmup_cases": planner.warmup_cases,
            "rounds": plan.rounds,
        }
    return ScheduleSummary.model_validate(fields)


def incomplete_reason(
    summary: ArenaSummary, limit: FailureLimit, planned: int | None
) -> str | None:
    """Why the leaderboard cannot stand for a verdict, or None: more comparisons failed than
    --max-failures allows of the `planned` ones, the run stopped before judging them all
    (the one rule, `Shortfall`, in comparisons), or the decided ones do not link every
    system (no common scale).
    """
    short = Shortfall.of(summary.n_failed, summary.n_comparisons, limit, planned)
    reasons = []
    if short.too_many_failed:
        reasons.append(short.failed_words("comparisons"))
    if short.not_judged:
        reasons.append(short.stopped_words("comparisons"))
    if summary.disconnected_groups:
        groups = " | ".join(", ".join(g) for g in summary.disconnected_groups)
        reasons.append(f"the decided comparisons do not link every system ({groups})")
    if summary.failures and reasons:
        reasons.append(first_failure(summary.failures))
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

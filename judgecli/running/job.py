"""The spine every judging command runs on: open the run, judge every item (through the
cascade when the run has a screen; round by round when the job plans each round from the
verdicts before it, as an adaptive arena does), summarise from results.jsonl, then settle
what every summary ends with (warnings, the cascade's tiers, whether the run judged enough,
the gate) and write the reports and summary.json.

A command supplies only what is its own: a `Job` (its items and how one is graded) and how
its run concludes (`conclusion.Concluding`). The four commands whose summary is a
RunSummary share an `Ending` (how their results become their numbers, warnings read off
those numbers, files of their own; the gate, the incomplete rule and the reports are the
same for them); the arena gives its own (`commands.arena.ending`). `judge calibrate
--results` judges nothing, so it enters at `conclude`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from judgecli.deciding.gate import GateSpec, evaluate_gate
from judgecli.grading.cascade import Grader, plan_cascade, recorded_rule, tiered
from judgecli.grading.grade import GradingPlan
from judgecli.grading.repeats import repeats_warning
from judgecli.result import CaseResult, CaseStatus
from judgecli.rubric import Rubric
from judgecli.running.conclusion import (
    Concluding,
    Reports,
    S,
    Shortfall,
    incomplete_reason,
    run_reports,
)
from judgecli.running.judging import HasId, Judged, judge_all
from judgecli.running.run_dir import now_iso, recorded_spec
from judgecli.settings.config import DEFAULT_MAX_FAILURES, FailureLimit, RunConfig
from judgecli.store import RESULTS, RUN_INFO, SUMMARY, RunStore, read_results
from judgecli.summary.cascade import summarize_tiers
from judgecli.summary.facts import CascadeSummary, SpecRun, SummaryHead
from judgecli.summary.gate_records import GateResult
from judgecli.summary.head import with_unfinished
from judgecli.summary.run import RunSummary
from judgecli.usage import CallSpend

if TYPE_CHECKING:
    # Only a --sequential run follows a confidence sequence: it imports sequential.py where
    # it starts one (run_job) and where it is summarised (conclude).
    from judgecli.deciding.sequential import Follower, SequentialGate

ItemT = TypeVar("ItemT", bound=HasId)
ItemT_co = TypeVar("ItemT_co", bound=HasId, covariant=True)
R = TypeVar("R", bound=RunSummary)


def no_warnings(summary: RunSummary) -> list[str]:
    """An Ending that reads no warnings off its numbers."""
    return []


@dataclass(frozen=True)
class Ending(Generic[R]):
    """How a score, pairwise, calibrate or refine run concludes (a `Concluding`): its
    results become its summary and its own files; the gate (`deciding.gate`), the
    incomplete rule and the reports are those of every RunSummary.
    """

    summarize: Callable[[list[CaseResult]], R]
    """The command's numbers, from every result of the run (summary.json's tail is left
    to `conclude`)."""
    gate: GateSpec = field(default_factory=GateSpec)
    warnings_of: Callable[[R], list[str]] = no_warnings
    """Warnings the numbers give (calibrate: labels without a verdict)."""
    write_files: Callable[[RunStore, list[CaseResult]], list[CaseResult]] | None = None
    """Files of the command's own (refine: answers.jsonl; calibrate: results.jsonl with
    the human labels, disagreements.jsonl); returns the results the reports show."""

    def incomplete(self, summary: R, limit: FailureLimit, total: int | None) -> str | None:
        """Why the cases judged cannot stand for a verdict (`incomplete_reason`), or None."""
        return incomplete_reason(summary, limit, total=total)

    def verdict(self, summary: R) -> GateResult | None:
        """The gate's verdict on the numbers (None: no threshold was given)."""
        return evaluate_gate(summary, self.gate)

    def own_files(self, store: RunStore, results: list[CaseResult]) -> list[CaseResult]:
        """`write_files`'s, if the command has any; the results the reports show."""
        return self.write_files(store, results) if self.write_files else results

    def reports(self, summary: R, results: Sequence[CaseResult]) -> Reports:
        """report.md, report.html and results.junit.xml of a RunSummary."""
        return run_reports(summary, results)


@dataclass(frozen=True)
class Sequential:
    """A --sequential run: the gate it follows, and the ids of its items in the seeded
    random order they are judged in (`sequential.shuffled`).
    """

    gate: SequentialGate
    order: list[str]


class Rounds(Protocol[ItemT_co]):
    """An adaptive job's schedule (the arena's): after the job's items, each further round
    is planned from the verdicts on those planned before it. It keeps what it planned,
    the job's items included.
    """

    @property
    def planned(self) -> Sequence[ItemT_co]:
        """Every item planned so far, the job's items first."""
        ...

    def next_round(self, results: list[CaseResult]) -> Sequence[ItemT_co]:
        """The items to judge next, from the results of those planned so far (in id
        order), now planned too; none when the schedule is done.
        """
        ...


@dataclass(frozen=True)
class Job(Generic[ItemT, S]):
    """One judging command's run, as the spine needs it."""

    config: RunConfig
    plan: GradingPlan
    items: Iterable[ItemT]
    total: int
    """How many items `items` yields (with `rounds`: the most the schedule may plan): the
    run's case count (progress, --max-failures)."""
    grade: Grader[ItemT]
    ending: Concluding[S]
    warnings: Sequence[str] = ()
    """Known before judging (the dataset scan's; refine's self-preference)."""
    late_warnings: Callable[[], list[str]] = list
    """Known once the items are judged (pairwise: no flip, a judge that wrote answers)."""
    sequential: Sequential | None = None
    """--sequential: the gate to follow and the order the items come in."""
    rounds: Rounds[ItemT] | None = None
    """An adaptive schedule: `items` is its first round, and the run ends when it plans
    no more (or more items failed than --max-failures allows of `total`)."""
    fresh: Callable[[], Iterable[ItemT]] | None = None
    """The same items read afresh, for a run without --workers to learn how many calls
    the cache cannot answer before it chooses its processes (None: one process)."""

    @property
    def rubric(self) -> Rubric:
        """The rubric every item is graded with."""
        return self.plan.rubric


@dataclass(frozen=True)
class Outcome(Generic[S]):
    """A finished run: where it is and what its summary says (the gate's verdict in it)."""

    run_dir: Path
    summary: S


def run_job(
    job: Job[ItemT, S],
    *,
    argv: list[str],
    on_result: Callable[[CaseResult], None],
    step_summary: Path | None = None,
    on_stopping: Callable[[str], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> Outcome[S]:
    """Judge the job's items (round by round, if it has rounds) into its run directory,
    then conclude the run. `on_stopping` hears what a run stopped by a signal still waits
    for (the calls in flight); `on_note`, that a run without --workers forks.
    """
    # The cascade is the plan's: the run's --screen and --escalate, checked against the
    # rubric before anything is written, and recorded in run.json with the default rule
    # spelled out (so a resume can check it is unchanged).
    cascade = plan_cascade(job.plan, job.config.screen_name, job.config.escalate)
    config = recorded_rule(job.config, cascade)
    follower = None
    if job.sequential is not None:
        from judgecli.deciding.sequential import follow

        # A resumed run's sequence starts from what results.jsonl already holds: if it
        # decided before the stop, nothing more is judged.
        before = read_results(config.out / RESULTS) if config.resume else []
        follower = follow(job.sequential.gate, job.sequential.order, before)

    def observe(result: CaseResult) -> None:
        if follower is not None:
            follower.record(result)
        on_result(result)

    grade = tiered(job.grade, job.plan, cascade)

    def judge(
        config: RunConfig,
        items: Iterable[ItemT],
        fresh: Callable[[], Iterable[ItemT]] | None = None,
    ) -> Judged:
        return judge_all(
            config,
            job.rubric,
            items,
            grade,
            argv=argv,
            on_result=observe,
            total=job.total,
            done=follower.decided if follower else None,
            on_stopping=on_stopping,
            fresh=fresh,
            on_note=on_note,
        )

    judged = judge(config, job.items, job.fresh if job.rounds is None else None)
    if job.rounds is None:
        results, total = list(read_results(judged.run_dir / RESULTS)), job.total
    else:
        judged, results = judge_rounds(job.rounds, judged, judge, config, job.total)
        total = len(job.rounds.planned)
    warnings = [*job.warnings, *judged.warnings, *job.late_warnings()]
    if said := repeats_warning(config.repeats, config.temperature):
        warnings.append(said)
    if config.shard is not None:
        # One shard's numbers are part of the evidence: no verdict on them alone.
        warnings.append(
            f"--shard {config.shard}: these numbers are this shard's cases only; join the "
            "shards with judge merge, where the gate runs"
        )
    sequence = follower.replayed(results) if follower else None
    # A sequential run that decided judged what it needed: the cases it left are not
    # missing, and the run is complete.
    decided = sequence is not None and sequence.decided()
    return conclude(
        judged.run_dir,
        results,
        job.ending,
        warnings=warnings,
        cascade=summarize_tiers(results, config, cascade),
        judged=(config.max_failures, len(results) if decided else total),
        step_summary=step_summary,
        sequence=sequence,
        unfinished=judged.unfinished,
        gated=config.shard is None,
    )


def judge_rounds(
    rounds: Rounds[ItemT],
    first: Judged,
    judge: Callable[[RunConfig, Iterable[ItemT]], Judged],
    config: RunConfig,
    total: int,
) -> tuple[Judged, list[CaseResult]]:
    """Judge an adaptive job's later rounds into the run its first round opened, until the
    schedule plans no more or more have failed than --max-failures allows of `total`. The
    last round's Judged (its warnings and unfinished calls are the whole run's, as run.json
    carries them from round to round) and the results of every item planned, in id order.
    """
    # Each later round reopens the run, as a resume would (run.json lists its time).
    again = config.model_copy(
        update={"out": first.run_dir, "resume": True, "force": False, "retry_failed": False}
    )
    judged = first
    while True:
        results = planned_results(judged.run_dir, rounds.planned)
        failed = sum(r.status is CaseStatus.FAILED for r in results)
        if Shortfall.of(failed, len(results), config.max_failures, total).too_many_failed:
            return judged, results
        batch = rounds.next_round(results)
        if not batch:
            return judged, results
        judged = judge(again, batch)


def planned_results(run_dir: Path, planned: Sequence[HasId]) -> list[CaseResult]:
    """The run's results of the planned items, in id order (the last line of an id wins):
    a resumed adaptive run may hold results of items this session's schedule did not plan.
    """
    ids = {item.id for item in planned}
    found = {r.id: r for r in read_results(run_dir / RESULTS) if r.id in ids}
    return [found[i] for i in sorted(found)]


def conclude(
    run_dir: Path,
    results: list[CaseResult],
    ending: Concluding[S],
    *,
    warnings: Sequence[str] = (),
    cascade: CascadeSummary | None = None,
    judged: tuple[FailureLimit, int] | None = None,
    step_summary: Path | None = None,
    sequence: Follower | None = None,
    unfinished: CallSpend | None = None,
    gated: bool = True,
) -> Outcome[S]:
    """Summarise the results, settle the summary's tail, and write the reports (and
    report.md to a CI step summary), then summary.json: last, as its presence says the run
    finished. `judged`: the failure limit and case count of items judged now; a run that
    lost too many, or stopped early, is incomplete and its gate is not evaluated, nor is
    it without `gated` (one shard's run). `sequence`: a --sequential run's confidence
    sequence over these results, whose decision the gate takes. `unfinished`: the calls of
    cases that did not finish in the session that sent them, added to the summary's usage.
    """
    # In id order, not the order the cases finished in (which concurrency shuffles): the
    # same verdicts then give the same numbers, seeded resamplings included, whether one
    # process judged them, N workers, or N machines whose shards were merged.
    numbers = ending.summarize(sorted(results, key=lambda result: result.id))
    numbers = with_spec(numbers, run_dir)
    if unfinished is not None and unfinished.calls:
        numbers = numbers.model_copy(update={"usage": with_unfinished(numbers.usage, unfinished)})
    if sequence is not None:
        from judgecli.deciding.sequential import sequential_summary

        followed = sequential_summary(
            sequence, judged=numbers.n_cases, cost_usd=numbers.usage.cost_usd
        )
        numbers = numbers.model_copy(update={"sequential": followed})
    limit, total = judged or (DEFAULT_MAX_FAILURES, None)
    incomplete = ending.incomplete(numbers, limit, total)
    tail: dict[str, object] = {
        "warnings": [*warnings, *ending.warnings_of(numbers)],
        "incomplete": incomplete,
        "gate": None if incomplete or not gated else ending.verdict(numbers),
    }
    if cascade is not None:  # (a summary without a cascade may have no such key: the arena's)
        tail["cascade"] = cascade
    summary = numbers.model_copy(update=tail)
    store = RunStore(run_dir)
    shown = ending.own_files(store, results)
    ending.reports(summary, shown).write(run_dir, step_summary=step_summary)
    store.write_json(SUMMARY, summary.model_dump(mode="json", exclude_none=True))
    return Outcome(run_dir=run_dir, summary=summary)


def with_spec(numbers: S, run_dir: Path) -> S:
    """The summary with the spec its run.json records (`judge run SPEC`), if it has one."""
    recorded = recorded_spec(run_dir)
    # (Every RunSummary's head has the key; a summary of another shape keeps its own keys.)
    if not isinstance(recorded, dict) or not isinstance(numbers, SummaryHead):
        return numbers
    return numbers.model_copy(update={"spec": SpecRun.model_validate(recorded)})


def open_unjudged_run(
    out: Path, *, command: str, argv: list[str], read: Path, replace: bool = False
) -> Path:
    """A run directory for numbers from verdicts already made (`calibrate --results`):
    run.json says what was read; no results.jsonl is opened, as nothing is judged.
    `replace` (--force) starts an existing `out` over.
    """
    store = RunStore.create(out, with_results=False, replace=replace)
    with store.opening():
        store.write_json(
            RUN_INFO, {"command": command, "argv": argv, "results": str(read), "started": now_iso()}
        )
    return store.path


def write_reports(
    run_dir: Path,
    summary: RunSummary,
    results: Sequence[CaseResult],
    *,
    step_summary: Path | None = None,
) -> Path:
    """report.md, report.html and results.junit.xml of a RunSummary and its results (and
    report.md appended to a CI step summary); returns the HTML report's path.
    """
    return run_reports(summary, results).write(run_dir, step_summary=step_summary)

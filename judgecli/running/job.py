"""The spine every judging command runs on: open the run, judge every item (through the
cascade when the run has a screen), summarise from results.jsonl, then settle what every
summary ends with (warnings, the cascade's tiers, whether the run judged enough, the gate)
and write summary.json and the reports.

A command supplies only what is its own: a `Job` (its items and how one is graded) and an
`Ending` (how its results become its numbers, warnings read off those numbers, files of its
own). `judge calibrate --results` judges nothing, so it enters at `conclude`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from judgecli.deciding.gate import GateSpec, evaluate_gate
from judgecli.grading.cascade import Grader, plan_cascade, recorded_rule, tiered
from judgecli.grading.grade import GradingPlan
from judgecli.grading.repeats import repeats_warning
from judgecli.report.markdown import render_markdown
from judgecli.result import CaseResult
from judgecli.rubric import Rubric
from judgecli.running.judging import HasId, judge_all
from judgecli.running.run_dir import now_iso
from judgecli.settings.config import DEFAULT_MAX_FAILURES, FailureLimit, RunConfig
from judgecli.store import (
    JUNIT,
    REPORT_HTML,
    REPORT_MD,
    RESULTS,
    RUN_INFO,
    SUMMARY,
    RunStore,
    append_step_summary,
    read_results,
)
from judgecli.summary.cascade import summarize_tiers
from judgecli.summary.facts import CascadeSummary
from judgecli.summary.head import with_unfinished
from judgecli.summary.run import RunSummary, summary_json
from judgecli.usage import CallSpend

if TYPE_CHECKING:
    # Only a --sequential run follows a confidence sequence: it imports sequential.py where
    # it starts one (run_job) and where it is summarised (conclude).
    from judgecli.deciding.sequential import Follower, SequentialGate

ItemT = TypeVar("ItemT", bound=HasId)
S = TypeVar("S", bound=RunSummary)


def no_warnings(summary: RunSummary) -> list[str]:
    """An Ending that reads no warnings off its numbers."""
    return []


@dataclass(frozen=True)
class Ending(Generic[S]):
    """How a command's results become its summary and its own files."""

    summarize: Callable[[list[CaseResult]], S]
    """The command's numbers, from every result of the run (summary.json's tail is left
    to `conclude`)."""
    gate: GateSpec = field(default_factory=GateSpec)
    warnings_of: Callable[[S], list[str]] = no_warnings
    """Warnings the numbers give (calibrate: labels without a verdict)."""
    write_files: Callable[[RunStore, list[CaseResult]], list[CaseResult]] | None = None
    """Files of the command's own (refine: answers.jsonl; calibrate: results.jsonl with
    the human labels, disagreements.jsonl); returns the results the reports show."""


@dataclass(frozen=True)
class Sequential:
    """A --sequential run: the gate it follows, and the ids of its items in the seeded
    random order they are judged in (`sequential.shuffled`).
    """

    gate: SequentialGate
    order: list[str]


@dataclass(frozen=True)
class Job(Generic[ItemT, S]):
    """One judging command's run, as the spine needs it."""

    config: RunConfig
    plan: GradingPlan
    items: Iterable[ItemT]
    total: int
    """How many items `items` yields: the run's case count (progress, --max-failures)."""
    grade: Grader[ItemT]
    ending: Ending[S]
    warnings: Sequence[str] = ()
    """Known before judging (the dataset scan's; refine's self-preference)."""
    late_warnings: Callable[[], list[str]] = list
    """Known once the items are judged (pairwise: no flip, a judge that wrote answers)."""
    sequential: Sequential | None = None
    """--sequential: the gate to follow and the order the items come in."""

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
) -> Outcome[S]:
    """Judge the job's items into its run directory, then conclude the run. `on_stopping`
    hears what a run stopped by a signal still waits for (the calls in flight).
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

    judged = judge_all(
        config,
        job.rubric,
        job.items,
        tiered(job.grade, job.plan, cascade),
        argv=argv,
        on_result=observe,
        total=job.total,
        done=follower.decided if follower else None,
        on_stopping=on_stopping,
    )
    results = list(read_results(judged.run_dir / RESULTS))
    ending, warnings = job.ending, [*job.warnings, *judged.warnings, *job.late_warnings()]
    if said := repeats_warning(config.repeats, config.temperature):
        warnings.append(said)
    if config.shard is not None:
        # One shard's numbers are part of the evidence: no verdict on them alone.
        ending = replace(ending, gate=GateSpec())
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
        ending,
        warnings=warnings,
        cascade=summarize_tiers(results, config, cascade),
        judged=(config.max_failures, len(results) if decided else job.total),
        step_summary=step_summary,
        sequence=sequence,
        unfinished=judged.unfinished,
    )


def conclude(
    run_dir: Path,
    results: list[CaseResult],
    ending: Ending[S],
    *,
    warnings: Sequence[str] = (),
    cascade: CascadeSummary | None = None,
    judged: tuple[FailureLimit, int] | None = None,
    step_summary: Path | None = None,
    sequence: Follower | None = None,
    unfinished: CallSpend | None = None,
) -> Outcome[S]:
    """Summarise the results, settle the summary's tail, and write summary.json, the
    reports (and report.md to a CI step summary). `judged`: the failure limit and case
    count of items judged now; a run that lost too many, or stopped early, is incomplete
    and its gate is not evaluated. `sequence`: a --sequential run's confidence sequence
    over these results, whose decision the gate takes. `unfinished`: the calls of cases
    that did not finish in the session that sent them, added to the summary's usage.
    """
    # In id order, not the order the cases finished in (which concurrency shuffles): the
    # same verdicts then give the same numbers, seeded resamplings included, whether one
    # process judged them, N workers, or N machines whose shards were merged.
    numbers = ending.summarize(sorted(results, key=lambda result: result.id))
    if unfinished is not None and unfinished.calls:
        usage = with_unfinished(numbers.usage, unfinished)
        numbers = cast(S, numbers.model_copy(update={"usage": usage}))
    if sequence is not None:
        from judgecli.deciding.sequential import sequential_summary

        followed = sequential_summary(
            sequence, judged=numbers.n_cases, cost_usd=numbers.usage.cost_usd
        )
        numbers = cast(S, numbers.model_copy(update={"sequential": followed}))
    limit, total = judged or (DEFAULT_MAX_FAILURES, None)
    incomplete = incomplete_reason(numbers, limit, total=total)
    tail = {
        "warnings": [*warnings, *ending.warnings_of(numbers)],
        "cascade": cascade,
        "incomplete": incomplete,
        "gate": None if incomplete else evaluate_gate(numbers, ending.gate),
    }
    # model_copy keeps the command's own model (mypy sees only the union S is bound by).
    summary = cast(S, numbers.model_copy(update=tail))
    store = RunStore(run_dir)
    shown = ending.write_files(store, results) if ending.write_files else results
    store.write_json(SUMMARY, summary_json(summary))
    write_reports(run_dir, summary, shown, step_summary=step_summary)
    return Outcome(run_dir=run_dir, summary=summary)


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


def incomplete_reason(
    summary: RunSummary, limit: FailureLimit, *, total: int | None = None
) -> str | None:
    """Why the run's numbers cannot stand for a verdict, or None: more cases failed than
    `limit` allows of the run's `total` cases (default: those in the summary), or the run
    stopped before judging them all. A run the judge could not grade is never a pass, and
    never a regression.
    """
    planned = max(total or 0, summary.n_cases)
    allowed = limit.allowed(planned)
    if summary.n_failed <= allowed and summary.n_cases >= planned:
        return None
    reason = (
        f"the judge could not grade {summary.n_failed} of {summary.n_cases} cases "
        f"(--max-failures {limit} allows {allowed} of {planned})"
    )
    if summary.n_cases < planned:
        reason += f"; stopped early, {planned - summary.n_cases} cases not judged"
    if summary.failures:
        first = summary.failures[0]
        reason += f"; e.g. {first.id}: {first.error}"
    return reason


def write_reports(
    run_dir: Path,
    summary: RunSummary,
    results: Sequence[CaseResult],
    *,
    step_summary: Path | None = None,
) -> Path:
    """report.md, report.html and results.junit.xml from the summary and the results (and
    report.md appended to a CI step summary); returns the HTML report's path.
    """
    from judgecli.report.html import render_html
    from judgecli.report.junit import render_junit

    store = RunStore(run_dir)
    markdown = render_markdown(summary)
    store.write_text(REPORT_MD, markdown)
    if step_summary is not None:
        append_step_summary(step_summary, markdown)
    store.write_text(JUNIT, render_junit(summary, results))
    return store.write_text(REPORT_HTML, render_html(summary, results))

"""The declared flags as typer options of each command (the shared judging flags, the gate's
thresholds), and what the output flags do once the command has its run.

Typer reads a command's options from its function's signature and has no parameter groups.
So a judging command declares one `flags: JudgeFlags` parameter, and `@judge_flags(...)`
shows typer a signature with one option per shared flag in its place, each made from the
flag's declaration in judgecli/settings/flags.py, then calls the command with their values
gathered into one JudgeFlags. A gated command's `thresholds: GateThresholds` parameter is
made the same way by `@gate_thresholds(command)`, from judgecli/settings/gate_flags.py. A
flag or a threshold added there reaches every command that takes it from here unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from judgecli.cli.app import stderr
from judgecli.cli.options import judge_option
from judgecli.settings.flags import JudgeFlags, flag_fields
from judgecli.settings.gate_flags import GateThresholds, thresholds_of

if TYPE_CHECKING:
    import typer

    from judgecli.cli.progress import RunProgress
    from judgecli.errors import ExitCode
    from judgecli.running.conclusion import S
    from judgecli.running.job import Job, Outcome
    from judgecli.settings.flag_spec import FlagField
    from judgecli.summary.run import RunSummary

Command = Callable[..., "ExitCode"]


def judge_flags(*, without: frozenset[str] = frozenset()) -> Callable[[Command], Command]:
    """Put the shared flags (all but `without`) in place of a command's `flags: JudgeFlags`
    parameter, and call the command with them gathered into one JudgeFlags.
    """
    unknown = without - {shared.name for shared in flag_fields()}
    if unknown:
        raise ValueError(f"no shared flags named {sorted(unknown)}")
    offered = [shared for shared in flag_fields() if shared.name not in without]
    return in_place_of("flags", JudgeFlags, offered, kind="shared flags")


def gate_thresholds(command: str | None) -> Callable[[Command], Command]:
    """Put the gate's thresholds `command` takes (every one for None: `judge gate`) in place
    of a command's `thresholds: GateThresholds` parameter, and call the command with them
    gathered into one GateThresholds.
    """
    return in_place_of("thresholds", GateThresholds, thresholds_of(command), kind="thresholds")


def in_place_of(
    name: str, group: type[Any], offered: Sequence[FlagField], *, kind: str
) -> Callable[[Command], Command]:
    """Show typer one option per declared field of `group` (those `offered`) in place of a
    command's parameter `name`, and call the command with their values gathered into one
    `group`.
    """
    options = [
        inspect.Parameter(
            declared.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[declared.type, judge_option(declared)],
            default=declared.default,
        )
        for declared in offered
    ]

    def decorate(command: Command) -> Command:
        own = inspect.signature(command, eval_str=True)
        if name not in own.parameters:
            raise TypeError(f"{command.__name__} has no `{name}: {group.__name__}` parameter")
        if clash := sorted(set(own.parameters) & {declared.name for declared in offered}):
            raise TypeError(f"{command.__name__}'s parameters {clash} are {kind} too")
        params: list[inspect.Parameter] = []
        for param in own.parameters.values():
            if param.name == name:
                params += options
            else:
                # Keyword-only, all of them: typer passes every value by name, and the
                # options may then sit between the command's own parameters.
                params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(command)
        def gathered(**values: Any) -> ExitCode:
            given = group(**{declared.name: values.pop(declared.name) for declared in offered})
            return command(**values, **{name: given})

        # What typer reads: the signature, and the annotations it resolves types from
        # (the command's own would name the group, which typer cannot make an option of).
        signature = own.replace(parameters=params)
        gathered.__signature__ = signature  # type: ignore[attr-defined]
        gathered.__annotations__ = {p.name: p.annotation for p in params} | {
            "return": signature.return_annotation
        }
        return gathered

    return decorate


def show_progress(flags: JudgeFlags, total: int) -> RunProgress:
    """Progress on stderr (none with --quiet): a resumed run's progress starts from the
    cases it holds.
    """
    from judgecli.cli.progress import RunProgress

    done = cases_done(flags.resume, retry_failed=flags.retry_failed) if flags.resume else 0
    return RunProgress(
        stderr, total=total, enabled=not flags.quiet, done=done, every=flags.progress_every
    )


def run_with_progress(ctx: typer.Context, flags: JudgeFlags, job: Job[Any, S]) -> Outcome[S]:
    """Run a job on the spine with progress on stderr (none with --quiet), its command line
    and the CI step summary recorded: what every judging command does once prepared.
    """
    from judgecli.cli.invocation import invocation
    from judgecli.running.job import run_job
    from judgecli.settings.config import step_summary_path

    with show_progress(flags, job.total) as progress:
        return run_job(
            job,
            argv=invocation(ctx),
            on_result=progress.case_done,
            step_summary=step_summary_path(),
            on_stopping=progress.stopping,
            on_note=progress.note,
        )


def run_and_report(ctx: typer.Context, flags: JudgeFlags, job: Job[Any, Any]) -> ExitCode:
    """Run a judging command's job on the spine, with progress on stderr, then print it as
    asked and say how to exit.
    """
    from rich.markup import escape

    from judgecli.cli.invocation import invocation
    from judgecli.grading.repeats import repeats_warning

    if job.config.spec is not None:
        from judgecli.deciding.line_kept import check_spec_line

        # Issue 35: a hand-written --spec is the spec of this very command line, or the run
        # is refused before any call.
        check_spec_line(job.config, invocation(ctx))
    if job.config.batch:
        return submit_batch(job, argv=invocation(ctx), quiet=flags.quiet)
    if not flags.quiet and (said := repeats_warning(job.config.repeats, job.config.temperature)):
        stderr.print(f"[yellow]warning: {escape(said)}[/]")
    if (workers := job.config.workers or 1) > 1 and not flags.quiet:
        from judgecli.running.share import describe_shares

        stderr.print(f"[dim]{describe_shares(job.config, workers)}[/]")
    outcome = run_with_progress(ctx, flags, job)
    return report_run(flags, outcome.summary, outcome.run_dir)


def submit_batch(job: Job[Any, Any], *, argv: list[str], quiet: bool) -> ExitCode:
    """--batch: submit the run's calls as provider batches, and say how to collect them."""
    from rich.markup import escape

    from judgecli.errors import ExitCode
    from judgecli.running.batching import submit_job

    submitted = submit_job(job, argv=argv)
    record, run_dir = submitted.record, escape(str(submitted.run_dir))
    if not quiet:
        for batch in record.batches:
            stderr.print(f"  {batch.id}: {batch.requests} requests to {escape(batch.model)}")
    stderr.print(
        f"submitted {record.requests} requests in {len(record.batches)} batch(es)"
        + (
            f"; {record.answered_from_cache} cases answered from the cache"
            * bool(record.answered_from_cache)
        )
        + f"\ncollect with: judge collect {run_dir}"
    )
    return ExitCode.OK


def report_run(flags: JudgeFlags, summary: RunSummary, run_dir: Path) -> ExitCode:
    """Print the finished run as asked (tables, --json) and say how to exit."""
    from judgecli.cli.render import report_outcome

    return report_outcome(summary, run_dir, quiet=flags.quiet, json_output=flags.json_output)


def cases_done(run_dir: Path, *, retry_failed: bool) -> int:
    """How many cases a run being resumed already holds (those it will not judge again:
    the failed ones too, unless --retry-failed). 0 when its results cannot be read: the
    resume itself then says why.
    """
    from judgecli.errors import InputError
    from judgecli.result import CaseStatus
    from judgecli.store import RESULTS, read_results

    path = run_dir / RESULTS
    if not path.is_file():
        return 0
    try:
        return len(
            {r.id for r in read_results(path) if not retry_failed or r.status is CaseStatus.OK}
        )
    except InputError:
        return 0

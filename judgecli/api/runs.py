"""A whole job run from Python: its run directory prepared (`Preparing`: a fresh one unless
`out` names one, what was given in memory kept in it), its job run on the spine as the
command line runs it (`running.job.run_job`) but on the API's one event loop, and the
finished run returned as a `Run`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from judgecli.api.cases import CaseLike, row_lines
from judgecli.commands.outcome import exit_code
from judgecli.commands.setup import FoundRubric
from judgecli.errors import DatasetError, ExitCode
from judgecli.result import CaseResult, natural_key
from judgecli.settings.flags import JudgeFlags

if TYPE_CHECKING:
    from judgecli.rubric import Rubric
    from judgecli.running.job import Job
    from judgecli.summary.arena import ArenaSummary
    from judgecli.summary.probe import ProbeSummary
    from judgecli.summary.qualify import QualifySummary
    from judgecli.summary.run import RunSummary

S = TypeVar("S", bound="RunSummary | ArenaSummary | ProbeSummary | QualifySummary")
Dataset = str | Path | Iterable[CaseLike]
"""A dataset as the API takes it: a path (JSONL, CSV, Parquet, `hf://owner/name[:split]`),
or rows (dicts or Cases), which the run keeps as RUN_DIR/inputs/NAME.jsonl."""


@dataclass(frozen=True)
class Run(Generic[S]):
    """A finished run: its summary (summary.json, typed), where it is, and how it ended.

    A run that finished incomplete (more cases failed than `max_failures` allows) is a Run
    too, with `summary.incomplete` saying why and `exit_code` 3; a run that could not
    start, or that stopped (an unusable judge, the budget, an interrupt), raises instead.
    """

    summary: S
    """summary.json as its command's model: its keys are attributes (`summary.pass_rate`,
    `summary.win_rate_ci`, `summary.gate`); docs/results.md lists them."""
    run_dir: Path
    """The run directory: results.jsonl, summary.json, report.md, report.html, run.json."""

    @property
    def exit_code(self) -> ExitCode:
        """What the command line would exit with: 3 when the run is incomplete or its gate
        cannot decide, 1 when the gate failed on judged evidence, else 0.
        """
        return exit_code(self.summary)

    @property
    def passed(self) -> bool:
        """Whether the run is complete and its gate (if any) passed: exit code 0."""
        return self.exit_code is ExitCode.OK

    @property
    def warnings(self) -> list[str]:
        """What the run warned of (the command line prints them as `warning:` lines)."""
        return list(self.summary.warnings)

    @cached_property
    def results(self) -> list[CaseResult]:
        """Every case's result (results.jsonl's lines), in id order."""
        from judgecli.store import RESULTS, read_results

        path = self.run_dir / RESULTS
        found = {r.id: r for r in read_results(path)} if path.exists() else {}
        return [found[key] for key in sorted(found, key=natural_key)]


@dataclass
class Preparing:
    """A job's run directory while the job is prepared and run: a fresh one made unless
    `out` or `resume` names one, and what the call gave in memory (rows, a Rubric) kept in
    it. When the job fails before its run is opened (bad input: exit 2's kind), what this
    wrote goes, and so does the directory if it made it: nothing is left behind.
    """

    command: str
    given: str | Path | Rubric | None
    """The rubric as the caller named it (None: calibrating a finished run's verdicts
    without one)."""
    flags: JudgeFlags
    found: FoundRubric | None = None
    made: Path | None = None
    """The run directory, when this call made it (a fresh one, or `out` not there yet)."""
    made_from: Path | None = None
    """The first folder this call made on the way to `made` (nothing above it is removed)."""
    kept: list[Path] = field(default_factory=list)

    def __enter__(self) -> Self:
        from judgecli.commands.setup import find_rubric_of
        from judgecli.store.inputs import fresh_run_dir

        self.found = None if self.given is None else find_rubric_of(self.given)
        if self.flags.out is None and self.flags.resume is None:
            name = self.found.rubric.name if self.found else "results"
            self.made = fresh_run_dir(self.command, name)
            self.flags = replace(self.flags, out=self.made)
        elif not self.run_dir.exists():
            self.made = self.run_dir  # made by what is kept in it, or by the run
            missing = (p for p in reversed(self.run_dir.parents) if not p.exists())
            self.made_from = next(missing, self.run_dir)
        try:
            if self.found is not None and self.found.path is None:
                kept = self.kept_rubric(self.found.rubric)
                self.found = FoundRubric(self.found.rubric, kept)
        except BaseException as error:
            self.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    @property
    def rubric_word(self) -> str | Path | None:
        """The rubric as the run's command line names it: as the caller did, or the file a
        Rubric given as an object was kept in.
        """
        if isinstance(self.given, str | Path):
            return self.given
        return self.found.path if self.found else None

    @property
    def rubric(self) -> FoundRubric:
        """The run's rubric (a job that judges has one)."""
        assert self.found is not None
        return self.found

    @property
    def run_dir(self) -> Path:
        """The run directory the job will write."""
        out = self.flags.resume or self.flags.out
        assert out is not None
        return out

    def dataset(self, given: Dataset, name: str) -> Path | str:
        """A dataset as the job reads it: a path as given, rows kept as NAME.jsonl."""
        from judgecli.store.inputs import keep_rows

        if isinstance(given, str | Path):
            return given
        if isinstance(given, bytes | dict) or not isinstance(given, Iterable):
            raise TypeError(
                f"a dataset is a path or an iterable of dicts (rows), not {type(given).__name__}"
            )
        rows = row_lines(given, self.field_map())
        path = keep_rows(self.run_dir, name, rows, reuse=self.reuses)
        self.kept.append(path)
        return path

    def kept_rubric(self, rubric: Rubric) -> Path:
        """A Rubric given as an object, kept as inputs/rubric.yaml (what the run's command
        line names: a resume reads the same rubric, its content hash the same).
        """
        import yaml

        from judgecli.store.inputs import keep_text

        data = rubric.model_dump(mode="json")
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        path = keep_text(self.run_dir, "rubric.yaml", text, reuse=self.reuses)
        self.kept.append(path)
        return path

    @property
    def reuses(self) -> bool:
        """Whether the job continues (resume) or replaces (force) a run already there."""
        return self.flags.resume is not None or self.flags.force

    def field_map(self) -> dict[str, str]:
        """The `field` setting as {case field: key}, to write Case rows under those keys."""
        from judgecli.inputs.dataset import parse_field_map

        return parse_field_map(self.flags.field or [])

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """After an error that left no run in the directory (bad input found while
        preparing, or at the run's first call: the store then discards the run's files),
        remove what preparing wrote. A run that was opened keeps its inputs: it is resumed.
        """
        from judgecli.store import RUN_INFO
        from judgecli.store.inputs import drop_kept
        from judgecli.store.lock import release_run_dir

        out = self.flags.resume or self.flags.out
        if error is None or out is None or (out / RUN_INFO).exists():
            return
        if isinstance(error, DatasetError) and error.path in self.kept:
            said_of_rows(error)
        drop_kept(out, self.kept)
        release_run_dir(out)
        if self.made is not None:
            with contextlib.suppress(OSError):
                self.made.rmdir()
                top = self.made_from or self.made
                for parent in self.made.parents:  # the folders made on the way to it
                    if not parent.is_relative_to(top):
                        break
                    parent.rmdir()


def said_of_rows(error: DatasetError) -> None:
    """A problem found in rows given in memory, said of the rows (`dataset row 3: ...`):
    the file the run kept them in is gone with the run.
    """
    where = f"{error.path}:{error.line}" if error.line is not None else str(error.path)
    problem = error.message.removeprefix(f"{where}: ")
    row = f" row {error.line}" if error.line is not None else ""
    error.message = f"{error.path.stem}{row}: {problem}"
    error.args = (error.message,)


def run_prepared(
    job: Job[Any, S], *, argv: list[str], on_result: Callable[[CaseResult], None] | None
) -> Run[S]:
    """Run a prepared job on the spine, as the command line does, judging on the API's
    one event loop (`loops.ENGINE`; `on_result` is called there), and release its run
    directory after.
    """
    from judgecli.api.loops import ENGINE
    from judgecli.running.fan_out import SHARED_LOOP
    from judgecli.running.job import run_job
    from judgecli.store.lock import release_run_dir

    if ENGINE.on_loop():
        raise RuntimeError(
            "a judgecli job started from code running on judgecli's own event loop (an "
            "on_result callback) would wait for itself"
        )
    if job.config.spec is not None:
        from judgecli.deciding.line_kept import check_spec_line

        check_spec_line(job.config, argv)  # issue 35: the run is its spec's, or refused
    token = SHARED_LOOP.set(ENGINE.shared())
    try:
        outcome = run_job(job, argv=argv, on_result=on_result or ignore)
    finally:
        SHARED_LOOP.reset(token)
        release_run_dir(job.config.out)
    return Run(summary=outcome.summary, run_dir=outcome.run_dir)


def ignore(result: CaseResult) -> None:
    """No progress to show."""

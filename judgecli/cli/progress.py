"""The progress bar on stderr: done/total, rate, ETA, failures, tokens and cost."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from judgecli.result import CaseResult, CaseStatus


class RunProgress:
    """A context manager that draws progress from finished case results."""

    def __init__(self, console: Console, *, total: int, enabled: bool) -> None:
        # Off with --quiet and whenever stderr is not a terminal (CI logs stay clean).
        self._progress = Progress(
            TextColumn("[bold]judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TimeElapsedColumn(),
            TimeRemainingColumn(compact=True),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("{task.fields[tokens]:,} tok"),
            TextColumn("${task.fields[cost]:.4f}"),
            console=console,
            disable=not (enabled and console.is_terminal),
            transient=False,
        )
        self._task = self._progress.add_task(
            "judging", total=total, failed=0, tokens=0, cost=0.0, rate=0.0
        )
        self._failed = 0
        self._tokens = 0
        self._cost = 0.0

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def case_done(self, result: CaseResult) -> None:
        """Advance by one finished case."""
        self._failed += result.status is CaseStatus.FAILED
        for j in result.judgements:
            self._tokens += j.prompt_tokens + j.completion_tokens
            self._cost += j.cost_usd
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        rate = (task.completed + 1) / elapsed if elapsed > 0 else 0.0
        self._progress.update(
            self._task, advance=1, failed=self._failed, tokens=self._tokens, cost=self._cost,
            rate=rate,
        )  # fmt: skip

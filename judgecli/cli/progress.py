"""Progress on stderr: a live bar on a terminal, a plain line every few seconds in a log.

A CI log is not a terminal, and a bar there would be silent (rich draws nothing) until the
end, while some CI systems kill a job after ten minutes without output. So when stderr is
not interactive, a line such as `judging: 120/360 (33%), 2.4/s, ETA 1m40s, 0 failed,
$0.0123` is printed every `every` seconds, and one more at the end. A resumed run starts
from the cases it already holds, and its rate and ETA count only this session's cases.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.markup import escape
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

Clock = Callable[[], float]


@dataclass
class Tally:
    """What the run has done so far."""

    total: int
    before: int = 0
    """Cases a resumed run already held when this session started."""
    done: int = 0
    """Cases finished in this session."""
    failed: int = 0
    tokens: int = 0
    cost: float = 0.0

    def add(self, result: CaseResult) -> None:
        """Count one finished case."""
        self.done += 1
        self.failed += result.status is CaseStatus.FAILED
        for j in result.judgements:
            self.tokens += j.prompt_tokens + j.completion_tokens
            self.cost += j.cost_usd


def duration(seconds: float) -> str:
    """45s, 1m40s, 2h03m."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def per_second(rate: float) -> str:
    """A rate as a log reads it: two significant digits below 100 (0.029, 2.4, 37), whole
    numbers above (a cached re-run does thousands a second: 2,140, not 2.1e+03).
    """
    # 99.5 and up would round to 100, which .2g writes as 1e+02.
    return f"{rate:.2g}" if rate < 99.5 else f"{rate:,.0f}"


def progress_line(tally: Tally, elapsed: float, *, final: bool, stopped: bool = False) -> str:
    """One plain progress line (final: how long it took instead of the ETA; stopped: the
    run ended early, by an error or an interrupt).
    """
    count = tally.before + tally.done
    share = count / tally.total if tally.total else 1.0
    rate = tally.done / elapsed if elapsed > 0 else 0.0
    if final:
        timing = f"{'stopped after' if stopped else 'in'} {duration(elapsed)}"
    elif rate > 0:
        timing = f"ETA {duration((tally.total - count) / rate)}"
    else:
        timing = "ETA unknown"
    return (
        f"judging: {count}/{tally.total} ({share:.0%}), {per_second(rate)}/s, {timing}, "
        f"{tally.failed} failed, ${tally.cost:.4f}"
    )


class ProgressLines:
    """Plain progress lines for a log: one when a case finishes at least `every` seconds
    after the last line (and, with `heartbeat`, from a timer thread when no case finishes
    for that long: a slow judge must not look like a hung job), and one at the end.
    """

    def __init__(
        self, console: Console, tally: Tally, *, clock: Clock, every: float, heartbeat: bool
    ) -> None:
        self._console = console
        self._tally = tally
        self._clock = clock
        self._every = every
        self._start = self._last = clock()
        self._printed = False
        # case_done runs on the event loop's thread, tick on the timer's.
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer = threading.Thread(target=self._beat, daemon=True) if heartbeat else None

    def start(self) -> None:
        """Start the timer thread (if any)."""
        if self._timer is not None:
            self._timer.start()

    def tick(self) -> None:
        """Print a line if the last one is `every` seconds old."""
        with self._lock:
            now = self._clock()
            if now - self._last >= self._every:
                self._last = now
                self._printed = True
                self._print(progress_line(self._tally, now - self._start, final=False))

    def finish(self, *, stopped: bool) -> None:
        """Stop the timer and print the last line — unless nothing happened to report (a
        usage error found before the first case: its `error:` line is all a log needs).
        """
        self._stop.set()
        if self._timer is not None and self._timer.is_alive():
            self._timer.join()
        if not (self._printed or self._tally.done):
            return
        with self._lock:
            elapsed = self._clock() - self._start
            self._print(progress_line(self._tally, elapsed, final=True, stopped=stopped))

    def say(self, line: str) -> None:
        """Print a line of its own between the progress lines."""
        with self._lock:
            self._print(line)

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            self.tick()

    def _print(self, line: str) -> None:
        self._console.print(escape(line), highlight=False, soft_wrap=True)


class RunProgress:
    """A context manager that shows progress from finished case results: a live bar when
    stderr is interactive, plain lines when it is not, nothing when not `enabled` (--quiet).
    """

    def __init__(
        self,
        console: Console,
        *,
        total: int,
        enabled: bool,
        done: int = 0,
        every: float = 10.0,
        clock: Clock = time.monotonic,
        heartbeat: bool = True,
    ) -> None:
        self._tally = Tally(total=total, before=min(done, total))
        self._bar: Progress | None = None
        self._lines: ProgressLines | None = None
        if enabled and console.is_interactive:
            self._bar = bar(console)
            self._bar.add_task(
                "judging",
                total=total,
                completed=self._tally.before,
                failed=0,
                tokens=0,
                cost=0.0,
                rate=0.0,
            )
        elif enabled:
            self._lines = ProgressLines(
                console, self._tally, clock=clock, every=every, heartbeat=heartbeat
            )

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
        if self._lines is not None:
            self._lines.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self._lines is not None:
            self._lines.finish(stopped=exc_type is not None)

    def note(self, message: str) -> None:
        """Say how the run goes about its work (the processes it forked)."""
        self._say(message, "dim")

    def stopping(self, message: str) -> None:
        """Say what a run stopped by a signal still waits for (the calls in flight)."""
        self._say(message, "yellow")

    def _say(self, message: str, style: str) -> None:
        """A line of its own, above the bar (in `style`) or between the progress lines."""
        if self._bar is not None:
            self._bar.console.print(f"[{style}]{escape(message)}[/]", highlight=False)
        if self._lines is not None:
            self._lines.say(message)

    def case_done(self, result: CaseResult) -> None:
        """Advance by one finished case."""
        tally = self._tally
        tally.add(result)
        if self._lines is not None:
            self._lines.tick()
        if self._bar is not None:
            task = self._bar.tasks[0]
            elapsed = task.elapsed or 0.0
            self._bar.update(
                task.id,
                advance=1,
                failed=tally.failed,
                tokens=tally.tokens,
                cost=tally.cost,
                rate=tally.done / elapsed if elapsed > 0 else 0.0,
            )


def bar(console: Console) -> Progress:
    """The live bar: done/total, %, rate, elapsed, ETA, failures, tokens and cost."""
    return Progress(
        TextColumn("[bold]judging"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]:.1f}/s"),
        TimeElapsedColumn(),
        # rich's ETA uses the speed of this session's advances, so a resumed run's ETA is
        # the time its remaining cases take, not skewed by the cases it started with.
        TimeRemainingColumn(compact=True),
        TextColumn("[red]{task.fields[failed]} failed"),
        TextColumn("{task.fields[tokens]:,} tok"),
        TextColumn("${task.fields[cost]:.4f}"),
        console=console,
        transient=False,
    )

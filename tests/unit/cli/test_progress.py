"""Progress on stderr: plain lines in a log (every N seconds, by an injected clock), a bar on
a terminal, nothing with --quiet; a resumed run starts from the cases it holds."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from judgecli.cli.progress import RunProgress, Tally, duration, per_second, progress_line
from judgecli.result import CaseResult, CaseStatus, Judgement


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def log_console() -> tuple[Console, io.StringIO]:
    """A console like stderr in CI: not a terminal."""
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=False, width=200), buffer


def result(*, failed: bool = False, cost: float = 0.001) -> CaseResult:
    return CaseResult(
        id="x",
        status=CaseStatus.FAILED if failed else CaseStatus.OK,
        rubric_hash="h",
        judgements=[Judgement(model="m", prompt_tokens=10, completion_tokens=5, cost_usd=cost)],
    )


def lines_of(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


# Regression (review 2026-11-23, finding 11): with stderr not a terminal, a run was silent
# until its end.
def test_a_log_gets_a_line_every_interval_and_one_at_the_end():
    clock = FakeClock()
    console, buffer = log_console()
    with RunProgress(
        console, total=10, enabled=True, every=10, clock=clock, heartbeat=False
    ) as progress:
        for _ in range(4):  # 4 cases in 8 s: no line yet
            clock.now += 2
            progress.case_done(result())
        assert lines_of(buffer) == []
        clock.now += 2  # 10 s: the 5th case is due for a line
        progress.case_done(result(failed=True))
        clock.now += 2
        progress.case_done(result())  # 2 s after the line: none
        clock.now += 8
    assert lines_of(buffer) == [
        "judging: 5/10 (50%), 0.5/s, ETA 10s, 1 failed, $0.0050",
        "judging: 6/10 (60%), 0.3/s, in 20s, 1 failed, $0.0060",
    ]


def test_a_heartbeat_tick_prints_when_no_case_finishes():
    clock = FakeClock()
    console, buffer = log_console()
    progress = RunProgress(console, total=4, enabled=True, every=10, clock=clock, heartbeat=False)
    with progress:
        clock.now += 4
        progress.case_done(result())
        clock.now += 30  # a slow judge: nothing finishes, the timer still speaks
        progress._lines.tick()  # what the timer thread calls
    assert lines_of(buffer)[0] == "judging: 1/4 (25%), 0.029/s, ETA 1m42s, 0 failed, $0.0010"


# Regression (review 2026-11-23, finding 5): a resumed run with 104 of 360 done showed
# 8/360, then 142/360, and its ETA counted the cases it started with.
def test_a_resumed_run_counts_from_the_cases_it_holds_and_its_eta_from_what_is_left():
    clock = FakeClock()
    console, buffer = log_console()
    with RunProgress(
        console, total=360, enabled=True, done=104, every=10, clock=clock, heartbeat=False
    ) as progress:
        for _ in range(8):
            clock.now += 2.5  # 8 cases in 20 s: 0.4/s, 248 left
            progress.case_done(result(cost=0))
    assert lines_of(buffer) == [
        "judging: 108/360 (30%), 0.4/s, ETA 10m30s, 0 failed, $0.0000",
        "judging: 112/360 (31%), 0.4/s, ETA 10m20s, 0 failed, $0.0000",
        "judging: 112/360 (31%), 0.4/s, in 20s, 0 failed, $0.0000",
    ]


def test_quiet_prints_nothing():
    clock = FakeClock()
    console, buffer = log_console()
    with RunProgress(console, total=3, enabled=False, every=0.001, clock=clock) as progress:
        clock.now += 5
        progress.case_done(result())
    assert buffer.getvalue() == ""


def test_a_terminal_gets_a_bar_that_starts_at_the_cases_already_done():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, force_interactive=True, width=200)
    with RunProgress(console, total=360, enabled=True, done=104) as progress:
        progress.case_done(result())
    shown = buffer.getvalue()
    assert "105/360" in shown
    assert "judging:" not in shown  # no plain lines on a terminal


def test_the_heartbeat_thread_prints_without_any_case_finishing():
    # Real time, but no bound on it: the test waits for the first line however slow the
    # machine is, and only checks that one came.
    import threading

    buffer = io.StringIO()
    seen = threading.Event()

    class Watched(io.StringIO):
        def write(self, text: str) -> int:
            seen.set()
            return buffer.write(text)

    console = Console(file=Watched(), force_terminal=False, width=200)
    with RunProgress(console, total=5, enabled=True, every=0.01):
        assert seen.wait(timeout=60)
    assert lines_of(buffer)[0].startswith("judging: 0/5 (0%), 0/s, ETA unknown")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0s"), (59.4, "59s"), (100, "1m40s"), (3599, "59m59s"), (7380, "2h03m")],
)
def test_duration(seconds, shown):
    assert duration(seconds) == shown


def test_a_run_with_no_case_done_yet_has_no_eta():
    assert progress_line(Tally(total=3), 5.0, final=False) == (
        "judging: 0/3 (0%), 0/s, ETA unknown, 0 failed, $0.0000"
    )


def test_a_run_that_stops_early_says_so_in_its_last_line():
    clock = FakeClock()
    console, buffer = log_console()
    progress = RunProgress(console, total=10, enabled=True, every=10, clock=clock, heartbeat=False)
    progress.__enter__()
    clock.now += 3
    progress.case_done(result())
    progress.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert lines_of(buffer) == ["judging: 1/10 (10%), 0.33/s, stopped after 3s, 0 failed, $0.0010"]


# Found trying a wheel (2026-11-24): a cached re-run of 3 cases logged "1e+02/s".
@pytest.mark.parametrize(
    ("rate", "shown"),
    [
        (0.0, "0"),
        (0.029, "0.029"),
        (2.44, "2.4"),
        (37.4, "37"),
        (99.4, "99"),
        (99.7, "100"),
        (100.0, "100"),
        (123.4, "123"),
        (2140.6, "2,141"),
    ],
)
def test_per_second(rate, shown):
    assert per_second(rate) == shown


def test_a_fast_run_logs_its_rate_in_whole_numbers():
    line = progress_line(Tally(total=2000, done=2000), 0.5, final=True)
    assert line == "judging: 2000/2000 (100%), 4,000/s, in 0s, 0 failed, $0.0000"

"""--workers without a judge: each worker's share of the limits, the errors carried from a
worker to the parent, the parent's stops, and how the workers' ends are merged. The
`run_workers` tests fork real processes running stand-in shares (no LiteLLM, no server);
the workers wait on the parent's stop event, never on the clock.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgecli import errors
from judgecli.errors import (
    BudgetExceededError,
    ConfigError,
    DatasetError,
    ExitCode,
    GradeError,
    InputError,
    JudgeError,
    JudgeUnavailableError,
    RubricError,
    RunDirectoryError,
    RunIncompleteError,
    RunInterruptedError,
    RunInUseError,
    RunStorageError,
    TooManyFailuresError,
)
from judgecli.judge.formats import FormatMode
from judgecli.judge.halt import Halted
from judgecli.result import CaseResult, CaseStatus
from judgecli.running.fan_out import ResultSink
from judgecli.running.judging import ended_warnings, merged_formats
from judgecli.running.share import ShareEnd, Stop, describe_shares, worker_config
from judgecli.running.workers import Outbox, Parent, run_workers
from judgecli.settings.config import RunConfig
from judgecli.settings.judges import ModelSettings

WAIT_S = 60.0


def run_config(**settings) -> RunConfig:
    return RunConfig(
        command="score", models=[ModelSettings(name="openai/m")], out=Path("x"), **settings
    )


def result(case_id: str, ok: bool = True) -> CaseResult:
    status = CaseStatus.OK if ok else CaseStatus.FAILED
    error = None if ok else f"{case_id}: HTTP 500"
    return CaseResult(id=case_id, status=status, error=error, score=3.0, rubric_hash="h")


class ListSink:
    def __init__(self) -> None:
        self.results: list[CaseResult] = []

    def append_result(self, result: CaseResult) -> None:
        self.results.append(result)


# --- each worker's share ------------------------------------------------------------------


def test_one_worker_runs_under_the_whole_config():
    config = run_config(concurrency=16, rpm=600, tpm=90_000, max_cost=1.5)
    assert worker_config(config, 1) is config


def test_the_limits_are_split_evenly_among_the_workers():
    config = run_config(concurrency=16, rpm=600, tpm=90_000, max_cost=1.5, seed=7)
    share = worker_config(config, 4)
    assert (share.concurrency, share.rpm, share.tpm, share.max_cost) == (4, 150, 22_500, 0.375)
    # Nothing else changes.
    assert share.model_dump(exclude={"concurrency", "rpm", "tpm", "max_cost"}) == (
        config.model_dump(exclude={"concurrency", "rpm", "tpm", "max_cost"})
    )
    # Together the shares never pass the run's limits.
    assert share.concurrency * 4 <= config.concurrency
    assert share.rpm * 4 == config.rpm


@pytest.mark.parametrize(("concurrency", "count", "each"), [(1, 4, 1), (3, 4, 1), (5, 2, 2)])
def test_every_worker_keeps_at_least_one_call_in_flight(concurrency, count, each):
    assert worker_config(run_config(concurrency=concurrency), count).concurrency == each


def test_limits_not_set_stay_unset():
    share = worker_config(run_config(concurrency=8), 2)
    assert (share.rpm, share.tpm, share.max_cost) == (None, None, None)


def test_the_shares_are_described_once():
    config = run_config(concurrency=16, rpm=600, tpm=1000, max_cost=1.5)
    assert describe_shares(config, 2) == (
        "--workers 2: each process judges its share of the cases with --concurrency 8, "
        "--rpm 300, --tpm 500, --max-cost 0.75"
    )


def test_the_shares_leave_out_the_limits_not_set():
    assert describe_shares(run_config(concurrency=3), 4) == (
        "--workers 4: each process judges its share of the cases with --concurrency 1"
    )
    assert describe_shares(run_config(concurrency=16, rpm=600), 2).endswith(
        "with --concurrency 8, --rpm 300"
    )


# --- errors carried from a worker ---------------------------------------------------------

JUDGE_ERRORS = [
    InputError("bad input", hint="fix it"),
    RubricError("bad rubric"),
    ConfigError("bad flag", hint="drop it"),
    DatasetError("cases.jsonl", 7, "not JSON", hint="look at line 7"),
    DatasetError("cases.jsonl", None, "empty"),
    RunIncompleteError("stopped", hint="judge resume run"),
    RunInterruptedError("interrupted"),
    TooManyFailuresError("too many"),
    BudgetExceededError("over budget", hint="raise --max-cost"),
    JudgeUnavailableError("the judge cannot be used", hint="check the key"),
    RunDirectoryError("run: read-only", hint="choose another --out"),
    RunInUseError("run is in use", hint="wait for it"),
    RunStorageError("no space left", hint="free space"),
    GradeError("no verdict on case 'q'", case_id="q", reasons=(), raw=()),
]


@pytest.mark.parametrize("error", JUDGE_ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_of_ours_crosses_to_the_parent_as_itself(error):
    stop = Stop.of(error)
    carried = pickle.loads(pickle.dumps(ShareEnd(stop=stop)))  # as the pipe sends it
    again = carried.stop.error()
    assert type(again) is type(error)
    assert (again.message, again.hint, str(again)) == (error.message, error.hint, str(error))
    assert again.exit_code == error.exit_code
    assert carried.stop.drains == (isinstance(error, RunIncompleteError) and error.drains)


def test_a_halted_worker_crosses_to_the_parent_as_an_interrupted_run():
    # Issue 29: a worker stopped by a signal ends with judge.halt.Halted, which is no name
    # in judgecli.errors; it must not come back as a crash ("a bug in judge").
    again = Stop.of(Halted("stopped by SIGTERM: finished cases are saved")).error()
    assert type(again) is RunInterruptedError
    assert again.message == "stopped by SIGTERM: finished cases are saved"


def test_the_path_of_a_dataset_error_stays_in_its_message():
    again = Stop.of(DatasetError(Path("data/cases.jsonl"), 12, "no id")).error()
    assert isinstance(again, DatasetError)
    assert again.exit_code is ExitCode.BAD_INPUT
    assert again.message == "data/cases.jsonl:12: no id"


def test_only_the_stops_that_finish_their_calls_drain():
    assert Stop.of(TooManyFailuresError("x")).drains
    assert Stop.of(BudgetExceededError("x")).drains
    assert not Stop.of(RunInterruptedError("x")).drains
    assert not Stop.of(JudgeUnavailableError("x")).drains
    assert not Stop.of(ConfigError("x")).drains


def crash() -> BaseException:
    try:
        {}["missing"]  # noqa: B018 - a bug, raised on purpose
    except KeyError as error:
        return error
    raise AssertionError("unreachable")


def test_a_crash_keeps_its_traceback_and_is_no_error_of_ours():
    stop = pickle.loads(pickle.dumps(Stop.of(crash())))
    assert stop.kind == "crash"
    assert stop.message.startswith("a worker crashed:\nTraceback (most recent call last):")
    assert "in crash" in stop.message
    assert stop.message.endswith("KeyError: 'missing'")
    again = stop.error()
    assert type(again) is RuntimeError
    assert not isinstance(again, JudgeError)
    assert str(again) == stop.message
    assert not stop.drains


@pytest.mark.parametrize("kind", ["crash", "KeyError", "Path", "ExitCode", "no_such_name"])
def test_a_kind_that_is_no_judge_error_comes_back_as_a_crash(kind):
    assert type(Stop(kind, "boom").error()) is RuntimeError


def test_every_judge_error_class_can_be_carried():
    classes = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, JudgeError)
    ]
    carried = {type(error) for error in JUDGE_ERRORS}
    assert set(classes) - {JudgeError} <= carried


# --- the parent ---------------------------------------------------------------------------


def parent(failures_allowed: int | None = None, done: Callable[[], bool] = lambda: False):
    seen: list[CaseResult] = []
    return (
        Parent(
            sink=ListSink(),
            on_result=seen.append,
            failures_allowed=failures_allowed,
            failed=0,
            done=done,
        ),
        seen,
    )


def sent(case: CaseResult) -> tuple[str, str]:
    return ("result", case.model_dump_json(exclude_none=True))


def test_the_parent_writes_and_reports_every_result_once():
    keeper, seen = parent()
    stop = threading.Event()
    cases = [result("a"), result("b", ok=False)]
    for case in cases:
        keeper.take(sent(case), stop)
    assert keeper.sink.results == cases
    assert seen == cases
    assert keeper.failed == 1
    assert not stop.is_set()


def test_one_failure_past_the_limit_stops_every_worker():
    keeper, _ = parent(failures_allowed=1)
    stop = threading.Event()
    keeper.take(sent(result("a", ok=False)), stop)
    assert not stop.is_set()
    keeper.take(sent(result("b", ok=False)), stop)
    assert stop.is_set()
    [error] = keeper.stops
    assert isinstance(error, TooManyFailuresError)
    assert "2 cases failed, more than --max-failures allows (1)" in error.message
    assert "b: HTTP 500" in error.message
    keeper.take(sent(result("c", ok=False)), stop)
    assert len(keeper.stops) == 1  # said once
    assert len(keeper.sink.results) == 3  # cases still in flight are written


def test_a_gate_that_decided_stops_every_worker():
    decided = [False]
    keeper, _ = parent(done=lambda: decided[0])
    stop = threading.Event()
    keeper.take(sent(result("a")), stop)
    assert not stop.is_set()
    decided[0] = True
    keeper.take(sent(result("b")), stop)
    assert stop.is_set()
    assert keeper.stops == []  # a decision is no error


def test_a_worker_ending_with_an_error_stops_the_others():
    keeper, _ = parent()
    stop = threading.Event()
    keeper.take(("end", 0, ShareEnd(warnings=["w"])), stop)
    assert not stop.is_set()
    keeper.take(("end", 1, ShareEnd(stop=Stop.of(BudgetExceededError("cap")))), stop)
    assert stop.is_set()
    assert [type(e) for e in keeper.stops] == [BudgetExceededError]
    assert set(keeper.ends) == {0, 1}


def test_a_worker_result_and_its_end_cross_the_pipe_unchanged_and_in_order():
    inbox, outbox = multiprocessing.Pipe(duplex=False)
    case = result("x", ok=False).model_copy(update={"criteria": {"clarity": 2.0}})
    sender = Outbox(outbox)
    sender.append_result(case)
    sender.close(1, ShareEnd(warnings=["w"]))
    keeper, seen = parent()
    keeper.take(inbox.recv(), threading.Event())
    keeper.take(inbox.recv(), threading.Event())
    assert seen == [case]
    assert keeper.ends == {1: ShareEnd(warnings=["w"])}
    with pytest.raises(EOFError):  # the worker's end closed the pipe
        inbox.recv()


def test_an_outbox_whose_parent_is_gone_still_closes():
    inbox, outbox = multiprocessing.Pipe(duplex=False)
    inbox.close()
    sender = Outbox(outbox)
    sender.append_result(result("lost"))
    sender.close(0, ShareEnd())  # returns: nobody is left to tell


# --- run_workers, with forked stand-in shares ---------------------------------------------


def wait_for(should_stop: Callable[[], bool]) -> None:
    """Block until the parent says stop (a worker that never hears it fails the test)."""
    deadline = time.monotonic() + WAIT_S
    while not should_stop():
        if time.monotonic() > deadline:
            raise AssertionError("the parent's stop never came")
        time.sleep(0.005)


def run(share, **options):
    sink = ListSink()
    seen: list[CaseResult] = []
    ends = run_workers(2, share, sink=sink, on_result=seen.append, **options)
    assert seen == sink.results
    return ends, sink.results


def test_every_worker_result_is_written_and_every_end_returned_in_order():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        for k in range(25):
            sink.append_result(result(f"{index}-{k}"))
        end.warnings.append(f"worker {index} stepped down")
        end.formats["openai/m"] = ["json_schema", "json_object"][index]
        end.unpriced.append("openai/m")

    ends, results = run(share)
    assert sorted(r.id for r in results) == sorted(f"{i}-{k}" for i in (0, 1) for k in range(25))
    assert [end.warnings for end in ends] == [["worker 0 stepped down"], ["worker 1 stepped down"]]
    assert merged_formats(ends) == {"openai/m": "json_object"}
    assert ended_warnings(ends) == [
        "worker 0 stepped down",
        "worker 1 stepped down",
        "openai/m: no price known, cost counts as 0 (set --price IN,OUT per 1M tokens)",
    ]


def test_the_failure_limit_stops_every_worker():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 0:
            sink.append_result(result("bad", ok=False))
        wait_for(should_stop)
        sink.append_result(result(f"in-flight-{index}"))

    with pytest.raises(TooManyFailuresError, match="more than --max-failures allows"):
        run(share, failures_allowed=0)


def test_failures_of_an_earlier_session_count():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 1:
            sink.append_result(result("bad", ok=False))
        wait_for(should_stop)

    with pytest.raises(TooManyFailuresError, match="3 cases failed"):
        run(share, failures_allowed=2, failed_before=2)


def test_a_decided_gate_stops_every_worker_without_an_error():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        sink.append_result(result(f"first-{index}"))
        wait_for(should_stop)

    decided: list[CaseResult] = []
    sink = ListSink()
    ends = run_workers(
        2, share, sink=sink, on_result=decided.append, done=lambda: len(decided) >= 2
    )
    assert sorted(r.id for r in sink.results) == ["first-0", "first-1"]
    assert len(ends) == 2


def test_a_worker_error_is_raised_as_itself_once_every_worker_ended():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 1:
            raise DatasetError("cases.jsonl", 3, "not JSON")
        sink.append_result(result("kept"))
        wait_for(should_stop)

    sink = ListSink()
    with pytest.raises(DatasetError, match=r"^cases.jsonl:3: not JSON$"):
        run_workers(2, share, sink=sink, on_result=lambda r: None)
    assert [r.id for r in sink.results] == ["kept"]


def test_a_crashed_worker_is_raised_with_its_traceback():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 0:
            raise ZeroDivisionError("a bug")
        wait_for(should_stop)

    with pytest.raises(RuntimeError, match=r"(?s)a worker crashed:.*ZeroDivisionError: a bug"):
        run(share)


def test_a_worker_that_dies_without_a_word_stops_the_run():
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 0:
            os._exit(7)  # killed, out of memory: no end is sent
        sink.append_result(result("kept"))
        wait_for(should_stop)

    sink = ListSink()
    with pytest.raises(RunIncompleteError, match=r"worker 0 of 2 died \(exit code 7\)") as info:
        run_workers(2, share, sink=sink, on_result=lambda r: None)
    assert info.value.hint == "continue with: judge resume RUN_DIR"
    assert [r.id for r in sink.results] == ["kept"]  # the other worker's, written


def test_a_worker_killed_in_the_middle_of_a_message_stops_the_run():
    # The start of a message that promises 1,000 bytes, 10 of them written, then SIGKILL:
    # the parent must not wait for the rest.
    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        if index == 0:
            assert isinstance(sink, Outbox)
            os.write(sink.connection.fileno(), struct.pack("!i", 1000) + b"x" * 10)
            os.kill(os.getpid(), signal.SIGKILL)
        sink.append_result(result("kept"))
        wait_for(should_stop)

    sink = ListSink()
    with pytest.raises(RunIncompleteError, match=r"worker 0 of 2 died \(exit code -9\)"):
        run_workers(2, share, sink=sink, on_result=lambda r: None)
    assert [r.id for r in sink.results] == ["kept"]


@pytest.mark.parametrize("sent_first", range(1, 241, 8))
def test_a_worker_killed_while_both_send_never_hangs_the_other_or_the_parent(sent_first):
    # Both workers send as fast as they can, and one is killed among its messages (in CI, a
    # worker killed while it held a shared queue's lock hung the run for good). The other
    # must still hear the stop and end, and the parent must see both ends.
    both_sending = multiprocessing.get_context("fork").Barrier(2)

    def share(index: int, sink: ResultSink, should_stop: Callable[[], bool], end: ShareEnd):
        both_sending.wait(timeout=WAIT_S)
        for k in range(sent_first if index == 0 else 1_000_000):
            if should_stop():
                return
            sink.append_result(result(f"{index}-{k}"))
        os.kill(os.getpid(), signal.SIGKILL)

    sink = ListSink()
    with pytest.raises(RunIncompleteError, match=r"worker 0 of 2 died \(exit code -9\)"):
        run_workers(2, share, sink=sink, on_result=lambda r: None)
    for index in (0, 1):  # whole and in order, maybe not all
        sent = [r.id for r in sink.results if r.id.startswith(f"{index}-")]
        assert sent == [f"{index}-{k}" for k in range(len(sent))]


# --- merging the workers' ends ------------------------------------------------------------


def test_the_lowest_format_step_any_worker_took_is_kept():
    ends = [
        ShareEnd(formats={"a": FormatMode.JSON_SCHEMA.value, "b": FormatMode.PROMPT.value}),
        ShareEnd(formats={"a": FormatMode.JSON_OBJECT.value}),
        ShareEnd(formats={"a": FormatMode.JSON_OBJECT_SCHEMA.value, "c": "json_schema"}),
        ShareEnd(),
    ]
    assert merged_formats(ends) == {"a": "json_object", "b": "prompt", "c": "json_schema"}
    assert merged_formats([]) == {}


def test_warnings_are_said_once_steps_before_prices():
    ends = [
        ShareEnd(warnings=["m: json_schema refused, now json_object"], unpriced=["m"]),
        ShareEnd(warnings=["m: json_schema refused, now json_object"], unpriced=["m", "n"]),
    ]
    assert ended_warnings(ends) == [
        "m: json_schema refused, now json_object",
        "m: no price known, cost counts as 0 (set --price IN,OUT per 1M tokens)",
        "n: no price known, cost counts as 0 (set --price IN,OUT per 1M tokens)",
    ]
    assert ended_warnings([ShareEnd()]) == []

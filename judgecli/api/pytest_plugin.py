"""The pytest plugin (entry point `pytest11: judge`; docs/pytest.md): the `llm_judge` fixture,
every verdict it gives one judged case of the session, and at the end the session's pass
rate, mean score and win rate with their intervals, overall and by test module, gated by
`--judge-min-pass-rate` (`--judge-min-mean`, `--judge-min-win-rate`) through the session's
exit status. pytest-xdist's workers send their cases to the controller, which pools them
before the gate.

pytest loads every pytest11 plugin installed, in every project, so this module imports
only pytest, the standard library and `pytest_session`; the Judge (`pytest_judge`), the numbers
(`pytest_gate`) and their text (`pytest_report`) are imported when a test first asks for
`llm_judge`, and at the end of a session that judged something.

Exit statuses keep judge's contract in pytest's numbers (`pytest_gate.PYTEST_EXIT`): 1 when
the gate failed on judged evidence, 3 (pytest's INTERNAL_ERROR; judge's "could not finish")
when a judged call could not be graded or the gate cannot decide, 4 (pytest's USAGE_ERROR;
judge's bad usage) when the judge could not be made.
"""

from __future__ import annotations

import argparse
from collections.abc import Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pytest

from judgecli.api.pytest_session import UNGRADED, GateAsked, Ledger

if TYPE_CHECKING:
    from _pytest.reports import TestReport

    from judgecli.api.pytest_gate import SessionOutcome
    from judgecli.api.pytest_judge import RecordingJudge

WORKER_OUTPUT = "judgecli"
"""The key of an xdist worker's `workeroutput` that carries its judged cases."""
GATE_ON = ("point", "lower-bound")
"""What `--judge-on` may compare: values of `judgecli.summary.gate_records.GateOn`."""
PACKAGE = Path(__file__).resolve().parents[1]
"""judgecli's own folder: frames in it are cut from a judge error's traceback."""
SESSION = pytest.StashKey[Ledger]()
OUTCOME: pytest.StashKey[SessionOutcome] = pytest.StashKey()
"""The session's numbers and its gate, once decided (on the controller)."""


def share(text: str) -> float:
    """A rate threshold: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is out of range: from 0 to 1 (0.8 is 80%)")
    return value


def number(text: str) -> float:
    """A mean-score threshold: a number on the rubric's scale."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    """The judge's options and ini keys (docs/pytest.md)."""
    group = parser.getgroup("judge", "LLM-judged tests (judgecli; docs/pytest.md)")
    group.addoption(
        "--judge-model",
        action="append",
        metavar="MODEL",
        help="llm_judge's LiteLLM model string (repeat for a panel); else JUDGE_MODEL, "
        "else the ini file's judge_model, else the rubric's judge: {model}.",
    )
    group.addoption(
        "--judge-api-base",
        metavar="URL",
        help="An OpenAI-compatible server's endpoint; else JUDGE_API_BASE, else judge_api_base.",
    )
    group.addoption(
        "--judge-rubric",
        metavar="NAME_OR_FILE",
        help="llm_judge's rubric: a library name or a YAML file; else judge_rubric.",
    )
    group.addoption(
        "--judge-min-pass-rate",
        type=share,
        metavar="P",
        help="Gate: the session's pass rate over every graded case must be at least P.",
    )
    group.addoption(
        "--judge-min-mean",
        type=number,
        metavar="X",
        help="Gate: the mean score over every graded case must be at least X (one rubric).",
    )
    group.addoption(
        "--judge-min-win-rate",
        type=share,
        metavar="P",
        help="Gate: NEW's win rate over every compared pair (ties half) must be at least P.",
    )
    group.addoption(
        "--judge-on",
        choices=GATE_ON,
        default="point",
        help="What the gate compares: the point estimate (default) or its 95%% interval's "
        "lower bound, so a lucky small sample cannot pass.",
    )
    group.addoption(
        "--judge-per-test",
        action="store_true",
        help="A failed verdict (not passed, or NEW lost) fails its own test too, not only "
        "the session's gate.",
    )
    parser.addini("judge_model", "llm_judge's model (a list for a panel)", type="args")
    parser.addini("judge_api_base", "llm_judge's endpoint (OpenAI-compatible server)")
    parser.addini("judge_rubric", "llm_judge's rubric: a library name, or a file beside the ini")


def pytest_configure(config: pytest.Config) -> None:
    """The session's ledger, with the gate it was asked for."""
    config.stash[SESSION] = Ledger(
        GateAsked(
            min_pass_rate=config.getoption("judge_min_pass_rate"),
            min_mean=config.getoption("judge_min_mean"),
            min_win_rate=config.getoption("judge_min_win_rate"),
            on=config.getoption("judge_on"),
            per_test=config.getoption("judge_per_test"),
        )
    )


@pytest.fixture(scope="session")
def llm_judge_settings() -> dict[str, Any]:
    """More settings of `llm_judge`, by the command line's flag names (`max_cost`,
    `temperature`, `concurrency`, `cache`, ...): override this fixture in conftest.py.
    """
    return {}


@pytest.fixture(scope="session")
def llm_judge(
    request: pytest.FixtureRequest, llm_judge_settings: dict[str, Any]
) -> Iterator[RecordingJudge]:
    """The session's Judge (`judgecli.Judge`): each of its verdicts is one judged case of
    the session, counted by its numbers and its gate. A test that asks for it with no
    model or rubric set errors, saying what to set.
    """
    from judgecli.api.pytest_judge import open_judge, told
    from judgecli.errors import JudgeError

    ledger = request.config.stash[SESSION]
    said: str | None = None
    try:
        judge = open_judge(request.config, ledger, llm_judge_settings)
    except (JudgeError, TypeError) as error:
        said = told(error)
    if said is not None:  # failed outside the `except`: no "during handling" chain shown
        ledger.unusable(said)
        pytest.fail(said, pytrace=False)
    with judge:
        yield judge


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Note the running test: a judged call belongs to it."""
    with item.config.stash[SESSION].running_test(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """`--judge-per-test`: a test whose verdicts failed fails, with the judge's reasons."""
    result = yield
    ledger = item.config.stash[SESSION]
    if ledger.gate.per_test:
        cases = ledger.of(item)
        failed = [case for case in cases if case.graded and case.failed]
        if failed:
            head = f"the judge failed {len(failed)} of this test's {len(cases)} judged cases:"
            if len(cases) == 1:
                head = "the judge failed this test's judged case:"
            pytest.fail("\n".join([head, *(f"  {c.complaint()}" for c in failed)]), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    """A test stopped by a judge that could not grade is marked, to be shown as an error
    (not a failure), its traceback ending at the test's own line.
    """
    ungraded = call.excinfo is not None and getattr(call.excinfo.value, UNGRADED, False)
    if call.excinfo is not None and ungraded:
        end_before_judgecli(call.excinfo, item.path)
    report = yield
    if ungraded:
        setattr(report, UNGRADED, True)
    return report


def end_before_judgecli(excinfo: pytest.ExceptionInfo[BaseException], test_file: Path) -> None:
    """End the error's traceback where judgecli's own frames start after the test's file:
    the test's line that called the judge is the last shown (pytest rebuilds a traceback
    from its frames' links, so the links are cut, not the list).
    """
    tb: TracebackType | None = excinfo.tb
    while tb is not None and Path(tb.tb_frame.f_code.co_filename) != test_file:
        tb = tb.tb_next
    while tb is not None and tb.tb_next is not None:
        if PACKAGE in Path(tb.tb_next.tb_frame.f_code.co_filename).parents:
            tb.tb_next = None
            excinfo.traceback = type(excinfo.traceback)(excinfo.tb)
            return
        tb = tb.tb_next


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, Any] | None:
    """A test stopped by a judge that could not grade is an ERROR, as pytest calls a test
    that could not run: no verdict, so neither passed nor failed.
    """
    if report.failed and getattr(report, UNGRADED, False):
        return "error", "E", ("ERROR", {"red": True})
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker sends its cases to the controller; the controller (or a session without
    xdist) decides the gate and sets the session's exit status.
    """
    config = session.config
    ledger = config.stash[SESSION]
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_OUTPUT] = ledger.export()
        return
    if not ledger.judged or any(
        getattr(config.option, name, False) for name in ("collectonly", "setuponly", "setupplan")
    ):
        return
    from judgecli.api.pytest_gate import decide, session_exit

    outcome = decide(ledger.cases, ledger.gate, unmade=ledger.unmade, lost=ledger.lost)
    config.stash[OUTCOME] = outcome
    session.exitstatus = session_exit(session.exitstatus, outcome)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object | None) -> None:
    """On xdist's controller: pool a worker's cases (or note a worker that never sent them)."""
    ledger = node.config.stash[SESSION]
    sent = (getattr(node, "workeroutput", None) or {}).get(WORKER_OUTPUT)
    if sent is None:
        ledger.lost.append(str(node.gateway.id))
    else:
        ledger.pool(sent)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The session's numbers, by module, and the gate's verdict."""
    outcome = config.stash.get(OUTCOME, None)
    if outcome is None:
        return
    from judgecli.api.pytest_report import summary_lines

    terminalreporter.section("judge")
    for line, colour in summary_lines(outcome):
        terminalreporter.write_line(line, **({colour: True} if colour else {}))

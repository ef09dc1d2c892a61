"""The plugin's section of pytest's terminal summary (issue 31): a table per rubric, every
case then each module, what has no interval and why, the gate, and why the session cannot
be trusted when it cannot."""

from __future__ import annotations

from judgecli.api.pytest_cases import CallKind, JudgedCase
from judgecli.api.pytest_gate import decide
from judgecli.api.pytest_report import summary_lines
from judgecli.api.pytest_session import GateAsked
from judgecli.result import Winner
from tests.unit.api.test_pytest_gate import SESSION, compared_case, graded_case


def text(outcome) -> list[str]:
    return [line for line, _ in summary_lines(outcome)]


def test_a_failed_gate_shows_the_tables_the_check_and_the_exit_status():
    outcome = decide(SESSION, GateAsked(min_pass_rate=0.8), unmade=[], lost=[])
    assert text(outcome) == [
        "graded with helpfulness (scale 1-4), judged by openai/sim",
        "             cases  pass rate          95% CI  mean        95% CI",
        "  all           10      70.0%  [39.7%, 89.2%]  3.30  [2.62, 3.98]",
        "  test_a.py      6      83.3%  [43.6%, 97.0%]  3.67  [2.81, 4.00]",
        "  test_b.py      4      50.0%  [15.0%, 85.0%]  2.75  [1.23, 4.00]",
        "gate FAILED on judged evidence: pass rate 70.0% < 80.0%",
        "exit 1: the judge's gate failed",
    ]
    assert dict(summary_lines(outcome))["exit 1: the judge's gate failed"] == "red"


def test_a_mean_without_an_interval_has_a_dash_and_a_note_saying_why():
    outcome = decide([graded_case("one", 4, "test_c.py")], GateAsked(), unmade=[], lost=[])
    lines = text(outcome)
    assert lines[2].split()[-2:] == ["4.00", "-"]
    assert "  the mean of all has no interval: one case: no spread to measure" in lines


def test_comparisons_show_wins_losses_ties_and_dropped_pairs():
    winners = [Winner.NEW, Winner.NEW, Winner.OLD, Winner.TIE, None]
    pairs = [compared_case(f"p{i}", w) for i, w in enumerate(winners)]
    lines = text(decide(pairs, GateAsked(min_win_rate=0.5), unmade=[], lost=[]))
    assert lines[0] == "compared with pairwise, judged by openai/sim"
    assert lines[1].split() == ["pairs", "win", "rate", "95%", "CI", "won", "lost", "tied"]
    assert lines[2].split()[:3] == ["all", "5", "62.5%"]
    assert lines[2].split()[-3:] == ["2", "1", "1"]
    assert "  all: 1 pairs dropped (the orders disagreed)" in lines
    assert lines[-1] == "gate passed: win rate 62.5% >= 50.0%"


def test_an_outage_lists_the_calls_it_cost_and_the_exit_status_says_incomplete():
    ungraded = [
        JudgedCase(
            test=f"test_o.py::test_{i}",
            module="test_o.py",
            kind=CallKind.GRADE,
            rubric="helpfulness",
            judge="openai/sim",
            case=str(i),
            error="JudgeUnavailableError: the judge openai/sim cannot be used",
        )
        for i in range(7)
    ]
    lines = text(decide(ungraded, GateAsked(min_pass_rate=0.5), unmade=[], lost=[]))
    assert lines[0] == "the judge could not grade 7 judged calls:"
    assert (
        lines[1]
        == "  test_o.py::test_0: JudgeUnavailableError: the judge openai/sim cannot be used"
    )
    assert lines[6] == "  ... and 2 more (the errors above)"
    assert lines[-1] == "exit 3: the session cannot be judged on this evidence"


def test_a_judge_that_could_not_be_made_is_shown_as_the_command_line_shows_errors():
    said = "error: llm_judge needs a judge model\nhint: pass --judge-model MODEL"
    lines = text(decide([], GateAsked(), unmade=[said], lost=[]))
    assert lines == [
        "error: llm_judge needs a judge model",
        "hint: pass --judge-model MODEL",
        "exit 4 (pytest's usage error): set up the judge, then run again",
    ]

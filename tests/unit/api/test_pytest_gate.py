"""The pytest plugin's session numbers, gate and exit status (issue 31), on judged cases made
by hand: the intervals against statsmodels / scipy values computed once, the gate's three
outcomes, and judge's exit codes in pytest's numbers."""

from __future__ import annotations

import pytest

from judgecli.api.pytest_cases import CallKind, JudgedCase
from judgecli.api.pytest_gate import ALL, Compared, Graded, decide, session_exit, tables
from judgecli.api.pytest_session import GateAsked
from judgecli.errors import ExitCode
from judgecli.result import Winner
from judgecli.stats.pairwise import win_rate_bootstrap_interval
from judgecli.summary.gate_records import GateOutcome

SCALE = (1.0, 4.0)


def graded_case(case: str, score: float, module: str = "test_a.py", rubric: str = "helpfulness"):
    return JudgedCase(
        test=f"{module}::test_{case}",
        module=module,
        kind=CallKind.GRADE,
        rubric=rubric,
        judge="openai/sim",
        case=case,
        score=score,
        scale=SCALE,
        passed=score >= 3,
    )


def compared_case(case: str, winner: Winner | None, module: str = "test_pairs.py"):
    return JudgedCase(
        test=f"{module}::test_{case}",
        module=module,
        kind=CallKind.COMPARE,
        rubric="pairwise",
        judge="openai/sim",
        case=case,
        winner=winner,
    )


# 7 of 10 pass; scores 4,4,4,4,4,2 in test_a.py and 2,2,4,3 in test_b.py.
SESSION = [
    *(graded_case(f"a{i}", s) for i, s in enumerate([4, 4, 4, 4, 4, 2])),
    *(graded_case(f"b{i}", s, "test_b.py") for i, s in enumerate([2, 2, 4, 3])),
]


def numbers_of(outcome, module=ALL):
    [table] = outcome.tables
    return dict(table.rows)[module]


def test_the_pass_rate_has_wilsons_interval_and_the_mean_students_clipped_to_the_scale():
    outcome = decide(SESSION, GateAsked(), unmade=[], lost=[])
    every = numbers_of(outcome)
    assert isinstance(every, Graded)
    assert (every.cases, every.passed, every.pass_rate) == (10, 7, 0.7)
    # statsmodels.stats.proportion.proportion_confint(7, 10, method="wilson")
    assert every.pass_rate_ci == pytest.approx((0.39677814746114537, 0.8922087325936989))
    # scipy.stats.t.interval(0.95, 9, loc=3.3, scale=sd/sqrt(10))
    assert every.mean == pytest.approx(3.3)
    assert every.mean_ci == pytest.approx((2.6213528511605384, 3.9786471488394612))
    first = numbers_of(outcome, "test_a.py")
    assert first.pass_rate_ci == pytest.approx((0.43649717781352965, 0.9699466302516933))
    # t's upper end, 4.5235, is past the scale's 4: a bound no case could have.
    assert first.mean_ci == pytest.approx((2.809806054787895, 4.0))


def test_rows_are_every_case_then_each_module_by_name_whatever_the_order_they_came_in():
    [table] = tables(list(reversed(SESSION)))
    assert [name for name, _ in table.rows] == [ALL, "test_a.py", "test_b.py"]
    assert (table.rubric, table.kind, table.judges) == (
        "helpfulness",
        CallKind.GRADE,
        ["openai/sim"],
    )


def test_each_rubric_has_its_table_and_comparisons_come_after_grades():
    cases = [compared_case("p1", Winner.NEW), *SESSION, graded_case("x", 1, rubric="other")]
    found = tables(cases)
    assert [(t.kind, t.rubric) for t in found] == [
        (CallKind.GRADE, "helpfulness"),
        (CallKind.GRADE, "other"),
        (CallKind.COMPARE, "pairwise"),
    ]


def test_a_mean_of_one_value_has_no_interval_and_says_why():
    outcome = decide([graded_case("only", 4)], GateAsked(), unmade=[], lost=[])
    only = numbers_of(outcome)
    assert (only.mean, only.mean_ci) == (4, (None, None))
    assert only.no_interval == "one case: no spread to measure"


def test_the_win_rate_counts_ties_half_with_the_pairwise_runs_interval():
    winners = [Winner.NEW] * 4 + [Winner.OLD] * 2 + [Winner.TIE] + [None]
    outcome = decide(
        [compared_case(f"p{i}", w) for i, w in enumerate(winners)], GateAsked(), unmade=[], lost=[]
    )
    pairs = numbers_of(outcome)
    assert isinstance(pairs, Compared)
    assert (pairs.pairs, pairs.wins, pairs.losses, pairs.ties, pairs.dropped) == (8, 4, 2, 1, 1)
    assert pairs.win_rate == pytest.approx(4.5 / 7)
    assert pairs.win_rate_ci == win_rate_bootstrap_interval([1, 1, 1, 1, 0, 0, 0.5], seed=0)


@pytest.mark.parametrize(
    ("asked", "gate", "code"),
    [
        pytest.param(
            GateAsked(min_pass_rate=0.7), GateOutcome.PASSED, ExitCode.OK, id="at-the-bar"
        ),
        pytest.param(
            GateAsked(min_pass_rate=0.71), GateOutcome.FAILED, ExitCode.GATE_FAILED, id="below"
        ),
        pytest.param(
            GateAsked(min_pass_rate=0.4, on="lower-bound"),
            GateOutcome.FAILED,
            ExitCode.GATE_FAILED,
            id="lower-bound-below",
        ),
        pytest.param(
            GateAsked(min_pass_rate=0.39, on="lower-bound"),
            GateOutcome.PASSED,
            ExitCode.OK,
            id="lower-bound-above",
        ),
        pytest.param(GateAsked(min_mean=3.3), GateOutcome.PASSED, ExitCode.OK, id="mean"),
        pytest.param(
            GateAsked(min_win_rate=0.5), GateOutcome.UNDECIDED, ExitCode.INCOMPLETE, id="no-pairs"
        ),
        pytest.param(
            GateAsked(min_pass_rate=0.9, min_win_rate=0.5),
            GateOutcome.FAILED,
            ExitCode.GATE_FAILED,
            id="a-failed-check-outweighs-an-undecided-one",
        ),
        pytest.param(GateAsked(), None, ExitCode.OK, id="no-gate"),
    ],
)
def test_the_gate_compares_as_judges_gate_does(asked, gate, code):
    outcome = decide(SESSION, asked, unmade=[], lost=[])
    assert (outcome.gate, outcome.exit_code) == (gate, code)


def test_lower_bound_on_a_mean_without_an_interval_cannot_decide_and_says_why():
    alike = [graded_case(f"c{i}", 4) for i in range(5)]
    outcome = decide(alike, GateAsked(min_mean=3.0, on="lower-bound"), unmade=[], lost=[])
    assert (outcome.gate, outcome.exit_code) == (GateOutcome.UNDECIDED, ExitCode.INCOMPLETE)
    [why] = outcome.undecided
    assert why.reason == (
        "the mean (4) has no 95% interval: no spread: every score is 4, so --judge-on "
        "lower-bound has no bound to compare"
    )
    assert "--judge-on point" in why.hint


def test_no_mean_is_gated_across_rubrics_of_different_scales():
    mixed = [*SESSION, graded_case("x", 4, rubric="other")]
    outcome = decide(mixed, GateAsked(min_mean=2.0), unmade=[], lost=[])
    assert outcome.gate is GateOutcome.UNDECIDED
    assert outcome.undecided[0].reason.startswith("no mean score: the session graded with")
    assert outcome.pooled is not None
    assert outcome.pooled.mean is None


def test_a_call_the_judge_could_not_grade_makes_the_session_incomplete_not_failed():
    ungraded = JudgedCase(
        test="test_c.py::test_c",
        module="test_c.py",
        kind=CallKind.GRADE,
        rubric="helpfulness",
        judge="openai/sim",
        case="c",
        error="JudgeUnavailableError: the judge openai/sim cannot be used",
    )
    outcome = decide([*SESSION, ungraded], GateAsked(min_pass_rate=0.9), unmade=[], lost=[])
    assert outcome.gate is GateOutcome.FAILED  # on the cases graded...
    assert outcome.exit_code is ExitCode.INCOMPLETE  # ...but the session lacks one
    assert outcome.ungraded == [ungraded]
    assert numbers_of(outcome).cases == 10  # an ungraded call is no failed case


def test_a_lost_worker_makes_the_session_incomplete():
    outcome = decide(SESSION, GateAsked(min_pass_rate=0.5), unmade=[], lost=["gw1"])
    assert outcome.exit_code is ExitCode.INCOMPLETE


def test_a_judge_that_could_not_be_made_is_bad_usage_first():
    unmade = ["error: llm_judge needs a judge model"]
    outcome = decide([], GateAsked(min_pass_rate=0.5), unmade=unmade, lost=["gw0"])
    assert outcome.exit_code is ExitCode.BAD_INPUT


@pytest.mark.parametrize(
    ("status", "code", "final"),
    [
        (pytest.ExitCode.OK, ExitCode.OK, pytest.ExitCode.OK),
        (pytest.ExitCode.TESTS_FAILED, ExitCode.OK, pytest.ExitCode.TESTS_FAILED),
        (pytest.ExitCode.OK, ExitCode.GATE_FAILED, pytest.ExitCode.TESTS_FAILED),
        (pytest.ExitCode.OK, ExitCode.INCOMPLETE, pytest.ExitCode.INTERNAL_ERROR),
        (pytest.ExitCode.TESTS_FAILED, ExitCode.INCOMPLETE, pytest.ExitCode.INTERNAL_ERROR),
        (pytest.ExitCode.TESTS_FAILED, ExitCode.BAD_INPUT, pytest.ExitCode.USAGE_ERROR),
        # pytest's own reasons to stop are never turned into a verdict
        (pytest.ExitCode.INTERRUPTED, ExitCode.GATE_FAILED, pytest.ExitCode.INTERRUPTED),
        (
            pytest.ExitCode.NO_TESTS_COLLECTED,
            ExitCode.INCOMPLETE,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ),
    ],
)
def test_the_sessions_exit_status_keeps_judges_contract_in_pytests_numbers(status, code, final):
    outcome = decide(SESSION, GateAsked(), unmade=[], lost=[])
    outcome = type(outcome)(**{**outcome.__dict__, "exit_code": code})
    assert session_exit(status, outcome) == final

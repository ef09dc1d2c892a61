"""What the viewer's case filters keep (view/cases.py): each flag on the cases that have it
and only those, the category, and the search over text, reasoning and raw replies. Issue 33.
"""

from __future__ import annotations

import pytest

from judgecli.result import CaseResult, CaseStatus, Judgement, RepeatVerdict
from judgecli.verdict import Verdict
from judgecli.view.cases import CaseFilter, Flag, flags_of, step_count


def result(case_id: str, **fields) -> CaseResult:
    return CaseResult(
        id=case_id, status=fields.pop("status", CaseStatus.OK), rubric_hash="h", **fields
    )


SPLIT_PANEL = result("panel", judge_winners={"m1": "new", "m2": "old"}, winner="tie")
AGREED_PANEL = result("agreed", judge_winners={"m1": "new", "m2": "new"}, winner="new")
FLIPPED = result("flipped", consistent=False, winner="tie")
FAILED = result("failed", status=CaseStatus.FAILED, error="unparseable")
UNSTABLE = result(
    "unstable",
    score=3.0,
    repeats=[RepeatVerdict(repeat=0, score=2.0), RepeatVerdict(repeat=1, score=4.0)],
    stable=False,
)
AGENT = result("agent", score=4.0, steps=[{"step": 1, "tool": "search", "score": 4}])
PAIRED_AGENTS = result(
    "agents", winner="new", lengths={"old": 9, "new": 9, "old_steps": 2, "new_steps": 5}
)
RAW = result(
    "raw",
    score=2.0,
    category="billing",
    case={"input": "How do refunds work?"},
    judgements=[
        Judgement(
            model="m",
            raw='{"score": 2, "reasoning": "misses the VAT rule"}',
            verdict=Verdict(score=2, reasoning="misses the VAT rule"),
        )
    ],
)
ALL = [SPLIT_PANEL, AGREED_PANEL, FLIPPED, FAILED, UNSTABLE, AGENT, PAIRED_AGENTS, RAW]


@pytest.mark.parametrize(
    ("flag", "kept"),
    [
        pytest.param(Flag.FAILED, ["failed"], id="failed"),
        pytest.param(Flag.JUDGES_DISAGREE, ["panel"], id="judges-disagree"),
        pytest.param(Flag.ORDERS_DISAGREE, ["flipped"], id="orders-disagree"),
        pytest.param(Flag.UNSTABLE, ["unstable"], id="unstable"),
        pytest.param(Flag.STEPS, ["agent", "agents"], id="steps"),
    ],
)
def test_each_flag_keeps_exactly_the_cases_that_have_it(flag: Flag, kept: list[str]) -> None:
    chosen = CaseFilter(flags=frozenset({flag}))
    assert [r.id for r in ALL if chosen.keeps(r, flags_of(r, labelled=False))] == kept


def test_flags_combine_and_labelled_is_a_flag_too() -> None:
    chosen = CaseFilter(flags=frozenset({Flag.ORDERS_DISAGREE, Flag.UNLABELLED}))
    assert chosen.keeps(FLIPPED, flags_of(FLIPPED, labelled=False))
    assert not chosen.keeps(FLIPPED, flags_of(FLIPPED, labelled=True))


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        pytest.param({"q": "VAT RULE"}, ["raw"], id="reasoning-any-case"),
        pytest.param({"q": "refunds"}, ["raw"], id="case-text"),
        pytest.param({"q": "unparseable"}, ["failed"], id="error"),
        pytest.param({"category": "billing"}, ["raw"], id="category"),
        pytest.param({"q": "no such words"}, [], id="nothing"),
    ],
)
def test_search_and_category_look_where_a_reader_would(query: dict, kept: list[str]) -> None:
    chosen = CaseFilter.of(query, [])
    assert [r.id for r in ALL if chosen.keeps(r, flags_of(r, labelled=False))] == kept


def test_an_unknown_flag_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown flag 'bogus': one of failed"):
        CaseFilter.of({}, ["bogus"])


def test_an_agents_steps_are_its_graded_steps_or_the_calls_its_answers_made() -> None:
    assert step_count(AGENT) == 1
    assert step_count(PAIRED_AGENTS) == 5
    assert step_count(RAW) is None

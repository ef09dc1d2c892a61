"""Issue 32: a run's tool-call check → summary.json's `tool_calls`, counted by hand on the
bundled example (datasets/tool-calls.jsonl), per category, with the cases a judge graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.grading.tool_calls import check_case
from judgecli.inputs.dataset import parse_case
from judgecli.inputs.rubric_file import load_rubric, parse_rubric
from judgecli.inputs.rubric_library import find_rubric
from judgecli.result import CallCheck, CaseResult, CaseStatus
from judgecli.summary.run import summary_json
from judgecli.summary.score import summarize_score
from judgecli.summary.tool_calls import summarize_tool_calls

EXAMPLE = Path(__file__).resolve().parents[3] / "datasets" / "tool-calls.jsonl"
TOOL_CALLS = load_rubric(find_rubric("tool-calls", []))


def results(rubric=TOOL_CALLS) -> list[CaseResult]:
    """The example's cases as the check decides them."""
    rows = []
    for number, line in enumerate(EXAMPLE.read_text(encoding="utf-8").splitlines(), start=1):
        case = parse_case(EXAMPLE, number, line, field_map={}, requires=[])
        check = check_case(rubric, case)
        assert check is not None
        rows.append(
            CaseResult(
                id=case.id,
                status=CaseStatus.OK,
                category=case.category,
                passed=check.passed,
                rubric_hash="h",
                tool_calls=check.model_copy(update={"decided": True}),
            )
        )
    return rows


def test_the_example_counted_by_hand():
    # (matched, missed, extra) per case, from the example's notes:
    #   tc-01 (1,0,0) tc-02 (0,1,1) tc-03 (1,0,0) tc-04 (0,0,0)
    #   tc-05 (0,0,1) tc-06 (0,1,0) tc-07 (2,0,0) tc-08 (1,0,1)
    #   tc-09 (2,0,0) tc-10 (0,1,1) tc-11 (1,0,0)
    # expected 11, made 12, matched 8: precision 8/12, recall 8/11, F1 16/23.
    # Issue 32: these were counted over the example's first eight cases; it holds eleven.
    calls = summarize_tool_calls(results(), TOOL_CALLS)
    assert calls is not None
    assert (calls.cases, calls.expected, calls.actual) == (11, 11, 12)
    assert (calls.matched, calls.missed, calls.extra) == (8, 3, 4)
    assert calls.precision == pytest.approx(8 / 12)
    assert calls.recall == pytest.approx(8 / 11)
    assert calls.f1 == pytest.approx(16 / 23)
    assert (calls.perfect, calls.decided, calls.unchecked) == (6, 11, 0)
    assert (calls.match, calls.order) == ("exact", "any")


def test_each_category_has_its_own_numbers():
    calls = summarize_tool_calls(results(), TOOL_CALLS)
    assert calls is not None
    # general: tc-04 (nothing expected, nothing made) and tc-05 (one extra call): no
    # recall (nothing expected), precision 0/1, F1 0.
    general = calls.by_category["general"]
    assert (general.cases, general.expected, general.actual) == (2, 0, 1)
    assert (general.precision, general.recall, general.f1) == (0.0, None, 0.0)
    assert general.recall_ci == (None, None)
    # travel: tc-03, tc-06, tc-07, tc-11: expected 1+1+2+1, made 1+0+2+1, matched 1+0+2+1.
    travel = calls.by_category["travel"]
    assert (travel.precision, travel.recall) == (1.0, 0.8)
    # weather: tc-01, tc-02, tc-09: expected 1+1+2, made 1+1+2, matched 1+0+2.
    weather = calls.by_category["weather"]
    assert (weather.matched, weather.missed, weather.extra) == (3, 1, 1)
    assert sorted(calls.by_category) == ["general", "shopping", "travel", "weather"]


def test_subset_and_strict_order_change_only_what_they_should():
    subset = parse_rubric(
        "name: s\nkind: binary\nchoices: [P, F]\ntool_calls: {match: subset}\n", source="s"
    )
    calls = summarize_tool_calls(results(subset), subset)
    assert calls is not None
    # Under subset, tc-10's extra `limit` is allowed (one more matched, one fewer missed
    # and extra); tc-02's call (city only) still lacks the expected unit.
    assert (calls.matched, calls.missed, calls.extra) == (9, 2, 3)
    strict = parse_rubric(
        "name: s\nkind: binary\nchoices: [P, F]\ntool_calls: {order: strict}\n", source="s"
    )
    calls = summarize_tool_calls(results(strict), strict)
    assert calls is not None
    # tc-07's two calls came in the order expected; tc-09's came in the other order, so
    # only one of its two is matched (Faro expected first, Porto called first).
    assert (calls.matched, calls.missed, calls.extra) == (7, 4, 5)


def test_cases_without_a_check_are_counted_apart_and_a_judges_failure_does_not_hide_calls():
    rows = results()
    unchecked = CaseResult(id="u", status=CaseStatus.OK, passed=True, rubric_hash="h")
    # A case a judge failed on still made its calls: they count.
    failed = CaseResult(
        id="f",
        status=CaseStatus.FAILED,
        error="judge: timeout",
        rubric_hash="h",
        tool_calls=CallCheck(missed=[rows[1].tool_calls.missed[0]]),
    )
    calls = summarize_tool_calls([*rows, unchecked, failed], TOOL_CALLS)
    assert calls is not None
    assert (calls.cases, calls.unchecked, calls.missed, calls.decided) == (12, 1, 4, 11)


def test_a_rubric_without_the_check_has_no_tool_calls_key():
    binary = parse_rubric(
        "name: b\nkind: binary\nchoices: [YES, NO]\nprompt: {user: '{output}'}\n", source="b"
    )
    assert summarize_tool_calls(results(), binary) is None
    s = summary_json(summarize_score(results(), rubric=binary, models=["m"]))
    assert "tool_calls" not in s


def test_summary_json_holds_every_stable_key_with_nulls_kept():
    s = summary_json(summarize_score(results(), rubric=TOOL_CALLS, models=[]))
    calls = s["tool_calls"]
    stable = {"precision", "precision_ci", "recall", "recall_ci", "f1", "f1_ci"}
    assert stable <= calls.keys()
    # A number without a denominator is written as null, not left out.
    assert calls["by_category"]["general"]["recall"] is None
    assert json.loads(json.dumps(s)) == s

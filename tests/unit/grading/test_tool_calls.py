"""Issue 32: the deterministic tool-call check. Every expectation below is counted by hand
from the rows it is given: which calls match which, what is missed and what is extra.
Cases are read through the dataset reader, as real exports write them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judgecli.errors import DatasetError
from judgecli.grading.tool_calls import (
    calls_made,
    check_case,
    checked_first,
    json_equal,
    json_within,
    maximum_matching,
    ordered_matching,
)
from judgecli.inputs.dataset import Case, parse_case
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseResult, CaseStatus

CHECK_ONLY = "name: t\nkind: binary\nchoices: [PASS, FAIL]\ntool_calls: {{{rule}}}\n"


def rubric(rule: str = "", *, prompt: bool = False, kind: str = "binary"):
    text = CHECK_ONLY.format(rule=rule)
    if kind == "pointwise":
        text = text.replace("kind: binary\nchoices: [PASS, FAIL]", "kind: pointwise\n")
        text += "scale: {min: 1, max: 5}\npass_at: 4\n"
    if prompt:
        text += "requires: [output]\nprompt:\n  user: '{output}'\n"
    return parse_rubric(text, source="t.yaml")


def call(name: str, arguments: Any = None, *, text: bool = True) -> dict[str, Any]:
    """A call as OpenAI's export writes it: the arguments as JSON text (compact)."""
    if arguments is None:
        return {"id": f"call_{name}", "type": "function", "function": {"name": name}}
    args = json.dumps(arguments, separators=(",", ":")) if text else arguments
    return {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": args}}


def run(*turns: list[dict[str, Any]], expected: Any = "absent") -> Case:
    """A case whose assistant turns make the given calls (each followed by its results)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "do it"}]
    for calls in turns:
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    messages.append({"role": "assistant", "content": "done"})
    row: dict[str, Any] = {"id": "c1", "messages": messages}
    if expected != "absent":
        row["expected_tool_calls"] = expected
    return parse_case(Path("runs.jsonl"), 1, json.dumps(row), field_map={}, requires=[])


def counts(check) -> tuple[int, int, int]:
    return len(check.matched), len(check.missed), len(check.extra)


# ── values: parsed JSON, never text ────────────────────────────────────────────────────


def test_arguments_match_by_value_whatever_their_key_order_and_spacing():
    spaced = call("get_weather")
    spaced["function"]["arguments"] = '{ "units" : "metric",\n  "city":"Paris" }'
    case = run(
        [call("get_weather", {"city": "Paris", "units": "metric"}), spaced],
        expected=[
            {"name": "get_weather", "arguments": {"units": "metric", "city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "Paris", "units": "metric"}},
        ],
    )
    check = check_case(rubric(), case)
    assert counts(check) == (2, 0, 0)


def test_numbers_compare_by_value_and_a_boolean_is_never_a_number():
    assert json_equal(1, 1.0)
    assert json_equal({"n": [1, 2.0]}, {"n": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal(1, True)
    assert not json_equal(0, False)
    assert not json_equal("1", 1)
    assert not json_equal(None, {})
    assert not json_equal([1, 2], [2, 1])
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})


def test_subset_needs_every_expected_key_recursively_and_lists_whole():
    actual = {"q": "x", "filters": {"year": 2020, "lang": "en"}, "ids": [1, 2, 3]}
    assert json_within({"filters": {"year": 2020}}, actual)
    assert json_within({}, actual)
    assert not json_within({"filters": {"year": 2021}}, actual)
    assert not json_within({"ids": [1, 2]}, actual)
    assert not json_within({"missing": None}, actual)


def test_arguments_that_are_not_json_match_nothing_but_their_own_text():
    broken = call("get_weather")
    broken["function"]["arguments"] = "city=Paris"
    case = run([broken], expected=[{"name": "get_weather", "arguments": {"city": "Paris"}}])
    assert counts(check_case(rubric(), case)) == (0, 1, 1)


def test_an_expected_call_without_arguments_matches_any_call_of_its_name():
    case = run(
        [call("search", {"q": "a"}), call("lookup", {"id": 1})], expected=[{"name": "search"}]
    )
    check = check_case(rubric(), case)
    assert counts(check) == (1, 0, 1)
    assert check.extra[0].name == "lookup"


def test_a_tool_without_arguments_matches_empty_or_absent_arguments():
    empty = call("now")
    empty["function"]["arguments"] = ""
    case = run([empty, call("now", {})], expected=[{"name": "now", "arguments": {}}] * 2)
    assert counts(check_case(rubric(), case)) == (2, 0, 0)


# ── exact and subset ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("match", "matched"), [("exact", 0), ("subset", 1)])
def test_subset_lets_the_call_pass_more_arguments_and_exact_does_not(match, matched):
    case = run(
        [call("search", {"q": "paris", "limit": 5})],
        expected=[{"name": "search", "arguments": {"q": "paris"}}],
    )
    check = check_case(rubric(f"match: {match}"), case)
    assert counts(check) == (matched, 1 - matched, 1 - matched)


# ── JSON Schema per argument ───────────────────────────────────────────────────────────

PARIS = {"type": "string", "pattern": "(?i)paris"}


@pytest.mark.parametrize(
    ("arguments", "match", "matched"),
    [
        pytest.param({"query": "Hotels in PARIS", "limit": 5}, "exact", 1, id="valid"),
        pytest.param({"query": "hotels in Rome", "limit": 5}, "exact", 0, id="invalid"),
        pytest.param({"limit": 5}, "exact", 0, id="schema-argument-missing"),
        pytest.param({"query": "paris", "limit": 6}, "exact", 0, id="other-value-differs"),
        pytest.param({"query": "paris", "limit": 5, "lang": "fr"}, "exact", 0, id="exact-extra"),
        pytest.param({"query": "paris", "limit": 5, "lang": "fr"}, "subset", 1, id="subset-extra"),
        pytest.param({"query": 7, "limit": 5}, "exact", 0, id="wrong-type"),
    ],
)
def test_an_argument_with_a_schema_must_validate_and_the_rest_match_as_values(
    arguments, match, matched
):
    expected = [{"name": "search", "arguments": {"limit": 5}, "argument_schemas": {"query": PARIS}}]
    case = run([call("search", arguments)], expected=expected)
    assert counts(check_case(rubric(f"match: {match}"), case))[0] == matched


def test_a_missed_call_keeps_its_schemas_in_the_record():
    expected = [{"name": "search", "argument_schemas": {"query": PARIS}}]
    check = check_case(rubric(), run(expected=expected))
    assert check.missed[0].argument_schemas == {"query": PARIS}


@pytest.mark.parametrize(
    ("schemas", "says"),
    [
        ({"query": {"type": "strin"}}, "is not a valid JSON Schema"),
        ({"query": "string"}, "must be a JSON Schema (an object)"),
        (["query"], "must map argument names to JSON Schemas"),
    ],
)
def test_a_schema_that_is_not_one_is_bad_input_naming_the_line(schemas, says):
    row = {
        "id": "c",
        "output": "x",
        "expected_tool_calls": [{"name": "s", "argument_schemas": schemas}],
    }
    with pytest.raises(DatasetError) as caught:
        parse_case(Path("runs.jsonl"), 7, json.dumps(row), field_map={}, requires=[])
    assert "runs.jsonl:7" in str(caught.value)
    assert says in str(caught.value)


def test_an_argument_given_a_value_and_a_schema_is_bad_input():
    expected = [{"name": "s", "arguments": {"q": "a"}, "argument_schemas": {"q": PARIS}}]
    with pytest.raises(DatasetError, match="both a value"):
        run(expected=expected)


# ── maximum matching, not first come ───────────────────────────────────────────────────


def test_a_call_that_could_match_two_expected_calls_goes_where_the_matching_is_largest():
    # The first expected call (any search) could take the first call made (q=paris); a
    # greedy first-come matching would, and leave the second expected call (q=paris)
    # without its only match: 1 matched, 1 missed, 1 extra. The maximum matching pairs the
    # first expected call with the second call made instead: 2 matched.
    case = run(
        [call("search", {"q": "paris"}), call("search", {"q": "oslo"})],
        expected=[{"name": "search"}, {"name": "search", "arguments": {"q": "paris"}}],
    )
    check = check_case(rubric(), case)
    assert counts(check) == (2, 0, 0)
    assert [(m.expected, m.call) for m in check.matched] == [(0, 1), (1, 0)]


def test_greedy_would_fail_where_the_maximum_matching_does_not():
    edges = [[True, True, False], [True, False, False], [False, True, True]]
    # Greedy (row 0 takes column 0) leaves row 1 unmatched; the maximum matches all three.
    assert maximum_matching(edges) == [(0, 1), (1, 0), (2, 2)]


def test_each_expected_call_is_matched_at_most_once():
    case = run([call("ping", {})], expected=[{"name": "ping", "arguments": {}}] * 2)
    assert counts(check_case(rubric(), case)) == (1, 1, 0)
    case = run([call("ping", {}), call("ping", {})], expected=[{"name": "ping", "arguments": {}}])
    assert counts(check_case(rubric(), case)) == (1, 0, 1)


# ── order ──────────────────────────────────────────────────────────────────────────────


def test_order_is_ignored_by_default_and_strict_wants_a_subsequence():
    expected = [{"name": "a"}, {"name": "b"}]
    swapped = run([call("b", {}), call("a", {})], expected=expected)
    assert counts(check_case(rubric(), swapped)) == (2, 0, 0)
    strict = check_case(rubric("order: strict"), swapped)
    # The longest in-order matching has one pair: a with the call made second.
    assert counts(strict) == (1, 1, 1)
    assert [(m.expected, m.call) for m in strict.matched] == [(0, 1)]
    assert [m.expected for m in strict.missed] == [1]
    assert [m.call for m in strict.extra] == [0]
    between = run([call("a", {}), call("x", {}), call("b", {})], expected=expected)
    assert counts(check_case(rubric("order: strict"), between)) == (2, 0, 1)


def test_strict_order_takes_the_earliest_call_that_keeps_the_subsequence_longest():
    # Expected a, b; made a, a, b: the first a is taken, the second is extra.
    edges = [[True, True, False], [False, False, True]]
    assert ordered_matching(edges) == [(0, 0), (1, 2)]
    assert ordered_matching([]) == []
    assert ordered_matching([[False]]) == []


# ── no calls, and no calls expected ────────────────────────────────────────────────────


def test_a_run_without_calls_misses_every_expected_call():
    check = check_case(rubric(), run(expected=[{"name": "a"}, {"name": "b", "arguments": {}}]))
    assert counts(check) == (0, 2, 0)
    assert not check.passed


def test_no_calls_expected_makes_every_call_extra_and_none_a_pass():
    assert counts(check_case(rubric(), run([call("a", {}), call("b", {})], expected=[]))) == (
        0,
        0,
        2,
    )
    nothing = check_case(rubric(), run(expected=[]))
    assert counts(nothing) == (0, 0, 0)
    assert nothing.passed


def test_a_case_without_expectations_is_not_checked():
    assert check_case(rubric(), run([call("a", {})])) is None


def test_the_calls_made_are_every_assistant_turns_in_order_with_where_they_were_made():
    case = run([call("a", {}), call("b", {})], [call("c", {})])
    made = calls_made(case)
    assert [(m.call.name, m.index, m.message) for m in made] == [
        ("a", 0, 1),
        ("b", 1, 1),
        ("c", 2, 4),
    ]
    answer_only = Case(id="x", input="q", output="a")
    assert calls_made(answer_only) == []


# ── the check first, the judge for the rest ────────────────────────────────────────────


class Judge:
    """A judge that records whether it was asked, and always passes the case."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self) -> CaseResult:
        self.asked += 1
        return CaseResult(
            id="c1", status=CaseStatus.OK, choice="PASS", passed=True, rubric_hash="h"
        )


def graded(rule: str, case: Case, **kwargs: Any) -> tuple[CaseResult, int]:
    judge = Judge()
    result = asyncio.run(checked_first(rubric(rule, **kwargs), case, judge))
    return result, judge.asked


PERFECT = run([call("a", {})], expected=[{"name": "a"}])
MISSES = run(expected=[{"name": "a"}])
ONLY_EXTRA = run([call("a", {}), call("b", {})], expected=[{"name": "a"}])
UNEXPECTED = run([call("a", {})])


def test_a_rubric_with_only_the_check_never_asks_a_judge():
    for case, passed in ((PERFECT, True), (MISSES, False), (ONLY_EXTRA, False)):
        result, asked = graded("", case)
        assert asked == 0
        assert (result.passed, result.choice) == (passed, "PASS" if passed else "FAIL")
        assert result.tool_calls is not None
        assert result.tool_calls.decided
        assert result.judgements == []
        assert result.status is CaseStatus.OK


@pytest.mark.parametrize(
    ("judge", "asked"),
    [
        # perfect, misses, only extra calls, no expectation
        ("unchecked", (0, 0, 0, 1)),
        ("extra", (0, 0, 1, 1)),
        ("all", (1, 1, 1, 1)),
    ],
)
def test_with_a_prompt_the_judge_grades_what_tool_calls_judge_leaves_to_it(judge, asked):
    said = []
    for case in (PERFECT, MISSES, ONLY_EXTRA, UNEXPECTED):
        result, n = graded(f"judge: {judge}", case, prompt=True)
        said.append(n)
        checked = case.expected_tool_calls is not None
        assert (result.tool_calls is not None) is checked
        if checked:
            assert result.tool_calls.decided is (n == 0)
        if n:
            assert result.passed is True  # the judge's verdict is the case's
    assert tuple(said) == asked


def test_a_pointwise_rubric_takes_the_check_as_the_top_or_the_bottom_of_its_scale():
    passed, _ = graded("", PERFECT, prompt=True, kind="pointwise")
    failed, _ = graded("", MISSES, prompt=True, kind="pointwise")
    assert (passed.score, passed.passed) == (5, True)
    assert (failed.score, failed.passed) == (1, False)

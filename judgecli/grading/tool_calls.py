"""The deterministic tool-call check: the calls an agent's run made against the calls its
case expects (`expected_tool_calls`), with no judge (docs/tool-calls.md).

The calls made are every assistant turn's `tool_calls`, in the order of the turns. A call
made matches an expected call when the names are equal and the arguments match under the
rubric's `tool_calls.match`:

* `exact`: the same JSON value. Arguments are compared as parsed values, never as text, so
  key order and spacing never matter; numbers compare by value (1 and 1.0 are equal, as
  JSON has one number type and JSON Schema calls 1.0 an integer); a boolean is never a
  number (`true` is not 1); strings compare exactly.
* `subset`: every key the expected object gives is in the call's with a matching value
  (objects inside compared the same way, recursively); a list must hold the same items in
  the same order; the call may pass more keys.
* An expected call may give `argument_schemas`, a JSON Schema per argument: that argument
  must be present and validate against it (jsonschema, draft 2020-12 unless the schema's
  `$schema` says otherwise; `format` is an annotation, not checked, as the draft says).
  The call's other arguments are compared with `arguments` as above.
* An expected call with neither `arguments` nor `argument_schemas` matches any call of that
  name.

Each expected call is matched to at most one call made, and the check finds a *maximum*
matching, not the first-come one: with `order: any` a maximum bipartite matching (Kuhn's
augmenting paths, expected calls in order, calls made in order, so the pairs are the same
every run); with `order: strict` the expected calls as a subsequence of the calls made in
order (a longest common subsequence under the match, each expected call taking the earliest
call that keeps the subsequence longest). What is matched is a true positive, an expected
call left over a miss, a call made left over an extra call. Pure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judgecli.grading.prompt import case_values
from judgecli.inputs.conversation import Role
from judgecli.inputs.dataset import Case
from judgecli.inputs.tools import ToolCall
from judgecli.result import CallCheck, CaseResult, CaseStatus, CheckedCall
from judgecli.rubric import Rubric, RubricKind
from judgecli.rubric.tool_check import ArgumentMatch, CallOrder, CheckedCases, ToolCallsCheck


@dataclass(frozen=True)
class MadeCall:
    """A call an agent's run made, and where."""

    call: ToolCall
    index: int
    """Its index among the run's calls, in the order made."""
    message: int | None
    """The index in the case's messages of the assistant turn that made it."""


def calls_made(case: Case) -> list[MadeCall]:
    """Every call the case's run made: each assistant turn's tool calls, in order (none for
    a case without messages: an answer alone made no call).
    """
    made: list[MadeCall] = []
    for at, turn in enumerate(case.messages or []):
        if turn.role is Role.ASSISTANT:
            made += [MadeCall(call, len(made) + i, at) for i, call in enumerate(turn.tool_calls)]
    return made


def json_equal(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same value: objects by their keys (in any
    order), lists item by item, numbers by value (1 == 1.0), a boolean only a boolean.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def json_within(expected: Any, actual: Any) -> bool:
    """Whether `expected` is within `actual`: an object's keys all present with values
    within theirs, a list item by item, anything else equal (`json_equal`).
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and json_within(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            json_within(x, y) for x, y in zip(expected, actual, strict=True)
        )
    return json_equal(expected, actual)


def valid(value: Any, schema: Any) -> bool:
    """Whether a JSON value validates against a JSON Schema (checked when the case was read)."""
    from jsonschema.validators import validator_for  # only a case with schemas needs it

    return bool(validator_for(schema)(schema).is_valid(value))


def calls_match(expected: ToolCall, actual: ToolCall, match: ArgumentMatch) -> bool:
    """Whether a call made matches an expected call (see the module docstring)."""
    if expected.name != actual.name:
        return False
    schemas = expected.argument_schemas or {}
    if expected.arguments is None and not schemas:
        return True
    given = actual.arguments
    if schemas:
        if not isinstance(given, dict):
            return False
        if any(name not in given or not valid(given[name], s) for name, s in schemas.items()):
            return False
        given = {k: v for k, v in given.items() if k not in schemas}
    wanted = expected.arguments if expected.arguments is not None else {}
    if given is None:
        # No arguments written ("" or absent) is the empty object a no-argument tool takes.
        given = {}
    if match is ArgumentMatch.SUBSET:
        return json_within(wanted, given)
    return json_equal(wanted, given)


def maximum_matching(edges: Sequence[Sequence[bool]]) -> list[tuple[int, int]]:
    """A maximum matching of expected calls (rows) to calls made (columns) where
    `edges[e][a]` says they match: Kuhn's augmenting paths, rows and columns in order.
    Returns (row, column) pairs in row order.
    """
    owner: dict[int, int] = {}

    def augment(row: int, seen: set[int]) -> bool:
        for col, fits in enumerate(edges[row]):
            if fits and col not in seen:
                seen.add(col)
                if col not in owner or augment(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    for row in range(len(edges)):
        augment(row, set())
    return sorted((row, col) for col, row in owner.items())


def ordered_matching(edges: Sequence[Sequence[bool]]) -> list[tuple[int, int]]:
    """The longest run of expected calls (rows) matched, in order, to calls made (columns)
    in order: a longest common subsequence under `edges`. Each row takes the earliest
    column that keeps the subsequence longest. Returns (row, column) pairs in order.
    """
    rows = len(edges)
    cols = len(edges[0]) if rows else 0
    # longest[r][c]: the longest ordered matching of rows r.. to columns c..
    longest = [[0] * (cols + 1) for _ in range(rows + 1)]
    for r in range(rows - 1, -1, -1):
        for c in range(cols - 1, -1, -1):
            skip = max(longest[r + 1][c], longest[r][c + 1])
            longest[r][c] = max(skip, 1 + longest[r + 1][c + 1]) if edges[r][c] else skip
    pairs, r, c = [], 0, 0
    while r < rows and c < cols:
        if edges[r][c] and longest[r][c] == 1 + longest[r + 1][c + 1]:
            pairs.append((r, c))
            r, c = r + 1, c + 1
        elif longest[r][c + 1] == longest[r][c]:
            c += 1
        else:
            r += 1
    return pairs


def check_calls(
    expected: Sequence[ToolCall], made: Sequence[MadeCall], rule: ToolCallsCheck
) -> CallCheck:
    """The calls made checked against the calls expected: matched, missed and extra."""
    edges = [[calls_match(e, m.call, rule.match) for m in made] for e in expected]
    pairs = (ordered_matching if rule.order is CallOrder.STRICT else maximum_matching)(edges)
    matched_rows = {r for r, _ in pairs}
    matched_cols = {c for _, c in pairs}
    return CallCheck(
        matched=[made_record(made[c], expected=r) for r, c in pairs],
        missed=[
            CheckedCall(
                name=e.name,
                arguments=e.arguments,
                argument_schemas=e.argument_schemas,
                expected=r,
            )
            for r, e in enumerate(expected)
            if r not in matched_rows
        ],
        extra=[made_record(m) for c, m in enumerate(made) if c not in matched_cols],
    )


def made_record(made: MadeCall, *, expected: int | None = None) -> CheckedCall:
    """A call made as the case's check records it."""
    return CheckedCall(
        name=made.call.name,
        arguments=made.call.arguments,
        expected=expected,
        call=made.index,
        message=made.message,
    )


def check_case(rubric: Rubric, case: Case) -> CallCheck | None:
    """The case's calls checked under the rubric's `tool_calls`; None when the rubric has no
    check or the case expects nothing to check against (no `expected_tool_calls`: `[]` is
    an expectation, of no call).
    """
    rule = rubric.tool_calls
    if rule is None or case.expected_tool_calls is None:
        return None
    return check_calls(case.expected_tool_calls, calls_made(case), rule)


def judge_decides(rubric: Rubric, check: CallCheck | None) -> bool:
    """Whether the judge grades the case: a case the check could not check, or one the
    rubric's `tool_calls.judge` leaves to the judge (every case, or those whose only fault
    is extra calls). Never for a rubric without a prompt.
    """
    if not rubric.asks_judge:
        return False
    if check is None or rubric.tool_calls is None:
        return True
    judged = rubric.tool_calls.judged
    only_extra = not check.missed and bool(check.extra)
    return judged is CheckedCases.ALL or (judged is CheckedCases.EXTRA and only_extra)


def decided_result(rubric: Rubric, case: Case, check: CallCheck) -> CaseResult:
    """The check's verdict as the case's, in the rubric's terms. Binary: the passing choice
    when every expected call was made and no other, else the other choice. Pointwise: the
    top of the scale or its bottom, and passed by the rubric's pass_at as a judge's score
    would be (None without one).
    """
    passed = check.passed
    verdict: dict[str, Any] = {}
    if rubric.kind is RubricKind.BINARY:
        failing = next(c for c in rubric.choices or [] if c != rubric.passing_choice)
        verdict = {"choice": rubric.passing_choice if passed else failing, "passed": passed}
    else:
        assert rubric.scale is not None
        score = rubric.scale.max if passed else rubric.scale.min
        at = rubric.pass_at
        verdict = {"score": score, "passed": None if at is None else score >= at}
    return CaseResult(
        id=case.id,
        status=CaseStatus.OK,
        category=case.category,
        rubric_hash=rubric.content_hash,
        case=case_values(rubric, case),
        tool_calls=check.model_copy(update={"decided": True}),
        **verdict,
    )


async def checked_first(
    rubric: Rubric, case: Case, judge: Callable[[], Awaitable[CaseResult]]
) -> CaseResult:
    """Grade a case with the rubric's tool-call check first: the check's verdict when it
    decides the case, else the judge's (`judge()`) with the check's findings beside it.
    """
    check = check_case(rubric, case)
    if judge_decides(rubric, check):
        judged = await judge()
        return judged if check is None else judged.model_copy(update={"tool_calls": check})
    if check is None:
        # A rubric without a prompt requires expected_tool_calls; a case given in memory
        # past that check still gets no guessed verdict.
        return CaseResult(
            id=case.id,
            status=CaseStatus.FAILED,
            error="no expected_tool_calls to check, and the rubric asks no judge",
            category=case.category,
            rubric_hash=rubric.content_hash,
        )
    return decided_result(rubric, case, check)

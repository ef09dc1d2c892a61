"""A row's fields as a case's: which are the case's own (through the `--field` map), each
of its type (a table's cells read by tables.typed_cells first), the rubric's required
ones present. What is wrong is a DatasetError naming the row and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from judgecli.errors import DatasetError
from judgecli.inputs.conversation import Turn, TurnsError, parse_turns
from judgecli.inputs.images import read_row_images
from judgecli.inputs.rows import Format, RowSource
from judgecli.inputs.rubric_items import RubricItemsError, parse_rubric_items
from judgecli.inputs.tables import typed_cells
from judgecli.inputs.tools import ToolsError, parse_expected_tool_calls, parse_tools

KNOWN_FIELDS = (
    "id",
    "input",
    "output",
    "reference",
    "context",
    "category",
    "messages",
    "tools",
    "expected_tool_calls",
    "rubric_items",
)
TEXT_FIELDS = ("input", "output", "reference", "category")
# Rubric fields (`requires`) a conversation's `messages` gives a case: the last user turn
# before the answer graded, the answer, the turns before it, and an agent's whole run and
# the step graded in it.
FROM_MESSAGES = frozenset({"input", "output", "conversation", "trajectory", "step"})
# Of those, the fields that show turns: a case with an input shows it as one user turn.
RUN_FIELDS = frozenset({"conversation", "trajectory", "step"})
CASE_EXAMPLE = '{"id": "q1", "input": "What is 2+2?", "output": "4"}'
"""One case as a JSONL line, for hints."""


def case_values(
    source: RowSource,
    number: int,
    fields: Mapping[str, Any],
    *,
    field_map: Mapping[str, str],
    requires: list[str],
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A row's fields as a case's: (its id, the case fields, the rest as metadata), or a
    DatasetError naming the row and the fix.
    """
    obj = dict(fields)
    values: dict[str, Any] = {}
    for name in KNOWN_FIELDS:
        key = field_map.get(name, name)
        if key in obj:
            values[name] = obj.pop(key)
    if source.format.text_cells:
        typed_cells(source, number, values, field_map)
    read_row_images(source, number, values, field_map)
    case_id = values.pop("id", None)
    if case_id is None:
        case_id = f"{source.unit}-{number}"
    elif isinstance(case_id, bool) or not isinstance(case_id, str | int):
        raise source.error(
            number,
            f'"id" must be a string or integer, got {case_id!r}',
            hint='write the id as a string, e.g. "id": "q1"',
        )
    for name in TEXT_FIELDS:
        if name in values and values[name] is not None and not isinstance(values[name], str):
            raise not_text(source, number, name, field_map.get(name, name), values[name])
    if "messages" in values:
        values["messages"] = conversation_turns(source, number, values)
    agent_fields(source, number, values)
    checklist_items(source, number, values, field_map.get("rubric_items", "rubric_items"))
    context = values.get("context")
    if isinstance(context, str):
        values["context"] = [context]
    elif context is not None and not (
        isinstance(context, list) and all(isinstance(p, str) for p in context)
    ):
        raise source.error(
            number,
            '"context" must be a string or a list of strings',
            hint='e.g. "context": "a passage" or "context": ["passage 1", "passage 2"]',
        )
    for name in requires:
        check_required(source, number, name, values, field_map=field_map, requires=requires)
    return str(case_id), values, obj


def check_required(
    source: RowSource,
    number: int,
    name: str,
    values: Mapping[str, Any],
    *,
    field_map: Mapping[str, str],
    requires: list[str],
) -> None:
    """DatasetError when the rubric's required field `name` is missing or null. An empty
    string (a refusal, a truncated answer) is data to grade, not a missing field.
    """
    key = field_map.get(name, name)
    if values.get("messages") is not None and name in FROM_MESSAGES:
        return
    if name in RUN_FIELDS:
        if values.get("input") is None:
            raise source.error(
                number,
                f'missing required field "{field_map.get("messages", "messages")}"',
                hint=f"the rubric requires {requires}: give the conversation as messages "
                '(or an "input": a conversation of one turn)',
            )
        return
    if name not in values:
        raise source.error(
            number,
            f'missing required field "{key}"',
            hint=f"the rubric requires {requires}; use --field {name}=COLUMN to map another name",
        )
    if values[name] is None:
        empty = (
            "write [] when the task expects no tool call"
            if name == "expected_tool_calls"
            else f'write "" for an empty {name} (it is judged as given)'
        )
        raise source.error(number, f'"{key}" is null', hint=f"{empty}, or drop the case")


def not_text(source: RowSource, number: int, name: str, key: str, value: object) -> DatasetError:
    """A text field (input, output, reference, category; `key` in the file) holding another
    type.
    """
    kind = type(value).__name__
    if isinstance(value, list | dict) and name in ("input", "output"):
        hint = (
            f'write "{key}" as one text; a conversation goes in "messages": '
            '[{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]'
        )
    elif isinstance(value, list | dict):
        hint = f'write "{key}" as one text, e.g. "{key}": "some text"'
    elif isinstance(value, int | float | bool | None) and source.format is Format.JSONL:
        hint = f"write it as text: {json.dumps(key)}: {json.dumps(json.dumps(value))}"
    else:
        hint = f'store "{key}" as text (a string column)'
    return source.error(number, f'"{key}" must be a string, got {kind}', hint=hint)


def conversation_turns(source: RowSource, number: int, values: dict[str, Any]) -> list[Turn] | None:
    """The case's `messages` as turns (None when null), or DatasetError naming the line."""
    raw = values["messages"]
    if raw is None:
        return None
    clash = " and ".join(
        f'"{name}"' for name in ("input", "output") if values.get(name) is not None
    )
    if clash:
        raise source.error(
            number,
            f'a case has "messages" or {clash}, not both',
            hint="in a conversation, the user turns are the input and the assistant turns "
            "the answers",
        )
    try:
        # A run of a case offered tools is an agent's, even one that made no call.
        return parse_turns(raw, agent=values.get("tools") is not None)
    except TurnsError as err:
        raise source.error(number, err.problem, hint=err.hint) from None


def agent_fields(source: RowSource, number: int, values: dict[str, Any]) -> None:
    """An agent's run's `tools` (the schemas offered) and `expected_tool_calls` read in
    place (null as absent), or DatasetError naming the row and the fix.
    """
    try:
        if values.get("tools") is not None:
            values["tools"] = parse_tools(values["tools"])
        if values.get("expected_tool_calls") is not None:
            values["expected_tool_calls"] = parse_expected_tool_calls(
                values["expected_tool_calls"], '"expected_tool_calls"'
            )
    except ToolsError as err:
        raise source.error(number, err.problem, hint=err.hint) from None


def checklist_items(source: RowSource, number: int, values: dict[str, Any], key: str) -> None:
    """A case's checklist (`rubric_items`, `key` in the file) read in place (null as
    absent), or DatasetError naming the row and the fix.
    """
    if values.get("rubric_items") is None:
        return
    try:
        values["rubric_items"] = parse_rubric_items(values["rubric_items"], f'"{key}"')
    except RubricItemsError as err:
        raise source.error(number, err.problem, hint=err.hint) from None

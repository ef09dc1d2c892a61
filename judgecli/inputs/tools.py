"""Tool calls as agents' exports write them: the calls an assistant turn made
(`tool_calls`), the calls a case expects (`expected_tool_calls`), and the tool schemas it was
offered (`tools`), read tolerantly and into one shape.

Real exports are messy, and all of it is legitimate data. OpenAI's chat format nests a call
as `{"id", "type": "function", "function": {"name", "arguments"}}` with the arguments as JSON
*text* (compact or spaced), often with extra keys (`index`, `function_call: null`); hand-written
expectations say `{"name", "arguments"}` with the arguments as an object. Both become one
`ToolCall` whose `arguments` are the parsed JSON value, so two calls are compared by value,
never by how their text was spaced. Arguments text that is not JSON is kept as a string
(a model can write broken arguments: that is the model's mistake to judge, not bad input).
What cannot be read as a call at all (no name) is a `ToolsError`: the case's file:line and
the fix are added where the case is read.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from judgecli.inputs.shape_error import ShapeError

CALL_SHAPE = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
OPENAI_CALL_SHAPE = (
    '{"id": "call_1", "type": "function", '
    '"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}'
)


class ToolsError(ShapeError):
    """A tool call or tool list that cannot be read; the message says what, the hint how."""


class ToolCall(BaseModel):
    """One call of a tool: its name and its arguments (the parsed JSON value)."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: Any = None
    """The arguments as a JSON value (usually an object); a string when the text written
    was not JSON (kept as written: `arguments_text`)."""
    arguments_text: str | None = None
    """The arguments as the export wrote them, when it wrote text (OpenAI's format)."""
    id: str | None = None
    """The call's id (OpenAI's `call_…`), which a tool turn's `tool_call_id` answers."""
    argument_schemas: dict[str, Any] | None = None
    """An expected call: a JSON Schema per argument, which the value of that argument in
    the call made must validate against (instead of equalling a value given in
    `arguments`); docs/tool-calls.md."""

    def render(self) -> str:
        """The call as a judge reads it: `name(arguments as compact JSON)`."""
        return f"{self.name}({arguments_json(self.arguments)})"


def arguments_json(arguments: Any) -> str:
    """Arguments as compact JSON (a string that was not JSON is shown as that string)."""
    if arguments is None:
        return ""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def parse_arguments(value: Any) -> tuple[Any, str | None]:
    """(the arguments' value, the text they came as): JSON text is parsed, an object or a
    list is kept, None and "" are no arguments.
    """
    if isinstance(value, str):
        if not value.strip():
            return None, value
        try:
            return json.loads(value), value
        except json.JSONDecodeError:
            return value, value
    return value, None


def parse_tool_call(value: Any, where: str) -> ToolCall:
    """One call, in OpenAI's nested shape or the flat `{"name", "arguments"}` one."""
    if not isinstance(value, dict):
        raise ToolsError(
            f"{where} must be an object, got {type(value).__name__}",
            hint=f"write a call as {CALL_SHAPE}",
        )
    nested = value.get("function")
    body = nested if isinstance(nested, dict) else value
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ToolsError(
            f"{where} has no tool name",
            hint=f"write a call as {CALL_SHAPE} (or OpenAI's {OPENAI_CALL_SHAPE})",
        )
    arguments, text = parse_arguments(body.get("arguments", body.get("args")))
    call_id = value.get("id")
    return ToolCall(
        name=name,
        arguments=arguments,
        arguments_text=text,
        id=call_id if isinstance(call_id, str) else None,
    )


def parse_tool_calls(value: Any, where: str) -> list[ToolCall]:
    """A list of calls (null is none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ToolsError(
            f"{where} must be a list of calls, got {type(value).__name__}",
            hint=f"write it as [{CALL_SHAPE}]",
        )
    return [parse_tool_call(call, f"{where}[{i}]") for i, call in enumerate(value)]


SCHEMA_SHAPE = (
    '{"name": "search", "arguments": {"limit": 5}, '
    '"argument_schemas": {"query": {"type": "string", "pattern": "(?i)paris"}}}'
)


def parse_expected_tool_calls(value: Any, where: str) -> list[ToolCall]:
    """The calls a case expects: calls as `parse_tool_calls` reads them, each optionally
    with `argument_schemas`, a JSON Schema per argument (checked here to be one, so a
    broken schema is bad input, not a miss).
    """
    if not isinstance(value, list):
        return parse_tool_calls(value, where)
    calls = []
    for i, raw in enumerate(value):
        call = parse_tool_call(raw, f"{where}[{i}]")
        schemas = raw.get("argument_schemas") if isinstance(raw, dict) else None
        if schemas is not None:
            check_argument_schemas(call, schemas, f"{where}[{i}].argument_schemas")
            call = call.model_copy(update={"argument_schemas": schemas})
        calls.append(call)
    return calls


def check_argument_schemas(call: ToolCall, schemas: Any, where: str) -> None:
    """ToolsError unless `schemas` maps argument names to valid JSON Schemas (draft 2020-12
    unless a schema's `$schema` says otherwise) of arguments not also given a value.
    """
    if not isinstance(schemas, dict):
        raise ToolsError(
            f"{where} must map argument names to JSON Schemas, got {type(schemas).__name__}",
            hint=f"write an expected call as {SCHEMA_SHAPE}",
        )
    if call.arguments is not None and not isinstance(call.arguments, dict):
        raise ToolsError(
            f"{where}: the call's arguments must be an object to add schemas to",
            hint=f"write an expected call as {SCHEMA_SHAPE}",
        )
    both = sorted(set(schemas) & set(call.arguments or {}))
    if both:
        raise ToolsError(
            f"{where}: {', '.join(both)} has both a value (arguments) and a schema",
            hint="give each argument a value to equal or a schema to validate against, not both",
        )
    # Only a dataset with schemas pays for importing jsonschema.
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    for name, schema in schemas.items():
        if not isinstance(schema, dict | bool):
            raise ToolsError(
                f"{where}.{name} must be a JSON Schema (an object), got {type(schema).__name__}",
                hint='e.g. {"type": "string", "pattern": "(?i)paris"}',
            )
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as err:
            raise ToolsError(
                f"{where}.{name} is not a valid JSON Schema: {err.message}",
                hint="see https://json-schema.org/understanding-json-schema/ for the keywords",
            ) from None


def parse_tools(value: Any) -> list[dict[str, Any]]:
    """The tool schemas a run was offered (`tools`), kept as given: OpenAI's
    `{"type": "function", "function": {"name", "description", "parameters"}}` or a flat
    `{"name", "description", "parameters"}`. Each must name its tool.
    """
    if not isinstance(value, list):
        raise ToolsError(
            f'"tools" must be a list of tool schemas, got {type(value).__name__}',
            hint='write it as [{"type": "function", "function": {"name": "...", '
            '"parameters": {...}}}]',
        )
    for i, tool in enumerate(value):
        body = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise ToolsError(
                f'"tools"[{i}] has no tool name',
                hint='a tool schema is {"type": "function", "function": {"name": "...", '
                '"description": "...", "parameters": {...}}}',
            )
    return list(value)


def tool_name(schema: dict[str, Any]) -> str:
    """A tool schema's name (either shape)."""
    body = schema.get("function", schema)
    return str(body["name"])

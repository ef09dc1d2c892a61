"""One trace's GenAI spans as a case's fields: the agent's run as OpenAI-format `messages`
(read by inputs.conversation as any export is), the tools it was offered, and the root
span's attributes as metadata (docs/agents.md, "OpenTelemetry traces").

What is read, per the GenAI semantic conventions (v1.37 to v1.41 of
open-telemetry/semantic-conventions, docs/gen-ai/gen-ai-spans.md; the message shapes are
its gen-ai-input-messages.json and gen-ai-output-messages.json):

* inference spans (`chat`, `text_completion`, `generate_content`): `gen_ai.system_instructions`,
  `gen_ai.input.messages` and `gen_ai.output.messages`, structured or as JSON text; each
  message's `parts` become a turn's text (`text`), its `tool_calls` (`tool_call`) and `tool`
  turns (`tool_call_response`); `reasoning` parts (a model's thinking) are not turns; any
  other part (an image, a file) is shown as `[<type> part not shown]`, never dropped silently;
* the older conventions (up to v1.27): the `gen_ai.prompt` and `gen_ai.completion`
  attributes, on the span or on its `gen_ai.content.prompt` / `gen_ai.content.completion`
  events, as OpenAI-format messages in JSON text;
* `execute_tool` spans: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
  `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (a failed span's status
  message, `Error: ...`, when it has no result);
* `gen_ai.tool.definitions` (the first span that has it): the case's `tools`.

The run is stitched from the inference spans in start order: each call's input messages
carry the history, so of each only what the run does not end with yet is added (the
longest overlap of the run's end with the input's start: a full history adds the new
turns, an input of new turns alone adds them all), then its first output message. A tool
span whose call id no tool turn answers adds its result after the call; a tool span whose
call no inference span recorded adds the call and its result where it ran (after the
inference span that ended before it started).
"""

from __future__ import annotations

import json
from typing import Any

from judgecli.inputs.otel_spans import Span, Trace
from judgecli.inputs.shape_error import ShapeError

INFERENCE = frozenset({"chat", "text_completion", "generate_content"})
CONTENT = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.prompt",
        "gen_ai.completion",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
)
"""Attributes that hold content: read into the run, never copied into metadata."""
CASE_KEYS = frozenset({"id", "input", "output", "reference", "context", "category", "messages"})
CAPTURE_HINT = (
    "turn message content capture on in the instrumentation (for the OpenTelemetry GenAI "
    "instrumentations: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) and export again"
)

Message = dict[str, Any]


class TraceError(ShapeError):
    """A trace that cannot be read as a run; the message says what, the hint how."""


def structured(value: Any, span: Span, name: str) -> Any:
    """An attribute that holds a structure, recorded as it is or as JSON text."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as err:
        raise TraceError(
            f'{span.shown}: "{name}" is not JSON ({err.msg}, character {err.pos + 1})',
            hint="record the attribute structured, or as JSON text",
        ) from None


def as_text(value: Any) -> str:
    """A tool's response as a tool turn's text: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def part_turns(message: dict[str, Any], where: str) -> list[Message]:
    """One semantic-conventions message (`role`, `parts`) as OpenAI-format messages: the
    turn with its text and calls, then a tool turn per `tool_call_response` part.
    """
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise TraceError(f'{where} has no "parts" list', hint='a message is {"role", "parts"}')
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    answers: list[Message] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(part, dict) or not isinstance(kind, str):
            raise TraceError(f'{where}: a part without a "type": {part!r}')
        if kind == "text":
            texts.append(as_text(part.get("content")))
        elif kind in ("tool_call", "function_call"):
            function = {"name": part.get("name"), "arguments": part.get("arguments")}
            calls.append({"id": part.get("id"), "type": "function", "function": function})
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            answers.append(
                {"role": "tool", "tool_call_id": part.get("id"), "content": as_text(response)}
            )
        elif kind != "reasoning":
            texts.append(f"[{kind} part not shown]")
    role = message.get("role")
    if answers and not texts and not calls:
        return answers
    turn: Message = {"role": role, "content": "\n".join(texts) if texts else None}
    if calls:
        turn["tool_calls"] = calls
    if isinstance(message.get("name"), str):
        turn["name"] = message["name"]
    return [turn, *answers]


def turns_of(value: Any, span: Span, name: str) -> list[Message]:
    """A list of messages in either convention as OpenAI-format messages."""
    messages = structured(value, span, name)
    if not isinstance(messages, list):
        raise TraceError(f'{span.shown}: "{name}" must be a list of messages')
    found: list[Message] = []
    for i, message in enumerate(messages):
        where = f'{span.shown}: "{name}"[{i}]'
        if not isinstance(message, dict):
            raise TraceError(f"{where} must be an object")
        if "parts" in message:
            found += part_turns(message, where)
        elif "content" in message or "tool_calls" in message:
            # The older conventions recorded OpenAI's own shape (`content`, `tool_calls`).
            found.append(dict(message))
        else:
            raise TraceError(
                f'{where} has no "parts" list',
                hint='a message is {"role": ..., "parts": [{"type": "text", "content": ...}]}',
            )
    return found


def content_attribute(span: Span, name: str) -> Any:
    """A content attribute of the span, or of its older `gen_ai.content.*` event."""
    if name in span.attributes:
        return span.attributes[name]
    for _, values in span.events:
        if name in values:
            return values[name]
    return None


def inference(span: Span) -> tuple[list[Message], list[Message]] | None:
    """An inference span's (input messages, output messages), None when it records none."""
    system = span.attributes.get("gen_ai.system_instructions")
    inputs = content_attribute(span, "gen_ai.input.messages")
    outputs = content_attribute(span, "gen_ai.output.messages")
    if inputs is None and outputs is None:
        inputs = content_attribute(span, "gen_ai.prompt")
        outputs = content_attribute(span, "gen_ai.completion")
    if inputs is None and outputs is None:
        return None
    shown: list[Message] = []
    if system is not None:
        parts = structured(system, span, "gen_ai.system_instructions")
        text = part_turns({"role": "system", "parts": parts}, f"{span.shown} system")[0]
        shown.append({"role": "system", "content": text["content"] or ""})
    if inputs is not None:
        shown += turns_of(inputs, span, "gen_ai.input.messages")
    said: list[Message] = []
    if outputs is not None:
        choices = structured(outputs, span, "gen_ai.output.messages")
        # Each output message is one choice: the run went on with the first.
        first = choices[:1] if isinstance(choices, list) else choices
        said = turns_of(first, span, "gen_ai.output.messages")
    return shown, said


def key(message: Message) -> str:
    """A message's identity for stitching (its role, text, calls and call id)."""
    kept = {k: message.get(k) for k in ("role", "content", "tool_calls", "tool_call_id")}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str)


def overlap(run: list[str], inputs: list[str]) -> int:
    """The longest end of `run` that `inputs` starts with."""
    for size in range(min(len(run), len(inputs)), 0, -1):
        if run[-size:] == inputs[:size]:
            return size
    return 0


def tool_result(span: Span) -> str:
    """What a tool span returned: its result, else a failure's message, else ""."""
    result = span.attributes.get("gen_ai.tool.call.result")
    if result is not None:
        return as_text(result)
    if span.status.get("code") in (2, "STATUS_CODE_ERROR"):
        reason = span.status.get("message") or next(
            (v.get("exception.message") for n, v in span.events if n == "exception"), ""
        )
        return f"Error: {reason}".rstrip(": ")
    return ""


def stitched(trace: Trace) -> tuple[list[Message], list[tuple[int, int]]]:
    """The run from the trace's inference spans, and where each span's output ended (its
    end time, the run's length then), for placing tool spans.
    """
    run: list[Message] = []
    keys: list[str] = []
    ends: list[tuple[int, int]] = []
    for span in sorted(trace.spans, key=lambda s: s.start):
        recorded = inference(span)
        if recorded is None:
            continue
        inputs, outputs = recorded
        shown = [key(m) for m in inputs]
        kept = overlap(keys, shown)
        for message in [*inputs[kept:], *outputs]:
            run.append(message)
            keys.append(key(message))
        ends.append((span.end, len(run)))
    return run, ends


def tool_spans(trace: Trace) -> list[Span]:
    """The trace's tool executions, in start order."""
    tools = [
        span
        for span in trace.spans
        if span.attributes.get("gen_ai.operation.name") == "execute_tool"
        or ("gen_ai.tool.name" in span.attributes and inference(span) is None)
    ]
    return sorted(tools, key=lambda s: s.start)


def with_tool_spans(trace: Trace, run: list[Message], ends: list[tuple[int, int]]) -> None:
    """Add, in place, what the tool spans say and the inference spans did not."""
    inserts: list[tuple[int, list[Message]]] = []
    answered = {m.get("tool_call_id") for m in run if m.get("role") == "tool"}
    for span in tool_spans(trace):
        name = span.attributes.get("gen_ai.tool.name")
        if not isinstance(name, str) or not name:
            raise TraceError(f'{span.shown}: an execute_tool span without "gen_ai.tool.name"')
        call_id = span.attributes.get("gen_ai.tool.call.id")
        if call_id is not None and call_id in answered:
            continue
        result = {
            "role": "tool",
            "tool_call_id": call_id,
            "name": name,
            "content": tool_result(span),
        }
        caller = next(
            (
                at
                for at, m in enumerate(run)
                if call_id is not None
                and any(c.get("id") == call_id for c in m.get("tool_calls") or [])
            ),
            None,
        )
        if caller is not None:
            after = caller + 1
            while after < len(run) and run[after].get("role") == "tool":
                after += 1
            inserts.append((after, [result]))
            continue
        arguments = span.attributes.get("gen_ai.tool.call.arguments")
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        made = {"role": "assistant", "content": None, "tool_calls": [call]}
        at = max((length for end, length in ends if end <= span.start), default=len(run))
        inserts.append((at, [made, result]))
    # From the end, so each position still means what it meant; of two at one position,
    # the later first, so the earlier ends up first.
    ordered = sorted(enumerate(inserts), key=lambda item: (item[1][0], item[0]), reverse=True)
    for _, (at, messages) in ordered:
        run[at:at] = messages


def named_results(run: list[Message]) -> None:
    """Give, in place, each tool turn without a name its call's tool name (the conventions'
    tool messages carry only the call id), so the judge sees which tool answered.
    """
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for message in run
        for call in message.get("tool_calls") or []
        if isinstance(call, dict) and call.get("id")
    }
    for message in run:
        if message.get("role") == "tool" and not message.get("name"):
            name = names.get(message.get("tool_call_id"))
            if isinstance(name, str):
                message["name"] = name


def tool_definitions(trace: Trace) -> list[Any] | None:
    """The tools the run was offered (`gen_ai.tool.definitions`), from the first span
    that records them.
    """
    for span in trace.spans:
        if "gen_ai.tool.definitions" in span.attributes:
            tools = structured(
                span.attributes["gen_ai.tool.definitions"], span, "gen_ai.tool.definitions"
            )
            if not isinstance(tools, list):
                raise TraceError(f'{span.shown}: "gen_ai.tool.definitions" must be a list')
            return tools
    return None


def root_span(trace: Trace) -> Span:
    """The trace's root: the earliest span whose parent is not in the trace."""
    ids = {span.span_id for span in trace.spans}
    roots = [span for span in trace.spans if span.parent_id not in ids] or trace.spans
    return min(roots, key=lambda s: s.start)


def trace_fields(trace: Trace) -> dict[str, Any]:
    """The case of one trace: `id` (the trace id), `messages`, `tools` (when recorded),
    and the root span's resource and span attributes (content attributes left out) as
    metadata, so that `--field id=ATTRIBUTE` can join two versions' runs on a task id.
    """
    run, ends = stitched(trace)
    if not run and not tool_spans(trace):
        raise TraceError(
            "its GenAI spans record no messages (gen_ai.input.messages, "
            "gen_ai.output.messages or gen_ai.prompt): the run cannot be shown to a judge",
            hint=CAPTURE_HINT,
        )
    with_tool_spans(trace, run, ends)
    named_results(run)
    if not any(m.get("role") == "user" for m in run):
        raise TraceError(
            "its GenAI spans record no user message: the run's task cannot be shown to a judge",
            hint=CAPTURE_HINT,
        )
    root = root_span(trace)
    fields: dict[str, Any] = {"id": trace.trace_id, "messages": run, "trace_id": trace.trace_id}
    tools = tool_definitions(trace)
    if tools is not None:
        fields["tools"] = tools
    for name, value in {**root.resource, **root.attributes}.items():
        if name not in CONTENT and name not in CASE_KEYS and name not in fields:
            fields[name] = value
    return fields

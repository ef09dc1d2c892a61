"""OpenTelemetry GenAI spans as cases (issue 32): an OTLP JSON export read into one case per
trace, its run stitched from the inference and tool spans of the semantic conventions (the
current `gen_ai.input.messages`/`gen_ai.output.messages` and the older `gen_ai.prompt`/
`gen_ai.completion` events), malformed exports refused naming the line or the span."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import iter_cases, scan_dataset
from judgecli.inputs.pairs import iter_pairs, scan_pairs
from judgecli.inputs.rows import Format, format_of

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": v}


def attrs(**named) -> list[dict]:
    return [{"key": k.replace("__", "."), "value": value(v)} for k, v in named.items()]


def span(span_id, name, start, end, parent="", trace=TRACE, events=(), status=None, **named):
    found = {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attrs(**named),
    }
    if events:
        found["events"] = [{"name": n, "attributes": attrs(**a)} for n, a in events]
    if status:
        found["status"] = status
    return found


def document(*spans, service="agent", version="1"):
    resource = {"attributes": attrs(service__name=service, service__version=version)}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}]}
        ]
    }


def parts(role, *items, **extra):
    return {"role": role, "parts": list(items), **extra}


def text(content):
    return {"type": "text", "content": content}


USER = parts("user", text("Weather in Paris?"))
CALL = parts(
    "assistant",
    {
        "type": "tool_call",
        "id": "call_1",
        "name": "get_weather",
        "arguments": {"location": "Paris"},
    },
)
RESULT = parts("tool", {"type": "tool_call_response", "id": "call_1", "response": "rainy, 57°F"})
ANSWER = parts("assistant", text("It is rainy and 57°F in Paris."), finish_reason="stop")
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object"},
    }
]


def agent_spans(trace=TRACE, task="t-1", answer=ANSWER):
    """An agent run as a current instrumentation records it: an agent span, two chat spans
    (each with the history so far, as JSON text) and the tool span between them."""
    system = json.dumps([text("You are a weather agent.")])
    return [
        span(
            "a1",
            "invoke_agent weather",
            100,
            900,
            trace=trace,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="weather",
            task__id=task,
        ),
        span(
            "c1",
            "chat gpt-4o",
            110,
            200,
            "a1",
            trace=trace,
            gen_ai__operation__name="chat",
            gen_ai__system_instructions=system,
            gen_ai__input__messages=json.dumps([USER]),
            gen_ai__output__messages=json.dumps([CALL | {"finish_reason": "tool_call"}]),
            gen_ai__tool__definitions=json.dumps(TOOLS),
        ),
        span(
            "t1",
            "execute_tool get_weather",
            210,
            300,
            "a1",
            trace=trace,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            gen_ai__tool__call__id="call_1",
            gen_ai__tool__call__result="rainy, 57°F",
        ),
        span(
            "c2",
            "chat gpt-4o",
            310,
            400,
            "a1",
            trace=trace,
            gen_ai__operation__name="chat",
            gen_ai__system_instructions=system,
            gen_ai__input__messages=json.dumps([USER, CALL, RESULT]),
            gen_ai__output__messages=json.dumps(
                [answer, parts("assistant", text("another choice"))]
            ),
        ),
    ]


def write_otel(tmp_path: Path, *documents, name="run.otel.json", lines=False) -> Path:
    path = tmp_path / name
    if lines:
        path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    else:
        path.write_text(json.dumps(documents[0], indent=2), encoding="utf-8")
    return path


def cases(path, requires=("trajectory",), field_map=None):
    scan = scan_dataset(path, requires=list(requires), field_map=field_map)
    return list(iter_cases(scan, requires=list(requires), field_map=field_map))


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("run.otel.json", Format.OTEL),
        ("RUN.OTLP.JSON", Format.OTEL),
        ("runs.otel.jsonl", Format.OTEL),
        ("runs.otlp.jsonl", Format.OTEL),
        ("runs.json", Format.JSONL),
        ("otel.jsonl", Format.JSONL),
    ],
)
def test_an_export_is_known_by_its_name(name, kind):
    assert format_of(name) is kind


def test_a_trace_is_one_case_whose_run_is_stitched_from_its_spans(tmp_path):
    unrelated = span("h1", "GET /health", 1, 2, trace="ffff", http__method="GET")
    path = write_otel(tmp_path, document(*agent_spans(), unrelated))
    (case,) = cases(path)
    assert case.id == TRACE
    assert [(t.role.value, t.content) for t in case.messages] == [
        ("system", "You are a weather agent."),
        ("user", "Weather in Paris?"),
        ("assistant", ""),
        ("tool", "rainy, 57°F"),
        ("assistant", "It is rainy and 57°F in Paris."),
    ]
    call = case.messages[2].tool_calls[0]
    assert (call.name, call.arguments, call.id) == ("get_weather", {"location": "Paris"}, "call_1")
    # The conventions' tool message names no tool: its call's name is given to it.
    assert case.messages[3].name == "get_weather"
    assert case.tools == TOOLS
    assert case.metadata == {
        "trace_id": TRACE,
        "service.name": "agent",
        "service.version": "1",
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "task.id": "t-1",
    }
    assert '<tool name="get_weather">\nrainy, 57°F\n</tool>' in case.field_text("trajectory")


def test_one_document_a_line_as_the_collectors_file_exporter_writes(tmp_path):
    spans = agent_spans()
    path = write_otel(
        tmp_path, document(*spans[:2]), document(*spans[2:]), name="r.otel.jsonl", lines=True
    )
    (case,) = cases(path)
    assert case.field_text("output") == "It is rainy and 57°F in Paris."
    assert case.line == 1


def test_the_older_prompt_and_completion_events_are_read(tmp_path):
    prompt = json.dumps([{"role": "user", "content": "2+2?"}])
    completion = json.dumps([{"role": "assistant", "content": "4"}])
    old = span(
        "s1",
        "openai.chat",
        1,
        2,
        gen_ai__system="openai",
        events=[
            ("gen_ai.content.prompt", {"gen_ai.prompt": prompt}),
            ("gen_ai.content.completion", {"gen_ai.completion": completion}),
        ],
    )
    (case,) = cases(write_otel(tmp_path, document(old)), requires=("input", "output"))
    assert (case.field_text("input"), case.field_text("output")) == ("2+2?", "4")


def test_a_tool_span_the_inference_spans_did_not_record_is_added_where_it_ran(tmp_path):
    spans = agent_spans()
    # The second chat span saw only the new messages: no history, no tool result.
    spans[3]["attributes"] = attrs(
        gen_ai__operation__name="chat",
        gen_ai__input__messages=json.dumps([parts("user", text("And in Rome?"))]),
        gen_ai__output__messages=json.dumps([parts("assistant", text("Sunny in Rome."))]),
    )
    failed = span(
        "t2",
        "execute_tool get_weather",
        410,
        420,
        "a1",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="call_9",
        gen_ai__tool__call__arguments='{"location":"Rome"}',
        status={"code": 2, "message": "timeout"},
    )
    late = span(
        "t3",
        "execute_tool get_weather",
        500,
        510,
        "a1",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
    )
    (case,) = cases(write_otel(tmp_path, document(*spans, failed, late)))
    shown = [(t.role.value, t.content, [c.name for c in t.tool_calls]) for t in case.messages]
    assert shown == [
        ("system", "You are a weather agent.", []),
        ("user", "Weather in Paris?", []),
        ("assistant", "", ["get_weather"]),
        ("tool", "rainy, 57°F", []),
        ("user", "And in Rome?", []),
        ("assistant", "Sunny in Rome.", []),
        # Ran after the second chat span ended: after its answer, in time order.
        ("assistant", "", ["get_weather"]),
        ("tool", "Error: timeout", []),
        ("assistant", "", ["get_weather"]),
        ("tool", "", []),
    ]


def test_two_versions_exports_join_on_a_task_attribute_with_field(tmp_path):
    old = write_otel(tmp_path, document(*agent_spans()), name="a.otel.json")
    changed = parts("assistant", text("Paris: rain, 57°F."))
    new = write_otel(
        tmp_path, document(*agent_spans(trace="99", answer=changed)), name="b.otel.json"
    )
    field_map = {"id": "task.id"}
    scan = scan_pairs(old, new, requires=["output"], field_map=field_map)
    (pair,) = iter_pairs(scan, requires=["output"], field_map=field_map)
    assert pair.id == "t-1"
    assert (pair.old.field_text("output"), pair.new.field_text("output")) == (
        "It is rainy and 57°F in Paris.",
        "Paris: rain, 57°F.",
    )


@pytest.mark.parametrize(
    ("make", "where", "problem"),
    [
        pytest.param(
            lambda: '{"resourceSpans": [}', ":1:", "not JSON (Expecting value", id="not-json"
        ),
        pytest.param(
            lambda: json.dumps(document(*agent_spans())) + "\n{broken\n",
            ":2:",
            "not JSON (Expecting property name",
            id="a-broken-line",
        ),
        pytest.param(
            lambda: json.dumps({"spans": []}),
            ":1: ",
            "not an OTLP JSON export of traces",
            id="not-otlp",
        ),
        pytest.param(
            lambda: json.dumps(
                document(span("x", "chat", 1, 2, gen_ai__input__messages="[{")), indent=2
            ),
            f": trace {TRACE}: ",
            'span x ("chat"): "gen_ai.input.messages" is not JSON',
            id="messages-not-json",
        ),
        pytest.param(
            lambda: json.dumps(
                document(span("x", "chat", 1, 2, gen_ai__input__messages='[{"role": "user"}]'))
            ),
            f":1: trace {TRACE}: ",
            'span x ("chat"): "gen_ai.input.messages"[0] has no "parts" list',
            id="message-without-parts",
        ),
        pytest.param(
            lambda: json.dumps(
                document(span("x", "chat gpt-4o", 1, 2, gen_ai__operation__name="chat"))
            ),
            f":1: trace {TRACE}: ",
            "its GenAI spans record no messages",
            id="content-capture-off",
        ),
        pytest.param(
            lambda: json.dumps(document(span("h", "GET /", 1, 2, http__method="GET"))),
            ": ",
            "no cases: no trace has a GenAI span",
            id="no-genai-trace",
        ),
    ],
)
def test_a_malformed_export_is_an_error_naming_the_line_or_the_trace_and_span(
    tmp_path, make, where, problem
):
    path = tmp_path / "bad.otel.json"
    path.write_text(make(), encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        cases(path)
    message = caught.value.message
    assert message.startswith(f"{path}{where}"), message
    assert problem in message
    assert caught.value.hint


def test_a_message_shape_judge_cannot_read_names_the_trace(tmp_path):
    bad_role = span(
        "x",
        "chat",
        1,
        2,
        gen_ai__input__messages=json.dumps([USER, parts("robot", text("hi"))]),
        gen_ai__output__messages=json.dumps([ANSWER]),
    )
    path = tmp_path / "r.otel.jsonl"
    path.write_text(json.dumps(document(bad_role)) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        cases(path)
    assert caught.value.message.startswith(f'{path}:1: trace {TRACE}: "messages"[1]: role must be')

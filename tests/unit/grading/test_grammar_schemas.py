"""Every verdict schema judge sends holds a judge to it under a grammar (issue 29 §7).

llama.cpp's servers turn a JSON schema into a grammar that decides which tokens the model may
write, and a keyword the converter skips is no bound at all: SmolLM2 on llama-cpp-python's
server wrote `"confidence": 10` under `{"type": "number", "minimum": 0, "maximum": 1}` and
lost 2 of 8 pairs. These tests check every schema judge can send — each library rubric and
each rubric shape, in each form (strict `json_schema`, `json_object` + schema, the prompt's
copy) — against a table of what the converters enforce, and that whatever a schema allows,
judge reads as a verdict.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from judgecli.errors import RubricError
from judgecli.grading.checklist import items_format, items_messages, items_schema
from judgecli.grading.prompt import (
    CONFIDENCE_POINTS,
    SCHEMA_INTRO,
    build_messages,
    build_pair_messages,
    preview_messages,
    response_format,
    verdict_schema,
)
from judgecli.inputs.dataset import Case
from judgecli.inputs.rubric_file import load_rubric, parse_rubric
from judgecli.inputs.rubric_items import RubricItem
from judgecli.inputs.rubric_library import library
from judgecli.judge.formats import REASONING_MAX_CHARS, FormatMode, wire_format
from judgecli.rubric import Rubric, RubricKind, Scale
from judgecli.simulator.verdicts import verdict_content
from judgecli.verdict import VerdictError, parse_items_verdict, parse_verdict

# What a grammar-constrained server enforces, by JSON type: the keywords both llama.cpp
# converters turn into grammar rules — llama-cpp-python 0.3.36's (llama_cpp/llama_grammar.py,
# the one its server uses) and llama.cpp's own (common/json-schema-to-grammar.cpp, llama-server).
# Left out on purpose:
# - minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf: llama-cpp-python skips
#   them ("TODO: support minimum, maximum..."); llama.cpp enforces min/max on integers only;
# - pattern: a regex subset; on one it cannot convert, llama-cpp-python's server falls back to
#   any JSON without a word;
# - minLength, format, const, anyOf, $ref: enforced, but nothing in a verdict needs them.
# A boolean (a checklist item's `met`) is bounded by itself: both converters' PRIMITIVE_RULES
# write it as ("true" | "false").
ENFORCED: dict[str, frozenset[str]] = {
    "object": frozenset({"type", "properties", "required", "additionalProperties"}),
    "string": frozenset({"type", "enum", "maxLength"}),
    "integer": frozenset({"type", "enum"}),
    "number": frozenset({"type", "enum"}),
    "boolean": frozenset({"type"}),
}
# llama.cpp refuses a repetition longer than this ("exceeds sane defaults"); llama-cpp-python's
# server then crashed (judgecli/judge/formats.py).
GRAMMAR_MAX_REPEAT = 1000

SHAPES = {
    "integer-scale": "kind: pointwise\nscale: {min: 1, max: 4}",
    "integer-0-100": "kind: pointwise\nscale: {min: 0, max: 100}",
    "continuous-0-1": "kind: pointwise\nscale: {min: 0, max: 1, integer: false}",
    "continuous-1-10": "kind: pointwise\nscale: {min: 1, max: 10, integer: false}",
    "continuous-negative": "kind: pointwise\nscale: {min: -1, max: 1, integer: false}",
    "criteria": "kind: pointwise\nscale: {min: 1, max: 5}\n"
    "criteria: [{name: accuracy, weight: 2}, {name: clarity}]",
    "criteria-continuous": "kind: pointwise\nscale: {min: 0, max: 1, integer: false}\n"
    "criteria: [{name: grounded}, {name: complete}]",
    "binary": "kind: binary\nchoices: [PASS, FAIL, UNSURE]",
    "turns-each": "kind: pointwise\nscale: {min: 1, max: 5}\nturns: each\naggregate: min",
    "pairwise": "kind: pairwise",
}
TEMPLATES = {
    RubricKind.PAIRWISE: "{input} A: {output_a} B: {output_b}",
    RubricKind.POINTWISE: "{input} {output}",
    RubricKind.BINARY: "{input} {output}",
}


def shape(name: str, *, confidence: bool, feedback: bool) -> Rubric:
    kind = RubricKind(SHAPES[name].split("\n")[0].removeprefix("kind: "))
    text = (
        f"name: {name}\n{SHAPES[name]}\nconfidence: {str(confidence).lower()}\n"
        f"feedback: {str(feedback).lower()}\nprompt:\n  user: {json.dumps(TEMPLATES[kind])}\n"
    )
    return parse_rubric(text, source=f"{name}.yaml")


def every_rubric() -> Iterator[Any]:
    """Each library rubric, and each shape with and without confidence and feedback."""
    for path in library():
        rubric = load_rubric(path)
        if rubric.asks_judge:  # a rubric that only checks tool calls sends no schema
            yield pytest.param(rubric, id=f"library-{path.stem}")
    for name, confidence, feedback in itertools.product(SHAPES, (False, True), (False, True)):
        rubric = shape(name, confidence=confidence, feedback=feedback)
        tail = "-confidence" * confidence + "-feedback" * feedback
        yield pytest.param(rubric, id=f"{name}{tail}")


RUBRICS = list(every_rubric())
LIBRARY_CHECKLIST = next(load_rubric(p) for p in library() if p.stem == "checklist")


def prompt_schema(rubric: Rubric) -> dict[str, Any]:
    """The schema the system message shows the judge."""
    system = preview_messages(rubric, None)[0]["content"]
    block = system.split(SCHEMA_INTRO, 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    return dict(json.loads(block))


def sent_schemas(rubric: Rubric) -> dict[str, dict[str, Any]]:
    """Every form of the rubric's verdict schema that leaves judge, by mode."""
    strict = response_format(rubric)
    grammar = wire_format(FormatMode.JSON_OBJECT_SCHEMA, strict)
    assert grammar is not None
    return {
        FormatMode.JSON_SCHEMA.value: strict["json_schema"]["schema"],
        FormatMode.JSON_OBJECT_SCHEMA.value: grammar["schema"],
        "prompt": prompt_schema(rubric),
    }


def unenforced(node: dict[str, Any], path: str = "") -> list[str]:
    """What in a schema node a grammar would not hold the judge to, one line per problem."""
    kind = node.get("type")
    if kind not in ENFORCED:
        return [f"{path or '/'}: type {kind!r} is none a verdict uses"]
    problems = [
        f"{path or '/'}: {key} is not enforced by llama.cpp's grammar"
        for key in sorted(set(node) - ENFORCED[kind])
    ]
    if kind == "object":
        props = node.get("properties", {})
        if node.get("additionalProperties") is not False:
            problems.append(f"{path or '/'}: other keys are not shut out")
        if node.get("required") != list(props):
            problems.append(f"{path or '/'}: a field judge reads is not required")
        for name, child in props.items():
            problems += unenforced(child, f"{path}/{name}")
    elif kind in ("integer", "number") and not node.get("enum"):
        problems.append(f"{path}: a number with no enum of values is unbounded")
    elif kind == "string" and node.get("maxLength", 0) > GRAMMAR_MAX_REPEAT:
        problems.append(f"{path}: maxLength over llama.cpp's {GRAMMAR_MAX_REPEAT}")
    for value in node.get("enum", []):
        if not matches_type(value, kind):
            problems.append(f"{path}: enum value {value!r} is not of type {kind}")
    return problems


def matches_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return kind == "number" or isinstance(value, int)


def enum_paths(node: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every enum in a schema."""
    if "enum" in node:
        yield path
    for name, child in node.get("properties", {}).items():
        yield from enum_paths(child, (*path, name))


def at(node: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for name in path:
        node = node["properties"][name]
    return node


def reply(node: dict[str, Any], chosen: dict[tuple[str, ...], Any], path=()) -> Any:
    """A reply the schema allows: `chosen` values where given, else each enum's first."""
    if node["type"] == "object":
        return {
            name: reply(child, chosen, (*path, name)) for name, child in node["properties"].items()
        }
    if path in chosen:
        return chosen[path]
    return node["enum"][0] if "enum" in node else f"some {path[-1]}"


def verdict_value(rubric: Rubric, text: str, path: tuple[str, ...]) -> Any:
    verdict = parse_verdict(text, rubric)
    if path[0] == "criteria":
        return verdict.criteria[path[1]]
    value = getattr(verdict, path[0])
    return value.value if path[0] == "winner" else value


# Issue 29: the pairwise rubric asked for `confidence` as a number with minimum 0 and maximum 1,
# which llama-cpp-python's grammar does not enforce; SmolLM2 wrote 10 and lost the pair.
@pytest.mark.parametrize("rubric", RUBRICS)
def test_every_schema_judge_sends_binds_the_judge_under_a_grammar(rubric):
    for mode, schema in sent_schemas(rubric).items():
        assert unenforced(schema) == [], f"{mode}: {unenforced(schema)}"


@pytest.mark.parametrize("rubric", RUBRICS)
def test_the_three_forms_are_one_schema_with_free_text_bounded_only_for_a_grammar(rubric):
    schemas = sent_schemas(rubric)
    assert schemas["prompt"] == schemas["json_schema"] == verdict_schema(rubric)
    grammar = schemas[FormatMode.JSON_OBJECT_SCHEMA.value]
    for name, node in grammar["properties"].items():
        strict = verdict_schema(rubric)["properties"][name]
        if node.get("type") == "string" and "enum" not in node:
            # OpenAI's strict mode refuses keywords it does not support: maxLength is the
            # grammar form's alone.
            assert node == {**strict, "maxLength": node["maxLength"]}
        else:
            assert node == strict


@pytest.mark.parametrize("rubric", RUBRICS)
def test_whatever_a_schema_allows_judge_reads_as_that_verdict(rubric):
    schema = verdict_schema(rubric)
    for path in enum_paths(schema):
        for value in at(schema, path)["enum"]:
            text = json.dumps(reply(schema, {path: value}))
            assert verdict_value(rubric, text, path) == value, (path, value)


def test_confidence_is_one_of_twenty_one_steps_and_results_keep_it_a_number_in_0_1():
    assert CONFIDENCE_POINTS[:3] == (0, 0.05, 0.1)
    assert len(CONFIDENCE_POINTS) == 21
    assert CONFIDENCE_POINTS[-1] == 1
    # JSON writes each as a grammar must match it: 0 and 1, not 0.0 and 1.0.
    assert json.dumps(CONFIDENCE_POINTS[-2:]) == "[0.95, 1]"


def test_a_confidence_between_the_steps_is_read_and_one_outside_0_1_is_re_asked():
    rubric = shape("pairwise", confidence=True, feedback=False)
    verdict = parse_verdict('{"reasoning": "r", "winner": "B", "confidence": 0.87}', rubric)
    assert verdict.confidence == 0.87
    for wrong in ("10", "-0.1", '"high"', "null"):
        with pytest.raises(VerdictError, match="confidence"):
            parse_verdict(f'{{"reasoning": "r", "winner": "B", "confidence": {wrong}}}', rubric)


@pytest.mark.parametrize(
    ("low", "high", "step", "count"),
    [(0, 1, 0.01, 101), (1, 10, 0.1, 91), (0, 0.5, 0.01, 51), (-1, 1, 0.1, 21), (1, 5, 0.1, 41)],
)
def test_a_continuous_scale_is_graded_in_the_round_step_that_gives_at_most_101_points(
    low, high, step, count
):
    points = Scale(min=low, max=high, integer=False).points
    assert len(points) == count
    assert (points[0], points[-1]) == (low, high)
    assert all(b - a == pytest.approx(step) for a, b in itertools.pairwise(points))
    # Written as people write them: 0.07, not 0.07000000000000001.
    assert all(len(repr(p).split(".")[-1]) <= 2 for p in points)


def test_a_continuous_scale_off_the_step_keeps_its_own_ends():
    points = Scale(min=0.125, max=1, integer=False).points
    assert points[:3] == (0.125, 0.13, 0.14)
    assert points[-1] == 1


def test_a_continuous_score_between_the_points_is_read_as_written():
    rubric = shape("continuous-0-1", confidence=False, feedback=False)
    assert parse_verdict('{"reasoning": "r", "score": 0.735}', rubric).score == 0.735
    with pytest.raises(VerdictError, match="outside 0..1"):
        parse_verdict('{"reasoning": "r", "score": 1.5}', rubric)


def test_an_integer_scale_wider_than_101_points_is_refused_with_the_way_out():
    text = "name: wide\nkind: pointwise\nscale: {min: 0, max: 1000}\nprompt: {user: '{output}'}\n"
    with pytest.raises(RubricError) as caught:
        parse_rubric(text, source="wide.yaml")
    message = caught.value.message
    assert message.startswith("wide.yaml:3: scale: ")
    assert "at most 101 points" in message
    assert "0-1000 has 1001" in message
    assert "integer: false" in message
    assert Scale(min=0, max=100).points == tuple(range(101))


def test_a_long_list_of_numbers_takes_one_line_of_the_prompt_and_a_short_one_a_line_each():
    faithful = prompt_text(shape("continuous-0-1", confidence=True, feedback=False))
    assert '"enum": [0, 0.01, 0.02, ' in faithful
    assert '"enum": [0, 0.05, 0.1, ' in faithful
    assert len(faithful.splitlines()) < 40
    # A 1-4 scale is shown as it always was: its prompts, and the cached replies keyed on
    # them, stay the same.
    likert = shape("integer-scale", confidence=False, feedback=False)
    schema = json.dumps(verdict_schema(likert), indent=2)
    assert f"```json\n{schema}\n```" in prompt_text(likert)


def prompt_text(rubric: Rubric) -> str:
    return build_messages(rubric, Case(id="x", input="q", output="a"))[0]["content"]


@pytest.mark.parametrize("name", ["pairwise", "continuous-0-1", "criteria-continuous", "binary"])
@pytest.mark.parametrize("mode", [FormatMode.JSON_SCHEMA, FormatMode.PROMPT])
def test_the_simulator_answers_on_the_schemas_points_as_a_grammar_would(name, mode):
    rubric = shape(name, confidence=True, feedback=True)
    schema = verdict_schema(rubric)
    for i in range(12):
        case = Case(id=f"c{i}", input=f"Why is question {i} asked?", output="word " * (i * 3))
        other = Case(id=f"c{i}", input=case.input, output="Because it is asked. " * i)
        messages = (
            build_pair_messages(rubric, case, other, old_first=i % 2 == 0)
            if rubric.kind is RubricKind.PAIRWISE
            else build_messages(rubric, case)
        )
        body: dict[str, Any] = {"model": "m", "messages": messages}
        rf = wire_format(mode, response_format(rubric))
        if rf is not None:
            body["response_format"] = rf
        text = verdict_content(body, seed=i)
        parse_verdict(text, rubric)
        answered = json.loads(text)
        for path in enum_paths(schema):
            value = answered
            for key in path:
                value = value[key]
            assert value in at(schema, path)["enum"], (path, value)


# Issue 32: a checklist's items asked at once: one object of every item's verdict by number.
@pytest.mark.parametrize("count", [1, 3, 20])
def test_the_schema_of_a_checklists_items_asked_at_once_binds_the_judge_under_a_grammar(count):
    strict = items_format(count)
    grammar = wire_format(FormatMode.JSON_OBJECT_SCHEMA, strict)
    assert grammar is not None
    items = [RubricItem(criterion=f"item {n}", points=n) for n in range(1, count + 1)]
    system = items_messages(LIBRARY_CHECKLIST, {"conversation": "", "output": "a"}, items)[0]
    block = system["content"].split(SCHEMA_INTRO, 1)[1].split("```json\n", 1)[1]
    shown = json.loads(block.split("```", 1)[0])
    schema = strict["json_schema"]["schema"]
    assert shown == schema == items_schema(count)
    for form in (schema, grammar["schema"]):
        assert unenforced(form) == []
    # Every item's reasoning is bounded for a grammar (not in strict mode, which refuses it).
    entry = grammar["schema"]["properties"]["items"]["properties"][str(count)]
    assert entry["properties"]["reasoning"]["maxLength"] == REASONING_MAX_CHARS
    assert "maxLength" not in json.dumps(schema)
    for met in (True, False):
        reply = {"items": {str(n): {"reasoning": "r", "met": met} for n in range(1, count + 1)}}
        verdict = parse_items_verdict(json.dumps(reply), count)
        assert [i.met for i in verdict.items or []] == [met] * count


def test_a_checklist_item_asked_alone_is_read_as_the_boolean_the_schema_allows():
    schema = verdict_schema(LIBRARY_CHECKLIST)
    assert schema["properties"]["met"] == {"type": "boolean"}
    for met in (True, False):
        assert (
            parse_verdict(json.dumps({"reasoning": "r", "met": met}), LIBRARY_CHECKLIST).met is met
        )

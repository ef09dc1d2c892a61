"""`steps: final | each` over agents' runs (issue 32): the outcome graded once, or each tool
call in its context, aggregated `mean | min`, each step's verdict kept in results; and the
rubric keys that say so, checked."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from judgecli.errors import RubricError
from judgecli.grading.grade import GradingPlan, grade_pointwise
from judgecli.inputs.dataset import parse_case
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.result import CaseStatus
from tests.conftest import POINTWISE_YAML
from tests.scripted import ScriptedJudge

STEPS_YAML = """\
name: calls
kind: pointwise
scale: {min: 1, max: 4}
pass_at: 3
steps: each
requires: [trajectory, step]
prompt:
  system: You grade one tool call of an agent.
  user: |
    {trajectory}
    Graded: {step}
"""


def rubric(text: str = STEPS_YAML, **keys: str):
    return parse_rubric(text + "".join(f"{k}: {v}\n" for k, v in keys.items()), source="r.yaml")


def call(name: str, args: dict, call_id: str) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


RUN = [
    {"role": "user", "content": "Refund order 9."},
    {"role": "assistant", "content": None, "tool_calls": [call("get_order", {"id": 9}, "c1")]},
    {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": "order 9: delivered"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("refund", {"id": 9}, "c2"), call("notify", {"id": 9}, "c3")],
    },
    {"role": "tool", "tool_call_id": "c2", "name": "refund", "content": "refunded"},
    {"role": "tool", "tool_call_id": "c3", "name": "notify", "content": "Error: no email"},
    {"role": "assistant", "content": "Order 9 is refunded."},
]


def case_of(messages, case_id="r1"):
    line = json.dumps({"id": case_id, "messages": messages})
    return parse_case(Path("runs.jsonl"), 1, line, field_map={}, requires=["trajectory"])


def plan(graded, models=("m1",), repeats=1, budget=None) -> GradingPlan:
    return GradingPlan(
        rubric=graded,
        models=list(models),
        temperature=0.0,
        max_tokens=100,
        max_retries=0,
        repeats=repeats,
        elide_at=budget,
    )


def graded_call(request) -> str:
    """The call the scripted judge was shown in <step>."""
    user = request.messages[-1]["content"]
    return re.search(r"<step>.*?<tool_call>(\w+)\(", user, re.DOTALL).group(1)


def judge_by_tool(scores: dict[str, int]) -> ScriptedJudge:
    return ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": scores[graded_call(r)]}))


def grade(graded, client, case, **kwargs):
    return asyncio.run(grade_pointwise(client, plan(graded, **kwargs), case))


def test_each_step_is_graded_in_its_context_and_kept_in_results():
    client = judge_by_tool({"get_order": 4, "refund": 4, "notify": 1})
    result = grade(rubric(), client, case_of(RUN))
    assert result.status is CaseStatus.OK
    assert [graded_call(r) for r in client.history] == ["get_order", "refund", "notify"]
    first = client.history[0].messages[-1]["content"]
    # The first step's view ends at its result: nothing after it is shown.
    assert "order 9: delivered\n</tool>\n</trajectory>" in first
    assert "refund" not in first
    assert [(s["step"], s["tool"], s["message"], s["score"]) for s in result.steps] == [
        (1, "get_order", 1, 4.0),
        (2, "refund", 3, 4.0),
        (3, "notify", 3, 1.0),
    ]
    assert result.score == pytest.approx(3.0)
    assert result.passed is True
    assert result.turns is None


@pytest.mark.parametrize(
    ("aggregate", "score", "passed"),
    [pytest.param("mean", 3.0, True, id="mean"), pytest.param("min", 1.0, False, id="min")],
)
def test_the_steps_aggregate_to_the_case_verdict(aggregate, score, passed):
    client = judge_by_tool({"get_order": 4, "refund": 4, "notify": 1})
    result = grade(rubric(aggregate=aggregate), client, case_of(RUN))
    assert (result.score, result.passed) == (score, passed)


def test_a_run_without_a_tool_call_is_graded_once_as_a_whole_with_no_steps():
    chat = [
        {"role": "user", "content": "What does API stand for?"},
        {"role": "assistant", "content": "Application Programming Interface."},
    ]
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": 4}))
    result = grade(rubric(), client, case_of(chat))
    assert len(client.history) == 1
    assert (
        "<step>\nThe run made no tool call.\n</step>" in client.history[0].messages[-1]["content"]
    )
    assert (result.score, result.steps) == (4.0, [])


def test_final_grades_the_whole_run_once():
    final = rubric(
        STEPS_YAML.replace("steps: each", "steps: final")
        .replace("requires: [trajectory, step]", "requires: [trajectory]")
        .replace("    Graded: {step}\n", "")
    )
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": 3}))
    result = grade(final, client, case_of(RUN))
    assert len(client.history) == 1
    assert "Order 9 is refunded." in client.history[0].messages[-1]["content"]
    assert result.steps is None


def test_a_failed_step_fails_the_case_and_names_the_step_and_its_tool():
    client = ScriptedJudge().enqueue(
        json.dumps({"reasoning": "r", "score": 4}),
        "not json",
        json.dumps({"reasoning": "r", "score": 4}),
    )
    result = grade(rubric(), client, case_of(RUN))
    assert result.status is CaseStatus.FAILED
    assert result.error.startswith("step 2 (refund): m1: ")


def test_with_repeats_and_a_panel_every_judge_grades_every_step_k_times():
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": 3}))
    result = grade(rubric(), client, case_of(RUN), models=("m1", "m2"), repeats=2)
    assert len(client.history) == 3 * 2 * 2
    assert [s["score"] for s in result.steps] == [3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        pytest.param(
            STEPS_YAML + "turns: each\n",
            "steps: each grades every tool call, turns: each every assistant turn: choose one",
            id="steps-and-turns",
        ),
        pytest.param(
            "name: p\nkind: pairwise\nsteps: each\nprompt: {user: '{output_a} {output_b}'}\n",
            "steps: each is for pointwise and binary rubrics",
            id="pairwise-steps",
        ),
        pytest.param(
            "name: p\nkind: pairwise\nrequires: [trajectory]\n"
            "prompt: {user: '{trajectory} {output_a} {output_b}'}\n",
            "a pairwise prompt shows the two runs as {output_a} and {output_b}, not {trajectory}",
            id="pairwise-trajectory",
        ),
        pytest.param(
            STEPS_YAML.replace("steps: each", "steps: final"),
            "{step} is the tool call graded under steps: each; add steps: each",
            id="step-without-each",
        ),
        pytest.param(
            STEPS_YAML.replace("steps: each", "steps: all"),
            "steps: Input should be 'final' or 'each'",
            id="unknown-steps",
        ),
        pytest.param(
            STEPS_YAML.replace("requires: [trajectory, step]", "requires: [step]"),
            "{trajectory} is used but not in requires",
            id="trajectory-not-required",
        ),
    ],
)
def test_the_steps_key_is_validated(yaml, message):
    with pytest.raises(RubricError) as caught:
        parse_rubric(yaml, source="r.yaml")
    assert message in caught.value.message


def test_aggregate_goes_with_steps_each_and_steps_final_keeps_the_hash():
    assert rubric(aggregate="min").turn_aggregate.value == "min"
    plain = parse_rubric(POINTWISE_YAML, source="r.yaml")
    # Issue 32: a rubric that does not use the key, or writes its default, keeps its hash.
    assert parse_rubric(POINTWISE_YAML + "steps: final\n", source="r.yaml").content_hash == (
        plain.content_hash
    )
    assert plain.content_hash == "sha256:816531c85ab57d5e"

"""Long runs are never cut silently (issue 32): under --elide-at the middle
steps are left out with a marked elision that says what was left out, or the case fails with
the reason. Tested on a run of 60+ messages and 50K+ characters with 15K characters of tool
schemas, as real agents' exports are."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from judgecli.grading.elision import (
    TrajectoryTooLongError,
    estimated_tokens,
    fit_run,
    fit_turns,
)
from judgecli.grading.grade import GradingPlan, grade_pairwise, grade_pointwise
from judgecli.inputs.conversation import render_turns
from judgecli.inputs.dataset import parse_case
from judgecli.inputs.pairs import Pair
from judgecli.inputs.rubric_file import parse_rubric
from judgecli.inputs.trajectory import render_tools
from judgecli.result import CaseStatus
from tests.scripted import ScriptedJudge

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{i:02d}",
            "description": f"Tool number {i}: " + "looks up records in the archive. " * 14,
            "parameters": {
                "type": "object",
                "properties": {
                    f"arg_{k}": {"type": "string", "description": "x" * 40} for k in range(3)
                },
            },
        },
    }
    for i in range(20)
]


def long_run(steps: int = 30) -> list[dict]:
    """A system prompt, the task, `steps` calls each with an 1.6K-character result, an answer."""
    messages = [
        {"role": "system", "content": "You are an archivist agent. " * 20},
        {"role": "user", "content": "Find every record about the 1911 census in the archive."},
    ]
    for i in range(steps):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {
                "name": f"tool_{i % 4:02d}",
                "arguments": json.dumps({"arg_0": f"page {i}"}),
            },
        }
        messages.append(
            {"role": "assistant", "content": f"Checking page {i}.", "tool_calls": [call]}
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "name": f"tool_{i % 4:02d}",
                "content": f"record {i}: " + "census line; " * 120,
            }
        )
    messages.append({"role": "assistant", "content": "I found 30 pages of census records."})
    return messages


def case_of(messages, tools=TOOLS, case_id="long"):
    line = json.dumps({"id": case_id, "messages": messages, "tools": tools})
    return parse_case(Path("runs.jsonl"), 1, line, field_map={}, requires=["trajectory"])


def test_the_run_under_test_is_as_long_as_real_exports():
    case = case_of(long_run())
    assert len(case.messages) >= 62
    assert len(render_turns(case.messages)) > 50_000
    assert len(render_tools(TOOLS)) > 15_000


def test_a_run_that_fits_is_shown_whole():
    case = case_of(long_run())
    whole = case.field_text("trajectory")
    assert fit_run(case.messages, case.tools, estimated_tokens(whole)) == whole
    assert fit_run(case.messages, case.tools, None) == whole


def test_a_long_runs_middle_is_left_out_with_a_marked_elision_that_says_what():
    case = case_of(long_run())
    shown = fit_run(case.messages, case.tools, 12_000)
    assert estimated_tokens(shown) <= 12_000
    # The tools, the task and the answer are always there.
    assert shown.startswith(render_tools(TOOLS))
    assert "<user>\nFind every record about the 1911 census" in shown
    assert shown.endswith("<assistant>\nI found 30 pages of census records.\n</assistant>")
    marker = re.search(r"<elided>\n(.*)\n</elided>", shown)
    assert marker is not None
    said = marker.group(1)
    left = re.match(
        r"(\d+) messages of the run left out here to fit --elide-at 12000 "
        r"\((\d+) assistant turns, (\d+) tool results; (\d+) tool calls: (.*)\)$",
        said,
    )
    assert left is not None, said
    messages, assistants, results, calls, tally = left.groups()
    assert int(messages) == int(assistants) + int(results)
    assert int(assistants) == int(calls) == int(results)
    # What is shown and what is said to be left out make the whole run.
    shown_steps = shown.count("<tool_call>")
    assert shown_steps + int(calls) == 30
    assert sum(int(n) for n in re.findall(r"×(\d+)", tally)) == int(calls)
    # The steps kept are the last ones, in order, up to the answer.
    kept = [int(n) for n in re.findall(r"Checking page (\d+)\.", shown)]
    assert kept == list(range(30 - shown_steps, 30))


def test_a_tighter_budget_leaves_out_more_and_still_fits():
    case = case_of(long_run())
    shown = [fit_run(case.messages, case.tools, budget) for budget in (14_000, 9_000, 6_000)]
    assert [
        estimated_tokens(s) <= b for s, b in zip(shown, (14_000, 9_000, 6_000), strict=True)
    ] == [True] * 3
    counts = [s.count("<tool_call>") for s in shown]
    assert counts == sorted(counts, reverse=True)
    assert counts[-1] >= 1


@pytest.mark.parametrize(
    ("budget", "reason"),
    [
        pytest.param(4_000, "the run needs about", id="task-and-last-step-too-long"),
        pytest.param(100, "the run needs about", id="tools-alone-too-long"),
    ],
)
def test_a_run_that_cannot_fit_even_so_is_an_error_with_the_reason(budget, reason):
    case = case_of(long_run())
    with pytest.raises(TrajectoryTooLongError) as caught:
        fit_run(case.messages, case.tools, budget)
    message = str(caught.value)
    assert reason in message
    assert f"more than --elide-at {budget}" in message
    assert "the tools it was offered" in message


def test_a_conversation_is_fitted_the_same_way():
    case = case_of(long_run(), tools=None)
    shown = fit_turns(case.messages, 5_000)
    assert "<elided>" in shown
    assert estimated_tokens(shown) <= 5_000


TRAJECTORY_YAML = """\
name: done
kind: pointwise
scale: {min: 1, max: 5}
requires: [trajectory]
prompt:
  user: "{trajectory}"
"""


def plan(rubric, budget):
    return GradingPlan(
        rubric=rubric,
        models=["m1"],
        temperature=0.0,
        max_tokens=100,
        max_retries=0,
        elide_at=budget,
    )


def test_grading_sends_the_elided_run_and_keeps_it_in_the_result():
    rubric = parse_rubric(TRAJECTORY_YAML, source="r.yaml")
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "score": 4}))
    result = asyncio.run(grade_pointwise(client, plan(rubric, 10_000), case_of(long_run())))
    assert result.status is CaseStatus.OK
    sent = client.history[0].messages[-1]["content"]
    assert "<elided>\n" in sent
    assert "<elided>\n" in result.case["trajectory"]


def test_a_case_that_cannot_fit_fails_with_the_reason_and_no_judge_is_asked():
    rubric = parse_rubric(TRAJECTORY_YAML, source="r.yaml")
    client = ScriptedJudge()
    result = asyncio.run(grade_pointwise(client, plan(rubric, 3_000), case_of(long_run())))
    assert result.status is CaseStatus.FAILED
    assert "more than --elide-at 3000" in result.error
    assert client.history == []


def test_a_pair_of_long_runs_is_fitted_side_by_side_or_fails():
    rubric = parse_rubric(
        "name: ab\nkind: pairwise\nrequires: [output]\n"
        "prompt: {user: 'A: {output_a} B: {output_b}'}\n",
        source="ab.yaml",
    )
    pair = Pair(old=case_of(long_run()), new=case_of(long_run(20)))
    client = ScriptedJudge(lambda r: json.dumps({"reasoning": "r", "winner": "A"}))
    result = asyncio.run(grade_pairwise(client, plan(rubric, 10_000), pair))
    assert result.status is CaseStatus.OK
    assert all(r.messages[-1]["content"].count("<elided>\n") == 2 for r in client.history)
    assert result.lengths["old_steps"] == 30
    assert result.lengths["new_steps"] == 20
    failed = asyncio.run(grade_pairwise(ScriptedJudge(), plan(rubric, 3_000), pair))
    assert failed.status is CaseStatus.FAILED
    assert "more than --elide-at 3000" in failed.error

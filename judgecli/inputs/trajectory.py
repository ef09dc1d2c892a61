"""An agent's run as a trajectory: its steps (one per tool call), the view of the run a judge
grades each step in, and the texts and lengths a judge and the length diagnostics read.

A step is one tool call, numbered over the whole run (1 for the first call), with the tool's
result when the run has one: the tool turn answering the call's id, or, when the export
wrote no ids, the tool turn in the call's position after its assistant turn. A step is graded
in its context (`step_view`): the run up to and including that call (an assistant turn that
made several calls at once shows the calls up to it), then the results of those calls.

* `{trajectory}` is the whole run: the tools it was offered (a case's `tools`, one line
  each in a `<tools>` fence), then every turn fenced by its role, each call a `<tool_call>`
  line of its assistant turn and each result a `<tool name="...">` turn, the final answer
  included (`{conversation}` is the turns *before* the answer graded: for a chat, what the
  graded turn answers; `{trajectory}` is the run itself, outcome included). A case with an
  `input` is a run of one user turn and its answer (`output`).
* `{step}` is the step graded under `steps: each`: its call and its result, fenced.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgecli.inputs.conversation import (
    Role,
    Turn,
    agent_run,
    escape_tags,
    fence_turn,
    render_turns,
)
from judgecli.inputs.images import text_length
from judgecli.inputs.tools import ToolCall, arguments_json, tool_name

NO_CALL = "The run made no tool call."
"""`{step}` of a run without a tool call (graded once, as a whole, under `steps: each`)."""
NO_RESULT = "(no result: the run ended before the tool answered)"
CLOSING_TOOLS_TAG = re.compile(r"</\s*tools\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class Step:
    """One tool call of a run, with its place and its result."""

    index: int
    """1 for the run's first call, counting every call of every assistant turn."""
    message: int
    """The index of the assistant turn that made the call, in the run's messages."""
    call: int
    """The call's index among its assistant turn's calls (0 for the first)."""
    tool_call: ToolCall
    result: int | None
    """The index of the tool turn that answered the call (None: no result in the run)."""

    @property
    def tool(self) -> str:
        """The tool's name."""
        return self.tool_call.name


def result_positions(turns: Sequence[Turn], message: int) -> list[int | None]:
    """For each call of the assistant turn at `message`, the index of the tool turn that
    answered it: by the call's id, else (an export without ids) by its position among the
    tool turns that follow the assistant turn.
    """
    calls = turns[message].tool_calls
    block = []
    for at in range(message + 1, len(turns)):
        if turns[at].role is not Role.TOOL:
            break
        block.append(at)
    by_id = {turns[at].tool_call_id: at for at in block if turns[at].tool_call_id}
    if any(call.id in by_id for call in calls):
        return [by_id.get(call.id) if call.id else None for call in calls]
    return [block[i] if i < len(block) else None for i in range(len(calls))]


def run_steps(turns: Sequence[Turn]) -> list[Step]:
    """Every tool call of a run, in order, with its result."""
    steps: list[Step] = []
    for message, turn in enumerate(turns):
        if not turn.tool_calls:
            continue
        results = result_positions(turns, message)
        for call, (tool_call, result) in enumerate(zip(turn.tool_calls, results, strict=True)):
            steps.append(Step(len(steps) + 1, message, call, tool_call, result))
    return steps


def step_view(turns: Sequence[Turn], step: Step) -> list[Turn]:
    """The run as a judge grades `step` in it: the turns before the call's assistant turn,
    that turn with its calls up to the step's, then the results of those calls.
    """
    made = turns[step.message]
    kept = made.model_copy(update={"tool_calls": made.tool_calls[: step.call + 1]})
    answered = result_positions(turns, step.message)[: step.call + 1]
    results = [turns[at] for at in sorted(at for at in answered if at is not None)]
    return [*turns[: step.message], kept, *results]


def last_step(turns: Sequence[Turn]) -> Step | None:
    """The last tool call of a run (of a step's view: the step graded)."""
    steps = run_steps(turns)
    return steps[-1] if steps else None


def render_step(turns: Sequence[Turn]) -> str:
    """`{step}`: the last call of `turns` (of a step's view: the step graded) and its
    result, each fenced as the trajectory fences them; NO_CALL for a run without a call.
    """
    step = last_step(turns)
    if step is None:
        return NO_CALL
    call = fence_turn(Turn(role=Role.ASSISTANT, content="", tool_calls=(step.tool_call,)))
    if step.result is None:
        return f"{call}\n{NO_RESULT}"
    return f"{call}\n{fence_turn(turns[step.result])}"


def plain_run(input_text: str | None, output: str | None) -> list[Turn]:
    """A case with an input as a run: its user turn and its answer."""
    run = [Turn(role=Role.USER, content=input_text or "")]
    return run if output is None else [*run, Turn(role=Role.ASSISTANT, content=output)]


def render_tools(tools: Sequence[dict[str, Any]] | None) -> str:
    """The tools a run was offered, as the trajectory opens with them: one line each,
    `name: description parameters={...}`, in a `<tools>` fence ("" for none given).
    """
    if not tools:
        return ""
    lines = []
    for schema in tools:
        body = schema.get("function", schema)
        description = " ".join(str(body.get("description") or "").split())
        parameters = body.get("parameters")
        shown = f" parameters={arguments_json(parameters)}" if parameters else ""
        lines.append(escape_tags(f"- {tool_name(schema)}: {description}{shown}"))
    text = CLOSING_TOOLS_TAG.sub("<\\/tools>", "\n".join(lines))
    return f"<tools>\n{text}\n</tools>"


def render_trajectory(turns: Sequence[Turn], tools: Sequence[dict[str, Any]] | None = None) -> str:
    """`{trajectory}`: the tools the run was offered (when the case gives them), then every
    turn of the run, fenced by role (calls and results included).
    """
    offered = render_tools(tools)
    shown = render_turns(turns)
    return f"{offered}\n{shown}" if offered else shown


def agent_run_case(turns: Sequence[Turn], tools: Sequence[dict[str, Any]] | None) -> bool:
    """Whether a case's turns are an agent's run: they call tools or carry their results,
    or the case was offered `tools` (a run that made no call is a run of 0 steps).
    """
    return tools is not None or agent_run(turns)


def agent_turn_text(turn: Turn) -> str:
    """What one of the agent's turns says, as the judge reads it: its text, its calls."""
    return "\n".join([turn.content, *(call.render() for call in turn.tool_calls)])


def trajectory_length(turns: Sequence[Turn]) -> int:
    """Characters of what the agent did and was told by its tools: its turns' text and
    calls, and the tools' results (the user and system turns are the task, not the run).
    """
    return sum(
        text_length(agent_turn_text(turn))  # an image (a screenshot a tool returned) counts none
        for turn in turns
        if turn.role in (Role.ASSISTANT, Role.TOOL)
    )


def step_count(turns: Sequence[Turn]) -> int:
    """How many tool calls a run made."""
    return sum(len(turn.tool_calls) for turn in turns)


def tool_tally(turns: Sequence[Turn]) -> str:
    """The tools called in `turns`, most called first: `search ×5, get_user ×2`."""
    counts = Counter(call.name for turn in turns for call in turn.tool_calls)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} ×{n}" for name, n in ranked)

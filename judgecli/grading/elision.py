"""A long run fitted to a token budget (`--elide-at N`): never cut silently.

A run whose rendered turns (`{trajectory}`, `{conversation}`, a pairwise side) fit the
budget is shown whole. A longer one keeps its head (the system turns and the first user
turn: the task) and as many of its last turns as fit, and the turns between are replaced by
one marked elision that says what was left out: how many messages, of which roles, and
which tools were called in them. The turns are left out whole, an assistant turn together
with the tool results that follow it. When even the head, the elision and the last step do
not fit, the case fails with that reason: a verdict on a run the judge could not be shown
would be a guess.

Tokens are estimated as the client estimates them for --tpm: four characters a token.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from judgecli.inputs.conversation import Role, Turn, render_turns
from judgecli.inputs.images import IMAGE_TOKENS, image_count, text_length
from judgecli.inputs.trajectory import render_tools, tool_tally

CHARS_PER_TOKEN = 4
FLAG = "--elide-at"


class TrajectoryTooLongError(ValueError):
    """A run that does not fit its budget even with its middle left out (the case fails)."""


def estimated_tokens(text: str) -> int:
    """Tokens of a text, estimated at four characters a token (an image at IMAGE_TOKENS)."""
    return math.ceil(text_length(text) / CHARS_PER_TOKEN) + IMAGE_TOKENS * image_count(text)


def units_of(turns: Sequence[Turn]) -> list[list[Turn]]:
    """The turns grouped as they are left out: each turn with the tool results after it."""
    units: list[list[Turn]] = []
    for turn in turns:
        if turn.role is Role.TOOL and units:
            units[-1].append(turn)
        else:
            units.append([turn])
    return units


def head_size(units: Sequence[Sequence[Turn]]) -> int:
    """How many units the head is: up to and including the first user turn (the task)."""
    for at, unit in enumerate(units):
        if unit[0].role is Role.USER:
            return at + 1
    return 1


def plural(n: int, word: str) -> str:
    """`1 tool result`, `3 tool results`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def elision(left_out: Sequence[Turn], budget: int) -> str:
    """The marker that stands for the turns left out, saying what they were."""
    roles = Counter(turn.role for turn in left_out)
    parts = [
        plural(roles[role], label)
        for role, label in (
            (Role.ASSISTANT, "assistant turn"),
            (Role.TOOL, "tool result"),
            (Role.USER, "user turn"),
            (Role.SYSTEM, "system turn"),
        )
        if roles[role]
    ]
    calls = sum(len(turn.tool_calls) for turn in left_out)
    called = f"; {plural(calls, 'tool call')}: {tool_tally(left_out)}" if calls else ""
    return (
        f"<elided>\n{plural(len(left_out), 'message')} of the run left out here to fit "
        f"{FLAG} {budget} ({', '.join(parts)}{called})\n</elided>"
    )


def fit_run(
    turns: Sequence[Turn], tools: Sequence[dict[str, Any]] | None, budget: int | None
) -> str:
    """`{trajectory}` (`render_trajectory`: the tools offered, then the turns) within
    `budget` tokens: the tools are always shown, and the turns fitted to what they leave.
    """
    offered = render_tools(tools)
    return fit_turns(turns, budget, prefix=f"{offered}\n" if offered else "")


def fit_turns(turns: Sequence[Turn], budget: int | None, *, prefix: str = "") -> str:
    """`prefix` (the tools offered, shown first) and the turns rendered (`render_turns`)
    within `budget` tokens: whole when they fit, else with the turns' middle elided (module
    docstring); TrajectoryTooLongError when even that does not fit.
    """
    whole = prefix + render_turns(turns)
    if budget is None or estimated_tokens(whole) <= budget:
        return whole
    units = units_of(turns)
    head = head_size(units)
    texts = [render_turns(unit) for unit in units]
    # The last unit (the answer, or the step graded) is always shown.
    start = len(units) - 1
    shown = fitted(prefix, texts, units, head, start, budget) if start > head else None
    if shown is None:
        least = estimated_tokens(prefix + candidate(texts, units, head, max(start, head), budget))
        offered = ", the tools it was offered" if prefix else ""
        raise TrajectoryTooLongError(
            f"the run needs about {least} tokens even with its middle left out (the task"
            f"{offered} and its last step), more than {FLAG} {budget}: raise it, or grade "
            "shorter runs"
        )
    while start - 1 > head:
        wider = fitted(prefix, texts, units, head, start - 1, budget)
        if wider is None:
            break
        start, shown = start - 1, wider
    return shown


def candidate(
    texts: Sequence[str], units: Sequence[Sequence[Turn]], head: int, start: int, budget: int
) -> str:
    """The head, the elision of units head..start-1 (none when there are none), the rest."""
    left_out = [turn for unit in units[head:start] for turn in unit]
    middle = [elision(left_out, budget)] if left_out else []
    return "\n".join([*texts[:head], *middle, *texts[start:]])


def fitted(
    prefix: str,
    texts: Sequence[str],
    units: Sequence[Sequence[Turn]],
    head: int,
    start: int,
    budget: int,
) -> str | None:
    """`prefix` and `candidate` when they fit the budget, else None."""
    text = prefix + candidate(texts, units, head, start, budget)
    return text if estimated_tokens(text) <= budget else None

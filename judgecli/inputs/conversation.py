"""Conversations: a case's `messages` (OpenAI chat format), as the judge is shown them.

A chat assistant is judged over a whole conversation: a case may carry `messages`, a list
of `{"role": "system" | "user" | "assistant", "content": str}` turns, instead of `input`
and `output`. Its assistant turns are the answers. The answer graded is an assistant turn
(the last one, or each in turn: the rubric's `turns`), shown after the turns before it.

An agent's run is a conversation too (a trajectory): its assistant turns may call tools
(`tool_calls`, read by `inputs.tools` into one shape whatever the export wrote) and `tool`
turns carry the results (`tool_call_id`, `name`; OpenAI's older `function` role is read as
one). Such a run may end on a tool result with no final answer (its answer is then ""), and
an assistant turn that only calls tools has no text (`content: null` is ""). Content given as
a list of text parts is their text, joined.

* `{conversation}` is the turns before the graded answer, each fenced in a tag named by its
  role (`<user>…</user>`); a closing role tag inside a turn is escaped, so a turn can
  neither end itself early nor forge a turn of another role (and the `<conversation>` fence
  around them escapes its own closing tag, as every field's fence does);
* `{input}` is the last user turn before the graded answer, `{output}` the answer.

With `turns: each`, the verdicts of the graded turns make the case's verdict by the
rubric's `aggregate` (`grading.turns`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from judgecli.inputs.images import text_length
from judgecli.inputs.rows import JsonlSource, RowSource
from judgecli.inputs.shape_error import ShapeError
from judgecli.inputs.tools import ToolCall, ToolsError, parse_tool_calls


class Role(StrEnum):
    """Who speaks in a turn."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    """A tool's result, answering an assistant turn's call (an agent's trajectory)."""


class Turn(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    """Its text ("" for none: an assistant turn that only calls tools, an empty result)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant turn's calls of tools, in the order made."""
    tool_call_id: str | None = None
    """A tool turn: the id of the call it answers."""
    name: str | None = None
    """A tool turn: the tool's name, when the export gives it."""


ROLES = ", ".join(f'"{role.value}"' for role in Role)
LEGACY_ROLES = {"function": Role.TOOL}
"""Roles older exports write, read as today's."""
CLOSING_ROLE_TAG = re.compile(
    r"</\s*(" + "|".join(role.value for role in Role) + r")\s*>", re.IGNORECASE
)


class TurnsError(ShapeError):
    """A `messages` value that is not a conversation; the message says what, the hint how."""


def parse_turns(value: Any, *, agent: bool = False) -> list[Turn]:
    """A case's `messages` value as turns, or TurnsError naming the first bad turn.

    Keys of a turn an export adds (`function_call: null`, `refusal`, an `index`) are
    ignored. An empty content is data (an empty answer is judged as given); a conversation
    must end with the assistant's turn, the answer graded by default; an agent's run (turns
    that call tools or carry their results, or any run of a case offered `tools`: `agent`)
    may also end with a tool's result or with its user's closing turns.
    """
    shape = '[{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]'
    if not isinstance(value, list):
        raise TurnsError(
            f'"messages" must be a list of turns, got {type(value).__name__}',
            hint=f"write the conversation as {shape}",
        )
    if not value:
        raise TurnsError('"messages" is empty', hint=f"write the conversation as {shape}")
    turns = [parse_turn(turn, f'"messages"[{i}]') for i, turn in enumerate(value)]
    # An agent's run may end on a tool result (the run stopped there: its answer is ""), or
    # on its user's closing turn (a simulated user's "###STOP###", as tau-bench writes).
    if turns[-1].role is not Role.ASSISTANT and not (
        (agent or agent_run(turns)) and turns[-1].role in (Role.TOOL, Role.USER)
    ):
        raise TurnsError(
            f'"messages" must end with an assistant turn (the answer graded), '
            f"not a {turns[-1].role.value} turn",
            hint="drop the trailing turns, or add the assistant's reply",
        )
    return turns


def parse_turn(turn: Any, where: str) -> Turn:
    """One message as a Turn, or TurnsError naming it."""
    if not isinstance(turn, dict):
        raise TurnsError(
            f'{where} must be an object {{"role": ..., "content": ...}}, got {type(turn).__name__}'
        )
    raw_role = turn.get("role")
    role = LEGACY_ROLES.get(raw_role, raw_role) if isinstance(raw_role, str) else raw_role
    if role not in {r.value for r in Role}:
        raise TurnsError(
            f"{where}: role must be one of {ROLES}, got {raw_role!r}",
            hint='a conversation is user and assistant turns (and "system"); an agent\'s tool '
            'results are "tool" turns',
        )
    role = Role(role)
    try:
        calls = parse_tool_calls(turn.get("tool_calls"), f"{where}.tool_calls")
    except ToolsError as err:
        raise TurnsError(err.problem, err.hint) from None
    if calls and role is not Role.ASSISTANT:
        raise TurnsError(
            f"{where}: a {role.value} turn has tool_calls",
            hint="tool calls are an assistant turn's; a tool's result is a tool turn",
        )
    content = turn.get("content")
    if content is None and not (calls or role is Role.TOOL):
        raise TurnsError(
            f"{where}: content is missing or null",
            hint='write "" for an empty turn (it is judged as given)',
        )
    name = turn.get("name")
    call_id = turn.get("tool_call_id")
    return Turn(
        role=role,
        content=content_text(content, where),
        tool_calls=tuple(calls),
        tool_call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) and role is Role.TOOL else None,
    )


def content_text(content: Any, where: str) -> str:
    """A turn's content as text: a string as it is, null as "", a list of text parts
    joined by newlines.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "\n".join(part["text"] for part in content)
    if isinstance(content, list):
        raise TurnsError(
            f"{where}: content parts other than text (images, audio) are not read yet",
            hint="give the turn's text",
        )
    raise TurnsError(
        f"{where}: content must be a string, got {type(content).__name__}",
        hint="give the turn's text",
    )


def answer_positions(turns: Sequence[Turn]) -> list[int]:
    """The indices of the assistant turns (the answers), in order."""
    return [i for i, turn in enumerate(turns) if turn.role is Role.ASSISTANT]


def last_user_turn(turns: Sequence[Turn]) -> str:
    """The text of the last user turn ("" when there is none)."""
    return next((t.content for t in reversed(turns) if t.role is Role.USER), "")


def agent_run(turns: Sequence[Turn]) -> bool:
    """Whether a conversation is an agent's run: it calls a tool or carries a tool's result."""
    return any(t.role is Role.TOOL or t.tool_calls for t in turns)


def answer_index(turns: Sequence[Turn]) -> int | None:
    """The index of the answer a conversation ends with: its last turn when the assistant
    speaks last; of an agent's run that its user closed, the assistant turn before the
    user's closing turns; None when the run ended on a tool's result (it has no answer).
    """
    end = len(turns)
    # Only an agent's run gets past parse_turns with closing user turns (a run that made no
    # call, of a case offered tools, among them).
    while end and turns[end - 1].role is Role.USER:
        end -= 1
    return end - 1 if end and turns[end - 1].role is Role.ASSISTANT else None


def final_answer(turns: Sequence[Turn]) -> str:
    """The text of the answer a conversation ends with (`answer_index`); "" for an agent's
    run that ended on a tool's result.
    """
    at = answer_index(turns)
    return turns[at].content if at is not None else ""


def escape_tags(text: str) -> str:
    """Text with every closing role tag escaped, so it can neither end its turn early nor
    forge a turn of another role.
    """
    return CLOSING_ROLE_TAG.sub(lambda m: f"<\\/{m.group(1)}>", text)


def fence_turn(turn: Turn) -> str:
    """One turn in a tag named by its role; every closing role tag inside is escaped. A
    tool turn's tag names the tool; an assistant's tool calls follow its text, one
    `<tool_call>` line each (inside the turn, so they are escaped as its text is).
    """
    body = escape_tags(turn.content)
    calls = [escape_tags(f"<tool_call>{call.render()}</tool_call>") for call in turn.tool_calls]
    if calls:
        body = "\n".join([body, *calls] if body else calls)
    tag = turn.role.value
    name = escape_tags(turn.name).replace('"', "'") if turn.name else None
    opening = f'<{tag} name="{name}">' if name else f"<{tag}>"
    return f"{opening}\n{body}\n</{tag}>"


def render_turns(turns: Sequence[Turn]) -> str:
    """Turns as prompt text, one fenced turn after another ("" for none)."""
    return "\n".join(fence_turn(turn) for turn in turns)


def user_turns_digest(turns: Sequence[Turn]) -> bytes:
    """A fingerprint of the user turns, so that two versions of a conversation can be
    checked to answer the same user without keeping the texts.
    """
    digest = hashlib.blake2b(digest_size=16)
    for turn in turns:
        if turn.role is Role.USER:
            digest.update(len(turn.content).to_bytes(8, "big") + turn.content.encode())
    return digest.digest()


def answers_length(turns: Sequence[Turn]) -> int:
    """Characters of the assistant turns: the length of a conversation's answers (an
    image counts none).
    """
    return sum(text_length(t.content) for t in turns if t.role is Role.ASSISTANT)


class MaybeConversation(Protocol):
    """A case as far as refine's rule reads it (dataset.Case is one)."""

    @property
    def line(self) -> int | None:
        """The case's line in its file."""

    @property
    def messages(self) -> list[Turn] | None:
        """Its conversation, when it is one."""


def refuse_conversations(cases: Iterable[MaybeConversation], source: Path | RowSource) -> None:
    """DatasetError (exit 2, before any call) for a conversation case: refine generates one
    answer to one input, and would otherwise send the generator an empty prompt.
    """
    for case in cases:
        if case.messages is not None:
            where = source if isinstance(source, RowSource) else JsonlSource(source)
            raise where.error(
                case.line,
                "a conversation (`messages`): judge refine generates one answer to one input",
                hint="give the case an input (e.g. its last user turn), or grade "
                "conversations with judge score",
            )

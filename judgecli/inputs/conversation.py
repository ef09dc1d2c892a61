"""Conversations: a case's `messages` (OpenAI chat format), as the judge is shown them.

A chat assistant is judged over a whole conversation: a case may carry `messages`, a list
of `{"role": "system" | "user" | "assistant", "content": str}` turns, instead of `input`
and `output`. Its assistant turns are the answers. The answer graded is an assistant turn
(the last one, or each in turn: the rubric's `turns`), shown after the turns before it:

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

from judgecli.inputs.rows import JsonlSource, RowSource


class Role(StrEnum):
    """Who speaks in a turn."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class Turn(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


ROLES = ", ".join(f'"{role.value}"' for role in Role)
CLOSING_ROLE_TAG = re.compile(
    r"</\s*(" + "|".join(role.value for role in Role) + r")\s*>", re.IGNORECASE
)


class TurnsError(ValueError):
    """A `messages` value that is not a conversation; the message says what, the hint how."""

    def __init__(self, problem: str, hint: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def parse_turns(value: Any) -> list[Turn]:
    """A case's `messages` value as turns, or TurnsError naming the first bad turn.

    Keys of a turn other than role and content (`name`) are ignored. An empty content is
    data (an empty answer is judged as given); a conversation must end with the assistant's
    turn, the answer graded by default.
    """
    shape = '[{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]'
    if not isinstance(value, list):
        raise TurnsError(
            f'"messages" must be a list of turns, got {type(value).__name__}',
            hint=f"write the conversation as {shape}",
        )
    if not value:
        raise TurnsError('"messages" is empty', hint=f"write the conversation as {shape}")
    turns = []
    for i, turn in enumerate(value):
        where = f'"messages"[{i}]'
        if not isinstance(turn, dict):
            raise TurnsError(
                f'{where} must be an object {{"role": ..., "content": ...}}, '
                f"got {type(turn).__name__}"
            )
        role = turn.get("role")
        if role not in {r.value for r in Role}:
            raise TurnsError(
                f"{where}: role must be one of {ROLES}, got {role!r}",
                hint="tool and function turns are not graded; leave them out",
            )
        content = turn.get("content")
        if content is None:
            raise TurnsError(
                f"{where}: content is missing or null",
                hint='write "" for an empty turn (it is judged as given)',
            )
        if not isinstance(content, str):
            raise TurnsError(
                f"{where}: content must be a string, got {type(content).__name__}",
                hint="content parts (images, audio) are not supported; give the text",
            )
        turns.append(Turn(role=Role(role), content=content))
    if turns[-1].role is not Role.ASSISTANT:
        raise TurnsError(
            f'"messages" must end with an assistant turn (the answer graded), '
            f"not a {turns[-1].role.value} turn",
            hint="drop the trailing turns, or add the assistant's reply",
        )
    return turns


def answer_positions(turns: Sequence[Turn]) -> list[int]:
    """The indices of the assistant turns (the answers), in order."""
    return [i for i, turn in enumerate(turns) if turn.role is Role.ASSISTANT]


def last_user_turn(turns: Sequence[Turn]) -> str:
    """The text of the last user turn ("" when there is none)."""
    return next((t.content for t in reversed(turns) if t.role is Role.USER), "")


def fence_turn(turn: Turn) -> str:
    """One turn in a tag named by its role; every closing role tag inside is escaped."""
    escaped = CLOSING_ROLE_TAG.sub(lambda m: f"<\\/{m.group(1)}>", turn.content)
    return f"<{turn.role.value}>\n{escaped}\n</{turn.role.value}>"


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
    """Characters of the assistant turns: the length of a conversation's answers."""
    return sum(len(t.content) for t in turns if t.role is Role.ASSISTANT)


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

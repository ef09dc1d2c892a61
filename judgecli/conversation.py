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
rubric's `aggregate` (`aggregate_turns`, pure).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from judgecli.debias import PanelVerdict
from judgecli.errors import DatasetError

if TYPE_CHECKING:
    from judgecli.dataset import Case
from judgecli.rubric import Rubric, RubricKind, TurnAggregate


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


def turn_record(turn: int, message: int, verdict: PanelVerdict) -> dict[str, Any]:
    """One graded turn as a case's result keeps it (CaseResult.turns)."""
    return {
        "turn": turn,
        "message": message,
        "score": verdict.score,
        "criteria": verdict.criteria,
        "choice": verdict.choice,
        "passed": verdict.passed,
    }


def aggregate_turns(rubric: Rubric, verdicts: Sequence[PanelVerdict]) -> PanelVerdict:
    """The case's verdict from its graded turns' verdicts, by the rubric's `aggregate`.

    Pointwise: `mean` averages the scores (and each criterion), and the case passes when the
    mean reaches pass_at; `min` takes the worst turn's verdict (its score and criteria, the
    first of equals), so the case passes only when every turn does. Binary: under `min` the
    case passes when every turn passes, under `mean` when most turns do (more than half: two
    of four is a fail); a failed case takes the failing choice its turns gave most often.
    A turn without a verdict (a split panel) leaves the case undecided when the decided
    turns do not settle it either way.
    """
    how = rubric.turn_aggregate
    if rubric.kind is RubricKind.BINARY:
        return aggregate_choices(rubric, verdicts, how)
    if not verdicts or any(v.score is None for v in verdicts):
        return PanelVerdict()
    if how is TurnAggregate.MIN:
        return min(verdicts, key=lambda v: v.score if v.score is not None else math.inf)
    score = math.fsum(v.score for v in verdicts if v.score is not None) / len(verdicts)
    criteria = {
        name: math.fsum(v.criteria[name] for v in verdicts) / len(verdicts)
        for name in verdicts[0].criteria
    }
    passed = None if rubric.pass_at is None else score >= rubric.pass_at
    return PanelVerdict(score=score, criteria=criteria, passed=passed)


def aggregate_choices(
    rubric: Rubric, verdicts: Sequence[PanelVerdict], how: TurnAggregate
) -> PanelVerdict:
    """Binary `aggregate_turns`: every turn passes (min), or most turns do (mean)."""
    if not verdicts:
        return PanelVerdict()
    calls = [v.passed for v in verdicts]
    passes, fails, n = calls.count(True), calls.count(False), len(calls)
    passed: bool | None
    if how is TurnAggregate.MIN:
        passed = False if fails else (True if passes == n and n else None)
    elif 2 * passes > n:
        passed = True
    else:
        # Undecided turns could still make a majority only if they all passed.
        passed = False if 2 * (n - fails) <= n else None
    if passed is None:
        return PanelVerdict()
    if passed:
        return PanelVerdict(choice=rubric.passing_choice, passed=True)
    failing = Counter(v.choice for v in verdicts if v.passed is False and v.choice is not None)
    ranked = sorted(failing, key=lambda c: (-failing[c], (rubric.choices or []).index(c)))
    return PanelVerdict(choice=ranked[0] if ranked else None, passed=False)


def refuse_conversations(cases: Iterable[Case], path: Path) -> None:
    """DatasetError (exit 2, before any call) for a conversation case: refine generates one
    answer to one input, and would otherwise send the generator an empty prompt.
    """
    for case in cases:
        if case.messages is not None:
            raise DatasetError(
                path,
                case.line,
                "a conversation (`messages`): judge refine generates one answer to one input",
                hint="give the case an input (e.g. its last user turn), or grade "
                "conversations with judge score",
            )

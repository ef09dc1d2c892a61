"""What the simulator reads of a judge's prompt: the texts judgecli fences in its XML-like
tags (`<input>`, `<output>`, a conversation's turns, an agent's run), pulled out into a
Transcript the verdicts are computed from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from judgecli.simulator.runs import Run, agent_text, read_run
from judgecli.simulator.wire import message_text


@dataclass(frozen=True)
class Transcript:
    """The texts a judge prompt shows, pulled out of judgecli's XML-like tags."""

    input_text: str
    output: str
    reference: str | None
    output_a: str | None
    output_b: str | None
    run: Run | None = None
    """A trajectory prompt: the run shown (with the step graded, per step)."""
    run_a: Run | None = None
    """Two runs compared: the run in position A (B's below)."""
    run_b: Run | None = None

    @property
    def pairwise(self) -> bool:
        """Whether the prompt shows two answers to compare."""
        return self.output_a is not None or self.output_b is not None


def _tag(texts: list[str], name: str) -> str | None:
    # judgecli puts each tag on its own line; requiring the newlines skips mere mentions
    # ("text inside tags such as <input> ..."), and a fence never spans two messages.
    pattern = re.compile(rf"<{name}>\n(.*?)\n</{name}>", re.DOTALL)
    for text in texts:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


# A conversation's turns, each fenced by its role (judgecli.inputs.conversation). Read left
# to right, a tag planted inside a turn stays part of that turn: its closing role tags are escaped.
_TURN = re.compile(r"<(system|user|assistant)>\n(.*?)\n</\1>", re.DOTALL)


def _turns(text: str | None, role: str) -> list[str]:
    # The texts of one role's turns in a rendered conversation (none in any other text).
    return [m.group(2) for m in _TURN.finditer(text or "") if m.group(1) == role]


def read_transcript(messages: list[Any]) -> Transcript:
    """Extract input, output(s) and reference from the messages' tags, user messages first.

    Without an ``<output>`` tag the last user message is judged as a whole, so a hand-written
    request (curl, a notebook) still gets a meaningful verdict. A conversation gives the
    input its last user turn (without an ``<input>`` tag); two conversations compared are
    judged by their last assistant turns (as MT-Bench judges a second turn), so that the
    verdict follows what the assistants answered to that input.
    """
    chats = [m for m in messages if isinstance(m, dict)]
    user_texts = [message_text(m) for m in chats if m.get("role") == "user"]
    # Rubric templates may also place fields in the system message.
    texts = user_texts + [message_text(m) for m in chats if m.get("role") != "user"]
    output = _tag(texts, "output")
    if output is None:
        output = user_texts[-1] if user_texts else ""
    output_a, output_b = _tag(texts, "output_a"), _tag(texts, "output_b")
    asked = _turns(_tag(texts, "conversation"), "user") or _turns(output_a, "user") or [""]
    answers_a, answers_b = _turns(output_a, "assistant"), _turns(output_b, "assistant")
    trajectory = _tag(texts, "trajectory")
    # Two agents' runs: one of them may have made no call (it answered without a tool).
    runs = agent_text(output_a) or agent_text(output_b)
    return Transcript(
        input_text=_tag(texts, "input") or asked[-1],
        output=output,
        reference=_tag(texts, "reference"),
        output_a=answers_a[-1] if answers_a else output_a,
        output_b=answers_b[-1] if answers_b else output_b,
        run=read_run(trajectory, _tag(texts, "step")) if trajectory is not None else None,
        run_a=read_run(output_a or "") if runs else None,
        run_b=read_run(output_b or "") if runs else None,
    )

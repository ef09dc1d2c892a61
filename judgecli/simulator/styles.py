"""How a simulated judge writes its reply: the verdict is computed as always
(`judgecli.simulator.verdicts`), then worded the way real judges word theirs.

* ``json``: the bare JSON object;
* ``think``: ``<think>...</think>`` first, as reasoning models (DeepSeek-R1, Qwen3) served
  raw emit, with braces and a JSON-looking draft *that disagrees with the verdict* inside,
  so a client that grabs the first JSON object gets a wrong verdict and a test notices.
  LiteLLM itself moves such a block, when the content starts with it, into
  ``reasoning_content``;
* ``think-unopened``: the same without the opening tag, which the chat template already
  wrote at the end of the prompt (DeepSeek-R1 distills served raw): only ``</think>`` marks
  where the reasoning ends, and LiteLLM passes it all through in ``content``;
* ``reasoning-content``: the same reasoning in ``message.reasoning_content`` (what vLLM's
  and DeepSeek's reasoning parsers return) and the JSON alone in ``content``;
* ``fenced``: a sentence, the JSON in a json code fence, a closing sentence;
* ``prose``: no JSON at all, a sentence with the score in it (a small model without
  grammar-constrained decoding);
* ``truncated``: the content cut in the middle, ``finish_reason: "length"`` (max_tokens too
  small).

A reply that is not a JSON verdict (no schema was given) stays as it is, except that the
think styles and ``reasoning-content`` still reason and ``truncated`` still cuts it.

A constrained request (a ``json_schema`` or ``json_object`` response format the server
enforces) leaves room for nothing but a JSON object: the think styles, ``fenced`` and
``prose`` then answer bare JSON, as a grammar forces from the first token;
``reasoning-content`` keeps its reasoning, which the server's parser splits off before the
grammar applies; ``truncated`` is cut all the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal


class ReplyStyle(StrEnum):
    """How a simulated judge words its verdict (see the module docstring)."""

    JSON = "json"
    THINK = "think"
    THINK_UNOPENED = "think-unopened"
    REASONING_CONTENT = "reasoning-content"
    FENCED = "fenced"
    PROSE = "prose"
    TRUNCATED = "truncated"


FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class StyledReply:
    """One reply's message content, its separate reasoning, and why generation stopped."""

    content: str
    reasoning: str | None = None
    finish_reason: FinishReason = "stop"


# Choice labels a draft swaps, so the draft in a think block always disagrees.
_OPPOSITE = {
    "a": "B",
    "b": "A",
    "tie": "A",
    "pass": "FAIL",
    "fail": "PASS",
    "yes": "NO",
    "no": "YES",
}
_LONG_TEXT_KEYS = frozenset({"reasoning", "feedback", "explanation", "rationale", "response"})


def style_reply(
    style: ReplyStyle, content: str, *, constrained: bool, schema: dict[str, Any] | None
) -> StyledReply:
    """Word ``content`` (the computed reply) in ``style``.

    Args:
        style: How the judge writes.
        content: The reply as computed: a JSON verdict, or text when no schema was given.
        constrained: Whether an enforced JSON response format allows only a JSON object.
        schema: The verdict schema, for the scale a ``prose`` reply names.
    """
    verdict = _as_object(content)
    if constrained and verdict is None:
        # JSON mode without a schema to follow: the grammar still admits only an object,
        # so the words end up wrapped in one.
        verdict = {"response": content}
        content = json.dumps(verdict)
    if style is ReplyStyle.THINK and not constrained:
        return StyledReply(f"<think>\n{_thoughts(verdict)}\n</think>\n\n{content}")
    if style is ReplyStyle.THINK_UNOPENED and not constrained:
        return StyledReply(f"{_thoughts(verdict)}\n</think>\n\n{content}")
    if style is ReplyStyle.REASONING_CONTENT:
        return StyledReply(content, reasoning=_thoughts(verdict))
    if style is ReplyStyle.TRUNCATED:
        # A strict prefix of a JSON object lacks its closing brace, so it never parses.
        return StyledReply(content[: len(content) // 2], finish_reason="length")
    if verdict is None or constrained:
        return StyledReply(content)
    if style is ReplyStyle.FENCED:
        return StyledReply(
            "Here is my assessment of the answer.\n\n"
            f"```json\n{json.dumps(verdict, indent=2)}\n```\n\n"
            "I weighed relevance and completeness before settling on this."
        )
    if style is ReplyStyle.PROSE:
        return StyledReply(_prose(verdict, schema))
    return StyledReply(content)


def _as_object(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _thoughts(verdict: dict[str, Any] | None) -> str:
    """Reasoning with stray braces and a JSON-looking draft that is not the verdict."""
    draft = (_contradict(verdict) if verdict else None) or {"score": 1}
    return (
        "Okay, I need to grade this answer and reply with a JSON object. Let me weigh it "
        "{ relevance, completeness, accuracy } against the question first.\n"
        f"A first draft could be {json.dumps(draft)} but that does not hold up; "
        "let me look again.\n"
        "Yes, I am settled now. Writing the final verdict."
    )


def _contradict(value: Any) -> Any:
    """A draft of the verdict with every number, flag and known choice changed."""
    if isinstance(value, dict):
        return {k: _contradict(v) for k, v in value.items() if k not in _LONG_TEXT_KEYS}
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value - 1 if value > 1 else value + 1
    if isinstance(value, float):
        return round(1 - value, 2) if value != 0.5 else 0.25
    if isinstance(value, str):
        return _OPPOSITE.get(value.lower(), value)
    return value


def _prose(verdict: dict[str, Any], schema: dict[str, Any] | None) -> str:
    """The verdict as a sentence or two, with its score, winner or choice in words."""
    opening = "Simulated judge (not a model): I read the answer carefully."
    score, winner = verdict.get("score"), verdict.get("winner")
    if isinstance(score, int | float) and not isinstance(score, bool):
        top = ((schema or {}).get("properties") or {}).get("score", {}).get("maximum")
        scale = f" out of {top}" if isinstance(top, int | float) else ""
        return f"{opening} Overall I would rate it {score}{scale}."
    if isinstance(winner, str):
        if winner.lower() == "tie":
            return f"{opening} Both answers are about equally good, so I call it a tie."
        return f"{opening} Answer {winner} is the better of the two."
    choices = [v for k, v in verdict.items() if isinstance(v, str) and k not in _LONG_TEXT_KEYS]
    if choices:
        return f"{opening} My verdict is {choices[0]}."
    return f"{opening} It mostly does what was asked."

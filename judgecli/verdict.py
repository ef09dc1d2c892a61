"""Verdicts: parse and validate a judge's reply. Pure, no I/O.

A reply either yields a `Verdict` that fits the rubric exactly or raises `VerdictError`
carrying the reason and the raw text. Nothing is ever guessed: no default score, no
"probably A", no regex for a digit somewhere in prose.
"""

from __future__ import annotations

import json
import math
import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.rubric import Rubric, RubricKind


class Position(StrEnum):
    """Which slot a pairwise judge preferred, as shown to it."""

    A = "A"
    B = "B"
    TIE = "tie"


class ItemVerdict(BaseModel):
    """A checklist item's verdict in a reply that grades several items at once."""

    model_config = ConfigDict(frozen=True)

    item: int
    """The item's number in the prompt (1 for the first item shown)."""
    reasoning: str
    met: bool


class Verdict(BaseModel):
    """One judge's validated answer for one prompt."""

    model_config = ConfigDict(frozen=True)

    reasoning: str
    score: float | None = None
    """Pointwise: the score (weighted mean of criteria when the rubric has criteria)."""
    criteria: dict[str, float] = Field(default_factory=dict)
    choice: str | None = None
    """Binary: the chosen label, spelled as in the rubric."""
    winner: Position | None = None
    """Pairwise: the slot the judge preferred."""
    confidence: float | None = None
    feedback: str | None = None
    met: bool | None = None
    """Checklist, one item asked: whether the answer meets the item's criterion."""
    items: list[ItemVerdict] | None = None
    """Checklist, several items asked at once: each item's verdict, in the prompt's order
    (`reasoning` is then empty: the reply reasons item by item)."""


class VerdictError(Exception):
    """A reply that is not a valid verdict; keeps the raw text for the results file."""

    def __init__(self, reason: str, raw: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
# Reasoning models served raw (DeepSeek-R1, Qwen3) think aloud before answering; some chat
# templates open the block in the prompt, so the reply holds only its closing tag.
THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)


def strip_thinking(text: str) -> str:
    """The reply after a reasoning model's thinking: what follows the last closing
    `</think>`; or, when a `<think>` was never closed (cut off mid-thought), what came before
    it. A verdict is never taken from inside the thinking, where a model tries answers out.
    """
    start, end = answer_bounds(text)
    return text[start:end]


def answer_bounds(text: str) -> tuple[int, int]:
    """Where strip_thinking's answer lies in the reply: (start, end) offsets."""
    closes = list(THINK_CLOSE.finditer(text))
    if closes:
        return closes[-1].end(), len(text)
    opened = THINK_OPEN.search(text)
    return 0, opened.start() if opened else len(text)


# Raw control characters (a newline) inside a JSON string are invalid JSON, yet grammar-
# constrained decoders (llama.cpp) let models write them; the object is unambiguous, so it
# is read (strict=False), not re-asked.
LENIENT = json.JSONDecoder(strict=False)


def extract_json(text: str) -> dict[str, Any] | None:
    """The JSON object in a reply: the whole text, else the last fenced block that parses,
    else the last `{...}` object after prose. The last one wins because a judge may quote
    an example object before giving its own.
    """
    located = locate_json(text)
    return located[0] if located else None


def locate_json(text: str) -> tuple[dict[str, Any], int] | None:
    """extract_json's object and the offset in `text` where it starts."""
    stripped = text.strip()
    try:
        whole = LENIENT.decode(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return whole, len(text) - len(text.lstrip())
    for fenced in reversed(list(FENCE.finditer(text))):
        block = fenced.group(1)
        try:
            obj = LENIENT.decode(block)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj, fenced.start(1) + len(block) - len(block.lstrip())
    found: tuple[dict[str, Any], int] | None = None
    index = text.find("{")
    while index != -1:
        try:
            obj, end = LENIENT.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(obj, dict):
            found = obj, index
        index = text.find("{", end)
    return found


def value_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the verdict's top-level `key` holds its value in the reply, as parse_verdict
    reads it: (start, end) offsets of the value's JSON text (a string's with its quotes).
    None when the reply has no verdict object or the object no such key.
    """
    start, end = answer_bounds(text)
    located = locate_json(text[start:end])
    if located is None:
        return None
    return member_spans(text, start + located[1]).get(key)


def member_spans(text: str, at: int) -> dict[str, tuple[int, int]]:
    """The (start, end) offsets of each member's value of the well-formed JSON object that
    starts at `at` (for a duplicated key the last, which is the one json keeps).
    """
    spans: dict[str, tuple[int, int]] = {}
    index = skip_space(text, at + 1)
    while text.startswith('"', index):
        key, index = LENIENT.raw_decode(text, index)
        index = skip_space(text, index)
        if not text.startswith(":", index):
            break
        start = skip_space(text, index + 1)
        _, index = LENIENT.raw_decode(text, start)
        spans[key] = (start, index)
        index = skip_space(text, index)
        if not text.startswith(",", index):
            break
        index = skip_space(text, index + 1)
    return spans


def skip_space(text: str, index: int) -> int:
    """The first offset from `index` on that is not JSON whitespace."""
    while index < len(text) and text[index] in " \t\n\r":
        index += 1
    return index


def parse_verdict(text: str, rubric: Rubric) -> Verdict:
    """Validate a judge reply against the rubric's verdict schema."""
    answer = strip_thinking(text)
    obj = extract_json(answer)
    if obj is None:
        if answer.strip() == "" and text.strip() != "":
            raise VerdictError("the reply is all <think> block and no answer", text)
        raise VerdictError("no JSON object in the reply", text)
    reasoning = obj.get("reasoning")
    if not isinstance(reasoning, str):
        raise VerdictError('"reasoning" is missing or not a string', text)
    fields: dict[str, Any] = {"reasoning": reasoning}
    if rubric.kind is RubricKind.POINTWISE:
        fields |= _score_fields(obj, rubric, text)
    elif rubric.kind is RubricKind.BINARY:
        fields["choice"] = _choice(obj.get("choice"), rubric.choices or [], "choice", text)
    elif rubric.kind is RubricKind.CHECKLIST:
        fields["met"] = _met(obj.get("met"), "met", text)
    else:
        winner = _choice(obj.get("winner"), ["A", "B", "tie"], "winner", text)
        fields["winner"] = Position(winner)
    if rubric.confidence:
        # Asked as one of 0, 0.05, ..., 1 (what a grammar can enforce); a judge under no
        # grammar may write 0.87, which means what it says. Off 0..1 it means nothing sure
        # (10: ten percent, or ten of ten?) and the escalation rules read it: re-asked.
        fields["confidence"] = _number(obj.get("confidence"), 0.0, 1.0, "confidence", text)
    if rubric.feedback:
        feedback = obj.get("feedback")
        if not isinstance(feedback, str):
            raise VerdictError('"feedback" is missing or not a string', text)
        fields["feedback"] = feedback
    return Verdict(**fields)


def _score_fields(obj: dict[str, Any], rubric: Rubric, raw: str) -> dict[str, Any]:
    assert rubric.scale is not None
    lo, hi, integer = rubric.scale.min, rubric.scale.max, rubric.scale.integer
    if not rubric.criteria:
        return {"score": _number(obj.get("score"), lo, hi, "score", raw, integer=integer)}
    given = obj.get("criteria")
    if not isinstance(given, dict):
        raise VerdictError('"criteria" is missing or not an object', raw)
    scores = {
        name: _number(given.get(name), lo, hi, f"criteria.{name}", raw, integer=integer)
        for name in rubric.weights
    }
    overall = math.fsum(scores[name] * weight for name, weight in rubric.weights.items())
    return {"criteria": scores, "score": overall}


def _number(
    value: Any, lo: float, hi: float, name: str, raw: str, *, integer: bool = False
) -> float:
    # bool is an int subclass; `true` is not a score.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise VerdictError(f'"{name}" is missing or not a number', raw)
    if integer and not float(value).is_integer():
        raise VerdictError(f'"{name}" must be a whole number, got {value}', raw)
    if not lo <= value <= hi:
        raise VerdictError(f'"{name}" = {value} is outside {lo:g}..{hi:g}', raw)
    return float(value)


def _choice(value: Any, allowed: list[str], name: str, raw: str) -> str:
    if isinstance(value, str):
        for option in allowed:
            if value.strip().casefold() == option.casefold():
                return option
    raise VerdictError(f'"{name}" must be one of {allowed}, got {value!r}', raw)


def _met(value: Any, name: str, raw: str) -> bool:
    # JSON's true or false only: "yes", 1 or "true" mean something to a reader, but a
    # schema asked for a boolean, and a verdict is never guessed.
    if not isinstance(value, bool):
        raise VerdictError(f'"{name}" must be true or false, got {json.dumps(value)}', raw)
    return value


def parse_items_verdict(text: str, count: int) -> Verdict:
    """Validate a reply that grades `count` checklist items at once: `{"items": {"1":
    {"reasoning", "met"}, ..., "<count>": {...}}}`, every item answered, none other.
    """
    answer = strip_thinking(text)
    obj = extract_json(answer)
    if obj is None:
        raise VerdictError("no JSON object in the reply", text)
    given = obj.get("items")
    if not isinstance(given, dict):
        raise VerdictError('"items" is missing or not an object of the items by number', text)
    wanted = [str(n) for n in range(1, count + 1)]
    missing = [key for key in wanted if key not in given]
    if missing:
        raise VerdictError(f'"items" has no verdict for item(s) {", ".join(missing)}', text)
    extra = [key for key in given if key not in wanted]
    if extra:
        raise VerdictError(
            f'"items" has verdicts for {", ".join(map(repr, extra))}, which were not asked '
            f"(items 1..{count})",
            text,
        )
    verdicts = []
    for key in wanted:
        entry = given[key]
        reasoning = entry.get("reasoning") if isinstance(entry, dict) else None
        if not isinstance(reasoning, str):
            raise VerdictError(f'"items.{key}.reasoning" is missing or not a string', text)
        met = _met(entry.get("met"), f"items.{key}.met", text)
        verdicts.append(ItemVerdict(item=int(key), reasoning=reasoning, met=met))
    return Verdict(reasoning="", items=verdicts)

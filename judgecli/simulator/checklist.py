"""The simulator as a checklist's judge: a verdict for each rubric item a prompt shows
(`<rubric_items>`), one item a call (`{"reasoning", "met"}`) or all of a case's at once
(`{"items": {"1": {...}, ...}}`), decided the same way in both, so the two ways of asking
give the same numbers.

An item's verdict is a pure function of (seed, model, the answer, the criterion):

- told the truth (`judge simulate --truth FILE --truth-field met`, where a line holds a case's
  `rubric_items` and, in the truth field, a list of true/false, one per item), the given
  verdict, flipped with probability `noise` by a draw seeded on the answer and the item;
- otherwise met when `0.6 · overlap + 0.4 · u ≥ 0.5`, `overlap` the share of the words the
  criterion names (its content words, but "mentions", "recommends" and the like) that the
  answer uses and `u` a uniform number hashed from (seed, model, criterion, answer): an
  answer that says what the criterion names meets it;
- with jitter, a coin flip for each item instead.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.settings.items_per_call import ItemsPerCall
from judgecli.simulator.logprobs import unit_hash
from judgecli.simulator.wire import content_words, message_text

ItemKey = tuple[str, str, str]
"""(input, answer, criterion) as the judge's prompt shows them, stripped."""

_FENCE = re.compile(r"<rubric_items>\n(.*?)\n</rubric_items>", re.DOTALL)
# "2. [-8] Recommends aspirin": an item's number, points and criterion (judge's render_items).
_ITEM = re.compile(r"^(\d+)\. \[(-?[0-9][0-9.eE+-]*)\] (.*)$")


@dataclass(frozen=True)
class ShownItem:
    """A rubric item as the prompt shows it."""

    points: float
    criterion: str


def shown_items(messages: list[Any]) -> list[ShownItem]:
    """The items of the prompt's `<rubric_items>` fence, in order (a criterion that runs on
    over several lines is joined back).
    """
    for message in messages:
        found = _FENCE.search(message_text(message)) if isinstance(message, dict) else None
        if found is None:
            continue
        items: list[ShownItem] = []
        for line in found.group(1).split("\n"):
            head = _ITEM.match(line)
            if head is not None:
                items.append(ShownItem(float(head.group(2)), head.group(3).strip()))
            elif items:
                last = items[-1]
                items[-1] = ShownItem(last.points, f"{last.criterion}\n{line}".strip())
        return items
    return []


def checklist_shape(schema: dict[str, Any]) -> ItemsPerCall | None:
    """How many items a verdict schema asks about: one (`met`), all (`items`), or None for
    any other verdict.
    """
    props = schema.get("properties") or {}
    if (props.get("met") or {}).get("type") == "boolean":
        return ItemsPerCall.ONE
    entries = ((props.get("items") or {}).get("properties") or {}).values()
    if entries and all("met" in (entry.get("properties") or {}) for entry in entries):
        return ItemsPerCall.ALL
    return None


# How criteria are worded rather than what they name: no answer says "mentions".
RUBRIC_WORDS = frozenset(
    {"says", "mention", "explain", "recommend", "suggest", "advise", "give", "name", "tell"}
    | {"state", "claim", "warn", "list", "user", "answer", "response", "that", "with"}
)


def stems(text: str) -> set[str]:
    """A text's content words, a plural or third-person "s" dropped ("drives" → "drive")."""
    return {w[:-1] if w.endswith("s") and len(w) > 4 else w for w in content_words(text)}


def criterion_words(criterion: str) -> set[str]:
    """What a criterion names: its content words but those every criterion uses."""
    return stems(criterion) - RUBRIC_WORDS


@dataclass(frozen=True)
class ItemJudge:
    """What an item's verdict depends on besides the item."""

    input_text: str
    output: str
    model: str
    seed: int
    truth: dict[ItemKey, bool] | None = None
    noise: float = 0.0
    guess: random.Random | None = None

    def met(self, item: ShownItem) -> tuple[bool, str]:
        """Whether the item is met, and the reasoning that says how it was decided."""
        if self.guess is not None:
            return self.guess.random() < 0.5, "Simulated judgement (not a model): a guess."
        given = (self.truth or {}).get(
            (self.input_text.strip(), self.output.strip(), item.criterion)
        )
        if given is not None:
            draw = random.Random(
                f"{self.seed}\x1f{self.model}\x1f{self.output}\x1f{item.criterion}"
            )
            flipped = draw.random() < self.noise
            said = "a given verdict, flipped by seeded noise" if flipped else "a given verdict"
            return given != flipped, f"Simulated judgement (not a model): {said}."
        words = criterion_words(item.criterion)
        overlap = len(words & stems(self.output)) / len(words) if words else 0.5
        u = unit_hash(self.seed, self.model, item.criterion, self.output)
        return 0.6 * overlap + 0.4 * u >= 0.5, (
            f"Simulated judgement (not a model): the answer uses {overlap:.0%} of the "
            "criterion's words."
        )


def checklist_verdict(
    schema: dict[str, Any], messages: list[Any], judge: ItemJudge
) -> dict[str, Any] | None:
    """The verdict object for a checklist prompt, or None when the request is none."""
    shape = checklist_shape(schema)
    items = shown_items(messages) if shape is not None else []
    if not items:
        return None
    said = [judge.met(item) for item in items]
    if shape is ItemsPerCall.ONE:
        met, reasoning = said[0]
        return {"reasoning": reasoning, "met": met}
    return {
        "items": {
            str(n): {"reasoning": reasoning, "met": met}
            for n, (met, reasoning) in enumerate(said, start=1)
        }
    }


def item_truths(
    path: Path, number: int, case: dict[str, Any], label: Any, field: str
) -> dict[ItemKey, bool]:
    """A truth file line's given item verdicts: its `rubric_items` and, in the truth field,
    one true or false per item; DatasetError naming the line when they do not pair up (a
    missing or a single label too).
    """
    items = case.get("rubric_items")
    if (
        not isinstance(items, list)
        or not isinstance(label, list)
        or not all(isinstance(m, bool) for m in label)
        or len(label) != len(items)
        or not all(isinstance(i, dict) and isinstance(i.get("criterion"), str) for i in items)
    ):
        raise DatasetError(
            path,
            number,
            f'truth field "{field}" of a line with rubric_items must be a list of true or '
            f"false, one for each item, got {label!r}",
            hint=f'e.g. "rubric_items": [{{"criterion": "...", "points": 5}}], "{field}": [true]',
        )
    output = str(case.get("output") or "").strip()
    input_text = str(case.get("input") or "").strip()
    return {
        (input_text, output, item["criterion"].strip()): met
        for item, met in zip(items, label, strict=True)
    }

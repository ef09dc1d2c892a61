"""A case's own checklist (`rubric_items`), as HealthBench writes it: a list of
`{"criterion", "points", "tags"}`, each criterion graded met or not met by the judge
(docs/checklists.md).

Points are weights: positive for what a good answer does, negative for what must not
happen (an item with negative points that is *met* costs its points). Tags (optional, a
list of strings such as `axis:accuracy` or `theme:emergency`) group the items for the
per-tag scores. What cannot be scored is a `RubricItemsError` (the case's file:line and the
fix are added where the case is read): an empty list, an item without a criterion, points
that are not a number or are 0, unknown keys (a typo would silently drop a tag), and a case
with no item of positive points (its score Σ met points / Σ positive points would divide by
zero).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgecli.inputs.shape_error import ShapeError
from judgecli.rubric import plain_number

ITEM_SHAPE = (
    '{"criterion": "Advises calling emergency services", "points": 5, "tags": ["axis:accuracy"]}'
)
ITEM_KEYS = ("criterion", "points", "tags")


class RubricItemsError(ShapeError):
    """A checklist that cannot be read; the message says what, the hint how to fix it."""


class RubricItem(BaseModel):
    """One criterion of a case's checklist, with its points and tags."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    """What the answer does (or, with negative points, must not do), in words."""
    points: int | float
    """Its weight: positive for what a good answer does, negative for what must not happen."""
    tags: list[str] = Field(default_factory=list)
    """Labels that group items for the per-tag scores (`axis:accuracy`, `theme:...`)."""

    def render(self) -> str:
        """The item as a judge reads it, as HealthBench shows it: `[5] criterion`."""
        return f"[{self.points}] {self.criterion}"


def render_items(items: list[RubricItem]) -> str:
    """Several items as a judge reads them: numbered from 1, one a line."""
    return "\n".join(f"{n}. {item.render()}" for n, item in enumerate(items, start=1))


def parse_rubric_items(value: Any, name: str = '"rubric_items"') -> list[RubricItem]:
    """A case's checklist (`name`: the field as the file names it), or RubricItemsError."""
    if not isinstance(value, list):
        raise RubricItemsError(
            f"{name} must be a list of items, got {type(value).__name__}",
            hint=f"e.g. {name}: [{ITEM_SHAPE}]",
        )
    if not value:
        raise RubricItemsError(
            f"{name} is empty: a checklist needs at least one item",
            hint="give the case its items, or leave the field out of the case",
        )
    items = [parse_item(entry, f"{name} item {n}") for n, entry in enumerate(value, start=1)]
    if not any(item.points > 0 for item in items):
        raise RubricItemsError(
            f"{name} has no item with positive points: a case's score is the points of its "
            "met items over its positive points, which are none",
            hint="give at least one item positive points (what a good answer does)",
        )
    return items


def parse_item(entry: Any, where: str) -> RubricItem:
    """One item `{"criterion", "points", "tags"}` (`where`: its place, for messages)."""
    if not isinstance(entry, dict):
        raise RubricItemsError(
            f"{where} must be an object, got {json.dumps(entry)[:60]}", hint=f"e.g. {ITEM_SHAPE}"
        )
    unknown = [key for key in entry if key not in ITEM_KEYS]
    if unknown:
        raise RubricItemsError(
            f"{where} has unknown key(s) {', '.join(map(repr, unknown))}",
            hint=f"an item has {', '.join(ITEM_KEYS)} (tags optional), e.g. {ITEM_SHAPE}",
        )
    criterion = entry.get("criterion")
    if not isinstance(criterion, str) or not criterion.strip():
        raise RubricItemsError(
            f'{where} has no "criterion" (the text the judge checks)', hint=f"e.g. {ITEM_SHAPE}"
        )
    return RubricItem(
        criterion=criterion.strip(),
        points=item_points(entry.get("points"), where),
        tags=item_tags(entry.get("tags"), where),
    )


def item_points(points: Any, where: str) -> int | float:
    """An item's points: a finite number other than 0 (a whole number kept an int)."""
    if points is None:
        raise RubricItemsError(
            f'{where} has no "points"', hint='e.g. "points": 5, or -5 for what must not happen'
        )
    if isinstance(points, bool) or not isinstance(points, int | float) or not math.isfinite(points):
        raise RubricItemsError(
            f'{where}: "points" must be a number, got {json.dumps(points)}',
            hint='write it without quotes, e.g. "points": 5 (or -5 for what must not happen)',
        )
    if points == 0:
        raise RubricItemsError(
            f'{where}: "points" is 0, which counts neither way',
            hint="give it positive points (what a good answer does) or negative ones (what "
            "must not happen), or drop the item",
        )
    return plain_number(float(points))


def item_tags(tags: Any, where: str) -> list[str]:
    """An item's tags: a list of strings (absent or null: none), each once."""
    if tags is None:
        return []
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise RubricItemsError(
            f'{where}: "tags" must be a list of strings',
            hint='e.g. "tags": ["axis:accuracy", "theme:emergency"]',
        )
    # HealthBench asserts an item names a tag once; a repeat would count the item twice.
    return list(dict.fromkeys(t.strip() for t in tags))

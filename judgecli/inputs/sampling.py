"""Which cases a run judges: `--sample N|P%` (a seeded uniform draw) and `--limit N`,
chosen in one pass over a dataset in bounded memory.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from judgecli.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class SampleSize:
    """`--sample N` (a count of cases) or `--sample P%` (a share of the selectable cases)."""

    count: int | None = None
    percent: float | None = None

    def of(self, total: int) -> int:
        """How many of `total` cases this size means (a share above 0% rounds up: never 0
        cases), capped at `total`.
        """
        if self.percent is not None:
            floor = 1 if self.percent > 0 else 0
            return min(total, max(floor, math.ceil(total * self.percent / 100 - 1e-9)))
        return min(total, self.count or 0)


SAMPLE_SYNTAX = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$")


def parse_sample(text: str) -> SampleSize:
    """`--sample 200` or `--sample 10%` (or 2.5%) as a SampleSize; ConfigError otherwise."""
    match = SAMPLE_SYNTAX.match(text)
    is_share = bool(match and match.group(2))
    if match is None or (not is_share and "." in match.group(1)):
        raise ConfigError(
            f"--sample {text!r} is not N or P%", hint="e.g. --sample 200 or --sample 10%"
        )
    value = float(match.group(1))
    if is_share and not 0 < value <= 100:
        raise ConfigError(
            f"--sample {text}: a share must be above 0% and at most 100%",
            hint="e.g. --sample 10%; leave --sample out to judge every case",
        )
    if not is_share and value < 1:
        raise ConfigError(f"--sample {text}: judge at least 1 case", hint="e.g. --sample 200")
    return SampleSize(percent=value) if is_share else SampleSize(count=int(value))


class Selector(Generic[T]):
    """Keeps the items --sample/--limit choose, in bounded memory.

    `--sample N` draws N items uniformly (reservoir sampling, seeded: the same seed picks
    the same items); `--sample P%` draws its share the same way once the number of items is
    known, so it holds every item's position until then; `--limit N` then keeps the first N
    of what is left, in file order.
    """

    def __init__(self, *, limit: int | None, sample: int | SampleSize | None, seed: int) -> None:
        self._limit = limit
        self._sample = SampleSize(count=sample) if isinstance(sample, int) else sample
        self._rng = random.Random(seed)
        self._seen = 0
        self._chosen: list[T] = []

    def offer(self, item: T) -> None:
        """Consider one more item (items arrive in file order)."""
        self._seen += 1
        if self._sample is None:
            if self._limit is None or len(self._chosen) < self._limit:
                self._chosen.append(item)
        elif self._sample.count is None or len(self._chosen) < self._sample.count:
            # (A share keeps every item: it is drawn once the number of items is known.)
            self._chosen.append(item)
        else:
            slot = self._rng.randrange(self._seen)
            if slot < self._sample.count:
                self._chosen[slot] = item

    def chosen(self, key: Callable[[T], int]) -> list[T]:
        """The chosen items in file order (`key` gives an item's position)."""
        items = self._chosen
        if self._sample is not None and self._sample.percent is not None:
            items = self._rng.sample(items, self._sample.of(len(items)))
        ordered = sorted(items, key=key)
        return ordered[: self._limit] if self._limit is not None else ordered

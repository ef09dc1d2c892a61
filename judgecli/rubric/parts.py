"""The blocks a rubric is made of: the strict base of every user-written block, the score
scale, criteria, the `judge:` defaults and the prompt templates.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import cached_property
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Strict(BaseModel):
    """Base for user-written formats: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# Points a judge chooses a score from, at most. A scale is sent to the judge as an `enum` of
# its points: grammar-constrained servers (llama.cpp) enforce an enum but not
# `minimum`/`maximum` (docs/endpoints.md "Structured output across servers").
MAX_POINTS = 101


class Scale(Strict):
    """The score range of a pointwise rubric."""

    min: float
    """Lowest score."""
    max: float
    """Highest score."""
    integer: bool = True
    """Whole-number scores only (a 1-4 scale, at most 101 points); false for continuous
    ranges such as 0-1, graded in round steps (0.01 on 0-1, at most 101 points)."""

    @cached_property
    def points(self) -> tuple[int | float, ...]:
        """The scores a judge chooses from, low to high: an integer scale's whole numbers; a
        continuous scale's multiples of the round step that gives at most 101 points (0.01 on
        0-1, 0.1 on 1-10, 1 on 0-100), with `min` and `max` themselves.
        """
        if self.integer:
            return tuple(range(int(self.min), int(self.max) + 1))
        low, high = Decimal(repr(self.min)), Decimal(repr(self.max))
        step = round_step((high - low) / (MAX_POINTS - 1))
        first = (low / step).to_integral_value(ROUND_CEILING)
        last = (high / step).to_integral_value(ROUND_FLOOR)
        inner = [step * i for i in range(int(first), int(last) + 1)]
        grid = [low, *(d for d in inner if low < d < high), high]
        return tuple(plain_number(float(d)) for d in grid)

    @property
    def borderline_band(self) -> float:
        """How near the pass line a score is borderline: one point on a whole-number scale
        (the last failing and the first passing score), a tenth of a continuous scale.
        """
        return 1.0 if self.integer else 0.1 * (self.max - self.min)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.max <= self.min:
            raise ValueError("scale.max must be greater than scale.min")
        if self.integer and not (self.min.is_integer() and self.max.is_integer()):
            raise ValueError("an integer scale needs whole-number min and max (or integer: false)")
        if self.integer and self.max - self.min >= MAX_POINTS:
            raise ValueError(
                f"an integer scale has at most {MAX_POINTS} points (the judge is sent them to "
                f"choose from); {self.min:g}-{self.max:g} has {self.max - self.min + 1:g}: "
                "narrow it, or write integer: false to grade in round steps"
            )
        return self


def round_step(least: Decimal) -> Decimal:
    """The smallest power of ten at least `least` (0.01 for 0.01, 0.1 for 0.09)."""
    step = Decimal(1).scaleb(least.adjusted())
    return step if step >= least else step.scaleb(1)


def plain_number(value: float) -> int | float:
    """A whole number as an int (JSON `1`, not `1.0`: a grammar accepts only what is
    listed), anything else as it is.
    """
    return int(value) if value.is_integer() else value


class Criterion(Strict):
    """One weighted dimension of a pointwise grade."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")
    """Identifier used as the key of the criterion's score in the verdict."""
    weight: float = Field(default=1.0, gt=0)
    """Relative weight; weights are normalised to sum 1."""
    description: str = ""
    """What the criterion judges (shown to the judge)."""
    levels: dict[int, str] = Field(default_factory=dict)
    """Optional anchors: what a given score means."""


class JudgeDefaults(Strict):
    """The rubric's `judge:` block: defaults under flags and environment variables."""

    model: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


class PromptTemplates(Strict):
    """The judge's messages; `{field}` placeholders are filled from the case."""

    system: str = ""
    user: str

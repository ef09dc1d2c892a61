"""Rubrics: the YAML file that says what a judge grades, on what scale, with which prompt.

A rubric is loaded once, validated strictly (unknown keys are errors, so a typo never
silently changes a grade) and hashed; the hash is written into every result so a run can
always be traced to the exact rubric that produced it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import string
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from enum import StrEnum
from functools import cached_property
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Fields a template may name. Pairwise templates use output_a/output_b, filled by the
# prompt builder from the two cases of a pair (the order decides which is which).
# `conversation` is a case's turns before the answer graded (judgecli.inputs.conversation).
CASE_FIELDS = frozenset({"input", "output", "reference", "context", "category", "conversation"})
PAIRWISE_FIELDS = frozenset({"output_a", "output_b"})
# Fields a pairwise template may not name, and what it names instead.
NOT_PAIRWISE = {
    "output": "a pairwise prompt shows the two answers as {output_a} and {output_b}, not {output}",
    "conversation": "a pairwise prompt shows the two conversations as {output_a} and "
    "{output_b}, not {conversation}",
}


class RubricKind(StrEnum):
    """What the judge returns: a score, one of fixed choices, or a winner of two answers."""

    POINTWISE = "pointwise"
    BINARY = "binary"
    PAIRWISE = "pairwise"


class Turns(StrEnum):
    """Which assistant turns of a conversation (a case with `messages`) are graded."""

    LAST = "last"
    """The last one, with the turns before it as its context."""
    EACH = "each"
    """Every one, each with the turns up to it as its context; the case's verdict is the
    `aggregate` of the turns' verdicts."""


class TurnAggregate(StrEnum):
    """How the verdicts of the graded turns make the case's verdict (`turns: each`)."""

    MEAN = "mean"
    """Pointwise: the mean score. Binary: the case passes when most turns pass."""
    MIN = "min"
    """Pointwise: the worst turn's score. Binary: the case passes when every turn passes."""


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


class Rubric(Strict):
    """A validated rubric."""

    name: str = Field(min_length=1)
    version: int | str = 1
    kind: RubricKind
    description: str = ""
    scale: Scale | None = None
    """Pointwise only: the score range."""
    choices: list[str] | None = None
    """Binary only: the labels the judge picks from, e.g. [YES, NO]."""
    pass_at: float | None = None
    """Pointwise: a case passes at or above this score."""
    pass_choice: str | None = None
    """Binary: the choice that counts as a pass (default: the first choice)."""
    criteria: list[Criterion] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=lambda: ["input", "output"])
    """Case fields every case must have."""
    confidence: bool = False
    """Ask the judge for its confidence in the verdict: one of 0, 0.05, ..., 1."""
    feedback: bool = False
    """Ask the judge for actionable feedback besides its reasoning."""
    judge: JudgeDefaults = Field(default_factory=JudgeDefaults)
    prompt: PromptTemplates
    turns: Turns = Turns.LAST
    """Conversations (cases with `messages`): grade the `last` assistant turn, or `each`."""
    aggregate: TurnAggregate | None = None
    """`turns: each` only: how the turns' verdicts make the case's (default mean)."""
    extends: str | None = None
    """The rubric this one builds on (a library name or a path); its prompt, judge and
    scale blocks are merged key by key, any other key given here replaces the base's."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.kind is RubricKind.POINTWISE:
            if self.scale is None:
                raise ValueError("a pointwise rubric needs scale: {min: ..., max: ...}")
            if self.choices is not None:
                raise ValueError("choices belong to binary rubrics; a pointwise rubric has a scale")
            if self.pass_at is not None and not self.scale.min <= self.pass_at <= self.scale.max:
                raise ValueError("pass_at must lie within the scale")
        elif self.kind is RubricKind.BINARY:
            if self.scale is not None or self.criteria:
                raise ValueError("a binary rubric has choices, not a scale or criteria")
            if not self.choices or len(self.choices) < 2:
                raise ValueError("a binary rubric needs choices: [YES, NO] (two or more labels)")
            if len({c.casefold() for c in self.choices}) != len(self.choices):
                raise ValueError("choices must be distinct (ignoring case)")
            if self.pass_choice is not None and self.pass_choice not in self.choices:
                raise ValueError("pass_choice must be one of the choices")
        self._check_turns()
        names = [c.name for c in self.criteria]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(
                    f"criteria.{i}.name: {name!r} is used twice (names must be unique)"
                )
        unknown = set(self.requires) - CASE_FIELDS
        if unknown:
            raise ValueError(
                f"requires names unknown case fields {sorted(unknown)}; "
                f"known: {sorted(CASE_FIELDS)}"
            )
        self._check_template_fields()
        return self

    def _check_turns(self) -> None:
        if self.kind is RubricKind.PAIRWISE and (
            self.turns is not Turns.LAST or self.aggregate is not None
        ):
            raise ValueError(
                "turns and aggregate are for pointwise and binary rubrics: a pairwise rubric "
                "compares the two conversations whole"
            )
        if self.aggregate is not None and self.turns is not Turns.EACH:
            raise ValueError(
                "aggregate combines the verdicts of turns: each; add turns: each or drop it"
            )

    @property
    def turn_aggregate(self) -> TurnAggregate:
        """How `turns: each` combines the turns' verdicts (the mean unless told)."""
        return self.aggregate or TurnAggregate.MEAN

    @property
    def averages_turns(self) -> bool:
        """Whether a conversation's score is the mean of its turns' (`turns: each`, the mean
        aggregate), which falls between the points of a scale.
        """
        return self.turns is Turns.EACH and self.turn_aggregate is TurnAggregate.MEAN

    def _check_template_fields(self) -> None:
        pairwise = self.kind is RubricKind.PAIRWISE
        known = (CASE_FIELDS - set(NOT_PAIRWISE)) | PAIRWISE_FIELDS if pairwise else CASE_FIELDS
        allowed = (set(self.requires) & known) | (PAIRWISE_FIELDS if pairwise else set())
        for part in ("system", "user"):
            try:
                fields = template_fields(getattr(self.prompt, part))
            except ValueError as err:
                raise ValueError(
                    f"prompt.{part}: {err} (write {{{{ and }}}} for literal braces)"
                ) from None
            for field in fields:
                if pairwise and field in NOT_PAIRWISE:
                    raise ValueError(f"prompt.{part}: {NOT_PAIRWISE[field]}")
                if field not in known:
                    raise ValueError(f"prompt.{part}: {unknown_field(field, known)}")
                if field not in allowed:
                    raise ValueError(
                        f"prompt.{part}: {{{field}}} is used but not in requires "
                        f"{self.requires}: add {field} to requires"
                    )

    @property
    def weights(self) -> dict[str, float]:
        """Criterion weights normalised to sum 1."""
        total = sum(c.weight for c in self.criteria)
        return {c.name: c.weight / total for c in self.criteria}

    @property
    def passing_choice(self) -> str | None:
        """The binary choice that counts as a pass."""
        if self.kind is not RubricKind.BINARY or not self.choices:
            return None
        return self.pass_choice or self.choices[0]

    @cached_property
    def content_hash(self) -> str:
        """Hash of the validated content: formatting and comments do not change it."""
        content = self.model_dump(mode="json")
        # Keys added after rubrics were first hashed count only when set, so that a rubric
        # that does not use them keeps its hash (and its runs can be resumed and compared).
        for key, default in LATER_KEYS.items():
            if content.get(key) == default:
                del content[key]
        canonical = json.dumps(content, sort_keys=True, ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


# Rubric keys that enter the content hash only when they differ from these defaults.
LATER_KEYS: dict[str, Any] = {"turns": Turns.LAST.value, "aggregate": None}


def unknown_field(field: str, known: frozenset[str]) -> str:
    """`{outptu} is not a case field; did you mean {output}? ...` for a template typo."""
    close = difflib.get_close_matches(field, sorted(known), n=1)
    guess = f"; did you mean {{{close[0]}}}?" if close else ""
    names = ", ".join(f"{{{f}}}" for f in sorted(known))
    return (
        f"{{{field}}} is not a case field{guess} (fields: {names}; "
        "write {{ and }} for a literal brace)"
    )


def template_fields(template: str) -> list[str]:
    """The `{field}` names a template uses, in order (raises ValueError on bad braces)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def rubric_json_schema() -> dict[str, Any]:
    """JSON Schema of the rubric format (published as rubrics/schema.json for editors)."""
    schema = Rubric.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "judge rubric"
    return schema
